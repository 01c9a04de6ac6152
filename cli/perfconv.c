/*
 * perfconv.c - main() and the command line: the option table (which also generates
 * --help), option parsing into struct cli, the checks of options against each other, usage
 * messages and exit codes, and the choice of what to run: a single conversion
 * (convert.c), batch mode (-O DIR, batch.c) or a command that converts nothing.  All
 * conversion work is in converter/ and formats/.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/batch.h"
#include "cli/convert.h"
#include "cli/gate.h"
#include "cli/output.h"
#include "cli/record.h"
#include "converter/jit/dotnetname.h"
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
	OPT_PERF_COMPAT,
	OPT_PID_MAP,
	OPT_DOTNET_NAMES,
	OPT_STRIP_TIERS,
	OPT_KEEP_TIERS,
	OPT_R2R_RVA,
	OPT_FORCE,
	OPT_TIMEOUT,
	OPT_COMM,
	OPT_R2R_DUMP,
	OPT_EVENTS,
	OPT_R2R_DUMP_STYLE,
	OPT_TIME,
	OPT_OFF_CPU,
	OPT_THREAD_TIME,
	OPT_DEBUGINFOD,
	OPT_DEBUGINFOD_TIMEOUT,
	OPT_ENABLE_PERFMAP,
	OPT_DISABLE_PERFMAP,
	OPT_SYMBOL_SERVER,
	OPT_SYMBOL_SERVER_TIMEOUT,
	OPT_DIFF,
	OPT_DIFF_NORMALIZE,
	OPT_NEGATE,
	OPT_TOP,
	OPT_FAIL_IF_GROWN,
	OPT_NO_CACHE,
	OPT_ALLOC,
	OPT_DURING,
};

struct opt_doc {
	int val;
	const char *name;
	char shortopt;
	int has_arg;                 /* 0 none, 1 required, 2 optional (--name=ARG) */
	const char *arg;
	const char *help;
};

/* The static build (`make static`, docs/static.md) links every library in; Debian has no static
 * libdebuginfod, so that build has no debuginfod client, and its --help and --version say so. */
#ifdef PFC_STATIC
#define DEBUGINFOD_STATIC "; not in this static build, which has no debuginfod client (--symbol-server still fetches)"
#define BUILD_STATIC " (static)"
#else
#define DEBUGINFOD_STATIC ""
#define BUILD_STATIC ""
#endif

