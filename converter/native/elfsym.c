/*
 * elfsym.c - owns finding the files that hold a user-space DSO's symbols and reading
 * them with libelf the way perf 6.1 does (dso__load, symsrc__init, dso__load_sym,
 * dso__synthesize_plt_symbols): candidate order, build-id checks, the symbol filter, the
 * program-header adjustment to file offsets, demangling and PLT entries.  It also reads
 * GNU build-id notes.  The kernel, perf maps and jitdump are other modules' business.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>
#include <lzma.h>

#include "converter/native/buildid.h"
#include "converter/native/debuginfod.h"
#include "converter/native/symsrv.h"
#include "converter/native/elfread.h"
#include "converter/native/symcache.h"
#include "converter/native/symtab.h"
#include "converter/util/hex.h"

#define PFC_PATH_MAX 4096
#define BUILD_ID_MAX PFC_BUILDID_MAX
#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif
/* cap for a decompressed .gnu_debugdata image */
#define MINIDEBUG_MAX (256u * 1024 * 1024)

/* One opened candidate file (perf's struct symsrc). */
struct symsrc {
	int fd;
	Elf *elf;
	void *image;		/* malloc'd ELF image (MiniDebugInfo), else NULL */
	GElf_Ehdr ehdr;
	Elf_Scn *symtab;
	GElf_Shdr symshdr;
	Elf_Scn *dynsym;
	GElf_Shdr dynshdr;
	size_t dynsym_idx;
	bool opd;
	char path[PFC_PATH_MAX];
};

/* The candidate kinds, in perf 6.1's binary_type_symtab order for user DSOs. */
enum cand_type {
	CAND_DEBUGLINK,
	CAND_BUILD_ID_CACHE,
	CAND_BUILD_ID_CACHE_DEBUGINFO,
	CAND_FEDORA_DEBUGINFO,
	CAND_UBUNTU_DEBUGINFO,
	CAND_BUILDID_DEBUGINFO,
	CAND_SYSTEM_PATH,
	CAND_OPENEMBEDDED_DEBUGINFO,
	CAND_MIXEDUP_UBUNTU_DEBUGINFO,
	CAND_NR,
};

/* perf's elf_section_by_name: the first section of that name, with its header and index */
static Elf_Scn *section_by_name(Elf *elf, const char *name, GElf_Shdr *shdr, size_t *idx)
{
	size_t shstrndx, cnt = 1;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	if (!elf_rawdata(elf_getscn(elf, shstrndx), NULL))
		return NULL;	/* corrupt or truncated: perf gives up too */
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *s;

		if (!gelf_getshdr(scn, &sh))
			return NULL;
		s = elf_strptr(elf, shstrndx, sh.sh_name);
		if (s && strcmp(s, name) == 0) {
			if (shdr)
				*shdr = sh;
			if (idx)
				*idx = cnt;
			return scn;
		}
		cnt++;
	}
	return NULL;
}

/* perf's elf_read_build_id: the first GNU build-id note of .note.gnu.build-id, .notes
 * or .note.  The length is the 4-aligned descriptor size, at most 20 bytes are kept. */
static int elf_build_id(Elf *elf, uint8_t *out, int *len)
{
	static const char *const names[] = { ".note.gnu.build-id", ".notes", ".note" };
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	size_t i, n;

	if (elf_kind(elf) != ELF_K_ELF)
		return -EINVAL;
	for (i = 0; i < 3 && !scn; i++)
		scn = section_by_name(elf, names[i], NULL, NULL);
	if (!scn)
		return -ENOENT;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !(n = pfc_buildid_from_notes(data->d_buf, data->d_size, out, BUILD_ID_MAX)))
		return -ENOENT;
	*len = (int)n;
	return 0;
}

int pfc_elf_build_id(const char *file, uint8_t *out, int *len)
{
	int fd, err;
	Elf *elf;

	elf_version(EV_CURRENT);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, PFC_ELF_C_READ, NULL);
	if (!elf) {
		close(fd);
		return -EINVAL;
	}
	err = elf_build_id(elf, out, len);
	elf_end(elf);
	close(fd);
	return err;
}

bool pfc_build_id_equal(const uint8_t *want, int want_len, const uint8_t *have, int have_len)
{
	int i;

	if (want_len > have_len && want_len == BUILD_ID_MAX) {
		if (memcmp(want, have, have_len) != 0)
			return false;
		for (i = have_len; i < want_len; i++)
			if (want[i])
				return false;
		return true;
	}
	return want_len == have_len && memcmp(want, have, want_len) == 0;
}

static void symsrc_close(struct symsrc *ss)
{
	if (ss->elf)
		elf_end(ss->elf);
	if (ss->fd >= 0)
		close(ss->fd);
	free(ss->image);
	ss->elf = NULL;
	ss->fd = -1;
	ss->image = NULL;
}

