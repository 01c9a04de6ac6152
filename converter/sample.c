/*
 * sample.c - a sample record into the aggregate: the callchain cache's fast path straight from
 * the record, decoding, PERF_SAMPLE_READ's one sample per counter (with each counter's last
 * value), perf script's filters, the off-CPU hooks, the stack it adds to and the time-ordered
 * stream.  Its frames come from callchain.c; it does not look up addresses itself.
 */
#include <stdlib.h>
#include <string.h>
#include "converter/sample.h"
#include "converter/callchain.h"
#include "converter/session.h"
#include "converter/machine/chaincache.h"
#include "converter/util/bytes.h"
#include "converter/util/hashtab.h"

/* A counter id's last value in a sample (PERF_SAMPLE_READ). */
struct pfc_counter_last {
	uint64_t key;                 /* id + 1; 0 = empty slot */
	uint64_t value;
};

/* The order of ev's first sample, the first time it has one. */
static inline void count_order(struct pfc_session *s, const struct pfc_evsel *ev)
{
	if ((size_t)ev->idx < s->samples.nr_evsel_first && s->samples.evsel_first_seq[ev->idx] == UINT64_MAX)
		s->samples.evsel_first_seq[ev->idx] = s->samples.seq;
	s->samples.seq++;
}

/* Keep a sample in the time-ordered stream. */
static int keep_sample(struct pfc_session *s, const struct pfc_sample *smp, uint32_t stack)
{
	struct pfc_srec r;

	memset(&r, 0, sizeof(r));
	r.time = smp->flags & PFC_S_HAS_TIME ? smp->time : 0;
	r.period = smp->flags & PFC_S_HAS_PERIOD ? smp->period : 0;
	r.ip = smp->ip;
	r.addr = smp->addr;
	r.weight = smp->weight;
	r.data_src = smp->data_src;
	r.stack = stack;
	r.cpu = smp->flags & PFC_S_HAS_CPU ? smp->cpu : UINT32_MAX;
	r.misc = smp->misc;
	r.flags = (uint16_t)smp->flags;
	/* perf record -c N: no PERIOD field, every sample stands for the attr's fixed period,
	 * which perf script prints (tracepoints excepted) */
	if (!(smp->flags & PFC_S_HAS_PERIOD) && smp->evsel && smp->evsel->attr.type != PERF_TYPE_TRACEPOINT &&
	    !smp->evsel->attr.freq && smp->evsel->attr.sample_period) {
		r.period = smp->evsel->attr.sample_period;
		r.flags |= PFC_S_HAS_PERIOD;
	}
	r.raw = smp->raw;
	r.raw_len = smp->raw_size;
	if (stack >= s->nr_stream_per_stack) {
		size_t n = s->nr_stream_per_stack ? s->nr_stream_per_stack * 2 : 4096;
		uint64_t *c;
		while (n <= stack)
			n *= 2;
		if (!(c = realloc(s->stream_per_stack, n * sizeof(*c))))
			return PFC_FAIL_NOOFF(s->err, NOMEM, "sample stream");
		memset(c + s->nr_stream_per_stack, 0, (n - s->nr_stream_per_stack) * sizeof(*c));
		s->stream_per_stack = c;
		s->nr_stream_per_stack = n;
	}
	s->stream_per_stack[stack]++;
	if (pfc_stream_add(&s->stream, &r) < 0)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "sample stream (memory or temporary file)");
	return 0;
}

/* 1: keep the sample, 0: filtered out, < 0: error (percentages without sample times).
 * perf script filters in the same place: after the thread is found, before anything is
 * resolved or counted as printed.  any_time: only the thread filters apply (a sample that
 * starts an off-CPU interval, which offcpu.c clips to the --time window itself). */
static int filter_sample(struct pfc_session *s, const struct pfc_sample *smp, const struct pfc_thread *th,
			 int any_time)
{
	struct pfc_filter *f = s->opts->filter;
	uint64_t t = smp->flags & PFC_S_HAS_TIME ? smp->time : 0;

	if (f->time_str && !f->time_resolved) {
		uint64_t first = 0, last = 0;
		const struct pfc_blob *b = &s->rd.feat[PFC_FEAT_SAMPLE_TIME];
		if (pfc_feat_has(&s->rd, PFC_FEAT_SAMPLE_TIME) && b->data && b->size >= 16) {
			first = pfc_ld64(b->data, s->rd.swap);
			last = pfc_ld64(b->data + 8, s->rd.swap);
		}
		int ret = pfc_filter_resolve_time(f, first, last, s->err);
		if (ret < 0)
			return ret;
	}
	if (!any_time && !pfc_filter_time_keep(f, t))
		return 0;
	return pfc_filter_thread_keep(f, th->pid, th->tid, pfc_intern_str(&s->strings, th->comm));
}

