/*
 * symbolize.h - names for the session's frames (symbolize.c): a DSO's symbols loaded at
 * first need, and every unique frame named once after the records are read.  The session
 * embeds struct pfc_symbolize_state, which symbolize.c alone writes.
 */
#ifndef PFC_SYMBOLIZE_H
#define PFC_SYMBOLIZE_H

#include <stddef.h>

struct pfc_session;
struct pfc_dso;
struct pfc_perfinfo;

struct pfc_symbolize_state {
	char **symsrc;                /* by DSO id: the file its symbols came from (perf's symsrc_filename) */
	size_t nr_symsrc;
	struct pfc_perfinfo *perfinfo; /* perfinfo-PID.map of the recorded processes, read on first use */
};

/* Load d's names (d->syms, d->perfmap, ...) once: sets d->loaded. */
void pfc_symbolize_dso(struct pfc_session *s, struct pfc_dso *d);
void pfc_symbolize_exit(struct pfc_session *s);

#endif