/* After the ELF is open: the header and the sections perf looks at (symsrc__init). */
static int symsrc_scan(struct symsrc *ss)
{
	GElf_Shdr sh;
	size_t idx;

	if (elf_kind(ss->elf) != ELF_K_ELF || !gelf_getehdr(ss->elf, &ss->ehdr))
		return -EINVAL;
	if (ss->ehdr.e_ident[EI_DATA] != ELFDATA2LSB && ss->ehdr.e_ident[EI_DATA] != ELFDATA2MSB)
		return -EINVAL;
	ss->symtab = section_by_name(ss->elf, ".symtab", &ss->symshdr, NULL);
	if (ss->symtab && ss->symshdr.sh_type != SHT_SYMTAB)
		ss->symtab = NULL;
	ss->dynsym = section_by_name(ss->elf, ".dynsym", &ss->dynshdr, &ss->dynsym_idx);
	/* an --only-keep-debug file has a NOBITS .dynsym: it is no runtime image */
	if (ss->dynsym && ss->dynshdr.sh_type != SHT_DYNSYM)
		ss->dynsym = NULL;
	ss->opd = section_by_name(ss->elf, ".opd", &sh, &idx) && sh.sh_type == SHT_PROGBITS;
	return 0;
}

/*
 * Open one candidate.  With an expected build-id, a file without one or with another is
 * rejected (-EBADF marks the mismatch).
 */
static int symsrc_open(struct symsrc *ss, const char *path, const uint8_t *bid, int bid_len)
{
	int err;

	memset(ss, 0, sizeof(*ss));
	ss->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ss->fd < 0)
		return -errno;
	ss->elf = elf_begin(ss->fd, PFC_ELF_C_READ, NULL);
	if (!ss->elf) {
		symsrc_close(ss);
		return -EINVAL;
	}
	if (elf_kind(ss->elf) != ELF_K_ELF || !gelf_getehdr(ss->elf, &ss->ehdr)) {
		symsrc_close(ss);
		return -EINVAL;
	}
	if (bid_len > 0) {
		uint8_t have[BUILD_ID_MAX];
		int have_len = 0;

		if (elf_build_id(ss->elf, have, &have_len) != 0) {
			symsrc_close(ss);
			return -ENOENT;
		}
		if (!pfc_build_id_equal(bid, bid_len, have, have_len)) {
			symsrc_close(ss);
			return -EBADF;
		}
	}
	err = symsrc_scan(ss);
	if (err) {
		symsrc_close(ss);
		return err;
	}
	snprintf(ss->path, sizeof(ss->path), "%s", path);
	return 0;
}

