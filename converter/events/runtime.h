/*
 * runtime.h - what one process's runtime events add up to, for the runtime report: GCs by
 * generation and reason, their pauses, bytes allocated by type, heap sizes after each GC, JIT
 * work, exceptions by type, and how whole the stream was.  It reads a .nettrace through
 * nettrace.c and clrevents.c; the text is formats/runtime.c's, and perf.data is not its concern.
 */
#ifndef PFC_RUNTIME_H
#define PFC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include "converter/events/clrevents.h"
#include "converter/events/nettrace.h"

#define PFC_RT_GENS 3                /* generations 0-2; a depth above is counted with 2 */
#define PFC_RT_REASONS 16            /* GCStart reasons 0-15 (GCReason of the manifest) */
/* .NET 10's allocation sampling takes a sample every 100 KiB on average
 * (RandomizedAllocationSampling.md): what one AllocationSampled stands for */
#define PFC_RT_ALLOC_SAMPLE_BYTES 102400

/* A name (allocated type, exception type) and what it adds up to. */
struct pfc_rt_named {
	char *name;
	uint64_t n, bytes;
};

struct pfc_rt_names {
	struct pfc_rt_named *v;
	size_t n, cap;
};

struct pfc_rt_jit_pending;

#define PFC_RT_SLOWEST 5             /* the slowest compilations the report names */

struct pfc_runtime {
	struct pfc_nettrace_trace trace;
	struct pfc_nettrace_stats stream;
	int rundown_complete;        /* DCEndComplete seen: every method of the process was named */
	uint64_t first_ts, last_ts;  /* of the events: the span the rates and shares are of */
	/* GCs */
	uint64_t gcs, gcs_by_gen[PFC_RT_GENS], gcs_by_reason[PFC_RT_REASONS], gcs_other_reason;
	uint64_t induced, induced_by_gen[PFC_RT_GENS];  /* GC.Collect's: reasons Induced, InducedNotForced,
							 * InducedLowMemory, InducedCompacting */
	uint64_t *pauses;            /* ns of each pause, GCSuspendEEBegin to GCRestartEEEnd */
	size_t nr_pauses, cap_pauses;
	uint64_t pause_total, pause_max;
	uint64_t suspend_ts;         /* the open suspension, 0 when none */
	uint64_t heap_after[5];      /* gen 0-2, LOH, POH after the last GC (GCHeapStats) */
	uint64_t heap_max;           /* the largest total after a GC */
	/* allocations: GCAllocationTick amounts, or AllocationSampled counts */
	uint64_t alloc_ticks, alloc_tick_bytes;
	uint64_t alloc_samples;
	struct pfc_rt_names alloc_types;
	/* JIT */
	uint64_t jit_methods, jit_done, jit_ns;
	struct pfc_rt_named slowest[PFC_RT_SLOWEST];  /* bytes: ns compiling; slowest first */
	size_t nr_slowest;
	struct pfc_rt_jit_pending *jit_pending;
	size_t nr_jit_pending, cap_jit_pending;
	/* exceptions */
	uint64_t exceptions, catches;
	struct pfc_rt_names exception_types;
	/* events the stream held that this report does not use, and payloads refused */
	uint64_t other_events, bad_payloads;
	/* the decoded event, reused (large string buffers: not on the stack) */
	struct pfc_clr_event ce;
	struct pfc_error payload_err;
	struct pfc_events_file *window;  /* pfc_runtime_read_file: the stream whose read pages go back */
};

/* Read the nettrace in buf and add up its events into rt.  0, or a negative error with its
 * offset in err (a stream cut short is not an error: rt->stream says so).  pfc_runtime_free
 * releases rt, also after a failure. */
int pfc_runtime_read(struct pfc_runtime *rt, const uint8_t *buf, size_t len, struct pfc_error *err);
/* The same for a mapped stream (events.h), whose pages behind the read are given back as it
 * goes (pfc_events_release): the report of an hour's stream costs a window of it. */
struct pfc_events_file;
int pfc_runtime_read_file(struct pfc_runtime *rt, struct pfc_events_file *f, struct pfc_error *err);
void pfc_runtime_free(struct pfc_runtime *rt);

/* The manifest's name of a GCStart reason ("AllocSmall", "Induced", ...), NULL when unknown. */
const char *pfc_runtime_gc_reason(uint32_t reason);

/* The pause of rank p (0-100) by the nearest-rank rule, over the sorted pauses; 0 when none. */
uint64_t pfc_runtime_pause_pct(const struct pfc_runtime *rt, unsigned p);

#endif
