/*
 * stream.h - the time-ordered sample stream that the text writers (perf-script, trace.zip)
 * read after symbolization: each kept sample, compactly encoded, in memory while it is small
 * and in an unlinked temporary file beyond that, so that memory does not grow with the
 * number of samples.  Read back in order by any number of cursors.
 */
#ifndef PFC_STREAM_H
#define PFC_STREAM_H

#include <stddef.h>
#include <stdint.h>

/* One sample of the stream, as a cursor gives it back. */
struct pfc_srec {
	uint64_t time;               /* 0 when the sample has no TIME */
	uint64_t period;             /* as recorded (0 when none) */
	uint64_t ip;                 /* sample ip (for samples without a callchain) */
	uint64_t addr;               /* PERF_SAMPLE_ADDR (0 when none) */
	uint64_t weight, data_src;   /* with PFC_S_HAS_MEM in flags: as recorded (0 when none) */
	const uint8_t *raw;          /* tracepoint payload, valid until the cursor moves on */
	uint32_t raw_len;
	uint32_t stack;              /* pfc_stacks.stacks index: event, comm, pid/tid, frames */
	uint32_t cpu;                /* UINT32_MAX when the sample has no CPU */
	uint16_t misc;
	uint16_t flags;              /* PFC_S_HAS_* (low 16 bits) */
};

struct pfc_stream {
	uint8_t *mem;                /* the encoded samples while in memory; the write buffer after */
	size_t len, cap;
	size_t mem_limit;            /* bytes kept in memory before spilling (0: default) */
	int fd;                      /* the temporary file, -1 until spilled */
	uint64_t file_len;           /* bytes in the file */
	uint64_t nr;                 /* samples */
	uint64_t last_time, last_ip; /* the encoder's previous values */
	int failed;                  /* out of memory or the temporary file failed: samples lost */
};

struct pfc_stream_cur {
	const struct pfc_stream *st;
	uint8_t *buf;                /* what was read from the file */
	size_t pos, len, cap;
	uint64_t file_pos;           /* next offset to read */
	uint64_t left;               /* samples still to give */
	uint64_t last_time, last_ip;
	int failed;
};

void pfc_stream_init(struct pfc_stream *st);
void pfc_stream_exit(struct pfc_stream *st);
/* Append a sample (r->raw: its payload, raw_len bytes).  0, or -1 (st->failed set). */
int pfc_stream_add(struct pfc_stream *st, const struct pfc_srec *r);
/* Write out what is buffered; call before reading.  0 or -1. */
int pfc_stream_finish(struct pfc_stream *st);

/* Cursors: from the first sample on; next gives 1 (a sample in *r), 0 at the end, -1 on a
 * read error or out of memory.  A cursor reads with pread: it works after fork() too. */
int pfc_stream_open(struct pfc_stream_cur *c, const struct pfc_stream *st);
int pfc_stream_next(struct pfc_stream_cur *c, struct pfc_srec *r);
void pfc_stream_close(struct pfc_stream_cur *c);

#endif
