/*
 * evsample.h - the .NET runtime's events in the conversion (evsample.c): the event streams
 * loaded once for the session (--events, or a pack's), each laid on its process of the
 * recording, the samples --during gc keeps, and --alloc's allocation events fed in as samples
 * of their process at their time, so that every writer reads them as it reads perf's.
 * Reading the streams is converter/events/'s; the runtime report's text is formats/runtime.c's.
 */
#ifndef PFC_EVSAMPLE_H
#define PFC_EVSAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include "converter/events/events.h"

struct pfc_session;
struct pfc_dso;
struct pfc_thread;
struct pfc_sample;
struct pfc_evsel;

/* An exception thrown (-f runtime): its stream, its type (an offset in the stream's names)
 * and the top frames of its stack, named once the session is symbolized: the first of them
 * outside the runtime's own exception dispatch is the method that threw it. */
#define PFC_EVS_THROW_FRAMES 6
struct pfc_evsample_throw {
	uint32_t file, type;
	uint32_t nr;                 /* frames of the stack's top kept, leaf first */
	uint32_t frames[PFC_EVS_THROW_FRAMES];
};

/* What the recording holds of a stream's process (-f runtime): its samples, those taken in a
 * GC pause, the first and last sample's time. */
struct pfc_evsample_proc {
	uint64_t samples, paused, first, last;
};

struct pfc_evsample {
	struct pfc_events events;    /* the streams, one a process */
	int32_t *pids;               /* each stream's process in the recording (--pid-map applied) */
	size_t *next;                /* --alloc: each stream's next allocation to feed */
	size_t *next_throw;          /* -f runtime: each stream's next exception to look up */
	int feeding;                 /* --alloc, -f runtime: events wait to be fed in time order */
	int throwing;                /* -f runtime: the frames that throw, in throws */
	int counting;                /* -f runtime: each process's samples, in procs */
	struct pfc_evsample_proc *procs;  /* one a stream */
	struct pfc_evsample_throw *throws;
	size_t nr_throws, cap_throws;
	int filtering;               /* --alloc or --during gc: perf's samples are not all kept */
	int mono;                    /* the samples' times are on CLOCK_MONOTONIC (perf record -k mono) */
	int marking;                 /* opts->runtime_marks, on one clock: the streams' GCs, exceptions and JIT */
	int started;                 /* pfc_evsample_start ran (a pipe's events come as records) */
	struct pfc_evsel *ev;        /* the event allocations are counted as */
	const struct pfc_dso ***jit; /* by stream and method: the code load a frame there became */
};

/* Load the streams (opts->events, else the pack's) once the input is open.  An unreadable
 * stream is an error naming it. */
int pfc_evsample_open(struct pfc_session *s);
/* Once the events are known, before the first record they concern (a file's at once, a pipe's
 * at its first record after them): the clock check (--during gc needs perf record -k mono). */
int pfc_evsample_start(struct pfc_session *s);
/* --alloc: feed the allocations before time t (a record's), and all the rest at the end
 * (t = UINT64_MAX), then warn about streams whose process the recording does not have. */
int pfc_evsample_until(struct pfc_session *s, uint64_t t);
int pfc_evsample_finish(struct pfc_session *s);
/* -f runtime: count perf's sample smp for its process's stream, if it has one. */
void pfc_evsample_count(struct pfc_session *s, const struct pfc_sample *smp);
/* Whether perf's sample smp stays (--alloc drops them all, --during gc those outside a pause). */
int pfc_evsample_keep(struct pfc_session *s, const struct pfc_sample *smp);
void pfc_evsample_exit(struct pfc_session *s);
/* The thread of the recording that an event of stream i on OS thread tid ran on, NULL when the
 * recording has none by that tid in the stream's process (or --pid-map moved it: its tids are
 * the namespace's). */
const struct pfc_thread *pfc_evsample_thread(struct pfc_session *s, size_t i, uint64_t tid);

/* The JIT'd method of the runtime's events of pid (its stream, read for its methods when a
 * frame first asks) whose code holds ip: 1 and *dso, a code load of that method (a JITCODE dso,
 * as a jitdump's), 0 when none names it, or an error. */
int pfc_evsample_jit(struct pfc_session *s, int32_t pid, uint64_t ip, const struct pfc_dso **dso);

#endif
