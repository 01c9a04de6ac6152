/*
 * gate.c - the two sides of --diff as the command line sees them: the base recording, read
 * and symbolized once before any input with the inputs' options and filters, and
 * --fail-if-grown's gate, which lists the functions whose share of the total grew by more
 * than allowed.  The comparison itself (two profiles side by side, per-function totals) is
 * formats/diff.c's; the exit code is perfconv.c's and batch.c's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/convert.h"
#include "cli/gate.h"
#include "formats/diff.h"

int pfc_cli_base_open(struct cli *c, char *msg, size_t size)
{
	struct pfc_error err;
	int ret;

	memset(&err, 0, sizeof(err));
	c->base = calloc(1, sizeof(*c->base));
	if (!c->base) {
		snprintf(msg, size, "'%s': out of memory", c->diff);
		return -PFC_ERR_NOMEM;
	}
	/* the same options and filters as the inputs, so that both sides are cut alike; a --time
	 * in percent is resolved against the base's own samples */
	c->base_opts = c->opts;
	c->base_opts.input = c->diff;
	/* --events are the new recording's streams: a base that --alloc or --during gc compares
	 * brings its own, as a pack made with --events */
	c->base_opts.events = NULL;
	c->base_opts.nr_events = 0;
	c->base_opts.throw_frames = 0;
	c->base_opts.runtime_marks = 0;
	c->base_opts.keep_stream = 0;
	c->base_opts.record_files = 0;
	c->base_opts.progress = NULL;
	c->base_opts.preload_kernel = 1;
	c->base_filter = c->filter;
	c->base_filter.ranges = NULL;
	c->base_filter.nr_ranges = 0;
	c->base_filter.time_resolved = !c->filter.time_percent;
	if (!c->filter.time_percent && c->filter.nr_ranges) {
		c->base_filter.ranges = malloc(c->filter.nr_ranges * sizeof(*c->filter.ranges));
		if (!c->base_filter.ranges) {
			snprintf(msg, size, "'%s': out of memory", c->diff);
			return -PFC_ERR_NOMEM;
		}
		memcpy(c->base_filter.ranges, c->filter.ranges, c->filter.nr_ranges * sizeof(*c->filter.ranges));
		c->base_filter.nr_ranges = c->filter.nr_ranges;
	}
	c->base_opts.filter = pfc_filter_active(&c->base_filter) ? &c->base_filter : NULL;
	ret = pfc_cli_read(c->base, &c->base_opts, &c->base_filter, PFC_CLI_READ_RECORDS, NULL, NULL, &err);
	if (ret == 0)
		ret = pfc_session_symbolize(c->base);
	if (ret != 0) {
		pfc_cli_format_error(c, c->diff, &err, msg, size);
		pfc_session_close(c->base);
		free(c->base);
		c->base = NULL;
	}
	return ret;
}

void pfc_cli_base_close(struct cli *c)
{
	if (c->base) {
		pfc_session_close(c->base);
		free(c->base);
		c->base = NULL;
	}
	free(c->base_filter.ranges);
	c->base_filter.ranges = NULL;
}

/* One line of the gate's list: in the hints in batch mode, where what does not fit is left
 * out, else on stderr unless -q. */
static void gate_line(const struct cli *c, const char *line, char *hints, size_t size, size_t *used)
{
	if (c->outdir) {
		if (*used + strlen(line) < size)
			*used += (size_t)snprintf(hints + *used, size - *used, "%s", line);
	} else if (!c->quiet) {
		fputs(line, stderr);
	}
}

/* Frames whose samples say nothing of the code under test: a thread that spins or idles, the JIT,
 * (a thread pool's workers yielding between work items take more or less CPU from one run of
 * the same build to the next), anywhere in the stack... */
static const char *const spin_frames[] = {
	"do_sched_yield", "__x64_sys_sched_yield", "__arm64_sys_sched_yield", "sched_yield",
	"__sched_yield", "do_idle", "cpu_idle", "cpu_startup_entry", "default_idle_call",
	"cpuidle_enter", "native_safe_halt", "pv_native_safe_halt", "acpi_idle_enter",
	/* .NET (after the module's "Assembly!"): spinning before blocking, and a thread-pool
	 * worker's wait for work, which spins first */
	"System.Threading.SpinWait::SpinOnce", "System.Threading.SpinWait::SpinOnceCore",
	"System.Threading.Thread::SpinWait", "System.Threading.Thread::Yield",
	"System.Threading.LowLevelSpinWaiter::SpinWaitForCondition",
	"System.Threading.LowLevelLifoSemaphore::Wait",
	/* the JIT compiler: the runtime warming up or re-compiling hot methods at a higher tier,
	 * which one recording catches and the next does not; reported beside the gate */
	"[libclrjit.so]", "CILJit::compileMethod", "jitNativeCode",
};

