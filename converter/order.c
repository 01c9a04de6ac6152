/*
 * order.c - the round-based ordering queue of order.h.  Records in the mapped file are
 * queued by pointer; records that will not stay in memory (pipe input, decompressed data)
 * are copied into a per-round arena.  After the flush at the end of round N every record
 * of round N-1 has been released, so round N-1's arena is freed then.
 */
#include <stdlib.h>
#include <string.h>
#include "converter/order.h"

#define BLOCK_SIZE (1u << 20)

struct pfc_arena_block {
	struct pfc_arena_block *next;
	size_t used, size;
	uint8_t data[];
};

static void arena_free(struct pfc_arena_block *b)
{
	while (b) {
		struct pfc_arena_block *n = b->next;
		free(b);
		b = n;
	}
}

static uint8_t *arena_copy(struct pfc_order *o, const uint8_t *src, size_t len)
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
	arena_free(o->cur);
	arena_free(o->prev);
	memset(o, 0, sizeof(*o));
}

int pfc_order_queue(struct pfc_order *o, uint64_t ts, const uint8_t *data, uint32_t size,
		    uint64_t offset, int compressed, int transient)
{
	struct pfc_qev *e;

	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 4096;
		struct pfc_qev *n = realloc(o->v, cap * sizeof(*n));
		if (!n)
			return -1;
		o->v = n;
		o->cap = cap;
	}
	if (transient) {
		data = arena_copy(o, data, size);
		if (!data)
			return -1;
	}
	if (ts < o->last_flushed)
		o->nr_out_of_order++;
	if (ts > o->max_ts)
		o->max_ts = ts;
	e = &o->v[o->n++];
	e->ts = ts;
	e->seq = o->seq++;
	e->data = data;
	e->offset = offset;
	e->size = size;
	e->compressed = (uint8_t)compressed;
	return 0;
}

static int cmp_qev(const void *a, const void *b)
{
	const struct pfc_qev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int before(const struct pfc_qev *x, const struct pfc_qev *y)
{
	return x->ts < y->ts || (x->ts == y->ts && x->seq < y->seq);
}

/* Records arrive as a few sorted runs (one per CPU ring buffer per round), so the queue
 * is sorted by merging its natural runs, stable by arrival order; many runs fall back
 * to qsort. */
static int sort_queue(struct pfc_order *o)
{
	size_t runs = 1, i, width;
	struct pfc_qev *tmp, *src, *dst;
	size_t *bounds, nb;

	for (i = 1; i < o->n; i++)
		if (before(&o->v[i], &o->v[i - 1]))
			runs++;
	if (runs == 1)
		return 0;
	if (runs > 64) {
		qsort(o->v, o->n, sizeof(*o->v), cmp_qev);
		return 0;
	}
	tmp = malloc(o->n * sizeof(*tmp));
	bounds = malloc((runs + 1) * sizeof(*bounds));
	if (!tmp || !bounds) {
		free(tmp);
		free(bounds);
		qsort(o->v, o->n, sizeof(*o->v), cmp_qev);
		return 0;
	}
	nb = 0;
	bounds[nb++] = 0;
	for (i = 1; i < o->n; i++)
		if (before(&o->v[i], &o->v[i - 1]))
			bounds[nb++] = i;
	bounds[nb] = o->n;
	src = o->v;
	dst = tmp;
	for (width = 1; width < nb; width *= 2) {
		size_t r;
		for (r = 0; r < nb; r += 2 * width) {
			size_t a = bounds[r], m = bounds[r + width < nb ? r + width : nb];
			size_t e = bounds[r + 2 * width < nb ? r + 2 * width : nb], x = a, y = m, k = a;
			while (x < m && y < e)
				dst[k++] = before(&src[y], &src[x]) ? src[y++] : src[x++];
			while (x < m)
				dst[k++] = src[x++];
			while (y < e)
				dst[k++] = src[y++];
		}
		{
			struct pfc_qev *t = src;
			src = dst;
			dst = t;
		}
	}
	if (src != o->v)
		memcpy(o->v, src, o->n * sizeof(*o->v));
	free(tmp);
	free(bounds);
	return 0;
}

static int release(struct pfc_order *o, uint64_t limit, int all)
{
	size_t i, k = 0;
	int ret = 0;

	if (!o->n)
		return 0;
	sort_queue(o);
	for (i = 0; i < o->n; i++) {
		if (!all && o->v[i].ts > limit)
			break;
		ret = o->deliver(o->ctx, &o->v[i]);
		if (ret < 0)
			return ret;
		o->last_flushed = o->v[i].ts;
		k++;
	}
	memmove(o->v, o->v + k, (o->n - k) * sizeof(*o->v));
	o->n -= k;
	return 0;
}

int pfc_order_round(struct pfc_order *o)
{
	int ret = release(o, o->next_flush, 0);

	if (ret < 0)
		return ret;
	o->next_flush = o->max_ts;
	/* everything copied before the previous round ended has been released */
	arena_free(o->prev);
	o->prev = o->cur;
	o->cur = NULL;
	return 0;
}

int pfc_order_flush_all(struct pfc_order *o)
{
	int ret = release(o, UINT64_MAX, 1);

	arena_free(o->prev);
	arena_free(o->cur);
	o->prev = o->cur = NULL;
	return ret;
}
