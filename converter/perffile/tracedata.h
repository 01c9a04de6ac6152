/*
 * tracedata.h - perf's tracing data (the TRACING_DATA feature in file mode, the
 * HEADER_TRACING_DATA record in pipe mode): the tracefs event formats, kallsyms, printk
 * formats and saved comms of the recording machine, parsed into a libtraceevent handle
 * so that tracepoint payloads (PERF_SAMPLE_RAW) print as perf script prints its "trace"
 * field.  Writers take the text of a session's payloads from formats/tptext.h; the
 * calls below it are its parts, for tests.
 */
#ifndef PFC_TRACEDATA_H
#define PFC_TRACEDATA_H

#include <stddef.h>
#include <stdint.h>
#include "converter/util/error.h"

struct tep_handle;
struct tep_event;
struct trace_seq;

/* Parse `len` bytes of tracing data that start at input offset `base` (for errors) into a
 * new handle (*out; free with pfc_tracedata_free).  Formats libtraceevent cannot parse are
 * skipped, as perf skips them; malformed framing is an error. */
int pfc_tracedata_parse(const uint8_t *data, uint64_t len, uint64_t base, struct tep_handle **out,
			struct pfc_error *err);
void pfc_tracedata_free(struct tep_handle *tep);
/* The same reading without libtraceevent: checks the framing only (every length against
 * what is left), so that a malformed section is reported with its offset by a process
 * that never hands the format text to libtraceevent. */
int pfc_tracedata_check(const uint8_t *data, uint64_t len, uint64_t base, struct pfc_error *err);
/* The same check, handing each event format's text (system name, text, length; the text
 * is NUL-terminated and valid only during the call) to fn; fn returns < 0 when out of
 * memory.  For readers of format fields that never involve libtraceevent (tpformat.h). */
typedef int (*pfc_tracedata_format_fn)(void *arg, const char *sys, const char *text, size_t len);
int pfc_tracedata_formats(const uint8_t *data, uint64_t len, uint64_t base, pfc_tracedata_format_fn fn, void *arg,
			  struct pfc_error *err);

/* Whether the tracepoint payloads (PERF_SAMPLE_RAW) of a recording with this tracing data
 * are in the other byte order than this machine's: 1 or 0, from the byte order the tracing
 * data's header states, or -1 when the header is malformed.  This is not the perf.data
 * file's byte order: perf copies payloads as the kernel wrote them, and a file rewritten
 * for another machine keeps them so. */
int pfc_tracedata_payload_swap(const uint8_t *data, uint64_t len);

/* The event of a tracepoint attr (attr.config is the tracepoint id), or NULL. */
struct tep_event *pfc_tracedata_event(struct tep_handle *tep, uint64_t config);

/* Scratch space for printing: payloads are copied into a zero-filled buffer larger than
 * any field offset libtraceevent may follow (formats and __data_loc offsets come from the
 * input too), so a short or hostile payload is never read past its end. */
struct pfc_tracebuf {
	uint8_t *buf;
	size_t cap;
};

/* Append perf script's `trace` field for one payload (libtraceevent's print format of
 * the event) to s.  Returns 0, or -1 when out of memory. */
int pfc_tracedata_print(struct tep_event *ev, int cpu, const void *raw, uint32_t raw_len, struct trace_seq *s,
			struct pfc_tracebuf *tb);
void pfc_tracebuf_free(struct pfc_tracebuf *tb);

#endif
