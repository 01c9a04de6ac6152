/*
 * symsrv.h - debug files fetched by build-id from symbol servers (the Simple Symbol Query
 * Protocol of Microsoft's servers and dotnet-symbol), for binaries whose own files have no
 * symbols.  Only used when the user names servers (--symbol-server or
 * PERFCONV_SYMBOL_SERVERS); a file fetched is checked (an ELF file with the build-id asked
 * for) before it is kept, in a cache laid out by the servers' keys.
 */
#ifndef PFC_SYMSRV_H
#define PFC_SYMSRV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pfc_symsrv {
	struct pfc_symsrv_api *api; /* libcurl, loaded for the first request */
	void *curl;                 /* one easy handle: a server's connection serves several files */
	char **urls;                /* the servers, in the order asked */
	unsigned char *down;        /* by server: it failed once, not asked again */
	size_t nr_urls;
	char *cache;                /* the directory of the files fetched, by key */
	double timeout;             /* seconds to connect, and the longest a transfer may stall */
	uint64_t max_size;          /* the largest file accepted */
	FILE *log;                  /* warnings; NULL = quiet */
	/* for the summary */
	unsigned nr_cached;         /* found in the cache, no request */
	unsigned nr_miss_noted;     /* not asked: every server said lately it has no such file */
	unsigned nr_queries;        /* build-ids asked of the servers */
	unsigned nr_fetched, nr_missing, nr_failed, nr_refused;
	uint64_t bytes;
	double seconds;
};

/* The SSQP key of the debug file of a build-id ("ELF-buildid-sym"):
 * "_.debug/elf-buildid-sym-<40 lowercase hex digits>/_.debug", the build-id padded with
 * zero bytes to 20.  -1 when len is not 1..20. */
int pfc_symsrv_key(const uint8_t *build_id, int len, char *key, size_t size);

/* Starts a client for urls (space-separated, as DEBUGINFOD_URLS; only http:// and https://
 * URLs, others are warned about and left out) keeping its files under cache_dir.  Returns
 * 0, or -1 when there is no server or no cache (s stays off; a warning says why).  No
 * library is loaded and no request made before pfc_symsrv_fetch needs one. */
int pfc_symsrv_open(struct pfc_symsrv *s, const char *urls, const char *cache_dir, double timeout, FILE *log);
/* The cached debug file of a build-id, without a request: 0 with its path, -1 when none. */
int pfc_symsrv_cached(struct pfc_symsrv *s, const uint8_t *build_id, int len, char *path, size_t size);
/* Asks the servers, in order, for the debug file of a build-id (what: the binary, for
 * messages): 0 with its path in the cache, -1 when none is to be had.  A server that is
 * down or stalls is warned about once and not asked again in this conversion. */
int pfc_symsrv_fetch(struct pfc_symsrv *s, const uint8_t *build_id, int len, const char *what,
		     char *path, size_t size);
void pfc_symsrv_close(struct pfc_symsrv *s);

#endif
