/*
 * packwrite.c - writing a pack: pax-restricted tar streamed to a FILE* with fixed metadata,
 * so that the same members give the same bytes, one zstd frame a member, a frame reused from
 * the symbol cache when the member's tar bytes hash the same, and the recording compressed on
 * a thread of its own while it is converted.  Reading is packread.c's; which files go in and
 * the MANIFEST are formats/perfpack.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>
#include <zstd_errors.h>
#include "converter/files/packint.h"

#define CHUNK (1 << 20)                    /* add_file's reads */
/* On a 50 MB mix of perf.data and ELF files, on 2 cores: level 3 (zstd's default) writes
 * 360 MB/s at a ratio of 3.50, level 9 73 MB/s at 3.81, level 19 3 MB/s at 4.29.  On the
 * .NET fixture's pack (54 MB of files) level 1 takes a third of level 3's CPU (0.11 against
 * 0.33 s) for 8% more bytes: packing is to cost no more than twice a conversion. */
#define DEFAULT_LEVEL 1

/*
 * One zstd frame a member: its tar headers, data and padding (the end-of-archive blocks are a
 * frame of their own).  Concatenated frames are one stream to every zstd reader, so the tar
 * stream and what reads it are as with one frame; but a member's frame depends on its bytes
 * alone, and the packs of one service share most of theirs (the kernel's symbols, the
 * runtime's libraries).  A member's tar bytes are held and hashed (XXH3-128, ~10 GB/s) before
 * they are compressed (~0.5 GB/s at level 1): the symbol cache's "pack" entry under that hash,
 * zstd's version and the parameters is the frame compressing them gives, written as it is.
 * A hit or a miss, the pack has the same bytes.  libarchive writes unbuffered (bytes per
 * block 0), so every byte of a member reaches w_write between its header and finish_entry.
 */
#define MEMBER_HOLD_MAX ((size_t)128 << 20)  /* a member's tar bytes held; past that, streamed */
/* a lookup (open, map, check) costs less than compressing 4 kB: zstd's setting up for a
 * frame takes 0.6 M instructions, on the .NET fixture's pack, 13 frames of 1 to 32 kB 8.7 M */
#define CACHE_MIN ((size_t)4 << 10)
/*
 * The recording is one pack's own: no cache, and the largest member of a frame-pointer
 * recording's pack.  Measured on a 64 MB recording, on 2 cores with 2 workers: level 1
 * 4.54 MB in 0.12 s wall (0.12 s CPU), --fast=1 (-1) 4.86 MB in 0.09 s (0.09 s CPU): the
 * recording compresses at -1, 7% larger, for a quarter less time.
 */
#define RECORDING_LEVEL (-1)

/* A piece of a held member: the caller's bytes (p), or a copy at off in hold (p NULL). */
struct seg {
	const unsigned char *p;
	size_t off, len;
};

static const char zeros[1 << 16];	/* holes of a member written whole (PERFCONV_PACK_SPARSE=0) */

struct pfc_packw {
	struct archive *a;
	ZSTD_CCtx *z;         /* members are compressed here, each frame with a checksum */
	char zout[1 << 17];
	FILE *fp;
	char *name;           /* the output's, for messages */
	int sparse;           /* holes as sparse members (not the tuning's pack_no_sparse) */
	uint64_t bytes;       /* compressed bytes written to fp */
	int werr;             /* errno of a failed write to fp */
	int discard;          /* abandoned: nothing more goes to fp */
	size_t n;             /* members */
	uint64_t total;       /* their bytes */
	char **names;         /* open addressing, for duplicates; cap a power of two */
	size_t names_cap;
	int level;            /* members' zstd level */
	int user_level;       /* the caller chose it: the recording's too */
	int mt;               /* zstd took worker threads (then its frames are those of any number) */
	struct pfc_packw_frames *kept;	/* where frames are kept between packs; NULL: nowhere */
	struct pfc_packw_frames *sums;	/* where members' tar bytes' hashes are kept; NULL: nowhere */
	int threads;          /* zstd's workers for the members held */
	int streaming;        /* this member goes to z as it comes, not held */
	int skipping;         /* this member's frame is written: its bytes are not wanted */
	int recording;        /* the member being added is the recording */
	int unique;           /* the member being added is this pack's own: not in the cache */
	struct seg *segs;     /* a member's tar bytes, held: where they are */
	size_t nsegs, segs_cap;
	size_t held;          /* their size */
	const unsigned char *stable;	/* the caller's bytes of the member, there until it ends */
	size_t stable_len;
	unsigned char *hold;  /* copies of the bytes that are not (headers, a file's reads) */
	size_t hold_len, hold_cap;
	XXH3_state_t *xxh;    /* to hash them */
	unsigned char *flat;  /* a member's pieces in one, to compress */
	size_t flat_cap;
	unsigned char *frame; /* a held member compressed */
	size_t frame_cap;
	struct pfc_packw_cache_stats st;
	char sum_key[PFC_PACKW_KEY_MAX];	/* the next member's tar bytes are kept by this key ("": not) */
	uint64_t sum_member;  /* XXH3-64 of that member's name */
	uint64_t synced;      /* bytes of fp whose writeback was started */
	int no_sync;          /* fp is not a file whose writeback can be started */
	char buf[2][160];     /* for pfc_pack_shown() */
};

/*
 * The caller makes the pack durable (fsync before it renames it into place: cli/convert.c),
 * and on a pack of megabytes that fsync waited for all of its bytes to reach the disk after
 * the last was written: 5 to 7 ms for the .NET fixture's 9 MB on the test machine, against
 * 1 ms for folded's 50 kB.  Writeback of each MiB written is started here (sync_file_range
 * without waiting), so that the disk writes while the later members are made and fsync
 * waits for the last MiB and the journal.  Nothing is made more or less durable: fsync is
 * what makes it so.  fp that is no file (a pipe) is left as it is.
 */
