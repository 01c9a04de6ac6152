/*
 * demangle.c - owns symbol-name demangling exactly as perf 6.1 does it for ELF symbols:
 * libiberty's cplus_demangle (C++ and Rust), then perf's own OCaml and Java rules, and
 * perf's legacy-Rust clean-up of what libiberty returns.  Which names are passed here
 * (ELF and PLT names, not kallsyms or perf maps) is the caller's business.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "converter/native/symtab.h"

/*
 * Options for cplus_demangle.  perf 6.1 passes DMGL_PARAMS|DMGL_ANSI only with -v and
 * DMGL_NO_OPTS otherwise.  Checked with the installed perf 6.1 (Debian, libiberty linked
 * in, no libbfd): a g++ -O1 -fno-omit-frame-pointer program recorded with `perf record -g`
 * shows `work` for _Z4workRSt6vectorIiSaIiEEPKc and `ns::Box<long>::spin` for
 * _ZN2ns3BoxIlE4spinEiRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE: no
 * parameter lists.  Renaming symbols of a fixture binary (objcopy --redefine-sym) and
 * running perf script showed: legacy Rust _ZN4core3fmt9Formatter3pad17h0123456789abcdefE
 * -> core::fmt::Formatter::pad (libiberty's auto style drops the hash), Rust v0
 * _RNvCs1234_7mycrate3foo -> mycrate::foo, camlFoo__bar_123$3e -> Foo.bar_123>,
 * Lcom/foo/Bar;baz(I[Ljava/lang/String;)V -> com.foo.Bar.baz(int, java.lang.String),
 * and D's _D3foo3barFZv stays as it is (auto style does not include D).
 */
#define PFC_DEMANGLE_OPTS DMGL_NO_OPTS

/* ---- perf's clean-up of legacy Rust names that still end in ::h<16 hex digits> ---- */

#define RUST_HASH_PREFIX "::h"
#define RUST_HASH_LEN 16

/* "::h" then 16 lowercase hex digits, of which at least 5 distinct */
static bool rust_hash_suffix(const char *s)
{
	unsigned seen = 0;
	int i, distinct = 0;

	if (strncmp(s, RUST_HASH_PREFIX, 3) != 0)
		return false;
	s += 3;
	for (i = 0; i < RUST_HASH_LEN; i++) {
		int c = (unsigned char)s[i];

		if (c >= '0' && c <= '9')
			seen |= 1u << (c - '0');
		else if (c >= 'a' && c <= 'f')
			seen |= 1u << (c - 'a' + 10);
		else
			return false;
	}
	for (i = 0; i < 16; i++)
		distinct += (seen >> i) & 1;
	return distinct >= 5;
}

struct rust_escape {
	const char *seq;
	char ch;
};

static const struct rust_escape rust_escapes[] = {
	{ "$C$", ',' }, { "$SP$", '@' }, { "$BP$", '*' }, { "$RF$", '&' },
	{ "$LT$", '<' }, { "$GT$", '>' }, { "$LP$", '(' }, { "$RP$", ')' },
	{ "$u20$", ' ' }, { "$u27$", '\'' }, { "$u5b$", '[' }, { "$u5d$", ']' },
	{ "$u7b$", '{' }, { "$u7d$", '}' }, { "$u7e$", '~' },
};

/* The escape starting at s (limited to n bytes), or NULL. */
static const struct rust_escape *rust_escape_at(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(rust_escapes) / sizeof(rust_escapes[0]); i++) {
		size_t l = strlen(rust_escapes[i].seq);

		if (l <= n && memcmp(s, rust_escapes[i].seq, l) == 0)
			return &rust_escapes[i];
	}
	return NULL;
}

static bool rust_plain_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == ':';
}

/* perf's rust_is_mangled applied to an already demangled name */
static bool rust_legacy_leftover(const char *s)
{
	size_t len = strlen(s), body, i;

	if (len <= 3 + RUST_HASH_LEN)
		return false;
	body = len - (3 + RUST_HASH_LEN);
	if (!rust_hash_suffix(s + body))
		return false;
	for (i = 0; i < body;) {
		const struct rust_escape *e;

		if (s[i] == '$') {
			e = rust_escape_at(s + i, body - i);
			if (!e)
				return false;
			i += strlen(e->seq);
		} else if (s[i] == '.') {
			if (i + 2 < len && s[i + 1] == '.' && s[i + 2] == '.')
				return false;
			i++;
		} else if (rust_plain_char((unsigned char)s[i])) {
			i++;
		} else {
			return false;
		}
	}
	return true;
}

/* perf's rust_demangle_sym: unescape in place and cut the hash; stops at anything odd. */
static void rust_unescape_in_place(char *sym)
{
	char *out = sym;
	const char *in = sym, *end = sym + strlen(sym) - (3 + RUST_HASH_LEN);

	while (in < end) {
		const struct rust_escape *e;

		switch (*in) {
		case '$':
			e = rust_escape_at(in, strlen(in));
			if (!e)
				goto done;
			*out++ = e->ch;
			in += strlen(e->seq);
			break;
		case '_':
			/* the mangler prefixes '_' to a path component that starts with an escape */
			if ((in == sym || in[-1] == ':') && in[1] == '$')
				in++;
			else
				*out++ = *in++;
			break;
		case '.':
			if (in[1] == '.') {
				*out++ = ':';
				*out++ = ':';
				in += 2;
			} else {
				*out++ = '-';
				in++;
			}
			break;
		default:
			if (!rust_plain_char((unsigned char)*in))
				goto done;
			*out++ = *in++;
			break;
		}
	}
done:
	*out = '\0';
}

