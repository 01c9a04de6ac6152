/*
 * tpformat.h - the parts of a tracefs event format ("name:", "ID:", the "field:" lines,
 * "print fmt:") that the converter itself reads: where a payload field is, and the
 * constants of a print format.  Format text comes from the recording, so this is a
 * bounds-checked reader of (pointer, length) text that never calls libtraceevent, which
 * trusts format text and runs only in a child process (tracedata.c).
 */
#ifndef PFC_TPFORMAT_H
#define PFC_TPFORMAT_H

#include <stddef.h>
#include <stdint.h>

struct pfc_tpfield {
	char name[64];
	uint32_t offset, size;
	int is_signed;
};

struct pfc_tpformat {
	char name[64];              /* the event's name ("sched_switch") */
	uint64_t id;                /* its ID: perf_event_attr.config of a tracepoint */
	struct pfc_tpfield *fields;
	size_t nr_fields;
	char *print_fmt;            /* the text after "print fmt: ", NUL-terminated; NULL: none */
	size_t print_len;
};

/* Returns 0, -1 when out of memory, -2 when the text has no name or ID line. */
int pfc_tpformat_parse(const char *text, size_t len, struct pfc_tpformat *out);
void pfc_tpformat_free(struct pfc_tpformat *f);
/* The field called `name`, or NULL. */
const struct pfc_tpfield *pfc_tpformat_field(const struct pfc_tpformat *f, const char *name);
/* A field of 1, 2, 4 or 8 bytes from a payload of raw_len bytes, sign-extended when the
 * field is signed; -1 when the field lies outside the payload or has another size. */
int pfc_tpfield_int(const struct pfc_tpfield *fl, const uint8_t *raw, uint32_t raw_len, int swap, uint64_t *out);

/*
 * A constant integer expression of a print format, as the kernel's macros expand them
 * ("((((0x0 | 0x1 | 0x2) + 1) << 1) - 1)", "2048-1"): numbers (decimal, hex, octal, with
 * U/L suffixes), parentheses and the operators | ^ & << >> + - * / % ~ with C's
 * precedence.  It reads s[0..n) up to the first ',' '?' ':' or unbalanced ')' outside
 * parentheses; *used gets the characters read.  Returns 0, or -1 for anything else
 * (an identifier, a division by zero, nesting deeper than 64).
 */
int pfc_tpformat_eval(const char *s, size_t n, uint64_t *out, size_t *used);

struct pfc_reader;
/* Name the tracepoint events no header named from the recording's tracing data, as perf's
 * evsel__prepare_tracepoint_event does ("sched:sched_switch"); events it has no format for
 * stay unnamed. */
void pfc_tpformat_name_evsels(struct pfc_reader *rd);

#endif
