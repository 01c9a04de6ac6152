/* perfconv diff workload: three paths from main over one leaf, in two versions.
 *   version 1: main;path_steady;spin 100  main;path_grow;spin 50   main;path_shrink;spin 100
 *   version 2 (-DV2): path_grow three times heavier (150), path_shrink halved (50),
 *   path_steady unchanged (100).  Usage: diffwork [millions of iterations a unit, default 4] */
#include <stdlib.h>

#ifdef V2
#define GROW 150
#define SHRINK 50
#else
#define GROW 50
#define SHRINK 100
#endif
#define STEADY 100

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long spin(unsigned long n)
{
	volatile unsigned long x = 0; /* a stack slot: gcc keeps the frame-pointer prologue */
	for (unsigned long i = 0; i < n; i++) {
		x += i ^ (x >> 3);
		sink = x;
	}
	return x;
}

__attribute__((noinline)) unsigned long path_steady(unsigned long n) { return spin(n) + 1; }
__attribute__((noinline)) unsigned long path_grow(unsigned long n) { return spin(n) + 2; }
__attribute__((noinline)) unsigned long path_shrink(unsigned long n) { return spin(n) + 3; }

int main(int argc, char **argv)
{
	unsigned long unit = (argc > 1 ? strtoul(argv[1], NULL, 10) : 4) * 10000UL, r = 0;

	/* ten rounds, so that each path is sampled all through the run */
	for (int round = 0; round < 10; round++) {
		r += path_steady(STEADY * unit);
		r += path_grow(GROW * unit);
		r += path_shrink(SHRINK * unit);
	}
	return (int)(r & 1) * 0;
}
