/*
 * bytes.h - loads of file-order integers from unaligned, untrusted bytes.  perf.data may
 * come from a machine of the other byte order; the mapping is never swapped in place,
 * every load takes the swap flag instead (the branch is perfectly predictable).  And the
 * hex numbers of the text inputs (perf maps, r2rmaps, PE debug paths).
 */
#ifndef PFC_BYTES_H
#define PFC_BYTES_H

#include <stdint.h>
#include <string.h>

static inline uint16_t pfc_ld16(const void *p, int swap)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap16(v) : v;
}

static inline uint32_t pfc_ld32(const void *p, int swap)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap32(v) : v;
}

static inline uint64_t pfc_ld64(const void *p, int swap)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap64(v) : v;
}

/* A bounds-checked cursor over [p, end).  Reads past the end set `bad` and return 0. */
struct pfc_cursor {
	const uint8_t *p, *end;
	int swap;
	int bad;
};

static inline void pfc_cur_init(struct pfc_cursor *c, const void *p, uint64_t len, int swap)
{
	c->p = p;
	c->end = (const uint8_t *)p + len;
	c->swap = swap;
	c->bad = 0;
}

static inline uint64_t pfc_cur_left(const struct pfc_cursor *c)
{
	return (uint64_t)(c->end - c->p);
}

static inline int pfc_cur_need(struct pfc_cursor *c, uint64_t n)
{
	if (c->bad || pfc_cur_left(c) < n) {
		c->bad = 1;
		return 0;
	}
	return 1;
}

static inline uint64_t pfc_cur_u64(struct pfc_cursor *c)
{
	uint64_t v;
	if (!pfc_cur_need(c, 8))
		return 0;
	v = pfc_ld64(c->p, c->swap);
	c->p += 8;
	return v;
}

static inline uint32_t pfc_cur_u32(struct pfc_cursor *c)
{
	uint32_t v;
	if (!pfc_cur_need(c, 4))
		return 0;
	v = pfc_ld32(c->p, c->swap);
	c->p += 4;
	return v;
}

static inline const uint8_t *pfc_cur_bytes(struct pfc_cursor *c, uint64_t n)
{
	const uint8_t *q;
	if (!pfc_cur_need(c, n))
		return NULL;
	q = c->p;
	c->p += n;
	return q;
}

/* a hex digit's value, -1 for any other character */
static inline int pfc_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A hex number with an optional 0x, at most 16 digits (64 bits) in the first n chars of p:
 * the chars used, 0 when there is none or it is longer. */
static inline size_t pfc_parse_hex(const char *p, size_t n, uint64_t *v)
{
	size_t i = 0, start;

	*v = 0;
	if (n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && pfc_hexval((unsigned char)p[2]) >= 0)
		i = 2;
	start = i;
	while (i < n && pfc_hexval((unsigned char)p[i]) >= 0) {
		if (i - start >= 16)
			return 0;
		*v = *v << 4 | (uint64_t)pfc_hexval((unsigned char)p[i]);
		i++;
	}
	return i > start ? i : 0;
}

#endif
