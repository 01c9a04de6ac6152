/*
 * times.h - each kept sample's time, period and stack, in the order the samples were
 * processed (time order), for the writers that lay samples out on a timeline but need none of
 * their payloads (the Firefox Profiler's).  Unlike the stream (stream.h) it is filled on the
 * callchain cache's fast path too, which reads only these fields from the record; it lives in
 * memory, 24 bytes a sample, in blocks that never move (growing one array by doubling spent
 * more time copying and zeroing pages than the writer spent writing).  It does not aggregate
 * (stacks.c does) or filter (sample.c does).
 */
#ifndef PFC_TIMES_H
#define PFC_TIMES_H

#include <stddef.h>
#include <stdint.h>

struct pfc_stime {
	uint64_t time;               /* valid when has_time */
	uint64_t period;             /* as the aggregate counts it: at least 1 */
	uint32_t stack;              /* pfc_stacks.stacks index */
	uint32_t has_time;
};

#define PFC_TIMES_BLOCK_SHIFT 16        /* samples in a block: 65536 (1.5 MiB) */
#define PFC_TIMES_BLOCK ((size_t)1 << PFC_TIMES_BLOCK_SHIFT)

struct pfc_times {
	struct pfc_stime **blocks;
	size_t n, cap;               /* samples, and the room the blocks have */
	size_t nr_blocks, cap_blocks;
};

/* Sample i (< t->n). */
static inline const struct pfc_stime *pfc_times_at(const struct pfc_times *t, size_t i)
{
	return &t->blocks[i >> PFC_TIMES_BLOCK_SHIFT][i & (PFC_TIMES_BLOCK - 1)];
}

void pfc_times_init(struct pfc_times *t);
void pfc_times_exit(struct pfc_times *t);
/* One more block.  0, or -1 without memory. */
int pfc_times_grow(struct pfc_times *t);
/* Append one sample.  0, or -1 without memory. */
static inline int pfc_times_add(struct pfc_times *t, uint64_t time, int has_time, uint64_t period, uint32_t stack)
{
	struct pfc_stime *e;

	if (t->n == t->cap && pfc_times_grow(t) < 0)
		return -1;
	e = &t->blocks[t->n >> PFC_TIMES_BLOCK_SHIFT][t->n & (PFC_TIMES_BLOCK - 1)];
	t->n++;
	e->time = time;
	e->period = period;
	e->stack = stack;
	e->has_time = (uint32_t)has_time;
	return 0;
}

#endif
