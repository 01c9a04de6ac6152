/*
 * test_offcpu.c - reading sched_switch payloads for off-CPU analysis (tpformat.c and the
 * format part of offcpu.c).  On the system-wide tracepoint fixture, every sched_switch
 * sample's prev_state letter and next_pid, read through the recording's own format, must be
 * what perf 6.1 printed (expected/perf-script.txt).  The kernel 4.x layout (TASK_STATE_MAX as
 * the preemption bit, other letters) must be read from its print fmt as well.  The constant
 * evaluator must agree with the C compiler on the kernel's expressions, and every prefix and
 * many damaged copies of a format must be refused or read without a fault (run under ASan).
 * usage: test_offcpu [FIXTURES_DIR]   (default $FIXTURES, else "fixtures")
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "converter/session.h"
#include "converter/offcpu.h"
#include "converter/perffile/tracedata.h"
#include "converter/perffile/tpformat.h"
#include "tests/unit/check.h"

/* The sched_switch format of Linux 4.9 (include/trace/events/sched.h of that release):
 * prev_state is the raw task state, TASK_STATE_MAX (2048) marks preemption. */
static const char fmt_4_9[] =
	"name: sched_switch\n"
	"ID: 287\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d "
	"next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, REC->prev_state & (2048-1) ? "
	"__print_flags(REC->prev_state & (2048-1), \"|\", { 1, \"S\"} , { 2, \"D\" }, { 4, \"T\" }, { 8, \"t\" }, "
	"{ 16, \"Z\" }, { 32, \"X\" }, { 64, \"x\" }, { 128, \"K\" }, { 256, \"W\" }, { 512, \"P\" }, "
	"{ 1024, \"N\" }) : \"R\", REC->prev_state & 2048 ? \"+\" : \"\", REC->next_comm, REC->next_pid, "
	"REC->next_prio\n";

struct found {
	struct pfc_tpformat f;
	int have;
};

static int grab(void *arg, const char *sys, const char *text, size_t len)
{
	struct found *fd = arg;
	struct pfc_tpformat f;

	if (fd->have || strcmp(sys, "sched") || pfc_tpformat_parse(text, len, &f) < 0)
		return 0;
	if (!strcmp(f.name, "sched_switch")) {
		fd->f = f;
		fd->have = 1;
	} else {
		pfc_tpformat_free(&f);
	}
	return 0;
}

/* perf's text of each sched_switch sample: its prev_state and next_pid, in order */
static size_t perf_states(const char *path, char (*st)[8], long *next, size_t cap)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	size_t n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && n < cap) {
		const char *a = strstr(line, " prev_state="), *b = strstr(line, " next_pid=");
		size_t k;
		if (!a || !b)
			continue;
		a += strlen(" prev_state=");
		k = strcspn(a, " ");
		if (k >= sizeof(st[0]))
			k = sizeof(st[0]) - 1;
		memcpy(st[n], a, k);
		st[n][k] = 0;
		next[n] = strtol(b + strlen(" next_pid="), NULL, 10);
		n++;
	}
	fclose(f);
	return n;
}

