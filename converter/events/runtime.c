/*
 * runtime.c - one process's runtime events added up: GCs and their pauses, allocations by type,
 * heap sizes, JIT work, exceptions.  Pauses run from GCSuspendEEBegin to GCRestartEEEnd, which
 * is what the app's threads lose (a GC's own start and end sit inside it); JIT time runs from a
 * method's MethodJittingStarted to its MethodLoadVerbose on the same thread.
 */
#include "converter/events/runtime.h"
#include "converter/events/events.h"
#include "converter/util/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* in-flight compilations beyond this are dropped (a stream missing its loads) */
#define RT_MAX_JIT_PENDING 4096

struct pfc_rt_jit_pending {
	uint64_t thread, method_id, ts;
};

static const char *const reasons[] = {
	"AllocSmall", "Induced", "LowMemory", "Empty", "AllocLarge", "OutOfSpaceSOH", "OutOfSpaceLOH",
	"InducedNotForced", "Internal", "InducedLowMemory", "InducedCompacting", "LowMemoryHost", "PMFullGC",
	"LowMemoryHostBlocking",
};

const char *pfc_runtime_gc_reason(uint32_t reason)
{
	return reason < sizeof(reasons) / sizeof(reasons[0]) ? reasons[reason] : NULL;
}

/* add n and bytes to name's entry; a handful of names in practice, so a linear search */
static int names_add(struct pfc_rt_names *t, const char *name, uint64_t bytes)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->v[i].name, name) == 0)
			break;
	if (i == t->n) {
		if (!pfc_grow_at(&t->v, &t->cap, t->n, sizeof(*t->v), 32))
			return -PFC_ERR_NOMEM;
		t->v[i].name = strdup(name);
		if (!t->v[i].name)
			return -PFC_ERR_NOMEM;
		t->v[i].n = t->v[i].bytes = 0;
		t->n++;
	}
	t->v[i].n++;
	t->v[i].bytes += bytes;
	return 0;
}

