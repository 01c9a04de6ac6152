/*
 * nettrace.h - the reader of EventPipe's NetTrace container (.nettrace: what dotnet-trace and
 * every diagnostics client of .NET 5-10 write; format V4/V5 of perfview's NetTraceFormat_v5.md):
 * the Trace object, metadata, stacks, header-compressed event blobs, sequence points and the end
 * tag, streamed from memory to callbacks with no allocation per event.  It does not know what
 * any payload means (clrevents.c decodes the runtime's), nor does it sort events by time.
 */
#ifndef PFC_NETTRACE_H
#define PFC_NETTRACE_H

#include <stddef.h>
#include <stdint.h>
#include "converter/util/bytes.h"
#include "converter/util/error.h"

/* The Trace object: when and where the trace was taken. */
struct pfc_nettrace_trace {
	uint32_t version;            /* of the Trace type: 4 for NetTrace V4/V5 */
	uint16_t utc[8];             /* SyncTimeUTC: year, month, day of week, day, hour, minute, second, ms */
	uint64_t sync_qpc;           /* the QPC tick at SyncTimeUTC */
	uint64_t qpc_freq;           /* ticks per second (1e9 on Linux: CLOCK_MONOTONIC in ns) */
	uint32_t pointer_size, pid, nr_cpus, sampling_rate;
};

/* One metadata record: what the events of one metadata id are.  Names are UTF-8. */
struct pfc_nettrace_meta {
	uint32_t id;
	uint32_t event_id;
	uint32_t version, level;
	uint64_t keywords;
	int32_t opcode;              /* from the V5 OpCode tag, -1 when absent */
	const char *provider;        /* never NULL; "" when empty */
	const char *name;            /* "" for the runtime's own events: their names are in clrevents.c */
	uint32_t nr_fields;          /* V1 field descriptions (EventSource events; 0 for native ones) */
	const uint8_t *fields;       /* their bytes in the file, for a reader of self-described payloads */
	uint32_t fields_len;
	uint32_t v2_params;          /* the metadata has a V2Params tag (array-typed fields) */
};

/* One event, valid during the callback only.  Pointers point into the input. */
struct pfc_nettrace_event {
	const struct pfc_nettrace_meta *meta;   /* NULL when the id has no metadata (counted) */
	uint32_t meta_id;
	uint32_t seq;                /* sequence number on its capture thread */
	uint64_t thread_id, capture_thread_id;
	uint32_t processor;
	uint32_t stack_id;
	uint64_t timestamp;          /* QPC ticks (see pfc_nettrace_trace.qpc_freq) */
	uint8_t activity[16], related_activity[16];
	int sorted;                  /* every later event in the file has a timestamp >= this one */
	const uint8_t *payload;
	uint32_t payload_len;
	const uint8_t *stack;        /* the stack's IPs (pointer_size each); NULL when none or unknown */
	uint32_t nr_ips;
	uint64_t offset;             /* file offset of the event blob */
};

/* What the stream held, filled by pfc_nettrace_read. */
struct pfc_nettrace_stats {
	uint64_t nr_events, nr_metadata, nr_stacks, nr_seqpoints;
	uint64_t nr_event_blocks, nr_metadata_blocks, nr_stack_blocks;
	uint64_t nr_no_meta;         /* events whose metadata id was never defined */
	uint64_t nr_no_stack;        /* events naming a stack id no stack block gave */
	uint64_t nr_dropped;         /* events the sequence numbers say the runtime dropped */
	uint64_t min_ts, max_ts;     /* of the events */
	int complete;                /* the end tag was read */
	int truncated;               /* the stream stops inside an object (the session never ended) */
	uint64_t truncated_at;       /* offset of that object */
};

struct pfc_nettrace_ops {
	void *ctx;
	/* each may be NULL; a negative return stops the read and is returned */
	int (*trace)(void *ctx, const struct pfc_nettrace_trace *t);
	int (*meta)(void *ctx, const struct pfc_nettrace_meta *m);
	int (*event)(void *ctx, const struct pfc_nettrace_event *ev);
	int (*seqpoint)(void *ctx, uint64_t timestamp);
	/* the events' stacks are not wanted: stack blocks are checked and not kept, and every
	 * event's stack is NULL (a writer of payloads saves a lookup an event) */
	int no_stacks;
};

struct pfc_nettrace_stack_ent;
struct pfc_nettrace_thread_ent;

/* id -> index into one of the tables below: open addressing, grown at half full, so that ids in
 * any order cost the same (a hostile stream may send them backwards) */
struct pfc_nettrace_idmap {
	uint64_t *keys;
	uint32_t *vals;              /* index + 1; 0 = empty slot */
	size_t cap, n;
};

/* The reader's state: metadata (kept for the whole read), the stacks since the last sequence
 * point (a stack id is valid only until then, which bounds the table), the sequence numbers of
 * each capture thread. */
struct pfc_nettrace {
	struct pfc_nettrace_trace trace;
	struct pfc_nettrace_stats st;
	struct pfc_nettrace_meta *metas;   /* in the order they came */
	size_t nr_metas, cap_metas;
	struct pfc_nettrace_stack_ent *stacks;
	size_t nr_stacks, cap_stacks;
	struct pfc_nettrace_thread_ent *threads;
	size_t nr_threads, cap_threads;
	struct pfc_nettrace_idmap meta_ix, stack_ix, thread_ix;
	/* where a read in steps is */
	const uint8_t *base;
	struct pfc_cursor cur;
	const struct pfc_nettrace_ops *ops;
	struct pfc_error *err;
	int swap, seen_trace, done;
};

/* Read the whole stream in buf (a mapped file) and call ops for its parts in file order.
 * Returns 0 when the stream was read to its end tag or to a cut (st.truncated: what came
 * before the cut was delivered), or a negative error with the offset of the bad bytes in err.
 * pfc_nettrace_free releases nt (also after a failure). */
int pfc_nettrace_read(struct pfc_nettrace *nt, const uint8_t *buf, size_t len,
		      const struct pfc_nettrace_ops *ops, struct pfc_error *err);
void pfc_nettrace_free(struct pfc_nettrace *nt);

/* The same read in steps, for a reader that merges several streams: begin checks the header
 * (0, or a negative error), then each step reads one object (a block: its events go to ops)
 * and returns 1 while more may follow, 0 at the end (as pfc_nettrace_read returns), or a
 * negative error.  offset: where the next object starts. */
int pfc_nettrace_begin(struct pfc_nettrace *nt, const uint8_t *buf, size_t len,
		       const struct pfc_nettrace_ops *ops, struct pfc_error *err);
int pfc_nettrace_step(struct pfc_nettrace *nt);
uint64_t pfc_nettrace_offset(const struct pfc_nettrace *nt);

/* Whether buf starts like a nettrace stream. */
int pfc_nettrace_is(const uint8_t *buf, size_t len);

/* A NUL-terminated UTF-16LE string at the cursor, as UTF-8 into out[cap] (cut at a character
 * boundary when it does not fit; unpaired surrogates become U+FFFD).  Returns its UTF-8 length,
 * or -1 with c->bad set when the string does not end before the cursor's end. */
long pfc_nettrace_utf16(struct pfc_cursor *c, char *out, size_t cap);

#endif
