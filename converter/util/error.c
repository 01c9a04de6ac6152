/*
 * error.c - messages for the error codes in error.h and the helper that records an
 * error with its file offset.  Printing is left to the command-line layer.
 */
#include <stdio.h>
#include <string.h>
#include "converter/util/error.h"

#define PFC_E_MSG(name, msg) [PFC_ERR_##name] = msg,
static const char *const pfc_messages[] = { PFC_ERRORS(PFC_E_MSG) };
#undef PFC_E_MSG

const char *pfc_strerror(int code)
{
	if (code < 0)
		code = -code;
	if (code >= PFC_ERR__MAX)
		return "unknown error";
	return pfc_messages[code];
}

int pfc_error_set(struct pfc_error *e, int code, int has_offset, uint64_t offset,
		  const char *src_file, int src_line, const char *fmt, ...)
{
	va_list ap;

	if (e && !e->code) {	/* keep the first error: it is the cause */
		e->code = code;
		e->has_offset = has_offset;
		e->offset = offset;
		e->src_file = src_file;
		e->src_line = src_line;
		va_start(ap, fmt);
		vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
		va_end(ap);
	}
	return -code;
}
