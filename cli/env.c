/*
 * env.c - every PERFCONV_* variable, read here and only here, once a process, into struct
 * pfc_cli_env (docs/development.md, "Environment variables", says what each does).  The
 * conversion below cli/ gets them as values; the parsing of each is the one it always had.
 */
#include <stdlib.h>
#include <string.h>
#include "cli/env.h"

static const char *nonempty(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static int is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && !strcmp(v, value);
}

void pfc_cli_env_read(struct pfc_cli_env *e)
{
	struct pfc_tuning *t = &e->tuning;
	const char *v;

	memset(e, 0, sizeof(*e));
	e->symbol_servers = nonempty("PERFCONV_SYMBOL_SERVERS");
	e->no_cache = is("PERFCONV_CACHE", "0");
	e->no_heap_setup = getenv("PERFCONV_NO_HEAP_SETUP") != NULL;
	e->progress_delay = (v = nonempty("PERFCONV_PROGRESS_DELAY")) ? strtod(v, NULL) : 0.5;
	e->test_crash = nonempty("PERFCONV_TEST_CRASH");

	t->running_kernel = nonempty("PERFCONV_RUNNING_KERNEL");
	/* as given: an empty one is a directory of that name too */
	t->proc = getenv("PERFCONV_PROC");
	t->tmp = getenv("PERFCONV_TMP");
	t->debug_dir = getenv("PERFCONV_DEBUG_DIR");
	t->no_preload = is("PERFCONV_PRELOAD", "0");
	if ((v = nonempty("PERFCONV_PRELOAD_DELAY_MS")))
		t->preload_delay_ms = strtoul(v, NULL, 10);
	t->no_pipeline = is("PERFCONV_PIPELINE", "0");
	if ((v = getenv("PERFCONV_UC_WINDOW")) && atoi(v) > 0)
		t->uc_window = (uint32_t)atoi(v);
	if ((v = nonempty("PERFCONV_STREAM_MEM"))) {
		t->stream_mem_set = 1;
		t->stream_mem = (size_t)strtoull(v, NULL, 10);
	}
	t->pack_no_pre = is("PERFCONV_PACK_PRE", "0");
	t->pack_no_sparse = is("PERFCONV_PACK_SPARSE", "0");
	t->pack_whole = is("PERFCONV_PACK_WHOLE", "1");
	if ((v = nonempty("PERFCONV_TEXT_CHUNK")))
		t->text_chunk = strtoull(v, NULL, 10);
	if ((v = nonempty("PERFCONV_TEXT_PIECE")))
		t->text_piece = strtoull(v, NULL, 10);
	if ((v = nonempty("PERFCONV_DEFLATE_OUT")))
		t->deflate_out = strtoull(v, NULL, 10);
	if ((v = nonempty("PERFCONV_WRITEBACK_STEP")))
		t->writeback_step = strtoull(v, NULL, 10);
	if ((v = nonempty("PERFCONV_CTF_STREAM_FROM")))
		t->ctf_stream_from = strtoull(v, NULL, 10);
}