static int counter_used(const void *slot, void *ctx)
{
	(void)ctx;
	return ((const struct pfc_counter_last *)slot)->key != 0;
}

static uint64_t counter_hash(const void *slot, void *ctx)
{
	(void)ctx;
	return ((const struct pfc_counter_last *)slot)->key * 0x9e3779b97f4a7c15ULL;
}

static const struct pfc_hashtab_ops counter_ops = {
	.slot_size = sizeof(struct pfc_counter_last), .first_cap = 64, .used = counter_used, .hash = counter_hash,
};

/* The slot of a counter id's last value (perf's sid->period), created at 0. */
static uint64_t *read_last(struct pfc_session *s, uint64_t id)
{
	struct pfc_sample_state *ss = &s->samples;
	size_t j;

	if (id == UINT64_MAX)	/* its key, id + 1, would be the empty slot's */
		return &ss->counter_max_id_value;
	if (pfc_hashtab_full(ss->nr_counters, ss->counters_cap) &&
	    pfc_hashtab_grow(&ss->counters, &ss->counters_cap, &counter_ops, NULL) < 0)
		return NULL;
	for (j = pfc_hashtab_start((id + 1) * 0x9e3779b97f4a7c15ULL, ss->counters_cap); ss->counters[j].key;
	     j = pfc_hashtab_next(j, ss->counters_cap))
		if (ss->counters[j].key == id + 1)
			return &ss->counters[j].value;
	ss->counters[j].key = id + 1;
	ss->counters[j].value = 0;
	ss->nr_counters++;
	return &ss->counters[j].value;
}

/*
 * Most samples of a recording repeat a callchain already seen in the same thread and maps,
 * and only count there.  Such a sample is looked up straight from its record, through the
 * event's fixed layout, before it is decoded: 1 when it was counted (what deliver_sample
 * does with a cache hit, when no filter, off-CPU time or sample stream needs it), 0 when it
 * must be decoded and delivered, negative on error.
 */
int pfc_sample_cached(struct pfc_session *s, struct pfc_evsel *ev, const uint8_t *data, uint32_t size)
{
	const uint8_t *b = data + 8;
	uint32_t len = size - 8;
	int swap = s->rd.swap;
	uint64_t nr, hash, period;
	int32_t pid, tid;
	struct pfc_thread *th;
	struct pfc_chainkey *e;

	if (!s->chains.cap || len < (uint32_t)ev->cc_off + 8)
		return 0;
	nr = pfc_ld64(b + ev->cc_off, swap);
	if (nr > (len - ev->cc_off - 8) / 8)
		return 0;
	pid = (int32_t)pfc_ld32(b + ev->tid_off, swap);
	tid = (int32_t)pfc_ld32(b + ev->tid_off + 4, swap);
	if (!(th = pfc_machine_findnew_thread(&s->machine, pid, tid)))
		return PFC_FAIL_NOOFF(s->err, NOMEM, "thread");
	e = pfc_chaincache_find(&s->chains, th, s->machine.kgen, (uint32_t)ev->idx, pid, tid, b + ev->cc_off + 8,
				(uint32_t)nr, &hash);
	if (!e)
		return 0;
	s->st.nr_samples++;
	ev->nr_samples++;
	th->nr_samples++;
	count_order(s, ev);
	if (ev->period_off != PFC_NO_FIELD)
		period = pfc_ld64(b + ev->period_off, swap) ? pfc_ld64(b + ev->period_off, swap) : 1;
	else
		period = !ev->attr.freq && ev->attr.sample_period ? ev->attr.sample_period : 1;
	s->callchain.have_time = ev->time_off != PFC_NO_FIELD;
	s->callchain.time = s->callchain.have_time ? pfc_ld64(b + ev->time_off, swap) : 0;
	s->callchain.timed = 0;
	pfc_chaincache_count(&s->chains, ev, e, period);
	if (s->opts->keep_times &&
	    pfc_times_add(&s->times, s->callchain.time, s->callchain.have_time, period, e->stack) < 0)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "sample times");
	return 1;
}

/* A sample counted in stack: into the stream and the times, for the writers that asked. */
static int keep(struct pfc_session *s, const struct pfc_sample *smp, uint32_t stack, uint64_t period)
{
	if (s->opts->keep_times &&
	    pfc_times_add(&s->times, smp->time, !!(smp->flags & PFC_S_HAS_TIME), period, stack) < 0)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "sample times");
	return s->opts->keep_stream ? keep_sample(s, smp, stack) : 0;
}

