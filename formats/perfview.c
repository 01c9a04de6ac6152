/*
 * perfview.c - PerfView's `.trace.zip` as perfcollect lays it out: a `NAME.trace/` folder
 * with perf.data.txt (perf script text in a canonical form old and new PerfView parse,
 * formatted by hand from the sample stream), perfcollect.log, the perf maps and jitdumps
 * that named JIT frames and, on request, the recording; entry times from the recording; with
 * --events, the runtime's events of .nettrace streams as perfcollect's LTTng CTF (ctf.c).
 * The zip container is zipfile.c's, deflating the text on worker threads zipdeflate.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "converter/machine/intern.h"
#include "converter/machine/machine.h"
#include "converter/jit/perfmap.h"
#include "converter/util/strbuf.h"
#include "converter/native/symtab.h"
#include "formats/ctf.h"
#include "formats/frameline.h"
#include "formats/perfscript.h"
#include "formats/tptext.h"
#include "formats/perfview.h"
#include "formats/writer.h"
#include "formats/zipdeflate.h"
#include "formats/zipfile.h"

/* ---- perf.data.txt: the canonical text ---- */

/* Names come from the input (comms, ELF symbols, DSO paths): a line break in one would end
 * the header or the frame line early, so it is written as a space, and so is a NUL.  Such
 * names are rare:
 * libc's vectorized memchr finds that there is none faster than a loop over the bytes. */
static inline char *put_name(char *d, const char *s, size_t n)
{
	size_t i;

	if (n <= 32) {
		/* a comm (16 bytes at most): one pass, without three calls into libc */
		for (i = 0; i < n; i++) {
			char c = s[i];
			d[i] = c == '\n' || c == '\r' || c == 0 ? ' ' : c;
		}
		return d + n;
	}
	memcpy(d, s, n);
	if (memchr(s, '\n', n) || memchr(s, '\r', n) || memchr(s, 0, n))
		for (i = 0; i < n; i++)
			if (d[i] == '\n' || d[i] == '\r' || d[i] == 0)
				d[i] = ' ';
	return d + n;
}


/* Bytes a header may take beyond its comm, event name and payload. */
#define HDR_FIXED 120

/* The header line of pfc_perfview_header into d (room for HDR_FIXED + comm, event name and
 * payload); returns its length.  Formatted by hand: there is one per sample. */
static size_t header_fmt(char *d0, struct pfc_session *s, const struct pfc_srec *r, const char *trace,
			 size_t trace_len)
{
	const struct pfc_stack *st = &s->stacks.stacks[r->stack];
	const char *ev = pfc_session_evsel_name(s, st->evsel);
	char *d = d0;

	d = put_name(d, pfc_intern_str(&s->strings, st->comm), pfc_intern_len(&s->strings, st->comm));
	/* PerfView reads no sign: a sample without a thread (-1) is written as 0 */
	*d++ = ' ';
	d = pfc_put_dec(d, st->pid < 0 ? 0 : (uint64_t)st->pid, 1);
	*d++ = '/';
	d = pfc_put_dec(d, st->tid < 0 ? 0 : (uint64_t)st->tid, 1);
	*d++ = ' ';
	if (r->cpu != UINT32_MAX) {
		*d++ = '[';
		d = pfc_put_dec(d, r->cpu, 3);
		*d++ = ']';
		*d++ = ' ';
	}
	d = pfc_put_dec(d, r->time / 1000000000ull, 1);
	*d++ = '.';
	d = pfc_put_dec(d, r->time % 1000000000ull / 1000ull, 6);
	*d++ = ':';
	*d++ = ' ';
	if (r->flags & PFC_S_HAS_PERIOD) {
		d = pfc_put_dec(d, r->period, 1);
		*d++ = ' ';
	}
	{
		size_t n = strlen(ev);
		memcpy(d, ev, n);
		d += n;
	}
	*d++ = ':';
	*d++ = ' ';
	if (trace_len)	/* one line per header, whatever the format prints */
		d = put_name(d, trace, trace_len);
	*d++ = '\n';
	return (size_t)(d - d0);
}

