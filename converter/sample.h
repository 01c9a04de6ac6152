/*
 * sample.h - sample records into the aggregate, for the session (sample.c): decoding,
 * PERF_SAMPLE_READ, filters, the callchain cache's fast path, the sample stream.  The
 * session embeds struct pfc_sample_state: the order of samples and PERF_SAMPLE_READ's
 * counter values, which sample.c alone writes.
 */
#ifndef PFC_SAMPLE_H
#define PFC_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

struct pfc_session;
struct pfc_evsel;
struct pfc_counter_last;

struct pfc_sample_state {
	uint64_t seq;                 /* samples delivered so far */
	uint64_t *evsel_first_seq;    /* order in which each event's first sample arrived */
	size_t nr_evsel_first;
	/* PERF_SAMPLE_READ: each counter id's last value read (perf's sid->period) */
	struct pfc_counter_last *counters;
	size_t counters_cap, nr_counters;
	uint64_t counter_max_id_value; /* id UINT64_MAX's, which has no key */
};

/* A sample record (data, size bytes at file offset off) of event ev. */
int pfc_sample_process(struct pfc_session *s, struct pfc_evsel *ev, const uint8_t *data, uint32_t size,
		       uint64_t off);
/* 1 when the record's callchain was found in the callchain cache and counted there without
 * decoding it (only when no filter, off-CPU time or stream needs the sample), 0 when it
 * must go through pfc_sample_process, < 0 on error. */
int pfc_sample_cached(struct pfc_session *s, struct pfc_evsel *ev, const uint8_t *data, uint32_t size);
/* A sample perf did not record (a runtime event's, evsample.c) of thread th into the
 * aggregate and the stream: the frame leaf, then smp's callchain, weighted smp->period. */
struct pfc_thread;
struct pfc_sample;
int pfc_sample_synthetic(struct pfc_session *s, struct pfc_evsel *ev, struct pfc_thread *th,
			 const struct pfc_sample *smp, uint32_t leaf);
/* Room for nr events' first-sample order (a header can add events).  -1 without memory. */
int pfc_sample_evsels(struct pfc_session *s, size_t nr);
void pfc_sample_exit(struct pfc_session *s);

#endif
