/*
 * packread.c - reading a pack: its zstd frames checked, its tar stream read through
 * libarchive and every member copied into a memory file within the limits of pack.h, the
 * members looked up by name, and a pack told from a recording by its first bytes.  A failure
 * is an error value naming the member and the offset in the compressed pack.  Writing is
 * packwrite.c's; what the members mean is files.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>
#include "converter/files/packint.h"

#define RATIO_GRACE ((uint64_t)64 << 20)   /* tar bytes the ratio limit lets through */

struct member {
	char *name;
	int fd;               /* memory file with the bytes */
	uint64_t size;
	uint64_t off;         /* compressed offset where its header was read, for messages */
	void *map;            /* its bytes mapped, on the first pfc_pack_bytes (atomic) */
};

struct pfc_pack {
	struct member *m;     /* in the pack's order */
	size_t n, cap;
	struct member **sorted;   /* by name, for bsearch */
	char *path;           /* NULL: opened from memory */
};

struct rd {
	struct pfc_pack *p;
	struct archive *a;
	struct pfc_error *err;
	uint64_t total;       /* member bytes so far */
	uint64_t mem;         /* RAM and swap: members live in memory */
	uint64_t data_end;    /* tar stream offset after the last member's data */
	uint64_t holes;       /* bytes of sparse members' holes, declared so far */
	char buf[2][160];     /* for pfc_pack_shown() */
};

static uint64_t rd_off(struct rd *r)
{
	la_int64_t o = AR->archive_filter_bytes(r->a, -1);
	return o > 0 ? (uint64_t)o : 0;
}

/* The name of the member being read, for messages: libarchive's failures come between
 * members, then the last good one is named. */
static const char *rd_where(struct rd *r, char *out, size_t len)
{
	if (!r->p->n)
		snprintf(out, len, "at the first member");
	else
		snprintf(out, len, "after member '%s'", pfc_pack_shown(r->p->m[r->p->n - 1].name, r->buf[1]));
	return out;
}

/* An archive bomb: past the first RATIO_GRACE bytes of tar stream (headers count: special
 * headers of no member can be a bomb too), each compressed byte may give PFC_PACK_MAX_RATIO. */
static int rd_ratio(struct rd *r, const char *name)
{
	la_int64_t in = AR->archive_filter_bytes(r->a, -1), out = AR->archive_filter_bytes(r->a, 0);

	if (out > 0 && in >= 0 && (uint64_t)out > RATIO_GRACE &&
	    ((uint64_t)out - RATIO_GRACE) / PFC_PACK_MAX_RATIO > (uint64_t)in)
		return PFC_FAIL(r->err, UNSUPPORTED, rd_off(r),
				"member '%s': %lld bytes from %lld compressed, over the limit of %d to 1 (an archive bomb)",
				pfc_pack_shown(name, r->buf[0]), (long long)out, (long long)in, PFC_PACK_MAX_RATIO);
	return 0;
}

