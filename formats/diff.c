/*
 * diff.c - the folded lines of two profiles with both weights, as FlameGraph's
 * difffolded.pl makes them from two folded files (its -n scaling included), and the
 * functions of those lines with their self and total shares.  The folded, svg and top
 * writers draw from it, and the command line's --fail-if-grown gate reads the shares.
 * It reads the sessions only through folded.c's walk, so a line here is a folded line.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "converter/util/strbuf.h"
#include "formats/diff.h"
#include "formats/folded.h"

struct walk {
	struct pfc_diff *d;
	int side;
	struct pfc_sb line;
	struct pfc_error *err;
};

static int grow(struct pfc_diff *d, uint32_t id)
{
	size_t cap = d->cap ? d->cap * 2 : 1024, k, z;

	if (id < d->cap)
		return 0;
	while (cap <= id)
		cap *= 2;
	for (k = 0; k < 2; k++) {
		uint64_t *nw = realloc(d->w[k], cap * sizeof(*nw)), *nn;
		if (!nw)
			return -1;
		for (z = d->cap; z < cap; z++)
			nw[z] = UINT64_MAX;	/* not a line of this profile */
		d->w[k] = nw;
		if (!(nn = realloc(d->cnt[k], cap * sizeof(*nn))))
			return -1;
		memset(nn + d->cap, 0, (cap - d->cap) * sizeof(*nn));
		d->cnt[k] = nn;
	}
	d->cap = cap;
	return 0;
}

static int add_line(void *arg, const struct pfc_stack *st, const char *pname, size_t pname_len,
		    const struct pfc_folded_piece *pv, size_t nr, uint64_t weight)
{
	struct walk *W = arg;
	struct pfc_diff *d = W->d;
	size_t k;
	uint32_t id;

	pfc_sb_reset(&W->line);
	pfc_sb_add(&W->line, pname, pname_len);
	for (k = 0; k < nr; k++) {
		pfc_sb_addc(&W->line, ';');
		pfc_sb_add(&W->line, pv[k].text, pv[k].len);
	}
	if (W->line.oom || (id = pfc_intern(&d->lines, W->line.buf, W->line.len)) == UINT32_MAX || grow(d, id) < 0)
		return PFC_FAIL_NOOFF(W->err, NOMEM, "diff");
	if (d->w[W->side][id] == UINT64_MAX)
		d->w[W->side][id] = 0;
	d->w[W->side][id] += weight;
	d->cnt[W->side][id] += st->count;
	d->evsel[W->side] = st->evsel;
	d->total[W->side] += weight;
	return 0;
}

uint64_t pfc_diff_scale(uint64_t c, uint64_t t2, uint64_t t1)
{
	unsigned __int128 p = (unsigned __int128)c * t2;
	double q;

	if (!t1)
		return c;
	if (p <= UINT64_MAX) {
		if ((uint64_t)p % t1 == 0)
			return (uint64_t)p / t1;
		q = (double)(uint64_t)p / (double)t1;
	} else {
		q = (double)c * (double)t2 / (double)t1;
	}
	return q >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)q;
}

int pfc_diff_build(struct pfc_diff *d, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err)
{
	struct walk W;
	size_t i;
	int ret = 0;

	memset(d, 0, sizeof(*d));
	memset(&W, 0, sizeof(W));
	W.d = d;
	W.err = err;
	if (pfc_intern_init(&d->lines) < 0)
		return PFC_FAIL_NOOFF(err, NOMEM, "diff");
	d->have_base = o->diff_base != NULL;
	if (d->have_base) {
		W.side = 0;
		if ((ret = pfc_folded_walk(o->diff_base, o, add_line, &W, err)) < 0)
			goto out;
	}
	W.side = 1;
	if ((ret = pfc_folded_walk(s, o, add_line, &W, err)) < 0)
		goto out;
	d->order = malloc((d->cap + 1) * sizeof(*d->order));
	if (!d->order) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "diff");
		goto out;
	}
	for (i = 0; i < d->cap; i++) {
		if (d->w[0][i] == UINT64_MAX && d->w[1][i] == UINT64_MAX)
			continue;
		if (d->w[0][i] == UINT64_MAX)
			d->w[0][i] = 0;
		if (d->w[1][i] == UINT64_MAX)
			d->w[1][i] = 0;
		d->order[d->n++] = (uint32_t)i;
	}
	d->normalized = d->have_base && o->diff_normalize && d->total[0] != d->total[1] && d->total[0];
	for (i = 0; i < d->n; i++) {
		uint32_t id = d->order[i];
		if (d->normalized)
			d->w[0][id] = pfc_diff_scale(d->w[0][id], d->total[1], d->total[0]);
		d->sum[0] += d->w[0][id];
		d->sum[1] += d->w[1][id];
		d->count[0] += d->cnt[0][id];
		d->count[1] += d->cnt[1][id];
	}
	pfc_intern_sort(&d->lines, d->order, d->n);
out:
	pfc_sb_free(&W.line);
	return ret;
}

