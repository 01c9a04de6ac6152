/*
 * nettrace.c - EventPipe's NetTrace container (V4/V5): the FastSerialization object framing,
 * the Trace object, MetadataBlock, StackBlock, EventBlock (plain and header-compressed event
 * blobs), SPBlock and the end tag, read from memory through the bounds-checked cursor.  It
 * hands metadata and events to callbacks in file order; payloads stay opaque (clrevents.c).
 */
#include "converter/events/nettrace.h"
#include "converter/util/grow.h"

#include <stdlib.h>
#include <string.h>

#define NT_TAG_NULL 1
#define NT_TAG_BEGIN 5
#define NT_TAG_END 6

/* the flags of a header-compressed event blob */
#define NT_F_META 1u
#define NT_F_CAPTURE 2u
#define NT_F_THREAD 4u
#define NT_F_STACK 8u
#define NT_F_ACTIVITY 16u
#define NT_F_RELATED 32u
#define NT_F_SORTED 64u
#define NT_F_SIZE 128u

/* the deepest nesting of Object-typed fields a metadata record may describe */
#define NT_MAX_FIELD_DEPTH 16

struct pfc_nettrace_stack_ent {
	uint32_t id, len;
	const uint8_t *p;
};

struct pfc_nettrace_thread_ent {
	uint64_t tid;
	uint32_t seq;
};

/* Everything one read needs besides the state kept in struct pfc_nettrace. */
struct nt_read {
	struct pfc_nettrace *nt;
	const uint8_t *base;         /* start of the file: offsets and the 4-byte alignment are relative to it */
	const struct pfc_nettrace_ops *ops;
	struct pfc_error *err;
	int swap;
};

static uint64_t off_of(const struct nt_read *r, const uint8_t *p)
{
	return (uint64_t)(p - r->base);
}

static uint8_t cur_u8(struct pfc_cursor *c)
{
	if (!pfc_cur_need(c, 1))
		return 0;
	return *c->p++;
}

static uint16_t cur_u16(struct pfc_cursor *c)
{
	uint16_t v;
	if (!pfc_cur_need(c, 2))
		return 0;
	v = pfc_ld16(c->p, c->swap);
	c->p += 2;
	return v;
}

/* LEB128-style unsigned varint of at most maxbytes bytes (5 for 32 bits, 10 for 64) */
static uint64_t cur_varint(struct pfc_cursor *c, int maxbytes)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < maxbytes; i++) {
		uint8_t b = cur_u8(c);
		if (c->bad)
			return 0;
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return v;
	}
	c->bad = 1;
	return 0;
}

