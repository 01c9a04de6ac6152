/*
 * perfscript.c - perf script's text, byte for byte as perf 6.1 prints it, from the
 * time-ordered sample stream: its default fields per event type or a -F list, sample
 * header lines, one TAB-indented line per callchain frame and a blank line after each
 * callchain, and tracepoint payloads decoded with libtraceevent from the recording's
 * tracing data.  Flamescope reads this text.  Numbers are formatted by hand and each
 * unique frame's line is built once; gzip output goes through zlib.  Symbolization and
 * ordering are the session's business, not this file's.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "converter/machine/intern.h"
#include "converter/native/symtab.h"
#include "converter/util/strbuf.h"
#include "formats/datasrc.h"
#include "formats/frameline.h"
#include "formats/tptext.h"
#include "formats/perfscript.h"
#include "formats/writer.h"

/* ---- the field list ---- */

static const struct {
	const char *name;
	unsigned bit;
} field_tab[] = {
	{ "comm", PFC_PS_COMM }, { "tid", PFC_PS_TID }, { "pid", PFC_PS_PID }, { "time", PFC_PS_TIME },
	{ "cpu", PFC_PS_CPU }, { "period", PFC_PS_PERIOD }, { "event", PFC_PS_EVENT },
	{ "trace", PFC_PS_TRACE }, { "addr", PFC_PS_ADDR }, { "ip", PFC_PS_IP }, { "sym", PFC_PS_SYM },
	{ "symoff", PFC_PS_SYMOFF }, { "dso", PFC_PS_DSO }, { "data_src", PFC_PS_DATA_SRC },
	{ "weight", PFC_PS_WEIGHT }, { "ins_lat", PFC_PS_INS_LAT },
};

const char pfc_ps_field_names[] = "comm,tid,pid,time,cpu,period,event,trace,addr,ip,sym,symoff,dso,data_src,weight,ins_lat";

int pfc_ps_fields_parse(const char *spec, struct pfc_ps_fields *f, char *why, size_t why_len)
{
	const char *p = spec;
	int first = 1;

	memset(f, 0, sizeof(*f));
	if (!*spec) {
		snprintf(why, why_len, "empty field list");
		return -1;
	}
	while (1) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p), i;
		int sign = 0;

		if (n && (*p == '+' || *p == '-')) {
			sign = *p == '+' ? 1 : -1;
			p++;
			n--;
		}
		if (first)
			f->relative = sign != 0;
		else if ((sign != 0) != f->relative) {
			snprintf(why, why_len, "cannot mix a field list with +field/-field changes");
			return -1;
		}
		if (memchr(p, ':', n)) {
			snprintf(why, why_len, "event type prefixes ('%.*s') are not supported", (int)n, p);
			return -1;
		}
		for (i = 0; i < sizeof(field_tab) / sizeof(field_tab[0]); i++)
			if (strlen(field_tab[i].name) == n && !memcmp(field_tab[i].name, p, n))
				break;
		if (i == sizeof(field_tab) / sizeof(field_tab[0])) {
			snprintf(why, why_len, "unknown field '%.*s' (known: %s)", (int)n, p, pfc_ps_field_names);
			return -1;
		}
		if (sign > 0)
			f->add |= field_tab[i].bit;
		else if (sign < 0)
			f->del |= field_tab[i].bit;
		else
			f->set |= field_tab[i].bit;
		first = 0;
		if (!e)
			break;
		p = e + 1;
	}
	if (!f->relative && (f->set & (PFC_PS_SYM | PFC_PS_SYMOFF | PFC_PS_DSO)) && !(f->set & PFC_PS_IP)) {
		snprintf(why, why_len, "sym, symoff and dso need ip (as in perf script)");
		return -1;
	}
	return 0;
}

/* ---- output buffer ---- */

struct ps_out {
	FILE *fp;
	gzFile gz;
	char *buf;
	size_t len, cap;
	int failed;
};

