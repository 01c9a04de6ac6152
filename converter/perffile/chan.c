/*
 * chan.c - the single-producer, single-consumer queue of chan.h.  head and tail change
 * under the mutex only (the producer also peeks at head, atomically, to see whether the
 * ring is full); the items between head and tail belong to the consumer, the ones from
 * tail on to the producer, so the items themselves are read and written without the lock.
 */
#include <stdlib.h>
#include <string.h>
#include "converter/perffile/chan.h"

int pfc_chan_init(struct pfc_chan *c, size_t cap_pow2, size_t batch)
{
	memset(c, 0, sizeof(*c));
	c->ring = malloc(cap_pow2 * sizeof(*c->ring));
	if (!c->ring)
		return -1;
	c->mask = cap_pow2 - 1;
	c->batch = batch && batch < cap_pow2 ? batch : cap_pow2 / 2;
	if (pthread_mutex_init(&c->mu, NULL)) {
		free(c->ring);
		return -1;
	}
	if (pthread_cond_init(&c->more, NULL)) {
		pthread_mutex_destroy(&c->mu);
		free(c->ring);
		return -1;
	}
	if (pthread_cond_init(&c->room, NULL)) {
		pthread_cond_destroy(&c->more);
		pthread_mutex_destroy(&c->mu);
		free(c->ring);
		return -1;
	}
	return 0;
}

void pfc_chan_exit(struct pfc_chan *c)
{
	if (!c->ring)
		return;
	pthread_cond_destroy(&c->room);
	pthread_cond_destroy(&c->more);
	pthread_mutex_destroy(&c->mu);
	free(c->ring);
	c->ring = NULL;
}

void pfc_chan_publish(struct pfc_chan *c)
{
	pthread_mutex_lock(&c->mu);
	if (c->tail != c->fill) {
		c->tail = c->fill;
		pthread_cond_signal(&c->more);
	}
	pthread_mutex_unlock(&c->mu);
}

/* pfc_chan_push's slow paths (chan.h): wait until the consumer makes room, and publish a batch. */
int pfc_chan_wait_room(struct pfc_chan *c)
{
	int stopped;

	pthread_mutex_lock(&c->mu);
	c->tail = c->fill;
	pthread_cond_signal(&c->more);
	/* (past the bytes, wait while the consumer has items: one large item always goes) */
	while ((c->fill - c->head > c->mask ||
		(c->max_bytes && c->bytes_pushed - c->bytes_done > c->max_bytes && c->head != c->fill)) &&
	       !c->stopped)
		pthread_cond_wait(&c->room, &c->mu);
	stopped = c->stopped;
	pthread_mutex_unlock(&c->mu);
	return stopped ? -1 : 0;
}

int pfc_chan_publish_batch(struct pfc_chan *c)
{
	int stopped;

	c->bytes_published = c->bytes_pushed;
	pthread_mutex_lock(&c->mu);
	c->tail = c->fill;
	pthread_cond_signal(&c->more);
	stopped = c->stopped;
	pthread_mutex_unlock(&c->mu);
	/* the item is the consumer's now, stopped or not: it takes every published item until
	 * the queue is closed */
	return stopped ? 1 : 0;
}

int pfc_chan_barrier(struct pfc_chan *c)
{
	int stopped;

	pthread_mutex_lock(&c->mu);
	c->tail = c->fill;
	pthread_cond_signal(&c->more);
	while (c->head != c->tail && !c->stopped)
		pthread_cond_wait(&c->room, &c->mu);
	stopped = c->stopped;
	pthread_mutex_unlock(&c->mu);
	return stopped ? -1 : 0;
}

void pfc_chan_close(struct pfc_chan *c)
{
	pthread_mutex_lock(&c->mu);
	c->tail = c->fill;
	c->closed = 1;
	pthread_cond_signal(&c->more);
	pthread_mutex_unlock(&c->mu);
}

size_t pfc_chan_take(struct pfc_chan *c, const struct pfc_chan_item **items)
{
	size_t n, at;

	pthread_mutex_lock(&c->mu);
	while (c->head == c->tail && !c->closed)
		pthread_cond_wait(&c->more, &c->mu);
	n = c->tail - c->head;
	pthread_mutex_unlock(&c->mu);
	at = c->head & c->mask;
	if (n > c->mask + 1 - at)
		n = c->mask + 1 - at;	/* up to the end of the ring; the rest next time */
	*items = &c->ring[at];
	return n;
}

void pfc_chan_done(struct pfc_chan *c, size_t n)
{
	uint64_t bytes = 0;
	size_t i;

	for (i = 0; i < n; i++)
		bytes += c->ring[(c->head + i) & c->mask].size;
	pthread_mutex_lock(&c->mu);
	__atomic_store_n(&c->bytes_done, c->bytes_done + bytes, __ATOMIC_RELEASE);
	__atomic_store_n(&c->head, c->head + n, __ATOMIC_RELEASE);
	pthread_cond_signal(&c->room);
	pthread_mutex_unlock(&c->mu);
}

void pfc_chan_stop(struct pfc_chan *c)
{
	pthread_mutex_lock(&c->mu);
	c->stopped = 1;
	pthread_cond_signal(&c->room);
	pthread_mutex_unlock(&c->mu);
}