/* The one source of the options: getopt's table and --help both come from it. */
static const struct opt_doc opt_table[] = {
	{ 'i', "input", 'i', 1, "FILE", "perf.data to read; '-' reads a pipe-mode stream from stdin (default: perf.data)" },
	{ 'o', "output", 'o', 1, "FILE", "output file; '-' is stdout; the format follows from the name (default: stdout)" },
	{ 'f', "format", 'f', 1, "NAME", "output format: folded (the default for stdout), perf-script, speedscope, firefox (the Firefox Profiler), svg, trace.zip (PerfView), pprof, pack (the recording and its files), top (the hottest functions as text), runtime (the report of --events); with -O a list: folded,svg" },
	{ 'O', "output-dir", 'O', 1, "DIR", "batch mode: convert every FILE and every recording found under each DIR into DIR" },
	{ 'j', "jobs", 'j', 1, "N", "batch mode: convert N files at a time, each in its own process (default: 1)" },
	{ OPT_FORCE, "force", 0, 0, NULL, "batch mode: convert again even when the outputs are newer than the input" },
	{ OPT_TIMEOUT, "timeout", 0, 1, "SECONDS", "batch mode: stop a conversion that takes longer, and count it as failed; --enable-perfmap: wait this long for the runtime (default: 5)" },
	{ OPT_STATS, "stats", 0, 0, NULL, "print record counts by type, like 'perf report --stats'" },
	{ OPT_HEADER, "header", 0, 0, NULL, "print the header features, like 'perf report --header-only'" },
	{ OPT_HEADER_FULL, "header-full", 0, 0, NULL, "print every header feature in full, like 'perf report --header-only -I'" },
	{ OPT_PID, "pid", 0, 2, "LIST", "--pid: folded, add the pid to the process name; --pid=LIST: keep only these processes" },
	{ OPT_TID, "tid", 0, 2, "LIST", "--tid: folded, add the pid and tid to the process name; --tid=LIST: keep only these threads" },
	{ OPT_COMM, "comm", 0, 1, "LIST", "keep only samples of threads with these names (comma-separated), like perf script --comm; _ also matches a space" },
	{ OPT_TIME, "time", 0, 1, "RANGE", "keep only samples in START,END (seconds) or percent slices (10%/2, 0%-10%), like perf script --time" },
	{ OPT_OFF_CPU, "off-cpu", 0, 2, "all", "a profile of the time threads wait, in ns, from sched:sched_switch samples; =all: also preempted time" },
	{ OPT_THREAD_TIME, "thread-time", 0, 0, NULL, "on-CPU samples (cpu-clock, task-clock) and off-CPU time in one profile, in ns" },
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
	{ OPT_DIFF, "diff", 0, 1, "BASE", "compare the input with the recording or pack BASE: folded as difffolded.pl ('stack base new'), svg a differential flame graph, top the largest changes, pprof the base negated as go tool pprof -diff_base" },
	{ OPT_DIFF_NORMALIZE, "diff-normalize", 0, 0, NULL, "--diff: scale the base to the new profile's total, as difffolded.pl -n" },
	{ OPT_NEGATE, "negate", 0, 0, NULL, "svg with --diff: switch the hues, red where a frame shrank (flamegraph.pl --negate)" },
	{ OPT_TOP, "top", 0, 1, "N", "top: how many functions to list (default: 20)" },
	{ OPT_FAIL_IF_GROWN, "fail-if-grown", 0, 1, "PCT", "--diff: exit with status 3, and list them, when a function's total or self samples grew beyond noise by more than PCT percentage points" },
	{ OPT_EVENT, "event", 0, 1, "NAME", "use samples of this event (default: the first event sampled)" },
	{ OPT_SYMFS, "symfs", 0, 1, "DIR", "look for binaries and debug files under DIR, like perf --symfs" },
	{ OPT_KALLSYMS, "kallsyms", 0, 1, "FILE", "kernel symbols from FILE (default: /proc/kallsyms when the kernel matches)" },
	{ OPT_BUILDID_DIR, "buildid-dir", 0, 1, "DIR", "perf's build-id cache (default: ~/.debug)" },
	{ OPT_MAP_DIR, "map-dir", 0, 1, "DIR", "look for perf-PID.map and jit-PID.dump files in DIR first" },
	{ OPT_PERF_COMPAT, "perf-compat", 0, 0, NULL, "name frames exactly as perf 6.1 does: none of the names below that perf lacks, .NET names as it prints them" },
	{ OPT_RESOLVE_JIT, "resolve-jit", 0, 0, NULL, "name JIT code perf leaves unknown (the default; --perf-compat turns it off)" },
	{ OPT_PID_MAP, "pid-map", 0, 1, "HOST=NS", "process HOST named its JIT files with pid NS (containers; repeatable)" },
	{ OPT_DOTNET_NAMES, "dotnet-names", 0, 1, "FORM", ".NET method names: short (default in folded, svg, speedscope, firefox) or keep (as the runtime writes them)" },
	{ OPT_STRIP_TIERS, "strip-tiers", 0, 0, NULL, "drop .NET tier tags such as [OptimizedTier1] from method names in every format, perf-script and trace.zip too" },
	{ OPT_KEEP_TIERS, "keep-tiers", 0, 0, NULL, "keep .NET tier tags in every format (by default folded, svg, speedscope, top, pprof and firefox merge a method's tiers into one frame)" },
	{ OPT_MINIDEBUGINFO, "minidebuginfo", 0, 0, NULL, "also read .gnu_debugdata (MiniDebugInfo) symbols, which perf 6.1 ignores" },
	{ OPT_INCLUDE_PERF_DATA, "include-perf-data", 0, 0, NULL, "trace.zip: add the recording itself as NAME.trace/perf.data" },
	{ OPT_R2R_RVA, "r2r-rva", 0, 0, NULL, "name frames of ReadyToRun images that have no map [IMAGE+0xRVA] by method instead of [IMAGE]" },
	{ OPT_EVENTS, "events", 0, 1, "FILE", "a .NET process's own events (GCs, pauses, allocations, JIT, exceptions), the .nettrace dotnet-trace wrote, into the conversion (repeatable, one a process); without -i, -f or an output format: print its runtime report" },
	{ OPT_ALLOC, "alloc", 0, 0, NULL, "with --events: an allocation profile in bytes, from the runtime's allocation events, the allocated type as the leaf frame, instead of the CPU samples" },
	{ OPT_DURING, "during", 0, 1, "gc", "with --events: keep only the samples taken while their process was paused for a GC (needs perf record -k mono)" },
	{ OPT_R2R_DUMP, "r2r-dump", 0, 1, "IMAGE", "print the methods of a ReadyToRun image with their names from its metadata, as 'RVA LENGTH name' lines" },
	{ OPT_R2R_DUMP_STYLE, "r2r-dump-style", 0, 1, "STYLE", "--r2r-dump names: runtime (default, as in the runtime's perf map) or r2rmap (as crossgen2 writes them)" },
	{ OPT_ENABLE_PERFMAP, "enable-perfmap", 0, 1, "PID[:TYPE]", "ask the running .NET 8+ process PID to write its perf map and jitdump (TYPE: all, the default; perfmap; jitdump), then exit" },
	{ OPT_DISABLE_PERFMAP, "disable-perfmap", 0, 1, "PID", "ask the running .NET 8+ process PID to stop writing its perf map and jitdump, then exit" },
	{ OPT_DEBUGINFOD, "debuginfod", 0, 1, "URLS", "fetch the debug files of binaries without symbols by build-id from these debuginfod servers (default: $DEBUGINFOD_URLS; none when unset)" DEBUGINFOD_STATIC },
	{ OPT_DEBUGINFOD_TIMEOUT, "debuginfod-timeout", 0, 1, "SECONDS", "give up on a debug file after this long, and on the servers for the rest of the conversion (default: 10)" },
	{ OPT_SYMBOL_SERVER, "symbol-server", 0, 1, "URL", "fetch the debug files of binaries without symbols by build-id from this symbol server, as dotnet-symbol does (repeatable; default: $PERFCONV_SYMBOL_SERVERS; none when unset)" },
	{ OPT_SYMBOL_SERVER_TIMEOUT, "symbol-server-timeout", 0, 1, "SECONDS", "give up on a symbol server that does not connect or stops sending for this long, for the rest of the conversion (default: 10)" },
	{ OPT_NO_SORT, "no-sort", 0, 0, NULL, "process records in file order instead of time order" },
	{ OPT_NO_CACHE, "no-cache", 0, 0, NULL, "read the running kernel's symbols from /proc/kallsyms, binaries' symbols and .NET method names from their files, not from the cache in $XDG_CACHE_HOME/perfconv (also PERFCONV_CACHE=0)" },
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
		    "       perfconv record [OPTION]... [-p PID[,PID...] | -a | -- COMMAND [ARG]...]\n"
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
	fprintf(fp, "\n\nExit status: 0 success, 1 conversion failed, 2 usage error, 3 a function grew by more than\n"
		    "--fail-if-grown allows.\n");
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

/* --off-cpu and --thread-time weigh the aggregated stacks: the formats that print each
 * sample (perf-script, trace.zip) have no place for an interval. */
static int time_profile_check(const struct cli *c, const struct pfc_writer *const *ws, size_t n)
{
	const char *opt = c->opts.thread_time ? "--thread-time" : "--off-cpu";
	size_t i;

	if (!c->opts.offcpu && !c->opts.thread_time)
		return 0;
	if (c->stats || c->header) {
		fprintf(stderr, "perfconv: %s cannot be used with --stats or --header\n", opt);
		goto usage;
	}
	if (c->wopts.event) {
		fprintf(stderr, "perfconv: %s chooses its events (sched:sched_switch%s): --event does not apply\n", opt,
			c->opts.thread_time ? ", and cpu-clock or task-clock" : "");
		goto usage;
	}
	for (i = 0; i < n; i++)
		if (ws[i]->needs & PFC_NEED_STREAM) {
			fprintf(stderr, "perfconv: %s makes a profile, and the %s format prints samples: use folded, svg, "
				"speedscope, firefox or pprof\n", opt, ws[i]->name);
			goto usage;
		}
	return 0;
usage:
	fputs("Try 'perfconv --help' for more information.\n", stderr);
	return -1;
}

/* --diff BASE: the formats that draw a comparison take it; the others say why not.  The
 * options that only mean something in a comparison need it. */
static int diff_check(const struct cli *c, const struct pfc_writer *const *ws, size_t n)
{
	size_t i;

	if (!c->diff) {
		if (c->fail_if_grown >= 0 || c->wopts.diff_normalize || c->wopts.negate) {
			fprintf(stderr, "perfconv: %s compares with a base: it needs --diff BASE\n",
				c->fail_if_grown >= 0 ? "--fail-if-grown" : c->wopts.negate ? "--negate" : "--diff-normalize");
			goto usage;
		}
		return 0;
	}
	if (c->stats || c->header) {
		fprintf(stderr, "perfconv: --diff cannot be used with --stats or --header\n");
		goto usage;
	}
	if (!strcmp(c->diff, "-") && (!c->opts.input || !strcmp(c->opts.input, "-") || c->outdir)) {
		fprintf(stderr, "perfconv: --diff -: standard input can hold one recording, and the input is read from it too\n");
		goto usage;
	}
	for (i = 0; i < n; i++) {
		if (ws[i]->needs & PFC_DIFF)
			continue;
		if (ws[i] == &pfc_writer_speedscope)
			fprintf(stderr, "perfconv: --diff: speedscope has no diff view (it shows one profile at a time); "
				"write folded, svg, top or pprof, or open each recording in speedscope on its own\n");
		else
			fprintf(stderr, "perfconv: --diff: the %s format has no diff view: use folded, svg, top or pprof\n",
				ws[i]->name);
		goto usage;
	}
	return 0;
usage:
	fputs("Try 'perfconv --help' for more information.\n", stderr);
	return -1;
}

/* --diff BASE is read once, before the inputs: a bad BASE stops the run before any work */
static int open_base(struct cli *c)
{
	char msg[2048];

	if (!c->diff)
		return 0;
	/* a diff compares frames by name: a method whose tier changed is the same method */
	c->opts.strip_tiers = 1;
	/* and a process's name with --pid is the same process: the two recordings' pids differ */
	c->opts.script_pids = 1;
	if (pfc_cli_base_open(c, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "perfconv: --diff: %s\n", msg);
		return -1;
	}
	return 0;
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

/* A whole number of seconds greater than 0 and at most MAX; -1 when ARG is not one. */
static int parse_seconds(const char *arg, double max, double *seconds)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || !(v > 0) || v > max)
		return -1;
	*seconds = v;
	return 0;
}

