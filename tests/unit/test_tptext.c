/*
 * test_tptext.c - tracedata.c's payload rendering against perf 6.1: the first sched_switch
 * payload of the tracepoint fixture must render as `perf script` printed it, in process
 * (pfc_tracedata_parse/print) and through the child process that conversions use
 * (pfc_tptext_render).  An unknown event id has no format; payloads cut short are read
 * from a padded copy.  Damaged tracing data (cut short, bytes flipped, punctuation written
 * over the formats) must never take the conversion down: pfc_tptext_render returns 0, or
 * an error that names the offset and a reason a writer may go on without the payloads.
 * Run under `make asan` too.
 * usage: test_tptext [FIXTURES_DIR]   (default $FIXTURES, else "fixtures")
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>
#include "converter/session.h"
#include "converter/perffile/tracedata.h"
#include "formats/tptext.h"
#include "tests/unit/check.h"

static const char want[] = "prev_comm=sleeper prev_pid=14877 prev_prio=120 prev_state=S ==> "
			   "next_comm=swapper/0 next_pid=0 next_prio=120";

static unsigned long runs, rendered, refused;

/* wants: every other sample of the stream (counted from the last reset of odd_calls) */
static unsigned long odd_calls;

static int odd_only(void *arg, const struct pfc_srec *r)
{
	(void)arg;
	(void)r;
	return odd_calls++ % 2 == 1;
}

/* Read the rendered payloads back in stream order: how many samples have one; `odd` counts
 * instead the samples whose having one is not their being odd; *first gets the first. */
static size_t read_payloads(struct pfc_session *s, struct pfc_tptext *t, int odd, char *first, size_t first_len)
{
	struct pfc_stream_cur cur;
	struct pfc_srec r;
	size_t k = 0, nr = 0;

	if (first)
		first[0] = 0;
	if (pfc_stream_open(&cur, &s->stream) < 0)
		return 0;
	while (pfc_stream_next(&cur, &r) > 0) {
		const char *text;
		uint32_t len;
		pfc_tptext_next(t, &r, &text, &len);
		if (k == 0 && first && len < first_len) {
			memcpy(first, text, len);
			first[len] = 0;
		}
		nr += odd ? (len != 0) != (k % 2 == 1) : len != 0;
		k++;
	}
	pfc_stream_close(&cur);
	return nr;
}

static int none(void *arg, const struct pfc_srec *r)
{
	(void)arg;
	(void)r;
	return 0;
}

/* Render with the tracing data replaced by data[0..n): the conversion must be able to go
 * on (0, or an error with a reason), and no payload must come without a reason. */
static void damaged(struct pfc_session *s, const uint8_t *data, uint64_t n, const char *how)
{
	struct pfc_blob keep = s->rd.tracing_data;
	uint64_t base = s->rd.tracing_data_offset;
	struct pfc_error err;
	struct pfc_tptext t;
	const char *why;
	size_t i, nr = 0;
	int ret;

	memset(&err, 0, sizeof(err));
	s->rd.tracing_data.data = data;
	s->rd.tracing_data.size = n;
	ret = pfc_tptext_render(s, NULL, NULL, &t, &why, &err);
	s->rd.tracing_data = keep;
	nr = read_payloads(s, &t, 0, NULL, 0);
	(void)i;
	pfc_tptext_free(&t);
	runs++;
	check(ret == 0 || (why && err.code != PFC_ERR_NOMEM), "%s at %llu: render failed (%d) with no reason", how,
	      (unsigned long long)n, ret);
	if (ret < 0 && err.code == PFC_ERR_BAD_FEATURE)
		check(err.has_offset && err.offset >= base && err.offset <= base + n,
		      "%s at %llu: offset %llu is outside the section", how, (unsigned long long)n,
		      (unsigned long long)err.offset);
	if (nr) {
		rendered++;
		check(ret == 0 && !why, "%s at %llu: payloads and a reason (%s)", how, (unsigned long long)n, why);
	} else {
		refused++;
		check(why != NULL, "%s at %llu: no payload and no reason", how, (unsigned long long)n);
	}
}

