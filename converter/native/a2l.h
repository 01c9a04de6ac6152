/*
 * a2l.h - the function names GNU addr2line (`addr2line -i -f`, binutils 2.40) gives for an
 * address of one ELF file: the inline chain from its DWARF, or the symbol its symbol table
 * search picks.  perf 6.1 asks addr2line this for every frame it unwinds with DWARF and
 * names the frame "(inlined)" when the answer is not its own symbol; this module gives the
 * same answers in-process, from the file only (no debug directories of the host).
 */
#ifndef PFC_A2L_H
#define PFC_A2L_H

#include <stdint.h>

struct pfc_a2l;

/* NULL when the file cannot be read as ELF (addr2line then answers nothing). */
struct pfc_a2l *pfc_a2l_open(const char *path);
void pfc_a2l_close(struct pfc_a2l *a);
/* The names at ADDR (an ELF virtual address), innermost first, as addr2line prints them
 * ("??" for a record without a name); at most max.  Returns how many: 0 when addr2line
 * prints "??:0" (no record perf keeps).  Names stay valid until pfc_a2l_close. */
int pfc_a2l_lookup(struct pfc_a2l *a, uint64_t addr, const char **names, int max);
/* ET_EXEC files: perf's symbols are file offsets, addr2line wants addresses: add this. */
uint64_t pfc_a2l_text_offset(const struct pfc_a2l *a);

#endif
