/*
 * ivindex.h - which entries of a table of address ranges cover an address.  The table's
 * entries are sorted by start; the index keeps each one's [start, end) and the largest end
 * of every prefix, so a lookup is a binary search for the last entry starting at or below
 * the address and a walk back that stops where no earlier entry reaches it.  The table
 * decides among the covering entries (perf maps: method over stub, smallest range;
 * jitdumps: the latest load; ReadyToRun maps: the smallest method).
 */
#ifndef PFC_IVINDEX_H
#define PFC_IVINDEX_H

#include <stddef.h>
#include <stdint.h>

struct pfc_ivindex {
	uint64_t *start, *end;      /* entry i's range, in the table's order */
	uint64_t *max_end;          /* largest end of entries 0..i */
	size_t n;
};

/* Room for n entries; set each with pfc_ivindex_set, then pfc_ivindex_finish. */
int pfc_ivindex_init(struct pfc_ivindex *x, size_t n);
static inline void pfc_ivindex_set(struct pfc_ivindex *x, size_t i, uint64_t start, uint64_t end)
{
	x->start[i] = start;
	x->end[i] = end;
}
void pfc_ivindex_finish(struct pfc_ivindex *x);
void pfc_ivindex_free(struct pfc_ivindex *x);

/* The covering entries, the one that starts last first:
 *   for (i = pfc_ivindex_first(x, a); i != SIZE_MAX; i = pfc_ivindex_next(x, a, i)) */
size_t pfc_ivindex_first(const struct pfc_ivindex *x, uint64_t addr);
size_t pfc_ivindex_next(const struct pfc_ivindex *x, uint64_t addr, size_t i);

#endif
