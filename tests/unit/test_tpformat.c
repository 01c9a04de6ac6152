/*
 * test_tpformat.c - tpformat.c against perf 6.1: the first sched_switch payload of the
 * tracepoint fixture must render as `perf script` printed it, in process and through the
 * child process that conversions use.  Damaged tracing data (cut short, bytes flipped,
 * punctuation written over the formats) must never take the conversion down: the child
 * may fail, pfc_tptext_render must return 0 and say why.  Run under `make asan` too.
 * usage: test_tpformat [FIXTURES_DIR]   (default "fixtures")
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "converter/session.h"
#include "converter/tpformat.h"

static const char want[] = "prev_comm=sleeper prev_pid=14877 prev_prio=120 prev_state=S ==> "
			   "next_comm=swapper/0 next_pid=0 next_prio=120";

/* Render with the tracing data replaced by data[0..n); returns the number of payloads. */
static size_t render(struct pfc_session *s, const uint8_t *data, uint64_t n, unsigned long *failed,
		     const char **why)
{
	struct pfc_blob keep = s->rd.tracing_data;
	struct pfc_tptext t;
	size_t i, nr = 0;

	s->rd.tracing_data.data = data;
	s->rd.tracing_data.size = n;
	if (pfc_tptext_render(s, &t, why) != 0) {
		fprintf(stderr, "test_tpformat: pfc_tptext_render failed\n");
		(*failed)++;
	}
	s->rd.tracing_data = keep;
	for (i = 0; t.len && i < s->nr_stream; i++)
		nr += t.len[i] != 0;
	pfc_tptext_free(&t);
	return nr;
}

int main(int argc, char **argv)
{
	const char *fx = argc > 1 ? argv[1] : "fixtures";
	char in[4096];
	struct pfc_opts o;
	struct pfc_session s;
	struct pfc_error err;
	struct pfc_tpformat *t = NULL;
	struct pfc_tptext tt;
	struct pfc_sb out = { 0 };
	const char *why;
	const struct pfc_srec *r;
	const struct pfc_evsel *ev;
	uint8_t *copy;
	uint64_t size, n, step;
	unsigned long runs = 0, rendered = 0, refused = 0, failed = 0;
	size_t k;
	int ret;

	snprintf(in, sizeof(in), "%s/tracepoint-sched-switch/perf.data", fx);
	memset(&o, 0, sizeof(o));
	memset(&err, 0, sizeof(err));
	o.input = in;
	o.max_stack = 127;
	o.keep_stream = 1;
	if (pfc_session_open(&s, &o, &err) < 0 || pfc_session_process(&s) < 0) {
		fprintf(stderr, "test_tpformat: cannot read '%s': %s %s\n", in, pfc_strerror(err.code), err.detail);
		return 1;
	}
	if (!s.nr_stream || !s.rd.tracing_data.size) {
		fprintf(stderr, "test_tpformat: '%s' has no samples or no tracing data\n", in);
		return 1;
	}
	r = &s.stream[0];
	ev = s.rd.evsels[s.stacks.stacks[r->stack].evsel];

	/* in process */
	if (pfc_tpformat_load(&t, s.rd.tracing_data.data, s.rd.tracing_data.size, &why) < 0) {
		fprintf(stderr, "test_tpformat: the fixture's tracing data is refused: %s\n", why);
		return 1;
	}
	ret = pfc_tpformat_print(t, ev->attr.config, s.raw_data + r->raw_off, r->raw_len, (int)r->cpu, &out);
	if (ret != 0 || !out.buf || strcmp(out.buf, want)) {
		fprintf(stderr, "test_tpformat: payload rendered as '%s' (%d), perf printed '%s'\n",
			out.buf ? out.buf : "", ret, want);
		failed++;
	}
	pfc_sb_reset(&out);
	if (pfc_tpformat_print(t, 0x7fffff00, s.raw_data + r->raw_off, r->raw_len, 0, &out) != 1 || out.len) {
		fprintf(stderr, "test_tpformat: an unknown event id printed '%s'\n", out.buf ? out.buf : "");
		failed++;
	}
	for (n = 0; n <= r->raw_len; n++) {	/* payloads cut short */
		pfc_sb_reset(&out);
		pfc_tpformat_print(t, ev->attr.config, s.raw_data + r->raw_off, (uint32_t)n, 0, &out);
	}
	pfc_tpformat_free(t);
	pfc_sb_free(&out);

	/* through the child: every sample of the stream */
	if (pfc_tptext_render(&s, &tt, &why) != 0 || why || !tt.len || tt.len[0] != strlen(want) ||
	    memcmp(tt.text + tt.off[0], want, tt.len[0])) {
		fprintf(stderr, "test_tpformat: the child did not render the first payload (%s)\n", why ? why : "");
		failed++;
	} else {
		for (k = 0; k < s.nr_stream; k++)
			if (!tt.len[k]) {
				fprintf(stderr, "test_tpformat: sample %zu has no payload\n", k);
				failed++;
				break;
			}
	}
	pfc_tptext_free(&tt);

	/* damaged tracing data */
	size = s.rd.tracing_data.size;
	copy = malloc(size);
	if (!copy)
		return 1;
	step = size / 40 + 1;
	for (n = 0; n < size; n += n < 64 ? 8 : step) {
		memcpy(copy, s.rd.tracing_data.data, n);
		runs++;
		if (render(&s, copy, n, &failed, &why))
			rendered++;
		else if (!why) {
			fprintf(stderr, "test_tpformat: cut at %llu: no payload and no reason\n", (unsigned long long)n);
			failed++;
		} else
			refused++;
	}
	for (n = 0; n < size; n += step) {
		static const char repl[] = "\xff(\"/";
		for (k = 0; k < sizeof(repl) - 1; k++) {
			memcpy(copy, s.rd.tracing_data.data, size);
			copy[n] = (uint8_t)repl[k];
			runs++;
			if (render(&s, copy, size, &failed, &why))
				rendered++;
			else
				refused++;
		}
	}
	free(copy);
	pfc_session_close(&s);
	printf("test_tpformat: %lu damaged inputs, %lu rendered, %lu refused, %lu failures\n", runs, rendered,
	       refused, failed);
	return failed ? 1 : 0;
}
