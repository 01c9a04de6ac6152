/*
 * callchain.c - the frames of a sample: its callchain walked context by context, each
 * address looked up in its thread's maps or the kernel's (ip -> (DSO, address) frame), the
 * JIT sources asked where perf has no name (--resolve-jit), the cache of a user address's
 * frame in unchanged maps, and the user part of an LBR call stack.  It does not name frames
 * (symbolize.c), unwind DWARF stacks (unwind_user.c) nor aggregate (sample.c).
 */
#include <stdlib.h>
#include <string.h>
#include "converter/callchain.h"
#include "converter/kernel.h"
#include "converter/session.h"
#include "converter/symbolize.h"
#include "converter/unwind_user.h"
#include "converter/jit/perfmap.h"
#include "converter/jit/r2rmap.h"
#include "converter/native/symtab.h"
#include "converter/util/bytes.h"

static inline int push_id(struct pfc_session *s, uint32_t *n, uint32_t id)
{
	if (*n == s->callchain.frames_cap) {
		size_t cap = s->callchain.frames_cap ? s->callchain.frames_cap * 2 : 256;
		uint32_t *nb = realloc(s->callchain.frames, cap * sizeof(*nb));
		if (!nb)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "frame buffer");
		s->callchain.frames = nb;
		s->callchain.frames_cap = cap;
	}
	s->callchain.frames[(*n)++] = id;
	return 0;
}

static int push_frame(struct pfc_session *s, uint32_t *n, const struct pfc_dso *dso, uint64_t addr, int kernel)
{
	uint32_t id = pfc_stacks_frame(&s->stacks, dso, addr, kernel);

	if (id == UINT32_MAX)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "frame table");
	return push_id(s, n, id);
}

/*
 * Whether perf 6.1 names the code at ip of a user mapping by itself: from the ELF file's
 * symbols (perf inject's jitted-*.so included) or from the perf map of an anonymous
 * region.  A jitdump read directly is looked up only where perf has no name, so that the
 * default never names a frame otherwise than perf does.  It loads the DSO's symbols, once,
 * as symbolization would.
 */
static int perf_names(struct pfc_session *s, const struct pfc_map *map, uint64_t ip)
{
	struct pfc_dso *d = (struct pfc_dso *)map->dso;
	const char *name;
	size_t len;
	uint64_t start;

	switch (d->kind) {
	case PFC_DSO_FILE:
	case PFC_DSO_VDSO:
		if (d->jitted)
			return 1;
		if (!d->loaded)
			pfc_symbolize_dso(s, d);
		return d->r2r == PFC_R2R_NONE && d->syms &&
		       pfc_symtab_find(d->syms, map->identity ? ip : ip - map->start + map->pgoff);
	case PFC_DSO_PERFMAP:
		if (!d->loaded)
			pfc_symbolize_dso(s, d);
		return d->perfmap && pfc_perfmap_resolve(d->perfmap, ip, 0, &name, &len, &start) > 0;
	default:
		return 0;
	}
}

/* The frame at ip in map (NULL: in no map), kernel or user. */
int pfc_callchain_add_map_frame(struct pfc_session *s, struct pfc_thread *th, uint32_t *n, int kernel, uint64_t ip,
			 const struct pfc_map *map)
{
	if (!map)
		return push_frame(s, n, NULL, ip, kernel);
	/*
	 * JIT code where perf 6.1 leaves it unresolved, so only on request (--resolve-jit;
	 * the default output stays perf's):
	 *  - .NET 7+ (W^X) runs JIT code from "/memfd:doublemapper (deleted)" mappings, which
	 *    perf does not count as anonymous, so it never consults the perf map for them;
	 *  - perf reads a jitdump only after perf inject --jit; here it is read directly, and
	 *    its frames are named as perf inject names them (jitted-PID-N.so), so that the
	 *    output equals perf's on the injected file;
	 *  - a container runtime names its files with its own pid (jitsym.c).
	 * A jitdump also describes code outside JIT regions (V8's embedded builtins live in
	 * the node binary, CoreCLR's [PreJIT] code in ReadyToRun images), and perf inject's
	 * mappings cover whatever was there, so in a process with a jitdump every user
	 * address is looked up in it first.
	 * The address looked up is the absolute ip: perf maps and jitdumps hold the
	 * executable (RX) addresses.
	 */
	if (s->opts->resolve_jit && !kernel && map->dso && pfc_jitsyms_wants(&s->jit, th->pid, map) &&
	    !perf_names(s, map, ip)) {
		const struct pfc_dso *dso = map->dso;
		uint64_t addr = 0;
		int ret = pfc_jitsyms_lookup(&s->jit, th->pid, map, ip, s->callchain.time, s->callchain.have_time, &dso, &addr,
					     &s->callchain.timed);
		if (ret < 0)
			return ret;
		if (dso != map->dso)
			return push_frame(s, n, dso, addr, kernel);
		/* JIT code no perf map or jitdump names: the runtime's own method events, when
		 * --events brought the process's stream (evsample.c) */
		if (pfc_dso_is_jit_region(map->dso->kind) && s->evs.events.n) {
			int ret = pfc_evsample_jit(s, th->pid, ip, &dso);
			if (ret < 0)
				return ret;
			if (ret)
				return push_frame(s, n, dso, ip, kernel);
		}
	}
	return push_frame(s, n, map->dso, map->identity ? ip : ip - map->start + map->pgoff, kernel);
}

