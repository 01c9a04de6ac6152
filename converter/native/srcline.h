/*
 * srcline.h - source file and line of an address of one ELF file, from its DWARF line
 * table and inline scopes (what `addr2line -i` prints after each function name): the
 * innermost position first, then each inlined call site out to the enclosing function.
 * For the pprof writer's Function.filename and Line.line; it names no functions.
 */
#ifndef PFC_SRCLINE_H
#define PFC_SRCLINE_H

#include <stdint.h>

#include "converter/native/dwimage.h"

struct pfc_srcline;

struct pfc_srcline_ent {
	const char *file;           /* as the DWARF names it (with its directory); valid until close */
	int line;                   /* 0: not known */
};

/* NULL when the file cannot be read as ELF or has no DWARF.  With cache_dir, compressed
 * DWARF is read from the symbol cache's inflated image (dwimage.h), or inflated and kept. */
struct pfc_srcline *pfc_srcline_open(const char *path, const char *cache_dir);
/* What the symbol cache gave its DWARF. */
enum pfc_dwimg_cache pfc_srcline_cache_state(const struct pfc_srcline *sl);
void pfc_srcline_close(struct pfc_srcline *sl);
/* The positions at ADDR, a DSO address as the frames hold it (perf's map_ip: the file
 * offset, which for ET_EXEC files is turned into the address as for addr2line): innermost
 * first, at most max.  Returns how many (0: the line table has no row there). */
int pfc_srcline_lookup(struct pfc_srcline *sl, uint64_t addr, struct pfc_srcline_ent *out, int max);

#endif
