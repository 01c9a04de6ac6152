/*
 * evsample.c - the .NET runtime's events in the conversion: the streams loaded once (--events
 * or a pack's) and laid on their processes, --during gc's samples (those taken in a GC pause),
 * and --alloc's allocations and -f runtime's exceptions fed in time order between perf's
 * records, so that their stacks meet their process's maps as they were then.  The streams'
 * contents are converter/events/'s; the frames callchain.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "converter/evsample.h"
#include "converter/session.h"
#include "converter/files/pack.h"
#include "converter/util/bytes.h"
#include "converter/util/grow.h"

/* the longest callchain an allocation is fed with (the label, a context marker, its IPs) */
#define EVS_MAX_CHAIN 1026

int pfc_evsample_open(struct pfc_session *s)
{
	struct pfc_evsample *v = &s->evs;
	const struct pfc_opts *o = s->opts;
	unsigned want = (o->alloc ? PFC_EVENTS_ALLOCS : 0) | (o->throw_frames ? PFC_EVENTS_THROWS : 0) |
			(o->runtime_marks ? PFC_EVENTS_THROWS | PFC_EVENTS_MARKS : 0);
	size_t i, j;
	int ret;

	/* nothing here needs a pause or an event, and an output reads each stream whole anyway:
	 * one read of a stream, not two */
	if (!want && !o->during_gc && o->events_read_later)
		want = PFC_EVENTS_HEADER;

	if (o->nr_events) {
		for (i = 0; i < o->nr_events; i++)
			if ((ret = pfc_events_add(&v->events, o->events[i], NULL, NULL, 0, want, s->err)) < 0)
				return ret;
	} else if (s->pack) {	/* a pack made with --events carries its streams */
		const char *member, *name;
		int32_t pid;
		for (i = 0; (member = pfc_files_pack_events(s->files, i, &name, &pid)); i++) {
			uint64_t size;
			const void *b = pfc_pack_bytes(s->pack, member, &size);
			if (!b)
				return PFC_FAIL_NOOFF(s->err, CORRUPT, "the pack has no member '%s'", member);
			if ((ret = pfc_events_add(&v->events, member, name, b, (size_t)size, want, s->err)) < 0)
				return ret;
		}
	}
	if ((o->alloc || o->during_gc) && !v->events.n)
		return PFC_FAIL_NOOFF(s->err, USAGE, "%s reads the .NET runtime's events: give them with --events "
				      "FILE.nettrace (dotnet-trace collect, or perfconv record, writes them)",
				      o->alloc ? "--alloc" : "--during gc");
	if (v->events.n && (!(v->pids = calloc(v->events.n, sizeof(*v->pids))) ||
			    !(v->next = calloc(v->events.n, sizeof(*v->next))) ||
			    !(v->next_throw = calloc(v->events.n, sizeof(*v->next_throw))) ||
			    !(v->procs = calloc(v->events.n, sizeof(*v->procs)))))
		return PFC_FAIL_NOOFF(s->err, NOMEM, "events");
	/* a stream names its process by the pid it had in its own namespace; --pid-map says
	 * which process of the recording (host pids) that is */
	for (i = 0; i < v->events.n; i++) {
		const char *name;
		int32_t packed = 0;
		v->pids[i] = (int32_t)v->events.v[i].trace.pid;
		for (j = 0; j < o->nr_pid_map; j++)
			if (o->pid_map[j].ns == v->pids[i]) {
				v->pids[i] = o->pid_map[j].host;
				break;
			}
		/* a pack says which process the stream was laid on where it was made (--pid-map
		 * there, or perfconv record's own pid translation) */
		if (!o->nr_events && s->pack && pfc_files_pack_events(s->files, i, &name, &packed) && packed > 0 &&
		    j == o->nr_pid_map)
			v->pids[i] = packed;
		else if (o->nr_events && o->events_pids && o->events_pids[i] > 0)
			v->pids[i] = o->events_pids[i];
	}
	v->throwing = o->throw_frames && v->events.n;
	v->counting = v->throwing;
	v->feeding = o->alloc || v->throwing;
	v->filtering = o->alloc || o->during_gc;
	return 0;
}