/* One frame at ip, looked up: its map in the thread's address space (user) or the kernel's. */
static int add_ip_lookup(struct pfc_session *s, struct pfc_thread *th, uint32_t *n, int cpumode, uint64_t ip)
{
	const struct pfc_map *map = NULL;
	int kernel = cpumode == PERF_RECORD_MISC_KERNEL;

	if (kernel)
		map = pfc_kernel_touch(s, th, ip);
	else if (cpumode == PERF_RECORD_MISC_USER)
		map = pfc_machine_find_map(&s->machine, th, 0, ip);
	return pfc_callchain_add_map_frame(s, th, n, kernel, ip, map);
}

/*
 * A user address's frame, once found, for the mappings it was found in: a .NET process's
 * frames cost a map lookup, perf's symbol lookup, a jitdump and a perf-map lookup each, and
 * the same few thousand addresses come back sample after sample (a quarter of converting
 * an ASP.NET recording).  Direct-mapped; an answer that depended on the time (a jitdump
 * read by time, or not yet checked against the process) is not kept.
 */
#define ADDR_CACHE_BITS 15
struct pfc_addr_cache_ent {
	const struct pfc_maps *maps;
	uint64_t gen, ip;
	uint32_t id;                  /* frame id + 1; 0: empty */
};

static struct pfc_addr_cache_ent *addr_cache_slot(struct pfc_session *s, const struct pfc_maps *maps, uint64_t ip)
{
	uint64_t h = (ip ^ (uint64_t)(uintptr_t)maps * 0x9E3779B97F4A7C15ULL) * 0xbf58476d1ce4e5b9ULL;

	if (!s->callchain.addr_cache &&
	    !(s->callchain.addr_cache = calloc((size_t)1 << ADDR_CACHE_BITS, sizeof(*s->callchain.addr_cache))))
		return NULL;
	return &s->callchain.addr_cache[h >> (64 - ADDR_CACHE_BITS)];
}

static int add_ip(struct pfc_session *s, struct pfc_thread *th, uint32_t *n, int cpumode, uint64_t ip)
{
	struct pfc_addr_cache_ent *e;
	int timed = s->callchain.timed, ret, kernel = 0;
	uint32_t before = *n;
	const struct pfc_maps *maps;
	uint64_t gen;

	if (cpumode == PERF_RECORD_MISC_USER && th->maps) {
		maps = th->maps;
		gen = maps->cgen;
	} else if (cpumode == PERF_RECORD_MISC_KERNEL && s->kernel.loaded && !s->kernel.pending &&
		   s->machine.have_kernel_map) {
		/* the kernel's frames, the same in every thread once its map and symbols are in,
		 * under a key no thread's maps have */
		maps = (const struct pfc_maps *)&s->machine;
		gen = s->machine.kgen;
		kernel = 1;
	} else {
		return add_ip_lookup(s, th, n, cpumode, ip);
	}
	if (!(e = addr_cache_slot(s, maps, ip))) {
		if (!kernel)
			pfc_maps_watch(th->maps, ip);
		return add_ip_lookup(s, th, n, cpumode, ip);
	}
	if (e->id && e->ip == ip && e->maps == maps && e->gen == gen)
		return push_id(s, n, e->id - 1);
	/* a user address looked up under the maps' cgen, which this cache and the callchain
	 * cache may keep: the maps watch it (the lookup finds the same map) */
	if (!kernel)
		pfc_maps_watch(th->maps, ip);
	s->callchain.timed = 0;
	ret = add_ip_lookup(s, th, n, cpumode, ip);
	/* with --resolve-jit, a process's jitdump, once read, is looked up for its other
	 * mappings too: only then do its answers stay.  A kernel frame is kept only if looking
	 * it up left the kernel's map as it was. */
	if (ret == 0 && !s->callchain.timed && *n == before + 1 &&
	    (kernel ? s->machine.kgen == gen && !s->kernel.pending :
	     !s->opts->resolve_jit || pfc_jitsyms_settled(&s->jit, th->pid))) {
		e->maps = maps;
		e->gen = gen;
		e->ip = ip;
		e->id = s->callchain.frames[*n - 1] + 1;
	}
	s->callchain.timed |= timed;
	return ret;
}

