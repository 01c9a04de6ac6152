/*
 * filter.c - perf script's sample filters (--comm, --pid=, --tid=, --time) with perf 6.1's
 * parsing rules (tools/perf/util/time-utils.c, strlist/intlist): time ranges are inclusive
 * at both ends, percentages are slices of the time between the first and the last sample,
 * and samples without a time stamp always pass.  It owns the parsing and the test; the
 * session decides when to ask.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "converter/machine/filter.h"

void pfc_filter_free(struct pfc_filter *f)
{
	size_t i;

	for (i = 0; i < f->nr_comms; i++)
		free(f->comms[i]);
	free(f->comms);
	free(f->pids);
	free(f->tids);
	free(f->ranges);
	memset(f, 0, sizeof(*f));
}

int pfc_filter_add_comms(struct pfc_filter *f, const char *list, struct pfc_error *err)
{
	const char *p = list;

	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char **nv;

		if (n) {
			nv = realloc(f->comms, (f->nr_comms + 1) * sizeof(*nv));
			if (!nv)
				return PFC_FAIL_NOOFF(err, NOMEM, "comm list");
			f->comms = nv;
			if (!(f->comms[f->nr_comms] = strndup(p, n)))
				return PFC_FAIL_NOOFF(err, NOMEM, "comm list");
			f->nr_comms++;
		}
		p += n + (e ? 1 : 0);
	}
	if (!f->nr_comms)
		return PFC_FAIL_NOOFF(err, USAGE, "--comm needs at least one name");
	return 0;
}

int pfc_filter_add_pids(struct pfc_filter *f, const char *list, int tids, struct pfc_error *err)
{
	int32_t **v = tids ? &f->tids : &f->pids;
	size_t *nr = tids ? &f->nr_tids : &f->nr_pids;
	const char *p = list;

	while (*p) {
		char *end;
		long val;
		int32_t *nv;

		errno = 0;
		val = strtol(p, &end, 10);
		if (end == p || errno || val < -1 || val > INT32_MAX || (*end && *end != ','))
			return PFC_FAIL_NOOFF(err, USAGE, "'%s': not a list of %s numbers", list, tids ? "thread" : "process");
		nv = realloc(*v, (*nr + 1) * sizeof(*nv));
		if (!nv)
			return PFC_FAIL_NOOFF(err, NOMEM, "pid list");
		*v = nv;
		nv[(*nr)++] = (int32_t)val;
		p = *end ? end + 1 : end;
	}
	if (!*nr)
		return PFC_FAIL_NOOFF(err, USAGE, "--%s= needs at least one number", tids ? "tid" : "pid");
	return 0;
}

/* seconds[.up to 9 digits] -> nanoseconds (perf's parse_nsec_time) */
static int parse_nsec(const char *s, size_t n, uint64_t *out)
{
	uint64_t sec = 0, ns = 0;
	size_t i = 0, d;

	if (!n)
		return -1;
	for (; i < n && isdigit((unsigned char)s[i]); i++) {
		if (sec > (UINT64_MAX / 1000000000ULL - 9) / 10)
			return -1;
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < n) {
		if (s[i] != '.' || n - i - 1 > 9)
			return -1;
		for (i++, d = 0; d < 9; d++) {
			int c = i < n ? s[i++] : '0';
			if (!isdigit(c))
				return -1;
			ns = ns * 10 + (uint64_t)(c - '0');
		}
	}
	*out = sec * 1000000000ULL + ns;
	return 0;
}

static int add_range(struct pfc_filter *f, uint64_t start, uint64_t end, struct pfc_error *err)
{
	struct pfc_time_range *nv = realloc(f->ranges, (f->nr_ranges + 1) * sizeof(*nv));

	if (!nv)
		return PFC_FAIL_NOOFF(err, NOMEM, "time ranges");
	f->ranges = nv;
	nv[f->nr_ranges].start = start;
	nv[f->nr_ranges].end = end;
	f->nr_ranges++;
	return 0;
}

