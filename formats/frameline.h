/*
 * frameline.h - one callchain frame as perf script prints it ("\t%16llx sym+0xoff (dso)\n",
 * perf's sample__fprintf_callchain), for the writers of perf script's text: the perf-script
 * output and trace.zip's perf.data.txt.  Which frames a sample prints, and where the line
 * goes, are the writers' business.
 */
#ifndef PFC_FRAMELINE_H
#define PFC_FRAMELINE_H

#include <stddef.h>
#include "converter/machine/intern.h"
#include "converter/machine/stacks.h"

/* Bytes a frame line may take beyond its symbol's and its DSO's names. */
#define PFC_FRAMELINE_FIXED 64

/* How a name goes into the line: n bytes of s at d, returning the end.  NULL: as they are. */
typedef char *pfc_frameline_put(char *d, const char *s, size_t n);

/* The bytes f's line may take: pfc_frameline_fmt writes no more. */
size_t pfc_frameline_room(const struct pfc_intern *strings, const struct pfc_frame *f);

/* f's line into d with the PFC_PS_SYM, PFC_PS_SYMOFF and PFC_PS_DSO bits of fields
 * (formats/perfscript.h), its names through put; returns its length. */
size_t pfc_frameline_fmt(char *d, const struct pfc_intern *strings, const struct pfc_frame *f, unsigned fields,
			 pfc_frameline_put *put);

#endif
