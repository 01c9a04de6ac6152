/*
 * test_pack.c - unit tests of the pack container (converter/files/packwrite.c, packread.c): members written
 * with pfc_packw (an empty one, a 5 MB file read in chunks, names with spaces and UTF-8)
 * come back byte for byte, by name and in order, and the same members give the same bytes;
 * the writer refuses what the reader would.  Hostile packs, built here as raw tar in zstd,
 * are refused with the member and an offset: a pack cut at every byte, its tar stream cut at
 * every byte (in whole zstd frames), trailing bytes, names with '..', absolute or with
 * control characters, links, directories, duplicates, a first member that is not the
 * MANIFEST, a member over the size limit, and an archive bomb (1 GiB of zeros in 32 KB,
 * refused by the ratio limit after 64 MiB).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#include "converter/files/pack.h"
#include "converter/native/symcache.h"
#include "tests/unit/check.h"

#define MANIFEST_TEXT PFC_PACK_MAGIC "recording perf.data\n"
#define BIG (5u << 20)

static char tmpdir[256];

/* --- packs written with pfc_packw ------------------------------------------------------------ */

struct mem {
	char *buf;
	size_t len;
	FILE *fp;
};

static int w_open(struct mem *m, struct pfc_packw **w)
{
	struct pfc_error err = { 0 };

	memset(m, 0, sizeof(*m));
	return (m->fp = open_memstream(&m->buf, &m->len)) ? pfc_packw_open(w, m->fp, "mem.perfpack", 0, NULL, &err) : -1;
}

/* close the writer and the stream: the pack's bytes are m->buf, m->len */
static int w_close(struct mem *m, struct pfc_packw *w)
{
	struct pfc_error err = { 0 };
	uint64_t bytes = 0;
	int ret = pfc_packw_close(w, &bytes, &err);

	fclose(m->fp);
	return ret == 0 && bytes == m->len ? 0 : -1;
}

/* A small pack: the MANIFEST and two members. */
static int small_pack(struct mem *m)
{
	struct pfc_packw *w;
	struct pfc_error err = { 0 };

	if (w_open(m, &w) < 0)
		return -1;
	if (pfc_packw_add_bytes(w, PFC_PACK_MANIFEST, MANIFEST_TEXT, strlen(MANIFEST_TEXT), &err) < 0 ||
	    pfc_packw_add_bytes(w, "perf.data", "PERFILE2 and some bytes", 23, &err) < 0 ||
	    pfc_packw_add_bytes(w, "root/usr/lib/libx.so", "", 0, &err) < 0) {
		pfc_packw_abort(w);
		fclose(m->fp);
		return -1;
	}
	return w_close(m, w);
}

/* The 5 MB file: this test's own binary, then a counter, so that it compresses somewhat. */
static int make_big(const char *path, unsigned char **bytes)
{
	unsigned char *b = malloc(BIG);
	FILE *f;
	size_t n = 0;

	if (!b)
		return -1;
	if ((f = fopen("/proc/self/exe", "rb"))) {
		n = fread(b, 1, BIG / 2, f);
		fclose(f);
	}
	for (size_t i = n; i < BIG; i++)
		b[i] = (unsigned char)(i % 251 < 100 ? i / 4096 : i * 7);
	if (!(f = fopen(path, "wb")) || fwrite(b, 1, BIG, f) != BIG || fclose(f)) {
		free(b);
		return -1;
	}
	*bytes = b;
	return 0;
}

