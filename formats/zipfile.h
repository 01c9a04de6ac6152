/*
 * zipfile.h - a ZIP archive written entry by entry (zipfile.c): local headers completed in
 * place, zip64 fields where sizes or offsets need them, the central directory, and members
 * deflated (igzip level 1) from memory or a file, or stored.  What goes in is the caller's.
 */
#ifndef PFC_ZIPFILE_H
#define PFC_ZIPFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "converter/util/error.h"
#include "converter/util/tuning.h"

#ifndef PFC_ZIP64_FROM                          /* entries this large (or larger) get zip64 fields */
#define PFC_ZIP64_FROM 0xF0000000ull            /* (a build with a small value tests them) */
#endif

struct pfc_zip_ent;

struct pfc_zip {
	struct pfc_error *err;
	const struct pfc_tuning *tuning;  /* the tests' sizes of writeback and deflate; never NULL */
	const char *outname;          /* for messages */
	const char *prefix;           /* every entry's name starts with it ("NAME.trace/") */
	FILE *out;                    /* the caller's stream */
	FILE *fp;                     /* the archive's bytes go here: out, or a temporary file */
	uint64_t pos;                 /* where the next byte goes (offsets count from the stream's start) */
	int sync_fd;                  /* the output file, whose writeback pfc_zip_put starts; -1: none */
	uint64_t synced;              /* pos when it was last started */
	uint64_t sync_step;           /* WRITEBACK_STEP; PERFCONV_WRITEBACK_STEP for the tests */
	struct pfc_zip_ent *ent;      /* the entries written, for the central directory */
	size_t nr_ent, cap_ent;
	uint32_t dos_time;            /* entry times, MS-DOS format */
};

/* What an entry's directory record says of its bytes. */
struct pfc_zip_sum {
	uint32_t crc;
	uint64_t usize, csize;
	int text;                     /* marked text, by zlib's rule */
};

/* A deflate stream's destination: the open entry of zip, or (zip NULL) memory. */
struct pfc_zip_out {
	struct pfc_zip *zip;
	uint8_t *buf;                 /* the caller frees it */
	size_t len, cap;
};

/* Start an archive written to OUT (OUTNAME in messages), every entry's name starting with
 * PREFIX, which must outlive it.  The local headers are completed in place: a stream that
 * cannot seek (a pipe) gets the archive from a temporary file, at pfc_zip_finish.  TUNING
 * (NULL: none) must outlive it too. */
int pfc_zip_open(struct pfc_zip *z, FILE *out, const char *outname, const char *prefix,
		 const struct pfc_tuning *tuning, struct pfc_error *err);
/* Entry times from T (the recording's time, UTC); NULL, or outside 1980-2107: 1980-01-01. */
void pfc_zip_set_time(struct pfc_zip *z, const time_t *t);
/* The central directory and its end records, and the archive copied to OUT if it was not
 * written there. */
int pfc_zip_finish(struct pfc_zip *z);
void pfc_zip_free(struct pfc_zip *z);

/* An entry written in steps: begin (a folder: stored and empty; ZIP64: the entry may reach
 * 4 GiB), its raw deflate bytes put, then end with their sums. */
int pfc_zip_entry_begin(struct pfc_zip *z, const char *name, int folder, int zip64);
int pfc_zip_put(struct pfc_zip *z, const void *b, size_t n);
int pfc_zip_entry_end(struct pfc_zip *z, const struct pfc_zip_sum *sum);

/* Deflate the file F, or (F NULL) LEN bytes at MEM, into OUT; returns 0, -1 out of memory or
 * a write error (the archive's error set), -2 reading F failed (errno kept). */
int pfc_zip_deflate(FILE *f, const void *mem, size_t len, struct pfc_zip_out *out, struct pfc_zip_sum *sum);

/* Whole entries: N bytes at DATA; the file at PATH (1 when it cannot be opened or is not a
 * regular file, errno kept); a deflate stream made beforehand into memory from SIZE bytes. */
int pfc_zip_add_mem(struct pfc_zip *z, const char *name, const void *data, size_t n);
/* N bytes at DATA stored, not deflated: for readers that cannot take a short read of a deflated
 * entry (TraceEvent's of CTF metadata). */
int pfc_zip_add_stored(struct pfc_zip *z, const char *name, const void *data, size_t n);
int pfc_zip_add_file(struct pfc_zip *z, const char *name, const char *path);
int pfc_zip_add_deflated(struct pfc_zip *z, const char *name, uint64_t size, const struct pfc_zip_out *d,
			 const struct pfc_zip_sum *sum);

/* zlib's text mark of an entry (pfc_zip_sum.text), judged piece by piece: text when it is not
 * binary at the end and text was seen. */
struct pfc_zip_tmark {
	int binary, text;
};
void pfc_zip_tmark_add(struct pfc_zip_tmark *t, const uint8_t *b, size_t n);

#endif
