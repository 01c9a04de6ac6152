/*
 * tpformat.h - tracepoint payloads rendered as `perf script` prints them (the "trace"
 * field), from the event formats in the recording's tracing data.
 */
#ifndef PFC_TPFORMAT_H
#define PFC_TPFORMAT_H

#include <stdint.h>
#include "converter/strbuf.h"

struct pfc_tpformat;

/* Read the formats of a TRACING_DATA blob.  Returns 0, or -1 with *why set (the blob is
 * malformed, or out of memory). */
int pfc_tpformat_load(struct pfc_tpformat **out, const uint8_t *data, uint64_t size, const char **why);
/* Append the text of one payload of tracepoint `id` (attr.config).  Returns 0, 1 when the
 * event's format is unknown (nothing appended), -1 when out of memory. */
int pfc_tpformat_print(struct pfc_tpformat *t, uint64_t id, const void *raw, uint32_t len, int cpu,
		       struct pfc_sb *out);
void pfc_tpformat_free(struct pfc_tpformat *t);

#endif