int pfc_evsample_start(struct pfc_session *s)
{
	struct pfc_evsample *v = &s->evs;
	size_t i;
	int sampled = 0;

	v->started = 1;
	/* every event that samples stamps its samples with CLOCK_MONOTONIC: perf record -k mono */
	v->mono = s->rd.nr_evsels > 0;
	for (i = 0; i < s->rd.nr_evsels; i++) {
		const struct perf_event_attr *a = &s->rd.evsels[i]->attr;
		if (!a->use_clockid || a->clockid != CLOCK_MONOTONIC)
			v->mono = 0;
		sampled = 1;
	}
	v->mono &= sampled;
	if (s->opts->during_gc && !v->mono)
		return PFC_FAIL_NOOFF(s->err, UNSUPPORTED, "--during gc lays the runtime's GC pauses over the samples, and "
				      "this recording's sample times are not on the runtime's clock (CLOCK_MONOTONIC): "
				      "record with 'perf record -k mono'");
	/* a timeline of samples and events on two clocks would draw each GC where it did not happen */
	v->marking = s->opts->runtime_marks && v->events.n && v->mono;
	if (s->opts->runtime_marks && v->events.n && !v->mono && s->opts->log)
		fprintf(s->opts->log, "perfconv: warning: the runtime's events are not drawn as markers: this "
			"recording's sample times are not on the runtime's clock (CLOCK_MONOTONIC); record with "
			"'perf record -k mono'\n");
	if (v->feeding && s->rd.nr_evsels)
		v->ev = s->rd.evsels[0];
	else
		v->feeding = 0;
	return 0;
}

int pfc_evsample_jit(struct pfc_session *s, int32_t pid, uint64_t ip, const struct pfc_dso **dso)
{
	struct pfc_evsample *v = &s->evs;
	size_t i;

	if (!v->jit && !(v->jit = calloc(v->events.n, sizeof(*v->jit))))
		return PFC_FAIL_NOOFF(s->err, NOMEM, "runtime events");
	for (i = 0; i < v->events.n; i++) {
		struct pfc_events_file *f = &v->events.v[i];
		const struct pfc_events_method *m;
		const struct pfc_dso **slot;
		struct pfc_dso *d;
		char dname[96];
		int len;

		if (!v->pids || v->pids[i] != pid)
			continue;
		if (!f->methods_read) {
			struct pfc_error err;
			memset(&err, 0, sizeof(err));
			/* a stream that cannot be read names what it held before the bad bytes; the
			 * error is the load's, or the writer's that reads every event */
			if (pfc_events_methods(f, &err) == -PFC_ERR_NOMEM)
				return PFC_FAIL_NOOFF(s->err, NOMEM, "runtime events");
			if (f->nr_methods && !(v->jit[i] = calloc(f->nr_methods, sizeof(*v->jit[i]))))
				return PFC_FAIL_NOOFF(s->err, NOMEM, "runtime events");
		}
		if (!(m = pfc_events_method_at(f, ip)))
			continue;
		/* one code load a method, as a jitdump's: its name and start on the dso, made
		 * once a method, not for each frame */
		slot = &v->jit[i][m - f->methods];
		if (!*slot) {
			len = snprintf(dname, sizeof(dname), "[jit %d 0x%llx]", pid, (unsigned long long)m->start);
			if (!(d = pfc_machine_dso_findnew(&s->machine, dname, (size_t)len, PFC_DSO_JITCODE, pid)))
				return PFC_FAIL_NOOFF(s->err, NOMEM, "runtime events");
			if (!d->jit_name) {
				const char *name = f->names + m->name;
				uint32_t id = pfc_intern(&s->strings, name, strlen(name));
				if (id == UINT32_MAX)
					return PFC_FAIL_NOOFF(s->err, NOMEM, "runtime events");
				d->jit_name = pfc_intern_str(&s->strings, id);
				d->jit_start = m->start;
				d->jit_events = 1;
			}
			*slot = d;
		}
		*dso = *slot;
		return 1;
	}
	return 0;
}

const struct pfc_thread *pfc_evsample_thread(struct pfc_session *s, size_t i, uint64_t tid)
{
	int32_t pid = s->evs.pids[i];
	const struct pfc_thread *th = NULL;

	/* a namespace's tids are not the host's: --pid-map changed the pid, so the tid is unknown */
	if (pid == (int32_t)s->evs.events.v[i].trace.pid && tid <= INT32_MAX)
		th = pfc_machine_find_thread(&s->machine, pid, (int32_t)tid);
	return th;
}

