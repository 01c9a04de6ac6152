/*
 * check.h - the unit tests' assertion.  check(ok, what, ...) counts a pass, or prints
 * "FAIL what" (printf-style) and counts a failure; check_done(name) prints the totals and
 * returns main's exit status.
 */
#ifndef PFC_TEST_CHECK_H
#define PFC_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static unsigned long passed, failed;

static inline void check(int ok, const char *what, ...)
{
	va_list ap;

	if (ok) {
		passed++;
		return;
	}
	failed++;
	fputs("FAIL ", stdout);
	va_start(ap, what);
	vprintf(what, ap);
	va_end(ap);
	fputc('\n', stdout);
}

static inline int check_done(const char *name)
{
	printf("%s: %lu passed, %lu failed\n", name, passed, failed);
	return failed ? 1 : 0;
}

#endif