/* One sample, of event ev, into the aggregate and the stream. */
static int deliver_sample(struct pfc_session *s, struct pfc_evsel *ev, const struct pfc_sample *smp)
{
	struct pfc_thread *th;
	uint32_t n = 0;
	int ret, cacheable, lbr;
	uint64_t period, chainhash = 0;
	uint32_t stack;
	struct pfc_chainkey key;
	unsigned oc_start = 0;

	s->st.nr_samples++;	/* a group read's record counts once per sample it delivers */
	ev->nr_samples++;
	th = pfc_machine_findnew_thread(&s->machine, (int32_t)smp->pid, (int32_t)smp->tid);
	if (!th)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "thread");
	th->nr_samples++;	/* what a filter that keeps nothing names instead (cli/present.c) */
	/* off-CPU intervals end on any sign that the thread runs, filtered or not */
	if (s->offcpu && (ret = pfc_offcpu_sample(s, ev, smp, &oc_start)) < 0)
		return ret;
	/* a sample that starts an off-CPU interval before the --time window is kept: offcpu.c
	 * counts the part of the interval inside the window */
	if (s->opts->filter && (ret = filter_sample(s, smp, th, oc_start != 0)) <= 0) {
		if (ret == 0)
			s->st.nr_samples_filtered++;
		return ret;
	}
	/* --alloc and --during gc: the runtime's events say which samples stay (evsample.c);
	 * -f runtime counts them beside the events first */
	if (s->evs.counting)
		pfc_evsample_count(s, smp);
	if (s->evs.filtering && !pfc_evsample_keep(s, smp)) {
		s->st.nr_samples_filtered++;
		return 0;
	}
	count_order(s, ev);
	/* without PERF_SAMPLE_PERIOD (perf record -c N) every sample stands for the fixed period,
	 * which perf script prints and stackcollapse-perf.pl sums */
	if (smp->flags & PFC_S_HAS_PERIOD)
		period = smp->period ? smp->period : 1;
	else
		period = !ev->attr.freq && ev->attr.sample_period ? ev->attr.sample_period : 1;
	s->callchain.time = smp->time;
	s->callchain.have_time = !!(smp->flags & PFC_S_HAS_TIME);
	s->callchain.timed = 0;
	/* perf-compat, an LBR call stack (--call-graph lbr): perf's user part of the stack is
	 * the branch entries' (resolve_lbr_callchain_sample, callee order): the first entry's
	 * target, then every entry's source, looked up as user addresses.  A sample without
	 * entries keeps its callchain: there perf reads the first entry past the sample's end. */
	lbr = s->opts->perf_compat && (ev->branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK) &&
	      (ev->sample_type & PERF_SAMPLE_BRANCH_STACK) && smp->branch && smp->branch_nr &&
	      !(ev->branch_sample_type & (1U << 19));	/* PERF_SAMPLE_BRANCH_COUNTERS: another layout */
	cacheable = (smp->flags & PFC_S_HAS_CALLCHAIN) && !(ev->sample_type & PERF_SAMPLE_STACK_USER) &&
		    smp->callchain_nr <= UINT32_MAX && !lbr;
	if (cacheable) {
		struct pfc_chainkey *e = pfc_chaincache_find(&s->chains, th, s->machine.kgen, (uint32_t)ev->idx,
							     (int32_t)smp->pid, (int32_t)smp->tid, smp->callchain,
							     (uint32_t)smp->callchain_nr, &chainhash);
		if (e) {
			pfc_chaincache_count(&s->chains, ev, e, period);
			if (oc_start && (ret = pfc_offcpu_start(s, smp, e->stack, oc_start)) < 0)
				return ret;
			return keep(s, smp, e->stack, period);
		}
	}
	if ((ret = pfc_callchain_sample(s, ev, th, smp, lbr, &n)) < 0)
		return ret;
	s->st.nr_frames += n;
	ev->period_total += period;
	stack = pfc_stacks_add(&s->stacks, (uint32_t)ev->idx, th->comm, (int32_t)smp->pid, (int32_t)smp->tid,
			       s->callchain.frames, n, period);
	if (stack == UINT32_MAX)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "stack table");
	/* the kernel map may change while frames are resolved: cache only afterwards; a
	 * chain whose JIT names depended on the time is never reused */
	if (cacheable && !s->callchain.timed) {
		pfc_chaincache_key(&key, th, s->machine.kgen, (uint32_t)ev->idx, (int32_t)smp->pid, (int32_t)smp->tid,
				   (uint32_t)smp->callchain_nr);
		if (pfc_chaincache_insert(&s->chains, chainhash, &key, smp->callchain, stack) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "callchain cache");
	}
	if (oc_start && (ret = pfc_offcpu_start(s, smp, stack, oc_start)) < 0)
		return ret;
	return keep(s, smp, stack, period);
}

