/*
 * r2rframes.c - frames in ReadyToRun images that no r2rmap or jitdump names get their name
 * from the image's own metadata (converter/jit/r2rmeta.c).  Each image is found and decoded
 * once, the first time a frame lands in it, after checking that the file on disk is laid out
 * as the process mapped it; an image that is not the one that ran is reported once and names
 * nothing.  The precedence of symbol sources stays symbolize.c's.
 *
 * The names an image gave are kept in the symbol cache (r2rcache.c's entry, symcache.c's
 * "r2r" kind) under its MVID, so that the next conversion of the same service reads them
 * instead of decoding the image's tables and metadata again; an address the entry does not
 * cover still decodes the image, and its answer is added to the entry at the end.  The entry
 * names the modules beside the image whose files the names were read from: a hit asks
 * converter/files for them as the decoding would have, so that a pack made after a hit
 * holds every file that one made after a miss holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <isa-l/crc64.h>
#include "converter/session.h"
#include "converter/r2rframes.h"
#include "converter/jit/r2rcache.h"
#include "converter/jit/r2rmeta.h"
#include "converter/native/symcache.h"
#include "converter/native/symtab.h"
#include "converter/util/fileio.h"
#include "converter/util/grow.h"

struct pfc_r2rmeta_slot {
	struct pfc_r2rmeta *r;     /* the image decoded: on a miss, or for an address the entry lacks */
	int state;                 /* 0 not tried, 1 usable, -1 not */
	void *map;                 /* the image's file, mapped */
	size_t map_len;
	struct pfc_pe pe;          /* its headers (the cache's key, the layout check, offsets) */
	enum pfc_files_base base;  /* and where it was found, for the modules beside it */
	char *rel;
	int cached;                /* the key below is good: answers are kept */
	struct pfc_symcache_key key;
	struct pfc_symcache_bytes entry;  /* the entry read (a hit), in place */
	struct pfc_r2rcache_view view;
	int has_view;
	struct pfc_r2rcache_add add;    /* answers the entry did not have */
};

#define PAGE 4096ull

/*
 * Every executable mapping of d must be one section of the file as CoreCLR maps it
 * (map.cpp MAPMapPEFile): from the section's raw offset rounded down to a page, for its
 * raw size.  Another build of the image has other section sizes.  Also gives a pid that
 * maps it, for /proc/PID/root.
 */
static int check_layout(struct pfc_session *s, const struct pfc_dso *d, const struct pfc_pe *pe, char *why,
			size_t size)
{
	const struct pfc_machine *m = &s->machine;
	size_t i, j;
	uint32_t k;

	for (i = 0; i < m->nr_all_maps; i++) {
		const struct pfc_maps *ms = m->all_maps[i];
		for (j = 0; j < ms->n; j++) {
			const struct pfc_map *mp = &ms->v[j];
			int ok = 0;
			if (mp->dso != d || !(mp->prot & 4))
				continue;
			for (k = 0; k < pe->nsections && !ok; k++) {
				const struct pfc_pe_section *sec = &pe->sec[k];
				uint64_t from = sec->raw & ~(PAGE - 1);
				uint64_t to = ((uint64_t)sec->raw + sec->raw_size + PAGE - 1) & ~(PAGE - 1);
				ok = sec->raw_size && from == mp->pgoff && mp->end - mp->start == to - from;
			}
			if (!ok) {
				snprintf(why, size, "no section of the file is mapped at offset 0x%llx for 0x%llx bytes",
					 (unsigned long long)mp->pgoff, (unsigned long long)(mp->end - mp->start));
				return -1;
			}
		}
	}
	return 0;
}

/* A pid whose process maps d: /proc/PID/root/PATH may hold an image a container saw. */
static int pid_of_dso(struct pfc_session *s, const struct pfc_dso *d)
{
	const struct pfc_machine *m = &s->machine;
	size_t i, j;

	for (i = 0; i < m->tcap; i++) {
		const struct pfc_thread *t;
		for (t = m->thash[i]; t; t = t->hnext) {
			if (t->pid <= 0 || !t->maps)
				continue;
			for (j = 0; j < t->maps->n; j++)
				if (t->maps->v[j].dso == d)
					return t->pid;
		}
	}
	return 0;
}

