/*
 * events.c - the event streams of one conversion: each .nettrace mapped once and read once,
 * keeping its pid, its GC pauses and, when an output needs them, its allocation events with
 * their stacks, its exceptions, and each GC and JIT compilation for a timeline.  Only the
 * payloads of those kinds are decoded.  Nothing else is kept: an output that needs more (the
 * runtime report, trace.zip's CTF) reads the mapping again, streamed, so a long session costs
 * its mapping's window and no copy of its events; when such an output is all that reads the
 * events, the load reads no more than the stream's Trace object (PFC_EVENTS_HEADER).
 */
#include "converter/events/events.h"
#include "converter/events/clrevents.h"
#include "converter/events/runtime.h"
#include "converter/util/bytes.h"
#include "converter/util/fileio.h"
#include "converter/util/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

/* a nettrace is read from its mapping; a session of hours fits well below this */
#define EVENTS_MAX_BYTES (64ull << 30)
/* A stream is read through its mapping, which would keep every page of it resident: the pages
 * behind the reader are given back in steps of this (a multiple of any page size), the last
 * EVENTS_RELEASE_LAG bytes before it kept for the stacks and blocks still in use. */
#define EVENTS_RELEASE_STEP ((uint64_t)4 << 20)
#define EVENTS_RELEASE_LAG ((uint64_t)4 << 20)
/* a stack longer than this is cut (EventPipe's own limit is 100 frames) */
#define EVENTS_MAX_IPS 1024
/* JIT compilations begun and not yet ended that are waited for: one a thread compiling at
 * once, so a few dozen; a start whose end never came is forgotten, oldest first, past this */
#define EVENTS_MAX_JITTING 64

struct jitting {
	uint64_t method_id, tid, ts;
};

/* the kind (pfc_clr_kind) of the metadata seen last, by slot: most events name one of a few */
struct kind_slot {
	const char *provider;        /* the metadata's own string: one per record for the whole read */
	uint32_t meta_id, event_id, version;
	int kind, used;
};
#define KIND_SLOTS 64

/* a module's assembly name (an offset in pfc_events_file.names), by its id */
struct module_name {
	uint64_t id;
	uint32_t name;
};

struct reading {
	struct pfc_events_file *f;
	unsigned want;
	uint32_t kinds;              /* bit k: events of kind k are decoded */
	struct kind_slot slot[KIND_SLOTS];
	uint64_t suspend_ts;         /* the open suspension, 0 when none */
	struct pfc_events_gc gc;     /* PFC_EVENTS_MARKS: what the open suspension saw */
	struct jitting jitting[EVENTS_MAX_JITTING];  /* PFC_EVENTS_MARKS: in the order they began */
	size_t nr_jitting;
	struct pfc_clr_event ce;     /* large: string buffers */
	/* PFC_EVENTS_METHODS: the modules' assembly names (offsets in names), by module id */
	struct module_name *modules;
	size_t nr_modules, cap_modules;
	struct pfc_error payload_err;
	int oom;
};

static int on_trace(void *ctx, const struct pfc_nettrace_trace *t)
{
	((struct reading *)ctx)->f->trace = *t;
	((struct reading *)ctx)->f->have_trace = 1;
	return 0;
}

/* s (and t after it, when not NULL) as one name in f->names: its offset, or -1 without memory */
static int64_t add_name(struct pfc_events_file *f, const char *s, const char *sep, const char *t)
{
	size_t a = strlen(s), b = t ? strlen(sep) + strlen(t) : 0, off = f->names_len;

	if (!pfc_grow_at(&f->names, &f->names_cap, f->names_len + a + b, 1, 4096) || f->names_len + a + b >= UINT32_MAX)
		return -1;
	memcpy(f->names + off, s, a);
	if (t) {
		memcpy(f->names + off + a, sep, strlen(sep));
		memcpy(f->names + off + a + strlen(sep), t, strlen(t));
	}
	f->names[off + a + b] = 0;
	f->names_len += a + b + 1;
	return (int64_t)off;
}

