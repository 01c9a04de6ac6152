/*
 * dwpath.c - the inline chain at an address, as BFD's addr2line builds it (caller_func
 * links): among the sibling functions that hold pc the smallest range wins, on a tie the
 * DIE that comes last (assembler CUs give one DIE per alias of a function, all with the
 * same range).  Lexical blocks are crossed; namespaces and types have no ranges but hold
 * functions.  (libdw's dwarf_getscopes would go on into an inlined function's abstract
 * definition, and leaks on some malformed DWARF.)
 */
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <gelf.h>

#include "converter/native/dwpath.h"

/* bounds the recursion through lexical blocks and scopes, which add no function */
#define MAX_LEVEL 256

/* The length of the range of DIE that holds pc (what BFD compares to pick a function). */
static uint64_t range_len(Dwarf_Die *die, uint64_t pc)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0)
		if (pc >= start && pc < end)
			return end - start;
	return UINT64_MAX;
}

static int find_path(Dwarf_Die *parent, uint64_t pc, Dwarf_Die *path, int depth, int level)
{
	Dwarf_Die child, best;
	uint64_t best_len = UINT64_MAX;
	int have = 0;

	if (depth >= PFC_DWPATH_MAX || level >= MAX_LEVEL || dwarf_child(parent, &child) != 0)
		return depth;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_entry_point: {
			uint64_t len;
			if (dwarf_haspc(&child, pc) <= 0)
				break;
			len = range_len(&child, pc);
			if (!have || len <= best_len) {
				best = child;
				best_len = len;
				have = 1;
			}
			break;
		}
		case DW_TAG_lexical_block:
			if (!have && dwarf_haspc(&child, pc) > 0)
				return find_path(&child, pc, path, depth, level + 1);
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_module:
			if (depth == 0 && !have) {
				int d = find_path(&child, pc, path, depth, level + 1);
				if (d > depth)
					return d;
			}
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	if (!have)
		return depth;
	path[depth] = best;
	return find_path(&best, pc, path, depth + 1, level + 1);
}

int pfc_dwpath_find(Dwarf_Die *cu, uint64_t pc, Dwarf_Die *path)
{
	return find_path(cu, pc, path, 0, 0);
}

/*
 * The same walk with the outer level of a compilation unit kept: a CU's children are
 * crossed once, their kinds and ranges kept in order, and every later lookup in the CU
 * takes its function from that list instead of walking the DIEs again (libdw's sibling
 * step parses every attribute of every DIE it passes).  find_path's choices at depth 0,
 * in the same order: functions compete by range, a lexical block holding pc before any
 * function wins, a namespace or type (its own list, made when first entered) before
 * any function is searched and wins when it holds one.  Below the function chosen the
 * walk is find_path's.
 */
enum { ENT_FUNC, ENT_LEX, ENT_NS };

struct ent {
	Dwarf_Die die;
	uint8_t kind;
	uint32_t first, n;		/* its ranges in the CU's list */
	struct level *sub;		/* ENT_NS: its children, once entered */
};

struct level {
	struct ent *v;
	size_t n;
};

struct cu_ent {
	Dwarf_Off off;			/* the CU DIE's offset; 0: empty slot */
	struct level *top;
};

struct pfc_dwpath_cache {
	struct cu_ent *cus;
	size_t cap, count;
	uint64_t (*ranges)[2];
	size_t nranges, cranges;
	int failed;			/* out of memory once: every lookup walks as before */
};

struct pfc_dwpath_cache *pfc_dwpath_cache_new(void)
{
	return calloc(1, sizeof(struct pfc_dwpath_cache));
}

static void level_free(struct level *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->n; i++)
		level_free(l->v[i].sub);
	free(l->v);
	free(l);
}

void pfc_dwpath_cache_free(struct pfc_dwpath_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->cap; i++)
		level_free(c->cus[i].top);
	free(c->cus);
	free(c->ranges);
	free(c);
}

static int add_range(struct pfc_dwpath_cache *c, uint64_t lo, uint64_t hi)
{
	if (c->nranges == c->cranges) {
		size_t cap = c->cranges ? c->cranges * 2 : 256;
		uint64_t (*v)[2] = realloc(c->ranges, cap * sizeof(*v));
		if (!v)
			return -1;
		c->ranges = v;
		c->cranges = cap;
	}
	c->ranges[c->nranges][0] = lo;
	c->ranges[c->nranges][1] = hi;
	c->nranges++;
	return 0;
}

/* parent's children as find_path sees them at depth 0, or NULL (out of memory) */
static struct level *level_make(struct pfc_dwpath_cache *c, Dwarf_Die *parent)
{
	struct level *l = calloc(1, sizeof(*l));
	size_t cap = 0;
	Dwarf_Die child;

