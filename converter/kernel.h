/*
 * kernel.h - the recorded kernel, for the session (kernel.c): its symbols, read on a second
 * thread from the first kernel address, the running kernel's identity, and the kernel map as
 * perf loads and stretches it.  The session embeds struct pfc_kernel_state; only kernel.c
 * and the frame lookup (callchain.c, which reads whether the kernel is settled) touch it.
 */
#ifndef PFC_KERNEL_H
#define PFC_KERNEL_H

#include <stddef.h>
#include <stdint.h>

struct pfc_session;
struct pfc_thread;
struct pfc_map;
struct pfc_symtab;
struct pfc_kernel_preload;

struct pfc_kernel_state {
	int loaded;                   /* the first kernel address was seen: symbols asked for */
	int why;                      /* why /proc/kallsyms does not serve (kernel_matches_running) */
	char running_path[3][4096];   /* running_file's answers */
	int default_tried;            /* perf-compat: kernel_default_range ran */
	struct pfc_kernel_preload *preload;
	int preload_wanted;           /* start it at the first kernel address */
	int pending;                  /* first kernel frame seen, preload still running */
	int preload_conflict;         /* a frame got a map perf would not have given it */
	size_t pending_frame0;        /* the first frame made while pending */
};

/* At open: whether to read the symbols on a second thread (opts->preload_kernel). */
void pfc_kernel_init(struct pfc_session *s);
/* The kernel map at a kernel address ip, as perf looks it up: the first hit loads the
 * kernel's symbols (which may shrink the map; the map found before stays the answer). */
const struct pfc_map *pfc_kernel_touch(struct pfc_session *s, struct pfc_thread *th, uint64_t ip);
/* The kernel's symbols into *t, which the preloaded table may replace (symbolize.c). */
int pfc_kernel_syms_read(struct pfc_session *s, struct pfc_symtab **t);
/* After the last record: settles a pending preload; -PFC_ERR_RETRY when frames were made
 * that the preload's table would have mapped otherwise (convert again without it). */
int pfc_kernel_finish(struct pfc_session *s);
void pfc_kernel_exit(struct pfc_session *s);

#endif
