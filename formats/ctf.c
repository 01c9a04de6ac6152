/*
 * ctf.c - the .NET runtime's events of .nettrace streams as the LTTng CTF trace perfcollect puts
 * in a trace.zip: one read of the streams merges their events into time order in bounded memory
 * and fills one channel of packets per CPU, each deflated as it fills, naming each kind of event
 * as it first comes; then the metadata (TSDL text in metadata packets, declaring what came), the
 * channels and an index per channel go in.  The trace's UUID, in every packet, is made from the
 * streams' Trace objects and sizes, which the conversion's load read (converter/events/).
 * The names of the events are ctfnames.c's; the archive and its log are perfview.c's.
 *
 * The layout is lttng-ust 2.x's, as TraceEvent's CtfTraceEventSource reads it: the packet
 * header and context, the large event header (its compact form, the time's low 32 bits, after
 * an earlier event of the packet, as lttng writes it; else the extended one with the whole
 * 64-bit time), the event context _vpid, _vtid, _procname[17], and each event's fields as the runtime's
 * LTTng provider declares them: its integers one by one (_Count, _Depth, ...), in the manifest's
 * order and sizes, byte-aligned, or for the events with strings and arrays the packed form:
 * _length, then the EventPipe payload's bytes as ___data__.  TraceEvent reads the integers into
 * one buffer, back to back, and a packed payload as it is, and hands either to its CLR parsers:
 * both are the EventPipe payload byte for byte, which makes the round trip exact.
 */
#include "formats/ctf.h"

#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include "converter/events/clrevents.h"
#include "converter/events/nettrace.h"
#include "converter/util/fileio.h"
#include "converter/util/grow.h"
#include "converter/util/hashtab.h"
#include "formats/zipspill.h"

/* Packets of up to a page, lttng's smallest sub-buffer (an event larger than that gets a packet
 * of its own), and no padding after their events: each packet's size is its content's.  lttng pads
 * to the sub-buffer, but TraceEvent's reader (CtfChannel.ReadContext) skips a packet's padding
 * with bare reads of the entry's DeflateStream and takes a short read, which DeflateStream gives
 * whenever its 8 KiB of input runs out, for the end of the channel: with padding it read 79,844
 * of the bench's 814,343 events and stopped, silently. */
#define CTF_PACKET 4096u
/* the metadata's packets: lttng's size (the entry is stored, not deflated: TraceEvent reads the
 * metadata with bare reads too, CtfMetadataLegacyParser.GetMetadata) */
#define CTF_META_PACKET 4096u
#define CTF_META_HEADER 37u
/* trace.packet.header (32 bytes) then stream.packet.context (52 bytes) */
#define CTF_PKT_HEADER 84u
/* the event header (extended: id 65535, u32 id, u64 time; compact: u16 id, the time's low 32
 * bits) and context (vpid, vtid, procname[17]) */
#define CTF_EV_FIXED (14u + 25u)
#define CTF_EV_COMPACT (6u + 25u)
/* a channel's packets are deflated this many bytes at a time */
#define CTF_STAGE ((size_t)256 << 10)
/* a packed payload's two lengths */
#define CTF_EV_PACKED 8u
/* a channel that holds this much is written into the archive as it fills (pfc_ctf_stream; the
 * tests set less with PERFCONV_CTF_STREAM_FROM) */
#define CTF_STREAM_FROM ((uint64_t)1 << 20)
/* the most bytes of CTF one byte of a stream can become: a 2-byte event blob becomes 47 bytes
 * (the event header, its context and a packed payload's lengths) */
#define CTF_MAX_GROWTH 32u

/* An event read and not yet written: the merge's heap orders them by (ts, input, idx), the
 * order a sort of every event by time, ties in input order, would give. */
struct ctf_ev {
	uint64_t ts;                 /* CLOCK_MONOTONIC ns */
	uint64_t idx;                /* its place among its input's events written */
	uint32_t input;
	int32_t pid, tid;
	uint32_t cpu;
	uint32_t type;               /* index into pfc_ctf.types */
	uint32_t len;
	const uint8_t *payload;
};

struct ctf_type {
	const struct pfc_ctf_name *name;
	uint32_t version;            /* the events' own (newer than the name's when older is set) */
	int older;
	int plain;                   /* fields one by one (name->fields); else packed */
	uint64_t n;
	uint32_t ctf_id;             /* the metadata's event id: one per name and form */
};

/* What the events of one metadata record become, looked up once for all of them (a few
 * records name every event of a stream). */
struct name_slot {
	const char *provider;        /* the record's own string, one per record for a whole read */
	uint32_t event_id, version;
	const struct pfc_ctf_name *name;  /* NULL: left out */
	int older;
	long fsize;                  /* its fields' bytes, -1: packed */
	int type[2];                 /* its type, packed and plain; -1 not yet looked up */
};
#define NAME_SLOTS 64
/* event_type: an event TraceEvent has no LTTng name for */
#define CTF_NO_NAME INT_MIN
/* the events a stream that never says its events are sorted is reordered within (a bounded
 * memory: 48 bytes each) */
#define CTF_WINDOW ((size_t)1 << 18)
/* the queues the events wait in, by a hash of their stream and capture thread: a queue
 * shared by two threads stays in order too, at the cost of moving some of its events */
#define CTF_QUEUES 256u

/* A ring of events in time order. */
struct ctf_queue {
	struct ctf_ev *v;
	size_t head, n, cap;         /* cap: a power of two */
	size_t hpos;                 /* its place in pfc_ctf.qheap while n > 0 */
};

struct ctf_input {
	const char *path;
	struct pfc_events_file *file;     /* the stream's bytes, the conversion's (converter/events/) */
	struct pfc_nettrace_trace trace;
	struct pfc_nettrace_stats st;
	int have_trace;
	uint64_t nr_in, nr_out;
	/* while the trace is written: its reader, and the time no later event of it comes before */
	struct pfc_nettrace nt;
	uint64_t mark;
	int reading, done;
	uint64_t next_idx;
};

