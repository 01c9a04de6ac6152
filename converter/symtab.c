/*
 * symtab.c - owns the sorted symbol table: appending symbols, the string storage behind
 * their names, perf 6.1's end fixup and duplicate (alias) choice, and address lookup.
 * It knows nothing about where symbols come from; elfsym.c and kallsyms.c fill tables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "converter/symtab.h"

#define CHUNK_SIZE (64 * 1024)

struct pfc_symtab_chunk {
	struct pfc_symtab_chunk *next;
	size_t used, size;
	char data[];
};

char *pfc_symtab_strdup(struct pfc_symtab *t, const char *s, size_t len)
{
	struct pfc_symtab_chunk *c = t->chunks;
	char *p;

	if (len >= SIZE_MAX / 2)
		return NULL;
	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > CHUNK_SIZE / 4 ? len + 1 : CHUNK_SIZE;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		if (size == CHUNK_SIZE || !t->chunks) {
			c->next = t->chunks;
			t->chunks = c;
		} else {
			/* a big string gets its own chunk behind the current one */
			c->next = t->chunks->next;
			t->chunks->next = c;
		}
	}
	p = c->data + c->used;
	memcpy(p, s, len);
	p[len] = '\0';
	c->used += len + 1;
	return p;
}

int pfc_symtab_add(struct pfc_symtab *t, uint64_t start, uint64_t size, int binding,
		   const char *name, size_t namelen)
{
	struct pfc_sym *s;

	if (t->nr == t->alloc) {
		size_t n = t->alloc ? t->alloc * 2 : 256;
		struct pfc_sym *p;

		if (n > SIZE_MAX / sizeof(*p))
			return -ENOMEM;
		p = realloc(t->syms, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		t->syms = p;
		t->alloc = n;
	}
	s = &t->syms[t->nr];
	s->name = pfc_symtab_strdup(t, name, namelen);
	if (!s->name)
		return -ENOMEM;
	s->start = start;
	/* perf's symbol__new: a sized symbol ends at start + size (exclusive) */
	s->end = size ? start + size : start;
	s->module = NULL;
	s->binding = (uint8_t)binding;
	s->flags = 0;
	t->nr++;
	return 0;
}

/*
 * Stable merge sort by start.  Stability matters: perf keeps symbols in an rb-tree that
 * sends equal starts to the right, so among equal starts the first inserted comes first,
 * and both fixups below depend on that order.
 */
static void merge_sort(struct pfc_sym *a, struct pfc_sym *tmp, size_t n)
{
	size_t width, i;

	for (width = 1; width < n; width *= 2) {
		for (i = 0; i < n; i += 2 * width) {
			size_t lo = i, mid = i + width, hi = i + 2 * width, l, r, k;

			if (mid >= n)
				break;
			if (hi > n)
				hi = n;
			if (a[mid - 1].start <= a[mid].start)
				continue;	/* already in order */
			l = lo, r = mid, k = 0;
			while (l < mid && r < hi)
				tmp[k++] = a[r].start < a[l].start ? a[r++] : a[l++];
			while (l < mid)
				tmp[k++] = a[l++];
			while (r < hi)
				tmp[k++] = a[r++];
			memcpy(a + lo, tmp, k * sizeof(*a));
		}
	}
}

void pfc_symtab_sort(struct pfc_symtab *t)
{
	struct pfc_sym *tmp;
	size_t i;

	for (i = 1; i < t->nr; i++)
		if (t->syms[i - 1].start > t->syms[i].start)
			break;
	if (i >= t->nr)
		return;
	tmp = malloc(t->nr * sizeof(*tmp));
	if (!tmp) {
		/* insertion sort is stable too; only reached when memory is short */
		for (i = 1; i < t->nr; i++) {
			struct pfc_sym s = t->syms[i];
			size_t j = i;

			while (j > 0 && t->syms[j - 1].start > s.start) {
				t->syms[j] = t->syms[j - 1];
				j--;
			}
			t->syms[j] = s;
		}
		return;
	}
	merge_sort(t->syms, tmp, t->nr);
	free(tmp);
}

static uint64_t roundup_page(uint64_t x)
{
	return (x + 4095) / 4096 * 4096;	/* wraps like perf's u64 arithmetic */
}

/*
 * perf's symbols__fixup_end: in address order, a symbol without size ends where the next
 * one starts.  Equal starts are not skipped, so of several unsized symbols at one address
 * only the last gets a size, which decides the duplicate choice below.  In kallsyms the
 * symbol before a kernel/module boundary (a "[module]" suffix appears or disappears)
 * ends at the page after it instead, and the last symbol of all ends one page past the
 * page its start is in.
 */
static void fixup_end(struct pfc_symtab *t, enum pfc_symtab_flavour flavour)
{
	size_t i;

	if (t->nr == 0)
		return;
	for (i = 1; i < t->nr; i++) {
		struct pfc_sym *prev = &t->syms[i - 1], *curr = &t->syms[i];

		if (prev->end != prev->start)
			continue;
		if (flavour == PFC_SYMTAB_KALLSYMS &&
		    !strchr(prev->name, '[') != !strchr(curr->name, '['))
			prev->end = roundup_page(prev->end + 4096);
		else
			prev->end = curr->start;
	}
	if (t->syms[t->nr - 1].end == t->syms[t->nr - 1].start)
		t->syms[t->nr - 1].end = roundup_page(t->syms[t->nr - 1].start) + 4096;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* perf's choose_best_symbol: nonzero when a (inserted earlier) beats b. */
static int first_is_best(const struct pfc_sym *a, const struct pfc_sym *b)
{
	int64_t la = (int64_t)(a->end - a->start), lb = (int64_t)(b->end - b->start);
	size_t na, nb;

	if (lb == 0 && la > 0)
		return 1;
	if (la == 0 && lb > 0)
		return 0;
	if ((a->binding == PFC_SYM_WEAK) != (b->binding == PFC_SYM_WEAK))
		return b->binding == PFC_SYM_WEAK;
	if ((a->binding == PFC_SYM_GLOBAL) != (b->binding == PFC_SYM_GLOBAL))
		return a->binding == PFC_SYM_GLOBAL;
	na = leading_underscores(a->name);
	nb = leading_underscores(b->name);
	if (na != nb)
		return na < nb;
	na = strlen(a->name);
	nb = strlen(b->name);
	if (na != nb)
		return na > nb;
	return 1;	/* a tie keeps the one inserted first */
}

/* perf's symbols__fixup_duplicate: of the symbols sharing a start keep one, comparing
 * the survivor so far with each following one in order. */
static void fixup_duplicate(struct pfc_symtab *t)
{
	size_t i, out = 0;

	if (t->nr == 0)
		return;
	for (i = 1; i < t->nr; i++) {
		struct pfc_sym *curr = &t->syms[out], *next = &t->syms[i];

		if (curr->start != next->start) {
			t->syms[++out] = *next;
			continue;
		}
		if (!first_is_best(curr, next))
			*curr = *next;
	}
	t->nr = out + 1;
}

void pfc_symtab_fixup(struct pfc_symtab *t, enum pfc_symtab_flavour flavour)
{
	pfc_symtab_sort(t);
	fixup_end(t, flavour);
	fixup_duplicate(t);
}

const struct pfc_sym *pfc_symtab_find(const struct pfc_symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t ? t->nr : 0;
	const struct pfc_sym *s;

	/* find the first symbol with start > addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &t->syms[lo - 1];
	/* perf's symbols__find: an unsized symbol matches its start only */
	if (s->end == s->start)
		return addr == s->start ? s : NULL;
	return addr < s->end ? s : NULL;
}

void pfc_symtab_free(struct pfc_symtab *t)
{
	struct pfc_symtab_chunk *c, *next;

	if (!t)
		return;
	for (c = t->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(t->syms);
	memset(t, 0, sizeof(*t));
}
