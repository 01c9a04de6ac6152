/*
 * test_speedscope.c - tests the JSON string escaper of the speedscope writer.  Fixed
 * cases check the exact escapes; then every byte string of one and two bytes, and every
 * string of three and four bytes over the bytes where UTF-8 decoding changes its mind,
 * is compared with a second, independent decoder (by code point range, not by lead-byte
 * table): the output must keep each well-formed character and turn each other byte into
 * U+FFFD.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/speedscope.h"

static int passed, failed;

#define CHECK(cond, ...) do { \
		if (cond) { \
			passed++; \
		} else { \
			failed++; \
			if (failed <= 20) { \
				fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
				fprintf(stderr, __VA_ARGS__); \
				fputc('\n', stderr); \
			} \
		} \
	} while (0)

static void show(char *dst, size_t cap, const char *s, size_t n)
{
	size_t i, w = 0;

	for (i = 0; i < n && w + 5 < cap; i++)
		w += (size_t)snprintf(dst + w, cap - w, "%02x ", (unsigned char)s[i]);
	dst[w] = 0;
}

static void fixed(const char *in, size_t n, const char *want)
{
	struct pfc_sb b = { 0 };
	char hex[128];

	pfc_json_string(&b, in, n);
	show(hex, sizeof(hex), in, n);
	CHECK(!b.oom && b.len == strlen(want) && !memcmp(b.buf, want, b.len), "[%s] -> %s, want %s", hex,
	      b.buf ? b.buf : "(null)", want);
	pfc_sb_free(&b);
}

/* The reference: decode by bit pattern, then reject by code point. */
static void reference(struct pfc_sb *b, const unsigned char *s, size_t n)
{
	static const unsigned long min_cp[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t i = 0;

	pfc_sb_addc(b, '"');
	while (i < n) {
		unsigned char c = s[i];
		size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
		unsigned long cp = len == 1 ? c : len == 2 ? (c & 0x1fu) : len == 3 ? (c & 0x0fu) : (c & 0x07u);
		size_t k;
		int ok = len > 0 && n - i >= len;

		for (k = 1; ok && k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				ok = 0;
			cp = cp << 6 | (s[i + k] & 0x3fu);
		}
		if (ok && (cp < min_cp[len] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff))
			ok = 0;
		if (!ok) {
			pfc_sb_adds(b, "\\ufffd");
			i++;
			continue;
		}
		if (cp == '"')
			pfc_sb_adds(b, "\\\"");
		else if (cp == '\\')
			pfc_sb_adds(b, "\\\\");
		else if (cp < 0x20 || cp == 0x2028 || cp == 0x2029) {
			static const char *const named[0x20] = { ['\b'] = "\\b", ['\f'] = "\\f", ['\n'] = "\\n",
								 ['\r'] = "\\r", ['\t'] = "\\t" };
			if (cp < 0x20 && named[cp])
				pfc_sb_adds(b, named[cp]);
			else
				pfc_sb_addf(b, "\\u%04lx", cp);
		} else {
			pfc_sb_add(b, (const char *)s + i, len);
		}
		i += len;
	}
	pfc_sb_addc(b, '"');
}

static void compare(const unsigned char *s, size_t n)
{
	struct pfc_sb got = { 0 }, want = { 0 };
	char hex[64];

	pfc_json_string(&got, (const char *)s, n);
	reference(&want, s, n);
	if (got.len == want.len && !memcmp(got.buf, want.buf, got.len)) {
		passed++;
	} else {
		show(hex, sizeof(hex), (const char *)s, n);
		CHECK(0, "[%s] -> %s, reference %s", hex, got.buf, want.buf);
	}
	pfc_sb_free(&got);
	pfc_sb_free(&want);
}

int main(void)
{
	static const unsigned char edges[] = {
		0x00, 0x01, 0x08, 0x1f, 0x20, 0x22, 0x41, 0x5c, 0x7f, 0x80, 0x81, 0x8f, 0x90, 0x9f, 0xa0,
		0xa8, 0xa9, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xe2, 0xec, 0xed, 0xee, 0xef, 0xf0,
		0xf1, 0xf3, 0xf4, 0xf5, 0xf8, 0xfe, 0xff,
	};
	const size_t ne = sizeof(edges);
	unsigned char s[4];
	size_t a, b, c, d;

	fixed("", 0, "\"\"");
	fixed("main", 4, "\"main\"");
	fixed("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
	fixed("x\ty\nz\r\b\f", 8, "\"x\\ty\\nz\\r\\b\\f\"");
	fixed("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\x7f\"");
	fixed("a\0b", 3, "\"a\\u0000b\"");
	fixed("caf\xc3\xa9", 5, "\"caf\xc3\xa9\"");                  /* é kept */
	fixed("\xe2\x82\xac\xf0\x9f\x94\xa5", 7, "\"\xe2\x82\xac\xf0\x9f\x94\xa5\""); /* € and U+1F525 kept */
	fixed("\xe2\x80\xa8\xe2\x80\xa9", 6, "\"\\u2028\\u2029\"");
	fixed("\xff", 1, "\"\\ufffd\"");
	fixed("\xc3", 1, "\"\\ufffd\"");                               /* cut sequence */
	fixed("\xc3(", 2, "\"\\ufffd(\"");
	fixed("\xc0\xaf", 2, "\"\\ufffd\\ufffd\"");                    /* overlong '/' */
	fixed("\xe0\x80\xaf", 3, "\"\\ufffd\\ufffd\\ufffd\"");         /* overlong */
	fixed("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"");         /* surrogate U+D800 */
	fixed("\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* above U+10FFFF */
	fixed("\xe2\x82", 2, "\"\\ufffd\\ufffd\"");
	fixed("std::vector<int, std::allocator<int> >::push_back(int const&)", 61,
	      "\"std::vector<int, std::allocator<int> >::push_back(int const&)\"");

	for (a = 0; a < 256; a++) {
		s[0] = (unsigned char)a;
		compare(s, 1);
		for (b = 0; b < 256; b++) {
			s[1] = (unsigned char)b;
			compare(s, 2);
		}
	}
	for (a = 0; a < ne; a++)
		for (b = 0; b < ne; b++)
			for (c = 0; c < ne; c++) {
				s[0] = edges[a], s[1] = edges[b], s[2] = edges[c];
				compare(s, 3);
				for (d = 0; d < ne; d++) {
					s[3] = edges[d];
					compare(s, 4);
				}
			}
	printf("test_speedscope: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
