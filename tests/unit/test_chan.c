/*
 * test_chan.c - unit tests of the queue between the reading and the processing thread
 * (converter/perffile/chan.c): every item arrives once and in order through a ring much smaller
 * than the stream, whatever the batch size; a barrier returns only when the consumer has
 * finished everything before it (the producer then changes a value the consumer reads
 * without a lock); a consumer that stops makes the producer's pushes fail instead of
 * blocking it, and an item is either taken by the consumer or kept by the producer, never
 * both; a closed empty queue ends the consumer's loop; with a bound in bytes, the items
 * not finished never add up to more than the bound and one item, and an item larger than the
 * bound still goes through.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "converter/perffile/chan.h"
#include "tests/unit/check.h"

struct run {
	struct pfc_chan c;
	uint64_t n;               /* items to push */
	uint64_t barrier_every;   /* 0: none */
	uint64_t stop_at;         /* the consumer stops after this many; UINT64_MAX: never */
	/* written by the producer only while the consumer waits (after a barrier) */
	uint64_t epoch;
	/* results */
	uint64_t got, bad_order, bad_epoch, push_failed_at;
	int barrier_broken;
};

static void *producer(void *arg)
{
	struct run *r = arg;
	uint64_t i;

	r->push_failed_at = UINT64_MAX;
	for (i = 0; i < r->n; i++) {
		if (r->barrier_every && i && i % r->barrier_every == 0) {
			if (pfc_chan_barrier(&r->c) < 0) {
				r->push_failed_at = i;
				break;
			}
			/* the consumer has taken every item so far and waits: nothing reads epoch now */
			r->epoch = i / r->barrier_every;
		}
		if (pfc_chan_push(&r->c, NULL, i, (uint32_t)r->epoch, 7) < 0) {
			r->push_failed_at = i;
			break;
		}
	}
	pfc_chan_close(&r->c);
	return NULL;
}

static void run_case(const char *name, size_t cap, size_t batch, uint64_t n, uint64_t barrier_every,
		     uint64_t stop_at)
{
	struct run r;
	pthread_t th;
	const struct pfc_chan_item *items;
	size_t k, i;
	int stopped = 0;

	memset(&r, 0, sizeof(r));
	r.n = n;
	r.barrier_every = barrier_every;
	r.stop_at = stop_at;
	if (pfc_chan_init(&r.c, cap, batch) < 0 || pthread_create(&th, NULL, producer, &r)) {
		check(0, "%s: set-up", name);
		return;
	}
	while ((k = pfc_chan_take(&r.c, &items)) > 0) {
		for (i = 0; i < k; i++) {
			if (stopped)
				continue;
			if (items[i].offset != r.got || items[i].kind != 7)
				r.bad_order++;
			/* the epoch in the item was read by the producer when it pushed; the one the
			 * consumer sees now must be the same, since changes wait for a barrier */
			if (barrier_every && items[i].size != (uint32_t)r.epoch)
				r.bad_epoch++;
			r.got++;
			if (r.got == stop_at) {
				stopped = 1;
				pfc_chan_stop(&r.c);
			}
		}
		pfc_chan_done(&r.c, k);
	}
	pthread_join(th, NULL);
	pfc_chan_exit(&r.c);
	if (stop_at == UINT64_MAX) {
		check(r.got == n, "%s: %llu of %llu items arrived", name, (unsigned long long)r.got,
		      (unsigned long long)n);
		check(r.push_failed_at == UINT64_MAX, "%s: a push failed at %llu", name,
		      (unsigned long long)r.push_failed_at);
	} else {
		check(r.got == stop_at, "%s: %llu items taken before the stop at %llu", name,
		      (unsigned long long)r.got, (unsigned long long)stop_at);
		check(r.push_failed_at != UINT64_MAX, "%s: the producer never saw the stop", name);
	}
	check(!r.bad_order, "%s: %llu items out of order", name, (unsigned long long)r.bad_order);
	check(!r.bad_epoch, "%s: %llu items saw a change made before their barrier", name,
	      (unsigned long long)r.bad_epoch);
}

