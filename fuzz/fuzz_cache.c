/*
 * fuzz_cache.c - the kernel symbol cache's reader (kcache.c): an entry's header, key and
 * checksum, and the table image behind them (symtab.c), whose offsets and tree links are
 * checked before a lookup follows them.  The first byte chooses: even, the rest is a table
 * image read directly (past the checksum, which random bytes never match); odd, the rest
 * is a whole entry.  A table read back must answer a lookup at every symbol's start.
 */
// FUZZ_MAX_LEN: 8192
// FUZZ_SEEDS: fuzz/seeds/cache/*
#include "converter/native/kcache.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pfc_kcache_key key = { .text = "bid=fuzz boot=fuzz", .name = "0000000000000000" };
	struct pfc_symtab t;
	uint8_t *copy;
	size_t i;
	int ret;

	if (size == 0)
		return 0;
	/* a copy of exactly the input's size: reads past it are caught */
	if (!(copy = malloc(size - 1 ? size - 1 : 1)))
		return 0;
	memcpy(copy, data + 1, size - 1);
	if (data[0] & 1)
		ret = pfc_kcache_parse(copy, size - 1, &key, &t);
	else
		ret = pfc_symtab_from_image(&t, copy, size - 1);
	if (ret == 0) {
		for (i = 0; i < t.nr; i++)
			if (!pfc_symtab_find(&t, t.syms[i].start))
				abort();	/* a symbol not found at its own start: the trees are wrong */
		pfc_symtab_free(&t);
	}
	free(copy);
	return 0;
}