static void test_round_trip(void)
{
	char path[300], big[300];
	unsigned char *bigb = NULL;
	const char *names[] = { PFC_PACK_MANIFEST, "empty", "root/usr/lib/big file.so", "a name with spaces",
				"root/tmp/\xc3\xa9t\xc3\xa9.map", "proc/status" };
	const char *spaced = "contents of a member\nwhose name has spaces\n";
	struct pfc_packw *w = NULL;
	struct pfc_pack *p = NULL;
	struct pfc_error err = { 0 };
	uint64_t size = 0, bytes = 0;
	const void *b;
	FILE *fp;
	int fd;

	snprintf(path, sizeof(path), "%s/test_pack.XXXXXX", tmpdir);
	snprintf(big, sizeof(big), "%s/test_pack_big.XXXXXX", tmpdir);
	if ((fd = mkstemp(path)) < 0 || !(fp = fdopen(fd, "wb")) || (fd = mkstemp(big)) < 0 || close(fd) ||
	    make_big(big, &bigb) < 0) {
		check(0, "round trip: cannot write temporary files in %s", tmpdir);
		return;
	}
	check(pfc_packw_open(&w, fp, path, 0, NULL, &err) == 0, "round trip: open the writer: %s", err.detail);
	check(pfc_packw_add_bytes(w, names[0], MANIFEST_TEXT, strlen(MANIFEST_TEXT), &err) == 0, "add MANIFEST: %s", err.detail);
	check(pfc_packw_add_bytes(w, names[1], NULL, 0, &err) == 0, "add an empty member: %s", err.detail);
	check(pfc_packw_add_file(w, names[2], big, &err) == 0, "add a 5 MB file: %s", err.detail);
	check(pfc_packw_add_bytes(w, names[3], spaced, strlen(spaced), &err) == 0, "add a name with spaces: %s", err.detail);
	check(pfc_packw_add_bytes(w, names[4], "x", 1, &err) == 0, "add a UTF-8 name: %s", err.detail);
	/* a procfs file says it is empty: what is read is packed */
	check(pfc_packw_add_file(w, names[5], "/proc/self/status", &err) == 0, "add /proc/self/status: %s", err.detail);
	check(pfc_packw_close(w, &bytes, &err) == 0 && bytes > 0, "round trip: close the writer: %s", err.detail);
	fclose(fp);

	check(pfc_pack_detect(path) == 1, "round trip: detect the pack");
	check(pfc_pack_detect(big) == 0, "round trip: a file that is not a pack is not detected");
	check(pfc_pack_open(&p, path, &err) == 0, "round trip: open: %s", err.detail);
	if (!p)
		goto out;
	check(pfc_pack_count(p) == 6, "round trip: %zu members, expected 6", pfc_pack_count(p));
	for (size_t i = 0; i < 6; i++)
		check(pfc_pack_name_at(p, i) && !strcmp(pfc_pack_name_at(p, i), names[i]), "round trip: member %zu is '%s'",
		      i, pfc_pack_name_at(p, i));
	check(!pfc_pack_name_at(p, 6), "round trip: no member 6");
	check(!strcmp(pfc_pack_path(p), path), "round trip: the path");
	b = pfc_pack_bytes(p, names[0], &size);
	check(b && size == strlen(MANIFEST_TEXT) && !memcmp(b, MANIFEST_TEXT, size), "round trip: MANIFEST bytes");
	size = 1;
	b = pfc_pack_bytes(p, "empty", &size);
	check(b && size == 0, "round trip: an empty member gives a pointer and size 0");
	b = pfc_pack_bytes(p, names[2], &size);
	check(b && size == BIG && !memcmp(b, bigb, BIG), "round trip: the 5 MB member's bytes");
	check(pfc_pack_bytes(p, names[2], NULL) == b, "round trip: the bytes are mapped once");
	fd = pfc_pack_fd(p, names[3], &size);
	{
		char buf[100] = { 0 };
		check(fd >= 0 && size == strlen(spaced) && pread(fd, buf, sizeof(buf), 0) == (ssize_t)size &&
		      !strcmp(buf, spaced), "round trip: the spaced member through its fd");
	}
	b = pfc_pack_bytes(p, names[4], &size);
	check(b && size == 1 && *(const char *)b == 'x', "round trip: the UTF-8 name");
	b = pfc_pack_bytes(p, names[5], &size);
	check(b && size > 10 && !memcmp(b, "Name:", 5), "round trip: /proc/self/status was read");
	check(pfc_pack_fd(p, "missing", NULL) == -1 && !pfc_pack_bytes(p, "missing", &size), "round trip: no member 'missing'");
	check(pfc_pack_fd(p, "root/usr/lib/big file.s", NULL) == -1, "round trip: a prefix of a name is not a name");
	pfc_pack_close(p);
out:
	unlink(path);
	unlink(big);
	free(bigb);
}

