/*
 * statsprint.h - the `--stats` printer: perf 6.1's `perf report --stats` text, byte for byte,
 * from record counts the reader gathered (every record seen, including those inside
 * COMPRESSED records and the COMPRESSED records themselves).
 */
#ifndef PFC_STATSPRINT_H
#define PFC_STATSPRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "converter/perffile/perf_file.h"

struct pfc_stats {
	uint64_t nr_by_type[PFC_REC_MAX];   /* records by header.type (kernel 1..22, perf 64..83) */
	uint64_t total;                     /* every record counted above */
	uint64_t lost_events, lost_samples; /* sums of LOST / LOST_SAMPLES payloads (perf 6.1
					       does not print them in --stats) */
	/* per event (evsel), in evsel order */
	const char *const *evsel_names;     /* NULL entries: perf's default name from evsel_attrs */
	const uint64_t *evsel_nr_samples;   /* SAMPLE records delivered to the evsel */
	const uint64_t *evsel_nr_lost;      /* sum of LOST_SAMPLES.lost for the evsel; may be NULL */
	size_t nr_evsels;
	/* Additions (zero is the right default): */
	const struct perf_event_attr *evsel_attrs; /* optional, nr_evsels entries */
	int has_auxtrace;                   /* HEADER_AUXTRACE feature is set */
};

/* Print as `perf report --stats`.  Returns 0. */
int pfc_stats_print(FILE *out, const struct pfc_stats *s);

/* perf 6.1's perf_event__name(): "MMAP", "FINISHED_ROUND", "ATTR", "FEATURE", ...;
 * NULL for the types perf 6.1 calls UNKNOWN (23..63, 83 and above). */
const char *pfc_stats_record_name(uint32_t type);

#endif
