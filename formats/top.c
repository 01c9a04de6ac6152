/*
 * top.c - the hottest functions as text for terminals and CI logs: by self and by total
 * share, as `perf report --no-children` and `go tool pprof -top` list them; with --diff
 * BASE the largest changes of total share between the two profiles instead.  A function is
 * a frame name of the folded stacks (diff.c), so the numbers add up to the folded output.
 */
#include <stdlib.h>
#include <string.h>
#include "formats/diff.h"
#include "formats/units.h"
#include "formats/writer.h"

#define TOP_DEFAULT 20

static void put_name(FILE *out, const struct pfc_func *f)
{
	fwrite(f->name, 1, f->len, out);
	fputc('\n', out);
}

/* "profile 'NAME': 5.914 s of cpu-clock in 5914 samples (the columns in ns)": the columns
 * are the weights as the folded output has them, the line says what they measure */
static void put_profile(FILE *out, const char *what, const char *name, uint64_t total, const struct pfc_units *u)
{
	fprintf(out, "%s '%s': ", what, name ? name : "?");
	pfc_units_put(out, u, total);
	fputs(u->time ? " (the columns in ns)\n" : "\n", out);
}

static void put_table(FILE *out, struct pfc_funcs *f, const struct pfc_diff *d, size_t n, int by_total)
{
	double sum = 0;
	size_t i;

	pfc_funcs_sort(f, by_total, 0);
	fprintf(out, "\nTop %zu functions by %s:\n", n < f->n ? n : f->n, by_total ? "total (go tool pprof -top -cum)"
		: "self (perf report --no-children, go tool pprof -top)");
	fprintf(out, "%14s %7s %7s %14s %7s  %s\n", "self", "self%", "sum%", "total", "total%", "function");
	for (i = 0; i < f->n && i < n; i++) {
		const struct pfc_func *fn = &f->v[i];
		sum += pfc_diff_share(fn->self[1], d->sum[1]);
		fprintf(out, "%14llu %6.2f%% %6.2f%% %14llu %6.2f%%  ", (unsigned long long)fn->self[1],
			pfc_diff_share(fn->self[1], d->sum[1]), sum, (unsigned long long)fn->total[1],
			pfc_diff_share(fn->total[1], d->sum[1]));
		put_name(out, fn);
	}
}

static int top_write(FILE *out, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err)
{
	struct pfc_diff d;
	struct pfc_funcs f;
	size_t n = o->top > 0 ? (size_t)o->top : TOP_DEFAULT, i;
	struct pfc_units u, ub;
	int ret;

	memset(&f, 0, sizeof(f));
	ret = pfc_diff_build(&d, s, o, err);
	if (ret == 0)
		ret = pfc_funcs_build(&f, &d, err);
	if (ret < 0)
		goto out;
	pfc_units_of(s, o, &u);
	if (!d.have_base) {
		put_profile(out, "profile", s->recording_name, d.total[1], &u);
		put_table(out, &f, &d, n, 0);
		put_table(out, &f, &d, n, 1);
		goto out;
	}
	pfc_units_of(o->diff_base, o, &ub);
	put_profile(out, "base", o->diff_base->recording_name, d.total[0], &ub);
	put_profile(out, "new ", s->recording_name, d.total[1], &u);
	if (d.normalized) {
		fputs("the base scaled to the new total (--diff-normalize): ", out);
		pfc_units_put(out, &ub, d.sum[0]);
		fputc('\n', out);
	}
	pfc_funcs_sort(&f, 0, 1);
	fprintf(out, "\nLargest changes of total share, in percentage points (top %zu):\n", n < f.n ? n : f.n);
	fprintf(out, "%8s %8s %8s  %8s %8s %8s  %s\n", "base%", "new%", "change", "self b%", "self n%", "change",
		"function");
	for (i = 0; i < f.n && i < n; i++) {
		const struct pfc_func *fn = &f.v[i];
		fprintf(out, "%7.2f%% %7.2f%% %+8.2f  %7.2f%% %7.2f%% %+8.2f  ", pfc_diff_share(fn->total[0], d.sum[0]),
			pfc_diff_share(fn->total[1], d.sum[1]), fn->dtotal, pfc_diff_share(fn->self[0], d.sum[0]),
			pfc_diff_share(fn->self[1], d.sum[1]), fn->dself);
		put_name(out, fn);
	}
out:
	pfc_funcs_free(&f);
	pfc_diff_free(&d);
	return ret;
}

static const char *const top_suffixes[] = { ".top.txt", NULL };

const struct pfc_writer pfc_writer_top = {
	.name = "top",
	.suffixes = top_suffixes,
	.needs = PFC_NEED_STACKS | PFC_DIFF,
	.write = top_write,
};
