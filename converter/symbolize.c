/*
 * symbolize.c - a DSO's names, loaded once when a frame first needs them (perf's dso__load):
 * ELF symbols and debug files, an .apk member's, ReadyToRun images' (with the recorded
 * processes' perfinfo), perf maps' and the kernel's (kernel.c); then every unique frame named
 * once, .NET names in both display forms.  It does not parse any of those files itself
 * (native/, jit/) nor make frames (callchain.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "converter/symbolize.h"
#include "converter/kernel.h"
#include "converter/r2rframes.h"
#include "converter/session.h"
#include "converter/unwind_user.h"
#include "converter/jit/dotnetname.h"
#include "converter/jit/perfmap.h"
#include "converter/jit/r2rmap.h"
#include "converter/native/symcache.h"
#include "converter/native/symtab.h"
#include "converter/native/unwind.h"
#include "converter/util/grow.h"

/* ---- a DSO's names ---- */

const char *pfc_session_dso_symsrc(const struct pfc_session *s, const struct pfc_dso *d)
{
	return d && d->id < s->symbolize.nr_symsrc ? s->symbolize.symsrc[d->id] : NULL;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

/* perfinfo-PID.map of every recorded process (the map directory first, then /tmp): which
 * image, by MVID, each process loaded from a path.  Read once, when the first PE image
 * is loaded. */
static struct pfc_perfinfo *r2r_perfinfo(struct pfc_session *s)
{
	const struct pfc_machine *m = &s->machine;
	struct pfc_error e;
	int *pids;
	size_t i, n = 0;

	if (s->symbolize.perfinfo)
		return s->symbolize.perfinfo;
	s->symbolize.perfinfo = calloc(1, sizeof(*s->symbolize.perfinfo));
	pids = calloc(m->tcount + 1, sizeof(*pids));
	if (!s->symbolize.perfinfo || !pids) {
		free(pids);
		return s->symbolize.perfinfo;
	}
	for (i = 0; i < m->tcap; i++) {
		const struct pfc_thread *t;
		for (t = m->thash[i]; t && n < m->tcount; t = t->hnext)
			if (t->pid > 0)
				pids[n++] = t->pid;
	}
	qsort(pids, n, sizeof(*pids), cmp_int);
	for (i = 0; i < n; i++) {
		if (i && pids[i] == pids[i - 1])
			continue;
		memset(&e, 0, sizeof(e));
		pfc_perfinfo_load_from(s->files, pids[i], s->symbolize.perfinfo, &e);
	}
	free(pids);
	return s->symbolize.perfinfo;
}

static int load_r2r(struct pfc_session *s, struct pfc_dso *d, struct pfc_symtab *t)
{
	const struct pfc_opts *o = s->opts;
	struct pfc_r2r_opts ro = { .files = s->files, .funcs = o->r2r_funcs,
				   .log = o->log, .verbose = o->verbose };
	struct pfc_r2r_result res;
	int ret;

	if (o->perf_compat)	/* perf names no ReadyToRun code */
		return 0;
	ro.perfinfo = r2r_perfinfo(s);
	ret = pfc_r2r_load(&ro, d->name, t, &res, s->err);
	d->r2r = res.status;
	/* why its frames stay unnamed, for the summary's list under -v */
	if (res.status != PFC_R2R_MAPPED && res.why[0]) {
		uint32_t id = pfc_intern(&s->strings, res.why, strlen(res.why));
		if (id != UINT32_MAX)
			d->r2r_why = pfc_intern_str(&s->strings, id);
	}
	if (res.wrong_image)
		pfc_r2rframes_refuse(s, d);
	return ret;
}

/* Count a frame of a PE image for the summary. */
static void r2r_count(struct pfc_session *s, const struct pfc_dso *d, int resolved)
{
	if (resolved && d->r2r == PFC_R2R_MAPPED)
		s->st.nr_r2r_resolved++;
	else if (d->r2r > 0 && d->r2r < 8)
		s->st.nr_r2r_unresolved[d->r2r]++;
}

/*
 * The default mode names a library mapped from an .apk from its bytes inside the .apk (the one
 * its CFI comes from, build-id checked): /proc/self/fd/N into BUF, or NULL.  perf 6.1 looks for a
 * file of that name and finds none, so --perf-compat does not.
 */
static const char *apk_member(struct pfc_session *s, const struct pfc_dso *d, char *buf, size_t size)
{
	struct pfc_cfi *c;
	int fd;

	if (d->kind != PFC_DSO_FILE || !strstr(d->name, ".apk!/") || !(c = pfc_unwind_dso_cfi(s, d)) ||
	    (fd = pfc_cfi_image_fd(c)) < 0)
		return NULL;
	snprintf(buf, size, "/proc/self/fd/%d", fd);
	return buf;
}

/* A file's (or a vdso image's) ELF symbols into t: perf's dso__load. */
static int load_elf(struct pfc_session *s, struct pfc_dso *d, struct pfc_symtab *t)
{
	const struct pfc_opts *o = s->opts;
	char apk_image[64];
	struct pfc_symopts so = { .files = s->files, .verbose = o->verbose,
				   .image = d->kind == PFC_DSO_VDSO && !d->build_id_len ?
						    pfc_files_own_vdso(s->files) :
				   !o->perf_compat ? apk_member(s, d, apk_image, sizeof(apk_image)) : NULL,
				   .minidebuginfo = o->minidebuginfo,
				   /* perf-compat: perf reads the build-id only of a path present on this host */
				   .buildid_from_symfs = !o->perf_compat,
				   .debuginfod = s->dbgf.client ? &s->dbgf : NULL,
				   .symsrv = s->ssrv.nr_urls ? &s->ssrv : NULL,
				   /* perf-compat reads as perf does, every time */
				   .cache_dir = o->perf_compat ? NULL : o->cache_dir };
	struct pfc_dso_load info;
	int ret;

	memset(&info, 0, sizeof(info));
	ret = pfc_elf_load(&so, d->name, d->build_id, d->build_id_len, t, &info);
	s->st.nr_ecache_hits += info.cache == PFC_SYMCACHE_HIT;
	s->st.nr_ecache_misses += info.cache == PFC_SYMCACHE_MISS || info.cache == PFC_SYMCACHE_CORRUPT;
	s->st.nr_ecache_corrupt += info.cache == PFC_SYMCACHE_CORRUPT;
	if (info.found && info.used_path[0] && d->kind == PFC_DSO_FILE) {
		/* addr2line, for the inlined frames of DWARF-unwound stacks, reads this file */
		char **src = pfc_grow_at(&s->symbolize.symsrc, &s->symbolize.nr_symsrc, d->id, sizeof(char *), 64);
		if (src && !*src)
			*src = strdup(info.used_path);
	}
	d->no_symtab = d->kind == PFC_DSO_FILE && (!info.found || info.from_dynsym);
	d->not_found = d->kind != PFC_DSO_FILE || info.found ? 0 : info.buildid_mismatch ? 2 : 1;
	d->from_debuginfod = info.from_debuginfod;
	if (info.buildid_mismatch && o->log)
		fprintf(o->log, "perfconv: warning: '%s': build-id mismatch, its frames stay unresolved\n",
			d->name);
	return ret;
}

void pfc_symbolize_dso(struct pfc_session *s, struct pfc_dso *d)
{
	struct pfc_symtab *t;
	int ret = 0;

	d->loaded = 1;
	t = calloc(1, sizeof(*t));
	if (!t)
		return;
	switch (d->kind) {
	case PFC_DSO_VDSO:
		/* only perf's build-id cache can hold the image of the recording's vdso; perf
		 * names one without a build-id from its own, this machine's (files.c) */
		if (!d->build_id_len && (!s->opts->perf_compat || !pfc_files_own_vdso(s->files)))
			break;
		/* fall through */
	case PFC_DSO_FILE:
		/* a file that is a PE image: its ReadyToRun methods, not ELF symbols */
		ret = d->kind == PFC_DSO_FILE && pfc_r2r_is_pe(s->files, d->name) ? load_r2r(s, d, t) : load_elf(s, d, t);
		break;
	case PFC_DSO_PE:
		/* a .dll/.exe mapping: a ReadyToRun image, or (pfc_r2r_load says why) none */
		ret = load_r2r(s, d, t);
		break;
	case PFC_DSO_KERNEL:
		ret = pfc_kernel_syms_read(s, &t);
		break;
	case PFC_DSO_PERFMAP: {
		/* found, checked and owned by the JIT symbol sources (jitsym.c) */
		const char *path;
		d->perfmap = pfc_jitsyms_perfmap(&s->jit, d->pid);
		path = d->perfmap ? pfc_jitsyms_perfmap_path(&s->jit, d->pid) : NULL;
		if (path) {	/* only for writers that copy the map */
			uint32_t id = pfc_intern(&s->strings, path, strlen(path));
			if (id != UINT32_MAX)
				d->perfmap_path = pfc_intern_str(&s->strings, id);
		}
		break;
	}
	default:
		break;
	}
	if (ret < 0 || !t->nr) {
		pfc_symtab_free(t);
		free(t);
		return;
	}
	d->syms = t;
}

/* ---- naming the frames ---- */

/* Intern a .NET or JIT name rewritten in one --dotnet-names form, without its tier tag
 * when strip is set. */
static uint32_t intern_jit_form(struct pfc_session *s, const char *name, size_t len, int form, int strip)
{
	char buf[8192];

	if (form == PFC_DOTNET_NAMES_KEEP && !strip)
		return pfc_intern(&s->strings, name, len);
	len = pfc_dotnet_name(buf, sizeof(buf), name, len, form, strip);
	return pfc_intern(&s->strings, buf, len);
}

/*
 * Name a frame.  A JIT or .NET name (perf map, jitdump, ReadyToRun) is rewritten twice: in
 * the display form of the aggregating writers (short by default: a frame starts with its
 * assembly or namespace; no tier tag, so that a method's tiers add up in one frame) and in
 * the text form of perf-script and trace.zip (the runtime's own, which PerfView parses).
 * Both are interned here, once per unique frame, so a conversion that writes both kinds of
 * format resolves once.  Other names are used as they are.
 */
static int name_frame(struct pfc_session *s, struct pfc_frame *f, const char *name, size_t len, int jit)
{
	const struct pfc_opts *o = s->opts;

	f->sym = jit ? intern_jit_form(s, name, len, o->dotnet_names, o->strip_tiers) : pfc_intern(&s->strings, name, len);
	if (f->sym == UINT32_MAX)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "symbol names");
	f->sym_text = jit && (o->dotnet_names_text != o->dotnet_names || o->strip_tiers_text != o->strip_tiers)
			      ? intern_jit_form(s, name, len, o->dotnet_names_text, o->strip_tiers_text)
			      : f->sym;
	if (f->sym_text == UINT32_MAX)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "symbol names");
	f->resolved = 1;
	return 0;
}

