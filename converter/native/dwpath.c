/*
 * dwpath.c - the inline chain at an address, as BFD's addr2line builds it (caller_func
 * links): among the sibling functions that hold pc the smallest range wins, on a tie the
 * DIE that comes last (assembler CUs give one DIE per alias of a function, all with the
 * same range).  Lexical blocks are crossed; namespaces and types have no ranges but hold
 * functions.  (libdw's dwarf_getscopes would go on into an inlined function's abstract
 * definition, and leaks on some malformed DWARF.)
 */
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
