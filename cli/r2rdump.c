/*
 * r2rdump.c - perfconv --r2r-dump IMAGE: every method body of a ReadyToRun image with the
 * name its metadata gives, one "RRRRRRRR LL name" line each, in the runtime's perf map style
 * or (--r2r-dump-style r2rmap) in crossgen2's, so that it can be compared with a
 * NAME.ni.r2rmap or a jitdump's [PreJIT] records.  The decoding is converter/jit/r2rmeta.c.
 */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "converter/jit/r2rmeta.h"

int pfc_cli_r2r_dump(const char *image, const char *style, const char *output, int quiet)
{
	struct pfc_r2rmeta *r;
	struct pfc_r2rmeta_stats st;
	struct pfc_error err;
	enum pfc_r2rmeta_style sty;
	FILE *out = stdout;
	int ret;

	if (!style || !strcmp(style, "runtime")) {
		sty = PFC_R2RMETA_RUNTIME;
	} else if (!strcmp(style, "r2rmap")) {
		sty = PFC_R2RMETA_R2RMAP;
	} else {
		fprintf(stderr, "perfconv: --r2r-dump-style: unknown style '%s' (runtime or r2rmap)\n"
				"Try 'perfconv --help' for more information.\n", style);
		return EXIT_USAGE;
	}
	memset(&err, 0, sizeof(err));
	ret = pfc_r2rmeta_open(image, &r, &err);
	if (ret < 0) {
		if (err.has_offset)
			fprintf(stderr, "perfconv: '%s': %s at offset %llu: %s\n", image, pfc_strerror(err.code),
				(unsigned long long)err.offset, err.detail);
		else
			fprintf(stderr, "perfconv: '%s': %s\n", image, err.detail);
		return EXIT_FAILED;
	}
	if (output && strcmp(output, "-") && !(out = fopen(output, "w"))) {
		fprintf(stderr, "perfconv: cannot open '%s': %m\n", output);
		pfc_r2rmeta_free(r);
		return EXIT_FAILED;
	}
	ret = pfc_r2rmeta_dump(r, sty, out);
	pfc_r2rmeta_stats(r, &st);
	if (fflush(out) != 0 || ferror(out))
		ret = -PFC_ERR_WRITE;
	if (out != stdout)
		fclose(out);
	pfc_r2rmeta_free(r);
	if (ret < 0) {
		fprintf(stderr, "perfconv: '%s': %s\n", image, pfc_strerror(-ret));
		return EXIT_FAILED;
	}
	if (!quiet)
		fprintf(stderr, "perfconv: '%s': %zu methods in %zu runtime functions%s, %zu entries that did not decode, %d names not formatted\n",
			image, st.nr_methods, st.nr_funcs, st.composite ? " (composite image)" : "", st.nr_bad_entries, ret);
	return EXIT_OK;
}
