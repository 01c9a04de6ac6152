/*
 * zipdeflate.c - one zip entry's deflate stream made on worker threads, as pigz makes one:
 * the caller's items cut into chunks, each formatted (by the caller's function) and deflated
 * by a worker with the previous chunk's last 32 KiB as its dictionary, the chunks' CRCs
 * combined and their bytes written into the archive in order.  What an item is and how it
 * reads as text is the caller's (perfview.c's samples); the archive is zipfile.c's.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <zlib.h>
#include "formats/zipdeflate.h"

/*
 * The main thread adds items (perf.data.txt's samples, with their tracepoint payloads' text)
 * and cuts them into chunks of about TEXT_CHUNK bytes of text.  A worker thread formats a
 * chunk's items (what the format function reads is made before the workers start, and only
 * read then) and deflates it on its own (ISA-L's igzip at level 1, with the previous chunk's
 * last 32 KiB as its dictionary), ended with a sync flush, the last one with the final block:
 * their concatenation is one deflate stream, as pigz makes it.  Each worker also takes its
 * chunk's CRC-32 (ISA-L's), combined in order (zlib's crc32_combine).  The entry is written
 * raw, in chunk order.  On perf.data.txt igzip level 1 deflates about 9 times as fast as zlib
 * level 1, and a little smaller; formatting it costs more than deflating it.  A chunk also
 * costs igzip a fixed third of a million instructions (the dictionary hashed again, its
 * tables made): 1 MiB chunks take 14% fewer instructions than 512 KiB ones to deflate the
 * text of an ASP.NET recording, 0.6% larger, and 2 MiB ones 8% fewer again (a conversion
 * 4% fewer), 0.3% larger.
 *
 * A worker formats its chunk a PIECE at a time and deflates and sums each piece while it is
 * still in the core's cache: the chunk's text is never whole in memory.  Formatting whole
 * 2 MiB chunks first wrote 123 MB of an ASP.NET recording's text out of the cache (the
 * destination's lines read for ownership first) for igzip and the CRC to read back, and a
 * ring of six such chunks was 13 MB of memory to zero.  The dictionary, the previous chunk's
 * last 32 KiB, the worker formats again from that chunk's last items (some 2% more
 * formatting) rather than wait for that chunk's worker.
 */
#define TEXT_CHUNK ((size_t)2 << 20)
#define PIECE ((size_t)512 << 10)             /* igzip takes 512 KiB pieces as fast as whole chunks, 128 KiB ones 35% slower */
#define NSLOTS 10                             /* at most: two a worker, and two */
#define DICT ((size_t)32 << 10)

/* An item of a chunk, for the worker that formats it; the caller's bytes follow it. */
struct zitem {
	size_t toff;                  /* its extra bytes in the slot's tbuf */
	uint32_t tlen;
	uint32_t room;                /* the most bytes its text can take */
	uint32_t low;                 /* the least */
};

struct dslot {
	uint64_t chunk;               /* its number */
	unsigned char *recs;          /* its items, stride bytes each */
	size_t nr_recs, cap_recs;
	char *tbuf;                   /* their extra bytes */
	size_t tlen, tcap;
	size_t need;                  /* the most bytes their text can take */
	size_t len;                   /* the bytes of text, once deflated */
	int dict_taken;               /* the next chunk took its dictionary from here: it may be reused */
	uint8_t *out;
	size_t out_len, out_cap;
	uint32_t crc;
	int final;
	int state;                    /* 0 free, 1 queued, 2 taken, 3 done, -1 failed */
};

/* One mutex; two condition variables, so that an event wakes only the thread that waits for
 * it: a worker waits for a queued chunk (work), the main thread for one slot's chunk to be
 * deflated or to have given its dictionary (main, signalled only by the worker concerned). */
