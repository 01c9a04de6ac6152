/*
 * fuzz_common.h - what the libFuzzer targets share: a private file that holds the current
 * input, for the parsers that read a path.  Each target is one fuzz/fuzz_NAME.c file; its
 * "FUZZ_SEEDS:" line names the fixture files that seed its corpus (fuzz/run.sh reads it).
 */
#ifndef PFC_FUZZ_COMMON_H
#define PFC_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The input as a file: a memfd (a regular file, so the reader maps it as it maps a
 * perf.data) reused across runs.  Writes the path into path[32]; -1 on failure. */
static inline int pfc_fuzz_file(const uint8_t *data, size_t size, char path[32])
{
	static int fd = -1;

	if (fd < 0) {
		fd = memfd_create("pfc-fuzz", 0);
		if (fd < 0)
			return -1;
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return -1;
	snprintf(path, 32, "/proc/self/fd/%d", fd);
	return 0;
}

#endif
