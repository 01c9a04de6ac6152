/*
 * zipspill.h - a ZIP member deflated in pieces before its turn in the archive (several at
 * once), through a temporary file, and a thread that deflates such pieces in order (zipspill.c).
 */
#ifndef PFC_ZIPSPILL_H
#define PFC_ZIPSPILL_H

#include <pthread.h>
#include <stddef.h>
#include "converter/util/strbuf.h"
#include "formats/zipfile.h"

/* A member deflated in pieces before its turn (several at once): new (NULL without memory),
 * put its bytes (-1 on a failure, such as no temporary file for them, then also at add), then
 * add it to the archive whole, named NAME (or end its entry, when adopted), and free it. */
struct pfc_zip_spill;
struct pfc_zip_spill *pfc_zip_spill_new(void);
int pfc_zip_spill_put(struct pfc_zip_spill *s, const void *b, size_t n);
int pfc_zip_add_spill(struct pfc_zip *z, const char *name, struct pfc_zip_spill *s);
void pfc_zip_spill_free(struct pfc_zip_spill *s);

/* A thread that puts the pieces handed to it into their spills, in the order they came. */
#define PFC_ZIP_SPILL_JOBS 8
struct pfc_zip_spill_job {
	struct pfc_zip_spill *spill;
	struct pfc_sb b;
};

struct pfc_zip_spiller {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	pthread_t th;
	int started, stop, failed;
	struct pfc_zip_spill_job job[PFC_ZIP_SPILL_JOBS];  /* a ring: head, n */
	size_t head, n;
	struct pfc_sb spare[PFC_ZIP_SPILL_JOBS];  /* buffers back from the thread, for the next pieces */
	size_t nr_spare;
	int busy;                    /* the thread holds a job */
};

/* Start the thread (without one, each piece is deflated in line by put). */
void pfc_zip_spiller_start(struct pfc_zip_spiller *d);
/* Deflate b's bytes into spill: b is handed over and swapped for an empty buffer.  -1 when
 * deflating (this piece or an earlier one) failed. */
int pfc_zip_spiller_put(struct pfc_zip_spiller *d, struct pfc_zip_spill *spill, struct pfc_sb *b);
/* Make spill, still being filled, the archive's next entry, named NAME, now: the bytes
 * deflated so far go in, and the thread writes the rest there as it deflates them (the caller
 * leaves the archive alone until every piece is handed over and waited for, then ends the
 * entry with pfc_zip_add_spill).  The entry is not zip64: the caller knows the member stays
 * under 4 GiB.  0; 1 when no thread runs (nothing done); or the archive's negative error. */
int pfc_zip_spiller_adopt(struct pfc_zip_spiller *d, struct pfc_zip_spill *spill, struct pfc_zip *z, const char *name);
/* Wait until every piece handed over is deflated; -1 when one failed. */
int pfc_zip_spiller_wait(struct pfc_zip_spiller *d);
/* Stop the thread (after the pieces it holds) and free the buffers. */
void pfc_zip_spiller_end(struct pfc_zip_spiller *d);

#endif
