/*
 * test_perfscript.c - unit tests of the perf-script writer's parts: the --fields parser
 * (perf script -F syntax), and the tracing-data parser on the tracepoint fixture's own
 * TRACING_DATA section: the sched_switch format is found by its attr's config and prints
 * a payload as perf does, and the section cut short is refused with an offset inside
 * it, never read past (the copy under test is exactly as long as the cut).
 * usage: test_perfscript [FIXTURES_DIR]   (default $FIXTURES, else "fixtures")
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "converter/util/error.h"
#include "converter/perffile/reader.h"
#include "converter/perffile/tracedata.h"
#include "formats/perfscript.h"
#include "tests/unit/check.h"

static void test_fields(void)
{
	static const struct {
		const char *spec;
		int ok, relative;
		unsigned set, add, del;
	} cases[] = {
		{ "comm,tid", 1, 0, PFC_PS_COMM | PFC_PS_TID, 0, 0 },
		{ "comm,pid,tid,cpu,time,period,event,ip,sym,dso,trace", 1, 0,
		  PFC_PS_COMM | PFC_PS_PID | PFC_PS_TID | PFC_PS_CPU | PFC_PS_TIME | PFC_PS_PERIOD | PFC_PS_EVENT |
		  PFC_PS_IP | PFC_PS_SYM | PFC_PS_DSO | PFC_PS_TRACE, 0, 0 },
		{ "ip,sym,symoff,addr", 1, 0, PFC_PS_IP | PFC_PS_SYM | PFC_PS_SYMOFF | PFC_PS_ADDR, 0, 0 },
		{ "+pid,-cpu", 1, 1, 0, PFC_PS_PID, PFC_PS_CPU },
		{ "-symoff", 1, 1, 0, 0, PFC_PS_SYMOFF },
		{ "", 0, 0, 0, 0, 0 },
		{ "comm,", 0, 0, 0, 0, 0 },
		{ "comm,nosuch", 0, 0, 0, 0, 0 },
		{ "sw:comm", 0, 0, 0, 0, 0 },
		{ "+pid,cpu", 0, 0, 0, 0, 0 },
		{ "comm,+pid", 0, 0, 0, 0, 0 },
		{ "comm,sym", 0, 0, 0, 0, 0 },          /* symbols need ip, as in perf */
		{ "Comm", 0, 0, 0, 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pfc_ps_fields f;
		char why[160] = "";
		int r = pfc_ps_fields_parse(cases[i].spec, &f, why, sizeof(why));

		check((r == 0) == cases[i].ok, "fields '%s': parse returned %d", cases[i].spec, r);
		if (r == 0 && cases[i].ok)
			check(f.relative == cases[i].relative && f.set == cases[i].set && f.add == cases[i].add &&
			      f.del == cases[i].del, "fields '%s': relative %d set %#x add %#x del %#x", cases[i].spec,
			      f.relative, f.set, f.add, f.del);
		if (r < 0)
			check(why[0] != 0, "fields '%s': no reason given", cases[i].spec);
	}
}

/* A copy of n bytes in a buffer of exactly n bytes, so that ASan sees any read past it. */
static int parse_copy(const uint8_t *p, size_t n, struct pfc_error *err, struct tep_handle **tep)
{
	uint8_t *c = malloc(n ? n : 1);
	int r;

	if (!c)
		return -PFC_ERR_NOMEM;
	memcpy(c, p, n);
	r = pfc_tracedata_parse(c, n, 1000, tep, err);
	free(c);
	return r;
}

