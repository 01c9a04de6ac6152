/*
 * perfconv.c - the command line: the option table (which also generates --help),
 * messages, exit codes, progress and atomic output files.  All conversion work is in
 * converter/ and formats/; this file only wires them together and reports.  Batch mode
 * (-O DIR) is in batch.c.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "converter/jit/dotnetname.h"
#include "cli/cli.h"
#include "converter/perffile/hdrprint.h"
#include "converter/jit/r2r.h"
#include "converter/session.h"
#include "converter/perffile/statsprint.h"
#include "formats/perfscript.h"
#include "formats/writer.h"

#ifndef PERFCONV_VERSION
#define PERFCONV_VERSION "0.1.0"
#endif

enum {
	OPT_STATS = 256,
	OPT_HEADER,
	OPT_PID,
	OPT_TID,
	OPT_KERNEL,
	OPT_JIT,
	OPT_ALL,
	OPT_ADDRS,
	OPT_EVENT,
	OPT_SYMFS,
	OPT_KALLSYMS,
	OPT_BUILDID_DIR,
	OPT_MAP_DIR,
	OPT_NO_SORT,
	OPT_HEADER_FULL,
	OPT_MINIDEBUGINFO,
	OPT_FIELDS,
	OPT_SPEEDSCOPE_BY,
	OPT_TITLE,
	OPT_WIDTH,
	OPT_MINWIDTH,
	OPT_INVERTED,
	OPT_INCLUDE_PERF_DATA,
	OPT_RESOLVE_JIT,
	OPT_PID_MAP,
	OPT_DOTNET_NAMES,
	OPT_STRIP_TIERS,
	OPT_R2R_RVA,
	OPT_FORCE,
	OPT_TIMEOUT,
	OPT_COMM,
	OPT_TIME,
	OPT_DEBUGINFOD,
	OPT_DEBUGINFOD_TIMEOUT,
};

struct opt_doc {
	int val;
	const char *name;
	char shortopt;
	int has_arg;                 /* 0 none, 1 required, 2 optional (--name=ARG) */
	const char *arg;
	const char *help;
};

/* The one source of the options: getopt's table and --help both come from it. */
static const struct opt_doc opt_table[] = {
	{ 'i', "input", 'i', 1, "FILE", "perf.data to read; '-' reads a pipe-mode stream from stdin (default: perf.data)" },
	{ 'o', "output", 'o', 1, "FILE", "output file; '-' is stdout; the format follows from the name (default: stdout)" },
	{ 'f', "format", 'f', 1, "NAME", "output format: folded (the default for stdout), perf-script, speedscope, svg, trace.zip (PerfView), pprof; with -O a list: folded,svg" },
	{ 'O', "output-dir", 'O', 1, "DIR", "batch mode: convert every FILE and every recording found under each DIR into DIR" },
	{ 'j', "jobs", 'j', 1, "N", "batch mode: convert N files at a time, each in its own process (default: 1)" },
	{ OPT_FORCE, "force", 0, 0, NULL, "batch mode: convert again even when the outputs are newer than the input" },
	{ OPT_TIMEOUT, "timeout", 0, 1, "SECONDS", "batch mode: stop a conversion that takes longer, and count it as failed" },
	{ OPT_STATS, "stats", 0, 0, NULL, "print record counts by type, like 'perf report --stats'" },
	{ OPT_HEADER, "header", 0, 0, NULL, "print the header features, like 'perf report --header-only'" },
	{ OPT_HEADER_FULL, "header-full", 0, 0, NULL, "print every header feature in full, like 'perf report --header-only -I'" },
	{ OPT_PID, "pid", 0, 2, "LIST", "--pid: folded, add the pid to the process name; --pid=LIST: keep only these processes" },
	{ OPT_TID, "tid", 0, 2, "LIST", "--tid: folded, add the pid and tid to the process name; --tid=LIST: keep only these threads" },
	{ OPT_COMM, "comm", 0, 1, "LIST", "keep only samples of threads with these names (comma-separated), like perf script --comm" },
	{ OPT_TIME, "time", 0, 1, "RANGE", "keep only samples in START,END (seconds) or percent slices (10%/2, 0%-10%), like perf script --time" },
	{ OPT_KERNEL, "kernel", 0, 0, NULL, "folded: mark kernel frames with _[k]" },
	{ OPT_JIT, "jit", 0, 0, NULL, "folded: mark JIT frames (perf maps) with _[j]" },
	{ OPT_ALL, "all", 0, 0, NULL, "folded: --kernel and --jit" },
	{ OPT_ADDRS, "addrs", 0, 0, NULL, "folded: show the address of frames without a symbol" },
	{ OPT_FIELDS, "fields", 0, 1, "LIST", "perf-script: fields to print, as perf script -F (default: perf script's)" },
	{ OPT_SPEEDSCOPE_BY, "speedscope-by", 0, 1, "WHAT", "speedscope: one profile per 'thread' (default) or per 'process'" },
	{ OPT_TITLE, "title", 0, 1, "TEXT", "svg: the graph's title (default: Flame Graph, or Icicle Graph)" },
	{ OPT_WIDTH, "width", 0, 1, "PX", "svg: image width in pixels (default: 1200)" },
	{ OPT_MINWIDTH, "minwidth", 0, 1, "PX", "svg: leave out frames narrower than PX pixels, or PX% of the whole (default: 0.1)" },
	{ OPT_INVERTED, "inverted", 0, 0, NULL, "svg: an icicle graph, roots at the top" },
	{ OPT_EVENT, "event", 0, 1, "NAME", "use samples of this event (default: the first event sampled)" },
	{ OPT_SYMFS, "symfs", 0, 1, "DIR", "look for binaries and debug files under DIR, like perf --symfs" },
	{ OPT_KALLSYMS, "kallsyms", 0, 1, "FILE", "kernel symbols from FILE (default: /proc/kallsyms when the kernel matches)" },
	{ OPT_BUILDID_DIR, "buildid-dir", 0, 1, "DIR", "perf's build-id cache (default: ~/.debug)" },
	{ OPT_MAP_DIR, "map-dir", 0, 1, "DIR", "look for perf-PID.map and jit-PID.dump files in DIR first" },
	{ OPT_RESOLVE_JIT, "resolve-jit", 0, 0, NULL, "name JIT code perf leaves unknown: .NET memfd:doublemapper code, jitdumps read directly" },
	{ OPT_PID_MAP, "pid-map", 0, 1, "HOST=NS", "process HOST named its JIT files with pid NS (containers; repeatable)" },
	{ OPT_DOTNET_NAMES, "dotnet-names", 0, 1, "FORM", ".NET method names: keep (default, as perf prints them) or short" },
	{ OPT_STRIP_TIERS, "strip-tiers", 0, 0, NULL, "drop .NET tier tags such as [OptimizedTier1] from method names" },
	{ OPT_MINIDEBUGINFO, "minidebuginfo", 0, 0, NULL, "also read .gnu_debugdata (MiniDebugInfo) symbols, which perf 6.1 ignores" },
	{ OPT_INCLUDE_PERF_DATA, "include-perf-data", 0, 0, NULL, "trace.zip: add the recording itself as NAME.trace/perf.data" },
	{ OPT_R2R_RVA, "r2r-rva", 0, 0, NULL, "name frames of ReadyToRun images that have no map [IMAGE+0xRVA] by method instead of [IMAGE]" },
	{ OPT_DEBUGINFOD, "debuginfod", 0, 1, "URLS", "fetch the debug files of binaries without symbols by build-id from these debuginfod servers (default: $DEBUGINFOD_URLS; none when unset)" },
	{ OPT_DEBUGINFOD_TIMEOUT, "debuginfod-timeout", 0, 1, "SECONDS", "give up on a debug file after this long, and on the servers for the rest of the conversion (default: 10)" },
	{ OPT_NO_SORT, "no-sort", 0, 0, NULL, "process records in file order instead of time order" },
	{ 'q', "quiet", 'q', 0, NULL, "print no summary, progress or warnings" },
	{ 'v', "verbose", 'v', 0, NULL, "print more detail" },
	{ 'h', "help", 'h', 0, NULL, "show this help and exit" },
	{ 'V', "version", 'V', 0, NULL, "show the version and exit" },
};

