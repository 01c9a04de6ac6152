/*
 * ivindex.c - the range index of ivindex.h.
 */
#include <stdlib.h>
#include <string.h>
#include "converter/util/ivindex.h"

int pfc_ivindex_init(struct pfc_ivindex *x, size_t n)
{
	memset(x, 0, sizeof(*x));
	if (!n)
		return 0;
	x->start = malloc(n * sizeof(*x->start));
	x->end = malloc(n * sizeof(*x->end));
	x->max_end = malloc(n * sizeof(*x->max_end));
	if (!x->start || !x->end || !x->max_end) {
		pfc_ivindex_free(x);
		return -1;
	}
	x->n = n;
	return 0;
}

void pfc_ivindex_finish(struct pfc_ivindex *x)
{
	uint64_t mx = 0;
	size_t i;

	for (i = 0; i < x->n; i++) {
		if (x->end[i] > mx)
			mx = x->end[i];
		x->max_end[i] = mx;
	}
}

void pfc_ivindex_free(struct pfc_ivindex *x)
{
	free(x->start);
	free(x->end);
	free(x->max_end);
	memset(x, 0, sizeof(*x));
}

/* From entry i (exclusive) down: the next one that covers addr, or SIZE_MAX. */
size_t pfc_ivindex_next(const struct pfc_ivindex *x, uint64_t addr, size_t i)
{
	while (i-- > 0) {
		if (x->max_end[i] <= addr)
			break;	/* nothing at or before i reaches addr */
		if (addr < x->end[i])
			return i;
	}
	return SIZE_MAX;
}

size_t pfc_ivindex_first(const struct pfc_ivindex *x, uint64_t addr)
{
	size_t lo = 0, hi = x->n;

	while (lo < hi) {	/* first entry starting above addr */
		size_t mid = lo + (hi - lo) / 2;
		if (x->start[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return pfc_ivindex_next(x, addr, lo);
}