static size_t header_room(struct pfc_session *s, const struct pfc_srec *r, size_t trace_len)
{
	const struct pfc_stack *st = &s->stacks.stacks[r->stack];

	return HDR_FIXED + pfc_intern_len(&s->strings, st->comm) + strlen(pfc_session_evsel_name(s, st->evsel)) +
	       trace_len;
}

int pfc_perfview_header(struct pfc_sb *b, struct pfc_session *s, const struct pfc_srec *r,
			const char *trace, size_t trace_len)
{
	size_t room = header_room(s, r, trace_len);
	char *t = malloc(room);

	if (!t)
		return -1;
	pfc_sb_add(b, t, header_fmt(t, s, r, trace, trace_len));
	free(t);
	return b->oom ? -1 : 0;
}

static size_t frame_room(struct pfc_session *s, const struct pfc_frame *f)
{
	return pfc_frameline_room(&s->strings, f);
}

/* "\t%16llx sym (dso)\n" into d (frame_room bytes), perf script's line with its names'
 * line breaks made spaces; returns its length. */
static size_t frame_fmt(char *d0, struct pfc_session *s, const struct pfc_frame *f)
{
	return pfc_frameline_fmt(d0, &s->strings, f, PFC_PS_SYM | PFC_PS_DSO, put_name);
}

int pfc_perfview_frame(struct pfc_sb *b, struct pfc_session *s, uint32_t fid)
{
	const struct pfc_frame *f = &s->stacks.frames[fid];
	char *t = malloc(frame_room(s, f));

	if (!t)
		return -1;
	pfc_sb_add(b, t, frame_fmt(t, s, f));
	free(t);
	return b->oom ? -1 : 0;
}

/* A block of frame lines. */
#define LBLOCK ((size_t)256 << 10)
struct lblock {
	struct lblock *next;
	size_t used, cap;
	char data[];
};

struct pv {
	struct pfc_session *s;
	const struct pfc_wopts *o;
	struct pfc_error *err;
	struct pfc_zip zip;           /* the archive */
	char *dir;                    /* "NAME.trace/", every entry's folder */
	struct lblock *lines;         /* frame lines, once per unique frame (newest block first) */
	const char **line_str;        /* frame id -> its line (NULL: not made yet), */
	uint32_t *line_len;           /* and its length */
	uint64_t *stack_len;          /* stack id -> bytes of its frame lines + 1 (0: not summed) */
	struct pfc_sb log;
	uint64_t nr_written, nr_with_cpu, nr_no_time, nr_no_tid;
	struct pfc_tptext tp;         /* tracepoint payloads, in stream order */
	const char *tp_why;           /* why they could not be rendered */
	struct pfc_ctf *ctf;          /* --events: the runtime's events, read as they are written */
	/* side files copied */
	struct side { char *path, *name, *entry; } *side;	/* open path, name where recorded */
	size_t nr_side, cap_side;
};

/* ---- perf.data.txt, formatted and deflated on worker threads (zipdeflate.c) ----
 * The main thread reads the sample stream (and the tracepoint payloads' text, in the same
 * order) and hands each sample to the workers with the most bytes its text can take; the
 * frame lines and event names they read are made before they start. */

/* A sample's text into d (its room's bytes); returns its length, or SIZE_MAX when a frame
 * line was not made before the workers started.  The workers call it, at the same time. */
static size_t format_sample(void *arg, const void *item, const char *trace, uint32_t tlen, char *d)
{
	struct pv *p = arg;
	struct pfc_session *s = p->s;
	const struct pfc_srec *r = item;
	const struct pfc_stack *st = &s->stacks.stacks[r->stack];
	const uint32_t *fids = s->stacks.frame_ids + st->first;
	char *d0 = d;
	size_t k;

	d += header_fmt(d, s, r, trace, tlen);
	for (k = 0; k < st->nr; k++) {
		uint32_t fid = fids[k];
		if (!p->line_str[fid])
			return SIZE_MAX;
		memcpy(d, p->line_str[fid], p->line_len[fid]);
		d += p->line_len[fid];
	}
	/* the blank line ends every sample, with or without frames (old PerfView needs it) */
	*d++ = '\n';
	return (size_t)(d - d0);
}

