/*
 * order.c - the round-based ordering queue of order.h.  Records in the mapped file are
 * queued by pointer; records that will not stay in memory (pipe input, decompressed data)
 * are copied into a per-round arena.  After the flush at the end of round N every record
 * of round N-1 has been released, so round N-1's arena is freed then.
 */
#include <stdlib.h>
#include <string.h>
#include "converter/util/mem.h"
#include "converter/perffile/order.h"

/* The fuzz build (make fuzz) makes the arena blocks small: a run of the reader's fuzz target
 * converts a few records, and a 1 MiB block per run is what its time went to under ASan. */
#ifndef PFC_ORDER_BLOCK_SIZE
#define PFC_ORDER_BLOCK_SIZE (1u << 20)
#endif
#define BLOCK_SIZE PFC_ORDER_BLOCK_SIZE
#ifndef PFC_ORDER_QUEUE_CAP             /* first queue size; smaller in the fuzz build, as above */
#define PFC_ORDER_QUEUE_CAP 4096
#endif

struct pfc_arena_block {
	struct pfc_arena_block *next;
	size_t used, size;
	uint8_t data[];
};

void pfc_order_arena_free(struct pfc_arena_block *b)
{
	while (b) {
		struct pfc_arena_block *n = b->next;
		free(b);
		b = n;
	}
}

uint8_t *pfc_order_copy(struct pfc_order *o, const uint8_t *src, size_t len)
{
	struct pfc_arena_block *b = o->cur;
	uint8_t *p;
	size_t alloc = (len + 7) & ~(size_t)7;

	if (!b || b->size - b->used < alloc) {
		size_t sz = alloc > BLOCK_SIZE ? alloc : BLOCK_SIZE;
		b = malloc(sizeof(*b) + sz);
		if (!b)
			return NULL;
		b->used = 0;
		b->size = sz;
		b->next = o->cur;
		o->cur = b;
	}
	p = b->data + b->used;
	b->used += alloc;
	memcpy(p, src, len);
	return p;
}

void pfc_order_init(struct pfc_order *o, pfc_deliver_fn deliver, void *ctx)
{
	memset(o, 0, sizeof(*o));
	o->deliver = deliver;
	o->ctx = ctx;
}

void pfc_order_exit(struct pfc_order *o)
{
	free(o->v);
	free(o->tmp);
	free(o->bounds);
	pfc_order_arena_free(o->cur);
	pfc_order_arena_free(o->prev);
	memset(o, 0, sizeof(*o));
}

int pfc_order_queue_slow(struct pfc_order *o, uint64_t ts, const uint8_t *data, uint32_t size,
			 uint64_t offset, int compressed, int transient)
{
	if (o->n == o->cap && o->start) {	/* the released ones make room */
		memmove(o->v, o->v + o->start, (o->n - o->start) * sizeof(*o->v));
		o->n -= o->start;
		o->start = 0;
	}
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : PFC_ORDER_QUEUE_CAP;
		struct pfc_qev *n = pfc_mem_realloc(o->v, o->n * sizeof(*n), cap * sizeof(*n));
		if (!n)
			return -1;
		o->v = n;
		o->cap = cap;
	}
	if (transient && !(data = pfc_order_copy(o, data, size)))
		return -1;
	/* there is room now, and nothing to copy: order.h's append */
	return pfc_order_queue(o, ts, data, size, offset, compressed, 0);
}

static int before(const struct pfc_qev *x, const struct pfc_qev *y)
{
	return x->ts < y->ts || (x->ts == y->ts && x->seq < y->seq);
}

/* Records arrive as a few sorted runs (one per CPU ring buffer per round), so the queue
 * is sorted by a bottom-up merge of its natural runs: stable, so ties keep arrival order.
 * The merge buffer is kept from round to round and swapped with the queue; the sorted
 * queue starts at v[0] again. */
