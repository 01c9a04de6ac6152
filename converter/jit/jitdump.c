/*
 * jitdump.c - parser for jit-PID.dump files and the lookup of the code they describe.
 * A jitdump is untrusted and may still be being written: every length is checked against
 * what is left before it is used, a malformed record is an error with its offset, and a
 * last record cut short ends the file quietly (the writer had not finished it).  Line
 * tables and unwinding data are validated and counted; frames need only the names.
 */
#include <stdlib.h>
#include <string.h>
#include "converter/util/bytes.h"
#include "converter/util/fileio.h"
#include "converter/jit/jitdump.h"

#define HDR_SIZE 40u          /* FileHeader */
#define REC_HDR 16u           /* RecordHeader: id, total_size, timestamp */
#define LOAD_FIXED 40u        /* pid, tid, vma, code_addr, code_size, code_index */
#define MOVE_FIXED 48u        /* pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index */
#define DEBUG_FIXED 16u       /* code_addr, nr_entry */
#define DEBUG_ENTRY 16u       /* addr, line, discrim, then the file name */
#define UNWIND_FIXED 24u      /* unwind_data_size, eh_frame_hdr_size, mapped_size */

/* code_index -> latest entry, for MOVE records */
struct idx_map {
	uint64_t *key;
	uint32_t *val;              /* entry index + 1; 0 = empty */
	size_t cap, n;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static int idx_put(struct idx_map *m, uint64_t key, uint32_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 1024, j;
		uint64_t *k = calloc(cap, sizeof(*k));
		uint32_t *v = calloc(cap, sizeof(*v));
		if (!k || !v) {
			free(k);
			free(v);
			return -1;
		}
		for (j = 0; j < m->cap; j++) {
			if (!m->val[j])
				continue;
			for (i = mix(m->key[j]) & (cap - 1); v[i]; i = (i + 1) & (cap - 1))
				;
			k[i] = m->key[j];
			v[i] = m->val[j];
		}
		free(m->key);
		free(m->val);
		m->key = k;
		m->val = v;
		m->cap = cap;
	}
	for (i = mix(key) & (m->cap - 1); m->val[i]; i = (i + 1) & (m->cap - 1))
		if (m->key[i] == key) {
			m->val[i] = val + 1;
			return 0;
		}
	m->key[i] = key;
	m->val[i] = val + 1;
	m->n++;
	return 0;
}

static int idx_get(const struct idx_map *m, uint64_t key, uint32_t *val)
{
	size_t i;

	if (!m->cap)
		return 0;
	for (i = mix(key) & (m->cap - 1); m->val[i]; i = (i + 1) & (m->cap - 1))
		if (m->key[i] == key) {
			*val = m->val[i] - 1;
			return 1;
		}
	return 0;
}

static int add_name(struct pfc_jitdump *jd, const char *name, size_t len, uint32_t *off)
{
	if (jd->names_len + len + 1 > UINT32_MAX)
		return -1;
	if (jd->names_len + len + 1 > jd->names_cap) {
		size_t cap = jd->names_cap ? jd->names_cap * 2 : 65536;
		char *n;
		while (cap < jd->names_len + len + 1)
			cap *= 2;
		n = realloc(jd->names, cap);
		if (!n)
			return -1;
		jd->names = n;
		jd->names_cap = cap;
	}
	memcpy(jd->names + jd->names_len, name, len);
	jd->names[jd->names_len + len] = 0;
	*off = (uint32_t)jd->names_len;
	jd->names_len += len + 1;
	return 0;
}

static struct pfc_jitdump_ent *add_ent(struct pfc_jitdump *jd)
{
	if (jd->n == jd->cap) {
		size_t cap = jd->cap ? jd->cap * 2 : 1024;
		struct pfc_jitdump_ent *n;
		if (jd->n >= UINT32_MAX - 1)
			return NULL;
		n = realloc(jd->v, cap * sizeof(*n));
		if (!n)
			return NULL;
		jd->v = n;
		jd->cap = cap;
	}
	memset(&jd->v[jd->n], 0, sizeof(jd->v[0]));
	return &jd->v[jd->n++];
}