#define WRITEBACK_STEP ((uint64_t)1 << 20)

static void w_writeback(struct pfc_packw *w)
{
#ifdef SYNC_FILE_RANGE_WRITE
	int fd;

	if (w->no_sync || w->bytes - w->synced < WRITEBACK_STEP)
		return;
	if (fflush(w->fp) != 0 || (fd = fileno(w->fp)) < 0 || sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) < 0)
		w->no_sync = 1;	/* its write errors are fwrite's and fflush's */
	w->synced = w->bytes;
#else
	(void)w;
#endif
}

static int w_out(struct pfc_packw *w, const void *buf, size_t len)
{
	errno = 0;
	if (len && fwrite(buf, 1, len, w->fp) != len) {
		w->werr = errno ? errno : EIO;
		return -1;
	}
	w->bytes += len;
	w_writeback(w);
	return 0;
}

/* Compress a streamed member's bytes and write them; end: finish the frame. */
static int w_compress(struct pfc_packw *w, const void *buf, size_t len, ZSTD_EndDirective end)
{
	ZSTD_inBuffer in = { buf, len, 0 };
	size_t left;

	do {
		ZSTD_outBuffer out = { w->zout, sizeof(w->zout), 0 };
		left = ZSTD_compressStream2(w->z, &out, &in, end);
		if (ZSTD_isError(left)) {
			w->werr = EIO;
			return -1;
		}
		if (w_out(w, w->zout, out.pos) < 0)
			return -1;
	} while (end == ZSTD_e_end ? left != 0 : in.pos < in.size);
	return 0;
}

static const unsigned char *seg_at(const struct pfc_packw *w, const struct seg *g)
{
	return g->p ? g->p : w->hold + g->off;
}

/* The held pieces in one buffer (the only piece, or copies in flat); NULL: out of memory. */
static const unsigned char *w_flat(struct pfc_packw *w)
{
	size_t at = 0;

	if (w->nsegs == 1)
		return seg_at(w, &w->segs[0]);
	if (w->held > w->flat_cap) {
		unsigned char *nf = realloc(w->flat, w->held);
		if (!nf)
			return NULL;
		w->flat = nf;
		w->flat_cap = w->held;
	}
	for (size_t i = 0; i < w->nsegs; i++) {
		memcpy(w->flat + at, seg_at(w, &w->segs[i]), w->segs[i].len);
		at += w->segs[i].len;
	}
	return w->flat;
}

/* XXH3-128 of the held pieces, as of their bytes in one */
static XXH128_hash_t w_hash(struct pfc_packw *w)
{
	if (w->nsegs == 1)
		return XXH3_128bits(seg_at(w, &w->segs[0]), w->segs[0].len);
	XXH3_128bits_reset(w->xxh);
	for (size_t i = 0; i < w->nsegs; i++)
		XXH3_128bits_update(w->xxh, seg_at(w, &w->segs[i]), w->segs[i].len);
	return XXH3_128bits_digest(w->xxh);
}

/* The key of the frame of len tar bytes that hash to h: what the frame depends on (the bytes,
 * zstd's code, the parameters). */
static void frame_key(const struct pfc_packw *w, XXH128_hash_t h, size_t len, char key[PFC_PACKW_KEY_MAX])
{
	snprintf(key, PFC_PACKW_KEY_MAX, "pack-frame xxh3-128=%016llx%016llx tar-bytes=%zu zstd=%u level=%d mt=%d checksum=1",
		 (unsigned long long)h.high64, (unsigned long long)h.low64, len, ZSTD_versionNumber(), w->level, w->mt);
}

/* What a member's tar bytes hash to, kept under w->sum_key for pfc_packw_add_known: the
 * hash's two halves and the length. */
static void keep_sum(struct pfc_packw *w, XXH128_hash_t h, size_t len)
{
	uint64_t v[3] = { h.high64, h.low64, len };

	if (w->sum_key[0] && w->sums)
		w->sums->put(w->sums, w->sum_key, v, sizeof(v));
	w->sum_key[0] = 0;
}

/* A held member's frame: from the cache, or compressed (and kept there).  Its pieces are
 * hashed where they are; they are copied into one only to be compressed. */
static int w_frame(struct pfc_packw *w)
{
	struct pfc_packw_frames *kf = w->kept;
	size_t len = w->held;
	int cache = kf && len >= CACHE_MIN && !w->unique, got;
	size_t bound = ZSTD_compressBound(len), n;
	const unsigned char *p;
	char key[PFC_PACKW_KEY_MAX];
	XXH128_hash_t h = { 0, 0 };

	if (cache) {
		const void *fp;
		size_t fl;

		h = w_hash(w);
		frame_key(w, h, len, key);
		got = kf->get(kf, key, &fp, &fl);
		if (got == 1) {
			/* the entry's checksum held; it must also be one whole frame of these bytes */
			if (ZSTD_findFrameCompressedSize(fp, fl) == fl && ZSTD_getFrameContentSize(fp, fl) == len) {
				int ret = w_out(w, fp, fl);
				kf->done(kf);
				w->st.hits++;
				if (ret == 0)
					keep_sum(w, h, len);
				return ret;
			}
			kf->done(kf);
			kf->bad(kf, key);
			got = -1;
		}
		w->st.corrupt += got < 0;
		w->st.misses++;
	}
	if (bound > w->frame_cap) {
		unsigned char *nf = realloc(w->frame, bound);
		if (!nf) {
			w->werr = ENOMEM;
			return -1;
		}
		w->frame = nf;
		w->frame_cap = bound;
	}
	if (!(p = w_flat(w))) {
		w->werr = ENOMEM;
		return -1;
	}
	n = ZSTD_compress2(w->z, w->frame, bound, p, len);
	if (ZSTD_isError(n)) {
		w->werr = EIO;
		return -1;
	}
	if (w_out(w, w->frame, n) < 0)
		return -1;
	if (cache) {
		kf->put(kf, key, w->frame, n);	/* unwritable: no cache */
		keep_sum(w, h, len);
	}
	return 0;
}

