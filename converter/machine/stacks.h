/*
 * stacks.h - aggregation of samples before symbolization.  A frame is (DSO, address in
 * the DSO's map_ip space) and is interned once; a stack is (event, thread identity,
 * frame ids) and carries the sum of periods and the sample count.  Symbols are resolved
 * afterwards, once per unique frame (symbolize.c).
 */
#ifndef PFC_STACKS_H
#define PFC_STACKS_H

#include <stddef.h>
#include <stdint.h>

struct pfc_dso;

struct pfc_frame {
	const struct pfc_dso *dso;  /* NULL: no map */
	uint64_t addr;              /* map_ip address (what perf prints), raw ip when no map */
	uint8_t kernel;             /* looked up in kernel context */
	uint32_t inl;               /* an inlined function at addr (DWARF-unwound frames, as perf
				     * names them): its interned name + 1; 0 = the symbol itself */
	/* filled by symbolization */
	uint8_t resolved;           /* a symbol was found */
	uint8_t inlined;            /* sym is inl's name: printed "(inlined)" in place of the DSO */
	uint32_t sym;               /* interned display name when resolved (folded, SVG, speedscope) */
	uint32_t sym_text;          /* the name the text formats print (perf-script, trace.zip) */
	uint64_t symoff;
};

struct pfc_stack {
	uint32_t evsel;
	uint32_t comm;              /* interned comm at sample time */
	int32_t pid, tid;
	uint32_t nr;                /* frames, leaf first */
	uint32_t first;             /* index into pfc_stacks.frame_ids */
	uint64_t period;            /* sum of periods */
	uint64_t count;             /* number of samples */
	uint32_t hnext;             /* hash chain, UINT32_MAX = end */
	uint32_t hash;
};

struct pfc_stacks {
	struct pfc_frame *frames;
	size_t nr_frames, cap_frames;
	uint32_t *fhash;            /* open addressing: frame id + 1 */
	size_t fhcap;

	struct pfc_stack *stacks;
	size_t nr_stacks, cap_stacks;
	uint32_t *shead;            /* bucket heads */
	size_t shcap;
	uint32_t *frame_ids;
	size_t nr_ids, cap_ids;
};

int pfc_stacks_init(struct pfc_stacks *s);
void pfc_stacks_exit(struct pfc_stacks *s);
/* Returns the frame id or UINT32_MAX on out of memory. */
uint32_t pfc_stacks_frame(struct pfc_stacks *s, const struct pfc_dso *dso, uint64_t addr, int kernel);
/* The same for the frame of an inlined function (inl: its interned name + 1, 0 = none). */
uint32_t pfc_stacks_frame_inl(struct pfc_stacks *s, const struct pfc_dso *dso, uint64_t addr, int kernel,
			      uint32_t inl);
static inline void pfc_stacks_bump(struct pfc_stacks *s, uint32_t id, uint64_t period)
{
	s->stacks[id].period += period;
	s->stacks[id].count++;
}

/*
 * Whether frame ids[k] of a stack (leaf first) continues a run of unnamed frames of one DSO
 * begun at its callee ids[k - 1]: "[libcoreclr.so]" twelve times over says no more than once,
 * so the aggregating writers leave it out under pfc_opts.fold_runs.  The run keeps its
 * leaf-most frame, where the time was spent.  Only after symbolization.
 */
static inline int pfc_stacks_run_tail(const struct pfc_stacks *s, const uint32_t *ids, size_t k)
{
	const struct pfc_frame *f, *callee;

	if (!k)
		return 0;
	f = &s->frames[ids[k]];
	callee = &s->frames[ids[k - 1]];
	return !f->resolved && !callee->resolved && f->dso && f->dso == callee->dso && f->kernel == callee->kernel;
}

/* Adds one sample; returns the stack id or UINT32_MAX. */
uint32_t pfc_stacks_add(struct pfc_stacks *s, uint32_t evsel, uint32_t comm, int32_t pid, int32_t tid,
			const uint32_t *frames, uint32_t nr, uint64_t period);

#endif
