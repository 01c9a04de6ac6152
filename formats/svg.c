/*
 * svg.c - an interactive SVG flame graph in the manner of FlameGraph's flamegraph.pl:
 * the folded stacks (folded.c's walk, so the graph shows exactly the folded profile) are
 * merged into a tree whose children are sorted bytewise by name, laid out by weight and
 * written as one self-contained file with a small script for details on hover, click to
 * zoom, and regular-expression search.  Colors come from the frame's kind (kernel, JIT,
 * native) and a hash of its name.  It does not read the recording itself.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "converter/machine/intern.h"
#include "converter/util/strbuf.h"
#include "formats/diff.h"
#include "formats/folded.h"
#include "formats/svg.h"
#include "formats/writer.h"

/* layout, as flamegraph.pl's defaults */
#define FRAME_H 16
#define FONT_SIZE 12
#define FONT_WIDTH 0.59
#define XPAD 10
#define YPAD1 (FONT_SIZE * 3)          /* above the frames: the title */
#define YPAD2 (FONT_SIZE * 2 + 10)     /* below: details and matched */
#define FRAME_PAD 1
#define SEARCH_COLOR "rgb(230,0,230)"

#define NONE UINT32_MAX

struct node {
	uint32_t name;          /* interned display name, annotation removed */
	uint32_t parent;
	uint32_t child, sibling;/* sorted by name once the tree is complete */
	uint32_t hnext;
	uint32_t depth;
	uint8_t kind;           /* enum pfc_svg_kind */
	uint64_t value;         /* weight of the stacks through this frame */
	int64_t delta;          /* --diff: new - base weight of the stacks that end here */
	uint8_t has_delta;      /* a frame of a differential graph (all frames but the root) */
};

struct tree {
	struct pfc_session *s;
	struct pfc_error *err;
	struct pfc_intern names;
	struct node *v;
	size_t n, cap;
	uint32_t *heads;        /* hash of (parent, name) -> node */
	size_t hcap;
	uint32_t *kind_cache;   /* frame id -> kind + 1 */
	struct name_memo *name_cache;  /* frame id -> its one name, when its text holds one */
	/* the previous stack's path below its process node: its first path_len frames were
	 * one-name pieces (their texts, the nodes they led to); a stack that starts with the
	 * same texts under the same process node goes through the same nodes, without the
	 * hash lookups (a fifth of adding the stacks) */
	uint32_t path_root;
	const char **path_text;
	uint32_t *path_node;
	size_t path_len, path_cap;
	int diff;               /* a differential flame graph (--diff) */
	int negate;             /* --negate: the hues switched */
	uint64_t maxdelta;      /* the largest change of one stack, at least 1 */
};

/* A frame whose folded text is one name (no ';'): that text and its interned name + 1, so
 * that the stacks through it do not hash its text again (most of a .NET flame graph's time
 * went to hashing the same long names once a stack). */
struct name_memo {
	const char *text;
	uint32_t id;
};

/* flamegraph.pl removes one trailing annotation (_[k], _[j], _[i], _[w]) from what it shows */
static size_t strip_annotation(const char *s, size_t n)
{
	if (n >= 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']' && s[n - 2] && strchr("kwij", s[n - 2]))
		return n - 4;
	return n;
}

enum pfc_svg_kind pfc_svg_frame_kind(const struct pfc_frame *f)
{
	const char *base, *name;
	size_t n;

	if (!f->dso)
		return f->kernel ? PFC_SVG_KERNEL : PFC_SVG_NATIVE;
	switch (f->dso->kind) {
	case PFC_DSO_KERNEL:
	case PFC_DSO_KSYM:
		return PFC_SVG_KERNEL;
	case PFC_DSO_PERFMAP:
		return PFC_SVG_JIT;
	default:
		break;
	}
	/* a PE image's code is managed code compiled ahead of time (ReadyToRun): green as JIT
	 * code, which it is too, only compiled earlier */
	if (f->dso->r2r)
		return PFC_SVG_JIT;
	/* the jitted-PID-N.so files of `perf inject --jit` hold JIT code */
	name = f->dso->name ? f->dso->name : "";
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	n = strlen(base);
	if (n > 10 && !memcmp(base, "jitted-", 7) && !memcmp(base + n - 3, ".so", 3))
		return PFC_SVG_JIT;
	return f->kernel ? PFC_SVG_KERNEL : PFC_SVG_NATIVE;
}

static uint32_t hash2(uint32_t parent, uint32_t name)
{
	uint64_t h = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(h >> 32);
}

static int tree_grow(struct tree *t)
{
	size_t i;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct node *v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return -1;
		t->v = v;
		t->cap = cap;
	}
	if (t->n * 2 >= t->hcap) {
		size_t cap = t->hcap ? t->hcap * 2 : 2048;
		uint32_t *h = malloc(cap * sizeof(*h));
		if (!h)
			return -1;
		for (i = 0; i < cap; i++)
			h[i] = NONE;
		for (i = 1; i < t->n; i++) {
			uint32_t b = hash2(t->v[i].parent, t->v[i].name) & (cap - 1);
			t->v[i].hnext = h[b];
			h[b] = (uint32_t)i;
		}
		free(t->heads);
		t->heads = h;
		t->hcap = cap;
	}
	return 0;
}

/* The child `name` of `parent`, made when new; NONE when out of memory. */
static uint32_t tree_child_id(struct tree *t, uint32_t parent, uint32_t id, int kind)
{
	uint32_t b, i;
	struct node *nd;

	b = hash2(parent, id) & (uint32_t)(t->hcap - 1);
	for (i = t->heads[b]; i != NONE; i = t->v[i].hnext)
		if (t->v[i].parent == parent && t->v[i].name == id)
			return i;
	if (tree_grow(t) < 0 || t->n >= NONE - 1)
		return NONE;
	b = hash2(parent, id) & (uint32_t)(t->hcap - 1);
	nd = &t->v[t->n];
	memset(nd, 0, sizeof(*nd));
	nd->name = id;
	nd->parent = parent;
	nd->child = nd->sibling = NONE;
	nd->depth = t->v[parent].depth + 1;
	nd->kind = (uint8_t)kind;
	nd->hnext = t->heads[b];
	t->heads[b] = (uint32_t)t->n;
	return (uint32_t)t->n++;
}

