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
	int dotnet = 0, other = 0;

	if (d->nr_queries)
		fprintf(fp, "perfconv: debuginfod: %u debug files fetched (%.1f MB), %u not on the servers, "
			"%u failed, in %.2f s\n", d->nr_fetched, d->bytes / 1e6, d->nr_missing, d->nr_failed,
			d->seconds);
	if (s->ssrv.nr_queries || s->ssrv.nr_cached)
		fprintf(fp, "perfconv: symbol server: %u debug files fetched (%.1f MB), %u from the cache, "
			"%u not on the servers, %u refused, %u failed, in %.2f s\n", s->ssrv.nr_fetched,
			s->ssrv.bytes / 1e6, s->ssrv.nr_cached, s->ssrv.nr_missing, s->ssrv.nr_refused,
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
	for (i = 0; i < n; i++)
		total += v[i].frames;
	fprintf(fp, "perfconv: %zu binar%s without symbols (stripped) cost %llu frames in samples:\n", n,
		n == 1 ? "y" : "ies", (unsigned long long)total);
	for (i = 0; i < n; i++) {
		const struct pfc_dso *dso = v[i].dso;
		int net = is_dotnet_runtime(dso->name);
		if (i < 8) {
			fprintf(fp, "perfconv:   %s: %llu frames (%llu addresses)", dso->name,
				(unsigned long long)v[i].frames, (unsigned long long)v[i].unique);
			if (dso->build_id_len > 0) {
				int b;
				fputs(", build-id ", fp);
				for (b = 0; b < dso->build_id_len && b < 20; b++)
					fprintf(fp, "%02x", dso->build_id[b]);
			}
			fputc('\n', fp);
		}
		dotnet |= net;
		other |= !net;
	}
	if (n > 8)
		fprintf(fp, "perfconv:   and %zu more\n", n - 8);
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
