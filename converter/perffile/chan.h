/*
 * chan.h - a bounded single-producer, single-consumer queue of records between two
 * threads.  The producer fills the ring and publishes in batches, so that the threads
 * meet once every few thousand records; the consumer takes every published item in
 * order.  pfc_chan_barrier lets the producer change state that the consumer reads: it
 * returns when the consumer has finished every item and waits for more.
 */
#ifndef PFC_CHAN_H
#define PFC_CHAN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct pfc_chan_item {
	const void *data;
	uint64_t offset;
	uint32_t size;
	uint32_t kind;             /* the users' own */
	uint64_t aux;              /* the users' own: what the producer worked out for the consumer */
};

struct pfc_chan {
	pthread_mutex_t mu;
	pthread_cond_t more, room;     /* items were published / taken */
	struct pfc_chan_item *ring;
	size_t mask;
	size_t head;                   /* first item the consumer has not finished */
	size_t tail;                   /* published items end here */
	size_t fill;                   /* producer's write position (>= tail) */
	size_t batch;                  /* publish after this many */
	/* At most this many bytes of items (their size fields) not finished, 0: no bound.  A
	 * recording's records point into its mapping, whose pages count in the process's memory
	 * until the consumer releases them: without a bound in bytes the producer would run a
	 * whole ring of DWARF samples (8 KiB each, 256 MiB) ahead. */
	uint64_t max_bytes;
	uint64_t bytes_pushed;         /* producer's: sizes of all items pushed */
	uint64_t bytes_published;      /* producer's: of those, published (a quarter of max_bytes
					* unpublished publishes, as a batch does) */
	uint64_t bytes_done;           /* under mu: sizes of all items finished */
	int closed, stopped;
};

int pfc_chan_init(struct pfc_chan *c, size_t cap_pow2, size_t batch);
void pfc_chan_exit(struct pfc_chan *c);

/* Producer.  push returns 0 when the item was queued, 1 when it was queued and the consumer
 * has stopped (it still takes the item: stop producing), -1 when the consumer has stopped
 * and the item was not queued (it stays the producer's).  barrier returns -1 once the
 * consumer has stopped. */
static inline int pfc_chan_push(struct pfc_chan *c, const void *data, uint64_t offset, uint32_t size, uint32_t kind);
static inline int pfc_chan_push_aux(struct pfc_chan *c, const void *data, uint64_t offset, uint32_t size,
				    uint32_t kind, uint64_t aux);
void pfc_chan_publish(struct pfc_chan *c);
int pfc_chan_barrier(struct pfc_chan *c);
void pfc_chan_close(struct pfc_chan *c);

/* Consumer.  take waits for items and returns how many follow *items in the ring (0: the
 * producer closed the queue and everything was taken); done says that many are finished. */
size_t pfc_chan_take(struct pfc_chan *c, const struct pfc_chan_item **items);
void pfc_chan_done(struct pfc_chan *c, size_t n);
void pfc_chan_stop(struct pfc_chan *c);

int pfc_chan_wait_room(struct pfc_chan *c);
int pfc_chan_publish_batch(struct pfc_chan *c);

/* Inline: a push is a few stores, once per record. */
static inline int pfc_chan_push_aux(struct pfc_chan *c, const void *data, uint64_t offset, uint32_t size,
				    uint32_t kind, uint64_t aux)
{
	struct pfc_chan_item *it;

	if ((c->fill - __atomic_load_n(&c->head, __ATOMIC_ACQUIRE) > c->mask ||	/* full */
	     (c->max_bytes && c->bytes_pushed - __atomic_load_n(&c->bytes_done, __ATOMIC_ACQUIRE) > c->max_bytes)) &&
	    pfc_chan_wait_room(c) < 0)
		return -1;
	it = &c->ring[c->fill & c->mask];
	it->data = data;
	it->offset = offset;
	it->size = size;
	it->kind = kind;
	it->aux = aux;
	c->fill++;
	c->bytes_pushed += size;
	if (c->fill - c->tail >= c->batch || (c->max_bytes && c->bytes_pushed - c->bytes_published >= c->max_bytes / 4))
		return pfc_chan_publish_batch(c);
	return 0;
}

static inline int pfc_chan_push(struct pfc_chan *c, const void *data, uint64_t offset, uint32_t size, uint32_t kind)
{
	return pfc_chan_push_aux(c, data, offset, size, kind, 0);
}

#endif