static uint32_t tree_child(struct tree *t, uint32_t parent, const char *name, size_t len, int kind)
{
	uint32_t id = pfc_intern(&t->names, name, strip_annotation(name, len));

	return id == UINT32_MAX ? NONE : tree_child_id(t, parent, id, kind);
}

/* Adds the ';'-separated names of text under *cur.  Like Perl's split, empty names stay,
 * except at the very end of the stack (`last`). */
static int add_names(struct tree *t, uint32_t *cur, const char *text, size_t len, int kind, uint64_t w, int last)
{
	size_t a = 0, b;

	if (last)
		while (len > 0 && text[len - 1] == ';')
			len--;
	for (;;) {
		uint32_t c;

		for (b = a; b < len && text[b] != ';'; b++)
			;
		if (b == len && a == len && last)
			return 0;
		c = tree_child(t, *cur, text + a, b - a, kind);
		if (c == NONE)
			return -1;
		t->v[c].value += w;
		*cur = c;
		if (b >= len)
			return 0;
		a = b + 1;
	}
}

static int tree_stack(void *arg, const struct pfc_stack *st, const char *pname, size_t pname_len,
		      const struct pfc_folded_piece *pv, size_t nr, uint64_t weight)
{
	struct tree *t = arg;
	uint32_t cur = 0;
	size_t k, end = nr, same = 0;

	(void)st;
	/* trailing empty names of the whole line are dropped, as by Perl's split */
	while (end > 0) {
		size_t l = pv[end - 1].len;
		while (l > 0 && pv[end - 1].text[l - 1] == ';')
			l--;
		if (l)
			break;
		end--;
	}
	t->v[0].value += weight;
	if (add_names(t, &cur, pname, pname_len, PFC_SVG_PROCESS, weight, end == 0) < 0)
		goto oom;
	if (end > t->path_cap) {
		const char **nt = realloc(t->path_text, end * sizeof(*nt));
		uint32_t *nn = nt ? realloc(t->path_node, end * sizeof(*nn)) : NULL;
		if (nt)
			t->path_text = nt;
		if (!nn)
			goto oom;
		t->path_node = nn;
		t->path_cap = end;
	}
	if (cur == t->path_root) {
		same = t->path_len;
	} else {
		t->path_root = cur;
		t->path_len = 0;
	}
	for (k = 0; k < end; k++) {
		uint32_t fid = pv[k].frame;
		if (k < same && t->path_text[k] == pv[k].text) {
			cur = t->path_node[k];
			t->v[cur].value += weight;
			continue;
		}
		same = 0;
		if (t->path_len > k)	/* the recorded path ends here; this stack's goes on */
			t->path_len = k;
		if (!t->kind_cache[fid])
			t->kind_cache[fid] = pfc_svg_frame_kind(&t->s->stacks.frames[fid]) + 1;
		if (t->name_cache) {
			struct name_memo *m = &t->name_cache[fid];
			if (m->text != pv[k].text) {
				/* one name (add_names would make one node of it): interned once */
				m->text = NULL;
				if (pv[k].len && !memchr(pv[k].text, ';', pv[k].len)) {
					uint32_t id = pfc_intern(&t->names, pv[k].text, strip_annotation(pv[k].text, pv[k].len));
					if (id == UINT32_MAX)
						goto oom;
					m->text = pv[k].text;
					m->id = id;
				}
			}
			if (m->text == pv[k].text) {
				uint32_t c = tree_child_id(t, cur, m->id, (int)t->kind_cache[fid] - 1);
				if (c == NONE)
					goto oom;
				t->v[c].value += weight;
				cur = c;
				if (t->path_len == k) {
					t->path_text[k] = pv[k].text;
					t->path_node[k] = c;
					t->path_len = k + 1;
				}
				continue;
			}
		}
		if (add_names(t, &cur, pv[k].text, pv[k].len, (int)t->kind_cache[fid] - 1, weight, k + 1 == end) < 0)
			goto oom;
	}
	return 0;
oom:
	return PFC_FAIL_NOOFF(t->err, NOMEM, "flame graph");
}

/* --diff: a line of difffolded.pl's table drawn as flamegraph.pl draws one: the new
 * weight makes the widths, and the change (new - base) goes to the frame the stack ends
 * in; every frame on the way has a change, 0 when no stack ends there. */
static int tree_diff_line(struct tree *t, const char *text, size_t len, uint64_t base, uint64_t w)
{
	uint32_t cur = 0, prev = NONE;
	int64_t d = (int64_t)w - (int64_t)base;
	uint64_t ad = d < 0 ? (uint64_t)-d : (uint64_t)d;

	if (ad > t->maxdelta)
		t->maxdelta = ad;
	t->v[0].value += w;
	if (add_names(t, &cur, text, len, PFC_SVG_NATIVE, w, 1) < 0)
		return PFC_FAIL_NOOFF(t->err, NOMEM, "flame graph");
	/* mark the path from the leaf up */
	t->v[cur].delta += d;
	for (; cur != 0 && cur != prev; prev = cur, cur = t->v[cur].parent)
		t->v[cur].has_delta = 1;
	return 0;
}

static int tree_diff(struct tree *t, struct pfc_session *s, const struct pfc_wopts *o)
{
	struct pfc_diff d;
	size_t i, len;
	int ret = pfc_diff_build(&d, s, o, t->err);

	t->diff = 1;
	t->negate = o->negate;
	t->maxdelta = 1;
	t->v[0].has_delta = 1;	/* flamegraph.pl gives the root a change too: 0, white */
	for (i = 0; ret == 0 && i < d.n; i++) {
		const char *text = pfc_diff_text(&d, i, &len);
		ret = tree_diff_line(t, text, len, d.w[0][d.order[i]], d.w[1][d.order[i]]);
	}
	pfc_diff_free(&d);
	return ret;
}

static void put_rgb(char *buf, size_t size, int r, int g, int b);

/* flamegraph.pl's color_scale: white for no change, red for growth and blue for a
 * shrink, as deep as the change is near the largest one */
