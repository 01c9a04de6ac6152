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
	free(in->hashes);
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
		size_t j = in->hashes[i] & (cap - 1);
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
	uint32_t h;

	if ((in->nr + 1) * 2 > in->tcap && grow_table(in) < 0)
		return UINT32_MAX;
	h = (uint32_t)hash_bytes(s, len);
	j = h & (in->tcap - 1);
	while (in->table[j]) {
		uint32_t id = in->table[j] - 1;
		if (in->hashes[id] == h && in->lens[id] == len && !memcmp(in->strs[id], s, len))
			return id;
		j = (j + 1) & (in->tcap - 1);
	}
	if (in->nr == in->cap) {
		size_t cap = in->cap ? in->cap * 2 : 1024;
		const char **ns = realloc(in->strs, cap * sizeof(*ns));
		uint32_t *nl, *nh;
		if (!ns)
			return UINT32_MAX;
		in->strs = ns;
		nl = realloc(in->lens, cap * sizeof(*nl));
		if (!nl)
			return UINT32_MAX;
		in->lens = nl;
		nh = realloc(in->hashes, cap * sizeof(*nh));
		if (!nh)
			return UINT32_MAX;
		in->hashes = nh;
		in->cap = cap;
	}
	copy = arena_alloc(in, len + 1);
	if (!copy)
		return UINT32_MAX;
	memcpy(copy, s, len);
	copy[len] = 0;
	in->strs[in->nr] = copy;
	in->lens[in->nr] = (uint32_t)len;
	in->hashes[in->nr] = h;
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

/* Bytes d to d + 7 of string id as one big-endian number (zeros past its end) and how many
 * of them it has (0-8): pairs that compare as the bytes do, a shorter string first. */
struct chunk {
	uint64_t v;
	unsigned n;
};

static inline struct chunk chunk_at(const struct pfc_intern *in, uint32_t id, size_t d)
{
	struct chunk c = { 0, 0 };
	size_t len = in->lens[id];
	const unsigned char *p = (const unsigned char *)in->strs[id] + d;

	if (d >= len)
		return c;
	c.n = len - d >= 8 ? 8 : (unsigned)(len - d);
	if (c.n == 8) {
		memcpy(&c.v, p, 8);
		c.v = __builtin_bswap64(c.v);
	} else {
		unsigned i;
		for (i = 0; i < c.n; i++)
			c.v |= (uint64_t)p[i] << (56 - 8 * i);
	}
	return c;
}

static inline int chunk_cmp(struct chunk a, struct chunk b)
{
	if (a.v != b.v)
		return a.v < b.v ? -1 : 1;
	return a.n < b.n ? -1 : a.n > b.n;
}

/* Ids whose strings share their first d bytes, by insertion: few of them. */
static void sort_few(const struct pfc_intern *in, uint32_t *a, size_t n, size_t d)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		uint32_t x = a[i];
		for (j = i; j > 0; j--) {
			uint32_t y = a[j - 1], lx = in->lens[x] - (uint32_t)d, ly = in->lens[y] - (uint32_t)d;
			int r = memcmp(in->strs[y] + d, in->strs[x] + d, lx < ly ? lx : ly);
			if (r < 0 || (r == 0 && ly <= lx))
				break;
			a[j] = y;
		}
		a[j] = x;
	}
}

/*
 * Multikey quicksort (Bentley and Sedgewick) on 8-byte digits: a three-way partition on
 * bytes d to d + 7, the equal part then sorted from byte d + 8.  Every id in a[0..n) has the
 * same first d bytes, so a shared prefix is read once per partition instead of once per
 * comparison.  The largest part is looped on, so the recursion is at most log2(n) deep.
 */
static void mkqs(const struct pfc_intern *in, uint32_t *a, size_t n, size_t d)
{
	while (n > 12) {
		struct chunk x = chunk_at(in, a[0], d), y = chunk_at(in, a[n / 2], d), z = chunk_at(in, a[n - 1], d), v;
		size_t lt = 0, i = 0, gt = n;

		if (chunk_cmp(x, y) < 0)
			v = chunk_cmp(y, z) < 0 ? y : chunk_cmp(x, z) < 0 ? z : x;
		else
			v = chunk_cmp(x, z) < 0 ? x : chunk_cmp(y, z) < 0 ? z : y;
		/* a[0..lt) < v, a[lt..i) == v, a[gt..n) > v */
		while (i < gt) {
			int c = chunk_cmp(chunk_at(in, a[i], d), v);
			uint32_t t;
			if (c < 0) {
				t = a[lt];
				a[lt++] = a[i];
				a[i++] = t;
			} else if (c > 0) {
				t = a[--gt];
				a[gt] = a[i];
				a[i] = t;
			} else {
				i++;
			}
		}
		/* the two smaller parts by recursion, each at most half of n; the largest in this
		 * loop.  An equal part whose strings end within the digit (v.n < 8) is one string:
		 * ids are distinct. */
		{
			size_t nl = lt, ne = v.n < 8 ? 0 : gt - lt, ng = n - gt;
			if (nl >= ne && nl >= ng) {
				mkqs(in, a + lt, ne, d + 8);
				mkqs(in, a + gt, ng, d);
				n = nl;
			} else if (ne >= ng) {
				mkqs(in, a, nl, d);
				mkqs(in, a + gt, ng, d);
				a += lt;
				n = ne;
				d += 8;
			} else {
				mkqs(in, a, nl, d);
				mkqs(in, a + lt, ne, d + 8);
				a += gt;
				n = ng;
			}
		}
	}
	sort_few(in, a, n, d);
}

void pfc_intern_sort(const struct pfc_intern *in, uint32_t *ids, size_t n)
{
	uint64_t total = 0;
	size_t i;

	/* Strings of kilobytes (the lines of a .NET recording's deep stacks) differ late and one
	 * by one: there a merge sort whose comparisons are libc's vector memcmp reads fewer
	 * instructions than digits partitioned one at a time (20 M against 30 M on an ASP.NET
	 * recording's 12,575 lines; 13 M against 3 M the other way for a frame-pointer
	 * recording's 10,948 lines of a few hundred bytes). */
	for (i = 0; i < n; i++)
		total += in->lens[ids[i]];
	if (n && total / n > 512)
		qsort_r(ids, n, sizeof(*ids), pfc_intern_cmp, (void *)in);
	else
		mkqs(in, ids, n, 0);
}
