/*
 * stacks.c - the frame and stack tables behind stacks.h.  Both are hash tables over
 * arrays, so ids stay stable and the memory grows with unique stacks, not with samples.
 */
#include <stdlib.h>
#include <string.h>
#include "converter/util/mem.h"
#include "converter/machine/stacks.h"

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

int pfc_stacks_init(struct pfc_stacks *s)
{
	memset(s, 0, sizeof(*s));
	s->fhcap = 4096;
	s->fhash = calloc(s->fhcap, sizeof(*s->fhash));
	s->shcap = 4096;
	s->shead = malloc(s->shcap * sizeof(*s->shead));
	if (!s->fhash || !s->shead)
		return -1;
	memset(s->shead, 0xff, s->shcap * sizeof(*s->shead));
	return 0;
}

void pfc_stacks_exit(struct pfc_stacks *s)
{
	free(s->frames);
	free(s->fhash);
	free(s->stacks);
	free(s->shead);
	free(s->frame_ids);
	memset(s, 0, sizeof(*s));
}

static size_t frame_hash(const struct pfc_dso *dso, uint64_t addr, int kernel, uint32_t inl)
{
	return (size_t)mix64(addr ^ mix64((uint64_t)(uintptr_t)dso + (uint64_t)kernel + ((uint64_t)inl << 1)));
}

static int grow_fhash(struct pfc_stacks *s)
{
	size_t cap = s->fhcap * 2, i;
	uint32_t *h = pfc_mem_calloc(cap, sizeof(*h));

	if (!h)
		return -1;
	for (i = 0; i < s->nr_frames; i++) {
		const struct pfc_frame *f = &s->frames[i];
		size_t j = frame_hash(f->dso, f->addr, f->kernel, f->inl) & (cap - 1);
		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = (uint32_t)i + 1;
	}
	free(s->fhash);
	s->fhash = h;
	s->fhcap = cap;
	return 0;
}

uint32_t pfc_stacks_frame(struct pfc_stacks *s, const struct pfc_dso *dso, uint64_t addr, int kernel)
{
	return pfc_stacks_frame_inl(s, dso, addr, kernel, 0);
}

uint32_t pfc_stacks_frame_inl(struct pfc_stacks *s, const struct pfc_dso *dso, uint64_t addr, int kernel,
			      uint32_t inl)
{
	size_t j;
	struct pfc_frame *f;

	if ((s->nr_frames + 1) * 2 > s->fhcap && grow_fhash(s) < 0)
		return UINT32_MAX;
	j = frame_hash(dso, addr, kernel, inl) & (s->fhcap - 1);
	while (s->fhash[j]) {
		f = &s->frames[s->fhash[j] - 1];
		if (f->addr == addr && f->dso == dso && f->kernel == kernel && f->inl == inl)
			return s->fhash[j] - 1;
		j = (j + 1) & (s->fhcap - 1);
	}
	if (s->nr_frames == s->cap_frames) {
		size_t cap = s->cap_frames ? s->cap_frames * 2 : 1024;
		struct pfc_frame *n = pfc_mem_realloc(s->frames, s->nr_frames * sizeof(*n), cap * sizeof(*n));
		if (!n)
			return UINT32_MAX;
		s->frames = n;
		s->cap_frames = cap;
	}
	f = &s->frames[s->nr_frames];
	memset(f, 0, sizeof(*f));
	f->dso = dso;
	f->addr = addr;
	f->kernel = (uint8_t)kernel;
	f->inl = inl;
	s->fhash[j] = (uint32_t)s->nr_frames + 1;
	return (uint32_t)s->nr_frames++;
}

static uint32_t stack_hash(uint32_t evsel, uint32_t comm, int32_t pid, int32_t tid,
			   const uint32_t *frames, uint32_t nr)
{
	uint64_t h = mix64(((uint64_t)evsel << 32 | comm) ^ mix64((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid));
	uint32_t i;

	for (i = 0; i < nr; i++)
		h = mix64(h ^ frames[i]) + i;
	return (uint32_t)(h ^ (h >> 32));
}

static int grow_shash(struct pfc_stacks *s)
{
	size_t cap = s->shcap * 2, i;
	uint32_t *h = pfc_mem_alloc(cap * sizeof(*h));

	if (!h)
		return -1;
	memset(h, 0xff, cap * sizeof(*h));
	for (i = 0; i < s->nr_stacks; i++) {
		size_t b = s->stacks[i].hash & (cap - 1);
		s->stacks[i].hnext = h[b];
		h[b] = (uint32_t)i;
	}
	free(s->shead);
	s->shead = h;
	s->shcap = cap;
	return 0;
}

uint32_t pfc_stacks_add(struct pfc_stacks *s, uint32_t evsel, uint32_t comm, int32_t pid, int32_t tid,
			const uint32_t *frames, uint32_t nr, uint64_t period)
{
	uint32_t h = stack_hash(evsel, comm, pid, tid, frames, nr), i;
	struct pfc_stack *st;

	for (i = s->shead[h & (s->shcap - 1)]; i != UINT32_MAX; i = s->stacks[i].hnext) {
		st = &s->stacks[i];
		if (st->hash == h && st->nr == nr && st->evsel == evsel && st->comm == comm &&
		    st->pid == pid && st->tid == tid &&
		    (!nr || !memcmp(s->frame_ids + st->first, frames, nr * sizeof(*frames)))) {
			st->period += period;
			st->count++;
			return i;
		}
	}
	if (s->nr_stacks + 1 > s->shcap && grow_shash(s) < 0)
		return UINT32_MAX;
	if (s->nr_stacks == s->cap_stacks) {
		size_t cap = s->cap_stacks ? s->cap_stacks * 2 : 1024;
		struct pfc_stack *n = pfc_mem_realloc(s->stacks, s->nr_stacks * sizeof(*n), cap * sizeof(*n));
		if (!n)
			return UINT32_MAX;
		s->stacks = n;
		s->cap_stacks = cap;
	}
	if (s->nr_ids + nr > s->cap_ids) {
		size_t cap = s->cap_ids ? s->cap_ids * 2 : 4096;
		uint32_t *n;
		while (cap < s->nr_ids + nr)
			cap *= 2;
		n = pfc_mem_realloc(s->frame_ids, s->nr_ids * sizeof(*n), cap * sizeof(*n));
		if (!n)
			return UINT32_MAX;
		s->frame_ids = n;
		s->cap_ids = cap;
	}
	if (nr)	/* a sample without frames may come before any frame buffer exists */
		memcpy(s->frame_ids + s->nr_ids, frames, nr * sizeof(*frames));
	st = &s->stacks[s->nr_stacks];
	st->evsel = evsel;
	st->comm = comm;
	st->pid = pid;
	st->tid = tid;
	st->nr = nr;
	st->first = (uint32_t)s->nr_ids;
	st->period = period;
	st->count = 1;
	st->hash = h;
	st->hnext = s->shead[h & (s->shcap - 1)];
	s->shead[h & (s->shcap - 1)] = (uint32_t)s->nr_stacks;
	s->nr_ids += nr;
	return (uint32_t)s->nr_stacks++;
}