#define NR_OPTS (sizeof(opt_table) / sizeof(opt_table[0]))

static void usage(FILE *fp)
{
	size_t i;

	fprintf(fp, "usage: perfconv [OPTION]... -i perf.data -o OUTPUT\n"
		    "       perfconv [OPTION]... -O OUTDIR [-f FORMAT,...] [-j N] FILE|DIR...\n"
		    "Convert Linux perf.data recordings into folded stacks and other formats.\n\n");
	for (i = 0; i < NR_OPTS; i++) {
		const struct opt_doc *d = &opt_table[i];
		char left[64];

		const char *sep = d->has_arg == 2 ? "[=" : d->arg ? " " : "";

		if (d->shortopt)
			snprintf(left, sizeof(left), "-%c, --%s%s%s%s", d->shortopt, d->name, sep, d->arg ? d->arg : "",
				 d->has_arg == 2 ? "]" : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s%s", d->name, sep, d->arg ? d->arg : "",
				 d->has_arg == 2 ? "]" : "");
		fprintf(fp, "  %-26s %s\n", left, d->help);
	}
	fprintf(fp, "\nFormats:");
	for (i = 0; pfc_writers[i]; i++)
		fprintf(fp, " %s", pfc_writers[i]->name);
	fprintf(fp, "\n\nExit status: 0 success, 1 conversion failed, 2 usage error.\n");
}

/* --pid-map HOST=NS */
static int parse_pid_map(struct cli *c, const char *arg)
{
	char *end;
	long host, ns;

	errno = 0;
	host = strtol(arg, &end, 10);
	if (end == arg || *end != '=' || errno || host <= 0 || host > 0x7fffffff)
		goto bad;
	arg = end + 1;
	ns = strtol(arg, &end, 10);
	if (end == arg || *end || errno || ns <= 0 || ns > 0x7fffffff)
		goto bad;
	if (c->opts.nr_pid_map == PFC_CLI_MAX_PID_MAP) {
		fprintf(stderr, "perfconv: --pid-map: at most %d mappings\n", PFC_CLI_MAX_PID_MAP);
		return -1;
	}
	c->pid_map[c->opts.nr_pid_map].host = (int32_t)host;
	c->pid_map[c->opts.nr_pid_map].ns = (int32_t)ns;
	c->opts.nr_pid_map++;
	c->opts.pid_map = c->pid_map;
	return 0;
bad:
	fprintf(stderr, "perfconv: --pid-map: '%s' is not HOST=NS (two pids)\n"
			"Try 'perfconv --help' for more information.\n", arg);
	return -1;
}

/* "'FILE': what at offset N: detail", as one line without the newline; FILE is the file the
 * error is in (a jitdump, say) when it is not the input */
