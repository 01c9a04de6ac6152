/*
 * unwind.h - DWARF unwinding of `perf record --call-graph dwarf` samples (x86-64, aarch64): the
 * call frame information of one ELF file (its .eh_frame through .eh_frame_hdr, as perf
 * reads it), and the walk from a sample's user registers through its copied stack bytes
 * with perf 6.1's libunwind rules (what is read, where it stops, return address - 1).
 * Maps and DSOs stay the caller's: the walk asks a callback what is mapped at an address.
 */
#ifndef PFC_UNWIND_H
#define PFC_UNWIND_H

#include <stddef.h>
#include <stdint.h>

/* The call frame information of one file, opened once and shared by every sample. */
struct pfc_cfi;

/* Open PATH's .eh_frame (perf 6.1 needs .eh_frame_hdr too: without it, no CFI).  NULL when
 * the file cannot be read or has none; *why then says which ("no file", "no .eh_frame_hdr"). */
struct pfc_cfi *pfc_cfi_open(const char *path, const char **why);
/* The same for an ELF file stored uncompressed in a zip (an Android .apk), the library MEMBER
 * inside it ("lib/arm64-v8a/libx.so").  File offsets are the library's own, as a map named
 * "base.apk!/lib/arm64-v8a/libx.so" (simpleperf's) gives them. */
struct pfc_cfi *pfc_cfi_open_in_zip(const char *path, const char *member, const char **why);
void pfc_cfi_close(struct pfc_cfi *c);
/* A file descriptor of the ELF file's bytes alone (a memory file, made at the first call and
 * closed with c), for readers that take a path (/proc/self/fd/N): a zip member's symbols.
 * -1 when it cannot be made. */
int pfc_cfi_image_fd(struct pfc_cfi *c);
/* The file's GNU build-id, up to MAX bytes into OUT: its length, 0 when it has none. */
int pfc_cfi_build_id(struct pfc_cfi *c, uint8_t *out, size_t max);
/* Read N bytes at file offset OFF (code bytes, for signal-frame and PLT checks): 0 or -1. */
int pfc_cfi_read(struct pfc_cfi *c, uint64_t off, void *buf, size_t n);

/* What is mapped at an address, for the walk. */
struct pfc_unwind_map {
	struct pfc_cfi *cfi;     /* NULL: a map without CFI (anonymous, JIT, file without .eh_frame_hdr) */
	uint64_t start, end, pgoff;
	int jit;                 /* code that only a frame-pointer walk can cross (perf map, jitdump, anon) */
};
/* 0 with *out filled, -1 when nothing is mapped at addr. */
typedef int (*pfc_unwind_find_fn)(void *arg, uint64_t addr, struct pfc_unwind_map *out);

/* perf's x86-64 register numbers (PERF_REG_X86_*) of the ones the walk uses. */
enum {
	PFC_PREG_AX = 0, PFC_PREG_BX = 1, PFC_PREG_CX = 2, PFC_PREG_DX = 3, PFC_PREG_SI = 4,
	PFC_PREG_DI = 5, PFC_PREG_BP = 6, PFC_PREG_SP = 7, PFC_PREG_IP = 8, PFC_PREG_R8 = 16,
};

/*
 * The recording's architecture (perf.data feature ARCH), which says what the registers are.
 * X86_64 is 0: a recording without ARCH is read as today.  UNKNOWN: no register is read,
 * the walk gives the sample's ip (pfc_unwind_in.ip) alone.
 */
enum pfc_unwind_arch { PFC_UNWIND_X86_64 = 0, PFC_UNWIND_AARCH64, PFC_UNWIND_UNKNOWN };

/* perf's arm64 register numbers (PERF_REG_ARM64_*): x0..x28 are 0..28. */
enum { PFC_PREG_ARM64_X29 = 29, PFC_PREG_ARM64_LR = 30, PFC_PREG_ARM64_SP = 31, PFC_PREG_ARM64_PC = 32 };

/* The architecture a perf.data ARCH string names (uname -m, as perf writes it; perf's
 * normalization: x86_64, x86, i386..i686 are x86, aarch64 and arm64 are arm64). */
enum pfc_unwind_arch pfc_unwind_arch_of(const char *name, size_t len);
/* The perf register that holds DWARF register DWREG of ARCH, -1 for none; and the perf
 * registers of the pc and the stack pointer (-1: unknown architecture). */
int pfc_unwind_perf_reg(enum pfc_unwind_arch arch, int dwreg);
int pfc_unwind_perf_ip(enum pfc_unwind_arch arch);
int pfc_unwind_perf_sp(enum pfc_unwind_arch arch);

struct pfc_unwind_in {
	int arch;                /* enum pfc_unwind_arch */
	uint64_t ip;             /* the sample's ip, for an UNKNOWN architecture only (0: none) */
	uint64_t abi;            /* the sample's regs_user ABI: 1 (PERF_SAMPLE_REGS_ABI_32) on aarch64 is a
	                          * 32-bit ARM process, its pc alone (its code unwinds by ARM's registers) */
	const uint8_t *regs;     /* popcount(mask) u64 in the file's byte order */
	uint64_t mask;           /* attr.sample_regs_user */
	int swap;
	const uint8_t *stack;    /* the copied stack, starting at the sample's SP */
	uint64_t stack_size;     /* dyn_size: the bytes that hold data */
	int beyond_perf;         /* cross code without CFI on the frame-pointer chain */
};

/* Why a walk ended where it did, beyond the normal ends. */
enum pfc_unwind_end {
	PFC_UNWIND_END_OK = 0,       /* outermost frame, or no CFI for the next pc (perf stops too) */
	PFC_UNWIND_END_NOREGS,       /* the register set lacks IP or SP */
	PFC_UNWIND_END_STACK,        /* a read fell outside the copied stack */
	PFC_UNWIND_END_BADCFI,       /* unusable CFI or a loop (same pc and CFA twice) */
	PFC_UNWIND_END_MAX,          /* max frames reached */
};

struct pfc_unwind_out {
	uint64_t *ips;           /* caller's array of max entries: ips[0] the sample ip, then return addresses - 1 */
	int max;
	int n;
	enum pfc_unwind_end end;
	int fp_frames;           /* frames found on the frame-pointer chain (beyond_perf) */
};

/* Walk one sample.  Returns 0 (out->n frames, maybe 0) or -1 when in is unusable. */
int pfc_unwind_walk(const struct pfc_unwind_in *in, pfc_unwind_find_fn find, void *arg,
		    struct pfc_unwind_out *out);

#endif
