/*
 * chaincache.h - the callchain cache: a sample's raw callchain, in its thread's unchanged
 * address space, mapped to the aggregated stack it became, so that a repeated chain only
 * counts.  It owns the table, its arena and the counts kept in entries until settled; it
 * does not resolve frames nor decide which samples may use it (sample.c does).  The probe is
 * inline here: it runs once a sample and was tuned instruction by instruction.
 */
#ifndef PFC_CHAINCACHE_H
#define PFC_CHAINCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "converter/machine/machine.h"
#include "converter/machine/stacks.h"
#include "converter/perffile/evsel.h"

/*
 * An entry is a key header followed by the raw callchain words, both in one arena of 64-bit
 * words; the open-addressing table holds 8 bytes a slot (the hash's high half as a tag, the
 * entry's arena index), so that it stays small and cache-friendly however many distinct
 * chains there are.
 */
struct pfc_chaincache {
	uint64_t *slots;              /* hash tag << 32 | arena index; 0: empty */
	size_t cap, count;
	uint64_t **blocks;            /* arena: key headers and callchains, in 2 MiB blocks */
	uint32_t *block_used;         /* words used in each block */
	size_t nr_blocks, blocks_cap;
	uint64_t nr_hits;             /* samples counted from the cache */
	/* the hash of the record being processed as the reading thread worked it out
	 * (pipeline.c), valid when have_given_hash is set */
	uint64_t given_hash;
	int have_given_hash;
};

struct pfc_chainkey {
	const struct pfc_maps *maps;
	uint64_t gen, kgen;
	uint32_t comm, evsel;
	int32_t pid, tid;
	uint32_t nr;              /* callchain words that follow */
	uint32_t stack;           /* the aggregated stack (from here on, not part of the key) */
	uint64_t hash;
	/* samples found here, added to the stack when processing ends (pfc_chaincache_settle):
	 * a hit then touches no memory but this entry */
	uint64_t period, count;
};

#define PFC_CHAINKEY_WORDS (sizeof(struct pfc_chainkey) / 8)
#define PFC_CHAINCACHE_TAG(h) (((h) >> 32 | 1) << 32)
/* a slot's low half: arena block << PFC_CHAINCACHE_BLOCK_SHIFT | word in the block */
#ifndef PFC_RAW_BLOCK_SHIFT            /* smaller in the fuzz build (make fuzz), as order.c's blocks */
#define PFC_RAW_BLOCK_SHIFT 18
#endif
#define PFC_CHAINCACHE_BLOCK_SHIFT PFC_RAW_BLOCK_SHIFT
#define PFC_CHAINCACHE_BLOCK_WORDS ((uint64_t)1 << PFC_CHAINCACHE_BLOCK_SHIFT)    /* 2 MiB (shift 18) */
#define PFC_CHAINCACHE_MAX_BLOCKS ((size_t)1 << (32 - PFC_CHAINCACHE_BLOCK_SHIFT))

/* A polynomial over the chain's words (an add and a multiply each), mixed at the end so
 * that the words' high bits reach the low bits the table indexes with. */
static inline uint64_t pfc_chaincache_hash_words(const uint8_t *p, uint64_t nr, uint64_t seed)
{
	uint64_t h = seed ^ (nr * 0x9E3779B97F4A7C15ULL), i, v;

	for (i = 0; i < nr; i++) {
		memcpy(&v, p + i * 8, 8);
		h = (h + v) * 0xff51afd7ed558ccdULL;
	}
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 29);
}

/* The cache's hash of a sample: its chain and thread, from the record alone, so that the
 * reading thread can work it out (the key compares comm, maps and the rest). */
