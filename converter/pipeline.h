/*
 * pipeline.h - one conversion in two threads (pipeline.c): the reading thread reads and
 * orders the records, the calling thread processes them in the same order.  The session
 * embeds struct pfc_pipeline; session.c hands records to it while it runs.
 */
#ifndef PFC_PIPELINE_H
#define PFC_PIPELINE_H

#include <stdint.h>
#include "converter/util/error.h"

struct pfc_session;
struct pfc_chan;

struct pfc_pipeline {
	struct pfc_chan *chan;        /* the reading thread's queue to this one; NULL: one thread */
	/* the mapped bytes below this offset are processed (the processing thread sets it at each
	 * release item); the reading thread releases them, so that the page table work of
	 * MADV_DONTNEED is not on the busier thread */
	uint64_t release_to;
	struct pfc_error err;         /* the reading thread's error */
	int ret;                      /* and its result */
};

/* 1: processed in two threads (*ret is the result), 0: not possible here. */
int pfc_pipeline_run(struct pfc_session *s, int *ret);
/* On the reading thread, while it runs: a record out of the ordering queue (a sample's
 * callchain hash worked out here), a record delivered at once, and the offset below which
 * the mapped records are done with. */
int pfc_pipeline_deliver(struct pfc_session *s, const uint8_t *data, uint32_t size, uint64_t off);
int pfc_pipeline_push(struct pfc_session *s, const uint8_t *data, uint32_t size, uint64_t off);
int pfc_pipeline_release(struct pfc_session *s, uint64_t low);

#endif
