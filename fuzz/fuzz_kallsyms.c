/*
 * fuzz_kallsyms.c - the kallsyms parser ("ADDR TYPE NAME[\t[MODULE]]" lines) and the
 * kernel table it builds.  Inputs are capped at 4 KiB (FUZZ_MAX_LEN): some fifty lines reach
 * every branch of the line parser, and longer inputs only made each run slower.
 */
// FUZZ_MAX_LEN: 4096
// FUZZ_SEEDS: fixtures/root/kallsyms fuzz/seeds/kallsyms/*
#include "converter/native/symtab.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pfc_symtab t;
	char path[32];
	size_t i;

	if (pfc_fuzz_file(data, size, path) < 0)
		return 0;
	memset(&t, 0, sizeof(t));
	if (pfc_kallsyms_load(path, &t) == 0) {
		if (pfc_symtab_check(&t) != 0)
			abort();
		for (i = 0; i < t.nr; i++)
			pfc_symtab_find(&t, t.syms[i].start);
	}
	pfc_symtab_free(&t);
	return 0;
}
