/*
 * output.c - the output files of a conversion: checked before the input is read, written
 * through a temporary name in their directory and renamed into place once complete, or
 * written in place when they are stdout, a device or a FIFO.  What goes into them is the
 * writers' (formats/); which outputs a conversion has is convert.c's.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/output.h"

/* A device or a FIFO (/dev/null, /dev/stdout, a named pipe): its name has no ending to tell a
 * format, and it is written in place, never replaced by a renamed file. */
int pfc_cli_is_device_name(const char *output)
{
	struct stat st;

	return !strncmp(output, "/dev/", 5) ||
	       (stat(output, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

/* An output whose directory is missing or read-only fails before the input is read: the user
 * learns it in a second, not after the conversion, and the message names the output as given
 * (the temporary name beside it is ours, not the user's).  The error's file is the output, so
 * the message leads with it.  Devices and stdout are opened as they are and not checked. */
int pfc_cli_output_check(const char *output, struct pfc_error *err)
{
	char buf[PATH_MAX], *dir;
	struct stat st;

	if (!output || !strcmp(output, "-") || pfc_cli_is_device_name(output))
		return 0;
	if (snprintf(buf, sizeof(buf), "%s", output) >= (int)sizeof(buf))
		return 0;	/* pfc_cli_output_write says the name is too long */
	dir = dirname(buf);
	if (access(dir, W_OK | X_OK) == 0)
		return 0;
	snprintf(err->file, sizeof(err->file), "%s", output);
	if (errno == ENOENT)
		return PFC_FAIL_NOOFF(err, WRITE, "directory '%s' does not exist", dir);
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
		return PFC_FAIL_NOOFF(err, WRITE, "'%s' is not a directory", dir);
	return PFC_FAIL_NOOFF(err, WRITE, "cannot write in directory '%s': %s", dir, strerror(errno));
}

#define OUT_BUF ((size_t)1 << 20)

/* Write through a temporary file in the target directory, renamed into place only when
 * everything was written: no half-written output is ever left under the final name, and
 * a failed write removes the temporary file. */
int pfc_cli_output_write(mode_t umask, struct pfc_session *s, const struct pfc_writer *w, const char *output,
			 const struct pfc_wopts *wo)
{
	struct pfc_error *err = s->err;
	char tmp[PATH_MAX], *obuf = NULL;
	FILE *out;
	int fd = -1, ret, to_stdout = !output || !strcmp(output, "-");

	if (to_stdout) {
		out = stdout;
	} else if (pfc_cli_is_device_name(output)) {
		if (!(out = fopen(output, "w")))
			return PFC_FAIL_NOOFF(err, WRITE, "cannot open '%s': %s", output, strerror(errno));
		ret = pfc_writer_write(w, out, s, wo, err);
		if (fclose(out) != 0 && ret == 0)
			ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", output, strerror(errno));
		return ret;
	} else {
		/* the writer's pid in the name: a batch started after a crash or a kill -9 removes
		 * the temporary files of processes that are gone, and only those (batch.c) */
		if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.XXXXXX", output, (long)getpid()) >= (int)sizeof(tmp))
			return PFC_FAIL_NOOFF(err, USAGE, "output name is too long");
		fd = mkstemp(tmp);
		if (fd < 0) {
			/* the temporary name is an implementation detail: name the output as given */
			int e = errno;

			snprintf(err->file, sizeof(err->file), "%s", output);
			return PFC_FAIL_NOOFF(err, WRITE, "cannot create it: %s", strerror(e));
		}
		fchmod(fd, 0644 & ~umask);
		out = fdopen(fd, "w");
		if (!out) {
			close(fd);
			unlink(tmp);
			return PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", output, strerror(errno));
		}
		/* the outputs run to megabytes: written in 1 MiB pieces, not stdio's 4 KiB */
		if ((obuf = malloc(OUT_BUF)))
			setvbuf(out, obuf, _IOFBF, OUT_BUF);
	}
	errno = 0;
	ret = pfc_writer_write(w, out, s, wo, err);
	/* a writer that saw its stream fail says what it was writing; the message names the
	 * file and the system's reason (a full disk), which is what the user acts on */
	if (ret < 0 && err->code == PFC_ERR_WRITE && ferror(out) && errno &&
	    !strstr(err->detail, to_stdout ? "stdout" : output)) {
		int e = errno;
		char what[sizeof(err->detail)];

		snprintf(what, sizeof(what), "%s", err->detail);
		memset(err, 0, sizeof(*err));
		ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s (%s)", to_stdout ? "<stdout>" : output, strerror(e), what);
	}
	if (ret == 0 && (fflush(out) != 0 || ferror(out)))
		ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", to_stdout ? "<stdout>" : output, strerror(errno));
	if (!to_stdout) {
		if (ret == 0 && fsync(fileno(out)) != 0 && errno != EINVAL)
			ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", output, strerror(errno));
		if (fclose(out) != 0 && ret == 0)
			ret = PFC_FAIL_NOOFF(err, WRITE, "'%s': %s", output, strerror(errno));
		free(obuf);
		if (ret == 0 && rename(tmp, output) != 0)
			ret = PFC_FAIL_NOOFF(err, WRITE, "cannot rename '%s' to '%s': %s", tmp, output,
					     strerror(errno));
		if (ret != 0)
			unlink(tmp);
	}
	return ret;
}
