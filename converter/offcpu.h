/*
 * offcpu.h - off-CPU time from sched:sched_switch recordings (--off-cpu, --thread-time).
 * A thread that switches out asleep starts an interval with the callchain of that sample;
 * the interval ends when the thread is seen running again.  Intervals are added to the
 * session's aggregated stacks, weighted in nanoseconds, so every aggregating writer shows
 * them.  It owns the interval state and the reading of sched_switch payloads; the session
 * calls it from its record handlers.
 */
#ifndef PFC_OFFCPU_H
#define PFC_OFFCPU_H

#include <stdint.h>
#include "converter/perffile/tpformat.h"

enum { PFC_OFFCPU_NONE, PFC_OFFCPU_BLOCKED, PFC_OFFCPU_ALL };

/* How an interval ended (the issue's rule, in order of preference). */
enum { PFC_OC_END_SWITCH_IN, PFC_OC_END_SAMPLE, PFC_OC_END_EXIT, PFC_OC_END_RECORDING, PFC_OC_END__MAX };

struct pfc_offcpu_stats {
	uint64_t nr_switch_samples;      /* sched_switch samples seen */
	uint64_t nr_intervals, ns;       /* intervals counted and their total */
	uint64_t nr_by_end[PFC_OC_END__MAX], ns_by_end[PFC_OC_END__MAX];
	uint64_t nr_runnable;            /* switched out runnable (preempted): left out unless =all */
	uint64_t nr_dead;                /* switched out dead (X, Z): nothing to wait for */
	uint64_t nr_no_time;             /* samples or records without a time stamp */
	uint64_t nr_clock_samples;       /* --thread-time: on-CPU samples of cpu-clock/task-clock */
	uint64_t nr_switch_records;      /* switch-ins of PERF_RECORD_SWITCH (--switch-events) */
};

/* How the recording's own sched_switch format lays out its payload. */
struct pfc_switch_fmt {
	uint64_t id;                     /* tracepoint id (attr.config) */
	struct pfc_tpfield prev_pid, prev_state, next_pid;
	uint64_t state_mask;             /* prev_state bits that name a state (the rest: R) */
	uint64_t preempt_bit;            /* the "R+" bit, 0 when the format has none */
	struct { uint64_t bit; char name[8]; } states[32];
	unsigned nr_states;
};

/* Read a sched_switch format (fields and print fmt).  Returns 0, or -1 with *why. */
int pfc_offcpu_switch_fmt(const struct pfc_tpformat *f, struct pfc_switch_fmt *out, const char **why);
/* The state of a prev_state value: 0 for R, 1 + index into states[] otherwise. */
unsigned pfc_offcpu_state(const struct pfc_switch_fmt *f, uint64_t prev_state);
/* Its name ("R", "S", "D", ...). */
const char *pfc_offcpu_state_name(const struct pfc_switch_fmt *f, unsigned state);

struct pfc_session;
struct pfc_evsel;
struct pfc_sample;
struct pfc_offcpu;

struct pfc_offcpu *pfc_offcpu_new(int mode, int thread_time);
void pfc_offcpu_free(struct pfc_offcpu *oc);
const struct pfc_offcpu_stats *pfc_offcpu_stats(const struct pfc_offcpu *oc);
/* Whether stacks of this event are part of the time profile (the writers' filter). */
int pfc_offcpu_in_profile(const struct pfc_offcpu *oc, uint32_t evsel);
int pfc_offcpu_thread_time(const struct pfc_offcpu *oc);

/* A sample, before the filters: ends the interval of its thread (and, for a sched_switch,
 * of the thread switched in).  *start is set to 1 + the state when this sample starts an
 * interval, then pfc_offcpu_start is called with its stack if the filters keep it. */
int pfc_offcpu_sample(struct pfc_session *s, struct pfc_evsel *ev, const struct pfc_sample *smp, unsigned *start);
int pfc_offcpu_start(struct pfc_session *s, const struct pfc_sample *smp, uint32_t stack, unsigned start);
/* PERF_RECORD_SWITCH(_CPU_WIDE) switch-in and EXIT records of thread tid at time t. */
void pfc_offcpu_switch_in(struct pfc_session *s, int32_t tid, uint64_t t);
void pfc_offcpu_exit(struct pfc_session *s, int32_t tid, uint64_t t);
/* After the last record (and after the callchain cache was settled): end the open
 * intervals at the end of the recording and put the weights into the stacks, adding the
 * frames of the samples they stand for to *nr_frames. */
int pfc_offcpu_finish(struct pfc_session *s, uint64_t *nr_frames);

#endif
