/*
 * tpformat.c - reads the fields and print-format constants of one tracefs event format
 * for the converter's own use (off-CPU analysis reads sched_switch's prev_pid, prev_state
 * and next_pid), and names tracepoint events from their formats' "name:" and "ID:".  The text
 * is untrusted: every read is bounded by its length, names are cut to their buffers, and the
 * expression evaluator has a depth limit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "converter/util/bytes.h"
#include "converter/perffile/tpformat.h"
#include "converter/perffile/reader.h"
#include "converter/perffile/tracedata.h"

/* ---- lines ---- */

struct line {
	const char *p;
	size_t n;
};

static int next_line(const char **p, const char *end, struct line *l)
{
	const char *nl;

	if (*p >= end)
		return 0;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	l->p = *p;
	l->n = (size_t)((nl ? nl : end) - *p);
	*p = nl ? nl + 1 : end;
	return 1;
}

static const char *find(const struct line *l, const char *what)
{
	size_t k = strlen(what), i;

	for (i = 0; i + k <= l->n; i++)
		if (!memcmp(l->p + i, what, k))
			return l->p + i;
	return NULL;
}

/* the decimal number after `key` in the line (-1: none) */
static int64_t line_num(const struct line *l, const char *key)
{
	const char *at = find(l, key), *end = l->p + l->n;
	int64_t v = 0;
	int digits = 0;

	if (!at)
		return -1;
	for (at += strlen(key); at < end && *at == ' '; at++)
		;
	for (; at < end && *at >= '0' && *at <= '9' && v < ((int64_t)1 << 40); at++, digits++)
		v = v * 10 + (*at - '0');
	return digits ? v : -1;
}

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static void copy_name(char *dst, size_t cap, const char *p, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, p, n);
	dst[n] = 0;
}

/* "\tfield:TYPE NAME[N];\toffset:O;\tsize:S;\tsigned:G;": the name is the last identifier
 * of the declaration, before an array suffix ("char prev_comm[16]", "__data_loc char[] x") */
static int parse_field(const struct line *l, struct pfc_tpfield *f)
{
	const char *d = find(l, "field:"), *semi, *e;
	int64_t off, size, sgn;

	if (!d)
		return 0;
	d += 6;
	semi = memchr(d, ';', (size_t)(l->p + l->n - d));
	if (!semi)
		return 0;
	e = semi;
	while (e > d && e[-1] == ' ')
		e--;
	if (e > d && e[-1] == ']') {
		while (e > d && *--e != '[')
			;
		while (e > d && e[-1] == ' ')
			e--;
	}
	{
		const char *b = e;
		while (b > d && is_ident(b[-1]))
			b--;
		if (b == e)
			return 0;
		copy_name(f->name, sizeof(f->name), b, (size_t)(e - b));
	}
	off = line_num(l, "offset:");
	size = line_num(l, "size:");
	sgn = line_num(l, "signed:");
	if (off < 0 || size < 0 || off > UINT32_MAX || size > UINT32_MAX)
		return 0;
	f->offset = (uint32_t)off;
	f->size = (uint32_t)size;
	f->is_signed = sgn > 0;
	return 1;
}

int pfc_tpformat_parse(const char *text, size_t len, struct pfc_tpformat *out)
{
	const char *p = text, *end = text + len;
	struct line l;
	size_t cap = 0;
	int have_name = 0, have_id = 0;

	memset(out, 0, sizeof(*out));
	while (next_line(&p, end, &l)) {
		struct pfc_tpfield f;
		if (l.n >= 5 && !memcmp(l.p, "name:", 5)) {
			const char *a = l.p + 5, *b = l.p + l.n;
			while (a < b && *a == ' ')
				a++;
			while (b > a && (b[-1] == ' ' || b[-1] == '\r'))
				b--;
			copy_name(out->name, sizeof(out->name), a, (size_t)(b - a));
			have_name = 1;
		} else if (l.n >= 3 && !memcmp(l.p, "ID:", 3)) {
			int64_t id = line_num(&l, "ID:");
			if (id >= 0) {
				out->id = (uint64_t)id;
				have_id = 1;
			}
		} else if (l.n >= 10 && !memcmp(l.p, "print fmt:", 10)) {
			/* the print format is the rest of the text (it is one line, but keep it all) */
			const char *a = l.p + 10;
			size_t n;
			while (a < end && *a == ' ')
				a++;
			n = (size_t)(end - a);
			free(out->print_fmt);
			out->print_fmt = malloc(n + 1);
			if (!out->print_fmt)
				goto oom;
			memcpy(out->print_fmt, a, n);
			out->print_fmt[n] = 0;
			out->print_len = strnlen(out->print_fmt, n);
			break;
		} else if (parse_field(&l, &f)) {
			if (out->nr_fields == cap) {
				size_t nc = cap ? cap * 2 : 16;
				struct pfc_tpfield *nf;
				if (nc > 4096)
					continue;	/* no real format has that many fields */
				nf = realloc(out->fields, nc * sizeof(*nf));
				if (!nf)
					goto oom;
				out->fields = nf;
				cap = nc;
			}
			out->fields[out->nr_fields++] = f;
		}
	}
	if (!have_name || !have_id) {
		pfc_tpformat_free(out);
		return -2;
	}
	return 0;
oom:
	pfc_tpformat_free(out);
	return -1;
}