int pfc_session_symbolize(struct pfc_session *s)
{
	size_t i;
	int ret;

	if (s->symbolized)
		return 0;
	s->symbolized = 1;
	for (i = 0; i < s->stacks.nr_frames; i++) {
		struct pfc_frame *f = &s->stacks.frames[i];
		struct pfc_dso *d = (struct pfc_dso *)f->dso;
		const struct pfc_sym *sym;

		if (!d) {
			s->st.nr_unresolved_nomap++;
			continue;
		}
		if (d->kind == PFC_DSO_KSYM) {	/* the map is the symbol */
			if ((ret = name_frame(s, f, d->name, strlen(d->name), 0)) < 0)
				return ret;
			f->symoff = f->addr;
			continue;
		}
		if (d->kind == PFC_DSO_LABEL) {	/* a name, not code */
			f->sym = pfc_intern(&s->strings, d->name, strlen(d->name));
			if (f->sym == UINT32_MAX)
				return PFC_FAIL_NOOFF(s->err, NOMEM, "symbol names");
			f->symoff = 0;
			f->resolved = 1;
			continue;
		}
		if (d->kind == PFC_DSO_JITCODE) {	/* one load of a jitdump: the load is the symbol */
			if ((ret = name_frame(s, f, d->jit_name, strlen(d->jit_name), 1)) < 0)
				return ret;
			f->symoff = f->addr - d->jit_start;
			if (d->jit_events)
				s->st.nr_jit_events++;
			else
				s->st.nr_jit_jitdump++;
			continue;
		}
		if (!d->loaded)
			pfc_symbolize_dso(s, d);
		if (d->perfmap) {
			const char *name;
			size_t len;
			uint64_t start;
			int found = pfc_perfmap_resolve(d->perfmap, f->addr, s->opts->resolve_jit, &name, &len, &start);
			if (found < 0)
				return PFC_FAIL_NOOFF(s->err, NOMEM, "symbol names");
			if (found) {
				if ((ret = name_frame(s, f, name, len, 1)) < 0)
					return ret;
				f->symoff = f->addr - start;
				s->st.nr_jit_perfmap++;
				continue;
			}
		}
		sym = d->syms ? pfc_symtab_find(d->syms, f->addr) : NULL;
		/* a ReadyToRun frame no matching map names (--r2r-rva's [image+0xRVA] names
		 * are only a fallback): the method from the image's metadata.  Also where
		 * r2rmap.c found no R2R header (a composite has its own) or no file under the
		 * recorded path (a container's, under /proc/PID/root). */
		if (d->r2r && s->opts->resolve_jit && (!sym || d->r2r != PFC_R2R_MAPPED)) {
			const char *name;
			uint64_t start;
			if (pfc_r2rframes_name(s, d, f->addr, &name, &start) == 0) {
				if ((ret = name_frame(s, f, name, strlen(name), 1)) < 0)
					return ret;
				f->symoff = f->addr - start;
				s->st.nr_r2r_resolved++;
				s->st.nr_r2r_metadata++;
				continue;
			}
		}
		if (d->r2r)
			r2r_count(s, d, sym != NULL);
		if (!sym) {
			if (f->kernel)
				s->st.nr_unresolved_kernel++;
			else
				s->st.nr_unresolved_user++;
			if (pfc_dso_is_jit_region(d->kind)) {
				s->st.nr_jit_unresolved++;
				pfc_jitsyms_note_unnamed(&s->jit, d->pid, f->addr);
			}
			continue;
		}
		if (d->jitted)	/* perf inject's ELF for one jitdump load */
			s->st.nr_jit_jitted++;
		/* ReadyToRun method names are .NET names too */
		if ((ret = name_frame(s, f, sym->name, strlen(sym->name), d->jitted || d->r2r != PFC_R2R_NONE)) < 0)
			return ret;
		f->symoff = f->addr - sym->start;
		if (f->inl) {	/* perf's inlined symbol: the function's name, the symbol's start */
			f->sym = f->sym_text = f->inl - 1;
			f->inlined = 1;
		}
	}
	pfc_jitsyms_cut_report(&s->jit);
	s->st.nr_rcache_hits = s->r2r.nr_cache_hits;
	s->st.nr_rcache_misses = s->r2r.nr_cache_misses;
	s->st.nr_rcache_corrupt = s->r2r.nr_cache_corrupt;
	return 0;
}

void pfc_symbolize_exit(struct pfc_session *s)
{
	size_t i;

	for (i = 0; i < s->machine.nr_dsos; i++) {
		struct pfc_dso *d = s->machine.dsos[i];
		if (d->syms) {
			pfc_symtab_free(d->syms);
			free(d->syms);
		}
	}
	for (i = 0; i < s->symbolize.nr_symsrc; i++)
		free(s->symbolize.symsrc[i]);
	free(s->symbolize.symsrc);
	if (s->symbolize.perfinfo) {
		pfc_perfinfo_free(s->symbolize.perfinfo);
		free(s->symbolize.perfinfo);
	}
	memset(&s->symbolize, 0, sizeof(s->symbolize));
}
