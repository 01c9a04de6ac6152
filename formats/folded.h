/*
 * folded.h - the stackcollapse-perf.pl rules of folded.c, exposed for unit tests: they
 * work on perf-script text lines exactly as the script sees them.
 */
#ifndef PFC_FOLDED_H
#define PFC_FOLDED_H

#include <stddef.h>
#include "converter/strbuf.h"
#include "formats/writer.h"

/* ^(\S.+?)\s+(\d+)\/<star>(\d+)<star>\s+ on an event line (<star> = "*"); tid NULL = no tid. */
int pfc_folded_match_event_start(const char *s, size_t n, size_t *comm_len, const char **pid, size_t *pid_len,
				 const char **tid, size_t *tid_len);
/* :\s*(\d+)*\s+(\S+):\s*$ ; per NULL = no period digits. */
int pfc_folded_match_event_name(const char *s, size_t n, const char **per, size_t *per_len, const char **ev,
				size_t *ev_len);
/* A frame line -> its folded pieces joined by ';' (appended to out; nothing when dropped). */
int pfc_folded_frame_text(const char *line, size_t n, int java, const struct pfc_wopts *o, struct pfc_sb *out);

#endif