/*
 * The cache's key of an image: its MVID (the assembly's compilation), its size, its PE
 * timestamp (a hash of the contents in deterministic builds) and a checksum of its headers
 * (crossgen2 run again on the same assembly gives the same MVID and other sections), and
 * this perfconv's build-id (another perfconv may name methods otherwise).  No key without
 * an MVID (a composite image has none of its own), with --perf-compat, or without a cache.
 */
static int image_key(struct pfc_session *s, struct pfc_r2rmeta_slot *slot)
{
	char mvid[40], text[PFC_SYMCACHE_KEY_MAX];
	const char *exe = pfc_own_build_id();
	size_t hdr = slot->pe.size_of_headers ? slot->pe.size_of_headers : 4096;
	int n;

	if (!s->opts->cache_dir || s->opts->perf_compat || !slot->pe.has_mvid)
		return -1;
	if (!*exe)
		return -1;
	if (hdr > slot->map_len)
		hdr = slot->map_len;
	pfc_pe_guid_str(slot->pe.mvid, mvid);
	n = snprintf(text, sizeof(text), "r2r exe=%s mvid=%s size=%zu ts=%08x hdr=%016llx", exe, mvid,
		     slot->map_len, slot->pe.timestamp, (unsigned long long)crc64_ecma_refl(0, slot->map, hdr));
	if (n < 0 || (size_t)n >= sizeof(text))
		return -1;
	return pfc_symcache_key_text(&slot->key, text);
}

/* A module beside the image whose file the entry's names were read from: asked of files
 * as r2rmeta.c asks for it, so that a pack holds it. */
static void note_module(struct pfc_session *s, const struct pfc_r2rmeta_slot *slot, const char *name)
{
	const char *slash = strrchr(slot->rel, '/');
	struct pfc_found f;

	if (pfc_files_findf(s->files, slot->base, 0, &f, "%.*s/%s.dll", slash ? (int)(slash - slot->rel) : 0,
			    slot->rel, name))
		pfc_files_note(s->files, f.base, f.rel, "ReadyToRun module of a composite or version bubble", -1, NULL, 0);
}

/* The entry of the image in slot from the cache: 1 read (slot->view), 0 none. */
static int cache_read(struct pfc_session *s, struct pfc_r2rmeta_slot *slot)
{
	int got = pfc_symcache_get(s->opts->cache_dir, &pfc_symcache_r2r, &slot->key, &slot->entry);

	if (got == 1 && pfc_r2rcache_parse(slot->entry.p, slot->entry.len, &slot->view) < 0) {
		/* whole, and of this key, but not a method map: written again at the end */
		pfc_symcache_bytes_free(&slot->entry);
		pfc_symcache_remove(s->opts->cache_dir, &pfc_symcache_r2r, &slot->key);
		got = -EINVAL;
	}
	if (got == -EINVAL)
		s->r2r.nr_cache_corrupt++;
	slot->has_view = got == 1;
	return slot->has_view;
}

