/*
 * progress.c - the progress line a conversion redraws on a terminal (bytes, samples, rate,
 * time left), and the log stream that erases it before a warning is printed.  Whether a
 * line is shown at all (a terminal, not -q) is perfconv.c's; the figures are the session's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include "cli/progress.h"

double pfc_cli_since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* Called every few thousand records: redraws one line at most five times a second, and
 * only once the conversion has run for half a second, so short ones print nothing. */
static void progress_cb(void *arg, const struct pfc_session *s)
{
	struct pfc_cli_progress *p = arg;
	struct timespec now;
	double el, mb, rate;
	/* called by the thread that processes records, while another may read them */
	uint64_t done = __atomic_load_n(&s->rd.bytes_done, __ATOMIC_RELAXED), total = s->rd.bytes_total;
	uint64_t samples = s->st.nr_samples;
	char line[256];
	int n;

	clock_gettime(CLOCK_MONOTONIC, &now);
	el = pfc_cli_since(&p->start, &now);
	if (el < p->delay || (p->shown && pfc_cli_since(&p->last, &now) < 0.2))
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
	if (p->verbose && n > 0 && (size_t)n < sizeof(line))
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
	struct pfc_cli_progress *p = cookie;

	if (p->shown) {
		fputs("\r\033[K", stderr);
		p->shown = 0;
	}
	return (ssize_t)fwrite(buf, 1, len, stderr);
}

void pfc_cli_progress_end(struct pfc_cli_progress *p)
{
	if (p->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		p->shown = 0;
	}
}

/* A terminal's progress line for a conversion that started at START, shown after DELAY seconds
 * (PERFCONV_PROGRESS_DELAY, env.c): O's progress callback
 * set, and its log (if any) sent through a stream that erases the line before a warning.
 * Returns that stream, for the caller to close after the conversion, or NULL. */
FILE *pfc_cli_progress_start(struct pfc_cli_progress *p, int verbose, double delay, const struct timespec *start,
			     struct pfc_opts *o)
{
	cookie_io_functions_t io = { .write = log_write };
	FILE *logf = NULL;

	p->verbose = verbose;
	p->start = *start;
	p->delay = delay;
	o->progress = progress_cb;
	o->progress_arg = p;
	if (o->log && (logf = fopencookie(p, "w", io)))
		setvbuf(logf, NULL, _IONBF, 0);
	if (logf)
		o->log = logf;
	return logf;
}
