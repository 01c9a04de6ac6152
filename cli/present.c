/*
 * present.c - the pids and comms a recording has samples of, said when an option names
 * what the recording has not: a filter (--pid=, --tid=, --comm, --time) that keeps no
 * sample is an error before any output is written, and a --pid-map of a pid without
 * samples is a warning.  It reads the machine's per-thread sample counts; it filters
 * nothing and writes no output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/present.h"

/* The busiest few of a kind are named; the rest are counted. */
#define SHOWN 5

struct tally {
	int32_t pid;
	uint32_t comm;          /* interned: the thread's last comm */
	uint64_t samples;
};

struct tallies {
	struct tally *v;
	size_t n, cap;
	int by_comm;            /* 0: one entry per pid (named by its busiest thread's comm) */
	int failed;
};

static void add_thread(const struct pfc_thread *th, void *arg)
{
	struct tallies *t = arg;
	size_t i;

	if (!th->nr_samples || t->failed)
		return;
	for (i = 0; i < t->n; i++)
		if (t->by_comm ? t->v[i].comm == th->comm : t->v[i].pid == th->pid)
			break;
	if (i == t->n) {
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 64;
			struct tally *v = realloc(t->v, cap * sizeof(*v));
			if (!v) {
				t->failed = 1;
				return;
			}
			t->v = v;
			t->cap = cap;
		}
		t->v[t->n++] = (struct tally){ th->pid, th->comm, 0 };
	}
	/* a pid is named by the comm of its process leader, as perf report --sort pid does */
	if (!t->by_comm && th->tid == th->pid)
		t->v[i].comm = th->comm;
	t->v[i].samples += th->nr_samples;
}

static int by_samples(const void *a, const void *b)
{
	const struct tally *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void collect(struct pfc_session *s, int by_comm, struct tallies *t)
{
	memset(t, 0, sizeof(*t));
	t->by_comm = by_comm;
	pfc_machine_each_thread(&s->machine, add_thread, t);
	if (!t->failed && t->n)
		qsort(t->v, t->n, sizeof(*t->v), by_samples);
}

/* "673 EventsProbe (603 samples), 700 dotnet (4 samples) and 3 more" into f */
static void list(FILE *f, struct pfc_session *s, const struct tallies *t)
{
	size_t i;

	for (i = 0; i < t->n && i < SHOWN; i++) {
		const struct tally *e = &t->v[i];
		fprintf(f, "%s", i ? ", " : "");
		if (t->by_comm)
			fprintf(f, "'%s'", pfc_intern_str(&s->strings, e->comm));
		else
			fprintf(f, "%d %s", (int)e->pid, pfc_intern_str(&s->strings, e->comm));
		fprintf(f, " (%llu sample%s)", (unsigned long long)e->samples, e->samples == 1 ? "" : "s");
	}
	if (t->n > SHOWN)
		fprintf(f, " and %zu more", t->n - SHOWN);
}

/* The filter as it was given: "--pid=1,2 --comm a" */
static void filter_text(FILE *f, const struct pfc_filter *flt)
{
	const char *sep = "";
	size_t i;

	if (flt->nr_pids) {
		fprintf(f, "--pid=");
		for (i = 0; i < flt->nr_pids; i++)
			fprintf(f, "%s%d", i ? "," : "", (int)flt->pids[i]);
		sep = " ";
	}
	if (flt->nr_tids) {
		fprintf(f, "%s--tid=", sep);
		for (i = 0; i < flt->nr_tids; i++)
			fprintf(f, "%s%d", i ? "," : "", (int)flt->tids[i]);
		sep = " ";
	}
	if (flt->nr_comms) {
		fprintf(f, "%s--comm ", sep);
		for (i = 0; i < flt->nr_comms; i++)
			fprintf(f, "%s%s", i ? "," : "", flt->comms[i]);
		sep = " ";
	}
	if (flt->time_str)
		fprintf(f, "%s--time %s", sep, flt->time_str);
}

int pfc_cli_present_filter(struct pfc_session *s, const struct pfc_filter *flt, char *msg, size_t len)
{
	struct tallies pids, comms;
	uint64_t kept = s->st.nr_samples - s->st.nr_samples_filtered;
	FILE *f;

	msg[0] = 0;
	/* a recording without samples is not the filter's doing: the summary says 0 read */
	if (!flt || !pfc_filter_active(flt) || !s->st.nr_samples || kept)
		return 0;
	if (len < 2 || !(f = fmemopen(msg, len - 1, "w")))
		return -1;
	collect(s, 0, &pids);
	collect(s, 1, &comms);
	fprintf(f, "no sample matches ");
	filter_text(f, flt);
	fprintf(f, " (%llu samples read)", (unsigned long long)s->st.nr_samples);
	if (!pids.failed && !comms.failed && pids.n) {
		fprintf(f, "; pids with samples: ");
		list(f, s, &pids);
		fprintf(f, "; comms: ");
		list(f, s, &comms);
	}
	fclose(f);
	msg[len - 1] = 0;	/* a full buffer is not terminated by fmemopen */
	free(pids.v);
	free(comms.v);
	return 1;
}

void pfc_cli_present_pid_map(struct pfc_session *s, const struct pfc_pidmap *map, size_t n, const char *input,
			     FILE *log)
{
	struct tallies pids;
	size_t i, j;

	if (!log || !n)
		return;
	collect(s, 0, &pids);
	if (pids.failed)
		return;
	for (i = 0; i < n; i++) {
		for (j = 0; j < pids.n; j++)
			if (pids.v[j].pid == map[i].host)
				break;
		if (j < pids.n)
			continue;
		/* the runtime's files are looked up by the host pid of a sample's process: a map of
		 * another pid changes nothing, most often because the pid is the inner one */
		fprintf(log, "perfconv: warning: '%s': --pid-map %d=%d: pid %d has no samples in the recording, so the "
			"map is not used; pids with samples: ", input, (int)map[i].host, (int)map[i].ns, (int)map[i].host);
		if (pids.n)
			list(log, s, &pids);
		else
			fprintf(log, "none");
		fprintf(log, "\n");
	}
	free(pids.v);
}
