/*
 * zipfile.c - a ZIP archive, per PKWARE's APPNOTE.TXT: entries' local headers (completed in
 * place once their CRC and sizes are known), zip64 fields, the central directory and its end
 * records, and members deflated with igzip level 1 or stored, their CRCs and zlib's text
 * mark.  The same calls give the same bytes.  Which entries an archive holds, their names
 * and times, and deflating in parallel are the caller's (perfview.c, zipdeflate.c, zipspill.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include "formats/zipfile.h"

#define ZIP_VERSION_MADE_BY ((3u << 8) | 30u)  /* Unix, zip 3.0: what Info-ZIP's zip -r writes */
#define CHUNK (256u << 10)

/*
 * The zip is written here, per APPNOTE.TXT, byte for byte as minizip 1.1 wrote it before
 * (the expected files hold its layout): a local header with the CRC and sizes filled in
 * once the entry is written (seeking back), a zip64 extra field in the local header of
 * entries that may pass 4 GiB, a central directory and its end record (zip64 ones when
 * its offset or entry count needs them).  minizip copied a raw deflate stream a byte at a
 * time and took a CRC of it that nothing used: 3% of converting an ASP.NET recording. */

#define ZIP_STORED 0
#define ZIP_DEFLATED 8
#define ZIP_FAST 6                    /* general purpose bits 1-2: "super fast" (level 1) */
#define ZIP_LH_SIZE 30
#define ZIP_CH_SIZE 46
#define ZIP_OUTBUF (64u << 10)        /* a member's deflated bytes, written in these pieces */

struct pfc_zip_ent {
	char *name;
	uint64_t lh;                  /* its local header's offset */
	uint64_t csize, usize;
	uint32_t crc;
	uint32_t ext_fa;
	uint16_t flag, method;
	uint16_t int_fa;              /* 1: text, by zlib's rule (pfc_zip_tmark_add) */
	int zip64;                    /* the local header has the zip64 extra field */
};

static int write_fail(struct pfc_zip *z, const char *what)
{
	int e = errno;

	return PFC_FAIL_NOOFF(z->err, WRITE, "'%s': cannot write %s%s%s", z->outname, what, e ? ": " : "",
			      e ? strerror(e) : "");
}

static inline uint8_t *le16(uint8_t *d, uint32_t v)
{
	d[0] = (uint8_t)v;
	d[1] = (uint8_t)(v >> 8);
	return d + 2;
}

static inline uint8_t *le32(uint8_t *d, uint32_t v)
{
	d = le16(d, v & 0xffff);
	return le16(d, v >> 16);
}

static inline uint8_t *le64(uint8_t *d, uint64_t v)
{
	d = le32(d, (uint32_t)v);
	return le32(d, (uint32_t)(v >> 32));
}

/*
 * The caller makes the archive durable (fsync before it renames it into place), and that
 * fsync waited 4-6 ms for the 5 MB of an ASP.NET recording's archive to reach the disk after
 * its last byte was written, a worker of a batch idle meanwhile.  Writeback of each MiB is
 * started as it is written (sync_file_range without waiting, as packs do), so that fsync
 * waits for the last MiB and the journal.  Nothing is made more or less durable.
 */
#define WRITEBACK_STEP ((uint64_t)1 << 20)

int pfc_zip_put(struct pfc_zip *z, const void *b, size_t n)
{
	errno = 0;
	if (n && fwrite(b, 1, n, z->fp) != n)
		return write_fail(z, "an entry");
	z->pos += n;
#ifdef SYNC_FILE_RANGE_WRITE
	if (z->sync_fd >= 0 && z->pos - z->synced >= z->sync_step) {
		/* its write errors are fwrite's and fflush's, reported where they happen */
		if (fflush(z->fp) != 0 || sync_file_range(z->sync_fd, 0, 0, SYNC_FILE_RANGE_WRITE) != 0)
			z->sync_fd = -1;
		z->synced = z->pos;
	}
#endif
	return 0;
}

/* An entry's local header: as first written (`final` 0: no CRC, sizes 0, or 0xffffffff with a
 * zip64 field of zeros), or once the entry is written: with the zip64 field, the 32-bit sizes
 * are replaced by the real ones when they fit, and the field holds them when they do not. */
