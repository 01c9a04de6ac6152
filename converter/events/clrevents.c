/*
 * clrevents.c - the runtime's event payloads as the manifest (ClrEtwAll.man) lays them out:
 * one table row per event, its fields in payload order, each marked with the version that
 * added it (a later version only appends fields).  Native runtime events carry no field
 * metadata in a nettrace stream, so this table is the only source of their layout.  Also the
 * counts of every event by provider, id and version.
 */
#include "converter/events/clrevents.h"

#include <stdlib.h>
#include <string.h>

enum ftype { F_U16, F_U32, F_U64, F_PTR, F_STR, F_GUID, F_SKIP32 };

struct field {
	uint8_t type;
	uint8_t since;               /* the event version that added the field */
	uint16_t off;                /* where it goes in struct pfc_clr_event (F_GUID: skipped) */
	uint16_t cap;                /* F_STR: the buffer's size */
};

#define FLD(t, v, m) { t, v, (uint16_t)offsetof(struct pfc_clr_event, m), 0 }
#define STR(v, m) { F_STR, v, (uint16_t)offsetof(struct pfc_clr_event, m), \
		    (uint16_t)sizeof(((struct pfc_clr_event *)0)->m) }
#define SKIP32(v) { F_SKIP32, v, 0, 0 }
#define MAX_FIELDS 24

struct evdef {
	uint8_t rundown;             /* provider: 0 runtime, 1 rundown */
	uint16_t id;
	uint8_t min_version;         /* older versions have another layout: not decoded */
	enum pfc_clr_kind kind;
	const char *name;
	struct field f[MAX_FIELDS];
	uint8_t nf;
};

/* ClrInstanceID is a UInt16 after the fields of version 1; versions only append. */
static const struct evdef defs[] = {
	{ 0, 1, 1, PFC_CLR_GC_START, "GCStart",
	  { FLD(F_U32, 1, count), FLD(F_U32, 1, depth), FLD(F_U32, 1, reason), FLD(F_U32, 1, type),
	    FLD(F_U16, 1, clr_instance), FLD(F_U64, 2, client_seq) }, 6 },
	{ 0, 2, 1, PFC_CLR_GC_END, "GCEnd",
	  { FLD(F_U32, 1, count), FLD(F_U32, 1, depth), FLD(F_U16, 1, clr_instance) }, 3 },
	{ 0, 3, 1, PFC_CLR_GC_RESTART_END, "GCRestartEEEnd", { FLD(F_U16, 1, clr_instance) }, 1 },
	{ 0, 4, 1, PFC_CLR_GC_HEAP_STATS, "GCHeapStats",
	  { FLD(F_U64, 1, gen_size[0]), FLD(F_U64, 1, promoted[0]), FLD(F_U64, 1, gen_size[1]),
	    FLD(F_U64, 1, promoted[1]), FLD(F_U64, 1, gen_size[2]), FLD(F_U64, 1, promoted[2]),
	    FLD(F_U64, 1, gen_size[3]), FLD(F_U64, 1, promoted[3]),
	    FLD(F_U64, 1, finalization_promoted_size), FLD(F_U64, 1, finalization_promoted_count),
	    FLD(F_U32, 1, pinned_objects), FLD(F_U32, 1, sink_blocks), FLD(F_U32, 1, gc_handles),
	    FLD(F_U16, 1, clr_instance), FLD(F_U64, 2, gen_size[4]), FLD(F_U64, 2, promoted[4]) }, 16 },
	{ 0, 7, 1, PFC_CLR_GC_RESTART_BEGIN, "GCRestartEEBegin", { FLD(F_U16, 1, clr_instance) }, 1 },
	{ 0, 8, 1, PFC_CLR_GC_SUSPEND_END, "GCSuspendEEEnd", { FLD(F_U16, 1, clr_instance) }, 1 },
	{ 0, 9, 1, PFC_CLR_GC_SUSPEND_BEGIN, "GCSuspendEEBegin",
	  { FLD(F_U32, 1, reason), FLD(F_U32, 1, count), FLD(F_U16, 1, clr_instance) }, 3 },
	{ 0, 10, 1, PFC_CLR_GC_ALLOC_TICK, "GCAllocationTick",
	  { FLD(F_U32, 1, alloc_amount), FLD(F_U32, 1, alloc_kind), FLD(F_U16, 1, clr_instance),
	    FLD(F_U64, 2, alloc_amount64), FLD(F_PTR, 2, type_id), STR(2, type_name), FLD(F_U32, 2, heap_index),
	    FLD(F_PTR, 3, address), FLD(F_U64, 4, object_size) }, 9 },
	{ 0, 35, 0, PFC_CLR_GC_TRIGGERED, "GCTriggered",
	  { FLD(F_U32, 0, reason), FLD(F_U16, 0, clr_instance) }, 2 },
	{ 0, 80, 1, PFC_CLR_EXC_THROWN, "ExceptionThrown",
	  { STR(1, exception_type), STR(1, exception_message), FLD(F_PTR, 1, exception_eip),
	    FLD(F_U32, 1, hresult), FLD(F_U16, 1, exception_flags), FLD(F_U16, 1, clr_instance) }, 6 },
	{ 0, 143, 1, PFC_CLR_METHOD_LOAD, "MethodLoadVerbose",
	  { FLD(F_U64, 1, method_id), FLD(F_U64, 1, module_id), FLD(F_U64, 1, method_start),
	    FLD(F_U32, 1, method_size), FLD(F_U32, 1, method_token), FLD(F_U32, 1, method_flags),
	    STR(1, method_namespace), STR(1, method_name), STR(1, method_signature),
	    FLD(F_U16, 1, clr_instance), FLD(F_U64, 2, rejit_id) }, 11 },
	{ 0, 145, 1, PFC_CLR_JIT_START, "MethodJittingStarted",
	  { FLD(F_U64, 1, method_id), FLD(F_U64, 1, module_id), FLD(F_U32, 1, method_token),
	    FLD(F_U32, 1, il_size), STR(1, method_namespace), STR(1, method_name), STR(1, method_signature),
	    FLD(F_U16, 1, clr_instance) }, 8 },
	{ 0, 250, 0, PFC_CLR_EXC_CATCH, "ExceptionCatchStart",
	  { FLD(F_U64, 0, entry_eip), FLD(F_U64, 0, method_id), STR(0, method_name),
	    FLD(F_U16, 0, clr_instance) }, 4 },
	{ 0, 303, 0, PFC_CLR_ALLOC_SAMPLED, "AllocationSampled",
	  { FLD(F_U32, 0, alloc_kind), FLD(F_U16, 0, clr_instance), FLD(F_PTR, 0, type_id), STR(0, type_name),
	    FLD(F_PTR, 0, address), FLD(F_U64, 0, object_size), FLD(F_U64, 0, sampled_offset) }, 7 },
	{ 1, 144, 1, PFC_CLR_METHOD_DCEND, "MethodDCEndVerbose",
	  { FLD(F_U64, 1, method_id), FLD(F_U64, 1, module_id), FLD(F_U64, 1, method_start),
	    FLD(F_U32, 1, method_size), FLD(F_U32, 1, method_token), FLD(F_U32, 1, method_flags),
	    STR(1, method_namespace), STR(1, method_name), STR(1, method_signature),
	    FLD(F_U16, 1, clr_instance), FLD(F_U64, 2, rejit_id) }, 11 },
	{ 1, 146, 1, PFC_CLR_RUNDOWN_COMPLETE, "DCEndComplete", { FLD(F_U16, 1, clr_instance) }, 1 },
	{ 1, 154, 1, PFC_CLR_MODULE_DCEND, "ModuleDCEnd",
	  { FLD(F_U64, 1, module_id), FLD(F_U64, 1, assembly_id), FLD(F_U32, 1, module_flags),
	    SKIP32(1) /* Reserved1 */,
	    STR(1, il_path), STR(1, native_path), FLD(F_U16, 1, clr_instance) }, 7 },
};