static int rd_member(struct rd *r, struct archive_entry *e)
{
	struct pfc_pack *p = r->p;
	const char *name = AR->archive_entry_pathname(e), *why;
	uint64_t off = rd_off(r), size, got = 0;
	struct member *m;
	int fd, sparse;

	if (!name)
		return PFC_FAIL(r->err, CORRUPT, off, "a member without a name %s",
				rd_where(r, r->buf[0], sizeof(r->buf[0])));
	if ((why = pfc_pack_bad_name(name)))
		return PFC_FAIL(r->err, CORRUPT, off, "member '%s': %s", pfc_pack_shown(name, r->buf[0]), why);
	if (AR->archive_entry_filetype(e) != AE_IFREG || AR->archive_entry_hardlink(e) || AR->archive_entry_symlink(e))
		return PFC_FAIL(r->err, UNSUPPORTED, off, "member '%s': not a regular file",
				pfc_pack_shown(name, r->buf[0]));
	/* a sparse member (pax GNU.sparse 1.0): its holes are holes of the memory file */
	sparse = AR->archive_entry_sparse_count(e) > 0;
	if (!AR->archive_entry_size_is_set(e) || AR->archive_entry_size(e) < 0)
		return PFC_FAIL(r->err, CORRUPT, off, "member '%s': no size", pfc_pack_shown(name, r->buf[0]));
	size = (uint64_t)AR->archive_entry_size(e);
	if (p->n >= PFC_PACK_MAX_MEMBERS)
		return PFC_FAIL(r->err, UNSUPPORTED, off, "member '%s': more than %d members",
				pfc_pack_shown(name, r->buf[0]), PFC_PACK_MAX_MEMBERS);
	if (size > PFC_PACK_MAX_TOTAL - r->total)
		return PFC_FAIL(r->err, UNSUPPORTED, off, "member '%s': %llu bytes, over the limit of %llu for all members",
				pfc_pack_shown(name, r->buf[0]), (unsigned long long)size, (unsigned long long)PFC_PACK_MAX_TOTAL);
	if (r->total + size > r->mem)
		return PFC_FAIL(r->err, UNSUPPORTED, off, "member '%s': %llu bytes, more than this machine's memory holds",
				pfc_pack_shown(name, r->buf[0]), (unsigned long long)size);
	/* holes cost no memory until read, and a reader may read them: like the bytes of the
	 * tar stream, past RATIO_GRACE each compressed byte may declare PFC_PACK_MAX_RATIO */
	if (sparse) {
		la_int64_t in = AR->archive_filter_bytes(r->a, -1);
		r->holes += size;
		if (r->holes > RATIO_GRACE && (r->holes - RATIO_GRACE) / PFC_PACK_MAX_RATIO > (uint64_t)(in > 0 ? in : 0))
			return PFC_FAIL(r->err, UNSUPPORTED, off,
					"member '%s': sparse members of %llu bytes from %lld compressed, over the limit of %d to 1 (an archive bomb)",
					pfc_pack_shown(name, r->buf[0]), (unsigned long long)r->holes, (long long)in, PFC_PACK_MAX_RATIO);
	}
	if (!p->n && strcmp(name, PFC_PACK_MANIFEST))
		return PFC_FAIL(r->err, CORRUPT, off, "member '%s': the first member must be %s",
				pfc_pack_shown(name, r->buf[0]), PFC_PACK_MANIFEST);

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct member *nm = realloc(p->m, cap * sizeof(*nm));
		if (!nm)
			return PFC_FAIL_NOOFF(r->err, NOMEM, "pack members");
		p->m = nm;
		p->cap = cap;
	}
	if ((fd = memfd_create("perfpack", MFD_CLOEXEC)) < 0)
		return PFC_FAIL(r->err, IO, off, "member '%s': cannot create a memory file: %s%s",
				pfc_pack_shown(name, r->buf[0]), strerror(errno),
				errno == EMFILE ? " (one open file a member: raise ulimit -n)" : "");
	m = &p->m[p->n];
	*m = (struct member){ .name = strdup(name), .fd = fd, .size = size, .off = off };
	p->n++;	/* closed with the pack from here on */
	if (!m->name)
		return PFC_FAIL_NOOFF(r->err, NOMEM, "pack members");

	for (;;) {
		const void *buf;
		size_t len;
		la_int64_t at;
		int ret = AR->archive_read_data_block(r->a, &buf, &len, &at);

		if (ret == ARCHIVE_EOF)
			break;
		if (ret != ARCHIVE_OK)
			return PFC_FAIL(r->err, CORRUPT, rd_off(r), "member '%s': %s",
					pfc_pack_shown(name, r->buf[0]), AR->archive_error_string(r->a));
		/* in order, inside the size; a gap only in a sparse member */
		if (at < 0 || (uint64_t)at < got || (uint64_t)at > size || len > size - (uint64_t)at ||
		    ((uint64_t)at != got && !sparse))
			return PFC_FAIL(r->err, CORRUPT, rd_off(r), "member '%s': data past its size, out of order or with holes",
					pfc_pack_shown(name, r->buf[0]));
		got = (uint64_t)at;
		for (size_t done = 0; done < len;) {
			ssize_t w = pwrite(fd, (const char *)buf + done, len - done, (off_t)(got + done));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return PFC_FAIL(r->err, IO, rd_off(r), "member '%s': writing its memory file: %s",
						pfc_pack_shown(name, r->buf[0]), w < 0 ? strerror(errno) : "no progress");
			done += (size_t)w;
		}
		got += len;
		r->total += len;
		if (rd_ratio(r, name) < 0)
			return -r->err->code;
	}
	if (sparse && got < size && ftruncate(fd, (off_t)size) < 0)	/* a hole at the end */
		return PFC_FAIL(r->err, IO, rd_off(r), "member '%s': sizing its memory file: %s",
				pfc_pack_shown(name, r->buf[0]), strerror(errno));
	if (got != size && !sparse)
		return PFC_FAIL(r->err, TRUNCATED, rd_off(r), "member '%s': %llu bytes of %llu",
				pfc_pack_shown(name, r->buf[0]), (unsigned long long)got, (unsigned long long)size);
	r->data_end = (uint64_t)AR->archive_filter_bytes(r->a, 0);
	if (p->n == 1) {
		char head[MAGIC_LEN];
		if (pread(fd, head, MAGIC_LEN, 0) != (ssize_t)MAGIC_LEN || memcmp(head, PFC_PACK_MAGIC, MAGIC_LEN))
			return PFC_FAIL(r->err, CORRUPT, off, "member '%s': it does not start with '%.*s'",
					PFC_PACK_MANIFEST, (int)MAGIC_LEN - 1, PFC_PACK_MAGIC);
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const struct member *x = *(const struct member *const *)a, *y = *(const struct member *const *)b;
	int c = strcmp(x->name, y->name);

	return c ? c : x < y ? -1 : x > y;
}

