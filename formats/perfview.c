/*
 * perfview.c - PerfView's `.trace.zip`, laid out as perfcollect makes it: a `NAME.trace/`
 * folder holding perf.data.txt (perf script text in perfconv's canonical form, which old
 * and new PerfView parse), a perfcollect.log of the conversion, the perf maps and jitdumps
 * that resolved JIT frames and, on request, the recording.  The archive is written here
 * (APPNOTE's local headers, zip64 fields, central directory) as minizip wrote it for `zip
 * -r`'s layout (Unix attributes, deflate), with entry times from the recording, so the same input gives the same bytes; perf.data.txt, the bulk of it, is
 * formatted by hand from the sample stream and deflated on worker threads.  Symbols come
 * resolved from the session; this file only prints and packs.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <zlib.h>
#include "converter/machine/intern.h"
#include "converter/machine/machine.h"
#include "converter/jit/perfmap.h"
#include "converter/util/strbuf.h"
#include "converter/native/symtab.h"
#include "formats/frameline.h"
#include "formats/perfscript.h"
#include "formats/tptext.h"
#include "formats/perfview.h"
#include "formats/writer.h"

#define ZIP_VERSION_MADE_BY ((3u << 8) | 30u)  /* Unix, zip 3.0: what Info-ZIP's zip -r writes */
#ifndef PFC_ZIP64_FROM                          /* entries this large (or larger) get zip64 fields */
#define PFC_ZIP64_FROM 0xF0000000ull            /* (a build with a small value tests them) */
#endif
#define CHUNK (256u << 10)

/* ---- perf.data.txt: the canonical text ---- */

/* Names come from the input (comms, ELF symbols, DSO paths): a line break in one would end
 * the header or the frame line early, so it is written as a space, and so is a NUL.  Such
 * names are rare:
 * libc's vectorized memchr finds that there is none faster than a loop over the bytes. */
static inline char *put_name(char *d, const char *s, size_t n)
{
	size_t i;

	if (n <= 32) {
		/* a comm (16 bytes at most): one pass, without three calls into libc */
		for (i = 0; i < n; i++) {
			char c = s[i];
			d[i] = c == '\n' || c == '\r' || c == 0 ? ' ' : c;
		}
		return d + n;
	}
	memcpy(d, s, n);
	if (memchr(s, '\n', n) || memchr(s, '\r', n) || memchr(s, 0, n))
		for (i = 0; i < n; i++)
			if (d[i] == '\n' || d[i] == '\r' || d[i] == 0)
				d[i] = ' ';
	return d + n;
}


/* Bytes a header may take beyond its comm, event name and payload. */
#define HDR_FIXED 120

/* The header line of pfc_perfview_header into d (room for HDR_FIXED + comm, event name and
 * payload); returns its length.  Formatted by hand: there is one per sample. */
static size_t header_fmt(char *d0, struct pfc_session *s, const struct pfc_srec *r, const char *trace,
			 size_t trace_len)
{
	const struct pfc_stack *st = &s->stacks.stacks[r->stack];
	const char *ev = pfc_session_evsel_name(s, st->evsel);
	char *d = d0;

	d = put_name(d, pfc_intern_str(&s->strings, st->comm), pfc_intern_len(&s->strings, st->comm));
	/* PerfView reads no sign: a sample without a thread (-1) is written as 0 */
	*d++ = ' ';
	d = pfc_put_dec(d, st->pid < 0 ? 0 : (uint64_t)st->pid, 1);
	*d++ = '/';
	d = pfc_put_dec(d, st->tid < 0 ? 0 : (uint64_t)st->tid, 1);
	*d++ = ' ';
	if (r->cpu != UINT32_MAX) {
		*d++ = '[';
		d = pfc_put_dec(d, r->cpu, 3);
		*d++ = ']';
		*d++ = ' ';
	}
	d = pfc_put_dec(d, r->time / 1000000000ull, 1);
	*d++ = '.';
	d = pfc_put_dec(d, r->time % 1000000000ull / 1000ull, 6);
	*d++ = ':';
	*d++ = ' ';
	if (r->flags & PFC_S_HAS_PERIOD) {
		d = pfc_put_dec(d, r->period, 1);
		*d++ = ' ';
	}
	{
		size_t n = strlen(ev);
		memcpy(d, ev, n);
		d += n;
	}
	*d++ = ':';
	*d++ = ' ';
	if (trace_len)	/* one line per header, whatever the format prints */
		d = put_name(d, trace, trace_len);
	*d++ = '\n';
	return (size_t)(d - d0);
}

static size_t header_room(struct pfc_session *s, const struct pfc_srec *r, size_t trace_len)
{
	const struct pfc_stack *st = &s->stacks.stacks[r->stack];

	return HDR_FIXED + pfc_intern_len(&s->strings, st->comm) + strlen(pfc_session_evsel_name(s, st->evsel)) +
	       trace_len;
}

int pfc_perfview_header(struct pfc_sb *b, struct pfc_session *s, const struct pfc_srec *r,
			const char *trace, size_t trace_len)
{
	size_t room = header_room(s, r, trace_len);
	char *t = malloc(room);

	if (!t)
		return -1;
	pfc_sb_add(b, t, header_fmt(t, s, r, trace, trace_len));
	free(t);
	return b->oom ? -1 : 0;
}

static size_t frame_room(struct pfc_session *s, const struct pfc_frame *f)
{
	return pfc_frameline_room(&s->strings, f);
}

/* "\t%16llx sym (dso)\n" into d (frame_room bytes), perf script's line with its names'
 * line breaks made spaces; returns its length. */
static size_t frame_fmt(char *d0, struct pfc_session *s, const struct pfc_frame *f)
{
	return pfc_frameline_fmt(d0, &s->strings, f, PFC_PS_SYM | PFC_PS_DSO, put_name);
}

int pfc_perfview_frame(struct pfc_sb *b, struct pfc_session *s, uint32_t fid)
{
	const struct pfc_frame *f = &s->stacks.frames[fid];
	char *t = malloc(frame_room(s, f));

	if (!t)
		return -1;
	pfc_sb_add(b, t, frame_fmt(t, s, f));
	free(t);
	return b->oom ? -1 : 0;
}

/* A block of frame lines. */
#define LBLOCK ((size_t)256 << 10)
struct lblock {
	struct lblock *next;
	size_t used, cap;
	char data[];
};

/* ---- the archive ----
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
#define ZIP_OUTBUF (64u << 10)        /* a side file's deflated bytes, written in these pieces */

struct zent {
	char *name;
	uint64_t lh;                  /* its local header's offset */
	uint64_t csize, usize;
	uint32_t crc;
	uint32_t ext_fa;
	uint16_t flag, method;
	uint16_t int_fa;              /* 1: text, by zlib's rule (tmark_add) */
	int zip64;                    /* the local header has the zip64 extra field */
};

