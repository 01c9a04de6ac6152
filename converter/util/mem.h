/*
 * mem.h - allocation for the large arrays that grow while a recording is read (callchain
 * cache, stacks, symbol tables, the ordering queue).  From 2 MiB on they are aligned to
 * 2 MiB and backed by transparent huge pages where the kernel allows it (THP "madvise"
 * mode): filling them then costs one page fault per 2 MiB rather than one per 4 KiB, and
 * on a virtual machine a page fault costs microseconds.  Free them with free().
 */
#ifndef PFC_MEM_H
#define PFC_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PFC_MEM_HUGE ((size_t)2 << 20)

static inline void *pfc_mem_alloc(size_t n)
{
	void *p;

	if (n < PFC_MEM_HUGE)
		return malloc(n ? n : 1);
	n = (n + PFC_MEM_HUGE - 1) & ~(PFC_MEM_HUGE - 1);
	if (posix_memalign(&p, PFC_MEM_HUGE, n))
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, n, MADV_HUGEPAGE);	/* a hint: an error changes nothing */
#endif
	return p;
}

static inline void *pfc_mem_calloc(size_t nmemb, size_t size)
{
	void *p;

	if (size && nmemb > SIZE_MAX / size)
		return NULL;
	if (nmemb * size < PFC_MEM_HUGE)
		return calloc(nmemb ? nmemb : 1, size ? size : 1);
	p = pfc_mem_alloc(nmemb * size);
	if (p)
		memset(p, 0, nmemb * size);
	return p;
}

/*
 * A zeroed table of which only a few entries are ever written (a cache indexed by hash, a
 * symbol table filled as lookups reach it): from PFC_MEM_SPARSE on, mapped on its own, so
 * that only the pages written are backed.  calloc would clear all of it whenever the heap has
 * room for it (pfc_cli_heap_setup in cli/heap.c keeps room), and under huge pages clear 2 MiB for
 * each entry written.  Smaller ones come from calloc: clearing them costs less than a
 * mapping.  Free with pfc_mem_sparse_free(p, n), n as allocated.
 */
#define PFC_MEM_SPARSE ((size_t)256 << 10)

static inline void *pfc_mem_sparse(size_t n)
{
	void *p;

	if (n < PFC_MEM_SPARSE)
		return calloc(1, n ? n : 1);
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static inline void pfc_mem_sparse_free(void *p, size_t n)
{
	if (!p)
		return;
	if (n < PFC_MEM_SPARSE)
		free(p);
	else
		munmap(p, n);
}

/* realloc for an array that had `old` bytes in use (a copy from 2 MiB on). */
static inline void *pfc_mem_realloc(void *p, size_t old, size_t n)
{
	void *q;

	if (n < PFC_MEM_HUGE)
		return realloc(p, n ? n : 1);
	if (!(q = pfc_mem_alloc(n)))
		return NULL;
	if (p)
		memcpy(q, p, old < n ? old : n);
	free(p);
	return q;
}

#endif