/* The pack is whole zstd frames, and nothing after them: a pack cut short anywhere is an
 * error (libarchive accepts a tar stream that ends at a block boundary, and stops reading
 * at the end-of-archive blocks without looking at the rest of the frame). */
static int check_frames(const unsigned char *buf, size_t len, struct pfc_error *err)
{
	size_t pos = 0;

	if (len < 4 || memcmp(buf, ZSTD_MAGIC, 4))
		return PFC_FAIL(err, CORRUPT, 0, "not a pack: no zstd frame");
	while (pos < len) {
		size_t n = ZSTD_findFrameCompressedSize(buf + pos, len - pos);
		if (ZSTD_isError(n) && ZSTD_getErrorCode(n) == ZSTD_error_srcSize_wrong)
			return PFC_FAIL(err, TRUNCATED, len, "the zstd frame at offset %zu is cut short", pos);
		if (ZSTD_isError(n) && pos && ZSTD_getErrorCode(n) == ZSTD_error_prefix_unknown)
			return PFC_FAIL(err, CORRUPT, pos, "%zu bytes after the last zstd frame", len - pos);
		if (ZSTD_isError(n))
			return PFC_FAIL(err, CORRUPT, pos, "the zstd frame at offset %zu: %s", pos, ZSTD_getErrorName(n));
		pos += n;
	}
	return 0;
}

