/*
 * unwind_user.c - --call-graph dwarf (perf's unwind-libdw.c and
 * thread__resolve_callchain_unwind): the user part of a stack unwound from the sample's copy
 * of it, each DSO's call frame information opened at first use, and the cache of stacks
 * already unwound.  It does not walk CFI itself (native/unwind.c) nor name the frames'
 * inlined functions (inline.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "converter/unwind_user.h"
#include "converter/callchain.h"
#include "converter/inline.h"
#include "converter/session.h"
#include "converter/native/symtab.h"
#include "converter/native/unwind.h"
#include "converter/util/bytes.h"
#include "converter/util/grow.h"
#include "converter/util/hashtab.h"

/* A DSO's call frame information, opened the first time a stack crosses it. */
struct pfc_unwind_dso {
	struct pfc_cfi *cfi;
	uint8_t tried;
};

struct pfc_stack_cache_ent {     /* one user stack already unwound */
	uint64_t h1, h2;
	const struct pfc_maps *maps;
	uint64_t gen;
	uint32_t first, n;            /* frame ids in cache_frames */
	uint8_t used;
};

static struct pfc_unwind_dso *unwind_dso(struct pfc_session *s, const struct pfc_dso *d)
{
	return pfc_grow_at(&s->unwind.dsos, &s->unwind.nr_dsos, d->id, sizeof(struct pfc_unwind_dso), 64);
}

void pfc_unwind_exit(struct pfc_session *s)
{
	size_t i;

	for (i = 0; i < s->unwind.nr_dsos; i++)
		pfc_cfi_close(s->unwind.dsos[i].cfi);
	free(s->unwind.dsos);
	free(s->unwind.cache);
	free(s->unwind.cache_frames);
	free(s->unwind.ips);
	memset(&s->unwind, 0, sizeof(s->unwind));
}

/*
 * An Android library mapped straight from its .apk, which keeps it uncompressed: the map's
 * name is simpleperf's "/data/app/x/base.apk!/lib/arm64-v8a/libx.so", its offset the .apk's.
 * The build-id, when the recording gives one, is the library's: checked here, not by files.c.
 */
static struct pfc_cfi *apk_cfi(struct pfc_session *s, const struct pfc_dso *d, const char **why)
{
	const char *bang = strstr(d->name, ".apk!/");
	struct pfc_found found;
	struct pfc_cfi *c;
	uint8_t id[20];
	char apk[4096];
	size_t n = (size_t)(bang - d->name) + 4;
	int k;

	*why = "no file";
	if (n >= sizeof(apk))
		return NULL;
	memcpy(apk, d->name, n);
	apk[n] = 0;
	if (!pfc_files_find(s->files, PFC_FILES_ROOT, apk, 0, &found) ||
	    !(c = pfc_cfi_open_in_zip(found.path, bang + 6, why)))
		return NULL;
	if (d->build_id_len && ((k = pfc_cfi_build_id(c, id, sizeof(id))) <= 0 ||
				!pfc_build_id_equal(d->build_id, (int)d->build_id_len, id, k))) {
		*why = "another build-id";
		pfc_cfi_close(c);
		return NULL;
	}
	pfc_files_note(s->files, PFC_FILES_ROOT, apk, "call frame information", -1, NULL, 0);
	return c;
}

/* The CFI of a file DSO, opened at first use: perf reads it from the binary itself. */
struct pfc_cfi *pfc_unwind_dso_cfi(struct pfc_session *s, const struct pfc_dso *d)
{
	struct pfc_unwind_dso *dd;
	struct pfc_found found;
	const char *why = "no file";

	if (d->kind != PFC_DSO_FILE || d->jitted)
		return NULL;
	dd = unwind_dso(s, d);
	if (!dd)
		return NULL;
	if (!dd->tried) {
		dd->tried = 1;
		/* perf reads it from the binary itself; a build-id proves it is the recorded one */
		if (strstr(d->name, ".apk!/"))	/* perf 6.1 finds no file of that name */
			dd->cfi = s->opts->perf_compat ? NULL : apk_cfi(s, d, &why);
		else if (pfc_files_find(s->files, PFC_FILES_ROOT, d->name, d->build_id_len ? PFC_FILES_VERIFIED : 0, &found) &&
		    (dd->cfi = pfc_cfi_open(found.path, &why)))
			pfc_files_note(s->files, PFC_FILES_ROOT, d->name, "call frame information", -1,
				       d->build_id, d->build_id_len);
		if (!dd->cfi && s->opts->verbose && s->opts->log)
			fprintf(s->opts->log, "perfconv: '%s': no call frame information (%s)\n", d->name, why);
	}
	return dd->cfi;
}

