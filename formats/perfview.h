/*
 * perfview.h - the canonical perf-script text of perfview.c (output-formats.md §2.5),
 * exposed for unit tests: one sample's header line and one frame line.
 */
#ifndef PFC_PERFVIEW_H
#define PFC_PERFVIEW_H

#include <stdint.h>
#include "converter/session.h"
#include "converter/util/strbuf.h"

/* "comm pid/tid [cpu] secs.usecs: period event: trace\n" (cpu and period only when recorded) */
/* trace: the sample's tracepoint payload as text (trace_len 0: none). */
int pfc_perfview_header(struct pfc_sb *b, struct pfc_session *s, const struct pfc_srec *r,
			const char *trace, size_t trace_len);
/* "\t%16llx sym (dso)\n" for a unique frame. */
int pfc_perfview_frame(struct pfc_sb *b, struct pfc_session *s, uint32_t fid);

#endif
