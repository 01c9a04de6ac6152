/*
 * hashtab.c - growing an open-addressing table of hashtab.h: the one rehash loop the
 * converter's tables share.  Probing and comparing stay with each table.
 */
#include <stdlib.h>
#include <string.h>
#include "converter/util/hashtab.h"

int pfc_hashtab_grow(void *slotsp, size_t *cap, const struct pfc_hashtab_ops *ops, void *ctx)
{
	size_t ncap = *cap ? *cap * 2 : ops->first_cap, i, sz = ops->slot_size;
	char *old, *nv = ops->calloc ? ops->calloc(ncap, sz) : calloc(ncap, sz);

	if (!nv)
		return -1;
	memcpy(&old, slotsp, sizeof(old));	/* any table's pointer, without aliasing it */
	for (i = 0; i < *cap; i++) {
		const char *e = old + i * sz;
		size_t j;
		if (!ops->used(e, ctx))
			continue;
		for (j = pfc_hashtab_start(ops->hash(e, ctx), ncap); ops->used(nv + j * sz, ctx); j = pfc_hashtab_next(j, ncap))
			;
		memcpy(nv + j * sz, e, sz);
	}
	free(old);
	memcpy(slotsp, &nv, sizeof(nv));
	*cap = ncap;
	return 0;
}
