/*
 * convert.c - one conversion of one input into its outputs, as main() and each batch worker
 * run it: the options the writers need, the read (again without the kernel symbols' preload
 * when they came too late), --stats and --header, the writers in turn, the warnings kept
 * for those that log them, and how it went.  Output files are output.c's, what is printed
 * summary.c's and progress.c's, --diff gate.c's; it never parses options.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli/convert.h"
#include "cli/gate.h"
#include "cli/heap.h"
#include "cli/output.h"
#include "cli/packpass.h"
#include "cli/present.h"
#include "cli/progress.h"
#include "cli/summary.h"
#include "converter/session.h"
#include "formats/writer.h"

/* "'FILE': what at offset N: detail", as one line without the newline; FILE is the file the
 * error is in (a jitdump, say) when it is not the input */
void pfc_cli_format_error(const struct cli *c, const char *input, const struct pfc_error *e, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "'%s': %s", e->file[0] ? e->file : input, pfc_strerror(e->code));

	if (e->has_offset && n < len)
		n += (size_t)snprintf(buf + n, len - n, " at offset %llu", (unsigned long long)e->offset);
	if (e->detail[0] && n < len)
		n += (size_t)snprintf(buf + n, len - n, ": %s", e->detail);
	if (c->verbose && e->src_file && n < len)
		snprintf(buf + n, len - n, " [%s:%d]", e->src_file, e->src_line);
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
 * once the input is read.  A second pass of the input warns again: its text starts at mark. */
struct warn_capture {
	FILE *f;
	char *buf;
	size_t len, mark;
};

static int capture_start(struct warn_capture *wc, struct pfc_opts *o)
{
	wc->f = open_memstream(&wc->buf, &wc->len);
	if (!wc->f)
		return -1;
	o->log = wc->f;
	return 0;
}

/* The warnings of the last pass as of the last flush, or NULL when none are kept. */
static const char *capture_text(const struct warn_capture *wc)
{
	return wc->f ? wc->buf + wc->mark : NULL;
}

static void capture_end(struct warn_capture *wc)
{
	if (wc->f)
		fclose(wc->f);
	free(wc->buf);
	memset(wc, 0, sizeof(*wc));
}

int pfc_cli_read(struct pfc_session *s, struct pfc_opts *o, struct pfc_filter *filter, enum pfc_cli_read_what what,
		 void (*again)(void *arg), void *arg, struct pfc_error *err)
{
	int ret = pfc_session_open(s, o, err);

	/* a pipe stream carries its header features as records: read them first */
	if (ret == 0 && (what == PFC_CLI_READ_RECORDS || s->rd.pipe_mode))
		ret = pfc_session_process(s);
	if (ret != -PFC_ERR_RETRY)
		return ret;
	/* rare: kernel frames outside the kallsyms range came before the preloaded symbols were
	 * in; the second pass loads them in line, exactly as perf does */
	pfc_session_close(s);
	memset(err, 0, sizeof(*err));
	o->preload_kernel = 0;
	if (filter) {	/* percentages are resolved again from the same header */
		filter->time_resolved = !filter->time_percent;
		if (filter->time_percent) {
			free(filter->ranges);
			filter->ranges = NULL;
			filter->nr_ranges = 0;
		}
	}
	if (again)
		again(arg);
	ret = pfc_session_open(s, o, err);
	if (ret == 0)
		ret = pfc_session_process(s);
	return ret;
}

/* One conversion's state, as its steps hand it on. */
struct conv {
	struct cli *c;
	const char *input;
	int single;                  /* not a batch worker: print the summary, --stats, --header */
	struct pfc_opts o;
	struct pfc_session s;
	struct pfc_error err;
	struct pfc_cli_progress prog;
	struct warn_capture wc;
	char *cmdline;               /* for the writers that keep a log */
	FILE *logf;                  /* the log that clears the progress line, ours to close */
	FILE *log_to;                /* where the warnings kept go once the input is read */
	struct pfc_packw_pre *pack_pre;
	struct pfc_pack_summary packsum;
	char gate_text[1024];
	char nomatch[1536];          /* a filter kept no sample: what the recording has instead */
};