void pfc_diff_free(struct pfc_diff *d)
{
	free(d->w[0]);
	free(d->w[1]);
	free(d->cnt[0]);
	free(d->cnt[1]);
	free(d->apart);
	free(d->order);
	pfc_intern_exit(&d->lines);
	memset(d, 0, sizeof(*d));
}

long pfc_diff_set_apart(struct pfc_diff *d, int (*fn)(void *arg, const char *text, size_t len), void *arg)
{
	size_t i, k;
	long n = 0;

	if (!d->apart && !(d->apart = calloc(d->cap ? d->cap : 1, 1)))
		return -1;
	for (i = 0; i < d->n; i++) {
		uint32_t id = d->order[i];
		size_t len;
		const char *t = pfc_diff_text(d, i, &len);
		if (d->apart[id] || !fn(arg, t, len))
			continue;
		d->apart[id] = 1;
		for (k = 0; k < 2; k++) {
			d->apart_w[k] += d->w[k][id];
			d->apart_n[k] += d->cnt[k][id];
		}
		n++;
	}
	return n;
}

double pfc_diff_share(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

/* ---- functions ---- */

/* name without the number of a JIT dynamic method (lambda_method12 -> lambda_method): each
 * process numbers them in the order it compiles them, so the same lambda has a different
 * number in each recording.  Returns name, or buf holding the shortened copy. */
static const char *unnumbered(const char *name, size_t *len, char *buf, size_t cap)
{
	static const char key[] = "lambda_method";
	size_t n = *len, i, o = 0, kl = sizeof(key) - 1;
	int found = 0;

	if (n >= cap)
		return name;
	for (i = 0; i < n; ) {
		if (n - i > kl && !memcmp(name + i, key, kl) && name[i + kl] >= '0' && name[i + kl] <= '9') {
			memcpy(buf + o, key, kl);
			o += kl;
			i += kl;
			while (i < n && name[i] >= '0' && name[i] <= '9')
				i++;
			found = 1;
			continue;
		}
		buf[o++] = name[i++];
	}
	if (!found)
		return name;
	*len = o;
	return buf;
}

int pfc_funcs_build(struct pfc_funcs *f, const struct pfc_diff *d, struct pfc_error *err)
{
	uint32_t *seen = NULL, *ids = NULL;	/* name id -> the line that last counted it */
	size_t cap = 0, cap_ids = 0, i, k;
	uint64_t sum[2];
	char nbuf[1024];
	int ret = 0;

	memset(f, 0, sizeof(*f));
	if (pfc_intern_init(&f->names) < 0)
		return PFC_FAIL_NOOFF(err, NOMEM, "diff");
	for (i = 0; i < d->n; i++) {
		size_t len, a, b, nr = 0;
		const char *t = pfc_diff_text(d, i, &len);
		uint32_t id = d->order[i];

		if (d->apart && d->apart[id])
			continue;
		/* the first name is the process's: the functions follow it */
		for (a = 0; a < len && t[a] != ';'; a++)
			;
		while (a < len) {
			uint32_t nid;
			a++;
			for (b = a; b < len && t[b] != ';'; b++)
				;
			{
				size_t nlen = b - a;
				const char *name = unnumbered(t + a, &nlen, nbuf, sizeof(nbuf));
				nid = pfc_intern(&f->names, name, nlen);
			}
			if (nid == UINT32_MAX)
				goto oom;
			if (nid >= cap) {
				size_t nc = cap ? cap * 2 : 1024, z;
				uint32_t *ns;
				struct pfc_func *nv;
				while (nc <= nid)
					nc *= 2;
				if (!(ns = realloc(seen, nc * sizeof(*ns))))
					goto oom;
				seen = ns;
				if (!(nv = realloc(f->v, nc * sizeof(*nv))))
					goto oom;
				f->v = nv;
				for (z = cap; z < nc; z++) {
					seen[z] = UINT32_MAX;
					memset(&f->v[z], 0, sizeof(f->v[z]));
				}
				cap = nc;
			}
			if (nid >= f->n)
				f->n = nid + 1;
			if (seen[nid] != (uint32_t)i) {	/* a recursion counts once in the total */
				seen[nid] = (uint32_t)i;
				for (k = 0; k < 2; k++) {
					f->v[nid].total[k] += d->w[k][id];
					f->v[nid].ntotal[k] += d->cnt[k][id];
				}
			}
			if (nr == cap_ids) {
				size_t nc = cap_ids ? cap_ids * 2 : 64;
				uint32_t *ni = realloc(ids, nc * sizeof(*ni));
				if (!ni)
					goto oom;
				ids = ni;
				cap_ids = nc;
			}
			ids[nr++] = nid;
			a = b;
		}
		if (nr)
			for (k = 0; k < 2; k++) {
				f->v[ids[nr - 1]].self[k] += d->w[k][id];
				f->v[ids[nr - 1]].nself[k] += d->cnt[k][id];
			}
	}
	for (k = 0; k < 2; k++)
		sum[k] = d->sum[k] - d->apart_w[k];
	for (i = 0; i < f->n; i++) {
		struct pfc_func *fn = &f->v[i];
		fn->name = pfc_intern_str(&f->names, (uint32_t)i);
		fn->len = pfc_intern_len(&f->names, (uint32_t)i);
		fn->dself = pfc_diff_share(fn->self[1], sum[1]) - pfc_diff_share(fn->self[0], sum[0]);
		fn->dtotal = pfc_diff_share(fn->total[1], sum[1]) - pfc_diff_share(fn->total[0], sum[0]);
	}
	/* id 0 is the empty name, a function only when a line had one */
	if (f->n && !f->v[0].total[0] && !f->v[0].total[1]) {
		f->v[0] = f->v[--f->n];
	}
	goto out;
oom:
	ret = PFC_FAIL_NOOFF(err, NOMEM, "diff");
out:
	free(seen);
	free(ids);
	return ret;
}

/* FNV-1a of a line with every frame of the functions fns taken out (the frames compared as
 * pfc_funcs_build compares them); has[k] says whether the line had fns[k]. */
static uint64_t hash_without(const char *t, size_t len, const struct pfc_func *const *fns, size_t nr, char *has)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t a = 0, b, k;
	char nbuf[1024];

	memset(has, 0, nr);
	while (a <= len) {
		size_t fl, out = nr;
		const char *fr;
		for (b = a; b < len && t[b] != ';'; b++)
			;
		fl = b - a;
		fr = a ? unnumbered(t + a, &fl, nbuf, sizeof(nbuf)) : t;	/* the process name stays */
		for (k = 0; a && k < nr; k++)
			if (fl == fns[k]->len && !memcmp(fr, fns[k]->name, fl)) {
				has[k] = 1;
				out = k;
			}
		if (out == nr) {
			for (k = 0; k < fl; k++)
				h = (h ^ (uint8_t)fr[k]) * 0x100000001b3ull;
			h = (h ^ ';') * 0x100000001b3ull;
		}
		a = b + 1;
	}
	return h;
}

