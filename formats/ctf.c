/*
 * ctf.c - the .NET runtime's events of .nettrace streams as the LTTng CTF trace perfcollect puts
 * in a trace.zip: the streams read whole and their events sorted by time, then the metadata
 * (TSDL text in metadata packets), one channel of packets per CPU, and an index per channel.
 * The names of the events are ctfnames.c's; the archive and its log are perfview.c's.
 *
 * The layout is lttng-ust 2.x's, as TraceEvent's CtfTraceEventSource reads it: the packet
 * header and context, the large event header (always its extended form, with the whole 64-bit
 * time), the event context _vpid, _vtid, _procname[17], and each event's fields as the runtime's
 * LTTng provider declares them: its integers one by one (_Count, _Depth, ...), in the manifest's
 * order and sizes, byte-aligned, or for the events with strings and arrays the packed form:
 * _length, then the EventPipe payload's bytes as ___data__.  TraceEvent reads the integers into
 * one buffer, back to back, and a packed payload as it is, and hands either to its CLR parsers:
 * both are the EventPipe payload byte for byte, which makes the round trip exact.
 */
#include "formats/ctf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include "converter/events/clrevents.h"
#include "converter/events/nettrace.h"
#include "converter/util/fileio.h"
#include "converter/util/grow.h"

/* a nettrace is read whole from its mapping, as --events reads it */
/* packets of a page, lttng's smallest sub-buffer; an event larger than that gets a packet of its
 * own size, rounded up to pages */
#define CTF_PACKET 4096u
/* the metadata's packets: lttng's size */
#define CTF_META_PACKET 4096u
#define CTF_META_HEADER 37u
/* trace.packet.header (32 bytes) then stream.packet.context (52 bytes) */
#define CTF_PKT_HEADER 84u
/* the event header (extended: id 65535, u32 id, u64 time) and context (vpid, vtid, procname[17]) */
#define CTF_EV_FIXED (14u + 25u)
/* a packed payload's two lengths */
#define CTF_EV_PACKED 8u

struct ctf_ev {
	uint64_t ts;                 /* CLOCK_MONOTONIC ns */
	uint64_t ord;                /* input order, which breaks ties */
	int32_t pid, tid;
	uint32_t cpu;
	uint32_t type;               /* index into pfc_ctf.types */
	const uint8_t *payload;
	uint32_t len;
};

struct ctf_type {
	const struct pfc_ctf_name *name;
	uint32_t version;            /* the events' own (newer than the name's when older is set) */
	int older;
	int plain;                   /* fields one by one (name->fields); else packed */
	uint64_t n;
	uint32_t ctf_id;             /* the metadata's event id: one per name and form */
};

struct ctf_input {
	const char *path;
	const uint8_t *buf;          /* the stream's bytes, the conversion's (converter/events/) */
	size_t len;
	struct pfc_nettrace_trace trace;
	struct pfc_nettrace_stats st;
	int have_trace;
	uint64_t nr_in, nr_out;
};

struct pfc_ctf {
	struct ctf_input *in;
	size_t nr_in;
	struct ctf_ev *ev;
	size_t nr_ev, cap_ev;
	struct ctf_type *types;
	size_t nr_types, cap_types;
	struct pfc_clr_counts left;  /* events TraceEvent cannot read from CTF, by kind */
	uint32_t nr_cpus;
	uint32_t pointer_size;
	struct ctf_input *cur;       /* while reading */
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
	t->name = name;
	t->version = version;
	t->older = older;
	t->plain = plain;
	return (int)c->nr_types++;
}

