/*
 * reader.c - opens a perf.data file or stream and walks its records.  File mode maps the
 * whole file and hands out records in place; pipe mode (and stdin) reads a stream into a
 * growing buffer.  Header information that arrives as records in pipe mode (HEADER_ATTR,
 * HEADER_FEATURE, EVENT_UPDATE, HEADER_TRACING_DATA, ID_INDEX) is absorbed here, and
 * COMPRESSED/COMPRESSED2 records are expanded with one zstd stream per file, carrying a
 * record split across two compressed chunks.  Every size is checked before use.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include "converter/util/bytes.h"
#include "converter/perffile/reader.h"

#define STREAM_CHUNK (1u << 20)
#define MAX_ZBUF (256u << 20)

static int add_id(struct pfc_reader *r, uint64_t id, struct pfc_evsel *ev);

/* ---- evsels and ids ---- */

static struct pfc_evsel *evsel_new(struct pfc_reader *r)
{
	struct pfc_evsel *ev;

	if (r->nr_evsels == r->cap_evsels) {
		size_t cap = r->cap_evsels ? r->cap_evsels * 2 : 4;
		struct pfc_evsel **n = realloc(r->evsels, cap * sizeof(*n));
		if (!n)
			return NULL;
		r->evsels = n;
		r->cap_evsels = cap;
	}
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return NULL;
	ev->idx = (int)r->nr_evsels;
	r->evsels[r->nr_evsels++] = ev;
	return ev;
}

static int evsel_add_id(struct pfc_evsel *ev, uint64_t id)
{
	if (ev->nr_ids == ev->cap_ids) {
		size_t cap = ev->cap_ids ? ev->cap_ids * 2 : 4;
		uint64_t *n = realloc(ev->ids, cap * sizeof(*n));
		if (!n)
			return -1;
		ev->ids = n;
		ev->cap_ids = cap;
	}
	ev->ids[ev->nr_ids++] = id;
	return 0;
}

static size_t id_hash(uint64_t id, size_t cap)
{
	id *= 0x9E3779B97F4A7C15ULL;
	return (size_t)(id >> 17) & (cap - 1);
}

static int add_id(struct pfc_reader *r, uint64_t id, struct pfc_evsel *ev)
{
	size_t i;

	if ((r->id_count + 1) * 2 > r->id_cap) {
		size_t cap = r->id_cap ? r->id_cap * 2 : 64, j;
		uint64_t *keys = calloc(cap, sizeof(*keys));
		struct pfc_evsel **vals = calloc(cap, sizeof(*vals));
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -1;
		}
		for (j = 0; j < r->id_cap; j++) {
			if (!r->id_vals[j])
				continue;
			i = id_hash(r->id_keys[j], cap);
			while (vals[i])
				i = (i + 1) & (cap - 1);
			keys[i] = r->id_keys[j];
			vals[i] = r->id_vals[j];
		}
		free(r->id_keys);
		free(r->id_vals);
		r->id_keys = keys;
		r->id_vals = vals;
		r->id_cap = cap;
	}
	i = id_hash(id, r->id_cap);
	while (r->id_vals[i]) {
		if (r->id_keys[i] == id) {
			r->id_vals[i] = ev;
			return 0;
		}
		i = (i + 1) & (r->id_cap - 1);
	}
	r->id_keys[i] = id;
	r->id_vals[i] = ev;
	r->id_count++;
	return 0;
}

struct pfc_evsel *pfc_reader_find_id(const struct pfc_reader *r, uint64_t id)
{
	size_t i;

	if (!r->id_cap)
		return NULL;
	i = id_hash(id, r->id_cap);
	while (r->id_vals[i]) {
		if (r->id_keys[i] == id)
			return r->id_vals[i];
		i = (i + 1) & (r->id_cap - 1);
	}
	return NULL;
}

/* perf's __evsel__calc_id_pos / __evsel__calc_is_pos, from the first evsel. */
static void update_positions(struct pfc_reader *r)
{
	uint64_t st;

	if (!r->nr_evsels)
		return;
	st = r->evsels[0]->attr.sample_type;
	r->sample_id_all = r->evsels[0]->attr.sample_id_all;
	if (st & PERF_SAMPLE_IDENTIFIER) {
		r->id_pos = 0;
		r->is_pos = 1;
		return;
	}
	if (!(st & PERF_SAMPLE_ID)) {
		r->id_pos = r->is_pos = -1;
		return;
	}
	r->id_pos = !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
		    !!(st & PERF_SAMPLE_ADDR);
	r->is_pos = 1 + !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID);
}

