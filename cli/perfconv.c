/*
 * perfconv.c - the command line: the option table (which also generates --help),
 * messages, exit codes and atomic output files.  All conversion work is in converter/
 * and formats/; this file only wires them together and reports.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "converter/hdrprint.h"
#include "converter/session.h"
#include "converter/statsprint.h"
#include "formats/perfscript.h"
#include "formats/writer.h"

#ifndef PERFCONV_VERSION
#define PERFCONV_VERSION "0.1.0"
#endif

enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,
	EXIT_USAGE = 2,
};

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
};

struct opt_doc {
	int val;
	const char *name;
	char shortopt;
	int has_arg;
	const char *arg;
	const char *help;
};

/* The one source of the options: getopt's table and --help both come from it. */
static const struct opt_doc opt_table[] = {
	{ 'i', "input", 'i', 1, "FILE", "perf.data to read; '-' reads a pipe-mode stream from stdin (default: perf.data)" },
	{ 'o', "output", 'o', 1, "FILE", "output file; '-' is stdout; the format follows from the name (default: stdout)" },
	{ 'f', "format", 'f', 1, "NAME", "output format: folded (default when the name does not tell), perf-script, speedscope, svg, trace.zip (PerfView)" },
	{ OPT_STATS, "stats", 0, 0, NULL, "print record counts by type, like 'perf report --stats'" },
	{ OPT_HEADER, "header", 0, 0, NULL, "print the header features, like 'perf report --header-only'" },
	{ OPT_HEADER_FULL, "header-full", 0, 0, NULL, "print every header feature in full, like 'perf report --header-only -I'" },
	{ OPT_PID, "pid", 0, 0, NULL, "folded: add the pid to the process name" },
	{ OPT_TID, "tid", 0, 0, NULL, "folded: add the pid and tid to the process name" },
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
	{ OPT_MAP_DIR, "map-dir", 0, 1, "DIR", "look for perf-PID.map files in DIR before /tmp" },
	{ OPT_MINIDEBUGINFO, "minidebuginfo", 0, 0, NULL, "also read .gnu_debugdata (MiniDebugInfo) symbols, which perf 6.1 ignores" },
	{ OPT_INCLUDE_PERF_DATA, "include-perf-data", 0, 0, NULL, "trace.zip: add the recording itself as NAME.trace/perf.data" },
	{ OPT_NO_SORT, "no-sort", 0, 0, NULL, "process records in file order instead of time order" },
	{ 'q', "quiet", 'q', 0, NULL, "print no summary or warnings" },
	{ 'v', "verbose", 'v', 0, NULL, "print more detail" },
	{ 'h', "help", 'h', 0, NULL, "show this help and exit" },
	{ 'V', "version", 'V', 0, NULL, "show the version and exit" },
};

#define NR_OPTS (sizeof(opt_table) / sizeof(opt_table[0]))

static void usage(FILE *fp)
{
	size_t i;

	fprintf(fp, "usage: perfconv [OPTION]... -i perf.data -o OUTPUT\n"
		    "Convert a Linux perf.data recording into folded stacks and other formats.\n\n");
	for (i = 0; i < NR_OPTS; i++) {
		const struct opt_doc *d = &opt_table[i];
		char left[64];

		if (d->shortopt)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", d->shortopt, d->name, d->arg ? " " : "",
				 d->arg ? d->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", d->name, d->arg ? " " : "", d->arg ? d->arg : "");
		fprintf(fp, "  %-26s %s\n", left, d->help);
	}
	fprintf(fp, "\nFormats:");
	for (i = 0; pfc_writers[i]; i++)
		fprintf(fp, " %s", pfc_writers[i]->name);
	fprintf(fp, "\n\nExit status: 0 success, 1 conversion failed, 2 usage error.\n");
}

struct cli {
	struct pfc_opts opts;
	struct pfc_wopts wopts;
	const char *output;
	const char *format;
	int stats, header, header_full, quiet, verbose;
};