static void test_deterministic(void)
{
	struct mem a, b;

	if (small_pack(&a) < 0 || small_pack(&b) < 0) {
		check(0, "deterministic: write");
		return;
	}
	check(a.len == b.len && !memcmp(a.buf, b.buf, a.len), "deterministic: the same members give the same bytes");
	check(pfc_pack_detect_mem(a.buf, a.len) == 1, "deterministic: detect_mem");
	free(a.buf);
	free(b.buf);
}

/* The writer refuses what the reader would refuse. */
static void test_writer_refuses(void)
{
	static const char *bad[] = { "", "/abs", "../x", "a/../b", "a/..", "esc\x1b[31m", "tab\tname" };
	char longname[PFC_PACK_MAX_NAME + 2];
	struct pfc_packw *w;
	struct pfc_error err = { 0 };
	struct mem m;

	check(pfc_packw_open(&w, stdout, "x", 99, NULL, &err) < 0 && err.code == PFC_ERR_USAGE, "writer: level 99 is refused");
	memset(&err, 0, sizeof(err));
	if (w_open(&m, &w) < 0) {
		check(0, "writer: open");
		return;
	}
	check(pfc_packw_add_bytes(w, "perf.data", "x", 1, &err) < 0 && err.code == PFC_ERR_WRITE &&
	      strstr(err.detail, "mem.perfpack") && strstr(err.detail, "perf.data"),
	      "writer: a first member that is not the MANIFEST is refused, naming the output and member: %s", err.detail);
	memset(&err, 0, sizeof(err));
	check(pfc_packw_add_bytes(w, PFC_PACK_MANIFEST, "perfpack 2\n", 11, &err) < 0,
	      "writer: a MANIFEST without the magic is refused");
	memset(&err, 0, sizeof(err));
	check(pfc_packw_add_bytes(w, PFC_PACK_MANIFEST, MANIFEST_TEXT, strlen(MANIFEST_TEXT), &err) == 0, "writer: MANIFEST");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		check(pfc_packw_add_bytes(w, bad[i], "x", 1, &err) < 0 && !strchr(err.detail, '\x1b'),
		      "writer: name %zu is refused, and not printed raw", i);
	}
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	memset(&err, 0, sizeof(err));
	check(pfc_packw_add_bytes(w, longname, "x", 1, &err) < 0, "writer: a name over PFC_PACK_MAX_NAME is refused");
	memset(&err, 0, sizeof(err));
	check(pfc_packw_add_bytes(w, "latin1-\xe9", "x", 1, &err) < 0, "writer: a name that is not UTF-8 is refused");
	memset(&err, 0, sizeof(err));
	check(pfc_packw_add_bytes(w, "a..b/..c/d..", "x", 1, &err) == 0, "writer: dots that are not '..' are fine");
	check(pfc_packw_add_bytes(w, "a..b/..c/d..", "y", 1, &err) < 0 && strstr(err.detail, "second member"),
	      "writer: a duplicate name is refused");
	memset(&err, 0, sizeof(err));
	check(pfc_packw_add_file(w, "dir", "/", &err) < 0 && err.code == PFC_ERR_OPEN, "writer: a directory is refused");
	memset(&err, 0, sizeof(err));
	check(pfc_packw_add_file(w, "nofile", "/nonexistent/file", &err) < 0 && strstr(err.detail, "No such file"),
	      "writer: a missing file is refused: %s", err.detail);
	/* sysfs says 4096 bytes and has fewer: the size the header said cannot be kept */
	memset(&err, 0, sizeof(err));
	if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) == 0)
		check(pfc_packw_add_file(w, "thp", "/sys/kernel/mm/transparent_hugepage/enabled", &err) < 0 &&
		      strstr(err.detail, "changed size"), "writer: a file shorter than its size is refused: %s", err.detail);
	pfc_packw_abort(w);
	fclose(m.fp);
	free(m.buf);
}

/* --- hostile packs: raw tar in zstd ----------------------------------------------------------- */

struct tarb {
	unsigned char *b;
	size_t len, cap;
};

