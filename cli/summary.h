/*
 * summary.h - the lines a conversion prints about itself when done (summary.c).
 */
#ifndef PFC_CLI_SUMMARY_H
#define PFC_CLI_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include "cli/cli.h"
#include "converter/files/pack.h"
#include "converter/session.h"

/* Seconds spent reading and processing records, resolving symbols and writing (-v). */
struct pfc_cli_phases {
	double read, symbols, write;
};

/* The summary of a single conversion on stderr (nothing under -q); WRITTEN: samples kept. */
void pfc_cli_summary(const struct cli *c, struct pfc_session *s, uint64_t written, const struct pfc_cli_phases *ph);
/* --stats: perf report --stats' tables on stdout; -1 when out of memory. */
int pfc_cli_print_stats(struct pfc_session *s);
/* The line of a pack written to OUT (NULL: stdout), and with -v its frame cache's. */
void pfc_cli_pack_summary(const struct cli *c, const struct pfc_session *s, const char *out,
			  const struct pfc_pack_summary *ps);
/* A batch worker's WARNINGS and (SYMBOLS) lines on missing symbols into BUF, cut at a line's
 * end, for the parent to print under the file's line. */
void pfc_cli_batch_hints(struct pfc_session *s, const char *warnings, int symbols, char *buf, size_t len);

#endif
