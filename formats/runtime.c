/*
 * runtime.c - the runtime report's text: a header line for the process and the stream, then
 * one line a subject with its breakdown indented below.  Sizes in binary units, times in ms,
 * lists heaviest first (names break ties) so that one input always gives the same bytes.
 */
#include "formats/runtime.h"

#include <inttypes.h>
#include <stdio.h>

/* the longest list of types a line names */
#define TOP_TYPES 10
/* .NET 10's allocation sampling takes a sample every 100 KiB on average (RandomizedAllocationSampling.md) */
#define SAMPLE_BYTES 102400.0

static void add_bytes(struct pfc_sb *b, double v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		pfc_sb_addf(b, "%.0f B", v);
	else
		pfc_sb_addf(b, "%.1f %s", v, unit[u]);
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static void gcs(const struct pfc_runtime *rt, struct pfc_sb *b)
{
	int g, r, first = 1;

	pfc_sb_addf(b, "GCs           %" PRIu64 ":", rt->gcs);
	for (g = 0; g < PFC_RT_GENS; g++)
		pfc_sb_addf(b, "%s gen%d %" PRIu64, g ? "," : "", g, rt->gcs_by_gen[g]);
	pfc_sb_adds(b, "\n");
	if (!rt->gcs)
		return;
	pfc_sb_adds(b, "  by reason  ");
	for (r = 0; r < PFC_RT_REASONS; r++) {
		const char *name = pfc_runtime_gc_reason((uint32_t)r);
		if (!rt->gcs_by_reason[r])
			continue;
		if (name)
			pfc_sb_addf(b, "%s %s %" PRIu64, first ? "" : ",", name, rt->gcs_by_reason[r]);
		else
			pfc_sb_addf(b, "%s reason %d %" PRIu64, first ? "" : ",", r, rt->gcs_by_reason[r]);
		first = 0;
	}
	if (rt->gcs_other_reason)
		pfc_sb_addf(b, "%s other %" PRIu64, first ? "" : ",", rt->gcs_other_reason);
	pfc_sb_adds(b, "\n");
}

static void pauses(const struct pfc_runtime *rt, struct pfc_sb *b)
{
	uint64_t span = rt->last_ts > rt->first_ts ? rt->last_ts - rt->first_ts : 0;

	pfc_sb_addf(b, "pauses        %zu", rt->nr_pauses);
	if (rt->nr_pauses)
		pfc_sb_addf(b, ": total %.3f ms, mean %.3f ms, max %.3f ms, p95 %.3f ms", ms(rt->pause_total),
			    ms(rt->pause_total) / (double)rt->nr_pauses, ms(rt->pause_max),
			    ms(pfc_runtime_pause_pct(rt, 95)));
	if (span)
		pfc_sb_addf(b, ", %.2f%% of the time", 100.0 * (double)rt->pause_total / (double)span);
	pfc_sb_adds(b, "\n");
}

static void allocations(const struct pfc_runtime *rt, struct pfc_sb *b)
{
	uint64_t span = rt->last_ts > rt->first_ts ? rt->last_ts - rt->first_ts : 0;
	double total;
	size_t i;

	if (rt->alloc_ticks) {
		total = (double)rt->alloc_tick_bytes;
		pfc_sb_adds(b, "allocated     ");
		add_bytes(b, total);
		pfc_sb_addf(b, " in %" PRIu64 " allocation ticks", rt->alloc_ticks);
	} else if (rt->alloc_samples) {
		total = (double)rt->alloc_samples * SAMPLE_BYTES;
		pfc_sb_adds(b, "allocated     about ");
		add_bytes(b, total);
		pfc_sb_addf(b, " from %" PRIu64 " allocation samples", rt->alloc_samples);
	} else {
		pfc_sb_adds(b, "allocated     no allocation ticks or samples (GC keyword at level 5 needed)\n");
		return;
	}
	if (span) {
		pfc_sb_adds(b, ", ");
		add_bytes(b, total * 1e9 / (double)span);
		pfc_sb_adds(b, "/s");
	}
	pfc_sb_adds(b, "\n");
	for (i = 0; i < rt->alloc_types.n && i < TOP_TYPES; i++) {
		const struct pfc_rt_named *t = &rt->alloc_types.v[i];
		double bytes = rt->alloc_ticks ? (double)t->bytes : (double)t->n * SAMPLE_BYTES;
		pfc_sb_adds(b, "  ");
		add_bytes(b, bytes);
		pfc_sb_addf(b, " (%.1f%%)  %s\n", total > 0 ? 100.0 * bytes / total : 0.0, t->name);
	}
	if (rt->alloc_types.n > TOP_TYPES)
		pfc_sb_addf(b, "  ... %zu more types\n", rt->alloc_types.n - TOP_TYPES);
}

static void heap(const struct pfc_runtime *rt, struct pfc_sb *b)
{
	static const char *const gen[] = { "gen0", "gen1", "gen2", "LOH", "POH" };
	int i;

	if (!rt->gcs)
		return;
	pfc_sb_adds(b, "heap after GC");
	for (i = 0; i < 5; i++) {
		pfc_sb_addf(b, "%s %s ", i ? "," : "", gen[i]);
		add_bytes(b, (double)rt->heap_after[i]);
	}
	pfc_sb_adds(b, " (the last GC); largest total ");
	add_bytes(b, (double)rt->heap_max);
	pfc_sb_adds(b, "\n");
}

static void jit(const struct pfc_runtime *rt, struct pfc_sb *b)
{
	pfc_sb_addf(b, "JIT           %" PRIu64 " methods compiled", rt->jit_methods);
	if (rt->jit_done)
		pfc_sb_addf(b, ", %.3f ms in the %" PRIu64 " whose end was seen", ms(rt->jit_ns), rt->jit_done);
	pfc_sb_adds(b, "\n");
}

static void exceptions(const struct pfc_runtime *rt, struct pfc_sb *b)
{
	size_t i;

	pfc_sb_addf(b, "exceptions    %" PRIu64 " thrown, %" PRIu64 " caught\n", rt->exceptions, rt->catches);
	for (i = 0; i < rt->exception_types.n; i++)
		pfc_sb_addf(b, "  %" PRIu64 "  %s\n", rt->exception_types.v[i].n, rt->exception_types.v[i].name);
}

int pfc_runtime_text(const struct pfc_runtime *rt, const char *name, struct pfc_sb *b)
{
	uint64_t span = rt->last_ts > rt->first_ts ? rt->last_ts - rt->first_ts : 0;

	pfc_sb_addf(b, "process %u (%s): %.3f s of runtime events, %u CPUs", rt->trace.pid, name,
		    (double)span / 1e9, rt->trace.nr_cpus);
	if (rt->stream.complete)
		pfc_sb_adds(b, ", stream complete");
	else
		pfc_sb_addf(b, ", stream cut at offset %" PRIu64, rt->stream.truncated_at);
	if (!rt->rundown_complete)
		pfc_sb_adds(b, ", no rundown (methods jitted before the session are unnamed)");
	if (rt->stream.nr_dropped)
		pfc_sb_addf(b, ", %" PRIu64 " events dropped by the runtime", rt->stream.nr_dropped);
	if (rt->bad_payloads)
		pfc_sb_addf(b, ", %" PRIu64 " payloads refused", rt->bad_payloads);
	pfc_sb_adds(b, "\n");
	gcs(rt, b);
	pauses(rt, b);
	allocations(rt, b);
	heap(rt, b);
	jit(rt, b);
	exceptions(rt, b);
	return b->oom ? -PFC_ERR_NOMEM : 0;
}