static size_t local_header(uint8_t *h, const struct pfc_zip_ent *e, uint32_t dos, int final)
{
	int big = final && (e->csize >= 0xffffffffu || e->usize >= 0xffffffffu);
	size_t nl = strlen(e->name);
	uint8_t *d = h;

	d = le32(d, 0x04034b50);
	d = le16(d, e->zip64 ? 45 : 20);
	d = le16(d, e->flag);
	d = le16(d, e->method);
	d = le32(d, dos);
	d = le32(d, final ? e->crc : 0);
	if (!final) {
		d = le32(d, e->zip64 ? 0xffffffffu : 0);
		d = le32(d, e->zip64 ? 0xffffffffu : 0);
	} else {
		d = le32(d, big ? 0xffffffffu : (uint32_t)e->csize);
		d = le32(d, big ? 0xffffffffu : (uint32_t)e->usize);
	}
	d = le16(d, (uint32_t)nl);
	d = le16(d, e->zip64 ? 20 : 0);
	memcpy(d, e->name, nl);
	d += nl;
	if (e->zip64) {
		d = le16(d, 1);
		d = le16(d, 16);
		d = le64(d, big ? e->usize : 0);
		d = le64(d, big ? e->csize : 0);
	}
	return (size_t)(d - h);
}

/* Start an entry: its local header, to be completed by pfc_zip_entry_end.  `zip64` (the entry may
 * reach 4 GiB) gives its local header the zip64 field. */
int pfc_zip_entry_begin(struct pfc_zip *z, const char *name, int dir, int zip64)
{
	struct pfc_zip_ent *e;
	uint8_t h[ZIP_LH_SIZE + 20 + 4096];
	size_t n;

	if (strlen(z->prefix) + strlen(name) >= 4096)
		return PFC_FAIL_NOOFF(z->err, WRITE, "'%s': entry name too long", z->outname);
	if (z->nr_ent == z->cap_ent) {
		size_t cap = z->cap_ent ? z->cap_ent * 2 : 16;
		struct pfc_zip_ent *ne = realloc(z->ent, cap * sizeof(*ne));
		if (!ne)
			return PFC_FAIL_NOOFF(z->err, NOMEM, "trace.zip");
		z->ent = ne;
		z->cap_ent = cap;
	}
	e = &z->ent[z->nr_ent];
	memset(e, 0, sizeof(*e));
	if (!(e->name = malloc(strlen(z->prefix) + strlen(name) + 1)))
		return PFC_FAIL_NOOFF(z->err, NOMEM, "trace.zip");
	strcpy(e->name, z->prefix);
	strcat(e->name, name);
	z->nr_ent++;
	e->lh = z->pos;
	e->method = dir ? ZIP_STORED : ZIP_DEFLATED;
	/* level 1 marks the deflated entries as fast-compressed */
	e->flag = dir ? 0 : ZIP_FAST;
	/* st_mode in the high 16 bits, as Info-ZIP writes it; MS-DOS directory bit for folders */
	e->ext_fa = dir ? (040755u << 16) | 0x10 : 0100644u << 16;
	e->zip64 = zip64;
	n = local_header(h, e, z->dos_time, 0);
	return pfc_zip_put(z, h, n);
}

/* Complete the open entry's local header, now that its CRC and sizes are known. */
int pfc_zip_entry_end(struct pfc_zip *z, const struct pfc_zip_sum *sum)
{
	struct pfc_zip_ent *e = &z->ent[z->nr_ent - 1];
	uint8_t h[ZIP_LH_SIZE + 20 + 4096];
	size_t n;

	e->crc = sum->crc;
	e->csize = sum->csize;
	e->usize = sum->usize;
	e->int_fa = (uint16_t)sum->text;
	if (!e->zip64 && (e->csize >= 0xffffffffu || e->usize >= 0xffffffffu))
		return PFC_FAIL_NOOFF(z->err, WRITE, "'%s': %s is larger than 4 GiB without zip64", z->outname,
				      e->name);
	n = local_header(h, e, z->dos_time, 1);
	errno = 0;
	if (fseeko(z->fp, (off_t)e->lh, SEEK_SET) != 0 || fwrite(h, 1, n, z->fp) != n ||
	    fseeko(z->fp, (off_t)z->pos, SEEK_SET) != 0)
		return write_fail(z, "an entry");
	return 0;
}

