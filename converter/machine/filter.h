/*
 * filter.h - which samples a conversion keeps: perf script's --comm, --pid=, --tid= and
 * --time.  The session applies the filter to every sample before aggregation, so every
 * output format sees the same samples; side-band records (COMM, MMAP, FORK) always pass.
 */
#ifndef PFC_FILTER_H
#define PFC_FILTER_H

#include <stddef.h>
#include <stdint.h>
#include "converter/util/error.h"

struct pfc_time_range {
	uint64_t start, end;        /* nanoseconds; 0 = open on that side */
};

struct pfc_filter {
	char **comms;               /* --comm: the thread's comm at sample time */
	size_t nr_comms;
	int32_t *pids, *tids;       /* --pid=, --tid= */
	size_t nr_pids, nr_tids;
	const char *time_str;       /* --time as given */
	int time_percent;           /* percentages: resolved against the recording's sample times */
	int time_resolved;
	struct pfc_time_range *ranges;
	size_t nr_ranges;
};

/* Parse perf's comma-separated lists ("a,b"; pids and tids as decimal numbers). */
int pfc_filter_add_comms(struct pfc_filter *f, const char *list, struct pfc_error *err);
int pfc_filter_add_pids(struct pfc_filter *f, const char *list, int tids, struct pfc_error *err);
/*
 * --time as perf script reads it: "START,END" in seconds[.fraction] (either side may be
 * empty), several such ranges separated by spaces, or percentages of the time between the
 * first and the last sample: "10%/2" (the second 10% slice), "0%-10%,30%-40%", "25%".
 * Absolute ranges are parsed at once; percentages wait for pfc_filter_resolve_time.
 */
int pfc_filter_set_time(struct pfc_filter *f, const char *str, struct pfc_error *err);
/* Turn percentages into times with the recording's first and last sample time (the
 * SAMPLE_TIME feature); both 0 when the recording has none, which is an error as in perf. */
int pfc_filter_resolve_time(struct pfc_filter *f, uint64_t first, uint64_t last, struct pfc_error *err);
/* perf's rule: a sample without a time stamp (0) is never dropped by --time. */
int pfc_filter_time_keep(const struct pfc_filter *f, uint64_t t);
/* Does a sample of this thread pass --comm/--pid/--tid?  A '_' of a --comm name also
 * matches a space, as the folded output writes it. */
int pfc_filter_thread_keep(const struct pfc_filter *f, int32_t pid, int32_t tid, const char *comm);
static inline int pfc_filter_active(const struct pfc_filter *f)
{
	return f && (f->nr_comms || f->nr_pids || f->nr_tids || f->time_str);
}
void pfc_filter_free(struct pfc_filter *f);

#endif
