/*
 * marks.h - perf's own records that are moments of the recording rather than samples: events
 * lost (LOST, LOST_SAMPLES) and sampling throttled and unthrottled (THROTTLE, UNTHROTTLE),
 * each with its time and thread, kept for the writers that draw them on a timeline (the
 * Firefox Profiler's markers; opts->keep_marks).  It keeps no samples and does not read a
 * runtime's own events (converter/events/ does).
 */
#ifndef PFC_MARKS_H
#define PFC_MARKS_H

#include <stddef.h>
#include <stdint.h>

enum pfc_mark_kind {
	PFC_MARK_LOST,           /* PERF_RECORD_LOST: value = events lost (ring buffer full) */
	PFC_MARK_LOST_SAMPLES,   /* PERF_RECORD_LOST_SAMPLES: value = samples the kernel dropped */
	PFC_MARK_THROTTLE,       /* PERF_RECORD_THROTTLE: the kernel lowered the sampling rate */
	PFC_MARK_UNTHROTTLE,     /* PERF_RECORD_UNTHROTTLE: and raised it again */
	PFC_MARK__MAX
};

struct pfc_mark {
	uint64_t time;           /* the record's time stamp; valid when has_time */
	uint64_t value;          /* see enum pfc_mark_kind; 0 for the throttle records */
	int32_t pid, tid;        /* -1 when the record carries no thread (no sample_id_all) */
	uint32_t evsel;          /* the event the record names */
	uint8_t kind;            /* enum pfc_mark_kind */
	uint8_t has_time;
};

struct pfc_marks {
	struct pfc_mark *v;      /* in the order the records were processed (time order when sorted) */
	size_t n, cap;
};

void pfc_marks_init(struct pfc_marks *m);
void pfc_marks_exit(struct pfc_marks *m);
/* 0, or -1 without memory. */
int pfc_marks_add(struct pfc_marks *m, const struct pfc_mark *mark);
/* The name of a kind as perf's --stats prints the record ("LOST", "THROTTLE", ...). */
const char *pfc_marks_kind_name(unsigned kind);

#endif