static void put_utf8(char *out, size_t cap, size_t *n, uint32_t cp, int *full)
{
	char tmp[4];
	size_t k;

	if (cp < 0x80) {
		tmp[0] = (char)cp;
		k = 1;
	} else if (cp < 0x800) {
		tmp[0] = (char)(0xc0 | cp >> 6);
		tmp[1] = (char)(0x80 | (cp & 0x3f));
		k = 2;
	} else if (cp < 0x10000) {
		tmp[0] = (char)(0xe0 | cp >> 12);
		tmp[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		tmp[2] = (char)(0x80 | (cp & 0x3f));
		k = 3;
	} else {
		tmp[0] = (char)(0xf0 | cp >> 18);
		tmp[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		tmp[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		tmp[3] = (char)(0x80 | (cp & 0x3f));
		k = 4;
	}
	/* a character that does not fit whole ends the output: never half a sequence */
	if (*full || !cap || *n + k > cap - 1) {
		*full = 1;
		return;
	}
	memcpy(out + *n, tmp, k);
	*n += k;
}

long pfc_nettrace_utf16(struct pfc_cursor *c, char *out, size_t cap)
{
	size_t n = 0;
	int full = 0;

	for (;;) {
		uint32_t u = cur_u16(c), cp = u;
		if (c->bad)
			break;
		if (u == 0) {
			if (cap)
				out[n] = 0;
			return (long)n;
		}
		if (u >= 0xd800 && u < 0xdc00 && pfc_cur_left(c) >= 2) {
			uint32_t lo = pfc_ld16(c->p, c->swap);
			if (lo >= 0xdc00 && lo < 0xe000) {
				c->p += 2;
				cp = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
			} else {
				cp = 0xfffd;
			}
		} else if (u >= 0xd800 && u < 0xe000) {
			cp = 0xfffd;
		}
		put_utf8(out, cap, &n, cp, &full);
	}
	if (cap)
		out[n] = 0;
	return -1;
}

int pfc_nettrace_is(const uint8_t *buf, size_t len)
{
	return len >= 8 && memcmp(buf, "Nettrace", 8) == 0;
}

static uint64_t idmap_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

/* the index stored for key, or -1 */
static long idmap_get(const struct pfc_nettrace_idmap *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return -1;
	for (i = idmap_hash(key) & (m->cap - 1); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return (long)m->vals[i] - 1;
	return -1;
}

/* store key -> idx (replacing what key had); -1 when out of memory */
static int idmap_put(struct pfc_nettrace_idmap *m, uint64_t key, uint32_t idx)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		struct pfc_nettrace_idmap g;
		size_t j;
		g.cap = m->cap ? m->cap * 2 : 64;
		g.n = 0;
		g.keys = malloc(g.cap * sizeof(*g.keys));
		g.vals = calloc(g.cap, sizeof(*g.vals));
		if (!g.keys || !g.vals) {
			free(g.keys);
			free(g.vals);
			return -1;
		}
		for (j = 0; j < m->cap; j++) {
			if (!m->vals[j])
				continue;
			for (i = idmap_hash(m->keys[j]) & (g.cap - 1); g.vals[i]; i = (i + 1) & (g.cap - 1))
				;
			g.keys[i] = m->keys[j];
			g.vals[i] = m->vals[j];
			g.n++;
		}
		free(m->keys);
		free(m->vals);
		*m = g;
	}
	for (i = idmap_hash(key) & (m->cap - 1); m->vals[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->vals[i] = idx + 1;
			return 0;
		}
	}
	m->keys[i] = key;
	m->vals[i] = idx + 1;
	m->n++;
	return 0;
}

static void idmap_clear(struct pfc_nettrace_idmap *m)
{
	if (m->cap)
		memset(m->vals, 0, m->cap * sizeof(*m->vals));
	m->n = 0;
}

static void idmap_free(struct pfc_nettrace_idmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static struct pfc_nettrace_meta *meta_find(struct pfc_nettrace *nt, uint32_t id)
{
	long i = idmap_get(&nt->meta_ix, id);

	return i < 0 ? NULL : &nt->metas[i];
}

/* A copy in UTF-8 of the UTF-16 string at the cursor (NULL when out of memory; an empty
 * string with *len = -1 when it is cut short).  Once per metadata record, never per event. */
static char *utf16_dup(struct pfc_cursor *c, long *len)
{
	const uint8_t *q = c->p;
	size_t units = 0;
	char *out;

	/* UTF-8 takes at most 3 bytes per UTF-16 unit (4 per surrogate pair) */
	while ((size_t)(c->end - q) >= 2 && pfc_ld16(q, c->swap) != 0) {
		q += 2;
		units++;
	}
	out = malloc(units * 3 + 1);
	if (!out)
		return NULL;
	*len = pfc_nettrace_utf16(c, out, units * 3 + 1);
	return out;
}

/* Skip one V1 field description list (count, then type code, nested list for Object, name). */
static int skip_fields(struct pfc_cursor *c, int depth)
{
	uint32_t n, i;

	if (depth > NT_MAX_FIELD_DEPTH) {
		c->bad = 1;
		return -1;
	}
	n = pfc_cur_u32(c);
	for (i = 0; i < n && !c->bad; i++) {
		uint32_t type = pfc_cur_u32(c);
		if (type == 1 && skip_fields(c, depth + 1) < 0)  /* TypeCode.Object: a nested description */
			return -1;
		pfc_nettrace_utf16(c, NULL, 0);
	}
	return c->bad ? -1 : 0;
}

/* One metadata record (the payload of an event blob in a MetadataBlock). */
static int read_meta(struct nt_read *r, const uint8_t *p, uint32_t len, uint64_t off)
{
	struct pfc_nettrace *nt = r->nt;
	struct pfc_nettrace_meta m, *slot;
	struct pfc_cursor c;
	char *prov, *name;
	long plen, nlen;
	const uint8_t *fstart;

	memset(&m, 0, sizeof(m));
	m.opcode = -1;
	pfc_cur_init(&c, p, len, r->swap);
	m.id = pfc_cur_u32(&c);
	prov = utf16_dup(&c, &plen);
	m.event_id = pfc_cur_u32(&c);
	name = utf16_dup(&c, &nlen);
	if (!prov || !name) {
		free(prov);
		free(name);
		return PFC_FAIL_NOOFF(r->err, NOMEM, "nettrace metadata");
	}
	m.keywords = pfc_cur_u64(&c);
	m.version = pfc_cur_u32(&c);
	m.level = pfc_cur_u32(&c);
	if (c.bad || plen < 0 || nlen < 0) {
		free(prov);
		free(name);
		return PFC_FAIL(r->err, CORRUPT, off, "nettrace metadata record cut short");
	}
	fstart = c.p;
	if (skip_fields(&c, 0) < 0) {
		free(prov);
		free(name);
		return PFC_FAIL(r->err, CORRUPT, off, "nettrace metadata fields cut short or nested too deep");
	}
	m.nr_fields = pfc_ld32(fstart, r->swap);
	m.fields = fstart;
	m.fields_len = (uint32_t)(c.p - fstart);
	/* V5: optional tags after the fields, each sized */
	while (pfc_cur_left(&c) > 0) {
		uint32_t tlen = pfc_cur_u32(&c);
		uint8_t kind = cur_u8(&c);
		const uint8_t *tp = pfc_cur_bytes(&c, tlen);
		if (c.bad) {
			free(prov);
		free(name);
			return PFC_FAIL(r->err, CORRUPT, off, "nettrace metadata tag cut short");
		}
		if (kind == 1 && tlen >= 1)
			m.opcode = tp[0];
		else if (kind == 2)
			m.v2_params = 1;
	}
	m.provider = prov;
	m.name = name;

	slot = meta_find(nt, m.id);
	if (slot) {
		/* a redefinition replaces the record (the runtime never sends one) */
		free((char *)slot->provider);
		free((char *)slot->name);
		*slot = m;
	} else {
		if (nt->nr_metas >= UINT32_MAX - 1 ||
		    !pfc_grow_at(&nt->metas, &nt->cap_metas, nt->nr_metas, sizeof(*nt->metas), 64) ||
		    idmap_put(&nt->meta_ix, m.id, (uint32_t)nt->nr_metas) < 0) {
			free(prov);
			free(name);
			return PFC_FAIL_NOOFF(r->err, NOMEM, "nettrace metadata");
		}
		slot = &nt->metas[nt->nr_metas++];
		*slot = m;
	}
	nt->st.nr_metadata++;
	if (r->ops && r->ops->meta)
		return r->ops->meta(r->ops->ctx, slot);
	return 0;
}

static const struct pfc_nettrace_stack_ent *stack_find(const struct pfc_nettrace *nt, uint32_t id)
{
	long i = idmap_get(&nt->stack_ix, id);

	return i < 0 ? NULL : &nt->stacks[i];
}

static struct pfc_nettrace_thread_ent *thread_findnew(struct pfc_nettrace *nt, uint64_t tid)
{
	long i = idmap_get(&nt->thread_ix, tid);

	if (i >= 0)
		return &nt->threads[i];
	if (nt->nr_threads >= UINT32_MAX - 1 ||
	    !pfc_grow_at(&nt->threads, &nt->cap_threads, nt->nr_threads, sizeof(*nt->threads), 64) ||
	    idmap_put(&nt->thread_ix, tid, (uint32_t)nt->nr_threads) < 0)
		return NULL;
	nt->threads[nt->nr_threads].tid = tid;
	nt->threads[nt->nr_threads].seq = 0;
	return &nt->threads[nt->nr_threads++];
}

/* Sequence numbers count every event a thread tried to write: a gap is what the runtime
 * dropped.  A restart at 1 is a new thread that reused the id, not a loss. */
static int note_seq(struct nt_read *r, uint64_t tid, uint32_t seq, size_t *last)
{
	struct pfc_nettrace *nt = r->nt;
	struct pfc_nettrace_thread_ent *t;

	/* a block holds runs of one thread's events: the last one's entry first */
	if (*last < nt->nr_threads && nt->threads[*last].tid == tid)
		t = &nt->threads[*last];
	else if (!(t = thread_findnew(nt, tid)))
		return PFC_FAIL_NOOFF(r->err, NOMEM, "nettrace threads");
	*last = (size_t)(t - nt->threads);
	if (t->seq && seq != 1 && seq > t->seq + 1)
		r->nt->st.nr_dropped += seq - t->seq - 1;
	t->seq = seq;
	return 0;
}

/* An EventBlock or a MetadataBlock: a header, then event blobs up to the block's end. */
static int read_event_block(struct nt_read *r, const uint8_t *p, uint32_t len, int is_meta)
{
	struct pfc_nettrace *nt = r->nt;
	struct pfc_cursor c;
	struct pfc_nettrace_event ev;
	uint16_t hsize, flags;
	int compressed;
	/* the metadata and stacks stay as they are for the whole block: the last ones looked up
	 * serve the next events, which mostly name the same */
	struct pfc_nettrace_meta *meta = NULL;
	const struct pfc_nettrace_stack_ent *stack = NULL;
	uint32_t meta_id = 0, stack_id = 0;
	size_t thread = SIZE_MAX;

	pfc_cur_init(&c, p, len, r->swap);
	hsize = cur_u16(&c);
	flags = cur_u16(&c);
	if (c.bad || hsize < 4 || hsize > len)
		return PFC_FAIL(r->err, CORRUPT, off_of(r, p), "nettrace block header of %u bytes", hsize);
	c.p = p + hsize;
	compressed = flags & 1;
	/* a block starts from an all-zero previous header */
	memset(&ev, 0, sizeof(ev));
	while (pfc_cur_left(&c) > 0) {
		const uint8_t *start = c.p;
		uint32_t payload_len;

		if (compressed) {
			uint8_t f = cur_u8(&c);
			if (f & NT_F_META)
				ev.meta_id = (uint32_t)cur_varint(&c, 5);
			if (f & NT_F_CAPTURE) {
				ev.seq += (uint32_t)cur_varint(&c, 5) + 1;
				ev.capture_thread_id = cur_varint(&c, 10);
				ev.processor = (uint32_t)cur_varint(&c, 5);
			} else if (ev.meta_id != 0) {
				ev.seq++;
			}
			if (f & NT_F_THREAD)
				ev.thread_id = cur_varint(&c, 10);
			if (f & NT_F_STACK)
				ev.stack_id = (uint32_t)cur_varint(&c, 5);
			ev.timestamp += cur_varint(&c, 10);
			if (f & NT_F_ACTIVITY) {
				const uint8_t *g = pfc_cur_bytes(&c, 16);
				if (g)
					memcpy(ev.activity, g, 16);
			}
			if (f & NT_F_RELATED) {
				const uint8_t *g = pfc_cur_bytes(&c, 16);
				if (g)
					memcpy(ev.related_activity, g, 16);
			}
			ev.sorted = !!(f & NT_F_SORTED);
			if (f & NT_F_SIZE)
				ev.payload_len = (uint32_t)cur_varint(&c, 5);
			payload_len = ev.payload_len;
			ev.payload = pfc_cur_bytes(&c, payload_len);
		} else {
			uint32_t size = pfc_cur_u32(&c), mid;
			const uint8_t *g, *end;
			end = c.p + (pfc_cur_left(&c) >= size ? size : 0);
			if (pfc_cur_left(&c) < size || size < 76) {  /* the fixed header after the size */
				c.bad = 1;
			} else {
				mid = pfc_cur_u32(&c);
				ev.meta_id = mid & 0x7fffffffu;
				ev.sorted = !!(mid & 0x80000000u);
				ev.seq = pfc_cur_u32(&c);
				ev.thread_id = pfc_cur_u64(&c);
				ev.capture_thread_id = pfc_cur_u64(&c);
				ev.processor = pfc_cur_u32(&c);
				ev.stack_id = pfc_cur_u32(&c);
				ev.timestamp = pfc_cur_u64(&c);
				g = pfc_cur_bytes(&c, 16);
				if (g)
					memcpy(ev.activity, g, 16);
				g = pfc_cur_bytes(&c, 16);
				if (g)
					memcpy(ev.related_activity, g, 16);
				ev.payload_len = pfc_cur_u32(&c);
				if (!c.bad && (uint64_t)(end - c.p) < ev.payload_len)
					c.bad = 1;
				ev.payload = pfc_cur_bytes(&c, ev.payload_len);
				/* the blob's size decides where the next one starts, then 4-byte file alignment */
				if (!c.bad) {
					c.p = end;
					while (off_of(r, c.p) & 3 && pfc_cur_left(&c) > 0)
						c.p++;
				}
			}
		}
		if (c.bad)
			return PFC_FAIL(r->err, CORRUPT, off_of(r, start), "nettrace event blob cut short or malformed");
		ev.offset = off_of(r, start);

		if (is_meta) {
			int rc = read_meta(r, ev.payload, ev.payload_len, ev.offset);
			if (rc < 0)
				return rc;
			continue;
		}
		if (!meta || ev.meta_id != meta_id) {
			meta = meta_find(nt, ev.meta_id);
			meta_id = ev.meta_id;
		}
		ev.meta = meta;
		if (!ev.meta)
			nt->st.nr_no_meta++;
		ev.stack = NULL;
		ev.nr_ips = 0;
		if (ev.stack_id && !(r->ops && r->ops->no_stacks)) {
			const struct pfc_nettrace_stack_ent *s;
			if (!stack || ev.stack_id != stack_id) {
				stack = stack_find(nt, ev.stack_id);
				stack_id = ev.stack_id;
			}
			s = stack;
			if (s && nt->trace.pointer_size) {
				ev.stack = s->p;
				ev.nr_ips = s->len / nt->trace.pointer_size;
			} else if (!s) {
				nt->st.nr_no_stack++;
			}
		}
		if (!nt->st.nr_events || ev.timestamp < nt->st.min_ts)
			nt->st.min_ts = ev.timestamp;
		if (ev.timestamp > nt->st.max_ts)
			nt->st.max_ts = ev.timestamp;
		nt->st.nr_events++;
		if (note_seq(r, ev.capture_thread_id, ev.seq, &thread) < 0)
			return -PFC_ERR_NOMEM;
		if (r->ops && r->ops->event) {
			int rc = r->ops->event(r->ops->ctx, &ev);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

static int read_stack_block(struct nt_read *r, const uint8_t *p, uint32_t len)
{
	struct pfc_nettrace *nt = r->nt;
	struct pfc_cursor c;
	uint32_t first, count, i;

	pfc_cur_init(&c, p, len, r->swap);
	first = pfc_cur_u32(&c);
	count = pfc_cur_u32(&c);
	if (c.bad || count > len / 4)
		return PFC_FAIL(r->err, CORRUPT, off_of(r, p), "nettrace stack block header");
	if (count && !(r->ops && r->ops->no_stacks) && !pfc_grow_at(&nt->stacks, &nt->cap_stacks, nt->nr_stacks + count - 1, sizeof(*nt->stacks), 64))
		return PFC_FAIL_NOOFF(r->err, NOMEM, "nettrace stacks");
	for (i = 0; i < count; i++) {
		struct pfc_nettrace_stack_ent s;
		const uint8_t *at = c.p;
		s.id = first + i;
		s.len = pfc_cur_u32(&c);
		s.p = pfc_cur_bytes(&c, s.len);
		if (c.bad)
			return PFC_FAIL(r->err, CORRUPT, off_of(r, at), "nettrace stack %u cut short", s.id);
		nt->st.nr_stacks++;
		if (r->ops && r->ops->no_stacks)
			continue;
		if (nt->nr_stacks >= UINT32_MAX - 1 || idmap_put(&nt->stack_ix, s.id, (uint32_t)nt->nr_stacks) < 0)
			return PFC_FAIL_NOOFF(r->err, NOMEM, "nettrace stacks");
		nt->stacks[nt->nr_stacks] = s;
		nt->nr_stacks++;
	}
	return 0;
}

static int read_sp_block(struct nt_read *r, const uint8_t *p, uint32_t len)
{
	struct pfc_nettrace *nt = r->nt;
	struct pfc_cursor c;
	uint64_t ts;
	uint32_t n, i;

	pfc_cur_init(&c, p, len, r->swap);
	ts = pfc_cur_u64(&c);
	n = pfc_cur_u32(&c);
	if (c.bad || n > len / 12)
		return PFC_FAIL(r->err, CORRUPT, off_of(r, p), "nettrace sequence point header");
	for (i = 0; i < n; i++) {
		uint64_t tid = pfc_cur_u64(&c);
		uint32_t seq = pfc_cur_u32(&c);
		struct pfc_nettrace_thread_ent *t;
		if (c.bad)
			return PFC_FAIL(r->err, CORRUPT, off_of(r, p), "nettrace sequence point cut short");
		t = thread_findnew(nt, tid);
		if (!t)
			return PFC_FAIL_NOOFF(r->err, NOMEM, "nettrace threads");
		/* a lower bound of what the thread tried to write: more than we saw was dropped */
		if (seq > t->seq) {
			if (t->seq)
				nt->st.nr_dropped += seq - t->seq;
			t->seq = seq;
		}
	}
	/* a stack id is valid only until the next sequence point: the table starts afresh */
	nt->nr_stacks = 0;
	idmap_clear(&nt->stack_ix);
	nt->st.nr_seqpoints++;
	if (r->ops && r->ops->seqpoint)
		return r->ops->seqpoint(r->ops->ctx, ts);
	return 0;
}

static int read_trace(struct nt_read *r, struct pfc_cursor *c, uint32_t version)
{
	struct pfc_nettrace_trace *t = &r->nt->trace;
	const uint8_t *at = c->p;
	int i;

	t->version = version;
	for (i = 0; i < 8; i++)
		t->utc[i] = cur_u16(c);
	t->sync_qpc = pfc_cur_u64(c);
	t->qpc_freq = pfc_cur_u64(c);
	t->pointer_size = pfc_cur_u32(c);
	t->pid = pfc_cur_u32(c);
	t->nr_cpus = pfc_cur_u32(c);
	t->sampling_rate = pfc_cur_u32(c);
	if (c->bad)
		return 1;
	if (t->pointer_size != 4 && t->pointer_size != 8)
		return PFC_FAIL(r->err, CORRUPT, off_of(r, at), "nettrace pointer size %u", t->pointer_size);
	if (r->ops && r->ops->trace)
		return r->ops->trace(r->ops->ctx, t);
	return 0;
}

/* The object header: BeginPrivateObject, the type (BeginPrivateObject, NullReference, version,
 * minimum reader version, name, EndObject).  Returns 1 when the input ends inside it. */
static int read_type(struct nt_read *r, struct pfc_cursor *c, uint32_t *version, char *name, size_t cap)
{
	const uint8_t *at = c->p;
	uint32_t nlen;
	const uint8_t *np;

	if (cur_u8(c) != NT_TAG_BEGIN || cur_u8(c) != NT_TAG_BEGIN || cur_u8(c) != NT_TAG_NULL) {
		if (c->bad)
			return 1;
		return PFC_FAIL(r->err, CORRUPT, off_of(r, at), "nettrace object does not start with its type");
	}
	*version = pfc_cur_u32(c);
	(void)pfc_cur_u32(c);     /* minimum reader version */
	nlen = pfc_cur_u32(c);
	if (!c->bad && nlen >= cap)
		return PFC_FAIL(r->err, CORRUPT, off_of(r, at), "nettrace type name of %u bytes", nlen);
	np = pfc_cur_bytes(c, nlen);
	if (cur_u8(c) != NT_TAG_END) {
		if (c->bad)
			return 1;
		return PFC_FAIL(r->err, CORRUPT, off_of(r, at), "nettrace type object not ended");
	}
	memcpy(name, np, nlen);
	name[nlen] = 0;
	return 0;
}

int pfc_nettrace_begin(struct pfc_nettrace *nt, const uint8_t *buf, size_t len,
		       const struct pfc_nettrace_ops *ops, struct pfc_error *err)
{
	static const char fs[] = "!FastSerialization.1";
	struct pfc_cursor *c = &nt->cur;
	const uint8_t *s;

	memset(nt, 0, sizeof(*nt));
	nt->base = buf;
	nt->ops = ops;
	nt->err = err;
	nt->swap = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
	pfc_cur_init(c, buf, len, nt->swap);
	if (!pfc_nettrace_is(buf, len))
		return PFC_FAIL(err, UNSUPPORTED, 0, "not a nettrace stream (no 'Nettrace' magic)");
	c->p += 8;
	if (pfc_cur_u32(c) != sizeof(fs) - 1 || !(s = pfc_cur_bytes(c, sizeof(fs) - 1)) ||
	    memcmp(s, fs, sizeof(fs) - 1) != 0)
		return PFC_FAIL(err, UNSUPPORTED, 8, "nettrace stream without the '%s' header", fs);
	return 0;
}

int pfc_nettrace_step(struct pfc_nettrace *nt)
{
	struct nt_read r = { nt, nt->base, nt->ops, nt->err, nt->swap };
	struct pfc_cursor *c = &nt->cur;
	struct pfc_error *err = nt->err;
	const uint8_t *obj = c->p;
	char name[64];
	uint32_t version = 0, blen;
	const uint8_t *body;
	int rc;

	if (nt->done)
		return 0;
	if (pfc_cur_left(c) == 0) {
		nt->st.truncated = 1;
		nt->st.truncated_at = off_of(&r, obj);
		goto end;
	}
	if (*c->p == NT_TAG_NULL) {
		nt->st.complete = 1;
		goto end;
	}
	rc = read_type(&r, c, &version, name, sizeof(name));
	if (rc < 0)
		return rc;
	if (rc > 0)
		goto cut;
	if (strcmp(name, "Trace") == 0) {
		if (nt->seen_trace)
			return PFC_FAIL(err, CORRUPT, off_of(&r, obj), "nettrace stream with a second Trace object");
		if (version > 4)
			return PFC_FAIL(err, UNSUPPORTED, off_of(&r, obj),
					"nettrace format V6 (Trace object version %u) is not read yet", version);
		nt->seen_trace = 1;
		rc = read_trace(&r, c, version);
		if (rc < 0)
			return rc;
		if (rc > 0)
			goto cut;
	} else {
		int which;
		if (!nt->seen_trace)
			return PFC_FAIL(err, CORRUPT, off_of(&r, obj), "nettrace block '%s' before the Trace object", name);
		if (strcmp(name, "EventBlock") == 0)
			which = 0;
		else if (strcmp(name, "MetadataBlock") == 0)
			which = 1;
		else if (strcmp(name, "StackBlock") == 0)
			which = 2;
		else if (strcmp(name, "SPBlock") == 0)
			which = 3;
		else
			return PFC_FAIL(err, UNSUPPORTED, off_of(&r, obj), "nettrace object '%s'", name);
		blen = pfc_cur_u32(c);
		/* the block's bytes start at the next 4-byte file offset */
		while (!c->bad && off_of(&r, c->p) & 3)
			cur_u8(c);
		body = pfc_cur_bytes(c, blen);
		if (c->bad)
			goto cut;
		if (which == 0) {
			nt->st.nr_event_blocks++;
			rc = read_event_block(&r, body, blen, 0);
		} else if (which == 1) {
			nt->st.nr_metadata_blocks++;
			rc = read_event_block(&r, body, blen, 1);
		} else if (which == 2) {
			nt->st.nr_stack_blocks++;
			rc = read_stack_block(&r, body, blen);
		} else {
			rc = read_sp_block(&r, body, blen);
		}
		if (rc < 0)
			return rc;
	}
	if (cur_u8(c) != NT_TAG_END) {
		if (c->bad)
			goto cut;
		return PFC_FAIL(err, CORRUPT, off_of(&r, c->p - 1), "nettrace object '%s' not ended", name);
	}
	return 1;
cut:
	/* the session was cut (the process died, the client stopped reading): keep what came before */
	nt->st.truncated = 1;
	nt->st.truncated_at = off_of(&r, obj);
end:
	nt->done = 1;
	if (!nt->seen_trace)
		return PFC_FAIL(err, TRUNCATED, (uint64_t)(c->end - nt->base), "nettrace stream ends before its Trace object");
	return 0;
}

uint64_t pfc_nettrace_offset(const struct pfc_nettrace *nt)
{
	return (uint64_t)(nt->cur.p - nt->base);
}

int pfc_nettrace_read(struct pfc_nettrace *nt, const uint8_t *buf, size_t len,
		      const struct pfc_nettrace_ops *ops, struct pfc_error *err)
{
	int rc = pfc_nettrace_begin(nt, buf, len, ops, err);

	if (rc < 0)
		return rc;
	while ((rc = pfc_nettrace_step(nt)) > 0)
		;
	return rc;
}

void pfc_nettrace_free(struct pfc_nettrace *nt)
{
	size_t i;

	for (i = 0; i < nt->nr_metas; i++) {
		free((char *)nt->metas[i].provider);
		free((char *)nt->metas[i].name);
	}
	free(nt->metas);
	free(nt->stacks);
	free(nt->threads);
	idmap_free(&nt->meta_ix);
	idmap_free(&nt->stack_ix);
	idmap_free(&nt->thread_ix);
	memset(nt, 0, sizeof(*nt));
}