struct pfc_ctf {
	struct ctf_input *in;
	size_t nr_in;
	uint64_t nr_ev;
	struct ctf_type *types;
	size_t nr_types, cap_types;
	uint32_t nr_ids;             /* the metadata's event ids given */
	struct pfc_clr_counts left;  /* events TraceEvent cannot read from CTF, by kind */
	uint32_t nr_cpus;
	uint32_t pointer_size;
	struct ctf_input *cur;       /* while reading */
	struct name_slot slot[NAME_SLOTS];
	/* while writing: the events read and not yet written, in queues by capture thread, and
	 * a heap of the queues that hold any, by their first event */
	struct ctf_queue *q;         /* CTF_QUEUES */
	uint32_t *qheap;
	size_t nr_qheap;
	size_t pending;
	uint64_t nr_forced;          /* written before their turn: the window was full */
	int (*emit)(struct pfc_ctf *c, const struct ctf_ev *e);
	struct pfc_nettrace_ops ops;
	struct ctf_writing *w;
	/* The channel streamed into the archive while it fills (pfc_ctf_stream): the first whose
	 * packets reach CTF_STREAM_FROM bytes, which the filling thread says under mu; filled: the
	 * fill has ended; streamed: the channel whose entry pfc_ctf_stream opened, or -1. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int sync_ok, may_stream, filled;
	int64_t stream_cpu, streamed;
	uint64_t stream_from;        /* CTF_STREAM_FROM, or the tests' */
};

static uint64_t to_ns(const struct ctf_input *in, uint64_t qpc)
{
	uint64_t f = in->have_trace ? in->trace.qpc_freq : 0;

	/* EventPipe's QPC on Linux is CLOCK_MONOTONIC in ns already */
	if (!f || f == 1000000000ull)
		return qpc;
	return (uint64_t)((unsigned __int128)qpc * 1000000000ull / f);
}

static int on_trace(void *ctx, const struct pfc_nettrace_trace *t)
{
	struct pfc_ctf *c = ctx;

	c->cur->trace = *t;
	c->cur->have_trace = 1;
	return 0;
}

/* The bytes of a name's fields ("u32:Count u16:ClrInstanceID": 6), or -1 when they are packed. */
static long fields_size(const char *f)
{
	long n = 0;

	if (!f)
		return -1;
	while (*f) {
		char *end;
		unsigned long bits = strtoul(f + 1, &end, 10);
		n += (long)(bits / 8);
		f = end;
		while (*f && *f != ' ')
			f++;
		while (*f == ' ')
			f++;
	}
	return n;
}

static int type_of(struct pfc_ctf *c, const struct pfc_ctf_name *name, uint32_t version, int older, int plain)
{
	size_t i;
	struct ctf_type *t;

	for (i = 0; i < c->nr_types; i++)
		if (c->types[i].name == name && c->types[i].version == version && c->types[i].plain == plain)
			return (int)i;
	if (!(t = pfc_grow_at(&c->types, &c->cap_types, c->nr_types, sizeof(*c->types), 16)))
		return -PFC_ERR_NOMEM;
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->version = version;
	t->older = older;
	t->plain = plain;
	/* the metadata's event id: one per name and form, in the order they first came */
	t->ctf_id = c->nr_ids;
	for (i = 0; i < c->nr_types; i++)
		if (c->types[i].name == name && c->types[i].plain == plain) {
			t->ctf_id = c->types[i].ctf_id;
			break;
		}
	if (t->ctf_id == c->nr_ids)
		c->nr_ids++;
	return (int)c->nr_types++;
}

/* The type ev is written as (>= 0), or -1 when it has no LTTng name (left out), or an error. */
static int event_type(struct pfc_ctf *c, const struct pfc_nettrace_event *ev)
{
	const struct pfc_nettrace_meta *m = ev->meta;
	struct name_slot *sl;
	int plain;

	if (!m)
		return CTF_NO_NAME;
	sl = &c->slot[ev->meta_id % NAME_SLOTS];
	if (sl->provider != m->provider || sl->event_id != m->event_id || sl->version != m->version) {
		sl->provider = m->provider;
		sl->event_id = m->event_id;
		sl->version = m->version;
		sl->older = 0;
		sl->name = strcmp(m->provider, PFC_CLR_PROVIDER) ? NULL
				: pfc_ctf_name_find(m->event_id, m->version, &sl->older);
		sl->fsize = sl->name ? fields_size(sl->name->fields) : -1;
		sl->type[0] = sl->type[1] = -1;
	}
	if (!sl->name)
		return CTF_NO_NAME;
	/* a payload of another size than the declared fields (a runtime that added one without a new
	 * version) goes packed, under the same name */
	plain = !sl->older && sl->fsize == (long)ev->payload_len;
	if (sl->type[plain] < 0)
		sl->type[plain] = type_of(c, sl->name, m->version, sl->older, plain);
	return sl->type[plain];
}

int pfc_ctf_read(struct pfc_ctf **out, struct pfc_events *events, const struct pfc_tuning *tuning,
		 struct pfc_error *err)
{
	size_t n = events->n;
	struct pfc_ctf *c = calloc(1, sizeof(*c));
	size_t i;

	*out = c;
	if (!c || (n && !(c->in = calloc(n, sizeof(*c->in)))))
		return PFC_FAIL_NOOFF(err, NOMEM, "runtime events");
	for (i = 0; i < n; i++) {
		struct ctf_input *in = &c->in[i];
		const struct pfc_events_file *f = &events->v[i];

		in->path = f->name;
		in->file = &events->v[i];
		c->nr_in++;
		/* the load read the Trace object: the channels and the UUID are known before the
		 * events are read; the read sets it again */
		if (!f->have_trace)
			continue;
		in->trace = f->trace;
		in->have_trace = 1;
		if ((f->trace.pointer_size == 4 || f->trace.pointer_size == 8) && !c->pointer_size)
			c->pointer_size = f->trace.pointer_size;
		if (f->trace.nr_cpus > c->nr_cpus && f->trace.nr_cpus <= 4096)
			c->nr_cpus = f->trace.nr_cpus;
	}
	if (!c->pointer_size)
		c->pointer_size = 8;
	if (!c->nr_cpus)
		c->nr_cpus = 1;
	c->stream_cpu = c->streamed = -1;
	c->stream_from = tuning && tuning->ctf_stream_from ? tuning->ctf_stream_from : CTF_STREAM_FROM;
	if (pthread_mutex_init(&c->mu, NULL) != 0)
		return PFC_FAIL_NOOFF(err, NOMEM, "runtime events");
	if (pthread_cond_init(&c->cv, NULL) != 0) {
		pthread_mutex_destroy(&c->mu);
		return PFC_FAIL_NOOFF(err, NOMEM, "runtime events");
	}
	c->sync_ok = 1;
	/* a channel is streamed only when it cannot reach 4 GiB: its entry is opened before its size
	 * is known, without zip64 */
	{
		uint64_t total = 0;
		for (i = 0; i < n; i++)
			total += events->v[i].len;
		c->may_stream = total < (uint64_t)0xffffffffu / CTF_MAX_GROWTH;
	}
	return 0;
}