static void test_fixture(const char *dir)
{
	char path[4096], want[256][8];
	long want_next[256];
	size_t nwant, i, nsw = 0;
	/* not this machine's /usr/lib/debug: what tests/lib.sh's PERFCONV_DEBUG_DIR gives the suites */
	static const struct pfc_tuning tn = { .debug_dir = "/nonexistent" };
	struct pfc_opts o;
	struct pfc_session s;
	struct pfc_error err;
	struct found fd;
	struct pfc_stream_cur cur;
	struct pfc_srec rec;
	struct pfc_switch_fmt sw;
	const char *why = NULL;

	snprintf(path, sizeof(path), "%s/tracepoint-systemwide/expected/perf-script.txt", dir);
	nwant = perf_states(path, want, want_next, 256);
	check(nwant > 10, "perf's sched_switch lines in %s: %zu", path, nwant);
	snprintf(path, sizeof(path), "%s/tracepoint-systemwide/perf.data", dir);
	memset(&o, 0, sizeof(o));
	memset(&err, 0, sizeof(err));
	o.input = path;
	o.tuning = &tn;
	o.max_stack = 127;
	o.keep_stream = 1;
	if (pfc_session_open(&s, &o, &err) < 0 || pfc_session_process(&s) < 0) {
		check(0, "open %s: %s", path, err.detail);
		pfc_session_close(&s);
		return;
	}
	memset(&fd, 0, sizeof(fd));
	check(pfc_tracedata_formats(s.rd.tracing_data.data, s.rd.tracing_data.size, 0, grab, &fd, &err) == 0 && fd.have,
	      "the fixture's tracing data has a sched_switch format");
	if (!fd.have) {
		pfc_session_close(&s);
		return;
	}
	{
		/* payloads follow the byte order the tracing data states, whatever the file's */
		const uint8_t *td = s.rd.tracing_data.data;
		uint64_t tlen = s.rd.tracing_data.size;
		uint8_t *copy = malloc(tlen);
		const uint8_t *nul = td && tlen > 12 ? memchr(td + 10, 0, tlen - 10) : NULL;
		int host_be = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;

		check(copy && nul, "copy of the tracing data");
		if (copy && nul) {
			memcpy(copy, td, tlen);
			check(pfc_tracedata_payload_swap(td, tlen) == host_be, "the fixture's payloads are little-endian");
			copy[nul + 1 - td] ^= 1;
			check(pfc_tracedata_payload_swap(copy, tlen) == !host_be, "a big-endian flag asks for a swap");
			check(pfc_tracedata_payload_swap(copy, (uint64_t)(nul + 1 - td)) == -1, "a header cut before the flag");
			copy[0] ^= 0xff;
			check(pfc_tracedata_payload_swap(copy, tlen) == -1, "a bad magic");
			check(pfc_tracedata_payload_swap(NULL, 0) == -1, "no tracing data");
		}
		free(copy);
	}
	check(pfc_offcpu_switch_fmt(&fd.f, &sw, &why) == 0, "read the fixture's sched_switch format: %s", why);
	check(sw.state_mask == 0xff && sw.preempt_bit == 0x100 && sw.nr_states == 8, "mask %#llx, preempt %#llx, %u states",
	      (unsigned long long)sw.state_mask, (unsigned long long)sw.preempt_bit, sw.nr_states);
	if (pfc_stream_open(&cur, &s.stream) < 0) {
		check(0, "cannot read the sample stream");
		pfc_session_close(&s);
		return;
	}
	for (i = 0; pfc_stream_next(&cur, &rec) > 0; i++) {
		const struct pfc_srec *r = &rec;
		const struct pfc_evsel *ev = s.rd.evsels[s.stacks.stacks[r->stack].evsel];
		uint64_t state, next;
		const uint8_t *raw = r->raw;
		char got[8];
		if (ev->attr.type != PERF_TYPE_TRACEPOINT || ev->attr.config != sw.id)
			continue;
		int pswap = pfc_tracedata_payload_swap(s.rd.tracing_data.data, s.rd.tracing_data.size) == 1;
		if (pfc_tpfield_int(&sw.prev_state, raw, r->raw_len, pswap, &state) < 0 ||
		    pfc_tpfield_int(&sw.next_pid, raw, r->raw_len, pswap, &next) < 0) {
			check(0, "sample %zu: fields outside the payload", i);
			continue;
		}
		/* perf prints "R+" for a preempted task: the letter and the mark */
		snprintf(got, sizeof(got), "%s%s", pfc_offcpu_state_name(&sw, pfc_offcpu_state(&sw, state)),
			 state & sw.preempt_bit ? "+" : "");
		if (nsw < nwant) {
			check(!strcmp(got, want[nsw]), "sched_switch %zu: state %s, perf printed %s", nsw, got, want[nsw]);
			check((long)(int32_t)next == want_next[nsw], "sched_switch %zu: next_pid %ld, perf printed %ld", nsw,
			      (long)(int32_t)next, want_next[nsw]);
		}
		nsw++;
	}
	pfc_stream_close(&cur);
	check(nsw == nwant, "%zu sched_switch samples, perf printed %zu", nsw, nwant);
	pfc_tpformat_free(&fd.f);
	pfc_session_close(&s);
}

