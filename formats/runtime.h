/*
 * runtime.h - the runtime report: one process's runtime events (converter/events/runtime.h) as
 * text: GCs by generation and reason, pauses (total, mean, max, p95, share of the time), bytes
 * allocated and their rate, heap sizes after GC, JIT work, exceptions by type.  It formats a
 * finished model only; reading the stream is converter/events/'s.
 */
#ifndef PFC_FORMATS_RUNTIME_H
#define PFC_FORMATS_RUNTIME_H

#include "converter/events/runtime.h"
#include "converter/util/strbuf.h"

/* A frame that threw an exception type, and how often (a conversion's -f runtime names them as
 * its CPU samples' frames are named). */
struct pfc_rt_thrower {
	const char *type, *frame;
	uint64_t n;
};

/* Append the report of rt, read from the file named name, to out, as the report of process pid
 * (the recording's, which a runtime in a pid namespace does not know itself by; 0: the
 * stream's own); under each exception type
 * the frames of thr[0, nr_thr) that threw it most (sorted by type, then most first; NULL: none
 * known).  -PFC_ERR_NOMEM when out ran out of memory. */
int pfc_runtime_text(const struct pfc_runtime *rt, const char *name, int32_t pid, const struct pfc_rt_thrower *thr,
		     size_t nr_thr, struct pfc_sb *out);

#endif