static void format_error(const struct cli *c, const char *input, const struct pfc_error *e, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "'%s': %s", e->file[0] ? e->file : input, pfc_strerror(e->code));

	if (e->has_offset && n < len)
		n += (size_t)snprintf(buf + n, len - n, " at offset %llu", (unsigned long long)e->offset);
	if (e->detail[0] && n < len)
		n += (size_t)snprintf(buf + n, len - n, ": %s", e->detail);
	if (c->verbose && e->src_file && n < len)
		snprintf(buf + n, len - n, " [%s:%d]", e->src_file, e->src_line);
}

static int print_stats(struct pfc_session *s)
{
	struct pfc_stats st;
	const char **names;
	uint64_t *nr, *lost;
	size_t i, n = s->rd.nr_evsels;
	int ret;

	memset(&st, 0, sizeof(st));
	names = calloc(n + 1, sizeof(*names));
	nr = calloc(n + 1, sizeof(*nr));
	lost = calloc(n + 1, sizeof(*lost));
	if (!names || !nr || !lost) {
		free(names);
		free(nr);
		free(lost);
		return -1;
	}
	for (i = 0; i < n; i++) {
		names[i] = pfc_session_evsel_name(s, i);
		nr[i] = s->rd.evsels[i]->nr_samples;
		lost[i] = s->rd.evsels[i]->nr_lost_samples;
	}
	memcpy(st.nr_by_type, s->st.nr_by_type, sizeof(st.nr_by_type));
	st.total = s->st.nr_records;
	st.lost_events = s->st.nr_lost_events;
	st.lost_samples = s->st.nr_lost_samples;
	st.evsel_names = names;
	st.evsel_nr_samples = nr;
	st.evsel_nr_lost = lost;
	st.nr_evsels = n;
	ret = pfc_stats_print(stdout, &st);
	free(names);
	free(nr);
	free(lost);
	return ret;
}

static int print_header(struct pfc_session *s, int full)
{
	struct pfc_hdr_view v;
	struct pfc_hdr_evsel *evs;
	size_t i;
	int ret;

	memset(&v, 0, sizeof(v));
	evs = calloc(s->rd.nr_evsels + 1, sizeof(*evs));
	if (!evs)
		return -1;
	for (i = 0; i < s->rd.nr_evsels; i++) {
		evs[i].attr = s->rd.evsels[i]->attr;
		evs[i].attr_size = s->rd.evsels[i]->attr_size;
		evs[i].name = s->rd.evsels[i]->name;
		evs[i].ids = s->rd.evsels[i]->ids;
		evs[i].nr_ids = s->rd.evsels[i]->nr_ids;
	}
	v.path = s->opts->input;
	v.pipe_mode = s->rd.pipe_mode;
	v.needs_swap = s->rd.swap;
	if (!s->rd.pipe_mode) {
		v.data_offset = s->rd.data.offset;
		v.data_size = s->rd.data.size;
		v.feat_offset = s->rd.feat_offset;
	}
	v.header_version = 1;
	memcpy(v.feat_bitmap, s->rd.feat_bitmap, sizeof(v.feat_bitmap));
	for (i = 0; i < PFC_FEAT_BITS; i++)
		v.feat[i] = s->rd.feat[i];
	v.evsels = evs;
	v.nr_evsels = s->rd.nr_evsels;
	v.have_mtime = s->rd.have_mtime;
	v.mtime = s->rd.mtime;
	ret = pfc_hdr_print(stdout, &v, full);
	free(evs);
	return ret;
}

/* Frames in ReadyToRun images: how many resolved, and why the others did not. */
static void print_r2r_summary(const struct pfc_session_stats *st)
{
	uint64_t unres = 0;
	int i, sep = 0;

	for (i = 1; i < 8; i++)
		unres += st->nr_r2r_unresolved[i];
	if (!st->nr_r2r_resolved && !unres)
		return;
	fprintf(stderr, "perfconv: ReadyToRun frames (unique): %llu resolved, %llu unresolved",
		(unsigned long long)st->nr_r2r_resolved, (unsigned long long)unres);
	for (i = 1; i < 8; i++) {
		if (!st->nr_r2r_unresolved[i])
			continue;
		fprintf(stderr, "%s%llu %s", sep ? ", " : " (", (unsigned long long)st->nr_r2r_unresolved[i],
			pfc_r2r_status_str(i));
		sep = 1;
	}
	fprintf(stderr, "%s\n", sep ? ")" : "");
	if (st->nr_r2r_unresolved[PFC_R2R_NO_MAP])
		fprintf(stderr, "perfconv: R2R maps come from 'dotnet publish -p:PublishReadyToRun=true "
			"-p:PublishReadyToRunEmitSymbols=true' (NAME.ni.r2rmap): put them next to the DLL or in --map-dir\n");
}

/* Seconds spent reading and processing records, resolving symbols and writing (-v). */
struct phases {
	double read, symbols, write;
};