/* the thread of the recording an event of stream i ran on: its own when the recording has it
 * in that process, else the process's main thread */
static struct pfc_thread *event_thread(struct pfc_session *s, size_t i, uint64_t tid)
{
	const struct pfc_thread *th = pfc_evsample_thread(s, i, tid);

	return th ? (struct pfc_thread *)th : pfc_machine_findnew_thread(&s->machine, s->evs.pids[i], s->evs.pids[i]);
}

static int feed_one(struct pfc_session *s, size_t i, const struct pfc_events_alloc *a, uint64_t *chain)
{
	const struct pfc_events_file *f = &s->evs.events.v[i];
	const char *type = f->names + a->type;
	struct pfc_thread *th = event_thread(s, i, a->tid);
	const struct pfc_dso *d;
	struct pfc_sample smp;
	uint32_t k, n = a->nr_ips < EVS_MAX_CHAIN - 1 ? a->nr_ips : EVS_MAX_CHAIN - 1, leaf;

	if (!th)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "thread");
	/* the allocated type is the leaf, as PerfView's GC Heap Alloc stacks show it: a name,
	 * not code (a label, as off-CPU states are) */
	if (!(d = pfc_machine_dso_findnew(&s->machine, type, strlen(type), PFC_DSO_LABEL, -1)) ||
	    (leaf = pfc_stacks_frame(&s->stacks, d, 0, 0)) == UINT32_MAX)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "allocation stacks");
	/* the managed stack as a user callchain, in the recording's byte order */
	chain[0] = PFC_CONTEXT_USER;
	for (k = 0; k < n; k++)
		chain[k + 1] = f->ips[a->ips + k];
	if (s->rd.swap)
		for (k = 0; k <= n; k++)
			chain[k] = __builtin_bswap64(chain[k]);
	memset(&smp, 0, sizeof(smp));
	smp.evsel = s->evs.ev;
	smp.flags = PFC_S_HAS_TID | PFC_S_HAS_TIME | PFC_S_HAS_PERIOD | PFC_S_HAS_CALLCHAIN;
	smp.pid = (uint32_t)th->pid;
	smp.tid = (uint32_t)th->tid;
	smp.time = a->ts;
	smp.period = a->bytes ? a->bytes : 1;
	smp.ip = n ? f->ips[a->ips] : 0;
	smp.cpu = UINT32_MAX;
	smp.misc = PERF_RECORD_MISC_USER;
	smp.callchain_nr = n + 1;
	smp.callchain = (const uint8_t *)chain;
	return pfc_sample_synthetic(s, s->evs.ev, th, &smp, leaf);
}

/* the frame of the method that threw exception a: its stack's first, looked up as a sample's */
static int throw_one(struct pfc_session *s, size_t i, const struct pfc_events_alloc *a)
{
	const struct pfc_events_file *f = &s->evs.events.v[i];
	struct pfc_thread *th = event_thread(s, i, a->tid);
	struct pfc_evsample_throw *t;
	struct pfc_sample smp;
	uint64_t chain[PFC_EVS_THROW_FRAMES + 1];
	uint32_t n = 0, k, nips = a->nr_ips < PFC_EVS_THROW_FRAMES ? a->nr_ips : PFC_EVS_THROW_FRAMES;
	int ret;

	if (!th)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "thread");
	if (!nips)
		return 0;
	chain[0] = PFC_CONTEXT_USER;
	for (k = 0; k < nips; k++)
		chain[k + 1] = f->ips[a->ips + k];
	if (s->rd.swap)
		for (k = 0; k <= nips; k++)
			chain[k] = __builtin_bswap64(chain[k]);
	memset(&smp, 0, sizeof(smp));
	smp.flags = PFC_S_HAS_TID | PFC_S_HAS_TIME | PFC_S_HAS_CALLCHAIN;
	smp.pid = (uint32_t)th->pid;
	smp.tid = (uint32_t)th->tid;
	smp.time = a->ts;
	smp.ip = f->ips[a->ips];
	smp.misc = PERF_RECORD_MISC_USER;
	smp.callchain_nr = nips + 1;
	smp.callchain = (const uint8_t *)chain;
	s->callchain.time = a->ts;
	s->callchain.have_time = 1;
	s->callchain.timed = 0;
	if ((ret = pfc_callchain_sample(s, s->evs.ev, th, &smp, 0, &n)) < 0)
		return ret;
	if (!n)
		return 0;
	if (!(t = pfc_grow_at(&s->evs.throws, &s->evs.cap_throws, s->evs.nr_throws, sizeof(*t), 64)))
		return PFC_FAIL_NOOFF(s->err, NOMEM, "exceptions");
	t->file = (uint32_t)i;
	t->type = a->type;
	t->nr = n < PFC_EVS_THROW_FRAMES ? n : PFC_EVS_THROW_FRAMES;
	memcpy(t->frames, s->callchain.frames, t->nr * sizeof(*t->frames));
	s->evs.nr_throws++;
	return 0;
}

