/*
 * symsrv.c - one symbol-server client per conversion: the debug file of a build-id by the
 * SSQP key dotnet-symbol asks for ("_.debug/elf-buildid-sym-HEX/_.debug"), over HTTP with
 * libcurl, into a cache laid out by key.  It owns the requests, their time bounds, the
 * cache and the check of what a server sends; it does not read the symbols (elfsym.c does).
 *
 * A response is untrusted: it is written to a temporary file in the cache, at most
 * max_size bytes, and becomes the cached file (by rename, so that no run sees half a file)
 * only when it is an ELF file whose build-id is the one asked for.  A server that does not
 * connect, answers with a server error or stalls for the timeout is warned about once and
 * not asked again in this conversion, so each costs at most one timeout.  libcurl is
 * loaded only for a request, as debuginfod.c loads libdebuginfod only when servers are
 * named: linked in, it and its dependencies (TLS, Kerberos, LDAP...) would cost every run
 * their relocations.
 */
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "converter/native/symsrv.h"
#include "converter/native/symtab.h"
#include "converter/util/hex.h"

/* Debian's libcurl4 (OpenSSL), then the GnuTLS flavour libdebuginfod uses: the same ABI */
static const char *const curl_sonames[] = { "libcurl.so.4", "libcurl-gnutls.so.4" };

/* Larger than any debug file of the .NET runtime (libcoreclr.so.dbg is tens of MB) by far */
#define SYMSRV_MAX_SIZE ((uint64_t)2 << 30)
/* However fast data flows, one file gets at most this long */
#define SYMSRV_MAX_SECONDS 600
/* how long a miss is remembered: debuginfod's client default (cache_miss_s) */
#define SYMSRV_MISS_SECONDS 600