/* perf's filename__read_debuglink: the string at the start of .gnu_debuglink */
static int read_debuglink(const char *file, char *out, size_t size)
{
	int fd, err = -ENOENT;
	Elf *elf;
	Elf_Scn *scn;
	Elf_Data *data;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, PFC_ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		scn = section_by_name(elf, ".gnu_debuglink", NULL, NULL);
		data = scn ? elf_getdata(scn, NULL) : NULL;
		if (data && data->d_buf && data->d_size > 0) {
			size_t n = strnlen(data->d_buf, data->d_size);

			if (n >= size)
				n = size - 1;
			memcpy(out, data->d_buf, n);
			out[n] = '\0';
			err = 0;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

/*
 * The file perf tries for one candidate kind (dso__read_binary_type_filename), asked of
 * files.c as a place and a path.  Returns 1 with *found filled, 0 when the kind does not
 * apply or there is no such file.  flags: PFC_FILES_VERIFIED when the build-id is known
 * (symsrc_open then checks every candidate against it).
 */
static int cand_find(enum cand_type type, const struct pfc_symopts *o, const char *path,
		     const uint8_t *bid, int bid_len, unsigned flags, struct pfc_found *found)
{
	char hex[2 * BUILD_ID_MAX + 1], tmp[PFC_PATH_MAX];
	const char *slash;
	struct pfc_files *f = o->files;
	int n;

	switch (type) {
	case CAND_DEBUGLINK: {
		/*
		 * The .gnu_debuglink name is looked for as given (relative to the current
		 * directory), next to the binary, in its .debug/ and in /usr/lib/debug
		 * followed by the binary's directory, which already carries the symfs
		 * prefix (a path of this machine, then).  The debuglink CRC is not checked.
		 */
		char dir[PFC_PATH_MAX], link[PFC_PATH_MAX];
		struct pfc_found bin;

		if (!pfc_files_find(f, PFC_FILES_ROOT, path, flags, &bin))
			return 0;
		if (read_debuglink(bin.path, link, sizeof(link)) != 0)
			return 0;
		pfc_files_note(f, PFC_FILES_ROOT, path, "ELF binary", -1, bid, bid_len);
		slash = strrchr(path, '/');
		n = slash ? (int)(slash - path) : 0;
		memcpy(dir, path, n);
		dir[n] = '\0';
		if (pfc_files_find(f, PFC_FILES_HOST, link, flags, found) ||
		    pfc_files_findf(f, PFC_FILES_ROOT, flags, found, "%s/%s", dir, link) ||
		    pfc_files_findf(f, PFC_FILES_ROOT, flags, found, "%s/.debug/%s", dir, link))
			return 1;
		/* the recording machine's path of the binary: the same question from a pack */
		slash = strrchr(bin.name, '/');
		n = slash ? (int)(slash - bin.name) : 0;
		return pfc_files_findf(f, PFC_FILES_HOST, flags, found, "/usr/lib/debug%.*s/%s", n, bin.name, link);
	}
	case CAND_BUILD_ID_CACHE:
	case CAND_BUILD_ID_CACHE_DEBUGINFO:
		/* not under symfs: the caller chooses the cache directory */
		if (bid_len <= 0 || !pfc_files_has(f, PFC_FILES_BUILDID))
			return 0;
		pfc_hex_format(hex, bid, (size_t)bid_len);
		/* an old-style cache has the file itself as the link name */
		return pfc_files_findf(f, PFC_FILES_BUILDID, flags, found, ".build-id/%.2s/%s", hex, hex + 2) ||
		       pfc_files_findf(f, PFC_FILES_BUILDID, flags, found, ".build-id/%.2s/%s/%s", hex, hex + 2,
				       type != CAND_BUILD_ID_CACHE ? "debug" :
				       !strcmp(path, "[vdso]") ? "vdso" : "elf");	/* perf's cache basenames */
	case CAND_FEDORA_DEBUGINFO:
		return pfc_files_findf(f, PFC_FILES_ROOT, flags, found, "/usr/lib/debug%s.debug", path);
	case CAND_UBUNTU_DEBUGINFO:
		return pfc_files_findf(f, PFC_FILES_ROOT, flags, found, "/usr/lib/debug%s", path);
	case CAND_BUILDID_DEBUGINFO:
		if (bid_len <= 0)
			return 0;
		pfc_hex_format(hex, bid, (size_t)bid_len);
		return pfc_files_findf(f, PFC_FILES_ROOT, flags, found, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	case CAND_SYSTEM_PATH:
		return pfc_files_find(f, PFC_FILES_ROOT, path, flags, found);
	case CAND_OPENEMBEDDED_DEBUGINFO:
		/* <dir>/.debug/<name> */
		slash = strrchr(path, '/');
		if (!slash)
			return 0;
		n = snprintf(tmp, sizeof(tmp), "%.*s.debug%s", (int)(slash - path + 1), path, slash);
		return n >= 0 && (size_t)n < sizeof(tmp) && pfc_files_find(f, PFC_FILES_ROOT, tmp, flags, found);
	case CAND_MIXEDUP_UBUNTU_DEBUGINFO:
		/* /usr/lib/x -> /usr/lib/debug/lib/x */
		if (strncmp(path, "/usr/lib/", 9) != 0)
			return 0;
		return pfc_files_findf(f, PFC_FILES_ROOT, flags, found, "/usr/lib/debug%s", path + 4);
	case CAND_NR:
		break;
	}
	return 0;
}

/* perf's elf_read_program_header: the first PT_LOAD whose extent covers vaddr */
static int load_segment(Elf *elf, uint64_t vaddr, GElf_Phdr *out)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n) != 0)
		return -1;
	for (i = 0; i < n; i++) {
		uint64_t sz;

		if (!gelf_getphdr(elf, (int)i, out))
			return -1;
		if (out->p_type != PT_LOAD)
			continue;
		sz = out->p_memsz > out->p_filesz ? out->p_memsz : out->p_filesz;
		if (!sz)
			continue;
		if (vaddr >= out->p_vaddr && vaddr - out->p_vaddr < sz)
			return 0;
	}
	return -1;
}

/* A NUL-terminated string at offset off of a string table, or NULL if out of bounds. */
static const char *strtab_at(const Elf_Data *d, uint64_t off)
{
	const char *s;

	if (!d || !d->d_buf || off >= d->d_size)
		return NULL;
	s = (const char *)d->d_buf + off;
	return memchr(s, '\0', d->d_size - off) ? s : NULL;
}

static bool sym_is_label(const GElf_Sym *s)
{
	int vis = GELF_ST_VISIBILITY(s->st_other);

	return GELF_ST_TYPE(s->st_info) == STT_NOTYPE && s->st_name != 0 &&
	       s->st_shndx != SHN_UNDEF && s->st_shndx != SHN_ABS &&
	       vis != STV_HIDDEN && vis != STV_INTERNAL;
}

/* perf's elf_sym__filter: functions (incl. IFUNC) and objects with a name, defined */
static bool sym_is_wanted(const GElf_Sym *s)
{
	int type = GELF_ST_TYPE(s->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_OBJECT) &&
	       s->st_name != 0 && s->st_shndx != SHN_UNDEF;
}

static int add_demangled(struct pfc_symtab *t, uint64_t start, uint64_t size, int bind,
			 const char *name, const char *suffix)
{
	char *d = pfc_demangle(name);
	const char *n = d ? d : name;
	int err;

	if (suffix) {
		/* perf formats "%s@plt" into 1024 bytes */
		char buf[1024];

		snprintf(buf, sizeof(buf), "%s%s", n, suffix);
		err = pfc_symtab_add(t, start, size, bind, buf, strlen(buf));
	} else {
		err = pfc_symtab_add(t, start, size, bind, n, strlen(n));
	}
	free(d);
	return err;
}