static void writing_free(struct pfc_ctf *c);

void pfc_ctf_free(struct pfc_ctf *c)
{
	size_t i;

	if (!c)
		return;
	writing_free(c);
	for (i = 0; i < c->nr_in; i++)
		if (c->in[i].reading)
			pfc_nettrace_free(&c->in[i].nt);
	free(c->in);
	for (i = 0; c->q && i < CTF_QUEUES; i++)
		free(c->q[i].v);
	free(c->q);
	free(c->qheap);
	free(c->types);
	pfc_clr_counts_free(&c->left);
	if (c->sync_ok) {
		pthread_cond_destroy(&c->cv);
		pthread_mutex_destroy(&c->mu);
	}
	free(c);
}

/* ---- the merge: each stream's events come nearly in time order (each thread's in order,
 * blocks in order), and an event flagged sorted says that none after it in its stream is
 * older.  The events read wait in a heap until no stream can still give an older one. ---- */

static int ev_before(const struct ctf_ev *x, const struct ctf_ev *y)
{
	if (x->ts != y->ts)
		return x->ts < y->ts;
	if (x->input != y->input)
		return x->input < y->input;
	return x->idx < y->idx;
}

static const struct ctf_ev *q_first(const struct ctf_queue *q)
{
	return &q->v[q->head];
}

static int q_before(const struct pfc_ctf *c, uint32_t a, uint32_t b)
{
	return ev_before(q_first(&c->q[a]), q_first(&c->q[b]));
}

static void qheap_set(struct pfc_ctf *c, size_t i, uint32_t qi)
{
	c->qheap[i] = qi;
	c->q[qi].hpos = i;
}

static void qheap_up(struct pfc_ctf *c, size_t i)
{
	uint32_t qi = c->qheap[i];

	for (; i > 0 && q_before(c, qi, c->qheap[(i - 1) / 2]); i = (i - 1) / 2)
		qheap_set(c, i, c->qheap[(i - 1) / 2]);
	qheap_set(c, i, qi);
}

static void qheap_down(struct pfc_ctf *c, size_t i)
{
	uint32_t qi = c->qheap[i];

	for (;;) {
		size_t k = 2 * i + 1;
		if (k >= c->nr_qheap)
			break;
		if (k + 1 < c->nr_qheap && q_before(c, c->qheap[k + 1], c->qheap[k]))
			k++;
		if (!q_before(c, c->qheap[k], qi))
			break;
		qheap_set(c, i, c->qheap[k]);
		i = k;
	}
	qheap_set(c, i, qi);
}

/* The first event of all into e, taken out. */
static void take_first(struct pfc_ctf *c, struct ctf_ev *e)
{
	uint32_t qi = c->qheap[0];
	struct ctf_queue *q = &c->q[qi];

	*e = q->v[q->head];
	q->head = (q->head + 1) & (q->cap - 1);
	c->pending--;
	if (--q->n) {
		qheap_down(c, 0);
		return;
	}
	if (--c->nr_qheap) {
		qheap_set(c, 0, c->qheap[c->nr_qheap]);
		qheap_down(c, 0);
	}
}

/* e into its queue, in order: after the last unless it is older (then moved back to its place). */
static int q_add(struct pfc_ctf *c, struct ctf_queue *q, uint32_t qi, const struct ctf_ev *e)
{
	size_t i, mask;

	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256, k;
		struct ctf_ev *v = malloc(cap * sizeof(*v));
		if (!v)
			return -PFC_ERR_NOMEM;
		for (k = 0; k < q->n; k++)
			v[k] = q->v[(q->head + k) & (q->cap - 1)];
		free(q->v);
		q->v = v;
		q->cap = cap;
		q->head = 0;
	}
	mask = q->cap - 1;
	for (i = q->n; i > 0 && ev_before(e, &q->v[(q->head + i - 1) & mask]); i--)
		q->v[(q->head + i) & mask] = q->v[(q->head + i - 1) & mask];
	q->v[(q->head + i) & mask] = *e;
	c->pending++;
	if (q->n++ == 0) {
		qheap_set(c, c->nr_qheap++, qi);
		qheap_up(c, c->nr_qheap - 1);
	} else if (i == 0) {
		qheap_up(c, q->hpos);
	}
	return 0;
}

/* Whether no stream still to be read can give an event before e. */
static int ev_safe(const struct pfc_ctf *c, const struct ctf_ev *e)
{
	size_t i;

	for (i = 0; i < c->nr_in; i++) {
		const struct ctf_input *in = &c->in[i];
		if (in->done)
			continue;
		/* its later events are at in->mark or after; one at e's time goes after e only when
		 * it is from e's input or a later one */
		if (in->mark < e->ts || (in->mark == e->ts && i < e->input))
			return 0;
	}
	return 1;
}

/* Write the events no stream can come before any more (all of them at the end). */
static int heap_drain(struct pfc_ctf *c, int all)
{
	int ret;

	while (c->nr_qheap && (all || ev_safe(c, q_first(&c->q[c->qheap[0]])))) {
		struct ctf_ev e;
		take_first(c, &e);
		if ((ret = c->emit(c, &e)) < 0)
			return ret;
	}
	return 0;
}

/* The read: each event is counted, and each with a name goes into the heap. */
static int merge_event(void *ctx, const struct pfc_nettrace_event *ev)
{
	struct pfc_ctf *c = ctx;
	struct ctf_input *in = c->cur;
	struct ctf_ev e;
	uint32_t qi;
	int type = event_type(c, ev), ret;
	uint64_t ts = to_ns(in, ev->timestamp);

	pfc_events_release(in->file, ev->offset);
	if (ev->sorted && ts > in->mark)
		in->mark = ts;
	in->nr_in++;
	if (type == CTF_NO_NAME)
		return pfc_clr_counts_add(&c->left, ev, 0);
	if (type < 0)
		return type;
	c->types[type].n++;
	c->nr_ev++;
	in->nr_out++;
	/* a stream that never says its events are sorted is reordered within this many */
	if (c->pending == CTF_WINDOW) {
		struct ctf_ev first;
		take_first(c, &first);
		c->nr_forced++;
		if ((ret = c->emit(c, &first)) < 0)
			return ret;
	}
	e.ts = ts;
	e.idx = in->next_idx++;
	e.input = (uint32_t)(in - c->in);
	e.pid = in->have_trace ? (int32_t)in->trace.pid : 0;
	e.tid = (int32_t)ev->thread_id;
	/* a processor number beyond the trace's count goes to the last channel */
	e.cpu = ev->processor < c->nr_cpus ? ev->processor : c->nr_cpus - 1;
	e.type = (uint32_t)type;
	e.payload = ev->payload;
	e.len = ev->payload_len;
	qi = (uint32_t)(pfc_hashtab_mix(e.input, ev->capture_thread_id) % CTF_QUEUES);
	if ((ret = q_add(c, &c->q[qi], qi, &e)) < 0)
		return ret;
	return 0;
}