static void tar_put(struct tarb *t, const void *p, size_t n)
{
	if (t->len + n > t->cap) {
		t->cap = (t->len + n) * 2;
		t->b = realloc(t->b, t->cap);
	}
	if (p)
		memcpy(t->b + t->len, p, n);
	else
		memset(t->b + t->len, 0, n);
	t->len += n;
}

/* A ustar header and the member's data, padded to 512. */
static void tar_add(struct tarb *t, const char *name, char type, const char *link, const void *data, uint64_t size)
{
	unsigned char h[512] = { 0 };
	unsigned sum = 0;

	memcpy(h, name, strlen(name) < 100 ? strlen(name) : 100);
	memcpy(h + 100, "0000644", 7);
	memcpy(h + 108, "0000000", 7);
	memcpy(h + 116, "0000000", 7);
	if (size < (1ull << 33)) {
		snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
	} else {	/* base-256, as GNU tar writes large sizes */
		h[124] = 0x80;
		for (int i = 0; i < 8; i++)
			h[135 - i] = (unsigned char)(size >> (8 * i));
	}
	memcpy(h + 136, "00000000000", 11);
	h[156] = (unsigned char)type;
	if (link)
		memcpy(h + 157, link, strlen(link));
	memcpy(h + 257, "ustar\0" "00", 8);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	tar_put(t, h, 512);
	if (data) {
		tar_put(t, data, (size_t)size);
		tar_put(t, NULL, (512 - size % 512) % 512);
	}
}

static void tar_manifest(struct tarb *t)
{
	tar_add(t, PFC_PACK_MANIFEST, '0', NULL, MANIFEST_TEXT, strlen(MANIFEST_TEXT));
}

static unsigned char *zst(const void *src, size_t len, size_t *out)
{
	unsigned char *z = malloc(ZSTD_compressBound(len));

	*out = ZSTD_compress(z, ZSTD_compressBound(len), src, len, 1);
	return z;
}

/* Open the pack; it must fail with code (0: any) and a detail containing want. */
static void refused(const char *what, const void *buf, size_t len, int code, const char *want)
{
	struct pfc_pack *p = NULL;
	struct pfc_error err = { 0 };
	int ret = pfc_pack_open_mem(&p, buf, len, &err);

	check(ret < 0 && !p && -ret == err.code && (!code || err.code == code) && err.has_offset &&
	      (!want || strstr(err.detail, want)), "%s: refused (code %d, expected %d; offset %d; detail '%s')",
	      what, err.code, code, err.has_offset, err.detail);
	check(!strchr(err.detail, '\x1b'), "%s: no raw control character in the message", what);
	pfc_pack_close(p);
}

static void refused_tar(const char *what, struct tarb *t, int code, const char *want)
{
	size_t len;
	unsigned char *z;

	tar_put(t, NULL, 1024);
	z = zst(t->b, t->len, &len);
	refused(what, z, len, code, want);
	free(z);
	free(t->b);
	memset(t, 0, sizeof(*t));
}