/*
 * perf's dso__load_sym for a user DSO.  Returns the number of symbols added, -1 when perf
 * would stop part way (symbols added so far stay, unfixed, as in perf) or -ENOMEM.
 */
static int load_symbols(struct pfc_symtab *t, struct symsrc *syms, struct symsrc *run,
			bool *use_dynsym)
{
	Elf_Scn *symscn = syms->symtab;
	GElf_Shdr symsh = syms->symshdr;
	Elf_Data *data, *strs, *secstrs_sym, *secstrs_run;
	size_t nsyms, idx, shstrndx;
	Elf_Scn *scn;
	int nr = 0, err;

	*use_dynsym = false;
	if (!symscn) {
		symscn = syms->dynsym;
		symsh = syms->dynshdr;
		*use_dynsym = true;
	}
	if (!symscn || symsh.sh_entsize == 0)
		return -1;
	data = elf_getdata(symscn, NULL);
	scn = elf_getscn(syms->elf, symsh.sh_link);
	strs = scn ? elf_getdata(scn, NULL) : NULL;
	if (!data || !strs)
		return -1;
	if (elf_getshdrstrndx(run->elf, &shstrndx) != 0 ||
	    !(scn = elf_getscn(run->elf, shstrndx)) || !(secstrs_run = elf_getdata(scn, NULL)))
		return -1;
	if (elf_getshdrstrndx(syms->elf, &shstrndx) != 0 ||
	    !(scn = elf_getscn(syms->elf, shstrndx)) || !(secstrs_sym = elf_getdata(scn, NULL)))
		return -1;
	nsyms = symsh.sh_size / symsh.sh_entsize;

	for (idx = 0; idx < nsyms; idx++) {
		GElf_Sym sym;
		GElf_Shdr sh;
		GElf_Phdr ph;
		const Elf_Data *secstrs = secstrs_sym;
		const char *name, *secname;
		bool label;

		if (!gelf_getsym(data, (int)idx, &sym))
			break;
		label = sym_is_label(&sym);
		if (!label && !sym_is_wanted(&sym))
			continue;
		name = strtab_at(strs, sym.st_name);
		if (!name)
			continue;	/* perf would read past the string table */
		if ((syms->ehdr.e_machine == EM_ARM || syms->ehdr.e_machine == EM_AARCH64) &&
		    name[0] == '$' && name[1] && strchr("adtx", name[1]) &&
		    (name[2] == '\0' || name[2] == '.'))
			continue;	/* ARM mapping symbols */
		/*
		 * Checked with perf 6.1 on patched binaries: an ABS symbol is skipped, while
		 * any other index without a section (COMMON, XINDEX, out of range) ends the
		 * loop, keeping the symbols added so far without fixups.
		 */
		if (sym.st_shndx == SHN_ABS)
			continue;
		scn = elf_getscn(syms->elf, sym.st_shndx);
		if (!scn || !gelf_getshdr(scn, &sh))
			return -1;
		if (!(sh.sh_flags & SHF_ALLOC))
			continue;
		/* a debug-only file has NOBITS sections: take the runtime file's header */
		if (sh.sh_type == SHT_NOBITS) {
			scn = elf_getscn(run->elf, sym.st_shndx);
			if (!scn || !gelf_getshdr(scn, &sh))
				return -1;
			secstrs = secstrs_run;
		}
		if (label) {
			/* labels only in sections whose name has "text" or "data" */
			secname = strtab_at(secstrs, sh.sh_name);
			if (!secname || (!strstr(secname, "text") && !strstr(secname, "data")))
				continue;
		}
		if (syms->ehdr.e_machine == EM_ARM && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
		    (sym.st_value & 1))
			sym.st_value--;	/* thumb bit */
		/*
		 * To the file-offset space through the runtime file's PT_LOAD.  When none covers
		 * the address perf falls back to the section (meant for JIT ELF files): checked
		 * with perf 6.1, a symbol in a gap between segments in .data moves by .data's
		 * sh_addr - sh_offset and is not dropped.
		 */
		if (load_segment(run->elf, sym.st_value, &ph) == 0)
			sym.st_value -= ph.p_vaddr - ph.p_offset;
		else
			sym.st_value -= sh.sh_addr - sh.sh_offset;
		err = add_demangled(t, sym.st_value, sym.st_size, GELF_ST_BIND(sym.st_info), name, NULL);
		if (err)
			return err;
		nr++;
	}
	return nr;
}

/*
 * perf 6.1's dso__synthesize_plt_symbols: one "name@plt" per .rela.plt/.rel.plt entry,
 * laid out from the .plt section's file offset after a header of one entry (x86).  This
 * is the version before perf learned about .plt.sec (6.3), so IBT binaries get what
 * perf 6.1 printed.
 */