static int pack_read(struct pfc_pack *p, const void *buf, size_t len, struct pfc_error *err)
{
	struct rd r = { .p = p, .err = err, .mem = PFC_PACK_MAX_TOTAL };
	struct archive_entry *e;
	struct sysinfo si;
	int ret;

	if ((ret = check_frames(buf, len, err)) < 0)
		return ret;
	if (!sysinfo(&si))
		r.mem = ((uint64_t)si.totalram + si.totalswap) * (si.mem_unit ? si.mem_unit : 1);
	if ((ret = pfc_pack_ar_load(err)) < 0)
		return ret;
	if (!(r.a = AR->archive_read_new()))
		return PFC_FAIL_NOOFF(err, NOMEM, "libarchive");
	/* zstd and tar only: never whatever else libarchive can detect */
	if (AR->archive_read_support_filter_zstd(r.a) != ARCHIVE_OK || AR->archive_read_support_format_tar(r.a) != ARCHIVE_OK) {
		ret = PFC_FAIL_NOOFF(err, UNSUPPORTED, "libarchive cannot read zstd and tar: %s", AR->archive_error_string(r.a));
		goto out;
	}
	if (AR->archive_read_open_memory(r.a, buf, len) != ARCHIVE_OK) {
		ret = PFC_FAIL(err, CORRUPT, rd_off(&r), "%s", AR->archive_error_string(r.a));
		goto out;
	}
	while ((ret = AR->archive_read_next_header(r.a, &e)) == ARCHIVE_OK) {
		if (AR->archive_filter_count(r.a) != 2 || AR->archive_filter_code(r.a, 0) != ARCHIVE_FILTER_ZSTD) {
			ret = PFC_FAIL(err, CORRUPT, 0, "not a pack: not one zstd stream");
			goto out;
		}
		if ((ret = rd_member(&r, e)) < 0 || (ret = rd_ratio(&r, AR->archive_entry_pathname(e))) < 0)
			goto out;
	}
	if (ret != ARCHIVE_EOF) {
		/* WARN and RETRY too: a pack of ours never makes libarchive warn */
		char where[200];
		ret = PFC_FAIL(err, CORRUPT, rd_off(&r), "%s: %s", rd_where(&r, where, sizeof(where)),
			       AR->archive_error_string(r.a) ? AR->archive_error_string(r.a) : "libarchive failed");
		goto out;
	}
	if (!p->n) {
		ret = PFC_FAIL(err, CORRUPT, rd_off(&r), "no member: the first member must be %s", PFC_PACK_MANIFEST);
		goto out;
	}
	/* libarchive ends a tar stream that stops at a block boundary as if it had its
	 * end-of-archive blocks: it had them only if it read past the last member's data */
	if ((uint64_t)AR->archive_filter_bytes(r.a, 0) < r.data_end + 512) {
		ret = PFC_FAIL(err, TRUNCATED, rd_off(&r), "the tar stream ends after member '%s', without its end-of-archive blocks",
			       pfc_pack_shown(p->m[p->n - 1].name, r.buf[0]));
		goto out;
	}
	if (!(p->sorted = malloc(p->n * sizeof(*p->sorted)))) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "pack members");
		goto out;
	}
	for (size_t i = 0; i < p->n; i++)
		p->sorted[i] = &p->m[i];
	qsort(p->sorted, p->n, sizeof(*p->sorted), by_name);
	ret = 0;
	for (size_t i = 1; i < p->n; i++) {
		if (!strcmp(p->sorted[i - 1]->name, p->sorted[i]->name)) {
			ret = PFC_FAIL(err, CORRUPT, p->sorted[i]->off, "member '%s': a second member of that name",
				       pfc_pack_shown(p->sorted[i]->name, r.buf[0]));
			break;
		}
	}
out:
	AR->archive_read_free(r.a);
	return ret;
}

void pfc_pack_close(struct pfc_pack *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		if (p->m[i].map && p->m[i].size)
			munmap(p->m[i].map, p->m[i].size);
		close(p->m[i].fd);
		free(p->m[i].name);
	}
	free(p->m);
	free(p->sorted);
	free(p->path);
	free(p);
}

static int pack_open(struct pfc_pack **out, const void *buf, size_t len, const char *path, struct pfc_error *err)
{
	struct pfc_pack *p = calloc(1, sizeof(*p));
	int had = err && err->code, ret;
	locale_t utf8, old;

	*out = NULL;
	if (!p || (path && !(p->path = strdup(path)))) {
		free(p);
		return PFC_FAIL_NOOFF(err, NOMEM, "pack");
	}
	old = pfc_pack_utf8_enter(&utf8);
	ret = pack_read(p, buf, len, err);
	pfc_pack_utf8_leave(utf8, old);
	if (ret < 0) {
		if (err && !had && path)
			snprintf(err->file, sizeof(err->file), "%s", path);
		pfc_pack_close(p);
		return ret;
	}
	*out = p;
	return 0;
}

int pfc_pack_open_mem(struct pfc_pack **out, const void *buf, size_t len, struct pfc_error *err)
{
	return pack_open(out, buf, len, NULL, err);
}