/* The central directory and its end record(s). */
static int zip_directory(struct pfc_zip *z)
{
	uint64_t cd = z->pos, size = 0;
	uint8_t h[ZIP_CH_SIZE + 4096 + 32], *d;
	size_t i, nl;
	int ret;

	for (i = 0; i < z->nr_ent; i++) {
		const struct pfc_zip_ent *e = &z->ent[i];
		int bu = e->usize >= 0xffffffffu, bc = e->csize >= 0xffffffffu, bo = e->lh >= 0xffffffffu;
		unsigned xs = 8u * (unsigned)(bu + bc + bo);

		nl = strlen(e->name);
		d = le32(h, 0x02014b50);
		d = le16(d, bu || bc || bo ? 45 : ZIP_VERSION_MADE_BY);
		d = le16(d, bu || bc || bo ? 45 : 20);
		d = le16(d, e->flag);
		d = le16(d, e->method);
		d = le32(d, z->dos_time);
		d = le32(d, e->crc);
		d = le32(d, bc ? 0xffffffffu : (uint32_t)e->csize);
		d = le32(d, bu ? 0xffffffffu : (uint32_t)e->usize);
		d = le16(d, (uint32_t)nl);
		d = le16(d, xs ? xs + 4 : 0);
		d = le16(d, 0);                 /* comment */
		d = le16(d, 0);                 /* disk */
		d = le16(d, e->int_fa);
		d = le32(d, e->ext_fa);
		d = le32(d, bo ? 0xffffffffu : (uint32_t)e->lh);
		memcpy(d, e->name, nl);
		d += nl;
		if (xs) {
			d = le16(d, 1);
			d = le16(d, xs);
			if (bu)
				d = le64(d, e->usize);
			if (bc)
				d = le64(d, e->csize);
			if (bo)
				d = le64(d, e->lh);
		}
		if ((ret = pfc_zip_put(z, h, (size_t)(d - h))) < 0)
			return ret;
		size += (uint64_t)(d - h);
	}
	if (cd >= 0xffffffffu || z->nr_ent >= 0xffff) {
		uint64_t at = z->pos;

		d = le32(h, 0x06064b50);
		d = le64(d, 44);
		d = le16(d, 45);
		d = le16(d, 45);
		d = le32(d, 0);
		d = le32(d, 0);
		d = le64(d, z->nr_ent);
		d = le64(d, z->nr_ent);
		d = le64(d, size);
		d = le64(d, cd);
		d = le32(d, 0x07064b50);        /* the locator */
		d = le32(d, 0);
		d = le64(d, at);
		d = le32(d, 1);
		if ((ret = pfc_zip_put(z, h, (size_t)(d - h))) < 0)
			return ret;
	}
	d = le32(h, 0x06054b50);
	d = le16(d, 0);
	d = le16(d, 0);
	d = le16(d, z->nr_ent >= 0xffff ? 0xffff : (uint32_t)z->nr_ent);
	d = le16(d, z->nr_ent >= 0xffff ? 0xffff : (uint32_t)z->nr_ent);
	d = le32(d, (uint32_t)size);
	d = le32(d, cd >= 0xffffffffu ? 0xffffffffu : (uint32_t)cd);
	d = le16(d, 0);                         /* comment */
	if ((ret = pfc_zip_put(z, h, (size_t)(d - h))) < 0)
		return ret;
	errno = 0;
	return fflush(z->fp) == 0 ? 0 : write_fail(z, "the archive's directory");
}

/* Entry times: 1980-01-01 unless T is in the years MS-DOS times can hold. */
void pfc_zip_set_time(struct pfc_zip *z, const time_t *t)
{
	unsigned year = 0, mon = 0, mday = 1, hour = 0, min = 0, sec = 0;
	struct tm tm;

	if (t && gmtime_r(t, &tm) && tm.tm_year + 1900 >= 1980 && tm.tm_year + 1900 <= 2107) {
		year = (unsigned)tm.tm_year + 1900 - 1980;
		mon = (unsigned)tm.tm_mon;
		mday = (unsigned)tm.tm_mday;
		hour = (unsigned)tm.tm_hour;
		min = (unsigned)tm.tm_min;
		sec = (unsigned)tm.tm_sec;
	}
	z->dos_time = ((mday + 32 * (mon + 1) + 512 * year) << 16) | (sec / 2 + 32 * min + 2048 * hour);
}

int pfc_zip_open(struct pfc_zip *z, FILE *out, const char *outname, const char *prefix,
		 const struct pfc_tuning *tuning, struct pfc_error *err)
{
	static const struct pfc_tuning no_tuning;
	off_t at = 0;
	int seekable;

	memset(z, 0, sizeof(*z));
	z->err = err;
	z->tuning = tuning ? tuning : &no_tuning;
	z->outname = outname;
	z->prefix = prefix ? prefix : "";
	z->out = out;
	/* the local headers are completed in place: a pipe gets the archive from a temporary file */
	seekable = fseeko(out, 0, SEEK_CUR) == 0 && (at = ftello(out)) >= 0;
	z->fp = seekable ? out : tmpfile();
	if (!z->fp)
		return PFC_FAIL_NOOFF(err, WRITE, "cannot create a temporary file: %s", strerror(errno));
	z->pos = seekable ? (uint64_t)at : 0;
	z->synced = z->pos;
	z->sync_fd = -1;
	z->sync_step = z->tuning->writeback_step ? z->tuning->writeback_step : WRITEBACK_STEP;
	if (seekable) {
		struct stat sb;
		int fd = fileno(out);
		if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode))
			z->sync_fd = fd;
	}
	return 0;
}

