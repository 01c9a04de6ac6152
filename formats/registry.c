/*
 * registry.c - the table of output formats, and lookup by name or by file name ending.
 * An output name means what it says: a known ending picks the format, a .gz ending adds
 * gzip to any format that is not an archive itself, and anything else is for the CLI to
 * refuse (with the list this file prints).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "formats/writer.h"

const struct pfc_writer *const pfc_writers[] = {
	&pfc_writer_folded,
	&pfc_writer_perf_script,
	&pfc_writer_speedscope,
	&pfc_writer_firefox,
	&pfc_writer_svg,
	&pfc_writer_perfview,
	&pfc_writer_pprof,
	&pfc_writer_pack,
	&pfc_writer_top,
	&pfc_writer_runtime,
	NULL,
};

const struct pfc_writer *pfc_writer_by_name(const char *name)
{
	size_t i;

	for (i = 0; pfc_writers[i]; i++)
		if (!strcmp(pfc_writers[i]->name, name))
			return pfc_writers[i];
	return NULL;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && !memcmp(s + n - k, suffix, k);
}

/* The writer whose ending is the longest one path[0..n) ends with (.perf.txt.gz beats .gz). */
static const struct pfc_writer *by_ending(const char *path, size_t n)
{
	const struct pfc_writer *best = NULL;
	size_t i, j, best_len = 0;

	for (i = 0; pfc_writers[i]; i++)
		for (j = 0; pfc_writers[i]->suffixes[j]; j++) {
			size_t k = strlen(pfc_writers[i]->suffixes[j]);
			if (k > best_len && ends_with(path, n, pfc_writers[i]->suffixes[j])) {
				best = pfc_writers[i];
				best_len = k;
			}
		}
	return best;
}

int pfc_writer_name_gzip(const char *path)
{
	return path && ends_with(path, strlen(path), ".gz");
}

const struct pfc_writer *pfc_writer_by_filename(const char *path, int *gzip)
{
	size_t n = strlen(path);
	const struct pfc_writer *w = by_ending(path, n);

	*gzip = pfc_writer_name_gzip(path);
	if (!w && *gzip)
		w = by_ending(path, n - 3);
	return w;
}

void pfc_writer_list_suffixes(FILE *fp)
{
	size_t i, j;

	for (i = 0; pfc_writers[i]; i++) {
		fprintf(fp, "  %-12s", pfc_writers[i]->name);
		for (j = 0; pfc_writers[i]->suffixes[j]; j++)
			fprintf(fp, " %s", pfc_writers[i]->suffixes[j]);
		fputc('\n', fp);
	}
	fputs("  (a name ending in .gz is written gzip-compressed, in any format but trace.zip)\n", fp);
}

/* ---- gzip around any writer ---- */

static ssize_t gz_cookie_write(void *cookie, const char *buf, size_t len)
{
	size_t done = 0;

	/* gzwrite takes an unsigned count; 0 says it failed, which fopencookie reads as an error */
	while (done < len) {
		unsigned n = len - done > (1u << 30) ? 1u << 30 : (unsigned)(len - done);
		int w = gzwrite((gzFile)cookie, buf + done, n);
		if (w <= 0)
			return done ? (ssize_t)done : 0;
		done += (size_t)w;
	}
	return (ssize_t)done;
}

static int gz_cookie_close(void *cookie)
{
	return gzclose((gzFile)cookie) == Z_OK ? 0 : EOF;
}

int pfc_writer_write(const struct pfc_writer *w, FILE *out, struct pfc_session *s, const struct pfc_wopts *o,
		     struct pfc_error *err)
{
	cookie_io_functions_t io = { .write = gz_cookie_write, .close = gz_cookie_close };
	gzFile gz;
	FILE *z;
	int fd, ret;

	if (!o->gzip || (w->needs & PFC_OWN_GZIP))
		return w->write(out, s, o, err);
	if (w->needs & PFC_NO_GZIP)
		return PFC_FAIL_NOOFF(err, USAGE, "a %s output is compressed already: its name cannot end in .gz",
				      w->name);
	/* gzip's header carries no time or name here (zlib's gz* functions write mtime 0), so the
	 * same input still gives the same bytes */
	if (fflush(out) != 0 || (fd = dup(fileno(out))) < 0)
		return PFC_FAIL_NOOFF(err, WRITE, "cannot start gzip output: %s", strerror(errno));
	if (!(gz = gzdopen(fd, "wb"))) {
		close(fd);
		return PFC_FAIL_NOOFF(err, WRITE, "cannot start gzip output");
	}
	gzbuffer(gz, 128 * 1024);
	if (!(z = fopencookie(gz, "w", io))) {
		gzclose(gz);
		return PFC_FAIL_NOOFF(err, NOMEM, "gzip output");
	}
	setvbuf(z, NULL, _IOFBF, 64 * 1024);
	ret = w->write(z, s, o, err);
	if (ret == 0 && fflush(z) != 0)
		ret = PFC_FAIL_NOOFF(err, WRITE, "writing the gzip-compressed output failed");
	if (fclose(z) != 0 && ret == 0)
		ret = PFC_FAIL_NOOFF(err, WRITE, "finishing the gzip-compressed output failed");
	return ret;
}
