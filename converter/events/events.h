/*
 * events.h - the .NET runtime's event streams one conversion was given (--events FILE, or the
 * ones a pack carries): each .nettrace mapped once, with its process id and what the
 * conversion's own uses need of it, gathered in one streamed pass: the GC pauses (--during gc)
 * and, only when asked, the allocation events with their stacks (--alloc), the exceptions
 * (-f runtime, -f firefox) and each GC and JIT compilation with its times (-f firefox's markers).
 * The runtime report and trace.zip's CTF read the mappings again themselves; perf.data, threads
 * and symbols are not its concern.
 */
#ifndef PFC_EVENTS_H
#define PFC_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include "converter/events/nettrace.h"

/* what pfc_events_add keeps beyond the pid and the pauses */
enum {
	PFC_EVENTS_ALLOCS = 1 << 0,  /* the allocation events (--alloc) */
	PFC_EVENTS_THROWS = 1 << 1,  /* the exceptions thrown, for the frames that throw them (-f runtime) */
	PFC_EVENTS_MARKS = 1 << 2,   /* each pause's GC and the methods jitted, for a timeline (-f firefox) */
	PFC_EVENTS_HEADER = 1 << 3,  /* only the Trace object (pid, clock, CPUs): no event is read, no
				      * pause kept; for outputs that read the whole stream themselves */
	PFC_EVENTS_METHODS = 1 << 4, /* only the JIT'd methods' code and names (pfc_events_methods) */
};

/* A pause of the process's threads for a GC: GCSuspendEEBegin to GCRestartEEEnd, in ns of
 * CLOCK_MONOTONIC (the stream's QPC on Linux). */
struct pfc_events_pause {
	uint64_t begin, end;
};

/* A pause as a timeline draws it (PFC_EVENTS_MARKS): its times as in pauses, but never merged,
 * and what the GCStart inside it said (ran: one did) and the GCHeapStats after it (heap: one
 * came before the threads restarted): the sizes of generations 0-2, LOH and POH. */
struct pfc_events_gc {
	uint64_t begin, end;
	uint32_t count, depth, reason;
	uint8_t ran, heap;
	uint64_t gen_size[5];
};

/* A method jitted (PFC_EVENTS_MARKS): MethodJittingStarted to the MethodLoadVerbose of the same
 * method id on the same thread, named "namespace.name" (an offset in pfc_events_file.names). */
struct pfc_events_jit {
	uint64_t begin, end, tid;
	uint32_t name;
};

/* One allocation event: a GCAllocationTick (bytes: its amount) or an AllocationSampled
 * (bytes: the sampling's mean distance), its type and managed stack, leaf first.  An
 * ExceptionThrown is kept the same way, its type the exception's and bytes 1. */
struct pfc_events_alloc {
	uint64_t ts, tid, bytes;
	uint32_t type;               /* offset of its type name in pfc_events_file.names */
	uint32_t msg;                /* an exception's message, when PFC_EVENTS_MARKS (else type's "") */
	uint32_t nr_ips;
	size_t ips;                  /* index of its first IP in pfc_events_file.ips */
};

/* A JIT'd method's code, from the stream's MethodLoadVerbose and the rundown's
 * MethodDCEndVerbose (pfc_events_methods), named as the runtime writes it into a perf map:
 * "RET [Assembly] Namespace.Type::Method(PARAMS)" (an offset in pfc_events_file.names; no
 * [Assembly] when the stream has no rundown, no tier tag). */
struct pfc_events_method {
	uint64_t start;
	uint32_t size;
	uint32_t name;
	uint64_t module_id;          /* while the stream is read */
	uint32_t seq;                /* the order it came in: a later one over the same code wins */
};

struct pfc_events_file {
	char *name;                  /* the path given, or the name the file had where a pack was made */
	const uint8_t *buf;          /* its bytes (mapped, or a pack member's: see owned) */
	size_t len;
	int mapped;                  /* buf is our mapping, unmapped by pfc_events_free */
	uint64_t released;           /* its pages before this offset were given back (pfc_events_release) */
	struct pfc_nettrace_trace trace;  /* pid, clock frequency, pointer size */
	int have_trace;              /* the stream had its Trace object */
	struct pfc_nettrace_stats stream;
	struct pfc_events_pause *pauses;  /* sorted by begin, apart */
	size_t nr_pauses, cap_pauses;
	struct pfc_events_alloc *allocs;  /* sorted by time */
	size_t nr_allocs, cap_allocs;
	struct pfc_events_alloc *throws;  /* the exceptions thrown, sorted by time */
	size_t nr_throws, cap_throws;
	struct pfc_events_gc *gcs;   /* PFC_EVENTS_MARKS: every pause, in stream order */
	size_t nr_gcs, cap_gcs;
	struct pfc_events_jit *jits; /* PFC_EVENTS_MARKS: sorted by begin */
	size_t nr_jits, cap_jits;
	uint64_t *ips;
	size_t nr_ips, cap_ips;
	char *names;                 /* type, message and method names, each NUL-terminated */
	size_t names_len, names_cap;
	/* pfc_events_methods: read once, sorted by start */
	struct pfc_events_method *methods;
	size_t nr_methods, cap_methods;
	int methods_read;
};

struct pfc_events {
	struct pfc_events_file *v;
	size_t n, cap;
};

/* Map the nettrace at path (name: what messages and packs call it; NULL: path) and read it
 * once, keeping the pid, the pauses and what want (PFC_EVENTS_*) asks for.  0, or a negative
 * error with err's file and offset set.  buf != NULL: read those bytes instead, which stay
 * the caller's (a pack member). */
int pfc_events_add(struct pfc_events *e, const char *path, const char *name, const uint8_t *buf, size_t len,
		   unsigned want, struct pfc_error *err);
/* A reader of f's bytes is past off: its mapping's pages well before it may leave memory (they
 * are read from the file again if touched), so that reading a stream costs a window of it,
 * not its size.  Nothing for bytes that are not our mapping (a pack member). */
void pfc_events_release(struct pfc_events_file *f, uint64_t off);
/* Whether pid's threads were paused for a GC at time t (ns), by the pauses of file f. */
int pfc_events_paused(const struct pfc_events_file *f, uint64_t t);
void pfc_events_free(struct pfc_events *e);

/* The JIT'd methods of f's stream, read once, in a pass of their own, when a frame first asks:
 * a name source for the process's JIT code that perf maps and jitdumps leave unnamed.  0, or a
 * negative error (the stream cannot be read; what was read before the error is kept). */
int pfc_events_methods(struct pfc_events_file *f, struct pfc_error *err);

/* The method whose code holds addr (its name at f->names + name), or NULL. */
const struct pfc_events_method *pfc_events_method_at(const struct pfc_events_file *f, uint64_t addr);

#endif
