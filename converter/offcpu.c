/*
 * offcpu.c - off-CPU intervals from sched_switch samples.  It reads the recording's own
 * sched_switch format (tpformat.c, never libtraceevent) for where prev_pid, prev_state and
 * next_pid are and what prev_state's bits mean, keeps one open interval per thread, clips
 * each to the --time window when it ends, and at the end adds each (callchain, state)
 * total to the session's stacks.  It does not decide which samples exist or how stacks
 * are built: sample.c and session.c call it.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include "converter/offcpu.h"
#include "converter/machine/filter.h"
#include "converter/perffile/tracedata.h"
#include "converter/session.h"

/* ---- the sched_switch format ---- */

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n'))
		p++;
	return p;
}

static const char *skip_word(const char *p, const char *end, const char *w)
{
	size_t n = strlen(w);

	p = skip_space(p, end);
	if ((size_t)(end - p) < n || memcmp(p, w, n))
		return NULL;
	return p + n;
}

/* a string literal: its contents go to buf (cut to cap - 1) */
static const char *read_string(const char *p, const char *end, char *buf, size_t cap)
{
	size_t n = 0;

	p = skip_space(p, end);
	if (p >= end || *p != '"')
		return NULL;
	for (p++; p < end && *p != '"'; p++) {
		if (*p == '\\' && p + 1 < end)
			p++;
		if (n + 1 < cap)
			buf[n++] = *p;
	}
	if (p >= end)
		return NULL;
	if (cap)
		buf[n] = 0;
	return p + 1;
}

static const char *memfind(const char *p, const char *end, const char *w)
{
	size_t n = strlen(w);

	for (; p && (size_t)(end - p) >= n; p++)
		if (!memcmp(p, w, n))
			return p;
	return NULL;
}

/* "REC->prev_state & EXPR" at p: EXPR's value; returns the position after it */
static const char *state_and(const char *p, const char *end, uint64_t *v)
{
	size_t used;

	if (!(p = skip_word(p, end, "REC->prev_state")) || !(p = skip_word(p, end, "&")))
		return NULL;
	if (pfc_tpformat_eval(p, (size_t)(end - p), v, &used) < 0)
		return NULL;
	return p + used;
}

/*
 * prev_state is printed by the kernel's sched_switch print format as
 *   (REC->prev_state & MASK) ? __print_flags(REC->prev_state & MASK, "|", { BIT, "S" }, ...) : "R",
 *   REC->prev_state & PREEMPT ? "+" : ""
 * MASK, PREEMPT and the table changed across kernels (TASK_STATE_MAX before 4.14, then
 * TASK_REPORT_MAX; new letters such as I and P), so they are read from the recording's
 * format, as libtraceevent would print them, rather than assumed.
 */
int pfc_offcpu_switch_fmt(const struct pfc_tpformat *f, struct pfc_switch_fmt *out, const char **why)
{
	const struct pfc_tpfield *pp = pfc_tpformat_field(f, "prev_pid"), *ps = pfc_tpformat_field(f, "prev_state"),
				 *np = pfc_tpformat_field(f, "next_pid");
	const char *p, *end, *q;
	char sep[8];

	memset(out, 0, sizeof(*out));
	out->id = f->id;
	if (!pp || !ps || !np) {
		*why = "its format has no prev_pid, prev_state or next_pid field";
		return -1;
	}
	out->prev_pid = *pp;
	out->prev_state = *ps;
	out->next_pid = *np;
	if (!f->print_fmt) {
		*why = "its format has no print fmt";
		return -1;
	}
	p = f->print_fmt;
	end = p + f->print_len;
	*why = "its print fmt has no __print_flags(REC->prev_state & MASK, ...) table of states";
	p = memfind(p, end, "__print_flags(");
	if (!p)
		return -1;
	p += strlen("__print_flags(");
	if (!(p = state_and(p, end, &out->state_mask)) || !(p = skip_word(p, end, ",")) ||
	    !(p = read_string(p, end, sep, sizeof(sep))))
		return -1;
	for (;;) {
		uint64_t bit;
		size_t used;
		p = skip_space(p, end);
		if (p < end && *p == ')')
			break;
		if (!(p = skip_word(p, end, ",")) || !(p = skip_word(p, end, "{")))
			return -1;
		p = skip_space(p, end);
		if (pfc_tpformat_eval(p, (size_t)(end - p), &bit, &used) < 0)
			return -1;
		p += used;
		if (!(p = skip_word(p, end, ",")))
			return -1;
		if (out->nr_states < sizeof(out->states) / sizeof(out->states[0])) {
			if (!(p = read_string(p, end, out->states[out->nr_states].name,
					      sizeof(out->states[0].name))))
				return -1;
			out->states[out->nr_states++].bit = bit;
		} else if (!(p = read_string(p, end, sep, sizeof(sep)))) {
			return -1;
		}
		if (!(p = skip_word(p, end, "}")))
			return -1;
	}
	if (!out->nr_states || !out->state_mask)
		return -1;
	/* the preemption mark: the next "REC->prev_state & X ? "+"" */
	for (q = p; (q = memfind(q, end, "REC->prev_state")); q++) {
		uint64_t v;
		const char *r = state_and(q, end, &v);
		char plus[4];
		if (r && (r = skip_word(r, end, "?")) && read_string(r, end, plus, sizeof(plus)) && !strcmp(plus, "+")) {
			out->preempt_bit = v;
			break;
		}
	}
	*why = NULL;
	return 0;
}