/* Names of runtime events this file counts but does not decode, so that a count says what it is. */
static const struct {
	uint8_t rundown;
	uint16_t id;
	const char *name;
} names[] = {
	{ 0, 5, "GCCreateSegment" }, { 0, 6, "GCFreeSegment" }, { 0, 13, "GCFinalizersEnd" },
	{ 0, 14, "GCFinalizersBegin" }, { 0, 142, "MethodUnload" }, { 0, 144, "MethodUnloadVerbose" },
	{ 0, 151, "DomainModuleLoad" }, { 0, 152, "ModuleLoad" }, { 0, 153, "ModuleUnload" },
	{ 0, 154, "AssemblyLoad" }, { 0, 155, "AssemblyUnload" }, { 0, 156, "AppDomainLoad" },
	{ 0, 157, "AppDomainUnload" }, { 0, 187, "RuntimeInformationStart" },
	{ 0, 251, "ExceptionCatchStop" }, { 0, 256, "ExceptionThrownStop" },
	{ 1, 148, "DCEndInit" }, { 1, 150, "MethodDCEndILToNativeMap" }, { 1, 152, "DomainModuleDCEnd" },
	{ 1, 156, "AssemblyDCEnd" }, { 1, 158, "AppDomainDCEnd" }, { 1, 187, "RuntimeInformationDCStart" },
};

/* 0 runtime, 1 rundown, -1 another provider */
static int provider_of(const char *p)
{
	if (strcmp(p, PFC_CLR_PROVIDER) == 0)
		return 0;
	if (strcmp(p, PFC_CLR_RUNDOWN_PROVIDER) == 0)
		return 1;
	return -1;
}

static const struct evdef *def_find(int prov, uint32_t id)
{
	size_t i;

	for (i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
		if (defs[i].rundown == prov && defs[i].id == id)
			return &defs[i];
	return NULL;
}

const char *pfc_clr_event_name(const char *provider, uint32_t event_id)
{
	int prov = provider_of(provider);
	const struct evdef *d;
	size_t i;

	if (prov < 0)
		return NULL;
	d = def_find(prov, event_id);
	if (d)
		return d->name;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].rundown == prov && names[i].id == event_id)
			return names[i].name;
	return NULL;
}