static int cmp_u64_asc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int pfc_diff_contracted(const struct pfc_diff *d, const struct pfc_func *const *fns, size_t nr, uint64_t *out)
{
	size_t n = d->n ? d->n : 1, i, j, k;
	uint64_t *h = malloc(n * sizeof(*h)), *set = malloc(n * sizeof(*set));
	char *has = malloc(n * (nr ? nr : 1));
	int ret = 0;

	memset(out, 0, 2 * nr * sizeof(*out));
	if (!h || !set || !has) {
		ret = -1;
		goto out;
	}
	for (i = 0; i < d->n; i++) {
		size_t len;
		const char *t = pfc_diff_text(d, i, &len);
		h[i] = hash_without(t, len, fns, nr, has + i * nr);
	}
	for (j = 0; j < nr; j++) {
		for (i = k = 0; i < d->n; i++)
			if (has[i * nr + j] && !(d->apart && d->apart[d->order[i]]))
				set[k++] = h[i];
		if (!k)
			continue;
		qsort(set, k, sizeof(*set), cmp_u64_asc);
		for (i = 0; i < d->n; i++) {
			uint32_t id = d->order[i];
			if ((d->apart && d->apart[id]) || !bsearch(&h[i], set, k, sizeof(*set), cmp_u64_asc))
				continue;
			out[2 * j] += d->cnt[0][id];
			out[2 * j + 1] += d->cnt[1][id];
		}
	}
out:
	free(h);
	free(set);
	free(has);
	return ret;
}

void pfc_funcs_free(struct pfc_funcs *f)
{
	free(f->v);
	pfc_intern_exit(&f->names);
	memset(f, 0, sizeof(*f));
}

static int cmp_u64(uint64_t x, uint64_t y)
{
	return x > y ? -1 : x < y;
}

static int cmp_dbl(double x, double y)
{
	return x > y ? -1 : x < y;
}

static int cmp_name(const struct pfc_func *x, const struct pfc_func *y)
{
	int r = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);
	return r ? r : x->len < y->len ? -1 : x->len > y->len;
}

static int cmp_self(const void *a, const void *b)
{
	const struct pfc_func *x = a, *y = b;
	int r = cmp_u64(x->self[1], y->self[1]);
	if (!r)
		r = cmp_u64(x->total[1], y->total[1]);
	return r ? r : cmp_name(x, y);
}

static int cmp_total(const void *a, const void *b)
{
	const struct pfc_func *x = a, *y = b;
	int r = cmp_u64(x->total[1], y->total[1]);
	if (!r)
		r = cmp_u64(x->self[1], y->self[1]);
	return r ? r : cmp_name(x, y);
}

/* changes are compared at the hundredths printed, so that equal-looking ones sort by name */
static double rounded(double v)
{
	return round(fabs(v) * 100.0);
}

static int cmp_change(const void *a, const void *b)
{
	const struct pfc_func *x = a, *y = b;
	int r = cmp_dbl(rounded(x->dtotal), rounded(y->dtotal));
	if (!r)
		r = cmp_dbl(rounded(x->dself), rounded(y->dself));
	return r ? r : cmp_name(x, y);
}

void pfc_funcs_sort(struct pfc_funcs *f, int by_total, int by_change)
{
	qsort(f->v, f->n, sizeof(*f->v), by_change ? cmp_change : by_total ? cmp_total : cmp_self);
}
