/*
 * firefox.c - the Firefox Profiler's processed profile format (version FX_VERSION, as
 * firefox-devtools/profiler's src/types/profile.ts defines it; its upgraders lift older files):
 * one thread per (pid, tid) with its samples in time order, and as markers perf's lost-events and
 * throttle records and, with --events, the .NET runtime's GCs, exceptions and JIT compilations
 * (converter/events/ reads them), over one shared string, stack, frame, function, resource and native
 * symbol table.  Frames are named as speedscope's (every one, so the profiler never asks a
 * symbol server) and put in categories a .NET reader knows.  It reads the samples' times
 * (times.h), or the aggregated stacks of a time profile (--off-cpu, --thread-time).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "converter/events/runtime.h"
#include "converter/machine/intern.h"
#include "converter/util/bytes.h"
#include "converter/util/grow.h"
#include "converter/util/hashtab.h"
#include "converter/util/strbuf.h"
#include "formats/speedscope.h"
#include "formats/writer.h"

#define FX_VERSION 62          /* PROCESSED_PROFILE_VERSION of the profiler's commit 622a37f9 */
#define FX_GECKO_VERSION 34    /* its GECKO_PROFILE_VERSION, which meta.version names */

/* Categories: the first grey one is the default of stacks whose frames have none. */
enum { CAT_OTHER, CAT_KERNEL, CAT_NATIVE, CAT_JIT, CAT_DOTNET_JIT, CAT_R2R, CAT_RUNTIME, CAT_OFFCPU, CAT_PERF, CAT__MAX };
static const char *const cat_names[CAT__MAX] = {
	"Other", "Kernel", "Native", "JIT", ".NET JIT", ".NET ReadyToRun", ".NET runtime", "Off-CPU", "perf",
};
static const char *const cat_colors[CAT__MAX] = {
	"grey", "orange", "blue", "purple", "green", "lightblue", "yellow", "darkgrey", "red",
};

/* ---- the model being built ---- */

struct fx_thread {
	int32_t pid, tid;
	uint32_t comm;               /* session string: the name it is shown by */
	uint64_t nr, fill;           /* samples, and how many were put in so far */
	uint64_t start;              /* its samples: ctx.idx[start .. start + nr) */
	uint64_t lay;                /* a time profile: where its next stack is laid out, ns */
	uint64_t first;              /* its first sample's time, UINT64_MAX when it has none */
	size_t mk_start, mk_nr;      /* its markers: ctx.mk[mk_start .. mk_start + mk_nr) */
};

/* A marker: one of perf's marks, or one of a runtime stream's GCs, exceptions or JIT
 * compilations (item idx of stream file), on the thread it happened on. */
enum { MK_PERF, MK_GC, MK_EXC, MK_JIT };
struct fx_mark {
	uint64_t start, end;         /* ns of the recording's clock; end: intervals only */
	int32_t pid, tid;
	uint32_t src, file;          /* MK_*, and the stream of the runtime's */
	uint32_t idx;                /* in s->marks.v, or the stream's gcs, throws or jits */
	uint32_t seq;                /* the order they were gathered in: ties keep it */
};

struct fx_ctx {
	struct pfc_session *s;
	const struct pfc_wopts *o;
	int use_period, time_weights, stream, have_times;
	uint64_t uniform;             /* every sample's period when they are all the same, else 0 */
	size_t evsel;                 /* the event written (SIZE_MAX - 1: the time profile's) */
	uint32_t *thread_of;          /* session stack id -> thread index + 1, 0: not written */
	uint64_t *nr_of;              /* session stack id -> its samples */
	const struct pfc_times *times; /* the samples in time order: the session's, or NULL: own */
	struct pfc_stime *own;        /* a time profile's: one per stack, laid out (fill_from_stacks) */
	size_t nsamp;
	size_t *idx;                  /* samp indices grouped by thread (counting sort, order kept) */
	struct fx_thread *threads;
	size_t nr_threads;
	uint64_t t0;                  /* the profile's zero, ns */
	/* shared tables */
	struct pfc_intern strs;       /* the string array */
	uint32_t str_base;
	struct pfc_intern funcs_key;  /* func key: (name string, resource) -> func */
	uint32_t func_base;
	uint32_t *func_name, *func_res;
	struct pfc_intern syms_key;   /* native symbol key: (lib, address) */
	uint32_t sym_base;
	uint32_t *sym_lib, *sym_name;
	uint64_t *sym_addr;
	size_t cap_funcs, cap_syms;
	uint32_t *fmap;               /* session frame id -> frame index + 1 */
	uint32_t unknown_frame;       /* frame_unknown's + 1 */
	uint32_t *fr_func, *fr_cat, *fr_depth, *fr_sym;  /* fr_sym: native symbol + 1, 0: null */
	int64_t *fr_addr;
	size_t nr_frames;
	uint32_t *st_frame;           /* stack table: frame, prefix + 1 (0: a root) */
	uint32_t *st_prefix;
	size_t nr_stacks, cap_stacks;
	uint32_t *st_hash;            /* open addressing: stack index + 1 */
	size_t st_hcap;
	uint32_t *stack_of;           /* session stack id -> stack index + 1 */
	int32_t *lib_of_dso;          /* dso id -> lib index + 1, 0: not yet, -1: none */
	int32_t *res_of_dso;          /* dso id -> resource index + 1 */
	const struct pfc_dso **libs;  /* lib index -> dso */
	size_t nr_libs, cap_libs;
	uint32_t *res_lib;            /* resource -> lib + 1, 0: none */
	uint32_t *res_name;           /* resource -> its name in the string array */
	size_t nr_res, cap_res;
	uint8_t *dotnet_pid;          /* per thread: its process runs .NET (a libcoreclr.so frame) */
	struct fx_mark *mk;           /* every marker, by thread then time */
	size_t nr_mk, cap_mk;
	size_t nr_runtime_mk;         /* of them, the runtime's: their names and schemas are written */
	struct pfc_sb tmp, esc;
	int oom;
};

/* room for need elements in the array at *p of *cap: util/grow.h's doubling, as 0 or -1 */
static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	return need && !pfc_grow_at(p, cap, need - 1, size, 256) ? -1 : 0;
}

static uint32_t str_id(struct fx_ctx *c, const char *s, size_t n)
{
	uint32_t id = pfc_intern(&c->strs, s, n);

	if (id == UINT32_MAX) {
		c->oom = 1;
		return 0;
	}
	return id - c->str_base;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}

static int is_runtime_lib(const char *name)
{
	const char *b = base_name(name);
	return !strncmp(b, "libcoreclr.so", 13) || !strncmp(b, "libclrjit.so", 12);
}

static int is_jit_dso(const struct pfc_dso *d)
{
	return pfc_dso_is_jit_region((int)d->kind) || d->kind == PFC_DSO_JITCODE || d->kind == PFC_DSO_JITMARK ||
	       (d->kind == PFC_DSO_FILE && d->jitted);
}

static int frame_category(const struct fx_ctx *c, const struct pfc_frame *f, int dotnet)
{
	const struct pfc_dso *d = f->dso;

	if (!d)
		return f->kernel ? CAT_KERNEL : CAT_OTHER;
	if (d->kind == PFC_DSO_KERNEL || d->kind == PFC_DSO_KSYM || f->kernel)
		return CAT_KERNEL;
	if (d->kind == PFC_DSO_LABEL)
		return CAT_OFFCPU;
	if (is_jit_dso(d))
		return dotnet ? CAT_DOTNET_JIT : CAT_JIT;
	if (d->kind == PFC_DSO_PE)
		return CAT_R2R;
	if (d->kind == PFC_DSO_FILE && is_runtime_lib(d->name))
		return CAT_RUNTIME;
	if (d->kind == PFC_DSO_FILE || d->kind == PFC_DSO_VDSO)
		return CAT_NATIVE;
	(void)c;
	return CAT_OTHER;
}

/* A DSO whose code has a file (or is the kernel's) is a library: its frames' addresses are
 * relative to it, and it has a build-id when the recording gave one. */
static int dso_is_lib(const struct pfc_dso *d)
{
	return (d->kind == PFC_DSO_FILE && !d->jitted) || d->kind == PFC_DSO_PE || d->kind == PFC_DSO_KERNEL ||
	       d->kind == PFC_DSO_VDSO;
}

static int32_t lib_of(struct fx_ctx *c, const struct pfc_dso *d)
{
	if (c->lib_of_dso[d->id])
		return c->lib_of_dso[d->id];
	if (!dso_is_lib(d)) {
		c->lib_of_dso[d->id] = -1;
		return -1;
	}
	if (grow((void **)&c->libs, &c->cap_libs, c->nr_libs + 1, sizeof(*c->libs)) < 0) {
		c->oom = 1;
		return -1;
	}
	c->libs[c->nr_libs++] = d;
	c->lib_of_dso[d->id] = (int32_t)c->nr_libs;
	return c->lib_of_dso[d->id];
}

