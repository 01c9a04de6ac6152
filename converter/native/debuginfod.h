/*
 * debuginfod.h - debug files fetched by build-id from debuginfod servers through elfutils'
 * libdebuginfod, for binaries whose own files have no symbols.  Only used when the user
 * names servers (DEBUGINFOD_URLS or --debuginfod); files land in libdebuginfod's cache,
 * where debuginfod-find puts them.
 */
#ifndef PFC_DEBUGINFOD_H
#define PFC_DEBUGINFOD_H

#include <stdint.h>
#include <stdio.h>

struct pfc_debuginfod {
	void *client;               /* debuginfod_client, NULL when off */
	struct pfc_debuginfod_api *api; /* the library, loaded when servers are named */
	double timeout;             /* seconds per file */
	FILE *log;                  /* the one warning; NULL = quiet */
	int disabled;               /* a server was down or too slow: no more queries */
	double started;             /* monotonic seconds when the current query began */
	/* for the summary */
	unsigned nr_queries, nr_fetched, nr_missing, nr_failed;
	uint64_t bytes;
	double seconds;
};

/* Starts a client for urls (a space-separated list, as DEBUGINFOD_URLS), which becomes this
 * process's DEBUGINFOD_URLS since libdebuginfod reads it from there.  Returns 0, or -1 when
 * libdebuginfod cannot start (d stays off). */
int pfc_debuginfod_open(struct pfc_debuginfod *d, const char *urls, double timeout, FILE *log);
/* The debug file of a build-id: 0 with its path in the cache, -1 when none is to be had. */
int pfc_debuginfod_find(struct pfc_debuginfod *d, const uint8_t *build_id, int len, const char *what,
			char *path, size_t size);
void pfc_debuginfod_close(struct pfc_debuginfod *d);

#endif