static int add_alloc(struct reading *r, const struct pfc_nettrace_event *ev, uint64_t bytes, const char *type,
		     int thrown)
{
	struct pfc_events_file *f = r->f;
	struct pfc_events_alloc *a, **v = thrown ? &f->throws : &f->allocs;
	size_t *nr = thrown ? &f->nr_throws : &f->nr_allocs, *cap = thrown ? &f->cap_throws : &f->cap_allocs;
	uint32_t i, n = ev->stack ? ev->nr_ips : 0, psz = f->trace.pointer_size == 4 ? 4 : 8;
	size_t tlen = strlen(type) + 1;

	if (n > EVENTS_MAX_IPS)
		n = EVENTS_MAX_IPS;
	if (!(a = pfc_grow_at(v, cap, *nr, sizeof(**v), 256)) ||
	    (n && !pfc_grow_at(&f->ips, &f->cap_ips, f->nr_ips + n - 1, sizeof(*f->ips), 4096)) ||
	    !pfc_grow_at(&f->names, &f->names_cap, f->names_len + tlen - 1, 1, 4096) || f->names_len > UINT32_MAX)
		return -PFC_ERR_NOMEM;
	a->ts = ev->timestamp;
	a->tid = ev->thread_id;
	a->bytes = bytes;
	a->type = (uint32_t)f->names_len;
	a->msg = a->type + (uint32_t)tlen - 1;
	a->nr_ips = n;
	a->ips = f->nr_ips;
	memcpy(f->names + f->names_len, type, tlen);
	f->names_len += tlen;
	if (thrown && (r->want & PFC_EVENTS_MARKS)) {
		int64_t m = add_name(f, r->ce.exception_message, "", NULL);
		if (m < 0)
			return -PFC_ERR_NOMEM;
		a->msg = (uint32_t)m;
	}
	for (i = 0; i < n; i++) {
		/* the stream is little-endian, as the hosts it is read on */
		const uint8_t *p = ev->stack + (size_t)i * psz;
		f->ips[f->nr_ips++] = psz == 4 ? pfc_ld32(p, 0) : pfc_ld64(p, 0);
	}
	(*nr)++;
	return 0;
}

/* a JIT compilation ends (MethodLoadVerbose): the start of the same method on the same thread,
 * which a method's first load after a rundown or a ReadyToRun load has not */
static int jit_end(struct reading *r, const struct pfc_nettrace_event *ev)
{
	struct pfc_events_file *f = r->f;
	struct pfc_events_jit *j;
	int64_t name;
	size_t i;

	for (i = r->nr_jitting; i-- > 0;)
		if (r->jitting[i].method_id == r->ce.method_id && r->jitting[i].tid == ev->thread_id)
			break;
	if (i == SIZE_MAX)
		return 0;
	if (!(j = pfc_grow_at(&f->jits, &f->cap_jits, f->nr_jits, sizeof(*f->jits), 64)) ||
	    (name = r->ce.method_namespace[0] ? add_name(f, r->ce.method_namespace, ".", r->ce.method_name)
					      : add_name(f, r->ce.method_name, "", NULL)) < 0)
		return -PFC_ERR_NOMEM;
	j->begin = r->jitting[i].ts;
	j->end = ev->timestamp >= j->begin ? ev->timestamp : j->begin;
	j->tid = ev->thread_id;
	j->name = (uint32_t)name;
	f->nr_jits++;
	memmove(&r->jitting[i], &r->jitting[i + 1], (r->nr_jitting - i - 1) * sizeof(*r->jitting));
	r->nr_jitting--;
	return 0;
}

static void jit_start(struct reading *r, const struct pfc_nettrace_event *ev)
{
	if (r->nr_jitting == EVENTS_MAX_JITTING)
		memmove(&r->jitting[0], &r->jitting[1], --r->nr_jitting * sizeof(*r->jitting));
	r->jitting[r->nr_jitting].method_id = r->ce.method_id;
	r->jitting[r->nr_jitting].tid = ev->thread_id;
	r->jitting[r->nr_jitting++].ts = ev->timestamp;
}

/* A method's code (PFC_EVENTS_METHODS): "RET\tNamespace.Type::Method(PARAMS)" for now, the
 * assembly put between once the rundown's modules are known (methods_name). */