static void print_summary(const struct cli *c, struct pfc_session *s, uint64_t written, const struct phases *ph)
{
	const struct pfc_session_stats *st = &s->st;

	if (c->quiet)
		return;
	fprintf(stderr, "perfconv: '%s': %llu samples read, %llu written (%zu unique stacks, %zu unique frames)\n",
		s->opts->input, (unsigned long long)st->nr_samples, (unsigned long long)written,
		s->stacks.nr_stacks, s->stacks.nr_frames);
	if (c->verbose)
		fprintf(stderr, "perfconv: %llu records, %llu samples aggregated from the callchain cache, %llu frames\n",
			(unsigned long long)st->nr_records, (unsigned long long)s->nr_raw_hits,
			(unsigned long long)st->nr_frames);
	if (c->verbose)
		fprintf(stderr, "perfconv: %.3f s reading records, %.3f s resolving symbols, %.3f s writing\n", ph->read,
			ph->symbols, ph->write);
	if (st->nr_samples_filtered)
		fprintf(stderr, "perfconv: %llu samples left out by --comm, --pid=, --tid= or --time\n",
			(unsigned long long)st->nr_samples_filtered);
	if (st->nr_lost_events || st->nr_lost_samples)
		fprintf(stderr, "perfconv: %llu events lost in %llu LOST records, %llu samples lost\n",
			(unsigned long long)st->nr_lost_events, (unsigned long long)st->nr_lost_records,
			(unsigned long long)st->nr_lost_samples);
	if (s->symbolized)
		fprintf(stderr, "perfconv: unresolved frames (unique): %llu user, %llu kernel, %llu outside any mapping\n",
			(unsigned long long)st->nr_unresolved_user, (unsigned long long)st->nr_unresolved_kernel,
			(unsigned long long)st->nr_unresolved_nomap);
	if (s->symbolized && (st->nr_jit_perfmap || st->nr_jit_jitdump || st->nr_jit_jitted || st->nr_jit_unresolved))
		fprintf(stderr, "perfconv: JIT frames (unique): %llu named by perf maps, %llu by jitdumps, "
			"%llu by perf inject's jitted-*.so, %llu unresolved%s\n",
			(unsigned long long)st->nr_jit_perfmap, (unsigned long long)st->nr_jit_jitdump,
			(unsigned long long)st->nr_jit_jitted, (unsigned long long)st->nr_jit_unresolved,
			st->nr_jit_unresolved && !c->opts.resolve_jit ? " (--resolve-jit looks further)" : "");
	if (s->symbolized)
		print_r2r_summary(st);
	pfc_cli_symbol_summary(stderr, s);
	if (st->nr_dwarf_not_unwound)
		fprintf(stderr, "perfconv: %llu samples recorded with --call-graph dwarf: user stacks were not unwound "
			"(DWARF unwinding is not implemented yet); kept the kernel part and the user ip\n",
			(unsigned long long)st->nr_dwarf_not_unwound);
	if (s->rd.junk_bytes)
		fprintf(stderr, "perfconv: ignored %llu bytes of trailing junk\n", (unsigned long long)s->rd.junk_bytes);
}

/* A device or a FIFO (/dev/null, /dev/stdout, a named pipe): its name has no ending to tell a
 * format, and it is written in place, never replaced by a renamed file. */
static int is_device_name(const char *output)
{
	struct stat st;

	return !strncmp(output, "/dev/", 5) ||
	       (stat(output, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

/* Write through a temporary file in the target directory, renamed into place only when
 * everything was written: no half-written output is ever left under the final name, and
 * a failed write removes the temporary file. */
static int write_output(struct cli *c, struct pfc_session *s, const struct pfc_writer *w, const char *output,
			const struct pfc_wopts *wo)
{
	struct pfc_error *err = s->err;
	char tmp[PATH_MAX];
	FILE *out;
	int fd = -1, ret, to_stdout = !output || !strcmp(output, "-");

	if (to_stdout) {
		out = stdout;
	} else if (is_device_name(output)) {
		if (!(out = fopen(output, "w")))
			return PFC_FAIL_NOOFF(err, WRITE, "cannot open '%s': %s", output, strerror(errno));
		ret = pfc_writer_write(w, out, s, wo, err);
		if (fclose(out) != 0 && ret == 0)
			ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", output, strerror(errno));
		return ret;
	} else {
		if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", output) >= (int)sizeof(tmp))
			return PFC_FAIL_NOOFF(err, USAGE, "output name is too long");
		fd = mkstemp(tmp);
		if (fd < 0)
			return PFC_FAIL_NOOFF(err, WRITE, "cannot create '%s': %s", tmp, strerror(errno));
		fchmod(fd, 0644 & ~c->umask);
		out = fdopen(fd, "w");
		if (!out) {
			close(fd);
			unlink(tmp);
			return PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", tmp, strerror(errno));
		}
	}
	ret = pfc_writer_write(w, out, s, wo, err);
	if (ret == 0 && (fflush(out) != 0 || ferror(out)))
		ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", to_stdout ? "<stdout>" : output, strerror(errno));
	if (!to_stdout) {
		if (ret == 0 && fsync(fileno(out)) != 0 && errno != EINVAL)
			ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", output, strerror(errno));
		if (fclose(out) != 0 && ret == 0)
			ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", output, strerror(errno));
		if (ret == 0 && rename(tmp, output) != 0)
			ret = PFC_FAIL_NOOFF(err, WRITE, "cannot rename '%s' to '%s': %s", tmp, output,
					     strerror(errno));
		if (ret != 0)
			unlink(tmp);
	}
	return ret;
}

/* Flamescope (app/common/fileutil.py) refuses a path with a character outside its class
 * [a-zA-Z0-9.,/_%+: -\\], in which " -\\" is the range from space to backslash. */
static int flamescope_name_ok(const char *p)
{
	for (; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (!((ch >= 'a' && ch <= 'z') || (ch >= ' ' && ch <= '\\') || ch == '_'))
			return 0;
	}
	return 1;
}

/* --width PX: a whole number of pixels, wide enough for the title bar's buttons */
static int parse_width(const char *arg, int *width)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 200 || v > 1000000) {
		fprintf(stderr, "perfconv: invalid --width '%s': expected a number of pixels from 200 to 1000000\n"
			"Try 'perfconv --help' for more information.\n", arg);
		return -1;
	}
	*width = (int)v;
	return 0;
}

/* --minwidth PX or PX%: as flamegraph.pl, a non-negative number of pixels or a percentage */
static int parse_minwidth(const char *arg, struct pfc_wopts *w)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	w->minwidth_pct = end != arg && *end == '%';
	if (w->minwidth_pct)
		end++;
	if (errno || end == arg || *end || !(v >= 0) || v > 1e9 || (w->minwidth_pct && v > 100) ||
	    strspn(arg, "0123456789.%") != strlen(arg)) {
		fprintf(stderr, "perfconv: invalid --minwidth '%s': expected pixels (0.1) or a percentage (0.5%%)\n"
			"Try 'perfconv --help' for more information.\n", arg);
		return -1;
	}
	w->minwidth = v;
	w->minwidth_set = 1;
	return 0;
}

