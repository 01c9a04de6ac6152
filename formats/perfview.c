/*
 * perfview.c - PerfView's `.trace.zip`, laid out as perfcollect makes it: a `NAME.trace/`
 * folder holding perf.data.txt (perf script text in perfconv's canonical form, which old
 * and new PerfView parse), a perfcollect.log of the conversion, the perf maps and jitdumps
 * that resolved JIT frames and, on request, the recording.  The archive is written with
 * minizip as `zip -r` writes it (Unix attributes, deflate), with entry times from the
 * recording, so the same input gives the same bytes.  Symbols come resolved from the
 * session; this file only prints and packs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <minizip/zip.h>
#include "converter/machine/intern.h"
#include "converter/machine/machine.h"
#include "converter/jit/perfmap.h"
#include "converter/util/strbuf.h"
#include "converter/native/symtab.h"
#include "formats/tptext.h"
#include "formats/perfview.h"
#include "formats/writer.h"

#define ZIP_VERSION_MADE_BY ((3u << 8) | 30u)  /* Unix, zip 3.0: what Info-ZIP's zip -r writes */
#ifndef PFC_ZIP64_FROM                          /* entries this large (or larger) get zip64 fields */
#define PFC_ZIP64_FROM 0xF0000000ull            /* (a build with a small value tests them) */
#endif
#define CHUNK (256u << 10)

/* ---- perf.data.txt: the canonical text ---- */

/* Names come from the input (comms, ELF symbols, DSO paths): a line break in one would
 * end the header or the frame line early, so it is written as a space. */
static void add_name(struct pfc_sb *b, const char *s, size_t n)
{
	size_t from = b->len, i;

	pfc_sb_add(b, s, n);
	if (b->oom)
		return;
	for (i = from; i < b->len; i++)
		if (b->buf[i] == '\n' || b->buf[i] == '\r' || b->buf[i] == 0)
			b->buf[i] = ' ';
}

int pfc_perfview_header(struct pfc_sb *b, struct pfc_session *s, const struct pfc_srec *r,
			const char *trace, size_t trace_len)
{
	const struct pfc_stack *st = &s->stacks.stacks[r->stack];

	add_name(b, pfc_intern_str(&s->strings, st->comm), pfc_intern_len(&s->strings, st->comm));
	/* PerfView reads no sign: a sample without a thread (-1) is written as 0 */
	pfc_sb_addf(b, " %d/%d ", st->pid < 0 ? 0 : st->pid, st->tid < 0 ? 0 : st->tid);
	if (r->cpu != UINT32_MAX)
		pfc_sb_addf(b, "[%03u] ", r->cpu);
	pfc_sb_addf(b, "%llu.%06llu: ", (unsigned long long)(r->time / 1000000000ull),
		    (unsigned long long)(r->time % 1000000000ull / 1000ull));
	if (r->flags & PFC_S_HAS_PERIOD)
		pfc_sb_addf(b, "%llu ", (unsigned long long)r->period);
	pfc_sb_adds(b, pfc_session_evsel_name(s, st->evsel));
	pfc_sb_adds(b, ": ");
	if (trace_len)	/* one line per header, whatever the format prints */
		add_name(b, trace, trace_len);
	pfc_sb_addc(b, '\n');
	return b->oom ? -1 : 0;
}

int pfc_perfview_frame(struct pfc_sb *b, struct pfc_session *s, uint32_t fid)
{
	const struct pfc_frame *f = &s->stacks.frames[fid];

	pfc_sb_addf(b, "\t%16llx ", (unsigned long long)f->addr);
	if (f->resolved)
		add_name(b, pfc_intern_str(&s->strings, f->sym_text), pfc_intern_len(&s->strings, f->sym_text));
	else
		pfc_sb_adds(b, "[unknown]");
	pfc_sb_adds(b, " (");
	if (f->inlined)	/* perf script's inlined frames */
		pfc_sb_adds(b, "inlined");
	else if (f->dso)
		add_name(b, f->dso->name, strlen(f->dso->name));
	else
		pfc_sb_adds(b, "[unknown]");
	pfc_sb_adds(b, ")\n");
	return b->oom ? -1 : 0;
}

