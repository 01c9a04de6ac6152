/*
 * folded.h - the stackcollapse-perf.pl rules of folded.c, exposed for unit tests (they
 * work on perf-script text lines exactly as the script sees them), and the walk over the
 * folded stacks that other writers draw from (svg.c), so they show the same profile.
 */
#ifndef PFC_FOLDED_H
#define PFC_FOLDED_H

#include <stddef.h>
#include "converter/util/strbuf.h"
#include "formats/writer.h"

/* ^(\S.+?)\s+(\d+)\/<star>(\d+)<star>\s+ on an event line (<star> = "*"); tid NULL = no tid. */
int pfc_folded_match_event_start(const char *s, size_t n, size_t *comm_len, const char **pid, size_t *pid_len,
				 const char **tid, size_t *tid_len);
/* :\s*(\d+)*\s+(\S+):\s*$ ; per NULL = no period digits. */
int pfc_folded_match_event_name(const char *s, size_t n, const char **per, size_t *per_len, const char **ev,
				size_t *ev_len);
/* A frame line -> its folded pieces joined by ';' (appended to out; nothing when dropped). */
int pfc_folded_frame_text(const char *line, size_t n, int java, const struct pfc_wopts *o, struct pfc_sb *out);

/* A frame as the folded output names it: its text may hold several names joined by ';'
 * (the pieces of an inlined "a->b" name). */
struct pfc_folded_piece {
	const char *text;
	size_t len;
	uint32_t frame;             /* pfc_stacks frame id it comes from */
};

/* One stack the script keeps: the process name it puts first (after --pid/--tid), the
 * frames root first (frames it drops are left out) and the weight it adds (the sum of
 * periods, or of samples).  Returns 0, or a negative error code that stops the walk. */
typedef int (*pfc_folded_fn)(void *arg, const struct pfc_stack *st, const char *pname, size_t pname_len,
			     const struct pfc_folded_piece *pieces, size_t nr, uint64_t weight);

/* Calls fn for every stack of the folded output, in the session's stack order (stacks of
 * the same text are not merged).  Returns 0, or a negative error code. */
int pfc_folded_walk(struct pfc_session *s, const struct pfc_wopts *o, pfc_folded_fn fn, void *arg,
		    struct pfc_error *err);

#endif
