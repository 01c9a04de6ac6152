/*
 * pack.c - a pack's container: pax-restricted tar in zstd, through libarchive.  The writer
 * streams members to a FILE* with fixed metadata, so that the same members give the same
 * bytes.  The reader checks the zstd frames and the tar stream and copies every member into
 * a memory file, within the limits of pack.h; what the members mean is files.c's business.
 * A failure is an error value naming the member and the offset in the compressed pack.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
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
#include "converter/files/pack.h"

/*
 * libarchive, with the ICU and libxml2 it brings, takes longer to load than a small
 * conversion takes to run: it is loaded when a pack is read or written, not at start.
 */
#define AR_SONAME "libarchive.so.13"
#define AR_FUNCTIONS(X) \
	X(archive_entry_copy_pathname) \
	X(archive_entry_filetype) \
	X(archive_entry_free) \
	X(archive_entry_hardlink) \
	X(archive_entry_new) \
	X(archive_entry_pathname) \
	X(archive_entry_set_filetype) \
	X(archive_entry_set_gid) \
	X(archive_entry_set_mtime) \
	X(archive_entry_set_perm) \
	X(archive_entry_set_size) \
	X(archive_entry_set_uid) \
	X(archive_entry_size) \
	X(archive_entry_size_is_set) \
	X(archive_entry_sparse_add_entry) \
	X(archive_entry_sparse_count) \
	X(archive_entry_symlink) \
	X(archive_error_string) \
	X(archive_filter_bytes) \
	X(archive_filter_code) \
	X(archive_filter_count) \
	X(archive_read_data_block) \
	X(archive_read_free) \
	X(archive_read_new) \
	X(archive_read_next_header) \
	X(archive_read_open_memory) \
	X(archive_read_support_filter_zstd) \
	X(archive_read_support_format_tar) \
	X(archive_set_error) \
	X(archive_write_close) \
	X(archive_write_data) \
	X(archive_write_finish_entry) \
	X(archive_write_free) \
	X(archive_write_header) \
	X(archive_write_new) \
	X(archive_write_open2) \
	X(archive_write_set_bytes_in_last_block) \
	X(archive_write_set_bytes_per_block) \
	X(archive_write_set_format_pax_restricted) \
	X(archive_version_number)
static struct {
#define X(f) __typeof__(f) *f;
	AR_FUNCTIONS(X)
#undef X
	int ok;
	char why[160];
} ar;