static void out_flush(struct ps_out *o)
{
	if (!o->len || o->failed)
		return;
	if (o->gz) {
		if (gzwrite(o->gz, o->buf, (unsigned)o->len) != (int)o->len)
			o->failed = 1;
	} else if (fwrite(o->buf, 1, o->len, o->fp) != o->len) {
		o->failed = 1;
	}
	o->len = 0;
}

/* Room for n more bytes; 0 or -1 (out of memory). */
static int out_need(struct ps_out *o, size_t n)
{
	if (o->len + n <= o->cap)
		return 0;
	out_flush(o);
	if (n > o->cap) {
		char *b = realloc(o->buf, n);
		if (!b)
			return -1;
		o->buf = b;
		o->cap = n;
	}
	return 0;
}

/* The helpers below assume out_need was called for their bytes. */
static inline void put(struct ps_out *o, const char *s, size_t n)
{
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static inline void putc1(struct ps_out *o, char c)
{
	o->buf[o->len++] = c;
}

static inline void pad(struct ps_out *o, size_t n)
{
	memset(o->buf + o->len, ' ', n);
	o->len += n;
}

/* printf("%*llu", width, v) / "%-*d" */
static inline void put_u(struct ps_out *o, uint64_t v, size_t width)
{
	char tmp[24];
	size_t n = (size_t)(pfc_put_dec(tmp, v, 1) - tmp);

	if (n < width)
		pad(o, width - n);
	put(o, tmp, n);
}

static inline void put_d(struct ps_out *o, int32_t v, size_t width, int left)
{
	char tmp[24], *s = tmp;
	size_t n;

	if (v < 0)
		*s++ = '-';
	n = (size_t)(pfc_put_dec(s, v < 0 ? (uint64_t)-(int64_t)v : (uint64_t)v, 1) - tmp);
	if (!left && n < width)
		pad(o, width - n);
	put(o, tmp, n);
	if (left && n < width)
		pad(o, width - n);
}

/* printf("%16llx", v) */
static inline void put_x16(struct ps_out *o, uint64_t v)
{
	char tmp[16];
	size_t n = (size_t)(pfc_put_hex(tmp, v) - tmp);

	pad(o, 16 - n);
	put(o, tmp, n);
}

/* ---- the writer ---- */

#define FRAME_BITS (PFC_PS_SYM | PFC_PS_SYMOFF | PFC_PS_DSO)

struct ps_evsel {
	unsigned fields;
	int wide_comm;               /* "%16s" rather than "%s" */
	int chain;                   /* frames on their own lines (the event has callchains) */
	uint64_t sample_period;      /* printed as the period of samples without one */
	int weight_struct;           /* the weight is PERF_SAMPLE_WEIGHT_STRUCT's: weight, ins_lat */
};

struct ps_ctx {
	struct pfc_session *s;
	struct ps_out out;
	struct ps_evsel *ev;
	size_t name_width;
	/* frame id -> its line "\t<ip> <sym> (<dso>)\n", per combination of FRAME_BITS */
	char *arena;
	size_t arena_len, arena_cap;
	size_t *foff[8];             /* offset + 1; 0 = not built yet */
	uint32_t *flen[8];
	struct pfc_tptext tp;         /* rendered payloads: stream index -> text */
	size_t datasrc_width;         /* perf's data_src__fprintf pads to the widest text so far */
};

static int variant(unsigned fields)
{
	return (fields & PFC_PS_SYM ? 1 : 0) | (fields & PFC_PS_SYMOFF ? 2 : 0) | (fields & PFC_PS_DSO ? 4 : 0);
}

/* room for n more bytes in the arena */
static int arena_reserve(struct ps_ctx *c, size_t n)
{
	if (c->arena_len + n > c->arena_cap) {
		size_t cap = c->arena_cap ? c->arena_cap * 2 : 1 << 16;
		char *a;
		while (cap < c->arena_len + n)
			cap *= 2;
		a = realloc(c->arena, cap);
		if (!a)
			return -1;
		c->arena = a;
		c->arena_cap = cap;
	}
	return 0;
}

/* The line of one unique frame, built on first use (perf's sample__fprintf_callchain). */
static const char *frame_line(struct ps_ctx *c, uint32_t fid, unsigned fields, uint32_t *len)
{
	int v = variant(fields);
	const struct pfc_frame *f = &c->s->stacks.frames[fid];
	size_t start = c->arena_len;

	if (!c->foff[v]) {
		c->foff[v] = calloc(c->s->stacks.nr_frames + 1, sizeof(size_t));
		c->flen[v] = calloc(c->s->stacks.nr_frames + 1, sizeof(uint32_t));
		if (!c->foff[v] || !c->flen[v])
			return NULL;
	}
	if (c->foff[v][fid]) {
		*len = c->flen[v][fid];
		return c->arena + c->foff[v][fid] - 1;
	}
	if (arena_reserve(c, pfc_frameline_room(&c->s->strings, f)) < 0)
		return NULL;
	c->arena_len += pfc_frameline_fmt(c->arena + start, &c->s->strings, f, fields, NULL);
	if (c->arena_len - start > UINT32_MAX)
		return NULL;
	c->foff[v][fid] = start + 1;
	c->flen[v][fid] = (uint32_t)(c->arena_len - start);
	*len = c->flen[v][fid];
	return c->arena + start;
}

/* What a sample of this event can print: a field whose data the samples lack is left out. */
static unsigned available(const struct pfc_evsel *ev)
{
	uint64_t t = ev->sample_type;
	unsigned drop = 0;

	if (!(t & PERF_SAMPLE_TID))
		drop |= PFC_PS_TID | PFC_PS_PID;
	if (!(t & PERF_SAMPLE_TIME))
		drop |= PFC_PS_TIME;
	if (!(t & PERF_SAMPLE_CPU))
		drop |= PFC_PS_CPU;
	/* no PERF_SAMPLE_PERIOD: perf prints attr.sample_period (perf record -c) */
	if (!(t & PERF_SAMPLE_ADDR))
		drop |= PFC_PS_ADDR;
	if (!(t & PERF_SAMPLE_DATA_SRC))
		drop |= PFC_PS_DATA_SRC;
	if (!(t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)))
		drop |= PFC_PS_WEIGHT;
	if (!(t & PERF_SAMPLE_WEIGHT_STRUCT))
		drop |= PFC_PS_INS_LAT;
	if (!(t & PERF_SAMPLE_IP))
		drop |= PFC_PS_IP | FRAME_BITS;
	return ~drop;
}