/* ---- the archive ---- */

struct pv {
	struct pfc_session *s;
	const struct pfc_wopts *o;
	struct pfc_error *err;
	const char *outname;          /* for messages */
	zipFile zf;
	FILE *fp;                     /* the archive's bytes go here */
	char *dir;                    /* "NAME.trace/" */
	tm_zip when;                  /* entry times */
	struct pfc_intern lines;      /* frame lines, once per unique frame */
	uint32_t *line_of;            /* frame id -> line id + 1 */
	struct pfc_sb buf, log;
	uint64_t nr_no_time, nr_no_tid;
	struct pfc_tptext tp;         /* tracepoint payloads, by stream index */
	const char *tp_why;           /* why they could not be rendered */
	/* side files copied */
	struct side { char *path; char *entry; } *side;
	size_t nr_side, cap_side;
};

/* minizip's I/O over the stdio stream the CLI gave (it closes that itself). */
static voidpf ZCALLBACK zf_open(voidpf opaque, const void *name, int mode)
{
	(void)name;
	(void)mode;
	return opaque;
}

static uLong ZCALLBACK zf_read(voidpf opaque, voidpf stream, void *buf, uLong size)
{
	(void)opaque;
	return (uLong)fread(buf, 1, size, stream);
}

static uLong ZCALLBACK zf_write(voidpf opaque, voidpf stream, const void *buf, uLong size)
{
	(void)opaque;
	return (uLong)fwrite(buf, 1, size, stream);
}

static ZPOS64_T ZCALLBACK zf_tell(voidpf opaque, voidpf stream)
{
	off_t o;

	(void)opaque;
	o = ftello(stream);
	return o < 0 ? (ZPOS64_T)-1 : (ZPOS64_T)o;
}

static long ZCALLBACK zf_seek(voidpf opaque, voidpf stream, ZPOS64_T off, int origin)
{
	int w = origin == ZLIB_FILEFUNC_SEEK_CUR ? SEEK_CUR : origin == ZLIB_FILEFUNC_SEEK_END ? SEEK_END : SEEK_SET;

	(void)opaque;
	return fseeko(stream, (off_t)off, w) == 0 ? 0 : -1;
}

static int ZCALLBACK zf_close(voidpf opaque, voidpf stream)
{
	(void)opaque;
	return fflush(stream) == 0 ? 0 : -1;
}

static int ZCALLBACK zf_error(voidpf opaque, voidpf stream)
{
	(void)opaque;
	return ferror((FILE *)stream);
}

static int write_fail(struct pv *p, const char *what)
{
	int e = errno;

	return PFC_FAIL_NOOFF(p->err, WRITE, "'%s': cannot write %s%s%s", p->outname, what, e ? ": " : "",
			      e ? strerror(e) : "");
}

static int entry_open(struct pv *p, const char *name, int dir, uint64_t size)
{
	zip_fileinfo zi;
	char full[4096];
	int ret;

	memset(&zi, 0, sizeof(zi));
	zi.tmz_date = p->when;
	/* st_mode in the high 16 bits, as Info-ZIP writes it; MS-DOS directory bit for folders */
	zi.external_fa = dir ? ((uLong)(040755) << 16) | 0x10 : (uLong)(0100644) << 16;
	if (snprintf(full, sizeof(full), "%s%s", p->dir, name) >= (int)sizeof(full))
		return PFC_FAIL_NOOFF(p->err, WRITE, "'%s': entry name too long", p->outname);
	errno = 0;
	ret = zipOpenNewFileInZip4_64(p->zf, full, &zi, NULL, 0, NULL, 0, NULL, dir ? 0 : Z_DEFLATED,
				      dir ? 0 : Z_DEFAULT_COMPRESSION, 0, -MAX_WBITS, DEF_MEM_LEVEL,
				      Z_DEFAULT_STRATEGY, NULL, 0, ZIP_VERSION_MADE_BY, 0, size >= PFC_ZIP64_FROM);
	return ret == ZIP_OK ? 0 : write_fail(p, full);
}

