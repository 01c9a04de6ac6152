/*
 * summary.c - what a conversion prints about itself once it is done: the summary on stderr
 * (samples, lost events, unresolved, JIT, ReadyToRun and off-CPU frames, the symbol cache,
 * the phases' times), a pack's contents, --stats, and a batch worker's hints for its parent.
 * Printing only: the counts are the finished session's, the lines on missing symbols
 * symsummary.c's, and when to print is convert.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/summary.h"
#include "cli/symsummary.h"
#include "converter/jit/r2rmap.h"
#include "converter/perffile/statsprint.h"

int pfc_cli_print_stats(struct pfc_session *s)
{
	struct pfc_stats st;
	const char **names;
	struct perf_event_attr *attrs;
	uint64_t *nr, *lost;
	size_t i, n = s->rd.nr_evsels;
	int ret;

	memset(&st, 0, sizeof(st));
	names = calloc(n + 1, sizeof(*names));
	nr = calloc(n + 1, sizeof(*nr));
	lost = calloc(n + 1, sizeof(*lost));
	attrs = calloc(n + 1, sizeof(*attrs));
	if (!names || !nr || !lost || !attrs) {
		free(names);
		free(nr);
		free(lost);
		free(attrs);
		return -1;
	}
	for (i = 0; i < n; i++) {
		/* perf report --stats on a pipe names events from their attributes (cpu-clock:uH),
		 * not by the names the stream's EVENT_UPDATE records give (cpu-clock:u) */
		names[i] = s->rd.pipe_mode ? NULL : pfc_session_evsel_name(s, i);
		attrs[i] = s->rd.evsels[i]->attr;
		nr[i] = s->rd.evsels[i]->nr_samples;
		lost[i] = s->rd.evsels[i]->nr_lost_samples;
	}
	memcpy(st.nr_by_type, s->st.nr_by_type, sizeof(st.nr_by_type));
	st.total = s->st.nr_records;
	st.lost_events = s->st.nr_lost_events;
	st.lost_samples = s->st.nr_lost_samples;
	st.evsel_names = names;
	st.evsel_attrs = attrs;
	st.evsel_nr_samples = nr;
	st.evsel_nr_lost = lost;
	st.nr_evsels = n;
	ret = pfc_stats_print(stdout, &st);
	free(attrs);
	free(names);
	free(nr);
	free(lost);
	return ret;
}

/* Frames in ReadyToRun images: how many resolved, and why the others did not. */
static void print_r2r_summary(const struct pfc_session *s, int verbose)
{
	const struct pfc_session_stats *st = &s->st;
	uint64_t unres = 0;
	int i, sep = 0;

	for (i = 1; i < 8; i++)
		unres += st->nr_r2r_unresolved[i];
	if (!st->nr_r2r_resolved && !unres)
		return;
	fprintf(stderr, "perfconv: ReadyToRun frames (unique): %llu resolved", (unsigned long long)st->nr_r2r_resolved);
	if (st->nr_r2r_metadata)
		fprintf(stderr, " (%llu named from the images' metadata)", (unsigned long long)st->nr_r2r_metadata);
	fprintf(stderr, ", %llu unresolved", (unsigned long long)unres);
	for (i = 1; i < 8; i++) {
		if (!st->nr_r2r_unresolved[i])
			continue;
		fprintf(stderr, "%s%llu %s", sep ? ", " : " (", (unsigned long long)st->nr_r2r_unresolved[i],
			pfc_r2r_status_str(i));
		sep = 1;
	}
	fprintf(stderr, "%s\n", sep ? ")" : "");
	if (verbose && unres)
		pfc_cli_r2r_images(stderr, s);
	/* the images are the recording machine's .NET install, absent on most other machines */
	if (st->nr_r2r_unresolved[PFC_R2R_NO_FILE]) {
		if (s->opts->symfs && *s->opts->symfs)
			fprintf(stderr, "perfconv: hint: ReadyToRun images not readable are looked for at their recorded "
				"path under --symfs '%s' (-v lists them): copy them there from the recording machine, or "
				"convert a pack made there (-o X.perfpack)\n", s->opts->symfs);
		else
			fprintf(stderr, "perfconv: hint: ReadyToRun images not readable are the recording machine's (-v "
				"lists them): give a copy of its files with --symfs DIR (its .NET install at the same "
				"path under DIR), or convert a pack made there (-o X.perfpack)\n");
	}
	/* the hint only where maps would make a difference: a tenth of the frames or more without a
	 * name for want of one (the images' metadata names nearly all frames of a normal build) */
	if (st->nr_r2r_unresolved[PFC_R2R_NO_MAP] &&
	    st->nr_r2r_unresolved[PFC_R2R_NO_MAP] * 10 >= st->nr_r2r_resolved + unres)
		fprintf(stderr, "perfconv: R2R maps come from 'dotnet publish -p:PublishReadyToRun=true "
			"-p:PublishReadyToRunEmitSymbols=true' (NAME.ni.r2rmap): put them next to the DLL or in --map-dir\n");
}