int pfc_pack_open(struct pfc_pack **out, const char *path, struct pfc_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret, had = err && err->code;
	struct stat st;
	void *buf = NULL;
	size_t len = 0, cap = 0;

	*out = NULL;
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = PFC_FAIL_NOOFF(err, OPEN, "%s", strerror(errno));
		goto fail;
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		len = (size_t)st.st_size;
		if ((buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
			buf = NULL;
			ret = PFC_FAIL_NOOFF(err, IO, "%s", strerror(errno));
			goto fail;
		}
		close(fd);
		ret = pack_open(out, buf, len, path, err);
		munmap(buf, len);
		return ret;
	}
	for (;;) {	/* a pipe, or an empty file: read it all */
		ssize_t n;
		if (len == cap) {
			void *nb = cap < PFC_PACK_MAX_TOTAL ? realloc(buf, cap = cap ? cap * 2 : 1 << 16) : NULL;
			if (!nb) {
				ret = PFC_FAIL_NOOFF(err, NOMEM, "reading the pack");
				goto fail;
			}
			buf = nb;
		}
		if ((n = read(fd, (char *)buf + len, cap - len)) < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = PFC_FAIL(err, IO, len, "%s", strerror(errno));
			goto fail;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	ret = pack_open(out, buf, len, path, err);
	free(buf);
	return ret;
fail:
	if (err && !had)
		snprintf(err->file, sizeof(err->file), "%s", path);
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

static int by_name_key(const void *key, const void *elem)
{
	return strcmp(key, (*(const struct member *const *)elem)->name);
}

static struct member *find(const struct pfc_pack *p, const char *name)
{
	struct member **m;

	if (!p || !name)
		return NULL;
	m = bsearch(name, p->sorted, p->n, sizeof(*p->sorted), by_name_key);
	return m ? *m : NULL;
}

size_t pfc_pack_count(const struct pfc_pack *p)
{
	return p ? p->n : 0;
}

const char *pfc_pack_name_at(const struct pfc_pack *p, size_t i)
{
	return p && i < p->n ? p->m[i].name : NULL;
}

const char *pfc_pack_path(const struct pfc_pack *p)
{
	return p && p->path ? p->path : "<memory>";
}

int pfc_pack_fd(const struct pfc_pack *p, const char *name, uint64_t *size)
{
	struct member *m = find(p, name);

	if (!m)
		return -1;
	if (size)
		*size = m->size;
	return m->fd;
}

const void *pfc_pack_bytes(const struct pfc_pack *p, const char *name, uint64_t *size)
{
	static const char empty[1];
	struct member *m = find(p, name);
	void *map, *none = NULL;

	if (!m)
		return NULL;
	if (size)
		*size = m->size;
	if (!m->size)
		return empty;
	if ((map = __atomic_load_n(&m->map, __ATOMIC_ACQUIRE)))
		return map;
	if (m->size > SIZE_MAX || (map = mmap(NULL, (size_t)m->size, PROT_READ, MAP_SHARED, m->fd, 0)) == MAP_FAILED)
		return NULL;
	/* two threads may map it at once: one mapping stays, the other goes */
	if (!__atomic_compare_exchange_n(&m->map, &none, map, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(map, (size_t)m->size);
		map = none;
	}
	return map;
}

/* --- detecting ------------------------------------------------------------------------------ */

/* The start of the first frame only: the MANIFEST's tar header and its first line.  They are
 * in its first block, which can only be decoded whole: up to 128 KiB compressed. */
#define DETECT_MAX ((128 << 10) + 64)

int pfc_pack_detect_mem(const void *buf, size_t len)
{
	unsigned char out[512 + MAGIC_LEN];
	ZSTD_inBuffer in = { buf, len < DETECT_MAX ? len : DETECT_MAX, 0 };
	ZSTD_outBuffer o = { out, sizeof(out), 0 };
	/* one decoder a thread, kept: its window is allocated once (a batch detects every
	 * file it scans, a fuzzer every input) */
	static __thread ZSTD_DCtx *d;

	if (len < 4 || memcmp(buf, ZSTD_MAGIC, 4) || (!d && !(d = ZSTD_createDCtx())))
		return 0;
	ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
	while (o.pos < o.size && in.pos < in.size) {
		size_t r = ZSTD_decompressStream(d, &o, &in);
		if (ZSTD_isError(r) || !r)
			break;
	}
	return o.pos == o.size && !memcmp(out, PFC_PACK_MANIFEST, sizeof(PFC_PACK_MANIFEST)) &&
	       (out[156] == '0' || !out[156]) && !memcmp(out + 257, "ustar", 5) &&
	       !memcmp(out + 512, PFC_PACK_MAGIC, MAGIC_LEN);
}

int pfc_pack_detect(const char *path)
{
	unsigned char *buf;
	int fd, ret = 0;
	ssize_t n;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return 0;
	if ((buf = malloc(DETECT_MAX))) {
		n = pread(fd, buf, DETECT_MAX, 0);
		ret = n > 0 && pfc_pack_detect_mem(buf, (size_t)n);
		free(buf);
	}
	close(fd);
	return ret;
}
