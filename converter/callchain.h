/*
 * callchain.h - a sample's frames (callchain.c): the callchain walked as perf walks it, each
 * address looked up once per address space, into the frame ids of the sample being built.
 * The session embeds struct pfc_callchain: that buffer, the sample's time (sample.c sets it;
 * a JIT name may depend on it) and the cache of addresses' frames.
 */
#ifndef PFC_CALLCHAIN_H
#define PFC_CALLCHAIN_H

#include <stddef.h>
#include <stdint.h>

struct pfc_session;
struct pfc_thread;
struct pfc_map;
struct pfc_evsel;
struct pfc_sample;
struct pfc_addr_cache_ent;

struct pfc_callchain {
	uint32_t *frames;             /* frame ids of the sample being built */
	size_t frames_cap;
	uint64_t time;                /* the sample being built: its time, */
	int have_time;
	int timed;                    /* and whether a frame's name depended on it */
	struct pfc_addr_cache_ent *addr_cache; /* (maps, generation, address) -> frame id */
};

/* The frames of smp (lbr: perf-compat's LBR call stack for the user part) appended to
 * s->callchain.frames from *n on. */
int pfc_callchain_sample(struct pfc_session *s, struct pfc_evsel *ev, struct pfc_thread *th,
			 const struct pfc_sample *smp, int lbr, uint32_t *n);
/* Append one frame id. */
int pfc_callchain_push(struct pfc_session *s, uint32_t *n, uint32_t id);
/* Append the frame at ip in map (NULL: in no map), kernel or user; a user address in a
 * process with JIT symbol sources may be named by them (--resolve-jit). */
int pfc_callchain_add_map_frame(struct pfc_session *s, struct pfc_thread *th, uint32_t *n, int kernel, uint64_t ip,
				const struct pfc_map *map);
void pfc_callchain_exit(struct pfc_session *s);

#endif