/* Hand a sample to the workers: its room is its header line, its frame lines and the blank
 * line, worked out once, here; the frame lines alone are the least it takes. */
static int text_add(struct pv *p, struct pfc_zipdfl *d, const struct pfc_srec *r, const char *trace, uint32_t tlen)
{
	uint64_t lines = p->stack_len[r->stack], room = header_room(p->s, r, tlen) + lines;
	struct pfc_srec item = *r;

	if (room > UINT32_MAX)
		return PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt: a sample of %llu bytes of text",
				      (unsigned long long)room);
	item.raw = NULL;	/* its text is the extra bytes */
	return pfc_zipdfl_add(d, &item, trace, tlen, room, lines);
}

/* The frame line of a unique frame, formatted once into the blocks of p->lines (frame ids
 * are unique frames: their lines need no interning). */
static int frame_line(struct pv *p, uint32_t fid, const char **str, size_t *len)
{
	if (!p->line_str[fid]) {
		const struct pfc_frame *f = &p->s->stacks.frames[fid];
		size_t room = frame_room(p->s, f), n;
		struct lblock *b = p->lines;
		if (!b || b->cap - b->used < room) {
			size_t cap = room > LBLOCK ? room : LBLOCK;
			if (!(b = malloc(sizeof(*b) + cap)))
				return PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt");
			b->next = p->lines;
			b->used = 0;
			b->cap = cap;
			p->lines = b;
		}
		n = frame_fmt(b->data + b->used, p->s, f);
		if (n > UINT32_MAX)
			return PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt: a frame line of %zu bytes", n);
		p->line_str[fid] = b->data + b->used;
		p->line_len[fid] = (uint32_t)n;
		b->used += n;
	}
	*str = p->line_str[fid];
	*len = p->line_len[fid];
	return 0;
}

/* The frame lines of a stack, summed once (for the entry's size). */
static int stack_bytes(struct pv *p, uint32_t sid, uint64_t *n)
{
	const struct pfc_stack *st = &p->s->stacks.stacks[sid];
	uint64_t sum = 0;
	size_t k;
	int ret;

	if (p->stack_len[sid]) {
		*n = p->stack_len[sid] - 1;
		return 0;
	}
	for (k = 0; k < st->nr; k++) {
		const char *l = NULL;
		size_t len = 0;
		if ((ret = frame_line(p, p->s->stacks.frame_ids[st->first + k], &l, &len)) < 0)
			return ret;
		sum += len;
	}
	p->stack_len[sid] = sum + 1;
	*n = sum;
	return 0;
}

/* Every sample in time order.  With `size`, only count the bytes (the entry's size must
 * be known before it is opened, to choose zip64) and the samples the log tells about;
 * otherwise hand them to the workers in chunks, to format and deflate into the open entry. */
static int emit_text(struct pv *p, uint64_t *size, struct pfc_zipdfl *d)
{
	struct pfc_session *s = p->s;
	struct pfc_stream_cur cur;
	struct pfc_srec r;
	char hdr[512], *hbig = NULL;
	size_t hbig_cap = 0;
	uint64_t total = 0;
	int ret = 0, got;

	if (pfc_tptext_rewind(&p->tp) < 0)
		p->tp_why = "cannot read back the rendered payloads";
	if (pfc_stream_open(&cur, &s->stream) < 0)
		return PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt");
	while ((got = pfc_stream_next(&cur, &r)) > 0) {
		const struct pfc_stack *st = &s->stacks.stacks[r.stack];
		const char *trace;
		uint32_t tlen;
		uint64_t fb;
		size_t room, hl;
		char *h = hdr;

		pfc_tptext_next(&p->tp, &r, &trace, &tlen);
		p->nr_written++;
		if (r.cpu != UINT32_MAX)
			p->nr_with_cpu++;
		if (!(r.flags & PFC_S_HAS_TIME))
			p->nr_no_time++;
		if (st->pid < 0 || st->tid < 0)
			p->nr_no_tid++;
		if (!size) {
			/* the lines are made (lines_ready): the workers read them now */
			if (!p->stack_len[r.stack]) {
				ret = PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt: a stack without its lines");
				break;
			}
			if ((ret = text_add(p, d, &r, trace, tlen)) < 0)
				break;
			continue;
		}
		if ((ret = stack_bytes(p, r.stack, &fb)) < 0)
			break;
		room = header_room(s, &r, tlen);
		if (room > sizeof(hdr)) {
			if (room > hbig_cap) {
				char *n = realloc(hbig, room);
				if (!n) {
					ret = PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt");
					break;
				}
				hbig = n;
				hbig_cap = room;
			}
			h = hbig;
		}
		hl = header_fmt(h, s, &r, trace, tlen);
		total += hl + fb + 1;
	}
	if (got < 0 && ret == 0)
		ret = PFC_FAIL_NOOFF(p->err, IO, "cannot read the sample stream back");
	pfc_stream_close(&cur);
	free(hbig);
	if (size)
		*size = total;
	return ret;
}

