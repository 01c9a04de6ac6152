/*
 * tptext.h - the text of a session's tracepoint payloads, rendered once for the writers
 * that print perf script's `trace` field (perf-script text, trace.zip).
 */
#ifndef PFC_TPTEXT_H
#define PFC_TPTEXT_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "converter/util/error.h"

/* The payload text of a session's tracepoint samples, read back in stream order. */
struct pfc_session;
struct pfc_srec;
struct pfc_tptext {
	struct pfc_session *s;
	int (*wants)(void *arg, const struct pfc_srec *r);
	void *arg;
	FILE *f;                     /* "u32 length, text" per wanted sample; NULL: none rendered */
	char *text;                  /* the last payload read */
	size_t cap;
};

/*
 * Render the payload of every tracepoint sample of the stream that `wants` accepts (NULL:
 * all of them).  The framing is checked here; the formats go to libtraceevent only in a
 * child process, because libtraceevent trusts format text (a hostile one can crash it,
 * divide by zero or loop): then the payloads are lost, never the conversion.  In file mode
 * kernel function pointers (%ps, %pS) are named from the session's kernel symbols, as
 * perf script names them; a pipe stream's tracing data comes as a record after perf has
 * set its resolver, so there they stay numbers.  The text waits in a temporary file, so
 * memory does not grow with the number of samples.
 *
 * Returns 0, with *why set when the payloads are left out (no tracing data, the child
 * failed); or a negative error in err: out of memory (*why NULL), or the tracing data is
 * malformed (with its offset) or the child cannot be started, where *why is set too for a
 * caller that goes on without the payloads.  out gives nothing whenever *why is set.
 */
int pfc_tptext_render(struct pfc_session *s, int (*wants)(void *arg, const struct pfc_srec *r), void *arg,
		      struct pfc_tptext *out, const char **why, struct pfc_error *err);
/* The payload of the next sample of the stream: call it for every sample, in stream order
 * (after pfc_tptext_rewind, from the first one again).  *len 0: none.  0, or -1 when the
 * text cannot be read back (then every later sample has none). */
int pfc_tptext_next(struct pfc_tptext *t, const struct pfc_srec *r, const char **text, uint32_t *len);
int pfc_tptext_rewind(struct pfc_tptext *t);
void pfc_tptext_free(struct pfc_tptext *t);

#endif