/* Read every stream, block by block, the one that holds the others back first, and hand
 * c->emit each event in time order. */
static int merge(struct pfc_ctf *c, struct pfc_error *err)
{
	size_t i;
	int ret = 0;

	if (!c->q && (!(c->q = calloc(CTF_QUEUES, sizeof(*c->q))) || !(c->qheap = calloc(CTF_QUEUES, sizeof(*c->qheap)))))
		return PFC_FAIL_NOOFF(err, NOMEM, "runtime events");
	c->ops.ctx = c;
	c->ops.trace = on_trace;
	c->ops.event = merge_event;
	c->ops.no_stacks = 1;	/* CTF has no stacks: lttng's CLR events carry none */
	for (i = 0; i < c->nr_in; i++) {
		struct ctf_input *in = &c->in[i];
		in->mark = 0;
		in->done = 0;
		in->reading = 1;
		if ((ret = pfc_nettrace_begin(&in->nt, in->file->buf, in->file->len, &c->ops, err)) < 0) {
			snprintf(err->file, sizeof(err->file), "%s", in->path);
			return ret;
		}
	}
	memset(c->slot, 0, sizeof(c->slot));
	for (;;) {
		struct ctf_input *next = NULL;
		for (i = 0; i < c->nr_in; i++)
			if (!c->in[i].done && (!next || c->in[i].mark < next->mark))
				next = &c->in[i];
		if (!next)
			break;
		c->cur = next;
		if ((ret = pfc_nettrace_step(&next->nt)) <= 0) {
			if (ret < 0) {
				snprintf(err->file, sizeof(err->file), "%s", next->path);
				return ret;
			}
			next->done = 1;
			next->st = next->nt.st;
		}
		if ((ret = heap_drain(c, 0)) < 0)
			return ret;
	}
	return heap_drain(c, 1);
}

/* ---- the bytes ---- */

static void put_u32(struct pfc_sb *b, uint32_t v)
{
	uint8_t d[4];
	int i;

	for (i = 0; i < 4; i++)
		d[i] = (uint8_t)(v >> (8 * i));
	pfc_sb_add(b, (const char *)d, 4);
}

static void put_be(struct pfc_sb *b, uint64_t v, int bytes)
{
	uint64_t x = htobe64(v);

	pfc_sb_add(b, (const char *)&x + 8 - bytes, (size_t)bytes);
}

static void put_zeros(struct pfc_sb *b, size_t n)
{
	if (pfc_sb_grow(b, n) < 0)
		return;
	memset(b->buf + b->len, 0, n);
	b->len += n;
}

/* The trace's UUID: from what it holds, so that the same inputs give the same bytes. */
static void trace_uuid(const struct pfc_ctf *c, uint8_t u[16])
{
	uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
	size_t i;

	for (i = 0; i < c->nr_in; i++) {
		const struct ctf_input *in = &c->in[i];
		uint64_t v[3] = { in->have_trace ? in->trace.sync_qpc : 0, in->have_trace ? in->trace.pid : 0, (uint64_t)in->file->len };
		size_t k;
		for (k = 0; k < 24; k++) {
			uint8_t byte = (uint8_t)(v[k / 8] >> (8 * (k % 8)));
			h1 = (h1 ^ byte) * 0x100000001b3ull;
			h2 = (h2 ^ byte) * 0x100000001b3ull + 0x9e37;
		}
	}
	for (i = 0; i < 8; i++) {
		u[i] = (uint8_t)(h1 >> (8 * i));
		u[8 + i] = (uint8_t)(h2 >> (8 * i));
	}
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);	/* a version 4 UUID, as lttng's */
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
}

static void uuid_text(const uint8_t u[16], char out[37])
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
		 u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* The first stream's sync time as UTC seconds and ns, and the CLOCK_MONOTONIC ns it was taken
 * at; 0 when no stream had a Trace object. */
static int sync_time(const struct pfc_ctf *c, int64_t *utc_ns, uint64_t *mono_ns, struct tm *tm)
{
	size_t i;

	for (i = 0; i < c->nr_in; i++) {
		const struct ctf_input *in = &c->in[i];
		struct tm t;
		time_t secs;

		if (!in->have_trace || in->trace.utc[0] < 1970)
			continue;
		memset(&t, 0, sizeof(t));
		t.tm_year = in->trace.utc[0] - 1900;
		t.tm_mon = in->trace.utc[1] - 1;
		t.tm_mday = in->trace.utc[3];
		t.tm_hour = in->trace.utc[4];
		t.tm_min = in->trace.utc[5];
		t.tm_sec = in->trace.utc[6];
		secs = timegm(&t);
		if (secs == (time_t)-1)
			continue;
		*utc_ns = (int64_t)secs * 1000000000ll + (int64_t)in->trace.utc[7] * 1000000ll;
		*mono_ns = to_ns(in, in->trace.sync_qpc);
		gmtime_r(&secs, tm);
		return 1;
	}
	return 0;
}

static const char *const int_type = "integer { size = %u; align = 8; signed = %u; encoding = none; base = 10; }";