static int synthesize_plt(struct pfc_symtab *t, struct symsrc *ss)
{
	GElf_Shdr relsh, pltsh;
	Elf_Scn *relscn, *scn;
	Elf_Data *reldata, *syms, *strs;
	uint64_t off, hdr, ent, nrel, i;
	GElf_Sym sym;
	int err;

	if (!ss->dynsym)
		return 0;
	relscn = section_by_name(ss->elf, ".rela.plt", &relsh, NULL);
	if (!relscn)
		relscn = section_by_name(ss->elf, ".rel.plt", &relsh, NULL);
	if (!relscn || relsh.sh_link != ss->dynsym_idx)
		return 0;
	if (!section_by_name(ss->elf, ".plt", &pltsh, NULL))
		return 0;
	reldata = elf_getdata(relscn, NULL);
	syms = elf_getdata(ss->dynsym, NULL);
	scn = elf_getscn(ss->elf, ss->dynshdr.sh_link);
	strs = scn ? elf_getdata(scn, NULL) : NULL;
	if (!reldata || !syms || !strs || strs->d_size == 0 || relsh.sh_entsize == 0)
		return 0;
	nrel = relsh.sh_size / relsh.sh_entsize;
	switch (ss->ehdr.e_machine) {
	case EM_ARM:
		hdr = 20, ent = 12;
		break;
	case EM_AARCH64:
		hdr = 32, ent = 16;
		break;
	case EM_SPARC:
		hdr = 48, ent = 12;
		break;
	case EM_SPARCV9:
		hdr = 128, ent = 32;
		break;
	default:
		hdr = ent = pltsh.sh_entsize;
		break;
	}
	off = pltsh.sh_offset + hdr;
	memset(&sym, 0, sizeof(sym));
	for (i = 0; i < nrel; i++) {
		uint64_t info;
		const char *name;

		if (relsh.sh_type == SHT_RELA) {
			GElf_Rela r;

			if (!gelf_getrela(reldata, (int)i, &r))
				break;
			info = r.r_info;
		} else if (relsh.sh_type == SHT_REL) {
			GElf_Rel r;

			if (!gelf_getrel(reldata, (int)i, &r))
				break;
			info = r.r_info;
		} else {
			break;
		}
		/* perf ignores a failed lookup and reuses the previous symbol */
		gelf_getsym(syms, (int)(ss->ehdr.e_ident[EI_CLASS] == ELFCLASS32 ?
					ELF32_R_SYM(info) : GELF_R_SYM(info)), &sym);
		name = strtab_at(strs, sym.st_name);
		err = add_demangled(t, off, ent, PFC_SYM_GLOBAL, name ? name : "", "@plt");
		if (err)
			return err;
		t->syms[t->nr - 1].flags |= PFC_SYM_PLT;
		off += ent;
	}
	return 0;
}

/* .gnu_debugdata: an xz-compressed ELF with a .symtab (Fedora's MiniDebugInfo). */
static int open_minidebuginfo(struct symsrc *out, struct symsrc *run)
{
	Elf_Scn *scn = section_by_name(run->elf, ".gnu_debugdata", NULL, NULL);
	Elf_Data *d = scn ? elf_rawdata(scn, NULL) : NULL;
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = 1 << 16;
	uint8_t *buf = NULL;
	lzma_ret r;

	if (!d || !d->d_buf || d->d_size == 0)
		return -ENOENT;
	if (lzma_stream_decoder(&strm, UINT64_MAX, 0) != LZMA_OK)
		return -ENOMEM;
	strm.next_in = d->d_buf;
	strm.avail_in = d->d_size;
	for (;;) {
		if (!buf || strm.avail_out == 0) {
			size_t used = buf ? cap : 0;
			uint8_t *p;

			if (buf)
				cap *= 2;
			if (cap > MINIDEBUG_MAX || !(p = realloc(buf, cap))) {
				free(buf);
				lzma_end(&strm);
				return -ENOMEM;
			}
			buf = p;
			strm.next_out = buf + used;
			strm.avail_out = cap - used;
		}
		r = lzma_code(&strm, LZMA_FINISH);
		if (r == LZMA_STREAM_END)
			break;
		if (r != LZMA_OK && r != LZMA_BUF_ERROR) {
			free(buf);
			lzma_end(&strm);
			return -EINVAL;
		}
		if (r == LZMA_BUF_ERROR && strm.avail_out != 0) {
			free(buf);	/* truncated input */
			lzma_end(&strm);
			return -EINVAL;
		}
	}
	memset(out, 0, sizeof(*out));
	out->fd = -1;
	out->image = buf;
	out->elf = elf_memory((char *)buf, cap - strm.avail_out);
	lzma_end(&strm);
	if (!out->elf || symsrc_scan(out) != 0 || !out->symtab) {
		symsrc_close(out);
		return -EINVAL;
	}
	snprintf(out->path, sizeof(out->path), "%s", run->path);
	return 0;
}

