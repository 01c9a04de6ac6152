/*
 * test_core.c - unit tests of the reader's building blocks: the bounds-checked cursor,
 * the PERF_RECORD_SAMPLE decoder field by field (every sample_type bit, each at every
 * truncation), perf's FINISHED_ROUND ordering, per-process maps as they change over
 * time, and the stackcollapse-perf.pl frame tidying rules of the folded writer.
 * Records are built here byte by byte, in both byte orders where it matters.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "converter/util/bytes.h"
#include "converter/perffile/evsel.h"
#include "converter/machine/intern.h"
#include "converter/machine/machine.h"
#include "converter/perffile/order.h"
#include "converter/util/strbuf.h"
#include "formats/folded.h"
#include "tests/unit/check.h"

/* ---------- a record builder ---------- */

struct rb {
	uint8_t buf[4096];
	size_t n;
	int swap;
};

static void put64(struct rb *b, uint64_t v)
{
	if (b->swap)
		v = __builtin_bswap64(v);
	memcpy(b->buf + b->n, &v, 8);
	b->n += 8;
}

static void put32(struct rb *b, uint32_t v)
{
	if (b->swap)
		v = __builtin_bswap32(v);
	memcpy(b->buf + b->n, &v, 4);
	b->n += 4;
}

static void putbytes(struct rb *b, const void *p, size_t n)
{
	memcpy(b->buf + b->n, p, n);
	b->n += n;
}

/* ---------- cursor ---------- */

static void test_cursor(void)
{
	uint8_t bytes[12] = { 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0 };
	struct pfc_cursor c;

	pfc_cur_init(&c, bytes, sizeof(bytes), 0);
	check(pfc_cur_u64(&c) == 1 && !c.bad, "cursor: first u64");
	check(pfc_cur_left(&c) == 4, "cursor: 4 bytes left");
	check(pfc_cur_u64(&c) == 0 && c.bad, "cursor: u64 past the end reads 0 and sets bad");
	check(pfc_cur_u32(&c) == 0 && c.bad, "cursor: bad is sticky, even for a read that would fit");
	check(pfc_cur_left(&c) == 4, "cursor: a failed read consumes nothing");

	pfc_cur_init(&c, bytes, sizeof(bytes), 1);
	check(pfc_cur_u64(&c) == 0x0100000000000000ULL, "cursor: swapped u64");
	check(pfc_cur_u32(&c) == 0x02000000U, "cursor: swapped u32");
	check(pfc_cur_bytes(&c, 1) == NULL && c.bad, "cursor: bytes past the end");

	pfc_cur_init(&c, bytes, sizeof(bytes), 0);
	check(pfc_cur_bytes(&c, UINT64_MAX) == NULL && c.bad, "cursor: huge length does not wrap");
	pfc_cur_init(&c, bytes, 0, 0);
	check(pfc_cur_u32(&c) == 0 && c.bad, "cursor: empty buffer");
}

/* ---------- sample decoding ---------- */

static void evsel_init(struct pfc_evsel *ev, uint64_t sample_type)
{
	memset(ev, 0, sizeof(*ev));
	ev->attr.size = sizeof(ev->attr);
	ev->attr.sample_type = sample_type;
	ev->attr.sample_id_all = 1;
}

/* Values the builder writes for each field, checked after decoding. */
enum {
	V_ID = 0x1111, V_IP = 0xffffffff81000010ULL, V_PID = 42, V_TID = 43, V_TIME = 123456789,
	V_ADDR = 0xdead000, V_STREAM = 0x2222, V_CPU = 3, V_PERIOD = 250000, V_WEIGHT = 77,
	V_DATA_SRC = 0x55, V_TXN = 0x66, V_PHYS = 0x77000, V_CGROUP = 9, V_DPS = 4096, V_CPS = 2097152,
};

/* Build a sample body for ev; returns the body length. */
static size_t build_sample(struct rb *b, const struct pfc_evsel *ev)
{
	uint64_t st = ev->attr.sample_type;
	const struct perf_event_attr *a = &ev->attr;

	b->n = 0;
	if (st & PERF_SAMPLE_IDENTIFIER) put64(b, V_ID);
	if (st & PERF_SAMPLE_IP) put64(b, V_IP);
	if (st & PERF_SAMPLE_TID) { put32(b, V_PID); put32(b, V_TID); }
	if (st & PERF_SAMPLE_TIME) put64(b, V_TIME);
	if (st & PERF_SAMPLE_ADDR) put64(b, V_ADDR);
	if (st & PERF_SAMPLE_ID) put64(b, V_ID);
	if (st & PERF_SAMPLE_STREAM_ID) put64(b, V_STREAM);
	if (st & PERF_SAMPLE_CPU) { put32(b, V_CPU); put32(b, 0); }
	if (st & PERF_SAMPLE_PERIOD) put64(b, V_PERIOD);
	if (st & PERF_SAMPLE_READ) {
		uint64_t rf = a->read_format, i, nr = rf & PERF_FORMAT_GROUP ? 2 : 1;
		if (rf & PERF_FORMAT_GROUP) put64(b, nr);
		else put64(b, 1000);
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED) put64(b, 5);
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING) put64(b, 6);
		for (i = 0; i < nr; i++) {
			if (rf & PERF_FORMAT_GROUP) put64(b, 1000 + i);
			if (rf & PERF_FORMAT_ID) put64(b, 7 + i);
			if (rf & PERF_FORMAT_LOST) put64(b, 0);
			if (!(rf & PERF_FORMAT_GROUP))
				break;
		}
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		put64(b, 3);
		put64(b, PERF_CONTEXT_USER);
		put64(b, 0x401000);
		put64(b, 0x401100);
	}
	if (st & PERF_SAMPLE_RAW) {
		/* u32 size + payload, padded so that the whole is a multiple of 8 */
		put32(b, 12);
		putbytes(b, "raw-payload!", 12);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		put64(b, 2);
		if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			put64(b, 1);
		put64(b, 0x10); put64(b, 0x20); put64(b, 0);
		put64(b, 0x30); put64(b, 0x40); put64(b, 0);
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		put64(b, PERF_SAMPLE_REGS_ABI_64);
		put64(b, 0xaa);	/* two registers in the mask */
		put64(b, 0xbb);
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		put64(b, 16);
		put64(b, 0x1234);
		put64(b, 0x5678);
		put64(b, 8);	/* dyn_size */
	}
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) put64(b, V_WEIGHT);
	if (st & PERF_SAMPLE_DATA_SRC) put64(b, V_DATA_SRC);
	if (st & PERF_SAMPLE_TRANSACTION) put64(b, V_TXN);
	if (st & PERF_SAMPLE_REGS_INTR) {
		put64(b, PERF_SAMPLE_REGS_ABI_64);
		put64(b, 0xcc);	/* one register */
	}
	if (st & PERF_SAMPLE_PHYS_ADDR) put64(b, V_PHYS);
	if (st & PERF_SAMPLE_CGROUP) put64(b, V_CGROUP);
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE) put64(b, V_DPS);
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE) put64(b, V_CPS);
	if (st & PERF_SAMPLE_AUX) {
		put64(b, 8);
		put64(b, 0xa0a0);
	}
	return b->n;
}