/* ---- OCaml: "caml" and a capital (the module), "__" is a module dot, "$xx" a hex-coded
 * byte.  Checked: perf leaves "caml" and "caml$zz__" alone. ---- */

static int hexval(int c)
{
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return c - '0';
}

static char *ocaml_demangle(const char *sym)
{
	size_t len, i, j = 0;
	char *res;

	if (strncmp(sym, "caml", 4) != 0 || !isupper((unsigned char)sym[4]))
		return NULL;
	len = strlen(sym);
	res = malloc(len + 1);
	if (!res)
		return NULL;
	for (i = 4; i < len;) {
		if (sym[i] == '_' && sym[i + 1] == '_') {
			res[j++] = '.';
			i += 2;
		} else if (sym[i] == '$' && isxdigit((unsigned char)sym[i + 1]) &&
			   isxdigit((unsigned char)sym[i + 2])) {
			res[j++] = (char)(hexval((unsigned char)sym[i + 1]) << 4 |
					  hexval((unsigned char)sym[i + 2]));
			i += 3;
		} else {
			res[j++] = sym[i++];
		}
	}
	res[j] = '\0';
	return res;
}

/*
 * ---- Java (perf's JIT naming "Lpkg/Class;method(args)ret") ----
 * perf demangles everything up to the last ')' and leaves out the return type.  States:
 * the prefix before the class, the class name, the method name, the argument list and a
 * class-typed argument.  Array markers are only printed after primitive types, and a
 * marker before a class type stays pending until the next primitive one: that is what
 * perf prints, so it is what we print.
 */
enum jstate { J_PREFIX, J_CLASS, J_FUNC, J_TYPE, J_CTYPE };

struct jbuf {
	char *p;
	size_t len, cap;	/* cap includes room for the final NUL */
};

static void jput(struct jbuf *b, const char *s)
{
	while (*s && b->len + 1 < b->cap)
		b->p[b->len++] = *s++;
}

static const char *java_prim(int c)
{
	switch (c) {
	case 'B': return "byte";
	case 'C': return "char";
	case 'D': return "double";
	case 'F': return "float";
	case 'I': return "int";
	case 'J': return "long";
	case 'S': return "short";
	case 'Z': return "boolean";
	}
	return NULL;
}

static char *java_demangle(const char *str)
{
	const char *close = strrchr(str, ')'), *q;
	enum jstate st = J_PREFIX;
	struct jbuf b;
	int arrays = 0, nargs = 0;
	char one[2] = { 0, 0 };

	if (!close)
		return NULL;
	b.cap = strlen(str) * 3 + 1;
	b.len = 0;
	b.p = malloc(b.cap);
	if (!b.p)
		return NULL;
	for (q = str; q <= close; q++) {
		const char *prim = java_prim((unsigned char)*q);

		if (b.len + 1 == b.cap)
			break;	/* output full: perf truncates */
		one[0] = *q;
		if (*q == 'L' && (st == J_PREFIX || st == J_TYPE)) {
			if (st == J_TYPE) {
				if (nargs)
					jput(&b, ", ");
				nargs++;
				st = J_CTYPE;
			} else {
				st = J_CLASS;
			}
		} else if ((prim || *q == 'V') && st == J_TYPE) {
			if (prim && nargs)
				jput(&b, ", ");
			jput(&b, prim ? prim : "void");
			for (; arrays > 0; arrays--)
				jput(&b, "[]");
			arrays = 0;
			if (prim)
				nargs++;
		} else if (*q == '[') {
			if (st != J_TYPE)
				goto fail;
			arrays++;
		} else if (*q == '(') {
			if (st != J_FUNC)
				goto fail;
			jput(&b, one);
			st = J_TYPE;
		} else if (*q == ')') {
			if (st != J_TYPE)
				goto fail;
			jput(&b, one);
			nargs = 0;
		} else if (*q == ';') {
			if (st != J_CLASS && st != J_CTYPE)
				goto fail;
			if (st == J_CLASS && isalpha((unsigned char)q[1]))
				jput(&b, ".");
			st = st == J_CLASS ? J_FUNC : J_TYPE;
		} else if (*q == '/') {
			if (st != J_CLASS && st != J_CTYPE)
				goto fail;
			jput(&b, ".");
		} else {
			jput(&b, one);
		}
	}
	b.p[b.len] = '\0';
	return b.p;
fail:
	free(b.p);
	return NULL;
}

char *pfc_demangle(const char *name)
{
	char *d;

	if (!name || !*name)
		return NULL;
	d = cplus_demangle(name, PFC_DEMANGLE_OPTS);
	if (d) {
		/* perf cleans up legacy Rust names libiberty left with their hash */
		if (rust_legacy_leftover(d))
			rust_unescape_in_place(d);
		return d;
	}
	d = ocaml_demangle(name);
	if (d)
		return d;
	return java_demangle(name);
}
