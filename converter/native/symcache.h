/*
 * symcache.h - the symbol cache: finished symbol tables kept on disk, one kind of entry a
 * subdirectory of $XDG_CACHE_HOME/perfconv.  "kallsyms": the running kernel's table (what
 * kallsyms.c makes of /proc/kallsyms), keyed by the kernel's build-id, the boot, the loaded
 * modules and whether addresses are visible, so that the next conversion on this boot reads
 * a few MB instead of asking the kernel to print every symbol again.  "elf": the table
 * elfsym.c makes of a binary and its debug file, keyed by their build-ids (elfsym.c's
 * key), so that a batch of recordings of one service parses and demangles each library
 * once.  "r2r": the method names of a ReadyToRun image (r2rcache.c's payload), keyed by
 * its MVID.  "kallsyms-text": /proc/kallsyms as read, under the kernel's key, for packs.
 * "dwarf": a debug file's compressed DWARF sections inflated into the ELF image a2l.c and
 * srcline.c read (dwimage.c), keyed by the file's build-id and size.  "pack": a pack member's
 * zstd frame (converter/files/packwrite.c), keyed by a hash of the tar bytes it compresses.  Which files may use it (the running kernel's, binaries whose build-ids prove what
 * they are) is the caller's decision; this module only keys, checks, reads, writes and
 * bounds entries.
 */
#ifndef PFC_SYMCACHE_H
#define PFC_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>
#include "converter/files/pack.h"
#include "converter/native/symtab.h"

#define PFC_SYMCACHE_KEY_MAX 256
#define PFC_SYMCACHE_ENTRIES 8	/* kallsyms entries kept; the least recently used go first */

/* A kind of entry: its subdirectory and its bound (the least recently used go first). */
struct pfc_symcache_kind {
	const char *sub;
	size_t max_entries;
	uint64_t max_bytes;	/* all its entries together */
	int writable;		/* its reader may write to the mapped bytes (its own copy) */
};
extern const struct pfc_symcache_kind pfc_symcache_kallsyms;	/* 8 entries, 1 GiB */
extern const struct pfc_symcache_kind pfc_symcache_elf;		/* 256 entries, 256 MiB */
extern const struct pfc_symcache_kind pfc_symcache_kallsyms_text;	/* 8 entries, 1 GiB */
extern const struct pfc_symcache_kind pfc_symcache_dwarf;		/* 32 entries, 512 MiB */
extern const struct pfc_symcache_kind pfc_symcache_r2r;		/* 1024 entries, 128 MiB */
extern const struct pfc_symcache_kind pfc_symcache_pack;		/* 2048 entries, 256 MiB */
extern const struct pfc_symcache_kind pfc_symcache_pack_sum;	/* 2048 entries, 4 MiB */

struct pfc_symcache_key {
	char text[PFC_SYMCACHE_KEY_MAX];	/* "bid=... boot=... kptr=... euid0=... mods=...", NUL-padded */
	char name[17];	/* the entry's file name: a hash of text */
};

/* The running kernel's key; 0, or a negative errno when it cannot be told (no boot id). */
int pfc_symcache_key(struct pfc_symcache_key *k, const char *running_kernel);
/* Any other key: text (at most PFC_SYMCACHE_KEY_MAX - 1 bytes) and its entry's name.  0 or
 * -ENAMETOOLONG. */
int pfc_symcache_key_text(struct pfc_symcache_key *k, const char *text);
/* The entry of k in DIR (DIR/kallsyms/NAME) into t: 1 when it was there and whole, 0 when
 * there is none, -EINVAL when it was there but corrupt (then it is removed), another
 * negative errno on a failure to read. */
int pfc_symcache_load(const char *dir, const struct pfc_symcache_key *k, struct pfc_symtab *t);
/* Writes t as k's entry (a temporary file renamed over it), then removes the least recently
 * used entries past PFC_SYMCACHE_ENTRIES. */
int pfc_symcache_store(const char *dir, const struct pfc_symcache_key *k, const struct pfc_symtab *t);
/* The same for an entry of another kind (DIR/KIND->sub/NAME), bounded by that kind. */
int pfc_symcache_load_kind(const char *dir, const struct pfc_symcache_kind *kind, const struct pfc_symcache_key *k,
			 struct pfc_symtab *t);
int pfc_symcache_store_kind(const char *dir, const struct pfc_symcache_kind *kind, const struct pfc_symcache_key *k,
			  const struct pfc_symtab *t);
/* Any kind's entry as bytes: a payload checked as whole (header, key, checksum), read where
 * it is mapped until pfc_symcache_bytes_free.  get: 1 with b filled, 0 when there is none,
 * -EINVAL when it was corrupt (then it is removed), another negative errno.  put: written
 * atomically, then the kind's bound applied. */
struct pfc_symcache_bytes {
	const uint8_t *p;
	size_t len;
	void *map;
	size_t map_len;
	uint64_t crc;	/* the entry's CRC-64 of its key and bytes, checked */
};
int pfc_symcache_get(const char *dir, const struct pfc_symcache_kind *kind, const struct pfc_symcache_key *k,
		   struct pfc_symcache_bytes *b);
void pfc_symcache_bytes_free(struct pfc_symcache_bytes *b);
/* 1: k has an entry whose header is whole and k's; *crc is the CRC-64 it records of its key and
 * bytes, *len the bytes' length.  The bytes are not read, nor checked: what the CRC names is
 * what the entry held when it was written (a copy elsewhere, made from a checked get, has them). */
int pfc_symcache_peek(const char *dir, const struct pfc_symcache_kind *kind, const struct pfc_symcache_key *k,
		    uint64_t *crc, size_t *len);
/* Remove k's entry: whole, but its payload did not hold (written again later). */
void pfc_symcache_remove(const char *dir, const struct pfc_symcache_kind *kind, const struct pfc_symcache_key *k);
int pfc_symcache_put(const char *dir, const struct pfc_symcache_kind *kind, const struct pfc_symcache_key *k,
		   const void *payload, size_t len);
/* An entry's bytes: checks the header, the key, the checksum and the table (untrusted
 * bytes: the fuzz target's entry point).  0 with t filled, or -EINVAL. */
int pfc_symcache_parse(const uint8_t *p, size_t len, const struct pfc_symcache_key *k, struct pfc_symtab *t);
/* An entry's bytes for k and t (*out: free it), as pfc_symcache_store writes them. */
int pfc_symcache_encode(const struct pfc_symcache_key *k, const struct pfc_symtab *t, uint8_t **out, size_t *len);

/* The "pack" entries in DIR as where a pack writer keeps its members' frames
 * (pfc_packw_keep(w, &f->ops)); dir stays the caller's.  _init_kind: another kind's entries
 * behind the same functions (the "pack-sum" entries: pfc_packw_keep_sums). */
struct pfc_symcache_frames {
	struct pfc_packw_frames ops;
	const char *dir;
	const struct pfc_symcache_kind *kind;
	struct pfc_symcache_bytes cur;	/* the entry got, until done */
};
void pfc_symcache_frames_init(struct pfc_symcache_frames *f, const char *dir);
void pfc_symcache_frames_init_kind(struct pfc_symcache_frames *f, const char *dir, const struct pfc_symcache_kind *kind);

#endif