static int entry_write(struct pv *p, const void *data, size_t n)
{
	const char *c = data;

	while (n) {
		unsigned k = n > CHUNK ? CHUNK : (unsigned)n;
		errno = 0;
		if (zipWriteInFileInZip(p->zf, c, k) != ZIP_OK)
			return write_fail(p, "an entry");
		c += k;
		n -= k;
	}
	return 0;
}

static int entry_close(struct pv *p)
{
	errno = 0;
	return zipCloseFileInZip(p->zf) == ZIP_OK ? 0 : write_fail(p, "an entry");
}

/* The frame line of a unique frame, formatted once. */
static int frame_line(struct pv *p, uint32_t fid, const char **str, size_t *len)
{
	uint32_t id = p->line_of[fid];

	if (!id) {
		struct pfc_sb t = { 0 };
		if (pfc_perfview_frame(&t, p->s, fid) < 0) {
			pfc_sb_free(&t);
			return PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt");
		}
		id = pfc_intern(&p->lines, t.buf, t.len);
		pfc_sb_free(&t);
		if (id == UINT32_MAX)
			return PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt");
		p->line_of[fid] = ++id;
	}
	*str = pfc_intern_str(&p->lines, id - 1);
	*len = pfc_intern_len(&p->lines, id - 1);
	return 0;
}

/* Every sample in time order.  With `size`, only count the bytes (the entry's size must
 * be known before it is opened, to choose zip64); otherwise write them. */
static int emit_text(struct pv *p, uint64_t *size)
{
	struct pfc_session *s = p->s;
	struct pfc_sb hdr = { 0 };
	uint64_t total = 0;
	size_t i, k;
	int ret = 0;

	pfc_sb_reset(&p->buf);
	for (i = 0; i < s->nr_stream && ret == 0; i++) {
		const struct pfc_srec *r = &s->stream[i];
		const struct pfc_stack *st = &s->stacks.stacks[r->stack];

		pfc_sb_reset(&hdr);
		if (pfc_perfview_header(&hdr, s, r, p->tp.len && p->tp.len[i] ? p->tp.text + p->tp.off[i] : NULL,
					p->tp.len ? p->tp.len[i] : 0) < 0) {
			ret = PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt");
			break;
		}
		total += hdr.len;
		if (!size)
			pfc_sb_add(&p->buf, hdr.buf, hdr.len);
		for (k = 0; k < st->nr; k++) {
			const char *l = NULL;
			size_t n = 0;
			if ((ret = frame_line(p, s->stacks.frame_ids[st->first + k], &l, &n)) < 0)
				break;
			total += n;
			if (!size)
				pfc_sb_add(&p->buf, l, n);
		}
		total++;
		if (size)
			continue;
		/* the blank line ends every sample, with or without frames (old PerfView needs it) */
		pfc_sb_addc(&p->buf, '\n');
		if (p->buf.oom)
			ret = PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt");
		else if (p->buf.len >= CHUNK) {
			ret = entry_write(p, p->buf.buf, p->buf.len);
			pfc_sb_reset(&p->buf);
		}
	}
	if (ret == 0 && !size && p->buf.len)
		ret = entry_write(p, p->buf.buf, p->buf.len);
	pfc_sb_reset(&p->buf);
	pfc_sb_free(&hdr);
	if (size)
		*size = total;
	return ret;
}

static int add_text(struct pv *p)
{
	uint64_t size;
	size_t i;
	int ret;

	for (i = 0; i < p->s->nr_stream; i++) {
		const struct pfc_srec *r = &p->s->stream[i];
		const struct pfc_stack *st = &p->s->stacks.stacks[r->stack];
		if (!(r->flags & PFC_S_HAS_TIME))
			p->nr_no_time++;
		if (st->pid < 0 || st->tid < 0)
			p->nr_no_tid++;
	}
	if ((ret = emit_text(p, &size)) < 0 || (ret = entry_open(p, "perf.data.txt", 0, size)) < 0 ||
	    (ret = emit_text(p, NULL)) < 0)
		return ret;
	return entry_close(p);
}

