/*
 * debuginfod.c - one libdebuginfod client per conversion.  Each query is bounded by a
 * timeout per file (the progress callback ends a transfer that takes longer, and
 * DEBUGINFOD_TIMEOUT bounds the connection when the user did not set it); a server that
 * is down or too slow turns the client off after one warning, so it costs at most one
 * timeout.  A build-id the servers do not know is not an error.  The library is loaded
 * only when the user names servers: linked in, it and libcurl's tree of dependencies
 * (TLS, Kerberos, LDAP...) cost every run of perfconv their start-up relocations.
 * Debian ships libdebuginfod as a shared library only: the static build (PFC_STATIC,
 * `make static`) has no client, says so when servers are named, and finds nothing.
 */
#include <dlfcn.h>
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

#define DEBUGINFOD_SONAME "libdebuginfod.so.1"

struct pfc_debuginfod_api {         /* the functions used, from the loaded library */
	void *lib;
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_end) *end;
	__typeof__(debuginfod_set_user_data) *set_user_data;
	__typeof__(debuginfod_set_progressfn) *set_progressfn;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
};

#ifdef PFC_STATIC
/* no library to load: pfc_debuginfod_open fails after its warning, and progress is never called */
static int api_load(struct pfc_debuginfod_api *a)
{
	(void)a;
	return -1;
}

static int progress(debuginfod_client *c, long done, long total)
{
	(void)c;
	(void)done;
	(void)total;
	return 1;
}
#else
static int api_load(struct pfc_debuginfod_api *a)
{
	/* never unloaded: libcurl, which it loads, keeps its global state (initialized once a
	 * process) in memory it owns; unmapped, that state would be lost, not freed */
	a->lib = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!a->lib)
		return -1;
	*(void **)&a->begin = dlsym(a->lib, "debuginfod_begin");
	*(void **)&a->end = dlsym(a->lib, "debuginfod_end");
	*(void **)&a->set_user_data = dlsym(a->lib, "debuginfod_set_user_data");
	*(void **)&a->set_progressfn = dlsym(a->lib, "debuginfod_set_progressfn");
	*(void **)&a->find_debuginfo = dlsym(a->lib, "debuginfod_find_debuginfo");
	if (!a->begin || !a->end || !a->set_user_data || !a->set_progressfn || !a->find_debuginfo) {
		dlclose(a->lib);
		a->lib = NULL;
		return -1;
	}
	return 0;
}

/* Called about once a second while a query waits or transfers: nonzero ends it.  The
 * client's user data is the only way back to d: the library is found again by name
 * (it is loaded; RTLD_NOLOAD only takes a reference). */
static int progress(debuginfod_client *c, long done, long total)
{
	void *lib = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_NOLOAD);
	__typeof__(debuginfod_get_user_data) *get = NULL;
	struct pfc_debuginfod *d = NULL;

	if (lib) {
		*(void **)&get = dlsym(lib, "debuginfod_get_user_data");
		if (get)
			d = get(c);
		dlclose(lib);
	}

	(void)done;
	(void)total;
	return d && now() - d->started > d->timeout;
}
#endif

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
	d->api = calloc(1, sizeof(*d->api));
#ifdef PFC_STATIC
	if (d->log)
		fprintf(d->log, "perfconv: warning: debuginfod: this static build of perfconv has no "
			"debuginfod client (--symbol-server still fetches)\n");
#endif
	if (!d->api || api_load(d->api) < 0) {
		free(d->api);
		d->api = NULL;
		return -1;
	}
	d->client = d->api->begin();
	if (!d->client)
		return -1;
	d->api->set_user_data(d->client, d);
	d->api->set_progressfn(d->client, progress);
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
	fd = d->api->find_debuginfo(d->client, build_id, len, &found);
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
		d->api->end(d->client);
	d->client = NULL;
	if (d->api) {
#ifndef PFC_STATIC
		dlclose(d->api->lib);
#endif
		free(d->api);
		d->api = NULL;
	}
}
