/*
 * folded.c - folded stacks, byte-identical to `perf script | stackcollapse-perf.pl`
 * (FlameGraph 41fee1f) with its default options and --pid/--tid/--kernel/--jit/--all/
 * --addrs.  The script's rules work on the text perf 6.1 prints, so each stack's header
 * line and frame lines are built as perf prints them and the script's regular expressions
 * are applied to that text (hand-coded with Perl's matching semantics): comms cut at
 * " <digits> ", the first event filtering the others, sums of printed periods, name
 * tidying, annotations, bytewise sort.  Frames are tidied once per unique frame.  The
 * one departure: --pid/--tid name the sample's pid where the script prints "?" (perf's
 * default text has none), unless --perf-compat or --diff.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "converter/machine/intern.h"
#include "converter/util/strbuf.h"
#include "formats/diff.h"
#include "formats/folded.h"
#include "formats/writer.h"

/* Perl's \s (with \v) and \w on bytes */
static int pl_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int pl_word(int c)
{
	return isalnum(c) || c == '_';
}

static int pl_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* The script's event-line pattern  ^(\S.+?)\s+(\d+)\/<star>(\d+)<star>\s+  (<star> is "*"):
 * returns 1 and the captures on a match. */
int pfc_folded_match_event_start(const char *s, size_t n, size_t *comm_len, const char **pid, size_t *pid_len,
			     const char **tid, size_t *tid_len)
{
	size_t L;

	if (n < 2 || pl_space((unsigned char)s[0]))
		return 0;
	for (L = 2; L < n; L++) {
		size_t j, k, m, q;

		if (s[L - 1] == '\n')	/* '.' does not match a newline */
			return 0;
		j = L;
		while (j < n && pl_space((unsigned char)s[j]))
			j++;
		if (j == L)
			continue;
		k = j;
		while (k < n && pl_digit((unsigned char)s[k]))
			k++;
		if (k == j)
			continue;
		m = k;
		while (m < n && s[m] == '/')
			m++;
		q = m;
		while (q < n && pl_digit((unsigned char)s[q]))
			q++;
		if (q < n && pl_space((unsigned char)s[q])) {
			*comm_len = L;
			*pid = s + j;
			*pid_len = k - j;
			*tid = q > m ? s + m : NULL;
			*tid_len = q - m;
			return 1;
		}
	}
	return 0;
}

/* /:\s*(\d+)*\s+(\S+):\s*$/ : returns 1 with the period digits (maybe none) and event. */
int pfc_folded_match_event_name(const char *s, size_t n, const char **per, size_t *per_len, const char **ev,
			    size_t *ev_len)
{
	size_t e = n, tok_end, tok_start, i;

	while (e > 0 && pl_space((unsigned char)s[e - 1]))
		e--;
	if (e < 2 || s[e - 1] != ':')
		return 0;
	tok_end = e - 1;
	tok_start = tok_end;
	while (tok_start > 0 && !pl_space((unsigned char)s[tok_start - 1]))
		tok_start--;
	if (tok_start == tok_end)
		return 0;
	for (i = 0; i < tok_start; i++) {
		size_t t = i + 1, a, d, b;

		if (s[i] != ':' || t >= tok_start)
			continue;
		a = t;
		while (a < tok_start && pl_space((unsigned char)s[a]))
			a++;
		d = a;
		while (d < tok_start && pl_digit((unsigned char)s[d]))
			d++;
		b = d;
		while (b < tok_start && pl_space((unsigned char)s[b]))
			b++;
		if (b != tok_start)
			continue;
		if (d > a && b == d)	/* digits need whitespace after them */
			continue;
		if (d == a && a == t)	/* no whitespace at all */
			continue;
		*per = d > a ? s + a : NULL;
		*per_len = d - a;
		*ev = s + tok_start;
		*ev_len = tok_end - tok_start;
		return 1;
	}
	return 0;
}

/* The header line perf 6.1's `perf script` prints for a sample of this stack with its
 * default fields (comm, tid, cpu, time, period, event, trace).  Values that vary per
 * sample (cpu, time, period) cannot change what the script extracts for a comm of two or
 * more characters, so representative values are used. */