struct pfc_evsel *pfc_reader_evsel_of_ids(const struct pfc_reader *r, const struct pfc_rec *rec)
{
	struct pfc_evsel *ev = NULL;
	uint64_t body = rec->size - 8;
	const uint8_t *b = rec->data + 8;

	if (!r->nr_evsels)
		return NULL;
	if (r->nr_evsels == 1)
		return r->evsels[0];
	if (rec->type == PERF_RECORD_SAMPLE) {
		if (r->id_pos >= 0 && (uint64_t)(r->id_pos + 1) * 8 <= body)
			ev = pfc_reader_find_id(r, pfc_ld64(b + r->id_pos * 8, r->swap));
	} else if (rec->type < 64 && r->sample_id_all && r->is_pos > 0 &&
		   (uint64_t)r->is_pos * 8 <= body) {
		ev = pfc_reader_find_id(r, pfc_ld64(b + body - r->is_pos * 8, r->swap));
	}
	return ev ? ev : r->evsels[0];
}

/* ---- feature payloads the reader itself needs ---- */

static const char *blob_string(const struct pfc_blob *b, struct pfc_cursor *c, uint32_t *lenp)
{
	uint32_t len = pfc_cur_u32(c);
	const uint8_t *s = pfc_cur_bytes(c, len);
	(void)b;
	if (!s)
		return NULL;
	*lenp = len;
	return (const char *)s;
}

static char *dup_bounded(const char *s, uint32_t len)
{
	size_t n = strnlen(s, len);
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

/* EVENT_DESC: names and ids of each event.  Matched to evsels by their first id, else by
 * position. */
static int parse_event_desc(struct pfc_reader *r)
{
	const struct pfc_blob *b = &r->feat[PFC_FEAT_EVENT_DESC];
	struct pfc_cursor c;
	uint32_t nr, asz, i;

	pfc_cur_init(&c, b->data, b->size, r->swap);
	nr = pfc_cur_u32(&c);
	asz = pfc_cur_u32(&c);
	if (c.bad || asz < PERF_ATTR_SIZE_VER0)
		return 0;
	for (i = 0; i < nr && !c.bad; i++) {
		struct pfc_evsel *ev = NULL;
		uint32_t nr_ids, slen;
		const char *name;
		const uint8_t *ids;

		if (!pfc_cur_bytes(&c, asz))
			break;
		nr_ids = pfc_cur_u32(&c);
		name = blob_string(b, &c, &slen);
		if (!name)
			break;
		if (nr_ids > pfc_cur_left(&c) / 8)
			break;
		ids = pfc_cur_bytes(&c, (uint64_t)nr_ids * 8);
		if (nr_ids)
			ev = pfc_reader_find_id(r, pfc_ld64(ids, r->swap));
		if (!ev && i < r->nr_evsels)
			ev = r->evsels[i];
		if (!ev)
			continue;
		if (!ev->name)
			ev->name = dup_bounded(name, slen);
	}
	return 0;
}

static void parse_compressed_feat(struct pfc_reader *r)
{
	const struct pfc_blob *b = &r->feat[PFC_FEAT_COMPRESSED];
	struct pfc_cursor c;

	pfc_cur_init(&c, b->data, b->size, r->swap);
	(void)pfc_cur_u32(&c);	/* version */
	(void)pfc_cur_u32(&c);	/* type */
	(void)pfc_cur_u32(&c);	/* level */
	(void)pfc_cur_u32(&c);	/* ratio */
	r->comp_mmap_len = pfc_cur_u32(&c);
	if (c.bad)
		r->comp_mmap_len = 0;
}

/* ---- open ---- */

/* Make at least `n` bytes available at sbuf_pos; returns what is available (less at EOF). */
static int stream_fill(struct pfc_reader *r, size_t n, size_t *avail)
{
	if (r->sbuf_len - r->sbuf_pos >= n || r->eof) {
		*avail = r->sbuf_len - r->sbuf_pos;
		return 0;
	}
	if (r->sbuf_pos) {
		memmove(r->sbuf, r->sbuf + r->sbuf_pos, r->sbuf_len - r->sbuf_pos);
		r->sbuf_len -= r->sbuf_pos;
		r->stream_off += r->sbuf_pos;
		r->sbuf_pos = 0;
	}
	if (n + STREAM_CHUNK > r->sbuf_cap) {
		size_t cap = n + STREAM_CHUNK;
		uint8_t *nb = realloc(r->sbuf, cap);
		if (!nb)
			return PFC_FAIL_NOOFF(r->err, NOMEM, "stream buffer of %zu bytes", cap);
		r->sbuf = nb;
		r->sbuf_cap = cap;
	}
	while (r->sbuf_len < n && !r->eof) {
		ssize_t got = read(r->fd, r->sbuf + r->sbuf_len, r->sbuf_cap - r->sbuf_len);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return PFC_FAIL(r->err, IO, r->stream_off + r->sbuf_len, "%s", strerror(errno));
		}
		if (got == 0)
			r->eof = 1;
		r->sbuf_len += (size_t)got;
	}
	*avail = r->sbuf_len - r->sbuf_pos;
	return 0;
}