enum pfc_clr_kind pfc_clr_kind(const struct pfc_nettrace_meta *m)
{
	const struct evdef *d;
	int prov;

	if (!m || (prov = provider_of(m->provider)) < 0 || !(d = def_find(prov, m->event_id)) ||
	    m->version < d->min_version)
		return PFC_CLR_UNKNOWN;
	return d->kind;
}

int pfc_clr_decode(const struct pfc_nettrace_event *ev, uint32_t pointer_size,
		   struct pfc_clr_event *out, struct pfc_error *err)
{
	const struct evdef *d;
	struct pfc_cursor c;
	int prov, i;

	out->kind = PFC_CLR_UNKNOWN;
	out->name = NULL;
	if (!ev->meta)
		return PFC_CLR_UNKNOWN;
	prov = provider_of(ev->meta->provider);
	if (prov < 0)
		return PFC_CLR_UNKNOWN;
	d = def_find(prov, ev->meta->event_id);
	if (!d || ev->meta->version < d->min_version)
		return PFC_CLR_UNKNOWN;

	memset(out, 0, sizeof(*out));
	out->kind = d->kind;
	out->name = d->name;
	out->version = ev->meta->version;

	pfc_cur_init(&c, ev->payload, ev->payload_len, 0);
	for (i = 0; i < d->nf; i++) {
		const struct field *f = &d->f[i];
		char *dst = (char *)out + f->off;
		uint64_t v = 0;
		uint16_t v16;
		uint32_t v32;

		if (f->since > ev->meta->version)
			break;
		switch (f->type) {
		case F_U16:
			if (pfc_cur_need(&c, 2)) {
				v16 = pfc_ld16(c.p, c.swap);
				c.p += 2;
				memcpy(dst, &v16, 2);
			}
			break;
		case F_U32:
			v32 = pfc_cur_u32(&c);
			memcpy(dst, &v32, 4);
			break;
		case F_U64:
			v = pfc_cur_u64(&c);
			memcpy(dst, &v, 8);
			break;
		case F_PTR:
			v = pointer_size == 4 ? pfc_cur_u32(&c) : pfc_cur_u64(&c);
			memcpy(dst, &v, 8);
			break;
		case F_STR:
			pfc_nettrace_utf16(&c, dst, f->cap);
			break;
		case F_GUID:
			pfc_cur_bytes(&c, 16);
			break;
		case F_SKIP32:
			pfc_cur_u32(&c);
			break;
		}
		if (c.bad) {
			out->kind = PFC_CLR_UNKNOWN;
			return PFC_FAIL(err, CORRUPT, ev->offset, "%s payload of %u bytes is shorter than its version %u layout",
					d->name, ev->payload_len, ev->meta->version);
		}
	}
	/* what is left is what a newer version added: read over */
	return d->kind;
}

static int count_index(struct pfc_clr_counts *c, const struct pfc_nettrace_event *ev)
{
	const char *prov = ev->meta ? ev->meta->provider : "";
	uint32_t id = ev->meta ? ev->meta->event_id : ev->meta_id;
	uint32_t ver = ev->meta ? ev->meta->version : 0;
	const char *name;
	struct pfc_clr_count *e;
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->v[i].event_id == id && c->v[i].version == ver && strcmp(c->v[i].provider, prov) == 0)
			return (int)i;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 32;
		struct pfc_clr_count *n = realloc(c->v, ncap * sizeof(*n));
		if (!n)
			return -PFC_ERR_NOMEM;
		c->v = n;
		c->cap = ncap;
	}
	name = ev->meta && ev->meta->name[0] ? ev->meta->name : pfc_clr_event_name(prov, id);
	if (!ev->meta)
		name = "(no metadata)";
	e = &c->v[c->n];
	memset(e, 0, sizeof(*e));
	e->provider = strdup(prov);
	e->name = strdup(name ? name : "");
	if (!e->provider || !e->name) {
		free(e->provider);
		free(e->name);
		return -PFC_ERR_NOMEM;
	}
	e->event_id = id;
	e->version = ver;
	return (int)c->n++;
}

int pfc_clr_counts_add(struct pfc_clr_counts *c, const struct pfc_nettrace_event *ev, int kind)
{
	int i = count_index(c, ev);

	if (i < 0)
		return i;
	c->v[i].n++;
	if (kind < 0)
		c->v[i].bad++;
	else if (kind > 0)
		c->v[i].decoded = 1;
	return 0;
}

static int count_cmp(const void *a, const void *b)
{
	const struct pfc_clr_count *x = a, *y = b;
	int r = strcmp(x->provider, y->provider);

	if (r)
		return r;
	if (x->event_id != y->event_id)
		return x->event_id < y->event_id ? -1 : 1;
	return x->version < y->version ? -1 : x->version > y->version;
}

void pfc_clr_counts_sort(struct pfc_clr_counts *c)
{
	if (c->n)
		qsort(c->v, c->n, sizeof(*c->v), count_cmp);
}

void pfc_clr_counts_free(struct pfc_clr_counts *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->v[i].provider);
		free(c->v[i].name);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}