/* The off-CPU intervals: how many, their total and how they ended. */
static void print_offcpu_summary(const struct pfc_session *s)
{
	const struct pfc_offcpu_stats *o = pfc_offcpu_stats(s->offcpu);

	fprintf(stderr, "perfconv: off-CPU: %llu sched_switch samples, %llu intervals, %.6f s; ended by switch-in %llu "
		"(%.6f s), next sample %llu (%.6f s), exit %llu (%.6f s)\n",
		(unsigned long long)o->nr_switch_samples, (unsigned long long)o->nr_intervals, (double)o->ns / 1e9,
		(unsigned long long)o->nr_by_end[PFC_OC_END_SWITCH_IN], (double)o->ns_by_end[PFC_OC_END_SWITCH_IN] / 1e9,
		(unsigned long long)o->nr_by_end[PFC_OC_END_SAMPLE], (double)o->ns_by_end[PFC_OC_END_SAMPLE] / 1e9,
		(unsigned long long)o->nr_by_end[PFC_OC_END_EXIT], (double)o->ns_by_end[PFC_OC_END_EXIT] / 1e9);
	/* A recording of some processes (not -a) sees a thread switched in only by one of its own
	 * threads: a wake-up from the idle task or another process shows first in the thread's next
	 * sample, so the wait also counts the time it then ran.  --switch-events records every
	 * switch-in. */
	if (o->nr_by_end[PFC_OC_END_SAMPLE] && !o->nr_switch_records)
		fprintf(stderr, "perfconv: hint: %llu off-CPU intervals (%.6f s) ended at the thread's next sample, "
			"not at a switch-in, so they may include time it ran: record with 'perf record --switch-events' "
			"(or -a) to see every switch-in\n",
			(unsigned long long)o->nr_by_end[PFC_OC_END_SAMPLE], (double)o->ns_by_end[PFC_OC_END_SAMPLE] / 1e9);
	if (o->nr_by_end[PFC_OC_END_RECORDING])
		fprintf(stderr, "perfconv: off-CPU: %llu threads were still waiting when the recording ended: "
			"%.6f s counted up to its last time stamp\n",
			(unsigned long long)o->nr_by_end[PFC_OC_END_RECORDING], (double)o->ns_by_end[PFC_OC_END_RECORDING] / 1e9);
	if (o->nr_runnable)
		fprintf(stderr, "perfconv: off-CPU: %llu switches of runnable (preempted) threads left out (--off-cpu=all "
			"counts them)\n", (unsigned long long)o->nr_runnable);
	if (o->nr_no_time)
		fprintf(stderr, "perfconv: off-CPU: %llu samples without a time stamp ignored\n",
			(unsigned long long)o->nr_no_time);
	if (pfc_offcpu_thread_time(s->offcpu))
		fprintf(stderr, "perfconv: thread time: %llu on-CPU samples\n", (unsigned long long)o->nr_clock_samples);
}

