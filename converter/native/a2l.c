/*
 * a2l.c - owns answering "addr2line -i -f -e FILE ADDR" without running it: BFD's DWARF
 * route (the innermost function containing the address, then the functions it is inlined
 * into; linkage names before plain names) and, where the DWARF has no answer, BFD's
 * elf_find_function over the symbol table (binutils 2.40 better_fit: the closest start,
 * then the larger size when the current pick ends before the address, then functions over
 * untyped symbols, then the smaller size; the first in table order on a tie).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include "converter/native/a2l.h"
#include "converter/native/dwimage.h"
#include "converter/native/dwpath.h"
#include "converter/native/elfread.h"


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

/* BFD's per-function state (struct funcinfo): the name it prints, and whether that name
 * is final.  A C++ function known only by DW_AT_name gets, the first time it is the
 * innermost function of a lookup, the name of the symbol found at the address printed,
 * and kept as its name when that symbol starts where the function does.  So the answers
 * depend on the lookups before: perf asks one addr2line process per file all session. */
struct a2l_func {
	uint64_t off;		/* DIE offset + 1; 0 = empty slot */
	const char *name;
	uint8_t is_linkage;
};

struct pfc_a2l {
	struct a2l_func *funcs;
	size_t nfuncs, capfuncs;
	int fd;
	Elf *elf;
	Dwarf *dw;
	struct a2l_sec *secs;
	size_t nsecs;
	struct a2l_sym *syms;	/* in table order */
	size_t nsyms;
	uint64_t text_offset;
	Elf *dwelf;		/* the in-memory copy of the debug sections libdw reads, or NULL */
	struct pfc_dwimg dwimage;
	const char *cache_dir;	/* where inflated images are kept, or NULL */
	struct pfc_dwpath_cache *dwc;	/* the outer levels of dw's CUs looked in */
	enum pfc_dwimg_cache cache;
	int has_info;		/* the file has a .debug_info section (BFD's find_debug_info) */
	int sepfd;		/* the separate debug file whose DWARF answers (pfc_a2l_separate), or -1 */
	Elf *sepelf;
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


struct pfc_a2l *pfc_a2l_open(const char *path, const char *cache_dir)
{
	struct pfc_a2l *a = calloc(1, sizeof(*a));
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Ehdr eh;
	size_t n = 0, shstrndx;

	if (!a)
		return NULL;
	a->sepfd = -1;
	a->cache_dir = cache_dir;
	a->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (a->fd < 0) {
		free(a);
		return NULL;
	}
	elf_version(EV_CURRENT);
	a->elf = elf_begin(a->fd, PFC_ELF_C_READ, NULL);
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
		if (name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info") ||
			     !strncmp(name, ".gnu.linkonce.wi.", 17)))
			a->has_info = 1;
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
	a->dwelf = pfc_dwimg_open(a->elf, pfc_dwimg_fd_size(a->fd), a->cache_dir, &a->dwimage, &a->cache);
	if (pfc_dw_strings_ok(a->dwelf ? a->dwelf : a->elf))
		a->dw = dwarf_begin_elf(a->dwelf ? a->dwelf : a->elf, DWARF_C_READ, NULL);
	return a;
fail:
	pfc_a2l_close(a);
	return NULL;
}

void pfc_a2l_close(struct pfc_a2l *a)
{
	if (!a)
		return;
	pfc_dwpath_cache_free(a->dwc);
	if (a->dw)
		dwarf_end(a->dw);
	if (a->dwelf)
		elf_end(a->dwelf);
	pfc_dwimg_free(&a->dwimage);
	if (a->elf)
		elf_end(a->elf);
	if (a->fd >= 0)
		close(a->fd);
	if (a->sepelf)
		elf_end(a->sepelf);
	if (a->sepfd >= 0)
		close(a->sepfd);
	free(a->secs);
	free(a->syms);
	free(a->funcs);
	free(a);
}

enum pfc_dwimg_cache pfc_a2l_cache_state(const struct pfc_a2l *a)
{
	return a ? a->cache : PFC_DWIMG_OFF;
}

int pfc_a2l_has_dwarf(const struct pfc_a2l *a)
{
	return a && a->has_info;
}

/*
 * BFD's _bfd_dwarf2_slurp_debug_info for a file without .debug_info: the DWARF of the
 * separate debug file it follows (the caller has found it and checked its build-id) answers
 * instead, and the file's own symbols still name what the DWARF leaves to them (BFD takes
 * the debug file's symbols where its sections line up with the file's: the same symbols for
 * a debug file made from the same binary).  A file without .debug_info changes nothing.
 */
int pfc_a2l_separate(struct pfc_a2l *a, const char *path)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	int fd, info = 0;
	Elf *elf;
	Elf *dwelf;
	struct pfc_dwimg dwimage;
	enum pfc_dwimg_cache cache = PFC_DWIMG_OFF;
	Dwarf *dw = NULL;

	if (!a || a->has_info || a->sepelf)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, PFC_ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) != 0)
		goto fail;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info") ||
		    !strncmp(name, ".gnu.linkonce.wi.", 17))
			info = 1;
	}
	if (!info)
		goto fail;
	dwelf = pfc_dwimg_open(elf, pfc_dwimg_fd_size(fd), a->cache_dir, &dwimage, &cache);
	if (pfc_dw_strings_ok(dwelf ? dwelf : elf))
		dw = dwarf_begin_elf(dwelf ? dwelf : elf, DWARF_C_READ, NULL);
	if (!dw) {
		if (dwelf)
			elf_end(dwelf);
		pfc_dwimg_free(&dwimage);
		goto fail;
	}
	pfc_dwpath_cache_free(a->dwc);
	a->dwc = NULL;
	if (a->dw)
		dwarf_end(a->dw);
	if (a->dwelf)
		elf_end(a->dwelf);
	pfc_dwimg_free(&a->dwimage);
	a->dw = dw;
	a->dwelf = dwelf;
	a->dwimage = dwimage;
	if (cache != PFC_DWIMG_OFF)
		a->cache = cache;
	a->sepelf = elf;
	a->sepfd = fd;
	a->has_info = 1;
	return 0;
