/*
 * debuginfod.c - one libdebuginfod client per conversion.  Each query is bounded by a
 * timeout per file (the progress callback ends a transfer that takes longer, and
 * DEBUGINFOD_TIMEOUT bounds the connection when the user did not set it); a server that
 * is down or too slow turns the client off after one warning, so it costs at most one
 * timeout.  A build-id the servers do not know is not an error.
 */
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "converter/native/debuginfod.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Called about once a second while a query waits or transfers: nonzero ends it. */
static int progress(debuginfod_client *c, long done, long total)
{
	struct pfc_debuginfod *d = debuginfod_get_user_data(c);

	(void)done;
	(void)total;
	return d && now() - d->started > d->timeout;
}

int pfc_debuginfod_open(struct pfc_debuginfod *d, const char *urls, double timeout, FILE *log)
{
	char secs[32];

	memset(d, 0, sizeof(*d));
	d->timeout = timeout > 0 ? timeout : 10;
	d->log = log;
	if (!urls || !*urls)
		return 0;
	if (setenv("DEBUGINFOD_URLS", urls, 1) != 0)
		return -1;
	/* libdebuginfod waits 90 s for a server to start sending; no longer than our timeout
	 * unless the user chose otherwise */
	snprintf(secs, sizeof(secs), "%ld", (long)(d->timeout + 0.999));
	setenv("DEBUGINFOD_TIMEOUT", secs, 0);
	d->client = debuginfod_begin();
	if (!d->client)
		return -1;
	debuginfod_set_user_data(d->client, d);
	debuginfod_set_progressfn(d->client, progress);
	return 0;
}

int pfc_debuginfod_find(struct pfc_debuginfod *d, const uint8_t *build_id, int len, const char *what,
			char *path, size_t size)
{
	char *found = NULL;
	double t0, dt;
	int fd;

	if (!d || !d->client || d->disabled || len <= 0)
		return -1;
	d->nr_queries++;
	t0 = d->started = now();
	fd = debuginfod_find_debuginfo(d->client, build_id, len, &found);
	dt = now() - t0;
	d->seconds += dt;
	if (fd >= 0) {
		struct stat st;
		int ok = found && strlen(found) < size;
		if (ok && fstat(fd, &st) == 0)
			d->bytes += (uint64_t)st.st_size;
		close(fd);
		if (ok) {
			memcpy(path, found, strlen(found) + 1);
			d->nr_fetched++;
		}
		free(found);
		return ok ? 0 : -1;
	}
	free(found);
	/* no server has it; libdebuginfod also says so when the progress callback ended the
	 * query, which the time tells apart */
	if (fd == -ENOENT && dt < d->timeout) {
		d->nr_missing++;
		return -1;
	}
	/* down, refused, too slow: every other file would wait as long */
	d->nr_failed++;
	d->disabled = 1;
	if (d->log)
		fprintf(d->log, "perfconv: warning: debuginfod: no answer for '%s' after %.1f s (%s); "
			"not asking the servers again in this conversion\n", what, dt,
			dt > d->timeout ? "timed out" : strerror(-fd));
	return -1;
}

void pfc_debuginfod_close(struct pfc_debuginfod *d)
{
	if (d->client)
		debuginfod_end(d->client);
	d->client = NULL;
}
