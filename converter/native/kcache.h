/*
 * kcache.h - the kernel symbol cache: the running kernel's finished symbol table (what
 * kallsyms.c makes of /proc/kallsyms) kept on disk, keyed by the kernel's build-id, the
 * boot, the loaded modules and whether addresses are visible, so that the next conversion
 * on this boot reads a few MB instead of asking the kernel to print every symbol again.
 * Which recording may use it (the running kernel's, never a pack's or --kallsyms) is the
 * caller's decision; this module only keys, checks, reads and writes entries.
 */
#ifndef PFC_KCACHE_H
#define PFC_KCACHE_H

#include <stddef.h>
#include <stdint.h>
#include "converter/native/symtab.h"

#define PFC_KCACHE_KEY_MAX 256
#define PFC_KCACHE_ENTRIES 8	/* entries kept; the least recently used go first */

struct pfc_kcache_key {
	char text[PFC_KCACHE_KEY_MAX];	/* "bid=... boot=... kptr=... euid0=... mods=...", NUL-padded */
	char name[17];	/* the entry's file name: a hash of text */
};

/* The running kernel's key; 0, or a negative errno when it cannot be told (no boot id). */
int pfc_kcache_key(struct pfc_kcache_key *k);
/* The entry of k in DIR (DIR/kallsyms/NAME) into t: 1 when it was there and whole, 0 when
 * there is none, -EINVAL when it was there but corrupt (then it is removed), another
 * negative errno on a failure to read. */
int pfc_kcache_load(const char *dir, const struct pfc_kcache_key *k, struct pfc_symtab *t);
/* Writes t as k's entry (a temporary file renamed over it), then removes the least recently
 * used entries past PFC_KCACHE_ENTRIES. */
int pfc_kcache_store(const char *dir, const struct pfc_kcache_key *k, const struct pfc_symtab *t);
/* An entry's bytes: checks the header, the key, the checksum and the table (untrusted
 * bytes: the fuzz target's entry point).  0 with t filled, or -EINVAL. */
int pfc_kcache_parse(const uint8_t *p, size_t len, const struct pfc_kcache_key *k, struct pfc_symtab *t);
/* An entry's bytes for k and t (*out: free it), as pfc_kcache_store writes them. */
int pfc_kcache_encode(const struct pfc_kcache_key *k, const struct pfc_symtab *t, uint8_t **out, size_t *len);

#endif