static void metadata_text(const struct pfc_ctf *c, struct pfc_sb *t, const char *uuid, const struct tm *tm,
			  int64_t offset)
{
	char date[32];
	size_t i, k;

	strftime(date, sizeof(date), "%Y%m%dT%H%M%S+0000", tm);
	pfc_sb_adds(t, "/* CTF 1.8 */\n\n"
		       "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
		       "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
		       "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
		       "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
		       "typealias integer { size = 64; align = 8; signed = false; } := unsigned long;\n"
		       "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"
		       "typealias integer { size = 27; align = 1; signed = false; } := uint27_t;\n\n");
	pfc_sb_addf(t, "trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n\tbyte_order = le;\n"
		       "\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t  uuid[16];\n"
		       "\t\tuint32_t stream_id;\n\t\tuint64_t stream_instance_id;\n\t};\n};\n\n", uuid);
	pfc_sb_addf(t, "env {\n\tdomain = \"ust\";\n\ttracer_name = \"lttng-ust\";\n\ttracer_major = 2;\n"
		       "\ttracer_minor = 11;\n\ttracer_buffering_scheme = \"uid\";\n\ttracer_buffering_id = 0;\n"
		       "\tarchitecture_bit_width = %u;\n\ttrace_name = \"auto\";\n\ttrace_creation_datetime = \"%s\";\n"
		       "\thostname = \"perfconv\";\n};\n\n", c->pointer_size * 8, date);
	/* offset: the realtime ns at CLOCK_MONOTONIC 0, as lttng writes it */
	pfc_sb_addf(t, "clock {\n\tname = \"monotonic\";\n\tuuid = \"%s\";\n\tdescription = \"Monotonic Clock\";\n"
		       "\tfreq = 1000000000; /* Frequency, in Hz */\n"
		       "\t/* clock value offset from Epoch is: offset * (1/freq) */\n\toffset = %lld;\n};\n\n",
		    uuid, (long long)offset);
	pfc_sb_adds(t, "typealias integer {\n\tsize = 27; align = 1; signed = false;\n\tmap = clock.monotonic.value;\n"
		       "} := uint27_clock_monotonic_t;\n\n"
		       "typealias integer {\n\tsize = 32; align = 8; signed = false;\n\tmap = clock.monotonic.value;\n"
		       "} := uint32_clock_monotonic_t;\n\n"
		       "typealias integer {\n\tsize = 64; align = 8; signed = false;\n\tmap = clock.monotonic.value;\n"
		       "} := uint64_clock_monotonic_t;\n\n"
		       "struct packet_context {\n\tuint64_clock_monotonic_t timestamp_begin;\n"
		       "\tuint64_clock_monotonic_t timestamp_end;\n\tuint64_t content_size;\n\tuint64_t packet_size;\n"
		       "\tuint64_t packet_seq_num;\n\tunsigned long events_discarded;\n\tuint32_t cpu_id;\n};\n\n"
		       "struct event_header_compact {\n\tenum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n"
		       "\tvariant <id> {\n\t\tstruct {\n\t\t\tuint27_clock_monotonic_t timestamp;\n\t\t} compact;\n"
		       "\t\tstruct {\n\t\t\tuint32_t id;\n\t\t\tuint64_clock_monotonic_t timestamp;\n\t\t} extended;\n"
		       "\t} v;\n} align(8);\n\n"
		       "struct event_header_large {\n\tenum : uint16_t { compact = 0 ... 65534, extended = 65535 } id;\n"
		       "\tvariant <id> {\n\t\tstruct {\n\t\t\tuint32_clock_monotonic_t timestamp;\n\t\t} compact;\n"
		       "\t\tstruct {\n\t\t\tuint32_t id;\n\t\t\tuint64_clock_monotonic_t timestamp;\n\t\t} extended;\n"
		       "\t} v;\n} align(8);\n\n"
		       "stream {\n\tid = 0;\n\tevent.header := struct event_header_large;\n"
		       "\tpacket.context := struct packet_context;\n\tevent.context := struct {\n\t\t");
	pfc_sb_addf(t, int_type, 32, 1);
	pfc_sb_adds(t, " _vpid;\n\t\t");
	pfc_sb_addf(t, int_type, 32, 1);
	pfc_sb_adds(t, " _vtid;\n\t\tinteger { size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; } "
		       "_procname[17];\n\t};\n};\n\n");
	for (i = 0; i < c->nr_types; i++) {
		const struct ctf_type *ty = &c->types[i];
		for (k = 0; k < i; k++)
			if (c->types[k].ctf_id == ty->ctf_id)
				break;
		if (k < i)	/* declared already */
			continue;
		pfc_sb_addf(t, "event {\n\tname = \"DotNETRuntime:%s\";\n\tid = %u;\n\tstream_id = 0;\n\tloglevel = 13;\n"
			       "\tfields := struct {\n", ty->name->name, ty->ctf_id);
		if (ty->plain) {
			const char *f = ty->name->fields;
			while (*f) {
				char *end;
				unsigned long bits = strtoul(f + 1, &end, 10);
				const char *nm = end + 1, *e = strchr(nm, ' ');
				size_t len = e ? (size_t)(e - nm) : strlen(nm);
				pfc_sb_adds(t, "\t\t");
				pfc_sb_addf(t, int_type, (unsigned)bits, *f == 's' ? 1u : 0u);
				pfc_sb_adds(t, " _");
				pfc_sb_add(t, nm, len);
				pfc_sb_adds(t, ";\n");
				f = nm + len;
				while (*f == ' ')
					f++;
			}
			pfc_sb_adds(t, "\t};\n};\n\n");
			continue;
		}
		pfc_sb_adds(t, "\t\t");
		pfc_sb_addf(t, int_type, 32, 0);
		pfc_sb_adds(t, " _length;\n\t\t");
		pfc_sb_addf(t, int_type, 32, 0);
		pfc_sb_adds(t, " ____data___length;\n\t\t");
		pfc_sb_addf(t, int_type, 8, 1);
		pfc_sb_adds(t, " ___data__[ ____data___length ];\n\t};\n};\n\n");
	}
}

/* The TSDL text cut into metadata packets. */
static void metadata_packets(const char *text, size_t len, const uint8_t uuid[16], struct pfc_sb *m)
{
	const size_t room = CTF_META_PACKET - CTF_META_HEADER;
	size_t off = 0;

	do {
		size_t n = len - off < room ? len - off : room;
		put_u32(m, 0x75d11d57);
		pfc_sb_add(m, (const char *)uuid, 16);
		put_u32(m, 0);	/* checksum: none */
		put_u32(m, (uint32_t)((CTF_META_HEADER + n) * 8));
		put_u32(m, CTF_META_PACKET * 8);
		pfc_sb_add(m, "\0\0\0\1\10", 5);	/* no compression, encryption, checksum; TSDL 1.8 */
		pfc_sb_add(m, text + off, n);
		put_zeros(m, room - n);
		off += n;
	} while (off < len);
}

