/*
 * cli.h - what the two command-line modes share: the settings the options fill in, one
 * conversion of one input into one or more output files (perfconv.c), and the batch mode
 * that runs many of them in worker processes (batch.c).  Only this layer prints or exits.
 */
#ifndef PFC_CLI_H
#define PFC_CLI_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>
#include "converter/machine/filter.h"
#include "converter/session.h"
#include "formats/writer.h"

enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,
	EXIT_USAGE = 2,
};

#define PFC_CLI_MAX_PID_MAP 256

struct cli {
	struct pfc_opts opts;
	struct pfc_pidmap pid_map[PFC_CLI_MAX_PID_MAP];	/* --pid-map HOST=NS, pointed to by opts */
	struct pfc_wopts wopts;
	struct pfc_filter filter;
	const char *output;          /* -o */
	const char *format;          /* -f, as given (a list in batch mode) */
	const char *outdir;          /* -O: batch mode */
	int stats, header, header_full, quiet, verbose, force, jobs;
	double timeout;              /* batch mode: seconds a conversion may take (0: no limit) */
	int progress;                /* stderr is a terminal and not -q */
	mode_t umask;
	int argc;                    /* the command line as typed, for the writers that keep a log */
	char **argv;
};

/* How one conversion went, as the batch workers report it to the parent. */
struct pfc_job_result {
	int ok;
	uint64_t samples;            /* samples read */
	uint64_t kept;               /* samples that passed the filters */
	uint64_t frames, unresolved; /* unique frames, of which without a symbol */
	double seconds;
	char msg[1024];              /* the error: "'FILE': what at offset N: detail" */
};

/* Convert one input into n outputs (one per writer) from one read of the input.  Each
 * output is written under a temporary name in its directory and renamed into place. */
int pfc_cli_convert(struct cli *c, const char *input, const struct pfc_writer *const *ws,
		    const char *const *outs, size_t n, struct pfc_job_result *res);

/* The summary's lines about missing symbols (symsummary.c). */
void pfc_cli_symbol_summary(FILE *fp, const struct pfc_session *s);

/* Batch mode: convert every input found in args into c->outdir; returns the exit status. */
int pfc_batch_run(struct cli *c, char *const *args, int nargs, const struct pfc_writer *const *ws, size_t nws);

#endif
