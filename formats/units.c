/*
 * units.c - what a profile's weights measure and how a person reads them.  A clock event's
 * period is nanoseconds, so a profile of cpu-clock weighs 5.9 s as 5914000000: written as
 * "samples" that reads as six billion samples.  It owns the rule (which weights are time)
 * and the text; each writer decides where the text goes, and the texts that other tools'
 * output fixes (flamegraph.pl's titles) are left to the writers.
 */
#include <string.h>
#include "formats/units.h"

int pfc_units_clock_event(const struct pfc_evsel *ev)
{
	return ev->attr.type == PERF_TYPE_SOFTWARE &&
	       (ev->attr.config == PERF_COUNT_SW_CPU_CLOCK || ev->attr.config == PERF_COUNT_SW_TASK_CLOCK);
}

void pfc_units_of(struct pfc_session *s, const struct pfc_wopts *o, struct pfc_units *u)
{
	uint64_t best = UINT64_MAX;
	size_t i, ev = SIZE_MAX;

	memset(u, 0, sizeof(*u));
	if (s->offcpu) {
		u->time = 1;
		u->what = pfc_offcpu_thread_time(s->offcpu) ? "thread time" : "off-CPU time";
		for (i = 0; i < s->stacks.nr_stacks; i++) {
			const struct pfc_stack *st = &s->stacks.stacks[i];
			if (st->period && pfc_offcpu_in_profile(s->offcpu, st->evsel))
				u->samples += st->count;
		}
		return;
	}
	/* the folded writer's event: --event's, else the first sampled */
	for (i = 0; i < s->rd.nr_evsels; i++) {
		uint64_t first = pfc_session_evsel_first(s, i);
		if (o->event ? !strcmp(o->event, pfc_session_evsel_name(s, i)) : first < best) {
			ev = i;
			best = first;
			if (o->event)
				break;
		}
	}
	if (ev == SIZE_MAX)
		return;
	u->what = pfc_session_evsel_name(s, ev);
	u->time = pfc_units_clock_event(s->rd.evsels[ev]);
	for (i = 0; i < s->stacks.nr_stacks; i++)
		if (s->stacks.stacks[i].evsel == ev)
			u->samples += s->stacks.stacks[i].count;
}

void pfc_units_put(FILE *out, const struct pfc_units *u, uint64_t weight)
{
	double ns = (double)weight;

	if (u->time && weight >= 1000000000ULL)
		fprintf(out, "%.3f s", ns / 1e9);
	else if (u->time && weight >= 1000000ULL)
		fprintf(out, "%.3f ms", ns / 1e6);
	else if (u->time)
		fprintf(out, "%llu ns", (unsigned long long)weight);
	else if (u->what && weight != u->samples)
		fprintf(out, "%llu %s", (unsigned long long)weight, u->what);
	else
		fprintf(out, "%llu samples", (unsigned long long)weight);
	if (u->time)
		fprintf(out, " of %s", u->what);
	if (u->time || (u->what && weight != u->samples))
		fprintf(out, " in %llu sample%s", (unsigned long long)u->samples, u->samples == 1 ? "" : "s");
}