static int add_method(struct reading *r)
{
	struct pfc_events_file *f = r->f;
	const struct pfc_clr_event *e = &r->ce;
	const char *sig = e->method_signature, *paren = strchr(sig, '(');
	struct pfc_events_method *m;
	char ret[512], call[2048];
	size_t rl = paren ? (size_t)(paren - sig) : strlen(sig);
	int64_t name;

	if (!e->method_start || !e->method_size || !e->method_name[0])
		return 0;
	while (rl && sig[rl - 1] == ' ')
		rl--;
	snprintf(ret, sizeof(ret), "%.*s", (int)rl, sig);
	snprintf(call, sizeof(call), "%s%s%s%s", e->method_namespace, e->method_namespace[0] ? "::" : "", e->method_name,
		 paren ? paren : "()");
	if (!(m = pfc_grow_at(&f->methods, &f->cap_methods, f->nr_methods, sizeof(*f->methods), 256)) ||
	    (name = add_name(f, ret, "\t", call)) < 0)
		return -PFC_ERR_NOMEM;
	m->start = e->method_start;
	m->size = e->method_size;
	m->name = (uint32_t)name;
	m->module_id = e->module_id;
	m->seq = (uint32_t)f->nr_methods;
	f->nr_methods++;
	return 0;
}

/* A module's assembly name (PFC_EVENTS_METHODS): its IL file's name without ".dll". */
static int add_module(struct reading *r)
{
	const char *path = r->ce.il_path[0] ? r->ce.il_path : r->ce.native_path, *base = strrchr(path, '/');
	char asm_name[1024];
	size_t n;
	int64_t name;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n > 4 && !strcasecmp(base + n - 4, ".dll"))
		n -= 4;
	if (!n)
		return 0;
	snprintf(asm_name, sizeof(asm_name), "%.*s", (int)n, base);
	if (!pfc_grow_at(&r->modules, &r->cap_modules, r->nr_modules, sizeof(*r->modules), 32) ||
	    (name = add_name(r->f, asm_name, "", NULL)) < 0)
		return -PFC_ERR_NOMEM;
	r->modules[r->nr_modules].id = r->ce.module_id;
	r->modules[r->nr_modules++].name = (uint32_t)name;
	return 0;
}

/* The kind of ev's metadata record: its slot's, or looked up and given the slot. */
static int kind_of(struct reading *r, const struct pfc_nettrace_event *ev)
{
	const struct pfc_nettrace_meta *m = ev->meta;
	struct kind_slot *k = &r->slot[ev->meta_id % KIND_SLOTS];
	const char *prov = m ? m->provider : NULL;

	if (k->used && k->meta_id == ev->meta_id && k->provider == prov &&
	    (!m || (k->event_id == m->event_id && k->version == m->version)))
		return k->kind;
	k->used = 1;
	k->meta_id = ev->meta_id;
	k->provider = prov;
	k->event_id = m ? m->event_id : 0;
	k->version = m ? m->version : 0;
	k->kind = pfc_clr_kind(m);
	return k->kind;
}

