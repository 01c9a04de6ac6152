/*
 * tracedata.c - reads perf's tracing data (tools/perf/util/trace-event-read.c's layout)
 * into a libtraceevent handle: magic, version, byte order, long and page size, the
 * header_page and header_event files, ftrace and per-system event formats, kallsyms,
 * printk formats and (version 0.6) saved comms.  Every length comes from the input, so it
 * is read through a bounds-checked cursor.  formats/tptext.c prints the payloads of a
 * session's tracepoint samples with it, in a child process, for every writer that shows
 * them (perf-script text, the trace.zip's perf.data.txt).
 *
 * The format text is handed to libtraceevent as it is, as perf hands it: a filter on it
 * (no division, every REC->field declared, shallow nesting) would refuse formats of real
 * kernels that perf prints (dma:dma_map_sg, timer:itimer_state and writeback events
 * divide by constants) and print nothing where perf prints a value.  The child process is
 * the defence instead: what libtraceevent does with a hostile format costs the payloads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>
#include "converter/util/bytes.h"
#include "converter/perffile/tracedata.h"

struct td {
	struct pfc_cursor c;
	const uint8_t *start;
	uint64_t base;
	struct pfc_error *err;
	pfc_tracedata_format_fn fmt_fn;   /* pfc_tracedata_formats: each format's text */
	void *fmt_arg;
};

static uint64_t td_off(const struct td *t)
{
	return t->base + (uint64_t)(t->c.p - t->start);
}

/* `at` is where the item that is wrong starts */
static int td_bad(struct td *t, uint64_t at, const char *what)
{
	return PFC_FAIL(t->err, BAD_FEATURE, at, "tracing data: %s", what);
}

/* A NUL-terminated string in place. */
static const char *td_string(struct td *t)
{
	const uint8_t *nul;
	const char *s;

	if (t->c.bad)
		return NULL;
	nul = memchr(t->c.p, 0, pfc_cur_left(&t->c));
	if (!nul) {
		t->c.bad = 1;
		return NULL;
	}
	s = (const char *)t->c.p;
	t->c.p = nul + 1;
	return s;
}

/* `n` bytes copied with a terminating NUL (libtraceevent wants writable, terminated text). */
static char *td_text(struct td *t, uint64_t n)
{
	const uint8_t *p;
	char *s;

	if (n > pfc_cur_left(&t->c)) {
		t->c.bad = 1;
		return NULL;
	}
	p = pfc_cur_bytes(&t->c, n);
	s = malloc(n + 1);
	if (!s)
		return NULL;
	memcpy(s, p, n);
	s[n] = 0;
	return s;
}

/* perf's parse_proc_kallsyms: "addr type name[\t[module]]" per line. */
static void load_kallsyms(struct tep_handle *tep, char *text)
{
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *end, *name, *mod = NULL, *p;
		unsigned long long addr = strtoull(line, &end, 16);

		if (end == line || *end != ' ' || !end[1] || end[2] != ' ')
			continue;
		name = end + 3;
		p = strchr(name, '\t');
		if (p) {
			*p++ = 0;
			if (*p == '[') {
				mod = p + 1;
				p = strchr(mod, ']');
				if (p)
					*p = 0;
			}
		}
		tep_register_function(tep, name, addr, mod);
	}
}

/* perf's parse_ftrace_printk: "addr : \"format\"" per line. */
static void load_printk(struct tep_handle *tep, char *text)
{
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *fmt = strchr(line, ':');
		unsigned long long addr;

		if (!fmt)
			break;
		*fmt++ = 0;
		addr = strtoull(line, NULL, 16);
		if (*fmt == ' ')
			fmt++;
		tep_register_print_string(tep, fmt, addr);
	}
}

/* perf's parse_saved_cmdline: "pid comm" per line. */
static void load_cmdlines(struct tep_handle *tep, char *text)
{
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *end, comm[64];
		long pid = strtol(line, &end, 10);
		size_t n;

		if (end == line || *end != ' ')
			continue;
		end++;
		n = strcspn(end, " \t");
		if (n >= sizeof(comm))
			n = sizeof(comm) - 1;
		memcpy(comm, end, n);
		comm[n] = 0;
		tep_register_comm(tep, comm, (int)pid);
	}
}

/* One format file: u64 size, then the text. */
static int parse_format(struct td *t, struct tep_handle *tep, const char *sys)
{
	uint64_t at = td_off(t), size = pfc_cur_u64(&t->c);
	char *text;

	if (t->c.bad)
		return td_bad(t, at, "truncated event format list");
	if (size > pfc_cur_left(&t->c))
		return td_bad(t, at, "event format larger than the section");
	text = td_text(t, size);
	if (!text)
		return PFC_FAIL_NOOFF(t->err, NOMEM, "tracing data");
	/* a format libtraceevent cannot parse leaves that event undecoded, as in perf */
	if (tep)
		tep_parse_event(tep, text, size, sys);
	if (t->fmt_fn && t->fmt_fn(t->fmt_arg, sys, text, size) < 0) {
		free(text);
		return PFC_FAIL_NOOFF(t->err, NOMEM, "tracing data");
	}
	free(text);
	return 0;
}

