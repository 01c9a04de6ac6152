/*
 * fuzz_srcline.c - source lines (srcline.c) and addr2line's names (a2l.c) of a hostile ELF
 * file: its DWARF line tables, scopes and inlined call sites through libdw (the CU lists
 * dwpath.c keeps; compressed sections inflated by dwimage.c), its symbol tables, looked up
 * at addresses spread over the file's size and at the first bytes of the input read as
 * addresses.  The seeds are the
 * files of the fixtures that have DWARF, all under 24 KB; the C library's debug file (310 KB,
 * a symbol table and no DWARF) is left out and inputs are capped at 32 KiB: libFuzzer copies
 * an input over 128 KB into memory that ASan maps for it and unmaps after the run, and that
 * unmap (a TLB flush on every CPU) took more time than libdw.
 */
// FUZZ_MAX_LEN: 32768
// FUZZ_SEEDS: fixtures/root/usr/lib/debug/.build-id/[7ce]?/*.debug fixtures/root/tmp/probe/fx/bin/callgraph
#include "converter/native/a2l.h"
#include "converter/native/srcline.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pfc_srcline_ent ents[16];
	struct pfc_srcline *sl;
	struct pfc_a2l *al;
	char path[32];
	uint64_t a;
	size_t i;
	int n, k;

	if (pfc_fuzz_file(data, size, path) < 0)
		return 0;
	if ((al = pfc_a2l_open(path, NULL)) != NULL) {
		const char *names[16];
		for (a = 0; a < 0x4000; a += 0x13) {
			n = pfc_a2l_lookup(al, a, names, 16);
			if (n < 0 || n > 16)
				abort();
			for (k = 0; k < n; k++)
				(void)strlen(names[k]);
		}
		pfc_a2l_close(al);
	}
	sl = pfc_srcline_open(path, NULL);
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
