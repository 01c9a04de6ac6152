/*
 * test_symbols.c - checks symtab.c, elfsym.c, kallsyms.c and demangle.c against perf 6.1:
 * every frame of every fixture's expected `perf script` output whose DSO is a file or
 * [kernel.kallsyms] must get the same symbol name and offset from our lookup.  Build-ids
 * come from the fixture's perf.data (BUILD_ID feature, HEADER_BUILD_ID records, MMAP2).
 * usage: test_symbols [FIXTURES_DIR]   (default "fixtures")
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lzma.h>

#include "converter/perffile/perf_file.h"
#include "converter/native/symtab.h"

#define MAX_SHOWN 20

struct counts {
	unsigned long passed, failed, shown;
	unsigned long user, kernel, inlined, unknown;
};

/* ---------- small helpers ---------- */

/* snprintf into a PATH_MAX buffer; a path that does not fit just fails to open later */
static void pathf(char *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, r, first = 1 << 20;
	struct stat st;

	if (!f)
		return NULL;
	/* sized to the file: a megabyte for every small file is slow under ASan */
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 && st.st_size < (1 << 30))
		first = (size_t)st.st_size + 65537;
	for (;;) {
		if (cap - n < 65536) {
			char *p = realloc(buf, cap = cap ? cap * 2 : first);

			if (!p) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static char *xz_decode(const char *in, size_t inlen, size_t *outlen)
{
	lzma_stream s = LZMA_STREAM_INIT;
	size_t cap = inlen * 8 + 4096;
	char *out = malloc(cap);
	lzma_ret r;

	if (!out || lzma_stream_decoder(&s, UINT64_MAX, 0) != LZMA_OK) {
		free(out);
		return NULL;
	}
	s.next_in = (const uint8_t *)in;
	s.avail_in = inlen;
	s.next_out = (uint8_t *)out;
	s.avail_out = cap - 1;
	for (;;) {
		r = lzma_code(&s, LZMA_FINISH);
		if (r == LZMA_STREAM_END)
			break;
		if (r != LZMA_OK && r != LZMA_BUF_ERROR) {
			free(out);
			lzma_end(&s);
			return NULL;
		}
		if (s.avail_out == 0) {
			size_t used = cap - 1;
			char *p = realloc(out, cap *= 2);

			if (!p) {
				free(out);
				lzma_end(&s);
				return NULL;
			}
			out = p;
			s.next_out = (uint8_t *)out + used;
			s.avail_out = cap - 1 - used;
		} else if (r == LZMA_BUF_ERROR) {
			free(out);
			lzma_end(&s);
			return NULL;
		}
	}
	*outlen = cap - 1 - s.avail_out;
	out[*outlen] = '\0';
	lzma_end(&s);
	return out;
}

/* name or name.xz, decompressed; NULL if neither exists */
static char *read_expected(const char *path)
{
	char xzpath[PATH_MAX];
	size_t len, outlen;
	char *raw, *out;

	raw = read_file(path, &len);
	if (raw)
		return raw;
	pathf(xzpath, "%s.xz", path);
	raw = read_file(xzpath, &len);
	if (!raw)
		return NULL;
	out = xz_decode(raw, len, &outlen);
	free(raw);
	return out;
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* ---------- build-ids from the perf.data file ---------- */

struct bid {
	char path[PATH_MAX];
	uint8_t id[20];
	int len;
};

struct bids {
	struct bid *v;
	size_t n, cap;
};

static void bids_add(struct bids *b, const char *path, size_t pathlen, const uint8_t *id, int len)
{
	struct bid *p;
	size_t i;

	if (pathlen >= PATH_MAX || len <= 0 || len > 20)
		return;
	for (i = 0; i < b->n; i++)
		if (strlen(b->v[i].path) == pathlen && !memcmp(b->v[i].path, path, pathlen))
			return;	/* first one wins */
	if (b->n == b->cap) {	/* entries hold a whole path: grow by doubling */
		size_t cap = b->cap ? b->cap * 2 : 16;
		p = realloc(b->v, cap * sizeof(*p));
		if (!p)
			return;
		b->v = p;
		b->cap = cap;
	}
	p = &b->v[b->n++];
	memcpy(p->path, path, pathlen);
	p->path[pathlen] = '\0';
	memcpy(p->id, id, len);
	p->len = len;
}

static const struct bid *bids_find(const struct bids *b, const char *path)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		if (!strcmp(b->v[i].path, path))
			return &b->v[i];
	return NULL;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint16_t rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

/* a perf_record_header_build_id: header, pid, 24 id bytes, file name */
static void parse_build_id_rec(struct bids *b, const uint8_t *p, size_t size)
{
	uint16_t misc;
	int len = 20;

	if (size < 36)
		return;
	misc = rd16(p + 4);
	if (misc & PFC_MISC_BUILD_ID_SIZE)
		len = p[12 + 20];
	bids_add(b, (const char *)p + 36, strnlen((const char *)p + 36, size - 36), p + 12, len);
}

/* records of a data stream: HEADER_BUILD_ID and MMAP2 with an inline build-id */
static void scan_records(struct bids *b, const uint8_t *p, size_t size)
{
	size_t pos = 0;

	while (size - pos >= 8) {
		uint32_t type = rd32(p + pos);
		uint16_t misc = rd16(p + pos + 4), rsize = rd16(p + pos + 6);
		const uint8_t *r = p + pos;

		if (rsize < 8 || rsize > size - pos)
			break;
		if (type == PFC_REC_HEADER_BUILD_ID) {
			parse_build_id_rec(b, r, rsize);
		} else if (type == PERF_RECORD_MMAP2 && (misc & PFC_MISC_MMAP_BUILD_ID) && rsize > 72) {
			int len = r[40];

			if (len > 20)
				len = 20;
			bids_add(b, (const char *)r + 72, strnlen((const char *)r + 72, rsize - 72), r + 44, len);
		}
		pos += rsize;
	}
}

static void read_bids(const char *file, struct bids *b)
{
	size_t len, i, nfeat = 0;
	uint8_t *d = (uint8_t *)read_file(file, &len);
	uint64_t hsize, doff, dsize, foff;

	if (!d)
		return;
	if (len >= 16 && rd64(d) == PFC_MAGIC2 && rd64(d + 8) == PFC_PIPE_HEADER_SIZE) {
		scan_records(b, d + 16, len - 16);	/* pipe mode */
		free(d);
		return;
	}
	if (len < PFC_FILE_HEADER_SIZE || rd64(d) != PFC_MAGIC2) {
		free(d);
		return;
	}
	hsize = rd64(d + 8);
	doff = rd64(d + 40);
	dsize = rd64(d + 48);
	(void)hsize;
	if (doff <= len && dsize <= len - doff)
		scan_records(b, d + doff, dsize);
	/* feature sections follow the data, one per set bit in bit order */
	foff = doff + dsize;
	for (i = 0; i < PFC_FEAT_BITS; i++) {
		if (!(d[72 + i / 8] >> (i % 8) & 1))
			continue;
		if (i == PFC_FEAT_BUILD_ID && foff + 16 * (nfeat + 1) <= len) {
			uint64_t so = rd64(d + foff + 16 * nfeat), ss = rd64(d + foff + 16 * nfeat + 8);

			if (so <= len && ss <= len - so) {
				size_t pos = 0;

				while (ss - pos >= 8) {
					uint16_t rs = rd16(d + so + pos + 6);

					if (rs < 8 || rs > ss - pos)
						break;
					parse_build_id_rec(b, d + so + pos, rs);
					pos += rs;
				}
			}
		}
		nfeat++;
	}
	free(d);
}

/* ---------- loaded DSOs ---------- */

struct dso {
	char path[PATH_MAX];
	struct pfc_symtab t;
	struct pfc_dso_load info;
};

struct dsos {
	struct dso *v;
	size_t n;
};

static void dsos_free(struct dsos *ds)
{
	size_t i;

	for (i = 0; i < ds->n; i++)
		pfc_symtab_free(&ds->v[i].t);
	free(ds->v);
	ds->v = NULL;
	ds->n = 0;
}

static struct dso *dsos_get(struct dsos *ds, const char *path, const struct pfc_symopts *o,
			    const struct bids *b)
{
	const struct bid *id;
	struct dso *d;
	size_t i;
	int err;

	for (i = 0; i < ds->n; i++)
		if (!strcmp(ds->v[i].path, path))
			return &ds->v[i];
	d = realloc(ds->v, (ds->n + 1) * sizeof(*d));
	if (!d)
		return NULL;
	ds->v = d;
	d = &ds->v[ds->n++];
	memset(d, 0, sizeof(*d));
	snprintf(d->path, sizeof(d->path), "%s", path);
	id = bids_find(b, path);
	err = pfc_elf_load(o, path, id ? id->id : NULL, id ? id->len : 0, &d->t, &d->info);
	if (err)
		fprintf(stderr, "load '%s': error %d\n", path, err);
	return d;
}

/* ---------- the check ---------- */

struct frame {
	uint64_t addr;
	char sym[4096];		/* "[unknown]" when none */
	uint64_t off;
	char dso[PATH_MAX];
	int inlined;
};

/* "\t<addr> <sym>+0x<off> (<dso>)", "\t<addr> [unknown] (<dso>)", "... (inlined)" */
static int parse_frame(const char *line, size_t len, struct frame *f)
{
	const char *p = line + 1, *end = line + len, *dso = NULL, *q, *plus;
	char *ep;
	size_t n;

	while (p < end && *p == ' ')
		p++;
	f->addr = strtoull(p, &ep, 16);
	if (ep == p || ep >= end || *ep != ' ')
		return -1;
	p = ep + 1;
	if (len < 2 || end[-1] != ')')
		return -1;
	f->inlined = 0;
	if (end - p > 10 && !memcmp(end - 10, " (inlined)", 10)) {
		f->inlined = 1;
		dso = end - 10;
		f->dso[0] = '\0';
	} else {
		/* the dso is the last " (/" or " ([" group: names may hold spaces */
		for (q = end - 3; q >= p; q--)
			if (q[0] == ' ' && q[1] == '(' && (q[2] == '/' || q[2] == '[')) {
				dso = q;
				break;
			}
		if (!dso)
			return -1;
		n = (size_t)(end - 1 - (dso + 2));
		if (n >= sizeof(f->dso))
			return -1;
		memcpy(f->dso, dso + 2, n);
		f->dso[n] = '\0';
	}
	n = (size_t)(dso - p);
	if (n >= sizeof(f->sym))
		return -1;
	memcpy(f->sym, p, n);
	f->sym[n] = '\0';
	f->off = 0;
	if (strcmp(f->sym, "[unknown]") != 0) {
		plus = NULL;
		for (q = f->sym; (q = strstr(q, "+0x")) != NULL; q++)
			plus = q;
		if (!plus)
			return -1;
		f->off = strtoull(plus + 3, &ep, 16);
		if (*ep != '\0')
			return -1;
		f->sym[plus - f->sym] = '\0';
	}
	return 0;
}

static void fail(struct counts *c, const char *fixture, const char *what, const struct frame *f,
		 const struct pfc_sym *got)
{
	c->failed++;
	if (c->shown++ >= MAX_SHOWN)
		return;
	printf("FAIL %s: %s %" PRIx64 " in %s: perf '%s'+0x%" PRIx64 ", ours ", fixture, what, f->addr,
	       f->inlined ? "(inlined)" : f->dso, f->sym, f->off);
	if (got)
		printf("'%s'+0x%" PRIx64 " [%" PRIx64 "-%" PRIx64 ")\n", got->name, f->addr - got->start,
		       got->start, got->end);
	else
		printf("[unknown]\n");
}

static int check_script(const char *fixture, const char *expected, const char *symfs,
			const char *kallsyms, const struct bids *b, struct counts *c)
{
	struct pfc_symopts o;
	struct pfc_symtab kt;
	struct dsos ds = { 0 };
	char *text = read_expected(expected), *line, *next;
	char prev_dso[PATH_MAX] = "";
	int err;

	if (!text) {
		printf("cannot read '%s'\n", expected);
		c->failed++;
		return -1;
	}
	memset(&o, 0, sizeof(o));
	/* no build-id cache: independent of $HOME */
	o.files = pfc_files_new(&(struct pfc_files_opts){ .symfs = symfs }, NULL);
	/* perf read the build-ids of files present at their recorded paths on the recording
	 * host; reading them under symfs does the same on any host (perfconv's default) */
	o.buildid_from_symfs = 1;
	memset(&kt, 0, sizeof(kt));
	err = pfc_kallsyms_load(kallsyms, &kt);
	if (err) {
		printf("cannot load kallsyms '%s': %d\n", kallsyms, err);
		c->failed++;
		pfc_files_free(o.files);
		free(text);
		return -1;
	}
	for (line = text; *line; line = next) {
		struct frame f;
		const struct pfc_sym *s;
		const char *dsoname;
		struct dso *d;
		size_t len;

		next = strchr(line, '\n');
		len = next ? (size_t)(next - line) : strlen(line);
		next = next ? next + 1 : line + len;
		if (len == 0 || line[0] != '\t' || parse_frame(line, len, &f) != 0)
			continue;
		if (!f.inlined && !strcmp(f.dso, "[kernel.kallsyms]")) {
			s = pfc_symtab_find(&kt, f.addr);
			c->kernel++;
			if (!strcmp(f.sym, "[unknown]") ? s != NULL
			    : !s || strcmp(s->name, f.sym) || f.addr - s->start != f.off)
				fail(c, fixture, "kernel", &f, s);
			else
				c->passed++;
			continue;
		}
		/* an inlined entry belongs to the map of the frame perf unwound: the plain frame
		 * at the same address that follows it, or else the frame before; its name comes
		 * from addr2line, so only the symbol start (via the offset) is ours to match */
		dsoname = f.inlined ? prev_dso : f.dso;
		if (f.inlined) {
			const char *q = next;
			static char same_dso[4096];
			while (*q == '\t') {
				struct frame g;
				const char *e = strchr(q, '\n');
				size_t l = e ? (size_t)(e - q) : strlen(q);
				if (parse_frame(q, l, &g) != 0 || g.addr != f.addr)
					break;
				if (!g.inlined) {
					snprintf(same_dso, sizeof(same_dso), "%s", g.dso);
					dsoname = same_dso;
					break;
				}
				q = e ? e + 1 : q + l;
			}
		}
		if (dsoname[0] != '/' || !strncmp(dsoname, "/tmp/perf-", 10) ||
		    strstr(dsoname, " (deleted)"))
			continue;
		if (!f.inlined)
			snprintf(prev_dso, sizeof(prev_dso), "%s", f.dso);
		d = dsos_get(&ds, dsoname, &o, b);
		if (!d) {
			c->failed++;
			continue;
		}
		s = pfc_symtab_find(&d->t, f.addr);
		if (f.inlined) {
			c->inlined++;
			if (!s || f.addr - s->start != f.off)
				fail(c, fixture, "inlined", &f, s);
			else
				c->passed++;
			continue;
		}
		c->user++;
		if (!strcmp(f.sym, "[unknown]")) {
			c->unknown++;
			if (s)
				fail(c, fixture, "user", &f, s);
			else
				c->passed++;
		} else if (!s || strcmp(s->name, f.sym) || f.addr - s->start != f.off) {
			fail(c, fixture, "user", &f, s);
		} else {
			c->passed++;
		}
	}
	dsos_free(&ds);
	pfc_symtab_free(&kt);
	pfc_files_free(o.files);
	free(text);
	return 0;
}

/* ---------- a symfs copy without the debug files (fp-stripped-debuglink -nodebug) ---------- */

static const char *nodebug_skip[] = {
	"tmp/probe/fx/bin/stripped/callgraph.debug",
	"usr/lib/debug/.build-id/e1",
};

static int link_tree(const char *src, const char *dst, const char *rel)
{
	char s[PATH_MAX], d[PATH_MAX], r[PATH_MAX];
	struct dirent *e;
	DIR *dir;
	size_t i;

	pathf(s, "%s%s%s", src, *rel ? "/" : "", rel);
	pathf(d, "%s%s%s", dst, *rel ? "/" : "", rel);
	dir = opendir(s);
	if (!dir)
		return -1;
	if (*rel && mkdir(d, 0700) != 0) {
		closedir(dir);
		return -1;
	}
	while ((e = readdir(dir)) != NULL) {
		struct stat st;
		char sp[PATH_MAX], dp[PATH_MAX];
		int skip = 0;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		pathf(r, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		for (i = 0; i < sizeof(nodebug_skip) / sizeof(nodebug_skip[0]); i++)
			if (!strcmp(r, nodebug_skip[i]))
				skip = 1;
		if (skip)
			continue;
		pathf(sp, "%s/%s", src, r);
		pathf(dp, "%s/%s", dst, r);
		if (stat(sp, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (link_tree(src, dst, r) != 0) {
				closedir(dir);
				return -1;
			}
		} else if (symlink(sp, dp) != 0) {
			closedir(dir);
			return -1;
		}
	}
	closedir(dir);
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* ---------- unit cases: rules checked against perf 6.1 by hand ---------- */

static void expect(struct counts *c, int ok, const char *what, const char *detail)
{
	if (ok) {
		c->passed++;
		return;
	}
	c->failed++;
	if (c->shown++ < MAX_SHOWN)
		printf("FAIL unit: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
}

struct symspec {
	uint64_t start, size;
	int bind;
	const char *name;
};

/* build an ELF-flavoured table from specs (in insertion order) and name the winner at addr */
static const char *winner(const struct symspec *sp, size_t n, uint64_t addr, struct pfc_symtab *t)
{
	const struct pfc_sym *s;
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < n; i++)
		pfc_symtab_add(t, sp[i].start, sp[i].size, sp[i].bind, sp[i].name, strlen(sp[i].name));
	pfc_symtab_fixup(t, PFC_SYMTAB_ELF);
	pfc_symtab_finish(t);
	s = pfc_symtab_find(t, addr);
	return s ? s->name : "[unknown]";
}

/* Each case was reproduced with perf 6.1 by patching a fixture binary's .symtab. */
static void unit_aliases(struct counts *c)
{
	static const struct {
		const char *what, *want;
		uint64_t addr;
		struct symspec sp[3];
	} cases[] = {
		{ "global beats local", "spin", 0x1150,
		  { { 0x1139, 70, PFC_SYM_LOCAL, "deregister_tm_clones" }, { 0x1139, 70, PFC_SYM_GLOBAL, "spin" } } },
		{ "longer name among globals", "deregister_tm_clones", 0x1150,
		  { { 0x1139, 70, PFC_SYM_GLOBAL, "deregister_tm_clones" }, { 0x1139, 70, PFC_SYM_GLOBAL, "spin" } } },
		{ "unsized alias before: sized wins", "spin", 0x1150,
		  { { 0x1139, 0, PFC_SYM_GLOBAL, "register_tm_clones" }, { 0x1139, 70, PFC_SYM_GLOBAL, "spin" },
		    { 0x117f, 15, PFC_SYM_GLOBAL, "b" } } },
		{ "unsized alias after: gets an end, then the longer name wins", "zzzzzzzzzz", 0x1150,
		  { { 0x1139, 70, PFC_SYM_GLOBAL, "spin" }, { 0x1139, 0, PFC_SYM_GLOBAL, "zzzzzzzzzz" },
		    { 0x117f, 15, PFC_SYM_GLOBAL, "b" } } },
		{ "weak loses to local", "deregister_tm_clones", 0x1150,
		  { { 0x1139, 70, PFC_SYM_LOCAL, "deregister_tm_clones" }, { 0x1139, 70, PFC_SYM_WEAK, "spin" } } },
		{ "fewer leading underscores", "spin", 0x1150,
		  { { 0x1139, 70, PFC_SYM_WEAK, "__do_global_dtors_aux" }, { 0x1139, 70, PFC_SYM_WEAK, "spin" } } },
		{ "a tie keeps the first", "psin", 0x1150,
		  { { 0x1139, 70, PFC_SYM_GLOBAL, "psin" }, { 0x1139, 70, PFC_SYM_GLOBAL, "spin" } } },
		{ "end is exclusive", "[unknown]", 0x1165,
		  { { 0x1139, 0x2c, PFC_SYM_GLOBAL, "spin" }, { 0x117f, 15, PFC_SYM_GLOBAL, "b" } } },
		{ "unsized symbol ends at the next", "spin", 0x117e,
		  { { 0x1139, 0, PFC_SYM_GLOBAL, "spin" }, { 0x117f, 15, PFC_SYM_GLOBAL, "b" } } },
		{ "last unsized symbol ends a page past its page", "b", 0x2fff,
		  { { 0x1139, 70, PFC_SYM_GLOBAL, "spin" }, { 0x117f, 0, PFC_SYM_GLOBAL, "b" } } },
		/* overlaps: the first covering node on the search path wins, so the shape of
		 * the tree (insertion order) decides, as in perf: a label inside spin */
		{ "overlap: the earlier inserted is the root", "spin", 0x1165,
		  { { 0x1139, 70, PFC_SYM_GLOBAL, "spin" }, { 0x1160, 0, PFC_SYM_GLOBAL, "label" } } },
		{ "overlap: the other order", "label", 0x1165,
		  { { 0x1160, 0, PFC_SYM_GLOBAL, "label" }, { 0x1139, 70, PFC_SYM_GLOBAL, "spin" } } },
		{ "overlap: three nodes, the middle one becomes the root", "label", 0x1140 + 0x25,
		  { { 0x1139, 70, PFC_SYM_GLOBAL, "spin" }, { 0x117f, 15, PFC_SYM_GLOBAL, "b" },
		    { 0x1160, 0, PFC_SYM_GLOBAL, "label" } } },
	};
	size_t i, n;
	char detail[256];

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pfc_symtab t;
		const char *got;

		for (n = 0; n < 3 && cases[i].sp[n].name; n++)
			;
		got = winner(cases[i].sp, n, cases[i].addr, &t);
		snprintf(detail, sizeof(detail), "want %s, got %s", cases[i].want, got);
		expect(c, !strcmp(got, cases[i].want), cases[i].what, detail);
		expect(c, pfc_symtab_check(&t) == 0, cases[i].what, "tree check");
		pfc_symtab_free(&t);
	}
}

/* xorshift64: deterministic pseudo-random numbers for the generated cases */
static uint64_t rnd(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* random tables: the tree stays valid through inserts, fixups and finish, lookups only
 * return covering symbols, and without overlaps they equal a plain search */
static void unit_tree(struct counts *c)
{
	uint64_t rs = 0x9e3779b97f4a7c15ull;
	int round;

	for (round = 0; round < 300; round++) {
		struct pfc_symtab t;
		int disjoint = round % 3 == 0, n = 1 + (int)(rnd(&rs) % 400), i, ok = 1, ok2 = 1;
		uint64_t a, pos = 0x1000;
		char name[32];

		memset(&t, 0, sizeof(t));
		for (i = 0; i < n; i++) {
			uint64_t start, size;

			if (disjoint) {
				start = pos + rnd(&rs) % 8;
				size = 1 + rnd(&rs) % 32;
				pos = start + size;
			} else {
				start = 0x1000 + rnd(&rs) % 512;
				size = rnd(&rs) % 3 ? rnd(&rs) % 64 : 0;
			}
			snprintf(name, sizeof(name), "%.*s%d", (int)(rnd(&rs) % 3), "__", i);
			pfc_symtab_add(&t, start, size, (int)(rnd(&rs) % 3), name, strlen(name));
		}
		if (disjoint) {
			/* shuffle the insertion order: rebuild from a shuffled copy */
			struct pfc_symtab u;
			int *idx = malloc(n * sizeof(*idx));

			memset(&u, 0, sizeof(u));
			for (i = 0; i < n; i++)
				idx[i] = i;
			for (i = n - 1; i > 0; i--) {
				int j = (int)(rnd(&rs) % (i + 1)), x = idx[i];

				idx[i] = idx[j];
				idx[j] = x;
			}
			for (i = 0; i < n; i++) {
				const struct pfc_sym *s = &t.syms[idx[i]];

				pfc_symtab_add(&u, s->start, s->end - s->start, s->binding, s->name, strlen(s->name));
			}
			free(idx);
			pfc_symtab_free(&t);
			t = u;
		}
		ok = pfc_symtab_check(&t) == 0;
		pfc_symtab_fixup(&t, round % 2 ? PFC_SYMTAB_KALLSYMS : PFC_SYMTAB_ELF);
		ok = ok && pfc_symtab_check(&t) == 0;
		pfc_symtab_finish(&t);
		ok = ok && pfc_symtab_check(&t) == 0;
		for (i = 1; i < (int)t.nr; i++)
			if (t.syms[i - 1].start > t.syms[i].start || t.syms[i - 1].start == t.syms[i].start)
				ok = 0;	/* sorted, duplicates gone */
		for (a = 0xff0; a < (disjoint ? pos : 0x1000 + 600) + 0x1010; a++) {
			const struct pfc_sym *s = pfc_symtab_find(&t, a), *naive = NULL;
			size_t lo = 0, hi = t.nr;

			if (s && !(a == s->start || (a > s->start && a < s->end)))
				ok2 = 0;
			if (!disjoint)
				continue;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;

				if (t.syms[mid].start <= a)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo && (a < t.syms[lo - 1].end || a == t.syms[lo - 1].start))
				naive = &t.syms[lo - 1];
			if (naive != s)
				ok2 = 0;
		}
		expect(c, ok, "tree", "red-black tree invariants or order broken");
		expect(c, ok2, "tree", disjoint ? "lookup differs from a plain search" : "lookup returned a symbol not covering the address");
		pfc_symtab_free(&t);
	}
}

/* Mostly ascending inserts take a shortcut to the rightmost node (symtab.c tree_insert):
 * the tree must be the one the full walk from the root builds.  Tables with overlapping
 * symbols, inserted in ascending runs with steps back, equal starts and module symbols
 * (split into the second tree by the kallsyms fixup), are built twice, once with the
 * shortcut forgotten before every insert, and every lookup must agree: perf's answer for
 * overlapping symbols depends on the tree's shape. */
static void unit_tree_shortcut(struct counts *c)
{
	uint64_t rs = 0x51ed2701f3a5c2d9ull;
	int round;

	for (round = 0; round < 200; round++) {
		struct pfc_symtab a, b;
		int n = 1 + (int)(rnd(&rs) % 600), i, same = 1;
		uint64_t pos = 0x10000, addr;
		int kall = round % 2;
		char name[48];

		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		for (i = 0; i < n; i++) {
			uint64_t r = rnd(&rs), start, size;
			if (r % 10 == 0)
				pos -= pos > 0x10000 + 256 ? rnd(&rs) % 256 : 0;	/* a step back */
			else if (r % 10 > 3)
				pos += rnd(&rs) % 24;				/* else an equal start */
			start = pos;
			size = kall ? 0 : rnd(&rs) % 3 ? rnd(&rs) % 80 : 0;
			if (kall && rnd(&rs) % 5 == 0)
				snprintf(name, sizeof(name), "m%d\t[mod%d]", i, (int)(rnd(&rs) % 3));
			else
				snprintf(name, sizeof(name), "%.*sf%d", (int)(rnd(&rs) % 3), "__", i);
			pfc_symtab_add(&a, start, size, (int)(rnd(&rs) % 3), name, strlen(name));
			b.last_ok[0] = b.last_ok[1] = 0;
			pfc_symtab_add(&b, start, size, a.syms[i].binding, name, strlen(name));
		}
		pfc_symtab_fixup(&a, kall ? PFC_SYMTAB_KALLSYMS : PFC_SYMTAB_ELF);
		b.last_ok[0] = b.last_ok[1] = 0;
		pfc_symtab_fixup(&b, kall ? PFC_SYMTAB_KALLSYMS : PFC_SYMTAB_ELF);
		pfc_symtab_finish(&a);
		pfc_symtab_finish(&b);
		same = a.nr == b.nr && pfc_symtab_check(&a) == 0 && pfc_symtab_check(&b) == 0;
		for (addr = 0xff00; same && addr < pos + 0x2100; addr++) {
			const struct pfc_sym *x = pfc_symtab_find(&a, addr), *y = pfc_symtab_find(&b, addr);
			if (!x != !y || (x && (x->start != y->start || strcmp(x->name, y->name))))
				same = 0;
		}
		expect(c, same, "tree", "the rightmost-node shortcut built another tree");
		pfc_symtab_free(&a);
		pfc_symtab_free(&b);
	}
}

/* names and what perf 6.1 printed for them (symbols renamed in a fixture binary) */
static void unit_demangle(struct counts *c)
{
	static const char *const cases[][2] = {
		{ "_Z4workRSt6vectorIiSaIiEEPKc", "work" },
		{ "_ZN2ns3BoxIlE4spinEiRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE", "ns::Box<long>::spin" },
		{ "_ZN3FooC2Ev", "Foo::Foo" },
		{ "_ZTV3Foo", "vtable for Foo" },
		{ "_GLOBAL__sub_I_main", NULL },
		{ "x_ZN3foo3barEv", NULL },
		{ "_ZN4core3fmt9Formatter3pad17h0123456789abcdefE", "core::fmt::Formatter::pad" },
		{ "_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$17h0123456789abcdefE",
		  "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>" },
		{ "_RNvCs1234_7mycrate3foo", "mycrate::foo" },
		{ "_D3foo3barFZv", NULL },
		{ "camlFoo__bar_123$3e", "Foo.bar_123>" },
		{ "camlX__", "X." },
		{ "camlFoo$00bar", "Foo" },
		{ "caml", NULL },
		{ "caml$zz__", NULL },
		{ "caml_Foo", NULL },
		{ "Lcom/foo/Bar;baz(I[Ljava/lang/String;)V", "com.foo.Bar.baz(int, java.lang.String)" },
		{ "LFoo;bar([Z[[B)[I", "Foo.bar(boolean[], byte[][])" },
		{ "LFoo;<clinit>()V", "Foo<clinit>()" },
		{ "L;a()V", ".a()" },
		{ "Lx/y;z(CDFJS)V", "x.y.z(char, double, float, long, short)" },
		{ "com/Foo;bar(I)V", NULL },
		{ "JS:~foo (bar)", NULL },
		{ "x)y", NULL },
		{ "spin", NULL },
	};
	size_t i;
	char detail[512];

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = pfc_demangle(cases[i][0]);
		int ok = cases[i][1] ? d && !strcmp(d, cases[i][1]) : !d;

		snprintf(detail, sizeof(detail), "%s -> %s (want %s)", cases[i][0], d ? d : "(none)",
			 cases[i][1] ? cases[i][1] : "(none)");
		expect(c, ok, "demangle", detail);
		free(d);
	}
}

/* kallsyms rules, each reproduced by editing a fixture's kallsyms for perf 6.1 */
static void unit_kallsyms(struct counts *c)
{
	static const char text[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000000 T _text\n"
		"ffffffff81000000 T __pi__text\n"	/* the last of equal unsized ones wins */
		"ffffffff81000100 r rodata_sym\n"	/* r, a, ... are not kept */
		"ffffffff81000200 d data_sym\n"		/* d and b are */
		"garbage\n"
		" ffffffff81000280 T leading_space\n"
		"ffffffff81000300 t before_module\n"	/* ends a page past it: next is a module's */
		"ffffffff81000400 t modfunc\t[mymod]\n"
		"ffffffff81000500 W weak_one\n"
		"ffffffff81000600 T last\n";
	char tmpl[] = "/tmp/test_symbols_ks.XXXXXX";
	struct pfc_symtab t;
	const struct pfc_sym *s;
	int fd = mkstemp(tmpl);

	memset(&t, 0, sizeof(t));
	if (fd < 0 || write(fd, text, sizeof(text) - 1) != (ssize_t)(sizeof(text) - 1)) {
		expect(c, 0, "kallsyms", "cannot write a temporary file");
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	expect(c, pfc_kallsyms_load(tmpl, &t) == 0, "kallsyms", "load");
	s = pfc_symtab_find(&t, 0xffffffff81000010ull);
	expect(c, s && !strcmp(s->name, "__pi__text"), "kallsyms", "last unsized duplicate wins");
	s = pfc_symtab_find(&t, 0xffffffff81000150ull);
	expect(c, s && !strcmp(s->name, "__pi__text"), "kallsyms", "type r is not kept");
	s = pfc_symtab_find(&t, 0xffffffff81000250ull);
	expect(c, s && !strcmp(s->name, "data_sym"), "kallsyms", "type d is kept; bad lines are skipped");
	s = pfc_symtab_find(&t, 0xffffffff81000450ull);
	expect(c, s && !strcmp(s->name, "before_module") && s->end == 0xffffffff81002000ull, "kallsyms",
	       "the symbol before a module's ends at the page after the next page");
	s = pfc_symtab_find(&t, 0xffffffff81001fffull);
	expect(c, s && !strcmp(s->name, "last") && s->end == 0xffffffff81002000ull, "kallsyms",
	       "the last symbol ends a page past its page");
	expect(c, pfc_symtab_find(&t, 0xffffffff81002000ull) == NULL, "kallsyms", "end is exclusive");
	s = pfc_symtab_find(&t, 0xffffffff81000500ull);
	expect(c, s && s->binding == PFC_SYM_WEAK, "kallsyms", "W is weak");
	expect(c, pfc_symtab_check(&t) == 0, "kallsyms", "tree check");
	/* module symbols keep their own tree and lose the "\t[mod]" suffix */
	{
		size_t i;
		int found = 0;

		for (i = 0; i < t.nr; i++)
			if (!strcmp(t.syms[i].name, "modfunc") && t.syms[i].module &&
			    !strcmp(t.syms[i].module, "[mymod]"))
				found = 1;
		expect(c, found, "kallsyms", "module name split off");
	}
	pfc_symtab_free(&t);
	unlink(tmpl);
}

/* ---------- ELF rules, each reproduced with perf 6.1 on the same patched binary ---------- */

struct elfpatch {
	const char *sym;	/* symbol to edit, or NULL for a program header */
	int phdr;		/* program header index when sym is NULL */
	long shndx, type, other;	/* -1: keep */
	long long value, size;		/* -1: keep */
};

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* edit a copy of an ELF64 little-endian file in memory; 0 or -1 */
static int apply_patch(unsigned char *d, size_t len, const struct elfpatch *pt)
{
	uint64_t shoff = get64(d + 0x28), phoff = get64(d + 0x20);
	uint16_t shentsize = rd16(d + 0x3a), shnum = rd16(d + 0x3c), phentsize = rd16(d + 0x36);
	unsigned i, k;

	if (!pt->sym) {
		unsigned char *ph = d + phoff + (size_t)pt->phdr * phentsize;

		if (phoff + (size_t)(pt->phdr + 1) * phentsize > len)
			return -1;
		if (pt->size >= 0) {
			memcpy(ph + 32, &pt->size, 8);	/* p_filesz */
			memcpy(ph + 40, &pt->size, 8);	/* p_memsz */
		}
		return 0;
	}
	for (i = 0; i < shnum; i++) {
		const unsigned char *sh = d + shoff + (size_t)i * shentsize, *strsh;
		uint64_t off, size, stroff;

		if (shoff + (size_t)(i + 1) * shentsize > len)
			return -1;
		if (rd32(sh + 4) != 2)	/* SHT_SYMTAB */
			continue;
		off = get64(sh + 24);
		size = get64(sh + 32);
		strsh = d + shoff + (size_t)rd32(sh + 40) * shentsize;
		stroff = get64(strsh + 24);
		for (k = 0; k * 24 + 24 <= size; k++) {
			unsigned char *e = d + off + k * 24;

			if (strcmp((const char *)d + stroff + rd32(e), pt->sym) != 0)
				continue;
			if (pt->type >= 0)
				e[4] = (unsigned char)((e[4] & 0xf0) | pt->type);
			if (pt->other >= 0)
				e[5] = (unsigned char)pt->other;
			if (pt->shndx >= 0) {
				uint16_t v = (uint16_t)pt->shndx;

				memcpy(e + 6, &v, 2);
			}
			if (pt->value >= 0)
				memcpy(e + 8, &pt->value, 8);
			if (pt->size >= 0)
				memcpy(e + 16, &pt->size, 8);
			return 0;
		}
	}
	return -1;
}

#define SYMP(n, sh, ty, ot, va, sz) { n, 0, sh, ty, ot, va, sz }
#define PHP(i, sz) { NULL, i, -1, -1, -1, -1, sz }

static void unit_elf_rules(struct counts *c, const char *root)
{
	static const struct {
		const char *what;
		struct elfpatch p[7];
		uint64_t addr;
		const char *want;	/* NULL: no symbol */
		uint64_t off;
	} cases[] = {
		{ "an ABS symbol is skipped", { SYMP("b", 0xfff1, -1, -1, -1, -1) }, 0x1188, NULL, 0 },
		{ "a bad section index stops the load: symbols before stay",
		  { SYMP("main", 41, -1, -1, -1, -1) }, 0x1188, "b", 9 },
		{ "a bad section index stops the load: symbols after are gone",
		  { SYMP("main", 41, -1, -1, -1, -1) }, 0x1150, NULL, 0 },
		{ "an object in .text counts", { SYMP("b", -1, 1, -1, -1, -1) }, 0x1188, "b", 9 },
		{ "a label in .text inside spin", { SYMP("data_start", 15, -1, -1, 0x1160, -1) }, 0x1165, "data_start", 5 },
		{ "a label in .rodata (\"data\" in the name) counts", { SYMP("data_start", 17, -1, -1, 0x1160, -1) },
		  0x1165, "data_start", 5 },
		{ "a label in .init does not", { SYMP("data_start", 12, -1, -1, 0x1160, -1) }, 0x1165, "spin", 0x2c },
		{ "a hidden label does not", { SYMP("data_start", 15, -1, 2, 0x1160, -1) }, 0x1165, "spin", 0x2c },
		{ "a sized symbol ends before start + size", { SYMP("spin", -1, -1, -1, -1, 0x2c) }, 0x1165, NULL, 0 },
		{ "outside every PT_LOAD the section's offset adjusts",
		  { PHP(3, 0x140), SYMP("a", 0, -1, -1, -1, -1), SYMP("c", 0, -1, -1, -1, -1),
		    SYMP("main", 0, -1, -1, -1, -1), SYMP("_init", 25, -1, -1, 0x2190, 0x200) },
		  0x1197, "_init", 7 },
		{ "a symbol outside PT_LOADs in .text keeps its address",
		  { PHP(3, 0x140) }, 0x1188, "b", 9 },
	};
	char tmpl[] = "/tmp/test_symbols_rules.XXXXXX", dir[PATH_MAX], file[PATH_MAX], src[PATH_MAX];
	size_t i, j, len;
	char detail[256];

	pathf(src, "%s/tmp/probe/fx/bin/callgraph", root);
	if (!exists(src)) {
		printf("SKIP elf rules: no '%s'\n", src);
		return;
	}
	if (!mkdtemp(tmpl)) {
		expect(c, 0, "elf rules", "cannot make a temporary directory");
		return;
	}
	pathf(dir, "%s/bin", tmpl);
	mkdir(dir, 0700);
	pathf(file, "%s/bin/callgraph", tmpl);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned char *d = (unsigned char *)read_file(src, &len);
		struct pfc_symopts o;
		struct pfc_symtab t;
		struct pfc_dso_load info;
		const struct pfc_sym *s;
		int ok = d != NULL;
		FILE *f;

		for (j = 0; ok && j < 7 && (cases[i].p[j].sym || cases[i].p[j].size > 0); j++)
			ok = apply_patch(d, len, &cases[i].p[j]) == 0;
		f = ok ? fopen(file, "wb") : NULL;
		ok = f && fwrite(d, 1, len, f) == len;
		if (f)
			fclose(f);
		free(d);
		memset(&o, 0, sizeof(o));
		o.files = pfc_files_new(&(struct pfc_files_opts){ .symfs = tmpl }, NULL);
		memset(&t, 0, sizeof(t));
		ok = ok && pfc_elf_load(&o, "/bin/callgraph", NULL, 0, &t, &info) == 0;
		pfc_files_free(o.files);
		s = pfc_symtab_find(&t, cases[i].addr);
		snprintf(detail, sizeof(detail), "want %s+0x%" PRIx64 ", got %s+0x%" PRIx64,
			 cases[i].want ? cases[i].want : "[unknown]", cases[i].off, s ? s->name : "[unknown]",
			 s ? cases[i].addr - s->start : 0);
		if (cases[i].want)
			ok = ok && s && !strcmp(s->name, cases[i].want) && cases[i].addr - s->start == cases[i].off;
		else
			ok = ok && !s;
		expect(c, ok, cases[i].what, detail);
		pfc_symtab_free(&t);
	}
	unlink(file);
	rmdir(dir);
	rmdir(tmpl);
}

/* corrupted copies of fixture ELF files: loading must fail cleanly or give a valid
 * table (run under -fsanitize=address,undefined to catch what a crash would not) */
static void unit_corrupt(struct counts *c, const char *root)
{
	static const char *const srcs[] = {
		"tmp/probe/fx/bin/callgraph",
		"tmp/probe/fx/bin/stripped/callgraph",
		"tmp/probe/fx/bin/stripped/callgraph.debug",
		"usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
	};
	char tmpl[] = "/tmp/test_symbols_elf.XXXXXX", file[PATH_MAX];
	uint64_t rs = 0x2545f4914f6cdd1dull;
	int it, bad = 0;

	if (!mkdtemp(tmpl)) {
		expect(c, 0, "corrupt", "cannot make a temporary directory");
		return;
	}
	pathf(file, "%s/bin", tmpl);
	for (it = 0; it < 400; it++) {
		char src[PATH_MAX];
		struct pfc_symopts o;
		struct pfc_symtab t;
		struct pfc_dso_load info;
		size_t len, n, m;
		unsigned char *d;
		uint8_t id[20];
		int idlen, err;
		FILE *f;

		pathf(src, "%s/%s", root, srcs[it % 4]);
		d = (unsigned char *)read_file(src, &len);
		if (!d || len < 64) {
			free(d);
			continue;
		}
		for (m = 1 + rnd(&rs) % 16; m > 0; m--) {
			size_t pos = rnd(&rs) % 3 == 0 ? rnd(&rs) % 64 : rnd(&rs) % 2 ? len - 1 - rnd(&rs) % (len < 4096 ? len : 4096) : rnd(&rs) % len;

			d[pos] = rnd(&rs) % 3 ? d[pos] ^ (1u << (rnd(&rs) % 8)) : 0xff;
		}
		n = rnd(&rs) % 8 == 0 ? rnd(&rs) % len : len;
		f = fopen(file, "wb");
		if (f) {
			fwrite(d, 1, n, f);
			fclose(f);
		}
		free(d);
		memset(&o, 0, sizeof(o));
		o.files = pfc_files_new(&(struct pfc_files_opts){ .symfs = tmpl }, NULL);
		o.minidebuginfo = 1;
		memset(&t, 0, sizeof(t));
		err = pfc_elf_load(&o, "/bin", it % 5 ? NULL : (const uint8_t *)"01234567890123456789",
				   it % 5 ? 0 : 20, &t, &info);
		pfc_files_free(o.files);
		if (err && err != -ENOMEM)
			bad++;
		if (pfc_symtab_check(&t) != 0)
			bad++;
		for (m = 0; m < 64; m++) {
			const struct pfc_sym *s = pfc_symtab_find(&t, rnd(&rs) % 0x40000);

			if (s && !s->name)
				bad++;
		}
		pfc_symtab_free(&t);
		(void)pfc_elf_build_id(file, id, &idlen);
	}
	unlink(file);
	rmdir(tmpl);
	expect(c, bad == 0, "corrupt", "a corrupted ELF gave an error or a broken table");
}

/* ---------- driver ---------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	const char *fx = argc > 1 ? argv[1] : "fixtures";
	char root[PATH_MAX], kallsyms[PATH_MAX], path[PATH_MAX], in[PATH_MAX], kfile[PATH_MAX];
	struct counts c = { 0 };
	char *names[256];
	size_t nnames = 0, i;
	struct dirent *e;
	DIR *dir;

	if (!realpath(fx, root)) {
		fprintf(stderr, "test_symbols: cannot open '%s': %s\n", fx, strerror(errno));
		return 2;
	}
	pathf(path, "%s", root);
	pathf(root, "%s/root", path);
	pathf(kallsyms, "%s/kallsyms", root);
	dir = opendir(path);
	if (!dir) {
		fprintf(stderr, "test_symbols: cannot open '%s'\n", path);
		return 2;
	}
	while ((e = readdir(dir)) != NULL && nnames < 256)
		if (e->d_name[0] != '.' && strcmp(e->d_name, "root") != 0)
			names[nnames++] = strdup(e->d_name);
	closedir(dir);
	qsort(names, nnames, sizeof(names[0]), cmp_str);

	for (i = 0; i < nnames; i++) {
		struct bids b = { 0 };
		char exp[PATH_MAX];
		unsigned long before = c.passed + c.failed;

		pathf(exp, "%s/%s/expected/script-default.txt", path, names[i]);
		pathf(in, "%s/%s/expected/script-default.txt.xz", path, names[i]);
		if (!exists(exp) && !exists(in))
			goto next;
		/* the input perf script read (README: perf.jit.data, pipe.data or perf.data) */
		pathf(in, "%s/%s/perf.jit.data", path, names[i]);
		if (!exists(in))
			pathf(in, "%s/%s/pipe.data", path, names[i]);
		if (!exists(in))
			pathf(in, "%s/%s/perf.data", path, names[i]);
		read_bids(in, &b);
		/* a fixture may bring its own kallsyms (used for experiments against perf) */
		pathf(kfile, "%s/%s/kallsyms", path, names[i]);
		check_script(names[i], exp, root, exists(kfile) ? kfile : kallsyms, &b, &c);

		/* the variant perf printed with the debug files removed from symfs */
		pathf(exp, "%s/%s/expected/script-default-nodebug.txt", path, names[i]);
		pathf(in, "%s.xz", exp);
		if (exists(exp) || exists(in)) {
			char tmpl[] = "/tmp/test_symbols.XXXXXX";
			char label[PATH_MAX];

			if (!mkdtemp(tmpl) || link_tree(root, tmpl, "") != 0) {
				printf("SKIP %s nodebug: cannot build a symfs copy\n", names[i]);
			} else {
				pathf(label, "%s-nodebug", names[i]);
				check_script(label, exp, tmpl, kallsyms, &b, &c);
			}
			nftw(tmpl, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		}
		printf("%-24s %lu frames\n", names[i], c.passed + c.failed - before);
next:
		free(b.v);
		free(names[i]);
	}
	{
		unsigned long before = c.passed + c.failed;

		unit_aliases(&c);
		unit_tree(&c);
		unit_tree_shortcut(&c);
		unit_demangle(&c);
		unit_kallsyms(&c);
		unit_elf_rules(&c, root);
		unit_corrupt(&c, root);
		printf("%-24s %lu checks\n", "unit cases", c.passed + c.failed - before);
	}
	printf("checked: %lu user frames (%lu [unknown]), %lu kernel, %lu inlined\n", c.user, c.unknown,
	       c.kernel, c.inlined);
	printf("%lu passed, %lu failed\n", c.passed, c.failed);
	return c.failed ? 1 : 0;
}
