/*
 * symtab.c - owns the symbol table: appending symbols, the string storage behind their
 * names, perf 6.1's end fixup and duplicate (alias) choice, and address lookup in the
 * same red-black tree perf searches.  It knows nothing about where symbols come from;
 * elfsym.c and kallsyms.c fill tables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "converter/util/mem.h"
#include <sys/mman.h>

#include "converter/native/symtab.h"

#define CHUNK_SIZE (64 * 1024)
#define NIL (-1)

struct pfc_symtab_chunk {
	struct pfc_symtab_chunk *next;
	size_t used, size;
	char data[];
};

/* One symbol in an image: its fields, its tree links and the offsets of its strings in
 * the image's string block.  Native byte order: an image is read on the machine that
 * wrote it (symcache.c's header says which order and sizes). */
struct image_sym {
	uint64_t start, end;
	uint32_t name, module;	/* offsets; module UINT32_MAX: none */
	int32_t left, right, parent;
	uint8_t binding, flags, red, tree;
};

struct pfc_symtab_node {
	int32_t left, right, parent;
	uint8_t red;
	uint8_t dead;	/* erased from its tree */
	uint8_t tree;	/* 0: main tree, 1: kallsyms module symbols */
};

char *pfc_symtab_strdup(struct pfc_symtab *t, const char *s, size_t len)
{
	struct pfc_symtab_chunk *c = t->chunks;
	char *p;

	if (len >= SIZE_MAX / 2)
		return NULL;
	if (!c || c->size - c->used < len + 1) {
		size_t std = t->chunk_size ? t->chunk_size : CHUNK_SIZE;
		size_t size = len + 1 > std / 4 ? len + 1 : std - sizeof(*c);

		c = pfc_mem_alloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		if (size == std - sizeof(*c) || !t->chunks) {
			/* a large table (kallsyms) gets larger chunks, up to 2 MiB */
			if (size == std - sizeof(*c) && std < PFC_MEM_HUGE)
				t->chunk_size = std * 2;
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

/*
 * ---------- red-black tree over indices into t->syms ----------
 * perf keeps symbols in a red-black tree and its lookup stops at the first node on the
 * search path that covers the address.  When symbols overlap (a label or a small function
 * inside a bigger one) the answer therefore depends on the shape of the tree, which
 * depends on insertion and erase order.  To give the same answers we keep the same tree:
 * nodes are inserted in the order perf inserts them, duplicates are erased in the order
 * perf erases them, with the textbook red-black insert and erase (successor replaces a
 * node with two children) that the kernel's rbtree.c implements, and lookups walk it.
 * Checked against perf 6.1 with 280 binaries whose symbol tables were randomised.
 */

#define N(i) (t->nodes[(i)])

static int32_t *tree_root(struct pfc_symtab *t, int tree)
{
	return tree ? &t->root_mod : &t->root;
}

static int is_red(const struct pfc_symtab *t, int32_t i)
{
	return i != NIL && t->nodes[i].red;
}

/* make `to` take the place of `from` under from's parent */
static void replace_child(struct pfc_symtab *t, int32_t *root, int32_t parent, int32_t from,
			  int32_t to)
{
	if (parent == NIL)
		*root = to;
	else if (N(parent).left == from)
		N(parent).left = to;
	else
		N(parent).right = to;
	if (to != NIL)
		N(to).parent = parent;
}

static void rotate_left(struct pfc_symtab *t, int32_t *root, int32_t x)
{
	int32_t y = N(x).right;

	N(x).right = N(y).left;
	if (N(y).left != NIL)
		N(N(y).left).parent = x;
	replace_child(t, root, N(x).parent, x, y);
	N(y).left = x;
	N(x).parent = y;
}

static void rotate_right(struct pfc_symtab *t, int32_t *root, int32_t x)
{
	int32_t y = N(x).left;

	N(x).left = N(y).right;
	if (N(y).right != NIL)
		N(N(y).right).parent = x;
	replace_child(t, root, N(x).parent, x, y);
	N(y).right = x;
	N(x).parent = y;
}

/*
 * perf's symbols__insert: equal starts go right, so they come after in address order.
 * Symbols mostly arrive in address order (kallsyms, ELF tables): a start not below the
 * rightmost node's would walk right all the way down to it, so it is attached there
 * directly; the tree is the same.
 */
static void tree_insert(struct pfc_symtab *t, int tree, int32_t x)
{
	int32_t *root = tree_root(t, tree), p = *root, parent = NIL, g, u;
	uint64_t start = t->syms[x].start;
	int left = 0, rightmost = 1;

	if (p != NIL && t->last_ok[tree] && start >= t->syms[t->last[tree]].start) {
		parent = t->last[tree];
	} else {
		while (p != NIL) {
			parent = p;
			left = start < t->syms[p].start;
			rightmost &= !left;
			p = left ? N(p).left : N(p).right;
		}
	}
	if (rightmost) {
		t->last[tree] = x;
		t->last_ok[tree] = 1;
	}
	N(x).left = N(x).right = NIL;
	N(x).parent = parent;
	N(x).red = 1;
	N(x).dead = 0;
	N(x).tree = (uint8_t)tree;
	if (parent == NIL)
		*root = x;
	else if (left)
		N(parent).left = x;
	else
		N(parent).right = x;

	while (is_red(t, parent = N(x).parent)) {
		g = N(parent).parent;	/* a red node is never the root */
		if (parent == N(g).left) {
			u = N(g).right;
			if (is_red(t, u)) {
				N(parent).red = N(u).red = 0;
				N(g).red = 1;
				x = g;
				continue;
			}
			if (x == N(parent).right) {
				rotate_left(t, root, parent);
				x = parent;
				parent = N(x).parent;
			}
			N(parent).red = 0;
			N(g).red = 1;
			rotate_right(t, root, g);
		} else {
			u = N(g).left;
			if (is_red(t, u)) {
				N(parent).red = N(u).red = 0;
				N(g).red = 1;
				x = g;
				continue;
			}
			if (x == N(parent).left) {
				rotate_right(t, root, parent);
				x = parent;
				parent = N(x).parent;
			}
			N(parent).red = 0;
			N(g).red = 1;
			rotate_left(t, root, g);
		}
		break;
	}
	N(*root).red = 0;
}

/* Restore the black heights after a black node left the subtree of `parent` on the
 * side where `x` (possibly NIL) now is. */
static void erase_fixup(struct pfc_symtab *t, int32_t *root, int32_t x, int32_t parent)
{
	int32_t w;

	while (parent != NIL && !is_red(t, x)) {
		if (x == N(parent).left) {
			w = N(parent).right;
			if (is_red(t, w)) {
				N(w).red = 0;
				N(parent).red = 1;
				rotate_left(t, root, parent);
				w = N(parent).right;
			}
			if (!is_red(t, N(w).left) && !is_red(t, N(w).right)) {
				N(w).red = 1;
				x = parent;
				parent = N(x).parent;
				continue;
			}
			if (!is_red(t, N(w).right)) {
				N(N(w).left).red = 0;
				N(w).red = 1;
				rotate_right(t, root, w);
				w = N(parent).right;
			}
			N(w).red = N(parent).red;
			N(parent).red = 0;
			if (N(w).right != NIL)
				N(N(w).right).red = 0;
			rotate_left(t, root, parent);
		} else {
			w = N(parent).left;
			if (is_red(t, w)) {
				N(w).red = 0;
				N(parent).red = 1;
				rotate_right(t, root, parent);
				w = N(parent).left;
			}
			if (!is_red(t, N(w).left) && !is_red(t, N(w).right)) {
				N(w).red = 1;
				x = parent;
				parent = N(x).parent;
				continue;
			}
			if (!is_red(t, N(w).left)) {
				N(N(w).right).red = 0;
				N(w).red = 1;
				rotate_left(t, root, w);
				w = N(parent).left;
			}
			N(w).red = N(parent).red;
			N(parent).red = 0;
			if (N(w).left != NIL)
				N(N(w).left).red = 0;
			rotate_right(t, root, parent);
		}
		x = *root;
		break;
	}
	if (x != NIL)
		N(x).red = 0;
}

/* Erase z; a node with two children is replaced by its in-order successor, which takes
 * z's place and colour (as in perf's rb_erase). */
static void tree_erase(struct pfc_symtab *t, int32_t z)
{
	int32_t *root = tree_root(t, N(z).tree), x, xparent, y;
	int removed_black;

	if (t->last[N(z).tree] == z)
		t->last_ok[N(z).tree] = 0;	/* found again by the next insert's walk */

	if (N(z).left == NIL || N(z).right == NIL) {
		x = N(z).left != NIL ? N(z).left : N(z).right;
		xparent = N(z).parent;
		removed_black = !N(z).red;
		replace_child(t, root, N(z).parent, z, x);
	} else {
		y = N(z).right;
		while (N(y).left != NIL)
			y = N(y).left;
		removed_black = !N(y).red;
		x = N(y).right;
		if (N(y).parent == z) {
			xparent = y;
		} else {
			xparent = N(y).parent;
			N(xparent).left = x;
			if (x != NIL)
				N(x).parent = xparent;
			N(y).right = N(z).right;
			N(N(y).right).parent = y;
		}
		N(y).left = N(z).left;
		N(N(y).left).parent = y;
		replace_child(t, root, N(z).parent, z, y);
		N(y).red = N(z).red;
	}
	N(z).dead = 1;
	N(z).left = N(z).right = N(z).parent = NIL;
	if (removed_black)
		erase_fixup(t, root, x, xparent);
}

/* The nodes of one tree in address order (perf's rb_first/rb_next walk). */
static int32_t *tree_inorder(struct pfc_symtab *t, int tree, size_t *n)
{
	int32_t *out = malloc((t->nr ? t->nr : 1) * sizeof(*out)), x = *tree_root(t, tree), p;
	size_t k = 0;

	if (!out)
		return NULL;
	if (x != NIL)
		while (N(x).left != NIL)
			x = N(x).left;
	while (x != NIL) {
		out[k++] = x;
		if (N(x).right != NIL) {
			x = N(x).right;
			while (N(x).left != NIL)
				x = N(x).left;
		} else {
			p = N(x).parent;
			while (p != NIL && x == N(p).right) {
				x = p;
				p = N(p).parent;
			}
			x = p;
		}
	}
	*n = k;
	return out;
}

#undef N

/* ---------- building ---------- */

int pfc_symtab_add(struct pfc_symtab *t, uint64_t start, uint64_t size, int binding,
		   const char *name, size_t namelen)
{
	struct pfc_sym *s;

	if (t->img)
		return -EINVAL;	/* a view of an image is read only */
	if (t->nr == 0 && t->alloc == 0)
		t->root = t->root_mod = NIL;
	if (t->nr == t->alloc) {
		size_t n = t->alloc ? t->alloc * 2 : 256;
		struct pfc_symtab_node *nodes;
		struct pfc_sym *p;

		if (n > INT32_MAX || n > SIZE_MAX / sizeof(*p))
			return -ENOMEM;
		p = pfc_mem_realloc(t->syms, t->nr * sizeof(*p), n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		t->syms = p;
		nodes = pfc_mem_realloc(t->nodes, t->nr * sizeof(*nodes), n * sizeof(*nodes));
		if (!nodes)
			return -ENOMEM;
		t->nodes = nodes;
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
	tree_insert(t, 0, (int32_t)t->nr);
	t->nr++;
	return 0;
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
static void fixup_end(struct pfc_symtab *t, const int32_t *order, size_t n,
		      enum pfc_symtab_flavour flavour)
{
	struct pfc_sym *last;
	size_t i;

	if (n == 0)
		return;
	for (i = 1; i < n; i++) {
		struct pfc_sym *prev = &t->syms[order[i - 1]], *curr = &t->syms[order[i]];

		if (prev->end != prev->start)
			continue;
		if (flavour == PFC_SYMTAB_KALLSYMS &&
		    !strchr(prev->name, '[') != !strchr(curr->name, '['))
			prev->end = roundup_page(prev->end + 4096);
		else
			prev->end = curr->start;
	}
	last = &t->syms[order[n - 1]];
	if (last->end == last->start)
		last->end = roundup_page(last->start) + 4096;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* perf's choose_best_symbol: nonzero when a (earlier in address order) beats b. */
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
	return 1;	/* a tie keeps the first */
}

/* perf's symbols__fixup_duplicate: of the symbols sharing a start keep one, comparing
 * the survivor so far with each following one, erasing the loser from the tree. */
static void fixup_duplicate(struct pfc_symtab *t, const int32_t *order, size_t n)
{
	int32_t cur;
	size_t i;

	if (n == 0)
		return;
	cur = order[0];
	for (i = 1; i < n; i++) {
		int32_t next = order[i];

		if (t->syms[cur].start != t->syms[next].start) {
			cur = next;
			continue;
		}
		if (first_is_best(&t->syms[cur], &t->syms[next])) {
			tree_erase(t, next);
		} else {
			tree_erase(t, cur);
			cur = next;
		}
	}
}

/*
 * What perf's map__split_kallsyms does to the kernel's tree: every module symbol
 * ("name\t[module]") leaves it, walking in address order.  We keep module symbols in a
 * second tree (perf moves them to the module's own DSO) so they stay findable, and cut
 * the names at the tab.
 */
static void split_modules(struct pfc_symtab *t, const int32_t *order, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int32_t x = order[i];
		/* names live in the table's own storage, so they may be edited */
		char *tab = strchr((char *)t->syms[x].name, '\t');

		if (!tab || t->nodes[x].dead)
			continue;
		tree_erase(t, x);
		*tab = '\0';
		t->syms[x].module = tab + 1;
		tree_insert(t, 1, x);
	}
}

int pfc_symtab_fixup(struct pfc_symtab *t, enum pfc_symtab_flavour flavour)
{
	int32_t *order;
	size_t n;

	if (t->nr == 0)
		return 0;
	order = tree_inorder(t, 0, &n);
	if (!order)
		return -ENOMEM;
	fixup_end(t, order, n, flavour);
	fixup_duplicate(t, order, n);
	free(order);
	if (flavour == PFC_SYMTAB_KALLSYMS) {
		order = tree_inorder(t, 0, &n);
		if (!order)
			return -ENOMEM;
		split_modules(t, order, n);
		free(order);
	}
	return 0;
}

/*
 * Drop erased symbols and put the rest in address order (equal starts in tree order),
 * renumbering the tree links.  Lookups give the same answers before and after.
 */
int pfc_symtab_finish(struct pfc_symtab *t)
{
	int32_t *order[2], *map;
	size_t n[2], i, k, a, b, total;
	struct pfc_sym *syms;
	struct pfc_symtab_node *nodes;
	int tree;

	if (t->nr == 0)
		return 0;
	order[0] = tree_inorder(t, 0, &n[0]);
	order[1] = tree_inorder(t, 1, &n[1]);
	map = malloc(t->nr * sizeof(*map));
	total = n[0] + n[1];
	syms = pfc_mem_alloc((total ? total : 1) * sizeof(*syms));
	nodes = pfc_mem_alloc((total ? total : 1) * sizeof(*nodes));
	if (!order[0] || !order[1] || !map || !syms || !nodes) {
		free(order[0]);
		free(order[1]);
		free(map);
		free(syms);
		free(nodes);
		return -ENOMEM;
	}
	for (i = 0; i < t->nr; i++)
		map[i] = NIL;
	/* merge the two address-ordered walks; the main tree first on equal starts */
	for (a = b = k = 0; a < n[0] || b < n[1]; k++) {
		int32_t x;

		if (b >= n[1] || (a < n[0] && t->syms[order[0][a]].start <= t->syms[order[1][b]].start))
			x = order[0][a++];
		else
			x = order[1][b++];
		map[x] = (int32_t)k;
		syms[k] = t->syms[x];
		nodes[k] = t->nodes[x];
	}
	for (k = 0; k < total; k++) {
		if (nodes[k].left != NIL)
			nodes[k].left = map[nodes[k].left];
		if (nodes[k].right != NIL)
			nodes[k].right = map[nodes[k].right];
		if (nodes[k].parent != NIL)
			nodes[k].parent = map[nodes[k].parent];
	}
	for (tree = 0; tree < 2; tree++) {
		int32_t *root = tree_root(t, tree);

		if (*root != NIL)
			*root = map[*root];
		if (t->last_ok[tree])
			t->last[tree] = map[t->last[tree]];
	}
	free(order[0]);
	free(order[1]);
	free(map);
	free(t->syms);
	free(t->nodes);
	t->syms = syms;
	t->nodes = nodes;
	t->nr = t->alloc = total;
	return 0;
}

/* ---------- self-check for tests ---------- */

/* black height of the subtree at x, or -1 when it breaks a red-black or link rule */
static int check_subtree(const struct pfc_symtab *t, int32_t x, int32_t parent, size_t *count)
{
	int lh, rh;

	if (x == NIL)
		return 1;
	if (x < 0 || (size_t)x >= t->nr || t->nodes[x].dead || t->nodes[x].parent != parent)
		return -1;
	if (++*count > t->nr)
		return -1;	/* a cycle */
	if (t->nodes[x].red && (is_red(t, t->nodes[x].left) || is_red(t, t->nodes[x].right)))
		return -1;
	if (t->nodes[x].left != NIL &&
	    t->syms[t->nodes[x].left].start > t->syms[x].start)
		return -1;
	if (t->nodes[x].right != NIL &&
	    t->syms[t->nodes[x].right].start < t->syms[x].start)
		return -1;
	lh = check_subtree(t, t->nodes[x].left, x, count);
	rh = check_subtree(t, t->nodes[x].right, x, count);
	if (lh < 0 || rh < 0 || lh != rh)
		return -1;
	return lh + !t->nodes[x].red;
}

int pfc_symtab_check(const struct pfc_symtab *t)
{
	size_t count = 0, i;
	int32_t *order;
	size_t n;
	int tree;

	if (t->nr == 0 || t->img)
		return 0;	/* a table read in place is checked as it is searched (image_find) */
	for (tree = 0; tree < 2; tree++) {
		int32_t root = tree ? t->root_mod : t->root;

		if (is_red(t, root) || check_subtree(t, root, NIL, &count) < 0)
			return -EINVAL;
		/* address order along the whole tree, not only parent/child pairs */
		order = tree_inorder((struct pfc_symtab *)t, tree, &n);
		if (!order)
			return -ENOMEM;
		for (i = 1; i < n; i++)
			if (t->syms[order[i - 1]].start > t->syms[order[i]].start)
				break;
		free(order);
		if (i < n)
			return -EINVAL;
	}
	return 0;
}

/* ---------- lookup ---------- */

/* perf's symbols__find: go left below a start, right at or past an end; an unsized
 * symbol covers its start only */
static const struct pfc_sym *tree_find(const struct pfc_symtab *t, int32_t x, uint64_t addr)
{
	while (x != NIL) {
		const struct pfc_sym *s = &t->syms[x];

		if (addr < s->start)
			x = t->nodes[x].left;
		else if (addr > s->end || (s->end != s->start && addr == s->end))
			x = t->nodes[x].right;
		else
			return s;
	}
	return NULL;
}

static const struct pfc_sym *image_find(const struct pfc_symtab *t, uint64_t addr);

void pfc_symtab_shift(struct pfc_symtab *t, uint64_t delta)
{
	size_t i;

	for (i = 0; t && i < t->nr; i++) {
		t->syms[i].start -= delta;
		t->syms[i].end -= delta;
	}
}

const struct pfc_sym *pfc_symtab_find(const struct pfc_symtab *t, uint64_t addr)
{
	const struct pfc_sym *s;

	if (!t || t->nr == 0)
		return NULL;
	if (t->img)
		return image_find(t, addr);
	s = tree_find(t, t->root, addr);
	if (!s)
		s = tree_find(t, t->root_mod, addr);
	return s;
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
	if (t->img)
		pfc_mem_sparse_free(t->syms, t->nr * sizeof(*t->syms));
	else
		free(t->syms);
	free(t->img_filled);
	free(t->nodes);
	if (t->img_map)
		munmap(t->img_map, t->img_map_len);
	memset(t, 0, sizeof(*t));
}

int pfc_symtab_core_range(const struct pfc_symtab *t, uint64_t *start, uint64_t *end)
{
	size_t i, first = SIZE_MAX, last = SIZE_MAX;

	for (i = 0; i < t->nr; i++) {
		int module = t->img ? ((const struct image_sym *)t->img)[i].module != UINT32_MAX : t->syms[i].module != NULL;

		if (!module) {
			if (first == SIZE_MAX)
				first = i;
			last = i;
		}
	}
	if (first == SIZE_MAX)
		return 0;
	if (t->img) {
		*start = ((const struct image_sym *)t->img)[first].start;
		*end = ((const struct image_sym *)t->img)[last].end;
	} else {
		*start = t->syms[first].start;
		*end = t->syms[last].end;
	}
	return 1;
}

/* ---------- a finished table as bytes (the kernel symbol cache, symcache.c) ---------- */

#define IMAGE_HEAD 16	/* nr (u64), roots (2 x i32) */
#define IMAGE_MAX_DEPTH 128	/* a red-black tree of 2^31 nodes is 62 deep */

int pfc_symtab_image(const struct pfc_symtab *t, uint8_t **out, size_t *len)
{
	size_t strsize = 1, i, n, pos;
	uint8_t *p;

	*out = NULL;
	*len = 0;
	if (t->img)
		return -EINVAL;	/* it is an image already */
	for (i = 0; i < t->nr; i++) {
		if (t->nodes[i].dead)
			return -EINVAL;	/* not finished */
		strsize += strlen(t->syms[i].name) + 1;
		if (t->syms[i].module)
			strsize += strlen(t->syms[i].module) + 1;
	}
	if (strsize >= UINT32_MAX)
		return -EFBIG;
	n = IMAGE_HEAD + t->nr * sizeof(struct image_sym) + strsize;
	if (!(p = malloc(n)))
		return -ENOMEM;
	memcpy(p, &(uint64_t){ t->nr }, 8);
	memcpy(p + 8, &(int32_t){ t->nr ? t->root : NIL }, 4);
	memcpy(p + 12, &(int32_t){ t->nr ? t->root_mod : NIL }, 4);
	pos = IMAGE_HEAD + t->nr * sizeof(struct image_sym);
	p[pos++] = '\0';	/* offset 0: "" */
	for (i = 0; i < t->nr; i++) {
		const struct pfc_sym *s = &t->syms[i];
		struct image_sym e = {
			.start = s->start, .end = s->end, .module = UINT32_MAX,
			.left = t->nodes[i].left, .right = t->nodes[i].right, .parent = t->nodes[i].parent,
			.binding = s->binding, .flags = s->flags, .red = t->nodes[i].red, .tree = t->nodes[i].tree,
		};
		size_t l = strlen(s->name) + 1;
		size_t base = IMAGE_HEAD + t->nr * sizeof(struct image_sym);

		e.name = (uint32_t)(pos - base);
		memcpy(p + pos, s->name, l);
		pos += l;
		if (s->module) {
			l = strlen(s->module) + 1;
			e.module = (uint32_t)(pos - base);
			memcpy(p + pos, s->module, l);
			pos += l;
		}
		memcpy(p + IMAGE_HEAD + i * sizeof(e), &e, sizeof(e));
	}
	*out = p;
	*len = n;
	return 0;
}

/* Whether the links of an image make two search trees whose walks end: every node in
 * exactly one tree, reached once, no deeper than IMAGE_MAX_DEPTH, each child naming its
 * parent, starts in order.  Lookups then take at most IMAGE_MAX_DEPTH steps. */
static int image_trees_ok(const struct image_sym *e, size_t nr, const int32_t root[2])
{
	uint8_t *seen = calloc(nr ? nr : 1, 1);
	size_t visited = 0;
	int tree, ok = seen != NULL;

	for (tree = 0; ok && tree < 2; tree++) {
		int32_t stack[IMAGE_MAX_DEPTH], x = root[tree];
		int depth = 0, have_prev = 0;
		uint64_t prev = 0;

		if (x != NIL && e[x].parent != NIL)
			ok = 0;
		/* in-order walk with an explicit stack */
		while (ok && (x != NIL || depth > 0)) {
			if (x != NIL) {
				if (seen[x] || e[x].tree != tree || depth == IMAGE_MAX_DEPTH) {
					ok = 0;
					break;
				}
				seen[x] = 1;
				visited++;
				if ((e[x].left != NIL && e[e[x].left].parent != x) ||
				    (e[x].right != NIL && e[e[x].right].parent != x)) {
					ok = 0;
					break;
				}
				stack[depth++] = x;
				x = e[x].left;
				continue;
			}
			x = stack[--depth];
			if (have_prev && e[x].start < prev)
				ok = 0;
			prev = e[x].start;
			have_prev = 1;
			x = e[x].right;
		}
	}
	free(seen);
	return ok && visited == nr;
}

/* Whether a record can be a symbol: its names inside the strsize bytes of names, its
 * fields in range.  The copying reader checks it for every record, a lookup in place for
 * the record it finds (image_find). */
static int image_sym_ok(const struct image_sym *e, size_t strsize)
{
	return e->name < strsize && (e->module == UINT32_MAX || e->module < strsize) &&
	       e->binding <= 15 /* an ELF STB_*: 4 bits (STB_GNU_UNIQUE is 10) */ && e->end >= e->start;
}

static int image_records_ok(const struct image_sym *e, size_t nr, size_t strsize, const int32_t root[2])
{
	size_t i;

	for (i = 0; i < nr; i++) {
		if (!image_sym_ok(&e[i], strsize) ||
		    e[i].left < NIL || e[i].left >= (int64_t)nr || e[i].right < NIL || e[i].right >= (int64_t)nr ||
		    e[i].parent < NIL || e[i].parent >= (int64_t)nr || e[i].red > 1 || e[i].tree > 1)
			return 0;
	}
	return image_trees_ok(e, nr, root);
}

/* An image's counts and blocks; 0, or -EINVAL when they do not fit in len */
static int image_layout(const uint8_t *p, size_t len, uint64_t *nr, int32_t root[2], const char **strs, size_t *strsize)
{
	if (len < IMAGE_HEAD)
		return -EINVAL;
	memcpy(nr, p, 8);
	memcpy(&root[0], p + 8, 4);
	memcpy(&root[1], p + 12, 4);
	if (*nr > INT32_MAX || *nr > (len - IMAGE_HEAD) / sizeof(struct image_sym))
		return -EINVAL;
	*strsize = len - IMAGE_HEAD - *nr * sizeof(struct image_sym);
	*strs = (const char *)p + IMAGE_HEAD + *nr * sizeof(struct image_sym);
	if (*strsize == 0 || *strsize >= UINT32_MAX || (*strs)[*strsize - 1] != '\0')
		return -EINVAL;
	if (root[0] < NIL || root[1] < NIL || root[0] >= (int64_t)*nr || root[1] >= (int64_t)*nr)
		return -EINVAL;
	if (*nr == 0 && (root[0] != NIL || root[1] != NIL))
		return -EINVAL;
	return 0;
}

int pfc_symtab_view_image(struct pfc_symtab *t, const uint8_t *p, size_t len, void *map, size_t map_len)
{
	const struct image_sym *e = (const void *)(p + IMAGE_HEAD);
	uint64_t nr;
	int32_t root[2];
	const char *strs;
	size_t strsize;

	memset(t, 0, sizeof(*t));
	t->root = t->root_mod = NIL;
	/* the records themselves are checked as a lookup reaches them (image_find): checking
	 * them all here read every page of a 100,000-symbol table on each conversion */
	if (image_layout(p, len, &nr, root, &strs, &strsize) < 0 || ((uintptr_t)e & 7)) {
		if (map)
			munmap(map, map_len);
		return -EINVAL;
	}
	/* mapped apart: a lookup fills the few entries it reaches, and only their pages are backed */
	if (nr && (!(t->syms = pfc_mem_sparse(nr * sizeof(*t->syms))) ||
		   !(t->img_filled = calloc((nr + 63) / 64, sizeof(*t->img_filled))))) {
		pfc_mem_sparse_free(t->syms, nr * sizeof(*t->syms));
		t->syms = NULL;
		if (map)
			munmap(map, map_len);
		return -ENOMEM;
	}
	t->nr = t->alloc = nr;
	t->root = root[0];
	t->root_mod = root[1];
	t->img = nr ? e : NULL;
	t->img_strs = strs;
	t->img_strsize = strsize;
	t->img_map = map;
	t->img_map_len = map_len;
	return 0;
}

/*
 * tree_find over the image's records; the symbol found is filled in syms on first use.
 * The image's CRC passed, so its trees are the ones pfc_symtab_image wrote; a lookup still
 * checks every link it follows and stops after IMAGE_MAX_DEPTH steps, and a record it
 * cannot use is no symbol, so that whatever the bytes, a lookup ends and reads inside them.
 */
static const struct pfc_sym *image_find(const struct pfc_symtab *t, uint64_t addr)
{
	const struct image_sym *e = t->img;
	int tree, steps;

	for (tree = 0; tree < 2; tree++) {
		int32_t x = tree ? t->root_mod : t->root;

		for (steps = 0; x != NIL; steps++) {
			if (x < 0 || (size_t)x >= t->nr || steps == IMAGE_MAX_DEPTH)
				return NULL;
			if (addr < e[x].start) {
				x = e[x].left;
			} else if (addr > e[x].end || (e[x].end != e[x].start && addr == e[x].end)) {
				x = e[x].right;
			} else {
				struct pfc_sym *s = (struct pfc_sym *)&t->syms[x];

				if (!image_sym_ok(&e[x], t->img_strsize))
					return NULL;
				if (!(t->img_filled[x / 64] >> (x % 64) & 1)) {
					t->img_filled[x / 64] |= (uint64_t)1 << (x % 64);
					*s = (struct pfc_sym){
						.start = e[x].start, .end = e[x].end, .name = t->img_strs + e[x].name,
						.module = e[x].module == UINT32_MAX ? NULL : t->img_strs + e[x].module,
						.binding = e[x].binding, .flags = e[x].flags,
					};
				}
				return s;
			}
		}
	}
	return NULL;
}

int pfc_symtab_from_image(struct pfc_symtab *t, const uint8_t *p, size_t len)
{
	const struct image_sym *e;
	struct image_sym *copy = NULL;
	uint64_t nr;
	int32_t root[2];
	size_t i, strsize;
	const char *strs;
	char *names;
	int ret = -EINVAL;

	memset(t, 0, sizeof(*t));
	t->root = t->root_mod = NIL;
	if (image_layout(p, len, &nr, root, &strs, &strsize) < 0)
		return -EINVAL;
	if (nr == 0)
		return 0;
	/* the bytes may sit unaligned in a buffer: copy the records once */
	if (!(copy = pfc_mem_alloc(nr * sizeof(*e))))
		return -ENOMEM;
	memcpy(copy, p + IMAGE_HEAD, nr * sizeof(*e));
	e = copy;
	if (!image_records_ok(e, nr, strsize, root))
		goto out;
	ret = -ENOMEM;
	t->syms = pfc_mem_alloc(nr * sizeof(*t->syms));
	t->nodes = pfc_mem_alloc(nr * sizeof(*t->nodes));
	names = pfc_symtab_strdup(t, strs, strsize - 1);
	if (!t->syms || !t->nodes || !names) {
		free(copy);
		pfc_symtab_free(t);
		t->root = t->root_mod = NIL;
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++) {
		t->syms[i] = (struct pfc_sym){
			.start = e[i].start, .end = e[i].end, .name = names + e[i].name,
			.module = e[i].module == UINT32_MAX ? NULL : names + e[i].module,
			.binding = e[i].binding, .flags = e[i].flags,
		};
		t->nodes[i] = (struct pfc_symtab_node){
			.left = e[i].left, .right = e[i].right, .parent = e[i].parent,
			.red = e[i].red, .tree = e[i].tree,
		};
	}
	t->nr = t->alloc = nr;
	t->root = root[0];
	t->root_mod = root[1];
	ret = 0;
out:
	free(copy);
	return ret;
}