/* More bytes than perf.data.txt can have, from the samples of each stack (0: no bound, the
 * tracepoint payloads' text is not known before it is read). */
static int text_bound(struct pv *p, uint64_t *bound)
{
	struct pfc_session *s = p->s;
	uint64_t b = 0, fb;
	size_t i;
	int ret;

	*bound = 0;
	if (p->tp.f)
		return 0;
	for (i = 0; i < s->nr_stream_per_stack && i < s->stacks.nr_stacks; i++) {
		const struct pfc_stack *st = &s->stacks.stacks[i];
		uint64_t n = s->stream_per_stack[i];
		if (!n)
			continue;
		if ((ret = stack_bytes(p, (uint32_t)i, &fb)) < 0)
			return ret;
		b += n * (fb + 1 + HDR_FIXED + pfc_intern_len(&s->strings, st->comm) +
			  strlen(pfc_session_evsel_name(s, st->evsel)));
	}
	*bound = b;
	return 0;
}

/* Every frame line and event name the samples use, made before the workers read them. */
static int lines_ready(struct pv *p)
{
	struct pfc_session *s = p->s;
	uint64_t fb;
	size_t i;
	int ret;

	for (i = 0; i < s->rd.nr_evsels; i++)
		(void)pfc_session_evsel_name(s, i);
	for (i = 0; i < s->nr_stream_per_stack && i < s->stacks.nr_stacks; i++)
		if (s->stream_per_stack[i] && (ret = stack_bytes(p, (uint32_t)i, &fb)) < 0)
			return ret;
	return 0;
}

static int add_text(struct pv *p)
{
	struct pfc_zipdfl *d;
	struct pfc_zip_sum sum;
	uint64_t size = 0, bound;
	int ret, counted = 0;

	/* the size decides zip64: counted exactly only when a bound does not settle it */
	if ((ret = text_bound(p, &bound)) < 0)
		return ret;
	if (!bound || bound >= PFC_ZIP64_FROM) {
		if ((ret = emit_text(p, &size, NULL)) < 0)
			return ret;
		counted = 1;
		p->nr_written = p->nr_with_cpu = p->nr_no_time = p->nr_no_tid = 0;
	}
	/* the deflate stream is made here, on the workers */
	if ((ret = pfc_zip_entry_begin(&p->zip, "perf.data.txt", 0, counted && size >= PFC_ZIP64_FROM)) < 0)
		return ret;
	if ((ret = lines_ready(p)) < 0)
		return ret;
	if (!(d = pfc_zipdfl_start(&p->zip, sizeof(struct pfc_srec), format_sample, p, "perf.data.txt")))
		return p->err->code ? -p->err->code : -PFC_ERR_NOMEM;
	ret = emit_text(p, NULL, d);
	if (ret == 0)
		ret = pfc_zipdfl_finish(d, &sum);
	if (ret == 0 && counted && sum.usize != size)
		ret = PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt: %llu bytes written, %llu counted",
				     (unsigned long long)sum.usize, (unsigned long long)size);
	if (ret == 0)
		ret = pfc_zip_entry_end(&p->zip, &sum);
	pfc_zipdfl_free(d);
	return ret;
}