/* What the options ask for besides the settings in struct cli, and the room for the paths
 * worked out from the environment, for as long as main runs. */
struct args {
	const char *r2r_dump, *r2r_dump_style;
	int input_given;             /* -i: --events converts, and prints no report */
	const char *perfmap_pid;     /* --enable-perfmap or --disable-perfmap */
	int perfmap_enable;
	int want_resolve;            /* --resolve-jit or --pid-map, which --perf-compat refuses */
	int dotnet_names;            /* --dotnet-names, or -1 */
	int tiers;                   /* --strip-tiers 1, --keep-tiers 0, or -1 */
	int no_cache;
	char symsrv[8192];           /* the --symbol-server URLs, space-separated */
	char bdir[PATH_MAX], srvcache[PATH_MAX], symcache[PATH_MAX];
};

/* The options of where symbols come from, how frames are named, and the commands that
 * convert nothing (--r2r-dump, --enable-perfmap); -1 when OPT was one of them and is
 * taken, else the exit status. */
static int parse_symbol_option(struct cli *c, struct args *a, int opt, const char *arg)
{
	switch (opt) {
	case OPT_SYMFS: c->opts.symfs = arg; break;
	case OPT_KALLSYMS: c->opts.kallsyms = arg; break;
	case OPT_BUILDID_DIR: c->opts.buildid_dir = arg; c->opts.buildid_dir_given = 1; break;
	case OPT_MAP_DIR: c->opts.map_dir = arg; break;
	case OPT_NO_SORT: c->opts.no_sort = 1; break;
	case OPT_NO_CACHE: a->no_cache = 1; break;
	case OPT_RESOLVE_JIT: a->want_resolve = 1; break;
	case OPT_PERF_COMPAT: c->opts.perf_compat = 1; break;
	case OPT_PID_MAP:
		if (parse_pid_map(c, arg) < 0)
			return EXIT_USAGE;
		a->want_resolve = 1;
		break;
	case OPT_DOTNET_NAMES:
		if (!strcmp(arg, "short")) {
			a->dotnet_names = PFC_DOTNET_NAMES_SHORT;
		} else if (!strcmp(arg, "keep")) {
			a->dotnet_names = PFC_DOTNET_NAMES_KEEP;
		} else {
			fprintf(stderr, "perfconv: --dotnet-names: unknown form '%s' (keep or short)\n"
					"Try 'perfconv --help' for more information.\n", arg);
			return EXIT_USAGE;
		}
		break;
	case OPT_STRIP_TIERS: a->tiers = 1; break;
	case OPT_KEEP_TIERS: a->tiers = 0; break;
	case OPT_MINIDEBUGINFO: c->opts.minidebuginfo = 1; break;
	case OPT_R2R_RVA: c->opts.r2r_funcs = 1; break;
	case OPT_R2R_DUMP: a->r2r_dump = arg; break;
	case OPT_EVENTS:
		if (c->opts.nr_events == PFC_CLI_MAX_EVENTS)
			return usage_error("--events '%s': too many files (one a process)", arg);
		c->events[c->opts.nr_events++] = arg;
		c->opts.events = c->events;
		break;
	case OPT_ALLOC: c->opts.alloc = 1; break;
	case OPT_DURING:
		if (strcmp(arg, "gc"))
			return usage_error("--during '%s': the only value is 'gc'", arg);
		c->opts.during_gc = 1;
		break;
	case OPT_ENABLE_PERFMAP:
	case OPT_DISABLE_PERFMAP:
		if (a->perfmap_pid)
			return usage_error("%s: one --enable-perfmap or --disable-perfmap at a time", arg);
		a->perfmap_pid = arg;
		a->perfmap_enable = opt == OPT_ENABLE_PERFMAP;
		break;
	case OPT_R2R_DUMP_STYLE: a->r2r_dump_style = arg; break;
	case OPT_DEBUGINFOD: c->opts.debuginfod_urls = arg; break;
	case OPT_DEBUGINFOD_TIMEOUT:
		if (parse_seconds(arg, 86400, &c->opts.debuginfod_timeout) < 0)
			return usage_error("--debuginfod-timeout '%s': expected a number of seconds greater than 0", arg);
		break;
	case OPT_SYMBOL_SERVER:
		if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8))
			return usage_error("--symbol-server '%s': expected an http:// or https:// URL", arg);
		if (strpbrk(arg, " \t\n") || strlen(a->symsrv) + strlen(arg) + 2 > sizeof(a->symsrv))
			return usage_error("--symbol-server '%s': a URL without spaces, and not that long", arg);
		if (*a->symsrv)
			strcat(a->symsrv, " ");
		strcat(a->symsrv, arg);
		c->opts.symsrv_urls = a->symsrv;
		break;
	case OPT_SYMBOL_SERVER_TIMEOUT:
		if (parse_seconds(arg, 86400, &c->opts.symsrv_timeout) < 0)
			return usage_error("--symbol-server-timeout '%s': expected a number of seconds greater than 0", arg);
		break;
	default:
		fprintf(stderr, "Try 'perfconv --help' for more information.\n");
		return EXIT_USAGE;
	}
	return -1;
}

