/*
 * test_stream.c - the sample stream (converter/stream.c): samples with every field at its
 * extremes (times and ips going back, no CPU, 64 KiB payloads) come back exactly, in order,
 * from memory and from the temporary file past a small memory limit, through two cursors
 * at once and through a cursor opened after fork().
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "converter/stream.h"
#include "converter/perffile/evsel.h"
#include "tests/unit/check.h"

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static uint8_t payload[65536];

/* Sample i, the same on every call. */
static void make(uint64_t i, struct pfc_srec *r)
{
	uint64_t h;

	rnd_state = 0x9e3779b97f4a7c15ull ^ (i * 0x100000001b3ull);
	h = rnd();
	memset(r, 0, sizeof(*r));
	r->time = h % 7 == 0 ? UINT64_MAX - rnd() % 5 : h % 5 == 0 ? 0 : 1000000000ull + i * 25000 - rnd() % 90000;
	r->period = h % 3 == 0 ? UINT64_MAX : rnd() % 100000;
	r->ip = h % 4 == 0 ? 0xffffffff81000000ull + rnd() % 4096 : rnd();
	r->addr = h % 11 == 0 ? rnd() : 0;
	r->stack = (uint32_t)(h % 13 == 0 ? UINT32_MAX : rnd() % 50000);
	r->cpu = h % 6 == 0 ? UINT32_MAX : (uint32_t)(rnd() % 512);
	r->misc = (uint16_t)rnd();
	r->flags = (uint16_t)rnd();
	if (r->flags & PFC_S_HAS_MEM) {	/* memory samples carry these two more */
		r->weight = h % 19 == 0 ? UINT64_MAX : rnd() % 1000;
		r->data_src = rnd();
	}
	r->raw_len = h % 17 == 0 ? (uint32_t)(h % 34 == 0 ? 65535 : rnd() % 300) : 0;
	r->raw = payload + (rnd() % 16);
	if (r->raw_len > sizeof(payload) - 16)
		r->raw_len = sizeof(payload) - 16;
}

static int same(const struct pfc_srec *a, const struct pfc_srec *b)
{
	return a->time == b->time && a->period == b->period && a->ip == b->ip && a->addr == b->addr &&
	       a->stack == b->stack && a->cpu == b->cpu && a->misc == b->misc && a->flags == b->flags &&
	       a->weight == b->weight && a->data_src == b->data_src &&
	       a->raw_len == b->raw_len && (!a->raw_len || !memcmp(a->raw, b->raw, a->raw_len));
}

/* Read the stream with one cursor (or two in step); the number of samples that came back
 * as they went in, and whether the stream ended where it should. */
static uint64_t read_back(const struct pfc_stream *st, uint64_t n, int two)
{
	struct pfc_stream_cur c1, c2;
	struct pfc_srec want, got1, got2;
	uint64_t i, good = 0;

	if (pfc_stream_open(&c1, st) < 0 || (two && pfc_stream_open(&c2, st) < 0))
		return 0;
	for (i = 0; i < n; i++) {
		make(i, &want);
		if (pfc_stream_next(&c1, &got1) != 1)
			break;
		if (two && (pfc_stream_next(&c2, &got2) != 1 || !same(&want, &got2)))
			break;
		if (!same(&want, &got1))
			break;
		good++;
	}
	if (good == n && pfc_stream_next(&c1, &got1) != 0)
		good = 0;
	pfc_stream_close(&c1);
	if (two)
		pfc_stream_close(&c2);
	return good;
}

static void run(uint64_t n, size_t limit, int want_file)
{
	struct pfc_stream st;
	struct pfc_srec r;
	uint64_t i;
	int ok = 1, status;
	pid_t pid;

	pfc_stream_init(&st);
	st.mem_limit = limit;
	for (i = 0; i < n && ok; i++) {
		make(i, &r);
		ok = pfc_stream_add(&st, &r) == 0;
	}
	check(ok && pfc_stream_finish(&st) == 0, "%llu samples, limit %zu: added", (unsigned long long)n, limit);
	check((st.fd >= 0) == want_file, "%llu samples, limit %zu: %s", (unsigned long long)n, limit,
	      want_file ? "not spilled to a file" : "spilled to a file");
	check(st.nr == n, "count %llu, want %llu", (unsigned long long)st.nr, (unsigned long long)n);
	check(read_back(&st, n, 0) == n, "%llu samples, limit %zu: read back", (unsigned long long)n, limit);
	check(read_back(&st, n, 1) == n, "%llu samples, limit %zu: two cursors", (unsigned long long)n, limit);
	pid = fork();
	if (pid == 0)
		_exit(read_back(&st, n, 0) == n ? 0 : 1);
	check(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "%llu samples, limit %zu: read back after fork", (unsigned long long)n, limit);
	pfc_stream_exit(&st);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 31 + 7);
	run(0, 0, 0);
	run(1, 0, 0);
	run(20000, (size_t)256 << 20, 0);
	run(20000, 1, 1);            /* every sample through the file */
	run(300000, 1 << 20, 1);     /* several refills of the cursor's buffer */
	return check_done("test_stream");
}