/* Copy a file from disk into an entry.  Returns 1 when the file cannot be read (the
 * caller logs it), 0 when copied, <0 on a write error. */
static int add_file(struct pv *p, const char *path, const char *entry)
{
	struct stat sb;
	FILE *f = fopen(path, "rb");
	char *b;
	size_t n;
	int ret;

	if (!f)
		return 1;
	if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
		fclose(f);
		return 1;
	}
	b = malloc(CHUNK);
	if (!b) {
		fclose(f);
		return PFC_FAIL_NOOFF(p->err, NOMEM, "copying '%s'", path);
	}
	ret = entry_open(p, entry, 0, (uint64_t)sb.st_size);
	while (ret == 0 && (n = fread(b, 1, CHUNK, f)) > 0)
		ret = entry_write(p, b, n);
	if (ret == 0 && ferror(f))
		ret = PFC_FAIL_NOOFF(p->err, IO, "cannot read '%s': %s", path, strerror(errno));
	if (ret == 0)
		ret = entry_close(p);
	free(b);
	fclose(f);
	return ret;
}

static int side_add(struct pv *p, const char *path, const char *entry)
{
	size_t i;

	for (i = 0; i < p->nr_side; i++)
		if (!strcmp(p->side[i].entry, entry))
			return 0;
	if (p->nr_side == p->cap_side) {
		size_t cap = p->cap_side ? p->cap_side * 2 : 8;
		struct side *n = realloc(p->side, cap * sizeof(*n));
		if (!n)
			return PFC_FAIL_NOOFF(p->err, NOMEM, "side files");
		p->side = n;
		p->cap_side = cap;
	}
	p->side[p->nr_side].path = strdup(path);
	p->side[p->nr_side].entry = strdup(entry);
	if (!p->side[p->nr_side].path || !p->side[p->nr_side].entry) {
		free(p->side[p->nr_side].path);
		free(p->side[p->nr_side].entry);
		return PFC_FAIL_NOOFF(p->err, NOMEM, "side files");
	}
	p->nr_side++;
	return 0;
}

static int cmp_side(const void *a, const void *b)
{
	return strcmp(((const struct side *)a)->entry, ((const struct side *)b)->entry);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* "jitted-PID-N.so" -> PID; -1 when the name is not one of perf inject's. */
static int jitted_pid(const char *name)
{
	const char *b = base_name(name), *e;
	long pid;

	if (strncmp(b, "jitted-", 7))
		return -1;
	pid = strtol(b + 7, (char **)&e, 10);
	if (e == b + 7 || *e != '-' || pid <= 0 || pid > 0x7fffffff)
		return -1;
	return (int)pid;
}

static int readable(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, R_OK) == 0;
}

/* The perf maps that resolved frames, their perfinfo files, and the jitdumps of the
 * processes with JIT frames (found like the maps: --map-dir, then /tmp). */
