/*
 * order.h - perf's FINISHED_ROUND ordering.  Records with a timestamp wait in a queue;
 * at the end of round N every queued record not newer than the newest timestamp seen by
 * the end of round N-1 is released in time order (ties keep file order), so a round is
 * final one round late.  Everything left is released at the end of the input.
 */
#ifndef PFC_ORDER_H
#define PFC_ORDER_H

#include <stddef.h>
#include <stdint.h>

struct pfc_qev {
	uint64_t ts;
	uint64_t seq;
	const uint8_t *data;        /* the record, header included */
	uint64_t offset;
	uint32_t size;
	uint8_t compressed;
};

typedef int (*pfc_deliver_fn)(void *ctx, const struct pfc_qev *ev);

struct pfc_arena_block;

struct pfc_order {
	struct pfc_qev *v;          /* queued records: v[start] to v[n - 1] */
	size_t start, n, cap;
	struct pfc_qev *tmp;        /* merge buffer, swapped with v */
	size_t tmp_cap;
	size_t *bounds, bounds_cap; /* run starts */
	uint64_t next_flush;        /* release limit of the next FINISHED_ROUND */
	uint64_t max_ts;
	uint64_t seq;
	uint64_t last_flushed;
	uint64_t nr_out_of_order;
	struct pfc_arena_block *cur, *prev;   /* copies of transient records, per round */
	pfc_deliver_fn deliver;
	/* NULL: released copies are freed at once; else they are handed to retire, which
	 * frees them (pfc_order_arena_free) once the records delivered so far are done with */
	void (*retire)(void *ctx, struct pfc_arena_block *b);
	void *ctx;
};

void pfc_order_init(struct pfc_order *o, pfc_deliver_fn deliver, void *ctx);
void pfc_order_exit(struct pfc_order *o);
/* Queue a record; `transient` bytes are copied.  Inline while there is room and nothing to
 * copy, once per record. */
int pfc_order_queue_slow(struct pfc_order *o, uint64_t ts, const uint8_t *data, uint32_t size,
			 uint64_t offset, int compressed, int transient);
static inline int pfc_order_queue(struct pfc_order *o, uint64_t ts, const uint8_t *data, uint32_t size,
				  uint64_t offset, int compressed, int transient)
{
	struct pfc_qev *e;

	if (o->n == o->cap || transient)
		return pfc_order_queue_slow(o, ts, data, size, offset, compressed, transient);
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
int pfc_order_round(struct pfc_order *o);   /* FINISHED_ROUND */
/* A copy of a transient record that lives as long as the queued ones of this round. */
uint8_t *pfc_order_copy(struct pfc_order *o, const uint8_t *src, size_t len);
void pfc_order_arena_free(struct pfc_arena_block *b);
int pfc_order_flush_all(struct pfc_order *o);
/* The lowest file offset of a queued record read from the mapped file (not from a
 * compressed one), or `low` when it is lower. */
uint64_t pfc_order_low_offset(const struct pfc_order *o, uint64_t low);

#endif
