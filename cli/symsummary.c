/*
 * symsummary.c - the part of a conversion's summary about missing symbols: what the
 * debuginfod and symbol-server clients fetched, and which stripped binaries cost how many frames, with how to
 * get their debug files (dotnet-symbol for Microsoft's .NET runtime, debuginfod or the
 * distribution's debug packages for the others).  Printing only; the counts come from
 * the finished session.
 */
#include <stdlib.h>
#include <string.h>
#include "cli/symsummary.h"
#include "converter/jit/r2rmap.h"
#include "converter/util/hex.h"

struct lost {
	const struct pfc_dso *dso;
	uint64_t frames;             /* unresolved frames in samples (a frame counted per sample) */
	uint64_t unique;             /* distinct unresolved addresses */
};

static int cmp_lost(const void *a, const void *b)
{
	const struct lost *x = a, *y = b;

	if (x->frames != y->frames)
		return x->frames < y->frames ? 1 : -1;
	return strcmp(x->dso->name, y->dso->name);
}

/* Microsoft ships its .NET runtime's native libraries stripped, with symbol files on its
 * symbol server, which dotnet-symbol downloads (not a debuginfod server). */
static int is_dotnet_runtime(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strstr(path, "/Microsoft.NETCore.App/") || strstr(path, "/Microsoft.AspNetCore.App/") ||
	       !strncmp(base, "libcoreclr", 10) || !strncmp(base, "libclrjit", 9) ||
	       !strncmp(base, "libSystem.", 10) || !strncmp(base, "libmscordaccore", 15) ||
	       !strncmp(base, "libhostfxr", 10) || !strncmp(base, "libhostpolicy", 13);
}

void pfc_cli_symbol_summary(FILE *fp, const struct pfc_session *s)
{
	const struct pfc_debuginfod *d = &s->dbgf;
	const struct pfc_stacks *sk = &s->stacks;
	struct lost *v;
	uint64_t *by_dso, total = 0;
	size_t i, k, n = 0;
	int dotnet = 0, other = 0, missing = 0, cat;

	if (d->nr_queries)
		fprintf(fp, "perfconv: debuginfod: %u debug files fetched (%.1f MB), %u not on the servers, "
			"%u failed, in %.2f s\n", d->nr_fetched, d->bytes / 1e6, d->nr_missing, d->nr_failed,
			d->seconds);
	if (s->ssrv.nr_queries || s->ssrv.nr_cached || s->ssrv.nr_miss_noted)
		fprintf(fp, "perfconv: symbol server: %u debug files fetched (%.1f MB), %u from the cache, "
			"%u not on the servers (%u of them known from an earlier request), %u refused, %u failed, "
			"in %.2f s\n", s->ssrv.nr_fetched, s->ssrv.bytes / 1e6, s->ssrv.nr_cached,
			s->ssrv.nr_missing + s->ssrv.nr_miss_noted, s->ssrv.nr_miss_noted, s->ssrv.nr_refused,
			s->ssrv.nr_failed, s->ssrv.seconds);
	if (!s->symbolized)
		return;
	by_dso = calloc(s->machine.nr_dsos + 1, sizeof(*by_dso));
	v = calloc(s->machine.nr_dsos + 1, sizeof(*v));
	if (!by_dso || !v)
		goto out;
	for (i = 0; i < sk->nr_stacks; i++) {
		const struct pfc_stack *st = &sk->stacks[i];
		for (k = 0; k < st->nr; k++) {
			const struct pfc_frame *f = &sk->frames[sk->frame_ids[st->first + k]];
			if (f->dso && f->dso->no_symtab && !f->resolved)
				by_dso[f->dso->id] += st->count;
		}
	}
	for (i = 0; i < sk->nr_frames; i++) {
		const struct pfc_frame *f = &sk->frames[i];
		/* memfd files (the .NET runtime's double-mapped code) are no binaries to fetch */
		if (f->dso && f->dso->no_symtab && !f->resolved && by_dso[f->dso->id] &&
		    !strstr(f->dso->name, "/memfd:") && !strstr(f->dso->name, " (deleted)")) {
			if (!v[f->dso->id].dso) {
				v[f->dso->id].dso = f->dso;
				v[f->dso->id].frames = by_dso[f->dso->id];
			}
			v[f->dso->id].unique++;
		}
	}
	for (i = 0; i < s->machine.nr_dsos; i++)
		if (v[i].dso)
			v[n++] = v[i];
	if (!n)
		goto out;
	qsort(v, n, sizeof(*v), cmp_lost);
	/* "stripped" only for a file that was read and has no symbol table; a file that is not
	 * there (a runtime of another machine) or of another build is said to be so, with where
	 * it was looked for, and the hints on debug files are for the stripped ones */
	for (cat = 0; cat < 3; cat++) {
		size_t m = 0, shown = 0;

		total = 0;
		for (i = 0; i < n; i++)
			if (v[i].dso->not_found == cat) {
				m++;
				total += v[i].frames;
			}
		if (!m)
			continue;
		if (cat == 0)
			fprintf(fp, "perfconv: %zu binar%s without symbols (stripped) cost %llu frames in samples:\n", m,
				m == 1 ? "y" : "ies", (unsigned long long)total);
		else if (cat == 1)
			fprintf(fp, "perfconv: %zu binar%s without symbols (not found: looked for at the recorded path "
				"under '%s', and by build-id in the build-id cache) cost %llu frames in samples:\n", m,
				m == 1 ? "y" : "ies", s->opts->symfs && *s->opts->symfs ? s->opts->symfs : "/",
				(unsigned long long)total);
		else
			fprintf(fp, "perfconv: %zu binar%s without symbols (the file found is another build: its "
				"build-id differs) cost %llu frames in samples:\n", m, m == 1 ? "y" : "ies",
				(unsigned long long)total);
		for (i = 0; i < n; i++) {
			const struct pfc_dso *dso = v[i].dso;
			int net;

			if (dso->not_found != cat)
				continue;
			if (shown++ < 8) {
				fprintf(fp, "perfconv:   %s: %llu frames (%llu addresses)", dso->name,
					(unsigned long long)v[i].frames, (unsigned long long)v[i].unique);
				if (dso->build_id_len > 0) {
					char hex[41];
					size_t n = dso->build_id_len < 20 ? (size_t)dso->build_id_len : 20;
					fprintf(fp, ", build-id %s", pfc_hex_format(hex, dso->build_id, n));
				}
				fputc('\n', fp);
			}
			net = is_dotnet_runtime(dso->name);
			if (cat == 0) {
				dotnet |= net;
				other |= !net;
			} else {
				missing = 1;
			}
		}
		if (m > 8)
			fprintf(fp, "perfconv:   and %zu more\n", m - 8);
	}
	if (missing)
		fprintf(fp, "perfconv: hint: binaries not found here are read from the recording machine's files: "
			"give them with --symfs DIR (a copy of its file system), or convert there%s\n",
			s->opts->debuginfod_urls || s->opts->symsrv_urls ? "" :
			"; debug files of binaries with a build-id can be fetched with --debuginfod or --symbol-server");
	if (dotnet)
		fprintf(fp, "perfconv: hint: for Microsoft's .NET runtime run 'dotnet-symbol --symbols LIBRARY' on a "
			"connected machine: it writes LIBRARY.dbg beside it, which is found there, under --symfs DIR "
			"at the same path, or in the build-id cache (--buildid-dir)%s\n",
			s->opts->symsrv_urls ? "" : "; or let perfconv fetch them by build-id with --symbol-server "
						    "https://msdl.microsoft.com/download/symbols");
	if (other)
		fprintf(fp, "perfconv: hint: for distribution libraries %s, or install their debug packages "
			"(-dbgsym) into /usr/lib/debug\n",
			!s->opts->debuginfod_urls ? "set DEBUGINFOD_URLS or give --debuginfod URLS to fetch the "
						    "debug files by build-id" :
			d->nr_failed ? "the debuginfod servers did not answer (see the warning)" :
				       "the debuginfod servers had no debug file");
out:
	free(by_dso);
	free(v);
}