/* A member's frame starts: its bytes are held (w_stream turns to streaming).  The recording's
 * frame is made on one thread with its size pledged, as pfc_packw_pre makes it on its own thread
 * (the same bytes); the others with the workers. */
static int w_begin(struct pfc_packw *w)
{
	int level = w->recording && !w->user_level ? RECORDING_LEVEL : w->level;

	w->streaming = w->skipping = 0;
	w->hold_len = w->nsegs = w->held = 0;
	w->unique = w->recording || !w->n;	/* the recording and the MANIFEST */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->z, ZSTD_c_compressionLevel, level)) ||
	    (w->mt && ZSTD_isError(ZSTD_CCtx_setParameter(w->z, ZSTD_c_nbWorkers, w->recording ? 0 : w->threads)))) {
		w->werr = EIO;
		return -1;
	}
	return 0;
}

/* The held pieces go to the frame being streamed, from here on the rest too. */
static int w_unhold(struct pfc_packw *w)
{
	for (size_t i = 0; i < w->nsegs; i++)
		if (w_compress(w, seg_at(w, &w->segs[i]), w->segs[i].len, ZSTD_e_continue) < 0)
			return -1;
	w->streaming = 1;
	return 0;
}

/* The held header starts a streamed frame of the member's tar bytes: header, size bytes, padding. */
static int w_stream(struct pfc_packw *w, uint64_t size)
{
	uint64_t total = w->held + size + (-size & 511);

	if (ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(w->z, total)) || w_unhold(w) < 0) {
		w->werr = w->werr ? w->werr : EIO;
		return -1;
	}
	return 0;
}

/* A member's frame ends: held bytes become a frame, a streamed one is finished. */
static int w_end(struct pfc_packw *w)
{
	int ret;

	if (w->skipping)
		ret = 0;
	else if (w->streaming)
		ret = w_compress(w, NULL, 0, ZSTD_e_end);
	else
		ret = w_frame(w);
	/* what comes between members (the end-of-archive blocks) is streamed */
	w->streaming = 1;
	w->skipping = 0;
	w->sum_key[0] = 0;	/* a member streamed or not kept: its bytes were not hashed */
	return ret;
}

static la_ssize_t w_write(struct archive *a, void *cd, const void *buf, size_t len)
{
	struct pfc_packw *w = cd;

	if (w->discard || w->skipping)
		return (la_ssize_t)len;
	if (!w->streaming && len > MEMBER_HOLD_MAX - w->held) {
		/* too large to hold: streamed, without the cache */
		if (w_unhold(w) < 0)
			goto fail;
	}
	if (!w->streaming) {
		const unsigned char *b = buf;
		int stable = (b >= w->stable && len <= w->stable_len && b - w->stable <= (ptrdiff_t)(w->stable_len - len)) ||
			     (b >= (const unsigned char *)zeros && len <= sizeof(zeros) &&
			      b - (const unsigned char *)zeros <= (ptrdiff_t)(sizeof(zeros) - len));
		struct seg *last = w->nsegs ? &w->segs[w->nsegs - 1] : NULL;

		if (!stable && len > w->hold_cap - w->hold_len) {
			size_t cap = w->hold_cap ? w->hold_cap : 1 << 16;
			unsigned char *nh;
			while (cap - w->hold_len < len)
				cap *= 2;
			if (!(nh = realloc(w->hold, cap))) {
				w->werr = ENOMEM;
				goto fail;
			}
			w->hold = nh;
			w->hold_cap = cap;
		}
		if (last && !stable && !last->p && last->off + last->len == w->hold_len) {
			last->len += len;	/* after the copy before it */
		} else if (last && stable && last->p && last->p + last->len == b) {
			last->len += len;	/* after the bytes before it */
		} else {
			if (w->nsegs == w->segs_cap) {
				size_t cap = w->segs_cap ? 2 * w->segs_cap : 64;
				struct seg *ns = realloc(w->segs, cap * sizeof(*ns));
				if (!ns) {
					w->werr = ENOMEM;
					goto fail;
				}
				w->segs = ns;
				w->segs_cap = cap;
			}
			w->segs[w->nsegs++] = (struct seg){ stable ? b : NULL, stable ? 0 : w->hold_len, len };
		}
		if (!stable) {
			memcpy(w->hold + w->hold_len, buf, len);
			w->hold_len += len;
		}
		w->held += len;
		return (la_ssize_t)len;
	}
	if (w_compress(w, buf, len, ZSTD_e_continue) < 0)
		goto fail;
	return (la_ssize_t)len;
fail:
	AR->archive_set_error(a, w->werr, "%s", strerror(w->werr));
	return -1;
}

static int w_close(struct archive *a, void *cd)
{
	struct pfc_packw *w = cd;

	if (w->discard)
		return ARCHIVE_OK;
	errno = 0;
	if (w_end(w) < 0 || fflush(w->fp) || ferror(w->fp)) {
		w->werr = w->werr ? w->werr : errno ? errno : EIO;
		AR->archive_set_error(a, w->werr, "%s", strerror(w->werr));
		return ARCHIVE_FATAL;
	}
	return ARCHIVE_OK;
}

/* libarchive's failure as a WRITE error naming the output and the member */
static int w_fail(struct pfc_packw *w, const char *member, struct pfc_error *err)
{
	const char *why = w->werr ? strerror(w->werr) : AR->archive_error_string(w->a);

	return PFC_FAIL_NOOFF(err, WRITE, "'%s', member '%s': %s", w->name, pfc_pack_shown(member, w->buf[0]),
			      why ? why : "libarchive failed");
}

