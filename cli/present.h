/*
 * present.h - what a recording has samples of, for options that name what it has not
 * (present.c): a filter that keeps no sample, a --pid-map of a pid without samples.
 */
#ifndef PFC_CLI_PRESENT_H
#define PFC_CLI_PRESENT_H

#include <stddef.h>
#include <stdio.h>
#include "converter/machine/filter.h"
#include "converter/session.h"

/* 1 when FLT kept none of the samples S read (and S read some), with the message into MSG:
 * the filter as given and the busiest pids and comms the recording has; 0 when it kept
 * some or none is active; -1 without memory. */
int pfc_cli_present_filter(struct pfc_session *s, const struct pfc_filter *flt, char *msg, size_t len);
/* A warning on LOG (none when NULL) for each --pid-map HOST=NS whose HOST has no samples in
 * S, naming the pids that have. */
void pfc_cli_present_pid_map(struct pfc_session *s, const struct pfc_pidmap *map, size_t n, const char *input,
			     FILE *log);

#endif
