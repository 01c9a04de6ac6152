/*
 * record_count.c - the samples perf has written so far, for perfconv record's progress line,
 * and whether it has written FINISHED_INIT (it is recording, and takes a SIGINT as the end):
 * it follows the perf.data file as perf appends to it and counts its records, reading each
 * byte once.  It only counts: the file is read for real (and checked) by the conversion
 * at the end, so a record it cannot make sense of ends the count, never the recording.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "cli/record.h"
#include "converter/perffile/perf_file.h"

/* at most this much is read a call: the line is redrawn twice a second */
#define CHUNK (1u << 20)
/* the file header's data section: offset and size (u64 each) at byte 40 */
#define DATA_SECTION_AT 40

static uint64_t ld64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;
	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

void pfc_rec_count_update(struct pfc_rec_count *k, const char *path)
{
	static uint8_t buf[CHUNK];
	uint8_t hdr[PFC_FILE_HEADER_SIZE];
	size_t have = 0, at = 0;
	ssize_t n;

	if (k->stopped)
		return;
	if (k->fd <= 0) {
		if ((k->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			k->fd = 0;
			return;
		}
		k->fd++;	/* stored plus one: a zeroed struct has none */
	}
	if (!k->off) {
		/* perf writes the header, with the data's offset, before its first record; the
		 * file is its own native byte order: a magic of this machine's, or stop */
		if (pread(k->fd - 1, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
			return;
		if (ld64(hdr) != PFC_MAGIC2 || ld64(hdr + DATA_SECTION_AT) < PFC_FILE_HEADER_SIZE) {
			k->stopped = 1;
			return;
		}
		k->off = ld64(hdr + DATA_SECTION_AT);
	}
	n = pread(k->fd - 1, buf, sizeof(buf), (off_t)k->off);
	if (n <= 0)
		return;
	have = (size_t)n;
	/* whole records only: the last may be half-written, and is counted on the next call */
	while (have - at >= 8) {
		uint32_t type = (uint32_t)buf[at] | (uint32_t)buf[at + 1] << 8 | (uint32_t)buf[at + 2] << 16 |
				(uint32_t)buf[at + 3] << 24;
		uint16_t size = (uint16_t)(buf[at + 6] | buf[at + 7] << 8);
		if (size < 8) {
			k->stopped = 1;
			break;
		}
		if (have - at < size)
			break;
		if (type == 9)	/* PERF_RECORD_SAMPLE */
			k->samples++;
		else if (type == PFC_REC_FINISHED_INIT)
			k->init_done = 1;
		at += size;
	}
	k->off += at;
}

void pfc_rec_count_close(struct pfc_rec_count *k)
{
	if (k->fd > 0)
		close(k->fd - 1);
	k->fd = 0;
}
