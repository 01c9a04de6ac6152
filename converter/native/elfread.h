/*
 * elfread.h - how the native modules hand an ELF file to libelf.  perfconv maps it
 * (ELF_C_READ_MMAP: large files, only the pages used are read), and so does `make asan`
 * (see the Makefile).  The fuzz build reads it instead (-DPFC_ELF_C_READ=ELF_C_READ): each
 * section's data is then a
 * heap block of its size, so that ASan sees a read past a section, and a fuzz run does not
 * map and unmap its input (each unmap flushes the TLB of every CPU: a third of the time of
 * a run of fuzz_elf).
 */
#ifndef PFC_ELFREAD_H
#define PFC_ELFREAD_H

#include <libelf.h>

#ifndef PFC_ELF_C_READ
#define PFC_ELF_C_READ ELF_C_READ_MMAP
#endif

#endif