/* One option of the input, the outputs and their formats, the filters and batch mode, or
 * of parse_symbol_option's; -1 when it is taken, else the exit status (-h, -V, an error). */
static int parse_option(struct cli *c, struct args *a, int opt, const char *arg)
{
	struct pfc_error err;

	memset(&err, 0, sizeof(err));
	switch (opt) {
	case 'i': c->opts.input = arg; a->input_given = 1; break;
	case 'o': c->output = arg; break;
	case 'f': c->format = arg; break;
	case 'O': c->outdir = arg; break;
	case 'j': {
		char *end;
		long v = strtol(arg, &end, 10);
		if (end == arg || *end || v < 1 || v > 1024)
			return usage_error("-j '%s': expected a number of jobs from 1 to 1024", arg);
		c->jobs = (int)v;
		break;
	}
	case OPT_FORCE: c->force = 1; break;
	case OPT_TIMEOUT:
		if (parse_seconds(arg, 1e7, &c->timeout) < 0)
			return usage_error("--timeout '%s': expected a number of seconds greater than 0", arg);
		break;
	case OPT_STATS: c->stats = 1; break;
	case OPT_HEADER: c->header = 1; break;
	case OPT_HEADER_FULL: c->header = c->header_full = 1; break;
	case OPT_PID:
		if (!arg)
			c->wopts.pid = 1;
		else if (pfc_filter_add_pids(&c->filter, arg, 0, &err) < 0)
			return filter_error(&err);
		break;
	case OPT_TID:
		if (!arg)
			c->wopts.tid = 1;
		else if (pfc_filter_add_pids(&c->filter, arg, 1, &err) < 0)
			return filter_error(&err);
		break;
	case OPT_COMM:
		if (pfc_filter_add_comms(&c->filter, arg, &err) < 0)
			return filter_error(&err);
		break;
	case OPT_TIME:
		if (pfc_filter_set_time(&c->filter, arg, &err) < 0)
			return filter_error(&err);
		break;
	case OPT_OFF_CPU:
		if (arg && strcmp(arg, "all"))
			return usage_error("--off-cpu='%s': the only value is 'all'", arg);
		c->opts.offcpu = arg ? PFC_OFFCPU_ALL : PFC_OFFCPU_BLOCKED;
		break;
	case OPT_THREAD_TIME: c->opts.thread_time = 1; break;
	case OPT_KERNEL: c->wopts.kernel = 1; break;
	case OPT_JIT: c->wopts.jit = 1; break;
	case OPT_ALL: c->wopts.kernel = c->wopts.jit = 1; break;
	case OPT_ADDRS: c->wopts.addrs = 1; break;
	case OPT_EVENT: c->wopts.event = arg; break;
	case OPT_FIELDS: c->wopts.fields = arg; break;
	case OPT_SPEEDSCOPE_BY:
		if (!strcmp(arg, "thread")) {
			c->wopts.speedscope_by = PFC_SPEEDSCOPE_BY_THREAD;
		} else if (!strcmp(arg, "process")) {
			c->wopts.speedscope_by = PFC_SPEEDSCOPE_BY_PROCESS;
		} else {
			fprintf(stderr, "perfconv: --speedscope-by: '%s' is neither 'thread' nor 'process'\n"
				"Try 'perfconv --help' for more information.\n", arg);
			return EXIT_USAGE;
		}
		break;
	case OPT_TITLE: c->wopts.title = arg; break;
	case OPT_WIDTH:
		if (parse_width(arg, &c->wopts.width) < 0)
			return EXIT_USAGE;
		break;
	case OPT_MINWIDTH:
		if (parse_minwidth(arg, &c->wopts) < 0)
			return EXIT_USAGE;
		break;
	case OPT_INVERTED: c->wopts.inverted = 1; break;
	case OPT_DIFF: c->diff = arg; break;
	case OPT_DIFF_NORMALIZE: c->wopts.diff_normalize = 1; break;
	case OPT_NEGATE: c->wopts.negate = 1; break;
	case OPT_TOP: {
		char *end;
		long v;
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 1 || v > 1000000)
			return usage_error("invalid --top '%s': expected a number of functions from 1 to 1000000", arg);
		c->wopts.top = (int)v;
		break;
	}
	case OPT_FAIL_IF_GROWN: {
		char *end;
		double v;
		errno = 0;
		v = strtod(arg, &end);
		if (errno || end == arg || *end || !(v >= 0) || v > 100)
			return usage_error("invalid --fail-if-grown '%s': expected percentage points from 0 to 100", arg);
		c->fail_if_grown = v;
		break;
	}
	case OPT_INCLUDE_PERF_DATA: c->wopts.include_perf_data = 1; break;
	case 'q': c->quiet = 1; break;
	case 'v': c->verbose++; break;
	case 'h': usage(stdout); return EXIT_OK;
	case 'V': printf("perfconv %s%s\n", PERFCONV_VERSION, BUILD_STATIC); return EXIT_OK;
	default:
		return parse_symbol_option(c, a, opt, arg);
	}
	return -1;
}

