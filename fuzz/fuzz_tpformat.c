/*
 * fuzz_tpformat.c - the tracepoint format reader (tpformat.c) and the sched_switch
 * reading of offcpu.c: fields, print fmt constants and the state table, then fields read
 * from a payload made of the input's first bytes.
 */
// FUZZ_MAX_LEN: 8192
// FUZZ_SEEDS: fuzz/seeds/tpformat/*
#include "converter/offcpu.h"
#include "converter/perffile/tpformat.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pfc_tpformat f;
	struct pfc_switch_fmt sw;
	const char *why;
	uint64_t v;
	size_t i, used;

	if (pfc_tpformat_parse((const char *)data, size, &f) == 0) {
		for (i = 0; i < f.nr_fields; i++)
			pfc_tpfield_int(&f.fields[i], data, (uint32_t)(size < 64 ? size : 64), 0, &v);
		if (pfc_offcpu_switch_fmt(&f, &sw, &why) == 0) {
			if (pfc_tpfield_int(&sw.prev_state, data, (uint32_t)(size < 64 ? size : 64), 0, &v) == 0 &&
			    pfc_offcpu_state(&sw, v) > sw.nr_states)
				abort();
		} else if (!why) {
			abort();
		}
		pfc_tpformat_free(&f);
	}
	if (pfc_tpformat_eval((const char *)data, size, &v, &used) == 0 && used > size)
		abort();
	return 0;
}