unsigned pfc_offcpu_state(const struct pfc_switch_fmt *f, uint64_t prev_state)
{
	uint64_t v = prev_state & f->state_mask;
	unsigned i;

	if (!v)
		return 0;
	/* __print_flags prints every matching entry ("S|D"); the first one names it here */
	for (i = 0; i < f->nr_states; i++)
		if (f->states[i].bit && (v & f->states[i].bit) == f->states[i].bit)
			return i + 1;
	return 0;
}

const char *pfc_offcpu_state_name(const struct pfc_switch_fmt *f, unsigned state)
{
	if (!state || state > f->nr_states)
		return "R";
	return f->states[state - 1].name;
}

/* ---- intervals ---- */

enum { EV_UNKNOWN, EV_SWITCH, EV_CLOCK, EV_OTHER };

struct oc_thr {
	int32_t tid;
	uint8_t used, open, state;
	uint32_t stack;
	uint64_t start;
};

struct oc_acc {                  /* the total of one (stack, state) */
	uint32_t stack;
	uint8_t used, state;
	uint64_t ns, n;
};

struct pfc_offcpu {
	int mode, thread_time;
	int fmt_read;                /* the tracing data was looked at */
	int have_fmt;
	int raw_swap;                /* payloads in the other byte order (the tracing data's, not the file's) */
	struct pfc_switch_fmt sw;
	uint8_t *evkind;             /* per evsel index: EV_* */
	size_t nr_evkind;
	int64_t switch_evsel, clock_evsel;
	int oom;                     /* an interval was lost for memory: reported at the end */
	struct oc_thr *thr;
	size_t thr_cap, thr_n;
	struct oc_acc *acc;
	size_t acc_cap, acc_n;
	uint64_t last_time;
	struct pfc_time_range *win;  /* --time: its ranges sorted and merged, end UINT64_MAX when open */
	size_t nr_win;
	int win_ready;
	struct pfc_offcpu_stats st;
};

struct pfc_offcpu *pfc_offcpu_new(int mode, int thread_time)
{
	struct pfc_offcpu *oc = calloc(1, sizeof(*oc));

	if (!oc)
		return NULL;
	oc->mode = mode;
	oc->thread_time = thread_time;
	oc->switch_evsel = oc->clock_evsel = -1;
	return oc;
}

void pfc_offcpu_free(struct pfc_offcpu *oc)
{
	if (!oc)
		return;
	free(oc->evkind);
	free(oc->thr);
	free(oc->acc);
	free(oc->win);
	free(oc);
}

const struct pfc_offcpu_stats *pfc_offcpu_stats(const struct pfc_offcpu *oc)
{
	return &oc->st;
}

int pfc_offcpu_thread_time(const struct pfc_offcpu *oc)
{
	return oc && oc->thread_time;
}

int pfc_offcpu_in_profile(const struct pfc_offcpu *oc, uint32_t evsel)
{
	return (int64_t)evsel == oc->switch_evsel || (oc->thread_time && (int64_t)evsel == oc->clock_evsel);
}

