/*
 * chaincache.c - the callchain cache's slow side: inserting an entry (growing the table and
 * the arena), settling the counts kept in entries into their stacks, freeing.  The lookup
 * and the count of a hit are inline in chaincache.h; which samples may use the cache, and
 * when an entry may be made, is the caller's (sample.c).
 */
#include <stdlib.h>
#include <string.h>
#include "converter/machine/chaincache.h"
#include "converter/util/hashtab.h"
#include "converter/util/mem.h"

uint64_t pfc_chaincache_settle(struct pfc_chaincache *cc, struct pfc_stacks *stacks)
{
	uint64_t frames = 0, at;
	size_t b;

	for (b = 0; b < cc->nr_blocks; b++) {
		for (at = 0; at < cc->block_used[b];) {
			struct pfc_chainkey *k = (struct pfc_chainkey *)(cc->blocks[b] + at);
			struct pfc_stack *st = &stacks->stacks[k->stack];
			st->period += k->period;
			st->count += k->count;
			frames += k->count * st->nr;
			k->period = k->count = 0;
			at += PFC_CHAINKEY_WORDS + k->nr;
		}
	}
	return frames;
}

static int slot_used(const void *slot, void *ctx)
{
	(void)ctx;
	return *(const uint64_t *)slot != 0;
}

static uint64_t slot_hash(const void *slot, void *ctx)
{
	return pfc_chaincache_entry(ctx, *(const uint64_t *)slot)->hash;
}

/* The table is the one large array here: huge pages (mem.h). */
static const struct pfc_hashtab_ops chaincache_ops = {
	.slot_size = sizeof(uint64_t), .first_cap = 4096, .used = slot_used, .hash = slot_hash,
	.calloc = pfc_mem_calloc,
};

/* A new arena block when the last one cannot take need words: 0, 1 when the arena is
 * full (not an error), -1 without memory. */
static int chaincache_room(struct pfc_chaincache *cc, uint64_t need)
{
	uint64_t *blk;

	if (cc->nr_blocks && cc->block_used[cc->nr_blocks - 1] + need <= PFC_CHAINCACHE_BLOCK_WORDS)
		return 0;
	if (cc->nr_blocks == PFC_CHAINCACHE_MAX_BLOCKS)
		return 1;
	if (cc->nr_blocks == cc->blocks_cap) {
		size_t cap = cc->blocks_cap ? cc->blocks_cap * 2 : 16;
		uint64_t **nb = realloc(cc->blocks, cap * sizeof(*nb));
		uint32_t *nu;
		if (!nb)
			return -1;
		cc->blocks = nb;
		nu = realloc(cc->block_used, cap * sizeof(*nu));
		if (!nu)
			return -1;
		cc->block_used = nu;
		cc->blocks_cap = cap;
	}
	if (!(blk = pfc_mem_alloc(PFC_CHAINCACHE_BLOCK_WORDS * sizeof(*blk))))
		return -1;
	cc->blocks[cc->nr_blocks] = blk;
	cc->block_used[cc->nr_blocks++] = 0;
	return 0;
}

int pfc_chaincache_insert(struct pfc_chaincache *cc, uint64_t h, struct pfc_chainkey *k, const uint8_t *chain,
			  uint32_t stack)
{
	uint64_t *slot, *e, need = PFC_CHAINKEY_WORDS + k->nr;
	struct pfc_chainprobe q;
	size_t b;
	int ret;

	if (pfc_hashtab_full(cc->count, cc->cap) && pfc_hashtab_grow(&cc->slots, &cc->cap, &chaincache_ops, cc) < 0)
		return -1;
	if (need > PFC_CHAINCACHE_BLOCK_WORDS)
		return 0;
	if ((ret = chaincache_room(cc, need)) != 0)
		return ret < 0 ? -1 : 0;
	pfc_chaincache_probe(&q, k->maps, k->gen, k->kgen, k->comm, k->evsel, k->pid, k->tid, k->nr);
	slot = pfc_chaincache_lookup(cc, h, &q, chain);
	if (*slot)
		return 0;
	k->stack = stack;
	k->hash = h;
	k->period = 0;
	k->count = 0;
	b = cc->nr_blocks - 1;
	e = cc->blocks[b] + cc->block_used[b];
	memcpy(e, k, sizeof(*k));
	memcpy(e + PFC_CHAINKEY_WORDS, chain, (size_t)k->nr * 8);
	*slot = PFC_CHAINCACHE_TAG(h) | (uint64_t)b << PFC_CHAINCACHE_BLOCK_SHIFT | cc->block_used[b];
	cc->block_used[b] += (uint32_t)need;
	cc->count++;
	return 0;
}

void pfc_chaincache_free(struct pfc_chaincache *cc)
{
	size_t b;

	free(cc->slots);
	for (b = 0; b < cc->nr_blocks; b++)
		free(cc->blocks[b]);
	free(cc->blocks);
	free(cc->block_used);
	memset(cc, 0, sizeof(*cc));
}
