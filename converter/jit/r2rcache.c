/*
 * r2rcache.c - owns the payload of a ReadyToRun image's entry in the symbol cache: the
 * method names a conversion asked of r2rmeta.c, by the runtime function that holds them,
 * and the modules whose files those names were read from.  Reading it from untrusted bytes
 * (checked whole before a lookup follows an offset), looking an RVA up in place, and
 * merging a conversion's new answers into what was read.  Not the key, the image or the
 * files (r2rframes.c), nor the entry's header and checksum (symcache.c).
 *
 * Why only what was asked: formatting every name of System.Private.CoreLib (48 k methods)
 * costs 60 ms, more than a whole conversion of a small recording; the frames of one service
 * land in a few thousand of them, the same ones recording after recording.
 *
 * Layout (native byte order, which the entry's header checks): "R2RM", version, nrec, nmods,
 * pool_len, nr_methods, nr_bad_entries, flags (1: composite); nrec records {span_begin,
 * span_end, begin, name} sorted by span and not overlapping; nmods name offsets; the pool
 * of NUL-terminated names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "converter/util/bytes.h"
#include "converter/jit/r2rcache.h"

#define MAGIC 0x4d523252u	/* "R2RM" */
#define VERSION 1u
#define HEAD 32u
#define REC 16u

static uint32_t rec_field(const uint8_t *recs, uint32_t i, unsigned f)
{
	return pfc_ld32(recs + (size_t)i * REC + 4 * f, 0);
}

/* a name at off: inside the pool, not empty (the pool ends with a NUL, checked) */
static int name_ok(const struct pfc_r2rcache_view *v, uint32_t off)
{
	return off < v->pool_len && v->pool[off];
}

int pfc_r2rcache_parse(const uint8_t *p, size_t len, struct pfc_r2rcache_view *v)
{
	uint64_t need;
	uint32_t i, flags;

	memset(v, 0, sizeof(*v));
	if (len < HEAD || pfc_ld32(p, 0) != MAGIC || pfc_ld32(p + 4, 0) != VERSION)
		return -EINVAL;
	v->nrec = pfc_ld32(p + 8, 0);
	v->nmods = pfc_ld32(p + 12, 0);
	v->pool_len = pfc_ld32(p + 16, 0);
	v->nr_methods = pfc_ld32(p + 20, 0);
	v->nr_bad_entries = pfc_ld32(p + 24, 0);
	flags = pfc_ld32(p + 28, 0);
	need = (uint64_t)HEAD + (uint64_t)v->nrec * REC + (uint64_t)v->nmods * 4 + v->pool_len;
	if (need != len || flags > 1 || (v->pool_len && p[len - 1]))
		return -EINVAL;
	v->composite = (int)flags;
	v->recs = p + HEAD;
	v->mods = v->recs + (size_t)v->nrec * REC;
	v->pool = (const char *)(v->mods + (size_t)v->nmods * 4);
	for (i = 0; i < v->nrec; i++) {
		uint32_t sb = rec_field(v->recs, i, 0), se = rec_field(v->recs, i, 1);
		uint32_t b = rec_field(v->recs, i, 2), n = rec_field(v->recs, i, 3);
		if (se <= sb || b > sb || (n != PFC_R2RCACHE_NONE && !name_ok(v, n)))
			return -EINVAL;
		if (i && sb < rec_field(v->recs, i - 1, 1))
			return -EINVAL;
	}
	for (i = 0; i < v->nmods; i++) {
		uint32_t n = pfc_ld32(v->mods + 4ull * i, 0);
		if (!name_ok(v, n) || strchr(v->pool + n, '/'))
			return -EINVAL;
	}
	return 0;
}

int pfc_r2rcache_find(const struct pfc_r2rcache_view *v, uint32_t rva, const char **name, uint32_t *begin)
{
	uint32_t lo = 0, hi = v->nrec, n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (rec_field(v->recs, mid, 0) <= rva)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || rva >= rec_field(v->recs, lo - 1, 1))
		return 0;
	n = rec_field(v->recs, lo - 1, 3);
	*name = n == PFC_R2RCACHE_NONE ? NULL : v->pool + n;
	*begin = rec_field(v->recs, lo - 1, 2);
	return 1;
}