static void conv_free(struct conv *cv)
{
	pfc_packw_pre_free(cv->pack_pre);
	capture_end(&cv->wc);
	free(cv->cmdline);
	if (cv->logf)
		fclose(cv->logf);
}

/* The session's options for these writers: what they read (the sample stream, the files a
 * pack holds), the filters, and the warnings kept for those that log them, which a batch
 * worker keeps too, for the parent to print under the file's line: workers share stderr,
 * and a warning there names no input. */
static int conv_start(struct conv *cv, const struct timespec *t0, const struct pfc_writer *const *ws, size_t n)
{
	struct cli *c = cv->c;
	struct pfc_opts *o = &cv->o;
	size_t i;
	int need_log = 0;

	*o = c->opts;
	o->input = cv->input;
	o->keep_stream = 0;
	for (i = 0; i < n; i++) {
		if (ws[i]->needs & PFC_NEED_STREAM)
			o->keep_stream = 1;
		/* a time profile (--off-cpu, --thread-time) is made of stacks: no times for it */
		if ((ws[i]->needs & PFC_NEED_TIMES) && !(o->offcpu || o->thread_time))
			o->keep_times = 1;
		if (ws[i]->needs & PFC_NEED_MARKS)
			o->keep_marks = 1;
	}
	o->preload_kernel = n > 0;
	if (pfc_filter_active(&c->filter))
		o->filter = &c->filter;
	for (i = 0; i < n; i++) {
		if (ws[i]->needs & PFC_NEED_LOG)
			need_log = 1;
		if (ws[i]->needs & PFC_NEED_FILES)
			o->record_files = 1;
		if (ws[i]->needs & PFC_NEED_THROWS)
			o->throw_frames = 1;
		if (ws[i]->needs & PFC_NEED_RUNTIME_MARKS)
			o->runtime_marks = 1;
		if (ws[i]->needs & PFC_READS_EVENTS)
			o->events_read_later = 1;
	}
	cv->log_to = c->opts.log;
	if (c->progress && n > 0 && (cv->logf = pfc_cli_progress_start(&cv->prog, c->verbose, c->env.progress_delay, t0, o)))
		cv->log_to = cv->logf;
	if ((need_log && !(cv->cmdline = command_line(c->argc, c->argv))) ||
	    ((need_log || (!cv->single && o->log)) && capture_start(&cv->wc, o) < 0))
		return -PFC_ERR_NOMEM;
	/* a pack's recording is compressed while it is converted (packwrite.c's pfc_packw_pre) */
	cv->pack_pre = pfc_cli_pack_pre_start(cv->input, o);
	return 0;
}

/* Before the second pass: say so (-v), and keep only the warnings it gives. */
static void conv_again(void *arg)
{
	struct conv *cv = arg;

	if (cv->c->verbose)
		fprintf(stderr, "perfconv: '%s': converting again with the kernel symbols read in line\n", cv->input);
	if (cv->wc.f) {
		fflush(cv->wc.f);
		cv->wc.mark = cv->wc.len;
	}
}

/* The input read, --header and --stats printed, the symbols resolved (T_READ: when the
 * records were read). */
static int conv_read(struct conv *cv, size_t n, struct timespec *t_read)
{
	struct cli *c = cv->c;
	int ret;

	ret = pfc_cli_read(&cv->s, &cv->o, cv->o.filter, c->stats || n ? PFC_CLI_READ_RECORDS : PFC_CLI_READ_HEADER,
			   conv_again, cv, &cv->err);
	clock_gettime(CLOCK_MONOTONIC, t_read);
	pfc_cli_progress_end(&cv->prog);
	if (ret == 0 && cv->single && c->header)
		ret = pfc_session_print_header(&cv->s, stdout, c->header_full, 0) < 0 ?
		      PFC_FAIL_NOOFF(&cv->err, IO, "cannot print the header") : 0;
	if (ret == 0 && cv->single && c->stats)
		ret = pfc_cli_print_stats(&cv->s) < 0 ? PFC_FAIL_NOOFF(&cv->err, NOMEM, "stats") : 0;
	/* an output of no sample is an empty graph that looks like a broken one: a filter that
	 * keeps nothing is an error before anything is written */
	if (ret == 0 && n && pfc_cli_present_filter(&cv->s, cv->o.filter, cv->nomatch, sizeof(cv->nomatch)) != 0)
		ret = cv->nomatch[0] ? -PFC_ERR_USAGE : PFC_FAIL_NOOFF(&cv->err, NOMEM, "filter");
	if (ret == 0 && n && !c->quiet)
		pfc_cli_present_pid_map(&cv->s, c->opts.pid_map, c->opts.nr_pid_map, cv->input, cv->o.log);
	if (ret == 0 && n)
		ret = pfc_session_symbolize(&cv->s);
	return ret;
}