static int collect_side_files(struct pv *p)
{
	const struct pfc_machine *m = &p->s->machine;
	const char *map_dir = p->s->opts->map_dir;
	char path[4096], entry[300];
	int *pids = NULL;
	size_t i, nr_pids = 0;
	int ret = 0;

	pids = calloc(m->nr_dsos + 1, sizeof(*pids));
	if (!pids)
		return PFC_FAIL_NOOFF(p->err, NOMEM, "side files");
	for (i = 0; i < m->nr_dsos && ret == 0; i++) {
		const struct pfc_dso *d = m->dsos[i];
		int pid = -1;

		if (!d->loaded)
			continue;
		if (d->kind == PFC_DSO_PERFMAP && d->perfmap_path) {
			const char *b = base_name(d->perfmap_path);
			pid = d->pid;
			ret = side_add(p, d->perfmap_path, b);
			/* ${mapFile/perf/perfinfo}, as perfcollect copied it */
			if (ret == 0 && !strncmp(b, "perf-", 5) &&
			    snprintf(path, sizeof(path), "%.*sperfinfo-%s", (int)(b - d->perfmap_path), d->perfmap_path,
				     b + 5) < (int)sizeof(path) && readable(path))
				ret = side_add(p, path, base_name(path));
		} else if (d->kind == PFC_DSO_FILE) {
			pid = jitted_pid(d->name);
		}
		if (pid > 0) {
			size_t k;
			for (k = 0; k < nr_pids && pids[k] != pid; k++)
				;
			if (k == nr_pids)
				pids[nr_pids++] = pid;
		}
	}
	for (i = 0; i < nr_pids && ret == 0; i++) {
		snprintf(entry, sizeof(entry), "jit-%d.dump", pids[i]);
		path[0] = 0;
		if (map_dir)
			snprintf(path, sizeof(path), "%s/%s", map_dir, entry);
		if (!path[0] || !readable(path))
			snprintf(path, sizeof(path), "/tmp/%s", entry);
		if (readable(path))
			ret = side_add(p, path, entry);
	}
	free(pids);
	if (p->nr_side)
		qsort(p->side, p->nr_side, sizeof(*p->side), cmp_side);
	return ret;
}

/* Entry times: when the recording was made, as perf report's "captured on" tells it (the
 * input's modification time); 1980-01-01 for a stream. */
static void entry_time(struct pv *p)
{
	struct tm tm;
	time_t t;

	memset(&p->when, 0, sizeof(p->when));
	p->when.tm_year = 1980;
	p->when.tm_mday = 1;
	if (!p->s->rd.have_mtime)
		return;
	t = (time_t)p->s->rd.mtime;
	if (!gmtime_r(&t, &tm) || tm.tm_year + 1900 < 1980 || tm.tm_year + 1900 > 2107)
		return;
	p->when.tm_year = (uInt)tm.tm_year + 1900;
	p->when.tm_mon = (uInt)tm.tm_mon;
	p->when.tm_mday = (uInt)tm.tm_mday;
	p->when.tm_hour = (uInt)tm.tm_hour;
	p->when.tm_min = (uInt)tm.tm_min;
	p->when.tm_sec = (uInt)tm.tm_sec;
}

/* NAME of NAME.trace.zip (or NAME.zip); for stdout, the input's name without ".data". */
static char *trace_name(const struct pfc_wopts *o, const char *input)
{
	const char *b;
	size_t n;
	char *r;

	if (o->output && strcmp(o->output, "-")) {
		b = base_name(o->output);
		n = strlen(b);
		if (n > 10 && !strcasecmp(b + n - 10, ".trace.zip"))
			n -= 10;
		else if (n > 4 && !strcasecmp(b + n - 4, ".zip"))
			n -= 4;
	} else if (input && strcmp(input, "-")) {
		b = base_name(input);
		n = strlen(b);
		if (n > 5 && !strcmp(b + n - 5, ".data"))
			n -= 5;
	} else {
		b = "perf";
		n = 4;
	}
	if (!n) {
		b = "perf";
		n = 4;
	}
	r = malloc(n + 8);
	if (r)
		snprintf(r, n + 8, "%.*s.trace/", (int)n, b);
	return r;
}

/* ---- perfcollect.log ---- */

static const char *dso_kind_name(enum pfc_dso_kind k)
{
	switch (k) {
	case PFC_DSO_FILE: return "elf";
	case PFC_DSO_KERNEL: return "kernel";
	case PFC_DSO_PERFMAP: return "perf-map";
	case PFC_DSO_VDSO: return "vdso";
	case PFC_DSO_KSYM: return "ksymbol";
	default: return "other";
	}
}

