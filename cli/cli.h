/*
 * cli.h - the settings the options fill in (perfconv.c) and that a conversion reads
 * (convert.c, batch.c), and the exit codes.  perfconv.c calls batch.c and convert.c;
 * batch.c calls convert.c; convert.c calls neither.  Only this layer prints or exits.
 */
#ifndef PFC_CLI_H
#define PFC_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cli/env.h"
#include "converter/machine/filter.h"
#include "converter/session.h"
#include "formats/writer.h"

enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,
	EXIT_USAGE = 2,
	EXIT_GROWN = 3,              /* --fail-if-grown: a function's total share grew by more */
};

#define PFC_CLI_MAX_PID_MAP 256
#define PFC_CLI_MAX_EVENTS 64

struct cli {
	struct pfc_cli_env env;      /* the PERFCONV_* variables, read once; opts.tuning points into it */
	struct pfc_opts opts;
	struct pfc_pidmap pid_map[PFC_CLI_MAX_PID_MAP];	/* --pid-map HOST=NS, pointed to by opts */
	const char *events[PFC_CLI_MAX_EVENTS];  /* --events FILE.nettrace, pointed to by opts */
	int32_t events_pids[PFC_CLI_MAX_EVENTS];  /* perfconv record: their processes in the recording */
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
	/* --diff BASE: the base recording, read once before the inputs (gate.c) */
	const char *diff;
	double fail_if_grown;        /* --fail-if-grown PCT: percentage points; < 0: no gate */
	struct pfc_opts base_opts;   /* the options the base was read with (the session points to them) */
	struct pfc_filter base_filter;
	struct pfc_session *base;
};

/* --r2r-dump IMAGE [--r2r-dump-style runtime|r2rmap] (r2rdump.c); returns the exit status. */
int pfc_cli_r2r_dump(const char *image, const char *style, const char *output, int quiet);

/* --events FILE.nettrace (events.c): the runtime report of a .NET process's own events; the
 * exit status. */
int pfc_cli_events(const char *path, const char *output, int quiet);

/* --enable-perfmap PID[:TYPE] (enable 1) or --disable-perfmap PID (perfmapctl.c): one request on
 * the process's .NET diagnostics socket, waiting timeout seconds for the reply; the exit status. */
int pfc_cli_perfmap(const char *arg, int enable, double timeout, int quiet);

#endif