static void ar_load_once(void)
{
	void *lib = dlopen(AR_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	const char *e;

	if (!lib) {
		e = dlerror();
		snprintf(ar.why, sizeof(ar.why), "%s", e ? e : "not found");
		return;
	}
#define X(f) \
	if (!(*(void **)&ar.f = dlsym(lib, #f))) { \
		snprintf(ar.why, sizeof(ar.why), "%s has no %s", AR_SONAME, #f); \
		return; \
	}
	AR_FUNCTIONS(X)
#undef X
	ar.ok = 1;
}

/* 0 with ar's functions set, or an error naming what is missing. */
static int ar_load(struct pfc_error *err)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, ar_load_once);
	return ar.ok ? 0 : PFC_FAIL_NOOFF(err, UNSUPPORTED, "packs need libarchive (Debian: libarchive13): %s", ar.why);
}

#define ZSTD_MAGIC "\x28\xb5\x2f\xfd"
#define MAGIC_LEN (sizeof(PFC_PACK_MAGIC) - 1)
#define CHUNK (1 << 20)                    /* add_file's reads */
#define RATIO_GRACE ((uint64_t)64 << 20)   /* tar bytes the ratio limit lets through */
/* On a 50 MB mix of perf.data and ELF files, on 2 cores: level 3 (zstd's default) writes
 * 360 MB/s at a ratio of 3.50, level 9 73 MB/s at 3.81, level 19 3 MB/s at 4.29.  On the
 * .NET fixture's pack (54 MB of files) level 1 takes a third of level 3's CPU (0.11 against
 * 0.33 s) for 8% more bytes: packing is to cost no more than twice a conversion. */
#define DEFAULT_LEVEL 1
#define STR(x) STR_(x)
#define STR_(x) #x

/* --- names ---------------------------------------------------------------------------------- */

/* Why a member name is refused, or NULL: names are lookup keys, never paths, but a pack that
 * GNU tar would extract outside its directory, or whose names garble a terminal, is refused. */
static const char *bad_name(const char *s)
{
	size_t n = strlen(s), i, comp = 0;

	if (!n)
		return "an empty name";
	if (n > PFC_PACK_MAX_NAME)
		return "a name longer than " STR(PFC_PACK_MAX_NAME) " bytes";
	if (s[0] == '/')
		return "an absolute name";
	for (i = 0; i <= n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c && (c < 0x20 || c == 0x7f))
			return "a control character in its name";
		if (c == '/' || !c) {
			if (i - comp == 2 && s[comp] == '.' && s[comp + 1] == '.')
				return "a '..' component in its name";
			comp = i + 1;
		}
	}
	return NULL;
}

/* A name for a message: control bytes escaped (a hostile name must not drive the terminal),
 * cut at 120 bytes. */
static const char *shown(const char *s, char out[160])
{
	size_t o = 0;

	for (; s && *s && o < 120; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f || c == '\\')
			o += (size_t)snprintf(out + o, 160 - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	if (s && *s)
		o += (size_t)snprintf(out + o, 160 - o, "...");
	out[o] = 0;
	return out;
}

/* libarchive converts names between the locale's charset and the UTF-8 of pax headers, and
 * perfconv runs in the C locale, where no name but an ASCII one converts: its calls that
 * convert run in C.UTF-8 on this thread.  Names must be UTF-8 (GNU tar warns on others). */
static locale_t utf8_enter(locale_t *utf8)
{
	*utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	return *utf8 ? uselocale(*utf8) : (locale_t)0;
}

static void utf8_leave(locale_t utf8, locale_t old)
{
	if (utf8) {
		uselocale(old);
		freelocale(utf8);
	}
}

/* --- reading ------------------------------------------------------------------------------- */

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
	char buf[2][160];     /* for shown() */
};

static uint64_t rd_off(struct rd *r)
{
	la_int64_t o = ar.archive_filter_bytes(r->a, -1);
	return o > 0 ? (uint64_t)o : 0;
}

/* The name of the member being read, for messages: libarchive's failures come between
 * members, then the last good one is named. */
static const char *rd_where(struct rd *r, char *out, size_t len)
{
	if (!r->p->n)
		snprintf(out, len, "at the first member");
	else
		snprintf(out, len, "after member '%s'", shown(r->p->m[r->p->n - 1].name, r->buf[1]));
	return out;
}

/* An archive bomb: past the first RATIO_GRACE bytes of tar stream (headers count: special
 * headers of no member can be a bomb too), each compressed byte may give PFC_PACK_MAX_RATIO. */
static int rd_ratio(struct rd *r, const char *name)
{
	la_int64_t in = ar.archive_filter_bytes(r->a, -1), out = ar.archive_filter_bytes(r->a, 0);

	if (out > 0 && in >= 0 && (uint64_t)out > RATIO_GRACE &&
	    ((uint64_t)out - RATIO_GRACE) / PFC_PACK_MAX_RATIO > (uint64_t)in)
		return PFC_FAIL(r->err, UNSUPPORTED, rd_off(r),
				"member '%s': %lld bytes from %lld compressed, over the limit of %d to 1 (an archive bomb)",
				shown(name, r->buf[0]), (long long)out, (long long)in, PFC_PACK_MAX_RATIO);
	return 0;
}

static int rd_member(struct rd *r, struct archive_entry *e)
{
	struct pfc_pack *p = r->p;
	const char *name = ar.archive_entry_pathname(e), *why;
	uint64_t off = rd_off(r), size, got = 0;
	struct member *m;
	int fd, sparse;

	if (!name)
		return PFC_FAIL(r->err, CORRUPT, off, "a member without a name %s",
				rd_where(r, r->buf[0], sizeof(r->buf[0])));
	if ((why = bad_name(name)))
		return PFC_FAIL(r->err, CORRUPT, off, "member '%s': %s", shown(name, r->buf[0]), why);
	if (ar.archive_entry_filetype(e) != AE_IFREG || ar.archive_entry_hardlink(e) || ar.archive_entry_symlink(e))
		return PFC_FAIL(r->err, UNSUPPORTED, off, "member '%s': not a regular file",
				shown(name, r->buf[0]));
	/* a sparse member (pax GNU.sparse 1.0): its holes are holes of the memory file */
	sparse = ar.archive_entry_sparse_count(e) > 0;
	if (!ar.archive_entry_size_is_set(e) || ar.archive_entry_size(e) < 0)
		return PFC_FAIL(r->err, CORRUPT, off, "member '%s': no size", shown(name, r->buf[0]));
	size = (uint64_t)ar.archive_entry_size(e);
	if (p->n >= PFC_PACK_MAX_MEMBERS)
		return PFC_FAIL(r->err, UNSUPPORTED, off, "member '%s': more than %d members",
				shown(name, r->buf[0]), PFC_PACK_MAX_MEMBERS);
	if (size > PFC_PACK_MAX_TOTAL - r->total)
		return PFC_FAIL(r->err, UNSUPPORTED, off, "member '%s': %llu bytes, over the limit of %llu for all members",
				shown(name, r->buf[0]), (unsigned long long)size, (unsigned long long)PFC_PACK_MAX_TOTAL);
	if (r->total + size > r->mem)
		return PFC_FAIL(r->err, UNSUPPORTED, off, "member '%s': %llu bytes, more than this machine's memory holds",
				shown(name, r->buf[0]), (unsigned long long)size);
	/* holes cost no memory until read, and a reader may read them: like the bytes of the
	 * tar stream, past RATIO_GRACE each compressed byte may declare PFC_PACK_MAX_RATIO */
	if (sparse) {
		la_int64_t in = ar.archive_filter_bytes(r->a, -1);
		r->holes += size;
		if (r->holes > RATIO_GRACE && (r->holes - RATIO_GRACE) / PFC_PACK_MAX_RATIO > (uint64_t)(in > 0 ? in : 0))
			return PFC_FAIL(r->err, UNSUPPORTED, off,
					"member '%s': sparse members of %llu bytes from %lld compressed, over the limit of %d to 1 (an archive bomb)",
					shown(name, r->buf[0]), (unsigned long long)r->holes, (long long)in, PFC_PACK_MAX_RATIO);
	}
	if (!p->n && strcmp(name, PFC_PACK_MANIFEST))
		return PFC_FAIL(r->err, CORRUPT, off, "member '%s': the first member must be %s",
				shown(name, r->buf[0]), PFC_PACK_MANIFEST);

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
				shown(name, r->buf[0]), strerror(errno),
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
		int ret = ar.archive_read_data_block(r->a, &buf, &len, &at);

		if (ret == ARCHIVE_EOF)
			break;
		if (ret != ARCHIVE_OK)
			return PFC_FAIL(r->err, CORRUPT, rd_off(r), "member '%s': %s",
					shown(name, r->buf[0]), ar.archive_error_string(r->a));
		/* in order, inside the size; a gap only in a sparse member */
		if (at < 0 || (uint64_t)at < got || (uint64_t)at > size || len > size - (uint64_t)at ||
		    ((uint64_t)at != got && !sparse))
			return PFC_FAIL(r->err, CORRUPT, rd_off(r), "member '%s': data past its size, out of order or with holes",
					shown(name, r->buf[0]));
		got = (uint64_t)at;
		for (size_t done = 0; done < len;) {
			ssize_t w = pwrite(fd, (const char *)buf + done, len - done, (off_t)(got + done));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return PFC_FAIL(r->err, IO, rd_off(r), "member '%s': writing its memory file: %s",
						shown(name, r->buf[0]), w < 0 ? strerror(errno) : "no progress");
			done += (size_t)w;
		}
		got += len;
		r->total += len;
		if (rd_ratio(r, name) < 0)
			return -r->err->code;
	}
	if (sparse && got < size && ftruncate(fd, (off_t)size) < 0)	/* a hole at the end */
		return PFC_FAIL(r->err, IO, rd_off(r), "member '%s': sizing its memory file: %s",
				shown(name, r->buf[0]), strerror(errno));
	if (got != size && !sparse)
		return PFC_FAIL(r->err, TRUNCATED, rd_off(r), "member '%s': %llu bytes of %llu",
				shown(name, r->buf[0]), (unsigned long long)got, (unsigned long long)size);
	r->data_end = (uint64_t)ar.archive_filter_bytes(r->a, 0);
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
	if ((ret = ar_load(err)) < 0)
		return ret;
	if (!(r.a = ar.archive_read_new()))
		return PFC_FAIL_NOOFF(err, NOMEM, "libarchive");
	/* zstd and tar only: never whatever else libarchive can detect */
	if (ar.archive_read_support_filter_zstd(r.a) != ARCHIVE_OK || ar.archive_read_support_format_tar(r.a) != ARCHIVE_OK) {
		ret = PFC_FAIL_NOOFF(err, UNSUPPORTED, "libarchive cannot read zstd and tar: %s", ar.archive_error_string(r.a));
		goto out;
	}
	if (ar.archive_read_open_memory(r.a, buf, len) != ARCHIVE_OK) {
		ret = PFC_FAIL(err, CORRUPT, rd_off(&r), "%s", ar.archive_error_string(r.a));
		goto out;
	}
	while ((ret = ar.archive_read_next_header(r.a, &e)) == ARCHIVE_OK) {
		if (ar.archive_filter_count(r.a) != 2 || ar.archive_filter_code(r.a, 0) != ARCHIVE_FILTER_ZSTD) {
			ret = PFC_FAIL(err, CORRUPT, 0, "not a pack: not one zstd stream");
			goto out;
		}
		if ((ret = rd_member(&r, e)) < 0 || (ret = rd_ratio(&r, ar.archive_entry_pathname(e))) < 0)
			goto out;
	}
	if (ret != ARCHIVE_EOF) {
		/* WARN and RETRY too: a pack of ours never makes libarchive warn */
		char where[200];
		ret = PFC_FAIL(err, CORRUPT, rd_off(&r), "%s: %s", rd_where(&r, where, sizeof(where)),
			       ar.archive_error_string(r.a) ? ar.archive_error_string(r.a) : "libarchive failed");
		goto out;
	}
	if (!p->n) {
		ret = PFC_FAIL(err, CORRUPT, rd_off(&r), "no member: the first member must be %s", PFC_PACK_MANIFEST);
		goto out;
	}
	/* libarchive ends a tar stream that stops at a block boundary as if it had its
	 * end-of-archive blocks: it had them only if it read past the last member's data */
	if ((uint64_t)ar.archive_filter_bytes(r.a, 0) < r.data_end + 512) {
		ret = PFC_FAIL(err, TRUNCATED, rd_off(&r), "the tar stream ends after member '%s', without its end-of-archive blocks",
			       shown(p->m[p->n - 1].name, r.buf[0]));
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
				       shown(p->sorted[i]->name, r.buf[0]));
			break;
		}
	}