struct bytes_run {
	struct pfc_chan c;
	uint64_t n;
};

static void *bytes_producer(void *arg)
{
	struct bytes_run *r = arg;
	uint64_t i;

	for (i = 0; i < r->n; i++)
		if (pfc_chan_push(&r->c, NULL, i, i % 1000 == 999 ? 50000 : 1000, 7) < 0)
			break;
	pfc_chan_close(&r->c);
	return NULL;
}

static void bytes_case(void)
{
	struct bytes_run r = { .n = 200000 };
	const struct pfc_chan_item *items;
	uint64_t got = 0, worst = 0;
	pthread_t th;
	size_t k, i;

	check(pfc_chan_init(&r.c, 1024, 512) == 0, "bytes: init");
	r.c.max_bytes = 8000;
	pthread_create(&th, NULL, bytes_producer, &r);
	while ((k = pfc_chan_take(&r.c, &items)) > 0) {
		uint64_t sum = 0;

		for (i = 0; i < k; i++) {
			sum += items[i].size;
			got += items[i].offset == got;
		}
		if (sum > worst)
			worst = sum;
		pfc_chan_done(&r.c, k);
	}
	pthread_join(th, NULL);
	check(got == r.n, "bytes: %llu of %llu items in order", (unsigned long long)got, (unsigned long long)r.n);
	check(worst <= 8000 + 50000, "bytes: %llu bytes taken at once, bound 8000 and one item", (unsigned long long)worst);
	pfc_chan_exit(&r.c);
}

/*
 * The items a producer hands over and the ones it keeps, when the consumer stops and goes on
 * taking until the queue is closed (as the processing thread does, freeing the blocks of
 * copied records it is handed): every push that returned 0 or 1 arrives exactly once, and
 * none that returned -1 does.  An item both sides thought theirs was freed twice.
 */
struct own_run {
	struct pfc_chan c;
	uint64_t queued, kept, taken;
};

static void *own_producer(void *arg)
{
	struct own_run *r = arg;
	uint64_t i;

	for (i = 0; i < 200000; i++) {
		int ret = pfc_chan_push(&r->c, NULL, i, 0, 7);
		if (ret < 0)
			r->kept++;
		else
			r->queued++;
		if (ret != 0 && r->kept > 1000)
			break;
	}
	pfc_chan_close(&r->c);
	return NULL;
}

static void own_case(size_t cap, size_t batch, uint64_t stop_at)
{
	struct own_run r;
	pthread_t th;
	const struct pfc_chan_item *items;
	size_t n;

	memset(&r, 0, sizeof(r));
	check(pfc_chan_init(&r.c, cap, batch) == 0, "own: init");
	pthread_create(&th, NULL, own_producer, &r);
	while ((n = pfc_chan_take(&r.c, &items)) > 0) {
		r.taken += n;
		if (r.taken >= stop_at)
			pfc_chan_stop(&r.c);
		pfc_chan_done(&r.c, n);
	}
	pthread_join(th, NULL);
	check(r.taken == r.queued, "own (ring %zu, batch %zu, stop at %llu): %llu taken, %llu queued by the producer",
	      cap, batch, (unsigned long long)stop_at, (unsigned long long)r.taken, (unsigned long long)r.queued);
	pfc_chan_exit(&r.c);
}

int main(void)
{
	own_case(8, 3, 100);
	own_case(64, 16, 5000);
	own_case(1024, 1000, 20000);
	bytes_case();
	run_case("small ring", 8, 3, 100000, 0, UINT64_MAX);
	run_case("batch 1", 16, 1, 20000, 0, UINT64_MAX);
	run_case("large batch", 1024, 1000, 300000, 0, UINT64_MAX);
	run_case("barriers", 64, 16, 50000, 997, UINT64_MAX);
	run_case("barrier every item", 4, 2, 2000, 1, UINT64_MAX);
	run_case("stop", 32, 8, 1000000, 0, 5000);
	run_case("stop with barriers", 32, 8, 1000000, 100, 777);
	run_case("empty", 8, 4, 0, 0, UINT64_MAX);
	return check_done("test_chan");
}