int main(int argc, char **argv)
{
	const char *fx = argc > 1 ? argv[1] : getenv("FIXTURES") ? getenv("FIXTURES") : "fixtures";
	char in[4096];
	/* not this machine's /usr/lib/debug: what tests/lib.sh's PERFCONV_DEBUG_DIR gives the suites */
	static const struct pfc_tuning tn = { .debug_dir = "/nonexistent" };
	struct pfc_opts o;
	struct pfc_session s;
	struct pfc_error err;
	struct tep_handle *tep = NULL;
	struct tep_event *ev;
	struct pfc_tracebuf tb = { 0 };
	struct trace_seq seq;
	struct pfc_tptext tt;
	const char *why;
	const struct pfc_srec *r;
	struct pfc_srec rec;
	struct pfc_stream_cur cur;
	char first[512];
	const struct pfc_evsel *evsel;
	uint8_t *copy;
	uint64_t size, n, step;
	size_t k, nr;
	int ret;

	snprintf(in, sizeof(in), "%s/tracepoint-sched-switch/perf.data", fx);
	memset(&o, 0, sizeof(o));
	memset(&err, 0, sizeof(err));
	o.input = in;
	o.tuning = &tn;
	o.max_stack = 127;
	o.keep_stream = 1;
	if (pfc_session_open(&s, &o, &err) < 0 || pfc_session_process(&s) < 0) {
		fprintf(stderr, "test_tptext: cannot read '%s': %s %s\n", in, pfc_strerror(err.code), err.detail);
		return 1;
	}
	if (!s.stream.nr || !s.rd.tracing_data.size || pfc_stream_open(&cur, &s.stream) < 0 ||
	    pfc_stream_next(&cur, &rec) <= 0) {
		fprintf(stderr, "test_tptext: '%s' has no samples or no tracing data\n", in);
		return 1;
	}
	r = &rec;
	evsel = s.rd.evsels[s.stacks.stacks[r->stack].evsel];

	/* in process */
	ret = pfc_tracedata_parse(s.rd.tracing_data.data, s.rd.tracing_data.size, s.rd.tracing_data_offset, &tep, &err);
	if (ret < 0) {
		fprintf(stderr, "test_tptext: the fixture's tracing data is refused: %s\n", err.detail);
		return 1;
	}
	trace_seq_init(&seq);
	ev = pfc_tracedata_event(tep, evsel->attr.config);
	check(ev != NULL, "no format for the sample's event id %llu", (unsigned long long)evsel->attr.config);
	if (ev) {
		ret = pfc_tracedata_print(ev, (int)r->cpu, r->raw, r->raw_len, &seq, &tb);
		trace_seq_terminate(&seq);
		check(ret == 0 && seq.buffer && !strcmp(seq.buffer, want), "payload rendered as '%s' (%d), perf printed '%s'",
		      seq.buffer ? seq.buffer : "", ret, want);
		for (n = 0; n <= r->raw_len; n++) {	/* payloads cut short */
			trace_seq_reset(&seq);
			check(pfc_tracedata_print(ev, 0, r->raw, (uint32_t)n, &seq, &tb) == 0,
			      "payload cut at %llu", (unsigned long long)n);
		}
	}
	check(pfc_tracedata_event(tep, 0x7fffff00) == NULL, "an unknown event id has a format");
	check(pfc_tracedata_event(tep, (uint64_t)1 << 40) == NULL, "an id past 32 bits has a format");
	trace_seq_destroy(&seq);
	pfc_tracebuf_free(&tb);
	pfc_tracedata_free(tep);

	pfc_stream_close(&cur);

	/* through the child: every sample of the stream, twice (rewound) */
	memset(&err, 0, sizeof(err));
	ret = pfc_tptext_render(&s, NULL, NULL, &tt, &why, &err);
	nr = read_payloads(&s, &tt, 0, first, sizeof(first));
	check(ret == 0 && !why && !strcmp(first, want), "the child did not render the first payload (%d, %s): '%s'",
	      ret, why ? why : "", first);
	check(nr == s.stream.nr, "%zu of %llu samples have a payload", nr, (unsigned long long)s.stream.nr);
	check(pfc_tptext_rewind(&tt) == 0 && read_payloads(&s, &tt, 0, NULL, 0) == nr, "read again after a rewind");
	pfc_tptext_free(&tt);

	/* only the samples the writer wants */
	odd_calls = 0;
	ret = pfc_tptext_render(&s, odd_only, &s, &tt, &why, &err);
	odd_calls = 0;
	nr = read_payloads(&s, &tt, 1, NULL, 0);
	check(ret == 0 && !why && tt.f && !nr, "odd samples only: %d, %zu wrong", ret, nr);
	pfc_tptext_free(&tt);
	ret = pfc_tptext_render(&s, none, NULL, &tt, &why, &err);
	check(ret == 0 && !why && !tt.f && read_payloads(&s, &tt, 0, NULL, 0) == 0,
	      "no sample wanted: nothing rendered, nothing said");
	pfc_tptext_free(&tt);

	/* no tracing data: a reason, no error */
	{
		struct pfc_blob keep = s.rd.tracing_data;
		s.rd.tracing_data.data = NULL;
		s.rd.tracing_data.size = 0;
		ret = pfc_tptext_render(&s, NULL, NULL, &tt, &why, &err);
		s.rd.tracing_data = keep;
		check(ret == 0 && why && !tt.f, "no tracing data: %d, %s", ret, why ? why : "no reason");
		pfc_tptext_free(&tt);
	}

	/* damaged tracing data */
	size = s.rd.tracing_data.size;
	copy = malloc(size);
	if (!copy)
		return 1;
	step = size / 40 + 1;
	for (n = 0; n < size; n += n < 64 ? 8 : step) {
		memcpy(copy, s.rd.tracing_data.data, n);
		damaged(&s, copy, n, "cut");
	}
	for (n = 0; n < size; n += step) {
		static const char repl[] = "\xff(\"/";
		for (k = 0; k < sizeof(repl) - 1; k++) {
			memcpy(copy, s.rd.tracing_data.data, size);
			copy[n] = (uint8_t)repl[k];
			damaged(&s, copy, size, "byte written");
		}
	}
	free(copy);
	pfc_session_close(&s);
	printf("test_tptext: %lu damaged inputs, %lu rendered, %lu refused\n", runs, rendered, refused);
	return check_done("test_tptext");
}