/* -v: the PE images whose ReadyToRun frames stay unnamed, each with its count and why (the
 * summary line only counts them by reason: "219 unresolved (219 image not readable)"). */
void pfc_cli_r2r_images(FILE *fp, const struct pfc_session *s)
{
	const struct pfc_stacks *sk = &s->stacks;
	uint64_t *by_dso;
	size_t i;

	if (!s->symbolized || !(by_dso = calloc(s->machine.nr_dsos + 1, sizeof(*by_dso))))
		return;
	for (i = 0; i < sk->nr_frames; i++) {
		const struct pfc_frame *f = &sk->frames[i];
		if (f->dso && f->dso->r2r > 0 && f->dso->r2r < PFC_R2R__MAX && !f->resolved)
			by_dso[f->dso->id]++;
	}
	for (i = 0; i < s->machine.nr_dsos; i++) {
		const struct pfc_dso *d = s->machine.dsos[i];
		if (!by_dso[i])
			continue;
		fprintf(fp, "perfconv:   %s: %llu unresolved, %s", d->name, (unsigned long long)by_dso[i],
			pfc_r2r_status_str(d->r2r));
		if (d->r2r_why) {
			/* r2rmap.c's detail names the image, which the line has named already */
			const char *why = d->r2r_why;
			size_t nl = strlen(d->name);

			if (why[0] == '\'' && !strncmp(why + 1, d->name, nl) && !strncmp(why + 1 + nl, "': ", 3))
				why += nl + 4;
			fprintf(fp, ": %s", why);
			if (!strcmp(why, "not found"))
				fprintf(fp, " at the recorded path under '%s'",
					s->opts->symfs && *s->opts->symfs ? s->opts->symfs : "/");
		}
		fputc('\n', fp);
	}
	free(by_dso);
}
