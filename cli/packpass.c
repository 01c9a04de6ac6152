/*
 * packpass.c - what a conversion that writes a pack does besides converting: it starts
 * compressing the recording while the records are read, and under --perf-compat it reads
 * the recording a second time in the default mode so that the pack also holds the files
 * perfconv's own rules read.  The pack itself is written by formats/perfpack.c from the
 * files the session recorded; the container is converter/files/'s.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "cli/convert.h"
#include "cli/packpass.h"

struct pfc_packw_pre *pfc_cli_pack_pre_start(const char *input, const struct pfc_opts *o)
{
	struct stat st;

	/* a regular file only (a pipe's bytes are the conversion's), not a pack */
	if (o->record_files && strcmp(input, "-") && !stat(input, &st) && S_ISREG(st.st_mode) &&
	    !pfc_pack_detect(input))
		return pfc_packw_pre_start(input, PFC_PACK_RECORDING, o->tuning);
	return NULL;
}

/*
 * A pack made under --perf-compat holds what perfconv's own rules read too, so that it
 * converts without --perf-compat as the recording does: the recording is converted once
 * more in the default mode, quietly, and the files that conversion read join S's record.
 * (A pack made without --perf-compat already answers perf's rules: files.c is asked the
 * same questions in both modes where they differ only in what they do with the answer.)
 */
static int pack_default_files(struct pfc_session *s, const struct pfc_opts *o, struct pfc_error *err)
{
	struct pfc_opts d = *o;
	struct pfc_session sh;
	int ret;

	d.perf_compat = 0;
	d.resolve_jit = 1;	/* what --perf-compat turns off (cli/perfconv.c) */
	d.log = NULL;
	d.progress = NULL;
	d.keep_stream = 0;
	ret = pfc_cli_read(&sh, &d, NULL, PFC_CLI_READ_RECORDS, NULL, NULL, err);
	if (ret == 0)
		ret = pfc_session_symbolize(&sh);
	if (ret == 0) {
		pfc_session_kernel_syms(&sh);
		ret = pfc_session_side_files(&sh, NULL, NULL);
	}
	if (ret == 0 && pfc_files_absorb(s->files, sh.files) < 0)
		ret = PFC_FAIL_NOOFF(err, NOMEM, "pack");
	pfc_session_close(&sh);
	return ret;
}

void pfc_cli_pack_second_pass(const struct cli *c, struct pfc_session *s, const struct pfc_opts *o,
			      const char *input)
{
	struct pfc_error err;
	char why[1024];

	if (!o->record_files || !o->perf_compat)
		return;
	memset(&err, 0, sizeof(err));
	/* a pack without them still converts under --perf-compat: a warning, not an error */
	if (pack_default_files(s, o, &err) < 0 && o->log) {
		pfc_cli_format_error(c, input, &err, why, sizeof(why));
		fprintf(o->log, "perfconv: the pack holds only what --perf-compat reads: without it, %s\n", why);
	}
}