static void build_log(struct pv *p, int have_perf_data)
{
	struct pfc_session *s = p->s;
	const struct pfc_opts *so = s->opts;
	const struct pfc_machine *m = &s->machine;
	struct pfc_sb *L = &p->log;
	uint64_t with_cpu = 0;
	size_t i;

	for (i = 0; i < s->nr_stream; i++)
		if (s->stream[i].cpu != UINT32_MAX)
			with_cpu++;
	pfc_sb_addf(L, "perfconv %s: PerfView trace from a perf.data recording\n", p->o->version ? p->o->version : "");
	if (p->o->command_line)
		pfc_sb_addf(L, "Command line: %s\n", p->o->command_line);
	pfc_sb_addf(L, "Input: %s (%s, %s byte order%s)\n", so->input, s->rd.pipe_mode ? "pipe mode" : "file mode",
		    s->rd.swap ? "opposite" : "native", s->rd.bytes_total ? "" : ", read as a stream");
	if (s->rd.bytes_total)
		pfc_sb_addf(L, "Input size: %llu bytes\n", (unsigned long long)s->rd.bytes_total);
	pfc_sb_addf(L, "Records: %llu\n", (unsigned long long)s->st.nr_records);
	for (i = 0; i < s->rd.nr_evsels; i++)
		pfc_sb_addf(L, "Event: %s: %llu samples\n", pfc_session_evsel_name(s, i),
			    (unsigned long long)s->rd.evsels[i]->nr_samples);
	pfc_sb_addf(L, "Samples: %llu read, %zu written to perf.data.txt (%zu unique stacks, %zu unique frames)\n",
		    (unsigned long long)s->st.nr_samples, s->nr_stream, s->stacks.nr_stacks, s->stacks.nr_frames);
	pfc_sb_addf(L, "Fields: comm,pid,tid,%stime,period,event,ip,sym,dso,trace\n", with_cpu ? "cpu," : "");
	if (s->nr_stream && with_cpu < s->nr_stream)
		pfc_sb_addf(L, "Warning: %llu of %zu samples have no cpu field: PerfView will weight those samples "
			       "globally (by the gap to the previous sample of any CPU), not per CPU\n",
			    (unsigned long long)(s->nr_stream - with_cpu), s->nr_stream);
	if (p->nr_no_time)
		pfc_sb_addf(L, "Warning: %llu samples have no time stamp (recorded without time): they are written "
			       "with time 0.000000, and PerfView cannot weight them\n",
			    (unsigned long long)p->nr_no_time);
	if (s->st.nr_lost_events || s->st.nr_lost_samples)
		pfc_sb_addf(L, "Warning: %llu events lost in %llu LOST records, %llu samples lost\n",
			    (unsigned long long)s->st.nr_lost_events, (unsigned long long)s->st.nr_lost_records,
			    (unsigned long long)s->st.nr_lost_samples);
	if (p->nr_no_tid)
		pfc_sb_addf(L, "Warning: %llu samples have no pid/tid: they are written as 0/0\n",
			    (unsigned long long)p->nr_no_tid);
	if (p->o->output && strcmp(p->o->output, "-") &&
	    (strlen(p->o->output) < 10 || strcasecmp(p->o->output + strlen(p->o->output) - 10, ".trace.zip")))
		pfc_sb_adds(L, "Warning: PerfView opens this archive only under a name ending in .trace.zip\n");
	if (p->tp_why)
		pfc_sb_addf(L, "Warning: tracepoint payloads are not written: %s\n", p->tp_why);
	if (s->st.nr_samples_bad)
		pfc_sb_addf(L, "Warning: %llu samples could not be decoded\n", (unsigned long long)s->st.nr_samples_bad);
	if (s->st.nr_dwarf_cut_stack + s->st.nr_dwarf_bad_regs + s->st.nr_dwarf_bad_cfi)
		pfc_sb_addf(L, "Warning: %llu user stacks recorded with --call-graph dwarf were cut short "
			       "(%llu by the end of the copied stack, %llu by missing registers, %llu by unusable CFI)\n",
			    (unsigned long long)(s->st.nr_dwarf_cut_stack + s->st.nr_dwarf_bad_regs + s->st.nr_dwarf_bad_cfi),
			    (unsigned long long)s->st.nr_dwarf_cut_stack, (unsigned long long)s->st.nr_dwarf_bad_regs,
			    (unsigned long long)s->st.nr_dwarf_bad_cfi);
	pfc_sb_addf(L, "Symbol options: symfs %s, kallsyms %s, build-id cache %s, perf maps from %s%s%s\n",
		    so->symfs ? so->symfs : "(none)", so->kallsyms ? so->kallsyms : "/proc/kallsyms if the kernel matches",
		    so->buildid_dir ? so->buildid_dir : "(none)", so->map_dir ? so->map_dir : "/tmp",
		    so->map_dir ? " then /tmp" : "", so->minidebuginfo ? ", MiniDebugInfo" : "");
	pfc_sb_adds(L, "Symbol sources used (DSOs with sampled frames):\n");
	for (i = 0; i < m->nr_dsos; i++) {
		const struct pfc_dso *d = m->dsos[i];
		size_t nsym = d->perfmap ? d->perfmap->n : d->syms ? d->syms->nr : 0;

		if (!d->loaded && d->kind != PFC_DSO_KSYM)
			continue;
		pfc_sb_addf(L, "  %s %s: ", dso_kind_name(d->kind), d->name);
		if (d->kind == PFC_DSO_KSYM)
			pfc_sb_adds(L, "named by a KSYMBOL record\n");
		else if (nsym && d->perfmap_path)
			pfc_sb_addf(L, "%zu symbols from %s\n", nsym, d->perfmap_path);
		else if (nsym)
			pfc_sb_addf(L, "%zu symbols\n", nsym);
		else
			pfc_sb_adds(L, "no symbols found\n");
	}
	pfc_sb_addf(L, "Unresolved frames (unique): %llu user, %llu kernel, %llu outside any mapping\n",
		    (unsigned long long)s->st.nr_unresolved_user, (unsigned long long)s->st.nr_unresolved_kernel,
		    (unsigned long long)s->st.nr_unresolved_nomap);
	for (i = 0; i < p->nr_side; i++)
		pfc_sb_addf(L, "Copied %s from %s\n", p->side[i].entry, p->side[i].path);
	if (have_perf_data)
		pfc_sb_addf(L, "Copied perf.data from %s\n", so->input);
	if (p->o->warnings && *p->o->warnings) {
		const char *w = p->o->warnings;
		pfc_sb_adds(L, "Conversion warnings:\n");
		while (*w) {
			const char *e = strchr(w, '\n');
			size_t n = e ? (size_t)(e - w) : strlen(w);
			pfc_sb_adds(L, "  ");
			pfc_sb_add(L, w, n);
			pfc_sb_addc(L, '\n');
			w += n + (e ? 1 : 0);
		}
	}
}

