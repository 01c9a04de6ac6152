/*
 * hdrprint.h - the `--header` printer: perf 6.1's `perf report --header-only` (and `-I`) text,
 * byte for byte, from a read-only view of a perf.data header that the reader fills in.
 * The printer decodes the feature payloads itself (they are untrusted bytes in file byte
 * order); it never opens the input except to stat it when no mtime was given.
 */
#ifndef PFC_HDRPRINT_H
#define PFC_HDRPRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "converter/perffile/perf_file.h"

/* A run of bytes exactly as in the file (file byte order). */
struct pfc_blob {
	const uint8_t *data;
	uint64_t size;
};

struct pfc_hdr_evsel {
	struct perf_event_attr attr;   /* host byte order, zero-extended/truncated to sizeof */
	uint32_t attr_size;            /* attr.size as recorded */
	const char *name;              /* from EVENT_DESC / EVENT_UPDATE; may be NULL */
	const uint64_t *ids;           /* host order */
	size_t nr_ids;
};

struct pfc_hdr_view {
	const char *path;              /* input path as given, "-" for stdin */
	int pipe_mode;                 /* pipe stream (no file header sections) */
	int needs_swap;                /* blobs are in the other byte order */
	uint64_t data_offset, data_size, feat_offset;  /* 0 in pipe mode */
	uint64_t header_version;       /* 1 for PERFILE2 */
	uint64_t feat_bitmap[4];       /* features present (pipe mode: received as HEADER_FEATURE) */
	struct pfc_blob feat[256];     /* payload of each present feature */
	const struct pfc_hdr_evsel *evsels;   /* in file order, including the dummy event */
	size_t nr_evsels;
	int have_mtime;                /* mtime is valid ("captured on"); else the printer stats path */
	long long mtime;
	/* Addition (zero is the right default): */
	int is_dir;                    /* input is a perf.data directory: DIR_FORMAT processes */
};

/*
 * Print the header as `perf report --header-only` (full = -I).  Returns 0, or -1 when there was
 * no mtime and the input could not be stat'ed (perf then prints only the "# ========" lines).
 * Deliberate differences, for damaged files only: perf reads a file-mode feature from the file
 * without stopping at its section's end (here nothing past a blob is read); when processing has
 * stopped early perf fills cpuid and pmu mappings from the machine it runs on (here "(null)" and
 * "not available"); some truncated features crash perf (here what could be read is printed).
 */
int pfc_hdr_print(FILE *out, const struct pfc_hdr_view *v, int full);
struct pfc_reader;
/* The same from what a reader kept of the input at path; no_mtime prints no file time (the
 * fuzz target's memfd). */
int pfc_hdr_print_reader(FILE *out, const struct pfc_reader *rd, const char *path, int full, int no_mtime);

/* perf's default event name for an attr without a recorded name (evsel__name):
 * "cycles:u", "cpu-clock:pppH", "raw 0x1234", "mem:0x1000:rw", "unknown tracepoint", ...
 * Writes a NUL-terminated string, truncated to size; returns buf. */
char *pfc_hdr_format_name(char *buf, size_t size, const struct perf_event_attr *attr);

#endif