static uint32_t hash_u64(uint64_t v)
{
	v *= 0x9E3779B97F4A7C15ULL;
	return (uint32_t)(v >> 32);
}

static struct oc_thr *thr_find(struct pfc_offcpu *oc, int32_t tid, int create)
{
	size_t i, mask;

	if (create && (oc->thr_n + 1) * 2 > oc->thr_cap) {
		size_t cap = oc->thr_cap ? oc->thr_cap * 2 : 256, k;
		struct oc_thr *n = calloc(cap, sizeof(*n));
		if (!n)
			return NULL;
		for (k = 0; k < oc->thr_cap; k++) {
			const struct oc_thr *t = &oc->thr[k];
			if (!t->used)
				continue;
			for (i = hash_u64((uint32_t)t->tid) & (cap - 1); n[i].used; i = (i + 1) & (cap - 1))
				;
			n[i] = *t;
		}
		free(oc->thr);
		oc->thr = n;
		oc->thr_cap = cap;
	}
	if (!oc->thr_cap)
		return NULL;
	mask = oc->thr_cap - 1;
	for (i = hash_u64((uint32_t)tid) & mask; oc->thr[i].used; i = (i + 1) & mask)
		if (oc->thr[i].tid == tid)
			return &oc->thr[i];
	if (!create)
		return NULL;
	oc->thr[i].used = 1;
	oc->thr[i].tid = tid;
	oc->thr_n++;
	return &oc->thr[i];
}

static struct oc_acc *acc_find(struct pfc_offcpu *oc, uint32_t stack, uint8_t state)
{
	uint64_t key = (uint64_t)stack << 8 | state;
	size_t i, mask;

	if ((oc->acc_n + 1) * 2 > oc->acc_cap) {
		size_t cap = oc->acc_cap ? oc->acc_cap * 2 : 1024, k;
		struct oc_acc *n = calloc(cap, sizeof(*n));
		if (!n)
			return NULL;
		for (k = 0; k < oc->acc_cap; k++) {
			const struct oc_acc *a = &oc->acc[k];
			if (!a->used)
				continue;
			for (i = hash_u64((uint64_t)a->stack << 8 | a->state) & (cap - 1); n[i].used; i = (i + 1) & (cap - 1))
				;
			n[i] = *a;
		}
		free(oc->acc);
		oc->acc = n;
		oc->acc_cap = cap;
	}
	mask = oc->acc_cap - 1;
	for (i = hash_u64(key) & mask; oc->acc[i].used; i = (i + 1) & mask)
		if (oc->acc[i].stack == stack && oc->acc[i].state == state)
			return &oc->acc[i];
	oc->acc[i].used = 1;
	oc->acc[i].stack = stack;
	oc->acc[i].state = state;
	oc->acc_n++;
	return &oc->acc[i];
}

static void note_time(struct pfc_offcpu *oc, uint64_t t)
{
	if (t > oc->last_time)
		oc->last_time = t;
}

