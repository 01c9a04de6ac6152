/*
 * runtime.c - the runtime report's text: a header line for the process and the stream, then
 * one line a subject with its breakdown indented below.  Sizes in binary units, times in ms,
 * lists heaviest first (names break ties) so that one input always gives the same bytes.
 */
#include "formats/runtime.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/folded.h"
#include "formats/writer.h"

/* the longest list of types a line names */
#define TOP_TYPES 10
#define SAMPLE_BYTES ((double)PFC_RT_ALLOC_SAMPLE_BYTES)
/* the most frames named under an exception type */
#define TOP_THROWERS 3

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
	if (!rt->induced)
		return;
	pfc_sb_addf(b, "  induced     %" PRIu64 ":", rt->induced);
	for (g = 0; g < PFC_RT_GENS; g++)
		pfc_sb_addf(b, "%s gen%d %" PRIu64, g ? "," : "", g, rt->induced_by_gen[g]);
	pfc_sb_adds(b, " (the generation collected)\n");
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
	size_t i;

	if (rt->jit_done)
		pfc_sb_addf(b, ", %.3f ms in the %" PRIu64 " whose end was seen", ms(rt->jit_ns), rt->jit_done);
	pfc_sb_adds(b, "\n");
	for (i = 0; i < rt->nr_slowest; i++)
		pfc_sb_addf(b, "  %.3f ms  %s\n", ms(rt->slowest[i].bytes), rt->slowest[i].name);
}

static void exceptions(const struct pfc_runtime *rt, const struct pfc_rt_thrower *thr, size_t nr_thr,
		       struct pfc_sb *b)
{
	size_t i, j, k;

	pfc_sb_addf(b, "exceptions    %" PRIu64 " thrown, %" PRIu64 " caught\n", rt->exceptions, rt->catches);
	for (i = 0; i < rt->exception_types.n; i++) {
		const char *type = rt->exception_types.v[i].name;
		pfc_sb_addf(b, "  %" PRIu64 "  %s\n", rt->exception_types.v[i].n, type);
		for (j = k = 0; j < nr_thr && k < TOP_THROWERS; j++)
			if (!strcmp(thr[j].type, type)) {
				pfc_sb_addf(b, "    %" PRIu64 "  thrown in %s\n", thr[j].n, thr[j].frame);
				k++;
			}
	}
}

int pfc_runtime_text(const struct pfc_runtime *rt, const char *name, int32_t pid, const struct pfc_rt_thrower *thr,
		     size_t nr_thr, struct pfc_sb *b)
{
	uint64_t span = rt->last_ts > rt->first_ts ? rt->last_ts - rt->first_ts : 0;

	/* a runtime in a pid namespace knows itself by its pid there; the samples by the host's */
	if (pid > 0 && (uint32_t)pid != rt->trace.pid)
		pfc_sb_addf(b, "process %d (%s, pid %u in its namespace)", (int)pid, name, rt->trace.pid);
	else
		pfc_sb_addf(b, "process %u (%s)", rt->trace.pid, name);
	pfc_sb_addf(b, ": %.3f s of runtime events, %u CPUs", (double)span / 1e9, rt->trace.nr_cpus);
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
	exceptions(rt, thr, nr_thr, b);
	return b->oom ? -PFC_ERR_NOMEM : 0;
}

/* A frame as the folded output of the CPU samples names it: the perf script line folded.c
 * reads, through its rules */
static char *frame_name(const struct pfc_session *s, uint32_t id, const struct pfc_wopts *o)
{
	const struct pfc_frame *f = &s->stacks.frames[id];
	struct pfc_sb line = { 0 }, out = { 0 };
	char *name = NULL;

	pfc_sb_addc(&line, '\t');
	pfc_sb_addhex(&line, f->addr, 16);
	pfc_sb_addc(&line, ' ');
	if (f->resolved) {
		pfc_sb_adds(&line, pfc_intern_str(&s->strings, f->sym));
		pfc_sb_add(&line, "+0x", 3);
		pfc_sb_addhex(&line, f->symoff, 0);
	} else {
		pfc_sb_adds(&line, "[unknown]");
	}
	pfc_sb_add(&line, " (", 2);
	pfc_sb_adds(&line, f->inlined ? "inlined" : f->dso ? f->dso->name : "[unknown]");
	pfc_sb_addc(&line, ')');
	if (!line.oom && pfc_folded_frame_text(line.buf, line.len, 0, o, &out) == 0 && !out.oom) {
		size_t n = out.len;
		while (n && out.buf[n - 1] == ' ')	/* "[unknown] " ends a folded JIT frame: not a line */
			n--;
		name = strndup(out.buf ? out.buf : "", n);
	}
	pfc_sb_free(&line);
	pfc_sb_free(&out);
	return name;
}

/* The method that threw: the first frame of the stack's top outside the runtime's exception
 * dispatch (System.Runtime.EH, which .NET 9 and later run in managed code, and the throw
 * helpers), else the first frame. */
static char *thrower_name(const struct pfc_session *s, const struct pfc_evsample_throw *t,
			  const struct pfc_wopts *o)
{
	uint32_t k;

	for (k = 0; k < t->nr; k++) {
		char *name = frame_name(s, t->frames[k], o);
		if (!name || k + 1 == t->nr || !(strstr(name, "System.Runtime.EH") || strstr(name, "ThrowHelper") ||
						 strstr(name, "StackFrameIterator")))
			return name;
		free(name);
	}
	return strdup("[unknown]");
}