static int bad_time(const struct pfc_filter *f, struct pfc_error *err, const char *why)
{
	return PFC_FAIL_NOOFF(err, USAGE, "invalid --time '%s': %s", f->time_str, why);
}

/* "START,END START,END ...": ranges separated by white space, each with one comma, and
 * white space allowed after the comma ("START, END"); either side may be empty. */
static int parse_absolute(struct pfc_filter *f, struct pfc_error *err)
{
	const char *p = f->time_str;
	size_t i;
	int ret;

	for (;;) {
		const char *comma, *q, *e;
		uint64_t start = 0, end = 0;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		for (comma = p; *comma && *comma != ',' && !isspace((unsigned char)*comma); comma++)
			;
		if (*comma != ',')
			return bad_time(f, err, "a range is START,END in seconds");
		if (comma > p && parse_nsec(p, (size_t)(comma - p), &start) < 0)
			return bad_time(f, err, "START is not seconds[.fraction]");
		for (q = comma + 1; isspace((unsigned char)*q); q++)
			;
		for (e = q; *e && *e != ',' && !isspace((unsigned char)*e); e++)
			;
		if (*e == ',')
			return bad_time(f, err, "ranges are separated by white space");
		if (e > q && parse_nsec(q, (size_t)(e - q), &end) < 0)
			return bad_time(f, err, "END is not seconds[.fraction]");
		if (end && end < start)
			return bad_time(f, err, "END is before START");
		if ((ret = add_range(f, start, end, err)) < 0)
			return ret;
		p = e;
	}
	if (!f->nr_ranges)
		return bad_time(f, err, "no range");
	for (i = 0; i + 1 < f->nr_ranges; i++)
		if (f->ranges[i].end >= f->ranges[i + 1].start)
			return bad_time(f, err, "ranges overlap or are out of order");
	return 0;
}

int pfc_filter_set_time(struct pfc_filter *f, const char *str, struct pfc_error *err)
{
	free(f->ranges);
	f->ranges = NULL;
	f->nr_ranges = 0;
	f->time_str = str;
	f->time_percent = strchr(str, '%') != NULL;
	f->time_resolved = !f->time_percent;
	if (f->time_percent) {
		/* check the syntax now: a usage error before any file is read */
		struct pfc_filter probe = *f;
		int ret;
		probe.ranges = NULL;
		probe.nr_ranges = 0;
		ret = pfc_filter_resolve_time(&probe, 1, 1000000001ULL, err);
		free(probe.ranges);
		return ret;
	}
	return parse_absolute(f, err);
}

/* "12.5%" -> 0.125; the whole token must be a number followed by one '%' */
static int parse_percent(const char *s, size_t n, double *out)
{
	char buf[64], *end;

	if (!n || n >= sizeof(buf) || s[n - 1] != '%')
		return -1;
	memcpy(buf, s, n - 1);
	buf[n - 1] = 0;
	*out = strtod(buf, &end);
	if (end == buf || *end)
		return -1;
	*out /= 100.0;
	return 0;
}

/* perf's set_percent_time: a slice ends one nanosecond before the next one starts,
 * except the one that ends at the last sample. */
static int percent_range(struct pfc_filter *f, double a, double b, uint64_t first, uint64_t last,
			 struct pfc_error *err)
{
	uint64_t total = last - first, start, end;

	if (a < 0.0 || a > 1.0 || b < 0.0 || b > 1.0)
		return bad_time(f, err, "percentages go from 0% to 100%");
	start = first + (uint64_t)llround(a * (double)total);
	end = first + (uint64_t)llround(b * (double)total);
	if (end > start && end != last)
		end--;
	return add_range(f, start, end, err);
}

