/*
 * fuzz_srcline.c - source lines (srcline.c) of a hostile ELF file: its DWARF line tables,
 * scopes and inlined call sites through libdw, looked up at addresses spread over the
 * file's size and at the first bytes of the input read as addresses.
 */
// FUZZ_SEEDS: fixtures/root/usr/lib/debug/.build-id/*/*.debug fixtures/root/tmp/probe/fx/bin/callgraph
#include "converter/native/srcline.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pfc_srcline_ent ents[16];
	struct pfc_srcline *sl;
	char path[32];
	uint64_t a;
	size_t i;
	int n, k;

	if (pfc_fuzz_file(data, size, path) < 0)
		return 0;
	sl = pfc_srcline_open(path);
	if (!sl)
		return 0;
	for (a = 0; a < 0x4000; a += 0x11) {
		n = pfc_srcline_lookup(sl, a, ents, 16);
		if (n < 0 || n > 16)
			abort();
		for (k = 0; k < n; k++)
			if (ents[k].file)
				(void)strlen(ents[k].file);
	}
	for (i = 0; i + 8 <= size && i < 64; i += 8) {
		memcpy(&a, data + i, 8);
		(void)pfc_srcline_lookup(sl, a, ents, 16);
	}
	pfc_srcline_close(sl);
	return 0;
}