/* The resource of a DSO: a library's, or one without a library for JIT code, so that the
 * call tree's sidebar still says where a function came from.  -1: none. */
static int32_t res_of(struct fx_ctx *c, const struct pfc_dso *d)
{
	int32_t lib;
	size_t cap;

	if (!d || d->kind == PFC_DSO_OTHER || d->kind == PFC_DSO_LABEL || !strcmp(d->name, "[unknown]"))
		return -1;
	if (c->res_of_dso[d->id])
		return c->res_of_dso[d->id] - 1;
	lib = lib_of(c, d);
	cap = c->cap_res;
	if (grow((void **)&c->res_lib, &cap, c->nr_res + 1, sizeof(*c->res_lib)) < 0) {
		c->oom = 1;
		return -1;
	}
	cap = c->cap_res;
	if (grow((void **)&c->res_name, &cap, c->nr_res + 1, sizeof(*c->res_name)) < 0) {
		c->oom = 1;
		return -1;
	}
	c->cap_res = cap;
	c->res_name[c->nr_res] = str_id(c, base_name(d->name), strlen(base_name(d->name)));
	c->res_lib[c->nr_res] = lib > 0 ? (uint32_t)lib : 0;
	c->res_of_dso[d->id] = (int32_t)++c->nr_res;
	return (int32_t)c->nr_res - 1;
}

/* The function of (name, key): res, the resource it is shown with, is the first one's. */
static uint32_t func_of(struct fx_ctx *c, uint32_t name, int32_t key_res, int32_t res)
{
	uint32_t key[2] = { name, (uint32_t)key_res }, id;
	size_t n;

	id = pfc_intern(&c->funcs_key, (const char *)key, sizeof(key));
	if (id == UINT32_MAX) {
		c->oom = 1;
		return 0;
	}
	id -= c->func_base;
	n = c->funcs_key.nr - c->func_base;
	if (id + 1 == n) {
		size_t cap = c->cap_funcs, cap2 = c->cap_funcs;
		if (grow((void **)&c->func_name, &cap, n, sizeof(uint32_t)) < 0 ||
		    grow((void **)&c->func_res, &cap2, n, sizeof(uint32_t)) < 0) {
			c->oom = 1;
			return 0;
		}
		c->cap_funcs = cap;
		c->func_name[id] = name;
		c->func_res[id] = (uint32_t)res;
	}
	return id;
}

static uint32_t sym_of(struct fx_ctx *c, uint32_t lib, uint64_t addr, uint32_t name)
{
	struct { uint32_t lib, pad; uint64_t addr; } key = { lib, 0, addr };
	uint32_t id;
	size_t n;

	id = pfc_intern(&c->syms_key, (const char *)&key, sizeof(key));
	if (id == UINT32_MAX) {
		c->oom = 1;
		return 0;
	}
	id -= c->sym_base;
	n = c->syms_key.nr - c->sym_base;
	if (id + 1 == n) {
		size_t cap = c->cap_syms, cap2 = c->cap_syms, cap3 = c->cap_syms;
		if (grow((void **)&c->sym_lib, &cap, n, sizeof(uint32_t)) < 0 ||
		    grow((void **)&c->sym_name, &cap2, n, sizeof(uint32_t)) < 0 ||
		    grow((void **)&c->sym_addr, &cap3, n, sizeof(uint64_t)) < 0) {
			c->oom = 1;
			return 0;
		}
		c->cap_syms = cap;
		c->sym_lib[id] = lib;
		c->sym_name[id] = name;
		c->sym_addr[id] = addr;
	}
	return id;
}

/* The frame of a session frame; depth is its inline depth (0: the function of the address). */
static uint32_t frame_of(struct fx_ctx *c, uint32_t fid, uint32_t depth, int dotnet)
{
	const struct pfc_frame *f = &c->s->stacks.frames[fid];
	uint32_t i = (uint32_t)c->nr_frames, name;
	int32_t lib = -1, res;

	if (c->fmap[fid])
		return c->fmap[fid] - 1;
	pfc_sb_reset(&c->tmp);
	pfc_frame_display_name(c->s, f, &c->tmp);
	if (c->tmp.oom) {
		c->oom = 1;
		return 0;
	}
	name = str_id(c, c->tmp.buf, c->tmp.len);
	res = res_of(c, f->dso);
	if (f->dso && res >= 0)
		lib = lib_of(c, f->dso);
	/* a function is its name in its library; JIT code has none, and one method's code can be
	 * named by a perf map and by a jitdump, or sit in two regions: one function by its name */
	c->fr_func[i] = func_of(c, name, lib > 0 ? res : -1, res);
	c->fr_cat[i] = (uint32_t)frame_category(c, f, dotnet);
	c->fr_depth[i] = depth;
	/* addresses relative to a library; the kernel's are not (they would not fit a double) */
	c->fr_addr[i] = lib > 0 && f->dso->kind != PFC_DSO_KERNEL && f->addr < (1ULL << 53) ? (int64_t)f->addr : -1;
	c->fr_sym[i] = 0;
	if (c->fr_addr[i] >= 0 && f->resolved && !f->inl && f->symoff <= f->addr)
		c->fr_sym[i] = sym_of(c, (uint32_t)lib - 1, f->addr - f->symoff, name) + 1;
	c->nr_frames++;
	c->fmap[fid] = i + 1;
	return i;
}

/* The frame of a sample without frames (the profiler needs one for every sample). */
static uint32_t frame_unknown(struct fx_ctx *c)
{
	uint32_t i;

	if (c->unknown_frame)
		return c->unknown_frame - 1;
	i = (uint32_t)c->nr_frames++;
	c->fr_func[i] = func_of(c, str_id(c, "[unknown]", 9), -1, -1);
	c->fr_cat[i] = CAT_OTHER;
	c->fr_depth[i] = 0;
	c->fr_sym[i] = 0;
	c->fr_addr[i] = -1;
	c->unknown_frame = i + 1;
	return i;
}

static uint64_t st_hash_of(uint32_t frame, uint32_t prefix)
{
	return pfc_hashtab_mix(pfc_hashtab_mix(0, frame), prefix);
}

static int st_used(const void *slot, void *ctx)
{
	(void)ctx;
	return *(const uint32_t *)slot != 0;
}

static uint64_t st_rehash(const void *slot, void *ctx)
{
	const struct fx_ctx *c = ctx;
	uint32_t i = *(const uint32_t *)slot - 1;
	return st_hash_of(c->st_frame[i], c->st_prefix[i]);
}

static const struct pfc_hashtab_ops st_ops = {
	.slot_size = sizeof(uint32_t), .first_cap = 1024, .used = st_used, .hash = st_rehash,
};

/* The stack node (frame, prefix + 1) of the shared stack table, made when new. */
static uint32_t stack_node(struct fx_ctx *c, uint32_t frame, uint32_t prefix1)
{
	size_t i;

	if (pfc_hashtab_full(c->nr_stacks, c->st_hcap) && pfc_hashtab_grow(&c->st_hash, &c->st_hcap, &st_ops, c) < 0) {
		c->oom = 1;
		return 0;
	}
	for (i = pfc_hashtab_start(st_hash_of(frame, prefix1), c->st_hcap); c->st_hash[i];
	     i = pfc_hashtab_next(i, c->st_hcap)) {
		uint32_t k = c->st_hash[i] - 1;
		if (c->st_frame[k] == frame && c->st_prefix[k] == prefix1)
			return k;
	}
	{
		size_t cap = c->cap_stacks, cap2 = c->cap_stacks;
		if (grow((void **)&c->st_frame, &cap, c->nr_stacks + 1, sizeof(uint32_t)) < 0 ||
		    grow((void **)&c->st_prefix, &cap2, c->nr_stacks + 1, sizeof(uint32_t)) < 0) {
			c->oom = 1;
			return 0;
		}
		c->cap_stacks = cap;
	}
	c->st_frame[c->nr_stacks] = frame;
	c->st_prefix[c->nr_stacks] = prefix1;
	c->st_hash[i] = (uint32_t)++c->nr_stacks;
	return (uint32_t)c->nr_stacks - 1;
}