struct find_arg {
	struct pfc_session *s;
	struct pfc_thread *th;
};

static int unwind_find(void *arg, uint64_t addr, struct pfc_unwind_map *out)
{
	struct find_arg *fa = arg;
	const struct pfc_map *map = pfc_machine_find_map(&fa->s->machine, fa->th, 0, addr);

	if (!map)
		return -1;
	out->start = map->start;
	out->end = map->end;
	out->pgoff = map->pgoff;
	out->cfi = map->dso ? pfc_unwind_dso_cfi(fa->s, map->dso) : NULL;
	/* ReadyToRun code in a PE image has no CFI either, and keeps frame pointers like the
	 * JIT's code: crossed the same way (a wait in CoreLib's Monitor.Enter reaches its caller) */
	out->jit = !map->dso || map->identity || pfc_dso_is_jit_region(map->dso->kind) ||
		   map->dso->kind == PFC_DSO_JITCODE || map->dso->kind == PFC_DSO_PE || map->dso->jitted;
	return 0;
}

/*
 * Two independent 64-bit hashes of the registers and the stack bytes: the cache key.
 * Every byte of every copy passes through here (the recording's bulk), so the stack
 * words go round four independent lanes per hash: one chain would wait on each multiply.
 */
static void stack_hash2(const struct pfc_sample *smp, uint64_t *h1, uint64_t *h2)
{
	uint64_t a = 0x243f6a8885a308d3ULL ^ smp->regs_user_mask, b = 0x13198a2e03707344ULL ^ smp->stack_user_dyn_size;
	uint64_t la[4] = { 0x452821e638d01377ULL, 0xbe5466cf34e90c6cULL, 0xc0ac29b7c97c50ddULL, 0x3f84d5b5b5470917ULL };
	uint64_t lb[4] = { 0x9216d5d98979fb1bULL, 0xd1310ba698dfb5acULL, 0x2ffd72dbd01adfb7ULL, 0xb8e1afed6a267e96ULL };
	size_t i, k, nr = (size_t)__builtin_popcountll(smp->regs_user_mask) * 8, ns = smp->stack_user_dyn_size;
	uint64_t w;

	for (i = 0; i + 8 <= nr; i += 8) {
		memcpy(&w, smp->regs_user + i, 8);
		a = pfc_hashtab_mix(a, w);
		b = pfc_hashtab_mix(b + i, w ^ 0xa5a5a5a5a5a5a5a5ULL);
	}
	for (i = 0; i + 32 <= ns; i += 32) {
		for (k = 0; k < 4; k++) {
			memcpy(&w, smp->stack_user + i + k * 8, 8);
			la[k] = pfc_hashtab_mix(la[k], w);
			lb[k] = (lb[k] ^ w) * 0xff51afd7ed558ccdULL + (lb[k] >> 31);
		}
	}
	for (k = 0; k < 4; k++) {
		a = pfc_hashtab_mix(a, la[k]);
		b = pfc_hashtab_mix(b, lb[k] ^ 0x5bd1e9955bd1e995ULL);
	}
	for (; i + 8 <= ns; i += 8) {
		memcpy(&w, smp->stack_user + i, 8);
		a = pfc_hashtab_mix(a, w);
		b = (b ^ w) * 0xff51afd7ed558ccdULL + (b >> 31);
	}
	for (; i < ns; i++) {
		a = pfc_hashtab_mix(a, smp->stack_user[i]);
		b = pfc_hashtab_mix(b, smp->stack_user[i] + 0x100);
	}
	*h1 = a;
	*h2 = b ^ (b >> 33);
}

static struct pfc_stack_cache_ent *stack_cache_slot(struct pfc_session *s, uint64_t h1, uint64_t h2,
						     const struct pfc_maps *maps)
{
	size_t j;

	if (!s->unwind.cache_cap)
		return NULL;
	for (j = pfc_hashtab_start(h1, s->unwind.cache_cap); s->unwind.cache[j].used;
	     j = pfc_hashtab_next(j, s->unwind.cache_cap)) {
		struct pfc_stack_cache_ent *e = &s->unwind.cache[j];
		if (e->h1 == h1 && e->h2 == h2 && e->maps == maps && e->gen == maps->gen)
			return e;
	}
	return &s->unwind.cache[j];
}

static int stack_cache_used(const void *slot, void *ctx)
{
	(void)ctx;
	return ((const struct pfc_stack_cache_ent *)slot)->used;
}

static uint64_t stack_cache_hash(const void *slot, void *ctx)
{
	(void)ctx;
	return ((const struct pfc_stack_cache_ent *)slot)->h1;
}