static int on_event(void *ctx, const struct pfc_nettrace_event *ev)
{
	struct reading *r = ctx;
	struct pfc_events_file *f = r->f;
	struct pfc_clr_event *e = &r->ce;
	int kind = kind_of(r, ev);

	pfc_events_release(f, ev->offset);
	if (!(r->kinds >> kind & 1))
		return 0;
	kind = pfc_clr_decode(ev, f->trace.pointer_size, e, &r->payload_err);

	switch (kind) {
	case PFC_CLR_GC_SUSPEND_BEGIN:
		/* as runtime.c: the start whatever the reason, the end once a GC ran inside */
		r->suspend_ts = ev->timestamp;
		memset(&r->gc, 0, sizeof(r->gc));
		break;
	case PFC_CLR_GC_START:
		/* the GC of the open pause; a background GC's start outside one is not a pause's */
		if (r->suspend_ts) {
			r->gc.count = e->count;
			r->gc.depth = e->depth;
			r->gc.reason = e->reason;
			r->gc.ran = 1;
		}
		break;
	case PFC_CLR_GC_HEAP_STATS:
		if (r->suspend_ts) {
			memcpy(r->gc.gen_size, e->gen_size, sizeof(r->gc.gen_size));
			r->gc.heap = 1;
		}
		break;
	case PFC_CLR_GC_RESTART_END:
		if (r->suspend_ts && ev->timestamp >= r->suspend_ts) {
			struct pfc_events_pause *p = pfc_grow_at(&f->pauses, &f->cap_pauses, f->nr_pauses,
								 sizeof(*f->pauses), 32);
			if (!p)
				return -PFC_ERR_NOMEM;
			p->begin = r->suspend_ts;
			p->end = ev->timestamp;
			f->nr_pauses++;
			if (r->want & PFC_EVENTS_MARKS) {
				struct pfc_events_gc *g = pfc_grow_at(&f->gcs, &f->cap_gcs, f->nr_gcs, sizeof(*f->gcs), 32);
				if (!g)
					return -PFC_ERR_NOMEM;
				*g = r->gc;
				g->begin = r->suspend_ts;
				g->end = ev->timestamp;
				f->nr_gcs++;
			}
		}
		r->suspend_ts = 0;
		break;
	case PFC_CLR_JIT_START:
		if (r->want & PFC_EVENTS_MARKS)
			jit_start(r, ev);
		break;
	case PFC_CLR_METHOD_LOAD:
		if (r->want & PFC_EVENTS_METHODS)
			return add_method(r);
		if (r->want & PFC_EVENTS_MARKS)
			return jit_end(r, ev);
		break;
	case PFC_CLR_METHOD_DCEND:
		if (r->want & PFC_EVENTS_METHODS)
			return add_method(r);
		break;
	case PFC_CLR_MODULE_DCEND:
		if (r->want & PFC_EVENTS_METHODS)
			return add_module(r);
		break;
	case PFC_CLR_GC_ALLOC_TICK:
		if (r->want & PFC_EVENTS_ALLOCS)
			return add_alloc(r, ev, e->version >= 2 ? e->alloc_amount64 : e->alloc_amount,
					 e->type_name[0] ? e->type_name : "(no type name)", 0);
		break;
	case PFC_CLR_ALLOC_SAMPLED:
		if (r->want & PFC_EVENTS_ALLOCS)
			return add_alloc(r, ev, PFC_RT_ALLOC_SAMPLE_BYTES,
					 e->type_name[0] ? e->type_name : "(no type name)", 0);
		break;
	case PFC_CLR_EXC_THROWN:
		if (r->want & PFC_EVENTS_THROWS)
			return add_alloc(r, ev, 1, e->exception_type[0] ? e->exception_type : "(no type name)", 1);
		break;
	default:
		break;
	}
	return 0;
}

