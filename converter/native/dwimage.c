/*
 * dwimage.c - the DWARF sections of a debug file inflated into one in-memory ELF image that
 * libdw reads instead of the file, kept in the symbol cache (symcache.c's "dwarf" entries) by
 * the file's build-id: a distribution's debug file is inflated once, not per conversion.
 * a2l.c (names) and srcline.c (source lines) open their DWARF through it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libdeflate.h>
#include <libelf.h>

#include "converter/native/dwimage.h"
#include "converter/native/symtab.h"
#include "converter/util/hex.h"

uint64_t pfc_dwimg_fd_size(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
}

void pfc_dwimg_free(struct pfc_dwimg *d)
{
	free(d->heap);
	if (d->cached.map)
		pfc_symcache_bytes_free(&d->cached);
	memset(d, 0, sizeof(*d));
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
 * The symbol cache's key of a file's image: its build-id (8 bytes at least) and size, and
 * this perfconv, whose code lays the image out.  0, or -ENOENT.
 */
static int image_key(Elf *elf, uint64_t size, struct pfc_symcache_key *k)
{
	const unsigned char *id;
	char hex[2 * 64 + 1], text[PFC_SYMCACHE_KEY_MAX];
	const char *exe = pfc_own_build_id();
	ssize_t n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	int len;

	if (n < 8 || n > 64 || !*exe)
		return -ENOENT;
	pfc_hex_format(hex, id, (size_t)n);
	len = snprintf(text, sizeof(text), "dwarf exe=%s bid=%s:%llu", exe, hex, (unsigned long long)size);
	if (len < 0 || (size_t)len >= sizeof(text))
		return -ENOENT;
	return pfc_symcache_key_text(k, text);
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

/*
 * libdw inflates every compressed debug section when it opens a file, with zlib; a
 * distribution's debug file (libc's: 10 MB of DWARF in 4 MB) costs more than everything
 * else a conversion does.  Here the debug sections a lookup reads are inflated with
 * libdeflate (whole buffers, several times faster) into one in-memory ELF image that
 * libdw opens instead: the same bytes, so the same answers.  Only for the common case
 * (64-bit, native byte order, not relocatable, no dwz alternate file, zlib or no
 * compression); anything else returns NULL and libdw reads the file itself.
 */
Elf *pfc_dwimg_open(Elf *elf, uint64_t file_size, const char *cache_dir, struct pfc_dwimg *image_out,
		    enum pfc_dwimg_cache *cache)
{
	struct pfc_symcache_key key;
	int keyed = 0;
	size_t shstrndx, nscn = 0, k = 0, strsz = 1, total, pos;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	struct { Elf_Scn *scn; GElf_Shdr sh; const char *name; const uint8_t *src; uint64_t size, align; int zlib; } *pick = NULL;
	struct libdeflate_decompressor *dec = NULL;
	uint8_t *img = NULL;
	Elf64_Ehdr *ne;
	Elf64_Shdr *nsh;
	Elf *mem = NULL;
	int compressed = 0;
	static const union { uint16_t u; uint8_t b[2]; } probe = { 1 };
	uint8_t native = probe.b[0] ? ELFDATA2LSB : ELFDATA2MSB;

	memset(image_out, 0, sizeof(*image_out));
	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != native || eh.e_type == ET_REL ||
	    elf_getshdrnum(elf, &nscn) != 0 || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	pick = calloc(nscn ? nscn : 1, sizeof(*pick));
	if (!pick)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *rd;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			goto out;
		if (!strcmp(name, ".gnu_debugaltlink") || !strncmp(name, ".zdebug", 7) || strstr(name, ".dwo"))
			goto out;	/* dwz, GNU-style compression, split DWARF: libdw's own way */
		if (strncmp(name, ".debug_", 7) || unneeded_section(name) || sh.sh_type == SHT_NOBITS)
			continue;
		/* the section's bytes as stored (not elf_rawfile: libelf 0.188 reading a file
		 * with ELF_C_READ loses the sections it read before a later elf_rawfile) */
		if (k >= nscn || !(rd = elf_rawdata(scn, NULL)) || rd->d_size != sh.sh_size || !rd->d_buf)
			goto out;
		pick[k].src = rd->d_buf;
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
	if (cache_dir && image_key(elf, file_size, &key) == 0) {
		struct pfc_symcache_bytes b;
		int got = pfc_symcache_get(cache_dir, &pfc_symcache_dwarf, &key, &b);
		keyed = 1;
		*cache = got == -EINVAL ? PFC_DWIMG_CORRUPT : PFC_DWIMG_MISS;
		if (got == 1) {
			if ((mem = image_elf(b.p, b.len)) != NULL) {
				*cache = PFC_DWIMG_HIT;
				image_out->cached = b;
				goto out;
			}
			pfc_symcache_bytes_free(&b);
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
			const uint8_t *src = pick[i].src;
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
		pfc_symcache_put(cache_dir, &pfc_symcache_dwarf, &key, img, total);
	image_out->heap = img;
	img = NULL;
out:
	libdeflate_free_decompressor(dec);
	free(img);
	free(pick);
	return mem;
}