static int check_section(struct pfc_reader *r, const struct pfc_file_section *s, const char *what,
			 uint64_t hdr_off)
{
	if (s->offset > r->map_size || s->size > r->map_size - s->offset)
		return PFC_FAIL(r->err, TRUNCATED, hdr_off,
				"%s section [%llu, +%llu) lies beyond the end of the file (%llu bytes)",
				what, (unsigned long long)s->offset, (unsigned long long)s->size,
				(unsigned long long)r->map_size);
	return 0;
}

static int open_file_mode(struct pfc_reader *r)
{
	const uint8_t *h = r->map;
	int swap = r->swap, ret, bit, k = 0;
	uint64_t i, n, hsize;

	if (r->map_size < PFC_FILE_HEADER_SIZE)
		return PFC_FAIL(r->err, TRUNCATED, r->map_size,
				"file header needs %d bytes, file has %llu", PFC_FILE_HEADER_SIZE,
				(unsigned long long)r->map_size);
	hsize = pfc_ld64(h + 8, swap);
	if (hsize < PFC_FILE_HEADER_SIZE)
		return PFC_FAIL(r->err, BAD_HEADER, 8, "header size %llu is too small",
				(unsigned long long)hsize);
	r->attr_size = pfc_ld64(h + 16, swap);
	r->attrs.offset = pfc_ld64(h + 24, swap);
	r->attrs.size = pfc_ld64(h + 32, swap);
	r->data.offset = pfc_ld64(h + 40, swap);
	r->data.size = pfc_ld64(h + 48, swap);
	r->event_types.offset = pfc_ld64(h + 56, swap);
	r->event_types.size = pfc_ld64(h + 64, swap);
	for (i = 0; i < 4; i++)
		r->feat_bitmap[i] = pfc_ld64(h + 72 + i * 8, swap);
	if ((ret = check_section(r, &r->attrs, "attrs", 24)) < 0)
		return ret;
	if ((ret = check_section(r, &r->data, "data", 40)) < 0)
		return ret;
	/* perf record writes this header twice: when it starts, with the attrs, an empty data
	 * section and the bitmap of the features it means to write, and again when it ends.  A
	 * perf killed in between (SIGKILL, the OOM killer, a container stopped) leaves the first:
	 * the records it wrote run to the end of the file and no feature section exists, so
	 * the bitmap's table would be read from inside the records. */
	if (!r->data.size && r->data.offset >= hsize && r->data.offset < r->map_size) {
		r->unfinished = 1;
		r->data.size = r->map_size - r->data.offset;
		memset(r->feat_bitmap, 0, sizeof(r->feat_bitmap));
	}
	if (r->attr_size < PERF_ATTR_SIZE_VER0 + 16 || r->attr_size > 65536)
		return PFC_FAIL(r->err, BAD_HEADER, 16, "attr size %llu is invalid",
				(unsigned long long)r->attr_size);
	n = r->attrs.size / r->attr_size;
	for (i = 0; i < n; i++) {
		uint64_t off = r->attrs.offset + i * r->attr_size, j;
		const uint8_t *p = r->map + off;
		struct pfc_file_section ids;
		struct pfc_evsel *ev = evsel_new(r);

		if (!ev)
			return PFC_FAIL_NOOFF(r->err, NOMEM, "evsel");
		if (pfc_attr_load(&ev->attr, &ev->attr_size, p, r->attr_size - 16, swap) < 0)
			return PFC_FAIL(r->err, BAD_ATTR, off, "attr size does not fit its entry");
		ids.offset = pfc_ld64(p + r->attr_size - 16, swap);
		ids.size = pfc_ld64(p + r->attr_size - 8, swap);
		if ((ret = check_section(r, &ids, "ids", off + r->attr_size - 16)) < 0)
			return ret;
		for (j = 0; j < ids.size / 8; j++) {
			uint64_t id = pfc_ld64(r->map + ids.offset + j * 8, swap);
			if (evsel_add_id(ev, id) < 0 || add_id(r, id, ev) < 0)
				return PFC_FAIL_NOOFF(r->err, NOMEM, "ids");
		}
		pfc_evsel_prepare(ev);
	}
	if (!r->nr_evsels)
		return PFC_FAIL(r->err, BAD_HEADER, 24, "file has no event attributes");
	update_positions(r);

	/* The feature section table follows the data section, one entry per set bit. */
	r->feat_offset = r->data.offset + r->data.size;
	for (bit = 0; bit < PFC_FEAT_BITS; bit++) {
		uint64_t off;
		struct pfc_file_section s;

		if (!((r->feat_bitmap[bit / 64] >> (bit % 64)) & 1))
			continue;
		off = r->feat_offset + (uint64_t)k * 16;
		k++;
		if (off > r->map_size || r->map_size - off < 16)
			return PFC_FAIL(r->err, TRUNCATED, off,
					"feature section table entry for feature %d lies beyond the end of the file",
					bit);
		s.offset = pfc_ld64(r->map + off, swap);
		s.size = pfc_ld64(r->map + off + 8, swap);
		if (s.offset > r->map_size || s.size > r->map_size - s.offset)
			return PFC_FAIL(r->err, TRUNCATED, off,
					"feature %d section [%llu, +%llu) lies beyond the end of the file",
					bit, (unsigned long long)s.offset, (unsigned long long)s.size);
		r->feat[bit].data = r->map + s.offset;
		r->feat[bit].size = s.size;
	}
	if (pfc_feat_has(r, PFC_FEAT_EVENT_DESC))
		parse_event_desc(r);
	if (pfc_feat_has(r, PFC_FEAT_COMPRESSED))
		parse_compressed_feat(r);
	if (pfc_feat_has(r, PFC_FEAT_TRACING_DATA))
	{
		r->tracing_data = r->feat[PFC_FEAT_TRACING_DATA];
		r->tracing_data_offset = (uint64_t)(r->tracing_data.data - r->map);
	}
	return 0;
}