static int pause_cmp(const void *a, const void *b)
{
	const struct pfc_events_pause *x = a, *y = b;

	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int alloc_cmp(const void *a, const void *b)
{
	const struct pfc_events_alloc *x = a, *y = b;

	/* by time, then file order (ips grows with it): the same stream gives the same order */
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->ips < y->ips ? -1 : x->ips > y->ips;
}

static int jit_cmp(const void *a, const void *b)
{
	const struct pfc_events_jit *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static void file_free(struct pfc_events_file *f)
{
	if (f->mapped)
		munmap((void *)f->buf, f->len);
	free(f->name);
	free(f->pauses);
	free(f->allocs);
	free(f->methods);
	free(f->throws);
	free(f->gcs);
	free(f->jits);
	free(f->ips);
	free(f->names);
	memset(f, 0, sizeof(*f));
}

int pfc_events_add(struct pfc_events *e, const char *path, const char *name, const uint8_t *buf, size_t len,
		   unsigned want, struct pfc_error *err)
{
	struct pfc_events_file *f;
	struct pfc_nettrace nt;
	struct pfc_nettrace_ops ops = { 0 };
	struct reading *r;
	size_t i, k;
	int ret;

	if (!(f = pfc_grow_at(&e->v, &e->cap, e->n, sizeof(*e->v), 4)))
		return PFC_FAIL_NOOFF(err, NOMEM, "events");
	memset(f, 0, sizeof(*f));
	if (!(f->name = strdup(name ? name : path)))
		return PFC_FAIL_NOOFF(err, NOMEM, "events");
	if (buf) {
		f->buf = buf;
		f->len = len;
	} else {
		void *map = NULL;
		if (pfc_map_file(path, EVENTS_MAX_BYTES, &map, &f->len) < 0) {
			ret = PFC_FAIL_NOOFF(err, OPEN, "%s", strerror(errno));
			snprintf(err->file, sizeof(err->file), "%s", f->name);
			file_free(f);
			return ret;
		}
		f->buf = map;
		f->mapped = 1;
	}
	if (!(r = calloc(1, sizeof(*r)))) {
		file_free(f);
		return PFC_FAIL_NOOFF(err, NOMEM, "events");
	}
	r->f = f;
	r->want = want;
	r->kinds = 1u << PFC_CLR_GC_SUSPEND_BEGIN | 1u << PFC_CLR_GC_START | 1u << PFC_CLR_GC_HEAP_STATS |
		   1u << PFC_CLR_GC_RESTART_END;
	if (want & PFC_EVENTS_MARKS)
		r->kinds |= 1u << PFC_CLR_JIT_START | 1u << PFC_CLR_METHOD_LOAD;
	if (want & PFC_EVENTS_ALLOCS)
		r->kinds |= 1u << PFC_CLR_GC_ALLOC_TICK | 1u << PFC_CLR_ALLOC_SAMPLED;
	if (want & PFC_EVENTS_THROWS)
		r->kinds |= 1u << PFC_CLR_EXC_THROWN;
	ops.ctx = r;
	ops.trace = on_trace;
	ops.event = on_event;
	if (want & PFC_EVENTS_HEADER) {
		/* the Trace object comes first: its pid and clock are all that is read here */
		ret = pfc_nettrace_begin(&nt, f->buf, f->len, &ops, err);
		while (ret >= 0 && !nt.seen_trace && (ret = pfc_nettrace_step(&nt)) > 0)
			;
		if (ret > 0)
			ret = 0;
	} else {
		ret = pfc_nettrace_read(&nt, f->buf, f->len, &ops, err);
		pfc_events_release(f, f->len);
	}
	f->stream = nt.st;
	pfc_nettrace_free(&nt);
	free(r);
	if (ret == -PFC_ERR_NOMEM && !err->code)
		ret = PFC_FAIL_NOOFF(err, NOMEM, "events");
	if (ret < 0) {
		snprintf(err->file, sizeof(err->file), "%s", f->name);
		file_free(f);
		return ret;
	}
	/* pauses apart and in order, so that a sample's time is looked up by bisection; a
	 * hostile stream's overlapping ones are merged */
	if (f->nr_pauses)
		qsort(f->pauses, f->nr_pauses, sizeof(*f->pauses), pause_cmp);
	for (i = k = 0; i < f->nr_pauses; i++) {
		if (k && f->pauses[i].begin <= f->pauses[k - 1].end) {
			if (f->pauses[i].end > f->pauses[k - 1].end)
				f->pauses[k - 1].end = f->pauses[i].end;
			continue;
		}
		f->pauses[k++] = f->pauses[i];
	}
	f->nr_pauses = k;
	if (f->nr_allocs)
		qsort(f->allocs, f->nr_allocs, sizeof(*f->allocs), alloc_cmp);
	if (f->nr_throws)
		qsort(f->throws, f->nr_throws, sizeof(*f->throws), alloc_cmp);
	if (f->nr_jits)
		qsort(f->jits, f->nr_jits, sizeof(*f->jits), jit_cmp);
	e->n++;
	return 0;
}

static int method_cmp(const void *a, const void *b)
{
	const struct pfc_events_method *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int module_cmp(const void *a, const void *b)
{
	const struct module_name *x = a, *y = b;

	/* by id, then the name's offset: the one given last comes last */
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Each method's name completed: "RET [Assembly] Namespace.Type::Method(PARAMS)", the assembly
 * from the rundown's module of its id (the last one given that id), or none.  The modules are
 * sorted and bisected: a hostile stream's millions of each must not take their product. */
static int methods_name(struct reading *r)
{
	struct pfc_events_file *f = r->f;
	size_t i;

	if (r->nr_modules)
		qsort(r->modules, r->nr_modules, sizeof(*r->modules), module_cmp);
	for (i = 0; i < f->nr_methods; i++) {
		struct pfc_events_method *m = &f->methods[i];
		const char *asm_name = NULL, *tab;
		char ret[512], call[2048];
		size_t lo = 0, hi = r->nr_modules;
		int64_t name;

		while (lo < hi) {	/* past the last module of the method's id */
			size_t mid = lo + (hi - lo) / 2;
			if (r->modules[mid].id <= m->module_id)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && r->modules[lo - 1].id == m->module_id)
			asm_name = f->names + r->modules[lo - 1].name;
		tab = strchr(f->names + m->name, '\t');
		if (!tab)
			continue;
		snprintf(ret, sizeof(ret), "%.*s", (int)(tab - (f->names + m->name)), f->names + m->name);
		snprintf(call, sizeof(call), "%s", tab + 1);
		if (asm_name) {
			char a[1100];
			snprintf(a, sizeof(a), " [%s] ", asm_name);
			name = add_name(f, ret[0] ? ret : "void", a, call);
		} else {
			name = add_name(f, ret[0] ? ret : "void", " ", call);
		}
		if (name < 0)
			return -PFC_ERR_NOMEM;
		m->name = (uint32_t)name;
	}
	return 0;
}

int pfc_events_methods(struct pfc_events_file *f, struct pfc_error *err)
{
	struct pfc_nettrace nt;
	struct pfc_nettrace_ops ops = { 0 };
	struct reading *r;
	int ret;

	if (f->methods_read)
		return 0;
	f->methods_read = 1;
	if (!(r = calloc(1, sizeof(*r))))
		return PFC_FAIL_NOOFF(err, NOMEM, "events");
	r->f = f;
	r->want = PFC_EVENTS_METHODS;
	r->kinds = 1u << PFC_CLR_METHOD_LOAD | 1u << PFC_CLR_METHOD_DCEND | 1u << PFC_CLR_MODULE_DCEND;
	ops.ctx = r;
	ops.event = on_event;
	ops.no_stacks = 1;
	ret = pfc_nettrace_read(&nt, f->buf, f->len, &ops, err);
	pfc_events_release(f, f->len);
	pfc_nettrace_free(&nt);
	if (ret == -PFC_ERR_NOMEM && !err->code)
		ret = PFC_FAIL_NOOFF(err, NOMEM, "events");
	if (ret < 0)
		snprintf(err->file, sizeof(err->file), "%s", f->name);
	if (methods_name(r) < 0 && ret >= 0)
		ret = PFC_FAIL_NOOFF(err, NOMEM, "events");
	free(r->modules);
	free(r);
	if (f->nr_methods)
		qsort(f->methods, f->nr_methods, sizeof(*f->methods), method_cmp);
	return ret < 0 ? ret : 0;
}

const struct pfc_events_method *pfc_events_method_at(const struct pfc_events_file *f, uint64_t addr)
{
	size_t lo = 0, hi = f->nr_methods, k;
	const struct pfc_events_method *best = NULL;

	/* the last method starting at or before addr, then back over those that start earlier
	 * while one of them may still hold addr (code a later load replaced wins) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->methods[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo; k-- > 0 && lo - k <= 64;) {
		const struct pfc_events_method *m = &f->methods[k];
		if (addr - m->start < m->size && (!best || m->seq > best->seq))
			best = m;
	}
	return best;
}

void pfc_events_release(struct pfc_events_file *f, uint64_t off)
{
	uintptr_t page = (uintptr_t)EVENTS_RELEASE_STEP, upto;

	/* a private read-only mapping: the pages dropped come back from the file if read again */
	if (off + EVENTS_RELEASE_STEP < f->released)	/* another read from the start */
		f->released = 0;
	if (!f->mapped || off < f->released + EVENTS_RELEASE_STEP + EVENTS_RELEASE_LAG)
		return;
	upto = ((uintptr_t)off - EVENTS_RELEASE_LAG) / page * page;
	if (upto > f->len)
		upto = f->len / page * page;
	if (upto > f->released)
		madvise((uint8_t *)f->buf + f->released, upto - f->released, MADV_DONTNEED);
	f->released = upto;
}

int pfc_events_paused(const struct pfc_events_file *f, uint64_t t)
{
	size_t lo = 0, hi = f->nr_pauses;

	/* the first pause that ends at or after t */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->pauses[mid].end < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->nr_pauses && f->pauses[lo].begin <= t;
}

void pfc_events_free(struct pfc_events *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		file_free(&e->v[i]);
	free(e->v);
	memset(e, 0, sizeof(*e));
}