static void test_hostile(void)
{
	struct tarb t = { 0 };
	size_t len;
	unsigned char *z;
	struct pfc_pack *p;
	struct pfc_error err = { 0 };

	/* the raw builder makes a pack the reader takes: the cases below differ in one thing */
	tar_manifest(&t);
	tar_add(&t, "ok", '0', NULL, "data", 4);
	tar_put(&t, NULL, 1024);
	z = zst(t.b, t.len, &len);
	check(pfc_pack_open_mem(&p, z, len, &err) == 0 && pfc_pack_count(p) == 2, "hostile: the control pack opens: %s",
	      err.detail);
	pfc_pack_close(p);
	free(z);
	/* the same tar stream without its end blocks, or cut after its last header */
	t.len -= 1024;
	z = zst(t.b, t.len, &len);
	refused("no end blocks", z, len, PFC_ERR_TRUNCATED, "end-of-archive");
	free(z);
	t.len -= 512;
	z = zst(t.b, t.len, &len);
	refused("cut after a header", z, len, 0, NULL);
	free(z);
	free(t.b);
	memset(&t, 0, sizeof(t));

	tar_manifest(&t);
	tar_add(&t, "../x", '0', NULL, "data", 4);
	refused_tar("../x", &t, PFC_ERR_CORRUPT, "'../x'");
	tar_manifest(&t);
	tar_add(&t, "a/../../x", '0', NULL, "data", 4);
	refused_tar("a/../../x", &t, PFC_ERR_CORRUPT, "'..'");
	tar_manifest(&t);
	tar_add(&t, "/abs", '0', NULL, "data", 4);
	refused_tar("/abs", &t, PFC_ERR_CORRUPT, "absolute");
	tar_manifest(&t);
	tar_add(&t, "esc\x1b]0;title\x07", '0', NULL, "data", 4);
	refused_tar("control characters", &t, PFC_ERR_CORRUPT, "esc\\x1b]0;title\\x07");
	tar_manifest(&t);
	tar_add(&t, "link", '2', "/etc/passwd", NULL, 0);
	refused_tar("symlink", &t, PFC_ERR_UNSUPPORTED, "'link'");
	tar_manifest(&t);
	tar_add(&t, "hard", '1', PFC_PACK_MANIFEST, NULL, 0);
	refused_tar("hard link", &t, PFC_ERR_UNSUPPORTED, "'hard'");
	tar_manifest(&t);
	tar_add(&t, "dir/", '5', NULL, NULL, 0);
	refused_tar("directory", &t, PFC_ERR_UNSUPPORTED, "not a regular file");
	tar_manifest(&t);
	tar_add(&t, "dev", '3', NULL, NULL, 0);
	refused_tar("character device", &t, PFC_ERR_UNSUPPORTED, "not a regular file");
	tar_manifest(&t);
	tar_add(&t, "twice", '0', NULL, "one", 3);
	tar_add(&t, "other", '0', NULL, "", 0);
	tar_add(&t, "twice", '0', NULL, "two", 3);
	refused_tar("duplicate", &t, PFC_ERR_CORRUPT, "second member");
	tar_add(&t, "perf.data", '0', NULL, "data", 4);
	tar_manifest(&t);
	refused_tar("MANIFEST second", &t, PFC_ERR_CORRUPT, PFC_PACK_MANIFEST);
	tar_add(&t, PFC_PACK_MANIFEST, '0', NULL, "perfpack 9\n", 11);
	refused_tar("MANIFEST without the magic", &t, PFC_ERR_CORRUPT, "perfpack 1");
	refused_tar("no member", &t, PFC_ERR_CORRUPT, "no member");
	tar_manifest(&t);
	tar_add(&t, "huge", '0', NULL, NULL, (uint64_t)65 << 30);
	refused_tar("65 GiB member", &t, PFC_ERR_UNSUPPORTED, "'huge'");

	/* a tar stream that is not compressed, and a zstd stream with a tar of junk */
	tar_manifest(&t);
	tar_put(&t, NULL, 1024);
	refused("plain tar", t.b, t.len, PFC_ERR_CORRUPT, "zstd");
	memset(t.b, 'j', t.len);
	z = zst(t.b, t.len, &len);
	refused("zstd of junk", z, len, PFC_ERR_CORRUPT, NULL);
	free(z);
	free(t.b);
	memset(&t, 0, sizeof(t));
	refused("empty", "", 0, PFC_ERR_CORRUPT, NULL);
}