/* The member's data is all given: libarchive writes its padding, and its frame ends. */
static int w_finish(struct pfc_packw *w, const char *member, struct pfc_error *err)
{
	if (AR->archive_write_finish_entry(w->a) != ARCHIVE_OK || w_end(w) < 0)
		return w_fail(w, member, err);
	return 0;
}

static void w_free(struct pfc_packw *w)
{
	if (!w)
		return;
	/* libarchive 3.6.2 frees its output buffer only in close, which archive_write_free
	 * skips after a failure: close it here, whatever its state, writing nothing more */
	w->discard = 1;
	if (w->a) {
		AR->archive_write_close(w->a);
		AR->archive_write_free(w->a);
	}
	for (size_t i = 0; i < w->names_cap; i++)
		free(w->names[i]);
	ZSTD_freeCCtx(w->z);
	free(w->names);
	free(w->name);
	free(w->hold);
	free(w->segs);
	free(w->flat);
	XXH3_freeState(w->xxh);
	free(w->frame);
	free(w);
}

int pfc_packw_open(struct pfc_packw **out, FILE *fp, const char *name, int level, const struct pfc_tuning *tuning,
		   struct pfc_error *err)
{
	struct pfc_packw *w;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int th;

	*out = NULL;
	if ((th = pfc_pack_ar_load(err)) < 0)
		return th;
	if (level && (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel()))
		return PFC_FAIL_NOOFF(err, USAGE, "zstd level %d: not between %d and %d", level, ZSTD_minCLevel(),
				      ZSTD_maxCLevel());
	if (!(w = calloc(1, sizeof(*w))) || !(w->name = strdup(name ? name : "<stdout>")) || !(w->a = AR->archive_write_new()) ||
	    !(w->xxh = XXH3_createState())) {
		w_free(w);
		return PFC_FAIL_NOOFF(err, NOMEM, "pack writer");
	}
	w->fp = fp;
	w->sparse = !(tuning && tuning->pack_no_sparse);
	w->level = level ? level : DEFAULT_LEVEL;
	w->user_level = level != 0;
	w->streaming = 1;
	/* zstd's worker threads give the same bytes for any number of them from 1 on (0 gives
	 * others); at most 4, each costs a compression context.  Measured on 2 cores, level 3:
	 * 200 MB/s without workers, 360 with 2.  Each frame carries a checksum of its content,
	 * which the reader's decoder checks: a flipped byte is an error, not other names.
	 * libarchive's own zstd filter sets no checksum, so the tar stream is compressed here. */
	th = cpus < 1 ? 1 : cpus > 4 ? 4 : (int)cpus;
	if (!(w->z = ZSTD_createCCtx()) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->z, ZSTD_c_compressionLevel, w->level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->z, ZSTD_c_checksumFlag, 1))) {
		w_free(w);
		return PFC_FAIL_NOOFF(err, NOMEM, "pack writer");
	}
	/* a libzstd built without threads refuses workers: it then compresses on this thread */
	w->mt = !ZSTD_isError(ZSTD_CCtx_setParameter(w->z, ZSTD_c_nbWorkers, th));
	w->threads = th;
	if (AR->archive_write_set_format_pax_restricted(w->a) != ARCHIVE_OK ||
	    /* unbuffered: a member's bytes all come before its frame ends, and nothing is
	     * written past the end-of-archive blocks */
	    AR->archive_write_set_bytes_per_block(w->a, 0) != ARCHIVE_OK ||
	    AR->archive_write_set_bytes_in_last_block(w->a, 1) != ARCHIVE_OK ||
	    AR->archive_write_open2(w->a, w, NULL, w_write, w_close, NULL) != ARCHIVE_OK) {
		int ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", w->name, AR->archive_error_string(w->a));
		w_free(w);
		return ret;
	}
	*out = w;
	return 0;
}

void pfc_packw_keep(struct pfc_packw *w, struct pfc_packw_frames *kept)
{
	w->kept = kept;
}

void pfc_packw_keep_sums(struct pfc_packw *w, struct pfc_packw_frames *sums)
{
	w->sums = sums;
}

void pfc_packw_cache_stats(const struct pfc_packw *w, struct pfc_packw_cache_stats *st)
{
	*st = w->st;
}

static uint64_t hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

/* Remember a member name; -1 when it is there already or memory ran out (errno). */
static int w_name(struct pfc_packw *w, const char *name)
{
	size_t i;

	if (2 * (w->n + 1) > w->names_cap) {
		size_t cap = w->names_cap ? w->names_cap * 2 : 64;
		char **nn = calloc(cap, sizeof(*nn));
		if (!nn)
			return errno = ENOMEM, -1;
		for (size_t j = 0; j < w->names_cap; j++) {
			if (!w->names[j])
				continue;
			for (i = hash(w->names[j]) & (cap - 1); nn[i]; i = (i + 1) & (cap - 1))
				;
			nn[i] = w->names[j];
		}
		free(w->names);
		w->names = nn;
		w->names_cap = cap;
	}
	for (i = hash(name) & (w->names_cap - 1); w->names[i]; i = (i + 1) & (w->names_cap - 1))
		if (!strcmp(w->names[i], name))
			return errno = EEXIST, -1;
	if (!(w->names[i] = strdup(name)))
		return errno = ENOMEM, -1;
	return 0;
}

/* A member's entry: nothing of the machine or the moment, so that the same members give the
 * same bytes.  NULL: out of memory. */
static struct archive_entry *entry_new(const char *member, uint64_t size)
{
	struct archive_entry *e = AR->archive_entry_new();

	if (!e)
		return NULL;
	AR->archive_entry_copy_pathname(e, member);
	AR->archive_entry_set_filetype(e, AE_IFREG);
	AR->archive_entry_set_perm(e, 0644);
	AR->archive_entry_set_size(e, (la_int64_t)size);
	AR->archive_entry_set_mtime(e, 0, 0);
	AR->archive_entry_set_uid(e, 0);
	AR->archive_entry_set_gid(e, 0);
	return e;
}

