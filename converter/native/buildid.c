/*
 * buildid.c - owns the walk over ELF notes that finds a GNU build-id, in a section's bytes or
 * in a notes file, and which file holds the running kernel's notes.  It does not open ELF
 * files or pick their sections (elfsym.c, unwind.c), nor decide what a build-id proves.
 * One walker, so that an ELF file, the running kernel and the symbol cache's key never
 * disagree on what a note says.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "converter/native/buildid.h"

#define NOTE_GNU_BUILD_ID 3	/* NT_GNU_BUILD_ID */
#define NOTE_HEADER 12		/* namesz, descsz, type: 32 bits each in every ELF class */

static size_t align4(size_t v)
{
	return (v + 3) & ~(size_t)3;
}

size_t pfc_buildid_from_notes(const void *p, size_t n, uint8_t *out, size_t max)
{
	const uint8_t *b = p;
	size_t pos = 0;

	while (n - pos >= NOTE_HEADER) {
		uint32_t namesz, descsz, type;
		size_t name, desc, len;

		memcpy(&namesz, b + pos, 4);
		memcpy(&descsz, b + pos + 4, 4);
		memcpy(&type, b + pos + 8, 4);
		name = pos + NOTE_HEADER;
		if (align4(namesz) > n - name)
			return 0;
		desc = name + align4(namesz);
		if (align4(descsz) > n - desc)
			return 0;
		if (type == NOTE_GNU_BUILD_ID && namesz == 4 && memcmp(b + name, "GNU", 4) == 0) {
			len = align4(descsz) < max ? align4(descsz) : max;
			if (!len)
				return 0;
			memcpy(out, b + desc, len);
			memset(out + len, 0, max - len);
			return len;
		}
		pos = desc + align4(descsz);
	}
	return 0;
}

size_t pfc_buildid_read_notes(const char *path, uint8_t *out, size_t max)
{
	uint8_t buf[4096];
	size_t got = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	/* sysfs gives the notes in one read; a plain file (the tests') may take more */
	while (got < sizeof(buf) && (r = read(fd, buf + got, sizeof(buf) - got)) > 0)
		got += (size_t)r;
	close(fd);
	return pfc_buildid_from_notes(buf, got, out, max);
}

size_t pfc_buildid_running_kernel(const char *dir, uint8_t *out, size_t max)
{
	char path[4096];

	if (!dir || !*dir)
		return pfc_buildid_read_notes("/sys/kernel/notes", out, max);
	if ((size_t)snprintf(path, sizeof(path), "%s/notes", dir) >= sizeof(path))
		return 0;
	return pfc_buildid_read_notes(path, out, max);
}