/* Each output is written on its own: one that cannot be written (a full disk) does not stop
 * the others, and those written stay.  The first failure is the error (in cv->err); the
 * names of the other outputs that failed go to *UNWRITTEN, to be freed. */
static int write_outputs(struct conv *cv, const struct pfc_writer *const *ws, const char *const *outs, size_t n,
			 char **unwritten)
{
	struct cli *c = cv->c;
	struct pfc_error first_err;
	size_t i, k, len = 0;
	FILE *names = open_memstream(unwritten, &len);
	int failed = 0, first_ret = 0;

	/* a pack goes last: it holds every file the other writers asked for too */
	for (k = 0; k < 2 * n; k++) {
		struct pfc_wopts wo = c->wopts;
		const char *out;
		int wret;

		i = k % n;
		if (!(ws[i]->needs & PFC_NEED_FILES) != (k < n))
			continue;
		out = outs[i];
		wo.diff_base = c->base;
		wo.output = out;
		wo.pack_summary = &cv->packsum;
		wo.pack_recording = cv->pack_pre;
		wo.command_line = cv->cmdline;
		wo.warnings = capture_text(&cv->wc);
		/* the warnings kept were printed once the input was read: a single conversion's
		 * writers warn on stderr itself, a batch worker's join its kept warnings */
		wo.log = cv->single ? cv->log_to : cv->o.log;
		/* a name ending in .gz asks for gzip, whatever the format */
		wo.gzip = pfc_writer_name_gzip(out);
		memset(&cv->packsum, 0, sizeof(cv->packsum));
		wret = pfc_cli_output_write(c->umask, &cv->s, ws[i], out, &wo);
		if (wret == 0 && (ws[i]->needs & PFC_NEED_FILES) && cv->single && !c->quiet)
			pfc_cli_pack_summary(c, &cv->s, out, &cv->packsum);
		if (wret == 0)
			continue;
		if (!failed++) {
			first_err = cv->err;
			first_ret = wret;
		} else if (names) {
			fprintf(names, "%s'%s'", failed > 2 ? ", " : "", out);
		}
		memset(&cv->err, 0, sizeof(cv->err));
	}
	if (names)
		fclose(names);
	if (failed)
		cv->err = first_err;
	return failed ? first_ret : 0;
}

/* The frames of the samples, each counted once per sample it is in, and those without a
 * name: the share of the graph a user sees unnamed (a few distinct frames of a hot leaf
 * weigh more than many of a cold path). */
static void frames_in_samples(const struct pfc_session *s, uint64_t *all, uint64_t *unresolved)
{
	const struct pfc_stacks *sk = &s->stacks;
	size_t i, k;

	*all = *unresolved = 0;
	if (!s->symbolized)
		return;
	for (i = 0; i < sk->nr_stacks; i++) {
		const struct pfc_stack *st = &sk->stacks[i];
		*all += (uint64_t)st->nr * st->count;
		for (k = 0; k < st->nr; k++)
			if (!sk->frames[sk->frame_ids[st->first + k]].resolved)
				*unresolved += st->count;
	}
}

/* How it went, into RES; a batch worker's hints, with the gate's list first: it is what a
 * CI log is read for. */