static const struct pfc_hashtab_ops stack_cache_ops = {
	.slot_size = sizeof(struct pfc_stack_cache_ent), .first_cap = 1024,
	.used = stack_cache_used, .hash = stack_cache_hash,
};

static int stack_cache_insert(struct pfc_session *s, uint64_t h1, uint64_t h2, const struct pfc_maps *maps,
			      const uint32_t *frames, uint32_t n)
{
	struct pfc_stack_cache_ent *e;

	if (pfc_hashtab_full(s->unwind.cache_count, s->unwind.cache_cap) &&
	    pfc_hashtab_grow(&s->unwind.cache, &s->unwind.cache_cap, &stack_cache_ops, NULL) < 0)
		return -1;
	if (s->unwind.nr_cache_frames + n > s->unwind.cap_cache_frames) {
		size_t cap = s->unwind.cap_cache_frames ? s->unwind.cap_cache_frames * 2 : 4096;
		uint32_t *nf;
		while (cap < s->unwind.nr_cache_frames + n)
			cap *= 2;
		nf = realloc(s->unwind.cache_frames, cap * sizeof(*nf));
		if (!nf)
			return -1;
		s->unwind.cache_frames = nf;
		s->unwind.cap_cache_frames = cap;
	}
	e = stack_cache_slot(s, h1, h2, maps);
	if (e->used)
		return 0;
	e->used = 1;
	e->h1 = h1;
	e->h2 = h2;
	e->maps = maps;
	e->gen = maps->gen;
	e->first = (uint32_t)s->unwind.nr_cache_frames;
	e->n = n;
	if (n)
		memcpy(s->unwind.cache_frames + s->unwind.nr_cache_frames, frames, n * sizeof(*frames));
	s->unwind.nr_cache_frames += n;
	s->unwind.cache_count++;
	return 0;
}

#define STACK_CACHE_WINDOW 512	/* a quarter of hits shows in 512 stacks; each costs a hash of its copy */
#define STACK_CACHE_OFF (64 * 1024)

/*
 * The architecture whose registers a sample's user registers are (feature ARCH; without it,
 * x86-64 as ever).  perf 6.1 on x86-64 has no unwinder for another one ("unwind: target
 * platform=arm64 is not supported"): perf-compat unwinds no user stack there (perf_unwinds).
 */
static int unwind_arch(struct pfc_session *s)
{
	const struct pfc_blob *b = &s->rd.feat[PFC_FEAT_ARCH];
	struct pfc_cursor c;
	const char *a;
	uint32_t len;

	if (s->unwind.arch >= 0)
		return s->unwind.arch;
	s->unwind.arch = PFC_UNWIND_X86_64;
	if (!pfc_feat_has(&s->rd, PFC_FEAT_ARCH))
		return s->unwind.arch;
	pfc_cur_init(&c, b->data, b->size, s->rd.swap);
	len = pfc_cur_u32(&c);
	a = (const char *)pfc_cur_bytes(&c, len);
	if (a && len)
		s->unwind.arch = (int)pfc_unwind_arch_of(a, strnlen(a, len));
	return s->unwind.arch;
}

/*
 * perf-compat: perf 6.1 gives an address space its DWARF unwinder only when one of its maps
 * has an ELF file perf can read, to learn its class (unwind__prepare_access, at each map's
 * insertion, until one does); without one, a sample's user stack gets no frame at all, not
 * even its ip.  A static binary absent here, beside a [vdso] whose build-id the recording
 * gives (perf then looks for that image in the build-id cache only), is such a process.
 * Readable here: a file with call frame information, or a [vdso] without a build-id (perf
 * reads its own).  Once one is seen, the address space keeps it, as perf's does.
 */
static int perf_unwinds(struct pfc_session *s, struct pfc_thread *th)
{
	struct pfc_maps *ms = th->maps;
	size_t i;

	if (!s->opts->perf_compat || !ms || ms->unwindable)
		return 1;
	if (unwind_arch(s) != PFC_UNWIND_X86_64)
		return 0;
	for (i = 0; i < ms->n && !ms->unwindable; i++) {
		const struct pfc_dso *d = ms->v[i].dso;
		if (d && ((d->kind == PFC_DSO_VDSO && !d->build_id_len) ||
			  (d->kind == PFC_DSO_FILE && pfc_unwind_dso_cfi(s, d))))
			ms->unwindable = 1;
	}
	return ms->unwindable;
}

/*
 * perf's thread__resolve_callchain_unwind: the user stack of a sample recorded with
 * REGS_USER and STACK_USER, unwound and appended after the kernel part.  A stack seen
 * before (same registers, same bytes, same address space) gets the frames it got then.
 */