int pfc_evsample_until(struct pfc_session *s, uint64_t t)
{
	struct pfc_evsample *v = &s->evs;
	uint64_t chain[EVS_MAX_CHAIN];
	size_t i;
	int ret;

	if (!v->feeding || !v->ev)
		return 0;
	for (i = 0; i < v->events.n; i++) {
		const struct pfc_events_file *f = &v->events.v[i];
		while (v->next[i] < f->nr_allocs && f->allocs[v->next[i]].ts < t)
			if ((ret = feed_one(s, i, &f->allocs[v->next[i]++], chain)) < 0)
				return ret;
		while (v->throwing && v->next_throw[i] < f->nr_throws && f->throws[v->next_throw[i]].ts < t)
			if ((ret = throw_one(s, i, &f->throws[v->next_throw[i]++])) < 0)
				return ret;
	}
	return 0;
}

int pfc_evsample_finish(struct pfc_session *s)
{
	struct pfc_evsample *v = &s->evs;
	size_t i;
	int ret;

	if (!v->started && v->events.n && (ret = pfc_evsample_start(s)) < 0)
		return ret;
	if ((ret = pfc_evsample_until(s, UINT64_MAX)) < 0)
		return ret;
	for (i = 0; i < v->events.n && s->opts->log; i++) {
		const struct pfc_thread *th = pfc_machine_find_thread(&s->machine, v->pids[i], v->pids[i]);
		if (!th || !th->comm_set)
			fprintf(s->opts->log, "perfconv: warning: '%s': process %d is not in the recording%s\n",
				v->events.v[i].name, (int)v->events.v[i].trace.pid,
				v->pids[i] != (int32_t)v->events.v[i].trace.pid ? " (its host pid, by --pid-map)" :
				" (in a container, --pid-map HOST=NS names its host pid)");
	}
	return 0;
}

void pfc_evsample_count(struct pfc_session *s, const struct pfc_sample *smp)
{
	struct pfc_evsample *v = &s->evs;
	size_t i;

	for (i = 0; i < v->events.n; i++) {
		struct pfc_evsample_proc *p = &v->procs[i];
		if ((uint32_t)v->pids[i] != smp->pid)
			continue;
		p->samples++;
		if (!(smp->flags & PFC_S_HAS_TIME))
			continue;
		if (!p->first || smp->time < p->first)
			p->first = smp->time;
		if (smp->time > p->last)
			p->last = smp->time;
		if (v->mono && pfc_events_paused(&v->events.v[i], smp->time))
			p->paused++;
	}
}

int pfc_evsample_keep(struct pfc_session *s, const struct pfc_sample *smp)
{
	struct pfc_evsample *v = &s->evs;
	size_t i;

	if (s->opts->alloc)
		return 0;
	if (!(smp->flags & PFC_S_HAS_TIME))
		return 0;
	/* --during gc: while the sample's process was paused, on any of its threads */
	for (i = 0; i < v->events.n; i++)
		if ((uint32_t)v->pids[i] == smp->pid && pfc_events_paused(&v->events.v[i], smp->time))
			return 1;
	return 0;
}

void pfc_evsample_exit(struct pfc_session *s)
{
	size_t i;

	for (i = 0; s->evs.jit && i < s->evs.events.n; i++)
		free(s->evs.jit[i]);
	free(s->evs.jit);
	pfc_events_free(&s->evs.events);
	free(s->evs.pids);
	free(s->evs.next);
	free(s->evs.next_throw);
	free(s->evs.throws);
	free(s->evs.procs);
	memset(&s->evs, 0, sizeof(s->evs));
}
