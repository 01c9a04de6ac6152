/*
 * hashtab.h - the open-addressing scheme the converter's hash tables share (the callchain
 * cache, the unwound-stack cache, the inline-frame cache, the counters' last values): a
 * power-of-two array of fixed-size slots, linear probing, at most half full, doubled when an
 * insert would pass that.  Each table keeps its slot layout and its equality test, so that a
 * probe stays a loop the compiler sees whole; what they share is here: where a probe starts
 * and goes on, when to grow, and growing.  It allocates no entries (as git's hashmap.h).
 */
#ifndef PFC_HASHTAB_H
#define PFC_HASHTAB_H

#include <stddef.h>
#include <stdint.h>

static inline size_t pfc_hashtab_start(uint64_t h, size_t cap)
{
	return (size_t)h & (cap - 1);
}

static inline size_t pfc_hashtab_next(size_t i, size_t cap)
{
	return (i + 1) & (cap - 1);
}

/* Whether one more entry would make the table more than half full (or it has no slots). */
static inline int pfc_hashtab_full(size_t count, size_t cap)
{
	return (count + 1) * 2 > cap;
}

/* One word into a hash: a multiply, and the high bits folded down to the indexed ones. */
static inline uint64_t pfc_hashtab_mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

struct pfc_hashtab_ops {
	size_t slot_size;
	size_t first_cap;                                /* a power of two */
	int (*used)(const void *slot, void *ctx);        /* the slot holds an entry */
	uint64_t (*hash)(const void *slot, void *ctx);   /* where it probes from */
	void *(*calloc)(size_t nmemb, size_t size);      /* NULL: calloc; freed with free() */
};

/* Double the table (first_cap slots when it has none), every entry moved to where its hash
 * probes first.  slotsp is the address of the table's pointer, whatever its slot type.
 * 0, or -1 without memory (the table is left as it was). */
int pfc_hashtab_grow(void *slotsp, size_t *cap, const struct pfc_hashtab_ops *ops, void *ctx);

#endif