/* One CPU's channel while it is written: the packet being filled (its events' bytes; the
 * header goes before them once it is full), the packets before it deflated (spill), and
 * their index. */
struct chan {
	struct pfc_zip_spill *spill;  /* NULL until its first event */
	struct pfc_zip_spill *ispill; /* its index, deflated as it grows too */
	struct pfc_sb pkt, index;    /* pkt: whole packets, then the one being filled from pkt_at */
	size_t pkt_at;
	uint64_t seq, off;           /* packets written, and their bytes */
	uint64_t first, last;        /* the packet's first and last event times */
	size_t size, n;              /* its bytes with the header, its events */
};

static void cut(struct pfc_sb *b, size_t len);

struct ctf_writing {
	struct pfc_ctf *c;
	struct pfc_zip_spiller dfl;
	int dfl_started;
	struct chan *ch;
	uint8_t uuid_bytes[16];
	const uint8_t *uuid;
	pfc_ctf_comm_fn comm;
	void *arg;
	/* the comm of the last thread asked for */
	int32_t comm_pid, comm_tid;
	char comm_field[17];         /* comm_pid's name as the event's 17 bytes: NUL-padded, cut at 16 */
	int have_comm;
};


/* v's low bytes at d, little-endian: one store a field, as every event's header has five */
static inline uint8_t *le(uint8_t *d, uint64_t v, int bytes)
{
	uint64_t x = htole64(v);

	memcpy(d, &x, (size_t)bytes);
	return d + bytes;
}

/* The channel's packet: its header (room left before its events) and its index entry; packets
 * go to the deflate stream a few hundred kilobytes at a time, as it takes small pieces slowly. */
static int packet(struct ctf_writing *w, struct chan *ch, uint32_t cpu, int last)
{
	uint64_t psize = ch->size;	/* no padding: CTF_PACKET says why */
	struct pfc_sb *x = &ch->index, *b = &ch->pkt;
	uint8_t *d;

	if (!ch->n && pfc_sb_grow(b, CTF_PKT_HEADER) == 0) {	/* an empty packet */
		ch->pkt_at = b->len;
		b->len += CTF_PKT_HEADER;
	}
	if (b->oom)
		return -1;
	d = (uint8_t *)b->buf + ch->pkt_at;
	d = le(d, 0xc1fc1fc1, 4);
	memcpy(d, w->uuid, 16);
	d += 16;
	d = le(d, 0, 4);	/* stream_id */
	d = le(d, cpu, 8);	/* stream_instance_id: lttng's per-CPU buffer */
	d = le(d, ch->n ? ch->first : 0, 8);
	d = le(d, ch->n ? ch->last : 0, 8);
	d = le(d, (uint64_t)ch->size * 8, 8);
	d = le(d, psize * 8, 8);
	d = le(d, ch->seq, 8);
	d = le(d, 0, 8);	/* events_discarded */
	le(d, cpu, 4);
	if ((last || b->len >= CTF_STAGE) && pfc_zip_spiller_put(&w->dfl, ch->spill, b) < 0)
		return -1;
	/* the index entry: CTF's packet index 1.1, big-endian, nine fields in one append */
	{
		uint64_t ent[9] = { ch->off, psize * 8, (uint64_t)ch->size * 8, ch->n ? ch->first : 0,
				    ch->n ? ch->last : 0, 0, 0, cpu, ch->seq };
		size_t k;
		for (k = 0; k < 9; k++)
			ent[k] = htobe64(ent[k]);
		pfc_sb_add(x, (const char *)ent, sizeof(ent));
	}
	if (x->oom || ((last || x->len >= CTF_STAGE) && pfc_zip_spiller_put(&w->dfl, ch->ispill, x) < 0))
		return -1;
	ch->seq++;
	ch->off += psize;
	ch->size = CTF_PKT_HEADER;
	ch->n = 0;
	if (w->c->stream_cpu < 0 && w->c->may_stream && ch->off >= w->c->stream_from && !last) {
		pthread_mutex_lock(&w->c->mu);
		w->c->stream_cpu = cpu;
		pthread_cond_broadcast(&w->c->cv);
		pthread_mutex_unlock(&w->c->mu);
	}
	return 0;
}

static int chan_open(struct ctf_writing *w, struct chan *ch)
{
	if (!(ch->spill = pfc_zip_spill_new()) || !(ch->ispill = pfc_zip_spill_new()))
		return -1;
	put_be(&ch->index, 0xc1f1dcc1, 4);
	put_be(&ch->index, 1, 4);
	put_be(&ch->index, 1, 4);
	put_be(&ch->index, 72, 4);	/* bytes per entry */
	ch->size = CTF_PKT_HEADER;
	(void)w;
	return 0;
}

/* Whether e's header may be the compact one after the channel's last event: its time is the low
 * 32 bits, which a reader adds to the last event's time, plus 2^32 when they are not more than
 * the last's low bits (TraceEvent takes equal bits for a wrap, babeltrace2 does not: a time equal
 * to the last goes extended).  A packet's first event is always extended, so that a reader that
 * starts the clock at the packet's timestamp_begin and one that carries the last packet's on
 * read the same time. */
static int compact_after(const struct chan *ch, uint32_t ctf_id, uint64_t ts)
{
	return ch->n && ctf_id < 65535 && ts > ch->last && ts - ch->last <= 0xffffffffull;
}

/* One event, in time order, into its CPU's packet: packets of up to CTF_PACKET bytes, an
 * event never cut. */