static const char *field_name(unsigned bit)
{
	size_t i;

	for (i = 0; i < sizeof(field_tab) / sizeof(field_tab[0]); i++)
		if (field_tab[i].bit == bit)
			return field_tab[i].name;
	return "?";
}

/*
 * perf script's defaults (perf 6.1 builtin-script.c, output[] and
 * perf_session__check_output_opt): comm, tid, cpu, time, event, ip, sym, symoff, dso and
 * period for hardware and software events; comm, tid, cpu, time, event and trace for
 * tracepoints, plus ip, sym, symoff and dso when a tracepoint has callchains (ip and sym
 * only, in a pipe stream).  A default field the first event of a type cannot print is
 * dropped for the whole type.
 */
static int set_fields(struct ps_ctx *c, const struct pfc_wopts *o, struct pfc_error *err)
{
	struct pfc_session *s = c->s;
	struct pfc_ps_fields uf;
	size_t i, j, n = s->rd.nr_evsels;
	int use_callchain = 0, tp_chain = 0;
	unsigned warned = 0;
	char why[160];

	memset(&uf, 0, sizeof(uf));
	if (o->fields && pfc_ps_fields_parse(o->fields, &uf, why, sizeof(why)) < 0)
		return PFC_FAIL_NOOFF(err, USAGE, "--fields: %s", why);
	for (i = 0; i < n; i++)
		if (s->rd.evsels[i]->sample_type & PERF_SAMPLE_CALLCHAIN) {
			use_callchain = 1;
			if (s->rd.evsels[i]->attr.type == PERF_TYPE_TRACEPOINT)
				tp_chain = 1;
		}
	for (i = 0; i < n; i++) {
		const struct pfc_evsel *ev = s->rd.evsels[i];
		int tp = ev->attr.type == PERF_TYPE_TRACEPOINT;
		unsigned def, f;

		/* the first event of this type decides what the defaults drop */
		for (j = 0; j < i && s->rd.evsels[j]->attr.type != ev->attr.type; j++)
			;
		if (tp) {
			def = PFC_PS_COMM | PFC_PS_TID | PFC_PS_CPU | PFC_PS_TIME | PFC_PS_EVENT | PFC_PS_TRACE;
			if (!s->rd.pipe_mode && use_callchain && tp_chain) {
				def |= PFC_PS_IP | FRAME_BITS;
			} else if (s->rd.pipe_mode) {
				/* a stream's attrs come after the defaults were set: perf's process_attr
				 * then adds only ip and sym, when the attrs so far have callchains */
				size_t k;
				for (k = 0; k <= j; k++)
					if (s->rd.evsels[k]->sample_type & PERF_SAMPLE_CALLCHAIN)
						def |= PFC_PS_IP | PFC_PS_SYM;
			}
		} else {
			def = PFC_PS_COMM | PFC_PS_TID | PFC_PS_CPU | PFC_PS_TIME | PFC_PS_EVENT | PFC_PS_IP |
			      FRAME_BITS | PFC_PS_PERIOD;
			/* raw PMU events (perf mem, load latency): also the memory fields */
			if (ev->attr.type == PERF_TYPE_RAW)
				def |= PFC_PS_ADDR | PFC_PS_DATA_SRC | PFC_PS_WEIGHT | PFC_PS_INS_LAT;
		}
		def &= available(s->rd.evsels[j]);
		if (!o->fields) {
			f = def;
		} else {
			unsigned missing;
			f = uf.relative ? (def | uf.add) & ~uf.del : uf.set;
			missing = f & ~available(ev) & ~(FRAME_BITS);
			/* perf script refuses these; the other fields are still worth printing */
			if (missing && ev->nr_samples && s->opts->log) {
				unsigned b;
				for (b = 1; b <= PFC_PS_DSO; b <<= 1)
					if ((missing & b) && !(warned & b)) {
						fprintf(s->opts->log, "perfconv: '%s': samples of '%s' have no %s: the %s field "
							"is left out (perf script refuses it)\n", s->opts->input,
							pfc_session_evsel_name(s, i), field_name(b), field_name(b));
						warned |= b;
					}
			}
			f &= available(ev);
		}
		if (!tp)
			f &= ~PFC_PS_TRACE;
		if (!(f & PFC_PS_IP))
			f &= ~FRAME_BITS;
		c->ev[i].fields = f;
		c->ev[i].sample_period = ev->attr.sample_period;
		c->ev[i].weight_struct = !!(ev->sample_type & PERF_SAMPLE_WEIGHT_STRUCT);
		c->ev[i].chain = use_callchain && (ev->sample_type & PERF_SAMPLE_CALLCHAIN);
		c->ev[i].wide_comm = !((f & PFC_PS_IP) && c->ev[i].chain);
	}
	return 0;
}