void pfc_tpformat_free(struct pfc_tpformat *f)
{
	free(f->fields);
	free(f->print_fmt);
	memset(f, 0, sizeof(*f));
}

const struct pfc_tpfield *pfc_tpformat_field(const struct pfc_tpformat *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->nr_fields; i++)
		if (!strcmp(f->fields[i].name, name))
			return &f->fields[i];
	return NULL;
}

int pfc_tpfield_int(const struct pfc_tpfield *fl, const uint8_t *raw, uint32_t raw_len, int swap, uint64_t *out)
{
	const uint8_t *p;
	uint64_t v;

	if (fl->offset > raw_len || fl->size > raw_len - fl->offset)
		return -1;
	p = raw + fl->offset;
	switch (fl->size) {
	case 1:
		v = p[0];
		if (fl->is_signed)
			v = (uint64_t)(int64_t)(int8_t)v;
		break;
	case 2:
		v = pfc_ld16(p, swap);
		if (fl->is_signed)
			v = (uint64_t)(int64_t)(int16_t)v;
		break;
	case 4:
		v = pfc_ld32(p, swap);
		if (fl->is_signed)
			v = (uint64_t)(int64_t)(int32_t)v;
		break;
	case 8:
		v = pfc_ld64(p, swap);
		break;
	default:
		return -1;
	}
	*out = v;
	return 0;
}

/* ---- constant expressions ---- */

struct ev {
	const char *p, *end;
	int depth;
	int bad;
};

static void ev_space(struct ev *e)
{
	while (e->p < e->end && (*e->p == ' ' || *e->p == '\t' || *e->p == '\n'))
		e->p++;
}

static int ev_peek(struct ev *e, const char *op)
{
	size_t k = strlen(op);

	ev_space(e);
	return (size_t)(e->end - e->p) >= k && !memcmp(e->p, op, k);
}

static uint64_t ev_binary(struct ev *e, int level);

static uint64_t ev_unary(struct ev *e)
{
	uint64_t v = 0;

	if (e->bad || ++e->depth > 64) {
		e->bad = 1;
		return 0;
	}
	ev_space(e);
	if (e->p >= e->end) {
		e->bad = 1;
	} else if (*e->p == '(') {
		e->p++;
		v = ev_binary(e, 0);
		if (!ev_peek(e, ")"))
			e->bad = 1;
		else
			e->p++;
	} else if (*e->p == '~') {
		e->p++;
		v = ~ev_unary(e);
	} else if (*e->p == '-') {
		e->p++;
		v = -ev_unary(e);
	} else if (*e->p == '+') {
		e->p++;
		v = ev_unary(e);
	} else if (*e->p >= '0' && *e->p <= '9') {
		int base = 10, digits = 0;
		if (*e->p == '0' && e->end - e->p > 1 && (e->p[1] == 'x' || e->p[1] == 'X')) {
			base = 16;
			e->p += 2;
		} else if (*e->p == '0') {
			base = 8;
		}
		for (; e->p < e->end; e->p++, digits++) {
			char c = *e->p;
			int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
				c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;
			if (d >= base)
				break;
			v = v * (uint64_t)base + (uint64_t)d;
		}
		if (!digits)
			e->bad = 1;
		while (e->p < e->end && (*e->p == 'u' || *e->p == 'U' || *e->p == 'l' || *e->p == 'L'))
			e->p++;
		if (e->p < e->end && is_ident(*e->p))
			e->bad = 1;
	} else {
		e->bad = 1;	/* an identifier, a string, a cast: not a constant */
	}
	e->depth--;
	return v;
}

