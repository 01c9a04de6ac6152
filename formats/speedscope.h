/*
 * speedscope.h - the parts of speedscope.c other writers and the unit tests use: the JSON
 * string escaper, which turns any bytes (frame names from hostile input) into valid UTF-8
 * JSON, and the name a frame is shown by (firefox.c shows frames by the same names).
 */
#ifndef PFC_SPEEDSCOPE_H
#define PFC_SPEEDSCOPE_H

#include <stddef.h>
#include "converter/util/strbuf.h"

/* Appends s[0..n) to out as a JSON string literal, quotes included.  Quotes, backslashes
 * and control bytes are escaped, U+2028/U+2029 too (so the text is also valid
 * JavaScript); every byte that is not part of a well-formed UTF-8 sequence (stray
 * continuation bytes, overlong forms, surrogates, code points above U+10FFFF, cut
 * sequences) becomes U+FFFD. */
void pfc_json_string(struct pfc_sb *out, const char *s, size_t n);

struct pfc_session;
struct pfc_frame;
/* Appends a frame's display name to out: its symbol (.NET names in the --dotnet-names form
 * of the folded output), else "[dso]" by the DSO's file name, else "[unknown]". */
void pfc_frame_display_name(const struct pfc_session *s, const struct pfc_frame *f, struct pfc_sb *out);

#endif
