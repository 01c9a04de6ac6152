/*
 * inline.c - the inlined frames perf adds in front of a DWARF-unwound user frame (perf's
 * srcline.c, append_inlines): addr2line's answers for (DSO, address), asked once each, from
 * the file the DSO's symbols came from or its separate debug file.  It does not read DWARF
 * (native/a2l.c) nor unwind (unwind_user.c).
 */
#include <stdlib.h>
#include <string.h>
#include "converter/inline.h"
#include "converter/util/hex.h"
#include "converter/callchain.h"
#include "converter/session.h"
#include "converter/symbolize.h"
#include "converter/native/a2l.h"
#include "converter/native/symtab.h"
#include "converter/util/grow.h"
#include "converter/util/hashtab.h"

/* A DSO's addr2line handle, opened the first time one of its frames asks. */
struct pfc_inline_dso {
	struct pfc_a2l *a2l;
	uint8_t tried;
};

struct pfc_inline_ent {       /* (DSO, address) -> inline names of that frame; none: a plain frame */
	uint64_t addr;
	uint32_t dso;                 /* id + 1; 0 = empty slot */
	uint32_t first, n;            /* in names */
};

struct pfc_inline_name {
	uint32_t name;                /* interned name + 1, 0 = the symbol itself */
	uint32_t fid;                 /* its frame's id, UINT32_MAX until the first use */
};

/*
 * addr2line (BFD) reads a file without DWARF through its separate debug file: the first of
 * .build-id/xx/yyyy.debug relative to perf's working directory, the same under .debug/, and
 * /usr/lib/debug/.build-id/xx/yyyy.debug, of this machine whatever --symfs says, whose
 * build-id is the file's.  The last one is the one that matters (libc6-dbg's files are
 * there): a symbols-only libc debug file under --symfs names libc's frames from its
 * symbols, the host's libc6-dbg file from its DWARF (__libc_start_main_impl).  The file
 * is found by build-id and checked, so the answers are the recorded binary's, in the
 * default mode as with --perf-compat.  (The two working-directory paths, and the
 * .gnu_debuglink BFD follows when there is no build-id file, are left out.)
 */
