/*
 * tpformat.c - tracepoint payloads as text, the way `perf script` prints its "trace" field.
 * The recording's tracing data (the TRACING_DATA feature: perf's copy of the kernel's
 * tracefs format files) is read through a bounds-checked cursor and its event formats are
 * handed to libtraceevent, which renders a sample's raw payload.  Only the formats are
 * used: kallsyms, printk formats and saved comms in the same blob are skipped.
 * libtraceevent trusts the format text (a bad one can crash it or divide by zero), so a
 * conversion renders its payloads in a child process: a hostile recording then costs the
 * payloads, never the conversion.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>
#include "converter/bytes.h"
#include "converter/session.h"
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

static int ident_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether the field `name` (len bytes) is declared by a "field:TYPE NAME[...];" line. */
static int has_field(const char *b, size_t n, const char *name, size_t len)
{
	const char *p = b, *end = b + n;

	while ((p = memmem(p, (size_t)(end - p), "field:", 6))) {
		const char *semi = memchr(p, ';', (size_t)(end - p)), *e;
		if (!semi)
			return 0;
		e = semi;
		if (e > p && e[-1] == ']')	/* an array: NAME[N] */
			while (e > p && *e != '[')
				e--;
		if ((size_t)(e - p) >= len + 1 && !memcmp(e - len, name, len) && !ident_char((unsigned char)e[-len - 1]))
			return 1;
		p = semi;
	}
	return 0;
}

/* libtraceevent trusts the format text it parses: a print format naming a field that the
 * format does not declare crashes it.  So a format is handed over only when it is plain
 * text and every REC->field of its print format is declared. */
static int format_sane(const char *b, size_t n)
{
	const char *p, *end = b + n;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)b[i];
		if ((c < 0x20 || c > 0x7e) && c != '\n' && c != '\t')
			return 0;
	}
	p = memmem(b, n, "print fmt:", 10);
	if (!p)
		return 0;
	/* in the arguments (outside string literals): no division (by zero traps), nesting
	 * kept shallow (the parser recurses) */
	{
		const char *q;
		int quote = 0, depth = 0;
		for (q = p + 10; q < end; q++) {
			if (quote) {
				if (*q == '\\' && q + 1 < end)
					q++;
				else if (*q == '"')
					quote = 0;
				continue;
			}
			if (*q == '"')
				quote = 1;
			else if (*q == '/' || *q == '%')
				return 0;
			else if (*q == '(' || *q == '[' || *q == '{') {
				if (++depth > 24)
					return 0;
			} else if (*q == ')' || *q == ']' || *q == '}') {
				if (--depth < 0)
					return 0;
			}
		}
		if (quote || depth)
			return 0;
	}
	while ((p = memmem(p, (size_t)(end - p), "REC->", 5))) {
		const char *q = p + 5;
		while (q < end && ident_char((unsigned char)*q))
			q++;
		if (q == p + 5 || !has_field(b, n, p + 5, (size_t)(q - p - 5)))
			return 0;
		p = q;
	}
	return 1;
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
			if (format_sane(b, len))	/* one bad format loses only its event */
				tep_parse_event(t->tep, b, len, sys);
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

/* ---- every payload of a session, rendered in a child process ---- */

static int is_tracepoint(const struct pfc_session *s, const struct pfc_srec *r)
{
	const struct pfc_evsel *ev = s->rd.evsels[s->stacks.stacks[r->stack].evsel];

	return r->raw_len && ev->attr.type == PERF_TYPE_TRACEPOINT;
}

/* The child: load the formats, write "u32 length, text" for every tracepoint sample of the
 * stream, in stream order, to fd. */
static void render_child(const struct pfc_session *s, FILE *f)
{
	struct pfc_tpformat *t;
	struct pfc_sb b = { 0 };
	const char *why;
	size_t i;

	if (pfc_tpformat_load(&t, s->rd.tracing_data.data, s->rd.tracing_data.size, &why) < 0)
		_exit(3);
	for (i = 0; i < s->nr_stream; i++) {
		const struct pfc_srec *r = &s->stream[i];
		const struct pfc_evsel *ev;
		uint32_t n;

		if (!is_tracepoint(s, r))
			continue;
		ev = s->rd.evsels[s->stacks.stacks[r->stack].evsel];
		pfc_sb_reset(&b);
		if (pfc_tpformat_print(t, ev->attr.config, s->raw_data + r->raw_off, r->raw_len,
				       r->cpu == UINT32_MAX ? -1 : (int)r->cpu, &b) < 0)
			_exit(4);
		n = (uint32_t)b.len;
		if (fwrite(&n, sizeof(n), 1, f) != 1 || (n && fwrite(b.buf, 1, n, f) != n))
			_exit(5);
	}
	if (fflush(f) != 0)
		_exit(5);
	_exit(0);
}

int pfc_tptext_render(const struct pfc_session *s, struct pfc_tptext *out, const char **why)
{
	FILE *f;
	pid_t pid;
	int status;
	size_t i, nr = 0;
	long size;

	memset(out, 0, sizeof(*out));
	*why = NULL;
	for (i = 0; i < s->nr_stream; i++)
		if (is_tracepoint(s, &s->stream[i]))
			nr++;
	if (!nr)
		return 0;
	if (!s->rd.tracing_data.size) {
		*why = "the recording has no tracing data";
		return 0;
	}
	f = tmpfile();
	if (!f) {
		*why = "cannot create a temporary file";
		return 0;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fclose(f);
		*why = "cannot start a process to render them";
		return 0;
	}
	if (pid == 0) {
		/* time-boxed: a format that loops must not hang the conversion */
		alarm(60 + (unsigned)(nr / 20000));
		render_child(s, f);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			fclose(f);
			*why = "lost the process that rendered them";
			return 0;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fclose(f);
		*why = WIFEXITED(status) && WEXITSTATUS(status) == 3 ? "malformed tracing data"
		       : WIFEXITED(status) && WEXITSTATUS(status) == 4 ? "out of memory"
		       : "the recording's tracepoint formats made libtraceevent fail";
		return 0;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
		goto io;
	out->text = malloc((size_t)size + 1);
	out->off = calloc(s->nr_stream, sizeof(*out->off));
	out->len = calloc(s->nr_stream, sizeof(*out->len));
	if (!out->text || !out->off || !out->len) {
		pfc_tptext_free(out);
		fclose(f);
		return -1;
	}
	if (size && fread(out->text, 1, (size_t)size, f) != (size_t)size)
		goto io;
	fclose(f);
	{
		size_t pos = 0;
		for (i = 0; i < s->nr_stream; i++) {
			uint32_t n;
			if (!is_tracepoint(s, &s->stream[i]))
				continue;
			if ((size_t)size - pos < sizeof(n))
				break;
			memcpy(&n, out->text + pos, sizeof(n));
			pos += sizeof(n);
			if ((size_t)size - pos < n)
				break;
			out->off[i] = pos;
			out->len[i] = n;
			pos += n;
		}
	}
	return 0;
io:
	pfc_tptext_free(out);
	fclose(f);
	*why = "cannot read back the rendered payloads";
	return 0;
}

void pfc_tptext_free(struct pfc_tptext *t)
{
	free(t->text);
	free(t->off);
	free(t->len);
	memset(t, 0, sizeof(*t));
}