out:
	ar.archive_read_free(r.a);
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
	old = utf8_enter(&utf8);
	ret = pack_read(p, buf, len, err);
	utf8_leave(utf8, old);
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

/* --- writing -------------------------------------------------------------------------------- */

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
	char buf[2][160];     /* for shown() */
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
	ar.archive_set_error(a, w->werr, "%s", strerror(w->werr));
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
		ar.archive_set_error(a, w->werr, "%s", strerror(w->werr));
		return ARCHIVE_FATAL;
	}
	return ARCHIVE_OK;
}

/* libarchive's failure as a WRITE error naming the output and the member */
static int w_fail(struct pfc_packw *w, const char *member, struct pfc_error *err)
{
	const char *why = w->werr ? strerror(w->werr) : ar.archive_error_string(w->a);

	return PFC_FAIL_NOOFF(err, WRITE, "'%s', member '%s': %s", w->name, shown(member, w->buf[0]),
			      why ? why : "libarchive failed");
}

/* The member's data is all given: libarchive writes its padding, and its frame ends. */
static int w_finish(struct pfc_packw *w, const char *member, struct pfc_error *err)
{
	if (ar.archive_write_finish_entry(w->a) != ARCHIVE_OK || w_end(w) < 0)
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
		ar.archive_write_close(w->a);
		ar.archive_write_free(w->a);
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

int pfc_packw_open(struct pfc_packw **out, FILE *fp, const char *name, int level, struct pfc_error *err)
{
	struct pfc_packw *w;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int th;

	*out = NULL;
	if ((th = ar_load(err)) < 0)
		return th;
	if (level && (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel()))
		return PFC_FAIL_NOOFF(err, USAGE, "zstd level %d: not between %d and %d", level, ZSTD_minCLevel(),
				      ZSTD_maxCLevel());
	if (!(w = calloc(1, sizeof(*w))) || !(w->name = strdup(name ? name : "<stdout>")) || !(w->a = ar.archive_write_new()) ||
	    !(w->xxh = XXH3_createState())) {
		w_free(w);
		return PFC_FAIL_NOOFF(err, NOMEM, "pack writer");
	}
	w->fp = fp;
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
	if (ar.archive_write_set_format_pax_restricted(w->a) != ARCHIVE_OK ||
	    /* unbuffered: a member's bytes all come before its frame ends, and nothing is
	     * written past the end-of-archive blocks */
	    ar.archive_write_set_bytes_per_block(w->a, 0) != ARCHIVE_OK ||
	    ar.archive_write_set_bytes_in_last_block(w->a, 1) != ARCHIVE_OK ||
	    ar.archive_write_open2(w->a, w, NULL, w_write, w_close, NULL) != ARCHIVE_OK) {
		int ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", w->name, ar.archive_error_string(w->a));
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
	struct archive_entry *e = ar.archive_entry_new();

	if (!e)
		return NULL;
	ar.archive_entry_copy_pathname(e, member);
	ar.archive_entry_set_filetype(e, AE_IFREG);
	ar.archive_entry_set_perm(e, 0644);
	ar.archive_entry_set_size(e, (la_int64_t)size);
	ar.archive_entry_set_mtime(e, 0, 0);
	ar.archive_entry_set_uid(e, 0);
	ar.archive_entry_set_gid(e, 0);
	return e;
}

/* The checks the reader makes, so that what is written can be read; then the header.
 * head: the first bytes of the member (the MANIFEST's magic). */
static int w_check(struct pfc_packw *w, const char *member, uint64_t size, const void *head, size_t headlen,
		   struct pfc_error *err)
{
	const char *why = bad_name(member);

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
		return PFC_FAIL_NOOFF(err, WRITE, "'%s', member '%s': %s", w->name, shown(member, w->buf[0]), why);
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
						ar.archive_entry_sparse_add_entry(e, (la_int64_t)rb, (la_int64_t)(re - rb));
					rb = b;
					re = en;
					open_region = 1;
				}
			}
			if (i < nholes)
				at = holes[2 * i] + holes[2 * i + 1];
		}
		if (open_region)
			ar.archive_entry_sparse_add_entry(e, (la_int64_t)rb, (la_int64_t)(re - rb));
	}
	/* every member's header is held; the recording's data is streamed (w_stream) */
	if (w_begin(w) < 0) {
		ar.archive_entry_free(e);
		return w_fail(w, member, err);
	}
	old = utf8_enter(&utf8);
	ret = ar.archive_write_header(w->a, e);
	utf8_leave(utf8, old);
	ar.archive_entry_free(e);
	if (ret != ARCHIVE_OK)
		return w_fail(w, member, err);
	w->n++;
	w->total += size;
	return 0;
}