static int emit_event(struct pfc_ctf *c, const struct ctf_ev *e)
{
	struct ctf_writing *w = c->w;
	struct chan *ch = &w->ch[e->cpu];
	const struct ctf_type *ty = &c->types[e->type];
	int plain = ty->plain, compact = compact_after(ch, ty->ctf_id, e->ts);
	size_t rest = e->len + (plain ? 0 : CTF_EV_PACKED);
	size_t evsize = (compact ? CTF_EV_COMPACT : CTF_EV_FIXED) + rest;
	struct pfc_sb *b = &ch->pkt;
	uint8_t *d;

	if (!ch->spill && chan_open(w, ch) < 0)
		return -PFC_ERR_NOMEM;
	if (ch->n && ch->size + evsize > CTF_PACKET) {
		if (packet(w, ch, e->cpu, 0) < 0)
			return b->oom ? -PFC_ERR_NOMEM : -PFC_ERR_WRITE;
		compact = 0;
		evsize = CTF_EV_FIXED + rest;
	}
	if (pfc_sb_grow(b, evsize + (ch->n ? 0 : CTF_PKT_HEADER)) < 0)
		return -PFC_ERR_NOMEM;
	if (!ch->n) {
		ch->first = e->ts;
		ch->pkt_at = b->len;
		b->len += CTF_PKT_HEADER;
	}
	ch->last = e->ts;
	ch->size += evsize;
	ch->n++;
	if (!w->have_comm || w->comm_pid != e->pid || w->comm_tid != e->tid) {
		const char *name = w->comm ? w->comm(w->arg, e->pid, e->tid) : NULL;
		w->comm_pid = e->pid;
		w->comm_tid = e->tid;
		w->have_comm = 1;
		memset(w->comm_field, 0, sizeof(w->comm_field));
		if (name)
			strncpy(w->comm_field, name, 16);
	}
	/* the fixed header, the process name, the sizes of a sequence payload, the payload */
	d = (uint8_t *)b->buf + b->len;
	if (compact) {
		d = le(d, ty->ctf_id, 2);
		d = le(d, (uint32_t)e->ts, 4);
	} else {
		d = le(d, 65535, 2);
		d = le(d, ty->ctf_id, 4);
		d = le(d, e->ts, 8);
	}
	d = le(d, (uint32_t)e->pid, 4);
	d = le(d, (uint32_t)e->tid, 4);
	memcpy(d, w->comm_field, sizeof(w->comm_field));
	d += sizeof(w->comm_field);
	if (!plain) {
		d = le(d, e->len, 4);
		d = le(d, e->len, 4);
	}
	if (e->len)
		memcpy(d, e->payload, e->len);
	b->len += evsize;
	b->buf[b->len] = 0;
	return 0;
}

/* The last packet of cpu's channel, or the empty packet lttng leaves a CPU without events. */
static int channel_end(struct ctf_writing *w, struct chan *ch, uint32_t cpu, struct pfc_error *err)
{
	if (!ch->spill && chan_open(w, ch) < 0)
		return PFC_FAIL_NOOFF(err, NOMEM, "CTF channel");
	if (packet(w, ch, cpu, 1) < 0)
		return PFC_FAIL_NOOFF(err, WRITE, "CTF channel %u: %s", cpu, errno ? strerror(errno) : "deflate failed");
	return 0;
}

/* The channel of cpu into zip (unless it was streamed in), then its index. */
static int channel_add(struct chan *ch, uint32_t cpu, struct pfc_zip *zip, struct pfc_sb *name, int data,
		       struct pfc_error *err)
{
	size_t base = name->len;
	int ret = 0;

	pfc_sb_addf(name, "channel0_%u", cpu);
	if (ch->index.oom || name->oom)
		ret = PFC_FAIL_NOOFF(err, NOMEM, "CTF channel");
	if (ret == 0 && data)
		ret = pfc_zip_add_spill(zip, name->buf, ch->spill);
	cut(name, base);
	pfc_sb_addf(name, "index/channel0_%u.idx", cpu);
	if (ret == 0 && name->oom)
		ret = PFC_FAIL_NOOFF(err, NOMEM, "CTF index");
	if (ret == 0)
		ret = pfc_zip_add_spill(zip, name->buf, ch->ispill);
	cut(name, base);
	return ret;
}

static void cut(struct pfc_sb *b, size_t len)
{
	if (b->buf && len < b->len) {
		b->len = len;
		b->buf[len] = 0;
	}
}

/* What went in and what was left out, into log. */
static void write_log(const struct pfc_ctf *c, struct pfc_sb *log)
{
	size_t i;

	for (i = 0; i < c->nr_in; i++) {
		const struct ctf_input *in = &c->in[i];
		pfc_sb_addf(log, "Runtime events: %s (pid %u): %llu events, %llu written as CTF", in->path,
			    in->have_trace ? in->trace.pid : 0, (unsigned long long)in->nr_in,
			    (unsigned long long)in->nr_out);
		if (in->st.truncated)
			pfc_sb_addf(log, "; the stream is cut short at offset %llu (a session that did not end)",
				    (unsigned long long)in->st.truncated_at);
		else if (!in->st.complete)
			pfc_sb_adds(log, "; the stream has no end tag");
		pfc_sb_addc(log, '\n');
	}
	for (i = 0; i < c->nr_types; i++)
		if (c->types[i].older)
			pfc_sb_addf(log, "Runtime events written under an older version's name (TraceEvent has none for "
					 "theirs; it reads the fields the older version has): %llu of event %u version %u as %s\n",
				    (unsigned long long)c->types[i].n, c->types[i].name->id, c->types[i].version,
				    c->types[i].name->name);
	for (i = 0; i < c->left.n; i++) {
		const struct pfc_clr_count *l = &c->left.v[i];
		pfc_sb_addf(log, "Runtime events left out (no LTTng name TraceEvent reads): %llu %s %s "
				 "(event %u version %u)\n", (unsigned long long)l->n, l->provider, l->name[0] ? l->name : "?",
			    l->event_id, l->version);
	}
}

/* The spiller stopped, the channels' buffers and files given back. */
static void writing_free(struct pfc_ctf *c)
{
	struct ctf_writing *w = c->w;
	uint32_t cpu;

	if (!w)
		return;
	if (w->dfl_started)
		pfc_zip_spiller_end(&w->dfl);
	for (cpu = 0; w->ch && cpu < c->nr_cpus; cpu++) {
		pfc_zip_spill_free(w->ch[cpu].spill);
		pfc_zip_spill_free(w->ch[cpu].ispill);
		pfc_sb_free(&w->ch[cpu].pkt);
		pfc_sb_free(&w->ch[cpu].index);
	}
	free(w->ch);
	free(w);
	c->w = NULL;
}