/* argv as a shell would take it back, for logs: arguments with special characters quoted. */
static char *command_line(int argc, char **argv)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int i;

	if (!f)
		return NULL;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (i)
			fputc(' ', f);
		if (*a && !a[strcspn(a, " \t\n'\"\\$`!*?[]{}()<>|&;#~")]) {
			fputs(a, f);
			continue;
		}
		fputc('\'', f);
		for (; *a; a++) {
			if (*a == '\'')
				fputs("'\\''", f);
			else
				fputc(*a, f);
		}
		fputc('\'', f);
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Writers that keep a log get the warnings as text; they still reach stderr (unless -q),
 * once the input is read. */
struct warn_capture {
	FILE *f;
	char *buf;
	size_t len;
};

static int capture_start(struct warn_capture *wc, struct pfc_opts *o)
{
	wc->f = open_memstream(&wc->buf, &wc->len);
	if (!wc->f)
		return -1;
	o->log = wc->f;
	return 0;
}

static void capture_end(struct warn_capture *wc)
{
	if (wc->f)
		fclose(wc->f);
	free(wc->buf);
	memset(wc, 0, sizeof(*wc));
}

/* ---- progress on a terminal ---- */

struct progress {
	const struct cli *c;
	struct timespec start, last;
	double delay;           /* seconds before the first line (PERFCONV_PROGRESS_DELAY; tests) */
	int shown;
};

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* Called every few thousand records: redraws one line at most five times a second, and
 * only once the conversion has run for half a second, so short ones print nothing. */
static void progress_cb(void *arg, const struct pfc_session *s)
{
	struct progress *p = arg;
	struct timespec now;
	double el, mb, rate;
	/* called by the thread that processes records, while another may read them */
	uint64_t done = __atomic_load_n(&s->rd.bytes_done, __ATOMIC_RELAXED), total = s->rd.bytes_total;
	uint64_t samples = s->st.nr_samples;
	char line[256];
	int n;

	clock_gettime(CLOCK_MONOTONIC, &now);
	el = since(&p->start, &now);
	if (el < p->delay || (p->shown && since(&p->last, &now) < 0.2))
		return;
	p->last = now;
	mb = (double)done / 1e6;
	rate = mb / el;
	if (total && done <= total) {
		double left = rate > 0 ? ((double)(total - done) / 1e6) / rate : 0;
		n = snprintf(line, sizeof(line), "perfconv: %.1f/%.1f MB (%d%%), %llu samples, %.1f MB/s, ETA %.0f s",
			     mb, (double)total / 1e6, (int)(100.0 * (double)done / (double)total),
			     (unsigned long long)samples, rate, left);
	} else {
		n = snprintf(line, sizeof(line), "perfconv: %.1f MB, %llu samples, %.1f MB/s", mb,
			     (unsigned long long)samples, rate);
	}
	if (p->c->verbose && n > 0 && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n, ", %zu stacks, %.0f samples/s", s->stacks.nr_stacks,
			 (double)samples / el);
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
	p->shown = 1;
}

/* Warnings written while a progress line is on the terminal erase it first: the session
 * logs through this stream instead of stderr itself. */
static ssize_t log_write(void *cookie, const char *buf, size_t len)
{
	struct progress *p = cookie;

	if (p->shown) {
		fputs("\r\033[K", stderr);
		p->shown = 0;
	}
	return (ssize_t)fwrite(buf, 1, len, stderr);
}

static void progress_end(struct progress *p)
{
	if (p->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		p->shown = 0;
	}
}

static uint64_t count_unresolved(const struct pfc_session *s)
{
	return s->st.nr_unresolved_user + s->st.nr_unresolved_kernel + s->st.nr_unresolved_nomap;
}

