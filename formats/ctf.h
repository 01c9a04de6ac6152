/*
 * ctf.h - the .NET runtime's events of .nettrace streams written as LTTng's CTF 1.8, the form in
 * which perfcollect's trace.zip carries them and PerfView's library TraceEvent reads them
 * (CtfTraceEventSource): packetized metadata, one channel of packets per CPU and their index,
 * as members of a ZIP archive.  ctf.c reads the streams (converter/events/nettrace.c) and lays
 * out the bytes; where they go in the archive and what the log says around them is perfview.c's.
 */
#ifndef PFC_CTF_H
#define PFC_CTF_H

#include <stddef.h>
#include <stdint.h>
#include "converter/events/events.h"
#include "converter/util/error.h"
#include "converter/util/strbuf.h"
#include "converter/util/tuning.h"
#include "formats/zipfile.h"

/* One LTTng event name of the runtime's provider (ctfnames.c). */
struct pfc_ctf_name {
	uint32_t id, version;
	const char *name;            /* without the provider: "GCStart_V2" */
	const char *fields;          /* "u32:Count u32:Depth ...", "" for none; NULL: packed */
};

/* The name of runtime event id of version, or NULL when TraceEvent has none; *older is set when
 * the name is an older version's whose fields the event's payload starts with. */
const struct pfc_ctf_name *pfc_ctf_name_find(uint32_t id, uint32_t version, int *older);

struct pfc_ctf;

/* Set up the trace of the conversion's streams (one process each: --events, or a pack's),
 * reading nothing yet: its channels and UUID come from the streams' Trace objects, which the
 * conversion's load read.  0, or a negative error (no memory). */
int pfc_ctf_read(struct pfc_ctf **out, struct pfc_events *events, const struct pfc_tuning *tuning,
		 struct pfc_error *err);

/* The process name LTTng would give pid/tid (its comm), or NULL: the writer's caller knows. */
typedef const char *(*pfc_ctf_comm_fn)(void *arg, int32_t pid, int32_t tid);

/* Read the streams once and fill the trace's channels (deflated, in temporary files), touching
 * nothing of the caller's but comm, which it calls with arg: it may run on a thread of its own
 * while the caller writes the rest of the archive.  0, or a negative error naming the file
 * (err->file) and the offset of the bad bytes. */
int pfc_ctf_fill(struct pfc_ctf *c, pfc_ctf_comm_fn comm, void *arg, struct pfc_error *err);

/* While pfc_ctf_fill runs on another thread: wait until a channel holds a megabyte, or the fill
 * ends, and open that channel's entry in ZIP (DIR/auto-DATE/ust/uid/0/64-bit/channel0_N), its
 * bytes going there as they are deflated, so that the largest part of the trace is written while
 * it is made rather than copied after.  Which channel it is depends on the streams alone.  The
 * caller leaves ZIP alone until the fill has ended.  0, or a negative error. */
int pfc_ctf_stream(struct pfc_ctf *c, struct pfc_zip *zip, const char *dir, struct pfc_error *err);

/* Once filled: add the trace to ZIP under DIR ("lttngTrace/"): DIR/auto-DATE/ust/uid/0/64-bit/
 * {metadata, channel0_N, index/channel0_N.idx} (the streamed channel's entry ended first), and
 * say in LOG what went in and what was left out. */
int pfc_ctf_add(struct pfc_ctf *c, struct pfc_zip *zip, const char *dir, struct pfc_sb *log, struct pfc_error *err);

void pfc_ctf_free(struct pfc_ctf *c);

#endif