static int w_data(struct pfc_packw *w, const char *member, const void *buf, size_t len, struct pfc_error *err)
{
	while (len) {
		la_ssize_t n = ar.archive_write_data(w->a, buf, len);
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

/* tests and measurements: PERFCONV_PACK_SPARSE=0 writes holes as runs of zeros (the packs
 * of perfconv before sparse members, which any tar reader reads as plain files) */
static int sparse_ok(void)
{
	const char *v = getenv("PERFCONV_PACK_SPARSE");

	return !v || strcmp(v, "0");
}

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
					      shown(member, w->buf[0]));
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

	if ((ret = w_header(w, member, len, b, len, sparse_ok() ? holes : NULL, sparse_ok() ? n : 0, err)) < 0)
		return ret;
	for (i = 0; i <= n; i++) {
		uint64_t hb = i < n ? holes[2 * i] : len, he = i < n ? hb + holes[2 * i + 1] : len;
		if (hb > len || he > len || he < hb || hb < at)
			return PFC_FAIL_NOOFF(err, WRITE, "'%s', member '%s': holes out of order", w->name,
					      shown(member, w->buf[0]));
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
						      shown(member, w->buf[0]), shown(path, w->buf[1]));
			}
			buf = nb;
		}
		if ((n = read(fd, buf + len, cap - len)) < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = PFC_FAIL_NOOFF(err, IO, "'%s', member '%s': reading '%s': %s", w->name,
					     shown(member, w->buf[0]), shown(path, w->buf[1]), strerror(errno));
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
		ret = PFC_FAIL_NOOFF(err, OPEN, "'%s', member '%s': '%s': %s", w->name, shown(member, w->buf[0]),
				     shown(path, w->buf[1]), why);
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
					     shown(member, w->buf[0]), shown(path, w->buf[1]), strerror(errno));
			goto out;
		}
		if ((!n && want) || (n && !want)) {
			ret = PFC_FAIL_NOOFF(err, IO, "'%s', member '%s': '%s' changed size while it was read (%llu bytes, then %s)",
					     w->name, shown(member, w->buf[0]), shown(path, w->buf[1]),
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
	int sparse = sparse_ok(), version = ar.archive_version_number();

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
	struct archive *a = ar.archive_write_new();
	struct archive_entry *e = NULL;
	struct cap c = { .on = 1 };
	locale_t utf8, old;
	int ret = -1;

	if (a && (e = entry_new(member, size)) && ar.archive_write_set_format_pax_restricted(a) == ARCHIVE_OK &&
	    ar.archive_write_set_bytes_per_block(a, 0) == ARCHIVE_OK &&
	    ar.archive_write_open2(a, &c, NULL, cap_write, NULL, NULL) == ARCHIVE_OK) {
		old = utf8_enter(&utf8);
		ret = ar.archive_write_header(a, e) == ARCHIVE_OK && c.len ? 0 : -1;
		utf8_leave(utf8, old);
	}
	c.on = 0;
	if (e)
		ar.archive_entry_free(e);
	if (a)
		ar.archive_write_free(a);	/* its close fails at once: nothing more is written */
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

	if (ar_load(&err) < 0 || (fd = open(p->path, O_RDONLY | O_CLOEXEC)) < 0)
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

struct pfc_packw_pre *pfc_packw_pre_start(const char *path, const char *member)
{
	struct pfc_packw_pre *p;
	const char *v = getenv("PERFCONV_PACK_PRE");

	if ((v && !strcmp(v, "0")) || !(p = calloc(1, sizeof(*p))))
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
	if (ar.archive_write_close(w->a) != ARCHIVE_OK)
		ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", w->name,
				     w->werr ? strerror(w->werr) : ar.archive_error_string(w->a));
	if (bytes)
		*bytes = w->bytes;
	w_free(w);
	return ret;
}

void pfc_packw_abort(struct pfc_packw *w)
{
	w_free(w);
}
