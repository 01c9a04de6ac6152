/*
 * test_events.c - converter/events/: the nettrace reader and the runtime's payloads on
 * fixtures/dotnet-events, checked against what the workload says it did (truth.txt): GCs per
 * generation and forced ones, exceptions by type, the 3:1 bytes of its two allocation sites
 * from allocation ticks and from .NET 10's allocation samples, twelve compiled instantiations,
 * and each forced GC inside the CLOCK_MONOTONIC window the app measured around it.  Also every
 * cut of the stream, damaged copies, and a hand-made stream of uncompressed event blobs.
 *
 *   test_events                 the checks
 *   test_events --dump FILE     the lines tests/interop/nettrace prints from TraceEvent's reading
 *   test_events --report FILE   the runtime report (formats/runtime.c) of FILE
 *   test_events --pauses FILE   "pause BEGIN END GC-DEPTH" per GC: GCSuspendEEBegin to GCRestartEEEnd in
 *                               the stream's clock (docs/runtime-events.md lays them over perf's samples)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "converter/events/clrevents.h"
#include "converter/events/nettrace.h"
#include "converter/events/runtime.h"
#include "formats/runtime.h"
#include "tests/unit/check.h"
#include "tests/unit/loadfile.h"

#define FIX "fixtures/dotnet-events/"

/* ---- the dump: one line per decoded event, and the counts ---- */

struct dump {
	uint32_t pointer_size;
	struct pfc_clr_counts counts;
	struct pfc_clr_event ce;
	struct pfc_error err;
	uint64_t bad;
};

static int dump_trace(void *ctx, const struct pfc_nettrace_trace *t)
{
	struct dump *d = ctx;

	d->pointer_size = t->pointer_size;
	printf("trace pid=%u pointer=%u cpus=%u\n", t->pid, t->pointer_size, t->nr_cpus);
	return 0;
}

static int dump_event(void *ctx, const struct pfc_nettrace_event *ev)
{
	struct dump *d = ctx;
	struct pfc_clr_event *e = &d->ce;
	int kind = pfc_clr_decode(ev, d->pointer_size, e, &d->err);

	if (pfc_clr_counts_add(&d->counts, ev, kind) < 0)
		return -PFC_ERR_NOMEM;
	if (kind < 0) {
		d->bad++;
		return 0;
	}
	switch (kind) {
	case PFC_CLR_GC_START:
		printf("GCStart count=%u depth=%u reason=%u type=%u tid=%llu\n", e->count, e->depth, e->reason,
		       e->type, (unsigned long long)ev->thread_id);
		break;
	case PFC_CLR_GC_END:
		printf("GCEnd count=%u depth=%u tid=%llu\n", e->count, e->depth, (unsigned long long)ev->thread_id);
		break;
	case PFC_CLR_GC_HEAP_STATS:
		printf("GCHeapStats gen0=%llu gen1=%llu gen2=%llu gen3=%llu gen4=%llu promoted0=%llu promoted1=%llu "
		       "promoted2=%llu pinned=%u handles=%u\n",
		       (unsigned long long)e->gen_size[0], (unsigned long long)e->gen_size[1],
		       (unsigned long long)e->gen_size[2], (unsigned long long)e->gen_size[3],
		       (unsigned long long)e->gen_size[4], (unsigned long long)e->promoted[0],
		       (unsigned long long)e->promoted[1], (unsigned long long)e->promoted[2], e->pinned_objects,
		       e->gc_handles);
		break;
	case PFC_CLR_GC_SUSPEND_BEGIN:
		printf("GCSuspendEEBegin reason=%u count=%u\n", e->reason, e->count);
		break;
	case PFC_CLR_GC_TRIGGERED:
		printf("GCTriggered reason=%u\n", e->reason);
		break;
	case PFC_CLR_GC_ALLOC_TICK:
		printf("GCAllocationTick kind=%u amount=%llu type=%s heap=%u size=%llu\n", e->alloc_kind,
		       (unsigned long long)e->alloc_amount64, e->type_name, e->heap_index,
		       (unsigned long long)e->object_size);
		break;
	case PFC_CLR_JIT_START:
		printf("MethodJittingStarted %s %s %s il=%u\n", e->method_namespace, e->method_name,
		       e->method_signature, e->il_size);
		break;
	case PFC_CLR_METHOD_LOAD:
	case PFC_CLR_METHOD_DCEND:
		printf("%s %s %s start=0x%llx size=%u token=0x%x\n", e->name, e->method_namespace, e->method_name,
		       (unsigned long long)e->method_start, e->method_size, e->method_token);
		break;
	case PFC_CLR_MODULE_DCEND:
		printf("ModuleDCEnd %s\n", e->il_path);
		break;
	case PFC_CLR_EXC_THROWN:
		printf("ExceptionThrown %s hresult=0x%x flags=%u %s\n", e->exception_type, e->hresult,
		       e->exception_flags, e->exception_message);
		break;
	case PFC_CLR_EXC_CATCH:
		printf("ExceptionCatchStart %s\n", e->method_name);
		break;
	default:
		break;
	}
	return 0;
}