static int copy_stream(FILE *from, FILE *to)
{
	char b[1 << 16];
	size_t n;

	rewind(from);
	while ((n = fread(b, 1, sizeof(b), from)) > 0)
		if (fwrite(b, 1, n, to) != n)
			return -1;
	return ferror(from) ? -1 : 0;
}

int pfc_zip_finish(struct pfc_zip *z)
{
	int ret = zip_directory(z);

	if (ret == 0 && z->fp != z->out && copy_stream(z->fp, z->out) < 0)
		ret = write_fail(z, "the archive");
	return ret;
}

void pfc_zip_free(struct pfc_zip *z)
{
	size_t i;

	if (z->fp && z->fp != z->out)
		fclose(z->fp);
	for (i = 0; i < z->nr_ent; i++)
		free(z->ent[i].name);
	free(z->ent);
	memset(z, 0, sizeof(*z));
}

/* A deflate stream (ISA-L's igzip at level 1: zlib level 1 took ten times as long on a perf
 * map; the input in CHUNK pieces, the output in ZIP_OUTBUF ones), with its CRC and size,
 * into memory or the archive. */
static int zout_put(struct pfc_zip_out *z, const uint8_t *b, size_t n)
{
	if (z->zip)
		return pfc_zip_put(z->zip, b, n);
	if (z->len + n > z->cap) {
		size_t cap = z->cap ? z->cap : 1 << 16;
		uint8_t *nb;
		while (cap < z->len + n)
			cap *= 2;
		if (!(nb = realloc(z->buf, cap)))
			return -1;
		z->buf = nb;
		z->cap = cap;
	}
	memcpy(z->buf + z->len, b, n);
	z->len += n;
	return 0;
}

/*
 * The zip's "text" mark, by zlib's rule (deflate's detect_data_type, which minizip marked
 * the entry with): binary when a byte of 0-6, 14-25 or 28-31 occurs, else text when a tab,
 * a line break or a byte from 32 on does.  zlib judged the literals of its first block
 * only; judging every byte gives the same mark to the side files perfconv copies (perf maps
 * and the log are text, a jitdump's header holds small binary numbers).
 */
void pfc_zip_tmark_add(struct pfc_zip_tmark *t, const uint8_t *b, size_t n)
{
	/* bit c of BLOCK: byte c is binary; of ALLOW: byte c (< 32) is text */
	const uint32_t block = 0xf3ffc07fu, allow = (1u << 9) | (1u << 10) | (1u << 13);
	size_t i;

	for (i = 0; i < n && !t->binary; i++) {
		uint8_t c = b[i];
		if (c >= 32)
			t->text = 1;
		else if (block >> c & 1)
			t->binary = 1;
		else if (allow >> c & 1)
			t->text = 1;
	}
}

int pfc_zip_deflate(FILE *f, const void *mem, size_t mem_len, struct pfc_zip_out *z, struct pfc_zip_sum *r)
{
	uint32_t *crc = &r->crc;
	uint64_t *usize = &r->usize, *csize = &r->csize;
	struct isal_zstream zs;
	struct pfc_zip_tmark tm = { 0, 0 };
	uint8_t *in = NULL, *out = malloc(ZIP_OUTBUF), *level_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
	uint64_t total_out = 0;
	int ret = 0, zr = COMP_OK;

	*crc = 0;
	*usize = 0;
	if (!out || !level_buf || (f && !(in = malloc(CHUNK)))) {
		free(in);
		free(out);
		free(level_buf);
		return -1;
	}
	isal_deflate_init(&zs);
	zs.level = 1;
	zs.level_buf = level_buf;
	zs.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
	zs.gzip_flag = IGZIP_DEFLATE;
	zs.flush = NO_FLUSH;
	zs.next_out = out;
	zs.avail_out = ZIP_OUTBUF;
	for (;;) {
		size_t n;
		int fin;
		if (f) {
			n = fread(in, 1, CHUNK, f);
			if (!n && ferror(f)) {
				ret = -2;
				break;
			}
			zs.next_in = in;
		} else {
			n = mem_len - (size_t)*usize > CHUNK ? CHUNK : mem_len - (size_t)*usize;
			zs.next_in = n ? (uint8_t *)mem + *usize : NULL;
		}
		fin = n == 0;
		zs.avail_in = (uint32_t)n;
		zs.end_of_stream = fin;
		if (n) {
			*crc = crc32_gzip_refl(*crc, zs.next_in, n);
			pfc_zip_tmark_add(&tm, zs.next_in, n);
		}
		*usize += n;
		for (;;) {
			if (!zs.avail_out) {
				if (zout_put(z, out, ZIP_OUTBUF) < 0) {
					ret = -1;
					goto done;
				}
				total_out += ZIP_OUTBUF;
				zs.next_out = out;
				zs.avail_out = ZIP_OUTBUF;
			}
			zr = isal_deflate(&zs);
			if (zr != COMP_OK)
				break;
			/* done with this piece when all of it is taken and, at the end, the stream ended */
			if (zs.avail_out && !zs.avail_in && (!fin || zs.internal_state.state == ZSTATE_END))
				break;
		}
		if (zr != COMP_OK) {
			ret = -1;
			break;
		}
		if (fin)
			break;
	}
	if (ret == 0) {
		size_t k = ZIP_OUTBUF - zs.avail_out;
		if (k && zout_put(z, out, k) < 0)
			ret = -1;
		total_out += k;
	}
done:
	*csize = total_out;
	r->text = !tm.binary && tm.text;
	free(in);
	free(out);
	free(level_buf);
	return ret;
}