/* --events FILE alone (no -i, no -f, no output in a format, nothing asked of the events but
 * their report): the runtime report, on stdout or in -o, as before --events joined conversions. */
static int report_only(const struct cli *c, const struct args *a)
{
	int gz;

	return c->opts.nr_events == 1 && !a->input_given && !c->format && !c->opts.alloc && !c->opts.during_gc &&
	       !c->outdir && (!c->output || !strcmp(c->output, "-") || !pfc_writer_by_filename(c->output, &gz));
}

/* --alloc and --during gc read the runtime's events and change what the samples are: one at
 * a time, and not with an off-CPU profile, which weighs sched_switch samples by time. */
static int events_check(const struct cli *c)
{
	if (c->opts.alloc && c->opts.during_gc)
		return usage_error("%s profiles allocations, --during gc CPU samples: one at a time", "--alloc");
	if ((c->opts.alloc || c->opts.during_gc) && (c->opts.offcpu || c->opts.thread_time))
		return usage_error(c->opts.thread_time ? "%s cannot be used with --thread-time" : "%s cannot be used with --off-cpu",
				   c->opts.alloc ? "--alloc" : "--during gc");
	if (c->opts.nr_events && c->outdir)
		return usage_error("--events '%s' names the streams of one recording's processes: not with -O (a pack "
				   "made with --events carries them)", c->events[0]);
	return -1;
}

