/*
 * zipspill.c - members deflated in pieces as their bytes are made, before their turn in the
 * archive comes: the deflated bytes wait in memory, then (past 64 KiB) in an unlinked temporary
 * file, mapped when they go in, so that several members can be made at once (trace.zip's CTF
 * channels, one a CPU, filled in time order) in the memory of one deflate stream each; and a
 * thread that deflates the pieces handed to it, in order, while the caller makes the next.
 * The archive itself is zipfile.c's; what the bytes are, the caller's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include "formats/zipspill.h"

#define CHUNK (256u << 10)           /* isal_deflate's input at most this at a time */
#define SPILL_OUT (64u << 10)        /* deflated bytes, written in these pieces */
#define SPILL_MAP_PIECE ((size_t)4 << 20)  /* the mapped file, into the archive this much at a time */
struct pfc_zip_spill {
	struct isal_zstream zs;
	struct pfc_zip_tmark tm;
	struct pfc_zip_sum sum;
	uint8_t *level_buf, *out;
	FILE *tmp;
	int failed;
	/* adopted: the archive whose open entry it is, its deflated bytes written there as they
	 * come, by the spiller's thread; zret: the archive's error value, when writing failed */
	struct pfc_zip *zip;
	int zret;
};

/* Deflate what zs holds (the end of the stream when fin), writing whole output buffers. */
static int spill_run(struct pfc_zip_spill *s, int fin)
{
	for (;;) {
		if (!s->zs.avail_out && s->zip) {
			if ((s->zret = pfc_zip_put(s->zip, s->out, SPILL_OUT)) < 0)
				return -1;
		} else if (!s->zs.avail_out) {
			/* the file only once the deflated bytes outgrow the buffer: a small member
			 * (an idle CPU's channel) never has one */
			if (!s->tmp && !(s->tmp = tmpfile()))
				return -1;
			if (fwrite(s->out, 1, SPILL_OUT, s->tmp) != SPILL_OUT)
				return -1;
		}
		if (!s->zs.avail_out) {
			s->sum.csize += SPILL_OUT;
			s->zs.next_out = s->out;
			s->zs.avail_out = SPILL_OUT;
		}
		if (isal_deflate(&s->zs) != COMP_OK)
			return -1;
		if (s->zs.avail_out && !s->zs.avail_in && (!fin || s->zs.internal_state.state == ZSTATE_END))
			return 0;
	}
}

struct pfc_zip_spill *pfc_zip_spill_new(void)
{
	struct pfc_zip_spill *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->level_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
	s->out = malloc(SPILL_OUT);
	if (!s->level_buf || !s->out) {
		pfc_zip_spill_free(s);
		return NULL;
	}
	isal_deflate_init(&s->zs);
	s->zs.level = 1;
	s->zs.level_buf = s->level_buf;
	s->zs.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
	s->zs.gzip_flag = IGZIP_DEFLATE;
	s->zs.flush = NO_FLUSH;
	s->zs.next_out = s->out;
	s->zs.avail_out = SPILL_OUT;
	return s;
}

int pfc_zip_spill_put(struct pfc_zip_spill *s, const void *b, size_t n)
{
	while (n && !s->failed) {
		uint32_t k = n > CHUNK ? CHUNK : (uint32_t)n;
		s->sum.crc = crc32_gzip_refl(s->sum.crc, b, k);
		pfc_zip_tmark_add(&s->tm, b, k);
		s->sum.usize += k;
		s->zs.next_in = (uint8_t *)b;
		s->zs.avail_in = k;
		if (spill_run(s, 0) < 0)
			s->failed = 1;
		b = (const uint8_t *)b + k;
		n -= k;
	}
	return s->failed ? -1 : 0;
}

/* The first n deflated bytes, in the temporary file, into the archive: mapped, so that they
 * are copied once, from the page cache to the archive's buffer; read in pieces when the file
 * cannot be mapped.  1 when it cannot be read. */