static int fill(struct pfc_ctf *c, pfc_ctf_comm_fn comm, void *arg, struct pfc_error *err)
{
	struct ctf_writing *w;
	uint32_t cpu;
	int ret;

	/* the channels fill as the streams are read; what came decides the metadata after */
	if (!(w = c->w = calloc(1, sizeof(*w))) || !(w->ch = calloc(c->nr_cpus, sizeof(*w->ch))))
		return PFC_FAIL_NOOFF(err, NOMEM, "CTF channels");
	w->c = c;
	trace_uuid(c, w->uuid_bytes);
	w->uuid = w->uuid_bytes;
	w->comm = comm;
	w->arg = arg;
	c->emit = emit_event;
	pfc_zip_spiller_start(&w->dfl);
	w->dfl_started = 1;
	if ((ret = merge(c, err)) < 0 && !err->code)
		ret = ret == -PFC_ERR_NOMEM ? PFC_FAIL_NOOFF(err, NOMEM, "CTF channels")
					    : PFC_FAIL_NOOFF(err, WRITE, "CTF channels: %s", strerror(errno));
	if (ret < 0)
		return ret;
	pfc_clr_counts_sort(&c->left);
	if (!c->nr_ev)
		return 0;
	for (cpu = 0; cpu < c->nr_cpus; cpu++)
		if ((ret = channel_end(w, &w->ch[cpu], cpu, err)) < 0)
			return ret;
	if (pfc_zip_spiller_wait(&w->dfl) < 0)
		return PFC_FAIL_NOOFF(err, WRITE, "CTF channels: %s", errno ? strerror(errno) : "deflate failed");
	return 0;
}

int pfc_ctf_fill(struct pfc_ctf *c, pfc_ctf_comm_fn comm, void *arg, struct pfc_error *err)
{
	int ret = fill(c, comm, arg, err);

	/* a failed fill stops the spiller now: pieces of a streamed channel still queued must not
	 * reach the archive after its writer has given up on it */
	if (ret < 0 && c->w && c->w->dfl_started) {
		pfc_zip_spiller_end(&c->w->dfl);
		c->w->dfl_started = 0;
	}
	/* whoever waits in pfc_ctf_stream for a channel to stream has none coming any more */
	pthread_mutex_lock(&c->mu);
	c->filled = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return ret;
}

/* The archive's folder of the trace (DIR/auto-DATE/ust/uid/0/64-bit/) into name; the date and
 * the clock's offset from the streams' sync times. */
static void trace_dir(const struct pfc_ctf *c, const char *dir, struct pfc_sb *name, struct tm *tm, int64_t *offset)
{
	char subdir[256];
	int64_t utc_ns = 0;
	uint64_t mono_ns = 0;

	memset(tm, 0, sizeof(*tm));
	*offset = 0;
	if (sync_time(c, &utc_ns, &mono_ns, tm))
		*offset = utc_ns - (int64_t)mono_ns;
	else
		tm->tm_year = 70, tm->tm_mday = 1;
	strftime(subdir, sizeof(subdir), "auto-%Y%m%d-%H%M%S", tm);
	pfc_sb_addf(name, "%s%s/ust/uid/0/%u-bit/", dir, subdir, c->pointer_size * 8);
}

int pfc_ctf_stream(struct pfc_ctf *c, struct pfc_zip *zip, const char *dir, struct pfc_error *err)
{
	struct pfc_sb name = { 0 };
	struct tm tm;
	int64_t offset, cpu;
	int ret;

	pthread_mutex_lock(&c->mu);
	while (c->stream_cpu < 0 && !c->filled)
		pthread_cond_wait(&c->cv, &c->mu);
	cpu = c->stream_cpu;
	pthread_mutex_unlock(&c->mu);
	if (cpu < 0)
		return 0;
	trace_dir(c, dir, &name, &tm, &offset);
	pfc_sb_addf(&name, "channel0_%u", (uint32_t)cpu);
	if (name.oom) {
		pfc_sb_free(&name);
		return PFC_FAIL_NOOFF(err, NOMEM, "CTF channel");
	}
	/* the channel's spill exists: its first packet made it, before cpu was named */
	ret = pfc_zip_spiller_adopt(&c->w->dfl, c->w->ch[cpu].spill, zip, name.buf);
	if (ret == 0)
		c->streamed = cpu;
	pfc_sb_free(&name);
	return ret < 0 ? ret : 0;
}

int pfc_ctf_add(struct pfc_ctf *c, struct pfc_zip *zip, const char *dir, struct pfc_sb *log, struct pfc_error *err)
{
	struct pfc_sb text = { 0 }, meta = { 0 }, name = { 0 };
	struct ctf_writing *w = c->w;
	char uuid_s[37];
	struct tm tm;
	int64_t offset = 0;
	uint32_t cpu;
	int ret = 0;

	write_log(c, log);
	trace_dir(c, dir, &name, &tm, &offset);
	if (c->streamed >= 0) {	/* its entry is open: it ends first */
		size_t base = name.len;
		pfc_sb_addf(&name, "channel0_%u", (uint32_t)c->streamed);
		ret = name.oom ? PFC_FAIL_NOOFF(err, NOMEM, "CTF channel")
			       : pfc_zip_add_spill(zip, name.buf, w->ch[c->streamed].spill);
		cut(&name, base);
		if (ret < 0)
			goto out;
	}
	if (!c->nr_ev) {
		pfc_sb_adds(log, "Runtime events: none to write as CTF\n");
		goto out;
	}
	uuid_text(w->uuid, uuid_s);
	metadata_text(c, &text, uuid_s, &tm, offset);
	metadata_packets(text.buf, text.len, w->uuid, &meta);
	if (text.oom || meta.oom || name.oom) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "CTF metadata");
		goto out;
	}
	{
		size_t base = name.len;
		pfc_sb_adds(&name, "metadata");
		if (name.oom)
			ret = PFC_FAIL_NOOFF(err, NOMEM, "CTF metadata");
		else
			ret = pfc_zip_add_stored(zip, name.buf, meta.buf, meta.len);
		cut(&name, base);
	}
	for (cpu = 0; ret == 0 && cpu < c->nr_cpus; cpu++)
		ret = channel_add(&w->ch[cpu], cpu, zip, &name, (int64_t)cpu != c->streamed, err);
	if (ret == 0 && c->nr_forced)
		pfc_sb_addf(log, "Runtime events written out of time order: %llu (a stream whose events are not "
				 "flagged sorted, reordered within %zu)\n", (unsigned long long)c->nr_forced, CTF_WINDOW);
	if (ret == 0)
		pfc_sb_addf(log, "Runtime events written as CTF: %llu in %s (%u channels, %u event names)\n",
			    (unsigned long long)c->nr_ev, name.buf, c->nr_cpus, c->nr_ids);
out:
	writing_free(c);
	pfc_sb_free(&text);
	pfc_sb_free(&meta);
	pfc_sb_free(&name);
	return ret;
}