static inline uint64_t pfc_chaincache_hash(const uint8_t *chain, uint64_t nr, int32_t pid, int32_t tid)
{
	return pfc_chaincache_hash_words(chain, nr, ((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid) * 0x9E3779B97F4A7C15ULL);
}

static inline void pfc_chaincache_key(struct pfc_chainkey *k, const struct pfc_thread *th, uint64_t kgen,
				      uint32_t evsel, int32_t pid, int32_t tid, uint32_t nr)
{
	memset(k, 0, sizeof(*k));
	k->maps = th->maps;
	k->gen = th->maps->cgen;
	k->kgen = kgen;
	k->comm = th->comm;
	k->evsel = evsel;
	k->pid = pid;
	k->tid = tid;
	k->nr = nr;
}

static inline struct pfc_chainkey *pfc_chaincache_entry(const struct pfc_chaincache *cc, uint64_t slot)
{
	uint32_t at = (uint32_t)slot;

	return (struct pfc_chainkey *)(cc->blocks[at >> PFC_CHAINCACHE_BLOCK_SHIFT] +
				       (at & (PFC_CHAINCACHE_BLOCK_WORDS - 1)));
}

/*
 * What a lookup compares an entry's key with: its first five words as the entry holds them,
 * and nr.  Made from values in registers, with two 32-bit fields paired into the word they
 * share: a key built on the stack with 32-bit stores and compared with 64-bit loads (gcc
 * merges the two compares) stalled every probe on store-to-load forwarding.
 */
struct pfc_chainprobe {
	uint64_t maps, gen, kgen, comm_evsel, pid_tid;
	uint32_t nr;
};

/*
 * The word that holds the 32-bit `first` and, after it in memory, `second`.  The halves come
 * as 64-bit values: gcc spills a 32-bit value with a 32-bit store and may take it back with a
 * 64-bit load to shift it, a load the store cannot forward to (a stall of the probe's key on
 * every sample, as evsel was).
 */
static inline uint64_t pfc_chaincache_pair32(uint64_t first, uint64_t second)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return first << 32 | (uint32_t)second;
#else
	return second << 32 | (uint32_t)first;
#endif
}

static inline void pfc_chaincache_probe(struct pfc_chainprobe *q, const struct pfc_maps *maps, uint64_t gen,
					uint64_t kgen, uint64_t comm, uint64_t evsel, int32_t pid, int32_t tid,
					uint32_t nr)
{
	q->maps = (uint64_t)(uintptr_t)maps;
	q->gen = gen;
	q->kgen = kgen;
	q->comm_evsel = pfc_chaincache_pair32(comm, evsel);
	q->pid_tid = pfc_chaincache_pair32((uint32_t)pid, (uint32_t)tid);	/* zero-extended */
	q->nr = nr;
}

_Static_assert(offsetof(struct pfc_chainkey, gen) == 8 && offsetof(struct pfc_chainkey, kgen) == 16 &&
		       offsetof(struct pfc_chainkey, comm) == 24 && offsetof(struct pfc_chainkey, evsel) == 28 &&
		       offsetof(struct pfc_chainkey, pid) == 32 && offsetof(struct pfc_chainkey, tid) == 36,
	       "pfc_chaincache_key_eq reads the key's first five words");

static inline int pfc_chaincache_key_eq(const struct pfc_chainkey *e, const struct pfc_chainprobe *q)
{
	uint64_t w[5];

	memcpy(w, e, sizeof(w));	/* maps, gen, kgen, comm and evsel, pid and tid */
	return w[0] == q->maps && w[1] == q->gen && w[2] == q->kgen && w[3] == q->comm_evsel && w[4] == q->pid_tid &&
	       e->nr == q->nr;
}

/* A cached chain against a record's (unaligned) one, compared in place: libc's memcmp
 * takes 32 bytes a step, a third of the instructions of a word loop on 12-frame chains. */
static inline int pfc_chaincache_chain_eq(const uint64_t *e, const uint8_t *chain, uint32_t nr)
{
	return memcmp(e, chain, (size_t)nr * 8) == 0;
}

/* The slot of the entry equal to (k, chain), or the empty slot where it would go.  hashtab.h's
 * probe, written out as it was tuned (the mask worked out once) rather than through its
 * helpers: this loop runs for every sample. */