/* Every cut of a small pack is refused; so are trailing bytes (frames, or garbage). */
static void test_truncated(void)
{
	struct mem m;
	unsigned char *buf;
	size_t cut, bad = 0, first = 0;

	if (small_pack(&m) < 0) {
		check(0, "truncated: write");
		return;
	}
	for (cut = 0; cut < m.len; cut++) {
		struct pfc_pack *p = NULL;
		struct pfc_error err = { 0 };
		/* a copy of exactly the cut size, so that ASan sees any read past it */
		unsigned char *c = malloc(cut ? cut : 1);
		memcpy(c, m.buf, cut);
		if (pfc_pack_open_mem(&p, c, cut, &err) == 0 || !err.code || !err.has_offset) {
			if (!bad++)
				first = cut;
			pfc_pack_close(p);
		}
		free(c);
	}
	check(!bad, "truncated: %zu of %zu cuts were not refused (the first at %zu)", bad, m.len, first);

	/* the tar stream inside cut at every byte and compressed again, whole frames: refused as
	 * long as a member's bytes or the first end-of-archive block are missing */
	{
		/* one frame a member (and one for the end blocks, of no stated size) */
		size_t tl = 0, at = 0, fl;
		unsigned char *tar, *z;
		size_t tlen;
		while (at < m.len && !ZSTD_isError(fl = ZSTD_findFrameCompressedSize(m.buf + at, m.len - at))) {
			unsigned long long c = ZSTD_getFrameContentSize(m.buf + at, fl);
			tl += c == ZSTD_CONTENTSIZE_UNKNOWN || c == ZSTD_CONTENTSIZE_ERROR ? 1 << 16 : (size_t)c;
			at += fl;
		}
		tar = malloc(tl ? tl : 1);
		tlen = ZSTD_decompress(tar, tl, m.buf, m.len);
		ZSTD_CCtx *cc = ZSTD_createCCtx();

		check(!ZSTD_isError(tlen) && tlen > 1024 && tlen % 512 == 0, "truncated: the tar stream inside");
		z = malloc(ZSTD_compressBound(tlen));
		bad = 0;
		for (cut = 0; !ZSTD_isError(tlen) && cut + 512 < tlen; cut++) {
			struct pfc_pack *p = NULL;
			struct pfc_error err = { 0 };
			size_t zl = ZSTD_compressCCtx(cc, z, ZSTD_compressBound(tlen), tar, cut, 1);
			if (pfc_pack_open_mem(&p, z, zl, &err) == 0 || !err.code) {
				if (!bad++)
					first = cut;
				pfc_pack_close(p);
			}
		}
		check(!bad, "truncated: %zu cuts of the tar stream were not refused (the first at %zu)", bad, first);
		ZSTD_freeCCtx(cc);
		free(z);
		free(tar);
	}
	buf = malloc(m.len + 512);
	memcpy(buf, m.buf, m.len);
	memcpy(buf + m.len, "garbage", 7);
	refused("trailing garbage", buf, m.len + 7, PFC_ERR_CORRUPT, NULL);
	memset(buf + m.len, 0, 512);
	refused("trailing zeros", buf, m.len + 512, PFC_ERR_CORRUPT, NULL);
	free(buf);
	free(m.buf);
}

/* 1 GiB of zeros in 32 KB: a MANIFEST, then a member of 1 GiB whose data (and the end blocks)
 * are a hand-made zstd frame of RLE blocks.  The ratio limit must stop it after 64 MiB. */