static void build_header(struct pfc_sb *b, struct pfc_session *s, const struct pfc_stack *st, int name_width)
{
	const struct pfc_evsel *ev = s->rd.evsels[st->evsel];
	uint64_t t = ev->sample_type;
	const char *comm = pfc_intern_str(&s->strings, st->comm);
	int tracepoint = ev->attr.type == PERF_TYPE_TRACEPOINT;

	const char *name = pfc_session_evsel_name(s, st->evsel);

	/* "%s " or "%16s ", "%5d ", [cpu], "%12s: " of the time, "%10llu " of the period, "%*s: " */
	pfc_sb_addpad(b, comm, strlen(comm), t & PERF_SAMPLE_CALLCHAIN ? 0 : 16);
	pfc_sb_addc(b, ' ');
	pfc_sb_adddec(b, st->tid < 0 ? 0ULL - (unsigned long long)st->tid : (unsigned long long)st->tid, st->tid < 0, 5);
	pfc_sb_addc(b, ' ');
	if (t & PERF_SAMPLE_CPU)
		pfc_sb_adds(b, "[000] ");
	if (t & PERF_SAMPLE_TIME)
		pfc_sb_adds(b, "    1.000000: ");
	/* perf prints attr.sample_period for samples without PERF_SAMPLE_PERIOD (perf record -c) */
	if (!tracepoint) {
		pfc_sb_adddec(b, st->period / (st->count ? st->count : 1), 0, 10);
		pfc_sb_addc(b, ' ');
	}
	pfc_sb_addpad(b, name, strlen(name), (size_t)name_width);
	pfc_sb_adds(b, ": ");
	if (tracepoint && (t & PERF_SAMPLE_RAW))
		pfc_sb_adds(b, "raw");
}

/* ---- frames ---- */

/* The first "ab" in s[0..n), found from its rarer second byte with memchr (glibc's memmem
 * took more instructions than the rest of the parsing for these two-byte needles). */
static const char *find2(const char *s, size_t n, char a, char b)
{
	const char *p = s + 1, *end = s + n;

	if (n < 2)
		return NULL;
	while (p < end && (p = memchr(p, b, (size_t)(end - p)))) {
		if (p[-1] == a)
			return p - 1;
		p++;
	}
	return NULL;
}

struct fold_ctx {
	struct pfc_session *s;
	const struct pfc_wopts *o;
	struct pfc_intern pieces;     /* folded text of each unique frame */
	uint32_t *piece_cache[2];     /* frame id -> interned pieces + 1 (0 = not yet), per java flag */
	struct pfc_sb tmp;
	/* (name, DSO, inlined, java) -> interned pieces + 1: the frames of one symbol at other
	 * addresses have the same text (the script strips the offset, and reads the address
	 * only for an unknown symbol under --addrs) */
	struct text_ent {
		const struct pfc_dso *dso;
		uint32_t sym;         /* name + 1; 0: [unknown] */
		uint32_t flags;       /* inlined | java << 1 | 4 (a used slot) */
		uint32_t id;
	} *texts;
	size_t nr_texts, cap_texts;
};

static struct text_ent *text_slot(struct fold_ctx *c, const struct pfc_frame *f, int java)
{
	uint32_t sym = f->resolved ? f->sym + 1 : 0, flags = (f->inlined ? 1u : 0u) | (uint32_t)java << 1 | 4u;
	uint64_t h;
	size_t i;

	if ((c->nr_texts + 1) * 2 > c->cap_texts) {
		size_t cap = c->cap_texts ? c->cap_texts * 2 : 1024, k;
		struct text_ent *n = calloc(cap, sizeof(*n));
		if (!n)
			return NULL;
		for (k = 0; k < c->cap_texts; k++) {
			const struct text_ent *e = &c->texts[k];
			if (!e->flags)
				continue;
			h = ((uint64_t)(uintptr_t)e->dso ^ ((uint64_t)e->sym << 3 | e->flags)) * 0x9E3779B97F4A7C15ULL;
			for (i = h >> 32 & (cap - 1); n[i].flags; i = (i + 1) & (cap - 1))
				;
			n[i] = *e;
		}
		free(c->texts);
		c->texts = n;
		c->cap_texts = cap;
	}
	h = ((uint64_t)(uintptr_t)f->dso ^ ((uint64_t)sym << 3 | flags)) * 0x9E3779B97F4A7C15ULL;
	for (i = h >> 32 & (c->cap_texts - 1); c->texts[i].flags; i = (i + 1) & (c->cap_texts - 1))
		if (c->texts[i].dso == f->dso && c->texts[i].sym == sym && c->texts[i].flags == flags)
			return &c->texts[i];
	c->texts[i].dso = f->dso;
	c->texts[i].sym = sym;
	c->texts[i].flags = flags;
	c->texts[i].id = 0;
	c->nr_texts++;
	return &c->texts[i];
}

