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
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libdeflate.h>
#include <libelf.h>

#include "converter/native/a2l.h"
#include "converter/native/dwpath.h"
#include "converter/native/elfread.h"
#include "converter/native/kcache.h"
#include "converter/native/symtab.h"


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

/* The bytes of a debug image: inflated here (heap), or the symbol cache's entry (cached). */
struct dwimg {
	uint8_t *heap;
	struct pfc_kcache_bytes cached;
};

static void dwimg_free(struct dwimg *d)
{
	free(d->heap);
	if (d->cached.map)
		pfc_kcache_bytes_free(&d->cached);
	memset(d, 0, sizeof(*d));
}

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
	struct dwimg dwimage;
	const char *cache_dir;	/* where inflated images are kept, or NULL */
	enum pfc_a2l_cache cache;
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

/* Sections a lookup never reads: variable locations and macros (the largest, after .debug_info). */
static int unneeded_section(const char *name)
{
	static const char *const skip[] = { ".debug_loc", ".debug_loclists", ".debug_macro", ".debug_macinfo" };
	size_t i;

	for (i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strcmp(name, skip[i]))
			return 1;
	return 0;
}

/*
 * libdw inflates every compressed debug section when it opens a file, with zlib; a
 * distribution's debug file (libc's: 10 MB of DWARF in 4 MB) costs more than everything
 * else a conversion does.  Here the debug sections a lookup reads are inflated with
 * libdeflate (whole buffers, several times faster) into one in-memory ELF image that
 * libdw opens instead: the same bytes, so the same answers.  Only for the common case
 * (64-bit, native byte order, not relocatable, no dwz alternate file, zlib or no
 * compression); anything else returns NULL and libdw reads the file itself.
 */
/*
 * The symbol cache's key of a file's image: its build-id (8 bytes at least) and size, and
 * this perfconv, whose code lays the image out.  0, or -ENOENT.
 */