/* -v: each kind of the symbol cache's hits and misses in this conversion, when it was asked */
static void cache_lines(const struct pfc_session *s)
{
	const struct pfc_session_stats *st = &s->st;
	const struct {
		const char *what, *dir;
		uint64_t hits, misses, corrupt;
	} k[] = {
		{ "kernel symbol", "kallsyms", st->nr_symcache_hits, st->nr_symcache_misses, st->nr_symcache_corrupt },
		{ "ELF symbol", "elf", st->nr_ecache_hits, st->nr_ecache_misses, st->nr_ecache_corrupt },
		{ "DWARF image", "dwarf", st->nr_dcache_hits, st->nr_dcache_misses, st->nr_dcache_corrupt },
		{ "ReadyToRun method", "r2r", st->nr_rcache_hits, st->nr_rcache_misses, st->nr_rcache_corrupt },
	};
	size_t i;

	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (k[i].hits || k[i].misses)
			fprintf(stderr, "perfconv: %s cache: %llu hit, %llu miss%s (%s/%s)\n", k[i].what,
				(unsigned long long)k[i].hits, (unsigned long long)k[i].misses,
				!k[i].corrupt ? "" : i == 0 ? ", a corrupt entry ignored and written again" :
				", corrupt entries ignored and written again", s->opts->cache_dir, k[i].dir);
}

void pfc_cli_summary(const struct cli *c, struct pfc_session *s, uint64_t written, const struct pfc_cli_phases *ph)
{
	const struct pfc_session_stats *st = &s->st;

	if (c->quiet)
		return;
	fprintf(stderr, "perfconv: '%s': %llu samples read, %llu written (%zu unique stacks, %zu unique frames)\n",
		s->opts->input, (unsigned long long)st->nr_samples, (unsigned long long)written,
		s->stacks.nr_stacks, s->stacks.nr_frames);
	if (c->verbose)
		fprintf(stderr, "perfconv: %llu records, %llu samples aggregated from the callchain cache, %llu frames\n",
			(unsigned long long)st->nr_records, (unsigned long long)s->chains.nr_hits,
			(unsigned long long)st->nr_frames);
	if (c->verbose)
		fprintf(stderr, "perfconv: %.3f s reading records, %.3f s resolving symbols, %.3f s writing\n", ph->read,
			ph->symbols, ph->write);
	if (c->verbose)
		cache_lines(s);
	if (st->nr_samples_filtered)
		fprintf(stderr, "perfconv: %llu samples left out by --comm, --pid=, --tid= or --time\n",
			(unsigned long long)st->nr_samples_filtered);
	if (c->base)	/* how big the other side of the comparison was */
		fprintf(stderr, "perfconv: compared with '%s': %llu samples read, %llu kept\n", c->diff,
			(unsigned long long)c->base->st.nr_samples,
			(unsigned long long)(c->base->st.nr_samples - c->base->st.nr_samples_filtered));
	if (st->nr_lost_events || st->nr_lost_samples)
		fprintf(stderr, "perfconv: %llu events lost in %llu LOST records, %llu samples lost\n",
			(unsigned long long)st->nr_lost_events, (unsigned long long)st->nr_lost_records,
			(unsigned long long)st->nr_lost_samples);
	if (s->symbolized)
		fprintf(stderr, "perfconv: unresolved frames (unique): %llu user, %llu kernel, %llu outside any mapping\n",
			(unsigned long long)st->nr_unresolved_user, (unsigned long long)st->nr_unresolved_kernel,
			(unsigned long long)st->nr_unresolved_nomap);
	if (s->symbolized && (st->nr_jit_perfmap || st->nr_jit_jitdump || st->nr_jit_jitted || st->nr_jit_unresolved ||
			      st->nr_jit_events)) {
		char by_events[80] = "";
		if (st->nr_jit_events)
			snprintf(by_events, sizeof(by_events), ", %llu by the runtime's method events",
				 (unsigned long long)st->nr_jit_events);
		fprintf(stderr, "perfconv: JIT frames (unique): %llu named by perf maps, %llu by jitdumps, "
			"%llu by perf inject's jitted-*.so%s, %llu unresolved%s\n",
			(unsigned long long)st->nr_jit_perfmap, (unsigned long long)st->nr_jit_jitdump,
			(unsigned long long)st->nr_jit_jitted, by_events, (unsigned long long)st->nr_jit_unresolved,
			st->nr_jit_unresolved && c->opts.perf_compat ? " (without --perf-compat perfconv looks further)" : "");
	}
	if (s->symbolized)
		print_r2r_summary(s, c->verbose);
	pfc_cli_dwarf_summary(stderr, &s->st);
	pfc_cli_symbol_summary(stderr, s);
	if (s->rd.junk_bytes)
		fprintf(stderr, "perfconv: ignored %llu bytes of trailing junk\n", (unsigned long long)s->rd.junk_bytes);
	if (s->offcpu)
		print_offcpu_summary(s);
}