static void a2l_separate(struct pfc_session *s, struct pfc_a2l *a, const char *symsrc)
{
	uint8_t bid[20], have[20];
	int len = 0, have_len = 0;
	char hex[41];
	struct pfc_found found;

	if (!a || pfc_a2l_has_dwarf(a) || pfc_elf_build_id(symsrc, bid, &len) != 0 || len <= 0 || len > 20)
		return;
	pfc_hex_format(hex, bid, (size_t)len);
	if (!pfc_files_findf(s->files, PFC_FILES_HOST, PFC_FILES_VERIFIED, &found,
			     "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2))
		return;
	if (pfc_elf_build_id(found.path, have, &have_len) != 0 || have_len != len || memcmp(have, bid, len))
		return;
	if (pfc_a2l_separate(a, found.path) == 0)
		pfc_files_note(s->files, found.base, found.rel, "debug file (DWARF) addr2line reads", -1, bid, len);
}

static int inline_used(const void *slot, void *ctx)
{
	(void)ctx;
	return ((const struct pfc_inline_ent *)slot)->dso != 0;
}

static uint64_t inline_hash(const void *slot, void *ctx)
{
	const struct pfc_inline_ent *e = slot;

	(void)ctx;
	return pfc_hashtab_mix(e->addr, e->dso);
}

static const struct pfc_hashtab_ops inline_ops = {
	.slot_size = sizeof(struct pfc_inline_ent), .first_cap = 1024, .used = inline_used, .hash = inline_hash,
};

/* The entry of (d, addr), made empty (no names yet, *made set) if there was none. */
static struct pfc_inline_ent *inline_slot(struct pfc_session *s, const struct pfc_dso *d, uint64_t addr, int *made)
{
	struct pfc_inline_state *in = &s->inlines;
	struct pfc_inline_ent *e;
	size_t j;

	*made = 0;
	if (pfc_hashtab_full(in->count, in->cap) && pfc_hashtab_grow(&in->cache, &in->cap, &inline_ops, NULL) < 0)
		return NULL;
	for (j = pfc_hashtab_start(pfc_hashtab_mix(addr, d->id + 1), in->cap); in->cache[j].dso;
	     j = pfc_hashtab_next(j, in->cap))
		if (in->cache[j].dso == d->id + 1 && in->cache[j].addr == addr)
			return &in->cache[j];
	e = &in->cache[j];
	e->dso = d->id + 1;
	e->addr = addr;
	e->first = (uint32_t)in->nr_names;
	e->n = 0;
	in->count++;
	*made = 1;
	return e;
}

/* d's addr2line handle on symsrc (the file its symbols came from), opened at first use. */
static struct pfc_a2l *inline_a2l(struct pfc_session *s, const struct pfc_dso *d, const char *symsrc)
{
	struct pfc_inline_dso *dd = pfc_grow_at(&s->inlines.dsos, &s->inlines.nr_dsos, d->id,
						 sizeof(struct pfc_inline_dso), 64);

	if (!dd)
		return NULL;
	if (!dd->tried) {
		dd->tried = 1;
		dd->a2l = pfc_a2l_open(symsrc, s->opts->perf_compat ? NULL : s->opts->cache_dir);
		a2l_separate(s, dd->a2l, symsrc);
		switch (pfc_a2l_cache_state(dd->a2l)) {
		case PFC_DWIMG_HIT:
			s->st.nr_dcache_hits++;
			break;
		case PFC_DWIMG_CORRUPT:
			s->st.nr_dcache_corrupt++;
			/* fall through */
		case PFC_DWIMG_MISS:
			s->st.nr_dcache_misses++;
			break;
		default:
			break;
		}
	}
	return dd->a2l;
}

/*
 * The names perf gives the frames at one address of a DSO (append_inlines, perf 6.1):
 * it asks addr2line about the file its symbols came from; every record addr2line prints
 * becomes a frame at that address, the record that names perf's own symbol as that
 * symbol, the others "(inlined)".  No record: the plain frame.
 */
static struct pfc_inline_ent *inline_names(struct pfc_session *s, const struct pfc_dso *d, uint64_t addr)
{
	struct pfc_inline_state *in = &s->inlines;
	const struct pfc_sym *sym;
	struct pfc_inline_ent *e;
	struct pfc_a2l *a2l;
	const char *names[64], *symsrc;
	int n, i, made;

	if (!(e = inline_slot(s, d, addr, &made)) || !made)
		return e;
	/* an address outside every symbol is a plain frame */
	sym = d->syms ? pfc_symtab_find(d->syms, addr) : NULL;
	if (!sym || !(symsrc = pfc_session_dso_symsrc(s, d)) || !(a2l = inline_a2l(s, d, symsrc)))
		return e;
	n = pfc_a2l_lookup(a2l, addr + pfc_a2l_text_offset(a2l), names, 64);
	if (in->nr_names + (size_t)n > in->cap_names) {
		size_t cap = in->cap_names ? in->cap_names * 2 : 1024;
		struct pfc_inline_name *nn;
		while (cap < in->nr_names + (size_t)n)
			cap *= 2;
		nn = realloc(in->names, cap * sizeof(*nn));
		if (!nn)
			return NULL;
		in->names = nn;
		in->cap_names = cap;
	}
	for (i = 0; i < n; i++) {
		char *dm = pfc_demangle(names[i]);
		const char *nm = dm ? dm : names[i];
		uint32_t id = 0;
		if (strcmp(nm, sym->name)) {
			id = pfc_intern(&s->strings, nm, strlen(nm));
			if (id == UINT32_MAX) {
				free(dm);
				return NULL;
			}
			id++;
		}
		free(dm);
		in->names[in->nr_names].name = id;
		in->names[in->nr_names++].fid = UINT32_MAX;
	}
	e->n = (uint32_t)n;
	return e;
}

/* One unwound user frame, with the inlined frames perf adds in front of it. */
int pfc_inline_add_frame(struct pfc_session *s, struct pfc_thread *th, uint32_t *n, uint64_t ip)
{
	const struct pfc_map *map = pfc_machine_find_map(&s->machine, th, 0, ip);
	struct pfc_dso *d = map ? map->dso : NULL;
	const struct pfc_inline_ent *e;
	uint64_t addr;
	uint32_t i;

	if (!d || d->kind != PFC_DSO_FILE || map->identity)
		return pfc_callchain_add_map_frame(s, th, n, 0, ip, map);
	addr = ip - map->start + map->pgoff;
	if (!d->loaded)
		pfc_symbolize_dso(s, d);
	e = inline_names(s, d, addr);
	if (!e)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "inline frames");
	if (!e->n)
		return pfc_callchain_add_map_frame(s, th, n, 0, ip, map);
	for (i = 0; i < e->n; i++) {
		struct pfc_inline_name *in = &s->inlines.names[e->first + i];
		int ret;
		/* the frame of a (DSO, address, name) is the same for the whole session */
		if (in->fid == UINT32_MAX &&
		    (in->fid = pfc_stacks_frame_inl(&s->stacks, d, addr, 0, in->name)) == UINT32_MAX)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "frame table");
		if ((ret = pfc_callchain_push(s, n, in->fid)) < 0)
			return ret;
	}
	return 0;
}

void pfc_inline_exit(struct pfc_session *s)
{
	size_t i;

	for (i = 0; i < s->inlines.nr_dsos; i++)
		pfc_a2l_close(s->inlines.dsos[i].a2l);
	free(s->inlines.dsos);
	free(s->inlines.cache);
	free(s->inlines.names);
	memset(&s->inlines, 0, sizeof(s->inlines));
}