static void conv_result(struct conv *cv, int ret, size_t n, const char *unwritten, struct pfc_job_result *res)
{
	struct cli *c = cv->c;
	struct pfc_session *s = &cv->s;

	res->samples = s->st.nr_samples;
	res->kept = s->st.nr_samples - s->st.nr_samples_filtered;
	frames_in_samples(s, &res->frames, &res->unresolved);
	if (ret != 0 && cv->nomatch[0]) {
		snprintf(res->msg, sizeof(res->msg), "'%s': %s", cv->input, cv->nomatch);
	} else if (ret != 0) {
		pfc_cli_format_error(c, cv->input, &cv->err, res->msg, sizeof(res->msg));
		if (unwritten && *unwritten) {
			size_t m = strlen(res->msg);
			snprintf(res->msg + m, sizeof(res->msg) - m, "; not written either: %s", unwritten);
		}
	} else {
		res->ok = 1;
	}
	if (!cv->single && !c->quiet) {
		if (cv->wc.f)	/* the writers' warnings too */
			fflush(cv->wc.f);
		pfc_cli_batch_hints(s, capture_text(&cv->wc), ret == 0 && n, res->hints, sizeof(res->hints));
		if (cv->gate_text[0]) {
			size_t g = strlen(cv->gate_text), h = strlen(res->hints);
			if (g + h >= sizeof(res->hints))
				h = sizeof(res->hints) - 1 - g;
			memmove(res->hints + g, res->hints, h);
			memcpy(res->hints, cv->gate_text, g);
			res->hints[g + h] = 0;
		}
	}
}

int pfc_cli_convert(struct cli *c, const char *input, const struct pfc_writer *const *ws,
		    const char *const *outs, size_t n, struct pfc_job_result *res)
{
	struct conv cv;
	struct timespec t0, t1, t_read, t_sym;
	struct pfc_cli_phases ph;
	char *unwritten = NULL;
	size_t i;
	int ret;

	memset(res, 0, sizeof(*res));
	memset(&cv, 0, sizeof(cv));
	cv.c = c;
	cv.input = input;
	cv.single = !c->outdir;
	pfc_cli_heap_setup(c->env.no_heap_setup);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		if ((ret = pfc_cli_output_check(outs[i], &cv.err)) < 0) {
			pfc_cli_format_error(c, input, &cv.err, res->msg, sizeof(res->msg));
			return ret;
		}
	if ((ret = conv_start(&cv, &t0, ws, n)) < 0) {
		conv_free(&cv);
		snprintf(res->msg, sizeof(res->msg), "'%s': out of memory", input);
		return ret;
	}
	ret = conv_read(&cv, n, &t_read);
	clock_gettime(CLOCK_MONOTONIC, &t_sym);
	/* the warnings reach stderr once the input is read */
	if (cv.wc.f) {
		fflush(cv.wc.f);
		if (cv.log_to && cv.wc.len > cv.wc.mark && cv.single)
			fwrite(cv.wc.buf + cv.wc.mark, 1, cv.wc.len - cv.wc.mark, cv.log_to);
	}
	if (ret == 0)
		pfc_cli_pack_second_pass(c, &cv.s, &cv.o, input);
	if (ret == 0)
		ret = write_outputs(&cv, ws, outs, n, &unwritten);
	if (ret == 0 && c->base && c->fail_if_grown >= 0) {
		int g = pfc_cli_gate(c, &cv.s, input, cv.gate_text, sizeof(cv.gate_text), &cv.err);
		if (g < 0)
			ret = g;
		else
			res->grown = g;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->seconds = pfc_cli_since(&t0, &t1);
	conv_result(&cv, ret, n, unwritten, res);
	if (ret == 0 && cv.single && n) {
		ph.read = pfc_cli_since(&t0, &t_read);
		ph.symbols = pfc_cli_since(&t_read, &t_sym);
		ph.write = pfc_cli_since(&t_sym, &t1);
		pfc_cli_summary(c, &cv.s, res->kept, &ph);
	}
	pfc_session_close(&cv.s);
	conv_free(&cv);
	free(unwritten);
	return ret;
}
