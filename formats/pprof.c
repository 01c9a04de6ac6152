/*
 * pprof.c - the gzip-compressed profile.proto that go tool pprof, Pyroscope and Cloud
 * Profiler read, encoded by protobuf-c from code generated at build time out of the
 * profile.proto Debian ships.  One sample per aggregated stack (event, comm, pid, tid):
 * for each event a count and the sum of periods, labels pid, tid and thread (the comm).
 * Locations are the unique frames, with the address in the process that mapped the DSO
 * first; mappings are the DSOs with their build-ids.  It does not symbolize anything itself.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>
#include "profile.pb-c.h"
#include "converter/machine/intern.h"
#include "converter/util/bytes.h"
#include "converter/util/strbuf.h"
#include "formats/writer.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;

enum { NR_LABELS = 3 };

struct pp_ctx {
	struct pfc_session *s;
	struct pfc_intern strs;       /* the string table from index 1 on */
	uint32_t str_base;
	int oom;
	/* events written, in the order of their first sample; ev_slot[evsel] = slot + 1 */
	size_t *evs, nr_evs;
	uint32_t *ev_slot;
	int *ev_use_period;
	/* frame id -> location id (0: not used); DSO id -> mapping id */
	uint64_t *loc_of, *map_of;
	uint32_t *frame_of_loc;       /* location id - 1 -> frame id */
	size_t nr_locs;
	const struct pfc_map **map_for;  /* mapping id - 1 -> the map its addresses come from */
	const struct pfc_dso **dso_of_map;
	size_t nr_maps;
	uint32_t *func_of_name;       /* string index -> function id (0: none yet) */
	size_t cap_func_of_name;
	PbFunction *funcs;
	size_t nr_funcs, cap_funcs;
};

/* Index of a string in the table (0 is ""). */
static int64_t str_index(struct pp_ctx *c, const char *s, size_t n)
{
	uint32_t id;

	if (!n)
		return 0;
	id = pfc_intern(&c->strs, s, n);
	if (id == UINT32_MAX) {
		c->oom = 1;
		return 0;
	}
	return (int64_t)(id - c->str_base) + 1;
}

static int64_t str_index0(struct pp_ctx *c, const char *s)
{
	return str_index(c, s, strlen(s));
}

static uint64_t stack_value(const struct pp_ctx *c, const struct pfc_stack *st)
{
	return c->ev_use_period[st->evsel] ? st->period : st->count;
}

/* The unit of an event's periods: time for the clock events, else a count of events. */
static const char *unit_of(const struct pfc_evsel *ev, int use_period)
{
	if (use_period && ev->attr.type == PERF_TYPE_SOFTWARE &&
	    (ev->attr.config == PERF_COUNT_SW_CPU_CLOCK || ev->attr.config == PERF_COUNT_SW_TASK_CLOCK))
		return "nanoseconds";
	return use_period ? "events" : "count";
}

/* The events with samples (or --event's), first-sampled first: the folded output's event leads. */
static int pick_events(struct pp_ctx *c, const struct pfc_wopts *o, struct pfc_error *err)
{
	struct pfc_session *s = c->s;
	size_t i, j, n = s->rd.nr_evsels;

	c->evs = calloc(n + 1, sizeof(*c->evs));
	c->ev_slot = calloc(n + 1, sizeof(*c->ev_slot));
	c->ev_use_period = calloc(n + 1, sizeof(*c->ev_use_period));
	if (!c->evs || !c->ev_slot || !c->ev_use_period)
		return PFC_FAIL_NOOFF(err, NOMEM, "pprof");
	for (i = 0; i < n; i++) {
		c->ev_use_period[i] = s->rd.evsels[i]->attr.type != PERF_TYPE_TRACEPOINT;
		if (o->event ? strcmp(pfc_session_evsel_name(s, i), o->event) != 0
			     : pfc_session_evsel_first(s, i) == UINT64_MAX)
			continue;
		/* insertion by first sample */
		for (j = c->nr_evs; j > 0 && pfc_session_evsel_first(s, c->evs[j - 1]) > pfc_session_evsel_first(s, i); j--)
			c->evs[j] = c->evs[j - 1];
		c->evs[j] = i;
		c->nr_evs++;
	}
	if (o->event && !c->nr_evs)
		return PFC_FAIL_NOOFF(err, USAGE, "no event '%s' in the recording", o->event);
	for (i = 0; i < c->nr_evs; i++)
		c->ev_slot[c->evs[i]] = (uint32_t)i + 1;
	return 0;
}