static void diff_color(const struct tree *t, int64_t v, char *buf, size_t size)
{
	double max = (double)t->maxdelta;
	int r = 255, g = 255, b = 255;

	if (t->negate)
		v = -v;
	if (v > 0)
		g = b = (int)(210.0 * (double)(t->maxdelta - (uint64_t)v) / max);
	else if (v < 0)
		r = g = (int)(210.0 * (double)(t->maxdelta - (uint64_t)-v) / max);
	put_rgb(buf, size, r, g, b);
}

static int cmp_nodes(const void *a, const void *b, void *arg)
{
	const struct tree *t = arg;
	const struct node *x = &t->v[*(const uint32_t *)a], *y = &t->v[*(const uint32_t *)b];
	uint32_t lx, ly;
	int r;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	lx = pfc_intern_len(&t->names, x->name);
	ly = pfc_intern_len(&t->names, y->name);
	r = memcmp(pfc_intern_str(&t->names, x->name), pfc_intern_str(&t->names, y->name), lx < ly ? lx : ly);
	if (r)
		return r;
	/* one name starts the other: the shorter is followed by ';' in the folded lines */
	if (lx < ly)
		return (unsigned char)pfc_intern_str(&t->names, y->name)[lx] < ';' ? 1 : -1;
	if (lx > ly)
		return (unsigned char)pfc_intern_str(&t->names, x->name)[ly] < ';' ? -1 : 1;
	return 0;	/* siblings have distinct names */
}

/* Links each node's children in the order of their folded lines, which flamegraph.pl sorts
 * bytewise: by name, a name that starts another one compared as if followed by ';'. */
static int tree_sort(struct tree *t)
{
	uint32_t *ord, *at;
	size_t i, p;

	if (t->n < 2)
		return 0;
	ord = malloc((t->n - 1) * sizeof(*ord));
	at = calloc(t->n + 1, sizeof(*at));
	if (!ord || !at) {
		free(ord);
		free(at);
		return -1;
	}
	/* grouped by parent first (a counting sort), then each group of siblings by name: most
	 * nodes have no sibling, and one sort of all the nodes compared them across parents */
	for (i = 1; i < t->n; i++)
		at[t->v[i].parent + 1]++;
	for (p = 1; p <= t->n; p++)
		at[p] += at[p - 1];
	for (i = 1; i < t->n; i++)
		ord[at[t->v[i].parent]++] = (uint32_t)i;
	for (p = 0, i = 0; p < t->n; i = at[p++])	/* at[p] is now the end of p's group */
		if (at[p] - i > 1)
			qsort_r(ord + i, at[p] - i, sizeof(*ord), cmp_nodes, t);
	free(at);
	for (i = t->n - 1; i-- > 0;) {
		struct node *nd = &t->v[ord[i]];
		nd->sibling = t->v[nd->parent].child;
		t->v[nd->parent].child = ord[i];
	}
	free(ord);
	return 0;
}

/* ---- output ---- */

/* Numbers as printf prints them, by hand: printf's exact conversion of doubles took more
 * instructions than the rest of the graph's writing (4,000 a call).  The fast path is exact
 * whenever it is used: below 1e7 the scaled value is off by less than 2e-7, so its rounding
 * to an integer is that of the exact value unless that value lies within 1e-6 of a tie,
 * which is left to printf (it rounds ties of the exact binary value to even). */
static char *put_int(char *d, int v)
{
	if (v < 0) {
		*d++ = '-';
		return pfc_put_dec(d, (uint64_t)-(int64_t)v, 1);
	}
	return pfc_put_dec(d, (uint64_t)v, 1);
}

/* The integer printf's "%.<prec>f" rounds a * 10^prec to (a >= 0), or 0 when that is not
 * certain without printf. */
static int fixed_fast(double a, int prec, uint64_t *r)
{
	static const double scale[] = { 1, 10, 100 };
	double y, f;

	if (!(a < 1e7))	/* NaN too */
		return 0;
	y = a * scale[prec];
	f = y - floor(y);
	if (fabs(f - 0.5) < 1e-6)
		return 0;
	*r = (uint64_t)floor(y + 0.5);
	return 1;
}

/* a string literal into d */
#define put_lit(d, lit) ((char *)memcpy((d), (lit), sizeof(lit) - 1) + sizeof(lit) - 1)

#define FIXED_MAX 352                   /* "%.2f" of the largest double, and more */

/* printf's "%.<prec>f" of x, prec 0 to 2, into d (FIXED_MAX bytes) */
static char *put_fixed(char *d, double x, int prec)
{
	uint64_t r;

	if (!fixed_fast(fabs(x), prec, &r))
		return d + snprintf(d, FIXED_MAX, "%.*f", prec, x);
	if (signbit(x))
		*d++ = '-';
	if (prec == 0)
		return pfc_put_dec(d, r, 1);
	if (prec == 1) {
		d = pfc_put_dec(d, r / 10, 1);
		*d++ = '.';
		*d++ = (char)('0' + r % 10);
		return d;
	}
	d = pfc_put_dec(d, r / 100, 1);
	*d++ = '.';
	*d++ = (char)('0' + r % 100 / 10);
	*d++ = (char)('0' + r % 10);
	return d;
}

static void put_escaped_cp(FILE *out, uint32_t cp)
{
	char u[4];

	switch (cp) {
	case '&': fputs("&amp;", out); return;
	case '<': fputs("&lt;", out); return;
	case '>': fputs("&gt;", out); return;
	case '"': fputs("&quot;", out); return;
	}
	if (cp < 0x80) {
		fputc((int)cp, out);
		return;
	}
	if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		fwrite(u, 1, 2, out);
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		fwrite(u, 1, 3, out);
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		fwrite(u, 1, 4, out);
	}
}

/* The next character of s as XML 1.0 allows it.  Bytes that are not valid UTF-8 become
 * U+FFFD, one for each maximal invalid subpart as Unicode recommends (and as Python's
 * decoder does), and so do the characters XML forbids or would change (controls but the
 * tab, U+FFFE and U+FFFF). */