/*
 * The debug file of a build-id from the servers, into cur when it has a .symtab: 0 then.
 * The order: a pack's answer (it holds what the packing conversion fetched); what a symbol
 * server sent before (its cache: no request); debuginfod (its own cache, then its
 * servers); then the symbol servers.  debuginfod comes before the symbol servers because
 * DEBUGINFOD_URLS serves the distribution's libraries, the most of a process's stripped
 * files, while a symbol server (Microsoft's) serves the few of the .NET runtime: each
 * library the first one asks in vain costs a request, so the wider one goes first; and
 * naming a symbol server then changes nothing that debuginfod gave before.
 */
static int open_fetched(const struct pfc_symopts *o, const char *path, const uint8_t *bid, int bid_len,
			struct symsrc *cur, struct pfc_dso_load *info)
{
	char dpath[PFC_PATH_MAX], hex[2 * BUILD_ID_MAX + 1], drel[2 * BUILD_ID_MAX + 16], skey[128];
	enum pfc_files_base base = PFC_FILES_NR;
	int have_key = pfc_symsrv_key(bid, bid_len, skey, sizeof(skey)) == 0;
	struct pfc_found found;

	pfc_hex_format(hex, bid, (size_t)bid_len);
	snprintf(drel, sizeof(drel), "%s/debuginfo", hex);
	if (pfc_files_find(o->files, PFC_FILES_DEBUGINFOD, drel, PFC_FILES_VERIFIED, &found)) {
		base = PFC_FILES_DEBUGINFOD;
		snprintf(dpath, sizeof(dpath), "%s", found.path);
	} else if (have_key && pfc_files_find(o->files, PFC_FILES_SYMSRV, skey, PFC_FILES_VERIFIED, &found)) {
		base = PFC_FILES_SYMSRV;
		snprintf(dpath, sizeof(dpath), "%s", found.path);
	} else if (o->symsrv && have_key && pfc_symsrv_cached(o->symsrv, bid, bid_len, dpath, sizeof(dpath)) == 0) {
		base = PFC_FILES_SYMSRV;
		pfc_files_add(o->files, base, skey, dpath);
	} else if (o->debuginfod && pfc_debuginfod_find(o->debuginfod, bid, bid_len, path, dpath, sizeof(dpath)) == 0) {
		base = PFC_FILES_DEBUGINFOD;
		pfc_files_add(o->files, base, drel, dpath);
	} else if (o->symsrv && have_key && pfc_symsrv_fetch(o->symsrv, bid, bid_len, path, dpath, sizeof(dpath)) == 0) {
		base = PFC_FILES_SYMSRV;
		pfc_files_add(o->files, base, skey, dpath);
	}
	if (base == PFC_FILES_NR || symsrc_open(cur, dpath, bid, bid_len) != 0)
		return -1;
	if (!cur->symtab) {
		symsrc_close(cur);
		return -1;
	}
	if (base == PFC_FILES_DEBUGINFOD) {
		pfc_files_note(o->files, base, drel, "debug file from debuginfod", -1, bid, bid_len);
		info->from_debuginfod = 1;
	} else {
		pfc_files_note(o->files, base, skey, "debug file from a symbol server", -1, bid, bid_len);
		info->from_symsrv = 1;
	}
	return 0;
}

/* The build-id of this perfconv binary as hex, "" without one: a cached table was made by
 * the code that reads it, so a perfconv built otherwise (with another reading of symbols)
 * never takes another's entries.  Read once. */
static char own_hex[2 * BUILD_ID_MAX + 1];

static void own_build_id_read(void)
{
	uint8_t b[BUILD_ID_MAX];
	int n = 0;

	if (pfc_elf_build_id("/proc/self/exe", b, &n) != 0)
		return;
	pfc_hex_format(own_hex, b, (size_t)n);
}

const char *pfc_own_build_id(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, own_build_id_read);
	return own_hex;
}

/* hex holds 2 * BUILD_ID_MAX + 1 bytes */
static int hex_build_id(const struct symsrc *ss, char *hex, uint64_t *bytes)
{
	uint8_t b[BUILD_ID_MAX];
	struct stat st;
	int n = 0;

	if (ss->image || ss->fd < 0 || fstat(ss->fd, &st) < 0 || elf_build_id(ss->elf, b, &n) != 0 || n < 8)
		return -ENOENT;
	pfc_hex_format(hex, b, (size_t)n);
	*bytes = (uint64_t)st.st_size;
	return 0;
}

/*
 * The symbol cache's key of the table that syms and run give: only files whose GNU build-id
 * (8 bytes at least) says what they are, with their sizes (a binary stripped in place keeps
 * its build-id), and the perfconv that reads them.  A table from MiniDebugInfo, or from a
 * file without a build-id, is not cached: nothing proves that a file at the same path next
 * time holds the same symbols.  0, or -ENOENT.
 */