static void names_free(struct pfc_rt_names *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* keep the compilation of e's method, d ns, if it is among the slowest; ties keep the first */
static int slowest_add(struct pfc_runtime *rt, const struct pfc_clr_event *e, uint64_t d)
{
	size_t i = rt->nr_slowest, len;
	char *name;

	if (i == PFC_RT_SLOWEST && rt->slowest[i - 1].bytes >= d)
		return 0;
	len = strlen(e->method_namespace) + strlen(e->method_name) + 2;
	if (!(name = malloc(len)))
		return -PFC_ERR_NOMEM;
	snprintf(name, len, "%s%s%s", e->method_namespace, e->method_namespace[0] ? "." : "", e->method_name);
	if (i == PFC_RT_SLOWEST)
		free(rt->slowest[--i].name);
	else
		rt->nr_slowest++;
	for (; i > 0 && rt->slowest[i - 1].bytes < d; i--)
		rt->slowest[i] = rt->slowest[i - 1];
	rt->slowest[i].name = name;
	rt->slowest[i].bytes = d;
	rt->slowest[i].n = 1;
	return 0;
}

static int on_trace(void *ctx, const struct pfc_nettrace_trace *t)
{
	((struct pfc_runtime *)ctx)->trace = *t;
	return 0;
}

static int on_event(void *ctx, const struct pfc_nettrace_event *ev)
{
	struct pfc_runtime *rt = ctx;
	struct pfc_clr_event *e = &rt->ce;
	int kind = pfc_clr_decode(ev, rt->trace.pointer_size, e, &rt->payload_err);
	size_t i;

	if (rt->window)
		pfc_events_release(rt->window, ev->offset);
	if (!rt->first_ts || ev->timestamp < rt->first_ts)
		rt->first_ts = ev->timestamp;
	if (ev->timestamp > rt->last_ts)
		rt->last_ts = ev->timestamp;
	if (kind < 0) {
		rt->bad_payloads++;
		return 0;
	}
	switch (kind) {
	case PFC_CLR_GC_START:
		rt->gcs++;
		rt->gcs_by_gen[e->depth < PFC_RT_GENS ? e->depth : PFC_RT_GENS - 1]++;
		if (e->reason == 1 || e->reason == 7 || e->reason == 9 || e->reason == 10) {
			/* the generation collected, which may be older than the one asked for */
			rt->induced++;
			rt->induced_by_gen[e->depth < PFC_RT_GENS ? e->depth : PFC_RT_GENS - 1]++;
		}
		if (e->reason < PFC_RT_REASONS)
			rt->gcs_by_reason[e->reason]++;
		else
			rt->gcs_other_reason++;
		break;
	case PFC_CLR_GC_SUSPEND_BEGIN:
		/* a suspension for something else than a GC (the debugger's, a rejit's) is not a GC pause;
		 * its end is, once a GC ran inside it, so the start is taken whatever the reason */
		rt->suspend_ts = ev->timestamp;
		break;
	case PFC_CLR_GC_RESTART_END:
		if (rt->suspend_ts && ev->timestamp >= rt->suspend_ts) {
			uint64_t d = ev->timestamp - rt->suspend_ts;
			if (!pfc_grow_at(&rt->pauses, &rt->cap_pauses, rt->nr_pauses, sizeof(*rt->pauses), 32))
				return -PFC_ERR_NOMEM;
			rt->pauses[rt->nr_pauses++] = d;
			rt->pause_total += d;
			if (d > rt->pause_max)
				rt->pause_max = d;
		}
		rt->suspend_ts = 0;
		break;
	case PFC_CLR_GC_HEAP_STATS: {
		uint64_t total = 0;
		for (i = 0; i < 5; i++) {
			rt->heap_after[i] = e->gen_size[i];
			total += e->gen_size[i];
		}
		if (total > rt->heap_max)
			rt->heap_max = total;
		break;
	}
	case PFC_CLR_GC_ALLOC_TICK: {
		/* V1 has only the 32-bit amount */
		uint64_t amount = e->version >= 2 ? e->alloc_amount64 : e->alloc_amount;
		rt->alloc_ticks++;
		rt->alloc_tick_bytes += amount;
		if (names_add(&rt->alloc_types, e->type_name[0] ? e->type_name : "(no type name)", amount) < 0)
			return -PFC_ERR_NOMEM;
		break;
	}
	case PFC_CLR_ALLOC_SAMPLED:
		rt->alloc_samples++;
		if (names_add(&rt->alloc_types, e->type_name[0] ? e->type_name : "(no type name)", 0) < 0)
			return -PFC_ERR_NOMEM;
		break;
	case PFC_CLR_JIT_START:
		rt->jit_methods++;
		if (rt->nr_jit_pending < RT_MAX_JIT_PENDING) {
			if (!pfc_grow_at(&rt->jit_pending, &rt->cap_jit_pending, rt->nr_jit_pending, sizeof(*rt->jit_pending), 32))
				return -PFC_ERR_NOMEM;
			rt->jit_pending[rt->nr_jit_pending].thread = ev->thread_id;
			rt->jit_pending[rt->nr_jit_pending].method_id = e->method_id;
			rt->jit_pending[rt->nr_jit_pending].ts = ev->timestamp;
			rt->nr_jit_pending++;
		}
		break;
	case PFC_CLR_METHOD_LOAD:
		for (i = 0; i < rt->nr_jit_pending; i++) {
			struct pfc_rt_jit_pending *p = &rt->jit_pending[i];
			if (p->thread == ev->thread_id && p->method_id == e->method_id) {
				if (ev->timestamp >= p->ts) {
					rt->jit_ns += ev->timestamp - p->ts;
					if (slowest_add(rt, e, ev->timestamp - p->ts) < 0)
						return -PFC_ERR_NOMEM;
				}
				rt->jit_done++;
				*p = rt->jit_pending[--rt->nr_jit_pending];
				break;
			}
		}
		break;
	case PFC_CLR_EXC_THROWN:
		rt->exceptions++;
		if (names_add(&rt->exception_types, e->exception_type[0] ? e->exception_type : "(no type name)", 0) < 0)
			return -PFC_ERR_NOMEM;
		break;
	case PFC_CLR_EXC_CATCH:
		rt->catches++;
		break;
	case PFC_CLR_RUNDOWN_COMPLETE:
		rt->rundown_complete = 1;
		break;
	case PFC_CLR_UNKNOWN:
		rt->other_events++;
		break;
	default:
		break;
	}
	return 0;
}

static int named_cmp(const void *a, const void *b)
{
	const struct pfc_rt_named *x = a, *y = b;

	/* heaviest first (bytes, then count), then by name: the same input gives the same order */
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int read_stream(struct pfc_runtime *rt, const uint8_t *buf, size_t len, struct pfc_events_file *window,
		       struct pfc_error *err)
{
	struct pfc_nettrace nt;
	struct pfc_nettrace_ops ops = { 0 };
	int rc;

	memset(rt, 0, sizeof(*rt));
	rt->window = window;
	ops.ctx = rt;
	ops.trace = on_trace;
	ops.event = on_event;
	rc = pfc_nettrace_read(&nt, buf, len, &ops, err);
	if (window)
		pfc_events_release(window, len);
	rt->stream = nt.st;
	pfc_nettrace_free(&nt);
	if (rc < 0)
		return rc;
	if (rt->alloc_types.n)
		qsort(rt->alloc_types.v, rt->alloc_types.n, sizeof(*rt->alloc_types.v), named_cmp);
	if (rt->exception_types.n)
		qsort(rt->exception_types.v, rt->exception_types.n, sizeof(*rt->exception_types.v), named_cmp);
	if (rt->nr_pauses)
		qsort(rt->pauses, rt->nr_pauses, sizeof(*rt->pauses), u64_cmp);
	return 0;
}

int pfc_runtime_read(struct pfc_runtime *rt, const uint8_t *buf, size_t len, struct pfc_error *err)
{
	return read_stream(rt, buf, len, NULL, err);
}

int pfc_runtime_read_file(struct pfc_runtime *rt, struct pfc_events_file *f, struct pfc_error *err)
{
	int rc = read_stream(rt, f->buf, f->len, f, err);

	rt->window = NULL;
	return rc;
}

uint64_t pfc_runtime_pause_pct(const struct pfc_runtime *rt, unsigned p)
{
	size_t rank;

	if (!rt->nr_pauses)
		return 0;
	if (p > 100)
		p = 100;
	/* nearest rank: the smallest pause with at least p% of the pauses at or below it */
	rank = ((size_t)p * rt->nr_pauses + 99) / 100;
	return rt->pauses[rank ? rank - 1 : 0];
}

void pfc_runtime_free(struct pfc_runtime *rt)
{
	free(rt->pauses);
	free(rt->jit_pending);
	for (size_t i = 0; i < rt->nr_slowest; i++)
		free(rt->slowest[i].name);
	names_free(&rt->alloc_types);
	names_free(&rt->exception_types);
	memset(rt, 0, sizeof(*rt));
}
