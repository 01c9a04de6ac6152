/*
 * fuzz_jitdump.c - the jitdump parser (jit-PID.dump) and its lookups, with and without time.
 */
// FUZZ_MAX_LEN: 65536
// FUZZ_SEEDS: fixtures/dotnet-*/maps/jit-*.dump tests/data/*/maps/jit-*.dump
#include "converter/util/error.h"
#include "converter/jit/jitdump.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pfc_jitdump jd;
	struct pfc_error err;
	size_t i;

	memset(&err, 0, sizeof(err));
	if (pfc_jitdump_parse(&jd, data, size, &err) == 0) {
		for (i = 0; i < jd.n; i++) {
			const struct pfc_jitdump_ent *e = pfc_jitdump_find(&jd, jd.v[i].start, jd.v[i].time, 1);
			if (e && (e->name_off > jd.names_len || e->name_len > jd.names_len - e->name_off))
				abort();
			pfc_jitdump_find(&jd, jd.v[i].start, 0, 0);
			pfc_jitdump_find(&jd, jd.v[i].end, UINT64_MAX, 1);
		}
		pfc_jitdump_free(&jd);
	}
	return 0;
}
