/*
 * srcline.c - owns the source positions of addresses of one ELF file: the line table row
 * at the address (libdw's dwarf_getsrc_die, the row addr2line prints) and, walking the
 * inlined instances that contain it out to the function, the call site
 * (DW_AT_call_file/line) of each, as `addr2line -i` lists them.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include "converter/native/dwimage.h"
#include "converter/native/dwpath.h"
#include "converter/native/elfread.h"
#include "converter/native/srcline.h"

struct pfc_srcline {
	int fd;
	Elf *elf;
	Elf *dwelf;		/* the inflated image libdw reads (dwimage.h), or NULL */
	struct pfc_dwimg img;
	enum pfc_dwimg_cache cache;
	Dwarf *dw;
	struct pfc_dwpath_cache *dwc;	/* the outer levels of dw's CUs looked in */
	uint64_t text_offset;	/* ET_EXEC: .text's address - its file offset */
};

struct pfc_srcline *pfc_srcline_open(const char *path, const char *cache_dir)
{
	struct pfc_srcline *sl = calloc(1, sizeof(*sl));
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	size_t shstrndx;

	if (!sl)
		return NULL;
	sl->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (sl->fd < 0) {
		free(sl);
		return NULL;
	}
	elf_version(EV_CURRENT);
	sl->elf = elf_begin(sl->fd, PFC_ELF_C_READ, NULL);
	if (!sl->elf || elf_kind(sl->elf) != ELF_K_ELF || !gelf_getehdr(sl->elf, &eh) ||
	    elf_getshdrstrndx(sl->elf, &shstrndx) != 0)
		goto fail;
	/* frames hold file offsets; an ET_EXEC file's DWARF speaks addresses (as a2l.c) */
	while (eh.e_type == ET_EXEC && (scn = elf_nextscn(sl->elf, scn)) != NULL) {
		const char *name;
		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(sl->elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".text")) {
			sl->text_offset = sh.sh_addr - sh.sh_offset;
			break;
		}
	}
	sl->dwelf = pfc_dwimg_open(sl->elf, pfc_dwimg_fd_size(sl->fd), cache_dir, &sl->img, &sl->cache);
	if (!pfc_dw_strings_ok(sl->dwelf ? sl->dwelf : sl->elf))
		goto fail;
	sl->dw = dwarf_begin_elf(sl->dwelf ? sl->dwelf : sl->elf, DWARF_C_READ, NULL);
	if (!sl->dw)
		goto fail;
	return sl;
fail:
	pfc_srcline_close(sl);
	return NULL;
}

void pfc_srcline_close(struct pfc_srcline *sl)
{
	if (!sl)
		return;
	pfc_dwpath_cache_free(sl->dwc);
	if (sl->dw)
		dwarf_end(sl->dw);
	if (sl->dwelf)
		elf_end(sl->dwelf);
	pfc_dwimg_free(&sl->img);
	if (sl->elf)
		elf_end(sl->elf);
	if (sl->fd >= 0)
		close(sl->fd);
	free(sl);
}

enum pfc_dwimg_cache pfc_srcline_cache_state(const struct pfc_srcline *sl)
{
	return sl ? sl->cache : PFC_DWIMG_OFF;
}

static int attr_udata(Dwarf_Die *die, unsigned name, Dwarf_Word *v)
{
	Dwarf_Attribute at;

	*v = 0;
	return dwarf_attr(die, name, &at) && dwarf_formudata(&at, v) == 0 ? 0 : -1;
}

int pfc_srcline_lookup(struct pfc_srcline *sl, uint64_t addr, struct pfc_srcline_ent *out, int max)
{
	Dwarf_Addr pc = addr + sl->text_offset;
	Dwarf_Die cudie, path[PFC_DWPATH_MAX];
	Dwarf_Files *files = NULL;
	Dwarf_Line *ln;
	size_t nfiles = 0;
	int n = 0, np, i, lineno = 0;

	if (max <= 0 || !dwarf_addrdie(sl->dw, pc, &cudie) || !(ln = dwarf_getsrc_die(&cudie, pc)))
		return 0;
	out[0].file = dwarf_linesrc(ln, NULL, NULL);
	out[0].line = dwarf_lineno(ln, &lineno) == 0 ? lineno : 0;
	n = 1;
	/* innermost first: each inlined instance was called from a position in the one around it */
	if (!sl->dwc)
		sl->dwc = pfc_dwpath_cache_new();	/* NULL: the walk without it */
	np = pfc_dwpath_find_cached(sl->dwc, &cudie, pc, path);
	if (np > 1 && dwarf_getsrcfiles(&cudie, &files, &nfiles) != 0)
		files = NULL;
	for (i = np - 1; i >= 1 && n < max; i--) {
		Dwarf_Word file, line;
		if (dwarf_tag(&path[i]) != DW_TAG_inlined_subroutine)
			continue;
		attr_udata(&path[i], DW_AT_call_file, &file);
		attr_udata(&path[i], DW_AT_call_line, &line);
		out[n].file = files && file < nfiles ? dwarf_filesrc(files, file, NULL, NULL) : NULL;
		out[n].line = line <= 0x7fffffff ? (int)line : 0;
		n++;
	}
	return n;
}