/* ... and, as the leaf only, where a clock sample lands when interrupts were off: a
 * cpu-clock sample waits for them to be enabled again, so these functions' self time is the
 * skew of the time before them, which varies with scheduling, not their own cost. */
static const char *const skew_leaves[] = {
	"pvm_irq_enable", "native_irq_enable", "arch_local_irq_enable", "_raw_spin_unlock_irqrestore",
	"_raw_spin_unlock_irq", "finish_task_switch", "finish_task_switch.isra.0", "__softirqentry_text_start",
	"pv_native_irq_enable", "__do_softirq",
};

static int name_in(const char *t, size_t len, const char *const *v, size_t n)
{
	const char *bang = memchr(t, '!', len);
	size_t i;

	if (bang) {		/* a .NET frame: Assembly!Namespace.Type::Method */
		len -= (size_t)(bang + 1 - t);
		t = bang + 1;
	}
	for (i = 0; i < n; i++)
		if (strlen(v[i]) == len && !memcmp(v[i], t, len))
			return 1;
	return 0;
}

/* A folded line of spin or idle, or one that ends in interrupt-enable skew. */
static int set_apart(void *arg, const char *t, size_t len)
{
	size_t a = 0, b;

	(void)arg;
	while (a < len && t[a] != ';')
		a++;
	while (a < len) {
		a++;
		for (b = a; b < len && t[b] != ';'; b++)
			;
		if (name_in(t + a, b - a, spin_frames, sizeof(spin_frames) / sizeof(*spin_frames)))
			return 1;
		if (b == len && name_in(t + a, b - a, skew_leaves, sizeof(skew_leaves) / sizeof(*skew_leaves)))
			return 1;
		a = b;
	}
	return 0;
}

/* How far x2 new samples are above s * x1 expected from the base: in points of the new
 * profile's n2 samples, and in standard errors of sampling (both counts taken as Poisson). */
static double excess_points(uint64_t x1, uint64_t x2, double s, uint64_t n2)
{
	return n2 ? 100.0 * ((double)x2 - s * (double)x1) / (double)n2 : 0.0;
}

static double excess_z(uint64_t x1, uint64_t x2, double s)
{
	double var = (double)x2 + s * s * (double)x1;
	return ((double)x2 - s * (double)x1) / sqrt(var > 1 ? var : 1);
}

/* A change this many standard errors of sampling or more is not sampling noise.  Samples of
 * one thread are not independent (a function runs for several in a row), so the bar is
 * higher than a p-value table would put it. */
#define GATE_Z 4.0

/* The scale from the base's samples to the new's for the code that did not change: of the
 * ratios new / base of the functions' self samples (each function with GATE_MIN_SAMPLES or
 * more on both sides offers its own, and the totals theirs), the one under which the fewest
 * functions' self samples changed beyond noise; a tie goes to the smaller sum of the changes'
 * sizes.  Shares alone would call every other function grown when one got faster (what it gave
 * up is shared out among the rest), and a service that answers more requests in the same time
 * has more samples of everything each request does: which scale is right is told by the
 * functions that agree on it, and those whose cost changed are the fewer. */
#define GATE_MIN_SAMPLES 8

static double scale_of(const struct pfc_funcs *f, const uint64_t n[2], size_t *changed, size_t *of)
{
	double best = n[0] ? (double)n[1] / (double)n[0] : 1.0, best_sum = 0;
	size_t i, j, best_n = SIZE_MAX, m = 0;

	for (j = 0; j <= f->n; j++) {
		double s, sum = 0;
		size_t k = 0;
		if (j < f->n) {
			if (f->v[j].nself[0] < GATE_MIN_SAMPLES || f->v[j].nself[1] < GATE_MIN_SAMPLES)
				continue;
			s = (double)f->v[j].nself[1] / (double)f->v[j].nself[0];
		} else {
			s = n[0] ? (double)n[1] / (double)n[0] : 1.0;
		}
		m = 0;
		for (i = 0; i < f->n; i++) {
			double z;
			if (!f->v[i].nself[0] && !f->v[i].nself[1])
				continue;
			m++;
			z = fabs(excess_z(f->v[i].nself[0], f->v[i].nself[1], s));
			if (z >= GATE_Z) {
				k++;
				sum += z;
			}
		}
		if (k < best_n || (k == best_n && sum < best_sum)) {
			best = s;
			best_n = k;
			best_sum = sum;
		}
	}
	*changed = best_n == SIZE_MAX ? 0 : best_n;
	*of = m;
	return best;
}

