/*
 * a2l.h - the function names GNU addr2line (`addr2line -i -f`, binutils 2.40) gives for an
 * address of one ELF file: the inline chain from its DWARF, or the symbol its symbol table
 * search picks.  perf 6.1 asks addr2line this for every frame it unwinds with DWARF and
 * names the frame "(inlined)" when the answer is not its own symbol; this module gives the
 * same answers in-process.  Like addr2line, a file without DWARF may take the DWARF of
 * its separate debug file (pfc_a2l_separate; the caller finds it, by build-id, in the
 * directory addr2line reads: this machine's /usr/lib/debug).
 */
#ifndef PFC_A2L_H
#define PFC_A2L_H

#include <stdint.h>

#include "converter/native/dwimage.h"

struct pfc_a2l;

/* NULL when the file cannot be read as ELF (addr2line then answers nothing).  With
 * cache_dir, a file whose DWARF is compressed (a distribution's debug file) is inflated
 * once: the image is kept in the symbol cache under the file's build-id and read from
 * there by the next conversion. */
struct pfc_a2l *pfc_a2l_open(const char *path, const char *cache_dir);
void pfc_a2l_close(struct pfc_a2l *a);
/* The names at ADDR (an ELF virtual address), innermost first, as addr2line prints them
 * ("??" for a record without a name); at most max.  Returns how many: 0 when addr2line
 * prints "??:0" (no record perf keeps).  Names stay valid until pfc_a2l_close. */
int pfc_a2l_lookup(struct pfc_a2l *a, uint64_t addr, const char **names, int max);
/* What the symbol cache gave the DWARF that answers (dwimage.h). */
enum pfc_dwimg_cache pfc_a2l_cache_state(const struct pfc_a2l *a);
/* The file has DWARF (.debug_info) of its own, or has taken a separate file's. */
int pfc_a2l_has_dwarf(const struct pfc_a2l *a);
/* Answer from the DWARF of PATH, a separate debug file of the same build-id, when the
 * file has none and PATH has .debug_info.  0 when taken, -1 otherwise (nothing changes). */
int pfc_a2l_separate(struct pfc_a2l *a, const char *path);
/* ET_EXEC files: perf's symbols are file offsets, addr2line wants addresses: add this. */
uint64_t pfc_a2l_text_offset(const struct pfc_a2l *a);

#endif
