/*
 * pack.h - the container of a perfconv pack: a POSIX tar archive (pax) compressed with
 * zstd, read and written with libarchive.  A pack holds a recording and the files its
 * samples' frames need; what the members mean (the MANIFEST, the file places) is files.c's
 * business, this file only moves named bytes in and out, safely.
 *
 * A pack is untrusted input: member names are never paths on disk (members are read into
 * memory files), sizes, counts and the expansion ratio are bounded, and a corrupt or
 * truncated pack is an error naming the member and the offset in the pack.
 */
#ifndef PFC_PACK_H
#define PFC_PACK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "converter/util/error.h"
#include "converter/util/tuning.h"

#define PFC_PACK_MANIFEST "MANIFEST"     /* the first member */
#define PFC_PACK_RECORDING "perf.data"   /* the recording, unchanged */
#define PFC_PACK_MAGIC "perfpack 1\n"    /* the MANIFEST's first line */

/* Limits on what a pack may ask of the reader. */
#define PFC_PACK_MAX_MEMBERS 100000
#define PFC_PACK_MAX_NAME 4096
#define PFC_PACK_MAX_TOTAL ((uint64_t)64 << 30)   /* bytes of all members */
#define PFC_PACK_MAX_RATIO 2000                   /* members' bytes per compressed byte, past the first 64 MiB */

struct pfc_pack;

/* Whether the file starts as a pack does (zstd frame, tar header, MANIFEST first). */
int pfc_pack_detect(const char *path);
int pfc_pack_detect_mem(const void *buf, size_t len);

/* Read a pack: every member into a memory file.  err names the member and offset. */
int pfc_pack_open(struct pfc_pack **out, const char *path, struct pfc_error *err);
int pfc_pack_open_mem(struct pfc_pack **out, const void *buf, size_t len, struct pfc_error *err);
void pfc_pack_close(struct pfc_pack *p);

size_t pfc_pack_count(const struct pfc_pack *p);
const char *pfc_pack_name_at(const struct pfc_pack *p, size_t i);
/* A member by name: its memory file (stays the pack's: do not close) and size; -1 none. */
int pfc_pack_fd(const struct pfc_pack *p, const char *name, uint64_t *size);
/* A member's bytes, mapped read-only (stay the pack's); NULL when there is none.  An empty
 * member gives a non-NULL pointer and *size 0. */
const void *pfc_pack_bytes(const struct pfc_pack *p, const char *name, uint64_t *size);
/* The pack's path, for messages. */
const char *pfc_pack_path(const struct pfc_pack *p);

/* Writing, as a stream (stdout works): members in the order added. */
struct pfc_packw;
/* level: zstd's, 0 for the default.  name is the output's name, for messages.  tuning: the
 * tests' settings (pack_no_sparse), or NULL. */
int pfc_packw_open(struct pfc_packw **out, FILE *fp, const char *name, int level, const struct pfc_tuning *tuning,
		   struct pfc_error *err);
int pfc_packw_add_bytes(struct pfc_packw *w, const char *member, const void *buf, size_t len, struct pfc_error *err);
/* buf[0, len) with the ranges holes[2i], size holes[2i + 1] (sorted, apart) written as
 * zeros: the member has len bytes, and buf is read only outside the holes. */
int pfc_packw_add_holes(struct pfc_packw *w, const char *member, const void *buf, size_t len, const uint64_t *holes,
			size_t n, struct pfc_error *err);
/* The whole regular file at `path`, as it is now. */
int pfc_packw_add_file(struct pfc_packw *w, const char *member, const char *path, struct pfc_error *err);
/* The recording's frame made on a thread of its own, while the conversion runs (NULL: it could
 * not start; the writer then makes it).  Free it after the writer, or instead of using it. */
struct pfc_packw_pre;
struct pfc_packw_pre *pfc_packw_pre_start(const char *path, const char *member, const struct pfc_tuning *tuning);
void pfc_packw_pre_free(struct pfc_packw_pre *p);
/* The recording: as add_file, but its frame is never the cache's (no other pack has it), and
 * is compressed at a faster level unless open was given one; pre's frame when it is this
 * file's (pre may be NULL). */
int pfc_packw_add_recording(struct pfc_packw *w, const char *member, const char *path, struct pfc_packw_pre *pre,
			    struct pfc_error *err);
/* A member whose bytes the caller names by id, a text that stays the same exactly as long as
 * they do (a file's device, inode, size and times, and how the caller cuts its holes): 1 when
 * the kept frames knew what its tar bytes hash to under id and hold their frame, which is
 * written without the member being read; 0 when they do not, and the caller adds the member
 * as usual next (add_bytes, add_holes or add_file), after which its hash is kept under id.
 * size is the member's; id NULL: 0 at once, nothing kept. */
int pfc_packw_add_known(struct pfc_packw *w, const char *member, uint64_t size, const char *id, struct pfc_error *err);
/* Where members' frames are kept between packs, by a key text (of at most PFC_PACKW_KEY_MAX - 1
 * bytes) that says what the frame compresses (the symbol cache's "pack" entries: symcache.c's
 * pfc_symcache_frames).  get: 1 with the frame's bytes, valid until done; 0 when there is none;
 * -1 when the entry was damaged (it is removed).  bad: the entry got is not a frame of the
 * key's bytes (remove it).  put: keep a frame, if it can. */
#define PFC_PACKW_KEY_MAX 256
struct pfc_packw_frames {
	int (*get)(struct pfc_packw_frames *f, const char *key, const void **p, size_t *len);
	void (*done)(struct pfc_packw_frames *f);
	void (*bad)(struct pfc_packw_frames *f, const char *key);
	void (*put)(struct pfc_packw_frames *f, const char *key, const void *p, size_t len);
};
/* Members' frames from and into kept, which stays the caller's (NULL, the default: none). */
void pfc_packw_keep(struct pfc_packw *w, struct pfc_packw_frames *kept);
/* What members' tar bytes hash to, by the ids of pfc_packw_add_known, from and into sums (the
 * symbol cache's "pack-sum" entries); NULL, the default: none, and add_known gives 0. */
void pfc_packw_keep_sums(struct pfc_packw *w, struct pfc_packw_frames *sums);
struct pfc_packw_cache_stats {
	uint64_t hits, misses, corrupt;	/* frames; corrupt entries were ignored and written again */
	uint64_t known;	/* of the hits, members written by pfc_packw_add_known, without being read */
};
void pfc_packw_cache_stats(const struct pfc_packw *w, struct pfc_packw_cache_stats *st);
/* Finish the archive; *bytes: its compressed size.  Frees w, also on error. */
int pfc_packw_close(struct pfc_packw *w, uint64_t *bytes, struct pfc_error *err);
/* Abandon a pack being written (after an error). */
void pfc_packw_abort(struct pfc_packw *w);

#endif