static int load(struct pfc_session *s, const struct pfc_dso *d, struct pfc_r2rmeta_slot *slot)
{
	const struct pfc_opts *o = s->opts;
	char proc_rel[4096], why[256];
	const char *rel = d->name, *path;	/* path: the image, in messages */
	enum pfc_files_base base = PFC_FILES_ROOT;
	struct pfc_found f;
	struct pfc_error err;
	int pid = -1, n, ret;
	uint32_t k;

	/* without --symfs, a container's image may be seen only through its process's root */
	if (!pfc_files_find(s->files, base, rel, 0, &f)) {
		if (pfc_files_has(s->files, PFC_FILES_ROOT) || d->name[0] != '/' || !(pid = pid_of_dso(s, d)))
			return -1;
		base = PFC_FILES_PROC;
		rel = proc_rel;
		n = snprintf(proc_rel, sizeof(proc_rel), "%d/root%s", pid, d->name);
		if (n < 0 || (size_t)n >= sizeof(proc_rel) || !pfc_files_find(s->files, base, rel, 0, &f))
			return -1;
	}
	path = f.name;
	memset(&err, 0, sizeof(err));
	if (pfc_map_file(f.path, UINT32_MAX, &slot->map, &slot->map_len) < 0)
		return -1;	/* a missing file is not worth a warning: perf shows [DSO] too */
	if (pfc_pe_parse_headers(slot->map, slot->map_len, &slot->pe, &err) == 0 && image_key(s, slot) == 0)
		slot->cached = 1;
	if (!(slot->cached && cache_read(s, slot))) {
		ret = pfc_r2rmeta_parse(slot->map, slot->map_len, NULL, &slot->r, &err);
		if (ret < 0) {
			slot->cached = 0;
			/* IL-only images are not worth a warning either */
			if (ret != -PFC_ERR_UNSUPPORTED && o->log) {
				if (err.has_offset)
					fprintf(o->log, "perfconv: warning: '%s': ReadyToRun metadata not read: %s at offset %llu; its frames stay unresolved\n",
						path, err.detail, (unsigned long long)err.offset);
				else
					fprintf(o->log, "perfconv: warning: '%s': ReadyToRun metadata not read: %s; its frames stay unresolved\n",
						path, err.detail);
			}
			return -1;
		}
		if (slot->cached)
			s->r2r.nr_cache_misses++;
	} else {
		s->r2r.nr_cache_hits++;
	}
	if (check_layout(s, d, &slot->pe, why, sizeof(why)) < 0) {
		if (o->log)
			fprintf(o->log, "perfconv: warning: '%s': not the image that ran: %s; its frames stay unresolved\n",
				path, why);
		slot->cached = 0;
		return -1;
	}
	if (!(slot->rel = strdup(rel))) {
		slot->cached = 0;
		return -1;
	}
	slot->base = base;
	pfc_files_note(s->files, base, rel, "ReadyToRun image", pid, NULL, 0);
	if (slot->r)
		pfc_r2rmeta_use_files(slot->r, s->files, base, rel);
	for (k = 0; slot->has_view && k < slot->view.nmods; k++)
		note_module(s, slot, pfc_r2rcache_module(&slot->view, k));
	if (o->verbose && o->log) {
		struct pfc_r2rmeta_stats st;
		if (slot->r) {
			pfc_r2rmeta_stats(slot->r, &st);
		} else {
			st.nr_methods = slot->view.nr_methods;
			st.composite = slot->view.composite;
			st.nr_bad_entries = slot->view.nr_bad_entries;
		}
		fprintf(o->log, "perfconv: '%s': %zu ReadyToRun methods from its metadata%s\n", path, st.nr_methods,
			st.composite ? " (composite image)" : "");
		if (st.nr_bad_entries)
			fprintf(o->log, "perfconv: warning: '%s': %zu ReadyToRun entry-point table entries did not decode\n",
				path, st.nr_bad_entries);
	}
	return 0;
}

/* The image decoded, for an address its cache entry does not cover; NULL when it cannot be
 * (it could when the entry was written). */
static struct pfc_r2rmeta *decoded(struct pfc_session *s, struct pfc_r2rmeta_slot *slot)
{
	struct pfc_error err;

	if (!slot->r && slot->state == 1) {
		memset(&err, 0, sizeof(err));
		if (pfc_r2rmeta_parse(slot->map, slot->map_len, NULL, &slot->r, &err) < 0) {
			slot->r = NULL;
			slot->state = 2;	/* the entry's names only */
			return NULL;
		}
		pfc_r2rmeta_use_files(slot->r, s->files, slot->base, slot->rel);
	}
	return slot->r;
}
static struct pfc_r2rmeta_slot *slot_of(struct pfc_session *s, const struct pfc_dso *d)
{
	return pfc_grow_at(&s->r2r.slots, &s->r2r.nr_slots, d->id, sizeof(struct pfc_r2rmeta_slot), 16);
}

void pfc_r2rframes_refuse(struct pfc_session *s, const struct pfc_dso *d)
{
	struct pfc_r2rmeta_slot *slot = slot_of(s, d);

	if (slot && !slot->state)
		slot->state = -1;
}