/* The map a DSO's addresses are turned back into process addresses with: the first one that
 * maps it (processes map a library at different places; a profile has one address space). */
static const struct pfc_map *map_of_dso(const struct pfc_session *s, const struct pfc_dso *d)
{
	const struct pfc_machine *m = &s->machine;
	size_t i, j;

	if (d == m->kernel && m->have_kernel_map)
		return &m->kmap;
	for (i = 0; i < m->nr_all_maps; i++)
		for (j = 0; j < m->all_maps[i]->n; j++)
			if (m->all_maps[i]->v[j].dso == d)
				return &m->all_maps[i]->v[j];
	return NULL;
}

/* pprof takes the first mapping for the main binary ("File:" in its reports): the lowest file
 * mapped executable in the process with the most weight, which is its program for perf's
 * synthesized maps (PIE programs load below the libraries) and for a program's own mmap. */
static void main_binary_first(struct pp_ctx *c)
{
	const struct pfc_session *s = c->s;
	const struct pfc_machine *m = &s->machine;
	const struct pfc_thread *t = NULL;
	int32_t pid = -1;
	uint64_t best = 0;
	size_t i, j;

	for (i = 0; i < s->stacks.nr_stacks; i++) {
		const struct pfc_stack *st = &s->stacks.stacks[i];
		uint64_t w = 0;
		if (!c->ev_slot[st->evsel] || st->pid <= 0)
			continue;
		for (j = 0; j < s->stacks.nr_stacks; j++)
			if (s->stacks.stacks[j].pid == st->pid && c->ev_slot[s->stacks.stacks[j].evsel])
				w += s->stacks.stacks[j].count;
		if (w > best) {
			best = w;
			pid = st->pid;
		}
		if (i > 64)
			break;	/* the first stacks are enough to find a heavy process */
	}
	for (i = 0; i < m->tcap && !t; i++)
		for (t = m->thash[i]; t && !(t->pid == pid && t->tid == pid); t = t->hnext)
			;
	if (!t || !t->maps)
		return;
	for (j = 0; j < t->maps->n; j++) {
		const struct pfc_map *mp = &t->maps->v[j];
		if (mp->dso && mp->dso->kind == PFC_DSO_FILE && !mp->identity && (!mp->prot || (mp->prot & PROT_EXEC))) {
			c->dso_of_map[0] = mp->dso;
			c->map_for[0] = map_of_dso(s, mp->dso);
			c->map_of[mp->dso->id] = c->nr_maps = 1;
			return;
		}
	}
}

/* Location id of a frame, made on first use with its mapping. */
static uint64_t location_of(struct pp_ctx *c, uint32_t fid)
{
	const struct pfc_frame *f = &c->s->stacks.frames[fid];

	if (c->loc_of[fid])
		return c->loc_of[fid];
	if (f->dso && !c->map_of[f->dso->id]) {
		c->dso_of_map[c->nr_maps] = f->dso;
		c->map_for[c->nr_maps] = map_of_dso(c->s, f->dso);
		c->map_of[f->dso->id] = ++c->nr_maps;
	}
	c->frame_of_loc[c->nr_locs] = fid;
	return c->loc_of[fid] = ++c->nr_locs;
}