static int range_cmp(const void *a, const void *b)
{
	const struct pfc_time_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The --time window as disjoint sorted ranges (perf's ranges may overlap or come unsorted).
 * Read once the filter has resolved its percentages: an interval starts only after a sample
 * went through the filter, which resolves them. */
static int window(struct pfc_offcpu *oc, const struct pfc_filter *f)
{
	size_t i, n = 0;

	if (oc->win_ready)
		return 0;
	oc->win_ready = 1;
	if (!f || !f->time_str || !f->nr_ranges)
		return 0;
	if (!(oc->win = malloc(f->nr_ranges * sizeof(*oc->win))))
		return -1;
	for (i = 0; i < f->nr_ranges; i++) {
		oc->win[i].start = f->ranges[i].start;
		oc->win[i].end = f->ranges[i].end ? f->ranges[i].end : UINT64_MAX;
	}
	qsort(oc->win, f->nr_ranges, sizeof(*oc->win), range_cmp);
	for (i = 0; i < f->nr_ranges; i++) {
		if (n && oc->win[i].start <= oc->win[n - 1].end) {
			if (oc->win[i].end > oc->win[n - 1].end)
				oc->win[n - 1].end = oc->win[i].end;
		} else {
			oc->win[n++] = oc->win[i];
		}
	}
	oc->nr_win = n;
	return 0;
}

/* The part of [a, b] inside the --time window; *inside: whether [a, b] meets it at all. */
static uint64_t clip(const struct pfc_offcpu *oc, uint64_t a, uint64_t b, int *inside)
{
	uint64_t ns = 0;
	size_t i;

	if (!oc->win) {
		*inside = 1;
		return b - a;
	}
	*inside = 0;
	for (i = 0; i < oc->nr_win; i++) {
		uint64_t lo = a > oc->win[i].start ? a : oc->win[i].start;
		uint64_t hi = b < oc->win[i].end ? b : oc->win[i].end;
		if (lo <= hi) {
			*inside = 1;
			ns += hi - lo;
		}
	}
	return ns;
}

/* End tid's open interval at t; -1 when out of memory.  With --time only the part of the
 * interval inside the window counts, and an interval outside it not at all. */
static int end_interval(struct pfc_offcpu *oc, const struct pfc_filter *f, int32_t tid, uint64_t t, int how)
{
	struct oc_thr *th = thr_find(oc, tid, 0);
	struct oc_acc *a;
	uint64_t ns;
	int inside;

	if (!th || !th->open)
		return 0;
	th->open = 0;
	if (window(oc, f) < 0)
		return -1;
	ns = clip(oc, th->start, t > th->start ? t : th->start, &inside);
	if (!inside)
		return 0;
	if (!(a = acc_find(oc, th->stack, th->state)))
		return -1;
	a->ns += ns;
	a->n++;
	oc->st.nr_intervals++;
	oc->st.ns += ns;
	oc->st.nr_by_end[how]++;
	oc->st.ns_by_end[how] += ns;
	return 0;
}

struct fmt_find {
	struct pfc_tpformat f;
	int found, oom;
};

static int find_switch(void *arg, const char *sys, const char *text, size_t len)
{
	struct fmt_find *ff = arg;
	struct pfc_tpformat f;
	int ret;

	if (ff->found || strcmp(sys, "sched"))
		return 0;
	ret = pfc_tpformat_parse(text, len, &f);
	if (ret == -1)
		return -1;
	if (ret < 0)
		return 0;
	if (strcmp(f.name, "sched_switch")) {
		pfc_tpformat_free(&f);
		return 0;
	}
	ff->f = f;
	ff->found = 1;
	return 0;
}

/* The recording's sched_switch format, read once from its tracing data. */
static int read_format(struct pfc_session *s, struct pfc_offcpu *oc)
{
	const struct pfc_reader *rd = &s->rd;
	struct fmt_find ff;
	const char *why;
	int ret;

	oc->fmt_read = 1;
	memset(&ff, 0, sizeof(ff));
	ret = pfc_tracedata_formats(rd->tracing_data.data, rd->tracing_data.size, rd->tracing_data_offset, find_switch,
				    &ff, s->err);
	if (ret < 0) {
		if (ff.found)
			pfc_tpformat_free(&ff.f);
		return ret;
	}
	if (!ff.found)
		return 0;
	ret = pfc_offcpu_switch_fmt(&ff.f, &oc->sw, &why);
	pfc_tpformat_free(&ff.f);
	if (ret < 0)
		return PFC_FAIL_NOOFF(s->err, UNSUPPORTED, "cannot read sched:sched_switch payloads: %s", why);
	oc->raw_swap = pfc_tracedata_payload_swap(rd->tracing_data.data, rd->tracing_data.size) == 1;
	oc->have_fmt = 1;
	return 0;
}

static int ev_kind(struct pfc_session *s, struct pfc_offcpu *oc, const struct pfc_evsel *ev, int *kind)
{
	size_t idx = (size_t)ev->idx;
	int ret;

	if (idx >= oc->nr_evkind) {
		size_t cap = idx + 8;
		uint8_t *n = realloc(oc->evkind, cap);
		if (!n)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "off-cpu events");
		memset(n + oc->nr_evkind, EV_UNKNOWN, cap - oc->nr_evkind);
		oc->evkind = n;
		oc->nr_evkind = cap;
	}
	if (oc->evkind[idx] == EV_UNKNOWN) {
		int k = EV_OTHER;
		if (ev->attr.type == PERF_TYPE_TRACEPOINT) {
			if (!oc->fmt_read && (ret = read_format(s, oc)) < 0)
				return ret;
			if (oc->have_fmt && ev->attr.config == oc->sw.id)
				k = EV_SWITCH;
		} else if (ev->attr.type == PERF_TYPE_SOFTWARE &&
			   (ev->attr.config == PERF_COUNT_SW_CPU_CLOCK || ev->attr.config == PERF_COUNT_SW_TASK_CLOCK)) {
			k = EV_CLOCK;
		}
		/* one event of each kind makes the profile: the first one sampled */
		if (k == EV_SWITCH && oc->switch_evsel < 0)
			oc->switch_evsel = (int64_t)idx;
		if (k == EV_CLOCK && oc->clock_evsel < 0)
			oc->clock_evsel = (int64_t)idx;
		oc->evkind[idx] = (uint8_t)k;
	}
	*kind = oc->evkind[idx];
	if ((*kind == EV_SWITCH && (int64_t)idx != oc->switch_evsel) ||
	    (*kind == EV_CLOCK && (int64_t)idx != oc->clock_evsel))
		*kind = EV_OTHER;
	return 0;
}

int pfc_offcpu_sample(struct pfc_session *s, struct pfc_evsel *ev, const struct pfc_sample *smp, unsigned *start)
{
	struct pfc_offcpu *oc = s->offcpu;
	uint64_t t = smp->time, prev_state, next_pid;
	int kind = EV_OTHER, ret;
	unsigned state;

	*start = 0;
	if ((ret = ev_kind(s, oc, ev, &kind)) < 0)
		return ret;
	if (kind == EV_CLOCK)
		oc->st.nr_clock_samples++;
	if (!(smp->flags & PFC_S_HAS_TIME)) {
		oc->st.nr_no_time++;
		return 0;
	}
	note_time(oc, t);
	/* a thread that has a sample is running: this ends its interval */
	if ((int32_t)smp->tid > 0 && end_interval(oc, s->opts->filter, (int32_t)smp->tid, t, PFC_OC_END_SAMPLE) < 0)
		goto oom;
	if (kind != EV_SWITCH)
		return 0;
	oc->st.nr_switch_samples++;
	/* a payload too short for the format's fields is skipped, like a sample without one */
	if (pfc_tpfield_int(&oc->sw.next_pid, smp->raw, smp->raw_size, oc->raw_swap, &next_pid) < 0 ||
	    pfc_tpfield_int(&oc->sw.prev_state, smp->raw, smp->raw_size, oc->raw_swap, &prev_state) < 0)
		return 0;
	if ((int32_t)next_pid > 0 && end_interval(oc, s->opts->filter, (int32_t)next_pid, t, PFC_OC_END_SWITCH_IN) < 0)
		goto oom;
	if ((int32_t)smp->tid <= 0)	/* the idle task never waits */
		return 0;
	state = pfc_offcpu_state(&oc->sw, prev_state);
	if (state) {
		const char *name = pfc_offcpu_state_name(&oc->sw, state);
		/* X (dead), Z (zombie), x (old kernels' EXIT_DEAD): it will not run again */
		if (name[0] == 'X' || name[0] == 'Z' || name[0] == 'x') {
			oc->st.nr_dead++;
			return 0;
		}
	} else if (oc->mode != PFC_OFFCPU_ALL) {
		oc->st.nr_runnable++;
		return 0;
	}
	*start = state + 1;
	return 0;
oom:
	return PFC_FAIL_NOOFF(s->err, NOMEM, "off-cpu intervals");
}

int pfc_offcpu_start(struct pfc_session *s, const struct pfc_sample *smp, uint32_t stack, unsigned start)
{
	struct pfc_offcpu *oc = s->offcpu;
	struct oc_thr *th;

	if (!start)
		return 0;
	th = thr_find(oc, (int32_t)smp->tid, 1);
	if (!th)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "off-cpu intervals");
	th->open = 1;
	th->state = (uint8_t)(start - 1);
	th->stack = stack;
	th->start = smp->time;
	return 0;
}