/* The checks the reader makes, so that what is written can be read; then the header.
 * head: the first bytes of the member (the MANIFEST's magic). */
static int w_check(struct pfc_packw *w, const char *member, uint64_t size, const void *head, size_t headlen,
		   struct pfc_error *err)
{
	const char *why = pfc_pack_bad_name(member);

	if (!why && !w->n && (strcmp(member, PFC_PACK_MANIFEST) || headlen < MAGIC_LEN ||
			      memcmp(head, PFC_PACK_MAGIC, MAGIC_LEN)))
		why = "the first member must be " PFC_PACK_MANIFEST ", starting with its magic line";
	if (!why && w->n >= PFC_PACK_MAX_MEMBERS)
		why = "too many members";
	if (!why && size > PFC_PACK_MAX_TOTAL - w->total)
		why = "the members are over the size limit of a pack";
	if (!why && w_name(w, member) < 0)
		why = errno == EEXIST ? "a second member of that name" : strerror(errno);
	if (why)
		return PFC_FAIL_NOOFF(err, WRITE, "'%s', member '%s': %s", w->name, pfc_pack_shown(member, w->buf[0]), why);
	return 0;
}

static int w_header(struct pfc_packw *w, const char *member, uint64_t size, const void *head, size_t headlen,
		    const uint64_t *holes, size_t nholes, struct pfc_error *err)
{
	struct archive_entry *e;
	locale_t utf8, old;
	int ret;

	if ((ret = w_check(w, member, size, head, headlen, err)) < 0)
		return ret;
	if (w->sum_key[0] && w->sum_member != XXH3_64bits(member, strlen(member)))
		w->sum_key[0] = 0;	/* pfc_packw_add_known asked about another member */
	if (!(e = entry_new(member, size)))
		return PFC_FAIL_NOOFF(err, NOMEM, "pack writer");
	if (nholes) {
		/* a sparse member: libarchive's pax writer lists the data between the holes
		 * (GNU.sparse 1.0) and skips the holes' bytes that archive_write_data is given.
		 * GNU tar reads each data region in whole 512-byte blocks (it makes only such
		 * regions): a region starts and ends on a block boundary, or at the member's
		 * end, taking in the zeros of the holes around it. */
		uint64_t at = 0, rb = 0, re = 0;
		int open_region = 0;
		for (size_t i = 0; i <= nholes; i++) {
			uint64_t hb = i < nholes ? holes[2 * i] : size, b = at & ~(uint64_t)511, en;
			if (hb > at) {
				en = (hb + 511) & ~(uint64_t)511;
				if (en > size)
					en = size;
				if (open_region && b <= re) {
					re = en;
				} else {
					if (open_region)
						AR->archive_entry_sparse_add_entry(e, (la_int64_t)rb, (la_int64_t)(re - rb));
					rb = b;
					re = en;
					open_region = 1;
				}
			}
			if (i < nholes)
				at = holes[2 * i] + holes[2 * i + 1];
		}
		if (open_region)
			AR->archive_entry_sparse_add_entry(e, (la_int64_t)rb, (la_int64_t)(re - rb));
	}
	/* every member's header is held; the recording's data is streamed (w_stream) */
	if (w_begin(w) < 0) {
		AR->archive_entry_free(e);
		return w_fail(w, member, err);
	}
	old = pfc_pack_utf8_enter(&utf8);
	ret = AR->archive_write_header(w->a, e);
	pfc_pack_utf8_leave(utf8, old);
	AR->archive_entry_free(e);
	if (ret != ARCHIVE_OK)
		return w_fail(w, member, err);
	w->n++;
	w->total += size;
	return 0;
}

static int w_data(struct pfc_packw *w, const char *member, const void *buf, size_t len, struct pfc_error *err)
{
	while (len) {
		la_ssize_t n = AR->archive_write_data(w->a, buf, len);
		if (n <= 0)
			return w_fail(w, member, err);
		buf = (const char *)buf + n;
		len -= (size_t)n;
	}
	return 0;
}

int pfc_packw_add_bytes(struct pfc_packw *w, const char *member, const void *buf, size_t len, struct pfc_error *err)
{
	int ret;

	/* buf is there until the member's frame is made: held where it is */
	w->stable = buf;
	w->stable_len = len;
	if ((ret = w_header(w, member, len, buf, len, NULL, 0, err)) < 0 || (ret = w_data(w, member, buf, len, err)) < 0 ||
	    (ret = w_finish(w, member, err)) < 0) {
		w->stable = NULL;
		return ret;
	}
	w->stable = NULL;
	return 0;
}

/* tests and measurements: w->sparse 0 (PERFCONV_PACK_SPARSE=0) writes holes as runs of zeros
 * (the packs of perfconv before sparse members, which any tar reader reads as plain files) */

static int add_holes(struct pfc_packw *w, const char *member, const char *b, size_t len, const uint64_t *holes,
		     size_t n, struct pfc_error *err);

int pfc_packw_add_holes(struct pfc_packw *w, const char *member, const void *buf, size_t len, const uint64_t *holes,
			size_t n, struct pfc_error *err)
{
	size_t i;
	int ret;

	for (i = 0; i < n; i++)
		if (holes[2 * i] > len || holes[2 * i + 1] > len - holes[2 * i] || !holes[2 * i + 1] ||
		    (i && holes[2 * i] < holes[2 * i - 2] + holes[2 * i - 1]))
			return PFC_FAIL_NOOFF(err, WRITE, "'%s', member '%s': holes out of order", w->name,
					      pfc_pack_shown(member, w->buf[0]));
	w->stable = buf;	/* there until the member's frame is made: held where it is */
	w->stable_len = len;
	ret = add_holes(w, member, buf, len, holes, n, err);
	w->stable = NULL;
	return ret;
}

