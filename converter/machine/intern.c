/*
 * intern.c - the string arena behind intern.h.  Strings are appended to large blocks and
 * never move, so the pointers handed out stay valid until pfc_intern_exit.
 */
#include <stdlib.h>
#include <string.h>
#include "converter/machine/intern.h"

/* Eight bytes a step: interned strings include whole folded lines of a few hundred bytes. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0x9E3779B97F4A7C15ULL ^ (len * 0xff51afd7ed558ccdULL), v;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&v, s, 8);
		h = (h ^ v) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 29;
	}
	if (len) {
		v = 0;
		memcpy(&v, s, len);
		h = (h ^ v) * 0xbf58476d1ce4e5b9ULL;
	}
	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 29);
}

/* smaller in the fuzz build (make fuzz), as order.c's blocks */
#ifndef PFC_INTERN_BLOCK_SIZE
#define PFC_INTERN_BLOCK_SIZE (1 << 16)
#endif

int pfc_intern_init(struct pfc_intern *in)
{
	memset(in, 0, sizeof(*in));
	in->block_size = PFC_INTERN_BLOCK_SIZE;
	return pfc_intern(in, "", 0) == 0 ? 0 : -1;
}

void pfc_intern_exit(struct pfc_intern *in)
{
	size_t i;

	for (i = 0; i < in->nr_blocks; i++)
		free(in->blocks[i]);
	free(in->blocks);
	free(in->strs);
	free(in->lens);
	free(in->table);
	memset(in, 0, sizeof(*in));
}

static char *arena_alloc(struct pfc_intern *in, size_t n)
{
	char *b;

	if (!in->nr_blocks || in->block_used + n > in->block_size) {
		size_t sz = n > in->block_size ? n : in->block_size;
		if (in->nr_blocks == in->cap_blocks) {
			size_t cap = in->cap_blocks ? in->cap_blocks * 2 : 16;
			char **nb = realloc(in->blocks, cap * sizeof(*nb));
			if (!nb)
				return NULL;
			in->blocks = nb;
			in->cap_blocks = cap;
		}
		b = malloc(sz);
		if (!b)
			return NULL;
		/* a block larger than the standard size is used for this string alone */
		if (n > in->block_size && in->nr_blocks) {
			in->blocks[in->nr_blocks] = in->blocks[in->nr_blocks - 1];
			in->blocks[in->nr_blocks - 1] = b;
			in->nr_blocks++;
			return b;
		}
		in->blocks[in->nr_blocks++] = b;
		in->block_used = 0;
	}
	b = in->blocks[in->nr_blocks - 1] + in->block_used;
	in->block_used += n;
	return b;
}

static int grow_table(struct pfc_intern *in)
{
	size_t cap = in->tcap ? in->tcap * 2 : 1024, i;
	uint32_t *t = calloc(cap, sizeof(*t));

	if (!t)
		return -1;
	for (i = 0; i < in->nr; i++) {
		size_t j = hash_bytes(in->strs[i], in->lens[i]) & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = (uint32_t)i + 1;
	}
	free(in->table);
	in->table = t;
	in->tcap = cap;
	return 0;
}

uint32_t pfc_intern(struct pfc_intern *in, const char *s, size_t len)
{
	size_t j;
	char *copy;

	if ((in->nr + 1) * 2 > in->tcap && grow_table(in) < 0)
		return UINT32_MAX;
	j = hash_bytes(s, len) & (in->tcap - 1);
	while (in->table[j]) {
		uint32_t id = in->table[j] - 1;
		if (in->lens[id] == len && !memcmp(in->strs[id], s, len))
			return id;
		j = (j + 1) & (in->tcap - 1);
	}
	if (in->nr == in->cap) {
		size_t cap = in->cap ? in->cap * 2 : 1024;
		const char **ns = realloc(in->strs, cap * sizeof(*ns));
		uint32_t *nl;
		if (!ns)
			return UINT32_MAX;
		in->strs = ns;
		nl = realloc(in->lens, cap * sizeof(*nl));
		if (!nl)
			return UINT32_MAX;
		in->lens = nl;
		in->cap = cap;
	}
	copy = arena_alloc(in, len + 1);
	if (!copy)
		return UINT32_MAX;
	memcpy(copy, s, len);
	copy[len] = 0;
	in->strs[in->nr] = copy;
	in->lens[in->nr] = (uint32_t)len;
	in->table[j] = (uint32_t)in->nr + 1;
	return (uint32_t)in->nr++;
}

int pfc_intern_cmp(const void *a, const void *b, void *arg)
{
	const struct pfc_intern *in = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint32_t lx = pfc_intern_len(in, x), ly = pfc_intern_len(in, y);
	int r = memcmp(pfc_intern_str(in, x), pfc_intern_str(in, y), lx < ly ? lx : ly);

	if (r)
		return r;
	return lx < ly ? -1 : lx > ly;
}