struct pv {
	struct pfc_session *s;
	const struct pfc_wopts *o;
	struct pfc_error *err;
	const char *outname;          /* for messages */
	FILE *fp;                     /* the archive's bytes go here */
	uint64_t pos;                 /* where the next byte goes (offsets count from the stream's start) */
	int sync_fd;                  /* the output file, whose writeback zput starts; -1: none */
	uint64_t synced;              /* pos when it was last started */
	uint64_t sync_step;           /* WRITEBACK_STEP; PERFCONV_WRITEBACK_STEP for the tests */
	struct zent *ent;             /* the entries written, for the central directory */
	size_t nr_ent, cap_ent;
	char *dir;                    /* "NAME.trace/" */
	uint32_t dos_time;            /* entry times, MS-DOS format */
	struct lblock *lines;         /* frame lines, once per unique frame (newest block first) */
	const char **line_str;        /* frame id -> its line (NULL: not made yet), */
	uint32_t *line_len;           /* and its length */
	uint64_t *stack_len;          /* stack id -> bytes of its frame lines + 1 (0: not summed) */
	struct pfc_sb log;
	uint64_t nr_written, nr_with_cpu, nr_no_time, nr_no_tid;
	struct pfc_tptext tp;         /* tracepoint payloads, in stream order */
	const char *tp_why;           /* why they could not be rendered */
	/* side files copied */
	struct side { char *path, *name, *entry; } *side;	/* open path, name where recorded */
	size_t nr_side, cap_side;
};

