/*
 * output.h - a conversion's output files: checked early, written atomically (output.c).
 */
#ifndef PFC_CLI_OUTPUT_H
#define PFC_CLI_OUTPUT_H

#include <sys/types.h>
#include "converter/session.h"
#include "formats/writer.h"

/* Whether an output name is a device or a FIFO (/dev/null, a named pipe): no ending to tell
 * a format, and written in place rather than through a renamed temporary file. */
int pfc_cli_is_device_name(const char *output);

/* 0, or the error of an output whose directory is missing or cannot be written, named as
 * given; NULL, "-" and devices pass. */
int pfc_cli_output_check(const char *output, struct pfc_error *err);

/* Write S with W into OUTPUT (NULL or "-": stdout), a new file getting mode 0644 & ~UMASK;
 * a failure leaves no file under the name and its reason in s->err. */
int pfc_cli_output_write(mode_t umask, struct pfc_session *s, const struct pfc_writer *w, const char *output,
			 const struct pfc_wopts *wo);

#endif