int pfc_r2rframes_name(struct pfc_session *s, const struct pfc_dso *d, uint64_t off, const char **name,
		       uint64_t *start)
{
	struct pfc_r2rmeta_slot *slot = slot_of(s, d);
	struct pfc_r2rmeta_hit hit;
	struct pfc_r2rmeta *r;
	uint32_t begin;
	int64_t rva, soff;

	if (!slot)
		return -1;
	if (!slot->state)
		slot->state = load(s, d, slot) == 0 ? 1 : -1;
	if (slot->state < 0)
		return -1;
	rva = pfc_pe_offset_to_rva(&slot->pe, off);
	if (rva < 0 || rva > UINT32_MAX)
		return -1;
	if (!slot->has_view || !pfc_r2rcache_find(&slot->view, (uint32_t)rva, name, &begin)) {
		if (!(r = decoded(s, slot)))
			return -1;
		if (pfc_r2rmeta_find(r, (uint32_t)rva, &hit) < 0) {
			if (slot->cached)	/* no method there: the same answer next time */
				pfc_r2rcache_add(&slot->add, (uint32_t)rva, (uint32_t)rva + 1, (uint32_t)rva, NULL);
			return -1;
		}
		*name = pfc_r2rmeta_name(r, hit.method, hit.cold);
		begin = hit.begin;
		if (slot->cached)
			pfc_r2rcache_add(&slot->add, hit.span_begin, hit.span_end, hit.begin, *name);
	}
	soff = pfc_pe_rva_to_offset(&slot->pe, begin);
	if (!*name || soff < 0 || (uint64_t)soff > off)
		return -1;
	*start = (uint64_t)soff;
	return 0;
}

/* The answers the entry did not have, added to it: written atomically as a whole (symcache.c),
 * the kind's bound applied.  A cache that cannot be written is no cache. */
static void cache_write(struct pfc_session *s, struct pfc_r2rmeta_slot *slot)
{
	uint32_t nr_methods, nr_bad;
	int composite;
	uint8_t *p;
	size_t len, k;

	if (!slot->cached || slot->state != 1 || !slot->add.n || slot->add.oom)
		return;
	if (slot->r) {
		struct pfc_r2rmeta_stats st;
		for (k = 0; k < pfc_r2rmeta_nr_modules(slot->r); k++)
			if (pfc_r2rmeta_module_file(slot->r, k))
				pfc_r2rcache_add_module(&slot->add, pfc_r2rmeta_module_file(slot->r, k));
		pfc_r2rmeta_stats(slot->r, &st);
		nr_methods = st.nr_methods > UINT32_MAX ? UINT32_MAX : (uint32_t)st.nr_methods;
		nr_bad = st.nr_bad_entries > UINT32_MAX ? UINT32_MAX : (uint32_t)st.nr_bad_entries;
		composite = st.composite;
	} else {
		nr_methods = slot->view.nr_methods;
		nr_bad = slot->view.nr_bad_entries;
		composite = slot->view.composite;
	}
	if (slot->add.oom || pfc_r2rcache_encode(slot->has_view ? &slot->view : NULL, &slot->add, nr_methods, nr_bad,
						 composite, &p, &len) < 0)
		return;
	pfc_symcache_put(s->opts->cache_dir, &pfc_symcache_r2r, &slot->key, p, len);
	free(p);
}

void pfc_r2rframes_free(struct pfc_session *s)
{
	size_t i;

	for (i = 0; i < s->r2r.nr_slots; i++) {
		struct pfc_r2rmeta_slot *slot = &s->r2r.slots[i];
		cache_write(s, slot);
		pfc_r2rmeta_free(slot->r);
		pfc_r2rcache_add_free(&slot->add);
		pfc_symcache_bytes_free(&slot->entry);
		if (slot->map) {
			munmap(slot->map, slot->map_len);
			pfc_pe_free(&slot->pe);
		}
		free(slot->rel);
	}
	free(s->r2r.slots);
	s->r2r.slots = NULL;
	s->r2r.nr_slots = 0;
}