static int side_add(struct pv *p, const char *path, const char *name, const char *entry)
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
	p->side[p->nr_side].name = strdup(name);
	p->side[p->nr_side].entry = strdup(entry);
	if (!p->side[p->nr_side].path || !p->side[p->nr_side].name || !p->side[p->nr_side].entry) {
		free(p->side[p->nr_side].path);
		free(p->side[p->nr_side].name);
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

static int side_found(void *arg, const char *path, const char *name, const char *entry)
{
	return side_add(arg, path, name, entry);
}

/* The perf maps that resolved frames, their perfinfo files, and the jitdumps of the
 * processes with JIT frames (found like the maps: --map-dir, then /tmp, or a pack). */
static int collect_side_files(struct pv *p)
{
	int ret = pfc_session_side_files(p->s, side_found, p);

	if (p->nr_side)
		qsort(p->side, p->nr_side, sizeof(*p->side), cmp_side);
	return ret;
}

/* Entry times: when the recording was made, as perf report's "captured on" tells it (the
 * input's modification time); 1980-01-01 for a stream. */
static void entry_time(struct pv *p)
{
	time_t t = (time_t)p->s->rd.mtime;

	pfc_zip_set_time(&p->zip, p->s->rd.have_mtime ? &t : NULL);
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
	uint64_t with_cpu = p->nr_with_cpu, written = p->nr_written;
	size_t i;

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
	pfc_sb_addf(L, "Samples: %llu read, %llu written to perf.data.txt (%zu unique stacks, %zu unique frames)\n",
		    (unsigned long long)s->st.nr_samples, (unsigned long long)written, s->stacks.nr_stacks,
		    s->stacks.nr_frames);
	pfc_sb_addf(L, "Fields: comm,pid,tid,%stime,period,event,ip,sym,dso,trace\n", with_cpu ? "cpu," : "");
	if (written && with_cpu < written) {
		pfc_sb_addf(L, "Warning: %llu of %llu samples have no cpu field: PerfView will weight those samples "
			       "globally (by the gap to the previous sample of any CPU), not per CPU\n",
			    (unsigned long long)(written - with_cpu), (unsigned long long)written);
		/* the log is read in PerfView, long after the recording could have been made again */
		if (p->o->log)
			fprintf(p->o->log, "perfconv: warning: '%s': %llu of %llu samples have no CPU field: PerfView "
				"weighs them by the gap to the previous sample of any CPU, not per CPU; record with "
				"'perf record --sample-cpu'\n", p->o->output && strcmp(p->o->output, "-") ? p->o->output :
				"<stdout>", (unsigned long long)(written - with_cpu), (unsigned long long)written);
	}
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
		pfc_sb_addf(L, "Copied %s from %s\n", p->side[i].entry, p->side[i].name);
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

/* ---- the side files, deflated beside the text ----
 * igzip deflates the side files (a busy service's perf map is near a megabyte) on a thread
 * of their own while the workers make perf.data.txt, into memory; the main thread writes them
 * after the text, in the same order and with the same bytes as when it deflated them itself.
 * A file larger than SIDE_MEM_MAX (a recording with --include-perf-data) is deflated there,
 * into the archive, as before. */
#define SIDE_MEM_MAX ((uint64_t)64 << 20)

struct pre {
	const char *path;
	int state;                    /* 0 not done (deflate it in line), 1 done, 2 cannot be opened, */
	int err_no;                   /* 3 read error (errno), 4 out of memory */
	uint64_t size;                /* fstat's, which decides zip64 */
	struct pfc_zip_sum r;
	struct pfc_zip_out z;
};

struct side_job {
	struct pre *pre;
	size_t n;
	pthread_t th;
	int started;
};

static void side_deflate(struct pre *pr)
{
	struct stat sb;
	FILE *f = fopen(pr->path, "rb");
	int ret;

	if (!f) {
		pr->err_no = errno;
		pr->state = 2;
		return;
	}
	if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
		pr->err_no = errno;
		pr->state = 2;
	} else if ((uint64_t)sb.st_size <= SIDE_MEM_MAX) {
		pr->size = (uint64_t)sb.st_size;
		ret = pfc_zip_deflate(f, NULL, 0, &pr->z, &pr->r);
		pr->err_no = errno;
		pr->state = ret == 0 ? 1 : ret == -2 ? 3 : 4;
	}
	fclose(f);
}

static void *side_main(void *arg)
{
	struct side_job *j = arg;
	size_t i;

	for (i = 0; i < j->n; i++)
		side_deflate(&j->pre[i]);
	return NULL;
}

/* Write a side file deflated by side_main; returns pfc_zip_add_file's values. */
static int add_pre(struct pv *p, struct pre *pr, const char *entry)
{
	switch (pr->state) {
	case 0:
		return pfc_zip_add_file(&p->zip, entry, pr->path);
	case 2:
		errno = pr->err_no;
		return 1;
	case 3:
		return PFC_FAIL_NOOFF(p->err, IO, "cannot read '%s': %s", pr->path, strerror(pr->err_no));
	case 4:
		return PFC_FAIL_NOOFF(p->err, NOMEM, "copying '%s'", pr->path);
	}
	return pfc_zip_add_deflated(&p->zip, entry, pr->size, &pr->z, &pr->r);
}

/* lttng's procname of a runtime event's thread: its comm in the recording, else its process's */
static const char *event_comm(void *arg, int32_t pid, int32_t tid)
{
	struct pv *p = arg;
	struct pfc_machine *m = &p->s->machine;
	const struct pfc_thread *th = pfc_machine_find_thread(m, pid, tid);

	if (!th || !th->comm_set)
		th = pfc_machine_find_thread(m, pid, pid);
	return th && th->comm_set ? pfc_intern_str(&p->s->strings, th->comm) : NULL;
}

/* The runtime's events read and their channels filled on a thread of their own, while the
 * CPU text and the side files go in: only pfc_ctf_fill and event_comm's lookups run there,
 * with an error value of their own. */
struct ctf_job {
	struct pv *p;
	pthread_t th;
	int started, ret;
	struct pfc_error err;
};

static void *ctf_main(void *arg)
{
	struct ctf_job *j = arg;

	j->ret = pfc_ctf_fill(j->p->ctf, event_comm, j->p, &j->err);
	return NULL;
}

static int pack(struct pv *p)
{
	const char *input = p->s->recording_path;
	int ret, have_perf_data = 0, want_data = p->o->include_perf_data && input && strcmp(input, "-");
	struct side_job job = { 0 };
	struct ctf_job ctf = { 0 };
	struct pfc_zip_sum folder = { 0 };
	size_t i;

	entry_time(p);
	if ((ret = pfc_zip_entry_begin(&p->zip, "", 1, 0)) < 0 || (ret = pfc_zip_entry_end(&p->zip, &folder)) < 0)
		return ret;
	if ((ret = collect_side_files(p)) < 0)
		return ret;
	job.n = p->nr_side + (want_data ? 1 : 0);
	if (job.n && !(job.pre = calloc(job.n, sizeof(*job.pre))))
		return PFC_FAIL_NOOFF(p->err, NOMEM, "side files");
	for (i = 0; i < p->nr_side; i++)
		job.pre[i].path = p->side[i].path;
	if (want_data)
		job.pre[p->nr_side].path = input;
	/* without the thread, each file is deflated in line below */
	if (job.n && pthread_create(&job.th, NULL, side_main, &job) == 0)
		job.started = 1;
	ctf.p = p;
	if (p->ctf && pthread_create(&ctf.th, NULL, ctf_main, &ctf) == 0)
		ctf.started = 1;
	ret = add_text(p);
	if (job.started)
		pthread_join(job.th, NULL);
	for (i = 0; ret == 0 && i < p->nr_side; i++) {
		ret = add_pre(p, &job.pre[i], p->side[i].entry);
		if (ret > 0) {	/* gone since it was read: say so in the log */
			pfc_sb_addf(&p->log, "Warning: cannot read %s any more: not copied\n", p->side[i].name);
			free(p->side[i].entry);
			p->side[i].entry = strdup("(not copied)");
			ret = 0;
		}
	}
	if (ret == 0 && p->o->include_perf_data) {
		if (!want_data) {
			ret = PFC_FAIL_NOOFF(p->err, USAGE, "--include-perf-data needs the recording as a file, not stdin");
		} else {
			ret = add_pre(p, &job.pre[p->nr_side], "perf.data");
			if (ret > 0)
				ret = PFC_FAIL_NOOFF(p->err, OPEN, "cannot read '%s' for --include-perf-data: %s", input,
						     strerror(errno));
			have_perf_data = ret == 0;
		}
	}
	for (i = 0; i < job.n; i++)
		free(job.pre[i].z.buf);
	free(job.pre);
	/* the archive is free: the largest channel goes in as it fills, not copied after */
	if (ret == 0 && ctf.started)
		ret = pfc_ctf_stream(p->ctf, &p->zip, "lttngTrace/", p->err);
	if (ctf.started)
		pthread_join(ctf.th, NULL);
	else if (ret == 0 && p->ctf)
		ctf_main(&ctf);
	if (ret == 0 && ctf.ret < 0) {
		*p->err = ctf.err;
		ret = ctf.ret;
	}
	if (ret == 0 && p->ctf)
		ret = pfc_ctf_add(p->ctf, &p->zip, "lttngTrace/", &p->log, p->err);
	if (ret < 0)
		return ret;
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
	return pfc_zip_add_mem(&p->zip, "perfcollect.log", p->log.buf, p->log.len);
}

static int pv_write(FILE *out, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err)
{
	struct pv p;
	int ret;
	size_t i;

	memset(&p, 0, sizeof(p));
	p.s = s;
	p.o = o;
	p.err = err;
	p.dir = trace_name(o, s->recording_name);
	p.line_str = calloc(s->stacks.nr_frames + 1, sizeof(*p.line_str));
	p.line_len = calloc(s->stacks.nr_frames + 1, sizeof(*p.line_len));
	p.stack_len = calloc(s->stacks.nr_stacks + 1, sizeof(*p.stack_len));
	if (!p.dir || !p.line_str || !p.line_len || !p.stack_len) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "trace.zip");
		goto out;
	}
	/* the channels and the UUID from the streams' Trace objects; the events are read as written */
	if (s->evs.events.n && (ret = pfc_ctf_read(&p.ctf, &s->evs.events, s->tuning, err)) < 0)
		goto out;
	if ((ret = pfc_zip_open(&p.zip, out, o->output && strcmp(o->output, "-") ? o->output : "<stdout>", p.dir,
				s->tuning, err)) < 0)
		goto out;
	/* the archive is written without payloads it cannot have (p.tp_why goes to the log),
	 * even when the tracing data is malformed; only running out of memory stops it */
	ret = pfc_tptext_render(s, NULL, NULL, &p.tp, &p.tp_why, err);
	if (ret == 0 || p.tp_why) {
		memset(err, 0, sizeof(*err));
		ret = pack(&p);
	}
	if (ret == 0)
		ret = pfc_zip_finish(&p.zip);
out:
	/* the CTF's threads stopped first: a streamed channel writes into the archive */
	pfc_ctf_free(p.ctf);
	pfc_zip_free(&p.zip);
	for (i = 0; i < p.nr_side; i++) {
		free(p.side[i].path);
		free(p.side[i].name);
		free(p.side[i].entry);
	}
	free(p.side);
	free(p.dir);
	free(p.line_str);
	free(p.line_len);
	free(p.stack_len);
	while (p.lines) {
		struct lblock *n = p.lines->next;
		free(p.lines);
		p.lines = n;
	}
	pfc_sb_free(&p.log);
	pfc_tptext_free(&p.tp);
	return ret;
}

static const char *const perfview_suffixes[] = { ".trace.zip", NULL };

const struct pfc_writer pfc_writer_perfview = {
	.name = "trace.zip",
	.suffixes = perfview_suffixes,
	.needs = PFC_NEED_STREAM | PFC_NEED_LOG | PFC_NO_GZIP | PFC_READS_EVENTS,
	.write = pv_write,
};
