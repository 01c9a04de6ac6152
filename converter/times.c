/*
 * times.c - the array of times.h: grown by doubling, freed at once.  Filling it is sample.c's.
 */
#include <stdlib.h>
#include "converter/times.h"

void pfc_times_init(struct pfc_times *t)
{
	t->blocks = NULL;
	t->n = t->cap = t->nr_blocks = t->cap_blocks = 0;
}

void pfc_times_exit(struct pfc_times *t)
{
	size_t i;

	for (i = 0; i < t->nr_blocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	pfc_times_init(t);
}

int pfc_times_grow(struct pfc_times *t)
{
	struct pfc_stime *b;

	if (t->nr_blocks == t->cap_blocks) {
		size_t cap = t->cap_blocks ? t->cap_blocks * 2 : 16;
		struct pfc_stime **v = realloc(t->blocks, cap * sizeof(*v));
		if (!v)
			return -1;
		t->blocks = v;
		t->cap_blocks = cap;
	}
	if (!(b = malloc(PFC_TIMES_BLOCK * sizeof(*b))))
		return -1;
	t->blocks[t->nr_blocks++] = b;
	t->cap += PFC_TIMES_BLOCK;
	return 0;
}