struct pfc_zipdfl {
	pthread_mutex_t mu;
	pthread_cond_t work, main;
	struct dslot *main_wait;      /* the slot whose next step the main thread waits for */
	pthread_t th[4];
	int nth;
	unsigned nslots;              /* slots in use */
	size_t chunk_bytes;           /* TEXT_CHUNK; PERFCONV_TEXT_CHUNK for the tests of the ring */
	size_t piece_bytes;           /* PIECE; PERFCONV_TEXT_PIECE for the tests of the pieces */
	size_t out_first;             /* a chunk's first output room; 0: from its text (PERFCONV_DEFLATE_OUT, tests) */
	struct pfc_zip *zip;
	struct pfc_error *err;
	const char *what;             /* the text, in messages */
	size_t item_size, stride;     /* the caller's items; an item with its zitem */
	pfc_zipdfl_format_fn format;
	void *arg;
	struct dslot slot[NSLOTS];
	uint64_t next_fill, next_take, next_write;  /* chunk numbers */
	int stop;
	uint64_t total_in, total_out;
	uLong crc;
};

static inline struct zitem *item_at(const struct pfc_zipdfl *d, const struct dslot *sl, size_t i)
{
	return (struct zitem *)(void *)(sl->recs + i * d->stride);
}

/* An item's text into p (its room's bytes); its length, or SIZE_MAX. */
static inline size_t format_item(const struct pfc_zipdfl *d, const struct dslot *sl, size_t i, char *p)
{
	const struct zitem *it = item_at(d, sl, i);

	return d->format(d->arg, it + 1, sl->tbuf + it->toff, it->tlen, p);
}

/* A worker's room to format in, grown to `need`. */
struct wbuf {
	char *b;
	size_t cap;
};

static int wbuf_room(struct wbuf *w, size_t need)
{
	char *n;

	if (need <= w->cap)
		return 0;
	if (!(n = malloc(need)))
		return -1;
	free(w->b);
	w->b = n;
	w->cap = need;
	return 0;
}

/* The last min(its text, DICT) bytes of the previous chunk's text, into w: its last items,
 * as many as their least bytes fill DICT (or all), formatted again. */
static int prev_tail(const struct pfc_zipdfl *d, const struct dslot *prev, struct wbuf *w, const char **dict,
		     size_t *n)
{
	size_t i = prev->nr_recs, lines = 0, room = 0, len = 0, k;

	while (i > 0 && lines < DICT) {
		i--;
		lines += item_at(d, prev, i)->low;
		room += item_at(d, prev, i)->room;
	}
	if (wbuf_room(w, room) < 0)
		return -1;
	for (k = i; k < prev->nr_recs; k++) {
		size_t m = format_item(d, prev, k, w->b + len);
		if (m == SIZE_MAX)
			return -1;
		len += m;
	}
	*n = len < DICT ? len : DICT;
	*dict = w->b + len - *n;
	return 0;
}

/* Deflate a piece of the chunk's text into the slot's output, growing it as needed; `last`:
 * the chunk's last piece, which ends with the sync flush or the final block. */
static int deflate_piece(struct isal_zstream *z, struct dslot *sl, const char *in, size_t len, int last)
{
	z->next_in = (uint8_t *)in;
	z->avail_in = (uint32_t)len;
	z->flush = last && !sl->final ? SYNC_FLUSH : NO_FLUSH;
	z->end_of_stream = last && sl->final;
	for (;;) {
		size_t used, cap;
		uint8_t *n;
		if (isal_deflate(z) != COMP_OK)
			return -1;
		if (!z->avail_in && (last ? z->internal_state.state == (sl->final ? ZSTATE_END : ZSTATE_NEW_HDR) : z->avail_out != 0))
			return 0;
		/* the output is full and the stream goes on: more room, where it stopped */
		used = sl->out_cap - z->avail_out;
		cap = sl->out_cap * 2 + sl->need / 16 + 1024;
		if (z->avail_out || cap > UINT32_MAX || !(n = realloc(sl->out, cap)))
			return -1;
		sl->out = n;
		sl->out_cap = cap;
		z->next_out = n + used;
		z->avail_out = (uint32_t)(cap - used);
	}
}

/* A chunk: its dictionary set (taken), then its text formatted, deflated and summed a piece
 * at a time.  Returns 0, or -1 (the slot's state is set by the caller). */
static int deflate_chunk(struct pfc_zipdfl *d, struct dslot *sl, struct isal_zstream *z, uint8_t *level_buf,
			 struct wbuf *w)
{
	struct dslot *prev = &d->slot[(sl->chunk + d->nslots - 1) % d->nslots];
	const char *dict = NULL;
	size_t dict_len = 0, len = 0, i, need;
	int ok = 1;