/* The share of the lines with the JIT compiler's library in them. */
static void jit_share(const struct pfc_diff *d, double share[2])
{
	uint64_t w[2] = { 0, 0 };
	size_t i, len, k;

	for (i = 0; i < d->n; i++) {
		const char *t = pfc_diff_text(d, i, &len);
		if (!memmem(t, len, "libclrjit.so", 12))
			continue;
		for (k = 0; k < 2; k++)
			w[k] += d->w[k][d->order[i]];
	}
	for (k = 0; k < 2; k++)
		share[k] = pfc_diff_share(w[k], d->sum[k]);
}

static int is_clock(const struct pfc_session *s, uint32_t evsel)
{
	const struct pfc_evsel *ev;

	if (evsel >= s->rd.nr_evsels)
		return 0;
	ev = s->rd.evsels[evsel];
	return ev->attr.type == PERF_TYPE_SOFTWARE &&
	       (ev->attr.config == PERF_COUNT_SW_CPU_CLOCK || ev->attr.config == PERF_COUNT_SW_TASK_CLOCK);
}

/* A function the gate lists: grown by its own samples (self), else by its total. */
struct grown {
	const struct pfc_func *fn;
	int self;
	double points, z;
};

/* the functions grown by their own samples first, then by their totals (their callers), each
 * largest first; ties by name */
static int cmp_grown(const void *a, const void *b)
{
	const struct grown *x = a, *y = b;
	size_t l;
	int r;

	if (x->self != y->self)
		return x->self ? -1 : 1;
	if (x->points != y->points)
		return x->points > y->points ? -1 : 1;
	l = x->fn->len < y->fn->len ? x->fn->len : y->fn->len;
	r = memcmp(x->fn->name, y->fn->name, l);
	return r ? r : x->fn->len < y->fn->len ? -1 : x->fn->len > y->fn->len;
}

/* Of the functions grown by their totals, keeps those whose work grew: the stacks through
 * each, with all of their frames taken out, must have grown too (pfc_diff_contracted), else
 * they only appeared as frames (counted in *dropped).  Returns 0 or -1 on no memory. */
static int drop_frames_only(const struct pfc_diff *d, struct grown *g, int *nr, double scale, uint64_t n1,
			    double pct, unsigned *dropped)
{
	const struct pfc_func **fns = malloc((size_t)(*nr ? *nr : 1) * sizeof(*fns));
	uint64_t *w = malloc((size_t)(*nr ? *nr : 1) * 2 * sizeof(*w));
	int i, k = 0, kept = 0, ret = 0;

	if (!fns || !w) {
		ret = -1;
		goto out;
	}
	for (i = 0; i < *nr; i++)
		if (!g[i].self)
			fns[k++] = g[i].fn;
	if (k && pfc_diff_contracted(d, fns, (size_t)k, w) < 0) {
		ret = -1;
		goto out;
	}
	for (i = 0, k = 0; i < *nr; i++) {
		if (!g[i].self) {
			uint64_t x0 = w[2 * k], x1 = w[2 * k + 1];
			k++;
			if (!(excess_points(x0, x1, scale, n1) > pct && excess_z(x0, x1, scale) >= GATE_Z)) {
				(*dropped)++;
				continue;
			}
		}
		g[kept++] = g[i];
	}
	*nr = kept;
out:
	free(fns);
	free(w);
	return ret;
}

/* the list stops after this many: the rest are the callers of those above */
#define GATE_LIST 12

/* --fail-if-grown PCT: the functions whose total or self share grew by more than PCT points
 * against the base scaled to the new (scale_of) and by more than sampling explains, with
 * spinning and idle threads and interrupt-enable skew set apart from both profiles, on stderr
 * (a single conversion, unless -q) or in the hints the batch parent prints under the file's
 * line; returns how many, or a negative error code. */
int pfc_cli_gate(struct cli *c, struct pfc_session *s, const char *input, char *hints, size_t size,
		 struct pfc_error *err)
{
	struct pfc_wopts wo = c->wopts;
	struct pfc_diff d;
	struct pfc_funcs f;
	size_t i, used = strlen(hints);
	uint64_t n[2];
	unsigned noise = 0, inlined = 0;
	long apart = 0;
	double scale;
	size_t changed, leaves;
	struct grown *g = NULL;
	int ret, grown = 0;
	double jit[2];
	char line[640];