int pfc_reader_open(struct pfc_reader *r, const char *path, struct pfc_error *err)
{
	struct stat st;
	uint8_t head[16];
	uint64_t magic, hsize;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->err = err;
	r->fd = -1;
	r->id_pos = r->is_pos = -1;
	if (!strcmp(path, "-")) {
		r->fd = 0;
	} else {
		r->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0)
			return pfc_error_set(err, PFC_ERR_OPEN, 0, 0, __FILE__, __LINE__, "%s",
					     strerror(errno));
	}
	if (fstat(r->fd, &st) == 0) {
		r->mtime = (long long)st.st_mtime;
		r->have_mtime = 1;
		if (S_ISDIR(st.st_mode))
			return PFC_FAIL_NOOFF(err, UNSUPPORTED,
					      "is a directory (perf record --threads output is not supported yet)");
	}
	if (r->fd != 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, r->fd, 0);
		if (m == MAP_FAILED)
			return PFC_FAIL_NOOFF(err, IO, "mmap: %s", strerror(errno));
		r->map = m;
		r->map_size = (uint64_t)st.st_size;
		r->bytes_total = r->map_size;
		madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
		if (r->map_size < 16)
			return PFC_FAIL(err, TRUNCATED, r->map_size, "file is too short for a perf.data header");
		memcpy(head, r->map, 16);
	} else {
		size_t avail;
		int ret;
		r->streaming = 1;
		if (S_ISREG(st.st_mode))
			r->bytes_total = (uint64_t)st.st_size;
		if ((ret = stream_fill(r, 16, &avail)) < 0)
			return ret;
		if (avail < 16)
			return PFC_FAIL(err, TRUNCATED, avail, "input is too short for a perf.data header");
		memcpy(head, r->sbuf, 16);
	}
	magic = pfc_ld64(head, 0);
	if (magic == PFC_MAGIC2) {
		r->swap = 0;
	} else if (magic == PFC_MAGIC2_SW) {
		r->swap = 1;
	} else if (magic == PFC_MAGIC1) {
		return PFC_FAIL(err, UNSUPPORTED, 0, "version 1 perf.data (magic PERFFILE) is not supported");
	} else {
		return PFC_FAIL(err, BAD_MAGIC, 0, "expected PERFILE2");
	}
	hsize = pfc_ld64(head + 8, r->swap);
	if (hsize == PFC_PIPE_HEADER_SIZE) {
		r->pipe_mode = 1;
		if (r->streaming)
			r->sbuf_pos = 16;
		return 0;
	}
	if (r->streaming)
		return PFC_FAIL(err, UNSUPPORTED, 8,
				"a file-mode perf.data cannot be read from a pipe; record with 'perf record -o -'");
	return open_file_mode(r);
}