static int on_event(void *ctx, const struct pfc_nettrace_event *ev)
{
	struct pfc_ctf *c = ctx;
	const struct pfc_ctf_name *name = NULL;
	struct ctf_ev *e;
	int older = 0, type, plain;

	c->cur->nr_in++;
	if (ev->meta && !strcmp(ev->meta->provider, PFC_CLR_PROVIDER))
		name = pfc_ctf_name_find(ev->meta->event_id, ev->meta->version, &older);
	if (!name)
		return pfc_clr_counts_add(&c->left, ev, 0);
	/* a payload of another size than the declared fields (a runtime that added one without a new
	 * version) goes packed, under the same name */
	plain = !older && fields_size(name->fields) == (long)ev->payload_len;
	if ((type = type_of(c, name, ev->meta->version, older, plain)) < 0)
		return type;
	if (!(e = pfc_grow_at(&c->ev, &c->cap_ev, c->nr_ev, sizeof(*c->ev), 1024)))
		return -PFC_ERR_NOMEM;
	e->ts = to_ns(c->cur, ev->timestamp);
	e->ord = c->nr_ev;
	e->pid = c->cur->have_trace ? (int32_t)c->cur->trace.pid : 0;
	e->tid = (int32_t)ev->thread_id;
	e->cpu = ev->processor;
	e->type = (uint32_t)type;
	e->payload = ev->payload;
	e->len = ev->payload_len;
	c->types[type].n++;
	c->nr_ev++;
	c->cur->nr_out++;
	return 0;
}

