/*
 * fileio.c - pfc_read_file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "converter/util/fileio.h"

int pfc_read_file(const char *path, uint64_t max, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t got = 0;
	char *b;

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return PFC_READ_OPEN;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max ||
	    (uint64_t)st.st_size >= SIZE_MAX) {
		int e = errno;
		close(fd);
		/* for the caller's strerror */
		errno = S_ISDIR(st.st_mode) ? EISDIR : S_ISREG(st.st_mode) ? EFBIG : e ? e : EINVAL;
		return PFC_READ_NOT_FILE;
	}
	if (!(b = malloc((size_t)st.st_size + 1))) {
		close(fd);
		errno = ENOMEM;
		return PFC_READ_NOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, b + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	b[got] = 0;
	*buf = b;
	*len = got;
	return 0;
}

int pfc_map_file(const char *path, uint64_t max, void **map, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0 || (uint64_t)st.st_size > max) {
		close(fd);
		return -1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	*map = p;
	*len = (size_t)st.st_size;
	return 0;
}
