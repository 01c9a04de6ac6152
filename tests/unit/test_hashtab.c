/*
 * test_hashtab.c - the tables' shared pieces: util/hashtab.h's grow keeps every entry findable
 * where its hash probes from, leaves the table alone without memory; util/grow.h's arrays
 * grow to take an index with the new elements zeroed; the callchain cache finds what it was
 * given, counts into it and settles the counts into the stacks.
 */
#include <stdlib.h>
#include <string.h>
#include "converter/machine/chaincache.h"
#include "converter/util/grow.h"
#include "converter/util/hashtab.h"
#include "tests/unit/check.h"

struct ent {
	uint64_t key;                 /* 0: empty */
	uint64_t value;
};

static int ent_used(const void *slot, void *ctx)
{
	(void)ctx;
	return ((const struct ent *)slot)->key != 0;
}

static uint64_t ent_hash(const void *slot, void *ctx)
{
	(void)ctx;
	return ((const struct ent *)slot)->key * 0x9e3779b97f4a7c15ULL;
}

static void *no_calloc(size_t n, size_t size)
{
	(void)n;
	(void)size;
	return NULL;
}

static struct ent *find(struct ent *v, size_t cap, uint64_t key)
{
	size_t j;

	for (j = pfc_hashtab_start(key * 0x9e3779b97f4a7c15ULL, cap); v[j].key; j = pfc_hashtab_next(j, cap))
		if (v[j].key == key)
			return &v[j];
	return &v[j];
}

static void test_grow(void)
{
	struct pfc_hashtab_ops ops = { .slot_size = sizeof(struct ent), .first_cap = 4, .used = ent_used, .hash = ent_hash };
	struct ent *v = NULL, *e;
	size_t cap = 0, count = 0, caps = 0;
	uint64_t k;
	int ok = 1;

	for (k = 1; k <= 1000; k++) {
		if (pfc_hashtab_full(count, cap)) {
			if (pfc_hashtab_grow(&v, &cap, &ops, NULL) < 0)
				break;
			caps++;
		}
		e = find(v, cap, k * 7);
		e->key = k * 7;
		e->value = k;
		count++;
	}
	check(count == 1000 && cap == 2048 && caps == 10, "1000 entries in %zu slots after %zu grows", cap, caps);
	for (k = 1; k <= 1000; k++)
		ok &= find(v, cap, k * 7)->value == k;
	check(ok, "every entry found after the grows");
	check(!find(v, cap, 3)->key, "a key never added is not found");
	ops.calloc = no_calloc;
	check(pfc_hashtab_grow(&v, &cap, &ops, NULL) == -1 && cap == 2048 && find(v, cap, 7)->value == 1,
	      "without memory the table stays as it was");
	free(v);
}

static void test_grow_at(void)
{
	uint32_t *v = NULL, *p;
	size_t nr = 0, i;
	int zero = 1;

	p = pfc_grow_at(&v, &nr, 0, sizeof(*v), 16);
	check(p == v && nr == 16, "first growth to 16, got %zu", nr);
	*p = 5;
	p = pfc_grow_at(&v, &nr, 100, sizeof(*v), 16);
	check(p == v + 100 && nr == 128 && v[0] == 5, "index 100 doubles to 128 and keeps element 0 (%zu)", nr);
	for (i = 1; i < nr; i++)
		zero &= v[i] == 0;
	check(zero, "new elements are zero");
	check(pfc_grow_at(&v, &nr, 127, sizeof(*v), 16) == v + 127 && nr == 128, "an index inside does not grow");
	free(v);
}

static void test_chaincache(void)
{
	struct pfc_chaincache cc;
	struct pfc_stacks stacks;
	struct pfc_maps maps;
	struct pfc_thread th;
	struct pfc_evsel ev;
	struct pfc_chainkey key, *e;
	uint8_t chain[3 * 8], other[3 * 8];
	uint64_t h, h2, w, frames;
	uint32_t stack, ids[2] = { 0, 0 };
	int i, ok = 1;

	memset(&cc, 0, sizeof(cc));
	memset(&maps, 0, sizeof(maps));
	memset(&th, 0, sizeof(th));
	memset(&ev, 0, sizeof(ev));
	check(pfc_stacks_init(&stacks) == 0, "stacks");
	th.maps = &maps;
	th.comm = 3;
	for (i = 0; i < 3; i++) {
		w = 0xffffffff81000000ULL + (uint64_t)i * 16;
		memcpy(chain + i * 8, &w, 8);
		w += 1;
		memcpy(other + i * 8, &w, 8);
	}
	check(!pfc_chaincache_find(&cc, &th, 0, 1, 10, 11, chain, 3, &h), "an empty cache finds nothing");
	check(h == pfc_chaincache_hash(chain, 3, 10, 11), "the hash is the chain's and thread's");
	ids[0] = pfc_stacks_frame(&stacks, NULL, 1, 0);
	ids[1] = pfc_stacks_frame(&stacks, NULL, 2, 0);
	stack = pfc_stacks_add(&stacks, 1, 3, 10, 11, ids, 2, 100);
	pfc_chaincache_key(&key, &th, 0, 1, 10, 11, 3);
	check(pfc_chaincache_insert(&cc, h, &key, chain, stack) == 0, "insert");
	for (i = 0; i < 5; i++) {
		e = pfc_chaincache_find(&cc, &th, 0, 1, 10, 11, chain, 3, &h2);
		ok &= e && e->stack == stack && h2 == h;
		if (e)
			pfc_chaincache_count(&cc, &ev, e, 10);
	}
	check(ok, "the chain is found again, in its stack");
	check(!pfc_chaincache_find(&cc, &th, 0, 1, 10, 11, other, 3, &h2), "another chain is not");
	check(!pfc_chaincache_find(&cc, &th, 1, 1, 10, 11, chain, 3, &h2), "nor the chain under another kernel map");
	check(!pfc_chaincache_find(&cc, &th, 0, 2, 10, 11, chain, 3, &h2), "nor under another event");
	maps.cgen++;
	check(!pfc_chaincache_find(&cc, &th, 0, 1, 10, 11, chain, 3, &h2), "nor after the maps changed");
	frames = pfc_chaincache_settle(&cc, &stacks);
	check(cc.nr_hits == 5 && ev.period_total == 50, "hits counted: %llu", (unsigned long long)cc.nr_hits);
	check(stacks.stacks[stack].period == 150 && stacks.stacks[stack].count == 6 && frames == 10,
	      "settled into the stack: period %llu, count %llu, frames %llu",
	      (unsigned long long)stacks.stacks[stack].period, (unsigned long long)stacks.stacks[stack].count,
	      (unsigned long long)frames);
	check(pfc_chaincache_settle(&cc, &stacks) == 0 && stacks.stacks[stack].count == 6, "settling twice adds nothing");
	pfc_chaincache_free(&cc);
	pfc_stacks_exit(&stacks);
}

int main(void)
{
	test_grow();
	test_grow_at();
	test_chaincache();
	return check_done("test_hashtab");
}