static int image_key(Elf *elf, size_t size, struct pfc_kcache_key *k)
{
	const unsigned char *id;
	char hex[2 * 64 + 1], text[PFC_KCACHE_KEY_MAX];
	const char *exe = pfc_own_build_id();
	ssize_t n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	int len;

	if (n < 8 || n > 64 || !*exe)
		return -ENOENT;
	for (ssize_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	len = snprintf(text, sizeof(text), "dwarf exe=%s bid=%s:%zu", exe, hex, size);
	if (len < 0 || (size_t)len >= sizeof(text))
		return -ENOENT;
	return pfc_kcache_key_text(k, text);
}

/* An image's bytes as an ELF file libdw reads, or NULL. */
static Elf *image_elf(const uint8_t *p, size_t len)
{
	Elf *mem = elf_memory((char *)p, len);

	if (mem && elf_kind(mem) != ELF_K_ELF) {
		elf_end(mem);
		mem = NULL;
	}
	return mem;
}

static Elf *debug_image(Elf *elf, const char *cache_dir, struct dwimg *image_out, enum pfc_a2l_cache *cache)
{
	struct pfc_kcache_key key;
	int keyed = 0;
	const uint8_t *raw;
	size_t rawsize = 0, shstrndx, nscn = 0, k = 0, strsz = 1, total, pos;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	struct { Elf_Scn *scn; GElf_Shdr sh; const char *name; uint64_t size, align; int zlib; } *pick = NULL;
	struct libdeflate_decompressor *dec = NULL;
	uint8_t *img = NULL;
	Elf64_Ehdr *ne;
	Elf64_Shdr *nsh;
	Elf *mem = NULL;
	int compressed = 0;
	static const union { uint16_t u; uint8_t b[2]; } probe = { 1 };
	uint8_t native = probe.b[0] ? ELFDATA2LSB : ELFDATA2MSB;

	memset(image_out, 0, sizeof(*image_out));
	raw = (const uint8_t *)elf_rawfile(elf, &rawsize);
	if (!raw || !gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != native || eh.e_type == ET_REL ||
	    elf_getshdrnum(elf, &nscn) != 0 || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	pick = calloc(nscn ? nscn : 1, sizeof(*pick));
	if (!pick)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			goto out;
		if (!strcmp(name, ".gnu_debugaltlink") || !strncmp(name, ".zdebug", 7) || strstr(name, ".dwo"))
			goto out;	/* dwz, GNU-style compression, split DWARF: libdw's own way */
		if (strncmp(name, ".debug_", 7) || unneeded_section(name) || sh.sh_type == SHT_NOBITS)
			continue;
		if (sh.sh_offset > rawsize || sh.sh_size > rawsize - sh.sh_offset || k >= nscn)
			goto out;
		pick[k].scn = scn;
		pick[k].sh = sh;
		pick[k].name = name;
		pick[k].size = sh.sh_size;
		pick[k].align = sh.sh_addralign ? sh.sh_addralign : 1;
		if (sh.sh_flags & SHF_COMPRESSED) {
			GElf_Chdr ch;
			if (gelf_getchdr(scn, &ch) == NULL || ch.ch_type != ELFCOMPRESS_ZLIB ||
			    sh.sh_size < sizeof(Elf64_Chdr) || ch.ch_size > ((uint64_t)1 << 32))
				goto out;
			pick[k].size = ch.ch_size;
			pick[k].align = ch.ch_addralign ? ch.ch_addralign : 1;
			pick[k].zlib = 1;
			compressed = 1;
		}
		if (pick[k].align & (pick[k].align - 1) || pick[k].align > 4096)
			goto out;
		strsz += strlen(name) + 1;
		k++;
	}
	if (!compressed || !k)
		goto out;	/* nothing to gain */
	/* inflated before for a file of this build-id: the cache's entry, read in place */
	if (cache_dir && image_key(elf, rawsize, &key) == 0) {
		struct pfc_kcache_bytes b;
		int got = pfc_kcache_get(cache_dir, &pfc_kcache_dwarf, &key, &b);
		keyed = 1;
		*cache = got == -EINVAL ? PFC_A2L_CACHE_CORRUPT : PFC_A2L_CACHE_MISS;
		if (got == 1) {
			if ((mem = image_elf(b.p, b.len)) != NULL) {
				*cache = PFC_A2L_CACHE_HIT;
				image_out->cached = b;
				goto out;
			}
			pfc_kcache_bytes_free(&b);
		}
	}
	/* ehdr | section data | shstrtab | section headers (null, the k sections, shstrtab) */
	total = sizeof(Elf64_Ehdr);
	for (size_t i = 0; i < k; i++) {
		total = (total + pick[i].align - 1) & ~(size_t)(pick[i].align - 1);
		total += pick[i].size;
	}
	total += strsz;
	total = (total + 7) & ~(size_t)7;
	pos = total;
	total += (k + 2) * sizeof(Elf64_Shdr);
	img = calloc(1, total);
	dec = libdeflate_alloc_decompressor();
	if (!img || !dec)
		goto out;
	ne = (Elf64_Ehdr *)img;
	memcpy(ne->e_ident, eh.e_ident, EI_NIDENT);
	ne->e_type = eh.e_type;
	ne->e_machine = eh.e_machine;
	ne->e_version = eh.e_version;
	ne->e_flags = eh.e_flags;
	ne->e_ehsize = sizeof(Elf64_Ehdr);
	ne->e_shentsize = sizeof(Elf64_Shdr);
	ne->e_shoff = pos;
	ne->e_shnum = (Elf64_Half)(k + 2);
	ne->e_shstrndx = (Elf64_Half)(k + 1);
	nsh = (Elf64_Shdr *)(img + pos);
	{
		size_t off = sizeof(Elf64_Ehdr), stroff, sp = 1;
		for (size_t i = 0; i < k; i++) {
			Elf64_Shdr *d = &nsh[i + 1];
			const uint8_t *src = raw + pick[i].sh.sh_offset;
			off = (off + pick[i].align - 1) & ~(size_t)(pick[i].align - 1);
			if (pick[i].zlib) {
				size_t got = 0;
				if (libdeflate_zlib_decompress(dec, src + sizeof(Elf64_Chdr),
							       pick[i].sh.sh_size - sizeof(Elf64_Chdr),
							       img + off, pick[i].size, &got) != LIBDEFLATE_SUCCESS ||
				    got != pick[i].size)
					goto out;
			} else {
				memcpy(img + off, src, pick[i].size);
			}
			d->sh_type = pick[i].sh.sh_type;
			d->sh_flags = pick[i].sh.sh_flags & ~(uint64_t)SHF_COMPRESSED;
			d->sh_offset = off;
			d->sh_size = pick[i].size;
			d->sh_addralign = pick[i].align;
			d->sh_entsize = pick[i].sh.sh_entsize;
			off += pick[i].size;
		}
		stroff = off;
		for (size_t i = 0; i < k; i++) {
			size_t len = strlen(pick[i].name) + 1;
			nsh[i + 1].sh_name = (Elf64_Word)sp;
			memcpy(img + stroff + sp, pick[i].name, len);
			sp += len;
		}
		nsh[k + 1].sh_name = 0;	/* the table itself needs no name: "" */
		nsh[k + 1].sh_type = SHT_STRTAB;
		nsh[k + 1].sh_offset = stroff;
		nsh[k + 1].sh_size = strsz;
		nsh[k + 1].sh_addralign = 1;
	}
	mem = image_elf(img, total);
	if (!mem)
		goto out;
	if (keyed)	/* a cache that cannot be written is no cache */
		pfc_kcache_put(cache_dir, &pfc_kcache_dwarf, &key, img, total);
	image_out->heap = img;
	img = NULL;
out:
	libdeflate_free_decompressor(dec);
	free(img);
	free(pick);
	return mem;
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
	a->dwelf = debug_image(a->elf, a->cache_dir, &a->dwimage, &a->cache);
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
	if (a->dw)
		dwarf_end(a->dw);
	if (a->dwelf)
		elf_end(a->dwelf);
	dwimg_free(&a->dwimage);
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

enum pfc_a2l_cache pfc_a2l_cache_state(const struct pfc_a2l *a)
{
	return a ? a->cache : PFC_A2L_CACHE_OFF;
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
	struct dwimg dwimage;
	enum pfc_a2l_cache cache = PFC_A2L_CACHE_OFF;
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
	dwelf = debug_image(elf, a->cache_dir, &dwimage, &cache);
	if (pfc_dw_strings_ok(dwelf ? dwelf : elf))
		dw = dwarf_begin_elf(dwelf ? dwelf : elf, DWARF_C_READ, NULL);
	if (!dw) {
		if (dwelf)
			elf_end(dwelf);
		dwimg_free(&dwimage);
		goto fail;
	}
	if (a->dw)
		dwarf_end(a->dw);
	if (a->dwelf)
		elf_end(a->dwelf);
	dwimg_free(&a->dwimage);
	a->dw = dw;
	a->dwelf = dwelf;
	a->dwimage = dwimage;
	if (cache != PFC_A2L_CACHE_OFF)
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
			int depth = pfc_dwpath_find(&cu, addr, path), k;
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