/* The command line into C and A: -1 when the program goes on, else its exit status. */
static int parse_args(struct cli *c, struct args *a, int argc, char **argv)
{
	struct option longopts[NR_OPTS + 1];
	char shortopts[64];
	size_t i, k = 0;
	int opt, ret;

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
	c->argc = argc;
	c->argv = argv;
	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1)
		if ((ret = parse_option(c, a, opt, optarg)) >= 0)
			return ret;
	return -1;
}

/* $XDG_CACHE_HOME/NAME, else ~/.cache/NAME, into BUF; NULL when neither is set (the XDG
 * rule: a relative XDG_CACHE_HOME is ignored). */
static const char *cache_path(char *buf, size_t size, const char *name)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && xdg[0] == '/')
		snprintf(buf, size, "%s/%s", xdg, name);
	else if (home && *home)
		snprintf(buf, size, "%s/.cache/%s", home, name);
	return *buf ? buf : NULL;
}

/* The settings the options leave to defaults and to the environment, and the checks of
 * options against each other that do not depend on the formats: -1 when the program goes
 * on, else its exit status. */
static int settle_options(struct cli *c, struct args *a)
{
	c->umask = umask(0);
	umask(c->umask);
	/* The best names by default; --perf-compat gives perf's.  A .NET name is short where a
	 * person reads it (folded, SVG, speedscope) and the runtime's own in the text formats,
	 * which PerfView and perf-script readers parse, unless --dotnet-names says otherwise. */
	if (c->opts.perf_compat && a->want_resolve) {
		fprintf(stderr, "perfconv: --perf-compat names frames as perf does: it cannot go with %s\n"
				"Try 'perfconv --help' for more information.\n",
			c->opts.nr_pid_map ? "--pid-map" : "--resolve-jit");
		return EXIT_USAGE;
	}
	c->opts.resolve_jit = !c->opts.perf_compat;
	if (a->dotnet_names >= 0) {
		c->opts.dotnet_names = c->opts.dotnet_names_text = a->dotnet_names;
	} else {
		c->opts.dotnet_names = c->opts.perf_compat ? PFC_DOTNET_NAMES_KEEP : PFC_DOTNET_NAMES_SHORT;
		c->opts.dotnet_names_text = PFC_DOTNET_NAMES_KEEP;
	}
	/* A method compiled again at another tier is still one method: the views that add up
	 * stacks merge its tiers, as PerfView's CPU view does; perf-script and trace.zip keep
	 * them, as perf script prints them (PerfView shows the tiers itself). */
	if (a->tiers >= 0) {
		c->opts.strip_tiers = c->opts.strip_tiers_text = a->tiers;
	} else {
		c->opts.strip_tiers = !c->opts.perf_compat;
		c->opts.strip_tiers_text = 0;
	}
	/* a stripped library's unnamed frames one after the other say nothing one frame does not */
	c->opts.fold_runs = !c->opts.perf_compat;
	c->opts.verbose = c->verbose;
	c->opts.log = c->quiet ? NULL : stderr;
	/* debuginfod servers only when the user named some */
	if (!c->opts.debuginfod_urls && getenv("DEBUGINFOD_URLS") && *getenv("DEBUGINFOD_URLS"))
		c->opts.debuginfod_urls = getenv("DEBUGINFOD_URLS");
	/* symbol servers too; their files are kept in $XDG_CACHE_HOME/perfconv-symbols, by key */
	if (!c->opts.symsrv_urls && c->env.symbol_servers)
		c->opts.symsrv_urls = c->env.symbol_servers;
	if (c->opts.symsrv_urls)
		c->opts.symsrv_cache = cache_path(a->srvcache, sizeof(a->srvcache), "perfconv-symbols");
	/* the running kernel's symbols, and ELF files' tables, are kept in $XDG_CACHE_HOME/perfconv (symcache.c) */
	if (!a->no_cache && !c->env.no_cache)
		c->opts.cache_dir = cache_path(a->symcache, sizeof(a->symcache), "perfconv");
	c->progress = !c->quiet && isatty(STDERR_FILENO);
	if (!c->opts.buildid_dir) {
		const char *home = getenv("HOME");
		if (home && *home) {
			snprintf(a->bdir, sizeof(a->bdir), "%s/.debug", home);
			c->opts.buildid_dir = a->bdir;
		}
	}
	if (c->wopts.fields) {
		struct pfc_ps_fields f;
		char why[160];
		if (pfc_ps_fields_parse(c->wopts.fields, &f, why, sizeof(why)) < 0) {
			fprintf(stderr, "perfconv: --fields: %s\nTry 'perfconv --help' for more information.\n", why);
			return EXIT_USAGE;
		}
	}
	return -1;
}

