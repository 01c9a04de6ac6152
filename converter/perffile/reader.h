/*
 * reader.h - the perf.data container: file header, attrs, feature sections, pipe-mode
 * header records, and the record stream (with zstd-compressed records expanded).
 * The reader knows the byte layout; what the records mean is the session's business.
 */
#ifndef PFC_READER_H
#define PFC_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "converter/util/error.h"
#include "converter/perffile/evsel.h"
#include "converter/perffile/perf_file.h"
#include "converter/perffile/hdrprint.h"     /* struct pfc_blob */

/* One record as handed to the session. */
struct pfc_rec {
	uint32_t type;
	uint16_t misc;
	uint32_t size;          /* header.size, header included */
	const uint8_t *data;    /* the record, header included */
	uint64_t offset;        /* file offset; for records inside a COMPRESSED record, that record's */
	int transient;          /* bytes are gone after the callback returns (pipe, zstd) */
	int compressed;         /* came out of a COMPRESSED record */
};

typedef int (*pfc_rec_fn)(void *ctx, const struct pfc_rec *r);

struct pfc_reader {
	const char *path;       /* as given; "-" = stdin */
	int fd;
	int pipe_mode;          /* stream format (header size 16) */
	int swap;               /* file from a machine of the other byte order */
	int streaming;          /* reading with read(2) rather than a mapping */
	const uint8_t *map;     /* mmap of the whole file (file mode) */
	uint64_t map_size;
	long long mtime;
	int have_mtime;
	uint64_t attr_size;
	struct pfc_file_section attrs, data, event_types;
	uint64_t feat_offset;
	uint64_t feat_bitmap[4];
	int unfinished;         /* perf record never rewrote its header: records run to the end of the file */
	struct pfc_blob feat[PFC_FEAT_BITS];
	uint8_t *feat_owned[PFC_FEAT_BITS];     /* copies of pipe-mode feature payloads */
	/* events */
	struct pfc_evsel **evsels;
	size_t nr_evsels, cap_evsels;
	/* id -> evsel (open addressing) */
	uint64_t *id_keys;
	struct pfc_evsel **id_vals;
	size_t id_cap, id_count;
	/* tracing data (TRACING_DATA feature or HEADER_TRACING_DATA) */
	uint8_t *tracing_data_owned;
	struct pfc_blob tracing_data;
	uint64_t tracing_data_offset;   /* where it starts in the input, for error messages */
	/* called before a header record changes the reader's or the session's state (events,
	 * ids, features, build-ids), so that another thread can finish reading that state */
	int (*sync)(void *ctx);
	void *sync_ctx;
	/* compression */
	void *zstd;             /* ZSTD_DStream */
	uint8_t *zbuf;
	size_t zbuf_len, zbuf_cap;
	uint64_t comp_mmap_len;
	/* streaming input */
	uint8_t *sbuf;
	size_t sbuf_len, sbuf_pos, sbuf_cap;
	uint64_t stream_off;    /* file offset of sbuf[0] */
	int eof;
	/* counters */
	uint64_t bytes_total;   /* size of the input when known */
	uint64_t bytes_done;
	uint64_t junk_bytes;    /* ignored after the end of a pipe stream */
	uint64_t released;      /* mapped bytes before this offset were given back */
	int sample_id_all;      /* of the first evsel */
	int id_pos, is_pos;     /* in u64 words, perf's rule */
	struct pfc_error *err;
	FILE *warn;             /* NULL = quiet */
};

int pfc_reader_open(struct pfc_reader *r, const char *path, struct pfc_error *err);
/* Feed every record of the data section to fn, in file order. */
int pfc_reader_run(struct pfc_reader *r, pfc_rec_fn fn, void *ctx);
void pfc_reader_close(struct pfc_reader *r);
/* The caller no longer needs mapped bytes before file offset `upto`: drop those pages from
 * memory, so that resident memory does not grow with the size of the input. */
void pfc_reader_release(struct pfc_reader *r, uint64_t upto);

/* Which evsel a record belongs to (perf's id_pos / is_pos rule).  Never NULL when there
 * is at least one evsel. */
struct pfc_evsel *pfc_reader_evsel_of_ids(const struct pfc_reader *r, const struct pfc_rec *rec);
/* The evsel a record belongs to; inline for the one-event recording, every record's question. */
static inline struct pfc_evsel *pfc_reader_evsel_of(const struct pfc_reader *r, const struct pfc_rec *rec)
{
	return r->nr_evsels == 1 ? r->evsels[0] : pfc_reader_evsel_of_ids(r, rec);
}
struct pfc_evsel *pfc_reader_find_id(const struct pfc_reader *r, uint64_t id);

/* Header records that change the events, ids, features or build-ids. */
static inline int pfc_rec_changes_state(uint32_t type)
{
	switch (type) {
	case PFC_REC_HEADER_ATTR:
	case PFC_REC_HEADER_EVENT_TYPE:
	case PFC_REC_HEADER_TRACING_DATA:
	case PFC_REC_HEADER_BUILD_ID:
	case PFC_REC_ID_INDEX:
	case PFC_REC_EVENT_UPDATE:
	case PFC_REC_HEADER_FEATURE:
		return 1;
	default:
		return 0;
	}
}

static inline int pfc_feat_has(const struct pfc_reader *r, int feat)
{
	return (r->feat_bitmap[feat / 64] >> (feat % 64)) & 1;
}

#endif