/* The stack table index of a session stack, root first into the shared table. */
static uint32_t stack_of(struct fx_ctx *c, uint32_t sid, int dotnet)
{
	const struct pfc_stacks *S = &c->s->stacks;
	const struct pfc_stack *st = &S->stacks[sid];
	uint32_t prefix1 = 0, k, depth = 0;
	const struct pfc_frame *prev = NULL;

	if (c->stack_of[sid])
		return c->stack_of[sid] - 1;
	for (k = st->nr; k-- > 0;) {
		uint32_t fid = S->frame_ids[st->first + k];
		const struct pfc_frame *f = &S->frames[fid];
		if (c->s->opts->fold_runs && pfc_stacks_run_tail(S, S->frame_ids + st->first, k))
			continue;	/* a run of unnamed frames of one DSO is one */
		/* an inlined function's frame follows (towards the leaf) the frame of the function
		 * it was inlined into, at the same address: one deeper */
		depth = f->inl && prev && prev->dso == f->dso && prev->addr == f->addr ? depth + 1 : 0;
		prefix1 = stack_node(c, frame_of(c, fid, depth, dotnet), prefix1) + 1;
		prev = f;
		if (c->oom)
			return 0;
	}
	if (!prefix1)	/* a sample without frames: the profiler needs a frame, "[unknown]" */
		return 0;
	c->stack_of[sid] = prefix1;
	return prefix1 - 1;
}

/* ---- picking the event, the threads and their samples ---- */