void pfc_reader_release(struct pfc_reader *r, uint64_t upto)
{
	uint64_t page = 1 << 21, start, end;	/* in 2 MiB steps: few system calls */

	if (!r->map || upto > r->map_size)
		return;
	start = r->released & ~(page - 1);
	end = upto & ~(page - 1);
	if (end <= start || end - start < page)
		return;
	madvise((void *)(r->map + start), (size_t)(end - start), MADV_DONTNEED);
	r->released = end;
}

void pfc_reader_close(struct pfc_reader *r)
{
	size_t i;

	if (r->map)
		munmap((void *)r->map, (size_t)r->map_size);
	if (r->fd > 0)
		close(r->fd);
	for (i = 0; i < r->nr_evsels; i++) {
		free(r->evsels[i]->name);
		free(r->evsels[i]->ids);
		free(r->evsels[i]);
	}
	free(r->evsels);
	free(r->id_keys);
	free(r->id_vals);
	for (i = 0; i < PFC_FEAT_BITS; i++)
		free(r->feat_owned[i]);
	free(r->tracing_data_owned);
	if (r->zstd)
		ZSTD_freeDStream(r->zstd);
	free(r->zbuf);
	free(r->sbuf);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

/* ---- pipe-mode header records ---- */

static int on_header_attr(struct pfc_reader *r, const uint8_t *p, uint32_t size, uint64_t off)
{
	struct pfc_evsel *ev = evsel_new(r);
	uint64_t i, nids;

	if (!ev)
		return PFC_FAIL_NOOFF(r->err, NOMEM, "evsel");
	if (pfc_attr_load(&ev->attr, &ev->attr_size, p + 8, size - 8, r->swap) < 0)
		return PFC_FAIL(r->err, BAD_ATTR, off, "HEADER_ATTR record is shorter than its attr");
	nids = (size - 8 - ev->attr_size) / 8;
	for (i = 0; i < nids; i++) {
		uint64_t id = pfc_ld64(p + 8 + ev->attr_size + i * 8, r->swap);
		if (evsel_add_id(ev, id) < 0 || add_id(r, id, ev) < 0)
			return PFC_FAIL_NOOFF(r->err, NOMEM, "ids");
	}
	pfc_evsel_prepare(ev);
	update_positions(r);
	return 0;
}

static int on_header_feature(struct pfc_reader *r, const uint8_t *p, uint32_t size, uint64_t off)
{
	uint64_t feat;
	uint8_t *copy;

	if (size < 16)
		return PFC_FAIL(r->err, CORRUPT, off, "HEADER_FEATURE record of %u bytes", size);
	feat = pfc_ld64(p + 8, r->swap);
	if (feat >= PFC_FEAT_BITS)
		return 0;	/* an end-of-features sentinel of a newer perf, or junk: ignore */
	if (size == 16 && feat >= PFC_FEAT_LAST_KNOWN)
		return 0;	/* the HEADER_LAST_FEATURE sentinel */
	copy = malloc(size - 16 + 1);
	if (!copy)
		return PFC_FAIL_NOOFF(r->err, NOMEM, "feature");
	memcpy(copy, p + 16, size - 16);
	free(r->feat_owned[feat]);
	r->feat_owned[feat] = copy;
	r->feat[feat].data = copy;
	r->feat[feat].size = size - 16;
	r->feat_bitmap[feat / 64] |= 1ULL << (feat % 64);
	if (feat == PFC_FEAT_EVENT_DESC)
		parse_event_desc(r);
	else if (feat == PFC_FEAT_COMPRESSED)
		parse_compressed_feat(r);
	return 0;
}

static int on_event_update(struct pfc_reader *r, const uint8_t *p, uint32_t size)
{
	uint64_t type, id;
	struct pfc_evsel *ev;

	if (size < 24)
		return 0;
	type = pfc_ld64(p + 8, r->swap);
	id = pfc_ld64(p + 16, r->swap);
	ev = pfc_reader_find_id(r, id);
	if (!ev || type != 2 /* PERF_EVENT_UPDATE__NAME */)
		return 0;
	free(ev->name);
	ev->name = dup_bounded((const char *)p + 24, size - 24);
	return 0;
}

static int on_id_index(struct pfc_reader *r, const uint8_t *p, uint32_t size)
{
	uint64_t nr, i, per = 32;

	if (size < 16)
		return 0;
	nr = pfc_ld64(p + 8, r->swap);
	if (nr > (size - 16) / per)
		nr = (size - 16) / per;
	for (i = 0; i < nr; i++) {
		const uint8_t *e = p + 16 + i * per;
		uint64_t id = pfc_ld64(e, r->swap), idx = pfc_ld64(e + 8, r->swap);
		if (idx < r->nr_evsels && !pfc_reader_find_id(r, id))
			if (add_id(r, id, r->evsels[idx]) < 0)
				return PFC_FAIL_NOOFF(r->err, NOMEM, "ids");
	}
	return 0;
}

/* ---- records ---- */

static int run_buffer(struct pfc_reader *r, const uint8_t *buf, size_t len, uint64_t off,
		      size_t *consumed, pfc_rec_fn fn, void *ctx);

static int decompress(struct pfc_reader *r, const uint8_t *src, size_t len, uint64_t off,
		      pfc_rec_fn fn, void *ctx)
{
	ZSTD_inBuffer in = { src, len, 0 };

	if (!r->zstd) {
		r->zstd = ZSTD_createDStream();
		if (!r->zstd || ZSTD_isError(ZSTD_initDStream(r->zstd)))
			return PFC_FAIL_NOOFF(r->err, NOMEM, "zstd stream");
	}
	while (in.pos < in.size) {
		ZSTD_outBuffer out;
		size_t ret, used = 0;
		int err;

		if (r->zbuf_cap - r->zbuf_len < 65536) {
			size_t cap = r->zbuf_cap ? r->zbuf_cap * 2 : (r->comp_mmap_len > 65536 ? r->comp_mmap_len * 2 : 1u << 20);
			uint8_t *nb;
			if (cap > MAX_ZBUF)
				return PFC_FAIL(r->err, ZSTD, off, "a decompressed record is larger than %u bytes", MAX_ZBUF);
			nb = realloc(r->zbuf, cap);
			if (!nb)
				return PFC_FAIL_NOOFF(r->err, NOMEM, "zstd buffer");
			r->zbuf = nb;
			r->zbuf_cap = cap;
		}
		out.dst = r->zbuf;
		out.size = r->zbuf_cap;
		out.pos = r->zbuf_len;
		ret = ZSTD_decompressStream(r->zstd, &out, &in);
		if (ZSTD_isError(ret))
			return PFC_FAIL(r->err, ZSTD, off, "compressed record: %s", ZSTD_getErrorName(ret));
		r->zbuf_len = out.pos;
		err = run_buffer(r, r->zbuf, r->zbuf_len, off, &used, fn, ctx);
		if (err < 0)
			return err;
		/* A record cut by the end of this chunk waits for the next one. */
		memmove(r->zbuf, r->zbuf + used, r->zbuf_len - used);
		r->zbuf_len -= used;
		if (ret == 0 && in.pos == in.size)
			break;
	}
	return 0;
}

/* Bytes a record occupies in the stream: header.size plus any payload that follows it. */
static int record_extent(struct pfc_reader *r, const uint8_t *p, size_t avail, uint64_t off,
			 uint32_t *type, uint16_t *misc, uint32_t *size, uint64_t *extent)
{
	*type = pfc_ld32(p, r->swap);
	*misc = pfc_ld16(p + 4, r->swap);
	*size = pfc_ld16(p + 6, r->swap);
	if (*type >= 32768)	/* simpleperf: 32-bit size split across misc and size */
		*size = (uint32_t)*misc << 16 | *size;
	if (*size < 8 || *type == 0)
		return PFC_FAIL(r->err, CORRUPT, off, "record of type %u has invalid size %u", *type, *size);
	*extent = *size;
	if (*type == PFC_REC_HEADER_TRACING_DATA && r->pipe_mode) {
		if (*size < 12 || avail < 12)
			return *size < 12 ? PFC_FAIL(r->err, CORRUPT, off, "short HEADER_TRACING_DATA") : 1;
		*extent += pfc_ld32(p + 8, r->swap);
	} else if (*type == PFC_REC_AUXTRACE) {
		if (*size < 16)
			return PFC_FAIL(r->err, CORRUPT, off, "short AUXTRACE record");
		if (avail < 16)
			return 1;
		*extent += pfc_ld64(p + 8, r->swap);
	}
	return 0;
}

static int dispatch(struct pfc_reader *r, const uint8_t *p, uint32_t type, uint16_t misc, uint32_t size,
		    uint64_t extent, uint64_t off, int transient, int compressed, pfc_rec_fn fn, void *ctx)
{
	struct pfc_rec rec;
	int ret = 0;

	if (r->sync && pfc_rec_changes_state(type) && (ret = r->sync(r->sync_ctx)) < 0)
		return ret;
	switch (type) {
	case PFC_REC_HEADER_ATTR:
		ret = on_header_attr(r, p, size, off);
		break;
	case PFC_REC_HEADER_FEATURE:
		ret = on_header_feature(r, p, size, off);
		break;
	case PFC_REC_EVENT_UPDATE:
		ret = on_event_update(r, p, size);
		break;
	case PFC_REC_ID_INDEX:
		ret = on_id_index(r, p, size);
		break;
	case PFC_REC_HEADER_TRACING_DATA:
		if (extent > size) {
			free(r->tracing_data_owned);
			r->tracing_data_owned = malloc(extent - size);
			if (!r->tracing_data_owned)
				return PFC_FAIL_NOOFF(r->err, NOMEM, "tracing data");
			memcpy(r->tracing_data_owned, p + size, extent - size);
			r->tracing_data.data = r->tracing_data_owned;
			r->tracing_data.size = extent - size;
			r->tracing_data_offset = off + size;
		}
		break;
	default:
		break;
	}
	if (ret < 0)
		return ret;
	rec.type = type;
	rec.misc = misc;
	rec.size = size;
	rec.data = p;
	rec.offset = off;
	rec.transient = transient;
	rec.compressed = compressed;
	ret = fn(ctx, &rec);
	if (ret < 0)
		return ret;
	if (type == PFC_REC_COMPRESSED) {
		if (compressed)
			return PFC_FAIL(r->err, CORRUPT, off, "compressed record inside a compressed record");
		return decompress(r, p + 8, size - 8, off, fn, ctx);
	}
	if (type == PFC_REC_COMPRESSED2) {
		uint64_t dsz;
		if (compressed)
			return PFC_FAIL(r->err, CORRUPT, off, "compressed record inside a compressed record");
		if (size < 16)
			return PFC_FAIL(r->err, CORRUPT, off, "short COMPRESSED2 record");
		dsz = pfc_ld64(p + 8, r->swap);
		if (dsz > size - 16)
			return PFC_FAIL(r->err, CORRUPT, off, "COMPRESSED2 data size %llu exceeds the record",
					(unsigned long long)dsz);
		return decompress(r, p + 16, dsz, off, fn, ctx);
	}
	return 0;
}

/* Walk the complete records of an in-memory buffer (decompressed data). */
static int run_buffer(struct pfc_reader *r, const uint8_t *buf, size_t len, uint64_t off,
		      size_t *consumed, pfc_rec_fn fn, void *ctx)
{
	size_t pos = 0;

	while (len - pos >= 8) {
		uint32_t type, size;
		uint16_t misc;
		uint64_t extent;
		int ret = record_extent(r, buf + pos, len - pos, off, &type, &misc, &size, &extent);

		if (ret < 0)
			return ret;
		if (ret > 0 || extent > len - pos)
			break;
		ret = dispatch(r, buf + pos, type, misc, size, extent, off, 1, 1, fn, ctx);
		if (ret < 0)
			return ret;
		pos += extent;
	}
	*consumed = pos;
	return 0;
}

static int looks_like_text(const uint8_t *p, size_t n)
{
	size_t i, printable = 0;

	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++)
		if ((p[i] >= 32 && p[i] < 127) || p[i] == '\n' || p[i] == '\t' || p[i] == '\r')
			printable++;
	return n && printable * 10 >= n * 9;
}

