/*
 * r2rframes.c - frames in ReadyToRun images that no r2rmap or jitdump names get their name
 * from the image's own metadata (converter/jit/r2rmeta.c).  Each image is found and decoded
 * once, the first time a frame lands in it, after checking that the file on disk is laid out
 * as the process mapped it; an image that is not the one that ran is reported once and names
 * nothing.  The precedence of symbol sources stays session.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "converter/session.h"
#include "converter/r2rframes.h"
#include "converter/jit/r2rmeta.h"

struct pfc_r2rmeta_slot {
	struct pfc_r2rmeta *r;
	int state;                 /* 0 not tried, 1 usable, -1 not */
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

static struct pfc_r2rmeta *load(struct pfc_session *s, const struct pfc_dso *d)
{
	const struct pfc_opts *o = s->opts;
	char proc_rel[4096], why[256];
	const char *rel = d->name, *path;	/* path: the image, in messages */
	enum pfc_files_base base = PFC_FILES_ROOT;
	struct pfc_found f;
	struct pfc_error err;
	struct pfc_r2rmeta *r = NULL;
	int pid = -1, n, ret;

	/* without --symfs, a container's image may be seen only through its process's root */
	if (!pfc_files_find(s->files, base, rel, 0, &f)) {
		if (pfc_files_has(s->files, PFC_FILES_ROOT) || d->name[0] != '/' || !(pid = pid_of_dso(s, d)))
			return NULL;
		base = PFC_FILES_PROC;
		rel = proc_rel;
		n = snprintf(proc_rel, sizeof(proc_rel), "%d/root%s", pid, d->name);
		if (n < 0 || (size_t)n >= sizeof(proc_rel) || !pfc_files_find(s->files, base, rel, 0, &f))
			return NULL;
	}
	path = f.name;
	memset(&err, 0, sizeof(err));
	ret = pfc_r2rmeta_open(f.path, &r, &err);
	if (ret < 0) {
		/* IL-only images and missing files are not worth a warning: perf shows [DSO] too */
		if (ret != -PFC_ERR_OPEN && ret != -PFC_ERR_UNSUPPORTED && o->log) {
			if (err.has_offset)
				fprintf(o->log, "perfconv: warning: '%s': ReadyToRun metadata not read: %s at offset %llu; its frames stay unresolved\n",
					path, err.detail, (unsigned long long)err.offset);
			else
				fprintf(o->log, "perfconv: warning: '%s': ReadyToRun metadata not read: %s; its frames stay unresolved\n",
					path, err.detail);
		}
		return NULL;
	}
	if (check_layout(s, d, pfc_r2rmeta_pe(r), why, sizeof(why)) < 0) {
		if (o->log)
			fprintf(o->log, "perfconv: warning: '%s': not the image that ran: %s; its frames stay unresolved\n",
				path, why);
		pfc_r2rmeta_free(r);
		return NULL;
	}
	pfc_files_note(s->files, base, rel, "ReadyToRun image", pid, NULL, 0);
	pfc_r2rmeta_use_files(r, s->files, base, rel);
	if (o->verbose && o->log) {
		struct pfc_r2rmeta_stats st;
		pfc_r2rmeta_stats(r, &st);
		fprintf(o->log, "perfconv: '%s': %zu ReadyToRun methods from its metadata%s\n", path, st.nr_methods,
			st.composite ? " (composite image)" : "");
		if (st.nr_bad_entries)
			fprintf(o->log, "perfconv: warning: '%s': %zu ReadyToRun entry-point table entries did not decode\n",
				path, st.nr_bad_entries);
	}
	return r;
}

static struct pfc_r2rmeta_slot *slot_of(struct pfc_session *s, const struct pfc_dso *d)
{
	if (d->id >= s->nr_r2rmeta) {
		size_t n = s->nr_r2rmeta ? s->nr_r2rmeta : 16;
		struct pfc_r2rmeta_slot *v;
		while (n <= d->id)
			n *= 2;
		v = realloc(s->r2rmeta, n * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + s->nr_r2rmeta, 0, (n - s->nr_r2rmeta) * sizeof(*v));
		s->r2rmeta = v;
		s->nr_r2rmeta = n;
	}
	return &s->r2rmeta[d->id];
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
	const struct pfc_pe *pe;
	int64_t rva, soff;

	if (!slot)
		return -1;
	if (!slot->state) {
		slot->r = load(s, d);
		slot->state = slot->r ? 1 : -1;
	}
	if (slot->state < 0)
		return -1;
	pe = pfc_r2rmeta_pe(slot->r);
	rva = pfc_pe_offset_to_rva(pe, off);
	if (rva < 0 || rva > UINT32_MAX || pfc_r2rmeta_find(slot->r, (uint32_t)rva, &hit) < 0)
		return -1;
	*name = pfc_r2rmeta_name(slot->r, hit.method, hit.cold);
	soff = pfc_pe_rva_to_offset(pe, hit.begin);
	if (!*name || soff < 0 || (uint64_t)soff > off)
		return -1;
	*start = (uint64_t)soff;
	return 0;
}

void pfc_r2rframes_free(struct pfc_session *s)
{
	size_t i;

	for (i = 0; i < s->nr_r2rmeta; i++)
		pfc_r2rmeta_free(s->r2rmeta[i].r);
	free(s->r2rmeta);
	s->r2rmeta = NULL;
	s->nr_r2rmeta = 0;
}
