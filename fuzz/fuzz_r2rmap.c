/*
 * fuzz_r2rmap.c - the text maps of ReadyToRun code: crossgen2 r2rmap / crossgen1 NI map
 * lines and perfinfo-PID.map lines, parsed from the same bytes, and r2rmap lookups.
 */
// FUZZ_MAX_LEN: 16384
// FUZZ_SEEDS: tests/data/r2r/*.r2rmap fuzz/seeds/r2rmap/*
#include "converter/util/error.h"
#include "converter/jit/r2rmap.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pfc_r2rmap m;
	struct pfc_perfinfo pi;
	struct pfc_error err;
	size_t i;

	memset(&err, 0, sizeof(err));
	if (pfc_r2rmap_parse((const char *)data, size, &m, &err) == 0) {
		for (i = 0; i < m.n; i++) {
			const struct pfc_r2rmap_ent *e = pfc_r2rmap_find(&m, m.v[i].rva);
			if (e && (e->name_off > m.names_len || e->name_len > m.names_len - e->name_off))
				abort();
		}
	}
	pfc_r2rmap_free(&m);
	memset(&pi, 0, sizeof(pi));
	pfc_perfinfo_parse((const char *)data, size, 42, &pi, &err);
	pfc_perfinfo_free(&pi);
	return 0;
}