static int add_holes(struct pfc_packw *w, const char *member, const char *b, size_t len, const uint64_t *holes,
		     size_t n, struct pfc_error *err)
{
	uint64_t at = 0;
	size_t i;
	int ret;

	if ((ret = w_header(w, member, len, b, len, w->sparse ? holes : NULL, w->sparse ? n : 0, err)) < 0)
		return ret;
	for (i = 0; i <= n; i++) {
		uint64_t hb = i < n ? holes[2 * i] : len, he = i < n ? hb + holes[2 * i + 1] : len;
		if (hb > len || he > len || he < hb || hb < at)
			return PFC_FAIL_NOOFF(err, WRITE, "'%s', member '%s': holes out of order", w->name,
					      pfc_pack_shown(member, w->buf[0]));
		if (hb > at && (ret = w_data(w, member, b + at, (size_t)(hb - at), err)) < 0)
			return ret;
		for (at = hb; at < he;) {
			size_t k = he - at < sizeof(zeros) ? (size_t)(he - at) : sizeof(zeros);
			if ((ret = w_data(w, member, zeros, k, err)) < 0)
				return ret;
			at += k;
		}
	}
	return w_finish(w, member, err);
}

/* A file that says it is empty and is not: procfs and the like (/proc/kallsyms).  Read it
 * all, up to a limit, and add what was read. */
static int add_pseudo(struct pfc_packw *w, const char *member, const char *path, int fd, struct pfc_error *err)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int ret;

	for (;;) {
		ssize_t n;
		if (len == cap) {
			char *nb = cap < ((size_t)1 << 30) ? realloc(buf, cap = cap ? cap * 2 : 1 << 16) : NULL;
			if (!nb) {
				free(buf);
				return PFC_FAIL_NOOFF(err, NOMEM, "'%s', member '%s': reading '%s'", w->name,
						      pfc_pack_shown(member, w->buf[0]), pfc_pack_shown(path, w->buf[1]));
			}
			buf = nb;
		}
		if ((n = read(fd, buf + len, cap - len)) < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = PFC_FAIL_NOOFF(err, IO, "'%s', member '%s': reading '%s': %s", w->name,
					     pfc_pack_shown(member, w->buf[0]), pfc_pack_shown(path, w->buf[1]), strerror(errno));
			free(buf);
			return ret;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	ret = pfc_packw_add_bytes(w, member, buf, len, err);
	free(buf);
	return ret;
}

static int add_file(struct pfc_packw *w, const char *member, const char *path, struct pfc_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), ret = 0;
	struct stat st;
	uint64_t size, done = 0;
	char *buf = NULL;
	const char *why = NULL;
	size_t len = 0;

	if (fd < 0 || fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = S_ISDIR(st.st_mode) ? "a directory" : "not a regular file";
	if (why) {
		ret = PFC_FAIL_NOOFF(err, OPEN, "'%s', member '%s': '%s': %s", w->name, pfc_pack_shown(member, w->buf[0]),
				     pfc_pack_shown(path, w->buf[1]), why);
		goto out;
	}
	if (!st.st_size) {
		ret = add_pseudo(w, member, path, fd, err);
		goto out;
	}
	size = (uint64_t)st.st_size;
	if (!(buf = malloc(CHUNK))) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "pack writer");
		goto out;
	}
	/* chunk by chunk, the first read before the header (the MANIFEST's magic); then one more
	 * read, which must find the end: the member has the size its header says, or fails */
	for (;;) {
		size_t want = size - done < CHUNK ? (size_t)(size - done) : CHUNK;
		ssize_t n = read(fd, buf, want ? want : 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = PFC_FAIL_NOOFF(err, IO, "'%s', member '%s': reading '%s': %s", w->name,
					     pfc_pack_shown(member, w->buf[0]), pfc_pack_shown(path, w->buf[1]), strerror(errno));
			goto out;
		}
		if ((!n && want) || (n && !want)) {
			ret = PFC_FAIL_NOOFF(err, IO, "'%s', member '%s': '%s' changed size while it was read (%llu bytes, then %s)",
					     w->name, pfc_pack_shown(member, w->buf[0]), pfc_pack_shown(path, w->buf[1]),
					     (unsigned long long)size, n ? "more" : "fewer");
			goto out;
		}
		if (!n)
			break;
		len = (size_t)n;
		if (!done && ((ret = w_header(w, member, size, buf, len, NULL, 0, err)) < 0 ||
			      (w->recording && w_stream(w, size) < 0 && (ret = w_fail(w, member, err)) < 0)))
			goto out;
		if ((ret = w_data(w, member, buf, len, err)) < 0)
			goto out;
		done += len;
	}
	ret = w_finish(w, member, err);
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return ret;
}

int pfc_packw_add_file(struct pfc_packw *w, const char *member, const char *path, struct pfc_error *err)
{
	return add_file(w, member, path, err);
}

/*
 * A member known by id without reading it.  Making a member's frame key reads all of its
 * bytes (hashing 16 MB for the .NET fixture's pack), and before that the caller maps the
 * file and reads its structure to find the holes: most of a small pack's time once its
 * frames are kept.  What the tar bytes hash to is kept too, under the caller's id of the
 * file's bytes, the member's name and what else shapes the tar bytes (libarchive's version,
 * whether holes are sparse); a later pack of the same file then takes the frame's key from
 * there.  The frame is written as it is and the member counted as w_header counts it:
 * libarchive's tar writer keeps nothing from one member to the next, so the tar stream is
 * the one it would have written (tests/pack.sh compares packs made both ways).
 */
static void sum_key(const struct pfc_packw *w, const char *id, const char *member, char key[PFC_PACKW_KEY_MAX])
{
	XXH128_hash_t h;
	int sparse = w->sparse, version = AR->archive_version_number();

	XXH3_128bits_reset(w->xxh);
	XXH3_128bits_update(w->xxh, id, strlen(id) + 1);
	XXH3_128bits_update(w->xxh, member, strlen(member) + 1);
	XXH3_128bits_update(w->xxh, &sparse, sizeof(sparse));
	XXH3_128bits_update(w->xxh, &version, sizeof(version));
	h = XXH3_128bits_digest(w->xxh);
	snprintf(key, PFC_PACKW_KEY_MAX, "pack-member-sum xxh3-128=%016llx%016llx",
		 (unsigned long long)h.high64, (unsigned long long)h.low64);
}

