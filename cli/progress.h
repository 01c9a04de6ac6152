/*
 * progress.h - the progress line on a terminal and the log stream that clears it (progress.c).
 */
#ifndef PFC_CLI_PROGRESS_H
#define PFC_CLI_PROGRESS_H

#include <stdio.h>
#include <time.h>
#include "converter/session.h"

struct pfc_cli_progress {
	int verbose;            /* -v: stacks and samples per second too */
	struct timespec start, last;
	double delay;           /* seconds before the first line (PERFCONV_PROGRESS_DELAY; tests) */
	int shown;
};

FILE *pfc_cli_progress_start(struct pfc_cli_progress *p, int verbose, double delay, const struct timespec *start,
			     struct pfc_opts *o);
/* Erases the line, if one is shown; a zeroed P that never started is fine. */
void pfc_cli_progress_end(struct pfc_cli_progress *p);
/* Seconds from A to B (CLOCK_MONOTONIC). */
double pfc_cli_since(const struct timespec *a, const struct timespec *b);

#endif
