/*
 * r2rframes.h - names of ReadyToRun frames from their image's metadata, for the session
 * (r2rframes.c): one decoded image per DSO, made the first time a frame asks.
 */
#ifndef PFC_R2RFRAMES_H
#define PFC_R2RFRAMES_H

#include <stdint.h>
#include "converter/session.h"

/* The method whose code holds file offset off of d: 0 with its runtime-style name (kept
 * until pfc_r2rframes_free) and start offset, or -1. */
int pfc_r2rframes_name(struct pfc_session *s, const struct pfc_dso *d, uint64_t off, const char **name,
		       uint64_t *start);
/* d's file is known not to be the image that ran: never read it. */
void pfc_r2rframes_refuse(struct pfc_session *s, const struct pfc_dso *d);
void pfc_r2rframes_free(struct pfc_session *s);

#endif