static int ev_cmp(const void *a, const void *b)
{
	const struct ctf_ev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

int pfc_ctf_read(struct pfc_ctf **out, const struct pfc_events *events, struct pfc_error *err)
{
	size_t n = events->n;
	struct pfc_ctf *c = calloc(1, sizeof(*c));
	size_t i;
	int ret = 0;

	*out = c;
	if (!c || (n && !(c->in = calloc(n, sizeof(*c->in)))))
		return PFC_FAIL_NOOFF(err, NOMEM, "runtime events");
	for (i = 0; i < n; i++) {
		struct ctf_input *in = &c->in[i];
		struct pfc_nettrace nt;
		struct pfc_nettrace_ops ops = { 0 };

		in->path = events->v[i].name;
		in->buf = events->v[i].buf;
		in->len = events->v[i].len;
		c->nr_in++;
		c->cur = in;
		ops.ctx = c;
		ops.trace = on_trace;
		ops.event = on_event;
		ret = pfc_nettrace_read(&nt, in->buf, in->len, &ops, err);
		in->st = nt.st;
		pfc_nettrace_free(&nt);
		if (ret < 0) {
			snprintf(err->file, sizeof(err->file), "%s", in->path);
			break;
		}
		if (in->have_trace && (in->trace.pointer_size == 4 || in->trace.pointer_size == 8) && !c->pointer_size)
			c->pointer_size = in->trace.pointer_size;
		if (in->have_trace && in->trace.nr_cpus > c->nr_cpus && in->trace.nr_cpus <= 4096)
			c->nr_cpus = in->trace.nr_cpus;
	}
	if (ret < 0)
		return ret;
	if (!c->pointer_size)
		c->pointer_size = 8;
	if (!c->nr_cpus)
		c->nr_cpus = 1;
	/* a processor number beyond the trace's count goes to the last channel */
	for (i = 0; i < c->nr_ev; i++)
		if (c->ev[i].cpu >= c->nr_cpus)
			c->ev[i].cpu = c->nr_cpus - 1;
	if (c->nr_ev)
		qsort(c->ev, c->nr_ev, sizeof(*c->ev), ev_cmp);
	pfc_clr_counts_sort(&c->left);
	return 0;
}

void pfc_ctf_free(struct pfc_ctf *c)
{
	if (!c)
		return;
	free(c->in);
	free(c->ev);
	free(c->types);
	pfc_clr_counts_free(&c->left);
	free(c);
}

/* ---- the bytes ---- */

static void put_u16(struct pfc_sb *b, uint16_t v)
{
	uint8_t d[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	pfc_sb_add(b, (const char *)d, 2);
}

static void put_u32(struct pfc_sb *b, uint32_t v)
{
	uint8_t d[4];
	int i;

	for (i = 0; i < 4; i++)
		d[i] = (uint8_t)(v >> (8 * i));
	pfc_sb_add(b, (const char *)d, 4);
}

static void put_u64(struct pfc_sb *b, uint64_t v)
{
	uint8_t d[8];
	int i;

	for (i = 0; i < 8; i++)
		d[i] = (uint8_t)(v >> (8 * i));
	pfc_sb_add(b, (const char *)d, 8);
}

static void put_be(struct pfc_sb *b, uint64_t v, int bytes)
{
	uint8_t d[8];
	int i;

	for (i = 0; i < bytes; i++)
		d[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
	pfc_sb_add(b, (const char *)d, (size_t)bytes);
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
		uint64_t v[3] = { in->have_trace ? in->trace.sync_qpc : 0, in->have_trace ? in->trace.pid : 0, in->nr_out };
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

struct chan {
	struct pfc_sb data, index;
	uint64_t seq;
};

/* One packet of the channel's events [from, to) of c->ev (those on cpu), whose bytes are size. */
static void packet(const struct pfc_ctf *c, struct chan *ch, uint32_t cpu, const uint8_t uuid[16], size_t from,
		   size_t to, size_t size, pfc_ctf_comm_fn comm, void *arg)
{
	struct pfc_sb *b = &ch->data;
	uint64_t start = b->len, first = 0, last = 0, psize = (size + CTF_PACKET - 1) / CTF_PACKET * CTF_PACKET;
	size_t i;
	int have = 0;

	for (i = from; i < to; i++)
		if (c->ev[i].cpu == cpu) {
			if (!have)
				first = c->ev[i].ts;
			last = c->ev[i].ts;
			have = 1;
		}
	put_u32(b, 0xc1fc1fc1);
	pfc_sb_add(b, (const char *)uuid, 16);
	put_u32(b, 0);	/* stream_id */
	put_u64(b, cpu);	/* stream_instance_id: lttng's per-CPU buffer */
	put_u64(b, first);
	put_u64(b, last);
	put_u64(b, (uint64_t)size * 8);
	put_u64(b, psize * 8);
	put_u64(b, ch->seq);
	put_u64(b, 0);	/* events_discarded */
	put_u32(b, cpu);
	for (i = from; i < to; i++) {
		const struct ctf_ev *e = &c->ev[i];
		const char *name;
		char proc[17];

		if (e->cpu != cpu)
			continue;
		put_u16(b, 65535);
		put_u32(b, c->types[e->type].ctf_id);
		put_u64(b, e->ts);
		put_u32(b, (uint32_t)e->pid);
		put_u32(b, (uint32_t)e->tid);
		memset(proc, 0, sizeof(proc));
		if (comm && (name = comm(arg, e->pid, e->tid)))
			strncpy(proc, name, 16);
		pfc_sb_add(b, proc, sizeof(proc));
		if (!c->types[e->type].plain) {
			put_u32(b, e->len);
			put_u32(b, e->len);
		}
		pfc_sb_add(b, (const char *)e->payload, e->len);
	}
	put_zeros(b, psize - size);
	/* the index entry: CTF's packet index 1.1, big-endian */
	put_be(&ch->index, start, 8);
	put_be(&ch->index, psize * 8, 8);
	put_be(&ch->index, (uint64_t)size * 8, 8);
	put_be(&ch->index, first, 8);
	put_be(&ch->index, last, 8);
	put_be(&ch->index, 0, 8);
	put_be(&ch->index, 0, 8);
	put_be(&ch->index, cpu, 8);
	put_be(&ch->index, ch->seq, 8);
	ch->seq++;
}

/* The channel of one CPU: packets of up to CTF_PACKET bytes, an event never cut. */
static void channel(const struct pfc_ctf *c, struct chan *ch, uint32_t cpu, const uint8_t uuid[16],
		    pfc_ctf_comm_fn comm, void *arg)
{
	size_t i, from = 0, size = CTF_PKT_HEADER, n = 0;

	put_be(&ch->index, 0xc1f1dcc1, 4);
	put_be(&ch->index, 1, 4);
	put_be(&ch->index, 1, 4);
	put_be(&ch->index, 72, 4);	/* bytes per entry */
	for (i = 0; i < c->nr_ev; i++) {
		size_t evsize;

		if (c->ev[i].cpu != cpu)
			continue;
		evsize = CTF_EV_FIXED + c->ev[i].len + (c->types[c->ev[i].type].plain ? 0 : CTF_EV_PACKED);
		if (n && size + evsize > CTF_PACKET) {
			packet(c, ch, cpu, uuid, from, i, size, comm, arg);
			from = i;
			size = CTF_PKT_HEADER;
			n = 0;
		}
		size += evsize;
		n++;
	}
	/* a CPU without events still has its (empty) packet, as lttng leaves one */
	packet(c, ch, cpu, uuid, from, c->nr_ev, size, comm, arg);
}

/* b back to its first len bytes */
static void cut(struct pfc_sb *b, size_t len)
{
	if (b->buf && len < b->len) {
		b->len = len;
		b->buf[len] = 0;
	}
}

int pfc_ctf_write(struct pfc_ctf *c, struct pfc_zip *zip, const char *dir, pfc_ctf_comm_fn comm, void *arg,
		  struct pfc_sb *log, struct pfc_error *err)
{
	struct pfc_sb text = { 0 }, meta = { 0 }, name = { 0 };
	struct chan ch;
	uint8_t uuid[16];
	char uuid_s[37], subdir[256];
	struct tm tm;
	int64_t utc_ns = 0, offset = 0;
	uint64_t mono_ns = 0;
	uint32_t next_id = 0, cpu;
	size_t i, k;
	int ret = 0;

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
	if (!c->nr_ev) {
		pfc_sb_adds(log, "Runtime events: none to write as CTF\n");
		return 0;
	}
	/* metadata event ids: one per name and form, in the order the events came */
	for (i = 0; i < c->nr_types; i++) {
		c->types[i].ctf_id = UINT32_MAX;
		for (k = 0; k < i; k++)
			if (c->types[k].name == c->types[i].name && c->types[k].plain == c->types[i].plain)
				c->types[i].ctf_id = c->types[k].ctf_id;
		if (c->types[i].ctf_id == UINT32_MAX)
			c->types[i].ctf_id = next_id++;
	}
	trace_uuid(c, uuid);
	uuid_text(uuid, uuid_s);
	memset(&tm, 0, sizeof(tm));
	if (sync_time(c, &utc_ns, &mono_ns, &tm))
		offset = utc_ns - (int64_t)mono_ns;
	else
		tm.tm_year = 70, tm.tm_mday = 1;
	strftime(subdir, sizeof(subdir), "auto-%Y%m%d-%H%M%S", &tm);
	pfc_sb_addf(&name, "%s%s/ust/uid/0/%u-bit/", dir, subdir, c->pointer_size * 8);
	metadata_text(c, &text, uuid_s, &tm, offset);
	metadata_packets(text.buf, text.len, uuid, &meta);
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
			ret = pfc_zip_add_mem(zip, name.buf, meta.buf, meta.len);
		cut(&name, base);
	}
	for (cpu = 0; ret == 0 && cpu < c->nr_cpus; cpu++) {
		size_t base = name.len;

		memset(&ch, 0, sizeof(ch));
		channel(c, &ch, cpu, uuid, comm, arg);
		pfc_sb_addf(&name, "channel0_%u", cpu);
		if (ch.data.oom || ch.index.oom || name.oom)
			ret = PFC_FAIL_NOOFF(err, NOMEM, "CTF channel");
		if (ret == 0)
			ret = pfc_zip_add_mem(zip, name.buf, ch.data.buf, ch.data.len);
		cut(&name, base);
		pfc_sb_addf(&name, "index/channel0_%u.idx", cpu);
		if (ret == 0 && name.oom)
			ret = PFC_FAIL_NOOFF(err, NOMEM, "CTF index");
		if (ret == 0)
			ret = pfc_zip_add_mem(zip, name.buf, ch.index.buf, ch.index.len);
		cut(&name, base);
		pfc_sb_free(&ch.data);
		pfc_sb_free(&ch.index);
	}
	if (ret == 0)
		pfc_sb_addf(log, "Runtime events written as CTF: %zu in %s (%u channels, %zu event names)\n", c->nr_ev,
			    name.buf, c->nr_cpus, (size_t)next_id);
out:
	pfc_sb_free(&text);
	pfc_sb_free(&meta);
	pfc_sb_free(&name);
	return ret;
}
