/*
 * strbuf.h - a growable byte buffer for building output lines.  Allocation failure is
 * sticky (`oom`) so callers check once at the end of a line.
 */
#ifndef PFC_STRBUF_H
#define PFC_STRBUF_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pfc_sb {
	char *buf;
	size_t len, cap;
	int oom;
};

static inline int pfc_sb_grow(struct pfc_sb *b, size_t extra)
{
	if (b->len + extra + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		char *n;
		while (cap < b->len + extra + 1)
			cap *= 2;
		n = realloc(b->buf, cap);
		if (!n) {
			b->oom = 1;
			return -1;
		}
		b->buf = n;
		b->cap = cap;
	}
	return 0;
}

static inline void pfc_sb_add(struct pfc_sb *b, const char *s, size_t n)
{
	if (pfc_sb_grow(b, n) < 0)
		return;
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = 0;
}

static inline void pfc_sb_adds(struct pfc_sb *b, const char *s)
{
	pfc_sb_add(b, s, strlen(s));
}

static inline void pfc_sb_addc(struct pfc_sb *b, char c)
{
	pfc_sb_add(b, &c, 1);
}

/* s (n bytes) right-aligned in width columns, as printf's "%*s". */
static inline void pfc_sb_addpad(struct pfc_sb *b, const char *s, size_t n, size_t width)
{
	if (n < width) {
		if (pfc_sb_grow(b, width - n) < 0)
			return;
		memset(b->buf + b->len, ' ', width - n);
		b->len += width - n;
	}
	pfc_sb_add(b, s, n);
}

/* v in decimal at d, at least min_digits digits ("%0*llu", min_digits at most 20): the end
 * of what was written, at most 20 bytes.  Its length first (a compare a digit), then two
 * digits a division from the end, in place: no scratch buffer, and no memcpy of variable
 * length (a call into libc for every number of every perf-script and perf.data.txt line). */
static inline char *pfc_put_dec(char *d, unsigned long long v, int min_digits)
{
	static const char pairs[200] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				       "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				       "8081828384858687888990919293949596979899";
	unsigned long long p10 = 10;
	int n = 1;
	char *e;

	while (n < 20 && v >= p10) {
		n++;
		p10 *= 10;	/* 10^20 overflows once n is 20, and is not compared then */
	}
	if (n < min_digits) {
		memset(d, '0', (size_t)(min_digits - n));
		d += min_digits - n;
	}
	e = d + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		e -= 2;
		memcpy(e, pairs + 2 * r, 2);
	}
	if (v >= 10)
		memcpy(e - 2, pairs + 2 * v, 2);
	else
		e[-1] = (char)('0' + v);
	return d + n;
}

/* v in lowercase hexadecimal at d ("%llx"): the end of what was written, at most 16 bytes.
 * Its length first, then the digits from the end, as pfc_put_dec. */
static inline char *pfc_put_hex(char *d, unsigned long long v)
{
	int n = 1;
	char *e;

	while (n < 16 && v >> (4 * n))
		n++;
	e = d + n;
	do
		*--e = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	return d + n;
}

/* v in decimal, right-aligned in width columns ("%*llu"), negative when neg is set ("%*lld"
 * of -v). */
static inline void pfc_sb_adddec(struct pfc_sb *b, unsigned long long v, int neg, size_t width)
{
	char d[24], *p = d;

	if (neg && v)
		*p++ = '-';
	p = pfc_put_dec(p, v, 1);
	pfc_sb_addpad(b, d, (size_t)(p - d), width);
}

/* v in lowercase hexadecimal, right-aligned in width columns ("%*llx"). */
static inline void pfc_sb_addhex(struct pfc_sb *b, unsigned long long v, size_t width)
{
	char d[16];

	pfc_sb_addpad(b, d, (size_t)(pfc_put_hex(d, v) - d), width);
}

static inline void pfc_sb_addf(struct pfc_sb *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void pfc_sb_addf(struct pfc_sb *b, const char *fmt, ...)
{
	va_list ap;
	int n;
	char tmp[256];

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		pfc_sb_add(b, tmp, (size_t)n);
		return;
	}
	if (pfc_sb_grow(b, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static inline void pfc_sb_reset(struct pfc_sb *b)
{
	b->len = 0;
	if (b->buf)
		b->buf[0] = 0;
}

static inline void pfc_sb_free(struct pfc_sb *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

#endif
