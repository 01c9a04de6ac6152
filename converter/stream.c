/*
 * stream.c - the sample stream of stream.h.  A sample is a handful of LEB128 numbers (times
 * and ips as differences from the previous sample's) and its payload: 15 to 25 bytes for a
 * sample with a callchain, whose frames are the stack's, not the sample's.  The first
 * megabytes stay in memory; past mem_limit they go to an unlinked file in $TMPDIR (or /tmp)
 * through a 1 MiB buffer, and cursors read it back with pread in 1 MiB pieces.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "converter/stream.h"
#include "converter/perffile/evsel.h"

#define DEFAULT_MEM_LIMIT ((size_t)16 << 20)
#define WBUF ((size_t)1 << 20)
#define MAX_HEAD 130                    /* nine LEB128 numbers, two more with PFC_S_HAS_MEM */
#define RBUF ((size_t)1 << 20)
#define MAX_REC ((size_t)MAX_HEAD + 65536) /* a payload fits in a perf record */

void pfc_stream_init(struct pfc_stream *st)
{
	memset(st, 0, sizeof(*st));
	st->fd = -1;
}

void pfc_stream_exit(struct pfc_stream *st)
{
	free(st->mem);
	if (st->fd >= 0)
		close(st->fd);
	pfc_stream_init(st);
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Move what is in memory to a new temporary file; from then on mem is a write buffer. */
static int spill(struct pfc_stream *st)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];

	if (!dir || !*dir)
		dir = "/tmp";
	if (snprintf(path, sizeof(path), "%s/perfconv-stream.XXXXXX", dir) >= (int)sizeof(path))
		return -1;
	st->fd = mkstemp(path);
	if (st->fd < 0)
		return -1;
	unlink(path);
	if (write_all(st->fd, st->mem, st->len) < 0)
		return -1;
	st->file_len = st->len;
	st->len = 0;
	return 0;
}

static int flush_buf(struct pfc_stream *st)
{
	if (!st->len)
		return 0;
	if (write_all(st->fd, st->mem, st->len) < 0)
		return -1;
	st->file_len += st->len;
	st->len = 0;
	return 0;
}

/* Room for n more bytes at mem + len: past the memory limit the bytes so far go to the file. */
static int room(struct pfc_stream *st, size_t n)
{
	size_t limit = st->mem_limit ? st->mem_limit : DEFAULT_MEM_LIMIT;

	if (st->fd < 0 && st->len && st->len + n > limit) {
		if (spill(st) < 0)
			return -1;
	} else if (st->fd >= 0 && st->len + n > st->cap && flush_buf(st) < 0) {
		return -1;
	}
	if (st->len + n > st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 1 << 16;
		uint8_t *m;
		while (cap < st->len + n)
			cap *= 2;
		if (st->fd >= 0 && cap < WBUF)
			cap = WBUF;
		if (!(m = realloc(st->mem, cap)))
			return -1;
		st->mem = m;
		st->cap = cap;
	}
	return 0;
}

static inline uint8_t *put_u(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t zigzag(uint64_t now, uint64_t before)
{
	int64_t d = (int64_t)(now - before);

	return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
}

int pfc_stream_add(struct pfc_stream *st, const struct pfc_srec *r)
{
	uint8_t *p;

	if (st->failed)
		return -1;
	if (room(st, MAX_HEAD + r->raw_len) < 0) {
		st->failed = 1;
		return -1;
	}
	p = st->mem + st->len;
	p = put_u(p, r->flags);
	p = put_u(p, r->misc);
	p = put_u(p, r->stack);
	p = put_u(p, zigzag(r->time, st->last_time));
	p = put_u(p, r->period);
	p = put_u(p, zigzag(r->ip, st->last_ip));
	p = put_u(p, r->addr);
	p = put_u(p, (uint32_t)(r->cpu + 1u));
	p = put_u(p, r->raw_len);
	if (r->flags & PFC_S_HAS_MEM) {
		p = put_u(p, r->weight);
		p = put_u(p, r->data_src);
	}
	if (r->raw_len)
		memcpy(p, r->raw, r->raw_len);
	p += r->raw_len;
	st->len = (size_t)(p - st->mem);
	st->last_time = r->time;
	st->last_ip = r->ip;
	st->nr++;
	return 0;
}

int pfc_stream_finish(struct pfc_stream *st)
{
	if (st->failed)
		return -1;
	if (st->fd >= 0 && flush_buf(st) < 0) {
		st->failed = 1;
		return -1;
	}
	return 0;
}

int pfc_stream_open(struct pfc_stream_cur *c, const struct pfc_stream *st)
{
	memset(c, 0, sizeof(*c));
	c->st = st;
	c->left = st->nr;
	if (st->fd < 0) {	/* read in place */
		c->buf = st->mem;
		c->len = st->len;
		return 0;
	}
	c->cap = RBUF + MAX_REC;
	if (!(c->buf = malloc(c->cap))) {
		c->failed = 1;
		return -1;
	}
	return 0;
}

void pfc_stream_close(struct pfc_stream_cur *c)
{
	if (c->st && c->st->fd >= 0)
		free(c->buf);
	memset(c, 0, sizeof(*c));
}

/* Keep at least one whole record in the buffer while the file has more. */
static int refill(struct pfc_stream_cur *c)
{
	const struct pfc_stream *st = c->st;

	if (st->fd < 0 || c->len - c->pos >= MAX_REC || c->file_pos >= st->file_len)
		return 0;
	memmove(c->buf, c->buf + c->pos, c->len - c->pos);
	c->len -= c->pos;
	c->pos = 0;
	while (c->len < c->cap && c->file_pos < st->file_len) {
		size_t want = c->cap - c->len;
		ssize_t k;
		if (want > st->file_len - c->file_pos)
			want = (size_t)(st->file_len - c->file_pos);
		k = pread(st->fd, c->buf + c->len, want, (off_t)c->file_pos);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c->len += (size_t)k;
		c->file_pos += (uint64_t)k;
	}
	return 0;
}

static inline int get_u(struct pfc_stream_cur *c, uint64_t *v)
{
	uint64_t x = 0;
	int shift = 0;

	while (c->pos < c->len && shift < 64) {
		uint8_t b = c->buf[c->pos++];
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
		shift += 7;
	}
	return -1;
}

int pfc_stream_next(struct pfc_stream_cur *c, struct pfc_srec *r)
{
	uint64_t v[9];
	int i;

	if (c->failed)
		return -1;
	if (!c->left)
		return 0;
	if (refill(c) < 0)
		goto bad;
	for (i = 0; i < 9; i++)
		if (get_u(c, &v[i]) < 0)
			goto bad;
	r->weight = r->data_src = 0;
	if ((v[0] & PFC_S_HAS_MEM) && (get_u(c, &r->weight) < 0 || get_u(c, &r->data_src) < 0))
		goto bad;
	if (v[8] > c->len - c->pos)
		goto bad;
	r->flags = (uint16_t)v[0];
	r->misc = (uint16_t)v[1];
	r->stack = (uint32_t)v[2];
	c->last_time += (v[3] >> 1) ^ -(v[3] & 1);
	r->time = c->last_time;
	r->period = v[4];
	c->last_ip += (v[5] >> 1) ^ -(v[5] & 1);
	r->ip = c->last_ip;
	r->addr = v[6];
	r->cpu = (uint32_t)v[7] - 1u;
	r->raw_len = (uint32_t)v[8];
	r->raw = c->buf + c->pos;
	c->pos += (size_t)v[8];
	c->left--;
	return 1;
bad:
	c->failed = 1;
	return -1;
}