/* An entry of a few bytes in memory (perfcollect.log) or of an empty folder. */
int pfc_zip_add_mem(struct pfc_zip *z, const char *name, const void *data, size_t n)
{
	struct pfc_zip_out o = { .zip = z };
	struct pfc_zip_sum r;
	int ret;

	if ((ret = pfc_zip_entry_begin(z, name, 0, n >= PFC_ZIP64_FROM)) < 0)
		return ret;
	if ((ret = pfc_zip_deflate(NULL, data, n, &o, &r)) < 0)
		return z->err->code ? ret : PFC_FAIL_NOOFF(z->err, NOMEM, "deflating %s", name);
	return pfc_zip_entry_end(z, &r);
}

/* An entry of N bytes at DATA stored as they are: for a reader that cannot take a short read
 * of a deflated entry (trace.zip's CTF metadata, ctf.c). */
int pfc_zip_add_stored(struct pfc_zip *z, const char *name, const void *data, size_t n)
{
	struct pfc_zip_sum r = { 0 };
	struct pfc_zip_tmark tm = { 0 };
	int ret;

	if ((ret = pfc_zip_entry_begin(z, name, 0, n >= PFC_ZIP64_FROM)) < 0)
		return ret;
	z->ent[z->nr_ent - 1].method = ZIP_STORED;
	z->ent[z->nr_ent - 1].flag = 0;
	if ((ret = pfc_zip_put(z, data, n)) < 0)
		return ret;
	pfc_zip_tmark_add(&tm, data, n);
	r.crc = crc32_gzip_refl(0, data, n);
	r.csize = r.usize = n;
	r.text = tm.text && !tm.binary;
	return pfc_zip_entry_end(z, &r);
}

/* Returns 1 when the file cannot be read (the caller says so), 0 when copied, <0 on a write
 * error. */
int pfc_zip_add_file(struct pfc_zip *z, const char *entry, const char *path)
{
	struct pfc_zip_out o = { .zip = z };
	struct stat sb;
	FILE *f = fopen(path, "rb");
	struct pfc_zip_sum r;
	int ret;

	if (!f)
		return 1;
	if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
		fclose(f);
		return 1;
	}
	ret = pfc_zip_entry_begin(z, entry, 0, (uint64_t)sb.st_size >= PFC_ZIP64_FROM);
	if (ret == 0 && (ret = pfc_zip_deflate(f, NULL, 0, &o, &r)) < 0) {
		if (ret == -2)
			ret = PFC_FAIL_NOOFF(z->err, IO, "cannot read '%s': %s", path, strerror(errno));
		else if (!z->err->code)
			ret = PFC_FAIL_NOOFF(z->err, NOMEM, "copying '%s'", path);
	}
	if (ret == 0)
		ret = pfc_zip_entry_end(z, &r);
	fclose(f);
	return ret;
}

int pfc_zip_add_deflated(struct pfc_zip *z, const char *name, uint64_t size, const struct pfc_zip_out *d,
			 const struct pfc_zip_sum *sum)
{
	int ret;

	if ((ret = pfc_zip_entry_begin(z, name, 0, size >= PFC_ZIP64_FROM)) < 0 ||
	    (ret = pfc_zip_put(z, d->buf, d->len)) < 0)
		return ret;
	return pfc_zip_entry_end(z, sum);
}