static void test_old_layout(void)
{
	struct pfc_tpformat f;
	struct pfc_switch_fmt sw;
	const char *why = NULL;

	check(pfc_tpformat_parse(fmt_4_9, sizeof(fmt_4_9) - 1, &f) == 0, "parse the 4.9 format");
	check(!strcmp(f.name, "sched_switch") && f.id == 287 && f.nr_fields == 11, "4.9: name, id, fields");
	check(pfc_offcpu_switch_fmt(&f, &sw, &why) == 0, "4.9: read: %s", why);
	check(sw.state_mask == 2047 && sw.preempt_bit == 2048 && sw.nr_states == 11, "4.9: mask %llu, preempt %llu",
	      (unsigned long long)sw.state_mask, (unsigned long long)sw.preempt_bit);
	check(sw.prev_state.offset == 32 && sw.prev_state.size == 8 && sw.next_pid.offset == 56 && sw.prev_pid.offset == 24,
	      "4.9: field offsets");
	check(!strcmp(pfc_offcpu_state_name(&sw, pfc_offcpu_state(&sw, 0)), "R"), "4.9: 0 is R");
	check(!strcmp(pfc_offcpu_state_name(&sw, pfc_offcpu_state(&sw, 2048)), "R"), "4.9: preempted is R");
	check(!strcmp(pfc_offcpu_state_name(&sw, pfc_offcpu_state(&sw, 1)), "S"), "4.9: 1 is S");
	check(!strcmp(pfc_offcpu_state_name(&sw, pfc_offcpu_state(&sw, 2)), "D"), "4.9: 2 is D");
	check(!strcmp(pfc_offcpu_state_name(&sw, pfc_offcpu_state(&sw, 16)), "Z"), "4.9: 16 is Z (X on 4.14+)");
	check(!strcmp(pfc_offcpu_state_name(&sw, pfc_offcpu_state(&sw, 130)), "D"), "4.9: D|K is D");
	pfc_tpformat_free(&f);
}

static void test_eval(void)
{
	static const struct {
		const char *text;
		uint64_t want;
	} ok[] = {
		{ "((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | "
		  "0x00000040) + 1) << 1) - 1)",
		  ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 |
		      0x00000040) + 1) << 1) - 1) },
		{ "(2048-1)", 2048 - 1 },
		{ "2048 ? ", 2048 },
		{ "1 + 2 * 3 << 1 | 4 & 6 ^ 1", (uint64_t)(((1 + 2 * 3) << 1) | ((4 & 6) ^ 1)) },
		{ "0x10UL >> 2", 0x10UL >> 2 },
		{ "~0 & 0777", ~0ULL & 0777 },
		{ "-(1) + 10 % 4 / 1", (uint64_t)(-(1) + 10 % 4 / 1) },
	};
	static const char *const bad[] = { "", "(1", "1 +", "REC->x", "1 / 0", "5 % 0", "1 && 2", "1 || 2", "0x",
					   "12abc", "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1" };
	size_t i, used;
	uint64_t v;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int r = pfc_tpformat_eval(ok[i].text, strlen(ok[i].text), &v, &used);
		check(r == 0 && v == ok[i].want, "eval '%s': %d %llu, the compiler says %llu", ok[i].text, r,
		      (unsigned long long)v, (unsigned long long)ok[i].want);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check(pfc_tpformat_eval(bad[i], strlen(bad[i]), &v, &used) < 0, "eval '%s' is refused", bad[i]);
}

/* Every prefix and damaged copies: refused or read, never a fault (ASan/UBSan see the rest). */
static void test_damage(void)
{
	size_t n = sizeof(fmt_4_9) - 1, cut, k, read = 0;
	char *buf = malloc(n);
	unsigned seed = 1;

	if (!buf)
		return;
	/* the table of states ends at ') : "R"': a format cut before it cannot be read */
	size_t table_end = (size_t)(strstr(fmt_4_9, ") : \"R\"") - fmt_4_9);
	for (cut = 0; cut <= n; cut++) {
		struct pfc_tpformat f;
		struct pfc_switch_fmt sw;
		const char *why;
		int r = -3;
		memcpy(buf, fmt_4_9, cut);
		if (pfc_tpformat_parse(buf, cut, &f) == 0) {
			r = pfc_offcpu_switch_fmt(&f, &sw, &why);
			pfc_tpformat_free(&f);
		}
		read += r == 0;
		if (cut <= table_end)
			check(r < 0, "a format cut at %zu (before the table's end) is refused", cut);
	}
	check(read > 0 && read < n - table_end + 1, "the whole format and some longer prefixes read (%zu)", read);
	for (k = 0; k < 3000; k++) {
		struct pfc_tpformat f;
		struct pfc_switch_fmt sw;
		const char *why;
		int j;
		memcpy(buf, fmt_4_9, n);
		for (j = 0; j < 4; j++) {
			seed = seed * 1103515245u + 12345u;
			buf[(seed >> 8) % n] = "(){},\"|&<>0x9 \n;:-+"[(seed >> 20) % 20];
		}
		if (pfc_tpformat_parse(buf, n, &f) == 0) {
			if (pfc_offcpu_switch_fmt(&f, &sw, &why) == 0) {
				uint64_t v = seed;
				check(pfc_offcpu_state(&sw, v) <= sw.nr_states, "state within the table");
			}
			pfc_tpformat_free(&f);
		}
	}
	free(buf);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : getenv("FIXTURES") ? getenv("FIXTURES") : "fixtures";

	test_eval();
	test_old_layout();
	test_damage();
	test_fixture(dir);
	return check_done("test_offcpu");
}