const char *pfc_r2rcache_module(const struct pfc_r2rcache_view *v, uint32_t i)
{
	return v->pool + pfc_ld32(v->mods + 4ull * i, 0);
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (!(q = realloc(*p, n * size)))
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

void pfc_r2rcache_add(struct pfc_r2rcache_add *a, uint32_t span_begin, uint32_t span_end, uint32_t begin,
		      const char *name)
{
	struct pfc_r2rcache_rec *r;
	size_t nl = name ? strlen(name) + 1 : 0;

	if (a->oom || span_end <= span_begin || begin > span_begin || (name && nl == 1))
		return;
	if (grow((void **)&a->recs, &a->cap, a->n + 1, sizeof(*a->recs)) < 0 ||
	    grow((void **)&a->pool, &a->pool_cap, a->pool_len + nl, 1) < 0 || a->pool_len + nl > UINT32_MAX / 2) {
		a->oom = 1;
		return;
	}
	r = &a->recs[a->n++];
	r->span_begin = span_begin;
	r->span_end = span_end;
	r->begin = begin;
	r->name = PFC_R2RCACHE_NONE;
	if (name) {
		r->name = (uint32_t)a->pool_len;
		memcpy(a->pool + a->pool_len, name, nl);
		a->pool_len += nl;
	}
}

void pfc_r2rcache_add_module(struct pfc_r2rcache_add *a, const char *name)
{
	char **v, *d;
	size_t i;

	if (a->oom || !*name || strchr(name, '/'))
		return;
	for (i = 0; i < a->nmods; i++)
		if (!strcmp(a->mods[i], name))
			return;
	if (!(v = realloc(a->mods, (a->nmods + 1) * sizeof(*v))) || !(d = strdup(name))) {
		if (v)
			a->mods = v;
		a->oom = 1;
		return;
	}
	a->mods = v;
	a->mods[a->nmods++] = d;
}

void pfc_r2rcache_add_free(struct pfc_r2rcache_add *a)
{
	size_t i;

	for (i = 0; i < a->nmods; i++)
		free(a->mods[i]);
	free(a->mods);
	free(a->recs);
	free(a->pool);
	memset(a, 0, sizeof(*a));
}

static int cmp_rec(const void *x, const void *y)
{
	const struct pfc_r2rcache_rec *a = x, *b = y;

	if (a->span_begin != b->span_begin)
		return a->span_begin < b->span_begin ? -1 : 1;
	return a->span_end < b->span_end ? -1 : a->span_end > b->span_end;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* a record with its name as a string, from either side */
struct mrec {
	uint32_t span_begin, span_end, begin;
	const char *name;
};

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

int pfc_r2rcache_encode(const struct pfc_r2rcache_view *old, struct pfc_r2rcache_add *a, uint32_t nr_methods,
			uint32_t nr_bad_entries, int composite, uint8_t **out, size_t *len)
{
	size_t nold = old ? old->nrec : 0, nm = 0, i = 0, j = 0, k, nmods = 0, pool = 0, off;
	struct mrec *m = malloc((nold + a->n + 1) * sizeof(*m));
	const char **mods = malloc((a->nmods + (old ? old->nmods : 0) + 1) * sizeof(*mods));
	uint8_t *p = NULL, *w;
	const char *prev = NULL;
	uint32_t prev_off = 0;

	*out = NULL;
	if (!m || !mods)
		goto oom;
	if (a->n)
		qsort(a->recs, a->n, sizeof(*a->recs), cmp_rec);
	/* both sides sorted: merge, keeping the first of records that overlap (the same
	 * function asked twice) */
	while (i < nold || j < a->n) {
		struct mrec r;
		if (j >= a->n || (i < nold && rec_field(old->recs, (uint32_t)i, 0) <= a->recs[j].span_begin)) {
			uint32_t n = rec_field(old->recs, (uint32_t)i, 3);
			r.span_begin = rec_field(old->recs, (uint32_t)i, 0);
			r.span_end = rec_field(old->recs, (uint32_t)i, 1);
			r.begin = rec_field(old->recs, (uint32_t)i, 2);
			r.name = n == PFC_R2RCACHE_NONE ? NULL : old->pool + n;
			i++;
		} else {
			r.span_begin = a->recs[j].span_begin;
			r.span_end = a->recs[j].span_end;
			r.begin = a->recs[j].begin;
			r.name = a->recs[j].name == PFC_R2RCACHE_NONE ? NULL : a->pool + a->recs[j].name;
			j++;
		}
		if (nm && r.span_begin < m[nm - 1].span_end)
			continue;
		m[nm++] = r;
	}
	for (k = 0; old && k < old->nmods; k++)
		mods[nmods++] = pfc_r2rcache_module(old, (uint32_t)k);
	for (k = 0; k < a->nmods; k++)
		mods[nmods++] = a->mods[k];
	if (nmods)
		qsort(mods, nmods, sizeof(*mods), cmp_str);
	for (i = k = 0; i < nmods; i++)
		if (!k || strcmp(mods[k - 1], mods[i]))
			mods[k++] = mods[i];
	nmods = k;
	/* a method's funclets and parts share its name: written once */
	for (i = 0; i < nm; i++)
		if (m[i].name && (!prev || strcmp(prev, m[i].name)))
			pool += strlen(prev = m[i].name) + 1;
	for (i = 0; i < nmods; i++)
		pool += strlen(mods[i]) + 1;
	if (nm > UINT32_MAX / REC || pool > UINT32_MAX / 2)
		goto oom;
	*len = HEAD + nm * REC + nmods * 4 + pool;
	if (!(p = calloc(1, *len)))
		goto oom;
	put32(p, MAGIC);
	put32(p + 4, VERSION);
	put32(p + 8, (uint32_t)nm);
	put32(p + 12, (uint32_t)nmods);
	put32(p + 16, (uint32_t)pool);
	put32(p + 20, nr_methods);
	put32(p + 24, nr_bad_entries);
	put32(p + 28, composite ? 1 : 0);
	w = p + HEAD + nm * REC + nmods * 4;	/* the pool */
	off = 0;
	prev = NULL;
	for (i = 0; i < nm; i++) {
		uint8_t *r = p + HEAD + i * REC;
		uint32_t name = PFC_R2RCACHE_NONE;
		if (m[i].name) {
			if (!prev || strcmp(prev, m[i].name)) {
				size_t n = strlen(m[i].name) + 1;
				prev_off = (uint32_t)off;
				memcpy(w + off, m[i].name, n);
				off += n;
				prev = m[i].name;
			}
			name = prev_off;
		}
		put32(r, m[i].span_begin);
		put32(r + 4, m[i].span_end);
		put32(r + 8, m[i].begin);
		put32(r + 12, name);
	}
	for (i = 0; i < nmods; i++) {
		size_t n = strlen(mods[i]) + 1;
		put32(p + HEAD + nm * REC + 4 * i, (uint32_t)off);
		memcpy(w + off, mods[i], n);
		off += n;
	}
	free(m);
	free(mods);
	*out = p;
	return 0;
oom:
	free(m);
	free(mods);
	free(p);
	return -ENOMEM;
}
