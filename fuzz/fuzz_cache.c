/*
 * fuzz_cache.c - the symbol cache's reader (symcache.c): an entry's header, key and
 * checksum, and the table image behind them (symtab.c), whose offsets and tree links are
 * checked before a lookup follows them.  The first byte chooses: odd, the rest is a whole
 * entry; else the rest is a table image read directly (past the checksum, which random bytes
 * never match), copied (bit 1 clear) or in place (bit 1 set, as a conversion reads a mapped
 * entry).  A table read back must answer a lookup at every symbol's start.  Bit 2 of the
 * first byte picks the key of a whole entry: the kernel's, or an ELF table's (elfsym.c's key
 * text, seed entry-elf); both kinds are one format, read by the same code.  Bit 3 set: the
 * rest is the payload of a ReadyToRun image's entry (r2rcache.c, seed r2r-*), checked whole;
 * a payload that reads answers every lookup inside its pool, and written again from what was
 * read it reads back with the same answers.
 */
// FUZZ_MAX_LEN: 8192
// FUZZ_SEEDS: fuzz/seeds/cache/*
#include "converter/util/bytes.h"
#include "converter/jit/r2rcache.h"
#include "converter/native/symcache.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void r2r_payload(const uint8_t *p, size_t len)
{
	struct pfc_r2rcache_view v, w;
	struct pfc_r2rcache_add none = { 0 };
	uint8_t *again;
	size_t n, i;

	if (pfc_r2rcache_parse(p, len, &v) < 0)
		return;
	for (i = 0; i < v.nmods; i++)
		if (!*pfc_r2rcache_module(&v, (uint32_t)i))
			abort();
	if (pfc_r2rcache_encode(&v, &none, v.nr_methods, v.nr_bad_entries, v.composite, &again, &n) < 0)
		return;
	if (pfc_r2rcache_parse(again, n, &w) < 0 || w.nrec != v.nrec)
		abort();
	for (i = 0; i < v.nrec; i++) {
		uint32_t sb = pfc_ld32(v.recs + 16 * i, 0), se = pfc_ld32(v.recs + 16 * i + 4, 0), rva, b1, b2;
		const char *n1, *n2;
		for (rva = sb; rva != se && rva - sb < 4; rva++) {
			if (pfc_r2rcache_find(&v, rva, &n1, &b1) != 1 || pfc_r2rcache_find(&w, rva, &n2, &b2) != 1 ||
			    b1 != b2 || !n1 != !n2 || (n1 && strcmp(n1, n2)))
				abort();
			if (n1 && (n1 < v.pool || n1 >= v.pool + v.pool_len))
				abort();
		}
	}
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pfc_symcache_key key = { .text = "bid=fuzz boot=fuzz", .name = "0000000000000000" };
	static struct pfc_symcache_key elfkey = { .text = "elf exe=fuzz syms=fuzz:1 run=fuzz:1", .name = "0000000000000000" };
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
	if (data[0] & 8) {
		r2r_payload(copy, size - 1);
		free(copy);
		return 0;
	}
	if (data[0] & 1)
		ret = pfc_symcache_parse(copy, size - 1, data[0] & 4 ? &elfkey : &key, &t);
	else if (data[0] & 2)
		ret = pfc_symtab_view_image(&t, copy, size - 1, NULL, 0);	/* in place, as a conversion reads it */
	else
		ret = pfc_symtab_from_image(&t, copy, size - 1);
	if (ret == 0 && t.img) {
		/* in place: every lookup as in the copied table of the same bytes, when the copy
		 * takes them; bytes it refuses are still searched in place (the records are checked
		 * as a lookup reaches them), at every record's edges */
		struct pfc_symtab c;
		uint64_t lo, hi;

		if (pfc_symtab_from_image(&c, copy, size - 1) == 0) {
			for (i = 0; i < c.nr; i++) {
				const struct pfc_sym *a = pfc_symtab_find(&c, c.syms[i].start), *b = pfc_symtab_find(&t, c.syms[i].start);
				if (!a || !b || a->start != b->start || a->end != b->end || strcmp(a->name, b->name))
					abort();
			}
			pfc_symtab_free(&c);
		} else {
			/* every 8 bytes of the input as an address: the records' starts and ends
			 * among them */
			for (i = 0; i + 8 <= size - 1; i += 8) {
				const struct pfc_sym *b;
				uint64_t at;

				memcpy(&at, copy + i, 8);
				if ((b = pfc_symtab_find(&t, at)) && (!b->name || strlen(b->name) >= size))
					abort();
			}
		}
		pfc_symtab_core_range(&t, &lo, &hi);
	}
	if (ret == 0) {
		for (i = 0; i < t.nr && !t.img; i++)
			if (!pfc_symtab_find(&t, t.syms[i].start))
				abort();	/* a symbol not found at its own start: the trees are wrong */
		pfc_symtab_free(&t);
	}
	free(copy);
	return 0;
}