/* C's binary operators from the loosest: | ^ & (<< >>) (+ -) (* / %) */
static uint64_t ev_binary(struct ev *e, int level)
{
	static const char *const ops[6][3] = {
		{ "|", NULL }, { "^", NULL }, { "&", NULL }, { "<<", ">>", NULL }, { "+", "-", NULL },
		{ "*", "/", "%" },
	};
	uint64_t v;

	if (level == 6)
		return ev_unary(e);
	if (e->bad || ++e->depth > 64) {
		e->bad = 1;
		return 0;
	}
	v = ev_binary(e, level + 1);
	while (!e->bad) {
		const char *op = NULL;
		uint64_t r;
		size_t i;
		for (i = 0; i < 3 && ops[level][i]; i++)
			if (ev_peek(e, ops[level][i])) {
				op = ops[level][i];
				break;
			}
		/* "||" and "&&" are not constants of this grammar */
		if (!op || (level <= 2 && e->end - e->p > 1 && e->p[1] == op[0]))
			break;
		e->p += strlen(op);
		r = ev_binary(e, level + 1);
		switch (op[0]) {
		case '|': v |= r; break;
		case '^': v ^= r; break;
		case '&': v &= r; break;
		case '<': v = r >= 64 ? 0 : v << r; break;
		case '>': v = r >= 64 ? 0 : v >> r; break;
		case '+': v += r; break;
		case '-': v -= r; break;
		case '*': v *= r; break;
		case '/': if (!r) e->bad = 1; else v /= r; break;
		case '%': if (!r) e->bad = 1; else v %= r; break;
		}
	}
	e->depth--;
	return v;
}

int pfc_tpformat_eval(const char *s, size_t n, uint64_t *out, size_t *used)
{
	struct ev e = { .p = s, .end = s + n };
	uint64_t v = ev_binary(&e, 0);

	ev_space(&e);
	if (e.bad || e.p == s)
		return -1;
	if (e.p < e.end && *e.p != ',' && *e.p != '?' && *e.p != ':' && *e.p != ')')
		return -1;
	*out = v;
	if (used)
		*used = (size_t)(e.p - s);
	return 0;
}

/* ---- tracepoint events named from the tracing data ---- */

/* The value of the line "KEY: value" of an event format's text, bounded by it; NULL if none. */
static const char *format_line(const char *text, size_t len, const char *key, size_t *vlen)
{
	size_t klen = strlen(key), pos = 0;

	while (pos < len) {
		const char *eol = memchr(text + pos, '\n', len - pos);
		size_t n = eol ? (size_t)(eol - (text + pos)) : len - pos;
		if (n > klen && !memcmp(text + pos, key, klen)) {
			*vlen = n - klen;
			return text + pos + klen;
		}
		pos += n + 1;
	}
	return NULL;
}

/* One event format of the tracing data: its "name:" and "ID:" name the tracepoint
 * evsels of that id that no header named (perf's evsel__prepare_tracepoint_event). */
static int name_format(void *arg, const char *sys, const char *text, size_t len)
{
	struct pfc_reader *rd = arg;
	const char *name, *id;
	size_t nlen, idlen, i;
	char buf[128], num[24];
	unsigned long long config;

	if (!(name = format_line(text, len, "name: ", &nlen)) || !(id = format_line(text, len, "ID: ", &idlen)) ||
	    !idlen || idlen >= sizeof(num))
		return 0;
	memcpy(num, id, idlen);
	num[idlen] = 0;
	config = strtoull(num, NULL, 10);
	for (i = 0; i < rd->nr_evsels; i++) {
		struct pfc_evsel *ev = rd->evsels[i];
		if (ev->name || ev->attr.type != PERF_TYPE_TRACEPOINT || ev->attr.config != config)
			continue;
		snprintf(buf, sizeof(buf), "%s:%.*s", sys, (int)(nlen > 127 ? 127 : nlen), name);
		ev->name = strdup(buf);
	}
	return 0;
}

void pfc_tpformat_name_evsels(struct pfc_reader *rd)
{
	struct pfc_error e;

	if (!rd->tracing_data.data)
		return;
	memset(&e, 0, sizeof(e));
	(void)pfc_tracedata_formats(rd->tracing_data.data, rd->tracing_data.size, rd->tracing_data_offset, name_format,
				    rd, &e);
}