static int sort_queue(struct pfc_order *o)
{
	size_t runs = 1, i, width, nb, n = o->n - o->start;
	struct pfc_qev *src, *dst;

	for (i = o->start + 1; i < o->n; i++)
		if (before(&o->v[i], &o->v[i - 1]))
			runs++;
	if (runs == 1)
		return 0;
	if (o->tmp_cap < o->cap) {
		struct pfc_qev *t = pfc_mem_realloc(o->tmp, 0, o->cap * sizeof(*t));
		if (!t)
			return -1;
		o->tmp = t;
		o->tmp_cap = o->cap;
	}
	if (o->bounds_cap < runs + 1) {
		size_t *b = realloc(o->bounds, (runs + 1) * 2 * sizeof(*b));
		if (!b)
			return -1;
		o->bounds = b;
		o->bounds_cap = (runs + 1) * 2;
	}
	nb = 0;
	o->bounds[nb++] = 0;
	for (i = o->start + 1; i < o->n; i++)
		if (before(&o->v[i], &o->v[i - 1]))
			o->bounds[nb++] = i - o->start;
	o->bounds[nb] = n;
	src = o->v + o->start;
	dst = o->tmp;
	for (width = 1; width < nb; width *= 2) {
		size_t r;
		for (r = 0; r < nb; r += 2 * width) {
			const size_t *bd = o->bounds;
			size_t a = bd[r], m = bd[r + width < nb ? r + width : nb];
			size_t e = bd[r + 2 * width < nb ? r + 2 * width : nb], x = a, y = m, k = a;
			while (x < m && y < e)
				dst[k++] = before(&src[y], &src[x]) ? src[y++] : src[x++];
			while (x < m)
				dst[k++] = src[x++];
			while (y < e)
				dst[k++] = src[y++];
		}
		/* the next pass reads what this one wrote; from the second pass on, both arrays
		 * are used from their first entry */
		src = dst;
		dst = src == o->tmp ? o->v : o->tmp;
	}
	o->start = 0;
	o->n = n;
	if (src != o->v) {
		size_t c = o->cap;
		o->tmp = o->v;
		o->v = src;
		o->cap = o->tmp_cap;
		o->tmp_cap = c;
	}
	return 0;
}

#define RELEASE_AHEAD 6

static int release(struct pfc_order *o, uint64_t limit, int all)
{
	size_t i, k = 0;
	int ret = 0;

	if (o->start == o->n)
		return 0;
	if (sort_queue(o) < 0)
		return -1;
	for (i = o->start; i < o->n; i++) {
		if (!all && o->v[i].ts > limit)
			break;
		/* in time order the records jump about the file (one run per CPU buffer), and
		 * the time was the only part of them read yet: the rest is asked for ahead */
		if (i + RELEASE_AHEAD < o->n) {
			__builtin_prefetch(o->v[i + RELEASE_AHEAD].data);
			__builtin_prefetch(o->v[i + RELEASE_AHEAD].data + 64);
		}
		ret = o->deliver(o->ctx, &o->v[i]);
		if (ret < 0)
			return ret;
		o->last_flushed = o->v[i].ts;
		k++;
	}
	/* the released ones are dropped by the next sort, or when the queue is full */
	o->start += k;
	if (o->start == o->n)
		o->start = o->n = 0;
	return 0;
}

static void retire(struct pfc_order *o, struct pfc_arena_block *b)
{
	if (!b)
		return;
	if (o->retire)
		o->retire(o->ctx, b);
	else
		pfc_order_arena_free(b);
}

int pfc_order_round(struct pfc_order *o)
{
	int ret = release(o, o->next_flush, 0);

	if (ret < 0)
		return ret;
	o->next_flush = o->max_ts;
	/* everything copied before the previous round ended has been released */
	retire(o, o->prev);
	o->prev = o->cur;
	o->cur = NULL;
	return 0;
}

uint64_t pfc_order_low_offset(const struct pfc_order *o, uint64_t low)
{
	size_t i;

	for (i = o->start; i < o->n; i++)
		if (!o->v[i].compressed && o->v[i].offset < low)
			low = o->v[i].offset;
	return low;
}

int pfc_order_flush_all(struct pfc_order *o)
{
	int ret = release(o, UINT64_MAX, 1);

	retire(o, o->prev);
	retire(o, o->cur);
	o->prev = o->cur = NULL;
	return ret;
}