static int thrower_cmp(const void *a, const void *b)
{
	const struct pfc_rt_thrower *x = a, *y = b;
	int c = strcmp(x->type, y->type);

	if (c)
		return c;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->frame, y->frame);
}

static int name_cmp(const void *a, const void *b)
{
	const struct pfc_rt_thrower *x = a, *y = b;
	int c = strcmp(x->type, y->type);

	return c ? c : strcmp(x->frame, y->frame);
}

/* The frames that threw in stream i, counted by (type, frame): *out, freed with its names. */
static int throwers(const struct pfc_session *s, uint32_t i, const struct pfc_wopts *o, struct pfc_rt_thrower **out,
		    size_t *nr)
{
	const struct pfc_events_file *f = &s->evs.events.v[i];
	struct pfc_rt_thrower *v;
	size_t j, k, n = 0;

	*out = NULL;
	*nr = 0;
	if (!s->evs.nr_throws)
		return 0;
	if (!(v = calloc(s->evs.nr_throws, sizeof(*v))))
		return -PFC_ERR_NOMEM;
	for (j = 0; j < s->evs.nr_throws; j++) {
		const struct pfc_evsample_throw *t = &s->evs.throws[j];
		if (t->file != i)
			continue;
		v[n].type = f->names + t->type;
		v[n].n = 1;
		if (!(v[n++].frame = thrower_name(s, t, o))) {
			for (k = 0; k + 1 < n; k++)
				free((char *)v[k].frame);
			free(v);
			return -PFC_ERR_NOMEM;
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), name_cmp);
	for (j = k = 0; j < n; j++) {
		if (k && !name_cmp(&v[k - 1], &v[j])) {
			v[k - 1].n++;
			free((char *)v[j].frame);
			continue;
		}
		v[k++] = v[j];
	}
	if (k)
		qsort(v, k, sizeof(*v), thrower_cmp);
	*out = v;
	*nr = k;
	return 0;
}

/* What the recording holds of stream i's process: its samples, those in the GC pauses, and the
 * pauses' share of the time between its first and last sample (on one clock only: -k mono) */
static void recording_line(const struct pfc_session *s, size_t i, struct pfc_sb *b)
{
	const struct pfc_evsample_proc *p = &s->evs.procs[i];
	const struct pfc_events_file *f = &s->evs.events.v[i];
	uint64_t paused = 0, span = p->last > p->first ? p->last - p->first : 0;
	size_t j;

	pfc_sb_addf(b, "recording     %" PRIu64 " samples of process %d", p->samples, (int)s->evs.pids[i]);
	if (!p->samples) {
		pfc_sb_adds(b, "\n");
		return;
	}
	pfc_sb_addf(b, " in %.3f s", (double)span / 1e9);
	if (!s->evs.mono) {
		pfc_sb_adds(b, ", on another clock than the events' (record with perf record -k mono)\n");
		return;
	}
	for (j = 0; j < f->nr_pauses; j++) {
		uint64_t a = f->pauses[j].begin > p->first ? f->pauses[j].begin : p->first;
		uint64_t e = f->pauses[j].end < p->last ? f->pauses[j].end : p->last;
		if (e > a)
			paused += e - a;
	}
	pfc_sb_addf(b, ", %" PRIu64 " (%.2f%%) in GC pauses, which are %.2f%% of that time\n", p->paused,
		    100.0 * (double)p->paused / (double)p->samples, span ? 100.0 * (double)paused / (double)span : 0.0);
}

/* -f runtime: the report of each event stream of the conversion, one process after another */
static int write_runtime(FILE *out, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err)
{
	struct pfc_events *e = &s->evs.events;
	struct pfc_runtime *rt;
	struct pfc_sb sb = { 0 };
	size_t i;
	int ret = 0;

	if (!e->n)
		return PFC_FAIL_NOOFF(err, USAGE, "the runtime format reports the .NET runtime's own events: give them "
				      "with --events FILE.nettrace");
	/* large: its decoded event holds string buffers */
	if (!(rt = calloc(1, sizeof(*rt))))
		return PFC_FAIL_NOOFF(err, NOMEM, "runtime report");
	for (i = 0; i < e->n && ret == 0; i++) {
		struct pfc_events_file *f = &e->v[i];
		struct pfc_rt_thrower *thr = NULL;
		size_t nr_thr = 0, j;
		if ((ret = pfc_runtime_read_file(rt, f, err)) < 0)
			snprintf(err->file, sizeof(err->file), "%s", f->name);
		else if (throwers(s, (uint32_t)i, o, &thr, &nr_thr) < 0 ||
			 pfc_runtime_text(rt, f->name, s->evs.pids ? s->evs.pids[i] : 0, thr, nr_thr, &sb) < 0)
			ret = PFC_FAIL_NOOFF(err, NOMEM, "runtime report");
		else if (s->evs.procs)
			recording_line(s, i, &sb);
		for (j = 0; j < nr_thr; j++)
			free((char *)thr[j].frame);
		free(thr);
		pfc_runtime_free(rt);
	}
	if (ret == 0 && sb.oom)
		ret = PFC_FAIL_NOOFF(err, NOMEM, "runtime report");
	if (ret == 0 && (fwrite(sb.buf, 1, sb.len, out) != sb.len || ferror(out)))
		ret = PFC_FAIL_NOOFF(err, WRITE, "runtime report");
	free(sb.buf);
	free(rt);
	return ret;
}

static const char *const runtime_suffixes[] = { ".runtime.txt", NULL };

const struct pfc_writer pfc_writer_runtime = {
	.name = "runtime",
	.suffixes = runtime_suffixes,
	.needs = PFC_NEED_THROWS,
	.write = write_runtime,
};
