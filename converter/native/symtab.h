/*
 * symtab.h - symbol tables and the symbol sources that fill them: ELF files of user-space
 * DSOs (elfsym.c), kallsyms files (kallsyms.c) and name demangling (demangle.c).
 * A table is built by appending symbols, finished once with perf 6.1's end and duplicate
 * fixups, and is read-only afterwards.  Maps, DSO identity and build-id bookkeeping of the
 * perf.data file live elsewhere; this module only turns files into address -> name.
 */
#ifndef PFC_SYMTAB_H
#define PFC_SYMTAB_H

#include "converter/files/files.h"
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

/* pfc_sym.binding: the ELF STB_* values, so that ELF symbols need no translation. */
enum pfc_sym_binding {
	PFC_SYM_LOCAL = 0,
	PFC_SYM_GLOBAL = 1,
	PFC_SYM_WEAK = 2,
};

/* pfc_sym.flags */
#define PFC_SYM_PLT	0x01	/* synthesized "name@plt" entry */

struct pfc_sym {
	uint64_t start, end;	/* [start, end); end == start only matches start itself */
	const char *name;
	const char *module;	/* kallsyms: "[module]" of a module symbol, else NULL */
	uint8_t binding;	/* enum pfc_sym_binding */
	uint8_t flags;
};

struct pfc_symtab_chunk;
struct pfc_symtab_node;

struct pfc_symtab {
	struct pfc_sym *syms;	/* after pfc_symtab_finish: in address order */
	size_t nr;
	size_t alloc;
	struct pfc_symtab_chunk *chunks;	/* string storage owned by the table */
	size_t chunk_size;	/* of the next standard chunk: grows with the table */
	struct pfc_symtab_node *nodes;	/* perf's rb-tree over syms, one node per symbol */
	int32_t root, root_mod;	/* tree roots: symbols, kallsyms module symbols */
	int32_t last[2];	/* each tree's rightmost node, where last_ok[tree] */
	uint8_t last_ok[2];
	/* A table read in place from an image (pfc_symtab_view_image): the image's records and
	 * names, searched where they are; syms[i] is filled when a lookup first finds symbol i,
	 * so a conversion that looks up a few hundred kernel addresses touches a few pages of a
	 * table of 100,000 symbols.  Such a table takes no more symbols. */
	const void *img;	/* its records, or NULL */
	uint64_t *img_filled;	/* a bit a symbol: syms[i] filled (it is written before it is
				 * read, so that its page is backed by one fault, not the zero
				 * page and then a copy) */
	const char *img_strs;	/* its names */
	size_t img_strsize;	/* bytes of names, the last one a NUL */
	void *img_map;		/* munmap'd with the table */
	size_t img_map_len;
};

/* Which end fixup pfc_symtab_fixup applies (perf's symbols__fixup_end is_kallsyms). */
enum pfc_symtab_flavour {
	PFC_SYMTAB_ELF = 0,
	PFC_SYMTAB_KALLSYMS = 1,
};

/*
 * Building a table: add symbols in the order perf inserts them, call pfc_symtab_fixup
 * once, maybe add more (PLT entries, which perf adds after its fixups), then
 * pfc_symtab_finish.  Lookups work at every step and give perf's answer even for
 * overlapping symbols, because the table keeps perf's tree.
 */
/* Append a symbol; end = size ? start + size : start.  The name is copied. */
int pfc_symtab_add(struct pfc_symtab *t, uint64_t start, uint64_t size, int binding,
		   const char *name, size_t namelen);
/* Copy a string into the table's storage. */
char *pfc_symtab_strdup(struct pfc_symtab *t, const char *s, size_t len);
/* perf's symbols__fixup_end then symbols__fixup_duplicate; for kallsyms also moves
 * module symbols ("name\t[mod]") aside and sets their module field. */
int pfc_symtab_fixup(struct pfc_symtab *t, enum pfc_symtab_flavour flavour);
/* Move every symbol down by delta (modulo 2^64), in place: perf's kallsyms relocation
 * (dso__split_kallsyms), which shifts the symbols and keeps its tree as it was built. */
void pfc_symtab_shift(struct pfc_symtab *t, uint64_t delta);
/* Drop duplicates and sort syms by address (lookups unchanged). */
int pfc_symtab_finish(struct pfc_symtab *t);
/* The symbol perf's lookup finds for addr, NULL if none. */
const struct pfc_sym *pfc_symtab_find(const struct pfc_symtab *t, uint64_t addr);
void pfc_symtab_free(struct pfc_symtab *t);
/* For tests: 0 when the tree is a valid red-black search tree, else -EINVAL. */
int pfc_symtab_check(const struct pfc_symtab *t);
/* A finished table as bytes (*out: free it), and back: the symbols, their names and the
 * trees as they were, so lookups give the same answers.  pfc_symtab_from_image reads
 * untrusted bytes: it checks every offset and link and that the trees are trees (a walk
 * ends), and returns -EINVAL otherwise.  The bytes are in this machine's order. */
int pfc_symtab_image(const struct pfc_symtab *t, uint8_t **out, size_t *len);
int pfc_symtab_from_image(struct pfc_symtab *t, const uint8_t *p, size_t len);
/* The same in place: the table reads p (8-byte aligned) as long as it lives, and unmaps
 * map (of map_len bytes, holding p; NULL: nothing) when freed, also on failure.  Only the
 * head and the blocks' sizes are checked here; each lookup checks the links it follows and
 * the record it finds, so that a damaged image gives no symbol rather than a wrong read. */
