/*
 * perfmap.c - parser and lookup for perf-PID.map files.  The file is untrusted text that
 * a runtime may still be writing: every line is parsed on its own, bad lines are counted
 * and skipped, and a last line without its newline is kept only when it is complete
 * enough to hold a name.
 */
#include <stdlib.h>
#include <string.h>
#include "converter/jit/perfmap.h"
#include "converter/util/bytes.h"
#include "converter/util/fileio.h"

static int cmp_ent(const void *a, const void *b)
{
	const struct pfc_perfmap_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

int pfc_perfmap_parse(struct pfc_perfmap *m, const char *buf, size_t len)
{
	size_t pos = 0, cap = 0, ncap = 0;
	uint32_t line = 0;

	memset(m, 0, sizeof(*m));
	while (pos < len) {
		const char *l = buf + pos, *nl = memchr(l, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - l) : len - pos, i, k;
		uint64_t start, size;
		const char *name;
		size_t name_len;

		pos += ll + (nl ? 1 : 0);
		line++;
		while (ll && (l[ll - 1] == '\r' || l[ll - 1] == '\0'))
			ll--;
		i = 0;
		while (i < ll && (l[i] == ' ' || l[i] == '\t'))
			i++;
		if (!(k = pfc_parse_hex(l + i, ll - i, &start)))
			goto bad;
		i += k;
		if (i >= ll || (l[i] != ' ' && l[i] != '\t'))
			goto bad;
		while (i < ll && (l[i] == ' ' || l[i] == '\t'))
			i++;
		if (!(k = pfc_parse_hex(l + i, ll - i, &size)))
			goto bad;
		i += k;
		if (i >= ll || (l[i] != ' ' && l[i] != '\t'))
			goto bad;
		i++;
		name = l + i;
		name_len = ll - i;
		/* a NUL inside the name ends it */
		{
			const char *z = memchr(name, '\0', name_len);
			if (z)
				name_len = (size_t)(z - name);
		}
		if (!name_len || !size || start + size < start)
			goto bad;
		if (m->n == cap) {
			size_t nc = cap ? cap * 2 : 1024;
			struct pfc_perfmap_ent *nv = realloc(m->v, nc * sizeof(*nv));
			if (!nv)
				return -1;
			m->v = nv;
			cap = nc;
		}
		if (m->names_len + name_len + 1 > ncap) {
			size_t nc = ncap ? ncap * 2 : 65536;
			char *nn;
			while (nc < m->names_len + name_len + 1)
				nc *= 2;
			nn = realloc(m->names, nc);
			if (!nn)
				return -1;
			m->names = nn;
			ncap = nc;
		}
		memcpy(m->names + m->names_len, name, name_len);
		m->names[m->names_len + name_len] = 0;
		m->v[m->n].start = start;
		m->v[m->n].end = start + size;
		m->v[m->n].line = line;
		m->v[m->n].name_off = (uint32_t)m->names_len;
		m->v[m->n].name_len = (uint32_t)name_len;
		m->v[m->n].stub = name_len >= 5 && !memcmp(name, "stub", 4) && (name[4] == ' ' || name[4] == '<');
		m->names_len += name_len + 1;
		m->n++;
		continue;
bad:
		if (ll)
			m->nr_bad_lines++;
	}
	if (!m->n)
		return 0;
	qsort(m->v, m->n, sizeof(*m->v), cmp_ent);
	if (pfc_ivindex_init(&m->ix, m->n) < 0)
		return -1;
	for (size_t i = 0; i < m->n; i++)
		pfc_ivindex_set(&m->ix, i, m->v[i].start, m->v[i].end);
	pfc_ivindex_finish(&m->ix);
	return 0;
}

int pfc_perfmap_load(struct pfc_perfmap *m, const char *path)
{
	char *buf;
	size_t got;
	int ret;

	memset(m, 0, sizeof(*m));
	if (pfc_read_file(path, (uint64_t)1 << 32, &buf, &got) < 0)
		return -1;
	ret = pfc_perfmap_parse(m, buf, got);
	free(buf);
	return ret;
}

void pfc_perfmap_free(struct pfc_perfmap *m)
{
	if (m->perf_tree) {
		pfc_symtab_free(m->perf_tree);
		free(m->perf_tree);
	}
	free(m->v);
	pfc_ivindex_free(&m->ix);
	free(m->names);
	memset(m, 0, sizeof(*m));
}

/* Whether e describes the code at an address better than b (both cover it). */
static int better(const struct pfc_perfmap_ent *e, const struct pfc_perfmap_ent *b)
{
	uint64_t se = e->end - e->start, sb = b->end - b->start;

	if (e->stub != b->stub)
		return !e->stub;
	if (e->start == b->start)
		return e->line > b->line;
	if (se != sb)
		return se < sb;
	return e->line > b->line;
}

const struct pfc_perfmap_ent *pfc_perfmap_find(const struct pfc_perfmap *m, uint64_t addr)
{
	const struct pfc_perfmap_ent *best = NULL;
	size_t i;

	for (i = pfc_ivindex_first(&m->ix, addr); i != SIZE_MAX; i = pfc_ivindex_next(&m->ix, addr, i))
		if (!best || better(&m->v[i], best))
			best = &m->v[i];
	return best;
}

static int by_line(const void *a, const void *b)
{
	const struct pfc_perfmap_ent *x = *(const struct pfc_perfmap_ent *const *)a;
	const struct pfc_perfmap_ent *y = *(const struct pfc_perfmap_ent *const *)b;

	return x->line < y->line ? -1 : x->line > y->line;
}

/* perf's tree: every entry inserted in file order, no fixups (perf applies none to maps). */
static int build_perf_tree(struct pfc_perfmap *m)
{
	const struct pfc_perfmap_ent **order = malloc((m->n ? m->n : 1) * sizeof(*order));
	struct pfc_symtab *t = calloc(1, sizeof(*t));
	size_t i;

	if (!order || !t)
		goto fail;
	for (i = 0; i < m->n; i++)
		order[i] = &m->v[i];
	qsort(order, m->n, sizeof(*order), by_line);
	for (i = 0; i < m->n; i++)
		if (pfc_symtab_add(t, order[i]->start, order[i]->end - order[i]->start, PFC_SYM_GLOBAL,
				   pfc_perfmap_name(m, order[i]), order[i]->name_len) < 0)
			goto fail;
	free(order);
	m->perf_tree = t;
	return 0;
fail:
	free(order);
	if (t) {
		pfc_symtab_free(t);
		free(t);
	}
	m->perf_tree_failed = 1;
	return -1;
}

int pfc_perfmap_resolve(struct pfc_perfmap *m, uint64_t addr, int beyond_perf, const char **name, size_t *len,
			uint64_t *start)
{
	const struct pfc_perfmap_ent *e;
	const struct pfc_sym *sym;

	if (!m->perf_tree && !m->perf_tree_failed && build_perf_tree(m) < 0)
		return -1;
	if (m->perf_tree && (sym = pfc_symtab_find(m->perf_tree, addr))) {
		*name = sym->name;
		*len = strlen(sym->name);
		*start = sym->start;
		return 1;
	}
	if (!beyond_perf || !(e = pfc_perfmap_find(m, addr)))
		return 0;
	*name = pfc_perfmap_name(m, e);
	*len = e->name_len;
	*start = e->start;
	return 1;
}