void pfc_offcpu_switch_in(struct pfc_session *s, int32_t tid, uint64_t t)
{
	struct pfc_offcpu *oc = s->offcpu;

	oc->st.nr_switch_records++;
	note_time(oc, t);
	if (tid > 0 && end_interval(oc, s->opts->filter, tid, t, PFC_OC_END_SWITCH_IN) < 0)
		oc->oom = 1;
}

void pfc_offcpu_exit(struct pfc_session *s, int32_t tid, uint64_t t)
{
	struct pfc_offcpu *oc = s->offcpu;

	note_time(oc, t);
	if (tid > 0 && end_interval(oc, s->opts->filter, tid, t, PFC_OC_END_EXIT) < 0)
		oc->oom = 1;
}

int pfc_offcpu_finish(struct pfc_session *s, uint64_t *nr_frames)
{
	struct pfc_offcpu *oc = s->offcpu;
	struct pfc_stacks *stk = &s->stacks;
	uint32_t *frames = NULL, label[33];
	size_t i, cap = 0;
	int ret = 0;

	if (oc->oom)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "off-cpu intervals");
	if (oc->switch_evsel < 0)
		return PFC_FAIL_NOOFF(s->err, UNSUPPORTED, "no sched:sched_switch samples for --%s: record them with "
				      "'perf record -e sched:sched_switch -g'%s", oc->thread_time ? "thread-time" : "off-cpu",
				      oc->thread_time ? " -e cpu-clock" : "");
	if (oc->thread_time && oc->clock_evsel < 0)
		return PFC_FAIL_NOOFF(s->err, UNSUPPORTED, "--thread-time needs on-CPU samples of cpu-clock or task-clock "
				      "besides sched:sched_switch: record with 'perf record -e sched:sched_switch -e cpu-clock -g'");
	/* what is still asleep when the recording stops waited until then */
	for (i = 0; i < oc->thr_cap; i++)
		if (oc->thr[i].used && oc->thr[i].open &&
		    end_interval(oc, s->opts->filter, oc->thr[i].tid, oc->last_time, PFC_OC_END_RECORDING) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "off-cpu intervals");
	/* the sched_switch samples themselves weigh nothing: only the time they start does */
	for (i = 0; i < stk->nr_stacks; i++)
		if ((int64_t)stk->stacks[i].evsel == oc->switch_evsel)
			stk->stacks[i].period = stk->stacks[i].count = 0;
	memset(label, 0xff, sizeof(label));
	for (i = 0; i < oc->acc_cap; i++) {
		const struct oc_acc *a = &oc->acc[i];
		struct pfc_stack st;
		uint32_t id, nr, extra = 0;
		if (!a->used || !a->n)
			continue;
		st = stk->stacks[a->stack];
		nr = st.nr;
		/* --thread-time: the stack ends in a frame that names the state, as PerfView's
		 * BLOCKED_TIME does */
		if (oc->thread_time) {
			if (label[a->state] == UINT32_MAX) {
				char name[32];
				const struct pfc_dso *d;
				size_t n = (size_t)snprintf(name, sizeof(name), "[off-cpu: %s]",
							    pfc_offcpu_state_name(&oc->sw, a->state));
				d = pfc_machine_dso_findnew(&s->machine, name, n, PFC_DSO_LABEL, -1);
				if (!d || (label[a->state] = pfc_stacks_frame(stk, d, 0, 0)) == UINT32_MAX)
					goto oom;
			}
			extra = 1;
		}
		if (nr + extra > cap) {
			uint32_t *n = realloc(frames, (nr + extra) * sizeof(*n));
			if (!n)
				goto oom;
			frames = n;
			cap = nr + extra;
		}
		if (extra)
			frames[0] = label[a->state];
		if (nr)	/* a stack without frames (and no label) leaves frames NULL: no copy from or to it */
			memcpy(frames + extra, stk->frame_ids + st.first, nr * sizeof(*frames));
		id = pfc_stacks_add(stk, st.evsel, st.comm, st.pid, st.tid, frames, nr + extra, a->ns);
		if (id == UINT32_MAX)
			goto oom;
		stk->stacks[id].count += a->n - 1;
		*nr_frames += a->n * (nr + extra);
	}
	goto out;
oom:
	ret = PFC_FAIL_NOOFF(s->err, NOMEM, "off-cpu stacks");
out:
	free(frames);
	return ret;
}