static void check_sample(const struct pfc_evsel *ev, const struct pfc_sample *s, const char *what, int swap)
{
	uint64_t st = ev->attr.sample_type;

#define FIELD(bit, cond) \
	check(!(st & (bit)) || (cond), "sample %s (swap %d): %s", what, swap, #cond)
	FIELD(PERF_SAMPLE_IP, s->ip == V_IP);
	FIELD(PERF_SAMPLE_TID, s->pid == V_PID && s->tid == V_TID && (s->flags & PFC_S_HAS_TID));
	FIELD(PERF_SAMPLE_TIME, s->time == V_TIME && (s->flags & PFC_S_HAS_TIME));
	FIELD(PERF_SAMPLE_ADDR, s->addr == V_ADDR);
	FIELD(PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER, s->id == V_ID);
	FIELD(PERF_SAMPLE_STREAM_ID, s->stream_id == V_STREAM);
	FIELD(PERF_SAMPLE_CPU, s->cpu == V_CPU && (s->flags & PFC_S_HAS_CPU));
	FIELD(PERF_SAMPLE_PERIOD, s->period == V_PERIOD && (s->flags & PFC_S_HAS_PERIOD));
	FIELD(PERF_SAMPLE_CALLCHAIN, s->callchain_nr == 3 && pfc_chain_ip(s, 2, swap) == 0x401100);
	FIELD(PERF_SAMPLE_RAW, s->raw_size == 12 && s->raw && !memcmp(s->raw, "raw-payload!", 12));
	FIELD(PERF_SAMPLE_BRANCH_STACK, s->branch_nr == 2 && s->branch && pfc_ld64(s->branch + 24, swap) == 0x30);
	FIELD(PERF_SAMPLE_REGS_USER, s->regs_user_abi == PERF_SAMPLE_REGS_ABI_64 && s->regs_user &&
	      pfc_ld64(s->regs_user + 8, swap) == 0xbb);
	FIELD(PERF_SAMPLE_STACK_USER, s->stack_user_size == 16 && s->stack_user_dyn_size == 8 && s->stack_user &&
	      pfc_ld64(s->stack_user + 8, swap) == 0x5678);
	FIELD(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT, s->weight == V_WEIGHT);
	FIELD(PERF_SAMPLE_DATA_SRC, s->data_src == V_DATA_SRC);
	FIELD(PERF_SAMPLE_TRANSACTION, s->transaction == V_TXN);
	FIELD(PERF_SAMPLE_PHYS_ADDR, s->phys_addr == V_PHYS);
	FIELD(PERF_SAMPLE_CGROUP, s->cgroup == V_CGROUP);
	FIELD(PERF_SAMPLE_DATA_PAGE_SIZE, s->data_page_size == V_DPS);
	FIELD(PERF_SAMPLE_CODE_PAGE_SIZE, s->code_page_size == V_CPS);
	FIELD(PERF_SAMPLE_AUX, s->aux_size == 8 && s->aux && pfc_ld64(s->aux, swap) == 0xa0a0);
	/* the counter values, each with its id where the read format has one */
	if (st & PERF_SAMPLE_READ) {
		uint64_t rf = ev->attr.read_format, i, nr = rf & PERF_FORMAT_GROUP ? 2 : 1;
		check((s->flags & PFC_S_HAS_READ) && s->read_nr == nr && s->read_values,
		      "sample %s (swap %d): %llu read values", what, swap, (unsigned long long)s->read_nr);
		for (i = 0; (s->flags & PFC_S_HAS_READ) && i < s->read_nr && i < nr; i++) {
			const uint8_t *v = s->read_values + i * s->read_stride * 8;
			check(pfc_ld64(v, swap) == 1000 + i, "sample %s (swap %d): read value %llu", what, swap,
			      (unsigned long long)i);
			check(!(rf & PERF_FORMAT_ID) == !s->read_id_off &&
			      (!s->read_id_off || pfc_ld64(v + s->read_id_off * 8, swap) == 7 + i),
			      "sample %s (swap %d): id of read value %llu", what, swap, (unsigned long long)i);
		}
	}
#undef FIELD
	check((st & PERF_SAMPLE_TIME) || !(s->flags & PFC_S_HAS_TIME), "sample %s: no TIME, no time flag", what);
	check((st & PERF_SAMPLE_CPU) || !(s->flags & PFC_S_HAS_CPU), "sample %s: no CPU, no cpu flag", what);
}

/* Decode the full body, then every shorter prefix: all must fail cleanly (a prefix of a
 * valid sample is never a valid sample of the same layout, as every field has a size). */
static void run_layout(struct pfc_evsel *ev, const char *what)
{
	struct rb b;
	struct pfc_sample s;
	struct pfc_error err;
	size_t len, cut;
	int swap, ret;

	pfc_evsel_prepare(ev);
	for (swap = 0; swap <= 1; swap++) {
		memset(&b, 0, sizeof(b));
		b.swap = swap;
		len = build_sample(&b, ev);
		memset(&err, 0, sizeof(err));
		memset(&s, 0, sizeof(s));
		ret = pfc_sample_parse(ev, b.buf, len, swap, 100, &s, &err);
		check(ret == 0, "sample %s (swap %d): decode failed: %s", what, swap, err.detail);
		if (ret == 0)
			check_sample(ev, &s, what, swap);
		for (cut = 0; cut < len; cut++) {
			/* a fresh copy of exactly `cut` bytes, so that ASan sees any overread */
			uint8_t *p = malloc(cut ? cut : 1);
			memcpy(p, b.buf, cut);
			memset(&err, 0, sizeof(err));
			ret = pfc_sample_parse(ev, p, cut, swap, 100, &s, &err);
			check(ret < 0 && err.code != 0, "sample %s (swap %d) cut to %zu of %zu bytes was accepted",
			      what, swap, cut, len);
			free(p);
		}
	}
}

static void test_samples(void)
{
	static const struct { uint64_t bit; const char *name; } bits[] = {
		{ PERF_SAMPLE_IP, "IP" }, { PERF_SAMPLE_TID, "TID" }, { PERF_SAMPLE_TIME, "TIME" },
		{ PERF_SAMPLE_ADDR, "ADDR" }, { PERF_SAMPLE_ID, "ID" }, { PERF_SAMPLE_STREAM_ID, "STREAM_ID" },
		{ PERF_SAMPLE_CPU, "CPU" }, { PERF_SAMPLE_PERIOD, "PERIOD" }, { PERF_SAMPLE_READ, "READ" },
		{ PERF_SAMPLE_CALLCHAIN, "CALLCHAIN" }, { PERF_SAMPLE_RAW, "RAW" },
		{ PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK" }, { PERF_SAMPLE_REGS_USER, "REGS_USER" },
		{ PERF_SAMPLE_STACK_USER, "STACK_USER" }, { PERF_SAMPLE_WEIGHT, "WEIGHT" },
		{ PERF_SAMPLE_DATA_SRC, "DATA_SRC" }, { PERF_SAMPLE_IDENTIFIER, "IDENTIFIER" },
		{ PERF_SAMPLE_TRANSACTION, "TRANSACTION" }, { PERF_SAMPLE_REGS_INTR, "REGS_INTR" },
		{ PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR" }, { PERF_SAMPLE_AUX, "AUX" }, { PERF_SAMPLE_CGROUP, "CGROUP" },
		{ PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE" }, { PERF_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE" },
		{ PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT_STRUCT" },
	};
	static const uint64_t read_formats[] = {
		0, PERF_FORMAT_ID, PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID,
		PERF_FORMAT_GROUP, PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED,
		PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST,
	};
	struct pfc_evsel ev;
	uint64_t all = 0;
	size_t i;
	char what[64];

	/* each field alone (with IP, since an empty body is not a sample layout perf writes) */
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		evsel_init(&ev, PERF_SAMPLE_IP | bits[i].bit);
		ev.attr.sample_regs_user = 0x3;
		ev.attr.sample_regs_intr = 0x1;
		ev.attr.read_format = PERF_FORMAT_ID;
		run_layout(&ev, bits[i].name);
		if (bits[i].bit != PERF_SAMPLE_WEIGHT_STRUCT)
			all |= bits[i].bit;
	}
	/* everything at once, both weight forms */
	evsel_init(&ev, all);
	ev.attr.sample_regs_user = 0x3;
	ev.attr.sample_regs_intr = 0x1;
	run_layout(&ev, "all fields");
	evsel_init(&ev, (all & ~(uint64_t)PERF_SAMPLE_WEIGHT) | PERF_SAMPLE_WEIGHT_STRUCT);
	ev.attr.sample_regs_user = 0x3;
	ev.attr.sample_regs_intr = 0x1;
	run_layout(&ev, "all fields, WEIGHT_STRUCT");
	/* read formats, with and without groups */
	for (i = 0; i < sizeof(read_formats) / sizeof(read_formats[0]); i++) {
		evsel_init(&ev, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_READ | PERF_SAMPLE_PERIOD);
		ev.attr.read_format = read_formats[i];
		snprintf(what, sizeof(what), "READ format %#llx", (unsigned long long)read_formats[i]);
		run_layout(&ev, what);
	}
	/* branch stack with the hardware index */
	evsel_init(&ev, PERF_SAMPLE_IP | PERF_SAMPLE_BRANCH_STACK);
	ev.attr.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX;
	run_layout(&ev, "BRANCH_STACK with hw_idx");
	/* no CPU, no TIME: what `perf record -p` and --per-thread recordings look like */
	evsel_init(&ev, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN);
	run_layout(&ev, "without CPU and TIME");

	/* a callchain whose count runs past the record */
	{
		struct rb b = { .swap = 0 };
		struct pfc_sample s;
		struct pfc_error err = { 0 };

		evsel_init(&ev, PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN);
		pfc_evsel_prepare(&ev);
		put64(&b, V_IP);
		put64(&b, UINT64_MAX / 4);
		put64(&b, 0x401000);
		check(pfc_sample_parse(&ev, b.buf, b.n, 0, 200, &s, &err) < 0 && err.has_offset,
		      "sample: a callchain count past the record is an error with an offset");
	}
	/* sample_id_all trailer of a non-sample record */
	{
		struct rb b = { .swap = 0 };
		struct pfc_sample s;

		evsel_init(&ev, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
				 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER);
		pfc_evsel_prepare(&ev);
		put64(&b, 0xabc);	/* some record payload before the trailer */
		put32(&b, V_PID); put32(&b, V_TID);
		put64(&b, V_TIME);
		put64(&b, V_ID);
		put32(&b, V_CPU); put32(&b, 0);
		put64(&b, V_ID);
		memset(&s, 0, sizeof(s));
		check(pfc_sample_parse_id(&ev, b.buf, b.n, 0, &s) == 0 && s.time == V_TIME && s.tid == V_TID &&
		      s.cpu == V_CPU && s.id == V_ID, "sample_id_all trailer decoded from the end of the record");
		check(pfc_sample_parse_id(&ev, b.buf, 8, 0, &s) < 0, "sample_id_all trailer longer than the record");
	}
}

/* ---------- ordering ---------- */

struct got {
	uint64_t ts[64];
	uint64_t off[64];
	size_t n;
};

static int collect(void *ctx, const struct pfc_qev *ev)
{
	struct got *g = ctx;

	if (g->n < 64) {
		g->ts[g->n] = ev->ts;
		g->off[g->n] = ev->offset;
		g->n++;
	}
	return 0;
}

static void test_order(void)
{
	static const uint8_t rec[8] = { 0 };
	struct pfc_order o;
	struct got g = { .n = 0 };

	pfc_order_init(&o, collect, &g);
	/* round 1: 30, 10, 20 */
	pfc_order_queue(&o, 30, rec, 8, 1, 0, 0);
	pfc_order_queue(&o, 10, rec, 8, 2, 0, 0);
	pfc_order_queue(&o, 20, rec, 8, 3, 0, 0);
	pfc_order_round(&o);
	check(g.n == 0, "order: the first round is not released at its own end (%zu released)", g.n);
	/* round 2: 25 (older than round 1's newest), 40, and a tie at 30 */
	pfc_order_queue(&o, 25, rec, 8, 4, 0, 0);
	pfc_order_queue(&o, 40, rec, 8, 5, 0, 0);
	pfc_order_queue(&o, 30, rec, 8, 6, 0, 0);
	pfc_order_round(&o);
	/* released: everything up to round 1's newest timestamp (30), in time order, ties in file order */
	check(g.n == 5, "order: round 2 releases what round 1 saw up to its newest time (got %zu)", g.n);
	check(g.n >= 5 && g.ts[0] == 10 && g.ts[1] == 20 && g.ts[2] == 25 && g.ts[3] == 30 && g.ts[4] == 30,
	      "order: released in time order");
	check(g.n >= 5 && g.off[3] == 1 && g.off[4] == 6, "order: equal times keep file order");
	pfc_order_flush_all(&o);
	check(g.n == 6 && g.ts[5] == 40, "order: the end of the input releases the rest");
	pfc_order_exit(&o);

	/* transient records are copied: the source buffer may be reused at once */
	{
		uint8_t tmp[8];
		struct pfc_order o2;
		struct got g2 = { .n = 0 };
		int bad = 0;

		pfc_order_init(&o2, collect, &g2);
		memset(tmp, 0xaa, sizeof(tmp));
		pfc_order_queue(&o2, 5, tmp, 8, 7, 0, 1);
		memset(tmp, 0x55, sizeof(tmp));
		/* peek at the queued copy through the queue itself */
		if (o2.n != 1 || o2.v[0].data == tmp || o2.v[0].data[0] != 0xaa)
			bad = 1;
		pfc_order_flush_all(&o2);
		check(!bad && g2.n == 1, "order: a transient record is copied when queued");
		pfc_order_exit(&o2);
	}
}

/* Many rounds of interleaved sorted runs, as per-CPU buffers give them, each round
 * partly released: the queue keeps the unreleased rest in place, compacts it when it is
 * full and grows past its first size; the order delivered is checked against a plain
 * reference (release at each round what is not newer than the previous round's newest, in
 * time and then file order). */
struct big_got {
	uint64_t *off;
	size_t n;
};

static int collect_big(void *ctx, const struct pfc_qev *ev)
{
	struct big_got *g = ctx;

	g->off[g->n++] = ev->offset;
	return 0;
}

static void test_order_rounds(void)
{
	enum { ROUNDS = 100, PER = 3000, MAXN = ROUNDS * PER };
	static const uint8_t rec[8] = { 0 };
	static uint64_t ts_of[MAXN], want[MAXN], got[MAXN];
	static uint8_t done[MAXN];
	struct pfc_order o;
	struct big_got g = { .off = got, .n = 0 };
	uint64_t seed = 12345, t_base = 1000, prev_max = 0, max = 0;
	size_t nq = 0, nw = 0, r, i, j, lo = 0, bad = 0;

	pfc_order_init(&o, collect_big, &g);
	for (r = 0; r < ROUNDS; r++) {
		/* 4 "CPUs", each a sorted run reaching a bit past the round's end; rounds vary in size
		 * so that the queue both fills up with a large rest and empties */
		size_t per = (size_t)(PER / 4) * (r % 7 == 6 ? 4 : 1), c;
		for (c = 0; c < 4; c++) {
			uint64_t t = t_base;
			for (i = 0; i < per / 4; i++) {
				seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
				t += (seed >> 60) + (c == 0);
				ts_of[nq] = t;
				pfc_order_queue(&o, t, rec, 8, nq, 0, 0);
				if (t > max)
					max = t;
				nq++;
			}
		}
		t_base += per / 4 * 8;
		pfc_order_round(&o);
		/* reference: in (time, file order) every queued one not newer than prev_max */
		for (;;) {
			size_t best = SIZE_MAX;
			for (j = lo; j < nq; j++)
				if (!done[j] && ts_of[j] <= prev_max && (best == SIZE_MAX || ts_of[j] < ts_of[best]))
					best = j;
			if (best == SIZE_MAX)
				break;
			done[best] = 1;
			want[nw++] = best;
		}
		while (lo < nq && done[lo])
			lo++;
		prev_max = max;
		if (g.n != nw)
			bad++;
	}
	pfc_order_flush_all(&o);
	for (;;) {
		size_t best = SIZE_MAX;
		for (j = lo; j < nq; j++)
			if (!done[j] && (best == SIZE_MAX || ts_of[j] < ts_of[best]))
				best = j;
		if (best == SIZE_MAX)
			break;
		done[best] = 1;
		want[nw++] = best;
	}
	check(!bad, "order: each round releases what the reference does (%zu rounds differ)", bad);
	check(g.n == nq && nw == nq, "order: every record delivered once (%zu of %zu)", g.n, nq);
	for (i = 0; i < nq && i < g.n; i++)
		if (got[i] != want[i])
			break;
	check(i == nq, "order: the same order as the reference (first difference at %zu)", i);
	pfc_order_exit(&o);
}

/* ---------- maps over time ---------- */

static const char *map_name(struct pfc_machine *m, int32_t tid, uint64_t ip)
{
	struct pfc_thread *t = pfc_machine_findnew_thread(m, tid, tid);
	const struct pfc_map *map = pfc_machine_find_map(m, t, 0, ip);

	return map && map->dso ? map->dso->name : NULL;
}

static int name_is(const char *got, const char *want)
{
	return got && want ? !strcmp(got, want) : got == want;
}

static void test_maps(void)
{
	struct pfc_intern strings;
	struct pfc_machine m;
	struct pfc_thread *t;
	const struct pfc_map *map;

	pfc_intern_init(&strings);
	pfc_machine_init(&m, &strings);

	pfc_machine_mmap(&m, 100, 100, 0, 0x400000, 0x10000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL, 0,
			 "/usr/bin/app", 12);
	pfc_machine_mmap(&m, 100, 100, 0, 0x7f0000000000, 0x200000, 0x1000, PROT_READ | PROT_EXEC, MAP_PRIVATE,
			 NULL, 0, "/lib/libc.so.6", 14);
	check(name_is(map_name(&m, 100, 0x400010), "/usr/bin/app"), "maps: address in the first mapping");
	check(name_is(map_name(&m, 100, 0x410000), NULL), "maps: the end is exclusive");
	t = pfc_machine_findnew_thread(&m, 100, 100);
	map = pfc_machine_find_map(&m, t, 0, 0x7f0000000010);
	check(map && map->pgoff == 0x1000 && map->start == 0x7f0000000000, "maps: pgoff kept");

	/* a later mapping over part of the first one splits it, as the process's view changed */
	pfc_machine_mmap(&m, 100, 100, 0, 0x404000, 0x1000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL, 0,
			 "//anon", 6);
	check(name_is(map_name(&m, 100, 0x404800), "/tmp/perf-100.map"),
	      "maps: executable anonymous memory is JIT code of /tmp/perf-PID.map");
	check(name_is(map_name(&m, 100, 0x403ff0), "/usr/bin/app"), "maps: the part before the overlap stays");
	check(name_is(map_name(&m, 100, 0x405000), "/usr/bin/app"), "maps: the part after the overlap stays");
	t = pfc_machine_findnew_thread(&m, 100, 100);
	map = pfc_machine_find_map(&m, t, 0, 0x405000);
	check(map && map->start == 0x405000 && map->pgoff == 0x5000,
	      "maps: the right-hand remainder keeps its file offset (pgoff moves with the start)");

	/* threads share the process's maps; a fork copies them; later changes stay apart */
	pfc_machine_findnew_thread(&m, 100, 101);
	{
		struct pfc_thread *t101 = pfc_machine_findnew_thread(&m, 100, 101);
		const struct pfc_map *mm = pfc_machine_find_map(&m, t101, 0, 0x400010);
		check(mm && mm->dso && !strcmp(mm->dso->name, "/usr/bin/app"), "maps: a thread sees its process's maps");
	}
	pfc_machine_fork(&m, 200, 200, 100, 100);
	check(name_is(map_name(&m, 200, 0x400010), "/usr/bin/app"), "maps: a forked child has its parent's maps");
	pfc_machine_mmap(&m, 200, 200, 0, 0x400000, 0x10000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL, 0,
			 "/usr/bin/other", 14);
	check(name_is(map_name(&m, 200, 0x400010), "/usr/bin/other"), "maps: the child's new mapping");
	check(name_is(map_name(&m, 100, 0x400010), "/usr/bin/app"), "maps: the parent does not see the child's mapping");

	/* one DSO per path, shared by processes */
	{
		struct pfc_thread *a = pfc_machine_findnew_thread(&m, 100, 100);
		struct pfc_thread *b = pfc_machine_findnew_thread(&m, 200, 200);
		const struct pfc_map *ma = pfc_machine_find_map(&m, a, 0, 0x7f0000000010);
		const struct pfc_map *mb = pfc_machine_find_map(&m, b, 0, 0x7f0000000010);
		check(ma && mb && ma->dso == mb->dso, "maps: the same file is one DSO in every process");
	}
	/* comm */
	pfc_machine_comm(&m, 100, 100, "worker", 6);
	t = pfc_machine_findnew_thread(&m, 100, 100);
	check(t && !strcmp(pfc_intern_str(&strings, t->comm), "worker"), "threads: COMM sets the name");
	/* kernel addresses never come from user maps */
	t = pfc_machine_findnew_thread(&m, 100, 100);
	check(pfc_machine_find_map(&m, t, 1, 0x400010) == NULL, "maps: a user address in kernel context has no map");

	pfc_machine_exit(&m);
	pfc_intern_exit(&strings);
}

/* ---------- folded tidying (stackcollapse-perf.pl rules) ---------- */

static void fold_case(const char *line, const struct pfc_wopts *o, int java, const char *want)
{
	struct pfc_sb out = { 0 };
	int ret = pfc_folded_frame_text(line, strlen(line), java, o, &out);
	const char *got = out.buf ? out.buf : "";

	check(ret == 0 && !strcmp(got, want), "folded: '%s' -> '%s', want '%s'", line, got, want);
	pfc_sb_free(&out);
}

/* The callchain caches' generation (maps->cgen): bumped by a mapping over an address a
 * cached frame was found at (or found in no map), unless it maps it the same way; not by
 * mappings elsewhere, which a .NET process makes by the hundred. */
static void test_maps_cgen(void)
{
	struct pfc_intern strings;
	struct pfc_machine m;
	struct pfc_thread *t;
	uint64_t g;

	pfc_intern_init(&strings);
	pfc_machine_init(&m, &strings);
	pfc_machine_mmap(&m, 300, 300, 0, 0x400000, 0x10000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL, 0,
			 "/usr/bin/app", 12);
	pfc_machine_mmap(&m, 300, 300, 0, 0x7f0000000000, 0x5000, 0, PROT_READ | PROT_EXEC, MAP_SHARED, NULL, 0,
			 "/memfd:doublemapper (deleted)", 29);
	t = pfc_machine_findnew_thread(&m, 300, 300);
	pfc_maps_watch(t->maps, 0x400010);
	pfc_maps_watch(t->maps, 0x7f0000000010);
	g = t->maps->cgen;
	pfc_machine_mmap(&m, 300, 300, 0, 0x7f0000100000, 0x1000, 0, PROT_READ | PROT_EXEC, MAP_SHARED, NULL, 0,
			 "/memfd:doublemapper (deleted)", 29);
	check(t->maps->cgen == g, "cgen: a mapping beside the cached addresses keeps the caches");
	pfc_machine_mmap(&m, 300, 300, 0, 0x7f0000000000, 0x6000, 0, PROT_READ | PROT_EXEC, MAP_SHARED, NULL, 0,
			 "/memfd:doublemapper (deleted)", 29);
	check(t->maps->cgen == g, "cgen: the same code region mapped again a page longer keeps the caches");
	pfc_machine_mmap(&m, 300, 300, 0, 0x7f0000300000, 0x4000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL, 0,
			 "/lib/w.so", 9);
	pfc_maps_watch(t->maps, 0x7f0000300010);
	g = t->maps->cgen;
	pfc_machine_mmap(&m, 300, 300, 0, 0x7f0000300000, 0x4000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL, 0,
			 "/lib/w.so", 9);
	check(t->maps->cgen == g, "cgen: a file mapped again as it was keeps the caches");
	pfc_machine_mmap(&m, 300, 300, 0, 0x7f0000300000, 0x4000, 0x1000, PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL, 0,
			 "/lib/w.so", 9);
	check(t->maps->cgen != g, "cgen: the same file at another offset over a cached address starts them over");
	g = t->maps->cgen;
	pfc_machine_mmap(&m, 300, 300, 0, 0x7f0000000000, 0x6000, 0x1000, PROT_READ | PROT_EXEC, MAP_SHARED, NULL, 0,
			 "/memfd:doublemapper (deleted)", 29);
	check(t->maps->cgen == g, "cgen: JIT code is mapped 1:1: its offset does not matter");
	pfc_maps_watch(t->maps, 0x7f0000000010);
	g = t->maps->cgen;
	pfc_machine_mmap(&m, 300, 300, 0, 0x7f0000000000, 0x6000, 0x1000, PROT_READ, MAP_SHARED, NULL, 0,
			 "/memfd:doublemapper (deleted)", 29);
	check(t->maps->cgen != g, "cgen: other protection over a cached address starts them over");
	g = t->maps->cgen;
	pfc_machine_mmap(&m, 300, 300, 0, 0x7f0000000000, 0x6000, 0x1000, PROT_READ | PROT_EXEC, MAP_SHARED, NULL, 0,
			 "/memfd:doublemapper (deleted)", 29);
	check(t->maps->cgen == g, "cgen: marks of an older generation do not count");
	pfc_maps_watch(t->maps, 0x400010);
	g = t->maps->cgen;
	pfc_machine_mmap(&m, 300, 300, 0, 0x40c000, 0x1000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL, 0, "//anon", 6);
	check(t->maps->cgen != g, "cgen: another file over a map a cached address is in starts them over");
	/* addresses in no map: the gap they were in, and above the last map */
	pfc_maps_watch(t->maps, 0x500000);
	g = t->maps->cgen;
	pfc_machine_mmap(&m, 300, 300, 0, 0x7f0000200000, 0x1000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL, 0,
			 "/lib/x.so", 9);
	check(t->maps->cgen == g, "cgen: a mapping in another gap keeps the caches");
	pfc_machine_mmap(&m, 300, 300, 0, 0x4ff000, 0x2000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL, 0,
			 "/lib/y.so", 9);
	check(t->maps->cgen != g, "cgen: a mapping over an address found in no map starts them over");
	pfc_maps_watch(t->maps, 0x7ffff0000000);
	g = t->maps->cgen;
	pfc_machine_mmap(&m, 300, 300, 0, 0x7fffe0000000, 0x1000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL, 0,
			 "/lib/z.so", 9);
	check(t->maps->cgen != g, "cgen: a mapping in the gap above the last map, where an address was in none");
	/* the gap below a map: not reached by a map again at the same start, which keeps its mark */
	pfc_maps_watch(t->maps, 0x7f00002fff00);
	g = t->maps->cgen;
	pfc_machine_mmap(&m, 300, 300, 0, 0x7f0000300000, 0x5000, 0x1000, PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL, 0,
			 "/lib/w.so", 9);
	check(t->maps->cgen == g, "cgen: a map again from the same start does not reach the gap below it");
	pfc_machine_mmap(&m, 300, 300, 0, 0x7f0000300000, 0x6000, 0x1000, PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL, 0,
			 "/lib/w.so", 9);
	pfc_machine_mmap(&m, 300, 300, 0, 0x7f00002ff000, 0x800, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL, 0,
			 "/lib/v.so", 9);
	check(t->maps->cgen != g, "cgen: the gap's mark stays with the map above it, and a map into the gap starts them over");
	g = t->maps->cgen;
	pfc_maps_bump(t->maps);
	check(t->maps->cgen != g, "cgen: pfc_maps_bump starts them over");
	/* a fork's child gets a copy: its caches start over, and the parent's marks are not its */
	pfc_maps_watch(t->maps, 0x400010);
	pfc_machine_fork(&m, 400, 400, 300, 300);
	t = pfc_machine_findnew_thread(&m, 400, 400);
	check(t->maps->cgen != 0 && t->maps->n > 0 && t->maps->v[0].seen != t->maps->cgen + 1,
	      "cgen: a forked child's copy carries no marks");
	pfc_machine_exit(&m);
	pfc_intern_exit(&strings);
}

static void test_folded(void)
{
	struct pfc_wopts none = { 0 }, kernel = { .kernel = 1 }, jit = { .jit = 1 }, addrs = { .addrs = 1 };

	fold_case("\t    7f12 main+0x1a (/usr/bin/app)", &none, 0, "main");
	fold_case("\t    7f12 main+0x1A (/usr/bin/app)", &none, 0, "main+0x1A");	/* lower-case hex only */
	fold_case("\t    7f12 [unknown] (/usr/lib/libfoo.so.1)", &none, 0, "[libfoo.so.1]");
	fold_case("\t    7f12 [unknown] ([unknown])", &none, 0, "[unknown]");
	fold_case("\t    7f12 [unknown] (/usr/lib/libfoo.so.1)", &addrs, 0, "[libfoo.so.1 <7f12>]");
	fold_case("\t       0 [unknown] ([unknown])", &addrs, 0, "[unknown <0>]");
	fold_case("\tffffffff81000000 native_safe_halt+0x6 ([kernel.kallsyms])", &kernel, 0, "native_safe_halt_[k]");
	fold_case("\tffffffff81000000 native_safe_halt+0x6 ([kernel.kallsyms])", &none, 0, "native_safe_halt");
	fold_case("\t7f0 Foo::Bar(int) (/tmp/perf-42.map)", &jit, 0, "Foo::Bar_[j]");
	fold_case("\t7f0 Foo::Bar(int) (/tmp/perf-42.map)", &kernel, 0, "Foo::Bar");
	/* C++: everything from the first '(' goes, except (anonymous namespace) */
	fold_case("\t401000 std::vector<int>::push_back(int const&) (/usr/bin/app)", &none, 0, "std::vector<int>::push_back");
	fold_case("\t401000 ns::(anonymous namespace)::helper(int) (/usr/bin/app)", &none, 0,
		  "ns::(anonymous namespace)::helper");
	/* ... but a name that starts with '(' is a process name to the script, and dropped */
	fold_case("\t401000 (anonymous namespace)::helper(int) (/usr/bin/app)", &none, 0, "");
	/* Go names keep their parentheses */
	fold_case("\t401000 main.(*T).Method (/usr/bin/goapp)", &none, 0, "main.(*T).Method");
	/* semicolons become colons, quotes vanish */
	fold_case("\t401000 a;b 'c' \"d\" (/usr/bin/app)", &none, 0, "a:b c d");
	/* .NET: spaces kept, tier suffix dropped with the argument list */
	fold_case("\t7f1234567890 instance void [System.Private.CoreLib] System.Threading.Thread::StartCallback()[OptimizedTier1] (/tmp/perf-4242.map)",
		  &none, 0, "instance void [System.Private.CoreLib] System.Threading.Thread::StartCallback");
	/* the split is at the last " (" that has a ")" after it; the space before "(x)" stays */
	fold_case("\t401000 f (x) (/usr/bin/app)", &none, 0, "f ");
	/* Java inline notation: pieces after the first get _[i] */
	fold_case("\t401000 a->b->c (/tmp/perf-9.map)", &none, 0, "a;b_[i];c_[i]");
	/* java process: the leading L of a class path goes */
	fold_case("\t401000 Ljava/lang/Thread;::run (/tmp/perf-9.map)", &none, 1, "java/lang/Thread:::run");
	/* not frame lines */
	fold_case("\t401000 (/usr/bin/app)", &none, 0, "");
	fold_case("no frame here", &none, 0, "");
	fold_case("\t401000 (process) (/usr/bin/app)", &none, 0, "");
}

/* pfc_intern_sort against qsort_r with pfc_intern_cmp on strings that share long prefixes,
 * are prefixes of each other, and use every byte value (signedness). */
static void test_intern_sort(void)
{
	static const char alpha[] = { 'a', 'b', ';', '\xff', '\x01', 'z' };
	struct pfc_intern in;
	uint32_t *a, *b;
	size_t n = 0, cap = 3000, i, same = 1;
	uint64_t seed = 99;
	char buf[64];

	pfc_intern_init(&in);
	a = calloc(cap, sizeof(*a));
	b = calloc(cap, sizeof(*b));
	while (n < cap) {
		size_t len, k;
		uint32_t id;
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		len = (size_t)(seed >> 59);	/* 0..31 */
		memcpy(buf, "comm;root;main;", 15);	/* the shared prefix, cut at random */
		for (k = 15; k < 15 + len; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			buf[k] = alpha[(seed >> 33) % sizeof(alpha)];
		}
		len = (seed >> 40) % 2 ? 15 + len : (seed >> 41) % (16 + len);
		id = pfc_intern(&in, buf, len);
		for (k = 0; k < n && a[k] != id; k++)
			;
		if (k == n)
			a[n++] = id;
	}
	memcpy(b, a, n * sizeof(*a));
	for (i = 0; i <= n; i += i < 20 ? 1 : 997) {	/* every small size, then a few large */
		uint32_t *x = malloc((i + 1) * sizeof(*x)), *y = malloc((i + 1) * sizeof(*y));
		memcpy(x, a, i * sizeof(*x));
		memcpy(y, a, i * sizeof(*y));
		pfc_intern_sort(&in, x, i);
		qsort_r(y, i, sizeof(*y), pfc_intern_cmp, &in);
		if (i && memcmp(x, y, i * sizeof(*x)))
			same = 0;
		free(x);
		free(y);
	}
	pfc_intern_sort(&in, b, n);
	qsort_r(a, n, sizeof(*a), pfc_intern_cmp, &in);
	check(same && !memcmp(a, b, n * sizeof(*a)), "intern: the multikey sort orders as memcmp does (%zu strings)", n);
	free(a);
	free(b);
	pfc_intern_exit(&in);
}

/* pfc_put_dec and pfc_sb_adddec against snprintf: every length of number, the ends of the
 * range, every zero padding and width. */
static void test_decimal(void)
{
	static const unsigned long long edge[] = { 0, 1, 9, 10, 99, 100, 4294967295ULL, 4294967296ULL,
						   9999999999999999999ULL, 10000000000000000000ULL, UINT64_MAX };
	unsigned long long v = 1;
	char got[64], want[64];
	int bad = 0, n = 0, k, w;
	struct pfc_sb sb;

	memset(&sb, 0, sizeof(sb));
	for (k = 0; k < 2000 + (int)(sizeof(edge) / sizeof(edge[0])); k++) {
		v = k < 2000 ? v * 6364136223846793005ULL + 1442695040888963407ULL : edge[k - 2000];
		unsigned long long x = k < 2000 ? v >> (k % 64) : v;	/* every magnitude */
		for (w = 1; w <= 20; w++) {
			*pfc_put_dec(got, x, w) = 0;
			snprintf(want, sizeof(want), "%0*llu", w, x);
			bad += strcmp(got, want) != 0;
			pfc_sb_reset(&sb);
			pfc_sb_adddec(&sb, x, 0, (size_t)w + 2);
			snprintf(want, sizeof(want), "%*llu", w + 2, x);
			bad += sb.len != strlen(want) || memcmp(sb.buf, want, sb.len) != 0;
			pfc_sb_reset(&sb);
			pfc_sb_adddec(&sb, x >> 1, 1, (size_t)w + 2);
			snprintf(want, sizeof(want), "%*lld", w + 2, -(long long)(x >> 1));
			bad += sb.len != strlen(want) || memcmp(sb.buf, want, sb.len) != 0;
			n += 3;
		}
	}
	check(!bad, "decimal: pfc_put_dec and pfc_sb_adddec print as printf does (%d of %d differ)", bad, n);
	pfc_sb_free(&sb);
}

int main(void)
{
	test_cursor();
	test_samples();
	test_order();
	test_order_rounds();
	test_intern_sort();
	test_decimal();
	test_maps();
	test_maps_cgen();
	test_folded();
	return check_done("test_core");
}
