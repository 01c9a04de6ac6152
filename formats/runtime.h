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

/* Append the report of rt, read from the file named name, to out.  -PFC_ERR_NOMEM when out ran
 * out of memory. */
int pfc_runtime_text(const struct pfc_runtime *rt, const char *name, struct pfc_sb *out);

#endif