/* The function of a frame: its symbol, or "[dso]" as perf names a frame without one. */
static uint64_t function_of(struct pp_ctx *c, const struct pfc_frame *f, struct pfc_sb *tmp)
{
	const char *dso = f->dso ? f->dso->name : NULL;
	int64_t name;

	pfc_sb_reset(tmp);
	if (f->resolved) {
		pfc_sb_add(tmp, pfc_intern_str(&c->s->strings, f->sym), pfc_intern_len(&c->s->strings, f->sym));
	} else if (dso && dso[0] == '[') {
		pfc_sb_adds(tmp, dso);
	} else if (dso && strcmp(dso, "[unknown]")) {
		const char *base = strrchr(dso, '/');
		pfc_sb_addf(tmp, "[%s]", base && base[1] ? base + 1 : dso);
	}
	if (!tmp->len)
		pfc_sb_adds(tmp, "[unknown]");
	if (tmp->oom) {
		c->oom = 1;
		return 0;
	}
	name = str_index(c, tmp->buf, tmp->len);
	if (c->oom)
		return 0;
	if ((size_t)name >= c->cap_func_of_name) {
		size_t cap = c->cap_func_of_name ? c->cap_func_of_name : 1024;
		uint32_t *n;
		while (cap <= (size_t)name)
			cap *= 2;
		if (!(n = realloc(c->func_of_name, cap * sizeof(*n)))) {
			c->oom = 1;
			return 0;
		}
		memset(n + c->cap_func_of_name, 0, (cap - c->cap_func_of_name) * sizeof(*n));
		c->func_of_name = n;
		c->cap_func_of_name = cap;
	}
	if (c->func_of_name[name])
		return c->func_of_name[name];
	if (c->nr_funcs == c->cap_funcs) {
		size_t cap = c->cap_funcs ? c->cap_funcs * 2 : 256;
		PbFunction *n = realloc(c->funcs, cap * sizeof(*n));
		if (!n) {
			c->oom = 1;
			return 0;
		}
		c->funcs = n;
		c->cap_funcs = cap;
	}
	{
		PbFunction fn = PERFTOOLS__PROFILES__FUNCTION__INIT;
		fn.id = c->nr_funcs + 1;
		fn.name = name;
		fn.system_name = name;
		c->funcs[c->nr_funcs++] = fn;
	}
	return c->func_of_name[name] = (uint32_t)c->nr_funcs;
}

/* ---- output: the packed message streamed through deflate in gzip framing ---- */

struct gz_sink {
	ProtobufCBuffer base;
	z_stream z;
	FILE *out;
	int failed;
	unsigned char buf[64 * 1024];
};

static void gz_push(struct gz_sink *g, int flush)
{
	int r;

	do {
		g->z.next_out = g->buf;
		g->z.avail_out = sizeof(g->buf);
		r = deflate(&g->z, flush);
		if (r == Z_STREAM_ERROR) {
			g->failed = 1;
			return;
		}
		if (fwrite(g->buf, 1, sizeof(g->buf) - g->z.avail_out, g->out) != sizeof(g->buf) - g->z.avail_out)
			g->failed = 1;
	} while (g->z.avail_out == 0 && !g->failed);
}

static void gz_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct gz_sink *g = (struct gz_sink *)b;

	while (len && !g->failed) {
		size_t n = len > (1u << 30) ? 1u << 30 : len;
		g->z.next_in = (Bytef *)data;
		g->z.avail_in = (uInt)n;
		gz_push(g, Z_NO_FLUSH);
		data += n;
		len -= n;
	}
}

/* The recording's time span: SAMPLE_TIME (first, last sample), and CLOCK_DATA to put the
 * first one on the wall clock when perf recorded it. */
static void time_span(const struct pfc_session *s, PbProfile *p)
{
	const struct pfc_blob *st = &s->rd.feat[PFC_FEAT_SAMPLE_TIME], *cd = &s->rd.feat[PFC_FEAT_CLOCK_DATA];
	struct pfc_cursor cur;
	uint64_t first, last, tod, clk;

	pfc_cur_init(&cur, st->data, st->data ? st->size : 0, s->rd.swap);
	if (pfc_cur_left(&cur) < 16)
		return;
	first = pfc_cur_u64(&cur);
	last = pfc_cur_u64(&cur);
	if (last > first && last - first < (uint64_t)INT64_MAX)
		p->duration_nanos = (int64_t)(last - first);
	pfc_cur_init(&cur, cd->data, cd->data ? cd->size : 0, s->rd.swap);
	if (pfc_cur_left(&cur) < 24 || pfc_cur_u32(&cur) != 1)
		return;
	(void)pfc_cur_u32(&cur);	/* clockid: the sample times' clock, which clk is read on */
	tod = pfc_cur_u64(&cur);
	clk = pfc_cur_u64(&cur);
	if (first >= clk && tod + (first - clk) < (uint64_t)INT64_MAX)
		p->time_nanos = (int64_t)(tod + (first - clk));
}

