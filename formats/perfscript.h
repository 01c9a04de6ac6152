/*
 * perfscript.h - the perf-script text writer's field list (perf script -F syntax), shared
 * with the command line, which checks --fields before any input is read.
 */
#ifndef PFC_PERFSCRIPT_H
#define PFC_PERFSCRIPT_H

#include <stddef.h>

enum {
	PFC_PS_COMM = 1 << 0,
	PFC_PS_TID = 1 << 1,
	PFC_PS_PID = 1 << 2,
	PFC_PS_TIME = 1 << 3,
	PFC_PS_CPU = 1 << 4,
	PFC_PS_PERIOD = 1 << 5,
	PFC_PS_EVENT = 1 << 6,
	PFC_PS_TRACE = 1 << 7,
	PFC_PS_ADDR = 1 << 8,
	PFC_PS_IP = 1 << 9,
	PFC_PS_SYM = 1 << 10,
	PFC_PS_SYMOFF = 1 << 11,
	PFC_PS_DSO = 1 << 12,
	PFC_PS_DATA_SRC = 1 << 13,
	PFC_PS_WEIGHT = 1 << 14,
	PFC_PS_INS_LAT = 1 << 15,
};

/* A parsed --fields value: either a whole list (`set`), or changes to perf script's
 * defaults ("+pid,-cpu": `add` and `del`). */
struct pfc_ps_fields {
	int relative;
	unsigned set, add, del;
};

/* Parse a -F list.  Returns 0, or -1 with a message in why[]. */
int pfc_ps_fields_parse(const char *spec, struct pfc_ps_fields *f, char *why, size_t why_len);

/* The field names the writer knows, for --help and error messages. */
extern const char pfc_ps_field_names[];

#endif