int pfc_unwind_user(struct pfc_session *s, struct pfc_thread *th, const struct pfc_sample *smp, uint32_t *n)
{
	struct pfc_unwind_in in = {
		/* the sample's ip stands for the pc only of a sample taken in user mode */
		.arch = unwind_arch(s), .abi = smp->regs_user_abi,
		.ip = (smp->misc & PFC_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER ? smp->ip : 0,
		.regs = smp->regs_user, .mask = smp->regs_user_mask, .swap = s->rd.swap,
		.stack = smp->stack_user, .stack_size = smp->stack_user_dyn_size,
		.beyond_perf = s->opts->resolve_jit,
	};
	struct pfc_unwind_out out = { 0 };
	struct find_arg fa = { s, th };
	struct pfc_stack_cache_ent *e;
	uint64_t h1, h2;
	uint32_t n0 = *n;
	int i, ret, timed = s->callchain.timed;

	if (!(smp->flags & PFC_S_HAS_REGS_USER) || !(smp->flags & PFC_S_HAS_STACK_USER) ||
	    !smp->stack_user_dyn_size || !perf_unwinds(s, th))
		return 0;
	/*
	 * The key reads every byte of the copy, the unwinder only the frames it walks: about
	 * as much work as unwinding and naming the stack again.  So the cache pays only where
	 * stacks repeat (a thread waiting, a tight loop): each window of STACK_CACHE_WINDOW lookups
	 * with fewer than a quarter of hits turns it off for the next STACK_CACHE_OFF stacks.  The
	 * output is the same either way.
	 */
	if (!s->unwind.cache_window)
		s->unwind.cache_window = s->tuning->uc_window ? s->tuning->uc_window : STACK_CACHE_WINDOW;
	if (s->unwind.cache_off) {
		s->unwind.cache_off--;
		e = NULL;
		h1 = h2 = 0;
	} else {
		stack_hash2(smp, &h1, &h2);
		h2 ^= (uint64_t)in.beyond_perf;
		h1 ^= in.arch == PFC_UNWIND_UNKNOWN ? in.ip : 0;	/* its one frame is the ip */
		e = stack_cache_slot(s, h1, h2, th->maps);
		s->unwind.cache_hits += e && e->used;
		if (++s->unwind.cache_probed == s->unwind.cache_window) {
			if (s->unwind.cache_hits < s->unwind.cache_window / 4)
				s->unwind.cache_off = s->unwind.cache_window * (STACK_CACHE_OFF / STACK_CACHE_WINDOW);
			s->unwind.cache_probed = s->unwind.cache_hits = 0;
		}
	}
	if (e && e->used) {
		s->st.nr_dwarf_cache_hits++;
		s->st.nr_dwarf_unwound++;
		for (i = 0; i < (int)e->n; i++)
			if ((ret = pfc_callchain_push(s, n, s->unwind.cache_frames[e->first + i])) < 0)
				return ret;
		return 0;
	}
	if (!s->unwind.ips &&
	    !(s->unwind.ips = malloc(sizeof(*s->unwind.ips) * (size_t)(s->opts->max_stack > 0 ? s->opts->max_stack : 1))))
		return PFC_FAIL_NOOFF(s->err, NOMEM, "unwind buffer");
	out.ips = s->unwind.ips;
	out.max = s->opts->max_stack > 0 ? s->opts->max_stack : 1;
	pfc_unwind_walk(&in, unwind_find, &fa, &out);
	s->st.nr_dwarf_unwound++;
	s->st.nr_dwarf_fp_frames += (uint64_t)out.fp_frames;
	switch (out.end) {
	case PFC_UNWIND_END_STACK:
		s->st.nr_dwarf_cut_stack++;
		break;
	case PFC_UNWIND_END_NOREGS:
		s->st.nr_dwarf_bad_regs++;
		break;
	case PFC_UNWIND_END_BADCFI:
		s->st.nr_dwarf_bad_cfi++;
		break;
	default:
		break;
	}
	for (i = 0; i < out.n; i++) {
		/* perf skips a zero address, and keeps everything else, unresolved or not */
		if (!out.ips[i])
			continue;
		if ((ret = pfc_inline_add_frame(s, th, n, out.ips[i])) < 0)
			return ret;
	}
	s->callchain.timed |= timed;
	/* no frame yet in the whole sample leaves the frame buffer NULL: no pointer into it */
	if (!s->callchain.timed && !s->unwind.cache_off &&
	    stack_cache_insert(s, h1, h2, th->maps, s->callchain.frames ? s->callchain.frames + n0 : NULL, *n - n0) < 0)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "unwind cache");
	return 0;
}
