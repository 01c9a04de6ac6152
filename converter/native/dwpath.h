/*
 * dwpath.h - the chain of functions whose code holds an address in one DWARF compilation

 * as BFD's addr2line picks them.  a2l.c names the chain, srcline.c places it in the sources.
 */
#ifndef PFC_DWPATH_H
#define PFC_DWPATH_H

#include <stdint.h>
#include <elfutils/libdw.h>
#include <libelf.h>

/* The most functions in one chain (deeper inlining is cut there). */
#define PFC_DWPATH_MAX 64

/* Fills path[0..n) outermost first from the CU (or any DIE) cu; returns n, 0 when no
 * function holds pc.  path holds PFC_DWPATH_MAX DIEs. */
int pfc_dwpath_find(Dwarf_Die *cu, uint64_t pc, Dwarf_Die *path);

/* The same answers, with each compilation unit's outer level kept after its first lookup
 * in c (one per Dwarf, freed before it); c NULL: pfc_dwpath_find. */
struct pfc_dwpath_cache;
struct pfc_dwpath_cache *pfc_dwpath_cache_new(void);
void pfc_dwpath_cache_free(struct pfc_dwpath_cache *c);
int pfc_dwpath_find_cached(struct pfc_dwpath_cache *c, Dwarf_Die *cu, uint64_t pc, Dwarf_Die *path);

/* 1 when libdw may read elf's DWARF strings: .debug_str and .debug_line_str, when present,
 * end with a NUL.  libdw 0.188 reads their strings with strlen, so an unterminated last
 * string makes it read past the section; a file that fails this has no usable DWARF. */
int pfc_dw_strings_ok(Elf *elf);

#endif