struct pfc_symsrv_api {            /* the functions used, from the loaded library */
	void *lib;
	__typeof__(curl_easy_init) *init;
	__typeof__(curl_easy_setopt) *setopt;
	__typeof__(curl_easy_perform) *perform;
	__typeof__(curl_easy_getinfo) *getinfo;
	__typeof__(curl_easy_cleanup) *cleanup;
	__typeof__(curl_easy_strerror) *strerror;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#ifdef PFC_STATIC
/* The static build (`make static`) links in a libcurl of its own, built for HTTP and HTTPS
 * only (scripts/static-libs.sh): a static binary has no dynamic loader to load one with. */
static int api_load(struct pfc_symsrv_api *a)
{
	a->lib = NULL;
	a->init = curl_easy_init;
	a->setopt = curl_easy_setopt;
	a->perform = curl_easy_perform;
	a->getinfo = curl_easy_getinfo;
	a->cleanup = curl_easy_cleanup;
	a->strerror = curl_easy_strerror;
	return 0;
}
#else
static int api_load(struct pfc_symsrv_api *a)
{
	size_t i;

	/* never unloaded: libcurl's global state (initialized once a process) lives in it */
	for (i = 0; i < sizeof(curl_sonames) / sizeof(curl_sonames[0]) && !a->lib; i++)
		a->lib = dlopen(curl_sonames[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!a->lib)
		return -1;
	*(void **)&a->init = dlsym(a->lib, "curl_easy_init");
	*(void **)&a->setopt = dlsym(a->lib, "curl_easy_setopt");
	*(void **)&a->perform = dlsym(a->lib, "curl_easy_perform");
	*(void **)&a->getinfo = dlsym(a->lib, "curl_easy_getinfo");
	*(void **)&a->cleanup = dlsym(a->lib, "curl_easy_cleanup");
	*(void **)&a->strerror = dlsym(a->lib, "curl_easy_strerror");
	if (!a->init || !a->setopt || !a->perform || !a->getinfo || !a->cleanup || !a->strerror) {
		dlclose(a->lib);
		a->lib = NULL;
		return -1;
	}
	return 0;
}
#endif

int pfc_symsrv_key(const uint8_t *build_id, int len, char *key, size_t size)
{
	uint8_t padded[20] = { 0 };
	char id[41];
	int n;

	if (len <= 0 || len > 20)
		return -1;
	/* SSQP_Key_Conventions.md: bytes as lowercase hex, the build-id padded to 20 bytes */
	memcpy(padded, build_id, (size_t)len);
	pfc_hex_format(id, padded, sizeof(padded));
	n = snprintf(key, size, "_.debug/elf-buildid-sym-%s/_.debug", id);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* mkdir -p DIR (its last component too) */
static int mkdirs(const char *dir)
{
	char p[4096];
	size_t i, n = strlen(dir);

	if (n == 0 || n >= sizeof(p))
		return -1;
	memcpy(p, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != 0)
			continue;
		p[i] = 0;
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -1;
		p[i] = i < n ? '/' : 0;
	}
	return 0;
}

int pfc_symsrv_open(struct pfc_symsrv *s, const char *urls, const char *cache_dir, double timeout, FILE *log)
{
	const char *p = urls;

	memset(s, 0, sizeof(*s));
	s->timeout = timeout > 0 ? timeout : 10;
	s->max_size = SYMSRV_MAX_SIZE;
	s->log = log;
	if (!urls || !*urls)
		return 0;
	while (*p) {
		size_t n = strcspn(p, " \t\n");
		char **v;

		if (n && !(n > 7 && !strncmp(p, "http://", 7)) && !(n > 8 && !strncmp(p, "https://", 8))) {
			if (log)
				fprintf(log, "perfconv: warning: symbol server '%.*s': not an http:// or https:// URL; "
					"left out\n", (int)n, p);
		} else if (n) {
			if (!(v = realloc(s->urls, (s->nr_urls + 1) * sizeof(*v))))
				goto fail;
			s->urls = v;
			/* without its trailing slashes: keys are joined with one */
			while (n > 1 && p[n - 1] == '/')
				n--;
			if (!(s->urls[s->nr_urls] = strndup(p, n)))
				goto fail;
			s->nr_urls++;
			n += strspn(p + n, "/");
		}
		p += n;
		p += strspn(p, " \t\n");
	}
	if (!s->nr_urls)
		goto fail;
	if (!cache_dir || !*cache_dir) {
		if (log)
			fprintf(log, "perfconv: warning: symbol server: no cache directory (set HOME or XDG_CACHE_HOME)\n");
		goto fail;
	}
	s->cache = strdup(cache_dir);
	s->down = calloc(s->nr_urls, 1);
	if (!s->cache || !s->down)
		goto fail;
	return 0;
fail:
	pfc_symsrv_close(s);
	return -1;
}

/* libcurl and a handle, on the first request: a conversion whose files all come from the
 * disk or the cache never loads it (about 15 ms of start-up, OpenSSL's included).  -1 when
 * it cannot start, after one warning; then no server is asked. */
static int client_start(struct pfc_symsrv *s)
{
	size_t i;

	if (s->curl)
		return 0;
	if (s->api)	/* failed before */
		return -1;
	if (!(s->api = calloc(1, sizeof(*s->api))))
		return -1;
	if (api_load(s->api) == 0 && (s->curl = s->api->init()))
		return 0;
	if (s->log)
		fprintf(s->log, "perfconv: warning: symbol server: cannot start libcurl (%s or %s)\n",
			curl_sonames[0], curl_sonames[1]);
	for (i = 0; i < s->nr_urls; i++)
		s->down[i] = 1;
	return -1;
}

int pfc_symsrv_cached(struct pfc_symsrv *s, const uint8_t *build_id, int len, char *path, size_t size)
{
	char key[128];
	struct stat st;
	int n;

	if (!s || !s->nr_urls || pfc_symsrv_key(build_id, len, key, sizeof(key)) < 0)
		return -1;
	n = snprintf(path, size, "%s/%s", s->cache, key);
	if (n < 0 || (size_t)n >= size)
		return -1;
	/* only a checked file is ever renamed to this name */
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
		return -1;
	s->nr_cached++;
	return 0;
}

/* The body of a response, into the temporary file, bounded */
struct sink {
	int fd;
	uint64_t bytes, max;
	int too_big, io_error;
};

static size_t sink_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct sink *k = arg;
	size_t n = size * nmemb, done = 0;

	if (k->bytes + n > k->max) {
		k->too_big = 1;
		return 0;	/* ends the transfer */
	}
	while (done < n) {
		ssize_t w = write(k->fd, data + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			k->io_error = 1;
			return 0;
		}
		done += (size_t)w;
	}
	k->bytes += n;
	return n;
}

enum fetched { FETCHED, MISSING, REFUSED, FAILED };

/* One server asked for one key; FETCHED leaves the checked file at path. */
static enum fetched fetch_one(struct pfc_symsrv *s, size_t srv, const char *key, const uint8_t *bid, int len,
			      const char *what, const char *path)
{
	const struct pfc_symsrv_api *a = s->api;
	char url[8192], tmp[4096], dir[4096], why[160];
	struct sink k = { .fd = -1, .max = s->max_size };
	uint8_t have[20];
	int have_len = 0, n;
	long code = 0;
	double t0, dt;
	CURLcode rc;
	enum fetched ret = FAILED;

	n = snprintf(url, sizeof(url), "%s/%s", s->urls[srv], key);
	if (n < 0 || (size_t)n >= sizeof(url))
		return MISSING;
	if (mkdirs(s->cache) < 0 || snprintf(tmp, sizeof(tmp), "%s/.fetch-XXXXXX", s->cache) >= (int)sizeof(tmp) ||
	    (k.fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		if (s->log)
			fprintf(s->log, "perfconv: warning: symbol server: cannot write to the cache '%s': %s\n",
				s->cache, strerror(errno));
		return FAILED;
	}
	a->setopt(s->curl, CURLOPT_URL, url);
	a->setopt(s->curl, CURLOPT_WRITEFUNCTION, sink_write);
	a->setopt(s->curl, CURLOPT_WRITEDATA, &k);
	a->setopt(s->curl, CURLOPT_NOSIGNAL, 1L);
	a->setopt(s->curl, CURLOPT_FAILONERROR, 1L);
	a->setopt(s->curl, CURLOPT_USERAGENT, "perfconv");
	/* Microsoft's server answers with a redirect to its storage; http and https only */
	a->setopt(s->curl, CURLOPT_FOLLOWLOCATION, 1L);
	a->setopt(s->curl, CURLOPT_MAXREDIRS, 8L);
	a->setopt(s->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	a->setopt(s->curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	a->setopt(s->curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)s->max_size);
	/* the timeout bounds the connection and every stall (less than a byte a second for that
	 * long, the wait for the answer included); a file that keeps coming may take longer */
	a->setopt(s->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)(s->timeout * 1000));
	a->setopt(s->curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
	a->setopt(s->curl, CURLOPT_LOW_SPEED_TIME, (long)ceil(s->timeout));
	a->setopt(s->curl, CURLOPT_TIMEOUT_MS, (long)(fmax(s->timeout, SYMSRV_MAX_SECONDS) * 1000));
	t0 = now();
	rc = a->perform(s->curl);
	dt = now() - t0;
	s->seconds += dt;
	a->getinfo(s->curl, CURLINFO_RESPONSE_CODE, &code);
	a->setopt(s->curl, CURLOPT_WRITEDATA, NULL);
	if (close(k.fd) < 0)
		k.io_error = 1;
	if (rc == CURLE_HTTP_RETURNED_ERROR && code < 500) {
		ret = MISSING;	/* 404: not on this server */
		goto out;
	}
	if (k.too_big || rc == CURLE_FILESIZE_EXCEEDED) {
		if (s->log)
			fprintf(s->log, "perfconv: warning: symbol server '%s': the debug file of '%s' is larger than "
				"%llu MB; refused\n", s->urls[srv], what, (unsigned long long)(s->max_size >> 20));
		ret = REFUSED;
		goto out;
	}
	if (k.io_error) {
		if (s->log)
			fprintf(s->log, "perfconv: warning: symbol server: cannot write to the cache '%s': %s\n",
				s->cache, strerror(errno));
		goto out;
	}
	if (rc != CURLE_OK || code < 200 || code > 299) {
		/* down, refused, too slow, a server error: every other file would fare the same */
		if (rc == CURLE_OPERATION_TIMEDOUT)
			snprintf(why, sizeof(why), "timed out");
		else if (rc == CURLE_HTTP_RETURNED_ERROR || rc == CURLE_OK)
			snprintf(why, sizeof(why), "HTTP status %ld", code);
		else
			snprintf(why, sizeof(why), "%s", a->strerror(rc));
		s->down[srv] = 1;
		if (s->log)
			fprintf(s->log, "perfconv: warning: symbol server '%s': no answer for '%s' after %.1f s (%s); "
				"not asking it again in this conversion\n", s->urls[srv], what, dt, why);
		goto out;
	}
	/* what came is untrusted: only the debug file of this build-id is kept */
	if (pfc_elf_build_id(tmp, have, &have_len) != 0 || !pfc_build_id_equal(bid, len, have, have_len)) {
		if (s->log) {
			fprintf(s->log, "perfconv: warning: symbol server '%s': the file sent for '%s' ", s->urls[srv], what);
			if (have_len > 0) {
				char hex[2 * sizeof(have) + 1];
				fprintf(s->log, "has build-id %s", pfc_hex_format(hex, have, (size_t)have_len));
			} else {
				fputs("is not an ELF file with a build-id", s->log);
			}
			fputs("; refused\n", s->log);
		}
		ret = REFUSED;
		goto out;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = 0;
	if (mkdirs(dir) < 0 || rename(tmp, path) < 0) {
		if (s->log)
			fprintf(s->log, "perfconv: warning: symbol server: cannot write to the cache '%s': %s\n",
				s->cache, strerror(errno));
		goto out;
	}
	s->bytes += k.bytes;
	return FETCHED;
out:
	unlink(tmp);
	return ret;
}

/* The servers asked, one a line: what a note of a miss holds, so that a note made with
 * other servers is not believed.  NULL when out of memory. */
static char *server_list(const struct pfc_symsrv *s, size_t *len)
{
	size_t i, n = 0;
	char *v, *p;

	for (i = 0; i < s->nr_urls; i++)
		n += strlen(s->urls[i]) + 1;
	if (!(v = p = malloc(n + 1)))
		return NULL;
	for (i = 0; i < s->nr_urls; i++)
		p += sprintf(p, "%s\n", s->urls[i]);
	*len = n;
	return v;
}

/* A miss remembered: KEY.missing in the cache, written when every server answered that it has
 * no such file, holds the list of those servers.  It is believed for SYMSRV_MISS_SECONDS after
 * it was written, and only by a conversion that asks the same servers, as debuginfod's client
 * remembers its misses (cache_miss_s). */
static int miss_noted(const struct pfc_symsrv *s, const char *path)
{
	char note[4096], have[4096], *want;
	struct stat st;
	size_t len;
	ssize_t n;
	int fd, ret = 0;

	if (snprintf(note, sizeof(note), "%s.missing", path) >= (int)sizeof(note) ||
	    (fd = open(note, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && time(NULL) - st.st_mtime < SYMSRV_MISS_SECONDS &&
	    time(NULL) >= st.st_mtime && (want = server_list(s, &len))) {
		n = read(fd, have, sizeof(have));
		ret = n >= 0 && (size_t)n == len && len < sizeof(have) && !memcmp(have, want, len);
		free(want);
	}
	close(fd);
	return ret;
}

static void note_miss(const struct pfc_symsrv *s, const char *path)
{
	char note[4096], tmp[4096], dir[4096];
	size_t len;
	char *list;
	int fd, ok;

	if (snprintf(note, sizeof(note), "%s.missing", path) >= (int)sizeof(note) ||
	    snprintf(tmp, sizeof(tmp), "%s.XXXXXX", note) >= (int)sizeof(tmp))
		return;
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = 0;
	if (mkdirs(dir) < 0 || !(list = server_list(s, &len)))
		return;
	if ((fd = mkostemp(tmp, O_CLOEXEC)) >= 0) {
		ok = write(fd, list, len) == (ssize_t)len;
		if (close(fd) < 0 || !ok || rename(tmp, note) < 0)
			unlink(tmp);
	}
	free(list);
}

int pfc_symsrv_fetch(struct pfc_symsrv *s, const uint8_t *build_id, int len, const char *what,
		     char *path, size_t size)
{
	char key[128];
	size_t i;
	int asked = 0, refused = 0, failed = 0, n;

	if (!s || !s->nr_urls || pfc_symsrv_key(build_id, len, key, sizeof(key)) < 0)
		return -1;
	n = snprintf(path, size, "%s/%s", s->cache, key);
	if (n < 0 || (size_t)n >= size)
		return -1;
	if (miss_noted(s, path)) {
		s->nr_miss_noted++;
		return -1;
	}
	for (i = 0; i < s->nr_urls; i++) {
		if (s->down[i] || client_start(s) < 0)
			continue;
		if (!asked++)
			s->nr_queries++;
		switch (fetch_one(s, i, key, build_id, len, what, path)) {
		case FETCHED:
			s->nr_fetched++;
			return 0;
		case REFUSED:
			refused = 1;
			break;
		case FAILED:
			failed = 1;
			break;
		case MISSING:
			break;
		}
	}
	if (refused)
		s->nr_refused++;
	else if (failed)
		s->nr_failed++;
	else if (asked)
		s->nr_missing++;
	/* every server was asked and none has it */
	if (asked && !refused && !failed) {
		for (i = 0; i < s->nr_urls && !s->down[i]; i++)
			;
		if (i == s->nr_urls)
			note_miss(s, path);
	}
	return -1;
}

void pfc_symsrv_close(struct pfc_symsrv *s)
{
	size_t i;

	if (s->curl)
		s->api->cleanup(s->curl);
	s->curl = NULL;
#ifndef PFC_STATIC
	if (s->api && s->api->lib)
		dlclose(s->api->lib);	/* it stays loaded (RTLD_NODELETE) */
#endif
	free(s->api);
	s->api = NULL;
	for (i = 0; i < s->nr_urls; i++)
		free(s->urls[i]);
	free(s->urls);
	free(s->down);
	free(s->cache);
	s->urls = NULL;
	s->down = NULL;
	s->cache = NULL;
	s->nr_urls = 0;
}