static int pack(struct pv *p)
{
	const char *input = p->s->opts->input;
	int ret, have_perf_data = 0;
	size_t i;

	entry_time(p);
	if ((ret = entry_open(p, "", 1, 0)) < 0 || (ret = entry_close(p)) < 0)
		return ret;
	if ((ret = add_text(p)) < 0)
		return ret;
	if ((ret = collect_side_files(p)) < 0)
		return ret;
	for (i = 0; i < p->nr_side; i++) {
		ret = add_file(p, p->side[i].path, p->side[i].entry);
		if (ret < 0)
			return ret;
		if (ret > 0) {	/* gone since it was read: say so in the log */
			pfc_sb_addf(&p->log, "Warning: cannot read %s any more: not copied\n", p->side[i].path);
			free(p->side[i].entry);
			p->side[i].entry = strdup("(not copied)");
		}
	}
	if (p->o->include_perf_data) {
		if (!input || !strcmp(input, "-"))
			return PFC_FAIL_NOOFF(p->err, USAGE, "--include-perf-data needs the recording as a file, not stdin");
		ret = add_file(p, input, "perf.data");
		if (ret > 0)
			return PFC_FAIL_NOOFF(p->err, OPEN, "cannot read '%s' for --include-perf-data: %s", input,
					      strerror(errno));
		if (ret < 0)
			return ret;
		have_perf_data = 1;
	}
	{
		struct pfc_sb early = p->log;	/* warnings found while copying come last */
		memset(&p->log, 0, sizeof(p->log));
		build_log(p, have_perf_data);
		if (early.len)
			pfc_sb_add(&p->log, early.buf, early.len);
		pfc_sb_free(&early);
	}
	if (p->log.oom)
		return PFC_FAIL_NOOFF(p->err, NOMEM, "perfcollect.log");
	if ((ret = entry_open(p, "perfcollect.log", 0, p->log.len)) < 0 ||
	    (ret = entry_write(p, p->log.buf, p->log.len)) < 0)
		return ret;
	return entry_close(p);
}

