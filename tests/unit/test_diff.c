/*
 * test_diff.c - unit tests of formats/diff.c: difffolded.pl -n's scaling with Perl's integer
 * and floating-point rules (values Perl 5.36 printed), and the functions of a diff: self and
 * total weight per side, a recursion counted once in a stack's total, the change in points,
 * and the order by the size of the change.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "formats/diff.h"
#include "tests/unit/check.h"

static void add(struct pfc_diff *d, const char *text, uint64_t base, uint64_t w)
{
	uint32_t id = pfc_intern(&d->lines, text, strlen(text));
	size_t k;

	if (id >= d->cap) {
		size_t cap = (size_t)id + 16;
		for (k = 0; k < 2; k++) {
			d->w[k] = realloc(d->w[k], cap * sizeof(uint64_t));
			d->cnt[k] = realloc(d->cnt[k], cap * sizeof(uint64_t));
		}
		d->order = realloc(d->order, cap * sizeof(uint32_t));
		d->cap = cap;
	}
	d->w[0][id] = base;
	d->w[1][id] = w;
	d->cnt[0][id] = base;	/* one sample a unit of weight */
	d->cnt[1][id] = w;
	d->count[0] += base;
	d->count[1] += w;
	d->order[d->n++] = id;
	d->sum[0] += base;
	d->sum[1] += w;
	d->total[0] += base;
	d->total[1] += w;
}

static const struct pfc_func *find(const struct pfc_funcs *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->v[i].len == strlen(name) && !memcmp(f->v[i].name, name, f->v[i].len))
			return &f->v[i];
	return NULL;
}

int main(void)
{
	static const struct { uint64_t c, t2, t1, want; } sc[] = {
		/* perl -e 'print int($c * $t2 / $t1)' */
		{ 685000000, 1996000000, 1714000000, 797701283 },  /* tests/data/diff's -n line */
		{ 7, 3, 7, 3 },                                     /* exact: an integer quotient */
		{ 1, 1, 3, 0 },
		{ 4611686018427387904ULL, 8, 3, 12297829382473033728ULL },  /* product past 2^64: doubles */
		{ 18446744073709551615ULL, 2, 4, 9223372036854775808ULL },
	};
	struct pfc_diff d;
	struct pfc_funcs f;
	struct pfc_error err;
	const struct pfc_func *a, *b, *p;
	size_t i;

	for (i = 0; i < sizeof(sc) / sizeof(sc[0]); i++)
		check(pfc_diff_scale(sc[i].c, sc[i].t2, sc[i].t1) == sc[i].want, "scale %llu * %llu / %llu: %llu, Perl %llu",
		      (unsigned long long)sc[i].c, (unsigned long long)sc[i].t2, (unsigned long long)sc[i].t1,
		      (unsigned long long)pfc_diff_scale(sc[i].c, sc[i].t2, sc[i].t1), (unsigned long long)sc[i].want);

	memset(&d, 0, sizeof(d));
	memset(&err, 0, sizeof(err));
	pfc_intern_init(&d.lines);
	d.have_base = 1;
	add(&d, "proc;a;b;a", 4, 10);   /* a recursion: a counts once in this stack's total */
	add(&d, "proc;b", 6, 0);         /* only in the base */
	check(pfc_funcs_build(&f, &d, &err) == 0, "pfc_funcs_build");
	a = find(&f, "a");
	b = find(&f, "b");
	p = find(&f, "proc");
	check(a && a->total[0] == 4 && a->total[1] == 10 && a->self[0] == 4 && a->self[1] == 10,
	      "a: totals 4/10 and self 4/10 (the recursion counted once)");
	check(b && b->total[0] == 10 && b->total[1] == 10 && b->self[0] == 6 && b->self[1] == 0,
	      "b: totals 10/10, self 6/0");
	check(a && a->dtotal > 59.99 && a->dtotal < 60.01, "a: +60 points of total share (%g)", a ? a->dtotal : 0);
	check(b && b->dself < -59.99 && b->dself > -60.01 && b->dtotal == 0, "b: self -60 points, total unchanged");
	check(!p, "the process name is no function");
	check(f.n == 2, "two functions (%zu)", f.n);
	pfc_funcs_sort(&f, 0, 1);
	check(f.n == 2 && f.v[0].len == 1 && f.v[0].name[0] == 'a', "by change: a first");
	pfc_funcs_sort(&f, 1, 0);
	check(f.n == 2 && f.v[0].name[0] == 'a' && f.v[1].name[0] == 'b', "by total: a (10) before b (10), by self");
	pfc_funcs_free(&f);
	pfc_diff_free(&d);

	/* the JIT's numbers of dynamic methods differ from process to process: one function */
	memset(&d, 0, sizeof(d));
	pfc_intern_init(&d.lines);
	d.have_base = 1;
	add(&d, "proc;dynamicClass::lambda_method12;x", 5, 0);
	add(&d, "proc;dynamicClass::lambda_method7;x", 0, 5);
	check(pfc_funcs_build(&f, &d, &err) == 0, "pfc_funcs_build, lambdas");
	a = find(&f, "dynamicClass::lambda_method");
	check(a && a->total[0] == 5 && a->total[1] == 5 && a->dtotal == 0, "lambda_method12 and lambda_method7 are one function");
	check(f.n == 2, "two functions with the lambdas (%zu)", f.n);
	pfc_funcs_free(&f);
	pfc_diff_free(&d);
	return check_done("diff");
}