static int cmp_thread(const void *a, const void *b)
{
	const struct fx_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static struct fx_thread *find_thread(struct fx_ctx *c, int32_t pid, int32_t tid)
{
	struct fx_thread key = { .pid = pid, .tid = tid };
	return bsearch(&key, c->threads, c->nr_threads, sizeof(key), cmp_thread);
}

static int pick_event(struct fx_ctx *c, struct pfc_error *err)
{
	struct pfc_session *s = c->s;
	size_t i;

	c->evsel = SIZE_MAX;
	if (s->offcpu) {
		c->use_period = c->time_weights = 1;
		c->evsel = SIZE_MAX - 1;
		return 0;
	}
	if (c->o->event) {
		for (i = 0; i < s->rd.nr_evsels && c->evsel == SIZE_MAX; i++)
			if (!strcmp(pfc_session_evsel_name(s, i), c->o->event))
				c->evsel = i;
		if (c->evsel == SIZE_MAX)
			return PFC_FAIL_NOOFF(err, USAGE, "no event '%s' in the recording", c->o->event);
	} else {
		uint64_t best = UINT64_MAX;
		for (i = 0; i < s->rd.nr_evsels; i++)
			if (pfc_session_evsel_first(s, i) < best) {
				best = pfc_session_evsel_first(s, i);
				c->evsel = i;
			}
		if (c->evsel == SIZE_MAX)
			return 0;
	}
	{
		const struct pfc_evsel *ev = s->rd.evsels[c->evsel];
		c->use_period = ev->attr.type != PERF_TYPE_TRACEPOINT;
		/* a clock's period is the time the sample stands for: the call tree shows it in ms */
		c->time_weights = c->use_period && ev->attr.type == PERF_TYPE_SOFTWARE &&
				  (ev->attr.config == PERF_COUNT_SW_CPU_CLOCK || ev->attr.config == PERF_COUNT_SW_TASK_CLOCK);
	}
	return 0;
}

static int stack_selected(const struct fx_ctx *c, const struct pfc_stack *st)
{
	if (c->evsel == SIZE_MAX)
		return 0;
	return c->s->offcpu ? pfc_offcpu_in_profile(c->s->offcpu, st->evsel) : st->evsel == c->evsel;
}

/* Samples of a session stack: counted from the times (the stacks' counts also hold samples
 * of other events), or one per stack of a time profile. */
static int count_samples(struct fx_ctx *c)
{
	size_t i;

	if (!(c->nr_of = calloc(c->s->stacks.nr_stacks + 1, sizeof(*c->nr_of))))
		return -1;
	if (!c->stream) {
		for (i = 0; i < c->s->stacks.nr_stacks; i++)
			c->nr_of[i] = c->s->stacks.stacks[i].period > 0;
		return 0;
	}
	for (i = 0; i < c->s->times.n; i++)
		if (pfc_times_at(&c->s->times, i)->stack < c->s->stacks.nr_stacks)
			c->nr_of[pfc_times_at(&c->s->times, i)->stack]++;
	return 0;
}

static uint64_t samples_of(const struct fx_ctx *c, uint32_t sid)
{
	return c->nr_of[sid];
}

static int cmp_fx_mark(const void *a, const void *b)
{
	const struct fx_mark *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int add_mark(struct fx_ctx *c, uint32_t src, uint32_t file, size_t idx, int32_t pid, int32_t tid,
		    uint64_t start, uint64_t end)
{
	struct fx_mark *m;

	if (grow((void **)&c->mk, &c->cap_mk, c->nr_mk + 1, sizeof(*c->mk)) < 0 || c->nr_mk >= UINT32_MAX)
		return -1;
	m = &c->mk[c->nr_mk];
	m->start = start;
	m->end = end;
	m->pid = pid;
	m->tid = tid;
	m->src = src;
	m->file = file;
	m->idx = (uint32_t)idx;
	m->seq = (uint32_t)c->nr_mk++;
	c->nr_runtime_mk += src != MK_PERF;
	return 0;
}

/* the tid of the recording a runtime event of stream i on OS thread tid is drawn on: its own
 * thread when the recording knows it, else its process's main thread */
static int32_t event_tid(struct fx_ctx *c, size_t i, uint64_t tid)
{
	const struct pfc_thread *th = pfc_evsample_thread(c->s, i, tid);

	return th ? th->tid : c->s->evs.pids[i];
}

/* Every marker, by thread and time: perf's marks, then, when the samples are on the runtime's
 * clock (s->evs.marking), each stream's GCs on its process's main thread (a pause stops all of
 * its threads; the profiler draws a thread's markers on its own track, and the main thread's
 * is the one a reader looks at first), its exceptions on the threads that threw them and its
 * JIT compilations on the threads that compiled.  Allocations are left out: a tick every
 * 100 KB allocated is thousands of markers a second, which --alloc draws better as stacks. */
static int gather_marks(struct fx_ctx *c)
{
	struct pfc_session *s = c->s;
	size_t i, j;

	for (i = 0; i < s->marks.n; i++) {
		const struct pfc_mark *m = &s->marks.v[i];
		if (add_mark(c, MK_PERF, 0, i, m->pid, m->tid, m->has_time ? m->time : 0, 0) < 0)
			return -1;
	}
	/* a time profile (--off-cpu, --thread-time) lays its stacks out with no times to meet them */
	for (i = 0; s->evs.marking && c->stream && i < s->evs.events.n; i++) {
		const struct pfc_events_file *f = &s->evs.events.v[i];
		int32_t pid = s->evs.pids[i];
		/* a process the recording does not have is skipped: evsample.c warned about it */
		if (!pfc_session_thread_comm(s, pid, pid))
			continue;
		for (j = 0; j < f->nr_gcs; j++)
			if (add_mark(c, MK_GC, (uint32_t)i, j, pid, pid, f->gcs[j].begin, f->gcs[j].end) < 0)
				return -1;
		for (j = 0; j < f->nr_throws; j++)
			if (add_mark(c, MK_EXC, (uint32_t)i, j, pid, event_tid(c, i, f->throws[j].tid), f->throws[j].ts, 0) < 0)
				return -1;
		for (j = 0; j < f->nr_jits; j++)
			if (add_mark(c, MK_JIT, (uint32_t)i, j, pid, event_tid(c, i, f->jits[j].tid), f->jits[j].begin,
				     f->jits[j].end) < 0)
				return -1;
	}
	if (c->nr_mk)
		qsort(c->mk, c->nr_mk, sizeof(*c->mk), cmp_fx_mark);
	return 0;
}

/* The threads: every (pid, tid) with a sample of the event, or a marker. */
static int make_threads(struct fx_ctx *c)
{
	struct pfc_session *s = c->s;
	size_t i, n = 0, cap = 0;
	struct fx_thread *t = NULL;

	for (i = 0; i < s->stacks.nr_stacks + c->nr_mk; i++) {
		int32_t pid, tid;
		if (i < s->stacks.nr_stacks) {
			const struct pfc_stack *st = &s->stacks.stacks[i];
			if (!stack_selected(c, st) || !samples_of(c, (uint32_t)i))
				continue;
			pid = st->pid;
			tid = st->tid;
		} else {
			pid = c->mk[i - s->stacks.nr_stacks].pid;
			tid = c->mk[i - s->stacks.nr_stacks].tid;
		}
		if (n && t[n - 1].pid == pid && t[n - 1].tid == tid)
			continue;
		if (grow((void **)&t, &cap, n + 1, sizeof(*t)) < 0)
			goto oom;
		memset(&t[n], 0, sizeof(*t));
		t[n].pid = pid;
		t[n].tid = tid;
		t[n].first = UINT64_MAX;
		n++;
	}
	if (n)
		qsort(t, n, sizeof(*t), cmp_thread);
	for (i = 0, c->nr_threads = 0; i < n; i++)
		if (!c->nr_threads || cmp_thread(&t[c->nr_threads - 1], &t[i]))
			t[c->nr_threads++] = t[i];
	c->threads = t;
	if (!(c->thread_of = calloc(s->stacks.nr_stacks + 1, sizeof(*c->thread_of))) ||
	    !(c->dotnet_pid = calloc(c->nr_threads + 1, 1)))
		goto oom;
	for (i = 0; i < s->stacks.nr_stacks; i++) {
		const struct pfc_stack *st = &s->stacks.stacks[i];
		struct fx_thread *th;
		uint64_t k;
		if (!stack_selected(c, st) || !(k = samples_of(c, (uint32_t)i)))
			continue;
		th = find_thread(c, st->pid, st->tid);
		c->thread_of[i] = (uint32_t)(th - c->threads) + 1;
		th->nr += k;
		if (!th->comm)	/* the name its samples carry, when the recording names it nowhere else */
			th->comm = st->comm + 1;
	}
	for (i = 0, n = 0; i < c->nr_threads; i++) {
		c->threads[i].start = n;
		n += c->threads[i].nr;
	}
	for (i = 0; i < c->nr_mk; i++) {	/* both by (pid, tid): a thread's markers are one run */
		struct fx_thread *th = find_thread(c, c->mk[i].pid, c->mk[i].tid);
		if (!th->mk_nr)
			th->mk_start = i;
		th->mk_nr++;
	}
	if (!(c->idx = malloc((n + 1) * sizeof(*c->idx))))
		goto oom;
	return 0;
oom:
	if (!c->threads)
		free(t);
	c->oom = 1;
	return -1;
}

/* Marks each thread whose stacks hold a libcoreclr.so frame, then shares it with the others of its process. */
static void find_dotnet(struct fx_ctx *c)
{
	const struct pfc_stacks *S = &c->s->stacks;
	size_t i, j;

	for (i = 0; i < S->nr_stacks; i++) {
		const struct pfc_stack *st = &S->stacks[i];
		if (!c->thread_of[i] || c->dotnet_pid[c->thread_of[i] - 1])
			continue;
		for (j = 0; j < st->nr; j++) {
			const struct pfc_dso *d = S->frames[S->frame_ids[st->first + j]].dso;
			if (d && (d->kind == PFC_DSO_PE || (d->kind == PFC_DSO_FILE && is_runtime_lib(d->name)))) {
				c->dotnet_pid[c->thread_of[i] - 1] = 1;
				break;
			}
		}
	}
	/* threads are sorted by pid: each process's run of threads at once */
	for (i = 0; i < c->nr_threads; i = j) {
		uint8_t any = 0;
		size_t k;
		for (j = i; j < c->nr_threads && c->threads[j].pid == c->threads[i].pid; j++)
			any |= c->dotnet_pid[j];
		for (k = i; k < j; k++)
			c->dotnet_pid[k] = any ? 1 : 0;
	}
}

static inline const struct pfc_stime *sample(const struct fx_ctx *c, size_t i)
{
	return c->times ? pfc_times_at(c->times, i) : &c->own[i];
}

/* Each thread's samples, in time order, and the profile's zero. */
static void group_samples(struct fx_ctx *c)
{
	size_t i;

	for (i = 0; i < c->nsamp; i++) {
		const struct pfc_stime *r = sample(c, i);
		struct fx_thread *th;
		if (r->stack >= c->s->stacks.nr_stacks || !c->thread_of[r->stack])
			continue;
		th = &c->threads[c->thread_of[r->stack] - 1];
		if (th->fill >= th->nr)
			continue;
		c->idx[th->start + th->fill++] = i;
		if (r->has_time) {
			c->have_times = 1;
			if (r->time < c->t0)
				c->t0 = r->time;
		}
	}
}

/* A time profile has no sample times: each thread's stacks are laid one after the other from
 * its start, each as long as its weight, as a tracing profile lays out its self times. */
static int fill_from_stacks(struct fx_ctx *c)
{
	const struct pfc_stacks *S = &c->s->stacks;
	size_t i;

	if (!(c->own = malloc((S->nr_stacks + 1) * sizeof(*c->own))))
		return -1;
	for (i = 0; i < S->nr_stacks; i++) {
		struct pfc_stime *r = &c->own[c->nsamp];
		struct fx_thread *th;
		if (!c->thread_of[i])
			continue;
		th = &c->threads[c->thread_of[i] - 1];
		r->stack = (uint32_t)i;
		r->period = S->stacks[i].period;
		r->time = th->lay;
		r->has_time = 1;
		th->lay += r->period;
		c->nsamp++;
	}
	return 0;
}

/* ---- output ---- */

/* The output, buffered here: a profile is millions of short numbers, and stdio's locking and
 * calls per number were a third of the conversion's time. */
struct fx_w {
	FILE *f;
	size_t n;
	char b[1 << 16];
};

static void w_flush(struct fx_w *w)
{
	if (w->n)
		fwrite(w->b, 1, w->n, w->f);
	w->n = 0;
}

static char *w_room(struct fx_w *w, size_t need)
{
	if (w->n + need > sizeof(w->b))
		w_flush(w);
	return w->b + w->n;
}

static void w_write(const void *p, size_t n, struct fx_w *w)
{
	if (n > sizeof(w->b) / 2) {
		w_flush(w);
		fwrite(p, 1, n, w->f);
		return;
	}
	memcpy(w_room(w, n), p, n);
	w->n += n;
}

static void w_puts(const char *s, struct fx_w *w)
{
	w_write(s, strlen(s), w);
}

static void w_putc(int c, struct fx_w *w)
{
	*w_room(w, 1) = (char)c;
	w->n++;
}

static void w_printf(struct fx_w *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void w_printf(struct fx_w *w, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		w_write(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1, w);
}

static void put_u64(struct fx_w *out, uint64_t v)
{
	char *p = w_room(out, 24);

	out->n += (size_t)(pfc_put_dec(p, v, 1) - p);
}

static void put_i64(struct fx_w *out, int64_t v)
{
	if (v < 0) {
		w_putc('-', out);
		put_u64(out, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(out, (uint64_t)v);
	}
}

/* ns as ms, exactly: the decimals that are not zero. */
static void put_ms(struct fx_w *out, uint64_t ns)
{
	char *buf = w_room(out, 32), *p = pfc_put_dec(buf, ns / 1000000, 1);
	uint64_t frac = ns % 1000000;

	if (frac) {
		int i;
		*p++ = '.';
		p = pfc_put_dec(p, frac, 6);
		for (i = 0; i < 5 && p[-1] == '0'; i++)
			p--;
	}
	out->n += (size_t)(p - buf);
}

/* put_ms for a column whose values repeat (a fixed sampling period, its time deltas): the
 * last value's text is copied. */
struct ms_memo {
	uint64_t ns;
	size_t len;
	char text[32];
};

static void put_ms_memo(struct fx_w *out, struct ms_memo *m, uint64_t ns)
{
	if (ns != m->ns) {
		size_t n0 = out->n;
		char *p = w_room(out, 32);
		put_ms(out, ns);
		if (out->n < n0 || p != out->b + n0)	/* flushed in between: not remembered */
			return;
		m->ns = ns;
		m->len = out->n - n0;
		memcpy(m->text, p, m->len);
		return;
	}
	memcpy(w_room(out, m->len), m->text, m->len);
	out->n += m->len;
}

static void put_str(struct fx_ctx *c, struct fx_w *out, const char *s, size_t n)
{
	pfc_sb_reset(&c->esc);
	pfc_json_string(&c->esc, s, n);
	w_write(c->esc.buf, c->esc.len, out);
}

static void put_cstr(struct fx_ctx *c, struct fx_w *out, const char *s)
{
	put_str(c, out, s, strlen(s));
}

/* A perf header string: u32 length, then that many bytes, NUL-padded. */
static int feat_string(const struct pfc_session *s, int feat, size_t skip, char *out, size_t outsz)
{
	const struct pfc_blob *b = &s->rd.feat[feat];
	struct pfc_cursor cur;
	uint32_t n;
	const uint8_t *p;
	size_t i, len;

	if (!pfc_feat_has(&s->rd, feat) || !b->data)
		return -1;
	pfc_cur_init(&cur, b->data, b->size, s->rd.swap);
	for (i = 0; i <= skip; i++) {
		if (pfc_cur_left(&cur) < 4)
			return -1;
		n = pfc_cur_u32(&cur);
		if (!(p = pfc_cur_bytes(&cur, n)))
			return -1;
	}
	len = strnlen((const char *)p, n);
	if (len >= outsz)
		len = outsz - 1;
	memcpy(out, p, len);
	out[len] = 0;
	return 0;
}

/* The recorded command line (HEADER_CMDLINE): u32 count, then that many strings. */
static void put_cmdline(struct fx_ctx *c, struct fx_w *out)
{
	const struct pfc_blob *b = &c->s->rd.feat[PFC_FEAT_CMDLINE];
	struct pfc_cursor cur;
	uint32_t nr, i, n;
	const uint8_t *p;

	pfc_sb_reset(&c->tmp);
	if (pfc_feat_has(&c->s->rd, PFC_FEAT_CMDLINE) && b->data) {
		pfc_cur_init(&cur, b->data, b->size, c->s->rd.swap);
		nr = pfc_cur_left(&cur) >= 4 ? pfc_cur_u32(&cur) : 0;
		for (i = 0; i < nr && pfc_cur_left(&cur) >= 4; i++) {
			n = pfc_cur_u32(&cur);
			if (!(p = pfc_cur_bytes(&cur, n)))
				break;
			if (i)
				pfc_sb_addc(&c->tmp, ' ');
			pfc_sb_add(&c->tmp, (const char *)p, strnlen((const char *)p, n));
		}
	}
	put_str(c, out, c->tmp.buf ? c->tmp.buf : "", c->tmp.len);
}

/* The wall clock of t0 in ms since the epoch: CLOCK_DATA puts the sample clock on it; without
 * it, the header's date (the file's time, as perf report says "captured on"). */
static void put_start_time(struct fx_ctx *c, struct fx_w *out)
{
	const struct pfc_blob *cd = &c->s->rd.feat[PFC_FEAT_CLOCK_DATA];
	struct pfc_cursor cur;

	if (c->have_times && pfc_feat_has(&c->s->rd, PFC_FEAT_CLOCK_DATA) && cd->data) {
		uint64_t tod, clk;
		pfc_cur_init(&cur, cd->data, cd->size, c->s->rd.swap);
		if (pfc_cur_left(&cur) >= 24 && pfc_cur_u32(&cur) == 1) {
			(void)pfc_cur_u32(&cur);	/* clockid: the one sample times are on */
			tod = pfc_cur_u64(&cur);
			clk = pfc_cur_u64(&cur);
			if (c->t0 >= clk || clk - c->t0 <= tod) {
				put_ms(out, c->t0 >= clk ? tod + (c->t0 - clk) : tod - (clk - c->t0));
				return;
			}
		}
	}
	/* stdin's time is the pipe's, not the recording's: none then, so the bytes stay the same */
	if (c->s->rd.have_mtime && c->s->rd.mtime > 0 && strcmp(c->s->recording_name, "-"))
		put_u64(out, (uint64_t)c->s->rd.mtime * 1000);
	else
		w_putc('0', out);
}

static void put_meta(struct fx_ctx *c, struct fx_w *out)
{
	struct pfc_session *s = c->s;
	char buf[256];
	size_t i;
	uint64_t interval_ns = 1000000;

	if (c->evsel < s->rd.nr_evsels) {
		const struct pfc_evsel *ev = s->rd.evsels[c->evsel];
		if (ev->attr.freq && ev->attr.sample_freq)
			interval_ns = 1000000000ULL / ev->attr.sample_freq;
		else if (c->time_weights && ev->attr.sample_period)
			interval_ns = ev->attr.sample_period;
	}
	if (c->uniform && c->time_weights)	/* each sample stands for this long */
		interval_ns = c->uniform;
	w_puts("{\"meta\":{\"version\":" , out);
	put_u64(out, FX_GECKO_VERSION);
	w_puts(",\"preprocessedProfileVersion\":", out);
	put_u64(out, FX_VERSION);
	w_puts(",\"product\":\"perfconv\",\"platform\":\"Linux\",\"stackwalk\":1,\"symbolicated\":true,\"processType\":0", out);
	w_puts(",\"interval\":", out);
	put_ms(out, interval_ns ? interval_ns : 1);
	w_puts(",\"startTime\":", out);
	put_start_time(c, out);
	if (feat_string(s, PFC_FEAT_CPUDESC, 0, buf, sizeof(buf)) == 0) {
		w_puts(",\"CPUName\":", out);
		put_cstr(c, out, buf);
	}
	if (feat_string(s, PFC_FEAT_ARCH, 0, buf, sizeof(buf)) == 0) {
		w_puts(",\"abi\":", out);
		put_cstr(c, out, buf);
	}
	if (feat_string(s, PFC_FEAT_OSRELEASE, 0, buf, sizeof(buf)) == 0) {
		w_puts(",\"oscpu\":", out);
		pfc_sb_reset(&c->tmp);
		pfc_sb_addf(&c->tmp, "Linux %s", buf);
		put_str(c, out, c->tmp.buf, c->tmp.len);
	}
	if (pfc_feat_has(&s->rd, PFC_FEAT_NRCPUS) && s->rd.feat[PFC_FEAT_NRCPUS].size >= 8) {
		struct pfc_cursor cur;
		pfc_cur_init(&cur, s->rd.feat[PFC_FEAT_NRCPUS].data, 8, s->rd.swap);
		(void)pfc_cur_u32(&cur);
		w_puts(",\"logicalCPUs\":", out);
		put_u64(out, pfc_cur_u32(&cur));
	}
	w_puts(",\"arguments\":", out);
	put_cmdline(c, out);
	w_puts(",\"importedFrom\":", out);
	pfc_sb_reset(&c->tmp);
	pfc_sb_adds(&c->tmp, !strcmp(s->recording_name, "-") ? "stdin" : base_name(s->recording_name));
	put_str(c, out, c->tmp.buf, c->tmp.len);
	if (c->evsel < s->rd.nr_evsels || s->offcpu) {
		w_puts(",\"extra\":[{\"label\":\"Recording\",\"entries\":[{\"label\":\"Event\",\"format\":\"string\",\"value\":", out);
		if (s->offcpu)
			put_cstr(c, out, pfc_offcpu_thread_time(s->offcpu) ? "thread time (ns)" : "off-CPU time (ns)");
		else
			put_cstr(c, out, pfc_session_evsel_name(s, c->evsel));
		if (c->uniform) {
			w_puts("},{\"label\":", out);
			put_cstr(c, out, c->time_weights ? "Each sample's period (ns)" : "Each sample's period");
			w_puts(",\"format\":\"integer\",\"value\":", out);
			put_u64(out, c->uniform);
		}
		w_puts("}]}]", out);
	}
	w_puts(",\"categories\":[", out);
	for (i = 0; i < CAT__MAX; i++) {
		w_puts(i ? ",{\"name\":" : "{\"name\":", out);
		put_cstr(c, out, cat_names[i]);
		w_printf(out, ",\"color\":\"%s\",\"subcategories\":[\"Other\"]}", cat_colors[i]);
	}
	w_puts("],\"markerSchema\":[", out);
	/* one schema per kind of perf record kept as a mark; data.type names it */
	w_puts("{\"name\":\"PerfLost\",\"tooltipLabel\":\"{marker.name}: {marker.data.lost} events\","
	      "\"tableLabel\":\"{marker.data.lost} events of {marker.data.event}\","
	      "\"chartLabel\":\"{marker.data.lost}\",\"display\":[\"marker-chart\",\"marker-table\",\"timeline-overview\"],"
	      "\"description\":\"perf's ring buffer was full: events were lost (PERF_RECORD_LOST, or "
	      "PERF_RECORD_LOST_SAMPLES for samples the kernel dropped)\","
	      "\"fields\":[{\"key\":\"lost\",\"label\":\"Lost\",\"format\":\"integer\"},"
	      "{\"key\":\"event\",\"label\":\"Event\",\"format\":\"string\"}]},", out);
	w_puts("{\"name\":\"PerfThrottle\",\"tooltipLabel\":\"{marker.name} {marker.data.event}\","
	      "\"tableLabel\":\"{marker.name} {marker.data.event}\",\"display\":[\"marker-chart\",\"marker-table\","
	      "\"timeline-overview\"],\"description\":\"the kernel throttled sampling of an event that took too long "
	      "(PERF_RECORD_THROTTLE), or let it go on (PERF_RECORD_UNTHROTTLE)\","
	      "\"fields\":[{\"key\":\"event\",\"label\":\"Event\",\"format\":\"string\"}]}", out);
	/* the runtime's, only when it has markers: a profile without is the bytes it always was */
	if (c->nr_runtime_mk)
		w_puts(",{\"name\":\"DotNetGC\",\"tooltipLabel\":\"GC {marker.data.gc}: generation {marker.data.generation}, "
		      "{marker.data.reason}\",\"tableLabel\":\"GC {marker.data.gc}: generation {marker.data.generation}, "
		      "{marker.data.reason}, paused {marker.data.pause}\",\"chartLabel\":\"gen {marker.data.generation}\","
		      "\"display\":[\"marker-chart\",\"marker-table\",\"timeline-overview\"],"
		      "\"description\":\"the .NET runtime paused the process's threads for a garbage collection "
		      "(GCSuspendEEBegin to GCRestartEEEnd), with what its GCStart and GCHeapStats events said\","
		      "\"fields\":[{\"key\":\"gc\",\"label\":\"GC number\",\"format\":\"integer\"},"
		      "{\"key\":\"generation\",\"label\":\"Generation\",\"format\":\"integer\"},"
		      "{\"key\":\"reason\",\"label\":\"Reason\",\"format\":\"string\"},"
		      "{\"key\":\"pause\",\"label\":\"Pause\",\"format\":\"milliseconds\"},"
		      "{\"key\":\"gen0\",\"label\":\"Gen 0 after\",\"format\":\"bytes\"},"
		      "{\"key\":\"gen1\",\"label\":\"Gen 1 after\",\"format\":\"bytes\"},"
		      "{\"key\":\"gen2\",\"label\":\"Gen 2 after\",\"format\":\"bytes\"},"
		      "{\"key\":\"loh\",\"label\":\"LOH after\",\"format\":\"bytes\"},"
		      "{\"key\":\"poh\",\"label\":\"POH after\",\"format\":\"bytes\"}]},"
		      "{\"name\":\"DotNetException\",\"tooltipLabel\":\"{marker.data.exception}: {marker.data.message}\","
		      "\"tableLabel\":\"{marker.data.exception}: {marker.data.message}\",\"chartLabel\":\"{marker.data.exception}\","
		      "\"display\":[\"marker-chart\",\"marker-table\",\"timeline-overview\"],"
		      "\"description\":\"the .NET runtime's ExceptionThrown: an exception thrown on this thread\","
		      "\"fields\":[{\"key\":\"exception\",\"label\":\"Type\",\"format\":\"string\"},"
		      "{\"key\":\"message\",\"label\":\"Message\",\"format\":\"string\"}]},"
		      "{\"name\":\"DotNetJit\",\"tooltipLabel\":\"JIT {marker.data.method}\","
		      "\"tableLabel\":\"JIT {marker.data.method}\",\"chartLabel\":\"{marker.data.method}\","
		      "\"display\":[\"marker-chart\",\"marker-table\",\"timeline-overview\"],"
		      "\"description\":\"the .NET runtime compiled a method on this thread (MethodJittingStarted to "
		      "MethodLoadVerbose)\",\"fields\":[{\"key\":\"method\",\"label\":\"Method\",\"format\":\"string\"}]}", out);
	w_puts("]", out);
	w_puts(",\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\",\"threadCPUDelta\":\"ns\"}", out);
	w_puts("},\n", out);
}

/* A breakpad id: the build-id's first 16 bytes as a GUID (its first three fields little-endian),
 * and age 0, as the Firefox Profiler and dump_syms make it for ELF files. */
static void put_breakpad(struct fx_w *out, const struct pfc_dso *d)
{
	static const int order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
	static const char hex[] = "0123456789ABCDEF";
	uint8_t b[16] = { 0 };
	int i;

	memcpy(b, d->build_id, d->build_id_len < 16 ? (size_t)d->build_id_len : 16);
	w_putc('"', out);
	for (i = 0; i < 16; i++) {
		w_putc(hex[b[order[i]] >> 4], out);
		w_putc(hex[b[order[i]] & 15], out);
	}
	w_puts("0\"", out);
}

static void put_libs(struct fx_ctx *c, struct fx_w *out)
{
	static const char hex[] = "0123456789abcdef";
	char arch[64];
	size_t i;
	int j;

	if (feat_string(c->s, PFC_FEAT_ARCH, 0, arch, sizeof(arch)) < 0)
		strcpy(arch, "x86_64");
	w_puts("\"libs\":[", out);
	for (i = 0; i < c->nr_libs; i++) {
		const struct pfc_dso *d = c->libs[i];
		w_puts(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		put_cstr(c, out, base_name(d->name));
		w_puts(",\"path\":", out);
		put_cstr(c, out, d->name);
		w_puts(",\"debugName\":", out);
		put_cstr(c, out, base_name(d->name));
		w_puts(",\"debugPath\":", out);
		put_cstr(c, out, d->name);
		w_puts(",\"arch\":", out);
		put_cstr(c, out, arch);
		if (d->build_id_len > 0) {
			w_puts(",\"breakpadId\":", out);
			put_breakpad(out, d);
			w_puts(",\"codeId\":\"", out);
			for (j = 0; j < d->build_id_len && j < 20; j++) {
				w_putc(hex[d->build_id[j] >> 4], out);
				w_putc(hex[d->build_id[j] & 15], out);
			}
			w_puts("\"}", out);
		} else {
			w_puts(",\"breakpadId\":\"\",\"codeId\":null}", out);
		}
	}
	w_puts("],\n", out);
}

/* A time of the recording as the profiler's: ms from the profile's zero, which is its first
 * sample; a mark before it (a LOST record whose trailer the kernel wrote with time 0, a JIT
 * compilation before perf started) is drawn at the start */
static void put_mark_ms(const struct fx_ctx *c, struct fx_w *out, uint64_t t)
{
	put_ms(out, t > c->t0 ? t - c->t0 : 0);
}

/* a runtime marker's data, as its schema in put_meta lays it out */
static void put_runtime_data(struct fx_ctx *c, struct fx_w *out, const struct fx_mark *m)
{
	const struct pfc_events_file *f = &c->s->evs.events.v[m->file];

	if (m->src == MK_GC) {
		const struct pfc_events_gc *g = &f->gcs[m->idx];
		static const char *const keys[5] = { "gen0", "gen1", "gen2", "loh", "poh" };
		int k;
		w_puts("{\"type\":\"DotNetGC\"", out);
		if (g->ran) {
			const char *reason = pfc_runtime_gc_reason(g->reason);
			w_puts(",\"gc\":", out);
			put_u64(out, g->count);
			w_puts(",\"generation\":", out);
			put_u64(out, g->depth);
			w_puts(",\"reason\":", out);
			if (reason) {
				put_cstr(c, out, reason);
			} else {
				pfc_sb_reset(&c->tmp);
				pfc_sb_addf(&c->tmp, "reason %u", g->reason);
				put_str(c, out, c->tmp.buf, c->tmp.len);
			}
		}
		w_puts(",\"pause\":", out);
		put_ms(out, g->end - g->begin);
		for (k = 0; g->heap && k < 5; k++) {
			w_printf(out, ",\"%s\":", keys[k]);
			put_u64(out, g->gen_size[k]);
		}
		w_putc('}', out);
	} else if (m->src == MK_EXC) {
		const struct pfc_events_alloc *a = &f->throws[m->idx];
		w_puts("{\"type\":\"DotNetException\",\"exception\":", out);
		put_cstr(c, out, f->names + a->type);
		w_puts(",\"message\":", out);
		put_cstr(c, out, f->names + a->msg);
		w_putc('}', out);
	} else {
		w_puts("{\"type\":\"DotNetJit\",\"method\":", out);
		put_cstr(c, out, f->names + f->jits[m->idx].name);
		w_putc('}', out);
	}
}

/* A thread's markers, in time order. */
static void put_markers(struct fx_ctx *c, struct fx_w *out, const struct fx_thread *th, const uint32_t *kind_name,
			const uint32_t *src_name)
{
	const struct pfc_marks *M = &c->s->marks;
	const struct fx_mark *mk = c->mk + th->mk_start;
	size_t k;
	int col;

	static const char *const cols[] = { "name", "startTime", "endTime", "phase", "category", "data" };
	w_puts("\"markers\":{", out);
	for (col = 0; col < 6; col++) {
		w_printf(out, "%s\"%s\":[", col ? "," : "", cols[col]);
		for (k = 0; k < th->mk_nr; k++) {
			const struct fx_mark *x = &mk[k];
			/* the runtime's are instants (exceptions) or intervals (GC pauses, JIT) */
			int interval = x->src == MK_GC || x->src == MK_JIT;
			if (k)
				w_putc(',', out);
			switch (col) {
			case 0:
				put_u64(out, x->src == MK_PERF ? kind_name[M->v[x->idx].kind] : src_name[x->src]);
				break;
			case 1:
				put_mark_ms(c, out, x->start);
				break;
			case 2:
				if (interval)
					put_mark_ms(c, out, x->end);
				else
					w_puts("null", out);
				break;
			case 3: w_putc(interval ? '1' : '0', out); break;
			case 4: put_u64(out, x->src == MK_PERF ? CAT_PERF : CAT_RUNTIME); break;
			default:
				if (x->src != MK_PERF) {
					put_runtime_data(c, out, x);
					break;
				}
				if (M->v[x->idx].kind == PFC_MARK_LOST || M->v[x->idx].kind == PFC_MARK_LOST_SAMPLES) {
					w_puts("{\"type\":\"PerfLost\",\"lost\":", out);
					put_u64(out, M->v[x->idx].value);
				} else {
					w_puts("{\"type\":\"PerfThrottle\"", out);
				}
				w_puts(",\"event\":", out);
				put_cstr(c, out, M->v[x->idx].evsel < c->s->rd.nr_evsels ?
					 pfc_session_evsel_name(c->s, M->v[x->idx].evsel) : "");
				w_putc('}', out);
			}
		}
		w_putc(']', out);
	}
	w_puts(",\"length\":", out);
	put_u64(out, th->mk_nr);
	w_putc('}', out);
}

static void put_thread(struct fx_ctx *c, struct fx_w *out, const struct fx_thread *th, uint32_t name, uint32_t pname,
		       const uint32_t *kind_name, const uint32_t *src_name, uint64_t pstart)
{
	const size_t *ix = c->idx + th->start;
	struct ms_memo memo = { UINT64_MAX, 0, "" };
	uint64_t k, prev;

	w_puts("{\"processType\":\"default\",\"processStartupTime\":", out);
	put_ms(out, pstart);
	w_puts(",\"processShutdownTime\":null,\"registerTime\":", out);
	put_ms(out, th->first != UINT64_MAX && th->first > c->t0 ? th->first - c->t0 : 0);
	w_puts(",\"unregisterTime\":null,\"pausedRanges\":[],\"name\":", out);
	put_str(c, out, pfc_intern_str(&c->strs, name + c->str_base), pfc_intern_len(&c->strs, name + c->str_base));
	w_puts(",\"processName\":", out);
	put_str(c, out, pfc_intern_str(&c->strs, pname + c->str_base), pfc_intern_len(&c->strs, pname + c->str_base));
	w_printf(out, ",\"isMainThread\":%s,\"pid\":\"%d\",\"tid\":%d,\n\"samples\":{\"weightType\":\"%s\",\"stack\":[",
		th->pid == th->tid ? "true" : "false", (int)th->pid, (int)th->tid,
		c->time_weights && !c->uniform ? "tracing-ms" : "samples");
	for (k = 0; k < th->nr; k++) {
		if (k)
			w_putc(',', out);
		put_u64(out, c->stack_of[sample(c, ix[k])->stack] - 1);
	}
	/* times as differences from the sample before, to the microsecond: each the difference of
	 * two rounded times, so that they add up without drifting; a third of the bytes of
	 * absolute times in ns, which a 700,000-sample recording spent most of its writing on */
	w_puts("],\n\"timeDeltas\":[", out);
	for (k = 0, prev = 0; k < th->nr; k++) {
		const struct pfc_stime *r = sample(c, ix[k]);
		uint64_t us = c->have_times ? ((r->time > c->t0 ? r->time - c->t0 : 0) + 500) / 1000 : k * 1000;
		if (k)
			w_putc(',', out);
		/* no sample times: one millisecond apart, in order */
		put_ms_memo(out, &memo, (us - prev) * 1000);
		prev = us;
	}
	w_puts("],\n\"weight\":", out);
	if (!c->use_period || c->uniform) {
		w_puts("null", out);
	} else {
		w_putc('[', out);
		for (k = 0; k < th->nr; k++) {
			if (k)
				w_putc(',', out);
			if (c->time_weights)
				put_ms_memo(out, &memo, sample(c, ix[k])->period);
			else
				put_u64(out, sample(c, ix[k])->period);
		}
		w_putc(']', out);
	}
	w_puts(",\"length\":", out);
	put_u64(out, th->nr);
	w_puts("},\n", out);
	put_markers(c, out, th, kind_name, src_name);
	w_putc('}', out);
}

static void put_shared(struct fx_ctx *c, struct fx_w *out)
{
	size_t i;

	w_puts("\"shared\":{\"stackTable\":{\"frame\":[", out);
	for (i = 0; i < c->nr_stacks; i++) {
		if (i)
			w_putc(',', out);
		put_u64(out, c->st_frame[i]);
	}
	w_puts("],\"prefix\":[", out);
	for (i = 0; i < c->nr_stacks; i++) {
		if (i)
			w_putc(',', out);
		if (c->st_prefix[i])
			put_u64(out, c->st_prefix[i] - 1);
		else
			w_puts("null", out);
	}
	w_puts("],\"length\":", out);
	put_u64(out, c->nr_stacks);
	w_puts("},\n\"frameTable\":{\"address\":[", out);
	for (i = 0; i < c->nr_frames; i++) {
		if (i)
			w_putc(',', out);
		put_i64(out, c->fr_addr[i]);
	}
	w_puts("],\"inlineDepth\":[", out);
	for (i = 0; i < c->nr_frames; i++) {
		if (i)
			w_putc(',', out);
		put_u64(out, c->fr_depth[i]);
	}
	w_puts("],\"category\":[", out);
	for (i = 0; i < c->nr_frames; i++) {
		if (i)
			w_putc(',', out);
		put_u64(out, c->fr_cat[i]);
	}
	w_puts("],\"subcategory\":[", out);
	for (i = 0; i < c->nr_frames; i++)
		w_puts(i ? ",0" : "0", out);
	w_puts("],\"func\":[", out);
	for (i = 0; i < c->nr_frames; i++) {
		if (i)
			w_putc(',', out);
		put_u64(out, c->fr_func[i]);
	}
	w_puts("],\"nativeSymbol\":[", out);
	for (i = 0; i < c->nr_frames; i++) {
		if (i)
			w_putc(',', out);
		if (c->fr_sym[i])
			put_u64(out, c->fr_sym[i] - 1);
		else
			w_puts("null", out);
	}
	w_puts("],\"innerWindowID\":[", out);
	for (i = 0; i < c->nr_frames; i++)
		w_puts(i ? ",0" : "0", out);
	w_puts("],\"line\":[", out);
	for (i = 0; i < c->nr_frames; i++)
		w_puts(i ? ",null" : "null", out);
	w_puts("],\"column\":[", out);
	for (i = 0; i < c->nr_frames; i++)
		w_puts(i ? ",null" : "null", out);
	w_puts("],\"length\":", out);
	put_u64(out, c->nr_frames);
	{
		size_t nf = c->funcs_key.nr - c->func_base;
		w_puts("},\n\"funcTable\":{\"name\":[", out);
		for (i = 0; i < nf; i++) {
			if (i)
				w_putc(',', out);
			put_u64(out, c->func_name[i]);
		}
		w_puts("],\"isJS\":[", out);
		for (i = 0; i < nf; i++)
			w_puts(i ? ",false" : "false", out);
		w_puts("],\"relevantForJS\":[", out);
		for (i = 0; i < nf; i++)
			w_puts(i ? ",false" : "false", out);
		w_puts("],\"resource\":[", out);
		for (i = 0; i < nf; i++) {
			if (i)
				w_putc(',', out);
			put_i64(out, (int32_t)c->func_res[i]);
		}
		w_puts("],\"source\":[", out);
		for (i = 0; i < nf; i++)
			w_puts(i ? ",null" : "null", out);
		w_puts("],\"lineNumber\":[", out);
		for (i = 0; i < nf; i++)
			w_puts(i ? ",null" : "null", out);
		w_puts("],\"columnNumber\":[", out);
		for (i = 0; i < nf; i++)
			w_puts(i ? ",null" : "null", out);
		w_puts("],\"length\":", out);
		put_u64(out, nf);
	}
	w_puts("},\n\"resourceTable\":{\"lib\":[", out);
	for (i = 0; i < c->nr_res; i++) {
		if (i)
			w_putc(',', out);
		if (c->res_lib[i])
			put_u64(out, c->res_lib[i] - 1);
		else
			w_puts("null", out);
	}
	w_puts("],\"name\":[", out);
	for (i = 0; i < c->nr_res; i++) {
		if (i)
			w_putc(',', out);
		put_u64(out, c->res_name[i]);
	}
	w_puts("],\"host\":[", out);
	for (i = 0; i < c->nr_res; i++)
		w_puts(i ? ",null" : "null", out);
	w_puts("],\"type\":[", out);
	for (i = 0; i < c->nr_res; i++)
		w_puts(c->res_lib[i] ? (i ? ",1" : "1") : (i ? ",0" : "0"), out);
	w_puts("],\"length\":", out);
	put_u64(out, c->nr_res);
	{
		size_t ns = c->syms_key.nr - c->sym_base;
		w_puts("},\n\"nativeSymbols\":{\"libIndex\":[", out);
		for (i = 0; i < ns; i++) {
			if (i)
				w_putc(',', out);
			put_u64(out, c->sym_lib[i]);
		}
		w_puts("],\"address\":[", out);
		for (i = 0; i < ns; i++) {
			if (i)
				w_putc(',', out);
			put_u64(out, c->sym_addr[i]);
		}
		w_puts("],\"name\":[", out);
		for (i = 0; i < ns; i++) {
			if (i)
				w_putc(',', out);
			put_u64(out, c->sym_name[i]);
		}
		w_puts("],\"functionSize\":[", out);
		for (i = 0; i < ns; i++)
			w_puts(i ? ",null" : "null", out);
		w_puts("],\"length\":", out);
		put_u64(out, ns);
	}
	w_puts("},\n\"sources\":{\"id\":[],\"filename\":[],\"startLine\":[],\"startColumn\":[],\"sourceMapURL\":[],\"length\":0},"
	      "\n\"stringArray\":[", out);
	for (i = c->str_base; i < c->strs.nr; i++) {
		w_puts(i == c->str_base ? "\n" : ",\n", out);
		put_str(c, out, pfc_intern_str(&c->strs, (uint32_t)i), pfc_intern_len(&c->strs, (uint32_t)i));
	}
	w_puts("]}}\n", out);
}

/* The name a thread is shown by: the last one the recording gave it, else the one its
 * samples carry. */
static uint32_t thread_name(struct fx_ctx *c, const struct fx_thread *th, int32_t tid)
{
	const char *n = th->pid >= 0 ? pfc_session_thread_comm(c->s, th->pid, tid) : NULL;

	/* a process the recording never named goes by the thread's name */
	if (!n && tid != th->tid && th->pid >= 0)
		n = pfc_session_thread_comm(c->s, th->pid, th->tid);
	if (!n && th->comm)
		n = pfc_intern_str(&c->s->strings, th->comm - 1);
	if (!n)
		n = th->pid < 0 ? "perf" : "[unknown]";
	return str_id(c, n, strlen(n));
}

static void fx_free(struct fx_ctx *c)
{
	free(c->threads);
	free(c->idx);
	free(c->own);
	free(c->thread_of);
	free(c->nr_of);
	free(c->dotnet_pid);
	free(c->mk);
	pfc_intern_exit(&c->strs);
	pfc_intern_exit(&c->funcs_key);
	pfc_intern_exit(&c->syms_key);
	free(c->func_name);
	free(c->func_res);
	free(c->sym_lib);
	free(c->sym_name);
	free(c->sym_addr);
	free(c->fmap);
	free(c->fr_func);
	free(c->fr_cat);
	free(c->fr_depth);
	free(c->fr_sym);
	free(c->fr_addr);
	free(c->st_frame);
	free(c->st_prefix);
	free(c->st_hash);
	free(c->stack_of);
	free(c->lib_of_dso);
	free(c->res_of_dso);
	free(c->libs);
	free(c->res_lib);
	free(c->res_name);
	pfc_sb_free(&c->tmp);
	pfc_sb_free(&c->esc);
}

static int fx_write(FILE *fout, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err)
{
	static const char *const mark_names[PFC_MARK__MAX] = { "Lost events", "Lost samples", "Throttle", "Unthrottle" };
	struct fx_ctx c;
	struct fx_w *out = NULL;
	static const char *const src_names[] = { "", "GC", "Exception", "JIT" };
	uint32_t mark_name[PFC_MARK__MAX], src_name[4], *names = NULL;
	size_t i, nf = s->stacks.nr_frames + 1, nd = s->machine.nr_dsos + 1;
	int ret = 0;

	memset(&c, 0, sizeof(c));
	c.s = s;
	c.o = o;
	c.stream = !s->offcpu;
	c.t0 = UINT64_MAX;
	if (pfc_intern_init(&c.strs) < 0 || pfc_intern_init(&c.funcs_key) < 0 || pfc_intern_init(&c.syms_key) < 0)
		goto oom;
	c.str_base = (uint32_t)c.strs.nr;
	c.func_base = (uint32_t)c.funcs_key.nr;
	c.sym_base = (uint32_t)c.syms_key.nr;
	c.fmap = calloc(nf, sizeof(*c.fmap));
	c.fr_func = malloc(nf * sizeof(*c.fr_func));
	c.fr_cat = malloc(nf * sizeof(*c.fr_cat));
	c.fr_depth = malloc(nf * sizeof(*c.fr_depth));
	c.fr_sym = malloc(nf * sizeof(*c.fr_sym));
	c.fr_addr = malloc(nf * sizeof(*c.fr_addr));
	c.stack_of = calloc(s->stacks.nr_stacks + 1, sizeof(*c.stack_of));
	c.lib_of_dso = calloc(nd, sizeof(*c.lib_of_dso));
	c.res_of_dso = calloc(nd, sizeof(*c.res_of_dso));
	if (!c.fmap || !c.fr_func || !c.fr_cat || !c.fr_depth || !c.fr_sym || !c.fr_addr || !c.stack_of ||
	    !c.lib_of_dso || !c.res_of_dso)
		goto oom;
	if ((ret = pick_event(&c, err)) < 0)
		goto out;
	if (count_samples(&c) < 0 || gather_marks(&c) < 0 || make_threads(&c) < 0)
		goto oom;
	find_dotnet(&c);
	for (i = 0; i < s->stacks.nr_stacks; i++) {
		if (!c.thread_of[i])
			continue;
		if (!s->stacks.stacks[i].nr) {
			/* the profiler needs a frame for every sample: "[unknown]" stands alone */
			c.stack_of[i] = stack_node(&c, frame_unknown(&c), 0) + 1;
		} else {
			(void)stack_of(&c, (uint32_t)i, c.dotnet_pid[c.thread_of[i] - 1]);
		}
		if (c.oom)
			goto oom;
	}
	if (c.stream) {
		c.times = &s->times;
		c.nsamp = s->times.n;
	} else if (fill_from_stacks(&c) < 0) {
		goto oom;
	}
	group_samples(&c);
	/* Samples of one period (perf record -c, or a clock whose frequency gave the same period
	 * every time) are counted as the profiler counts its own, one interval each: a third of
	 * the file and of its writing saved, and the call tree shows counts, which the period
	 * turns into time (meta.interval, and meta.extra says it).  Periods that differ are
	 * written, in ms for a clock. */
	if (c.stream && c.use_period && c.nsamp) {
		size_t k;
		c.uniform = UINT64_MAX;
		for (k = 0; k < c.nsamp && c.uniform; k++) {
			const struct pfc_stime *r = sample(&c, k);
			if (r->stack >= s->stacks.nr_stacks || !c.thread_of[r->stack])
				continue;
			if (c.uniform == UINT64_MAX)
				c.uniform = r->period;
			else if (r->period != c.uniform)
				c.uniform = 0;
		}
		if (c.uniform == UINT64_MAX)
			c.uniform = 0;
	}
	if (c.t0 == UINT64_MAX || !c.have_times)
		c.t0 = 0;
	for (i = 0; i < c.nr_threads; i++) {
		struct fx_thread *th = &c.threads[i];
		if (th->nr)
			th->first = sample(&c, c.idx[th->start])->time;
	}
	for (i = 0; i < PFC_MARK__MAX; i++)
		mark_name[i] = str_id(&c, mark_names[i], strlen(mark_names[i]));
	for (i = 1; i < 4; i++)
		src_name[i] = c.nr_runtime_mk ? str_id(&c, src_names[i], strlen(src_names[i])) : 0;
	if (!(names = malloc((2 * c.nr_threads + 1) * sizeof(*names))))
		goto oom;
	for (i = 0; i < c.nr_threads; i++) {
		names[2 * i] = thread_name(&c, &c.threads[i], c.threads[i].tid);
		names[2 * i + 1] = thread_name(&c, &c.threads[i], c.threads[i].pid);
	}
	if (c.oom || !(out = malloc(sizeof(*out))))
		goto oom;
	out->f = fout;
	out->n = 0;
	put_meta(&c, out);
	put_libs(&c, out);
	w_puts("\"threads\":[", out);
	for (i = 0; i < c.nr_threads; i++) {
		uint64_t pstart = UINT64_MAX;
		size_t j;
		/* the process starts with its first thread's first sample */
		for (j = i; j-- > 0 && c.threads[j].pid == c.threads[i].pid;)
			;
		for (j++; j < c.nr_threads && c.threads[j].pid == c.threads[i].pid; j++)
			if (c.threads[j].first < pstart)
				pstart = c.threads[j].first;
		pstart = pstart == UINT64_MAX || pstart < c.t0 || (!c.have_times && c.stream) ? 0 : pstart - c.t0;
		w_puts(i ? ",\n" : "\n", out);
		put_thread(&c, out, &c.threads[i], names[2 * i], names[2 * i + 1], mark_name, src_name, pstart);
	}
	w_puts("],\n", out);
	put_shared(&c, out);
	w_flush(out);
	if (c.tmp.oom || c.esc.oom)
		goto oom;
	goto out;
oom:
	ret = PFC_FAIL_NOOFF(err, NOMEM, "firefox output");
out:
	free(out);
	free(names);
	fx_free(&c);
	return ret;
}

static const char *const firefox_suffixes[] = { ".fxprof.json", NULL };

const struct pfc_writer pfc_writer_firefox = {
	.name = "firefox",
	.suffixes = firefox_suffixes,
	.needs = PFC_NEED_STACKS | PFC_NEED_TIMES | PFC_NEED_MARKS | PFC_NEED_RUNTIME_MARKS,
	.write = fx_write,
};