int pfc_packw_add_known(struct pfc_packw *w, const char *member, uint64_t size, const char *id, struct pfc_error *err)
{
	struct pfc_packw_frames *kf = w->kept, *ks = w->sums;
	char key[PFC_PACKW_KEY_MAX], fkey[PFC_PACKW_KEY_MAX];
	const void *p, *fp;
	size_t l, fl;
	uint64_t v[3];
	int got, ret;

	w->sum_key[0] = 0;
	/* the MANIFEST is first and never kept */
	if (!kf || !ks || !id || !w->n)
		return 0;
	sum_key(w, id, member, key);
	w->sum_member = XXH3_64bits(member, strlen(member));
	got = ks->get(ks, key, &p, &l);
	if (got == 1 && l != sizeof(v)) {
		ks->done(ks);
		ks->bad(ks, key);
		got = -1;
	}
	if (got != 1) {
		w->st.corrupt += got < 0;
		memcpy(w->sum_key, key, sizeof(key));	/* kept when the member is added */
		return 0;
	}
	memcpy(v, p, sizeof(v));
	ks->done(ks);
	if (v[2] < CACHE_MIN || v[2] > MEMBER_HOLD_MAX) {
		ks->bad(ks, key);
		w->st.corrupt++;
		memcpy(w->sum_key, key, sizeof(key));
		return 0;
	}
	frame_key(w, (XXH128_hash_t){ .low64 = v[1], .high64 = v[0] }, (size_t)v[2], fkey);
	got = kf->get(kf, fkey, &fp, &fl);
	if (got == 1 && (ZSTD_findFrameCompressedSize(fp, fl) != fl || ZSTD_getFrameContentSize(fp, fl) != v[2])) {
		kf->done(kf);
		kf->bad(kf, fkey);
		got = -1;
	}
	if (got != 1) {
		/* the frame is gone (evicted): the member is added and hashed again */
		w->st.corrupt += got < 0;
		memcpy(w->sum_key, key, sizeof(key));
		return 0;
	}
	if ((ret = w_check(w, member, size, NULL, 0, err)) < 0) {
		kf->done(kf);
		return ret;
	}
	ret = w_out(w, fp, fl);
	kf->done(kf);
	if (ret < 0)
		return w_fail(w, member, err);
	w->n++;
	w->total += size;
	w->st.hits++;
	w->st.known++;
	return 1;
}

/*
 * The recording's frame, made while the conversion runs: the recording is the largest member
 * of a frame-pointer recording's pack, and no other pack has it (no cache).  On 2 cores, a 64 MB
 * recording takes 0.084 s to convert to folded, and as long to compress at level -1 on one
 * thread (0.05 s with two workers after the conversion, which then waits for them): started
 * with the conversion, its frame is ready when the pack is written.  The frame is the one the
 * writer would make (one thread, the size pledged, the same tar header), checked when used:
 * the same bytes, made earlier.  PERFCONV_PACK_PRE=0 turns it off (the tests compare).
 */
struct pfc_packw_pre {
	pthread_t th;
	int cancel;           /* atomic: the thread stops early */
	int joined;
	int ok;               /* the frame is made */
	char *path, *member;
	struct stat st;       /* the recording when it was read */
	void *map;            /* its bytes */
	size_t size;
	unsigned char *head, *frame;
	size_t headlen, framelen;
};

struct cap {
	unsigned char *p;
	size_t len;
	int on;
};

/* libarchive's output while a header is written; after it, a failure (nothing more is wanted) */
static la_ssize_t cap_write(struct archive *a, void *cd, const void *buf, size_t len)
{
	struct cap *c = cd;
	unsigned char *np;

	(void)a;
	if (!c->on || !(np = realloc(c->p, c->len + len)))
		return -1;
	memcpy(np + c->len, buf, len);
	c->p = np;
	c->len += len;
	return (la_ssize_t)len;
}

/* The tar header libarchive writes for member with size bytes, as the writer's. */
static int head_bytes(const char *member, uint64_t size, unsigned char **out, size_t *len)
{
	struct archive *a = AR->archive_write_new();
	struct archive_entry *e = NULL;
	struct cap c = { .on = 1 };
	locale_t utf8, old;
	int ret = -1;

	if (a && (e = entry_new(member, size)) && AR->archive_write_set_format_pax_restricted(a) == ARCHIVE_OK &&
	    AR->archive_write_set_bytes_per_block(a, 0) == ARCHIVE_OK &&
	    AR->archive_write_open2(a, &c, NULL, cap_write, NULL, NULL) == ARCHIVE_OK) {
		old = pfc_pack_utf8_enter(&utf8);
		ret = AR->archive_write_header(a, e) == ARCHIVE_OK && c.len ? 0 : -1;
		pfc_pack_utf8_leave(utf8, old);
	}
	c.on = 0;
	if (e)
		AR->archive_entry_free(e);
	if (a)
		AR->archive_write_free(a);	/* its close fails at once: nothing more is written */
	if (ret < 0) {
		free(c.p);
		return -1;
	}
	*out = c.p;
	*len = c.len;
	return 0;
}