static int copy_stream(FILE *from, FILE *to)
{
	char b[1 << 16];
	size_t n;

	rewind(from);
	while ((n = fread(b, 1, sizeof(b), from)) > 0)
		if (fwrite(b, 1, n, to) != n)
			return -1;
	return ferror(from) ? -1 : 0;
}

static int pv_write(FILE *out, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err)
{
	zlib_filefunc64_def ff;
	struct pv p;
	int ret, seekable;
	size_t i;

	memset(&p, 0, sizeof(p));
	p.s = s;
	p.o = o;
	p.err = err;
	p.outname = o->output && strcmp(o->output, "-") ? o->output : "<stdout>";
	/* the zip's local headers are completed in place: a pipe gets the archive from a
	 * temporary file */
	seekable = fseeko(out, 0, SEEK_CUR) == 0 && ftello(out) >= 0;
	p.fp = seekable ? out : tmpfile();
	if (!p.fp)
		return PFC_FAIL_NOOFF(err, WRITE, "cannot create a temporary file: %s", strerror(errno));
	p.dir = trace_name(o, s->opts->input);
	p.line_of = calloc(s->stacks.nr_frames + 1, sizeof(*p.line_of));
	if (!p.dir || !p.line_of || pfc_intern_init(&p.lines) < 0) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "trace.zip");
		goto out;
	}
	memset(&ff, 0, sizeof(ff));
	ff.zopen64_file = zf_open;
	ff.zread_file = zf_read;
	ff.zwrite_file = zf_write;
	ff.ztell64_file = zf_tell;
	ff.zseek64_file = zf_seek;
	ff.zclose_file = zf_close;
	ff.zerror_file = zf_error;
	ff.opaque = p.fp;
	p.zf = zipOpen2_64(p.outname, APPEND_STATUS_CREATE, NULL, &ff);
	if (!p.zf) {
		ret = write_fail(&p, "the archive");
		goto out;
	}
	/* the archive is written without payloads it cannot have (p.tp_why goes to the log),
	 * even when the tracing data is malformed; only running out of memory stops it */
	ret = pfc_tptext_render(s, NULL, NULL, &p.tp, &p.tp_why, err);
	if (ret == 0 || p.tp_why) {
		memset(err, 0, sizeof(*err));
		ret = pack(&p);
	}
	errno = 0;
	if (zipClose(p.zf, NULL) != ZIP_OK && ret == 0)
		ret = write_fail(&p, "the archive's directory");
	if (ret == 0 && !seekable && copy_stream(p.fp, out) < 0)
		ret = write_fail(&p, "the archive");
out:
	if (p.fp && p.fp != out)
		fclose(p.fp);
	for (i = 0; i < p.nr_side; i++) {
		free(p.side[i].path);
		free(p.side[i].entry);
	}
	free(p.side);
	free(p.dir);
	free(p.line_of);
	if (p.lines.strs)
		pfc_intern_exit(&p.lines);
	pfc_sb_free(&p.buf);
	pfc_sb_free(&p.log);
	pfc_tptext_free(&p.tp);
	return ret;
}

static const char *const perfview_suffixes[] = { ".trace.zip", NULL };

const struct pfc_writer pfc_writer_perfview = {
	.name = "trace.zip",
	.suffixes = perfview_suffixes,
	.needs = PFC_NEED_STREAM | PFC_NEED_LOG | PFC_NO_GZIP,
	.write = pv_write,
};
