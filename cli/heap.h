/*
 * heap.h - the process's heap set up for conversions: one arena, large steps, huge pages
 * (heap.c).
 */
#ifndef PFC_CLI_HEAP_H
#define PFC_CLI_HEAP_H

/* Once a process, before the first conversion; SKIP (PERFCONV_NO_HEAP_SETUP, env.c) leaves
 * glibc's defaults. */
void pfc_cli_heap_setup(int skip);

#endif