/* Tidy one "->" piece of a function name (the body of the script's frame loop). */
static void tidy_piece(struct pfc_sb *out, const char *func, size_t n, const char *mod, size_t mod_len,
		       const char *pc, size_t pc_len, int java, int nr_done, const struct pfc_wopts *o)
{
	struct pfc_sb f = { 0 };
	size_t i, w;
	int is_go;

	if (n == 9 && !memcmp(func, "[unknown]", 9)) {
		pfc_sb_addc(&f, '[');
		if (!(mod_len == 9 && !memcmp(mod, "[unknown]", 9))) {
			size_t k = mod_len;
			while (k > 0 && mod[k - 1] != '/' && mod[k - 1] != '\n')
				k--;
			/* s/.*\/// : '.' stops at a newline */
			pfc_sb_add(&f, mod + k, mod_len - k);
		} else {
			pfc_sb_adds(&f, "unknown");
		}
		if (o->addrs) {
			pfc_sb_adds(&f, " <");
			pfc_sb_add(&f, pc, pc_len);
			pfc_sb_addc(&f, '>');
		}
		pfc_sb_addc(&f, ']');
	} else {
		pfc_sb_add(&f, func, n);
	}
	if (f.oom) {
		out->oom = 1;
		return;
	}
	/* tidy_generic: ';' -> ':' (the byte loops below look only where memchr finds the byte) */
	{
		char *q = f.buf, *end = f.buf + f.len;
		while (q < end && (q = memchr(q, ';', (size_t)(end - q))))
			*q++ = ':';
	}
	/* Go method names (".(" ... ")." ) keep their parentheses */
	is_go = 0;
	{
		const char *p = f.buf, *end = f.buf + f.len;
		for (; p + 1 < end && !is_go; p++) {
			if (!(p = find2(p, (size_t)(end - p), '.', '(')))
				break;
			{
				const char *q = end;
				/* need a ")." somewhere after, '.' not matching newlines in between */
				const char *r;
				for (r = p + 2; r + 1 < q; r++) {
					if (r[0] == '\n')
						break;
					if (r[0] == ')' && r[1] == '.') {
						is_go = 1;
						break;
					}
				}
			}
		}
	}
	if (!is_go) {
		for (i = 0; i < f.len; i++) {
			static const char anon[] = "anonymous namespace)";
			const char *q = memchr(f.buf + i, '(', f.len - i);
			if (!q)
				break;
			i = (size_t)(q - f.buf);
			if (f.len - i - 1 >= sizeof(anon) - 1 && !memcmp(f.buf + i + 1, anon, sizeof(anon) - 1))
				continue;
			/* '.*' stops at a newline */
			{
				size_t e = i;
				while (e < f.len && f.buf[e] != '\n')
					e++;
				memmove(f.buf + i, f.buf + e, f.len - e);
				f.len -= e - i;
			}
			break;
		}
	}
	/* tr/"'//d */
	if (memchr(f.buf, '"', f.len) || memchr(f.buf, '\'', f.len)) {
		for (i = w = 0; i < f.len; i++)
			if (f.buf[i] != '"' && f.buf[i] != '\'')
				f.buf[w++] = f.buf[i];
		f.len = w;
	}
	/* tidy_java */
	if (java && memchr(f.buf, '/', f.len) && f.len && f.buf[0] == 'L') {
		memmove(f.buf, f.buf + 1, f.len - 1);
		f.len--;
	}
	f.buf[f.len] = 0;
	/* annotations */
	if (nr_done > 0) {
		if (!strstr(f.buf, "_[i]"))
			pfc_sb_adds(&f, "_[i]");
	} else if (o->kernel && mod_len && (mod[0] == '[' ||
		   (mod_len >= 7 && !memcmp(mod + mod_len - 7, "vmlinux", 7))) &&
		   !memmem(mod, mod_len, "unknown", 7)) {
		pfc_sb_adds(&f, "_[k]");
	} else if (o->jit) {
		/* m:/tmp/perf-\d+\.map: */
		const char *p = mod, *end = mod + mod_len;
		int jit = 0;
		while (!jit && (p = memmem(p, (size_t)(end - p), "/tmp/perf-", 10))) {
			const char *q = p + 10, *d = q;
			while (d < end && pl_digit((unsigned char)*d))
				d++;
			if (d > q && end - d >= 4 && !memcmp(d, ".map", 4))
				jit = 1;
			p++;
		}
		if (jit && !strstr(f.buf, "_[j]"))
			pfc_sb_adds(&f, "_[j]");
	}
	if (f.oom)
		out->oom = 1;
	else
		pfc_sb_add(out, f.buf, f.len);
	pfc_sb_free(&f);
}