fail:
	if (elf)
		elf_end(elf);
	close(fd);
	return -1;
}

uint64_t pfc_a2l_text_offset(const struct pfc_a2l *a)
{
	return a->text_offset;
}

/* elf_find_function with binutils 2.40's better_fit. */
static const struct a2l_sym *symtab_pick(const struct pfc_a2l *a, size_t shndx, uint64_t addr)
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
	return best;
}

static const char *symtab_name(const struct pfc_a2l *a, size_t shndx, uint64_t addr)
{
	const struct a2l_sym *s = symtab_pick(a, shndx, addr);
	return s ? s->name : NULL;
}

/* BFD's mangle_style: languages whose DW_AT_name is not the symbol's name. */
static int lang_mangles(Dwarf_Die *die)
{
	Dwarf_Die cu;
	Dwarf_Word lang;
	Dwarf_Attribute at;

	if (!dwarf_diecu(die, &cu, NULL, NULL) || !dwarf_attr(&cu, DW_AT_language, &at) ||
	    dwarf_formudata(&at, &lang) != 0)
		return 0;
	switch (lang) {
	case DW_LANG_C_plus_plus: case DW_LANG_C_plus_plus_03: case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14: case DW_LANG_ObjC_plus_plus: case DW_LANG_D: case DW_LANG_Rust:
	case DW_LANG_Ada83: case DW_LANG_Ada95: case DW_LANG_Swift: case DW_LANG_Fortran77:
	case DW_LANG_Fortran90: case DW_LANG_Fortran95: case DW_LANG_Fortran03: case DW_LANG_Fortran08:
	case DW_LANG_Java:
		return 1;
	default:
		return 0;
	}
}

/* BFD's function name of a DIE: the linkage name before the plain one, through
 * DW_AT_abstract_origin and DW_AT_specification. */
static const char *die_name(Dwarf_Die *die, uint8_t *is_linkage)
{
	Dwarf_Attribute at;
	const char *n;

	*is_linkage = 1;
	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &at) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &at)) && (n = dwarf_formstring(&at)) != NULL)
		return n;
	if (dwarf_attr_integrate(die, DW_AT_name, &at) && (n = dwarf_formstring(&at)) != NULL) {
		*is_linkage = !lang_mangles(die);
		return n;
	}
	*is_linkage = 0;
	return NULL;
}

static struct a2l_func *func_state(struct pfc_a2l *a, Dwarf_Die *die)
{
	uint64_t key = dwarf_dieoffset(die) + 1;
	struct a2l_func *f;
	size_t j;

	if ((a->nfuncs + 1) * 2 > a->capfuncs) {
		size_t cap = a->capfuncs ? a->capfuncs * 2 : 256, i;
		struct a2l_func *nv = calloc(cap, sizeof(*nv));
		if (!nv)
			return NULL;
		for (i = 0; i < a->capfuncs; i++)
			if (a->funcs[i].off) {
				size_t h = (size_t)(a->funcs[i].off * 0x9e3779b97f4a7c15ULL) & (cap - 1);
				while (nv[h].off)
					h = (h + 1) & (cap - 1);
				nv[h] = a->funcs[i];
			}
		free(a->funcs);
		a->funcs = nv;
		a->capfuncs = cap;
	}
	j = (size_t)(key * 0x9e3779b97f4a7c15ULL) & (a->capfuncs - 1);
	while (a->funcs[j].off) {
		if (a->funcs[j].off == key)
			return &a->funcs[j];
		j = (j + 1) & (a->capfuncs - 1);
	}
	f = &a->funcs[j];
	f->off = key;
	f->name = die_name(die, &f->is_linkage);
	a->nfuncs++;
	return f;
}

/* The function's first address, as BFD keeps it (its first range). */
static int die_low(Dwarf_Die *die, uint64_t *low)
{
	Dwarf_Addr lo, base, start, end;

	if (dwarf_lowpc(die, &lo) == 0) {
		*low = lo;
		return 0;
	}
	if (dwarf_ranges(die, 0, &base, &start, &end) > 0) {
		*low = start;
		return 0;
	}
	return -1;
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
		Dwarf_Die cu, path[PFC_DWPATH_MAX];
		if (dwarf_addrdie(a->dw, addr, &cu)) {
			int depth, k;
			if (!a->dwc)
				a->dwc = pfc_dwpath_cache_new();	/* NULL: the walk without it */
			depth = pfc_dwpath_find_cached(a->dwc, &cu, addr, path);
			/* innermost first, as addr2line prints the chain */
			for (k = depth - 1; k >= 0 && n < max; k--) {
				struct a2l_func *f = func_state(a, &path[k]);
				if (!f)
					return 0;
				names[n] = f->name;
				if (!n && !f->is_linkage) {
					/* _bfd_dwarf2_find_nearest_line: the symbol's name is printed */
					const struct a2l_sym *sym = symtab_pick(a, shndx, addr);
					uint64_t low;
					if (sym) {
						names[n] = sym->name;
						if (die_low(&path[k], &low) == 0 && low == sym->value)
							f->name = sym->name;
					}
					f->is_linkage = 1;
				}
				if (!names[n])
					names[n] = "??";
				n++;
			}
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
