/*
 * batch.h - batch mode (-O DIR): many inputs converted into one output tree, N at a time in
 * worker processes, each running convert.c's conversion (batch.c).
 */
#ifndef PFC_CLI_BATCH_H
#define PFC_CLI_BATCH_H

#include "cli/cli.h"

/* Batch mode: convert every input found in args into c->outdir; returns the exit status. */
int pfc_batch_run(struct cli *c, char *const *args, int nargs, const struct pfc_writer *const *ws, size_t nws);

#endif