int pfc_symtab_view_image(struct pfc_symtab *t, const uint8_t *p, size_t len, void *map, size_t map_len);
/* The range of the symbols outside modules: the first one's start and the last one's end in
 * address order; 0 when there is none. */
int pfc_symtab_core_range(const struct pfc_symtab *t, uint64_t *start, uint64_t *end);

struct pfc_debuginfod;
struct pfc_symsrv;

struct pfc_symopts {
	/* where every binary and debug file is asked for: --symfs, perf's build-id cache
	 * ($HOME/.debug in perf 6.1, but with --symfs DIR it uses DIR/.debug instead: checked,
	 * a file at DIR/.debug/.build-id/xx/rest/elf resolves, one under $HOME/.debug does
	 * not), a pack */
	struct pfc_files *files;
	/* read this file alone, as it is, for both the symbols and the runtime image (the
	 * stand-in image of a [vdso]); NULL: find the files of path as usual */
	const char *image;
	int verbose;
	/* Also read .gnu_debugdata (MiniDebugInfo) when no file has a .symtab.  perf 6.1 does
	 * NOT do this (verified: it shows [unknown]), so it stays off for identical output. */
	int minidebuginfo;
	/* perf reads the build-id of a DSO whose build-id the perf.data file does not give
	 * only when the recorded path exists on the host WITHOUT the symfs prefix (it tests
	 * the bare path, then reads the file under symfs).  Nonzero: test under symfs too. */
	int buildid_from_symfs;
	/* debuginfod servers to ask for the debug file when no file on disk has a .symtab;
	 * NULL: never */
	struct pfc_debuginfod *debuginfod;
	/* symbol servers to ask after debuginfod (elfsym.c says why in that order); NULL: never */
	struct pfc_symsrv *symsrv;
	/* the symbol cache's directory (symcache.c, kind "elf"): a table whose files' build-ids
	 * prove what they are is read from there, or written there once read; NULL: never */
	const char *cache_dir;
};

/* pfc_dso_load.cache */
enum pfc_symcache {
	PFC_SYMCACHE_OFF = 0,	/* not asked: no cache, or the files' identity not proven */
	PFC_SYMCACHE_HIT,
	PFC_SYMCACHE_MISS,	/* read from the files, and written to the cache */
	PFC_SYMCACHE_CORRUPT,	/* an entry there was corrupt: removed, read and written again */
};

/* What was found, for the summary and warnings. */
struct pfc_dso_load {
	int found;		/* a symbol source was found */
	int buildid_mismatch;	/* the file at the path has another build-id: frame stays unresolved, caller warns */
	char used_path[4096];	/* the file the symbols came from */
	uint8_t build_id[20];	/* of the runtime file, if read */
	int build_id_len;
	char runtime_path[4096];	/* the file used for program headers and PLT */
	int from_dynsym;	/* symbols came from .dynsym (no .symtab anywhere) */
	int from_minidebuginfo;	/* symbols came from .gnu_debugdata */
	int from_debuginfod;	/* symbols came from a debug file a debuginfod server sent */
	int from_symsrv;	/* symbols came from a debug file a symbol server sent */
	int cache;		/* enum pfc_symcache */
};

/*
 * Load symbols of the user DSO recorded at `path` (the path as in the MMAP record) with
 * optional expected build-id (from the BUILD_ID feature or an MMAP2 inline build-id;
 * len 0 = unknown).  Symbol addresses are in perf's "map_ip" space: the FILE OFFSET
 * space, i.e. what `ip - map_start + map_pgoff` gives for a sample ip.  Returns 0 (even
 * when nothing was found: then t->nr == 0) or a negative errno-style code for hard
 * errors like -ENOMEM.  The table is sorted and ready for pfc_symtab_find.
 */
int pfc_elf_load(const struct pfc_symopts *o, const char *path, const uint8_t *build_id,
		 int build_id_len, struct pfc_symtab *t, struct pfc_dso_load *info);
/* Read the GNU build-id note of an ELF file.  out must hold 20 bytes.  Returns 0 or a
 * negative error (-ENOENT: no note). */
int pfc_elf_build_id(const char *file, uint8_t *out, int *len);
/* This perfconv's own build-id as hex, "" without one: part of every symbol cache key, so
 * that entries are read only by the code that wrote them. */
const char *pfc_own_build_id(void);
/* perf's dso__build_id_equal: the id WANT (from a recording) names the file whose id is HAVE;
 * a 20-byte WANT may be a shorter id padded with zeros (simpleperf pads them so). */
bool pfc_build_id_equal(const uint8_t *want, int want_len, const uint8_t *have, int have_len);

/* The byte ranges of an ELF executable or shared object that no symbol source reads: the
 * contents of its loaded code and data sections (.text, .rodata, .data, ...).  Symbols,
 * program and section headers, notes, CFI (.eh_frame), debug sections and the dynamic
 * tables stay.  A pack stores these ranges as zeros.  *ranges (free it) holds n pairs
 * (offset, size), sorted; 0 with n = 0 for a file that is not such an ELF file. */
int pfc_elf_unread_ranges(const char *file, uint64_t **ranges, size_t *n);

/* Load a kallsyms file (absolute kernel addresses).  Returns 0 or negative error. */
int pfc_kallsyms_load(const char *file, struct pfc_symtab *t);
/* The address of the first function symbol (type T, t, W, w or A) called name in a kallsyms
 * file, as perf's kallsyms__get_function_start finds it: 0, or -ENOENT or a read error. */
int pfc_kallsyms_func_start(const char *file, const char *name, uint64_t *addr);

/* malloc'd demangled name or NULL when not mangled (C++, Rust, OCaml, Java as perf 6.1). */
char *pfc_demangle(const char *name);

#endif