static int dump(const char *path)
{
	struct pfc_nettrace nt;
	struct dump d;
	struct pfc_nettrace_ops ops = { 0 };
	size_t len, i;
	char *buf = load_file(path, &len);
	int rc;

	if (!buf) {
		fprintf(stderr, "test_events: cannot read '%s'\n", path);
		return 1;
	}
	memset(&d, 0, sizeof(d));
	ops.ctx = &d;
	ops.trace = dump_trace;
	ops.event = dump_event;
	rc = pfc_nettrace_read(&nt, (const uint8_t *)buf, len, &ops, &d.err);
	if (rc < 0) {
		fprintf(stderr, "test_events: '%s': %s at offset %llu: %s\n", path, pfc_strerror(-rc),
			(unsigned long long)d.err.offset, d.err.detail);
		return 1;
	}
	pfc_clr_counts_sort(&d.counts);
	for (i = 0; i < d.counts.n; i++)
		printf("count %s %u %u %llu\n", d.counts.v[i].provider, d.counts.v[i].event_id, d.counts.v[i].version,
		       (unsigned long long)d.counts.v[i].n);
	fprintf(stderr, "events %llu, complete %d, truncated %d, dropped %llu, bad payloads %llu\n",
		(unsigned long long)nt.st.nr_events, nt.st.complete, nt.st.truncated,
		(unsigned long long)nt.st.nr_dropped, (unsigned long long)d.bad);
	pfc_clr_counts_free(&d.counts);
	pfc_nettrace_free(&nt);
	free(buf);
	return 0;
}

/* ---- the GC pauses: from the suspension's start to the end of the restart ---- */

struct pauses {
	uint32_t pointer_size;
	struct pfc_clr_event ce;
	struct pfc_error err;
	uint64_t begin;
	uint32_t depth;
};

static int pause_trace(void *ctx, const struct pfc_nettrace_trace *t)
{
	((struct pauses *)ctx)->pointer_size = t->pointer_size;
	return 0;
}

static int pause_event(void *ctx, const struct pfc_nettrace_event *ev)
{
	struct pauses *p = ctx;
	int kind = pfc_clr_decode(ev, p->pointer_size, &p->ce, &p->err);

	if (kind == PFC_CLR_GC_SUSPEND_BEGIN) {
		p->begin = ev->timestamp;
	} else if (kind == PFC_CLR_GC_START) {
		p->depth = p->ce.depth;
	} else if (kind == PFC_CLR_GC_RESTART_END && p->begin) {
		printf("pause %llu %llu %u\n", (unsigned long long)p->begin, (unsigned long long)ev->timestamp, p->depth);
		p->begin = 0;
	}
	return 0;
}

static int print_pauses(const char *path)
{
	struct pfc_nettrace nt;
	struct pauses p;
	struct pfc_nettrace_ops ops = { 0 };
	size_t len;
	char *buf = load_file(path, &len);
	int rc;

	if (!buf)
		return 1;
	memset(&p, 0, sizeof(p));
	ops.ctx = &p;
	ops.trace = pause_trace;
	ops.event = pause_event;
	rc = pfc_nettrace_read(&nt, (const uint8_t *)buf, len, &ops, &p.err);
	pfc_nettrace_free(&nt);
	free(buf);
	return rc < 0;
}

static int report(const char *path)
{
	struct pfc_runtime rt;
	struct pfc_error err;
	struct pfc_sb sb = { 0 };
	size_t len;
	char *buf = load_file(path, &len);
	int rc;

	if (!buf)
		return 1;
	memset(&err, 0, sizeof(err));
	rc = pfc_runtime_read(&rt, (const uint8_t *)buf, len, &err);
	if (rc == 0)
		rc = pfc_runtime_text(&rt, path, 0, NULL, 0, &sb);
	if (rc == 0)
		fputs(sb.buf, stdout);
	else
		fprintf(stderr, "test_events: '%s': %s: %s\n", path, pfc_strerror(-rc), err.detail);
	free(sb.buf);
	pfc_runtime_free(&rt);
	free(buf);
	return rc < 0;
}

/* ---- the workload's truth ---- */

#define MAX_CALLS 32

struct truth {
	uint32_t pid;
	uint64_t collections[3], induced[3];
	uint64_t bytes_ints, bytes_records;
	uint64_t args, invalids;
	int nr_calls;
	struct { uint32_t gen; uint64_t t0, t1; } calls[MAX_CALLS];
};