static int pp_write(FILE *out, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err)
{
	struct pp_ctx c;
	struct pfc_sb tmp = { 0 };
	PbProfile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	PbValueType *vt = NULL, **vtp = NULL, period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	PbSample *samples = NULL, **samplep = NULL;
	PbLabel *labels = NULL, **labelp = NULL;
	PbLocation *locs = NULL, **locp = NULL;
	PbLine *lines = NULL, **linep = NULL;
	PbMapping *maps = NULL, **mapp = NULL;
	PbFunction **funcp = NULL;
	uint64_t *loc_ids = NULL;
	int64_t *values = NULL, comments[2];
	char **strtab = NULL;
	size_t i, k, nr_samples = 0, nr_ids = 0, nr_vals;
	int64_t k_pid, k_tid, k_thread;
	struct gz_sink g;
	int ret = 0;

	memset(&c, 0, sizeof(c));
	memset(&g, 0, sizeof(g));
	c.s = s;
	if (pfc_intern_init(&c.strs) < 0)
		return PFC_FAIL_NOOFF(err, NOMEM, "pprof");
	c.str_base = (uint32_t)c.strs.nr;
	if ((ret = pick_events(&c, o, err)) < 0)
		goto out;
	nr_vals = 2 * c.nr_evs;
	c.loc_of = calloc(s->stacks.nr_frames + 1, sizeof(*c.loc_of));
	c.frame_of_loc = calloc(s->stacks.nr_frames + 1, sizeof(*c.frame_of_loc));
	c.map_of = calloc(s->machine.nr_dsos + 1, sizeof(*c.map_of));
	c.map_for = calloc(s->machine.nr_dsos + 1, sizeof(*c.map_for));
	c.dso_of_map = calloc(s->machine.nr_dsos + 1, sizeof(*c.dso_of_map));
	vt = calloc(nr_vals + 1, sizeof(*vt));
	vtp = calloc(nr_vals + 1, sizeof(*vtp));
	if (!c.loc_of || !c.frame_of_loc || !c.map_of || !c.map_for || !c.dso_of_map || !vt || !vtp)
		goto oom;

	/* sample types: per event a count of samples and the sum of its periods */
	for (i = 0; i < c.nr_evs; i++) {
		const struct pfc_evsel *ev = s->rd.evsels[c.evs[i]];
		const char *name = pfc_session_evsel_name(s, c.evs[i]);
		PbValueType v = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;

		pfc_sb_reset(&tmp);
		if (c.nr_evs == 1)
			pfc_sb_adds(&tmp, "samples");
		else
			pfc_sb_addf(&tmp, "%s_samples", name);
		v.type = str_index(&c, tmp.buf ? tmp.buf : "", tmp.len);
		v.unit = str_index0(&c, "count");
		vt[2 * i] = v;
		v.type = str_index0(&c, name);
		v.unit = str_index0(&c, unit_of(ev, c.ev_use_period[c.evs[i]]));
		vt[2 * i + 1] = v;
		vtp[2 * i] = &vt[2 * i];
		vtp[2 * i + 1] = &vt[2 * i + 1];
	}
	prof.n_sample_type = nr_vals;
	prof.sample_type = vtp;
	if (c.nr_evs) {
		const struct pfc_evsel *ev = s->rd.evsels[c.evs[0]];
		/* the first event's period is what pprof shows unless told otherwise */
		prof.default_sample_type = vt[1].type;
		period_type = vt[1];
		prof.period_type = &period_type;
		if (!ev->attr.freq)
			prof.period = (int64_t)ev->attr.sample_period;
	}
	main_binary_first(&c);
	k_pid = str_index0(&c, "pid");
	k_tid = str_index0(&c, "tid");
	k_thread = str_index0(&c, "thread");

	/* samples: the stacks of the events written, in aggregation order */
	for (i = 0; i < s->stacks.nr_stacks; i++)
		if (c.ev_slot[s->stacks.stacks[i].evsel]) {
			nr_samples++;
			nr_ids += s->stacks.stacks[i].nr;
		}
	samples = calloc(nr_samples + 1, sizeof(*samples));
	samplep = calloc(nr_samples + 1, sizeof(*samplep));
	labels = calloc(NR_LABELS * nr_samples + 1, sizeof(*labels));
	labelp = calloc(NR_LABELS * nr_samples + 1, sizeof(*labelp));
	loc_ids = calloc(nr_ids + 1, sizeof(*loc_ids));
	values = calloc(nr_vals * nr_samples + 1, sizeof(*values));
	if (!samples || !samplep || !labels || !labelp || !loc_ids || !values)
		goto oom;
	nr_samples = nr_ids = 0;
	for (i = 0; i < s->stacks.nr_stacks; i++) {
		const struct pfc_stack *st = &s->stacks.stacks[i];
		PbSample *sm = &samples[nr_samples];
		PbLabel l = PERFTOOLS__PROFILES__LABEL__INIT, *lb = &labels[NR_LABELS * nr_samples];
		size_t slot = c.ev_slot[st->evsel];

		if (!slot)
			continue;
		perftools__profiles__sample__init(sm);
		sm->location_id = &loc_ids[nr_ids];
		for (k = 0; k < st->nr; k++)	/* leaf first, as the aggregate keeps them */
			loc_ids[nr_ids++] = location_of(&c, s->stacks.frame_ids[st->first + k]);
		sm->n_location_id = st->nr;
		sm->value = &values[nr_vals * nr_samples];
		sm->n_value = nr_vals;
		sm->value[2 * (slot - 1)] = (int64_t)st->count;
		sm->value[2 * (slot - 1) + 1] = (int64_t)stack_value(&c, st);
		l.key = k_pid;
		l.num = st->pid;
		lb[0] = l;
		l.key = k_tid;
		l.num = st->tid;
		lb[1] = l;
		l.key = k_thread;
		l.num = 0;
		l.str = str_index0(&c, pfc_intern_str(&s->strings, st->comm));
		lb[2] = l;
		for (k = 0; k < NR_LABELS; k++)
			labelp[NR_LABELS * nr_samples + k] = &lb[k];
		sm->label = &labelp[NR_LABELS * nr_samples];
		sm->n_label = NR_LABELS;
		samplep[nr_samples++] = sm;
	}
	prof.n_sample = nr_samples;
	prof.sample = samplep;

	/* locations: the frames, each with one line naming its function */
	locs = calloc(c.nr_locs + 1, sizeof(*locs));
	locp = calloc(c.nr_locs + 1, sizeof(*locp));
	lines = calloc(c.nr_locs + 1, sizeof(*lines));
	linep = calloc(c.nr_locs + 1, sizeof(*linep));
	if (!locs || !locp || !lines || !linep)
		goto oom;
	for (i = 0; i < c.nr_locs; i++) {
		const struct pfc_frame *f = &s->stacks.frames[c.frame_of_loc[i]];
		PbLocation *L = &locs[i];
		const struct pfc_map *m = NULL;

		perftools__profiles__location__init(L);
		perftools__profiles__line__init(&lines[i]);
		L->id = i + 1;
		L->address = f->addr;
		if (f->dso) {
			L->mapping_id = c.map_of[f->dso->id];
			m = c.map_for[L->mapping_id - 1];
		}
		if (m && !m->identity)
			L->address = f->addr - m->pgoff + m->start;
		lines[i].function_id = function_of(&c, f, &tmp);
		linep[i] = &lines[i];
		L->line = &linep[i];
		L->n_line = 1;
		locp[i] = L;
	}
	if (c.oom)
		goto oom;
	prof.n_location = c.nr_locs;
	prof.location = locp;

	/* mappings: the DSOs, with the first map's range and file offset */
	maps = calloc(c.nr_maps + 1, sizeof(*maps));
	mapp = calloc(c.nr_maps + 1, sizeof(*mapp));
	if (!maps || !mapp)
		goto oom;
	for (i = 0; i < c.nr_maps; i++) {
		const struct pfc_dso *d = c.dso_of_map[i];
		const struct pfc_map *m = c.map_for[i];
		PbMapping *M = &maps[i];

		perftools__profiles__mapping__init(M);
		M->id = i + 1;
		if (m) {
			M->memory_start = m->start;
			M->memory_limit = m->end;
			M->file_offset = m->identity ? 0 : m->pgoff;
		}
		M->filename = str_index0(&c, d->name);
		if (d->build_id_len > 0) {
			int b;
			pfc_sb_reset(&tmp);
			for (b = 0; b < d->build_id_len && b < 20; b++)
				pfc_sb_addf(&tmp, "%02x", d->build_id[b]);
			M->build_id = str_index(&c, tmp.buf ? tmp.buf : "", tmp.len);
		}
		/* names come from perfconv; pprof must not look the addresses up again */
		M->has_functions = 1;
		mapp[i] = M;
	}
	prof.n_mapping = c.nr_maps;
	prof.mapping = mapp;

	funcp = calloc(c.nr_funcs + 1, sizeof(*funcp));
	if (!funcp)
		goto oom;
	for (i = 0; i < c.nr_funcs; i++)
		funcp[i] = &c.funcs[i];
	prof.n_function = c.nr_funcs;
	prof.function = funcp;

	time_span(s, &prof);
	pfc_sb_reset(&tmp);
	pfc_sb_addf(&tmp, "perfconv %s", o->version ? o->version : "unknown");
	comments[0] = str_index(&c, tmp.buf, tmp.len);
	prof.comment = comments;
	prof.n_comment = 1;
	if (o->command_line && *o->command_line)
		comments[prof.n_comment++] = str_index0(&c, o->command_line);
	if (c.oom || tmp.oom)
		goto oom;

	/* the string table, "" first */
	strtab = calloc(c.strs.nr - c.str_base + 2, sizeof(*strtab));
	if (!strtab)
		goto oom;
	strtab[0] = "";
	for (i = c.str_base; i < c.strs.nr; i++)
		strtab[i - c.str_base + 1] = (char *)pfc_intern_str(&c.strs, (uint32_t)i);
	prof.n_string_table = c.strs.nr - c.str_base + 1;
	prof.string_table = strtab;

	/* gzip framing (windowBits 15 + 16) with zlib's default header: no name, time 0 */
	g.base.append = gz_append;
	g.out = out;
	if (deflateInit2(&g.z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		goto oom;
	perftools__profiles__profile__pack_to_buffer(&prof, &g.base);
	g.z.avail_in = 0;
	if (!g.failed)
		gz_push(&g, Z_FINISH);
	deflateEnd(&g.z);
	if (g.failed)
		ret = PFC_FAIL_NOOFF(err, WRITE, "writing the pprof profile failed");
	goto out;
oom:
	ret = PFC_FAIL_NOOFF(err, NOMEM, "pprof output");
out:
	free(strtab);
	free(funcp);
	free(maps);
	free(mapp);
	free(locs);
	free(locp);
	free(lines);
	free(linep);
	free(samples);
	free(samplep);
	free(labels);
	free(labelp);
	free(loc_ids);
	free(values);
	free(vt);
	free(vtp);
	free(c.evs);
	free(c.ev_slot);
	free(c.ev_use_period);
	free(c.loc_of);
	free(c.frame_of_loc);
	free(c.map_of);
	free(c.map_for);
	free(c.dso_of_map);
	free(c.func_of_name);
	free(c.funcs);
	pfc_intern_exit(&c.strs);
	pfc_sb_free(&tmp);
	return ret;
}

static const char *const pprof_suffixes[] = { ".pb.gz", ".pprof", NULL };

/* pprof files are gzip-compressed by definition: a .pb.gz name is not compressed twice */
const struct pfc_writer pfc_writer_pprof = {
	.name = "pprof",
	.suffixes = pprof_suffixes,
	.needs = PFC_NEED_STACKS | PFC_NEED_LOG | PFC_OWN_GZIP,
	.write = pp_write,
};
