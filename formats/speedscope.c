/*
 * speedscope.c - speedscope's JSON file format (https://www.speedscope.app/file-format-schema.json):
 * one "sampled" profile per thread (after one of all the threads of the heaviest process,
 * which opens first), or per process, over one shared, de-duplicated frame table.  It reads
 * the aggregated stacks (a sampled profile needs no time order), so its memory grows with
 * unique stacks, not samples, and it streams the JSON as it goes; the escaper makes any frame
 * name valid UTF-8 JSON.  It does not choose frame names beyond the resolved symbol: the
 * folded writer's stackcollapse rules do not apply here.
 */
#include <stdlib.h>
#include <string.h>
#include "converter/machine/intern.h"
#include "converter/util/strbuf.h"
#include "formats/speedscope.h"
#include "formats/units.h"
#include "formats/writer.h"

#define SCHEMA_URL "https://www.speedscope.app/file-format-schema.json"

/* ---- JSON strings ---- */

/* Length of the well-formed UTF-8 sequence at s (RFC 3629 table 3-7), 0 when it is not one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;	/* continuation byte, C0/C1 (overlong), F5..FF */
	if (c == 0xe0)
		lo = 0xa0;	/* overlong */
	else if (c == 0xed)
		hi = 0x9f;	/* surrogates */
	else if (c == 0xf0)
		lo = 0x90;	/* overlong */
	else if (c == 0xf4)
		hi = 0x8f;	/* above U+10FFFF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

void pfc_json_string(struct pfc_sb *out, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;

	pfc_sb_addc(out, '"');
	while (i < n) {
		unsigned char c = s[i];
		size_t len;
		char esc[8];

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			run++;
			continue;
		}
		len = c < 0x80 ? 1 : utf8_len(s + i, n - i);
		/* U+2028 and U+2029 are valid JSON but end a line in JavaScript */
		if (len > 1 && !(len == 3 && c == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9))) {
			i += len;
			run += len;
			continue;
		}
		pfc_sb_add(out, (const char *)s + i - run, run);
		run = 0;
		if (len == 3) {
			pfc_sb_adds(out, s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
			i += 3;
			continue;
		}
		i++;
		if (len == 0) {
			pfc_sb_adds(out, "\\ufffd");
			continue;
		}
		switch (c) {
		case '"': pfc_sb_adds(out, "\\\""); break;
		case '\\': pfc_sb_adds(out, "\\\\"); break;
		case '\b': pfc_sb_adds(out, "\\b"); break;
		case '\f': pfc_sb_adds(out, "\\f"); break;
		case '\n': pfc_sb_adds(out, "\\n"); break;
		case '\r': pfc_sb_adds(out, "\\r"); break;
		case '\t': pfc_sb_adds(out, "\\t"); break;
		default:
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			pfc_sb_add(out, esc, 6);
		}
	}
	pfc_sb_add(out, (const char *)s + i - run, run);
	pfc_sb_addc(out, '"');
}

/* ---- the profiles ---- */

struct ss_profile {
	int32_t pid, tid;           /* tid is -1 per process, and for a process's "all threads" */
	int all;                    /* per thread: every thread of the process in one profile */
	size_t first, n;            /* range of ctx.ids */
	uint64_t total;
	uint32_t comm;
	const char *own;            /* per process: its main thread's name, when the recording gave one */
};

struct ss_ctx {
	struct pfc_session *s;
	int by_process, use_period;
	uint32_t *ids;              /* the selected stacks, grouped by profile */
	size_t nr_ids;
	struct ss_profile *profs;
	size_t nr_profs;
	uint32_t *fmap;             /* session frame id -> speedscope frame index + 1 */
	struct pfc_intern keys;     /* frame keys "name\0file", in speedscope index order */
	uint32_t key_base;          /* first key id */
	struct pfc_sb tmp, esc;
};

static uint64_t stack_weight(const struct ss_ctx *c, const struct pfc_stack *st)
{
	return c->use_period ? st->period : st->count;
}