/* The folded text of one perf-script frame line: the script's pieces joined by ';'
 * (empty when the script drops the frame).  Returns 0, or -1 when out of memory. */
int pfc_folded_frame_text(const char *line, size_t n, int java, const struct pfc_wopts *o, struct pfc_sb *out)
{
	const char *rawfunc, *mod, *pc;
	size_t i, j, k, P, x, lastparen, rf_len, mod_len, pc_len;
	int have_p = 0, nr_done = 0;

	/* /^\s*(\w+)\s*(.+) \((.*)\)/ */
	i = 0;
	while (i < n && pl_space((unsigned char)line[i]))
		i++;
	j = i;
	while (j < n && pl_word((unsigned char)line[j]))
		j++;
	pc = line + i;
	pc_len = j - i;
	k = j;
	while (k < n && pl_space((unsigned char)line[k]))
		k++;
	lastparen = n;
	for (P = n; P-- > 0;)
		if (line[P] == ')') {
			lastparen = P;
			break;
		}
	P = 0;
	if (lastparen < n)
		for (x = lastparen; x-- > j;)
			if (line[x] == ' ' && line[x + 1] == '(' && x + 1 < lastparen) {
				P = x;
				have_p = 1;
				break;
			}
	if (!pc_len || !have_p || P < j + 1)
		return 0;	/* not a frame line: the script warns and ignores it */
	x = k < P - 1 ? k : P - 1;
	if (x < j)
		x = j;
	rawfunc = line + x;
	rf_len = P - x;
	mod = line + P + 2;
	mod_len = lastparen - (P + 2);
	/* s/\+0x[\da-f]+$// */
	{
		size_t h = rf_len;
		while (h > 0 && (pl_digit((unsigned char)rawfunc[h - 1]) ||
				 (rawfunc[h - 1] >= 'a' && rawfunc[h - 1] <= 'f')))
			h--;
		if (h < rf_len && h >= 3 && rawfunc[h - 1] == 'x' && rawfunc[h - 2] == '0' && rawfunc[h - 3] == '+')
			rf_len = h - 3;
	}
	if (rf_len && rawfunc[0] == '(')	/* process names */
		return 0;
	/* split /->/, dropping trailing empty fields */
	{
		size_t start = 0, end = rf_len, p;
		while (end >= 2 && rawfunc[end - 1] == '>' && rawfunc[end - 2] == '-')
			end -= 2;
		if (end == 0)
			return 0;
		for (;;) {
			const char *a = find2(rawfunc + start, end - start, '-', '>');
			p = a ? (size_t)(a - rawfunc) : end;
			if (nr_done)
				pfc_sb_addc(out, ';');
			tidy_piece(out, rawfunc + start, p - start, mod, mod_len, pc, pc_len, java, nr_done, o);
			nr_done++;
			if (p == end)
				break;
			start = p + 2;
		}
	}
	return out->oom ? -1 : 0;
}

/* The folded text of a unique frame, cached per java flag.  Returns the interned id + 1,
 * or 0 on out of memory. */
