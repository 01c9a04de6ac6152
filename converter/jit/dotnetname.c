/*
 * dotnetname.c - .NET method names from perf maps and jitdumps, shortened or without
 * their tier tags.  The name grammar is CoreCLR's MethodDesc::GetFullMethodInfo; the
 * traps are that parameter types carry their own "[Assembly]" prefixes (with no space),
 * that "[]" can be an array rank and "[T1,T2]" an instantiation, so only the bracketed
 * token right before the declaring type names the owning assembly.
 */
#include <stdint.h>
#include <string.h>
#include "converter/jit/dotnetname.h"

static int tag_char(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* "[Word]" with a capital first letter and only letters, digits, '-' and '_' inside:
 * [OptimizedTier1], [QuickJitted], [PreJIT], [PreJit-cold], [OptimizedTier1OSR], ... */
static int is_tag(const char *s, size_t n)
{
	size_t i;

	if (n < 3 || s[0] != '[' || s[n - 1] != ']' || !(s[1] >= 'A' && s[1] <= 'Z'))
		return 0;
	for (i = 1; i < n - 1; i++)
		if (!tag_char((unsigned char)s[i]))
			return 0;
	return 1;
}

size_t pfc_dotnet_leading_tier(const char *s, size_t n)
{
	const char *e = memchr(s, ']', n);

	if (!e || (size_t)(e - s) + 1 >= n || e[1] != ' ' || !is_tag(s, (size_t)(e - s) + 1))
		return 0;
	return (size_t)(e - s) + 2;
}

size_t pfc_dotnet_trailing_tier(const char *s, size_t n)
{
	size_t i;

	if (n < 4 || s[n - 1] != ']')
		return 0;
	/* back to the '[' over tag characters; at s[0] at most (a name of tag characters and a
	 * ']' with no '[' once read the byte before s) */
	i = n - 1;
	while (i > 0) {
		i--;
		if (s[i] == '[')
			break;
		if (!tag_char((unsigned char)s[i]))
			return 0;
	}
	if (s[i] != '[' || !is_tag(s + i, n - i) || i == 0 || s[i - 1] != ')')
		return 0;	/* a tier follows the parameter list */
	return n - i;
}

struct out {
	char *p;
	size_t len, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len + n >= o->cap)
		n = o->cap - 1 - o->len;
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

/* Parameters with "class "/"valuetype " and "[Assembly]" type prefixes dropped.  The bytes
 * kept are copied a run at a time (a byte at a time was most of a .NET perf map's names),
 * and only a byte that can start a prefix ('c', 'v', '[') looks at the byte before it. */
static void put_params(struct out *o, const char *s, size_t n)
{
	size_t i = 0, run = 0;

	while (i < n) {
		char c = s[i], prev;
		size_t skip = 0;
		if (c != 'c' && c != 'v' && c != '[') {
			i++;
			continue;
		}
		prev = i ? s[i - 1] : '(';
		if (prev != '(' && prev != ',' && prev != '<' && prev != ' ') {
			i++;
			continue;
		}
		if (c == 'c' && n - i > 6 && !memcmp(s + i, "class ", 6)) {
			skip = 6;
		} else if (c == 'v' && n - i > 10 && !memcmp(s + i, "valuetype ", 10)) {
			skip = 10;
		} else if (c == '[') {
			const char *e = memchr(s + i, ']', n - i);
			if (e && (size_t)(e - s) + 1 < n && e[1] != ' ' && e[1] != ',' && e[1] != ')' && e[1] != '[' &&
			    !memchr(s + i + 1, ',', (size_t)(e - s - i - 1)) && e > s + i + 1)
				skip = (size_t)(e - s) + 1 - i;	/* an assembly prefix */
		}
		if (skip) {
			put(o, s + run, i - run);
			i += skip;
			run = i;
			continue;
		}
		i++;
	}
	put(o, s + run, i - run);
}

/* Where the first "::" in in[from, to) outside any parameter list starts, or SIZE_MAX.  A
 * "::" before the first '(' is outside one: memchr finds it, the byte loop only goes on after. */
static size_t method_sep(const char *in, size_t from, size_t to)
{
	const char *lp = to > from ? memchr(in + from, '(', to - from) : NULL;
	size_t limit = lp ? (size_t)(lp - in) : to, i, depth;
	const char *c = in + from;

	/* the usual case: "Type::Method(...)" */
	while (limit > (size_t)(c - in) && (c = memchr(c, ':', limit - (size_t)(c - in)))) {
		i = (size_t)(c - in);
		if (i + 1 < to && in[i + 1] == ':')
			return i;
		c++;
	}
	for (i = limit, depth = 0; i + 1 < to; i++) {
		if (in[i] == '(')
			depth++;
		else if (in[i] == ')' && depth)
			depth--;
		else if (!depth && in[i] == ':' && in[i + 1] == ':')
			return i;
	}
	return SIZE_MAX;
}

size_t pfc_dotnet_name(char *out, size_t cap, const char *in, size_t n, int names, int strip_tiers)
{
	struct out o = { out, 0, cap };
	size_t lead, trail, sep = 0, tstart, depth;
	const char *asm_s = NULL;
	size_t asm_n = 0;
	int found = 0;

	if (!cap)
		return 0;
	lead = pfc_dotnet_leading_tier(in, n);
	trail = pfc_dotnet_trailing_tier(in + lead, n - lead);
	if (names != PFC_DOTNET_NAMES_SHORT)
		goto verbatim;
	/* the "::" between the declaring type and the method, outside any parameter list */
	sep = method_sep(in, lead, n - trail);
	found = sep != SIZE_MAX;
	if (!found || sep == lead)
		goto verbatim;
	/* the declaring type starts after the last space outside brackets before it */
	for (tstart = sep, depth = 0; tstart > lead; tstart--) {
		char c = in[tstart - 1];
		if (c == ']' || c == '>')
			depth++;
		else if ((c == '[' || c == '<') && depth)
			depth--;
		else if (c == ' ' && !depth)
			break;
	}
	/* "[Assembly] " right before it */
	if (tstart >= lead + 3 && in[tstart - 1] == ' ' && in[tstart - 2] == ']') {
		size_t k = tstart - 2;
		while (k > lead && in[k - 1] != '[')
			k--;
		if (k > lead && (k - 1 == lead || in[k - 2] == ' ')) {
			asm_s = in + k;
			asm_n = tstart - 2 - k;
		}
	}
	if (lead && !strip_tiers)
		put(&o, in, lead);
	if (asm_s) {
		put(&o, asm_s, asm_n);
		put(&o, "!", 1);
	}
	put(&o, in + tstart, sep + 2 - tstart);
	{
		const char *m = in + sep + 2, *end = in + n - trail, *lp = memchr(m, '(', (size_t)(end - m));
		if (lp) {
			put(&o, m, (size_t)(lp - m));
			put_params(&o, lp, (size_t)(end - lp));
		} else {
			put(&o, m, (size_t)(end - m));
		}
	}
	if (trail && !strip_tiers)
		put(&o, in + n - trail, trail);
	out[o.len] = 0;
	return o.len;
verbatim:
	if (strip_tiers) {
		put(&o, in + lead, n - lead - trail);
	} else {
		put(&o, in, n);
	}
	out[o.len] = 0;
	return o.len;
}
