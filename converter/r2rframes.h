/*
 * r2rframes.h - names of ReadyToRun frames from their image's metadata, for the session
 * (r2rframes.c): one decoded image per DSO, made the first time a frame asks.  The session
 * embeds struct pfc_r2rframes, which r2rframes.c alone writes; its cache counts reach the
 * session's statistics when symbolization ends.
 */
#ifndef PFC_R2RFRAMES_H
#define PFC_R2RFRAMES_H

#include <stddef.h>
#include <stdint.h>

struct pfc_session;
struct pfc_dso;
struct pfc_r2rmeta_slot;

struct pfc_r2rframes {
	struct pfc_r2rmeta_slot *slots;  /* by DSO id: ReadyToRun code maps from image metadata */
	size_t nr_slots;
	/* images whose method names came from the symbol cache, whose names were made and
	 * written, and corrupt entries among the latter */
	uint64_t nr_cache_hits, nr_cache_misses, nr_cache_corrupt;
};

/* The method whose code holds file offset off of d: 0 with its runtime-style name (kept
 * until pfc_r2rframes_free) and start offset, or -1. */
int pfc_r2rframes_name(struct pfc_session *s, const struct pfc_dso *d, uint64_t off, const char **name,
		       uint64_t *start);
/* d's file is known not to be the image that ran: never read it. */
void pfc_r2rframes_refuse(struct pfc_session *s, const struct pfc_dso *d);
void pfc_r2rframes_free(struct pfc_session *s);

#endif