/* The user part of an LBR call stack, as perf 6.1 builds it (sample.c says when). */
static int add_lbr(struct pfc_session *s, struct pfc_thread *th, uint32_t *n, const struct pfc_sample *smp,
		   int swap)
{
	uint64_t i;
	int ret;

	if ((ret = add_ip(s, th, n, PERF_RECORD_MISC_USER, pfc_ld64(smp->branch + 8, swap))) < 0)
		return ret;
	for (i = 0; i < smp->branch_nr; i++)
		if ((ret = add_ip(s, th, n, PERF_RECORD_MISC_USER, pfc_ld64(smp->branch + i * 24, swap))) < 0)
			return ret;
	return 0;
}

int pfc_callchain_push(struct pfc_session *s, uint32_t *n, uint32_t id)
{
	return push_id(s, n, id);
}

/*
 * Where a sample becomes frames: its callchain walked as perf 6.1's
 * thread__resolve_callchain_sample walks it (context markers switch between kernel and user
 * maps, an unknown marker discards the chain, at most max_stack frames are kept, each address
 * is looked up as it was recorded), or its ip alone; then, with --call-graph dwarf, the user
 * part unwound from the copied stack (unwind_user.c).  The frame ids go to
 * s->callchain.frames; *n counts them.
 */
int pfc_callchain_sample(struct pfc_session *s, struct pfc_evsel *ev, struct pfc_thread *th,
			 const struct pfc_sample *smp, int lbr, uint32_t *n)
{
	int swap = s->rd.swap, ret, user_frames = 0;

	if (smp->flags & PFC_S_HAS_CALLCHAIN) {
		int cpumode = PERF_RECORD_MISC_USER, entries = 0;
		uint64_t i;

		/* perf resolves the sample's own ip (machine__resolve) before its callchain: the
		 * first kernel sample loads the kernel's symbols there, and every frame of the
		 * chain is looked up in the map they shrank (an address of another architecture's
		 * kernel, outside this machine's kallsyms range, is then in no map) */
		if (!s->kernel.loaded && (smp->misc & PFC_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
			pfc_kernel_touch(s, th, smp->ip);
		for (i = 0; i < smp->callchain_nr && entries < s->opts->max_stack; i++) {
			uint64_t ip = pfc_chain_ip(smp, i, swap);
			if (ip >= PFC_CONTEXT_MAX) {
				if (ip == PFC_CONTEXT_HV)
					cpumode = PERF_RECORD_MISC_HYPERVISOR;
				else if (ip == PFC_CONTEXT_KERNEL)
					cpumode = PERF_RECORD_MISC_KERNEL;
				else if (ip == PFC_CONTEXT_USER && lbr) {
					if ((ret = add_lbr(s, th, n, smp, swap)) < 0)
						return ret;
					break;
				} else if (ip == PFC_CONTEXT_USER)
					cpumode = PERF_RECORD_MISC_USER;
				else {	/* perf discards a chain with a context it does not know */
					*n = 0;
					break;
				}
				continue;
			}
			entries++;
			if (cpumode == PERF_RECORD_MISC_USER)
				user_frames++;
			if ((ret = add_ip(s, th, n, cpumode, ip)) < 0)
				return ret;
		}
	} else {
		int cpumode = smp->misc & PFC_MISC_CPUMODE_MASK;
		if ((ret = add_ip(s, th, n, cpumode, smp->ip)) < 0)
			return ret;
	}
	/* --call-graph dwarf: the kernel gave only the kernel part; the user part is
	 * unwound from the copied stack, as perf does after the kernel's frames */
	if ((ev->sample_type & PERF_SAMPLE_STACK_USER) && (ev->sample_type & PERF_SAMPLE_REGS_USER) &&
	    (smp->flags & PFC_S_HAS_CALLCHAIN) && !user_frames)
		return pfc_unwind_user(s, th, smp, n);
	return 0;
}

void pfc_callchain_exit(struct pfc_session *s)
{
	free(s->callchain.frames);
	free(s->callchain.addr_cache);
	memset(&s->callchain, 0, sizeof(s->callchain));
}