static void warn_junk(struct pfc_reader *r, uint64_t off, uint64_t len, const char *why)
{
	r->junk_bytes += len;
	if (r->warn)
		fprintf(r->warn, "perfconv: warning: '%s': ignoring %llu bytes at offset %llu after the end of the stream (%s)\n",
			r->path, (unsigned long long)len, (unsigned long long)off, why);
}

static int run_mapped(struct pfc_reader *r, uint64_t start, uint64_t end, pfc_rec_fn fn, void *ctx)
{
	uint64_t pos = start;

	while (pos < end) {
		uint32_t type, size;
		uint16_t misc;
		uint64_t extent;
		const uint8_t *p = r->map + pos;
		int ret;

		/* the hardware prefetcher stops at page boundaries: ask for the next lines */
		if (end - pos > 1024)
			__builtin_prefetch(p + 1024);
		if (end - pos < 8) {
			if (r->pipe_mode || r->unfinished) {
				warn_junk(r, pos, end - pos, "partial record header");
				break;
			}
			return PFC_FAIL(r->err, TRUNCATED, pos, "record header cut by the end of the data section");
		}
		/* a kernel record (types 1 to 63), whole: nothing but the callback to do, which is
		 * what record_extent and dispatch come to for it */
		type = pfc_ld32(p, r->swap);
		size = pfc_ld16(p + 6, r->swap);
		if (type - 1 < 63 && size >= 8 && size <= end - pos) {
			struct pfc_rec rec = { .type = type, .misc = pfc_ld16(p + 4, r->swap), .size = size, .data = p,
					       .offset = pos };
			if ((ret = fn(ctx, &rec)) < 0)
				return ret;
			pos += size;
			__atomic_store_n(&r->bytes_done, pos, __ATOMIC_RELAXED);
			continue;
		}
		ret = record_extent(r, p, end - pos, pos, &type, &misc, &size, &extent);
		if (ret == 0 && extent > end - pos)
			ret = -PFC_ERR_TRUNCATED;
		if (ret != 0) {
			if ((r->pipe_mode && (looks_like_text(p, end - pos) || ret > 0 || ret == -PFC_ERR_TRUNCATED)) ||
			    r->unfinished) {
				memset(r->err, 0, sizeof(*r->err));
				warn_junk(r, pos, end - pos, ret == -PFC_ERR_TRUNCATED || ret > 0 ?
					  "a record cut short" : "not a record");
				break;
			}
			if (ret == -PFC_ERR_TRUNCATED || ret > 0)
				return PFC_FAIL(r->err, TRUNCATED, pos,
						"record of type %u and size %llu runs past the end of the data (%llu bytes left)",
						type, (unsigned long long)extent, (unsigned long long)(end - pos));
			return ret;
		}
		ret = dispatch(r, p, type, misc, size, extent, pos, 0, 0, fn, ctx);
		if (ret < 0)
			return ret;
		pos += extent;
		__atomic_store_n(&r->bytes_done, pos, __ATOMIC_RELAXED);	/* progress reads it */
	}
	return 0;
}