static void report_error(const struct cli *c, const struct pfc_error *e)
{
	fprintf(stderr, "perfconv: '%s': %s", c->opts.input, pfc_strerror(e->code));
	if (e->has_offset)
		fprintf(stderr, " at offset %llu", (unsigned long long)e->offset);
	if (e->detail[0])
		fprintf(stderr, ": %s", e->detail);
	if (c->verbose && e->src_file)
		fprintf(stderr, " [%s:%d]", e->src_file, e->src_line);
	fputc('\n', stderr);
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

static void print_summary(const struct cli *c, struct pfc_session *s, uint64_t written)
{
	const struct pfc_session_stats *st = &s->st;

	if (c->quiet)
		return;
	fprintf(stderr, "perfconv: '%s': %llu samples read, %llu written (%zu unique stacks, %zu unique frames)\n",
		c->opts.input, (unsigned long long)st->nr_samples, (unsigned long long)written,
		s->stacks.nr_stacks, s->stacks.nr_frames);
	if (c->verbose)
		fprintf(stderr, "perfconv: %llu records, %llu samples aggregated from the callchain cache, %llu frames\n",
			(unsigned long long)st->nr_records, (unsigned long long)s->nr_raw_hits,
			(unsigned long long)st->nr_frames);
	if (st->nr_lost_events || st->nr_lost_samples)
		fprintf(stderr, "perfconv: %llu events lost in %llu LOST records, %llu samples lost\n",
			(unsigned long long)st->nr_lost_events, (unsigned long long)st->nr_lost_records,
			(unsigned long long)st->nr_lost_samples);
	if (s->symbolized)
		fprintf(stderr, "perfconv: unresolved frames (unique): %llu user, %llu kernel, %llu outside any mapping\n",
			(unsigned long long)st->nr_unresolved_user, (unsigned long long)st->nr_unresolved_kernel,
			(unsigned long long)st->nr_unresolved_nomap);
	if (st->nr_dwarf_not_unwound)
		fprintf(stderr, "perfconv: %llu samples recorded with --call-graph dwarf: user stacks were not unwound "
			"(DWARF unwinding is not implemented yet); kept the kernel part and the user ip\n",
			(unsigned long long)st->nr_dwarf_not_unwound);
	if (s->rd.junk_bytes)
		fprintf(stderr, "perfconv: ignored %llu bytes of trailing junk\n", (unsigned long long)s->rd.junk_bytes);
}

/* Write through a temporary file in the target directory, renamed into place only when
 * everything was written: no half-written output is ever left under the final name. */
static int convert(struct cli *c, struct pfc_session *s, const struct pfc_writer *w)
{
	struct pfc_error *err = s->err;
	char tmp[PATH_MAX];
	FILE *out;
	int fd = -1, ret, to_stdout = !c->output || !strcmp(c->output, "-");

	if (to_stdout) {
		out = stdout;
	} else {
		if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", c->output) >= (int)sizeof(tmp))
			return PFC_FAIL_NOOFF(err, USAGE, "output name is too long");
		fd = mkstemp(tmp);
		if (fd < 0)
			return PFC_FAIL_NOOFF(err, WRITE, "cannot create '%s': %s", tmp, strerror(errno));
		fchmod(fd, 0644 & ~(mode_t)0);
		out = fdopen(fd, "w");
		if (!out) {
			close(fd);
			unlink(tmp);
			return PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", tmp, strerror(errno));
		}
	}
	ret = w->write(out, s, &c->wopts, err);
	if (ret == 0 && (fflush(out) != 0 || ferror(out)))
		ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", to_stdout ? "<stdout>" : c->output, strerror(errno));
	if (!to_stdout) {
		if (ret == 0 && fsync(fileno(out)) != 0 && errno != EINVAL)
			ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", c->output, strerror(errno));
		if (fclose(out) != 0 && ret == 0)
			ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", c->output, strerror(errno));
		if (ret == 0 && rename(tmp, c->output) != 0)
			ret = PFC_FAIL_NOOFF(err, WRITE, "cannot rename '%s' to '%s': %s", tmp, c->output,
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

static int capture_start(struct warn_capture *wc, struct cli *c)
{
	wc->f = open_memstream(&wc->buf, &wc->len);
	if (!wc->f)
		return -1;
	c->opts.log = wc->f;
	return 0;
}

static void capture_end(struct warn_capture *wc)
{
	if (wc->f)
		fclose(wc->f);
	free(wc->buf);
	memset(wc, 0, sizeof(*wc));
}

static void apply_umask(void)
{
	mode_t m = umask(0);
	umask(m);
}

int main(int argc, char **argv)
{
	struct option longopts[NR_OPTS + 1];
	char shortopts[64];
	struct cli c;
	struct pfc_session s;
	struct pfc_error err;
	struct warn_capture wc = { 0 };
	char *cmdline = NULL;
	const struct pfc_writer *w = NULL;
	size_t i, k = 0;
	int opt, ret;

	memset(&c, 0, sizeof(c));
	memset(&err, 0, sizeof(err));
	c.opts.input = "perf.data";
	c.opts.max_stack = 127;
	c.wopts.version = PERFCONV_VERSION;
	for (i = 0; i < NR_OPTS; i++) {
		longopts[i].name = opt_table[i].name;
		longopts[i].has_arg = opt_table[i].has_arg ? required_argument : no_argument;
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
	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (opt) {
		case 'i': c.opts.input = optarg; break;
		case 'o': c.output = optarg; break;
		case 'f': c.format = optarg; break;
		case OPT_STATS: c.stats = 1; break;
		case OPT_HEADER: c.header = 1; break;
		case OPT_HEADER_FULL: c.header = c.header_full = 1; break;
		case OPT_PID: c.wopts.pid = 1; break;
		case OPT_TID: c.wopts.tid = 1; break;
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
		case OPT_MINIDEBUGINFO: c.opts.minidebuginfo = 1; break;
		case OPT_INCLUDE_PERF_DATA: c.wopts.include_perf_data = 1; break;
		case 'q': c.quiet = 1; break;
		case 'v': c.verbose++; break;
		case 'h': usage(stdout); return EXIT_OK;
		case 'V': printf("perfconv %s\n", PERFCONV_VERSION); return EXIT_OK;
		default:
			fprintf(stderr, "Try 'perfconv --help' for more information.\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "perfconv: unexpected argument '%s'\nTry 'perfconv --help' for more information.\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	apply_umask();
	c.opts.verbose = c.verbose;
	c.opts.log = c.quiet ? NULL : stderr;
	if (!c.opts.buildid_dir) {
		static char bdir[PATH_MAX];
		const char *home = getenv("HOME");
		if (home && *home) {
			snprintf(bdir, sizeof(bdir), "%s/.debug", home);
			c.opts.buildid_dir = bdir;
		}
	}
	if (!c.stats && !c.header) {
		if (c.format) {
			w = pfc_writer_by_name(c.format);
			if (!w) {
				fprintf(stderr, "perfconv: unknown format '%s'\nTry 'perfconv --help' for more information.\n",
					c.format);
				return EXIT_USAGE;
			}
		} else if (c.output && strcmp(c.output, "-")) {
			w = pfc_writer_by_filename(c.output);
		}
		if (!w)
			w = &pfc_writer_folded;
	}
	if (c.wopts.fields) {
		struct pfc_ps_fields f;
		char why[160];
		if (pfc_ps_fields_parse(c.wopts.fields, &f, why, sizeof(why)) < 0) {
			fprintf(stderr, "perfconv: --fields: %s\nTry 'perfconv --help' for more information.\n", why);
			return EXIT_USAGE;
		}
	}
	if (w == &pfc_writer_perf_script && c.output && strcmp(c.output, "-") && !c.quiet && !flamescope_name_ok(c.output))
		fprintf(stderr, "perfconv: warning: '%s': Flamescope does not open files whose path has characters such "
			"as ~ ] ^ { | } ` or non-ASCII ones\n", c.output);
	/* a name ending in .gz asks for gzip (formats that are not archives themselves) */
	if (w == &pfc_writer_perf_script && c.output && strlen(c.output) > 3 &&
	    !strcmp(c.output + strlen(c.output) - 3, ".gz"))
		c.wopts.gzip = 1;
	c.opts.keep_stream = w && (w->needs & PFC_NEED_STREAM);
	if (w && (w->needs & PFC_NEED_LOG)) {
		cmdline = command_line(argc, argv);
		if (!cmdline || capture_start(&wc, &c) < 0) {
			fprintf(stderr, "perfconv: out of memory\n");
			free(cmdline);
			return EXIT_FAILED;
		}
		c.wopts.output = c.output;
		c.wopts.command_line = cmdline;
	}
	c.opts.preload_kernel = w != NULL;
	ret = pfc_session_open(&s, &c.opts, &err);
	/* a pipe stream carries its header features as records: read them first */
	if (ret == 0 && (c.stats || w || (c.header && s.rd.pipe_mode)))
		ret = pfc_session_process(&s);
	if (ret == -PFC_ERR_RETRY) {
		/* rare: kernel frames outside the kallsyms range came before the preloaded
		 * symbols were in; the second pass loads them in line, exactly as perf does */
		if (c.verbose)
			fprintf(stderr, "perfconv: '%s': converting again with the kernel symbols read in line\n",
				c.opts.input);
		pfc_session_close(&s);
		memset(&err, 0, sizeof(err));
		c.opts.preload_kernel = 0;
		if (wc.f) {	/* the second pass warns again */
			capture_end(&wc);
			if (capture_start(&wc, &c) < 0) {
				fprintf(stderr, "perfconv: out of memory\n");
				free(cmdline);
				return EXIT_FAILED;
			}
		}
		ret = pfc_session_open(&s, &c.opts, &err);
		if (ret == 0)
			ret = pfc_session_process(&s);
	}
	if (ret == 0 && c.header)
		ret = print_header(&s, c.header_full) < 0 ? PFC_FAIL_NOOFF(&err, IO, "cannot print the header") : 0;
	if (ret == 0 && c.stats)
		ret = print_stats(&s) < 0 ? PFC_FAIL_NOOFF(&err, NOMEM, "stats") : 0;
	if (ret == 0 && w)
		ret = pfc_session_symbolize(&s);
	if (wc.f) {
		fflush(wc.f);
		c.wopts.warnings = wc.buf;
		if (!c.quiet && wc.len)
			fwrite(wc.buf, 1, wc.len, stderr);
	}
	if (ret == 0 && w)
		ret = convert(&c, &s, w);
	if (ret != 0) {
		report_error(&c, &err);
		pfc_session_close(&s);
		capture_end(&wc);
		free(cmdline);
		return EXIT_FAILED;
	}
	if (w) {
		uint64_t written = s.st.nr_samples;
		print_summary(&c, &s, written);
	}
	pfc_session_close(&s);
	capture_end(&wc);
	free(cmdline);
	return EXIT_OK;
}
