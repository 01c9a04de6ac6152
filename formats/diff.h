/*
 * diff.h - two profiles side by side, for --diff BASE: the folded lines of the base and
 * the new recording with both weights (difffolded.pl's table), and the functions of each
 * with their self and total shares (the top format and the --fail-if-grown gate).  Without
 * a base the same table holds one profile, which is what -f top shows alone.
 */
#ifndef PFC_DIFF_H
#define PFC_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include "converter/machine/intern.h"
#include "formats/writer.h"

/* The folded lines of both profiles, merged by text and sorted bytewise. */
struct pfc_diff {
	struct pfc_intern lines;      /* the folded stacks' texts */
	uint64_t *w[2];               /* line id -> weight in the base [0] and the new [1] profile */
	uint64_t *cnt[2];             /* line id -> samples (the weights' count, never normalized) */
	uint8_t *apart;               /* line id -> set apart from the functions (pfc_diff_set_apart) */
	size_t cap;
	uint32_t *order;              /* the line ids, sorted */
	size_t n;
	uint64_t total[2];            /* each profile's weight, as read (before normalizing) */
	uint64_t sum[2];              /* the weights of the lines (the base's once normalized) */
	uint64_t count[2];            /* the samples of the lines */
	uint32_t evsel[2];            /* the event each profile's lines are of (the folded walk's) */
	uint64_t apart_w[2], apart_n[2];  /* the weights and samples of the lines set apart */
	int have_base;
	int normalized;               /* base weights scaled to the new total (difffolded.pl -n) */
};

/* Builds d from the new session s and o->diff_base (NULL: s alone).  Both are walked as
 * the folded writer walks them, with the same options, so a line is a folded line. */
int pfc_diff_build(struct pfc_diff *d, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err);
void pfc_diff_free(struct pfc_diff *d);
/* Sets apart the lines fn says yes to (a line's text, process name first): pfc_funcs_build
 * then leaves them out, and shares are of what is left.  Returns how many, or -1 on no memory. */
long pfc_diff_set_apart(struct pfc_diff *d, int (*fn)(void *arg, const char *text, size_t len), void *arg);
static inline const char *pfc_diff_text(const struct pfc_diff *d, size_t i, size_t *len)
{
	*len = pfc_intern_len(&d->lines, d->order[i]);
	return pfc_intern_str(&d->lines, d->order[i]);
}

/* A function's weight in both profiles: where it is the leaf (self) and in how many
 * stacks it is at all (total, counted once per stack however often it recurs). */
struct pfc_func {
	const char *name;
	size_t len;
	uint64_t self[2], total[2];
	uint64_t nself[2], ntotal[2]; /* the same in samples */
	double dself, dtotal;         /* new share - base share, in percentage points */
};

struct pfc_funcs {
	struct pfc_intern names;
	struct pfc_func *v;
	size_t n;
};

/* The functions of d (the frames after the process name, compared by name; the numbered
 * names the JIT gives dynamic methods, dynamicClass::lambda_method12, compared without their
 * number, which differs from one process to the next).  Lines set apart are left out.
 * Returns 0 or a negative error code. */
int pfc_funcs_build(struct pfc_funcs *f, const struct pfc_diff *d, struct pfc_error *err);
void pfc_funcs_free(struct pfc_funcs *f);
/* For each of the functions fns: the samples of the base (out[2k]) and the new profile
 * (out[2k+1]) whose stacks, once the frames of all of fns are taken out, are those through
 * fns[k] with them taken out: the same work whether or not those functions are frames in it.
 * When a function's total grew but this did not, it only appeared as a frame (the JIT inlined
 * it, or the async machinery around it, in one recording and not in the other) and no work
 * grew.  Lines set apart are left out.  0, or -1 on no memory. */
int pfc_diff_contracted(const struct pfc_diff *d, const struct pfc_func *const *fns, size_t nr, uint64_t *out);
/* Sorts them: by self (by_total 0) or total weight of the new profile, or with a base by the
 * size of the change in total share, largest first; ties by name. */
void pfc_funcs_sort(struct pfc_funcs *f, int by_total, int by_change);
/* difffolded.pl -n's int($c1 * $total2 / $total1) for count c, as Perl computes it on 64-bit
 * integers: the product exact while it fits, the quotient exact when it divides, else in
 * doubles (the last digits of a large product are rounded as Perl rounds them) */
uint64_t pfc_diff_scale(uint64_t c, uint64_t t2, uint64_t t1);
/* a share in percent of a profile's total (0 when the profile is empty) */
double pfc_diff_share(uint64_t v, uint64_t total);

#endif