/*
 * A sample that perf did not record: an allocation event of the runtime (evsample.c), with
 * leaf, a frame that names what it stands for, below it the frames of smp's callchain, looked
 * up in th's maps at smp's time as a perf sample's are.  Weighted by smp's period.
 */
int pfc_sample_synthetic(struct pfc_session *s, struct pfc_evsel *ev, struct pfc_thread *th,
			 const struct pfc_sample *smp, uint32_t leaf)
{
	uint32_t n = 0, stack;
	int ret;

	s->st.nr_samples++;
	ev->nr_samples++;
	count_order(s, ev);
	s->callchain.time = smp->time;
	s->callchain.have_time = 1;
	s->callchain.timed = 0;
	if ((ret = pfc_callchain_push(s, &n, leaf)) < 0 || (ret = pfc_callchain_sample(s, ev, th, smp, 0, &n)) < 0)
		return ret;
	s->st.nr_frames += n;
	ev->period_total += smp->period;
	stack = pfc_stacks_add(&s->stacks, (uint32_t)ev->idx, th->comm, (int32_t)smp->pid, (int32_t)smp->tid,
			       s->callchain.frames, n, smp->period);
	if (stack == UINT32_MAX)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "stack table");
	return s->opts->keep_stream ? keep_sample(s, smp, stack) : 0;
}

/*
 * perf's evlist__deliver_sample: a sample with PERF_SAMPLE_READ (a group read with
 * `-e '{a,b}:S'`, or --sample-read) is delivered once per counter value it carries, to
 * the event that counter's id belongs to, with the period the counter advanced since its
 * last value in a sample (deliver_sample_value); a counter that did not advance, or whose
 * id is unknown, gives no sample.  The callchain, time, thread and cpu are the record's.
 * So perf script prints one sample per member, and folded stacks count each event as
 * perf script | stackcollapse-perf.pl does: the first event seen, or --event's.
 */
int pfc_sample_process(struct pfc_session *s, struct pfc_evsel *ev, const uint8_t *data, uint32_t size,
			  uint64_t off)
{
	struct pfc_sample smp;
	int swap = s->rd.swap, ret;
	uint64_t i;

	ret = pfc_sample_parse(ev, data + 8, size - 8, swap, off, &smp, s->err);
	if (ret < 0)
		return ret;
	smp.misc = pfc_ld16(data + 4, swap);
	if (!(smp.flags & PFC_S_HAS_READ))
		return deliver_sample(s, ev, &smp);
	for (i = 0; i < smp.read_nr; i++) {
		const uint8_t *v = smp.read_values + i * smp.read_stride * 8;
		uint64_t value = pfc_ld64(v, swap);
		uint64_t id = smp.read_id_off ? pfc_ld64(v + smp.read_id_off * 8, swap) : 0;
		struct pfc_evsel *mev = smp.read_id_off ? pfc_reader_find_id(&s->rd, id) : NULL;
		uint64_t *last;
		struct pfc_sample one;

		if (!mev)
			continue;
		if (!(last = read_last(s, id)))
			return PFC_FAIL_NOOFF(s->err, NOMEM, "sample read values");
		one = smp;
		one.evsel = mev;
		one.id = id;
		one.period = value - *last;
		one.flags |= PFC_S_HAS_PERIOD | PFC_S_HAS_ID;
		*last = value;
		if (!one.period)
			continue;
		if ((ret = deliver_sample(s, mev, &one)) < 0)
			return ret;
	}
	return 0;
}

int pfc_sample_evsels(struct pfc_session *s, size_t nr)
{
	struct pfc_sample_state *ss = &s->samples;
	uint64_t *v;

	if (nr <= ss->nr_evsel_first)
		return 0;
	if (!(v = realloc(ss->evsel_first_seq, nr * sizeof(*v))))
		return -1;
	while (ss->nr_evsel_first < nr)
		v[ss->nr_evsel_first++] = UINT64_MAX;
	ss->evsel_first_seq = v;
	return 0;
}

uint64_t pfc_session_evsel_first(const struct pfc_session *s, size_t idx)
{
	if (idx >= s->samples.nr_evsel_first)
		return UINT64_MAX;
	return s->samples.evsel_first_seq[idx];
}

void pfc_sample_exit(struct pfc_session *s)
{
	free(s->samples.evsel_first_seq);
	free(s->samples.counters);
	memset(&s->samples, 0, sizeof(s->samples));
}
