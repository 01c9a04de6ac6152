/*
 * convert.c - one conversion of one input into one or more output files, as both the
 * single-file command line (perfconv.c) and each batch worker (batch.c) run it: the
 * session, the writers, atomic output files (a temporary name renamed into place), the
 * summary and warnings on stderr, --stats and --header, and the progress line on a
 * terminal.  It never parses options; main() and the batch loop call it.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli/convert.h"
#include "cli/symsummary.h"
#include "converter/files/pack.h"
#include "converter/jit/r2rmap.h"
#include "converter/perffile/statsprint.h"
#include "converter/session.h"
#include "formats/diff.h"
#include "formats/writer.h"

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
	/* the hint only where maps would make a difference: a tenth of the frames or more without a
	 * name for want of one (the images' metadata names nearly all frames of a normal build) */
	if (st->nr_r2r_unresolved[PFC_R2R_NO_MAP] &&
	    st->nr_r2r_unresolved[PFC_R2R_NO_MAP] * 10 >= st->nr_r2r_resolved + unres)
		fprintf(stderr, "perfconv: R2R maps come from 'dotnet publish -p:PublishReadyToRun=true "
			"-p:PublishReadyToRunEmitSymbols=true' (NAME.ni.r2rmap): put them next to the DLL or in --map-dir\n");
}

/* Seconds spent reading and processing records, resolving symbols and writing (-v). */
struct phases {
	double read, symbols, write;
};

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
	if (s->symbolized && (st->nr_jit_perfmap || st->nr_jit_jitdump || st->nr_jit_jitted || st->nr_jit_unresolved))
		fprintf(stderr, "perfconv: JIT frames (unique): %llu named by perf maps, %llu by jitdumps, "
			"%llu by perf inject's jitted-*.so, %llu unresolved%s\n",
			(unsigned long long)st->nr_jit_perfmap, (unsigned long long)st->nr_jit_jitdump,
			(unsigned long long)st->nr_jit_jitted, (unsigned long long)st->nr_jit_unresolved,
			st->nr_jit_unresolved && c->opts.perf_compat ? " (without --perf-compat perfconv looks further)" : "");
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
static void batch_hints(struct pfc_session *s, const char *warnings, int symbols, char *buf, size_t len)
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

/* A device or a FIFO (/dev/null, /dev/stdout, a named pipe): its name has no ending to tell a
 * format, and it is written in place, never replaced by a renamed file. */
