/*
 * heap.c - how the process's heap is set up for a conversion: one arena, grown in large
 * steps and backed by transparent huge pages where the kernel allows it, once a process.
 * It owns no allocation of its own and changes nothing a conversion writes; mem.h gives
 * the large arrays their pages itself.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "cli/heap.h"

/*
 * A conversion of a few megabytes touches some 25 MB of fresh memory (its stacks and frames,
 * caches, perf maps and symbol tables, and the trace text in flight), and glibc takes it in 4
 * KiB pages: 6,000 page faults, a quarter of the CPU time of a small conversion on a virtual
 * machine, where a fault costs microseconds.  So the process's memory comes from one heap
 * (no arena per thread; blocks below HEAP_MMAP, which glibc would map one by one once it
 * raised its threshold, from the heap too) that is grown HEAP_PAD at a time, and the part of
 * it grown here is backed by transparent huge pages where the kernel allows it (THP
 * "madvise" mode): one fault per 2 MiB.  Larger blocks are mapped as before once the heap has
 * no room left for them (mem.h gives the large arrays huge pages itself), so that what a large
 * recording frees goes back to the system.  While it has room, a block of any size comes from
 * the heap, and calloc then clears all of it: a table of which few entries are written is
 * mapped apart (pfc_mem_sparse).  Done once a process; SKIP (PERFCONV_NO_HEAP_SETUP) leaves
 * glibc's defaults, to measure against.
 */
#define HEAP_PAD ((size_t)64 << 20)
#define HEAP_MMAP ((size_t)4 << 20)
void pfc_cli_heap_setup(int skip)
{
	static int done;
	uintptr_t lo, hi;
	void *p;

	if (done || skip)
		return;
	done = 1;
	if (!mallopt(M_ARENA_MAX, 1) || !mallopt(M_MMAP_THRESHOLD, (int)HEAP_MMAP) ||
	    !mallopt(M_TRIM_THRESHOLD, (int)(2 * HEAP_PAD)) || !mallopt(M_TOP_PAD, (int)HEAP_PAD))
		return;
	/* a block past what the heap has left grows it by the block and HEAP_PAD */
	lo = (uintptr_t)sbrk(0);
	if (!(p = malloc((size_t)1 << 20)))
		return;
	free(p);
	hi = (uintptr_t)sbrk(0);
	lo = (lo + ((uintptr_t)2 << 20) - 1) & ~(((uintptr_t)2 << 20) - 1);
	hi &= ~(((uintptr_t)2 << 20) - 1);
#ifdef MADV_HUGEPAGE
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);	/* a hint: an error changes nothing */
#endif
}