/* -f LIST in batch mode: the writers of the comma-separated formats, each once, into WS
 * (room for MAX); their number, or -1 after the usage message. */
static int parse_format_list(const char *list, const struct pfc_writer **ws, size_t max)
{
	const char *f = list ? list : "folded";
	size_t i, n = 0;

	while (*f) {
		size_t len = strcspn(f, ",");
		char name[64];
		const struct pfc_writer *w;
		if (len && len < sizeof(name)) {
			memcpy(name, f, len);
			name[len] = 0;
			if (!(w = pfc_writer_by_name(name))) {
				fprintf(stderr, "perfconv: unknown format '%s'\nTry 'perfconv --help' for more information.\n", name);
				return -1;
			}
			for (i = 0; i < n && ws[i] != w; i++)
				;
			if (i == n) {
				if (n == max) {
					usage_error("-f '%s': too many formats", list);
					return -1;
				}
				ws[n++] = w;
			}
		} else if (len) {
			usage_error("unknown format in '%s'", list);
			return -1;
		}
		f += len + (f[len] == ',');
	}
	if (!n) {
		usage_error("-f '%s': no format", list);
		return -1;
	}
	return (int)n;
}

/* -O OUTDIR: every input named, and every recording under the directories named, into
 * OUTDIR in each format of -f. */
static int run_batch(struct cli *c, char **inputs, int nr_inputs)
{
	const struct pfc_writer *ws[16];
	int nws, ret;

	if (c->output || c->stats || c->header)
		return usage_error("%s cannot be used with -O (batch mode)",
				   c->output ? "-o" : c->stats ? "--stats" : "--header");
	if (nr_inputs <= 0)
		return usage_error("-O '%s': no input files or directories given", c->outdir);
	if ((nws = parse_format_list(c->format, ws, sizeof(ws) / sizeof(ws[0]))) < 0)
		return EXIT_USAGE;
	if (time_profile_check(c, ws, (size_t)nws) < 0 || diff_check(c, ws, (size_t)nws) < 0)
		return EXIT_USAGE;
	if (open_base(c) < 0)
		return EXIT_FAILED;
	ret = pfc_batch_run(c, inputs, nr_inputs, ws, (size_t)nws);
	pfc_cli_base_close(c);
	pfc_filter_free(&c->filter);
	return ret;
}

