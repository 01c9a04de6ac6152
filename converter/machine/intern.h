/*
 * intern.h - string interning: every name that ends up in a frame or a thread is stored
 * once in an arena and referred to by a 32-bit id.  Id 0 is the empty string.
 */
#ifndef PFC_INTERN_H
#define PFC_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct pfc_intern {
	char **blocks;
	size_t nr_blocks, cap_blocks;
	size_t block_used, block_size;
	const char **strs;         /* id -> string */
	uint32_t *lens;
	uint32_t *hashes;          /* id -> its hash's low half: the table grows without hashing again */
	size_t nr, cap;
	uint32_t *table;           /* open addressing: id+1, 0 = empty */
	size_t tcap;
};

int pfc_intern_init(struct pfc_intern *in);
void pfc_intern_exit(struct pfc_intern *in);
/* Returns the id, or UINT32_MAX when out of memory. */
uint32_t pfc_intern(struct pfc_intern *in, const char *s, size_t len);
static inline const char *pfc_intern_str(const struct pfc_intern *in, uint32_t id)
{
	return in->strs[id];
}
static inline uint32_t pfc_intern_len(const struct pfc_intern *in, uint32_t id)
{
	return in->lens[id];
}
/* qsort_r's comparison of two ids (uint32_t) by their strings' bytes, arg the struct
 * pfc_intern: the order of sort(1) under LC_ALL=C, a shorter prefix first. */
int pfc_intern_cmp(const void *a, const void *b, void *arg);
/* Sort n ids in that order, faster than qsort_r with pfc_intern_cmp when the strings share
 * long prefixes (folded lines do: the same comm and root frames). */
void pfc_intern_sort(const struct pfc_intern *in, uint32_t *ids, size_t n);

#endif
