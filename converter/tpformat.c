/*
 * tpformat.c - tracepoint payloads as text, the way `perf script` prints its "trace" field.
 * The recording's tracing data (the TRACING_DATA feature: perf's copy of the kernel's
 * tracefs format files) is read through a bounds-checked cursor and its event formats are
 * handed to libtraceevent, which renders a sample's raw payload.  Only the formats are
 * used: kallsyms, printk formats and saved comms in the same blob are skipped.
 */
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>
#include "converter/bytes.h"
#include "converter/tpformat.h"

/* A payload is rendered from a zero-padded copy: libtraceevent trusts the offsets of
 * dynamic fields (16-bit offset and length), so no read can leave the copy. */
#define PAD (2u * 65536u + 64u)

struct pfc_tpformat {
	struct tep_handle *tep;
	uint8_t *buf;
	size_t cap;
	struct trace_seq seq;
};

static const char *cur_str(struct pfc_cursor *c)
{
	const uint8_t *nul;

	if (c->bad)
		return NULL;
	nul = memchr(c->p, 0, pfc_cur_left(c));
	if (!nul) {
		c->bad = 1;
		return NULL;
	}
	return (const char *)pfc_cur_bytes(c, (uint64_t)(nul - c->p) + 1);
}

/* A sized block: u32 or u64 size, then that many bytes; copied with a terminating NUL
 * (libtraceevent parses text). */
static char *cur_block(struct pfc_cursor *c, int size64, uint64_t *len)
{
	uint64_t n = size64 ? pfc_cur_u64(c) : pfc_cur_u32(c);
	const uint8_t *p = pfc_cur_bytes(c, n);
	char *b;

	if (!p)
		return NULL;
	b = malloc(n + 1);
	if (!b)
		return NULL;
	memcpy(b, p, n);
	b[n] = 0;
	*len = n;
	return b;
}

int pfc_tpformat_load(struct pfc_tpformat **out, const uint8_t *data, uint64_t size, const char **why)
{
	static const uint8_t magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	struct pfc_tpformat *t;
	struct pfc_cursor c;
	const uint8_t *m;
	const char *ver;
	uint32_t i, j, nr, nr_sys;
	int big, long_size, page_size;
	uint64_t len;
	char *b;

	*out = NULL;
	*why = "malformed tracing data";
	pfc_cur_init(&c, data, size, 0);
	m = pfc_cur_bytes(&c, sizeof(magic));
	if (!m || memcmp(m, magic, sizeof(magic)))
		return -1;
	ver = cur_str(&c);
	m = pfc_cur_bytes(&c, 2);
	if (!ver || !m)
		return -1;
	big = m[0] != 0;
	long_size = m[1];
	c.swap = big != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	page_size = (int)pfc_cur_u32(&c);
	t = calloc(1, sizeof(*t));
	if (!t || !(t->tep = tep_alloc())) {
		free(t);
		*why = "out of memory";
		return -1;
	}
	trace_seq_init(&t->seq);
	tep_set_file_bigendian(t->tep, big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(t->tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(t->tep, long_size);
	tep_set_page_size(t->tep, page_size);
	/* header_page and header_event */
	for (i = 0; i < 2; i++) {
		const char *name = cur_str(&c);
		if (!name || strcmp(name, i ? "header_event" : "header_page"))
			goto bad;
		b = cur_block(&c, 1, &len);
		if (!b)
			goto bad;
		if (!i)
			tep_parse_header_page(t->tep, b, len, long_size);
		free(b);
	}
	/* ftrace's own events: not sampled by perf, skipped */
	nr = pfc_cur_u32(&c);
	for (i = 0; i < nr && !c.bad; i++) {
		uint64_t n = pfc_cur_u64(&c);
		pfc_cur_bytes(&c, n);
	}
	nr_sys = pfc_cur_u32(&c);
	for (i = 0; i < nr_sys && !c.bad; i++) {
		const char *sys = cur_str(&c);
		nr = pfc_cur_u32(&c);
		for (j = 0; j < nr && sys && !c.bad; j++) {
			b = cur_block(&c, 1, &len);
			if (!b)
				goto bad;
			tep_parse_event(t->tep, b, len, sys);	/* one bad format loses only its event */
			free(b);
		}
	}
	if (c.bad)
		goto bad;
	*out = t;
	*why = NULL;
	return 0;
bad:
	pfc_tpformat_free(t);
	return -1;
}

int pfc_tpformat_print(struct pfc_tpformat *t, uint64_t id, const void *raw, uint32_t len, int cpu,
		       struct pfc_sb *out)
{
	struct tep_event *ev;
	struct tep_record rec;

	if (!t || id > INT32_MAX || !(ev = tep_find_event(t->tep, (int)id)))
		return 1;
	if (t->cap < (size_t)len + PAD) {
		uint8_t *n = realloc(t->buf, (size_t)len + PAD);
		if (!n)
			return -1;
		t->buf = n;
		t->cap = (size_t)len + PAD;
	}
	memcpy(t->buf, raw, len);
	memset(t->buf + len, 0, t->cap - len);
	memset(&rec, 0, sizeof(rec));
	rec.data = t->buf;
	rec.size = (int)len;
	rec.cpu = cpu;
	trace_seq_reset(&t->seq);
	tep_print_event(t->tep, &t->seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&t->seq);
	pfc_sb_add(out, t->seq.buffer, t->seq.len);
	return out->oom ? -1 : 0;
}

void pfc_tpformat_free(struct pfc_tpformat *t)
{
	if (!t)
		return;
	trace_seq_destroy(&t->seq);
	if (t->tep)
		tep_free(t->tep);
	free(t->buf);
	free(t);
}
