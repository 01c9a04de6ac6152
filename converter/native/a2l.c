/*
 * a2l.c - owns answering "addr2line -i -f -e FILE ADDR" without running it: BFD's DWARF
 * route (the innermost function containing the address, then the functions it is inlined
 * into; linkage names before plain names) and, where the DWARF has no answer, BFD's
 * elf_find_function over the symbol table (binutils 2.40 better_fit: the closest start,
 * then the larger size when the current pick ends before the address, then functions over
 * untyped symbols, then the smaller size; the first in table order on a tie).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include "converter/native/a2l.h"

#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif

struct a2l_sec {
	uint64_t addr, size;
	size_t idx;
};

struct a2l_sym {
	uint64_t value, size;
	size_t shndx;
	const char *name;
	uint8_t func;
};

struct pfc_a2l {
	int fd;
	Elf *elf;
	Dwarf *dw;
	struct a2l_sec *secs;
	size_t nsecs;
	struct a2l_sym *syms;	/* in table order */
	size_t nsyms;
	uint64_t text_offset;
};

static int load_syms(struct pfc_a2l *a, int type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(a->elf, scn)) != NULL) {
		Elf_Data *d;
		size_t i, n;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != (unsigned)type || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			return 0;
		n = sh.sh_size / sh.sh_entsize;
		a->syms = calloc(n ? n : 1, sizeof(*a->syms));
		if (!a->syms)
			return -1;
		for (i = 1; i < n; i++) {	/* BFD skips the null symbol */
			GElf_Sym s;
			int t;
			const char *name;
			if (!gelf_getsym(d, (int)i, &s))
				continue;
			t = GELF_ST_TYPE(s.st_info);
			/* _bfd_elf_maybe_function_sym: no sections, files, objects, TLS */
			if (t == STT_SECTION || t == STT_FILE || t == STT_OBJECT || t == STT_TLS || t == STT_COMMON)
				continue;
			if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE)
				continue;
			/* annobin's hidden local untyped markers are not functions */
			if (!s.st_size && GELF_ST_BIND(s.st_info) == STB_LOCAL && t == STT_NOTYPE &&
			    GELF_ST_VISIBILITY(s.st_other) == STV_HIDDEN)
				continue;
			name = elf_strptr(a->elf, sh.sh_link, s.st_name);
			if (!name)
				continue;
			a->syms[a->nsyms].value = s.st_value;
			a->syms[a->nsyms].size = s.st_size ? s.st_size : 1;
			a->syms[a->nsyms].shndx = s.st_shndx;
			a->syms[a->nsyms].name = name;
			a->syms[a->nsyms].func = t == STT_FUNC || t == STT_GNU_IFUNC;
			a->nsyms++;
		}
		return 1;
	}
	return 0;
}

struct pfc_a2l *pfc_a2l_open(const char *path)
{
	struct pfc_a2l *a = calloc(1, sizeof(*a));
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Ehdr eh;
	size_t n = 0, shstrndx;

	if (!a)
		return NULL;
	a->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (a->fd < 0) {
		free(a);
		return NULL;
	}
	elf_version(EV_CURRENT);
	a->elf = elf_begin(a->fd, ELF_C_READ_MMAP, NULL);
	if (!a->elf || elf_kind(a->elf) != ELF_K_ELF || !gelf_getehdr(a->elf, &eh) ||
	    elf_getshdrnum(a->elf, &n) != 0 || elf_getshdrstrndx(a->elf, &shstrndx) != 0)
		goto fail;
	a->secs = calloc(n ? n : 1, sizeof(*a->secs));
	if (!a->secs)
		goto fail;
	while ((scn = elf_nextscn(a->elf, scn)) != NULL) {
		const char *name;
		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(a->elf, shstrndx, sh.sh_name);
		if (eh.e_type == ET_EXEC && name && !strcmp(name, ".text"))
			a->text_offset = sh.sh_addr - sh.sh_offset;
		if (!(sh.sh_flags & SHF_ALLOC) || !sh.sh_size)
			continue;
		a->secs[a->nsecs].addr = sh.sh_addr;
		a->secs[a->nsecs].size = sh.sh_size;
		a->secs[a->nsecs].idx = elf_ndxscn(scn);
		a->nsecs++;
	}
	/* addr2line reads the dynamic symbols only when there are no static ones */
	if (load_syms(a, SHT_SYMTAB) < 0)
		goto fail;
	if (!a->nsyms) {
		free(a->syms);
		a->syms = NULL;
		if (load_syms(a, SHT_DYNSYM) < 0)
			goto fail;
	}
	a->dw = dwarf_begin_elf(a->elf, DWARF_C_READ, NULL);
	return a;
fail:
	pfc_a2l_close(a);
	return NULL;
}