static int copy_spilled(struct pfc_zip *z, struct pfc_zip_spill *s, uint64_t n)
{
	int fd = fileno(s->tmp);
	uint8_t *m = n && n <= SIZE_MAX ? mmap(NULL, (size_t)n, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED, *b;
	uint64_t at;
	size_t k;
	int ret = 0;

	if (!n)
		return 0;
	if (m != MAP_FAILED) {
		(void)madvise(m, (size_t)n, MADV_SEQUENTIAL);
		for (at = 0; ret == 0 && at < n; at += k) {
			k = n - at > SPILL_MAP_PIECE ? SPILL_MAP_PIECE : (size_t)(n - at);
			ret = pfc_zip_put(z, m + at, k);
		}
		munmap(m, (size_t)n);
		return ret;
	}
	if (!(b = malloc(SPILL_OUT)))
		return 1;
	for (at = 0; ret == 0 && at < n; at += k) {
		k = n - at > SPILL_OUT ? SPILL_OUT : (size_t)(n - at);
		if (pread(fd, b, k, (off_t)at) != (ssize_t)k)
			ret = 1;
		else
			ret = pfc_zip_put(z, b, k);
	}
	free(b);
	return ret;
}

int pfc_zip_add_spill(struct pfc_zip *z, const char *name, struct pfc_zip_spill *s)
{
	size_t k;
	int ret;

	s->zs.next_in = NULL;
	s->zs.avail_in = 0;
	s->zs.end_of_stream = 1;
	if (s->failed || spill_run(s, 1) < 0)
		goto fail;
	k = SPILL_OUT - s->zs.avail_out;
	s->sum.text = !s->tm.binary && s->tm.text;
	if (s->zip) {	/* adopted: the entry is open, with every byte but these */
		s->sum.csize += k;
		if ((ret = pfc_zip_put(z, s->out, k)) < 0)
			return ret;
		return pfc_zip_entry_end(z, &s->sum);
	}
	if (s->tmp && ((k && fwrite(s->out, 1, k, s->tmp) != k) || fflush(s->tmp) != 0))
		goto fail;
	s->sum.csize += k;
	if ((ret = pfc_zip_entry_begin(z, name, 0, s->sum.usize >= PFC_ZIP64_FROM)) < 0)
		return ret;
	/* without a file, the whole member is still in the output buffer */
	ret = s->tmp ? copy_spilled(z, s, s->sum.csize) : pfc_zip_put(z, s->out, k);
	if (ret > 0)
		goto fail;
	if (ret < 0)
		return ret;
	return pfc_zip_entry_end(z, &s->sum);
fail:
	if (s->zret < 0)	/* the archive's own error, already said */
		return s->zret;
	return PFC_FAIL_NOOFF(z->err, IO, "deflating %s through a temporary file: %s", name,
			      errno ? strerror(errno) : "deflate failed");
}

void pfc_zip_spill_free(struct pfc_zip_spill *s)
{
	if (!s)
		return;
	if (s->tmp)
		fclose(s->tmp);
	free(s->level_buf);
	free(s->out);
	free(s);
}

/* The thread: each piece into its spill, the buffer kept for the next piece put. */
static void *deflate_main(void *arg)
{
	struct pfc_zip_spiller *d = arg;

	pthread_mutex_lock(&d->mu);
	for (;;) {
		struct pfc_zip_spill_job j;
		int bad;
		while (!d->n && !d->stop)
			pthread_cond_wait(&d->work, &d->mu);
		if (!d->n)
			break;
		j = d->job[d->head];
		d->head = (d->head + 1) % PFC_ZIP_SPILL_JOBS;
		d->n--;
		d->busy = 1;
		pthread_mutex_unlock(&d->mu);
		bad = pfc_zip_spill_put(j.spill, j.b.buf, j.b.len) < 0;
		j.b.len = 0;
		pthread_mutex_lock(&d->mu);
		d->busy = 0;
		d->failed |= bad;
		if (d->nr_spare < PFC_ZIP_SPILL_JOBS)
			d->spare[d->nr_spare++] = j.b;
		else
			pfc_sb_free(&j.b);
		pthread_cond_broadcast(&d->done);	/* the filler and an adopter may both wait */
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

int pfc_zip_spiller_put(struct pfc_zip_spiller *d, struct pfc_zip_spill *spill, struct pfc_sb *b)
{
	int failed;

	if (!d->started) {
		int bad = pfc_zip_spill_put(spill, b->buf, b->len) < 0;
		b->len = 0;
		return bad ? -1 : 0;
	}
	pthread_mutex_lock(&d->mu);
	while (d->n == PFC_ZIP_SPILL_JOBS)
		pthread_cond_wait(&d->done, &d->mu);
	d->job[(d->head + d->n) % PFC_ZIP_SPILL_JOBS].spill = spill;
	d->job[(d->head + d->n) % PFC_ZIP_SPILL_JOBS].b = *b;
	d->n++;
	memset(b, 0, sizeof(*b));
	if (d->nr_spare)
		*b = d->spare[--d->nr_spare];
	failed = d->failed;
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->mu);
	return failed ? -1 : 0;
}

int pfc_zip_spiller_wait(struct pfc_zip_spiller *d)
{
	int failed;

	if (!d->started)
		return 0;
	pthread_mutex_lock(&d->mu);
	while (d->n || d->busy)
		pthread_cond_wait(&d->done, &d->mu);
	failed = d->failed;
	pthread_mutex_unlock(&d->mu);
	return failed ? -1 : 0;
}

int pfc_zip_spiller_adopt(struct pfc_zip_spiller *d, struct pfc_zip_spill *s, struct pfc_zip *z, const char *name)
{
	int ret;

	if (!d->started)
		return 1;
	pthread_mutex_lock(&d->mu);
	/* between two pieces: the thread takes the next one only with the lock */
	while (d->busy)
		pthread_cond_wait(&d->done, &d->mu);
	if (s->failed) {
		ret = s->zret < 0 ? s->zret : PFC_FAIL_NOOFF(z->err, IO, "deflating %s through a temporary file: %s",
							      name, errno ? strerror(errno) : "deflate failed");
	} else if ((ret = pfc_zip_entry_begin(z, name, 0, 0)) == 0) {
		if (s->tmp && fflush(s->tmp) != 0)
			ret = 1;
		else if (s->tmp)
			ret = copy_spilled(z, s, s->sum.csize);
		if (ret > 0)
			ret = PFC_FAIL_NOOFF(z->err, IO, "deflating %s through a temporary file: %s", name,
					     errno ? strerror(errno) : "cannot read it");
		if (ret == 0)
			s->zip = z;
	}
	pthread_mutex_unlock(&d->mu);
	return ret;
}

void pfc_zip_spiller_start(struct pfc_zip_spiller *d)
{
	memset(d, 0, sizeof(*d));
	if (pthread_mutex_init(&d->mu, NULL) != 0)
		return;
	if (pthread_cond_init(&d->work, NULL) != 0 || pthread_cond_init(&d->done, NULL) != 0 ||
	    pthread_create(&d->th, NULL, deflate_main, d) != 0)
		return;	/* the stages are deflated in line */
	d->started = 1;
}

void pfc_zip_spiller_end(struct pfc_zip_spiller *d)
{
	size_t i;

	if (d->started) {
		pthread_mutex_lock(&d->mu);
		d->stop = 1;
		pthread_cond_signal(&d->work);
		pthread_mutex_unlock(&d->mu);
		pthread_join(d->th, NULL);
	}
	for (i = 0; i < d->n; i++)
		pfc_sb_free(&d->job[(d->head + i) % PFC_ZIP_SPILL_JOBS].b);
	for (i = 0; i < d->nr_spare; i++)
		pfc_sb_free(&d->spare[i]);
	d->n = d->nr_spare = 0;
}

