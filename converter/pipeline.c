/*
 * pipeline.c - the conversion in two threads: the reading thread, the channel's items
 * between it and the processing thread, and the prefetching ahead of the processing thread.
 * What a record does is the session's (session.c); ordering is order.c's.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "converter/pipeline.h"
#include "converter/session.h"
#include "converter/machine/chaincache.h"
#include "converter/util/bytes.h"

/*
 * With a mapped input, one thread reads and orders the records (pfc_reader_run, the
 * ordering queue) and the calling thread processes them, in the order that the one-thread
 * conversion processes them.  What the reading thread hands over goes through a pfc_chan:
 * records, and when mapped bytes and copies of compressed records may be given back, so
 * that this happens only after the records before it were processed.  Header records that
 * change the events or build-ids wait until everything before them was processed
 * (pfc_chan_barrier, through the reader's sync hook).
 */
enum { ITEM_RECORD, ITEM_HASHED, ITEM_RELEASE, ITEM_FREE };

/*
 * The callchain cache's hash of a sample record, worked out on the reading thread, which
 * has time to spare: 1 when the record is a sample with the fixed layout pfc_sample_cached
 * looks up.  Reads only the record and its event's layout, which processing does not change.
 */
static int sample_chain_hash(struct pfc_session *s, const uint8_t *data, uint32_t size, uint64_t *h)
{
	struct pfc_rec rec = { .type = PERF_RECORD_SAMPLE, .size = size, .data = data };
	const struct pfc_evsel *ev;
	const uint8_t *b = data + 8;
	uint32_t len = size - 8;
	int swap = s->rd.swap;
	uint64_t nr;

	if (pfc_ld32(data, swap) != PERF_RECORD_SAMPLE || !(ev = pfc_reader_evsel_of(&s->rd, &rec)) || !ev->cc_off ||
	    len < (uint32_t)ev->cc_off + 8)
		return 0;
	nr = pfc_ld64(b + ev->cc_off, swap);
	if (nr > (len - ev->cc_off - 8) / 8)
		return 0;
	*h = pfc_chaincache_hash(b + ev->cc_off + 8, nr, (int32_t)pfc_ld32(b + ev->tid_off, swap),
			(int32_t)pfc_ld32(b + ev->tid_off + 4, swap));
	return 1;
}

static void retire_copies(void *ctx, struct pfc_arena_block *b)
{
	struct pfc_session *s = ctx;

	/* not queued (the processing thread has stopped): nothing reads b; queued, the
	 * processing thread frees it, even after it stopped */
	if (pfc_chan_push(s->pipeline.chan, b, 0, 0, ITEM_FREE) < 0)
		pfc_order_arena_free(b);
}

static int sync_reader(void *ctx)
{
	struct pfc_session *s = ctx;

	return pfc_chan_barrier(s->pipeline.chan) < 0 ? -PFC_ERR_NOMEM : 0;
}

static void *read_main(void *arg)
{
	struct pfc_session *s = arg;
	int ret = pfc_session_read(s);
	if (ret < 0 && !s->pipeline.err.code)
		PFC_FAIL_NOOFF(&s->pipeline.err, NOMEM, "ordering queue");
	s->pipeline.ret = ret;
	pfc_chan_close(s->pipeline.chan);
	return NULL;
}

/* Back to one thread: the reader and the queue report and free as they do without it. */
static void pipeline_end(struct pfc_session *s, struct pfc_chan *chan)
{
	s->pipeline.chan = NULL;
	s->rd.err = s->err;
	s->rd.sync = NULL;
	s->order.retire = NULL;
	pfc_chan_exit(chan);
}

/* The ring between the two threads: records and batch size.  The fuzz build (make fuzz) makes
 * it small, so that a full ring and its waits happen in small inputs, and a run does not fault
 * in the 1 MiB ring. */
#ifndef PFC_PIPELINE_RING
#define PFC_PIPELINE_RING (1u << 15)
#define PFC_PIPELINE_BATCH 2048
#endif
/* the bytes of records in the ring: with DWARF stack copies, the memory the reader runs ahead
 * by (chan.h); a few thousand samples still keep both threads busy */
#define PFC_PIPELINE_BYTES ((uint64_t)16 << 20)

/*
 * The processing thread waits on memory more than it computes: a sample's record was
 * written by the reading thread's core, its callchain cache slot and entry are anywhere in
 * a table of megabytes.  The ring says which ones come next (the record, and for a hashed
 * sample its slot), so they are asked for ahead: the record and the slot PREFETCH_AHEAD
 * items ahead, the entry the slot names half as far ahead, once the slot has arrived.
 */
#define PREFETCH_AHEAD 8