static void *pre_run(void *arg)
{
	struct pfc_packw_pre *p = arg;
	struct pfc_error err = { 0 };
	ZSTD_CCtx *z = NULL;
	uint64_t total;
	size_t cap, at = 0, left = 1;
	static const char pad[512];
	int fd;

	if (pfc_pack_ar_load(&err) < 0 || (fd = open(p->path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	/* a recording up to MEMBER_HOLD_MAX only: its frame is held until the pack is written, and
	 * memory must not follow the recording's size (a larger one is streamed by the writer) */
	if (fstat(fd, &p->st) < 0 || !S_ISREG(p->st.st_mode) || p->st.st_size <= 0 ||
	    (uint64_t)p->st.st_size > MEMBER_HOLD_MAX) {
		close(fd);
		return NULL;
	}
	p->size = (size_t)p->st.st_size;
	p->map = mmap(NULL, p->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p->map == MAP_FAILED) {
		p->map = NULL;
		return NULL;
	}
	madvise(p->map, p->size, MADV_SEQUENTIAL);
	if (head_bytes(p->member, p->size, &p->head, &p->headlen) < 0)
		return NULL;
	total = p->headlen + p->size + (-(uint64_t)p->size & 511);
	cap = ZSTD_compressBound((size_t)total);
	if (!(z = ZSTD_createCCtx()) || !(p->frame = malloc(cap)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, RECORDING_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(z, total)))
		goto out;
	/* the header, the recording a MB at a time (to stop soon when told), the padding */
	{
		ZSTD_outBuffer out = { p->frame, cap, 0 };
		ZSTD_inBuffer in = { p->head, p->headlen, 0 };
		if (ZSTD_isError(ZSTD_compressStream2(z, &out, &in, ZSTD_e_continue)) || in.pos != in.size)
			goto out;
		while (at < p->size) {
			size_t n = p->size - at < CHUNK ? p->size - at : CHUNK;
			ZSTD_inBuffer d = { (const char *)p->map + at, n, 0 };
			if (__atomic_load_n(&p->cancel, __ATOMIC_RELAXED) ||
			    ZSTD_isError(ZSTD_compressStream2(z, &out, &d, ZSTD_e_continue)) || d.pos != d.size)
				goto out;
			/* the pages compressed are not read again (the writer passes them by): dropped,
			 * so that they do not count in the process's memory */
			madvise((char *)p->map + at, n, MADV_DONTNEED);
			at += n;
		}
		in = (ZSTD_inBuffer){ pad, -(uint64_t)p->size & 511, 0 };
		while (left) {
			left = ZSTD_compressStream2(z, &out, &in, ZSTD_e_end);
			if (ZSTD_isError(left) || (left && out.pos == out.size))
				goto out;
		}
		p->framelen = out.pos;
		p->ok = 1;
	}
out:
	ZSTD_freeCCtx(z);
	return NULL;
}

struct pfc_packw_pre *pfc_packw_pre_start(const char *path, const char *member, const struct pfc_tuning *tuning)
{
	struct pfc_packw_pre *p;

	if ((tuning && tuning->pack_no_pre) || !(p = calloc(1, sizeof(*p))))
		return NULL;
	if (!(p->path = strdup(path)) || !(p->member = strdup(member)) || pthread_create(&p->th, NULL, pre_run, p)) {
		free(p->path);
		free(p->member);
		free(p);
		return NULL;
	}
	return p;
}

void pfc_packw_pre_free(struct pfc_packw_pre *p)
{
	if (!p)
		return;
	__atomic_store_n(&p->cancel, 1, __ATOMIC_RELAXED);
	if (!p->joined)
		pthread_join(p->th, NULL);
	if (p->map)
		munmap(p->map, p->size);
	free(p->head);
	free(p->frame);
	free(p->path);
	free(p->member);
	free(p);
}

/* The pre-made frame is this recording's: the same path, file, size and time of change. */
static int pre_usable(struct pfc_packw *w, struct pfc_packw_pre *p, const char *member, const char *path)
{
	struct stat st;

	if (!p || w->user_level)
		return 0;
	if (!p->joined)
		pthread_join(p->th, NULL);
	p->joined = 1;
	return p->ok && !strcmp(p->path, path) && !strcmp(p->member, member) && !stat(path, &st) &&
	       st.st_dev == p->st.st_dev && st.st_ino == p->st.st_ino && st.st_size == p->st.st_size &&
	       st.st_mtim.tv_sec == p->st.st_mtim.tv_sec && st.st_mtim.tv_nsec == p->st.st_mtim.tv_nsec;
}

int pfc_packw_add_recording(struct pfc_packw *w, const char *member, const char *path, struct pfc_packw_pre *pre,
			    struct pfc_error *err)
{
	int ret;

	w->recording = 1;
	if (!pre_usable(w, pre, member, path)) {
		ret = add_file(w, member, path, err);
		w->recording = 0;
		return ret;
	}
	/* the header as the writer makes it must be the one compressed: then the frame is
	 * written, and libarchive's bytes of the member are let go; else compressed here */
	if ((ret = w_header(w, member, pre->size, pre->map, pre->size, NULL, 0, err)) < 0)
		goto out;
	if (w->nsegs == 1 && w->held == pre->headlen && !memcmp(seg_at(w, &w->segs[0]), pre->head, pre->headlen)) {
		if (w_out(w, pre->frame, pre->framelen) < 0) {
			ret = w_fail(w, member, err);
			goto out;
		}
		w->skipping = 1;
	} else if (w_stream(w, pre->size) < 0) {
		ret = w_fail(w, member, err);
		goto out;
	}
	if ((ret = w_data(w, member, pre->map, pre->size, err)) < 0)
		goto out;
	ret = w_finish(w, member, err);
out:
	w->recording = 0;
	return ret;
}

int pfc_packw_close(struct pfc_packw *w, uint64_t *bytes, struct pfc_error *err)
{
	int ret = 0;

	if (!w)
		return 0;
	if (AR->archive_write_close(w->a) != ARCHIVE_OK)
		ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", w->name,
				     w->werr ? strerror(w->werr) : AR->archive_error_string(w->a));
	if (bytes)
		*bytes = w->bytes;
	w_free(w);
	return ret;
}

void pfc_packw_abort(struct pfc_packw *w)
{
	w_free(w);
}