	isal_deflate_init(z);
	z->level = 1;
	z->level_buf = level_buf;
	z->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
	z->gzip_flag = IGZIP_DEFLATE;
	/* the dictionary is read from the previous slot itself: that slot is not filled again
	 * before this one says it has taken it (dict_taken, dfl_fill_slot) */
	if (sl->chunk > 0)
		ok = prev->chunk == sl->chunk - 1 && prev_tail(d, prev, w, &dict, &dict_len) == 0;
	if (ok && dict_len)
		ok = isal_deflate_set_dict(z, (uint8_t *)dict, (uint32_t)dict_len) == COMP_OK;
	pthread_mutex_lock(&d->mu);
	sl->dict_taken = 1;
	if (d->main_wait == sl)
		pthread_cond_signal(&d->main);
	pthread_mutex_unlock(&d->mu);
	if (!ok || wbuf_room(w, d->piece_bytes) < 0)
		return -1;
	/* room for this text deflated as well as such text goes (some 24:1), and more only if it
	 * needs it: a buffer for the worst case (a stored block's worth more than the input) was
	 * 2.5 MB a slot, whose first bytes alone made the kernel zero a 2 MiB huge page of the heap */
	need = d->out_first ? d->out_first : sl->need / 8 + ((size_t)64 << 10);
	if (need > sl->out_cap) {
		/* not realloc: the old bytes are written already */
		free(sl->out);
		sl->out_cap = 0;
		if (!(sl->out = malloc(need)))
			return -1;
		sl->out_cap = need;
	}
	z->next_out = sl->out;
	z->avail_out = (uint32_t)sl->out_cap;
	sl->len = 0;
	sl->crc = 0;
	for (i = 0; i < sl->nr_recs; i++) {
		size_t room = item_at(d, sl, i)->room, m;
		if (len && len + room > w->cap) {
			if (deflate_piece(z, sl, w->b, len, 0) < 0)
				return -1;
			sl->crc = crc32_gzip_refl(sl->crc, (const uint8_t *)w->b, len);
			sl->len += len;
			len = 0;
		}
		if (room > w->cap && wbuf_room(w, room) < 0)	/* a sample longer than a piece */
			return -1;
		if ((m = format_item(d, sl, i, w->b + len)) == SIZE_MAX)
			return -1;
		len += m;
	}
	if (deflate_piece(z, sl, w->b, len, 1) < 0)
		return -1;
	sl->crc = crc32_gzip_refl(sl->crc, (const uint8_t *)w->b, len);
	sl->len += len;
	sl->out_len = sl->out_cap - z->avail_out;
	return 0;
}

static void *dfl_main(void *arg)
{
	struct pfc_zipdfl *d = arg;
	struct isal_zstream z;
	struct wbuf w = { NULL, 0 };
	uint8_t *level_buf = malloc(ISAL_DEF_LVL1_DEFAULT);

	pthread_mutex_lock(&d->mu);
	for (;;) {
		struct dslot *sl;
		int ok;
		while (!d->stop && (d->next_take == d->next_fill || d->slot[d->next_take % d->nslots].state != 1))
			pthread_cond_wait(&d->work, &d->mu);
		if (d->stop)
			break;
		sl = &d->slot[d->next_take++ % d->nslots];
		sl->state = 2;
		pthread_mutex_unlock(&d->mu);
		ok = level_buf && deflate_chunk(d, sl, &z, level_buf, &w) == 0;
		pthread_mutex_lock(&d->mu);
		sl->dict_taken = 1;	/* also when it failed before taking it */
		sl->state = ok ? 3 : -1;
		if (d->main_wait == sl)
			pthread_cond_signal(&d->main);
	}
	pthread_mutex_unlock(&d->mu);
	free(w.b);
	free(level_buf);
	return NULL;
}