int pfc_filter_resolve_time(struct pfc_filter *f, uint64_t first, uint64_t last, struct pfc_error *err)
{
	const char *s = f->time_str, *p;
	int slash, dash, ret;

	if (f->time_resolved)
		return 0;
	if (!first && !last)
		return PFC_FAIL_NOOFF(err, UNSUPPORTED,
				      "--time with percentages needs the first and last sample times, "
				      "which this recording does not have (no SAMPLE_TIME feature)");
	slash = strchr(s, '/') != NULL;
	dash = strchr(s, '-') != NULL;
	if (!slash && !dash) {	/* "50%": the first 50% slice */
		double pc;
		if (parse_percent(s, strlen(s), &pc) < 0 || pc <= 0.0)
			return bad_time(f, err, "expected PERCENT%, PERCENT%/N or PERCENT%-PERCENT%");
		if ((ret = percent_range(f, 0.0, pc, first, last, err)) < 0)
			return ret;
		f->time_resolved = 1;
		return 0;
	}
	for (p = s; *p;) {
		const char *e = strchr(p, ','), *sep;
		size_t n = e ? (size_t)(e - p) : strlen(p);
		double a, b;

		if (slash) {	/* "10%/2": the second 10% slice */
			char *end;
			long i;
			sep = memchr(p, '/', n);
			if (!sep || parse_percent(p, (size_t)(sep - p), &a) < 0 || a <= 0.0)
				return bad_time(f, err, "a slice is PERCENT%/N");
			i = strtol(sep + 1, &end, 10);
			if (end != p + n || end == sep + 1)
				return bad_time(f, err, "a slice is PERCENT%/N");
			b = a * (double)i;
			a = a * (double)(i - 1);
		} else {	/* "0%-10%" */
			sep = memchr(p, '-', n);
			if (!sep || parse_percent(p, (size_t)(sep - p), &a) < 0 ||
			    parse_percent(sep + 1, (size_t)(p + n - sep - 1), &b) < 0)
				return bad_time(f, err, "a range is PERCENT%-PERCENT%");
		}
		if ((ret = percent_range(f, a, b, first, last, err)) < 0)
			return ret;
		p += n + (e ? 1 : 0);
		if (e && !*p)
			break;
	}
	if (!f->nr_ranges)
		return bad_time(f, err, "no range");
	f->time_resolved = 1;
	return 0;
}

int pfc_filter_time_keep(const struct pfc_filter *f, uint64_t t)
{
	size_t i;

	if (!f->time_str || !t || !f->nr_ranges)
		return 1;
	if (f->nr_ranges == 1)
		return !((f->ranges[0].start && t < f->ranges[0].start) || (f->ranges[0].end && t > f->ranges[0].end));
	for (i = 0; i < f->nr_ranges; i++)
		if (t >= f->ranges[i].start && (!f->ranges[i].end || t <= f->ranges[i].end))
			return 1;
	return 0;
}

/* --comm NAME against a thread's comm: equal, or equal once each '_' of NAME may stand for
 * a space.  The folded and SVG outputs write a comm's spaces as '_' (".NET Server GC" is
 * .NET_Server_GC there, as stackcollapse-perf.pl writes it), and a user copies the name from
 * them; perf script's exact match would keep nothing. */
static int comm_matches(const char *name, const char *comm)
{
	for (; *name && *comm; name++, comm++)
		if (*name != *comm && !(*name == '_' && *comm == ' '))
			return 0;
	return !*name && !*comm;
}

int pfc_filter_thread_keep(const struct pfc_filter *f, int32_t pid, int32_t tid, const char *comm)
{
	size_t i;

	if (f->nr_comms) {
		for (i = 0; i < f->nr_comms; i++)
			if (comm_matches(f->comms[i], comm))
				break;
		if (i == f->nr_comms)
			return 0;
	}
	if (f->nr_pids) {
		for (i = 0; i < f->nr_pids; i++)
			if (f->pids[i] == pid)
				break;
		if (i == f->nr_pids)
			return 0;
	}
	if (f->nr_tids) {
		for (i = 0; i < f->nr_tids; i++)
			if (f->tids[i] == tid)
				break;
		if (i == f->nr_tids)
			return 0;
	}
	return 1;
}