static inline __attribute__((always_inline)) uint64_t *
pfc_chaincache_lookup(struct pfc_chaincache *cc, uint64_t h, const struct pfc_chainprobe *k, const uint8_t *chain)
{
	uint64_t tag = PFC_CHAINCACHE_TAG(h), mask = cc->cap - 1;
	size_t i;

	for (i = h & mask;; i = (i + 1) & mask) {
		uint64_t *slot = &cc->slots[i];
		const uint64_t *e;
		if (!*slot)
			return slot;
		if ((*slot & 0xffffffff00000000ULL) != tag)
			continue;
		e = (const uint64_t *)pfc_chaincache_entry(cc, *slot);
		if (pfc_chaincache_key_eq((const struct pfc_chainkey *)e, k) &&
		    pfc_chaincache_chain_eq(e + PFC_CHAINKEY_WORDS, chain, k->nr))
			return slot;
	}
}

/* The cached entry of a sample's raw callchain in its thread's current maps (and the
 * kernel's maps at generation kgen), or NULL; *hash is the chain's hash either way, for
 * pfc_chaincache_insert. */
static inline __attribute__((always_inline)) struct pfc_chainkey *
pfc_chaincache_find(struct pfc_chaincache *cc, const struct pfc_thread *th, uint64_t kgen, uint64_t evsel,
		    int32_t pid, int32_t tid, const uint8_t *chain, uint32_t nr, uint64_t *hash)
{
	struct pfc_chainprobe q;
	uint64_t *slot;

	*hash = cc->have_given_hash ? cc->given_hash : pfc_chaincache_hash(chain, nr, pid, tid);
	if (!cc->cap)
		return NULL;
	__asm__("" : "+r"(evsel));	/* a full word to gcc, spilled as one (pfc_chaincache_pair32) */
	pfc_chaincache_probe(&q, th->maps, th->maps->cgen, kgen, th->comm, evsel, pid, tid, nr);
	slot = pfc_chaincache_lookup(cc, *hash, &q, chain);
	return *slot ? pfc_chaincache_entry(cc, *slot) : NULL;
}

/* A sample counted in its cached entry: added to the stack when processing ends. */
static inline void pfc_chaincache_count(struct pfc_chaincache *cc, struct pfc_evsel *ev, struct pfc_chainkey *e,
					uint64_t period)
{
	cc->nr_hits++;
	ev->period_total += period;
	e->period += period;
	e->count++;
}

/* The processing thread waits on memory more than it computes: these ask for the slot of
 * hash h, and for the entry it names once the slot has arrived (pipeline.c). */
static inline void pfc_chaincache_prefetch_slot(const struct pfc_chaincache *cc, uint64_t h)
{
	if (cc->cap)
		__builtin_prefetch(&cc->slots[h & (cc->cap - 1)]);
}

static inline void pfc_chaincache_prefetch_entry(const struct pfc_chaincache *cc, uint64_t h)
{
	uint64_t slot;

	if (!cc->cap)
		return;
	slot = cc->slots[h & (cc->cap - 1)];
	if (slot && (slot & 0xffffffff00000000ULL) == PFC_CHAINCACHE_TAG(h)) {
		const uint8_t *e = (const uint8_t *)pfc_chaincache_entry(cc, slot);
		__builtin_prefetch(e);
		__builtin_prefetch(e + 64);
		__builtin_prefetch(e + 128);
	}
}

/* Remember that (k, chain) aggregates into stack.  A full arena is not an error: the chain
 * is then resolved again the next time.  < 0: out of memory. */
int pfc_chaincache_insert(struct pfc_chaincache *cc, uint64_t h, struct pfc_chainkey *k, const uint8_t *chain,
			  uint32_t stack);
/* Add the samples counted in the cache to their stacks; returns the frames they add. */
uint64_t pfc_chaincache_settle(struct pfc_chaincache *cc, struct pfc_stacks *stacks);
void pfc_chaincache_free(struct pfc_chaincache *cc);

#endif