int pfc_tracedata_payload_swap(const uint8_t *data, uint64_t len)
{
	static const uint8_t magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const uint8_t *nul;

	if (!data || len < sizeof(magic) + 2 || memcmp(data, magic, sizeof(magic)))
		return -1;
	/* the version string, then the big-endian flag */
	nul = memchr(data + sizeof(magic), 0, len - sizeof(magic));
	if (!nul || (uint64_t)(nul + 1 - data) >= len)
		return -1;
	return (nul[1] != 0) != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
}

static int parse_all(struct td *t, struct tep_handle *tep)
{
	static const uint8_t magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const uint8_t *p;
	const char *version, *s;
	uint32_t n, i, nsys, page;
	uint64_t size, at = td_off(t);
	int big, long_size, ret;
	char *text;

	p = pfc_cur_bytes(&t->c, sizeof(magic));
	if (!p || memcmp(p, magic, sizeof(magic)))
		return td_bad(t, at, "bad magic");
	at = td_off(t);
	version = td_string(t);
	p = pfc_cur_bytes(&t->c, 2);
	if (!version || !p)
		return td_bad(t, at, "truncated header");
	big = p[0];
	long_size = p[1];
	/* counts and sizes are in the recording machine's byte order */
	t->c.swap = big != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	at = td_off(t);
	page = pfc_cur_u32(&t->c);
	if (t->c.bad || !page)
		return td_bad(t, at, "truncated header");
	if (tep) {
		tep_set_flag(tep, TEP_NSEC_OUTPUT);
		tep_set_file_bigendian(tep, big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
		tep_set_local_bigendian(tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
		tep_set_long_size(tep, long_size);
		tep_set_page_size(tep, (int)page);
	}

	/* header_page: the ring buffer page header; its commit field gives the kernel's long */
	at = td_off(t);
	p = pfc_cur_bytes(&t->c, 12);
	if (!p || memcmp(p, "header_page", 12))
		return td_bad(t, at, "no header_page");
	at = td_off(t);
	size = pfc_cur_u64(&t->c);
	if (t->c.bad || size > pfc_cur_left(&t->c))
		return td_bad(t, at, "truncated header_page");
	if (!(text = td_text(t, size)))
		return PFC_FAIL_NOOFF(t->err, NOMEM, "tracing data");
	if (tep && !tep_parse_header_page(tep, text, size, tep_get_long_size(tep)))
		tep_set_long_size(tep, tep_get_header_page_size(tep));
	free(text);
	at = td_off(t);
	p = pfc_cur_bytes(&t->c, 13);
	if (!p || memcmp(p, "header_event", 13))
		return td_bad(t, at, "no header_event");
	at = td_off(t);
	size = pfc_cur_u64(&t->c);
	if (t->c.bad || !pfc_cur_bytes(&t->c, size))
		return td_bad(t, at, "truncated header_event");

	/* ftrace's own events, then the formats of each system */
	at = td_off(t);
	n = pfc_cur_u32(&t->c);
	if (t->c.bad)
		return td_bad(t, at, "truncated ftrace formats");
	for (i = 0; i < n; i++)
		if ((ret = parse_format(t, tep, "ftrace")) < 0)
			return ret;
	at = td_off(t);
	nsys = pfc_cur_u32(&t->c);
	if (t->c.bad)
		return td_bad(t, at, "truncated event systems");
	for (i = 0; i < nsys; i++) {
		uint32_t j;
		at = td_off(t);
		if (!(s = td_string(t)))
			return td_bad(t, at, "truncated system name");
		at = td_off(t);
		n = pfc_cur_u32(&t->c);
		if (t->c.bad)
			return td_bad(t, at, "truncated event formats");
		for (j = 0; j < n; j++)
			if ((ret = parse_format(t, tep, s)) < 0)
				return ret;
	}

	/* kallsyms (u32 size), printk formats (u32 size), saved comms from 0.6 on (u64 size) */
	at = td_off(t);
	size = pfc_cur_u32(&t->c);
	if (t->c.bad || size > pfc_cur_left(&t->c))
		return td_bad(t, at, "truncated kallsyms");
	if (size) {
		if (!(text = td_text(t, size)))
			return PFC_FAIL_NOOFF(t->err, NOMEM, "tracing data");
		if (tep)
			load_kallsyms(tep, text);
		free(text);
	}
	at = td_off(t);
	size = pfc_cur_u32(&t->c);
	if (t->c.bad || size > pfc_cur_left(&t->c))
		return td_bad(t, at, "truncated printk formats");
	if (size) {
		if (!(text = td_text(t, size)))
			return PFC_FAIL_NOOFF(t->err, NOMEM, "tracing data");
		if (tep)
			load_printk(tep, text);
		free(text);
	}
	if (strtod(version, NULL) >= 0.6) {
		at = td_off(t);
		size = pfc_cur_u64(&t->c);
		if (t->c.bad || size > pfc_cur_left(&t->c))
			return td_bad(t, at, "truncated saved comms");
		if (size) {
			if (!(text = td_text(t, size)))
				return PFC_FAIL_NOOFF(t->err, NOMEM, "tracing data");
			if (tep)
				load_cmdlines(tep, text);
			free(text);
		}
	}
	return 0;
}

int pfc_tracedata_parse(const uint8_t *data, uint64_t len, uint64_t base, struct tep_handle **out,
			struct pfc_error *err)
{
	struct tep_handle *tep;
	struct td t;
	int ret;

	*out = NULL;
	if (!data || !len)
		return PFC_FAIL_NOOFF(err, UNSUPPORTED, "tracepoint samples but no tracing data");
	tep = tep_alloc();
	if (!tep)
		return PFC_FAIL_NOOFF(err, NOMEM, "tracing data");
	memset(&t, 0, sizeof(t));
	pfc_cur_init(&t.c, data, len, 0);
	t.start = data;
	t.base = base;
	t.err = err;
	ret = parse_all(&t, tep);
	if (ret < 0) {
		tep_free(tep);
		return ret;
	}
	*out = tep;
	return 0;
}

int pfc_tracedata_check(const uint8_t *data, uint64_t len, uint64_t base, struct pfc_error *err)
{
	return pfc_tracedata_formats(data, len, base, NULL, NULL, err);
}

int pfc_tracedata_formats(const uint8_t *data, uint64_t len, uint64_t base, pfc_tracedata_format_fn fn, void *arg,
			  struct pfc_error *err)
{
	struct td t;

	if (!data || !len)
		return PFC_FAIL_NOOFF(err, UNSUPPORTED, "tracepoint samples but no tracing data");
	memset(&t, 0, sizeof(t));
	pfc_cur_init(&t.c, data, len, 0);
	t.start = data;
	t.base = base;
	t.err = err;
	t.fmt_fn = fn;
	t.fmt_arg = arg;
	return parse_all(&t, NULL);
}

void pfc_tracedata_free(struct tep_handle *tep)
{
	if (tep)
		tep_free(tep);
}

struct tep_event *pfc_tracedata_event(struct tep_handle *tep, uint64_t config)
{
	if (!tep || config > INT32_MAX)
		return NULL;
	return tep_find_event(tep, (int)config);
}

/* The largest end of a fixed field of the event's format; SIZE_MAX for a format whose
 * offsets cannot be honoured (negative, or beyond 1 MiB). */
static size_t format_extent(const struct tep_event *ev)
{
	const struct tep_format_field *lists[2] = { ev->format.common_fields, ev->format.fields }, *f;
	size_t m = 0, i;

	for (i = 0; i < 2; i++)
		for (f = lists[i]; f; f = f->next) {
			if (f->offset < 0 || f->size < 0 || f->offset > (1 << 20) || f->size > (1 << 20))
				return SIZE_MAX;
			if ((size_t)f->offset + (size_t)f->size > m)
				m = (size_t)f->offset + (size_t)f->size;
		}
	return m;
}

int pfc_tracedata_print(struct tep_event *ev, int cpu, const void *raw, uint32_t raw_len, struct trace_seq *s,
			struct pfc_tracebuf *tb)
{
	struct tep_record rec;
	/* a __data_loc field is (u16 len << 16 | u16 offset): both stay below 64 KiB */
	size_t need = format_extent(ev), pad = 2 * 65536 + 64;

	if (need == SIZE_MAX)
		return 0;	/* printed as perf would print nothing sensible: leave it empty */
	if (need < raw_len)
		need = raw_len;
	need += pad;
	if (need > tb->cap) {
		uint8_t *n = calloc(1, need);
		if (!n)
			return -1;
		free(tb->buf);
		tb->buf = n;
		tb->cap = need;
	}
	memcpy(tb->buf, raw, raw_len);
	memset(&rec, 0, sizeof(rec));
	rec.cpu = cpu;
	rec.size = (int)raw_len;
	rec.data = tb->buf;
	tep_print_event(ev->tep, s, &rec, "%s", TEP_PRINT_INFO);
	memset(tb->buf, 0, raw_len);	/* the buffer stays all zeros between payloads */
	return 0;
}

void pfc_tracebuf_free(struct pfc_tracebuf *tb)
{
	free(tb->buf);
	tb->buf = NULL;
	tb->cap = 0;
}