static uint32_t frame_pieces(struct fold_ctx *c, uint32_t fid, int java)
{
	struct pfc_session *s = c->s;
	const struct pfc_frame *f = &s->stacks.frames[fid];
	struct pfc_sb *L = &c->tmp;
	struct pfc_sb out = { 0 };
	struct text_ent *te = NULL;
	uint32_t id;

	if (c->piece_cache[java][fid])
		return c->piece_cache[java][fid];
	if (f->resolved || !c->o->addrs) {
		if (!(te = text_slot(c, f, java)))
			return 0;
		if (te->id)
			return c->piece_cache[java][fid] = te->id;
	}
	/* the frame line as perf prints it */
	pfc_sb_reset(L);
	pfc_sb_addc(L, '\t');
	pfc_sb_addhex(L, f->addr, 16);
	pfc_sb_addc(L, ' ');
	if (f->resolved) {
		pfc_sb_adds(L, pfc_intern_str(&s->strings, f->sym));
		pfc_sb_add(L, "+0x", 3);
		pfc_sb_addhex(L, f->symoff, 0);
	} else {
		pfc_sb_adds(L, "[unknown]");
	}
	pfc_sb_add(L, " (", 2);
	pfc_sb_adds(L, f->inlined ? "inlined" : f->dso ? f->dso->name : "[unknown]");
	pfc_sb_addc(L, ')');
	if (L->oom || pfc_folded_frame_text(L->buf, L->len, java, c->o, &out) < 0) {
		pfc_sb_free(&out);
		return 0;
	}
	id = pfc_intern(&c->pieces, out.buf ? out.buf : "", out.len);
	pfc_sb_free(&out);
	if (id == UINT32_MAX)
		return 0;
	c->piece_cache[java][fid] = id + 1;
	if (te)
		te->id = id + 1;
	return id + 1;
}

/* Every stack the script keeps, as it sees it: the process name it puts first, the
 * frames' folded texts root first (frames it drops are left out) and the weight it adds. */
int pfc_folded_walk(struct pfc_session *s, const struct pfc_wopts *o, pfc_folded_fn fn, void *arg,
		    struct pfc_error *err)
{
	struct fold_ctx c;
	struct pfc_sb hdr = { 0 }, pname = { 0 };
	struct pfc_folded_piece *pv = NULL;
	const char *filter = o->event;
	size_t i, name_width = 0, cap_pv = 0;
	int ret = 0, have_last = 0;
	/* --addrs asks for each unnamed frame's address: its runs are not folded */
	int fold = s->opts->fold_runs && !o->addrs;
	struct {
		uint32_t evsel, comm;
		int32_t pid, tid;
		uint64_t avg;
		int keep, per;
	} last = { 0 };