/* The writer of a single conversion: -f NAME, else the output's name, else folded; NULL
 * after the usage message. */
static const struct pfc_writer *single_writer(const struct cli *c)
{
	const struct pfc_writer *w = NULL;

	if (c->format) {
		w = pfc_writer_by_name(c->format);
		if (!w) {
			fprintf(stderr, "perfconv: unknown format '%s'\nTry 'perfconv --help' for more information.\n",
				c->format);
			return NULL;
		}
	} else if (c->output && strcmp(c->output, "-")) {
		int gz;
		/* a name means what it says; only a device has no ending to tell */
		if (!(w = pfc_writer_by_filename(c->output, &gz)) && !pfc_cli_is_device_name(c->output)) {
			fprintf(stderr, "perfconv: '%s': the name does not tell the format; give -f NAME or "
				"end the name as one of:\n", c->output);
			pfc_writer_list_suffixes(stderr);
			fputs("Try 'perfconv --help' for more information.\n", stderr);
			return NULL;
		}
	}
	return w ? w : &pfc_writer_folded;
}

/* One input (-i) into one output (-o), or --stats and --header alone. */
static int run_single(struct cli *c)
{
	struct pfc_job_result res;
	const struct pfc_writer *ws[1];
	size_t nws = 0;
	int ret;

	if (c->jobs > 1 || c->force || c->timeout > 0)
		return usage_error("%s needs -O OUTDIR (batch mode)", c->jobs > 1 ? "-j" : c->force ? "--force" : "--timeout");
	if (!c->stats && !c->header) {
		if (!(ws[nws++] = single_writer(c)))
			return EXIT_USAGE;
		if ((ws[0]->needs & PFC_NO_GZIP) && pfc_writer_name_gzip(c->output))
			return usage_error("'%s': a trace.zip is compressed already; its name cannot end in .gz", c->output);
	}
	if (time_profile_check(c, ws, nws) < 0 || diff_check(c, ws, nws) < 0)
		return EXIT_USAGE;
	if (open_base(c) < 0)
		return EXIT_FAILED;
	if (nws && ws[0] == &pfc_writer_perf_script && c->output && strcmp(c->output, "-") && !c->quiet &&
	    !flamescope_name_ok(c->output))
		fprintf(stderr, "perfconv: warning: '%s': Flamescope does not open files whose path has characters such "
			"as ~ ] ^ { | } ` or non-ASCII ones\n", c->output);
	ret = pfc_cli_convert(c, c->opts.input, ws, &c->output, nws, &res);
	pfc_cli_base_close(c);
	pfc_filter_free(&c->filter);
	if (ret != 0) {
		fprintf(stderr, "perfconv: %s\n", res.msg);
		return EXIT_FAILED;
	}
	return res.grown ? EXIT_GROWN : EXIT_OK;
}

/* A pack holds each member in a memory file: as many as the system lets us open. */
static void raise_file_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Whether the output is a trace.zip, by -f or by the output's name. */
int main(int argc, char **argv)
{
	struct cli c;
	struct args a;
	int ret;

	memset(&c, 0, sizeof(c));
	memset(&a, 0, sizeof(a));
	pfc_cli_env_read(&c.env);
	c.opts.tuning = &c.env.tuning;
	raise_file_limit();
	/* perfconv record ...: a sub-command with options of its own (record.c) */
	if (argc > 1 && !strcmp(argv[1], "record"))
		return pfc_cli_record(argc - 1, argv + 1);
	c.opts.input = "perf.data";
	c.opts.max_stack = 127;
	c.jobs = 1;
	c.wopts.version = PERFCONV_VERSION;
	c.fail_if_grown = -1;
	a.dotnet_names = -1;
	a.tiers = -1;
	if ((ret = parse_args(&c, &a, argc, argv)) >= 0)
		return ret;
	if (a.perfmap_pid) {
		if (optind < argc)
			return usage_error("unexpected argument '%s' (--enable-perfmap and --disable-perfmap take one PID)",
					   argv[optind]);
		return pfc_cli_perfmap(a.perfmap_pid, a.perfmap_enable, c.timeout > 0 ? c.timeout : 5.0, c.quiet);
	}
	if (a.r2r_dump)
		return pfc_cli_r2r_dump(a.r2r_dump, a.r2r_dump_style, c.output, c.quiet);
	if (report_only(&c, &a))
		return pfc_cli_events(c.events[0], c.output, c.quiet);
	if (optind < argc && !c.outdir)
		return usage_error("unexpected argument '%s' (several inputs need -O OUTDIR)", argv[optind]);
	if ((ret = settle_options(&c, &a)) >= 0 || (ret = events_check(&c)) >= 0)
		return ret;
	return c.outdir ? run_batch(&c, argv + optind, argc - optind) : run_single(&c);
}