static int dfl_start(struct pfc_zipdfl *d)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int i, n = ncpu > 4 ? 4 : ncpu < 1 ? 1 : (int)ncpu;
	const struct pfc_tuning *t = d->zip->tuning;	/* the tests' sizes; 0: the default */

	d->chunk_bytes = t->text_chunk;
	if (!d->chunk_bytes || d->chunk_bytes > TEXT_CHUNK)
		d->chunk_bytes = TEXT_CHUNK;
	d->piece_bytes = t->text_piece;
	if (!d->piece_bytes || d->piece_bytes > PIECE)
		d->piece_bytes = PIECE;
	d->out_first = t->deflate_out;
	if (d->out_first > TEXT_CHUNK)
		d->out_first = 0;
	d->crc = crc32(0, NULL, 0);
	if (pthread_mutex_init(&d->mu, NULL) || pthread_cond_init(&d->work, NULL) || pthread_cond_init(&d->main, NULL))
		return -1;
	d->nslots = 2 * (unsigned)n + 2;
	for (i = 0; i < n; i++) {
		if (pthread_create(&d->th[i], NULL, dfl_main, d))
			break;
		d->nth++;
	}
	return d->nth ? 0 : -1;
}

static void dfl_stop(struct pfc_zipdfl *d)
{
	int i;

	if (d->nth) {
		pthread_mutex_lock(&d->mu);
		d->stop = 1;
		pthread_cond_broadcast(&d->work);
		pthread_mutex_unlock(&d->mu);
		for (i = 0; i < d->nth; i++)
			pthread_join(d->th[i], NULL);
		pthread_mutex_destroy(&d->mu);
		pthread_cond_destroy(&d->work);
		pthread_cond_destroy(&d->main);
	}
	for (i = 0; i < NSLOTS; i++) {
		free(d->slot[i].recs);
		free(d->slot[i].tbuf);
		free(d->slot[i].out);
	}
	memset(d, 0, sizeof(*d));
}

/* Write the oldest chunk once deflated (waiting for it when `wait`). */
static int dfl_write_one(struct pfc_zipdfl *d, int wait)
{
	struct dslot *sl = &d->slot[d->next_write % d->nslots];
	int st, ret;

	pthread_mutex_lock(&d->mu);
	while (wait && (sl->state == 1 || sl->state == 2)) {
		d->main_wait = sl;
		pthread_cond_wait(&d->main, &d->mu);
		d->main_wait = NULL;
	}
	st = sl->state;
	pthread_mutex_unlock(&d->mu);
	if (st == -1)
		return PFC_FAIL_NOOFF(d->err, NOMEM, "deflating %s", d->what);
	if (st != 3)
		return 0;
	d->crc = crc32_combine(d->crc, sl->crc, (z_off_t)sl->len);
	d->total_in += sl->len;
	if ((ret = pfc_zip_put(d->zip, sl->out, sl->out_len)) < 0)
		return ret;
	d->total_out += sl->out_len;
	pthread_mutex_lock(&d->mu);
	sl->state = 0;	/* the worker of the next chunk may be reading this slot's state */
	pthread_mutex_unlock(&d->mu);
	d->next_write++;
	return 1;
}

/* The slot being filled, emptied: free once the chunk it held is written and the chunk after
 * that one has copied its last bytes as dictionary. */
static int dfl_fill_slot(struct pfc_zipdfl *d, struct dslot **out)
{
	struct dslot *sl = &d->slot[d->next_fill % d->nslots];
	struct dslot *nx = &d->slot[(d->next_fill + 1) % d->nslots];
	int ret, st;

	for (;;) {
		pthread_mutex_lock(&d->mu);
		st = sl->state;
		pthread_mutex_unlock(&d->mu);
		if (st == 0)
			break;
		if ((ret = dfl_write_one(d, 1)) < 0)
			return ret;
	}
	if (d->next_fill + 1 >= d->nslots) {
		pthread_mutex_lock(&d->mu);
		while (nx->chunk == d->next_fill + 1 - d->nslots && (nx->state == 1 || nx->state == 2) && !nx->dict_taken) {
			d->main_wait = nx;
			pthread_cond_wait(&d->main, &d->mu);
			d->main_wait = NULL;
		}
		pthread_mutex_unlock(&d->mu);
	}
	sl->chunk = d->next_fill;
	sl->nr_recs = sl->tlen = sl->need = sl->len = 0;
	sl->dict_taken = 0;
	*out = sl;
	return 0;
}

