/*
 * statsprint.c - owns the `--stats` text: perf 6.1's `perf report --stats`, byte for byte.
 * perf keeps these counters in u32 and prints them with %d, so they wrap the same way here.
 * Record type names, the skip-empty rule, the percentage column and the per-event blocks
 * follow perf 6.1.  Counting the records is the reader's job, not this file's.
 */
#include <inttypes.h>
#include <string.h>

#include "converter/perffile/hdrprint.h"
#include "converter/perffile/statsprint.h"

/* perf 6.1 event.c perf_event__names[]; index 0 is the TOTAL row. */
static const char *const rec_names[] = {
	[0] = "TOTAL",
	[PERF_RECORD_MMAP] = "MMAP",
	[PERF_RECORD_LOST] = "LOST",
	[PERF_RECORD_COMM] = "COMM",
	[PERF_RECORD_EXIT] = "EXIT",
	[PERF_RECORD_THROTTLE] = "THROTTLE",
	[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	[PERF_RECORD_FORK] = "FORK",
	[PERF_RECORD_READ] = "READ",
	[PERF_RECORD_SAMPLE] = "SAMPLE",
	[PERF_RECORD_MMAP2] = "MMAP2",
	[11] = "AUX",
	[12] = "ITRACE_START",
	[13] = "LOST_SAMPLES",
	[14] = "SWITCH",
	[15] = "SWITCH_CPU_WIDE",
	[16] = "NAMESPACES",
	[17] = "KSYMBOL",
	[18] = "BPF_EVENT",
	[19] = "CGROUP",
	[20] = "TEXT_POKE",
	[21] = "AUX_OUTPUT_HW_ID",
	[PFC_REC_HEADER_ATTR] = "ATTR",
	[PFC_REC_HEADER_EVENT_TYPE] = "EVENT_TYPE",
	[PFC_REC_HEADER_TRACING_DATA] = "TRACING_DATA",
	[PFC_REC_HEADER_BUILD_ID] = "BUILD_ID",
	[PFC_REC_FINISHED_ROUND] = "FINISHED_ROUND",
	[PFC_REC_ID_INDEX] = "ID_INDEX",
	[PFC_REC_AUXTRACE_INFO] = "AUXTRACE_INFO",
	[PFC_REC_AUXTRACE] = "AUXTRACE",
	[PFC_REC_AUXTRACE_ERROR] = "AUXTRACE_ERROR",
	[PFC_REC_THREAD_MAP] = "THREAD_MAP",
	[PFC_REC_CPU_MAP] = "CPU_MAP",
	[PFC_REC_STAT_CONFIG] = "STAT_CONFIG",
	[PFC_REC_STAT] = "STAT",
	[PFC_REC_STAT_ROUND] = "STAT_ROUND",
	[PFC_REC_EVENT_UPDATE] = "EVENT_UPDATE",
	[PFC_REC_TIME_CONV] = "TIME_CONV",
	[PFC_REC_HEADER_FEATURE] = "FEATURE",
	[PFC_REC_COMPRESSED] = "COMPRESSED",
	[PFC_REC_FINISHED_INIT] = "FINISHED_INIT",
};

#define NR_REC_NAMES (sizeof(rec_names) / sizeof(rec_names[0]))

const char *pfc_stats_record_name(uint32_t type)
{
	return type < NR_REC_NAMES ? rec_names[type] : NULL;
}

int pfc_stats_print(FILE *out, const struct pfc_stats *s)
{
	/* perf's nr_events[0] is bumped for every record and once more for a type-0 record */
	uint32_t total = (uint32_t)(s->total + s->nr_by_type[0]);
	size_t i;

	fprintf(out, "\nAggregated stats:%s\n", s->has_auxtrace ?
		" (excludes AUX area (e.g. instruction trace) decoded / synthesized events)" : "");
	for (i = 0; i < NR_REC_NAMES && i < PFC_REC_MAX; i++) {
		uint32_t n = i ? (uint32_t)s->nr_by_type[i] : total;

		if (!rec_names[i] || !n)        /* perf's report.skip-empty default */
			continue;
		if (i && total)
			fprintf(out, "%16s events: %10d  (%4.1f%%)\n", rec_names[i], (int)n,
				100.0 * n / total);
		else
			fprintf(out, "%16s events: %10d\n", rec_names[i], (int)n);
	}
	for (i = 0; i < s->nr_evsels; i++) {
		uint32_t ns = s->evsel_nr_samples ? (uint32_t)s->evsel_nr_samples[i] : 0;
		uint32_t nl = s->evsel_nr_lost ? (uint32_t)s->evsel_nr_lost[i] : 0;
		const char *name = s->evsel_names ? s->evsel_names[i] : NULL;
		char buf[256];

		if (!ns && !nl)
			continue;
		if (!name) {
			name = s->evsel_attrs ?
				pfc_hdr_format_name(buf, sizeof(buf), &s->evsel_attrs[i]) : "unknown";
		}
		fprintf(out, "%s stats:\n", name);
		if (ns)
			fprintf(out, "%16s events: %10d\n", "SAMPLE", (int)ns);
		if (nl)
			fprintf(out, "%16s events: %10d\n", "LOST_SAMPLES", (int)nl);
	}
	return 0;
}