	memset(&f, 0, sizeof(f));
	wo.diff_base = c->base;
	ret = pfc_diff_build(&d, s, &wo, err);
	if (ret == 0 && (apart = pfc_diff_set_apart(&d, set_apart, NULL)) < 0)
		ret = PFC_FAIL_NOOFF(err, NOMEM, "diff");
	if (ret == 0)
		ret = pfc_funcs_build(&f, &d, err);
	if (ret < 0)
		goto out;
	n[0] = d.count[0] - d.apart_n[0];
	n[1] = d.count[1] - d.apart_n[1];
	scale = scale_of(&f, n, &changed, &leaves);
	if (!(g = calloc(f.n ? f.n : 1, sizeof(*g)))) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "diff");
		goto out;
	}
	for (i = 0; i < f.n; i++) {
		const struct pfc_func *fn = &f.v[i];
		struct grown *x = &g[grown];
		double pt = excess_points(fn->ntotal[0], fn->ntotal[1], scale, n[1]);
		double ps = excess_points(fn->nself[0], fn->nself[1], scale, n[1]);
		int by_total = pt > c->fail_if_grown, by_self = ps > c->fail_if_grown;

		if (!by_total && !by_self)
			continue;
		x->fn = fn;
		x->self = by_self && excess_z(fn->nself[0], fn->nself[1], scale) >= GATE_Z;
		x->points = x->self ? ps : pt;
		x->z = x->self ? excess_z(fn->nself[0], fn->nself[1], scale) : excess_z(fn->ntotal[0], fn->ntotal[1], scale);
		if (!x->self && !(by_total && x->z >= GATE_Z)) {
			noise++;
			continue;
		}
		grown++;
	}
	if ((ret = drop_frames_only(&d, g, &grown, scale, n[1], c->fail_if_grown, &inlined)) < 0) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "diff");
		goto out;
	}
	qsort(g, grown, sizeof(*g), cmp_grown);
	for (i = 0; i < (size_t)grown && i < GATE_LIST; i++) {
		const struct pfc_func *fn = g[i].fn;
		if (!i) {
			snprintf(line, sizeof(line), "perfconv: '%s': grew by more than %g points against '%s' "
				 "(--fail-if-grown):\n", input, c->fail_if_grown, c->diff);
			gate_line(c, line, hints, size, &used);
		}
		snprintf(line, sizeof(line), "  %+.2f  %6.2f%% -> %6.2f%%  self %+.2f  grown %+.2f %s, z %.1f  %.*s\n",
			 fn->dtotal, pfc_diff_share(fn->total[0], d.sum[0] - d.apart_w[0]),
			 pfc_diff_share(fn->total[1], d.sum[1] - d.apart_w[1]), fn->dself, g[i].points,
			 g[i].self ? "self" : "total", g[i].z, (int)(fn->len < 400 ? fn->len : 400), fn->name);
		gate_line(c, line, hints, size, &used);
	}
	if (grown > GATE_LIST) {
		snprintf(line, sizeof(line), "  and %d more, by their totals: callers of those above\n", grown - GATE_LIST);
		gate_line(c, line, hints, size, &used);
	}
	if (grown || noise || inlined) {
		snprintf(line, sizeof(line), "  (grown: samples above the base's times %.3f, the scale under which "
			 "the fewest functions' self samples changed, %zu of %zu, in points of the new profile; counted "
			 "when %.0f standard errors of sampling or more, %u within that, %u only more often a frame "
			 "(inlined in one recording, not in the other, with the work below it the same); set apart: %.1f%% and %.1f%% of the samples, "
			 "spinning or idle threads, the JIT compiler and interrupt-enable skew)\n",
			 scale, changed, leaves, GATE_Z, noise, inlined, pfc_diff_share(d.apart_n[0], d.count[0]),
			 pfc_diff_share(d.apart_n[1], d.count[1]));
		gate_line(c, line, hints, size, &used);
	}
	if (grown && is_clock(s, d.evsel[1])) {
		uint64_t t0 = d.total[0], t1 = d.total[1];
		snprintf(line, sizeof(line), "  CPU time %.3f s -> %.3f s (%+.1f%%)\n", (double)t0 / 1e9, (double)t1 / 1e9,
			 t0 ? 100.0 * ((double)t1 - (double)t0) / (double)t0 : 0.0);
		gate_line(c, line, hints, size, &used);
	}
	jit_share(&d, jit);
	if (fabs(jit[1] - jit[0]) >= 2.0 || jit[0] >= 10.0 || jit[1] >= 10.0) {
		snprintf(line, sizeof(line), "perfconv: '%s': the JIT compiler took %.1f%% of the samples, against %.1f%% "
			 "in the base: %s was still compiling, and a comparison with it compares warm-up, not code "
			 "(record after warm-up)\n", input, jit[1], jit[0],
			 jit[1] >= jit[0] ? "the runtime of the input" : "the runtime of the base");
		gate_line(c, line, hints, size, &used);
	}
out:
	free(g);
	pfc_funcs_free(&f);
	pfc_diff_free(&d);
	return ret < 0 ? ret : grown;
}