/* Payloads are printed for the samples whose event prints the trace field. */
static int wants_trace(void *arg, const struct pfc_srec *r)
{
	const struct ps_ctx *c = arg;

	return (c->ev[c->s->stacks.stacks[r->stack].evsel].fields & PFC_PS_TRACE) != 0;
}

/*
 * Tracepoint payloads, rendered before any output is written (pfc_tptext_render).  A
 * malformed section is an error with its offset; payloads the child process could not
 * render are left out with a warning, and so are those of a recording without tracing
 * data, as perf script leaves them out.
 */
static int setup_trace(struct ps_ctx *c, struct pfc_error *err)
{
	struct pfc_session *s = c->s;
	const char *why;
	int ret = pfc_tptext_render(s, wants_trace, c, &c->tp, &why, err);

	if (ret < 0 || !why || !s->opts->log)
		return ret;
	if (!s->rd.tracing_data.data || !s->rd.tracing_data.size)
		fprintf(s->opts->log, "perfconv: '%s': tracepoint samples but no tracing data: their payloads "
			"are left out\n", s->opts->input);
	else
		fprintf(s->opts->log, "perfconv: '%s': tracepoint payloads are left out: %s\n", s->opts->input, why);
	return 0;
}

/* One sample, as perf 6.1's process_event prints it. */
static int write_sample(struct ps_ctx *c, const struct pfc_srec *r)
{
	struct pfc_session *s = c->s;
	struct ps_out *o = &c->out;
	const struct pfc_stack *st = &s->stacks.stacks[r->stack];
	const struct ps_evsel *pe = &c->ev[st->evsel];
	unsigned f = pe->fields;
	const char *comm = pfc_intern_str(&s->strings, st->comm);
	size_t comm_len = pfc_intern_len(&s->strings, st->comm);
	const char *name = pfc_session_evsel_name(s, st->evsel);
	size_t name_len = strlen(name), k;

	if (out_need(o, comm_len + name_len + c->name_width + 160) < 0)
		return -1;
	if (f & PFC_PS_COMM) {
		if (pe->wide_comm && comm_len < 16)
			pad(o, 16 - comm_len);
		put(o, comm, comm_len);
		putc1(o, ' ');
	}
	if ((f & PFC_PS_PID) && (f & PFC_PS_TID)) {
		put_d(o, st->pid, 5, 0);
		putc1(o, '/');
		put_d(o, st->tid, 5, 1);
		putc1(o, ' ');
	} else if (f & (PFC_PS_PID | PFC_PS_TID)) {
		put_d(o, f & PFC_PS_PID ? st->pid : st->tid, 5, 0);
		putc1(o, ' ');
	}
	if (f & PFC_PS_CPU) {
		putc1(o, '[');
		if (r->cpu < 100)
			putc1(o, '0');
		if (r->cpu < 10)
			putc1(o, '0');
		put_u(o, r->cpu, 0);
		put(o, "] ", 2);
	}
	if (f & PFC_PS_TIME) {
		/* "%12s: " of "%lu.%06lu" (microseconds, truncated) */
		uint64_t us = r->time / 1000, sec = us / 1000000;
		char tmp[32], *e = pfc_put_dec(tmp, sec, 1);
		*e++ = '.';
		e = pfc_put_dec(e, us - sec * 1000000, 6);
		k = (size_t)(e - tmp);
		if (k < 12)
			pad(o, 12 - k);
		put(o, tmp, k);
		put(o, ": ", 2);
	}
	if (f & PFC_PS_PERIOD) {
		put_u(o, r->flags & PFC_S_HAS_PERIOD ? r->period : pe->sample_period, 10);
		putc1(o, ' ');
	}
	if (f & PFC_PS_EVENT) {
		if (name_len < c->name_width)
			pad(o, c->name_width - name_len);
		put(o, name, name_len);
		put(o, ": ", 2);
	}
	if (f & PFC_PS_TRACE) {
		const char *text;
		uint32_t tlen;
		/* a payload that cannot be read back any more is left out, as a failed render is */
		pfc_tptext_next(&c->tp, r, &text, &tlen);
		if (tlen) {
			if (out_need(o, (size_t)tlen + 64) < 0)
				return -1;
			put(o, text, tlen);
		}
	}
	if (f & PFC_PS_ADDR)
		put_x16(o, r->addr);
	if (f & PFC_PS_DATA_SRC) {
		/* "%16lx %s" in perf's 100 bytes, then left-justified to the widest so far (a
		 * static in perf) */
		char text[100];
		size_t tl = pfc_datasrc_text(text, sizeof(text), r->data_src);
		size_t w;
		if (tl > 99 - 17)
			tl = 99 - 17;
		w = 17 + tl;
		if (out_need(o, (w > c->datasrc_width ? w : c->datasrc_width) + 64) < 0)
			return -1;
		put_x16(o, r->data_src);
		putc1(o, ' ');
		put(o, text, tl);
		if (w > c->datasrc_width)
			c->datasrc_width = w;
		pad(o, c->datasrc_width - w);
	}
	if (f & PFC_PS_WEIGHT)
		put_u(o, pe->weight_struct ?
			  (uint32_t)r->weight : r->weight, 16);
	if (f & PFC_PS_INS_LAT)
		put_u(o, (uint16_t)(r->weight >> 32), 16);
	if (f & PFC_PS_IP) {
		const uint32_t *ids = s->stacks.frame_ids + st->first;
		uint32_t len, i;
		const char *line;

		if (pe->chain) {
			putc1(o, '\n');
			for (i = 0; i < st->nr; i++) {
				if (!(line = frame_line(c, ids[i], f, &len)) || out_need(o, len + 2) < 0)
					return -1;
				put(o, line, len);
			}
		} else {
			putc1(o, ' ');
			put_x16(o, r->ip);
			if (st->nr) {
				/* the frame's line after its tab and address, less its newline */
				if (!(line = frame_line(c, ids[0], f, &len)) || out_need(o, len + 2) < 0)
					return -1;
				put(o, line + 17, len - 18);
			}
		}
	}
	putc1(o, '\n');
	return 0;
}

