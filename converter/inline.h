/*
 * inline.h - inlined frames of DWARF-unwound user frames, for the session (inline.c): what
 * addr2line says is inlined at (DSO, address), asked once and kept.  The session embeds
 * struct pfc_inline_state; inline.c alone touches it.
 */
#ifndef PFC_INLINE_H
#define PFC_INLINE_H

#include <stddef.h>
#include <stdint.h>

struct pfc_session;
struct pfc_thread;
struct pfc_inline_dso;
struct pfc_inline_ent;
struct pfc_inline_name;

struct pfc_inline_state {
	struct pfc_inline_dso *dsos;  /* by DSO id: its addr2line handle */
	size_t nr_dsos;
	struct pfc_inline_ent *cache; /* (DSO, address) -> its names in names[] */
	size_t cap, count;
	struct pfc_inline_name *names;
	size_t nr_names, cap_names;
};

/* One unwound user frame at ip, with the inlined frames perf adds in front of it. */
int pfc_inline_add_frame(struct pfc_session *s, struct pfc_thread *th, uint32_t *n, uint64_t ip);
void pfc_inline_exit(struct pfc_session *s);

#endif
