/*
 * loadfile.h - load_file(path, &len): a whole file in memory, NUL-terminated, for the unit
 * tests that read the .NET runtime's images and the committed test data; NULL when it cannot.
 */
#ifndef PFC_TEST_LOADFILE_H
#define PFC_TEST_LOADFILE_H

#include <stdio.h>
#include <stdlib.h>

static inline char *load_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return NULL;
	}
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	*len = (size_t)n;
	return buf;
}

#endif