static int write_fail(struct pv *p, const char *what)
{
	int e = errno;

	return PFC_FAIL_NOOFF(p->err, WRITE, "'%s': cannot write %s%s%s", p->outname, what, e ? ": " : "",
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

static int zput(struct pv *p, const void *b, size_t n)
{
	errno = 0;
	if (n && fwrite(b, 1, n, p->fp) != n)
		return write_fail(p, "an entry");
	p->pos += n;
#ifdef SYNC_FILE_RANGE_WRITE
	if (p->sync_fd >= 0 && p->pos - p->synced >= p->sync_step) {
		/* its write errors are fwrite's and fflush's, reported where they happen */
		if (fflush(p->fp) != 0 || sync_file_range(p->sync_fd, 0, 0, SYNC_FILE_RANGE_WRITE) != 0)
			p->sync_fd = -1;
		p->synced = p->pos;
	}
#endif
	return 0;
}

/* An entry's local header: as first written (`final` 0: no CRC, sizes 0, or 0xffffffff with a
 * zip64 field of zeros), or once the entry is written: with the zip64 field, the 32-bit sizes
 * are replaced by the real ones when they fit, and the field holds them when they do not. */
static size_t local_header(uint8_t *h, const struct zent *e, uint32_t dos, int final)
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

/* Start an entry: its local header, to be completed by entry_end.  `zip64` (the entry may
 * reach 4 GiB) gives its local header the zip64 field. */
static int entry_begin(struct pv *p, const char *name, int dir, int zip64)
{
	struct zent *e;
	uint8_t h[ZIP_LH_SIZE + 20 + 4096];
	size_t n;

	if (strlen(p->dir) + strlen(name) >= 4096)
		return PFC_FAIL_NOOFF(p->err, WRITE, "'%s': entry name too long", p->outname);
	if (p->nr_ent == p->cap_ent) {
		size_t cap = p->cap_ent ? p->cap_ent * 2 : 16;
		struct zent *ne = realloc(p->ent, cap * sizeof(*ne));
		if (!ne)
			return PFC_FAIL_NOOFF(p->err, NOMEM, "trace.zip");
		p->ent = ne;
		p->cap_ent = cap;
	}
	e = &p->ent[p->nr_ent];
	memset(e, 0, sizeof(*e));
	if (!(e->name = malloc(strlen(p->dir) + strlen(name) + 1)))
		return PFC_FAIL_NOOFF(p->err, NOMEM, "trace.zip");
	strcpy(e->name, p->dir);
	strcat(e->name, name);
	p->nr_ent++;
	e->lh = p->pos;
	e->method = dir ? ZIP_STORED : ZIP_DEFLATED;
	/* level 1 marks the deflated entries as fast-compressed */
	e->flag = dir ? 0 : ZIP_FAST;
	/* st_mode in the high 16 bits, as Info-ZIP writes it; MS-DOS directory bit for folders */
	e->ext_fa = dir ? (040755u << 16) | 0x10 : 0100644u << 16;
	e->zip64 = zip64;
	n = local_header(h, e, p->dos_time, 0);
	return zput(p, h, n);
}

/* Complete the open entry's local header, now that its CRC and sizes are known. */
static int entry_end(struct pv *p, uint32_t crc, uint64_t csize, uint64_t usize)
{
	struct zent *e = &p->ent[p->nr_ent - 1];
	uint8_t h[ZIP_LH_SIZE + 20 + 4096];
	size_t n;

	e->crc = crc;
	e->csize = csize;
	e->usize = usize;
	if (!e->zip64 && (csize >= 0xffffffffu || usize >= 0xffffffffu))
		return PFC_FAIL_NOOFF(p->err, WRITE, "'%s': %s is larger than 4 GiB without zip64", p->outname,
				      e->name);
	n = local_header(h, e, p->dos_time, 1);
	errno = 0;
	if (fseeko(p->fp, (off_t)e->lh, SEEK_SET) != 0 || fwrite(h, 1, n, p->fp) != n ||
	    fseeko(p->fp, (off_t)p->pos, SEEK_SET) != 0)
		return write_fail(p, "an entry");
	return 0;
}

/* The central directory and its end record(s). */
static int zip_finish(struct pv *p)
{
	uint64_t cd = p->pos, size = 0;
	uint8_t h[ZIP_CH_SIZE + 4096 + 32], *d;
	size_t i, nl;
	int ret;

	for (i = 0; i < p->nr_ent; i++) {
		const struct zent *e = &p->ent[i];
		int bu = e->usize >= 0xffffffffu, bc = e->csize >= 0xffffffffu, bo = e->lh >= 0xffffffffu;
		unsigned xs = 8u * (unsigned)(bu + bc + bo);

		nl = strlen(e->name);
		d = le32(h, 0x02014b50);
		d = le16(d, bu || bc || bo ? 45 : ZIP_VERSION_MADE_BY);
		d = le16(d, bu || bc || bo ? 45 : 20);
		d = le16(d, e->flag);
		d = le16(d, e->method);
		d = le32(d, p->dos_time);
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
		if ((ret = zput(p, h, (size_t)(d - h))) < 0)
			return ret;
		size += (uint64_t)(d - h);
	}
	if (cd >= 0xffffffffu || p->nr_ent >= 0xffff) {
		uint64_t at = p->pos;

		d = le32(h, 0x06064b50);
		d = le64(d, 44);
		d = le16(d, 45);
		d = le16(d, 45);
		d = le32(d, 0);
		d = le32(d, 0);
		d = le64(d, p->nr_ent);
		d = le64(d, p->nr_ent);
		d = le64(d, size);
		d = le64(d, cd);
		d = le32(d, 0x07064b50);        /* the locator */
		d = le32(d, 0);
		d = le64(d, at);
		d = le32(d, 1);
		if ((ret = zput(p, h, (size_t)(d - h))) < 0)
			return ret;
	}
	d = le32(h, 0x06054b50);
	d = le16(d, 0);
	d = le16(d, 0);
	d = le16(d, p->nr_ent >= 0xffff ? 0xffff : (uint32_t)p->nr_ent);
	d = le16(d, p->nr_ent >= 0xffff ? 0xffff : (uint32_t)p->nr_ent);
	d = le32(d, (uint32_t)size);
	d = le32(d, cd >= 0xffffffffu ? 0xffffffffu : (uint32_t)cd);
	d = le16(d, 0);                         /* comment */
	if ((ret = zput(p, h, (size_t)(d - h))) < 0)
		return ret;
	errno = 0;
	return fflush(p->fp) == 0 ? 0 : write_fail(p, "the archive's directory");
}

/* A side file's deflate stream (ISA-L's igzip at level 1, as perf.data.txt's: zlib level 1
 * took ten times as long on a perf map; the input in CHUNK pieces, the output in ZIP_OUTBUF
 * ones), with its CRC and size, into memory or the archive. */
struct zout {
	struct pv *p;                 /* the archive, or NULL: into buf */
	uint8_t *buf;
	size_t len, cap;
};

static int zout_put(struct zout *z, const uint8_t *b, size_t n)
{
	if (z->p)
		return zput(z->p, b, n);
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

/* Returns 0, -1 out of memory or a write error (the archive's error set), -2 reading `f`
 * failed (errno kept). */
struct zres {
	uint32_t crc;
	uint64_t usize, csize;
	int text;                     /* the entry is marked text (below) */
};

/*
 * The zip's "text" mark, by zlib's rule (deflate's detect_data_type, which minizip marked
 * the entry with): binary when a byte of 0-6, 14-25 or 28-31 occurs, else text when a tab,
 * a line break or a byte from 32 on does.  zlib judged the literals of its first block
 * only; judging every byte gives the same mark to the side files perfconv copies (perf maps
 * and the log are text, a jitdump's header holds small binary numbers).
 */
struct tmark {
	int binary, text;
};

static void tmark_add(struct tmark *t, const uint8_t *b, size_t n)
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

static int deflate_to(FILE *f, const void *mem, size_t mem_len, struct zout *z, struct zres *r)
{
	uint32_t *crc = &r->crc;
	uint64_t *usize = &r->usize, *csize = &r->csize;
	struct isal_zstream zs;
	struct tmark tm = { 0, 0 };
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
			tmark_add(&tm, zs.next_in, n);
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
static int entry_mem(struct pv *p, const char *name, const void *data, size_t n)
{
	struct zout z = { .p = p };
	struct zres r;
	int ret;

	if ((ret = entry_begin(p, name, 0, n >= PFC_ZIP64_FROM)) < 0)
		return ret;
	if ((ret = deflate_to(NULL, data, n, &z, &r)) < 0)
		return p->err->code ? ret : PFC_FAIL_NOOFF(p->err, NOMEM, "deflating %s", name);
	p->ent[p->nr_ent - 1].int_fa = (uint16_t)r.text;
	return entry_end(p, r.crc, r.csize, r.usize);
}

/* ---- perf.data.txt, formatted and deflated on worker threads ----
 * The main thread reads the sample stream (and the tracepoint payloads' text, in the same
 * order) and cuts it into chunks of about TEXT_CHUNK bytes of text.  A worker thread formats
 * a chunk's samples (frame lines and event names are made before the workers start, and only
 * read then) and deflates it on its own (ISA-L's igzip at level 1, with the previous chunk's
 * last 32 KiB as its dictionary), ended with a sync flush, the last one with the final block:
 * their concatenation is one deflate stream, as pigz makes it.  Each worker also takes its
 * chunk's CRC-32 (ISA-L's), combined in order (zlib's crc32_combine).  The entry is written
 * raw, in chunk order.  On this text igzip level 1 deflates about 9 times as fast as zlib
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
 * last 32 KiB, the worker formats again from that chunk's last samples (some 2% more
 * formatting) rather than wait for that chunk's worker.
 */
#define TEXT_CHUNK ((size_t)2 << 20)
#define PIECE ((size_t)512 << 10)             /* igzip takes 512 KiB pieces as fast as whole chunks, 128 KiB ones 35% slower */
#define NSLOTS 10                             /* at most: two a worker, and two */
#define DICT ((size_t)32 << 10)

/* A sample of a chunk, for the worker that formats it. */
struct pvrec {
	struct pfc_srec r;            /* without raw: its text is in the slot's tbuf */
	size_t toff;
	uint32_t tlen;
	uint32_t room;                /* the most bytes its text can take (chunk_add) */
};

struct dslot {
	uint64_t chunk;               /* its number */
	struct pvrec *recs;           /* its samples */
	size_t nr_recs, cap_recs;
	char *tbuf;                   /* their tracepoint payloads' text */
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
struct dfl {
	pthread_mutex_t mu;
	pthread_cond_t work, main;
	struct dslot *main_wait;      /* the slot whose next step the main thread waits for */
	pthread_t th[4];
	int nth;
	unsigned nslots;              /* slots in use */
	size_t chunk_bytes;           /* TEXT_CHUNK; PERFCONV_TEXT_CHUNK for the tests of the ring */
	size_t piece_bytes;           /* PIECE; PERFCONV_TEXT_PIECE for the tests of the pieces */
	size_t out_first;             /* a chunk's first output room; 0: from its text (PERFCONV_DEFLATE_OUT, tests) */
	struct pv *p;
	struct dslot slot[NSLOTS];
	uint64_t next_fill, next_take, next_write;  /* chunk numbers */
	int stop;
	uint64_t total_in, total_out;
	uLong crc;
};

/* A sample's text into d (its room's bytes); returns its length, or SIZE_MAX when a frame
 * line was not made before the workers started. */
static size_t format_rec(struct pv *p, const struct dslot *sl, const struct pvrec *pr, char *d)
{
	struct pfc_session *s = p->s;
	const struct pfc_stack *st = &s->stacks.stacks[pr->r.stack];
	const uint32_t *fids = s->stacks.frame_ids + st->first;
	char *d0 = d;
	size_t k;

	d += header_fmt(d, s, &pr->r, sl->tbuf + pr->toff, pr->tlen);
	for (k = 0; k < st->nr; k++) {
		uint32_t fid = fids[k];
		if (!p->line_str[fid])
			return SIZE_MAX;
		memcpy(d, p->line_str[fid], p->line_len[fid]);
		d += p->line_len[fid];
	}
	/* the blank line ends every sample, with or without frames (old PerfView needs it) */
	*d++ = '\n';
	return (size_t)(d - d0);
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

/* The last min(its text, DICT) bytes of the previous chunk's text, into w: its last samples,
 * as many as their frame lines alone fill DICT (or all), formatted again. */
static int prev_tail(struct pv *p, const struct dslot *prev, struct wbuf *w, const char **dict, size_t *n)
{
	size_t i = prev->nr_recs, lines = 0, room = 0, len = 0, k;

	while (i > 0 && lines < DICT) {
		i--;
		lines += p->stack_len[prev->recs[i].r.stack];
		room += prev->recs[i].room;
	}
	if (wbuf_room(w, room) < 0)
		return -1;
	for (k = i; k < prev->nr_recs; k++) {
		size_t m = format_rec(p, prev, &prev->recs[k], w->b + len);
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
static int deflate_chunk(struct dfl *d, struct dslot *sl, struct isal_zstream *z, uint8_t *level_buf,
			 struct wbuf *w)
{
	struct pv *p = d->p;
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
		ok = prev->chunk == sl->chunk - 1 && prev_tail(p, prev, w, &dict, &dict_len) == 0;
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
		size_t room = sl->recs[i].room, m;
		if (len && len + room > w->cap) {
			if (deflate_piece(z, sl, w->b, len, 0) < 0)
				return -1;
			sl->crc = crc32_gzip_refl(sl->crc, (const uint8_t *)w->b, len);
			sl->len += len;
			len = 0;
		}
		if (room > w->cap && wbuf_room(w, room) < 0)	/* a sample longer than a piece */
			return -1;
		if ((m = format_rec(p, sl, &sl->recs[i], w->b + len)) == SIZE_MAX)
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
	struct dfl *d = arg;
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

static int dfl_start(struct dfl *d, struct pv *p)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int i, n = ncpu > 4 ? 4 : ncpu < 1 ? 1 : (int)ncpu;

	const char *cb = getenv("PERFCONV_TEXT_CHUNK"), *ob = getenv("PERFCONV_DEFLATE_OUT");
	const char *pb = getenv("PERFCONV_TEXT_PIECE");

	memset(d, 0, sizeof(*d));
	d->p = p;
	d->chunk_bytes = cb && *cb ? strtoull(cb, NULL, 10) : TEXT_CHUNK;
	if (!d->chunk_bytes || d->chunk_bytes > TEXT_CHUNK)
		d->chunk_bytes = TEXT_CHUNK;
	d->piece_bytes = pb && *pb ? strtoull(pb, NULL, 10) : PIECE;
	if (!d->piece_bytes || d->piece_bytes > PIECE)
		d->piece_bytes = PIECE;
	d->out_first = ob && *ob ? strtoull(ob, NULL, 10) : 0;
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

static void dfl_stop(struct dfl *d)
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
static int dfl_write_one(struct pv *p, struct dfl *d, int wait)
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
		return PFC_FAIL_NOOFF(p->err, NOMEM, "deflating perf.data.txt");
	if (st != 3)
		return 0;
	d->crc = crc32_combine(d->crc, sl->crc, (z_off_t)sl->len);
	d->total_in += sl->len;
	if ((ret = zput(p, sl->out, sl->out_len)) < 0)
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
static int dfl_fill_slot(struct pv *p, struct dfl *d, struct dslot **out)
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
		if ((ret = dfl_write_one(p, d, 1)) < 0)
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
static int dfl_submit(struct pv *p, struct dfl *d, int final)
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
	if ((ret = dfl_fill_slot(p, d, &nx)) < 0)
		return ret;
	/* write what is done already, without waiting */
	while ((ret = dfl_write_one(p, d, 0)) > 0)
		;
	return ret;
}

/* Add a sample to the chunk being filled, and the bytes of text it can take to the chunk's need. */
static int chunk_add(struct pv *p, struct dslot *sl, const struct pfc_srec *r, const char *trace, uint32_t tlen,
		     uint64_t frame_bytes)
{
	/* its header line, its frame lines and the blank line: worked out once, here */
	uint64_t room = header_room(p->s, r, tlen) + frame_bytes + 1;
	struct pvrec *pr;

	if (room > UINT32_MAX)
		return PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt: a sample of %llu bytes of text",
				      (unsigned long long)room);
	if (sl->nr_recs == sl->cap_recs) {
		size_t cap = sl->cap_recs ? sl->cap_recs * 2 : 4096;
		struct pvrec *n = realloc(sl->recs, cap * sizeof(*n));
		if (!n)
			return PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt");
		sl->recs = n;
		sl->cap_recs = cap;
	}
	if (tlen && sl->tlen + tlen > sl->tcap) {
		size_t cap = sl->tcap ? sl->tcap : 1 << 16;
		char *n;
		while (cap < sl->tlen + tlen)
			cap *= 2;
		if (!(n = realloc(sl->tbuf, cap)))
			return PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt");
		sl->tbuf = n;
		sl->tcap = cap;
	}
	pr = &sl->recs[sl->nr_recs++];
	pr->r = *r;
	pr->r.raw = NULL;
	pr->toff = sl->tlen;
	pr->tlen = tlen;
	if (tlen)
		memcpy(sl->tbuf + sl->tlen, trace, tlen);
	sl->tlen += tlen;
	pr->room = (uint32_t)room;
	sl->need += room;
	return 0;
}

/* The frame line of a unique frame, formatted once into the blocks of p->lines (frame ids
 * are unique frames: their lines need no interning). */
static int frame_line(struct pv *p, uint32_t fid, const char **str, size_t *len)
{
	if (!p->line_str[fid]) {
		const struct pfc_frame *f = &p->s->stacks.frames[fid];
		size_t room = frame_room(p->s, f), n;
		struct lblock *b = p->lines;
		if (!b || b->cap - b->used < room) {
			size_t cap = room > LBLOCK ? room : LBLOCK;
			if (!(b = malloc(sizeof(*b) + cap)))
				return PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt");
			b->next = p->lines;
			b->used = 0;
			b->cap = cap;
			p->lines = b;
		}
		n = frame_fmt(b->data + b->used, p->s, f);
		if (n > UINT32_MAX)
			return PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt: a frame line of %zu bytes", n);
		p->line_str[fid] = b->data + b->used;
		p->line_len[fid] = (uint32_t)n;
		b->used += n;
	}
	*str = p->line_str[fid];
	*len = p->line_len[fid];
	return 0;
}

/* The frame lines of a stack, summed once (for the entry's size). */
static int stack_bytes(struct pv *p, uint32_t sid, uint64_t *n)
{
	const struct pfc_stack *st = &p->s->stacks.stacks[sid];
	uint64_t sum = 0;
	size_t k;
	int ret;

	if (p->stack_len[sid]) {
		*n = p->stack_len[sid] - 1;
		return 0;
	}
	for (k = 0; k < st->nr; k++) {
		const char *l = NULL;
		size_t len = 0;
		if ((ret = frame_line(p, p->s->stacks.frame_ids[st->first + k], &l, &len)) < 0)
			return ret;
		sum += len;
	}
	p->stack_len[sid] = sum + 1;
	*n = sum;
	return 0;
}

/* Every sample in time order.  With `size`, only count the bytes (the entry's size must
 * be known before it is opened, to choose zip64) and the samples the log tells about;
 * otherwise hand them to the workers in chunks, to format and deflate into the open entry. */
static int emit_text(struct pv *p, uint64_t *size, struct dfl *d)
{
	struct pfc_session *s = p->s;
	struct pfc_stream_cur cur;
	struct pfc_srec r;
	struct dslot *sl = NULL;
	char hdr[512], *hbig = NULL;
	size_t hbig_cap = 0;
	uint64_t total = 0;
	int ret = 0, got;

	if (pfc_tptext_rewind(&p->tp) < 0)
		p->tp_why = "cannot read back the rendered payloads";
	if (pfc_stream_open(&cur, &s->stream) < 0)
		return PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt");
	if (d && (ret = dfl_fill_slot(p, d, &sl)) < 0)
		goto out;
	while ((got = pfc_stream_next(&cur, &r)) > 0) {
		const struct pfc_stack *st = &s->stacks.stacks[r.stack];
		const char *trace;
		uint32_t tlen;
		uint64_t fb;
		size_t room, hl;
		char *h = hdr;

		pfc_tptext_next(&p->tp, &r, &trace, &tlen);
		p->nr_written++;
		if (r.cpu != UINT32_MAX)
			p->nr_with_cpu++;
		if (!(r.flags & PFC_S_HAS_TIME))
			p->nr_no_time++;
		if (st->pid < 0 || st->tid < 0)
			p->nr_no_tid++;
		if (!size) {
			/* the lines are made (lines_ready): the workers read them now */
			if (!p->stack_len[r.stack]) {
				ret = PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt: a stack without its lines");
				break;
			}
			fb = p->stack_len[r.stack] - 1;
			if ((ret = chunk_add(p, sl, &r, trace, tlen, fb)) < 0)
				break;
			/* a sample's lines go to one chunk: a chunk ends after the sample that fills it */
			if (sl->need >= d->chunk_bytes) {
				if ((ret = dfl_submit(p, d, 0)) < 0)
					break;
				sl = &d->slot[d->next_fill % d->nslots];
			}
			continue;
		}
		if ((ret = stack_bytes(p, r.stack, &fb)) < 0)
			break;
		room = header_room(s, &r, tlen);
		if (room > sizeof(hdr)) {
			if (room > hbig_cap) {
				char *n = realloc(hbig, room);
				if (!n) {
					ret = PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt");
					break;
				}
				hbig = n;
				hbig_cap = room;
			}
			h = hbig;
		}
		hl = header_fmt(h, s, &r, trace, tlen);
		total += hl + fb + 1;
	}
	if (got < 0 && ret == 0)
		ret = PFC_FAIL_NOOFF(p->err, IO, "cannot read the sample stream back");
	if (ret == 0 && d) {
		if ((ret = dfl_submit(p, d, 1)) == 0)
			while ((ret = dfl_write_one(p, d, 1)) > 0)
				;
	}
out:
	pfc_stream_close(&cur);
	free(hbig);
	if (size)
		*size = total;
	return ret;
}

/* More bytes than perf.data.txt can have, from the samples of each stack (0: no bound, the
 * tracepoint payloads' text is not known before it is read). */
static int text_bound(struct pv *p, uint64_t *bound)
{
	struct pfc_session *s = p->s;
	uint64_t b = 0, fb;
	size_t i;
	int ret;

	*bound = 0;
	if (p->tp.f)
		return 0;
	for (i = 0; i < s->nr_stream_per_stack && i < s->stacks.nr_stacks; i++) {
		const struct pfc_stack *st = &s->stacks.stacks[i];
		uint64_t n = s->stream_per_stack[i];
		if (!n)
			continue;
		if ((ret = stack_bytes(p, (uint32_t)i, &fb)) < 0)
			return ret;
		b += n * (fb + 1 + HDR_FIXED + pfc_intern_len(&s->strings, st->comm) +
			  strlen(pfc_session_evsel_name(s, st->evsel)));
	}
	*bound = b;
	return 0;
}

/* Every frame line and event name the samples use, made before the workers read them. */
static int lines_ready(struct pv *p)
{
	struct pfc_session *s = p->s;
	uint64_t fb;
	size_t i;
	int ret;

	for (i = 0; i < s->rd.nr_evsels; i++)
		(void)pfc_session_evsel_name(s, i);
	for (i = 0; i < s->nr_stream_per_stack && i < s->stacks.nr_stacks; i++)
		if (s->stream_per_stack[i] && (ret = stack_bytes(p, (uint32_t)i, &fb)) < 0)
			return ret;
	return 0;
}

static int add_text(struct pv *p)
{
	struct dfl d;
	uint64_t size = 0, bound;
	int ret, counted = 0;

	/* the size decides zip64: counted exactly only when a bound does not settle it */
	if ((ret = text_bound(p, &bound)) < 0)
		return ret;
	if (!bound || bound >= PFC_ZIP64_FROM) {
		if ((ret = emit_text(p, &size, NULL)) < 0)
			return ret;
		counted = 1;
		p->nr_written = p->nr_with_cpu = p->nr_no_time = p->nr_no_tid = 0;
	}
	/* the deflate stream is made here, on the workers */
	if ((ret = entry_begin(p, "perf.data.txt", 0, counted && size >= PFC_ZIP64_FROM)) < 0)
		return ret;
	if ((ret = lines_ready(p)) < 0)
		return ret;
	if (dfl_start(&d, p) < 0) {
		dfl_stop(&d);
		return PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt");
	}
	ret = emit_text(p, NULL, &d);
	if (ret == 0 && counted && d.total_in != size)
		ret = PFC_FAIL_NOOFF(p->err, NOMEM, "perf.data.txt: %llu bytes written, %llu counted",
				     (unsigned long long)d.total_in, (unsigned long long)size);
	if (ret == 0)
		ret = entry_end(p, (uint32_t)d.crc, d.total_out, d.total_in);
	dfl_stop(&d);
	return ret;
}

/* Copy a file from disk into an entry.  Returns 1 when the file cannot be read (the
 * caller logs it), 0 when copied, <0 on a write error. */
static int add_file(struct pv *p, const char *path, const char *entry)
{
	struct zout z = { .p = p };
	struct stat sb;
	FILE *f = fopen(path, "rb");
	struct zres r;
	int ret;

	if (!f)
		return 1;
	if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
		fclose(f);
		return 1;
	}
	ret = entry_begin(p, entry, 0, (uint64_t)sb.st_size >= PFC_ZIP64_FROM);
	if (ret == 0 && (ret = deflate_to(f, NULL, 0, &z, &r)) < 0) {
		if (ret == -2)
			ret = PFC_FAIL_NOOFF(p->err, IO, "cannot read '%s': %s", path, strerror(errno));
		else if (!p->err->code)
			ret = PFC_FAIL_NOOFF(p->err, NOMEM, "copying '%s'", path);
	}
	if (ret == 0) {
		p->ent[p->nr_ent - 1].int_fa = (uint16_t)r.text;
		ret = entry_end(p, r.crc, r.csize, r.usize);
	}
	fclose(f);
	return ret;
}

static int side_add(struct pv *p, const char *path, const char *name, const char *entry)
{
	size_t i;

	for (i = 0; i < p->nr_side; i++)
		if (!strcmp(p->side[i].entry, entry))
			return 0;
	if (p->nr_side == p->cap_side) {
		size_t cap = p->cap_side ? p->cap_side * 2 : 8;
		struct side *n = realloc(p->side, cap * sizeof(*n));
		if (!n)
			return PFC_FAIL_NOOFF(p->err, NOMEM, "side files");
		p->side = n;
		p->cap_side = cap;
	}
	p->side[p->nr_side].path = strdup(path);
	p->side[p->nr_side].name = strdup(name);
	p->side[p->nr_side].entry = strdup(entry);
	if (!p->side[p->nr_side].path || !p->side[p->nr_side].name || !p->side[p->nr_side].entry) {
		free(p->side[p->nr_side].path);
		free(p->side[p->nr_side].name);
		free(p->side[p->nr_side].entry);
		return PFC_FAIL_NOOFF(p->err, NOMEM, "side files");
	}
	p->nr_side++;
	return 0;
}

static int cmp_side(const void *a, const void *b)
{
	return strcmp(((const struct side *)a)->entry, ((const struct side *)b)->entry);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static int side_found(void *arg, const char *path, const char *name, const char *entry)
{
	return side_add(arg, path, name, entry);
}

/* The perf maps that resolved frames, their perfinfo files, and the jitdumps of the
 * processes with JIT frames (found like the maps: --map-dir, then /tmp, or a pack). */
static int collect_side_files(struct pv *p)
{
	int ret = pfc_session_side_files(p->s, side_found, p);

	if (p->nr_side)
		qsort(p->side, p->nr_side, sizeof(*p->side), cmp_side);
	return ret;
}

/* Entry times: when the recording was made, as perf report's "captured on" tells it (the
 * input's modification time); 1980-01-01 for a stream. */
static void entry_time(struct pv *p)
{
	unsigned year = 0, mon = 0, mday = 1, hour = 0, min = 0, sec = 0;
	struct tm tm;
	time_t t;

	if (p->s->rd.have_mtime) {
		t = (time_t)p->s->rd.mtime;
		if (gmtime_r(&t, &tm) && tm.tm_year + 1900 >= 1980 && tm.tm_year + 1900 <= 2107) {
			year = (unsigned)tm.tm_year + 1900 - 1980;
			mon = (unsigned)tm.tm_mon;
			mday = (unsigned)tm.tm_mday;
			hour = (unsigned)tm.tm_hour;
			min = (unsigned)tm.tm_min;
			sec = (unsigned)tm.tm_sec;
		}
	}
	p->dos_time = ((mday + 32 * (mon + 1) + 512 * year) << 16) | (sec / 2 + 32 * min + 2048 * hour);
}

/* NAME of NAME.trace.zip (or NAME.zip); for stdout, the input's name without ".data". */
static char *trace_name(const struct pfc_wopts *o, const char *input)
{
	const char *b;
	size_t n;
	char *r;

	if (o->output && strcmp(o->output, "-")) {
		b = base_name(o->output);
		n = strlen(b);
		if (n > 10 && !strcasecmp(b + n - 10, ".trace.zip"))
			n -= 10;
		else if (n > 4 && !strcasecmp(b + n - 4, ".zip"))
			n -= 4;
	} else if (input && strcmp(input, "-")) {
		b = base_name(input);
		n = strlen(b);
		if (n > 5 && !strcmp(b + n - 5, ".data"))
			n -= 5;
	} else {
		b = "perf";
		n = 4;
	}
	if (!n) {
		b = "perf";
		n = 4;
	}
	r = malloc(n + 8);
	if (r)
		snprintf(r, n + 8, "%.*s.trace/", (int)n, b);
	return r;
}

/* ---- perfcollect.log ---- */

static const char *dso_kind_name(enum pfc_dso_kind k)
{
	switch (k) {
	case PFC_DSO_FILE: return "elf";
	case PFC_DSO_KERNEL: return "kernel";
	case PFC_DSO_PERFMAP: return "perf-map";
	case PFC_DSO_VDSO: return "vdso";
	case PFC_DSO_KSYM: return "ksymbol";
	default: return "other";
	}
}

static void build_log(struct pv *p, int have_perf_data)
{
	struct pfc_session *s = p->s;
	const struct pfc_opts *so = s->opts;
	const struct pfc_machine *m = &s->machine;
	struct pfc_sb *L = &p->log;
	uint64_t with_cpu = p->nr_with_cpu, written = p->nr_written;
	size_t i;

	pfc_sb_addf(L, "perfconv %s: PerfView trace from a perf.data recording\n", p->o->version ? p->o->version : "");
	if (p->o->command_line)
		pfc_sb_addf(L, "Command line: %s\n", p->o->command_line);
	pfc_sb_addf(L, "Input: %s (%s, %s byte order%s)\n", so->input, s->rd.pipe_mode ? "pipe mode" : "file mode",
		    s->rd.swap ? "opposite" : "native", s->rd.bytes_total ? "" : ", read as a stream");
	if (s->rd.bytes_total)
		pfc_sb_addf(L, "Input size: %llu bytes\n", (unsigned long long)s->rd.bytes_total);
	pfc_sb_addf(L, "Records: %llu\n", (unsigned long long)s->st.nr_records);
	for (i = 0; i < s->rd.nr_evsels; i++)
		pfc_sb_addf(L, "Event: %s: %llu samples\n", pfc_session_evsel_name(s, i),
			    (unsigned long long)s->rd.evsels[i]->nr_samples);
	pfc_sb_addf(L, "Samples: %llu read, %llu written to perf.data.txt (%zu unique stacks, %zu unique frames)\n",
		    (unsigned long long)s->st.nr_samples, (unsigned long long)written, s->stacks.nr_stacks,
		    s->stacks.nr_frames);
	pfc_sb_addf(L, "Fields: comm,pid,tid,%stime,period,event,ip,sym,dso,trace\n", with_cpu ? "cpu," : "");
	if (written && with_cpu < written)
		pfc_sb_addf(L, "Warning: %llu of %llu samples have no cpu field: PerfView will weight those samples "
			       "globally (by the gap to the previous sample of any CPU), not per CPU\n",
			    (unsigned long long)(written - with_cpu), (unsigned long long)written);
	if (p->nr_no_time)
		pfc_sb_addf(L, "Warning: %llu samples have no time stamp (recorded without time): they are written "
			       "with time 0.000000, and PerfView cannot weight them\n",
			    (unsigned long long)p->nr_no_time);
	if (s->st.nr_lost_events || s->st.nr_lost_samples)
		pfc_sb_addf(L, "Warning: %llu events lost in %llu LOST records, %llu samples lost\n",
			    (unsigned long long)s->st.nr_lost_events, (unsigned long long)s->st.nr_lost_records,
			    (unsigned long long)s->st.nr_lost_samples);
	if (p->nr_no_tid)
		pfc_sb_addf(L, "Warning: %llu samples have no pid/tid: they are written as 0/0\n",
			    (unsigned long long)p->nr_no_tid);
	if (p->o->output && strcmp(p->o->output, "-") &&
	    (strlen(p->o->output) < 10 || strcasecmp(p->o->output + strlen(p->o->output) - 10, ".trace.zip")))
		pfc_sb_adds(L, "Warning: PerfView opens this archive only under a name ending in .trace.zip\n");
	if (p->tp_why)
		pfc_sb_addf(L, "Warning: tracepoint payloads are not written: %s\n", p->tp_why);
	if (s->st.nr_samples_bad)
		pfc_sb_addf(L, "Warning: %llu samples could not be decoded\n", (unsigned long long)s->st.nr_samples_bad);
	if (s->st.nr_dwarf_cut_stack + s->st.nr_dwarf_bad_regs + s->st.nr_dwarf_bad_cfi)
		pfc_sb_addf(L, "Warning: %llu user stacks recorded with --call-graph dwarf were cut short "
			       "(%llu by the end of the copied stack, %llu by missing registers, %llu by unusable CFI)\n",
			    (unsigned long long)(s->st.nr_dwarf_cut_stack + s->st.nr_dwarf_bad_regs + s->st.nr_dwarf_bad_cfi),
			    (unsigned long long)s->st.nr_dwarf_cut_stack, (unsigned long long)s->st.nr_dwarf_bad_regs,
			    (unsigned long long)s->st.nr_dwarf_bad_cfi);
	pfc_sb_addf(L, "Symbol options: symfs %s, kallsyms %s, build-id cache %s, perf maps from %s%s%s\n",
		    so->symfs ? so->symfs : "(none)", so->kallsyms ? so->kallsyms : "/proc/kallsyms if the kernel matches",
		    so->buildid_dir ? so->buildid_dir : "(none)", so->map_dir ? so->map_dir : "/tmp",
		    so->map_dir ? " then /tmp" : "", so->minidebuginfo ? ", MiniDebugInfo" : "");
	pfc_sb_adds(L, "Symbol sources used (DSOs with sampled frames):\n");
	for (i = 0; i < m->nr_dsos; i++) {
		const struct pfc_dso *d = m->dsos[i];
		size_t nsym = d->perfmap ? d->perfmap->n : d->syms ? d->syms->nr : 0;

		if (!d->loaded && d->kind != PFC_DSO_KSYM)
			continue;
		pfc_sb_addf(L, "  %s %s: ", dso_kind_name(d->kind), d->name);
		if (d->kind == PFC_DSO_KSYM)
			pfc_sb_adds(L, "named by a KSYMBOL record\n");
		else if (nsym && d->perfmap_path)
			pfc_sb_addf(L, "%zu symbols from %s\n", nsym, d->perfmap_path);
		else if (nsym)
			pfc_sb_addf(L, "%zu symbols\n", nsym);
		else
			pfc_sb_adds(L, "no symbols found\n");
	}
	pfc_sb_addf(L, "Unresolved frames (unique): %llu user, %llu kernel, %llu outside any mapping\n",
		    (unsigned long long)s->st.nr_unresolved_user, (unsigned long long)s->st.nr_unresolved_kernel,
		    (unsigned long long)s->st.nr_unresolved_nomap);
	for (i = 0; i < p->nr_side; i++)
		pfc_sb_addf(L, "Copied %s from %s\n", p->side[i].entry, p->side[i].name);
	if (have_perf_data)
		pfc_sb_addf(L, "Copied perf.data from %s\n", so->input);
	if (p->o->warnings && *p->o->warnings) {
		const char *w = p->o->warnings;
		pfc_sb_adds(L, "Conversion warnings:\n");
		while (*w) {
			const char *e = strchr(w, '\n');
			size_t n = e ? (size_t)(e - w) : strlen(w);
			pfc_sb_adds(L, "  ");
			pfc_sb_add(L, w, n);
			pfc_sb_addc(L, '\n');
			w += n + (e ? 1 : 0);
		}
	}
}

/* ---- the side files, deflated beside the text ----
 * igzip deflates the side files (a busy service's perf map is near a megabyte) on a thread
 * of their own while the workers make perf.data.txt, into memory; the main thread writes them
 * after the text, in the same order and with the same bytes as when it deflated them itself.
 * A file larger than SIDE_MEM_MAX (a recording with --include-perf-data) is deflated there,
 * into the archive, as before. */
#define SIDE_MEM_MAX ((uint64_t)64 << 20)

struct pre {
	const char *path;
	int state;                    /* 0 not done (deflate it in line), 1 done, 2 cannot be opened, */
	int err_no;                   /* 3 read error (errno), 4 out of memory */
	uint64_t size;                /* fstat's, which decides zip64 */
	struct zres r;
	struct zout z;
};

struct side_job {
	struct pre *pre;
	size_t n;
	pthread_t th;
	int started;
};

static void side_deflate(struct pre *pr)
{
	struct stat sb;
	FILE *f = fopen(pr->path, "rb");
	int ret;

	if (!f) {
		pr->err_no = errno;
		pr->state = 2;
		return;
	}
	if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
		pr->err_no = errno;
		pr->state = 2;
	} else if ((uint64_t)sb.st_size <= SIDE_MEM_MAX) {
		pr->size = (uint64_t)sb.st_size;
		ret = deflate_to(f, NULL, 0, &pr->z, &pr->r);
		pr->err_no = errno;
		pr->state = ret == 0 ? 1 : ret == -2 ? 3 : 4;
	}
	fclose(f);
}

static void *side_main(void *arg)
{
	struct side_job *j = arg;
	size_t i;

	for (i = 0; i < j->n; i++)
		side_deflate(&j->pre[i]);
	return NULL;
}

/* Write a side file deflated by side_main; returns add_file's values. */
static int add_pre(struct pv *p, struct pre *pr, const char *entry)
{
	int ret;

	switch (pr->state) {
	case 0:
		return add_file(p, pr->path, entry);
	case 2:
		errno = pr->err_no;
		return 1;
	case 3:
		return PFC_FAIL_NOOFF(p->err, IO, "cannot read '%s': %s", pr->path, strerror(pr->err_no));
	case 4:
		return PFC_FAIL_NOOFF(p->err, NOMEM, "copying '%s'", pr->path);
	}
	if ((ret = entry_begin(p, entry, 0, pr->size >= PFC_ZIP64_FROM)) < 0 ||
	    (ret = zput(p, pr->z.buf, pr->z.len)) < 0)
		return ret;
	p->ent[p->nr_ent - 1].int_fa = (uint16_t)pr->r.text;
	return entry_end(p, pr->r.crc, pr->r.csize, pr->r.usize);
}

static int pack(struct pv *p)
{
	const char *input = p->s->recording_path;
	int ret, have_perf_data = 0, want_data = p->o->include_perf_data && input && strcmp(input, "-");
	struct side_job job = { 0 };
	size_t i;

	entry_time(p);
	if ((ret = entry_begin(p, "", 1, 0)) < 0 || (ret = entry_end(p, 0, 0, 0)) < 0)
		return ret;
	if ((ret = collect_side_files(p)) < 0)
		return ret;
	job.n = p->nr_side + (want_data ? 1 : 0);
	if (job.n && !(job.pre = calloc(job.n, sizeof(*job.pre))))
		return PFC_FAIL_NOOFF(p->err, NOMEM, "side files");
	for (i = 0; i < p->nr_side; i++)
		job.pre[i].path = p->side[i].path;
	if (want_data)
		job.pre[p->nr_side].path = input;
	/* without the thread, each file is deflated in line below */
	if (job.n && pthread_create(&job.th, NULL, side_main, &job) == 0)
		job.started = 1;
	ret = add_text(p);
	if (job.started)
		pthread_join(job.th, NULL);
	for (i = 0; ret == 0 && i < p->nr_side; i++) {
		ret = add_pre(p, &job.pre[i], p->side[i].entry);
		if (ret > 0) {	/* gone since it was read: say so in the log */
			pfc_sb_addf(&p->log, "Warning: cannot read %s any more: not copied\n", p->side[i].name);
			free(p->side[i].entry);
			p->side[i].entry = strdup("(not copied)");
			ret = 0;
		}
	}
	if (ret == 0 && p->o->include_perf_data) {
		if (!want_data) {
			ret = PFC_FAIL_NOOFF(p->err, USAGE, "--include-perf-data needs the recording as a file, not stdin");
		} else {
			ret = add_pre(p, &job.pre[p->nr_side], "perf.data");
			if (ret > 0)
				ret = PFC_FAIL_NOOFF(p->err, OPEN, "cannot read '%s' for --include-perf-data: %s", input,
						     strerror(errno));
			have_perf_data = ret == 0;
		}
	}
	for (i = 0; i < job.n; i++)
		free(job.pre[i].z.buf);
	free(job.pre);
	if (ret < 0)
		return ret;
	{
		struct pfc_sb early = p->log;	/* warnings found while copying come last */
		memset(&p->log, 0, sizeof(p->log));
		build_log(p, have_perf_data);
		if (early.len)
			pfc_sb_add(&p->log, early.buf, early.len);
		pfc_sb_free(&early);
	}
	if (p->log.oom)
		return PFC_FAIL_NOOFF(p->err, NOMEM, "perfcollect.log");
	return entry_mem(p, "perfcollect.log", p->log.buf, p->log.len);
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

static int pv_write(FILE *out, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err)
{
	struct pv p;
	off_t at;
	int ret, seekable;
	size_t i;

	memset(&p, 0, sizeof(p));
	p.s = s;
	p.o = o;
	p.err = err;
	p.outname = o->output && strcmp(o->output, "-") ? o->output : "<stdout>";
	/* the zip's local headers are completed in place: a pipe gets the archive from a
	 * temporary file */
	seekable = fseeko(out, 0, SEEK_CUR) == 0 && (at = ftello(out)) >= 0;
	p.fp = seekable ? out : tmpfile();
	if (!p.fp)
		return PFC_FAIL_NOOFF(err, WRITE, "cannot create a temporary file: %s", strerror(errno));
	p.pos = seekable ? (uint64_t)at : 0;
	p.synced = p.pos;
	p.sync_fd = -1;
	p.sync_step = WRITEBACK_STEP;
	{
		const char *e = getenv("PERFCONV_WRITEBACK_STEP");
		if (e && *e && strtoull(e, NULL, 10))
			p.sync_step = strtoull(e, NULL, 10);
	}
	if (seekable) {
		struct stat sb;
		int fd = fileno(out);
		if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode))
			p.sync_fd = fd;
	}
	p.dir = trace_name(o, s->recording_name);
	p.line_str = calloc(s->stacks.nr_frames + 1, sizeof(*p.line_str));
	p.line_len = calloc(s->stacks.nr_frames + 1, sizeof(*p.line_len));
	p.stack_len = calloc(s->stacks.nr_stacks + 1, sizeof(*p.stack_len));
	if (!p.dir || !p.line_str || !p.line_len || !p.stack_len) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "trace.zip");
		goto out;
	}
	/* the archive is written without payloads it cannot have (p.tp_why goes to the log),
	 * even when the tracing data is malformed; only running out of memory stops it */
	ret = pfc_tptext_render(s, NULL, NULL, &p.tp, &p.tp_why, err);
	if (ret == 0 || p.tp_why) {
		memset(err, 0, sizeof(*err));
		ret = pack(&p);
	}
	if (ret == 0)
		ret = zip_finish(&p);
	if (ret == 0 && !seekable && copy_stream(p.fp, out) < 0)
		ret = write_fail(&p, "the archive");
out:
	if (p.fp && p.fp != out)
		fclose(p.fp);
	for (i = 0; i < p.nr_ent; i++)
		free(p.ent[i].name);
	free(p.ent);
	for (i = 0; i < p.nr_side; i++) {
		free(p.side[i].path);
		free(p.side[i].name);
		free(p.side[i].entry);
	}
	free(p.side);
	free(p.dir);
	free(p.line_str);
	free(p.line_len);
	free(p.stack_len);
	while (p.lines) {
		struct lblock *n = p.lines->next;
		free(p.lines);
		p.lines = n;
	}
	pfc_sb_free(&p.log);
	pfc_tptext_free(&p.tp);
	return ret;
}

static const char *const perfview_suffixes[] = { ".trace.zip", NULL };

const struct pfc_writer pfc_writer_perfview = {
	.name = "trace.zip",
	.suffixes = perfview_suffixes,
	.needs = PFC_NEED_STREAM | PFC_NEED_LOG | PFC_NO_GZIP,
	.write = pv_write,
};
