/*
 * grow.h - an array indexed by a dense id (a DSO's id, a stack's id) that grows to take the
 * id, by doubling, the new elements zeroed: the per-DSO state of the unwinder, the inline
 * frames and the symbol sources.  Not for the large arrays of the hot path (mem.h).
 */
#ifndef PFC_GROW_H
#define PFC_GROW_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Element idx of the array at *vp (the address of its pointer, whatever its type) of *nr
 * elements of size bytes, grown to first elements or more as needed: NULL without memory. */
static inline void *pfc_grow_at(void *vp, size_t *nr, size_t idx, size_t size, size_t first)
{
	char *v;

	memcpy(&v, vp, sizeof(v));
	if (idx >= *nr) {
		size_t n = *nr ? *nr : first;
		char *nv;
		while (n <= idx)
			n *= 2;
		if (!(nv = realloc(v, n * size)))
			return NULL;
		memset(nv + *nr * size, 0, (n - *nr) * size);
		v = nv;
		*nr = n;
		memcpy(vp, &v, sizeof(v));
	}
	return v + idx * size;
}

#endif
