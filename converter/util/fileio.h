/*
 * fileio.h - reading a whole small file (perf maps, jitdumps, ReadyToRun maps) into memory,
 * or mapping a file read in place (PE images).
 */
#ifndef PFC_FILEIO_H
#define PFC_FILEIO_H

#include <stddef.h>
#include <stdint.h>

enum {
	PFC_READ_OPEN = -1,      /* cannot open it (errno says why) */
	PFC_READ_NOT_FILE = -2,  /* not a regular file, or larger than the limit */
	PFC_READ_NOMEM = -3,
};

/* Read the regular file `path` of at most `max` bytes; *buf (free it) gets the bytes and a
 * NUL after them.  A read error ends the data early, as a file cut short would.  0 or one
 * of PFC_READ_*. */
int pfc_read_file(const char *path, uint64_t max, char **buf, size_t *len);

/* Map the regular, non-empty file `path` of at most `max` bytes, read-only (munmap *map,
 * *len).  0, or -1 when it cannot be opened, is not such a file or cannot be mapped. */
int pfc_map_file(const char *path, uint64_t max, void **map, size_t *len);

#endif