static int read_truth(const char *path, struct truth *t)
{
	size_t len;
	char *buf = load_file(path, &len), *line, *save = NULL;

	memset(t, 0, sizeof(*t));
	if (!buf)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned g;
		unsigned long long a, b;
		char name[128];
		if (sscanf(line, "truth gc-call %u %llu %llu", &g, &a, &b) == 3 && t->nr_calls < MAX_CALLS) {
			t->calls[t->nr_calls].gen = g;
			t->calls[t->nr_calls].t0 = a;
			t->calls[t->nr_calls].t1 = b;
			t->nr_calls++;
		} else if (sscanf(line, "truth pid %llu", &a) == 1) {
			t->pid = (uint32_t)a;
		} else if (sscanf(line, "truth collection-count %u %llu", &g, &a) == 2 && g < 3) {
			t->collections[g] = a;
		} else if (sscanf(line, "truth gc-induced %u %llu", &g, &a) == 2 && g < 3) {
			t->induced[g] = a;
		} else if (sscanf(line, "truth alloc-bytes %127s %llu", name, &a) == 2) {
			if (strcmp(name, "System.Int32[]") == 0)
				t->bytes_ints = a;
			else
				t->bytes_records = a;
		} else if (sscanf(line, "truth exceptions %127s %llu", name, &a) == 2) {
			if (strcmp(name, "System.ArgumentException") == 0)
				t->args = a;
			else
				t->invalids = a;
		}
	}
	free(buf);
	return 0;
}

/* ---- what the checks gather from a stream ---- */

#define MAX_GCS 64
#define MAX_SPIN 64

struct seen {
	uint32_t pointer_size;
	struct pfc_clr_event ce;
	struct pfc_error err;
	uint64_t bad, unknown, kinds[PFC_CLR__NR];
	uint64_t by_depth[3], induced_by_depth[3];
	uint64_t tick_ints, tick_records, tick_other;
	uint64_t sampled_ints, sampled_records;
	uint64_t exc_args, exc_invalids, catches;
	uint64_t spin_ids[MAX_SPIN];
	int nr_spin;
	int nr_gcs;
	struct { uint32_t count, depth, reason; uint64_t start, end; } gcs[MAX_GCS];
	uint64_t stacks_with_ips;
	struct pfc_clr_counts counts;
};

static int seen_trace(void *ctx, const struct pfc_nettrace_trace *t)
{
	((struct seen *)ctx)->pointer_size = t->pointer_size;
	return 0;
}

static int seen_event(void *ctx, const struct pfc_nettrace_event *ev)
{
	struct seen *s = ctx;
	struct pfc_clr_event *e = &s->ce;
	int kind = pfc_clr_decode(ev, s->pointer_size, e, &s->err), i;

	if (pfc_clr_counts_add(&s->counts, ev, kind) < 0)
		return -PFC_ERR_NOMEM;
	if (kind < 0) {
		s->bad++;
		return 0;
	}
	s->kinds[kind]++;
	if (ev->nr_ips)
		s->stacks_with_ips++;
	switch (kind) {
	case PFC_CLR_UNKNOWN:
		s->unknown++;
		break;
	case PFC_CLR_GC_START:
		if (e->depth < 3) {
			s->by_depth[e->depth]++;
			if (e->reason == 1)     /* Induced: GC.Collect */
				s->induced_by_depth[e->depth]++;
		}
		if (s->nr_gcs < MAX_GCS) {
			s->gcs[s->nr_gcs].count = e->count;
			s->gcs[s->nr_gcs].depth = e->depth;
			s->gcs[s->nr_gcs].reason = e->reason;
			s->gcs[s->nr_gcs].start = ev->timestamp;
			s->gcs[s->nr_gcs].end = 0;
			s->nr_gcs++;
		}
		break;
	case PFC_CLR_GC_END:
		for (i = 0; i < s->nr_gcs; i++)
			if (s->gcs[i].count == e->count)
				s->gcs[i].end = ev->timestamp;
		break;
	case PFC_CLR_GC_ALLOC_TICK:
		if (strcmp(e->type_name, "System.Int32[]") == 0)
			s->tick_ints += e->alloc_amount64;
		else if (strcmp(e->type_name, "EventsProbe.Record") == 0)
			s->tick_records += e->alloc_amount64;
		else
			s->tick_other += e->alloc_amount64;
		break;
	case PFC_CLR_ALLOC_SAMPLED:
		if (strcmp(e->type_name, "System.Int32[]") == 0)
			s->sampled_ints++;
		else if (strcmp(e->type_name, "EventsProbe.Record") == 0)
			s->sampled_records++;
		break;
	case PFC_CLR_EXC_THROWN:
		if (strcmp(e->exception_type, "System.ArgumentException") == 0)
			s->exc_args++;
		else if (strcmp(e->exception_type, "System.InvalidOperationException") == 0)
			s->exc_invalids++;
		break;
	case PFC_CLR_EXC_CATCH:
		s->catches++;
		break;
	case PFC_CLR_JIT_START:
		if (strcmp(e->method_name, "Spin") == 0 && strstr(e->method_namespace, "EventsProbe.Program")) {
			for (i = 0; i < s->nr_spin; i++)
				if (s->spin_ids[i] == e->method_id)
					break;
			if (i == s->nr_spin && s->nr_spin < MAX_SPIN)
				s->spin_ids[s->nr_spin++] = e->method_id;
		}
		break;
	default:
		break;
	}
	return 0;
}