int pfc_cli_is_device_name(const char *output)
{
	struct stat st;

	return !strncmp(output, "/dev/", 5) ||
	       (stat(output, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

/* An output whose directory is missing or read-only fails before the input is read: the user
 * learns it in a second, not after the conversion, and the message names the output as given
 * (the temporary name beside it is ours, not the user's).  The error's file is the output, so
 * the message leads with it.  Devices and stdout are opened as they are and not checked. */
static int check_output_dir(const char *output, struct pfc_error *err)
{
	char buf[PATH_MAX], *dir;
	struct stat st;

	if (!output || !strcmp(output, "-") || pfc_cli_is_device_name(output))
		return 0;
	if (snprintf(buf, sizeof(buf), "%s", output) >= (int)sizeof(buf))
		return 0;	/* write_output says the name is too long */
	dir = dirname(buf);
	if (access(dir, W_OK | X_OK) == 0)
		return 0;
	snprintf(err->file, sizeof(err->file), "%s", output);
	if (errno == ENOENT)
		return PFC_FAIL_NOOFF(err, WRITE, "directory '%s' does not exist", dir);
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
		return PFC_FAIL_NOOFF(err, WRITE, "'%s' is not a directory", dir);
	return PFC_FAIL_NOOFF(err, WRITE, "cannot write in directory '%s': %s", dir, strerror(errno));
}

#define OUT_BUF ((size_t)1 << 20)

/* Write through a temporary file in the target directory, renamed into place only when
 * everything was written: no half-written output is ever left under the final name, and
 * a failed write removes the temporary file. */
static int write_output(struct cli *c, struct pfc_session *s, const struct pfc_writer *w, const char *output,
			const struct pfc_wopts *wo)
{
	struct pfc_error *err = s->err;
	char tmp[PATH_MAX], *obuf = NULL;
	FILE *out;
	int fd = -1, ret, to_stdout = !output || !strcmp(output, "-");

	if (to_stdout) {
		out = stdout;
	} else if (pfc_cli_is_device_name(output)) {
		if (!(out = fopen(output, "w")))
			return PFC_FAIL_NOOFF(err, WRITE, "cannot open '%s': %s", output, strerror(errno));
		ret = pfc_writer_write(w, out, s, wo, err);
		if (fclose(out) != 0 && ret == 0)
			ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", output, strerror(errno));
		return ret;
	} else {
		/* the writer's pid in the name: a batch started after a crash or a kill -9 removes
		 * the temporary files of processes that are gone, and only those (batch.c) */
		if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.XXXXXX", output, (long)getpid()) >= (int)sizeof(tmp))
			return PFC_FAIL_NOOFF(err, USAGE, "output name is too long");
		fd = mkstemp(tmp);
		if (fd < 0) {
			/* the temporary name is an implementation detail: name the output as given */
			int e = errno;

			snprintf(err->file, sizeof(err->file), "%s", output);
			return PFC_FAIL_NOOFF(err, WRITE, "cannot create it: %s", strerror(e));
		}
		fchmod(fd, 0644 & ~c->umask);
		out = fdopen(fd, "w");
		if (!out) {
			close(fd);
			unlink(tmp);
			return PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", output, strerror(errno));
		}
		/* the outputs run to megabytes: written in 1 MiB pieces, not stdio's 4 KiB */
		if ((obuf = malloc(OUT_BUF)))
			setvbuf(out, obuf, _IOFBF, OUT_BUF);
	}
	errno = 0;
	ret = pfc_writer_write(w, out, s, wo, err);
	/* a writer that saw its stream fail says what it was writing; the message names the
	 * file and the system's reason (a full disk), which is what the user acts on */
	if (ret < 0 && err->code == PFC_ERR_WRITE && ferror(out) && errno &&
	    !strstr(err->detail, to_stdout ? "stdout" : output)) {
		int e = errno;
		char what[sizeof(err->detail)];

		snprintf(what, sizeof(what), "%s", err->detail);
		memset(err, 0, sizeof(*err));
		ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s (%s)", to_stdout ? "<stdout>" : output, strerror(e), what);
	}
	if (ret == 0 && (fflush(out) != 0 || ferror(out)))
		ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", to_stdout ? "<stdout>" : output, strerror(errno));
	if (!to_stdout) {
		if (ret == 0 && fsync(fileno(out)) != 0 && errno != EINVAL)
			ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", output, strerror(errno));
		if (fclose(out) != 0 && ret == 0)
			ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", output, strerror(errno));
		free(obuf);
		if (ret == 0 && rename(tmp, output) != 0)
			ret = PFC_FAIL_NOOFF(err, WRITE, "cannot rename '%s' to '%s': %s", tmp, output,
					     strerror(errno));
		if (ret != 0)
			unlink(tmp);
	}
	return ret;
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

int pfc_cli_base_open(struct cli *c, char *msg, size_t size)
{
	struct pfc_error err;
	int ret;

	memset(&err, 0, sizeof(err));
	c->base = calloc(1, sizeof(*c->base));
	if (!c->base) {
		snprintf(msg, size, "'%s': out of memory", c->diff);
		return -PFC_ERR_NOMEM;
	}
	/* the same options and filters as the inputs, so that both sides are cut alike; a --time
	 * in percent is resolved against the base's own samples */
	c->base_opts = c->opts;
	c->base_opts.input = c->diff;
	c->base_opts.keep_stream = 0;
	c->base_opts.record_files = 0;
	c->base_opts.progress = NULL;
	c->base_opts.preload_kernel = 1;
	c->base_filter = c->filter;
	c->base_filter.ranges = NULL;
	c->base_filter.nr_ranges = 0;
	c->base_filter.time_resolved = !c->filter.time_percent;
	if (!c->filter.time_percent && c->filter.nr_ranges) {
		c->base_filter.ranges = malloc(c->filter.nr_ranges * sizeof(*c->filter.ranges));
		if (!c->base_filter.ranges) {
			snprintf(msg, size, "'%s': out of memory", c->diff);
			return -PFC_ERR_NOMEM;
		}
		memcpy(c->base_filter.ranges, c->filter.ranges, c->filter.nr_ranges * sizeof(*c->filter.ranges));
		c->base_filter.nr_ranges = c->filter.nr_ranges;
	}
	c->base_opts.filter = pfc_filter_active(&c->base_filter) ? &c->base_filter : NULL;
	ret = pfc_session_open(c->base, &c->base_opts, &err);
	if (ret == 0)
		ret = pfc_session_process(c->base);
	if (ret == -PFC_ERR_RETRY) {	/* as in pfc_cli_convert: the kernel's symbols in line */
		pfc_session_close(c->base);
		memset(&err, 0, sizeof(err));
		c->base_opts.preload_kernel = 0;
		if (c->filter.time_percent) {
			free(c->base_filter.ranges);
			c->base_filter.ranges = NULL;
			c->base_filter.nr_ranges = 0;
			c->base_filter.time_resolved = 0;
		}
		ret = pfc_session_open(c->base, &c->base_opts, &err);
		if (ret == 0)
			ret = pfc_session_process(c->base);
	}
	if (ret == 0)
		ret = pfc_session_symbolize(c->base);
	if (ret != 0) {
		format_error(c, c->diff, &err, msg, size);
		pfc_session_close(c->base);
		free(c->base);
		c->base = NULL;
	}
	return ret;
}

void pfc_cli_base_close(struct cli *c)
{
	if (c->base) {
		pfc_session_close(c->base);
		free(c->base);
		c->base = NULL;
	}
	free(c->base_filter.ranges);
	c->base_filter.ranges = NULL;
}

/* --fail-if-grown PCT: the functions whose total share grew by more than PCT points, on
 * stderr (a single conversion, unless -q) or in the hints the batch parent prints under the
 * file's line; returns how many, or a negative error code. */
static int gate(struct cli *c, struct pfc_session *s, const char *input, char *hints, size_t size, struct pfc_error *err)
{
	struct pfc_wopts wo = c->wopts;
	struct pfc_diff d;
	struct pfc_funcs f;
	size_t i, used = strlen(hints);
	int ret, grown = 0;

	memset(&f, 0, sizeof(f));
	wo.diff_base = c->base;
	ret = pfc_diff_build(&d, s, &wo, err);
	if (ret == 0)
		ret = pfc_funcs_build(&f, &d, err);
	if (ret == 0) {
		pfc_funcs_sort(&f, 0, 1);
		for (i = 0; i < f.n; i++) {
			const struct pfc_func *fn = &f.v[i];
			char line[512];
			if (!(fn->dtotal > c->fail_if_grown))
				continue;
			if (!grown++) {
				snprintf(line, sizeof(line), "perfconv: '%s': grew by more than %g points of total share "
					 "against '%s' (--fail-if-grown):\n", input, c->fail_if_grown, c->diff);
				if (c->outdir) {
					if (used + strlen(line) < size)
						used += (size_t)snprintf(hints + used, size - used, "%s", line);
				} else if (!c->quiet) {
					fputs(line, stderr);
				}
			}
			snprintf(line, sizeof(line), "  %+.2f  %6.2f%% -> %6.2f%%  %.*s\n", fn->dtotal,
				 pfc_diff_share(fn->total[0], d.sum[0]), pfc_diff_share(fn->total[1], d.sum[1]),
				 (int)(fn->len < 400 ? fn->len : 400), fn->name);
			if (c->outdir) {
				if (used + strlen(line) < size)
					used += (size_t)snprintf(hints + used, size - used, "%s", line);
			} else if (!c->quiet) {
				fputs(line, stderr);
			}
		}
	}
	pfc_funcs_free(&f);
	pfc_diff_free(&d);
	return ret < 0 ? ret : grown;
}

/* What a pack holds: its size against the recording's, the files by place. */
static void pack_summary(const struct cli *c, const struct pfc_session *s, const char *out,
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
			fprintf(stderr, "%s%zu from %s", *sep ? sep : ": ", by[i], pfc_files_base_name(i));
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

/*
 * A conversion of a few megabytes touches some 25 MB of fresh memory (its stacks and frames,
 * caches, perf maps and symbol tables, and the trace text in flight), and glibc takes it in 4
 * KiB pages: 6,000 page faults, a quarter of the CPU time of a small conversion on a virtual
 * machine, where a fault costs microseconds.  So the process's memory comes from one heap
 * (no arena per thread; blocks below HEAP_MMAP, which glibc would map one by one once it
 * raised its threshold, from the heap too) that is grown HEAP_PAD at a time, and the part of
 * it grown here is backed by transparent huge pages where the kernel allows it (THP
 * "madvise" mode): one fault per 2 MiB.  Larger blocks are mapped as before once the heap has
 * no room left for them (mem.h gives the large arrays huge pages itself), so that what a large
 * recording frees goes back to the system.  While it has room, a block of any size comes from
 * the heap, and calloc then clears all of it: a table of which few entries are written is
 * mapped apart (pfc_mem_sparse).  Done once a process; PERFCONV_NO_HEAP_SETUP=1 leaves
 * glibc's defaults, to measure against.
 */
#define HEAP_PAD ((size_t)64 << 20)
#define HEAP_MMAP ((size_t)4 << 20)
static void heap_setup(void)
{
	static int done;
	uintptr_t lo, hi;
	void *p;

	if (done || getenv("PERFCONV_NO_HEAP_SETUP"))
		return;
	done = 1;
	if (!mallopt(M_ARENA_MAX, 1) || !mallopt(M_MMAP_THRESHOLD, (int)HEAP_MMAP) ||
	    !mallopt(M_TRIM_THRESHOLD, (int)(2 * HEAP_PAD)) || !mallopt(M_TOP_PAD, (int)HEAP_PAD))
		return;
	/* a block past what the heap has left grows it by the block and HEAP_PAD */
	lo = (uintptr_t)sbrk(0);
	if (!(p = malloc((size_t)1 << 20)))
		return;
	free(p);
	hi = (uintptr_t)sbrk(0);
	lo = (lo + ((uintptr_t)2 << 20) - 1) & ~(((uintptr_t)2 << 20) - 1);
	hi &= ~(((uintptr_t)2 << 20) - 1);
#ifdef MADV_HUGEPAGE
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);	/* a hint: an error changes nothing */
#endif
}

static uint64_t count_unresolved(const struct pfc_session *s)
{
	return s->st.nr_unresolved_user + s->st.nr_unresolved_kernel + s->st.nr_unresolved_nomap;
}

/*
 * A pack made under --perf-compat holds what perfconv's own rules read too, so that it
 * converts without --perf-compat as the recording does: the recording is converted once
 * more in the default mode, quietly, and the files that conversion read join S's record.
 * (A pack made without --perf-compat already answers perf's rules: files.c is asked the
 * same questions in both modes where they differ only in what they do with the answer.)
 */
static int pack_default_files(struct pfc_session *s, const struct pfc_opts *o, struct pfc_error *err)
{
	struct pfc_opts d = *o;
	struct pfc_session sh;
	int ret;

	d.perf_compat = 0;
	d.resolve_jit = 1;	/* what --perf-compat turns off (cli/perfconv.c) */
	d.log = NULL;
	d.progress = NULL;
	d.keep_stream = 0;
	ret = pfc_session_open(&sh, &d, err);
	if (ret == 0)
		ret = pfc_session_process(&sh);
	if (ret == -PFC_ERR_RETRY) {	/* as in pfc_cli_convert */
		pfc_session_close(&sh);
		memset(err, 0, sizeof(*err));
		d.preload_kernel = 0;
		ret = pfc_session_open(&sh, &d, err);
		if (ret == 0)
			ret = pfc_session_process(&sh);
	}
	if (ret == 0)
		ret = pfc_session_symbolize(&sh);
	if (ret == 0) {
		pfc_session_kernel_syms(&sh);
		ret = pfc_session_side_files(&sh, NULL, NULL);
	}
	if (ret == 0 && pfc_files_absorb(s->files, sh.files) < 0)
		ret = PFC_FAIL_NOOFF(err, NOMEM, "pack");
	pfc_session_close(&sh);
	return ret;
}

int pfc_cli_convert(struct cli *c, const char *input, const struct pfc_writer *const *ws,
		    const char *const *outs, size_t n, struct pfc_job_result *res)
{
	struct pfc_session s;
	struct pfc_error err, first_err;
	struct pfc_opts o = c->opts;
	struct progress prog;
	struct timespec t0, t1, t_read, t_sym;
	struct phases ph;
	struct warn_capture wc = { 0 };
	char *cmdline = NULL;
	FILE *logf = NULL, *log_to = c->opts.log, *unwritten = NULL;
	char *unwritten_buf = NULL;
	struct pfc_pack_summary packsum;
	struct pfc_packw_pre *pack_pre = NULL;
	struct stat in_st;
	size_t i, k, unwritten_len = 0;
	int ret, single = !c->outdir, need_log = 0, write_failed = 0, first_wret = 0;
	char gate_text[1024] = "";

	memset(res, 0, sizeof(*res));
	memset(&err, 0, sizeof(err));
	memset(&prog, 0, sizeof(prog));
	heap_setup();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		if ((ret = check_output_dir(outs[i], &err)) < 0) {
			format_error(c, input, &err, res->msg, sizeof(res->msg));
			return ret;
		}
	o.input = input;
	o.keep_stream = 0;
	for (i = 0; i < n; i++)
		if (ws[i]->needs & PFC_NEED_STREAM)
			o.keep_stream = 1;
	o.preload_kernel = n > 0;
	if (pfc_filter_active(&c->filter))
		o.filter = &c->filter;
	for (i = 0; i < n; i++) {
		if (ws[i]->needs & PFC_NEED_LOG)
			need_log = 1;
		if (ws[i]->needs & PFC_NEED_FILES)
			o.record_files = 1;
	}
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
	/* a batch worker keeps its warnings too, for the parent to print under the file's line:
	 * workers share stderr, and a warning there names no input */
	if ((need_log && !(cmdline = command_line(c->argc, c->argv))) ||
	    ((need_log || (!single && o.log)) && capture_start(&wc, &o) < 0)) {
		free(cmdline);
		snprintf(res->msg, sizeof(res->msg), "'%s': out of memory", input);
		if (logf)
			fclose(logf);
		return -PFC_ERR_NOMEM;
	}
	/* a pack's recording is compressed while it is converted (pack.c's pfc_packw_pre): a
	 * regular file only (a pipe's bytes are the conversion's), not a pack */
	if (o.record_files && strcmp(input, "-") && !stat(input, &in_st) && S_ISREG(in_st.st_mode) &&
	    !pfc_pack_detect(input))
		pack_pre = pfc_packw_pre_start(input, PFC_PACK_RECORDING);
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
				pfc_packw_pre_free(pack_pre);
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
		ret = pfc_session_print_header(&s, stdout, c->header_full, 0) < 0 ? PFC_FAIL_NOOFF(&err, IO, "cannot print the header") : 0;
	if (ret == 0 && single && c->stats)
		ret = print_stats(&s) < 0 ? PFC_FAIL_NOOFF(&err, NOMEM, "stats") : 0;
	if (ret == 0 && n)
		ret = pfc_session_symbolize(&s);
	clock_gettime(CLOCK_MONOTONIC, &t_sym);
	if (wc.f) {
		fflush(wc.f);
		if (log_to && wc.len && single)
			fwrite(wc.buf, 1, wc.len, log_to);
	}
	if (ret == 0 && o.record_files && o.perf_compat) {
		struct pfc_error e2;
		char why[1024];
		memset(&e2, 0, sizeof(e2));
		if (pack_default_files(&s, &o, &e2) < 0 && o.log) {
			format_error(c, input, &e2, why, sizeof(why));
			fprintf(o.log, "perfconv: the pack holds only what --perf-compat reads: without it, %s\n", why);
		}
	}
	/* Each output is written on its own: one that cannot be written (a full disk) does not
	 * stop the others, and those written stay.  The first failure is the error; the names
	 * of the other outputs that failed are added to its message. */
	unwritten = ret == 0 ? open_memstream(&unwritten_buf, &unwritten_len) : NULL;
	/* a pack goes last: it holds every file the other writers asked for too */
	for (k = 0; ret == 0 && k < 2 * n; k++) {
		struct pfc_wopts wo = c->wopts;
		const char *out;
		int wret;

		wo.diff_base = c->base;
		i = k % n;
		if (!(ws[i]->needs & PFC_NEED_FILES) != (k < n))
			continue;
		out = outs[i];
		wo.output = out;
		wo.pack_summary = &packsum;
		wo.pack_recording = pack_pre;
		wo.command_line = cmdline;
		wo.warnings = wc.f ? wc.buf : NULL;
		/* a name ending in .gz asks for gzip, whatever the format */
		wo.gzip = pfc_writer_name_gzip(out);
		memset(&packsum, 0, sizeof(packsum));
		wret = write_output(c, &s, ws[i], out, &wo);
		if (wret == 0 && (ws[i]->needs & PFC_NEED_FILES) && single && !c->quiet)
			pack_summary(c, &s, out, &packsum);
		if (wret == 0)
			continue;
		if (!write_failed++) {
			first_err = err;
			first_wret = wret;
		} else if (unwritten) {
			fprintf(unwritten, "%s'%s'", write_failed > 2 ? ", " : "", out);
		}
		memset(&err, 0, sizeof(err));
	}
	if (write_failed) {
		err = first_err;
		ret = first_wret;
	}
	if (ret == 0 && c->base && c->fail_if_grown >= 0) {
		int g = gate(c, &s, input, gate_text, sizeof(gate_text), &err);
		if (g < 0)
			ret = g;
		else
			res->grown = g;
	}
	if (unwritten)
		fclose(unwritten);
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
		if (write_failed > 1 && unwritten_buf) {
			size_t m = strlen(res->msg);
			snprintf(res->msg + m, sizeof(res->msg) - m, "; not written either: %s", unwritten_buf);
		}
	} else {
		res->ok = 1;
		if (single && n)
			print_summary(c, &s, res->kept, &ph);
	}
	if (!single && !c->quiet) {
		batch_hints(&s, wc.f ? wc.buf : NULL, ret == 0 && n, res->hints, sizeof(res->hints));
		/* the gate's list first: it is what a CI log is read for */
		if (gate_text[0]) {
			size_t g = strlen(gate_text), h = strlen(res->hints);
			if (g + h >= sizeof(res->hints))
				h = sizeof(res->hints) - 1 - g;
			memmove(res->hints + g, res->hints, h);
			memcpy(res->hints, gate_text, g);
			res->hints[g + h] = 0;
		}
	}
	pfc_session_close(&s);
	pfc_packw_pre_free(pack_pre);
	capture_end(&wc);
	free(unwritten_buf);
	free(cmdline);
	if (logf)
		fclose(logf);
	return ret;
}

