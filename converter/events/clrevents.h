/*
 * clrevents.h - the payloads of the .NET runtime's own events (providers
 * Microsoft-Windows-DotNETRuntime and its Rundown), decoded by event id and version from the
 * layouts of the runtime's manifest (ClrEtwAll.man): GCs, suspensions, allocation ticks and
 * samples, JIT, method and module rundown, exceptions.  It reads payloads the container reader
 * (nettrace.c) hands over; what the events add up to is the report's business, not this file's.
 */
#ifndef PFC_CLREVENTS_H
#define PFC_CLREVENTS_H

#include <stddef.h>
#include <stdint.h>
#include "converter/events/nettrace.h"

#define PFC_CLR_PROVIDER "Microsoft-Windows-DotNETRuntime"
#define PFC_CLR_RUNDOWN_PROVIDER "Microsoft-Windows-DotNETRuntimeRundown"

enum pfc_clr_kind {
	PFC_CLR_UNKNOWN = 0,         /* not decoded here: counted by (provider, id, version, name) */
	PFC_CLR_GC_START,
	PFC_CLR_GC_END,
	PFC_CLR_GC_HEAP_STATS,
	PFC_CLR_GC_SUSPEND_BEGIN,
	PFC_CLR_GC_SUSPEND_END,
	PFC_CLR_GC_RESTART_BEGIN,
	PFC_CLR_GC_RESTART_END,
	PFC_CLR_GC_TRIGGERED,
	PFC_CLR_GC_ALLOC_TICK,
	PFC_CLR_ALLOC_SAMPLED,       /* .NET 10's randomized allocation sampling */
	PFC_CLR_JIT_START,
	PFC_CLR_METHOD_LOAD,         /* MethodLoadVerbose */
	PFC_CLR_METHOD_DCEND,        /* rundown: MethodDCEndVerbose */
	PFC_CLR_MODULE_DCEND,        /* rundown: ModuleDCEnd */
	PFC_CLR_RUNDOWN_COMPLETE,    /* rundown: DCEndComplete, the last word of a whole rundown */
	PFC_CLR_EXC_THROWN,
	PFC_CLR_EXC_CATCH,
	PFC_CLR__NR
};

/* One decoded event.  A field the event's version does not carry is 0 or "".  Strings are
 * UTF-8, cut at a character boundary when longer than their buffer. */
struct pfc_clr_event {
	enum pfc_clr_kind kind;
	const char *name;            /* the manifest's name of the event ("GCStart", ...) */
	uint32_t version;
	uint16_t clr_instance;
	/* GCStart, GCEnd, GCSuspendEEBegin, GCTriggered */
	uint32_t count, depth, reason, type;
	uint64_t client_seq;
	/* GCHeapStats: generations 0-2, LOH (3), POH (4, V2) */
	uint64_t gen_size[5], promoted[5];
	uint64_t finalization_promoted_size, finalization_promoted_count;
	uint32_t pinned_objects, sink_blocks, gc_handles;
	/* GCAllocationTick, AllocationSampled */
	uint32_t alloc_amount, alloc_kind, heap_index;
	uint64_t alloc_amount64, type_id, address, object_size, sampled_offset;
	char type_name[512];
	/* MethodJittingStarted, MethodLoadVerbose, MethodDCEndVerbose, ExceptionCatchStart */
	uint64_t method_id, module_id, method_start, rejit_id, entry_eip;
	uint32_t method_size, method_token, method_flags, il_size;
	char method_namespace[1024], method_name[512], method_signature[512];
	/* ModuleDCEnd */
	uint64_t assembly_id;
	uint32_t module_flags;
	char il_path[1024], native_path[1024];
	/* ExceptionThrown */
	char exception_type[512], exception_message[1024];
	uint64_t exception_eip;
	uint32_t hresult;
	uint16_t exception_flags;
};

/* Decode ev's payload into out (which need not be cleared).  Returns the kind (PFC_CLR_UNKNOWN
 * for an event this file does not decode, also a known event of an older version than it
 * reads), or -PFC_ERR_CORRUPT when the payload is shorter than its layout, with the offset in
 * err.  pointer_size is the trace's (4 or 8). */
int pfc_clr_decode(const struct pfc_nettrace_event *ev, uint32_t pointer_size,
		   struct pfc_clr_event *out, struct pfc_error *err);

/* The kind pfc_clr_decode gives the events of metadata m, without a payload to read: a reader
 * that wants a few kinds decodes only theirs. */
enum pfc_clr_kind pfc_clr_kind(const struct pfc_nettrace_meta *m);

/* The name the manifest gives a runtime or rundown event id ("GCStart"), NULL for others. */
const char *pfc_clr_event_name(const char *provider, uint32_t event_id);

/* Counts of every event by (provider, event id, version), with the name the metadata or the
 * manifest gives: what was decoded and what was not, so that nothing is dropped unseen. */
struct pfc_clr_count {
	char *provider, *name;
	uint32_t event_id, version;
	int decoded;                 /* a kind this file decodes */
	uint64_t n;
	uint64_t bad;                /* payloads shorter than their layout */
};

struct pfc_clr_counts {
	struct pfc_clr_count *v;
	size_t n, cap;
};

/* Count ev (decoded as kind, or bad when its payload was refused).  -PFC_ERR_NOMEM on failure. */
int pfc_clr_counts_add(struct pfc_clr_counts *c, const struct pfc_nettrace_event *ev, int kind);
/* Sort by provider, event id, version (for printing). */
void pfc_clr_counts_sort(struct pfc_clr_counts *c);
void pfc_clr_counts_free(struct pfc_clr_counts *c);

#endif