static int read_seen(const uint8_t *buf, size_t len, struct pfc_nettrace *nt, struct seen *s, struct pfc_error *err)
{
	struct pfc_nettrace_ops ops = { 0 };

	memset(s, 0, sizeof(*s));
	ops.ctx = s;
	ops.trace = seen_trace;
	ops.event = seen_event;
	return pfc_nettrace_read(nt, buf, len, &ops, err);
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

static void test_fixture(void)
{
	struct truth t;
	struct pfc_nettrace nt;
	struct pfc_error err;
	static struct seen s;
	size_t len;
	char *buf = load_file(FIX "app.nettrace", &len);
	double want, got;
	int g, i, rc;

	check(buf != NULL, "read " FIX "app.nettrace");
	check(read_truth(FIX "truth.txt", &t) == 0, "read " FIX "truth.txt");
	if (!buf)
		return;
	memset(&err, 0, sizeof(err));
	rc = read_seen((const uint8_t *)buf, len, &nt, &s, &err);
	check(rc == 0, "app.nettrace reads (%d: %s at %llu)", rc, err.detail, (unsigned long long)err.offset);
	check(nt.st.complete && !nt.st.truncated, "app.nettrace ends with its end tag");
	check(nt.trace.pid == t.pid && t.pid != 0, "the trace's pid %u is the app's %u", nt.trace.pid, t.pid);
	check(nt.trace.qpc_freq == 1000000000ull, "QPC frequency 1e9 (CLOCK_MONOTONIC in ns), not %llu",
	      (unsigned long long)nt.trace.qpc_freq);
	check(nt.trace.pointer_size == 8, "pointer size 8");
	check(nt.st.nr_dropped == 0 && nt.st.nr_no_meta == 0 && nt.st.nr_no_stack == 0,
	      "no event dropped, none without metadata or stack");
	check(s.bad == 0, "every known payload fits its layout (%llu do not)", (unsigned long long)s.bad);
	check(s.stacks_with_ips > 1000, "events carry managed stacks (%llu)", (unsigned long long)s.stacks_with_ips);

	/* GCs: GC.CollectionCount(g) counts every GC of generation g or higher */
	for (g = 0; g < 3; g++) {
		uint64_t n = 0;
		int h;
		for (h = g; h < 3; h++)
			n += s.by_depth[h];
		check(n == t.collections[g], "GCs of generation >= %d: %llu, the app counted %llu", g,
		      (unsigned long long)n, (unsigned long long)t.collections[g]);
	}
	/* GC.Collect(1) may collect generation 2 as well (the GC escalates when it sees fit): the
	 * forced GCs add up, and each lies in its window with at least the generation asked for */
	check(s.induced_by_depth[0] + s.induced_by_depth[1] + s.induced_by_depth[2] ==
	      t.induced[0] + t.induced[1] + t.induced[2], "induced GCs: %llu, the app forced %llu",
	      (unsigned long long)(s.induced_by_depth[0] + s.induced_by_depth[1] + s.induced_by_depth[2]),
	      (unsigned long long)(t.induced[0] + t.induced[1] + t.induced[2]));
	check(s.kinds[PFC_CLR_GC_END] == s.kinds[PFC_CLR_GC_START] &&
	      s.kinds[PFC_CLR_GC_HEAP_STATS] == s.kinds[PFC_CLR_GC_START] &&
	      s.kinds[PFC_CLR_GC_SUSPEND_BEGIN] == s.kinds[PFC_CLR_GC_START] &&
	      s.kinds[PFC_CLR_GC_RESTART_END] == s.kinds[PFC_CLR_GC_START] &&
	      s.kinds[PFC_CLR_GC_TRIGGERED] == s.kinds[PFC_CLR_GC_START],
	      "each GC has its end, heap stats, suspension, restart and trigger");

	/* exceptions */
	check(s.exc_args == t.args && s.exc_invalids == t.invalids,
	      "exceptions thrown: %llu ArgumentException, %llu InvalidOperationException (app: %llu, %llu)",
	      (unsigned long long)s.exc_args, (unsigned long long)s.exc_invalids, (unsigned long long)t.args,
	      (unsigned long long)t.invalids);
	check(s.catches == t.args + t.invalids, "every exception caught (%llu)", (unsigned long long)s.catches);

	/* allocation ticks: the two sites' bytes in the app's ratio, within 10% */
	want = ratio(t.bytes_ints, t.bytes_records);
	got = ratio(s.tick_ints, s.tick_records);
	check(want > 2.9 && want < 3.1, "the app's sites allocated 3:1 (%.3f)", want);
	check(got > want * 0.9 && got < want * 1.1, "allocation ticks give the sites %.3f:1, the app %.3f:1", got, want);
	check(s.tick_ints > t.bytes_ints * 9 / 10 && s.tick_ints < t.bytes_ints * 11 / 10,
	      "ticks count %llu bytes of int[] against the app's %llu", (unsigned long long)s.tick_ints,
	      (unsigned long long)t.bytes_ints);

	/* JIT: twelve instantiations of Spin<T>, each its own method */
	check(s.nr_spin == 12, "Spin<T> compiled for %d types, 12 expected", s.nr_spin);
	check(s.kinds[PFC_CLR_METHOD_DCEND] > 100 && s.kinds[PFC_CLR_MODULE_DCEND] > 0 &&
	      s.kinds[PFC_CLR_RUNDOWN_COMPLETE] == 1, "the rundown names methods and modules and completes");

	/* the clock: each forced GC lies inside the CLOCK_MONOTONIC window the app took around it */
	check(t.nr_calls == 13, "13 forced GC windows in truth.txt");
	for (i = 0; i < t.nr_calls; i++) {
		int j, inside = 0;
		for (j = 0; j < s.nr_gcs; j++)
			if (s.gcs[j].reason == 1 && s.gcs[j].depth >= t.calls[i].gen && s.gcs[j].start >= t.calls[i].t0 &&
			    s.gcs[j].end >= s.gcs[j].start && s.gcs[j].end <= t.calls[i].t1)
				inside++;
		check(inside == 1, "forced GC %d (gen %u) inside [%llu, %llu]: %d GCs", i, t.calls[i].gen,
		      (unsigned long long)t.calls[i].t0, (unsigned long long)t.calls[i].t1, inside);
	}
	pfc_clr_counts_free(&s.counts);
	pfc_nettrace_free(&nt);
	free(buf);
}

static void test_sampled(void)
{
	struct truth t;
	struct pfc_nettrace nt;
	struct pfc_error err;
	static struct seen s;
	size_t len;
	char *buf = load_file(FIX "sampled.nettrace", &len);
	double want, got;
	int rc;

	check(buf != NULL, "read " FIX "sampled.nettrace");
	check(read_truth(FIX "truth-sampled.txt", &t) == 0, "read " FIX "truth-sampled.txt");
	if (!buf)
		return;
	memset(&err, 0, sizeof(err));
	rc = read_seen((const uint8_t *)buf, len, &nt, &s, &err);
	check(rc == 0 && nt.st.complete, "sampled.nettrace reads whole");
	check(s.kinds[PFC_CLR_ALLOC_SAMPLED] > 1000 && s.kinds[PFC_CLR_GC_ALLOC_TICK] == 0,
	      "allocation samples (%llu) in place of ticks (%llu)", (unsigned long long)s.kinds[PFC_CLR_ALLOC_SAMPLED],
	      (unsigned long long)s.kinds[PFC_CLR_GC_ALLOC_TICK]);
	/* a sample stands for the same expected bytes whatever its type: counts go as bytes */
	want = ratio(t.bytes_ints, t.bytes_records);
	got = ratio(s.sampled_ints, s.sampled_records);
	check(got > want * 0.9 && got < want * 1.1, "allocation samples give the sites %.3f:1, the app %.3f:1", got, want);
	check(s.bad == 0, "every sampled payload fits its layout");
	pfc_clr_counts_free(&s.counts);
	pfc_nettrace_free(&nt);
	free(buf);
}

/* Every cut of the stream: an error before the Trace object is whole, else what came before the
 * cut, never more events than the whole stream, and the cut's offset. */
static void test_cuts(void)
{
	struct pfc_nettrace nt;
	struct pfc_error err;
	static struct seen s;
	size_t len, cut, step;
	char *buf = load_file(FIX "app.nettrace", &len);
	uint64_t whole, last = 0;
	int bad = 0, monotone = 1, rundown_cut = 0;

	if (!buf)
		return;
	memset(&err, 0, sizeof(err));
	read_seen((const uint8_t *)buf, len, &nt, &s, &err);
	whole = nt.st.nr_events;
	pfc_clr_counts_free(&s.counts);
	pfc_nettrace_free(&nt);
	step = len / 3000 + 1;
	for (cut = 0; cut < len; cut += cut < 4096 ? 1 : step) {
		int rc;
		memset(&err, 0, sizeof(err));
		rc = read_seen((const uint8_t *)buf, cut, &nt, &s, &err);
		if (rc == 0) {
			if (!nt.st.truncated || nt.st.complete || nt.st.truncated_at > cut || nt.st.nr_events > whole)
				bad++;
			if (nt.st.nr_events < last)
				monotone = 0;
			last = nt.st.nr_events;
			/* cut before the rundown ended: the reader still gives the run's GCs */
			if (!s.kinds[PFC_CLR_RUNDOWN_COMPLETE] && s.kinds[PFC_CLR_GC_START] == 21)
				rundown_cut = 1;
		} else if (cut > 200) {
			bad++;
		}
		pfc_clr_counts_free(&s.counts);
		pfc_nettrace_free(&nt);
	}
	check(!bad, "%d cuts of app.nettrace misread", bad);
	check(monotone, "a longer prefix never gives fewer events");
	check(rundown_cut, "a cut before the rundown's end still gives every GC");
	free(buf);
}

/* Damaged copies: errors with offsets inside the file, never a crash. */
static void test_damage(void)
{
	struct pfc_nettrace nt;
	struct pfc_error err;
	static struct seen s;
	size_t len;
	char *buf = load_file(FIX "app.nettrace", &len);
	uint8_t *copy;
	uint32_t x = 12345;
	int i, k, bad_off = 0;

	if (!buf)
		return;
	copy = malloc(len);
	for (i = 0; copy && i < 400; i++) {
		memcpy(copy, buf, len);
		for (k = 0; k < 1 + i % 8; k++) {
			x = x * 1103515245u + 12345u;
			copy[(x >> 4) % len] ^= (uint8_t)(1u << (x >> 28 & 7));
		}
		memset(&err, 0, sizeof(err));
		if (read_seen(copy, len, &nt, &s, &err) < 0 && err.has_offset && err.offset > len)
			bad_off++;
		pfc_clr_counts_free(&s.counts);
		pfc_nettrace_free(&nt);
	}
	check(bad_off == 0, "damaged copies: errors point inside the file");
	free(copy);
	free(buf);
}

/* The runtime report's model on the fixture, against the app's truth; its text twice the same. */
static void test_report(void)
{
	static struct pfc_runtime rt;
	struct truth t;
	struct pfc_error err;
	struct pfc_sb a = { 0 }, b = { 0 };
	size_t len;
	char *buf = load_file(FIX "app.nettrace", &len);
	int rc;

	if (!buf || read_truth(FIX "truth.txt", &t) < 0)
		return;
	memset(&err, 0, sizeof(err));
	rc = pfc_runtime_read(&rt, (const uint8_t *)buf, len, &err);
	check(rc == 0 && rt.stream.complete && rt.rundown_complete, "report: the stream and its rundown read whole");
	check(rt.gcs == t.collections[0] && rt.gcs_by_gen[2] == t.collections[2] &&
	      rt.gcs_by_gen[1] + rt.gcs_by_gen[2] == t.collections[1], "report: GCs by generation as the app counted them");
	check(rt.gcs_by_reason[1] == t.induced[0] + t.induced[1] + t.induced[2], "report: the forced GCs are Induced");
	check(rt.nr_pauses == rt.gcs && rt.pause_max <= rt.pause_total && pfc_runtime_pause_pct(&rt, 95) <= rt.pause_max &&
	      pfc_runtime_pause_pct(&rt, 100) == rt.pause_max && pfc_runtime_pause_pct(&rt, 0) == rt.pauses[0],
	      "report: one pause per GC, p95 below the max");
	check(rt.alloc_types.n >= 2 && strcmp(rt.alloc_types.v[0].name, "System.Int32[]") == 0 &&
	      strcmp(rt.alloc_types.v[1].name, "EventsProbe.Record") == 0, "report: the two sites lead the types");
	check(rt.exceptions == t.args + t.invalids && rt.exception_types.n == 2 &&
	      rt.exception_types.v[0].n == t.invalids, "report: exceptions by type, the most first");
	check(rt.jit_methods > 12 && rt.jit_done == rt.jit_methods && rt.jit_ns > 0, "report: JIT starts matched to their loads");
	check(pfc_runtime_text(&rt, "app.nettrace", 0, NULL, 0, &a) == 0 && pfc_runtime_text(&rt, "app.nettrace", 0, NULL, 0, &b) == 0 &&
	      a.len == b.len && memcmp(a.buf, b.buf, a.len) == 0, "report: the same model gives the same bytes");
	check(a.buf && strstr(a.buf, "GCs           21: gen0 13, gen1 4, gen2 4\n") &&
	      strstr(a.buf, "  8  System.InvalidOperationException\n"), "report: its GC and exception lines");
	{
		/* a runtime in a pid namespace (perfconv record, --pid-map): the samples' pid heads it */
		struct pfc_sb ns = { 0 };
		char want[128];
		snprintf(want, sizeof(want), "process 4242 (app.nettrace, pid %u in its namespace): ", rt.trace.pid);
		check(pfc_runtime_text(&rt, "app.nettrace", 4242, NULL, 0, &ns) == 0 && ns.buf &&
		      strncmp(ns.buf, want, strlen(want)) == 0, "report: a namespaced runtime under the recording's pid");
		free(ns.buf);
	}
	pfc_runtime_free(&rt);
	free(a.buf);
	a.buf = NULL;
	a.len = a.cap = 0;

	/* cut before the rundown ends: the GCs are all there, and the report says what is missing */
	rc = pfc_runtime_read(&rt, (const uint8_t *)buf, len - 3000, &err);
	check(rc == 0 && rt.stream.truncated && !rt.rundown_complete && rt.gcs == t.collections[0],
	      "report: a stream cut in its rundown keeps every GC");
	check(pfc_runtime_text(&rt, "cut", 0, NULL, 0, &a) == 0 && strstr(a.buf, "stream cut at offset") &&
	      strstr(a.buf, "no rundown"), "report: says the stream is cut and has no rundown");
	pfc_runtime_free(&rt);
	free(a.buf);
	free(b.buf);
	free(buf);
}

/* ---- a hand-made stream: the plain (uncompressed) event blobs of format V4 ---- */

struct wbuf {
	uint8_t b[4096];
	size_t n;
};

static void w8(struct wbuf *w, uint8_t v) { w->b[w->n++] = v; }
static void w16(struct wbuf *w, uint16_t v) { w8(w, (uint8_t)v); w8(w, (uint8_t)(v >> 8)); }
static void w32(struct wbuf *w, uint32_t v) { w16(w, (uint16_t)v); w16(w, (uint16_t)(v >> 16)); }
static void w64(struct wbuf *w, uint64_t v) { w32(w, (uint32_t)v); w32(w, (uint32_t)(v >> 32)); }
static void wstr16(struct wbuf *w, const char *s) { while (*s) w16(w, (uint8_t)*s++); w16(w, 0); }

static void wtype(struct wbuf *w, const char *name, uint32_t version)
{
	w8(w, 5);
	w8(w, 5);
	w8(w, 1);
	w32(w, version);
	w32(w, version);
	w32(w, (uint32_t)strlen(name));
	memcpy(w->b + w->n, name, strlen(name));
	w->n += strlen(name);
	w8(w, 6);
}

/* a block object: type, size, padding to 4, then the body from build() */
static size_t wblock_begin(struct wbuf *w, const char *name)
{
	size_t at;
	wtype(w, name, 2);
	at = w->n;
	w32(w, 0);
	while (w->n & 3)
		w8(w, 0);
	return at;
}

static void wblock_end(struct wbuf *w, size_t at)
{
	size_t body = at + 4;
	uint32_t size;
	while (body & 3)
		body++;
	size = (uint32_t)(w->n - body);
	memcpy(w->b + at, &size, 4);
	w8(w, 6);
}

/* one uncompressed blob: header fields, payload, padding to 4 */
static void wblob(struct wbuf *w, uint32_t meta_id, uint32_t seq, uint64_t tid, uint32_t stack, uint64_t ts,
		  const uint8_t *payload, uint32_t plen)
{
	size_t at = w->n, k;
	w32(w, 0);
	w32(w, meta_id);
	w32(w, seq);
	w64(w, tid);
	w64(w, tid);
	w32(w, 1);
	w32(w, stack);
	w64(w, ts);
	for (k = 0; k < 32; k++)
		w8(w, 0);
	w32(w, plen);
	memcpy(w->b + w->n, payload, plen);
	w->n += plen;
	{
		uint32_t size = (uint32_t)(w->n - at - 4);
		memcpy(w->b + at, &size, 4);
	}
	while (w->n & 3)
		w8(w, 0);
}

static int hand_event(void *ctx, const struct pfc_nettrace_event *ev)
{
	struct seen *s = ctx;
	int kind = pfc_clr_decode(ev, 8, &s->ce, &s->err);
	if (kind == PFC_CLR_GC_START) {
		s->gcs[0].count = s->ce.count;
		s->gcs[0].depth = s->ce.depth;
		s->gcs[0].reason = s->ce.reason;
		s->gcs[0].start = ev->timestamp;
		s->nr_gcs++;
		s->stacks_with_ips += ev->nr_ips;
		s->spin_ids[0] = ev->nr_ips ? pfc_ld64(ev->stack, 0) : 0;
	} else if (kind == PFC_CLR_UNKNOWN) {
		s->unknown++;
	}
	return 0;
}

static void test_handmade(void)
{
	static struct wbuf w, meta, ev;
	static struct seen s;
	struct pfc_nettrace nt;
	struct pfc_nettrace_ops ops = { 0 };
	struct pfc_error err;
	uint8_t gcstart[26];
	size_t at, k;
	int rc;

	memset(&w, 0, sizeof(w));
	memcpy(w.b, "Nettrace", 8);
	w.n = 8;
	w32(&w, 20);
	memcpy(w.b + w.n, "!FastSerialization.1", 20);
	w.n += 20;
	wtype(&w, "Trace", 4);
	for (k = 0; k < 8; k++)
		w16(&w, 1);
	w64(&w, 1000);           /* sync QPC */
	w64(&w, 1000000000);     /* frequency */
	w32(&w, 8);
	w32(&w, 4242);
	w32(&w, 2);
	w32(&w, 1000000);
	w8(&w, 6);

	/* metadata id 1: GCStart version 2 of the runtime provider */
	memset(&meta, 0, sizeof(meta));
	w32(&meta, 1);
	wstr16(&meta, PFC_CLR_PROVIDER);
	w32(&meta, 1);
	wstr16(&meta, "");
	w64(&meta, 1);
	w32(&meta, 2);
	w32(&meta, 4);
	w32(&meta, 0);
	/* metadata id 2: an event of another provider, kept raw */
	memset(&ev, 0, sizeof(ev));
	w32(&ev, 2);
	wstr16(&ev, "My-Provider");
	w32(&ev, 7);
	wstr16(&ev, "Tick");
	w64(&ev, 0);
	w32(&ev, 0);
	w32(&ev, 4);
	w32(&ev, 0);
	at = wblock_begin(&w, "MetadataBlock");
	w16(&w, 20);
	w16(&w, 0);              /* flags: uncompressed */
	w64(&w, 0);
	w64(&w, 0);
	wblob(&w, 0, 0, 0, 0, 0, meta.b, (uint32_t)meta.n);
	wblob(&w, 0, 0, 0, 0, 0, ev.b, (uint32_t)ev.n);
	wblock_end(&w, at);

	at = wblock_begin(&w, "StackBlock");
	w32(&w, 1);              /* first id */
	w32(&w, 1);
	w32(&w, 16);
	w64(&w, 0x7f0000001000ull);
	w64(&w, 0x7f0000002000ull);
	wblock_end(&w, at);

	memset(gcstart, 0, sizeof(gcstart));
	gcstart[0] = 7;          /* Count */
	gcstart[4] = 2;          /* Depth */
	gcstart[8] = 1;          /* Reason: Induced */
	at = wblock_begin(&w, "EventBlock");
	w16(&w, 20);
	w16(&w, 0);
	w64(&w, 0);
	w64(&w, 0);
	wblob(&w, 1, 1, 99, 1, 5000, gcstart, sizeof(gcstart));
	wblob(&w, 2 | 0x80000000u, 3, 99, 0, 6000, gcstart, 4);
	wblock_end(&w, at);
	w8(&w, 1);               /* NullReference: the end */

	memset(&s, 0, sizeof(s));
	memset(&err, 0, sizeof(err));
	ops.ctx = &s;
	ops.event = hand_event;
	rc = pfc_nettrace_read(&nt, w.b, w.n, &ops, &err);
	check(rc == 0 && nt.st.complete, "hand-made V4 stream reads (%d: %s at %llu)", rc, err.detail,
	      (unsigned long long)err.offset);
	check(nt.trace.pid == 4242, "its pid");
	check(nt.st.nr_events == 2 && s.nr_gcs == 1 && s.unknown == 1, "a GCStart and an event kept raw");
	check(s.gcs[0].count == 7 && s.gcs[0].depth == 2 && s.gcs[0].reason == 1 && s.gcs[0].start == 5000,
	      "plain blob's GCStart: count 7, depth 2, reason 1, time 5000");
	check(s.stacks_with_ips == 2 && s.spin_ids[0] == 0x7f0000001000ull, "its stack of two IPs");
	check(nt.st.nr_dropped == 1, "the sequence gap (1, 3) is one dropped event (%llu)",
	      (unsigned long long)nt.st.nr_dropped);
	pfc_nettrace_free(&nt);

	/* the same stream without its end tag, and cut inside the event block */
	rc = pfc_nettrace_read(&nt, w.b, w.n - 1, NULL, &err);
	check(rc == 0 && !nt.st.complete && nt.st.truncated && nt.st.nr_events == 2, "no end tag: truncated, events kept");
	pfc_nettrace_free(&nt);
	rc = pfc_nettrace_read(&nt, w.b, at + 20, NULL, &err);
	check(rc == 0 && nt.st.truncated && nt.st.nr_events == 0 && nt.st.nr_metadata == 2,
	      "cut in the event block: metadata kept, no event");
	pfc_nettrace_free(&nt);

	/* a field description nested past the limit is refused with its offset */
	w.b[8] = 'X';
	rc = pfc_nettrace_read(&nt, w.b, w.n, NULL, &err);
	check(rc == -PFC_ERR_UNSUPPORTED, "a broken FastSerialization header is refused");
	pfc_nettrace_free(&nt);
	w.b[0] = 'X';
	rc = pfc_nettrace_read(&nt, w.b, w.n, NULL, &err);
	check(rc == -PFC_ERR_UNSUPPORTED && !pfc_nettrace_is(w.b, w.n), "no magic, no nettrace");
	pfc_nettrace_free(&nt);
}

static void test_utf16(void)
{
	static const uint8_t s[] = { 'a', 0, 0xe9, 0, 0x3d, 0xd8, 0x00, 0xde, 0x00, 0xd8, 'b', 0, 0, 0 };
	struct pfc_cursor c;
	char out[16];
	long n;

	pfc_cur_init(&c, s, sizeof(s), 0);
	n = pfc_nettrace_utf16(&c, out, sizeof(out));
	/* a, é, U+1F600 as a surrogate pair, an unpaired high surrogate, b */
	check(n == 11 && memcmp(out, "a\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbd" "b", 11) == 0, "UTF-16 to UTF-8 (%ld)", n);
	pfc_cur_init(&c, s, sizeof(s), 0);
	n = pfc_nettrace_utf16(&c, out, 4);
	check(n == 3 && strcmp(out, "a\xc3\xa9") == 0, "cut at a character boundary");
	pfc_cur_init(&c, s, 4, 0);
	check(pfc_nettrace_utf16(&c, out, sizeof(out)) == -1 && c.bad, "unterminated string refused");
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--dump") == 0)
		return dump(argv[2]);
	if (argc == 3 && strcmp(argv[1], "--pauses") == 0)
		return print_pauses(argv[2]);
	if (argc == 3 && strcmp(argv[1], "--report") == 0)
		return report(argv[2]);
	test_utf16();
	test_handmade();
	test_fixture();
	test_sampled();
	test_report();
	test_cuts();
	test_damage();
	return check_done("test_events");
}