static int cmp_ids(const void *a, const void *b, void *arg)
{
	const struct ss_ctx *c = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct pfc_stack *sx = &c->s->stacks.stacks[x], *sy = &c->s->stacks.stacks[y];

	if (sx->pid != sy->pid)
		return sx->pid < sy->pid ? -1 : 1;
	if (!c->by_process && sx->tid != sy->tid)
		return sx->tid < sy->tid ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The name of a profile: the command name that carries most of its weight (for a process,
 * among its main thread's samples when it has any); ties go to the bytewise smaller name. */
static uint32_t profile_comm(struct ss_ctx *c, const struct ss_profile *p)
{
	struct { uint32_t comm; uint64_t w; int main; } tally[16];
	size_t nt = 0, i, j, best = 0;
	const struct pfc_intern *in = &c->s->strings;

	for (i = 0; i < p->n; i++) {
		const struct pfc_stack *st = &c->s->stacks.stacks[c->ids[p->first + i]];
		for (j = 0; j < nt && tally[j].comm != st->comm; j++)
			;
		if (j == nt) {
			if (nt == sizeof(tally) / sizeof(tally[0]))
				continue;	/* a thread renamed this often: the first names are enough */
			tally[nt].comm = st->comm;
			tally[nt].w = 0;
			tally[nt].main = 0;
			nt++;
		}
		tally[j].w += stack_weight(c, st);
		tally[j].main |= st->tid == st->pid;
	}
	for (j = 1; j < nt; j++) {
		int better;
		if (tally[j].main != tally[best].main)
			better = tally[j].main > tally[best].main;
		else if (tally[j].w != tally[best].w)
			better = tally[j].w > tally[best].w;
		else
			better = strcmp(pfc_intern_str(in, tally[j].comm), pfc_intern_str(in, tally[best].comm)) < 0;
		if (better)
			best = j;
	}
	return nt ? tally[best].comm : 0;
}

void pfc_frame_display_name(const struct pfc_session *s, const struct pfc_frame *f, struct pfc_sb *k)
{
	const char *dso = f->dso ? f->dso->name : NULL;
	size_t len0 = k->len;

	if (f->resolved) {
		pfc_sb_add(k, pfc_intern_str(&s->strings, f->sym), pfc_intern_len(&s->strings, f->sym));
	} else if (dso && dso[0] == '[') {
		pfc_sb_adds(k, dso);	/* [kernel.kallsyms], [vdso], ... */
	} else if (dso && strcmp(dso, "[unknown]")) {
		const char *base = strrchr(dso, '/');
		pfc_sb_addc(k, '[');
		pfc_sb_adds(k, base && base[1] ? base + 1 : dso);
		pfc_sb_addc(k, ']');
	} else {
		pfc_sb_adds(k, "[unknown]");
	}
	if (k->len == len0)
		pfc_sb_adds(k, "[unknown]");
}

/* The speedscope frame of a session frame: its display name and the DSO as the file.
 * Returns the index + 1, or 0 when out of memory. */
static uint32_t frame_index(struct ss_ctx *c, uint32_t fid)
{
	const struct pfc_frame *f = &c->s->stacks.frames[fid];
	const char *dso = f->dso ? f->dso->name : NULL;
	struct pfc_sb *k = &c->tmp;
	uint32_t id;

	if (c->fmap[fid])
		return c->fmap[fid];
	pfc_sb_reset(k);
	pfc_frame_display_name(c->s, f, k);
	pfc_sb_addc(k, 0);
	if (dso && strcmp(dso, "[unknown]"))
		pfc_sb_adds(k, dso);
	if (k->oom)
		return 0;
	id = pfc_intern(&c->keys, k->buf, k->len);
	if (id == UINT32_MAX)
		return 0;
	c->fmap[fid] = id - c->key_base + 1;
	return c->fmap[fid];
}

/* Whether frame k of a stack is drawn: not when it continues a run of unnamed frames. */
static int shown(const struct ss_ctx *c, const struct pfc_stack *st, uint32_t k)
{
	const struct pfc_session *s = c->s;

	return !s->opts->fold_runs || !pfc_stacks_run_tail(&s->stacks, s->stacks.frame_ids + st->first, k);
}

/*
 * The profile speedscope opens first (activeProfileIndex).  A thread's profile is a part of
 * the work: a server's requests land on whichever thread-pool worker is free, and the
 * heaviest thread of a .NET process can be its GC or tiered-compilation thread, all runtime
 * frames.  So per thread, the process with the most weight also gets one profile of all its
 * threads' samples (what dotnet-trace's users ask speedscope for), written first and opened;
 * its threads' own profiles follow as before.  A process of one thread needs none: its
 * thread's profile is opened.  The stacks are grouped by process already (cmp_ids), so the
 * new profile is the range of its threads' stacks.
 */
static void add_all_threads(struct ss_ctx *c)
{
	size_t i, j, best = SIZE_MAX, best_nr = 0;
	uint64_t best_total = 0;
	struct ss_profile all;

	for (i = 0; i < c->nr_profs; i = j) {
		uint64_t total = 0;
		for (j = i; j < c->nr_profs && c->profs[j].pid == c->profs[i].pid; j++)
			total += c->profs[j].total;
		if (best == SIZE_MAX || total > best_total) {
			best = i;
			best_total = total;
			best_nr = j - i;
		}
	}
	if (best == SIZE_MAX || best_nr < 2)
		return;
	memset(&all, 0, sizeof(all));
	all.pid = c->profs[best].pid;
	all.tid = -1;
	all.all = 1;
	all.first = c->profs[best].first;
	for (j = best; j < best + best_nr; j++)
		all.n += c->profs[j].n;
	all.total = best_total;
	all.comm = profile_comm(c, &all);
	all.own = pfc_session_thread_comm(c->s, all.pid, all.pid);
	/* profs has room for one more: there are at most as many profiles as stacks */
	memmove(c->profs + 1, c->profs, c->nr_profs * sizeof(*c->profs));
	c->profs[0] = all;
	c->nr_profs++;
}

/* Picks the stacks of one event and groups them into profiles. */
static int build(struct ss_ctx *c, const struct pfc_wopts *o, struct pfc_error *err)
{
	struct pfc_session *s = c->s;
	const struct pfc_evsel *ev;
	size_t i, evsel = SIZE_MAX;

	/* a time profile (--off-cpu, --thread-time): its own events, weighed in nanoseconds */
	if (s->offcpu) {
		c->use_period = 1;
		evsel = SIZE_MAX - 1;
	} else if (o->event) {
		for (i = 0; i < s->rd.nr_evsels && evsel == SIZE_MAX; i++)
			if (!strcmp(pfc_session_evsel_name(s, i), o->event))
				evsel = i;
		if (evsel == SIZE_MAX)
			return PFC_FAIL_NOOFF(err, USAGE, "no event '%s' in the recording", o->event);
	} else {
		/* as the folded output: the event of the first sample */
		uint64_t best = UINT64_MAX;
		for (i = 0; i < s->rd.nr_evsels; i++)
			if (pfc_session_evsel_first(s, i) < best) {
				best = pfc_session_evsel_first(s, i);
				evsel = i;
			}
		if (evsel == SIZE_MAX)
			return 0;	/* no samples: a file without profiles */
	}
	if (!s->offcpu) {
		ev = s->rd.evsels[evsel];
		/* every non-tracepoint sample has a period: its own, or the fixed one of perf record -c */
		c->use_period = ev->attr.type != PERF_TYPE_TRACEPOINT;
	}

	c->ids = malloc((s->stacks.nr_stacks + 1) * sizeof(*c->ids));
	c->profs = malloc((s->stacks.nr_stacks + 1) * sizeof(*c->profs));
	if (!c->ids || !c->profs)
		return PFC_FAIL_NOOFF(err, NOMEM, "speedscope");
	for (i = 0; i < s->stacks.nr_stacks; i++) {
		const struct pfc_stack *st = &s->stacks.stacks[i];
		/* speedscope ignores zero weights; none is written */
		if ((s->offcpu ? pfc_offcpu_in_profile(s->offcpu, st->evsel) : st->evsel == evsel) &&
		    stack_weight(c, st) > 0)
			c->ids[c->nr_ids++] = (uint32_t)i;
	}
	qsort_r(c->ids, c->nr_ids, sizeof(*c->ids), cmp_ids, c);
	for (i = 0; i < c->nr_ids; i++) {
		const struct pfc_stack *st = &s->stacks.stacks[c->ids[i]];
		struct ss_profile *p = c->nr_profs ? &c->profs[c->nr_profs - 1] : NULL;

		if (!p || p->pid != st->pid || (!c->by_process && p->tid != st->tid)) {
			p = &c->profs[c->nr_profs++];
			p->pid = st->pid;
			p->tid = c->by_process ? -1 : st->tid;
			p->all = 0;
			p->first = i;
			p->n = 0;
			p->total = 0;
		}
		p->n++;
		p->total += stack_weight(c, st);
	}
	/* A process is named by its own name, the comm of its main thread (pid == tid: "dotnet"),
	 * even when that thread has no samples (it waits in Main while the thread pool works);
	 * the heaviest thread's name (".NET TP Worker") names a thread, not the process. */
	for (i = 0; i < c->nr_profs; i++) {
		c->profs[i].comm = profile_comm(c, &c->profs[i]);
		c->profs[i].own = c->by_process ? pfc_session_thread_comm(s, c->profs[i].pid, c->profs[i].pid) : NULL;
	}
	if (!c->by_process)
		add_all_threads(c);
	return 0;
}

/* ---- output ---- */

static void put_u64(FILE *out, uint64_t v)
{
	char buf[24];

	fwrite(buf, 1, (size_t)(pfc_put_dec(buf, v, 1) - buf), out);
}

static void put_str(struct ss_ctx *c, FILE *out, const char *s, size_t n)
{
	pfc_sb_reset(&c->esc);
	pfc_json_string(&c->esc, s, n);
	fwrite(c->esc.buf, 1, c->esc.len, out);
}

static const char *unit_of(const struct pfc_evsel *ev, int use_period)
{
	if (use_period && pfc_units_clock_event(ev))
		return "nanoseconds";
	return "none";
}

static int ss_write(FILE *out, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err)
{
	struct ss_ctx c;
	const char *input = s->recording_name, *unit = "none", *base;
	size_t i, j, active = 0;
	int ret;

	memset(&c, 0, sizeof(c));
	c.s = s;
	c.by_process = o->speedscope_by == PFC_SPEEDSCOPE_BY_PROCESS;
	if (pfc_intern_init(&c.keys) < 0)
		return PFC_FAIL_NOOFF(err, NOMEM, "speedscope");
	c.key_base = (uint32_t)c.keys.nr;
	c.fmap = calloc(s->stacks.nr_frames + 1, sizeof(*c.fmap));
	if (!c.fmap) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "speedscope");
		goto out;
	}
	if ((ret = build(&c, o, err)) < 0)
		goto out;
	if (c.nr_ids && s->offcpu)
		unit = "nanoseconds";
	else if (c.nr_ids)
		unit = unit_of(s->rd.evsels[s->stacks.stacks[c.ids[0]].evsel], c.use_period);

	/* frames in first-seen order over the profiles as written, root first */
	for (i = 0; i < c.nr_profs; i++) {
		const struct ss_profile *p = &c.profs[i];
		for (j = 0; j < p->n; j++) {
			const struct pfc_stack *st = &s->stacks.stacks[c.ids[p->first + j]];
			uint32_t k;
			for (k = st->nr; k-- > 0;)
				if (!shown(&c, st, k))
					continue;
				else if (!frame_index(&c, s->stacks.frame_ids[st->first + k]))
					goto oom;
		}
		if (!c.profs[active].all && (p->all || p->total > c.profs[active].total))
			active = i;
	}

	/* the input's name, without its directories, so the bytes do not depend on the path */
	if (!strcmp(input, "-"))
		input = "stdin";
	base = strrchr(input, '/');
	if (base && base[1])
		input = base + 1;
	fputs("{\"$schema\":\"" SCHEMA_URL "\",\n\"name\":", out);
	pfc_sb_reset(&c.tmp);
	pfc_sb_adds(&c.tmp, input);
	if (s->offcpu)	/* speedscope shows the name as the title */
		pfc_sb_adds(&c.tmp, pfc_offcpu_thread_time(s->offcpu) ? " (thread time)" : " (off-CPU time)");
	if (c.tmp.oom)
		goto oom;
	put_str(&c, out, c.tmp.buf, c.tmp.len);
	fputs(",\n\"exporter\":", out);
	pfc_sb_reset(&c.tmp);
	pfc_sb_addf(&c.tmp, "perfconv@%s", o->version ? o->version : "unknown");
	put_str(&c, out, c.tmp.buf, c.tmp.len);
	fputs(",\n\"activeProfileIndex\":", out);
	put_u64(out, active);
	fputs(",\n\"shared\":{\"frames\":[", out);
	for (i = c.key_base; i < c.keys.nr; i++) {
		const char *k = pfc_intern_str(&c.keys, (uint32_t)i);
		size_t nl = strlen(k), kl = pfc_intern_len(&c.keys, (uint32_t)i);

		fputs(i == c.key_base ? "\n{\"name\":" : ",\n{\"name\":", out);
		put_str(&c, out, k, nl);
		if (kl > nl + 1) {
			fputs(",\"file\":", out);
			put_str(&c, out, k + nl + 1, kl - nl - 1);
		}
		fputc('}', out);
	}
	fputs("]},\n\"profiles\":[", out);
	for (i = 0; i < c.nr_profs; i++) {
		const struct ss_profile *p = &c.profs[i];

		fputs(i ? ",\n{\"type\":\"sampled\",\"name\":" : "\n{\"type\":\"sampled\",\"name\":", out);
		pfc_sb_reset(&c.tmp);
		pfc_sb_adds(&c.tmp, p->own ? p->own : pfc_intern_str(&s->strings, p->comm));
		if (p->all)
			pfc_sb_addf(&c.tmp, " (%d) all threads", (int)p->pid);
		else if (c.by_process)
			pfc_sb_addf(&c.tmp, " (%d)", (int)p->pid);
		else
			pfc_sb_addf(&c.tmp, " (%d/%d)", (int)p->pid, (int)p->tid);
		if (c.tmp.oom)
			goto oom;
		put_str(&c, out, c.tmp.buf, c.tmp.len);
		fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":", unit);
		put_u64(out, p->total);
		fputs(",\n\"samples\":[", out);
		for (j = 0; j < p->n; j++) {
			const struct pfc_stack *st = &s->stacks.stacks[c.ids[p->first + j]];
			uint32_t k;
			int sep = 0;
			fputs(j ? ",\n[" : "\n[", out);
			for (k = st->nr; k-- > 0;) {
				if (!shown(&c, st, k))
					continue;
				if (sep)
					fputc(',', out);
				put_u64(out, c.fmap[s->stacks.frame_ids[st->first + k]] - 1);
				sep = 1;
			}
			fputc(']', out);
		}
		fputs("],\n\"weights\":[", out);
		for (j = 0; j < p->n; j++) {
			if (j)
				fputc(',', out);
			put_u64(out, stack_weight(&c, &s->stacks.stacks[c.ids[p->first + j]]));
		}
		fputs("]}", out);
	}
	fputs("]}\n", out);
	if (c.esc.oom)
		goto oom;
	goto out;
oom:
	ret = PFC_FAIL_NOOFF(err, NOMEM, "speedscope output");
out:
	free(c.ids);
	free(c.profs);
	free(c.fmap);
	pfc_intern_exit(&c.keys);
	pfc_sb_free(&c.tmp);
	pfc_sb_free(&c.esc);
	return ret;
}

static const char *const speedscope_suffixes[] = { ".speedscope.json", NULL };

const struct pfc_writer pfc_writer_speedscope = {
	.name = "speedscope",
	.suffixes = speedscope_suffixes,
	.needs = PFC_NEED_STACKS,
	.write = ss_write,
};
