/*
 * fuzz_perfmap.c - the perf map parser (/tmp/perf-PID.map text) and its lookup, and the .NET
 * name rewriting (dotnetname.c) of every name it parsed, in each form, with and without
 * tiers, into a buffer that fits and into one that cuts it.  Inputs are
 * capped at 4 KiB (FUZZ_MAX_LEN): a few dozen lines reach every branch, and longer inputs only
 * made each run slower.
 */
// FUZZ_MAX_LEN: 4096
// FUZZ_SEEDS: fixtures/*/maps/*.map fuzz/seeds/perfmap/*
#include "converter/jit/dotnetname.h"
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
			if (e) {
				static char out[4200];
				const char *nm = m.names + e->name_off;
				size_t caps[2] = { sizeof(out), 8 }, c, got;
				int form, strip;
				for (form = PFC_DOTNET_NAMES_KEEP; form <= PFC_DOTNET_NAMES_SHORT; form++)
					for (strip = 0; strip < 2; strip++)
						for (c = 0; c < 2; c++) {
							got = pfc_dotnet_name(out, caps[c], nm, e->name_len, form, strip);
							if (got >= caps[c] || out[got] != 0)
								abort();
						}
				if (pfc_dotnet_leading_tier(nm, e->name_len) > e->name_len ||
				    pfc_dotnet_trailing_tier(nm, e->name_len) > e->name_len)
					abort();
			}
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