	memset(&c, 0, sizeof(c));
	c.s = s;
	c.o = o;
	if (pfc_intern_init(&c.pieces) < 0)
		return PFC_FAIL_NOOFF(err, NOMEM, "folded");
	for (i = 0; i < 2; i++) {
		c.piece_cache[i] = calloc(s->stacks.nr_frames + 1, sizeof(uint32_t));
		if (!c.piece_cache[i])
			goto oom;
	}
	/* perf pads event names to the longest name in the evlist */
	for (i = 0; i < s->rd.nr_evsels; i++) {
		size_t l = strlen(pfc_session_evsel_name(s, i));
		if (l > name_width)
			name_width = l;
	}
	/* Without --event, the script keeps the event of the first sample line whose event
	 * name it can parse.  A time profile (--off-cpu, --thread-time) chooses its events
	 * itself and weighs stacks by their nanoseconds. */
	if (s->offcpu)
		filter = NULL;
	else if (!filter) {
		uint64_t best = UINT64_MAX;
		for (i = 0; i < s->stacks.nr_stacks; i++) {
			const struct pfc_stack *st = &s->stacks.stacks[i];
			const char *per, *ev;
			size_t per_len, ev_len;
			uint64_t first = pfc_session_evsel_first(s, st->evsel);

			if (first >= best)
				continue;
			pfc_sb_reset(&hdr);
			build_header(&hdr, s, st, (int)name_width);
			if (hdr.oom)
				break;
			if (pfc_folded_match_event_name(hdr.buf, hdr.len, &per, &per_len, &ev, &ev_len)) {
				best = first;
				filter = pfc_session_evsel_name(s, st->evsel);
			}
		}
	}
	for (i = 0; i < s->stacks.nr_stacks; i++) {
		const struct pfc_stack *st = &s->stacks.stacks[i];
		const char *pid, *tid, *per, *ev;
		char ids[2][16];
		size_t comm_len, pid_len, tid_len, per_len, ev_len, k, p, nr = 0;
		uint64_t weight = st->count, avg = st->period / (st->count ? st->count : 1);
		int java;

		if (s->offcpu && (!st->period || !pfc_offcpu_in_profile(s->offcpu, st->evsel)))
			continue;
		/* the header text depends on these only; consecutive stacks often share them */
		if (have_last && st->evsel == last.evsel && st->comm == last.comm && st->pid == last.pid &&
		    st->tid == last.tid && avg == last.avg) {
			if (!last.keep)
				continue;
			if (last.per)
				weight = st->period;
			goto frames;
		}
		have_last = 1;
		last.evsel = st->evsel;
		last.comm = st->comm;
		last.pid = st->pid;
		last.tid = st->tid;
		last.avg = avg;
		last.keep = 0;
		last.per = 0;
		pfc_sb_reset(&hdr);
		build_header(&hdr, s, st, (int)name_width);
		if (hdr.oom)
			goto oom;
		if (!pfc_folded_match_event_start(hdr.buf, hdr.len, &comm_len, &pid, &pid_len, &tid, &tid_len))
			continue;
		if (pfc_folded_match_event_name(hdr.buf, hdr.len, &per, &per_len, &ev, &ev_len)) {
			if (filter && (strlen(filter) != ev_len || memcmp(filter, ev, ev_len)))
				continue;
			if (per) {
				weight = st->period;
				last.per = 1;
			}
		}
		last.keep = 1;
		if (!s->opts->perf_compat && !s->opts->script_pids) {
			/* perf script's default text holds the tid alone, so the script's --pid and
			 * --tid print "?" for the pid; the sample has both, and only --perf-compat
			 * (and --diff, to match one recording's processes with the other's) keep
			 * the script's "?" */
			pid_len = (size_t)snprintf(ids[0], sizeof(ids[0]), "%d", (int)st->pid);
			tid_len = (size_t)snprintf(ids[1], sizeof(ids[1]), "%d", (int)st->tid);
			pid = ids[0];
			tid = ids[1];
		} else if (!tid || (tid_len == 1 && tid[0] == '0')) {
			/* tid "0" or none: the script takes the number as the tid and "?" as the pid */
			tid = pid;
			tid_len = pid_len;
			pid = "?";
			pid_len = 1;
		}
		pfc_sb_reset(&pname);
		pfc_sb_add(&pname, hdr.buf, comm_len);
		if (o->tid) {
			pfc_sb_addc(&pname, '-');
			pfc_sb_add(&pname, pid, pid_len);
			pfc_sb_addc(&pname, '/');
			pfc_sb_add(&pname, tid, tid_len);
		} else if (o->pid) {
			pfc_sb_addc(&pname, '-');
			pfc_sb_add(&pname, pid, pid_len);
		}
		if (pname.oom)
			goto oom;
		for (k = 0; k < pname.len; k++)
			if (pname.buf[k] == ' ')
				pname.buf[k] = '_';
frames:
		java = pname.len >= 4 && !memcmp(pname.buf, "java", 4);
		if (st->nr > cap_pv) {
			struct pfc_folded_piece *n = realloc(pv, st->nr * sizeof(*pv));
			if (!n)
				goto oom;
			pv = n;
			cap_pv = st->nr;
		}
		/* frames root first */
		for (p = st->nr; p-- > 0;) {
			uint32_t fid = s->stacks.frame_ids[st->first + p], pid1;
			if (fold && pfc_stacks_run_tail(&s->stacks, s->stacks.frame_ids + st->first, p))
				continue;
			if (!(pid1 = frame_pieces(&c, fid, java)))
				goto oom;
			if (pfc_intern_len(&c.pieces, pid1 - 1)) {
				pv[nr].text = pfc_intern_str(&c.pieces, pid1 - 1);
				pv[nr].len = pfc_intern_len(&c.pieces, pid1 - 1);
				pv[nr].frame = fid;
				nr++;
			}
		}
		if (s->offcpu)
			weight = st->period;
		ret = fn(arg, st, pname.buf, pname.len, pv, nr, weight);
		if (ret < 0)
			goto out;
	}
	goto out;
oom:
	ret = PFC_FAIL_NOOFF(err, NOMEM, "folded stacks");
out:
	free(pv);
	free(c.piece_cache[0]);
	free(c.piece_cache[1]);
	free(c.texts);
	pfc_sb_free(&c.tmp);
	pfc_sb_free(&hdr);
	pfc_sb_free(&pname);
	pfc_intern_exit(&c.pieces);
	return ret;
}

/* ---- the folded writer: one line per distinct stack text, weights summed ---- */

