/*
 * test_filter.c - unit tests of the sample filters (converter/machine/filter.c): perf script's
 * --time syntax with the ranges perf 6.1 computes for it (inclusive ends, percentage slices
 * that end one nanosecond before the next one starts), the strings perf refuses, and the
 * --comm/--pid=/--tid= lists.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "converter/machine/filter.h"
#include "tests/unit/check.h"

#define S 1000000000ULL

/* Parse str (resolving percentages against [first, last]) and compare the ranges with
 * want[0..n) as start,end pairs; n < 0: the string must be refused. */
static void time_case(const char *str, uint64_t first, uint64_t last, int n, const uint64_t *want)
{
	struct pfc_filter f;
	struct pfc_error err;
	int ret, i;

	memset(&f, 0, sizeof(f));
	memset(&err, 0, sizeof(err));
	ret = pfc_filter_set_time(&f, str, &err);
	if (ret == 0)
		ret = pfc_filter_resolve_time(&f, first, last, &err);
	if (n < 0) {
		check(ret < 0 && strstr(err.detail, str), "--time '%s' must be refused naming the value (got %d, '%s')",
		      str, ret, err.detail);
		pfc_filter_free(&f);
		return;
	}
	check(ret == 0, "--time '%s': %s", str, err.detail);
	check(f.nr_ranges == (size_t)n, "--time '%s': %zu ranges, want %d", str, f.nr_ranges, n);
	for (i = 0; ret == 0 && i < n && (size_t)i < f.nr_ranges; i++)
		check(f.ranges[i].start == want[2 * i] && f.ranges[i].end == want[2 * i + 1],
		      "--time '%s' range %d: [%llu, %llu], want [%llu, %llu]", str, i,
		      (unsigned long long)f.ranges[i].start, (unsigned long long)f.ranges[i].end,
		      (unsigned long long)want[2 * i], (unsigned long long)want[2 * i + 1]);
	pfc_filter_free(&f);
}

static void test_time(void)
{
	const uint64_t F = 1 * S, L = 2 * S;	/* first and last sample: 1 s and 2 s */

	time_case("1.5,2.5", 0, 0, 1, (const uint64_t[]){ 1500000000, 2500000000 });
	time_case("1291.468772,1291.5", 0, 0, 1, (const uint64_t[]){ 1291468772000, 1291500000000 });
	time_case("1.123456789,", 0, 0, 1, (const uint64_t[]){ 1123456789, 0 });
	time_case(",2", 0, 0, 1, (const uint64_t[]){ 0, 2 * S });
	time_case("1, 2", 0, 0, 1, (const uint64_t[]){ 1 * S, 2 * S });
	time_case("1,2 3,4", 0, 0, 2, (const uint64_t[]){ 1 * S, 2 * S, 3 * S, 4 * S });
	time_case("1.1234567891,2", 0, 0, -1, NULL);	/* more than nanoseconds */
	time_case("2,1", 0, 0, -1, NULL);
	time_case("1,3 2,4", 0, 0, -1, NULL);		/* overlap */
	time_case("1,2,3", 0, 0, -1, NULL);
	time_case("abc", 0, 0, -1, NULL);
	time_case("1", 0, 0, -1, NULL);

	/* percentages: perf's set_percent_time */
	time_case("10%/2", F, L, 1, (const uint64_t[]){ 1100000000, 1199999999 });
	time_case("10%/1,10%/3", F, L, 2, (const uint64_t[]){ 1000000000, 1099999999, 1200000000, 1299999999 });
	time_case("0%-10%,30%-40%", F, L, 2, (const uint64_t[]){ 1000000000, 1099999999, 1300000000, 1399999999 });
	time_case("25%", F, L, 1, (const uint64_t[]){ 1000000000, 1249999999 });
	time_case("50%/2", F, L, 1, (const uint64_t[]){ 1500000000, 2000000000 });	/* ends at the last sample */
	time_case("0%-100%", F, L, 1, (const uint64_t[]){ 1000000000, 2000000000 });
	time_case("0%/4", F, L, -1, NULL);		/* perf refuses a 0% slice */
	time_case("10%/0", F, L, -1, NULL);
	time_case("10%/11", F, L, -1, NULL);
	time_case("120%-130%", F, L, -1, NULL);
	time_case("10%/x", F, L, -1, NULL);
	time_case("x%", F, L, -1, NULL);

	{	/* percentages without the recording's sample times: refused when resolved */
		struct pfc_filter f;
		struct pfc_error err;
		memset(&f, 0, sizeof(f));
		memset(&err, 0, sizeof(err));
		check(pfc_filter_set_time(&f, "10%/2", &err) == 0, "10%%/2 parses before the times are known");
		check(pfc_filter_resolve_time(&f, 0, 0, &err) < 0 && strstr(err.detail, "SAMPLE_TIME"),
		      "percentages without sample times must be refused");
		pfc_filter_free(&f);
	}
	{	/* inclusive ends; no time stamp passes; several ranges */
		struct pfc_filter f;
		struct pfc_error err;
		memset(&f, 0, sizeof(f));
		memset(&err, 0, sizeof(err));
		pfc_filter_set_time(&f, "1,2 3,", &err);
		check(pfc_filter_time_keep(&f, 1 * S) && pfc_filter_time_keep(&f, 2 * S), "range ends are kept");
		check(!pfc_filter_time_keep(&f, 2 * S + 1) && !pfc_filter_time_keep(&f, S - 1), "outside is dropped");
		check(pfc_filter_time_keep(&f, 100 * S), "an open end keeps everything after its start");
		check(pfc_filter_time_keep(&f, 0), "a sample without a time stamp is kept");
		pfc_filter_free(&f);
	}
}

static void test_lists(void)
{
	struct pfc_filter f;
	struct pfc_error err;

	memset(&f, 0, sizeof(f));
	memset(&err, 0, sizeof(err));
	check(pfc_filter_add_pids(&f, "10,20", 0, &err) == 0 && f.nr_pids == 2, "--pid=10,20");
	check(pfc_filter_add_pids(&f, "7", 1, &err) == 0 && f.nr_tids == 1, "--tid=7");
	check(pfc_filter_add_comms(&f, "app,,w-1", &err) == 0 && f.nr_comms == 2, "--comm app,,w-1: two names");
	check(pfc_filter_thread_keep(&f, 10, 7, "app"), "pid 10 tid 7 app passes");
	check(!pfc_filter_thread_keep(&f, 10, 8, "app"), "tid 8 is not in --tid");
	check(!pfc_filter_thread_keep(&f, 30, 7, "app"), "pid 30 is not in --pid");
	check(!pfc_filter_thread_keep(&f, 20, 7, "other"), "comm 'other' is not in --comm");
	check(pfc_filter_thread_keep(&f, 20, 7, "w-1"), "pid 20 tid 7 w-1 passes");
	check(pfc_filter_active(&f), "the filter is active");
	pfc_filter_free(&f);
	memset(&err, 0, sizeof(err));
	check(pfc_filter_add_pids(&f, "1,x", 0, &err) < 0, "--pid=1,x is refused");
	pfc_filter_free(&f);
	memset(&err, 0, sizeof(err));
	check(pfc_filter_add_pids(&f, "", 0, &err) < 0, "--pid= is refused");
	memset(&err, 0, sizeof(err));
	check(pfc_filter_add_comms(&f, ",", &err) < 0, "--comm , is refused");
	pfc_filter_free(&f);
	check(!pfc_filter_active(&f) && !pfc_filter_active(NULL), "an empty filter is not active");
}

int main(void)
{
	test_time();
	test_lists();
	return check_done("test_filter");
}