static int cmp_ent(const void *a, const void *b)
{
	const struct pfc_jitdump_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

#define CORRUPT(off, ...) PFC_FAIL(err, CORRUPT, (off), __VA_ARGS__)
#define NOMEM() PFC_FAIL_NOOFF(err, NOMEM, "jitdump")

/* What the walk over the records carries from one record to the next. */
struct walk {
	struct pfc_jitdump *jd;
	struct pfc_error *err;
	struct idx_map idx;         /* code_index -> its latest entry, for MOVE records */
	uint32_t seq;               /* entries in file order, the tie-break of equal starts */
	uint64_t pending_addr;      /* the address of a DEBUG_INFO record, whose LOAD follows */
	uint32_t pending_lines;
	int have_pending;
};

/* The file header: the byte order from the magic, the version, and where the records start
 * (*hdr_size). */
static int parse_header(struct pfc_jitdump *jd, const uint8_t *buf, size_t len, uint64_t *hdr_size,
			struct pfc_error *err)
{
	struct pfc_cursor c;
	uint32_t magic;

	if (len < 4)
		return PFC_FAIL(err, BAD_MAGIC, 0, "jitdump: file of %zu bytes has no header", len);
	memcpy(&magic, buf, 4);
	if (magic == PFC_JITDUMP_MAGIC)
		jd->swap = 0;
	else if (magic == __builtin_bswap32(PFC_JITDUMP_MAGIC))
		jd->swap = 1;
	else
		return PFC_FAIL(err, BAD_MAGIC, 0, "not a jitdump (bad magic 0x%08x)", magic);
	if (len < HDR_SIZE)
		return PFC_FAIL(err, TRUNCATED, 0, "jitdump header needs %u bytes, the file has %zu", HDR_SIZE, len);
	pfc_cur_init(&c, buf + 4, HDR_SIZE - 4, jd->swap);
	jd->version = pfc_cur_u32(&c);
	*hdr_size = pfc_cur_u32(&c);
	jd->elf_mach = pfc_cur_u32(&c);
	(void)pfc_cur_u32(&c);	/* pad1 */
	jd->pid = pfc_cur_u32(&c);
	jd->time = pfc_cur_u64(&c);
	jd->flags = pfc_cur_u64(&c);
	if (jd->version != 1)
		return PFC_FAIL(err, UNSUPPORTED, 4, "jitdump version %u (only version 1 exists)", jd->version);
	if (*hdr_size < HDR_SIZE || *hdr_size > len)
		return CORRUPT(8, "jitdump header size %llu (at least %u, at most the file's %zu bytes)",
			       (unsigned long long)*hdr_size, HDR_SIZE, len);
	return 0;
}

/* JIT_CODE_LOAD at pos (total bytes, time ts), its body in c: an entry named by it. */
static int rec_load(struct walk *w, struct pfc_cursor *c, uint64_t pos, uint64_t total, uint64_t ts)
{
	struct pfc_jitdump *jd = w->jd;
	struct pfc_error *err = w->err;
	uint32_t rpid;
	uint64_t code_addr, code_size, code_index, name_max;
	const char *name;
	size_t name_len;
	struct pfc_jitdump_ent *e;

	if (total - REC_HDR < LOAD_FIXED + 1)
		return CORRUPT(pos, "jitdump LOAD record of %llu bytes (at least %u)", (unsigned long long)total,
			       REC_HDR + LOAD_FIXED + 1);
	rpid = pfc_cur_u32(c);
	(void)pfc_cur_u32(c);	/* tid */
	(void)pfc_cur_u64(c);	/* vma */
	code_addr = pfc_cur_u64(c);
	code_size = pfc_cur_u64(c);
	code_index = pfc_cur_u64(c);
	name = (const char *)c->p;
	name_max = pfc_cur_left(c);
	name_len = strnlen(name, name_max);
	if (name_len == name_max)
		return CORRUPT(pos, "jitdump LOAD record: the name has no terminating NUL");
	/* the code bytes are optional: CoreCLR leaves them out for stub blocks */
	if (name_max - name_len - 1 < code_size)
		jd->nr_no_code++;
	if (code_addr + code_size < code_addr)
		return CORRUPT(pos, "jitdump LOAD record: code at 0x%llx of 0x%llx bytes wraps around",
			       (unsigned long long)code_addr, (unsigned long long)code_size);
	jd->nr_load++;
	if (!code_size) {
		w->have_pending = 0;
		return 0;
	}
	if (!(e = add_ent(jd)))
		return NOMEM();
	e->start = code_addr;
	e->end = code_addr + code_size;
	e->time = ts;
	e->code_index = code_index;
	e->seq = w->seq++;
	e->pid = rpid;
	if (w->have_pending && w->pending_addr == code_addr)
		e->nr_lines = w->pending_lines;
	w->have_pending = 0;
	if (add_name(jd, name, name_len, &e->name_off) < 0 || idx_put(&w->idx, code_index, (uint32_t)(jd->n - 1)) < 0)
		return NOMEM();
	e->name_len = (uint32_t)name_len;
	if (ts < jd->min_time)
		jd->min_time = ts;
	if (ts > jd->max_time)
		jd->max_time = ts;
	return 0;
}

/* JIT_CODE_MOVE: the code of an earlier load (by code_index) at a new address, from ts on. */
static int rec_move(struct walk *w, struct pfc_cursor *c, uint64_t pos, uint64_t total, uint64_t ts)
{
	struct pfc_jitdump *jd = w->jd;
	struct pfc_error *err = w->err;
	uint32_t rpid, from;
	uint64_t new_addr, code_size, code_index;
	struct pfc_jitdump_ent *e;

	if (total - REC_HDR < MOVE_FIXED)
		return CORRUPT(pos, "jitdump MOVE record of %llu bytes (at least %u)", (unsigned long long)total,
			       REC_HDR + MOVE_FIXED);
	rpid = pfc_cur_u32(c);
	(void)pfc_cur_u32(c);	/* tid */
	(void)pfc_cur_u64(c);	/* vma */
	(void)pfc_cur_u64(c);	/* old_code_addr */
	new_addr = pfc_cur_u64(c);
	code_size = pfc_cur_u64(c);
	code_index = pfc_cur_u64(c);
	jd->nr_move++;
	if (new_addr + code_size < new_addr)
		return CORRUPT(pos, "jitdump MOVE record: code at 0x%llx of 0x%llx bytes wraps around",
			       (unsigned long long)new_addr, (unsigned long long)code_size);
	if (!idx_get(&w->idx, code_index, &from)) {
		jd->nr_move_orphan++;
		return 0;
	}
	if (!code_size)
		return 0;
	if (!(e = add_ent(jd)))
		return NOMEM();
	*e = jd->v[from];
	e->start = new_addr;
	e->end = new_addr + code_size;
	e->time = ts;
	e->seq = w->seq++;
	e->pid = rpid;
	e->moved = 1;
	if (idx_put(&w->idx, code_index, (uint32_t)(jd->n - 1)) < 0)
		return NOMEM();
	return 0;
}

/* JIT_CODE_DEBUG_INFO: a line table, checked entry by entry and counted for the LOAD of its
 * address that follows. */
static int rec_debug(struct walk *w, struct pfc_cursor *c, uint64_t pos, uint64_t total)
{
	struct pfc_error *err = w->err;
	uint64_t addr, nr, k;

	if (total - REC_HDR < DEBUG_FIXED)
		return CORRUPT(pos, "jitdump DEBUG_INFO record of %llu bytes (at least %u)", (unsigned long long)total,
			       REC_HDR + DEBUG_FIXED);
	addr = pfc_cur_u64(c);
	nr = pfc_cur_u64(c);
	/* each entry takes at least DEBUG_ENTRY + 1 bytes: reject a count the record cannot hold
	 * before walking it */
	if (nr > pfc_cur_left(c) / (DEBUG_ENTRY + 1))
		return CORRUPT(pos, "jitdump DEBUG_INFO record: %llu entries do not fit in %llu bytes",
			       (unsigned long long)nr, (unsigned long long)pfc_cur_left(c));
	for (k = 0; k < nr; k++) {
		size_t fl;
		(void)pfc_cur_u64(c);	/* addr */
		(void)pfc_cur_u32(c);	/* line */
		(void)pfc_cur_u32(c);	/* discrim */
		fl = strnlen((const char *)c->p, pfc_cur_left(c));
		if (c->bad || fl == pfc_cur_left(c))
			return CORRUPT(pos, "jitdump DEBUG_INFO record: entry %llu runs past the record",
				       (unsigned long long)k);
		c->p += fl + 1;
	}
	w->jd->nr_debug++;
	w->pending_addr = addr;
	w->pending_lines = nr > UINT32_MAX ? UINT32_MAX : (uint32_t)nr;
	w->have_pending = 1;
	return 0;
}

/* JIT_CODE_UNWINDING_INFO: its sizes checked against the record, counted. */
static int rec_unwind(struct walk *w, struct pfc_cursor *c, uint64_t pos, uint64_t total)
{
	struct pfc_error *err = w->err;
	uint64_t data_size, hdr_sz;

	if (total - REC_HDR < UNWIND_FIXED)
		return CORRUPT(pos, "jitdump UNWINDING_INFO record of %llu bytes (at least %u)",
			       (unsigned long long)total, REC_HDR + UNWIND_FIXED);
	data_size = pfc_cur_u64(c);
	hdr_sz = pfc_cur_u64(c);
	(void)pfc_cur_u64(c);	/* mapped_size */
	if (data_size > pfc_cur_left(c) || hdr_sz > data_size)
		return CORRUPT(pos, "jitdump UNWINDING_INFO record: %llu bytes of unwinding data "
			       "(%llu of .eh_frame_hdr) in %llu bytes", (unsigned long long)data_size,
			       (unsigned long long)hdr_sz, (unsigned long long)pfc_cur_left(c));
	w->jd->nr_unwind++;
	return 0;
}

/* The records from pos on, until the end, a CLOSE record or a record the writer had not
 * finished (jd->truncated). */
static int walk_records(struct walk *w, const uint8_t *buf, size_t len, uint64_t pos)
{
	struct pfc_jitdump *jd = w->jd;
	struct pfc_error *err = w->err;
	struct pfc_cursor c;

	while (pos < len) {
		uint64_t left = len - pos, total, ts;
		uint32_t id;
		const uint8_t *r = buf + pos;
		int ret = 0;

		if (left < REC_HDR)	/* a record header being written */
			break;
		id = pfc_ld32(r, jd->swap);
		total = pfc_ld32(r + 4, jd->swap);
		ts = pfc_ld64(r + 8, jd->swap);
		if (total < REC_HDR)
			return CORRUPT(pos, "jitdump record %u of %llu bytes (the header alone is %u)", id,
				       (unsigned long long)total, REC_HDR);
		if (total > left) {	/* the writer had not finished this record */
			/* a load's fixed part (pid, tid, vma, code_addr, code_size) tells what it
			 * was to name: the code it would have named, and nothing else, is lost */
			if (id == PFC_JIT_CODE_LOAD && left >= REC_HDR + 32) {
				jd->cut_start = pfc_ld64(r + REC_HDR + 16, jd->swap);
				jd->cut_end = jd->cut_start + pfc_ld64(r + REC_HDR + 24, jd->swap);
				if (jd->cut_end < jd->cut_start)
					jd->cut_start = jd->cut_end = 0;
			}
			break;
		}
		pfc_cur_init(&c, r + REC_HDR, total - REC_HDR, jd->swap);
		switch (id) {
		case PFC_JIT_CODE_LOAD:
			ret = rec_load(w, &c, pos, total, ts);
			break;
		case PFC_JIT_CODE_MOVE:
			ret = rec_move(w, &c, pos, total, ts);
			break;
		case PFC_JIT_CODE_DEBUG_INFO:
			ret = rec_debug(w, &c, pos, total);
			break;
		case PFC_JIT_CODE_UNWINDING_INFO:
			ret = rec_unwind(w, &c, pos, total);
			break;
		case PFC_JIT_CODE_CLOSE:
			jd->nr_close++;
			return 0;	/* nothing of the writer's follows */
		default:	/* newer record types are skipped by their size */
			jd->nr_unknown++;
			break;
		}
		if (ret < 0)
			return ret;
		pos += total;
	}
	if (pos < len) {
		jd->truncated = 1;
		jd->truncated_at = pos;
	}
	return 0;
}

int pfc_jitdump_parse(struct pfc_jitdump *jd, const uint8_t *buf, size_t len, struct pfc_error *err)
{
	struct walk w = { .jd = jd, .err = err };
	uint64_t hdr_size = 0;
	size_t i;
	int ret;

	memset(jd, 0, sizeof(*jd));
	if ((ret = parse_header(jd, buf, len, &hdr_size, err)) < 0)
		return ret;
	jd->min_time = UINT64_MAX;
	ret = walk_records(&w, buf, len, hdr_size);
	free(w.idx.key);
	free(w.idx.val);
	if (ret < 0)
		goto fail;
	if (!jd->n)
		jd->min_time = 0;
	if (jd->n) {	/* by address, for the range index */
		qsort(jd->v, jd->n, sizeof(*jd->v), cmp_ent);
		if (pfc_ivindex_init(&jd->ix, jd->n) < 0) {
			ret = NOMEM();
			goto fail;
		}
		for (i = 0; i < jd->n; i++)
			pfc_ivindex_set(&jd->ix, i, jd->v[i].start, jd->v[i].end);
		pfc_ivindex_finish(&jd->ix);
	}
	return 0;
fail:
	pfc_jitdump_free(jd);
	return ret;
}

int pfc_jitdump_load(struct pfc_jitdump *jd, const char *path, struct pfc_error *err)
{
	char *buf;
	size_t got;
	int ret = pfc_read_file(path, (uint64_t)1 << 34, &buf, &got);

	memset(jd, 0, sizeof(*jd));
	if (ret == PFC_READ_OPEN)
		return PFC_FAIL_NOOFF(err, OPEN, "cannot open '%s'", path);
	if (ret == PFC_READ_NOT_FILE)
		return PFC_FAIL_NOOFF(err, OPEN, "'%s' is not a regular file of a plausible size", path);
	if (ret < 0)
		return PFC_FAIL_NOOFF(err, NOMEM, "jitdump");
	ret = pfc_jitdump_parse(jd, (const uint8_t *)buf, got, err);
	free(buf);
	return ret;
}

void pfc_jitdump_free(struct pfc_jitdump *jd)
{
	free(jd->v);
	pfc_ivindex_free(&jd->ix);
	free(jd->names);
	memset(jd, 0, sizeof(*jd));
}

const struct pfc_jitdump_ent *pfc_jitdump_find(const struct pfc_jitdump *jd, uint64_t addr, uint64_t time,
					       int use_time)
{
	const struct pfc_jitdump_ent *best = NULL;
	size_t i;

	for (i = pfc_ivindex_first(&jd->ix, addr); i != SIZE_MAX; i = pfc_ivindex_next(&jd->ix, addr, i)) {
		const struct pfc_jitdump_ent *e = &jd->v[i];
		if (use_time && e->time > time)
			continue;
		/* the latest load wins: perf inject maps each load at its time, and a later
		 * mapping covers what an earlier one had at the same addresses */
		if (!best || (use_time ? (e->time > best->time || (e->time == best->time && e->seq > best->seq))
				       : e->seq > best->seq))
			best = e;
	}
	return best;
}