/* Queue the filled chunk and start the next one. */
static int dfl_submit(struct pfc_zipdfl *d, int final)
{
	struct dslot *sl = &d->slot[d->next_fill % d->nslots], *nx;
	int ret;

	sl->final = final;
	pthread_mutex_lock(&d->mu);
	sl->state = 1;
	d->next_fill++;
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->mu);
	if (final)
		return 0;
	if ((ret = dfl_fill_slot(d, &nx)) < 0)
		return ret;
	/* write what is done already, without waiting */
	while ((ret = dfl_write_one(d, 0)) > 0)
		;
	return ret;
}

struct pfc_zipdfl *pfc_zipdfl_start(struct pfc_zip *zip, size_t item_size, pfc_zipdfl_format_fn format, void *arg,
				    const char *what)
{
	struct pfc_zipdfl *d = calloc(1, sizeof(*d));
	struct dslot *sl;

	if (!d) {
		PFC_FAIL_NOOFF(zip->err, NOMEM, "%s", what);
		return NULL;
	}
	d->zip = zip;
	d->err = zip->err;
	d->what = what;
	d->item_size = item_size;
	d->stride = (sizeof(struct zitem) + item_size + 7) & ~(size_t)7;
	d->format = format;
	d->arg = arg;
	if (dfl_start(d) < 0) {
		pfc_zipdfl_free(d);
		PFC_FAIL_NOOFF(zip->err, NOMEM, "%s", what);
		return NULL;
	}
	if (dfl_fill_slot(d, &sl) < 0) {
		pfc_zipdfl_free(d);
		return NULL;
	}
	return d;
}

/* Add an item to the chunk being filled, and the bytes of text it can take to the chunk's
 * need; a chunk ends after the item that fills it (an item's text goes to one chunk). */
int pfc_zipdfl_add(struct pfc_zipdfl *d, const void *item, const char *extra, uint32_t extra_len, uint64_t room,
		   uint64_t low)
{
	struct dslot *sl = &d->slot[d->next_fill % d->nslots];
	struct zitem *it;

	if (room > UINT32_MAX)
		return PFC_FAIL_NOOFF(d->err, NOMEM, "%s: an item of %llu bytes of text", d->what,
				      (unsigned long long)room);
	if (sl->nr_recs == sl->cap_recs) {
		size_t cap = sl->cap_recs ? sl->cap_recs * 2 : 4096;
		unsigned char *n = realloc(sl->recs, cap * d->stride);
		if (!n)
			return PFC_FAIL_NOOFF(d->err, NOMEM, "%s", d->what);
		sl->recs = n;
		sl->cap_recs = cap;
	}
	if (extra_len && sl->tlen + extra_len > sl->tcap) {
		size_t cap = sl->tcap ? sl->tcap : 1 << 16;
		char *n;
		while (cap < sl->tlen + extra_len)
			cap *= 2;
		if (!(n = realloc(sl->tbuf, cap)))
			return PFC_FAIL_NOOFF(d->err, NOMEM, "%s", d->what);
		sl->tbuf = n;
		sl->tcap = cap;
	}
	it = item_at(d, sl, sl->nr_recs++);
	memcpy(it + 1, item, d->item_size);
	it->toff = sl->tlen;
	it->tlen = extra_len;
	if (extra_len)
		memcpy(sl->tbuf + sl->tlen, extra, extra_len);
	sl->tlen += extra_len;
	it->room = (uint32_t)room;
	it->low = low > room ? (uint32_t)room : (uint32_t)low;
	sl->need += room;
	return sl->need >= d->chunk_bytes ? dfl_submit(d, 0) : 0;
}

int pfc_zipdfl_finish(struct pfc_zipdfl *d, struct pfc_zip_sum *sum)
{
	int ret;

	if ((ret = dfl_submit(d, 1)) == 0)
		while ((ret = dfl_write_one(d, 1)) > 0)
			;
	memset(sum, 0, sizeof(*sum));
	sum->crc = (uint32_t)d->crc;
	sum->usize = d->total_in;
	sum->csize = d->total_out;
	return ret;
}

void pfc_zipdfl_free(struct pfc_zipdfl *d)
{
	if (!d)
		return;
	dfl_stop(d);
	free(d);
}