static void test_tracedata(const char *fixtures)
{
	char path[4096];
	struct pfc_reader rd;
	struct pfc_error err;
	struct tep_handle *tep = NULL;
	struct tep_event *ev;
	const uint8_t *td;
	size_t len, i, nsample = 0;
	int r;

	snprintf(path, sizeof(path), "%s/tracepoint-sched-switch/perf.data", fixtures);
	memset(&err, 0, sizeof(err));
	if (pfc_reader_open(&rd, path, &err) < 0) {
		printf("skip tracing data: cannot open '%s'\n", path);
		return;
	}
	td = rd.tracing_data.data;
	len = rd.tracing_data.size;
	check(td && len > 1000, "'%s' has tracing data", path);
	if (!td || !len)
		goto out;
	r = pfc_tracedata_parse(td, len, rd.tracing_data_offset, &tep, &err);
	check(r == 0 && tep, "tracing data parses: %d %s", r, err.detail);
	if (r == 0) {
		/* the sched_switch attr's config is the format's id */
		for (i = 0; i < rd.nr_evsels; i++) {
			if (rd.evsels[i]->attr.type != 2 /* PERF_TYPE_TRACEPOINT */)
				continue;
			ev = pfc_tracedata_event(tep, rd.evsels[i]->attr.config);
			check(ev && !strcmp(ev->name, "sched_switch") && !strcmp(ev->system, "sched"),
			      "attr config %llu is sched:sched_switch", (unsigned long long)rd.evsels[i]->attr.config);
			if (ev) {
				/* a payload of zeros but for the comms and pids prints as the format says */
				uint8_t raw[64];
				struct trace_seq s;
				struct pfc_tracebuf tb = { 0 };
				struct tep_format_field *pc = tep_find_field(ev, "prev_comm");
				struct tep_format_field *pp = tep_find_field(ev, "prev_pid");
				struct tep_format_field *nc = tep_find_field(ev, "next_comm");
				struct tep_format_field *ct = tep_find_common_field(ev, "common_type");
				memset(raw, 0, sizeof(raw));
				/* libtraceevent finds the format from the payload's common_type, as for perf */
				if (ct && ct->size == 2 && ct->offset + 2 <= 64) {
					uint16_t id = (uint16_t)ev->id;
					memcpy(raw + ct->offset, &id, 2);
				}
				if (pc && pp && nc && pc->offset + 8 <= 64 && nc->offset + 8 <= 64 && pp->offset + 4 <= 64) {
					int32_t pid = 42;
					memcpy(raw + pc->offset, "sleeper", 7);
					memcpy(raw + nc->offset, "swapper", 7);
					memcpy(raw + pp->offset, &pid, 4);
				}
				trace_seq_init(&s);
				check(pfc_tracedata_print(ev, 0, raw, sizeof(raw), &s, &tb) == 0, "print");
				trace_seq_terminate(&s);
				check(strstr(s.buffer, "prev_comm=sleeper prev_pid=42 ") == s.buffer &&
				      strstr(s.buffer, " ==> next_comm=swapper next_pid=0"),
				      "sched_switch payload printed as '%s'", s.buffer);
				/* a payload shorter than the format is padded, not read past */
				trace_seq_reset(&s);
				check(pfc_tracedata_print(ev, 0, raw, 3, &s, &tb) == 0, "short payload");
				trace_seq_destroy(&s);
				pfc_tracebuf_free(&tb);
				nsample++;
			}
		}
		check(nsample == 1, "one sched_switch attr, got %zu", nsample);
		pfc_tracedata_free(tep);
	}
	/* every cut inside the fixed part, then every 61st byte: refused with an offset inside */
	for (i = 0; i < len; i += i < 4096 ? 1 : 61) {
		memset(&err, 0, sizeof(err));
		tep = NULL;
		r = parse_copy(td, i, &err, &tep);
		if (r == 0) {
			/* cuts in the optional tail (kallsyms, printk, comms) may still parse */
			pfc_tracedata_free(tep);
			continue;
		}
		check(r < 0 && !tep && (i == 0 || (err.has_offset && err.offset >= 1000 && err.offset <= 1000 + i)),
		      "cut at %zu: %d, offset %llu", i, r, (unsigned long long)err.offset);
	}
out:
	pfc_reader_close(&rd);
}

int main(int argc, char **argv)
{
	const char *fixtures = argc > 1 ? argv[1] : getenv("FIXTURES") ? getenv("FIXTURES") : "fixtures";

	test_fields();
	test_tracedata(fixtures);
	return check_done("test_perfscript");
}
