/*
 * fuzz_perfmap.c - the perf map parser (/tmp/perf-PID.map text) and its lookup.  Inputs are
 * capped at 4 KiB (FUZZ_MAX_LEN): a few dozen lines reach every branch, and longer inputs only
 * made each run slower.
 */
// FUZZ_MAX_LEN: 4096
// FUZZ_SEEDS: fixtures/*/maps/*.map fuzz/seeds/perfmap/*
#include "converter/jit/perfmap.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pfc_perfmap m;
	size_t i;

	memset(&m, 0, sizeof(m));
	if (pfc_perfmap_parse(&m, (const char *)data, size) == 0) {
		/* look up each entry's bounds, and a few addresses taken from the input */
		for (i = 0; i < m.n; i++) {
			const struct pfc_perfmap_ent *e = pfc_perfmap_find(&m, m.v[i].start);
			if (e && (e->name_off > m.names_len || e->name_len > m.names_len - e->name_off))
				abort();
			pfc_perfmap_find(&m, m.v[i].end);
			pfc_perfmap_find(&m, m.v[i].end - 1);
		}
		for (i = 0; i + 8 <= size && i < 64; i += 8) {
			uint64_t a;
			memcpy(&a, data + i, 8);
			pfc_perfmap_find(&m, a);
		}
	}
	pfc_perfmap_free(&m);
	return 0;
}
