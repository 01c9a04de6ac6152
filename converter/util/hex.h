/*
 * hex.h - bytes as hexadecimal text: build-ids, signatures, tags.  One formatter, so that a
 * cache key, a member name and a message spell the same bytes the same way (perf's
 * build_id__sprintf).  Not numbers: an address in hex is strbuf.h's pfc_sb_addhex, and
 * reading hex is bytes.h's pfc_parse_hex.
 */
#ifndef PFC_HEX_H
#define PFC_HEX_H

#include <stddef.h>
#include <stdint.h>

static inline char *pfc_hex_digits(char *out, const void *bytes, size_t n, const char *digits)
{
	const uint8_t *b = bytes;
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
	return out;
}

/* n bytes as 2n lowercase digits and a NUL into out, which holds 2n + 1 bytes; returns out */
static inline char *pfc_hex_format(char *out, const void *bytes, size_t n)
{
	return pfc_hex_digits(out, bytes, n, "0123456789abcdef");
}

/* the same in uppercase, as .NET spells a ReadyToRun image's signature */
static inline char *pfc_hex_format_upper(char *out, const void *bytes, size_t n)
{
	return pfc_hex_digits(out, bytes, n, "0123456789ABCDEF");
}

#endif