static int cache_key(const struct symsrc *syms, const struct symsrc *run, struct pfc_symcache_key *k)
{
	char sb[2 * BUILD_ID_MAX + 1], rb[2 * BUILD_ID_MAX + 1], text[PFC_SYMCACHE_KEY_MAX];
	const char *exe = pfc_own_build_id();
	uint64_t ssize, rsize;
	int n;

	if (hex_build_id(syms, sb, &ssize) < 0 || hex_build_id(run, rb, &rsize) < 0)
		return -ENOENT;
	if (!*exe)
		return -ENOENT;
	n = snprintf(text, sizeof(text), "elf exe=%s syms=%s:%llu run=%s:%llu", exe, sb, (unsigned long long)ssize, rb,
		     (unsigned long long)rsize);
	if (n < 0 || (size_t)n >= sizeof(text))
		return -ENAMETOOLONG;
	return pfc_symcache_key_text(k, text);
}

int pfc_elf_load(const struct pfc_symopts *o, const char *path, const uint8_t *build_id,
		 int build_id_len, struct pfc_symtab *t, struct pfc_dso_load *info)
{
	static const struct pfc_symopts defaults;
	struct symsrc ss[3];
	struct symsrc *syms = NULL, *run = NULL;
	uint8_t bid[BUILD_ID_MAX];
	int bid_len = 0, nss = 0, i, nr, err = 0;
	struct pfc_found found;
	struct pfc_symcache_key key;
	bool use_dynsym = false;

	if (!o)
		o = &defaults;
	memset(info, 0, sizeof(*info));
	if (!path || !*path)
		return 0;
	elf_version(EV_CURRENT);

	if (build_id_len > 0) {
		bid_len = build_id_len > BUILD_ID_MAX ? BUILD_ID_MAX : build_id_len;
		memcpy(bid, build_id, bid_len);
	} else if ((pfc_files_find(o->files, PFC_FILES_HOST, path, PFC_FILES_PROBE, &found) || o->buildid_from_symfs) &&
		   pfc_files_find(o->files, PFC_FILES_ROOT, path, 0, &found)) {
		/*
		 * perf reads the build-id when the recorded path is a regular file on this
		 * host (it tests the path without symfs) and then reads the symfs file.  A
		 * build-id found this way only adds the build-id candidates.  The host is
		 * asked in both modes, so that a pack made without --perf-compat holds the
		 * answer perf's rules need.
		 */
		if (pfc_elf_build_id(found.path, bid, &bid_len) != 0)
			bid_len = 0;
		if (bid_len > 0) {
			memcpy(info->build_id, bid, bid_len);
			info->build_id_len = bid_len;
		}
	}

	/* The first file with a .symtab gives the symbols, the first with a .dynsym is
	 * the runtime image (program headers, PLT); perf stops when it has both. */
	if (o->image && symsrc_open(&ss[0], o->image, NULL, 0) == 0) {
		nss = 1;
		if (ss[0].symtab)
			syms = &ss[0];
		if (ss[0].dynsym || ss[0].opd)
			run = &ss[0];
		if (!syms && !run)
			goto out;
	}
	for (i = 0; !o->image && i < CAND_NR && !(syms && run); i++) {
		struct symsrc *cur = &ss[nss];
		bool keep = false;

		if (!cand_find((enum cand_type)i, o, path, bid, bid_len, bid_len > 0 ? PFC_FILES_VERIFIED : 0, &found))
			continue;
		/* a known build-id (given, or read from the file at the path) is enforced */
		err = symsrc_open(cur, found.path, bid, bid_len);
		if (err == -EBADF && i == CAND_SYSTEM_PATH)
			info->buildid_mismatch = 1;
		if (err)
			continue;
		if (!syms && cur->symtab) {
			syms = cur;
			keep = true;
		}
		if (!run && (cur->dynsym || cur->opd)) {
			run = cur;
			keep = true;
		}
		if (keep) {
			nss++;
			pfc_files_note(o->files, found.base, found.rel, cur == syms ? "ELF symbols" : "ELF runtime image",
				       -1, bid, bid_len);
		} else {
			symsrc_close(cur);
		}
	}
	err = 0;
	/* no file here has the symbols: a server may have the debug file by build-id (which
	 * keeps the program headers, so it can stand for the binary too) */
	if (!syms && !o->image && bid_len > 0 && (o->debuginfod || o->symsrv || pfc_files_from_pack(o->files)) &&
	    open_fetched(o, path, bid, bid_len, &ss[nss], info) == 0) {
		syms = &ss[nss];
		nss++;
	}
	if (!syms && !run)
		goto out;
	if (!syms)
		syms = run;
	if (!run)
		run = syms;

	if (!syms->symtab && o->minidebuginfo && open_minidebuginfo(&ss[nss], run) == 0) {
		syms = &ss[nss++];
		info->from_minidebuginfo = 1;
	}

	/* the table these files give was read before: take it from the cache */
	if (o->cache_dir && cache_key(syms, run, &key) == 0) {
		int got = pfc_symcache_load_kind(o->cache_dir, &pfc_symcache_elf, &key, t);

		info->cache = got == 1 ? PFC_SYMCACHE_HIT : got == -EINVAL ? PFC_SYMCACHE_CORRUPT : PFC_SYMCACHE_MISS;
		if (got == 1) {
			info->found = 1;
			info->from_dynsym = !syms->symtab;	/* as load_symbols decides */
			snprintf(info->used_path, sizeof(info->used_path), "%s", syms->path);
			snprintf(info->runtime_path, sizeof(info->runtime_path), "%s", run->path);
			if (elf_build_id(run->elf, info->build_id, &info->build_id_len) != 0)
				info->build_id_len = 0;
			goto out;
		}
	}

	nr = load_symbols(t, syms, run, &use_dynsym);
	if (nr == -ENOMEM) {
		err = nr;
		goto out;
	}
	info->found = 1;
	info->from_dynsym = use_dynsym;
	snprintf(info->used_path, sizeof(info->used_path), "%s", syms->path);
	snprintf(info->runtime_path, sizeof(info->runtime_path), "%s", run->path);
	if (elf_build_id(run->elf, info->build_id, &info->build_id_len) != 0)
		info->build_id_len = 0;
	if (nr > 0) {
		err = pfc_symtab_fixup(t, PFC_SYMTAB_ELF);
		/* PLT entries come after the fixups, as in perf: never merged or resized */
		if (!err)
			err = synthesize_plt(t, run);
	}
	/* when perf stopped part way, what it inserted stays without fixups */
	if (!err)
		err = pfc_symtab_finish(t);
	/* an empty table too: a stripped binary without .dynsym symbols is looked at once */
	if (!err && info->cache != PFC_SYMCACHE_OFF)
		pfc_symcache_store_kind(o->cache_dir, &pfc_symcache_elf, &key, t);	/* unwritable: no cache */
out:
	for (i = 0; i < nss; i++)
		symsrc_close(&ss[i]);
	(void)o->verbose;
	return err;
}

