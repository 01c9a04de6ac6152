/*
 * fuzz_elf.c - the ELF symbol loader: symbol tables, program headers, PLT, build-id and
 * debug link of one file, then lookups over the table it built.
 */
// FUZZ_SEEDS: fixtures/root/usr/lib/debug/.build-id/*/*.debug fixtures/root/tmp/probe/fx/run/node-jitdump/jitted-15218-80.so fixtures/root/tmp/probe/fx/run/node-jitdump/jitted-15218-681.so fuzz/seeds/elf/*
#include "converter/native/symtab.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pfc_symopts so;
	struct pfc_symtab t;
	struct pfc_dso_load info;
	uint8_t bid[20];
	int bidlen = 0;
	char path[32];
	size_t i;

	if (pfc_fuzz_file(data, size, path) < 0)
		return 0;
	memset(&so, 0, sizeof(so));
	memset(&t, 0, sizeof(t));
	memset(&info, 0, sizeof(info));
	so.symfs = "";
	pfc_elf_build_id(path, bid, &bidlen);
	if (pfc_elf_load(&so, path, NULL, 0, &t, &info) == 0) {
		if (pfc_symtab_check(&t) != 0)
			abort();
		for (i = 0; i < t.nr; i++) {
			pfc_symtab_find(&t, t.syms[i].start);
			pfc_symtab_find(&t, t.syms[i].end);
		}
	}
	pfc_symtab_free(&t);
	return 0;
}