static inline void prefetch_record(const struct pfc_session *s, const struct pfc_chan_item *it)
{
	if (it->kind == ITEM_HASHED) {
		__builtin_prefetch(it->data);
		__builtin_prefetch((const uint8_t *)it->data + 64);
		pfc_chaincache_prefetch_slot(&s->chains, it->aux);
	}
}

static inline void prefetch_entry(const struct pfc_session *s, const struct pfc_chan_item *it)
{
	if (it->kind == ITEM_HASHED)
		pfc_chaincache_prefetch_entry(&s->chains, it->aux);
}

int pfc_pipeline_run(struct pfc_session *s, int *ret)
{
	struct pfc_chan chan;
	pthread_t th;
	const struct pfc_chan_item *items;
	size_t n, i;
	int cret = 0;
	uint64_t nrec = 0;

	if (s->rd.streaming || s->tuning->no_pipeline)
		return 0;
	if (pfc_chan_init(&chan, PFC_PIPELINE_RING, PFC_PIPELINE_BATCH) < 0)
		return 0;
	chan.max_bytes = PFC_PIPELINE_BYTES;
	s->pipeline.chan = &chan;
	memset(&s->pipeline.err, 0, sizeof(s->pipeline.err));
	s->pipeline.release_to = 0;
	s->pipeline.ret = 0;
	s->rd.err = &s->pipeline.err;
	s->rd.sync = sync_reader;
	s->rd.sync_ctx = s;
	s->order.retire = retire_copies;
	if (pthread_create(&th, NULL, read_main, s)) {
		pipeline_end(s, &chan);
		return 0;
	}
	while ((n = pfc_chan_take(&chan, &items)) > 0) {
		for (i = 0; i < n; i++) {
			const struct pfc_chan_item *it = &items[i];
			if (i + PREFETCH_AHEAD < n)
				prefetch_record(s, &items[i + PREFETCH_AHEAD]);
			if (i + PREFETCH_AHEAD / 2 < n)
				prefetch_entry(s, &items[i + PREFETCH_AHEAD / 2]);
			switch (it->kind) {
			case ITEM_RECORD:
			case ITEM_HASHED:
				if (cret < 0)
					break;
				s->chains.given_hash = it->aux;
				s->chains.have_given_hash = it->kind == ITEM_HASHED;
				cret = pfc_session_record(s, it->data, it->size, it->offset);
				s->chains.have_given_hash = 0;
				if (cret < 0)
					pfc_chan_stop(&chan);
				else if (s->opts->progress && !(++nrec & 255))
					s->opts->progress(s->opts->progress_arg, s);
				break;
			case ITEM_RELEASE:
				/* released on the reading thread (release_to) */
				if (it->offset > __atomic_load_n(&s->pipeline.release_to, __ATOMIC_RELAXED))
					__atomic_store_n(&s->pipeline.release_to, it->offset, __ATOMIC_RELEASE);
				break;
			case ITEM_FREE:
				pfc_order_arena_free((struct pfc_arena_block *)it->data);
				break;
			}
		}
		pfc_chan_done(&chan, n);
	}
	pthread_join(th, NULL);
	pipeline_end(s, &chan);
	if (cret < 0)
		*ret = cret;
	else if (s->pipeline.ret < 0) {
		*s->err = s->pipeline.err;
		*ret = s->pipeline.ret;
	} else
		*ret = 0;
	return 1;
}

int pfc_pipeline_deliver(struct pfc_session *s, const uint8_t *data, uint32_t size, uint64_t off)
{
	uint64_t h;

	if (sample_chain_hash(s, data, size, &h))
		return pfc_chan_push_aux(s->pipeline.chan, data, off, size, ITEM_HASHED, h) != 0 ? -PFC_ERR_NOMEM : 0;
	return pfc_chan_push(s->pipeline.chan, data, off, size, ITEM_RECORD) != 0 ? -PFC_ERR_NOMEM : 0;
}

int pfc_pipeline_push(struct pfc_session *s, const uint8_t *data, uint32_t size, uint64_t off)
{
	return pfc_chan_push(s->pipeline.chan, data, off, size, ITEM_RECORD) != 0 ? -PFC_ERR_NOMEM : 0;
}

int pfc_pipeline_release(struct pfc_session *s, uint64_t low)
{
	if (pfc_chan_push(s->pipeline.chan, NULL, low, 0, ITEM_RELEASE) != 0)
		return -PFC_ERR_NOMEM;
	/* what the processing thread has finished, from an earlier round */
	pfc_reader_release(&s->rd, __atomic_load_n(&s->pipeline.release_to, __ATOMIC_ACQUIRE));
	return 0;
}