/* Sections a symbol source reads although they are loaded: CFI, function descriptors
 * (.opd, ppc64), the program interpreter's name, the PLT's relocations (synthesize_plt). */
static bool section_is_read(const char *name)
{
	static const char *const keep[] = { ".eh_frame", ".eh_frame_hdr", ".opd", ".interp", ".rela.plt", ".rel.plt" };
	size_t i;

	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (!strcmp(name, keep[i]))
			return true;
	return false;
}

/* DWARF sections no lookup reads: variable locations and macros (the same as dwimage.c's). */
static bool dwarf_unread(const char *name)
{
	return !strcmp(name, ".debug_loc") || !strcmp(name, ".debug_loclists") || !strcmp(name, ".debug_macro") ||
	       !strcmp(name, ".debug_macinfo");
}

int pfc_elf_unread_ranges(const char *file, uint64_t **ranges, size_t *n)
{
	int fd;
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t shstrndx, cap = 0;
	uint64_t *v = NULL;
	struct stat st;
	int err = 0;

	*ranges = NULL;
	*n = 0;
	elf_version(EV_CURRENT);
	if ((fd = open(file, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !(elf = elf_begin(fd, PFC_ELF_C_READ, NULL))) {
		close(fd);
		return 0;
	}
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0)
		goto out;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name))) {
			err = 0;	/* a section table perf cannot read: keep the whole file */
			free(v);
			v = NULL;
			*n = 0;
			goto out;
		}
		/* loaded code and data, and the dynamic relocations but the PLT's: no source reads
		 * them (libdw relocates only ET_REL files); DWARF's variable locations and macros:
		 * no lookup reads them (dwimage.c leaves them out of its image too) */
		if (!(((sh.sh_type == SHT_PROGBITS || sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL ||
			sh.sh_type == SHT_RELR) && (sh.sh_flags & SHF_ALLOC)) ||
		      (sh.sh_type == SHT_PROGBITS && !(sh.sh_flags & SHF_ALLOC) && dwarf_unread(name))) ||
		    !sh.sh_size || sh.sh_offset > (uint64_t)st.st_size || sh.sh_size > (uint64_t)st.st_size - sh.sh_offset ||
		    section_is_read(name))
			continue;
		/* never the headers, whatever a section says */
		if (sh.sh_offset < eh.e_ehsize ||
		    (eh.e_phnum && sh.sh_offset < eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize &&
		     eh.e_phoff < sh.sh_offset + sh.sh_size) ||
		    (eh.e_shnum && sh.sh_offset < eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize &&
		     eh.e_shoff < sh.sh_offset + sh.sh_size))
			continue;
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			uint64_t *nv = realloc(v, nc * 2 * sizeof(*nv));
			if (!nv) {
				err = -ENOMEM;
				goto out;
			}
			v = nv;
			cap = nc;
		}
		v[2 * *n] = sh.sh_offset;
		v[2 * *n + 1] = sh.sh_size;
		(*n)++;
	}
out:
	elf_end(elf);
	close(fd);
	if (err < 0) {
		free(v);
		*n = 0;
		return err;
	}
	*ranges = v;
	return 0;
}
