/*
 * unwind_user.h - --call-graph dwarf for the session (unwind_user.c): a sample's user stack
 * unwound from its copy, through each DSO's call frame information, and a cache of stacks
 * already unwound.  The session embeds struct pfc_unwind_state; unwind_user.c alone
 * touches it.
 */
#ifndef PFC_UNWIND_USER_H
#define PFC_UNWIND_USER_H

#include <stddef.h>
#include <stdint.h>

struct pfc_session;
struct pfc_thread;
struct pfc_sample;
struct pfc_dso;
struct pfc_cfi;
struct pfc_unwind_dso;
struct pfc_stack_cache_ent;

struct pfc_unwind_state {
	int arch;                     /* enum pfc_unwind_arch of the recording's ARCH; -1 until read */
	struct pfc_unwind_dso *dsos;  /* by DSO id: its call frame information */
	size_t nr_dsos;
	/* identical stacks (registers, bytes, address space) -> their user frames */
	struct pfc_stack_cache_ent *cache;
	size_t cache_cap, cache_count;
	uint32_t cache_probed, cache_hits; /* lookups and hits in the current window */
	uint32_t cache_off;           /* stacks left to unwind without it (it did not pay) */
	uint32_t cache_window;        /* lookups per window (PERFCONV_UC_WINDOW: tests use small ones) */
	uint32_t *cache_frames;       /* the cached stacks' frame ids */
	size_t nr_cache_frames, cap_cache_frames;
	uint64_t *ips;                /* the addresses the unwinder found in one stack */
};

/* perf's thread__resolve_callchain_unwind: the user stack of a sample recorded with
 * REGS_USER and STACK_USER, appended to the frames after the kernel part. */
int pfc_unwind_user(struct pfc_session *s, struct pfc_thread *th, const struct pfc_sample *smp, uint32_t *n);
/* A file DSO's call frame information, opened at first use (NULL: none); an .apk member's
 * also gives the image its symbols are read from. */
struct pfc_cfi *pfc_unwind_dso_cfi(struct pfc_session *s, const struct pfc_dso *d);
void pfc_unwind_exit(struct pfc_session *s);

#endif