int pfc_cli_convert(struct cli *c, const char *input, const struct pfc_writer *const *ws,
		    const char *const *outs, size_t n, struct pfc_job_result *res)
{
	struct pfc_session s;
	struct pfc_error err;
	struct pfc_opts o = c->opts;
	struct progress prog;
	struct timespec t0, t1, t_read, t_sym;
	struct phases ph;
	struct warn_capture wc = { 0 };
	char *cmdline = NULL;
	FILE *logf = NULL, *log_to = c->opts.log;
	size_t i;
	int ret, single = !c->outdir, need_log = 0;

	memset(res, 0, sizeof(*res));
	memset(&err, 0, sizeof(err));
	memset(&prog, 0, sizeof(prog));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	o.input = input;
	o.keep_stream = 0;
	for (i = 0; i < n; i++)
		if (ws[i]->needs & PFC_NEED_STREAM)
			o.keep_stream = 1;
	o.preload_kernel = n > 0;
	if (pfc_filter_active(&c->filter))
		o.filter = &c->filter;
	for (i = 0; i < n; i++)
		if (ws[i]->needs & PFC_NEED_LOG)
			need_log = 1;
	if (c->progress && n > 0) {
		cookie_io_functions_t io = { .write = log_write };
		const char *d = getenv("PERFCONV_PROGRESS_DELAY");
		prog.c = c;
		prog.start = t0;
		prog.delay = d && *d ? strtod(d, NULL) : 0.5;
		o.progress = progress_cb;
		o.progress_arg = &prog;
		if (o.log && (logf = fopencookie(&prog, "w", io)))
			setvbuf(logf, NULL, _IONBF, 0);
		if (logf)
			o.log = log_to = logf;
	}
	/* writers that keep a log get the warnings as text; they still reach stderr (unless -q)
	 * once the input is read */
	if (need_log && (!(cmdline = command_line(c->argc, c->argv)) || capture_start(&wc, &o) < 0)) {
		free(cmdline);
		snprintf(res->msg, sizeof(res->msg), "'%s': out of memory", input);
		if (logf)
			fclose(logf);
		return -PFC_ERR_NOMEM;
	}
	ret = pfc_session_open(&s, &o, &err);
	/* a pipe stream carries its header features as records: read them first */
	if (ret == 0 && (c->stats || n || (c->header && s.rd.pipe_mode)))
		ret = pfc_session_process(&s);
	if (ret == -PFC_ERR_RETRY) {
		/* rare: kernel frames outside the kallsyms range came before the preloaded
		 * symbols were in; the second pass loads them in line, exactly as perf does */
		if (c->verbose)
			fprintf(stderr, "perfconv: '%s': converting again with the kernel symbols read in line\n", input);
		pfc_session_close(&s);
		memset(&err, 0, sizeof(err));
		o.preload_kernel = 0;
		if (wc.f) {	/* the second pass warns again */
			capture_end(&wc);
			if (capture_start(&wc, &o) < 0) {
				snprintf(res->msg, sizeof(res->msg), "'%s': out of memory", input);
				if (logf)
					fclose(logf);
				return -PFC_ERR_NOMEM;
			}
		}
		if (o.filter) {	/* percentages are resolved again from the same header */
			c->filter.time_resolved = !c->filter.time_percent;
			if (c->filter.time_percent) {
				free(c->filter.ranges);
				c->filter.ranges = NULL;
				c->filter.nr_ranges = 0;
			}
		}
		ret = pfc_session_open(&s, &o, &err);
		if (ret == 0)
			ret = pfc_session_process(&s);
	}
	clock_gettime(CLOCK_MONOTONIC, &t_read);
	progress_end(&prog);
	if (ret == 0 && single && c->header)
		ret = print_header(&s, c->header_full) < 0 ? PFC_FAIL_NOOFF(&err, IO, "cannot print the header") : 0;
	if (ret == 0 && single && c->stats)
		ret = print_stats(&s) < 0 ? PFC_FAIL_NOOFF(&err, NOMEM, "stats") : 0;
	if (ret == 0 && n)
		ret = pfc_session_symbolize(&s);
	clock_gettime(CLOCK_MONOTONIC, &t_sym);
	if (wc.f) {
		fflush(wc.f);
		if (log_to && wc.len)
			fwrite(wc.buf, 1, wc.len, log_to);
	}
	for (i = 0; ret == 0 && i < n; i++) {
		struct pfc_wopts wo = c->wopts;
		const char *out = outs[i];

		wo.output = out;
		wo.command_line = cmdline;
		wo.warnings = wc.f ? wc.buf : NULL;
		/* a name ending in .gz asks for gzip, whatever the format */
		wo.gzip = pfc_writer_name_gzip(out);
		ret = write_output(c, &s, ws[i], out, &wo);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->seconds = since(&t0, &t1);
	ph.read = since(&t0, &t_read);
	ph.symbols = since(&t_read, &t_sym);
	ph.write = since(&t_sym, &t1);
	res->samples = s.st.nr_samples;
	res->kept = s.st.nr_samples - s.st.nr_samples_filtered;
	res->frames = s.stacks.nr_frames;
	res->unresolved = count_unresolved(&s);
	if (ret != 0) {
		format_error(c, input, &err, res->msg, sizeof(res->msg));
	} else {
		res->ok = 1;
		if (single && n)
			print_summary(c, &s, res->kept, &ph);
	}
	pfc_session_close(&s);
	capture_end(&wc);
	free(cmdline);
	if (logf)
		fclose(logf);
	return ret;
}

/* "--pid 123" reads as the folded flag followed by an input name: say what was meant. */
static int check_pid_tid_args(int argc, char **argv)
{
	int i;

	for (i = 1; i + 1 < argc; i++) {
		const char *a = argv[i], *v = argv[i + 1];
		if (!strcmp(a, "--"))
			break;
		if ((!strcmp(a, "--pid") || !strcmp(a, "--tid")) && *v && strspn(v, "0123456789,") == strlen(v)) {
			fprintf(stderr, "perfconv: '%s %s': to keep only these %s write %s=%s (%s alone is the folded "
				"format's flag)\nTry 'perfconv --help' for more information.\n", a, v,
				a[2] == 'p' ? "processes" : "threads", a, v, a);
			return -1;
		}
	}
	return 0;
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("perfconv: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'perfconv --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

static int filter_error(const struct pfc_error *e)
{
	return usage_error("%s", e->detail);
}

int main(int argc, char **argv)
{
	struct option longopts[NR_OPTS + 1];
	char shortopts[64];
	static char bdir[PATH_MAX];
	struct cli c;
	struct pfc_error err;
	struct pfc_job_result res;
	const struct pfc_writer *ws[16];
	size_t i, k = 0, nws = 0;
	int opt, ret;

	memset(&c, 0, sizeof(c));
	memset(&err, 0, sizeof(err));
	c.opts.input = "perf.data";
	c.opts.max_stack = 127;
	c.jobs = 1;
	c.wopts.version = PERFCONV_VERSION;
	for (i = 0; i < NR_OPTS; i++) {
		longopts[i].name = opt_table[i].name;
		longopts[i].has_arg = opt_table[i].has_arg == 2 ? optional_argument :
				      opt_table[i].has_arg ? required_argument : no_argument;
		longopts[i].flag = NULL;
		longopts[i].val = opt_table[i].val;
		if (opt_table[i].shortopt) {
			shortopts[k++] = opt_table[i].shortopt;
			if (opt_table[i].has_arg)
				shortopts[k++] = ':';
		}
	}
	memset(&longopts[NR_OPTS], 0, sizeof(longopts[0]));
	shortopts[k] = 0;
	if (check_pid_tid_args(argc, argv) < 0)
		return EXIT_USAGE;
	c.argc = argc;
	c.argv = argv;
	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (opt) {
		case 'i': c.opts.input = optarg; break;
		case 'o': c.output = optarg; break;
		case 'f': c.format = optarg; break;
		case 'O': c.outdir = optarg; break;
		case 'j': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 1 || v > 1024)
				return usage_error("-j '%s': expected a number of jobs from 1 to 1024", optarg);
			c.jobs = (int)v;
			break;
		}
		case OPT_FORCE: c.force = 1; break;
		case OPT_TIMEOUT: {
			char *end;
			double v = strtod(optarg, &end);
			if (end == optarg || *end || !(v > 0) || v > 1e7)
				return usage_error("--timeout '%s': expected a number of seconds greater than 0", optarg);
			c.timeout = v;
			break;
		}
		case OPT_STATS: c.stats = 1; break;
		case OPT_HEADER: c.header = 1; break;
		case OPT_HEADER_FULL: c.header = c.header_full = 1; break;
		case OPT_PID:
			if (!optarg)
				c.wopts.pid = 1;
			else if (pfc_filter_add_pids(&c.filter, optarg, 0, &err) < 0)
				return filter_error(&err);
			break;
		case OPT_TID:
			if (!optarg)
				c.wopts.tid = 1;
			else if (pfc_filter_add_pids(&c.filter, optarg, 1, &err) < 0)
				return filter_error(&err);
			break;
		case OPT_COMM:
			if (pfc_filter_add_comms(&c.filter, optarg, &err) < 0)
				return filter_error(&err);
			break;
		case OPT_TIME:
			if (pfc_filter_set_time(&c.filter, optarg, &err) < 0)
				return filter_error(&err);
			break;
		case OPT_KERNEL: c.wopts.kernel = 1; break;
		case OPT_JIT: c.wopts.jit = 1; break;
		case OPT_ALL: c.wopts.kernel = c.wopts.jit = 1; break;
		case OPT_ADDRS: c.wopts.addrs = 1; break;
		case OPT_EVENT: c.wopts.event = optarg; break;
		case OPT_FIELDS: c.wopts.fields = optarg; break;
		case OPT_SPEEDSCOPE_BY:
			if (!strcmp(optarg, "thread")) {
				c.wopts.speedscope_by = PFC_SPEEDSCOPE_BY_THREAD;
			} else if (!strcmp(optarg, "process")) {
				c.wopts.speedscope_by = PFC_SPEEDSCOPE_BY_PROCESS;
			} else {
				fprintf(stderr, "perfconv: --speedscope-by: '%s' is neither 'thread' nor 'process'\n"
					"Try 'perfconv --help' for more information.\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_TITLE: c.wopts.title = optarg; break;
		case OPT_WIDTH:
			if (parse_width(optarg, &c.wopts.width) < 0)
				return EXIT_USAGE;
			break;
		case OPT_MINWIDTH:
			if (parse_minwidth(optarg, &c.wopts) < 0)
				return EXIT_USAGE;
			break;
		case OPT_INVERTED: c.wopts.inverted = 1; break;
		case OPT_SYMFS: c.opts.symfs = optarg; break;
		case OPT_KALLSYMS: c.opts.kallsyms = optarg; break;
		case OPT_BUILDID_DIR: c.opts.buildid_dir = optarg; break;
		case OPT_MAP_DIR: c.opts.map_dir = optarg; break;
		case OPT_NO_SORT: c.opts.no_sort = 1; break;
		case OPT_RESOLVE_JIT: c.opts.resolve_jit = 1; break;
		case OPT_PID_MAP:
			if (parse_pid_map(&c, optarg) < 0)
				return EXIT_USAGE;
			c.opts.resolve_jit = 1;
			break;
		case OPT_DOTNET_NAMES:
			if (!strcmp(optarg, "short")) {
				c.opts.dotnet_names = PFC_DOTNET_NAMES_SHORT;
			} else if (!strcmp(optarg, "keep")) {
				c.opts.dotnet_names = PFC_DOTNET_NAMES_KEEP;
			} else {
				fprintf(stderr, "perfconv: --dotnet-names: unknown form '%s' (keep or short)\n"
						"Try 'perfconv --help' for more information.\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_STRIP_TIERS: c.opts.strip_tiers = 1; break;
		case OPT_MINIDEBUGINFO: c.opts.minidebuginfo = 1; break;
		case OPT_INCLUDE_PERF_DATA: c.wopts.include_perf_data = 1; break;
		case OPT_R2R_RVA: c.opts.r2r_funcs = 1; break;
		case OPT_DEBUGINFOD: c.opts.debuginfod_urls = optarg; break;
		case OPT_DEBUGINFOD_TIMEOUT: {
			char *end;
			double v = strtod(optarg, &end);
			if (end == optarg || *end || !(v > 0) || v > 86400)
				return usage_error("--debuginfod-timeout '%s': expected a number of seconds greater than 0", optarg);
			c.opts.debuginfod_timeout = v;
			break;
		}
		case 'q': c.quiet = 1; break;
		case 'v': c.verbose++; break;
		case 'h': usage(stdout); return EXIT_OK;
		case 'V': printf("perfconv %s\n", PERFCONV_VERSION); return EXIT_OK;
		default:
			fprintf(stderr, "Try 'perfconv --help' for more information.\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc && !c.outdir)
		return usage_error("unexpected argument '%s' (several inputs need -O OUTDIR)", argv[optind]);
	c.umask = umask(0);
	umask(c.umask);
	c.opts.verbose = c.verbose;
	c.opts.log = c.quiet ? NULL : stderr;
	/* debuginfod servers only when the user named some */
	if (!c.opts.debuginfod_urls && getenv("DEBUGINFOD_URLS") && *getenv("DEBUGINFOD_URLS"))
		c.opts.debuginfod_urls = getenv("DEBUGINFOD_URLS");
	c.progress = !c.quiet && isatty(STDERR_FILENO);
	if (!c.opts.buildid_dir) {
		const char *home = getenv("HOME");
		if (home && *home) {
			snprintf(bdir, sizeof(bdir), "%s/.debug", home);
			c.opts.buildid_dir = bdir;
		}
	}
	if (c.wopts.fields) {
		struct pfc_ps_fields f;
		char why[160];
		if (pfc_ps_fields_parse(c.wopts.fields, &f, why, sizeof(why)) < 0) {
			fprintf(stderr, "perfconv: --fields: %s\nTry 'perfconv --help' for more information.\n", why);
			return EXIT_USAGE;
		}
	}
	if (c.outdir) {
		const char *f = c.format ? c.format : "folded";
		if (c.output || c.stats || c.header)
			return usage_error("%s cannot be used with -O (batch mode)",
					   c.output ? "-o" : c.stats ? "--stats" : "--header");
		if (optind >= argc)
			return usage_error("-O '%s': no input files or directories given", c.outdir);
		while (*f) {
			size_t len = strcspn(f, ",");
			char name[64];
			const struct pfc_writer *w;
			if (len && len < sizeof(name)) {
				memcpy(name, f, len);
				name[len] = 0;
				if (!(w = pfc_writer_by_name(name))) {
					fprintf(stderr, "perfconv: unknown format '%s'\nTry 'perfconv --help' for more information.\n", name);
					return EXIT_USAGE;
				}
				for (i = 0; i < nws && ws[i] != w; i++)
					;
				if (i == nws) {
					if (nws == sizeof(ws) / sizeof(ws[0]))
						return usage_error("-f '%s': too many formats", c.format);
					ws[nws++] = w;
				}
			} else if (len) {
				return usage_error("unknown format in '%s'", c.format);
			}
			f += len + (f[len] == ',');
		}
		if (!nws)
			return usage_error("-f '%s': no format", c.format);
		ret = pfc_batch_run(&c, argv + optind, argc - optind, ws, nws);
		pfc_filter_free(&c.filter);
		return ret;
	}
	if (c.jobs > 1 || c.force || c.timeout > 0)
		return usage_error("%s needs -O OUTDIR (batch mode)", c.jobs > 1 ? "-j" : c.force ? "--force" : "--timeout");
	if (!c.stats && !c.header) {
		const struct pfc_writer *w = NULL;
		if (c.format) {
			w = pfc_writer_by_name(c.format);
			if (!w) {
				fprintf(stderr, "perfconv: unknown format '%s'\nTry 'perfconv --help' for more information.\n",
					c.format);
				return EXIT_USAGE;
			}
		} else if (c.output && strcmp(c.output, "-")) {
			int gz;
			/* a name means what it says; only a device has no ending to tell */
			if (!(w = pfc_writer_by_filename(c.output, &gz)) && !is_device_name(c.output)) {
				fprintf(stderr, "perfconv: '%s': the name does not tell the format; give -f NAME or "
					"end the name as one of:\n", c.output);
				pfc_writer_list_suffixes(stderr);
				fputs("Try 'perfconv --help' for more information.\n", stderr);
				return EXIT_USAGE;
			}
		}
		ws[nws++] = w ? w : &pfc_writer_folded;
		if ((ws[0]->needs & PFC_NO_GZIP) && pfc_writer_name_gzip(c.output))
			return usage_error("'%s': a trace.zip is compressed already; its name cannot end in .gz", c.output);
	}
	if (nws && ws[0] == &pfc_writer_perf_script && c.output && strcmp(c.output, "-") && !c.quiet &&
	    !flamescope_name_ok(c.output))
		fprintf(stderr, "perfconv: warning: '%s': Flamescope does not open files whose path has characters such "
			"as ~ ] ^ { | } ` or non-ASCII ones\n", c.output);
	ret = pfc_cli_convert(&c, c.opts.input, ws, &c.output, nws, &res);
	pfc_filter_free(&c.filter);
	if (ret != 0) {
		fprintf(stderr, "perfconv: %s\n", res.msg);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}