static int run_stream(struct pfc_reader *r, pfc_rec_fn fn, void *ctx)
{
	for (;;) {
		uint32_t type, size;
		uint16_t misc;
		uint64_t extent, off;
		size_t avail;
		const uint8_t *p;
		int ret;

		if ((ret = stream_fill(r, 16, &avail)) < 0)
			return ret;
		off = r->stream_off + r->sbuf_pos;
		if (avail == 0)
			return 0;
		if (avail < 8) {
			warn_junk(r, off, avail, "partial record header");
			return 0;
		}
		p = r->sbuf + r->sbuf_pos;
		ret = record_extent(r, p, avail, off, &type, &misc, &size, &extent);
		if (ret < 0) {
			memset(r->err, 0, sizeof(*r->err));
			if ((ret = stream_fill(r, 1u << 30, &avail)) < 0)
				return ret;
			warn_junk(r, off, avail, "not a record");
			return 0;
		}
		if (extent > (256u << 20))
			return PFC_FAIL(r->err, CORRUPT, off, "record of %llu bytes", (unsigned long long)extent);
		if ((ret = stream_fill(r, (size_t)extent, &avail)) < 0)
			return ret;
		p = r->sbuf + r->sbuf_pos;
		if (avail < extent) {
			warn_junk(r, off, avail, "a record cut short");
			r->sbuf_pos += avail;
			return 0;
		}
		ret = dispatch(r, p, type, misc, size, extent, off, 1, 0, fn, ctx);
		if (ret < 0)
			return ret;
		r->sbuf_pos += (size_t)extent;
		__atomic_store_n(&r->bytes_done, off + extent, __ATOMIC_RELAXED);
	}
}

int pfc_reader_run(struct pfc_reader *r, pfc_rec_fn fn, void *ctx)
{
	if (r->streaming)
		return run_stream(r, fn, ctx);
	if (r->pipe_mode)
		return run_mapped(r, 16, r->map_size, fn, ctx);
	if (r->unfinished && r->warn)
		fprintf(r->warn, "perfconv: warning: '%s': perf record did not finish (killed?): its header still "
			"says the data section is empty; reading the %llu bytes of records after offset %llu to the "
			"end of the file, without the feature sections perf writes last (build-ids, host, command line)\n",
			r->path, (unsigned long long)r->data.size, (unsigned long long)r->data.offset);
	return run_mapped(r, r->data.offset, r->data.offset + r->data.size, fn, ctx);
}