static uint32_t next_cp(const unsigned char *s, size_t n, size_t *i)
{
	unsigned char c = s[*i], lo = 0x80, hi = 0xbf;
	uint32_t cp;
	size_t k, len;

	if (c < 0x80) {
		(*i)++;
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return 0xfffd;
		return c;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;	/* no overlong forms */
		else if (c == 0xed)
			hi = 0x9f;	/* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;	/* up to U+10FFFF */
	} else {
		(*i)++;
		return 0xfffd;
	}
	for (k = 1; k < len; k++) {
		unsigned char d = *i + k < n ? s[*i + k] : 0;
		if (d < lo || d > hi) {
			*i += k;	/* the valid prefix is one replacement */
			return 0xfffd;
		}
		lo = 0x80;
		hi = 0xbf;
		cp = cp << 6 | (d & 0x3f);
	}
	*i += len;
	return cp == 0xfffe || cp == 0xffff ? 0xfffd : cp;
}

/* A byte that is one character written as it is. */
static inline int plain_byte(unsigned char c)
{
	return (c >= 0x20 && c < 0x7f && c != '&' && c != '<' && c != '>' && c != '"') || c == '\t';
}

static size_t count_cps(const char *s, size_t n)
{
	size_t i = 0, c = 0;

	for (i = 0; i < n && (unsigned char)s[i] < 0x80; i++)
		;
	if (i == n)	/* ASCII: a character a byte */
		return n;
	i = 0;

	while (i < n) {
		next_cp((const unsigned char *)s, n, &i);
		c++;
	}
	return c;
}

/* Writes s escaped for XML, at most max characters (SIZE_MAX: all). */
void pfc_svg_put_xml(FILE *out, const char *s, size_t n, size_t max)
{
	size_t i = 0, c = 0, j;

	while (i < n && c < max) {
		/* runs of plain bytes in one write */
		for (j = i; j < n && j - i < max - c && plain_byte((unsigned char)s[j]); j++)
			;
		if (j > i) {
			fwrite(s + i, 1, j - i, out);
			c += j - i;
			i = j;
			continue;
		}
		put_escaped_cp(out, next_cp((const unsigned char *)s, n, &i));
		c++;
	}
}

/* A .NET frame's full name, "Assembly!Namespace.Type::Method(params)[tier]", reads
 * "Micr.." in a narrow box.  Its label starts at the type, "Type::Method(params)", and when
 * that does not fit either, at the method; the title (tooltip) and the search keep the full
 * name.  *type and *method get the byte offsets of both; false for any other name.  The rule
 * is on the name alone, so that the page's script (label() below) finds the same places:
 * an assembly name (no ':', '(', '<', '[' or blank) before a '!', then the first "::" outside
 * brackets; the type starts after the last '.' outside brackets before it (generic arguments
 * hold dots). */
int pfc_svg_dotnet_parts(const char *s, size_t n, size_t *type, size_t *method)
{
	size_t i, bang, dot = 0;
	int depth = 0;

	for (bang = 0; bang < n && s[bang] != '!'; bang++)
		if (strchr(":(<[ \t", s[bang]))
			return 0;
	if (bang == 0 || bang >= n)
		return 0;
	for (i = bang + 1; i + 1 < n; i++) {
		char ch = s[i];

		if (ch == '[' || ch == '<' || ch == '(')
			depth++;
		else if ((ch == ']' || ch == '>' || ch == ')') && depth > 0)
			depth--;
		else if (depth == 0 && ch == '.')
			dot = i;
		else if (depth == 0 && ch == ':' && s[i + 1] == ':') {
			if (i + 2 >= n)
				return 0;
			*type = dot ? dot + 1 : bang + 1;
			*method = i + 2;
			return 1;
		}
	}
	return 0;
}

/* The label in a box w pixels wide: flamegraph.pl's rule, in characters ("..": cut), but a
 * .NET name that does not fit shows its method first (pfc_svg_dotnet_parts). */
void pfc_svg_put_label(FILE *out, const char *s, size_t n, double w)
{
	size_t chars = (size_t)(w / (FONT_SIZE * FONT_WIDTH)), len, type, method;

	if (w <= 0 || chars < 3)	/* room for one character and ".." */
		return;
	len = count_cps(s, n);
	if (len <= chars) {
		pfc_svg_put_xml(out, s, n, SIZE_MAX);
		return;
	}
	if (pfc_svg_dotnet_parts(s, n, &type, &method)) {
		if (count_cps(s + type, n - type) <= chars) {
			pfc_svg_put_xml(out, s + type, n - type, SIZE_MAX);
			return;
		}
		s += method;
		n -= method;
		if (count_cps(s, n) <= chars) {
			pfc_svg_put_xml(out, s, n, SIZE_MAX);
			return;
		}
	}
	pfc_svg_put_xml(out, s, n, chars - 2);
	fputs("..", out);
}

/* 1234567 -> "1,234,567" */
static void put_count(FILE *out, uint64_t v)
{
	char d[32], o[48];
	int n = (int)(pfc_put_dec(d, v, 1) - d), i, k = 0;

	for (i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			o[k++] = ',';
		o[k++] = d[i];
	}
	fwrite(o, 1, (size_t)k, out);
}

/* "rgb(r,g,b)" */
static void put_rgb(char *buf, size_t size, int r, int g, int b)
{
	char t[48], *d = t;

	memcpy(d, "rgb(", 4);
	d = put_int(d + 4, r);
	*d++ = ',';
	d = put_int(d, g);
	*d++ = ',';
	d = put_int(d, b);
	*d++ = ')';
	if (size) {
		size_t n = (size_t)(d - t) < size ? (size_t)(d - t) : size - 1;
		memcpy(buf, t, n);
		buf[n] = 0;
	}
}

