/*
 * tpformat.h - tracepoint payloads rendered as `perf script` prints them (the "trace"
 * field), from the event formats in the recording's tracing data.
 */
#ifndef PFC_TPFORMAT_H
#define PFC_TPFORMAT_H

#include <stddef.h>
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

/* The payload text of every tracepoint sample of a session's stream.  libtraceevent trusts
 * the format text, so the two calls above run in a child process here: bad formats lose
 * the payloads (why says so), never the conversion. */
struct pfc_session;
struct pfc_tptext {
	char *text;
	size_t *off;                 /* per stream index: where its payload starts in text */
	uint32_t *len;               /* and its length (0: none) */
};
/* Returns 0 (with *why set when no payload could be rendered), -1 when out of memory. */
int pfc_tptext_render(const struct pfc_session *s, struct pfc_tptext *out, const char **why);
void pfc_tptext_free(struct pfc_tptext *t);

#endif