void pfc_a2l_close(struct pfc_a2l *a)
{
	if (!a)
		return;
	if (a->dw)
		dwarf_end(a->dw);
	if (a->elf)
		elf_end(a->elf);
	if (a->fd >= 0)
		close(a->fd);
	free(a->secs);
	free(a->syms);
	free(a);
}

uint64_t pfc_a2l_text_offset(const struct pfc_a2l *a)
{
	return a->text_offset;
}

/* elf_find_function with binutils 2.40's better_fit. */
static const char *symtab_name(const struct pfc_a2l *a, size_t shndx, uint64_t addr)
{
	const struct a2l_sym *best = NULL;
	uint64_t boff = 0, bsize = 0;
	size_t i;

	for (i = 0; i < a->nsyms; i++) {
		const struct a2l_sym *s = &a->syms[i];
		if (s->shndx != shndx || s->value > addr || s->value < boff)
			continue;
		if (!best || s->value > boff)
			goto take;
		if (boff + bsize <= addr) {
			if (s->size > bsize)
				goto take;
			continue;
		}
		if (s->value + s->size <= addr)
			continue;
		if (s->func && !best->func)
			goto take;
		if (best->func && !s->func)
			continue;
		if (s->size < bsize)
			goto take;
		continue;
take:
		best = s;
		boff = s->value;
		bsize = s->size;
	}
	return best ? best->name : NULL;
}

/* BFD's function name of a DIE: the linkage name before the plain one, through
 * DW_AT_abstract_origin and DW_AT_specification. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	const char *n;

	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &at) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &at)) && (n = dwarf_formstring(&at)) != NULL)
		return n;
	if (dwarf_attr_integrate(die, DW_AT_name, &at) && (n = dwarf_formstring(&at)) != NULL)
		return n;
	return NULL;
}

int pfc_a2l_lookup(struct pfc_a2l *a, uint64_t addr, const char **names, int max)
{
	size_t i, shndx = 0;
	int found = 0, n = 0;

	if (!a || max < 1)
		return 0;
	for (i = 0; i < a->nsecs; i++)
		if (addr >= a->secs[i].addr && addr - a->secs[i].addr < a->secs[i].size) {
			shndx = a->secs[i].idx;
			found = 1;
			break;
		}
	if (!found)
		return 0;
	if (a->dw) {
		Dwarf_Die cu, *scopes = NULL;
		if (dwarf_addrdie(a->dw, addr, &cu)) {
			int ns = dwarf_getscopes(&cu, addr, &scopes), k;
			for (k = 0; k < ns && n < max; k++) {
				int tag = dwarf_tag(&scopes[k]);
				if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
					continue;
				names[n] = die_name(&scopes[k]);
				if (!names[n])
					names[n] = "??";
				n++;
			}
			free(scopes);
			if (n)
				return n;
			/* a line table but no function: the name comes from the symbols */
			names[0] = symtab_name(a, shndx, addr);
			if (!names[0])
				names[0] = "??";
			return 1;
		}
	}
	names[0] = symtab_name(a, shndx, addr);
	return names[0] ? 1 : 0;
}