struct fold_lines {
	struct pfc_intern out;        /* output lines */
	uint64_t *weights;            /* line id -> weight, UINT64_MAX = not a line */
	size_t cap_weights;
	struct pfc_sb line;
	struct pfc_error *err;
};

static int fold_line(void *arg, const struct pfc_stack *st, const char *pname, size_t pname_len,
		     const struct pfc_folded_piece *pv, size_t nr, uint64_t weight)
{
	struct fold_lines *L = arg;
	size_t k;
	uint32_t id;

	(void)st;
	pfc_sb_reset(&L->line);
	pfc_sb_add(&L->line, pname, pname_len);
	for (k = 0; k < nr; k++) {
		pfc_sb_addc(&L->line, ';');
		pfc_sb_add(&L->line, pv[k].text, pv[k].len);
	}
	if (L->line.oom)
		goto oom;
	id = pfc_intern(&L->out, L->line.buf, L->line.len);
	if (id == UINT32_MAX)
		goto oom;
	if (id >= L->cap_weights) {
		size_t cap = L->cap_weights ? L->cap_weights * 2 : 1024, z;
		uint64_t *nw;
		while (cap <= id)
			cap *= 2;
		nw = realloc(L->weights, cap * sizeof(*nw));
		if (!nw)
			goto oom;
		for (z = L->cap_weights; z < cap; z++)
			nw[z] = UINT64_MAX;	/* not an output line */
		L->weights = nw;
		L->cap_weights = cap;
	}
	if (L->weights[id] == UINT64_MAX)
		L->weights[id] = 0;
	L->weights[id] += weight;
	return 0;
oom:
	return PFC_FAIL_NOOFF(L->err, NOMEM, "folded output");
}

/* --diff BASE: difffolded.pl's lines, "stack base new", sorted (the script prints them in
 * Perl's hash order; a set of lines either way) */
static int fold_write_diff(FILE *out, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err)
{
	struct pfc_diff d;
	size_t i, len;
	int ret = pfc_diff_build(&d, s, o, err);

	for (i = 0; ret == 0 && i < d.n; i++) {
		const char *t = pfc_diff_text(&d, i, &len);
		fwrite(t, 1, len, out);
		fprintf(out, " %llu %llu\n", (unsigned long long)d.w[0][d.order[i]], (unsigned long long)d.w[1][d.order[i]]);
	}
	pfc_diff_free(&d);
	return ret;
}

static int fold_write(FILE *out, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err)
{
	struct fold_lines L;
	size_t i, nlines;
	uint32_t *order = NULL;
	int ret;

	if (o->diff_base)
		return fold_write_diff(out, s, o, err);
	memset(&L, 0, sizeof(L));
	L.err = err;
	if (pfc_intern_init(&L.out) < 0)
		return PFC_FAIL_NOOFF(err, NOMEM, "folded");
	ret = pfc_folded_walk(s, o, fold_line, &L, err);
	if (ret < 0)
		goto out;
	/* bytewise sort of the output lines */
	nlines = 0;
	order = malloc((L.cap_weights + 1) * sizeof(*order));
	if (!order) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "folded output");
		goto out;
	}
	for (i = 0; i < L.cap_weights; i++)
		if (L.weights[i] != UINT64_MAX)
			order[nlines++] = (uint32_t)i;
	pfc_intern_sort(&L.out, order, nlines);
	for (i = 0; i < nlines; i++) {
		pfc_sb_reset(&L.line);
		pfc_sb_add(&L.line, pfc_intern_str(&L.out, order[i]), pfc_intern_len(&L.out, order[i]));
		pfc_sb_addc(&L.line, ' ');
		pfc_sb_adddec(&L.line, L.weights[order[i]], 0, 0);
		pfc_sb_addc(&L.line, '\n');
		if (L.line.oom) {
			ret = PFC_FAIL_NOOFF(err, NOMEM, "folded output");
			goto out;
		}
		fwrite(L.line.buf, 1, L.line.len, out);
	}
out:
	free(order);
	free(L.weights);
	pfc_sb_free(&L.line);
	pfc_intern_exit(&L.out);
	return ret;
}

static const char *const folded_suffixes[] = { ".folded", ".collapsed", ".stacks", NULL };

const struct pfc_writer pfc_writer_folded = {
	.name = "folded",
	.suffixes = folded_suffixes,
	.needs = PFC_NEED_STACKS | PFC_DIFF,
	.write = fold_write,
};