/* Batch mode: the workers share stderr and print no summary, but the file's warnings (a perf
 * map to give with --map-dir) and the lines on missing symbols (debug packages) are what a user
 * acts on, so they go back to the parent in the result, which prints them under the file's
 * line.  Cut at a line's end when they do not fit. */
void pfc_cli_batch_hints(struct pfc_session *s, const char *warnings, int symbols, char *buf, size_t len)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);

	buf[0] = 0;
	if (!f)
		return;
	if (warnings)
		fputs(warnings, f);
	if (symbols)
		pfc_cli_symbol_summary(f, s);
	if (fclose(f) != 0 || !text) {
		free(text);
		return;
	}
	if (n >= len) {
		char *nl;

		text[len - 1] = 0;
		if ((nl = strrchr(text, '\n')))
			nl[1] = 0;
	}
	snprintf(buf, len, "%s", text);
	free(text);
}

/* Where a pack's files came from, as a user reads it: the places are files.c's questions,
 * whose short names (root, buildid, proc) are the pack's member directories. */
static const char *const place_text[PFC_FILES_NR] = {
	[PFC_FILES_ROOT] = "at their recorded paths",
	[PFC_FILES_HOST] = "at paths of this machine (debug links, jitdump markers)",
	[PFC_FILES_BUILDID] = "from the build-id cache",
	[PFC_FILES_PROC] = "from running processes (/proc/PID)",
	[PFC_FILES_TMP] = "perf maps and jitdumps from /tmp",
	[PFC_FILES_MAPDIR] = "from --map-dir",
	[PFC_FILES_KERNEL] = "kernel symbols",
	[PFC_FILES_DEBUGINFOD] = "fetched from debuginfod",
	[PFC_FILES_SYMSRV] = "fetched from symbol servers",
};

/* What a pack holds: its size against the recording's, the files by place. */
void pfc_cli_pack_summary(const struct cli *c, const struct pfc_session *s, const char *out,
			  const struct pfc_pack_summary *ps)
{
	const size_t *by = ps->by_place;
	const char *sep = "";
	size_t i;

	fprintf(stderr, "perfconv: packed '%s': %.1f MB (the recording %.1f MB and %zu files of %.1f MB, compressed)",
		out ? out : "<stdout>", ps->pack_bytes / 1e6, (double)s->rd.bytes_total / 1e6, ps->files,
		ps->file_bytes / 1e6);
	for (i = 0; i < PFC_FILES_NR; i++)
		if (by[i]) {
			fprintf(stderr, "%s%zu %s", *sep ? sep : ": ", by[i],
				place_text[i] ? place_text[i] : pfc_files_base_name(i));
			sep = ", ";
		}
	fputc('\n', stderr);
	if (c->verbose && (ps->cache_hits || ps->cache_misses))
		fprintf(stderr, "perfconv: pack frame cache: %llu hit, %llu miss%s (%s/pack)\n",
			(unsigned long long)ps->cache_hits, (unsigned long long)ps->cache_misses,
			ps->cache_corrupt ? ", corrupt entries ignored and written again" : "", s->opts->cache_dir);
	if (c->verbose && ps->cache_hits)
		fprintf(stderr, "perfconv: pack members known by their files' identity, not hashed: %llu of %llu (%s/pack-sum)\n",
			(unsigned long long)ps->cache_known, (unsigned long long)ps->files, s->opts->cache_dir);
}