static void test_bomb(void)
{
	struct tarb t = { 0 };
	uint64_t zeros = ((uint64_t)1 << 30) + 1024, left;
	size_t len, n;
	unsigned char *z, *pack;
	struct timespec t0, t1;
	double secs;

	tar_manifest(&t);
	tar_add(&t, "zeros", '0', NULL, NULL, (uint64_t)1 << 30);
	z = zst(t.b, t.len, &len);
	pack = malloc(len + 6 + (zeros / (128 << 10) + 1) * 4);
	memcpy(pack, z, len);
	n = len;
	/* frame header: no content size, no checksum; window 128 KiB */
	memcpy(pack + n, "\x28\xb5\x2f\xfd\x00\x38", 6);
	n += 6;
	for (left = zeros; left;) {
		uint32_t bs = left < (128 << 10) ? (uint32_t)left : 128 << 10;
		uint32_t bh = (uint32_t)(left == bs) | 1u << 1 | bs << 3;	/* last?, RLE, size */
		pack[n++] = (unsigned char)bh;
		pack[n++] = (unsigned char)(bh >> 8);
		pack[n++] = (unsigned char)(bh >> 16);
		pack[n++] = 0;
		left -= bs;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	refused("bomb", pack, n, PFC_ERR_UNSUPPORTED, "bomb");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	check(secs < 1.5, "bomb: refused in %.2f s", secs);
	free(pack);
	free(z);
	free(t.b);
}

/* One zstd frame a member, and one for the end blocks: each decompresses to whole 512-byte
 * tar blocks, the first to the MANIFEST's header and data. */
static void test_frames(void)
{
	struct mem m;
	size_t at = 0, fl, frames = 0, odd = 0;
	unsigned char out[1 << 14];

	if (small_pack(&m) < 0) {
		check(0, "frames: write");
		return;
	}
	while (at < m.len && !ZSTD_isError(fl = ZSTD_findFrameCompressedSize(m.buf + at, m.len - at))) {
		size_t n = ZSTD_decompress(out, sizeof(out), m.buf + at, fl);
		if (ZSTD_isError(n) || n % 512 || (!frames && (n != 1024 || memcmp(out + 257, "ustar", 5) ||
							   memcmp(out + 512, PFC_PACK_MAGIC, 8))))
			odd++;
		frames++;
		at += fl;
	}
	check(at == m.len && frames == 4 && !odd, "frames: %zu frames (4 wanted), %zu not whole members", frames, odd);
	free(m.buf);
}

/* A pack written with the frame cache: cold, warm, and with the entry damaged, the same bytes;
 * the warm one from the cache, the damaged entry counted and written again. */
static void test_frame_cache(void)
{
	char dir[300];
	struct mem m[3];
	struct pfc_packw_cache_stats st[3];
	unsigned char *big = malloc(1 << 18);
	char cmd[800];
	int i, ok = 1;
	struct pfc_symcache_frames kf;

	snprintf(dir, sizeof(dir), "%s/test_pack_cache.%ld", tmpdir, (long)getpid());
	pfc_symcache_frames_init(&kf, dir);
	for (i = 0; i < (1 << 18); i++)
		big[i] = (unsigned char)(i * 7 / 5 + (i >> 9));
	for (i = 0; i < 3; i++) {
		struct pfc_packw *w;
		struct pfc_error err = { 0 };
		if (i == 2) {	/* a byte in the middle of the entry changed */
			snprintf(cmd, sizeof(cmd), "f=$(ls %s/pack/* | head -1) && printf X | "
				 "dd of=\"$f\" bs=1 seek=$(($(wc -c <\"$f\") / 2)) conv=notrunc status=none", dir);
			ok &= system(cmd) == 0;
		}
		if (w_open(&m[i], &w) < 0 || (pfc_packw_keep(w, &kf.ops), 0) ||
		    pfc_packw_add_bytes(w, PFC_PACK_MANIFEST, MANIFEST_TEXT, strlen(MANIFEST_TEXT), &err) < 0 ||
		    pfc_packw_add_bytes(w, "files/big", big, 1 << 18, &err) < 0) {
			check(0, "frame cache: pack %d: %s", i, err.detail);
			return;
		}
		pfc_packw_cache_stats(w, &st[i]);
		ok &= w_close(&m[i], w) == 0;
	}
	check(ok, "frame cache: packs written, the entry damaged");
	check(m[0].len == m[1].len && !memcmp(m[0].buf, m[1].buf, m[0].len) && m[0].len == m[2].len &&
	      !memcmp(m[0].buf, m[2].buf, m[0].len), "frame cache: a miss, a hit, a damaged entry give the same bytes");
	check(st[0].misses == 1 && !st[0].hits && st[1].hits == 1 && !st[1].misses && st[2].misses == 1 &&
	      st[2].corrupt == 1 && !st[2].hits, "frame cache: miss, hit, corrupt (%llu %llu, %llu %llu, %llu %llu %llu)",
	      (unsigned long long)st[0].hits, (unsigned long long)st[0].misses, (unsigned long long)st[1].hits,
	      (unsigned long long)st[1].misses, (unsigned long long)st[2].hits, (unsigned long long)st[2].misses,
	      (unsigned long long)st[2].corrupt);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		check(0, "frame cache: remove %s", dir);
	for (i = 0; i < 3; i++)
		free(m[i].buf);
	free(big);
}

int main(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s", t && *t ? t : "/tmp");
	test_round_trip();
	test_deterministic();
	test_writer_refuses();
	test_hostile();
	test_truncated();
	test_frames();
	test_frame_cache();
	test_bomb();
	return check_done("test_pack");
}
