/*
 * fuzz_nettrace.c - the nettrace reader (EventPipe streams) and the runtime's payload decoder on
 * every event it hands over, with the counts by provider, id and version.
 */
// FUZZ_MAX_LEN: 65536
// FUZZ_SEEDS: fuzz/seeds/nettrace/*
#include "converter/util/error.h"
#include "converter/events/clrevents.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz f;
	struct pfc_nettrace nt;
	struct pfc_nettrace_ops ops = { &f, on_trace, NULL, on_event, NULL };
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
	return 0;
}