	if (!l)
		return NULL;
	if (dwarf_child(parent, &child) != 0)
		return l;
	do {
		struct ent e = { .die = child };
		int tag = dwarf_tag(&child);
		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_entry_point:
			e.kind = ENT_FUNC;
			break;
		case DW_TAG_lexical_block:
			e.kind = ENT_LEX;
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_module:
			e.kind = ENT_NS;
			break;
		default:
			continue;
		}
		if (e.kind != ENT_NS) {
			/* the ranges dwarf_haspc and range_len read, up to where dwarf_ranges stops */
			Dwarf_Addr base, start, end;
			ptrdiff_t off = 0;
			e.first = (uint32_t)c->nranges;
			while ((off = dwarf_ranges(&child, off, &base, &start, &end)) > 0)
				if (add_range(c, start, end) < 0)
					goto oom;
			e.n = (uint32_t)(c->nranges - e.first);
			if (!e.n && e.kind == ENT_FUNC)
				continue;	/* holds no pc: never chosen */
		}
		if (l->n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			struct ent *v = realloc(l->v, nc * sizeof(*v));
			if (!v)
				goto oom;
			l->v = v;
			cap = nc;
		}
		l->v[l->n++] = e;
	} while (dwarf_siblingof(&child, &child) == 0);
	return l;
oom:
	level_free(l);
	return NULL;
}

/* 1 when a range of e holds pc, with the length of the first that does */
static int ent_holds(const struct pfc_dwpath_cache *c, const struct ent *e, uint64_t pc, uint64_t *len)
{
	uint32_t i;

	for (i = 0; i < e->n; i++)
		if (pc >= c->ranges[e->first + i][0] && pc < c->ranges[e->first + i][1]) {
			*len = c->ranges[e->first + i][1] - c->ranges[e->first + i][0];
			return 1;
		}
	return 0;
}

static int find_top(struct pfc_dwpath_cache *c, struct level *l, uint64_t pc, Dwarf_Die *path, int level)
{
	struct ent *best = NULL;
	uint64_t best_len = UINT64_MAX, h;
	size_t i;

	if (level >= MAX_LEVEL)
		return 0;
	for (i = 0; i < l->n; i++) {
		struct ent *e = &l->v[i];
		switch (e->kind) {
		case ENT_FUNC:
			if (ent_holds(c, e, pc, &h) && (!best || h <= best_len)) {
				best = e;
				best_len = h;
			}
			break;
		case ENT_LEX:
			if (!best && ent_holds(c, e, pc, &h))
				return find_path(&e->die, pc, path, 0, level + 1);
			break;
		case ENT_NS:
			if (!best) {
				int d;
				if (!e->sub && !(e->sub = level_make(c, &e->die)))
					return -1;
				d = find_top(c, e->sub, pc, path, level + 1);
				if (d != 0)
					return d;
			}
			break;
		}
	}
	if (!best)
		return 0;
	path[0] = best->die;
	return find_path(&best->die, pc, path, 1, level + 1);
}

static struct level *cu_level(struct pfc_dwpath_cache *c, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu) + 1;	/* + 1: never 0 */
	size_t j;

	if ((c->count + 1) * 2 > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64, k;
		struct cu_ent *v = calloc(cap, sizeof(*v));
		if (!v)
			return NULL;
		for (k = 0; k < c->cap; k++)
			if (c->cus[k].off) {
				size_t h = (size_t)(c->cus[k].off * 0x9e3779b97f4a7c15ULL >> 20) & (cap - 1);
				while (v[h].off)
					h = (h + 1) & (cap - 1);
				v[h] = c->cus[k];
			}
		free(c->cus);
		c->cus = v;
		c->cap = cap;
	}
	j = (size_t)(off * 0x9e3779b97f4a7c15ULL >> 20) & (c->cap - 1);
	while (c->cus[j].off) {
		if (c->cus[j].off == off)
			return c->cus[j].top;
		j = (j + 1) & (c->cap - 1);
	}
	if (!(c->cus[j].top = level_make(c, cu)))
		return NULL;
	c->cus[j].off = off;
	c->count++;
	return c->cus[j].top;
}

int pfc_dwpath_find_cached(struct pfc_dwpath_cache *c, Dwarf_Die *cu, uint64_t pc, Dwarf_Die *path)
{
	struct level *l;
	int d;

	if (!c || c->failed)
		return find_path(cu, pc, path, 0, 0);
	if (!(l = cu_level(c, cu)) || (d = find_top(c, l, pc, path, 0)) < 0) {
		c->failed = 1;
		return find_path(cu, pc, path, 0, 0);
	}
	return d;
}

int pfc_dw_strings_ok(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 1;	/* no section names: libdw finds no DWARF either */
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strcmp(name, ".debug_str") != 0 && strcmp(name, ".debug_line_str") != 0))
			continue;
		/* libdw decompresses the section in place the same way before it reads it */
		if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return 0;
		d = elf_getdata(scn, NULL);
		if (d && d->d_size > 0 && ((const char *)d->d_buf)[d->d_size - 1] != '\0')
			return 0;
	}
	return 1;
}