static uint32_t fnv1a(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

/* A hue family per kind; the shade within it comes from the name, so a function keeps its
 * color from one graph to the next. */
void pfc_svg_color(int kind, const char *name, size_t n, char *buf, size_t size)
{
	uint32_t h = fnv1a(name, n);
	double a = (h & 0xff) / 255.0, b = ((h >> 8) & 0xff) / 255.0, c = ((h >> 16) & 0xff) / 255.0;
	int r, g, bl;

	switch (kind) {
	case PFC_SVG_KERNEL:            /* orange */
		r = 225 + (int)(30 * a);
		g = 130 + (int)(60 * b);
		bl = (int)(40 * c);
		break;
	case PFC_SVG_JIT:               /* green */
		r = 50 + (int)(70 * a);
		g = 170 + (int)(55 * a);
		bl = 50 + (int)(60 * b);
		break;
	case PFC_SVG_PROCESS:           /* grey blue: the process and the whole */
		r = 160 + (int)(40 * a);
		g = r + 10;
		bl = 205 + (int)(40 * b);
		break;
	default:                        /* native user code: red */
		r = 200 + (int)(55 * a);
		g = 50 + (int)(80 * b);
		bl = g;
		break;
	}
	put_rgb(buf, size, r, g, bl);
}

/* The page's script: it finds the frames in document order (the tree in preorder, so a
 * frame's subtree is the run of frames after it that are deeper), and does the hover
 * details, zoom and search.  It must not contain the CDATA end marker. */
static const char script[] =
"\"use strict\";\n"
"var boxes = [], details, matchedtxt, unzoombtn, searchbtn, icbtn;\n"
"var zoomed = 0, searchterm = null, ignorecase = false;\n"
"\n"
"function init(evt) {\n"
"\tdetails = document.getElementById(\"details\").firstChild;\n"
"\tmatchedtxt = document.getElementById(\"matched\");\n"
"\tunzoombtn = document.getElementById(\"unzoom\");\n"
"\tsearchbtn = document.getElementById(\"search\");\n"
"\ticbtn = document.getElementById(\"ignorecase\");\n"
"\tvar gs = document.getElementById(\"frames\").children, open = [], i;\n"
"\tfor (i = 0; i < gs.length; i++) {\n"
"\t\tvar g = gs[i], rect = g.getElementsByTagName(\"rect\")[0];\n"
"\t\tvar title = g.getElementsByTagName(\"title\")[0].textContent;\n"
"\t\tvar m = /^([\\s\\S]*) \\(([\\d,]+) [^,]*, [\\d.]+%(?:; [-+]?[\\d.]+%)?\\)$/.exec(title);\n"
"\t\tvar y = parseFloat(rect.getAttribute(\"y\"));\n"
"\t\tvar depth = fg.inverted ? Math.round((y - fg.ypad1) / fg.frameheight) :\n"
"\t\t\tMath.round((fg.height - fg.ypad2 - y + fg.framepad) / fg.frameheight) - 1;\n"
"\t\twhile (open.length && boxes[open[open.length - 1]].depth >= depth)\n"
"\t\t\tboxes[open.pop()].end = i;\n"
"\t\tboxes.push({ g: g, rect: rect, text: g.getElementsByTagName(\"text\")[0], title: title,\n"
"\t\t\tname: m ? m[1] : title, samples: m ? parseFloat(m[2].replace(/,/g, \"\")) : 0,\n"
"\t\t\tx: parseFloat(rect.getAttribute(\"x\")), w: parseFloat(rect.getAttribute(\"width\")),\n"
"\t\t\tdepth: depth, end: gs.length, fill: rect.getAttribute(\"fill\") });\n"
"\t\tg.fgIndex = i;\n"
"\t\topen.push(i);\n"
"\t}\n"
"\tvar box = document.getElementById(\"frames\");\n"
"\tbox.addEventListener(\"mouseover\", function (e) {\n"
"\t\tvar f = frameOf(e.target);\n"
"\t\tif (f >= 0) details.nodeValue = fg.nametype + \" \" + boxes[f].title;\n"
"\t});\n"
"\tbox.addEventListener(\"mouseout\", function (e) { details.nodeValue = \" \"; });\n"
"\tbox.addEventListener(\"click\", function (e) {\n"
"\t\tvar f = frameOf(e.target);\n"
"\t\tif (f >= 0) zoom(f);\n"
"\t});\n"
"\tunzoombtn.addEventListener(\"click\", function (e) { unzoom(); });\n"
"\tsearchbtn.addEventListener(\"click\", function (e) {\n"
"\t\tif (searchterm === null) askSearch(); else resetSearch();\n"
"\t});\n"
"\ticbtn.addEventListener(\"click\", function (e) {\n"
"\t\tignorecase = !ignorecase;\n"
"\t\ticbtn.classList.toggle(\"show\", ignorecase);\n"
"\t\tif (searchterm !== null) search(searchterm);\n"
"\t});\n"
"\twindow.addEventListener(\"keydown\", function (e) {\n"
"\t\tif (e.key === \"F3\" || ((e.ctrlKey || e.metaKey) && (e.key === \"f\" || e.key === \"F\"))) {\n"
"\t\t\te.preventDefault();\n"
"\t\t\taskSearch();\n"
"\t\t} else if (e.key === \"Escape\") {\n"
"\t\t\tunzoom();\n"
"\t\t\tresetSearch();\n"
"\t\t}\n"
"\t});\n"
"\tvar params = new URLSearchParams(document.location.search);\n"
"\tif (params.get(\"s\")) search(params.get(\"s\"));\n"
"}\n"
"\n"
"function frameOf(node) {\n"
"\twhile (node && node.parentNode && node.parentNode.id !== \"frames\")\n"
"\t\tnode = node.parentNode;\n"
"\treturn node && node.fgIndex !== undefined ? node.fgIndex : -1;\n"
"}\n"
"\n"
"/* a .NET name \"Asm!Ns.Type::Method(args)\": [type start, method start] (svg.c's pfc_svg_dotnet_parts) */\n"
"function dotnetParts(s) {\n"
"\tvar bang = s.indexOf(\"!\"), depth = 0, dot = 0, i, c;\n"
"\tif (bang <= 0 || /[:(<\\[ \\t]/.test(s.slice(0, bang))) return null;\n"
"\tfor (i = bang + 1; i + 1 < s.length; i++) {\n"
"\t\tc = s[i];\n"
"\t\tif (c === \"[\" || c === \"<\" || c === \"(\") depth++;\n"
"\t\telse if ((c === \"]\" || c === \">\" || c === \")\") && depth > 0) depth--;\n"
"\t\telse if (depth === 0 && c === \".\") dot = i;\n"
"\t\telse if (depth === 0 && c === \":\" && s[i + 1] === \":\")\n"
"\t\t\treturn i + 2 < s.length ? [dot ? dot + 1 : bang + 1, i + 2] : null;\n"
"\t}\n"
"\treturn null;\n"
"}\n"
"\n"
"/* flamegraph.pl's rule: about 0.59 em a character, \"..\" when the name does not fit; a .NET\n"
" * name that does not fit starts at its type, or at its method */\n"
"function label(name, w) {\n"
"\tvar chars = Math.floor(w / (fg.fontsize * fg.fontwidth)), cps = Array.from(name), p;\n"
"\tif (chars < 3) return \"\";\n"
"\tif (cps.length <= chars) return name;\n"
"\tif ((p = dotnetParts(name))) {\n"
"\t\tif (Array.from(name.slice(p[0])).length <= chars) return name.slice(p[0]);\n"
"\t\tcps = Array.from(name.slice(p[1]));\n"
"\t\tif (cps.length <= chars) return name.slice(p[1]);\n"
"\t}\n"
"\treturn cps.slice(0, chars - 2).join(\"\") + \"..\";\n"
"}\n"
"\n"
"function place(f, x, w) {\n"
"\tf.rect.setAttribute(\"x\", x.toFixed(1));\n"
"\tf.rect.setAttribute(\"width\", w.toFixed(1));\n"
"\tf.text.setAttribute(\"x\", (x + 3).toFixed(2));\n"
"\tf.text.textContent = label(f.name, w);\n"
"}\n"
"\n"
"/* Frame z fills the width; its ancestors span it, dimmed; everything else is hidden. */\n"
"function zoom(z) {\n"
"\tif (z === 0) { unzoom(); return; }\n"
"\tvar zf = boxes[z], full = fg.width - 2 * fg.xpad, scale = full / zf.w;\n"
"\tfor (var i = 0; i < boxes.length; i++) {\n"
"\t\tvar f = boxes[i], cl = f.g.classList;\n"
"\t\tcl.remove(\"hide\", \"parent\");\n"
"\t\tif (i >= z && i < zf.end) {\n"
"\t\t\tplace(f, fg.xpad + (f.x - zf.x) * scale, f.w * scale);\n"
"\t\t} else if (i < z && z < f.end) {\n"
"\t\t\tcl.add(\"parent\");\n"
"\t\t\tplace(f, fg.xpad, full);\n"
"\t\t} else {\n"
"\t\t\tcl.add(\"hide\");\n"
"\t\t}\n"
"\t}\n"
"\tzoomed = z;\n"
"\tunzoombtn.classList.remove(\"hide\");\n"
"}\n"
"\n"
"function unzoom() {\n"
"\tfor (var i = 0; i < boxes.length; i++) {\n"
"\t\tboxes[i].g.classList.remove(\"hide\", \"parent\");\n"
"\t\tplace(boxes[i], boxes[i].x, boxes[i].w);\n"
"\t}\n"
"\tzoomed = 0;\n"
"\tunzoombtn.classList.add(\"hide\");\n"
"}\n"
"\n"
"function askSearch() {\n"
"\tvar term = prompt(\"Search for frames (a regular expression, e.g. ^ext4_)\" +\n"
"\t\t(ignorecase ? \", ignoring case\" : \"\"), searchterm === null ? \"\" : searchterm);\n"
"\tif (term !== null) search(term);\n"
"}\n"
"\n"
"function resetSearch() {\n"
"\tfor (var i = 0; i < boxes.length; i++)\n"
"\t\tboxes[i].rect.setAttribute(\"fill\", boxes[i].fill);\n"
"\tsearchterm = null;\n"
"\tsearchbtn.classList.remove(\"show\");\n"
"\tsearchbtn.firstChild.nodeValue = \"Search\";\n"
"\tmatchedtxt.classList.add(\"hide\");\n"
"}\n"
"\n"
"/* Highlights the frames whose name matches; the matched share counts each stack once:\n"
" * a match inside the subtree of a counted match is already in it. */\n"
"function search(term) {\n"
"\tvar re;\n"
"\tif (term === \"\") { resetSearch(); return; }\n"
"\ttry {\n"
"\t\tre = new RegExp(term, ignorecase ? \"i\" : \"\");\n"
"\t} catch (err) {\n"
"\t\tmatchedtxt.classList.remove(\"hide\");\n"
"\t\tmatchedtxt.firstChild.nodeValue = \"Bad expression\";\n"
"\t\treturn;\n"
"\t}\n"
"\tvar count = 0, covered = 0;\n"
"\tfor (var i = 0; i < boxes.length; i++) {\n"
"\t\tvar f = boxes[i];\n"
"\t\tif (re.test(f.name)) {\n"
"\t\t\tf.rect.setAttribute(\"fill\", fg.searchcolor);\n"
"\t\t\tif (i >= covered) {\n"
"\t\t\t\tcount += f.samples;\n"
"\t\t\t\tcovered = f.end;\n"
"\t\t\t}\n"
"\t\t} else {\n"
"\t\t\tf.rect.setAttribute(\"fill\", f.fill);\n"
"\t\t}\n"
"\t}\n"
"\tsearchterm = term;\n"
"\tsearchbtn.classList.add(\"show\");\n"
"\tsearchbtn.firstChild.nodeValue = \"Reset Search\";\n"
"\tvar pct = fg.total > 0 ? 100 * count / fg.total : 0;\n"
"\tmatchedtxt.classList.remove(\"hide\");\n"
"\tmatchedtxt.firstChild.nodeValue = \"Matched: \" + (pct === 100 ? \"100\" : pct.toFixed(1)) + \"%\";\n"
"}\n";

struct layout {
	const struct tree *t;
	double width, height, per;      /* pixels per weight unit */
	double min_value;               /* frames lighter than this are left out */
	int inverted;
	uint32_t maxdepth;
	const char *countname;          /* flamegraph.pl's --countname: samples, or ns for time profiles */
};

static int kept(const struct layout *L, uint32_t i)
{
	return i == 0 || (double)L->t->v[i].value >= L->min_value;
}

/* The deepest frame drawn: it sets the image height. */
static uint32_t max_depth(const struct layout *L)
{
	uint32_t i, d = 0;

	for (i = 0; i < L->t->n; i++) {
		const struct node *nd = &L->t->v[i];
		/* a frame is drawn when it and all its ancestors are wide enough; ancestors are
		 * never lighter than their children, so its own weight decides */
		if (kept(L, i) && nd->depth > d)
			d = nd->depth;
	}
	return d;
}

/* x as "%.1f" prints it: the integer over 10 is the double nearest that decimal, as strtod
 * reads it (both are correctly rounded) */
static double round1(double x)
{
	char b[FIXED_MAX + 8];
	uint64_t r;

	if (fixed_fast(fabs(x), 1, &r))
		return signbit(x) ? -((double)r / 10.0) : (double)r / 10.0;
	snprintf(b, sizeof(b), "%.1f", x);
	return strtod(b, NULL);
}

static void put_frame(FILE *out, const struct layout *L, uint32_t i, uint64_t start)
{
	const struct tree *t = L->t;
	const struct node *nd = &t->v[i];
	const char *name = i ? pfc_intern_str(&t->names, nd->name) : "all";
	size_t n = i ? pfc_intern_len(&t->names, nd->name) : 3;
	double x1 = XPAD + (double)start * L->per, x2 = XPAD + (double)(start + nd->value) * L->per, y1, y2;
	uint64_t total = t->v[0].value;
	char color[32], b[6 * FIXED_MAX + 160], *d;

	if (L->inverted) {
		y1 = YPAD1 + (double)nd->depth * FRAME_H;
		y2 = YPAD1 + (double)(nd->depth + 1) * FRAME_H - FRAME_PAD;
	} else {
		y1 = L->height - YPAD2 - (double)(nd->depth + 1) * FRAME_H + FRAME_PAD;
		y2 = L->height - YPAD2 - (double)nd->depth * FRAME_H;
	}
	if (t->diff && nd->has_delta)
		diff_color(t, nd->delta, color, sizeof(color));
	else
		pfc_svg_color(i ? nd->kind : PFC_SVG_PROCESS, name, n, color, sizeof(color));
	fputs("<g><title>", out);
	pfc_svg_put_xml(out, name, n, SIZE_MAX);
	fputs(" (", out);
	put_count(out, nd->value);
	fputc(' ', out);
	fputs(L->countname, out);
	if (i && t->diff && nd->has_delta) {
		/* flamegraph.pl: the change as a share of the new total, signed */
		int64_t dv = t->negate ? -nd->delta : nd->delta;
		d = b;
		d = put_lit(d, ", ");
		d = put_fixed(d, total ? 100.0 * (double)nd->value / (double)total : 0.0, 2);
		d = put_lit(d, "%; ");
		if (dv > 0)
			*d++ = '+';
		d = put_fixed(d, total ? 100.0 * (double)dv / (double)total : 0.0, 2);
		d = put_lit(d, "%)</title>");
		fwrite(b, 1, (size_t)(d - b), out);
	} else if (i) {
		d = b;
		d = put_lit(d, ", ");
		d = put_fixed(d, total ? 100.0 * (double)nd->value / (double)total : 0.0, 2);
		d = put_lit(d, "%)</title>");
		fwrite(b, 1, (size_t)(d - b), out);
	} else {
		fputs(", 100%)</title>", out);
	}
	/* the width is taken between the printed ends, as flamegraph.pl does */
	d = b;
	d = put_lit(d, "<rect x=\"");
	d = put_fixed(d, x1, 1);
	d = put_lit(d, "\" y=\"");
	d = put_fixed(d, y1, 0);
	d = put_lit(d, "\" width=\"");
	d = put_fixed(d, round1(x2) - round1(x1), 1);
	d = put_lit(d, "\" height=\"");
	d = put_fixed(d, y2 - y1, 0);
	d = put_lit(d, "\" fill=\"");
	memcpy(d, color, strlen(color));
	d += strlen(color);
	d = put_lit(d, "\" rx=\"2\" ry=\"2\"/><text x=\"");
	d = put_fixed(d, x1 + 3, 2);
	d = put_lit(d, "\" y=\"");
	d = put_fixed(d, 3 + (y1 + y2) / 2, 1);
	d = put_lit(d, "\">");
	fwrite(b, 1, (size_t)(d - b), out);
	pfc_svg_put_label(out, name, n, x2 - x1);
	fputs("</text></g>\n", out);
}

/* The frames in preorder, children left to right in name order. */
static int put_frames(FILE *out, const struct layout *L)
{
	const struct tree *t = L->t;
	uint32_t *stack, sp = 0;
	uint64_t *start;
	int ret = 0;

	stack = malloc((t->n + 1) * sizeof(*stack));
	start = malloc((t->n + 1) * sizeof(*start));
	if (!stack || !start) {
		ret = -1;
		goto out;
	}
	stack[sp] = 0;
	start[sp++] = 0;
	while (sp) {
		uint32_t i = stack[--sp], c, nc = 0, k, e;
		uint64_t x = start[sp];

		put_frame(out, L, i, x);
		/* push the kept children right to left, so the leftmost comes out first; they
		 * start after the frame's own weight, whose folded line "a;b N" sorts before
		 * the lines "a;b;c N" of its children */
		x += t->v[i].value;
		for (c = t->v[i].child; c != NONE; c = t->v[c].sibling) {
			x -= t->v[c].value;
			nc++;
		}
		k = sp + nc;
		for (c = t->v[i].child; c != NONE; c = t->v[c].sibling) {
			stack[--k] = c;
			start[k] = x;
			x += t->v[c].value;
		}
		/* drop the children too narrow to draw, keeping their places */
		for (k = sp, e = sp + nc; k < e; k++)
			if (kept(L, stack[k]))
				stack[sp] = stack[k], start[sp] = start[k], sp++;
	}
out:
	free(stack);
	free(start);
	return ret;
}

static void put_js_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static int svg_write(FILE *out, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err)
{
	struct tree t;
	struct layout L;
	const char *title = o->title ? o->title : o->inverted ? "Icicle Graph" : "Flame Graph";
	int width = o->width > 0 ? o->width : PFC_SVG_DEFAULT_WIDTH, ret;
	double minwidth = o->minwidth_set ? o->minwidth : 0.1;
	uint64_t total;

	memset(&t, 0, sizeof(t));
	memset(&L, 0, sizeof(L));
	t.s = s;
	t.err = err;
	t.kind_cache = calloc(s->stacks.nr_frames + 1, sizeof(*t.kind_cache));
	t.name_cache = calloc(s->stacks.nr_frames + 1, sizeof(*t.name_cache));	/* NULL: no memo */
	if (!t.kind_cache || pfc_intern_init(&t.names) < 0 || tree_grow(&t) < 0) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "flame graph");
		goto out;
	}
	memset(&t.v[0], 0, sizeof(t.v[0]));
	t.v[0].parent = t.v[0].child = t.v[0].sibling = NONE;
	t.v[0].kind = PFC_SVG_PROCESS;
	t.n = 1;
	ret = o->diff_base ? tree_diff(&t, s, o) : pfc_folded_walk(s, o, tree_stack, &t, err);
	if (ret < 0)
		goto out;
	if (o->diff_base && !o->title)
		title = o->inverted ? "Differential Icicle Graph" : "Differential Flame Graph";
	if (tree_sort(&t) < 0) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "flame graph");
		goto out;
	}
	total = t.v[0].value;
	L.t = &t;
	L.width = width;
	L.countname = s->offcpu ? "ns" : "samples";
	/* a time profile says so, as Brendan Gregg's off-CPU flame graphs do */
	if (!o->title && s->offcpu && !o->diff_base)
		title = pfc_offcpu_thread_time(s->offcpu) ? o->inverted ? "Thread Time Icicle Graph" : "Thread Time Flame Graph"
			: o->inverted ? "Off-CPU Time Icicle Graph" : "Off-CPU Time Flame Graph";
	L.inverted = o->inverted;
	L.per = total ? (width - 2.0 * XPAD) / (double)total : 0;
	/* --minwidth is in pixels, or a percentage of the whole with a '%' */
	L.min_value = o->minwidth_pct ? (double)total * minwidth / 100.0 : L.per > 0 ? minwidth / L.per : 0;
	L.maxdepth = total ? max_depth(&L) : 0;
	L.height = (double)(L.maxdepth + 1) * FRAME_H + YPAD1 + YPAD2;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%.0f\" onload=\"init(evt)\" viewBox=\"0 0 %d %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", width, L.height, width, L.height);
	fputs("<!-- Flame graph written by perfconv. Hover over a frame for details, click to zoom, "
	      "Ctrl-F or Search to highlight frames by regular expression. -->\n", out);
	fputs("<defs>\n<linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
	      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%\"/>"
	      "</linearGradient>\n</defs>\n", out);
	fprintf(out, "<style type=\"text/css\">\n"
		"\ttext { font-family: Verdana, sans-serif; font-size: %dpx; fill: rgb(0,0,0); }\n"
		"\t#title { text-anchor: middle; font-size: %dpx; }\n"
		"\t#search, #ignorecase { opacity: 0.1; cursor: pointer; }\n"
		"\t#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity: 1; }\n"
		"\t#unzoom { cursor: pointer; }\n"
		"\t#frames > *:hover { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
		"\t.hide { display: none; }\n"
		"\t.parent { opacity: 0.5; }\n"
		"</style>\n", FONT_SIZE, FONT_SIZE + 5);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n"
		"var fg = { width: %d, height: %.0f, xpad: %d, ypad1: %d, ypad2: %d, frameheight: %d, framepad: %d,\n"
		"\tfontsize: %d, fontwidth: %.2f, inverted: %s, total: %llu, searchcolor: ",
		width, L.height, XPAD, YPAD1, YPAD2, FRAME_H, FRAME_PAD, FONT_SIZE, FONT_WIDTH,
		o->inverted ? "true" : "false", (unsigned long long)total);
	put_js_string(out, SEARCH_COLOR);
	fputs(", nametype: ", out);
	put_js_string(out, "Function:");
	fputs(" };\n", out);
	fputs(script, out);
	fputs("]]></script>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"url(#background)\"/>\n", width,
		L.height);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"%d\">", width / 2, FONT_SIZE * 2);
	pfc_svg_put_xml(out, title, strlen(title), SIZE_MAX);
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%.0f\"> </text>\n", XPAD, L.height - YPAD2 / 2.0);
	fprintf(out, "<text id=\"unzoom\" x=\"%d\" y=\"%d\" class=\"hide\">Reset Zoom</text>\n", XPAD, FONT_SIZE * 2);
	fprintf(out, "<text id=\"search\" x=\"%d\" y=\"%d\">Search</text>\n", width - XPAD - 100, FONT_SIZE * 2);
	fprintf(out, "<text id=\"ignorecase\" x=\"%d\" y=\"%d\">ic</text>\n", width - XPAD - 16, FONT_SIZE * 2);
	fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"%.0f\" class=\"hide\"> </text>\n", width - XPAD - 100,
		L.height - YPAD2 / 2.0);
	fputs("<g id=\"frames\">\n", out);
	if (total && put_frames(out, &L) < 0) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "flame graph");
		goto out;
	}
	fputs("</g>\n", out);
	if (!total)
		fprintf(out, "<text x=\"%d\" y=\"%.0f\" text-anchor=\"middle\">No samples</text>\n", width / 2,
			L.height / 2 + FONT_SIZE);
	fputs("</svg>\n", out);
out:
	free(t.v);
	free(t.heads);
	free(t.kind_cache);
	free(t.name_cache);
	free(t.path_text);
	free(t.path_node);
	pfc_intern_exit(&t.names);
	return ret;
}

static const char *const svg_suffixes[] = { ".svg", NULL };

const struct pfc_writer pfc_writer_svg = {
	.name = "svg",
	.suffixes = svg_suffixes,
	.needs = PFC_NEED_STACKS | PFC_DIFF,
	.write = svg_write,
};
