/*
 * fuzz_nettrace.c - the nettrace reader (EventPipe streams) and the runtime's payload decoder on
 * every event it hands over, with the counts by provider, id and version, and the same read without
 * stacks (trace.zip's); and the conversion's load of a stream (events.c: pauses, allocations and
 * exceptions with their stacks; and its Trace object alone).
 */
// FUZZ_MAX_LEN: 65536
// FUZZ_SEEDS: fuzz/seeds/nettrace/*
#include "converter/util/error.h"
#include "converter/events/clrevents.h"
#include "converter/events/events.h"
#include "converter/events/nettrace.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz {
	uint32_t pointer_size;
	struct pfc_clr_event ce;
	struct pfc_clr_counts counts;
	struct pfc_error err;
};

static int on_trace(void *ctx, const struct pfc_nettrace_trace *t)
{
	((struct fz *)ctx)->pointer_size = t->pointer_size;
	return 0;
}

static int on_event(void *ctx, const struct pfc_nettrace_event *ev)
{
	struct fz *f = ctx;
	int kind = pfc_clr_decode(ev, f->pointer_size, &f->ce, &f->err);
	uint32_t i;

	/* the stack's IPs lie inside the input */
	for (i = 0; i < ev->nr_ips; i++)
		if (pfc_ld64(ev->stack + (size_t)i * f->pointer_size, 0) == 0x0123456789abcdefull)
			f->ce.count++;
	if (kind > 0 && strlen(f->ce.type_name) >= sizeof(f->ce.type_name))
		abort();
	return pfc_clr_counts_add(&f->counts, ev, kind);
}

static int on_event_plain(void *ctx, const struct pfc_nettrace_event *ev)
{
	(void)ctx;
	(void)ev;
	return 0;
}

static int on_event_nostack(void *ctx, const struct pfc_nettrace_event *ev)
{
	(void)ctx;
	if (ev->stack || ev->nr_ips)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz f;
	struct pfc_nettrace nt;
	struct pfc_nettrace_ops ops = { &f, on_trace, NULL, on_event, NULL, 0 };
	int rc;

	memset(&f, 0, sizeof(f));
	rc = pfc_nettrace_read(&nt, data, size, &ops, &f.err);
	if (rc == 0 && nt.st.truncated && nt.st.truncated_at > size)
		abort();
	if (rc < 0 && f.err.has_offset && f.err.offset > size)
		abort();
	pfc_clr_counts_sort(&f.counts);
	pfc_clr_counts_free(&f.counts);
	pfc_nettrace_free(&nt);
	{
		/* the read trace.zip's CTF makes, without stacks, against the same read with them: the
		 * stream accepted or refused at the same offset, the same events, none with a stack
		 * (the decoding read above keeps a payload's error before the reader's) */
		struct pfc_nettrace a, b;
		struct pfc_nettrace_ops opa = { NULL, NULL, NULL, on_event_plain, NULL, 0 };
		struct pfc_nettrace_ops opb = { NULL, NULL, NULL, on_event_nostack, NULL, 1 };
		struct pfc_error ea = { 0 }, eb = { 0 };
		int ra = pfc_nettrace_read(&a, data, size, &opa, &ea), rb = pfc_nettrace_read(&b, data, size, &opb, &eb);
		if (ra != -PFC_ERR_NOMEM && rb != -PFC_ERR_NOMEM &&
		    (ra != rb || a.st.nr_events != b.st.nr_events || a.st.nr_stacks != b.st.nr_stacks ||
		     (ra < 0 && (ea.has_offset != eb.has_offset || ea.offset != eb.offset))))
			abort();
		pfc_nettrace_free(&a);
		pfc_nettrace_free(&b);
	}
	{
		struct pfc_events e = { 0 };
		size_t i, j;
		memset(&f.err, 0, sizeof(f.err));
		if (pfc_events_add(&e, "fuzz", NULL, data, size, PFC_EVENTS_ALLOCS | PFC_EVENTS_THROWS | PFC_EVENTS_MARKS,
				   &f.err) == 0) {
			const struct pfc_events_file *ef = &e.v[0];
			/* pauses sorted and apart; every allocation's IPs and type inside its tables */
			for (i = 1; i < ef->nr_pauses; i++)
				if (ef->pauses[i].begin <= ef->pauses[i - 1].end)
					abort();
			for (j = 0; j < ef->nr_allocs; j++)
				if (ef->allocs[j].ips + ef->allocs[j].nr_ips > ef->nr_ips || ef->allocs[j].type >= ef->names_len)
					abort();
			/* the timeline's: each GC and JIT compilation ends after it begins, names inside */
			for (j = 0; j < ef->nr_throws; j++)
				if (ef->throws[j].msg >= ef->names_len || ef->throws[j].type >= ef->names_len)
					abort();
			for (j = 0; j < ef->nr_gcs; j++)
				if (ef->gcs[j].end < ef->gcs[j].begin)
					abort();
			for (j = 0; j < ef->nr_jits; j++)
				if (ef->jits[j].end < ef->jits[j].begin || ef->jits[j].name >= ef->names_len ||
				    (j && ef->jits[j].begin < ef->jits[j - 1].begin))
					abort();
			(void)pfc_events_paused(ef, size);
		}
		/* the JIT'd methods, read again for the frames they name: sorted, names inside, and
		 * every lookup's method holding the address */
		if (e.n) {
			struct pfc_events_file *mf = &e.v[0];
			const struct pfc_events_method *mm;
			memset(&f.err, 0, sizeof(f.err));
			(void)pfc_events_methods(mf, &f.err);
			for (j = 0; j < mf->nr_methods; j++) {
				if (mf->methods[j].name >= mf->names_len || (j && mf->methods[j].start < mf->methods[j - 1].start))
					abort();
				if (!(mm = pfc_events_method_at(mf, mf->methods[j].start)) || mm->start > mf->methods[j].start ||
				    mm < mf->methods || mm >= mf->methods + mf->nr_methods || mm->name >= mf->names_len)
					abort();
			}
			(void)pfc_events_method_at(mf, 0);
			(void)pfc_events_method_at(mf, UINT64_MAX);
		}
		pfc_events_free(&e);
	}
	{
		/* the load that reads the Trace object alone (trace.zip reads the rest): it stops
		 * there, and keeps no event */
		struct pfc_events e = { 0 };
		memset(&f.err, 0, sizeof(f.err));
		if (pfc_events_add(&e, "fuzz", NULL, data, size, PFC_EVENTS_HEADER, &f.err) == 0 &&
		    (e.v[0].nr_pauses || e.v[0].nr_allocs || e.v[0].stream.nr_events))
			abort();
		if (f.err.has_offset && f.err.offset > size)
			abort();
		pfc_events_free(&e);
	}
	return 0;
}