static int ps_write(FILE *fp, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err)
{
	struct ps_ctx c;
	struct pfc_stream_cur cur;
	struct pfc_srec rec;
	size_t i;
	int ret = 0, v, got = 0;

	memset(&c, 0, sizeof(c));
	c.s = s;
	c.out.fp = fp;
	c.ev = calloc(s->rd.nr_evsels + 1, sizeof(*c.ev));
	c.out.cap = 1 << 18;
	c.out.buf = malloc(c.out.cap);
	if (!c.ev || !c.out.buf) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "perf-script output");
		goto out;
	}
	if ((ret = set_fields(&c, o, err)) < 0 || (ret = setup_trace(&c, err)) < 0)
		goto out;
	for (i = 0; i < s->rd.nr_evsels; i++) {
		size_t l = strlen(pfc_session_evsel_name(s, i));
		if (l > c.name_width)
			c.name_width = l;
	}
	if (o->gzip) {
		int fd;
		fflush(fp);
		fd = dup(fileno(fp));
		if (fd < 0 || !(c.out.gz = gzdopen(fd, "wb"))) {
			if (fd >= 0)
				close(fd);
			ret = PFC_FAIL_NOOFF(err, WRITE, "cannot start gzip output");
			goto out;
		}
	}
	if (pfc_stream_open(&cur, &s->stream) < 0) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "perf-script output");
		goto out;
	}
	while ((got = pfc_stream_next(&cur, &rec)) > 0) {
		if (write_sample(&c, &rec) < 0) {
			ret = PFC_FAIL_NOOFF(err, NOMEM, "perf-script output");
			break;
		}
		if (c.out.failed)
			break;
	}
	pfc_stream_close(&cur);
	if (got < 0 && ret == 0)
		ret = PFC_FAIL_NOOFF(err, IO, "cannot read the sample stream back");
	if (ret < 0)
		goto out;
	out_flush(&c.out);
out:
	if (c.out.gz) {
		if (gzclose(c.out.gz) != Z_OK)
			c.out.failed = 1;
	}
	if (ret == 0 && c.out.failed)
		ret = PFC_FAIL_NOOFF(err, WRITE, "writing the perf-script text failed");
	for (v = 0; v < 8; v++) {
		free(c.foff[v]);
		free(c.flen[v]);
	}
	free(c.arena);
	free(c.ev);
	free(c.out.buf);
	pfc_tptext_free(&c.tp);
	return ret;
}

static const char *const ps_suffixes[] = { ".perf.txt", ".perf-script", ".perf.txt.gz", NULL };

const struct pfc_writer pfc_writer_perf_script = {
	.name = "perf-script",
	.suffixes = ps_suffixes,
	.needs = PFC_NEED_STREAM | PFC_OWN_GZIP,
	.write = ps_write,
};
