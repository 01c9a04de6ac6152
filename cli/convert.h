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
	uint64_t frames, unresolved; /* unique frames, of which without a symbol */
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

/* --diff BASE: reads and symbolizes the base recording (c->diff) into c->base with the
 * options and filters of the inputs, before any input is read; on failure msg says why.
 * pfc_cli_base_close frees it. */
int pfc_cli_base_open(struct cli *c, char *msg, size_t size);
void pfc_cli_base_close(struct cli *c);

/* Whether an output name is a device or a FIFO (/dev/null, a named pipe): no ending to tell
 * a format, and written in place rather than through a renamed temporary file. */
int pfc_cli_is_device_name(const char *output);

#endif
