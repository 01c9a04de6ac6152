/*
 * convert.h - one conversion of one input into one or more output files, and how it went:
 * what main() runs for a single input and what each batch worker runs (convert.c).
 */
#ifndef PFC_CLI_CONVERT_H
#define PFC_CLI_CONVERT_H

#include <stddef.h>
#include <stdint.h>
#include "cli/cli.h"

/* How one conversion went, as the batch workers report it to the parent. */
struct pfc_job_result {
	int ok;
	uint64_t samples;            /* samples read */
	uint64_t kept;               /* samples that passed the filters */
	uint64_t frames, unresolved; /* frames in samples (one per sample it is in), of which without a name */
	double seconds;
	int grown;                   /* --fail-if-grown: functions whose total share grew by more */
	char msg[2048];              /* the error: "'FILE': what at offset N: detail" */
	char hints[1900];            /* batch: the lines on missing symbols a single conversion prints
				      * (symsummary.c), for the parent to print with the file's line;
				      * the whole struct stays under PIPE_BUF, one atomic write */
};

/* Convert one input into n outputs (one per writer) from one read of the input.  Each
 * output is written under a temporary name in its directory and renamed into place. */
int pfc_cli_convert(struct cli *c, const char *input, const struct pfc_writer *const *ws,
		    const char *const *outs, size_t n, struct pfc_job_result *res);

/* "'FILE': what at offset N: detail" (and with -v the source line that found it), one line
 * without the newline; FILE is the file the error is in (a jitdump, say) when not INPUT. */
void pfc_cli_format_error(const struct cli *c, const char *input, const struct pfc_error *e, char *buf, size_t len);

/* What pfc_cli_read reads past the header: every record, or (--header alone) only a pipe's,
 * whose header features come as records. */
enum pfc_cli_read_what {
	PFC_CLI_READ_RECORDS,
	PFC_CLI_READ_HEADER,
};

/* Open one recording into S with O and read it.  Should the kernel's preloaded symbols come
 * too late for its frames, S is read once more with them read in line: FILTER's --time
 * percentages (FILTER may be NULL) are resolved again, and AGAIN(ARG), if given, runs
 * before the second pass.  S is to be closed whatever the result. */
int pfc_cli_read(struct pfc_session *s, struct pfc_opts *o, struct pfc_filter *filter, enum pfc_cli_read_what what,
		 void (*again)(void *arg), void *arg, struct pfc_error *err);

#endif
