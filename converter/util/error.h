/*
 * error.h - perfconv's error values.  Every failure is a negative code from one X-macro
 * list that also generates its message; a failure found in input bytes also records the
 * file offset and a short detail in struct pfc_error, so that only the command-line layer
 * prints anything.
 */
#ifndef PFC_ERROR_H
#define PFC_ERROR_H

#include <stdint.h>
#include <stdarg.h>

#define PFC_ERRORS(_E) \
	_E(OK, "success") \
	_E(NOMEM, "out of memory") \
	_E(IO, "read error") \
	_E(OPEN, "cannot open") \
	_E(BAD_MAGIC, "not a perf.data file (bad magic)") \
	_E(TRUNCATED, "file is truncated") \
	_E(CORRUPT, "corrupt record") \
	_E(BAD_HEADER, "corrupt file header") \
	_E(BAD_ATTR, "corrupt event attribute") \
	_E(BAD_FEATURE, "corrupt feature section") \
	_E(UNSUPPORTED, "unsupported input") \
	_E(ZSTD, "zstd decompression failed") \
	_E(WRITE, "write error") \
	_E(USAGE, "usage error") \
	_E(RETRY, "must be converted again without the kernel symbol preload")

#define PFC_E_ENUM(name, msg) PFC_ERR_##name,
enum pfc_errcode { PFC_ERRORS(PFC_E_ENUM) PFC_ERR__MAX };
#undef PFC_E_ENUM

struct pfc_error {
	int code;              /* PFC_ERR_*, positive; 0 = none */
	int has_offset;
	uint64_t offset;       /* file offset (or stream offset in pipe mode) of the bad bytes */
	const char *src_file;  /* source location that detected it, for -v */
	int src_line;
	char detail[256];
	char file[512];        /* the file the bad bytes are in, when not the input (a jitdump) */
};

const char *pfc_strerror(int code);

/* Record an error and return -code; use through PFC_FAIL so the source line is kept
 * (the idea of sqlite's SQLITE_CORRUPT_BKPT). */
int pfc_error_set(struct pfc_error *e, int code, int has_offset, uint64_t offset,
		  const char *src_file, int src_line, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

#define PFC_FAIL(e, code, off, ...) \
	pfc_error_set((e), PFC_ERR_##code, 1, (off), __FILE__, __LINE__, __VA_ARGS__)
#define PFC_FAIL_NOOFF(e, code, ...) \
	pfc_error_set((e), PFC_ERR_##code, 0, 0, __FILE__, __LINE__, __VA_ARGS__)

#endif
