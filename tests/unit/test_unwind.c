/*
 * test_unwind.c - the DWARF unwinder on samples cut from the dwarf fixtures and on broken
 * ones (tests/regress/unwind/, fuzz_unwind.c's layout): where each walk ends and why; and
 * the addr2line answers perf's inline frames come from, checked against binutils 2.40's
 * addr2line on the same files (including its memory of earlier lookups); and which registers
 * a recording's architecture has the walk read (x86-64, aarch64, an unknown one).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "converter/native/a2l.h"
#include "converter/native/unwind.h"
#include "tests/unit/check.h"

struct fmap {
	uint64_t start, end, pgoff;
	uint8_t file, jit;
};

struct sample {
	uint8_t *buf;
	struct fmap maps[16];
	int n;
	struct pfc_unwind_in in;
};

static struct pfc_cfi *cfis[5];
static const char files_libdwlib[] = "fixtures/root/tmp/probe/fx/bin/libdwlib.so";

static int find(void *arg, uint64_t addr, struct pfc_unwind_map *out)
{
	struct sample *s = arg;
	int i;

	for (i = 0; i < s->n; i++)
		if (addr >= s->maps[i].start && addr < s->maps[i].end) {
			out->start = s->maps[i].start;
			out->end = s->maps[i].end;
			out->pgoff = s->maps[i].pgoff;
			out->cfi = cfis[s->maps[i].file % 5];
			out->jit = s->maps[i].jit;
			return 0;
		}
	return -1;
}

static int load(const char *path, struct sample *s)
{
	FILE *f = fopen(path, "rb");
	long size;
	size_t pos = 2;
	int i;

	memset(s, 0, sizeof(*s));
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, 0, SEEK_SET);
	s->buf = malloc((size_t)size);
	if (!s->buf || fread(s->buf, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		return -1;
	}
	fclose(f);
	s->n = s->buf[1];
	for (i = 0; i < s->n; i++, pos += 26) {
		memcpy(&s->maps[i].start, s->buf + pos, 8);
		memcpy(&s->maps[i].end, s->buf + pos + 8, 8);
		memcpy(&s->maps[i].pgoff, s->buf + pos + 16, 8);
		s->maps[i].file = s->buf[pos + 24];
		s->maps[i].jit = s->buf[pos + 25];
	}
	memcpy(&s->in.mask, s->buf + pos, 8);
	pos += 8;
	s->in.regs = s->buf + pos;
	pos += (size_t)__builtin_popcountll(s->in.mask) * 8;
	s->in.stack = s->buf + pos;
	s->in.stack_size = (uint64_t)size - pos;
	s->in.beyond_perf = s->buf[0] & 1;
	return 0;
}

static int walk(const char *name, int max, struct pfc_unwind_out *out, uint64_t *ips)
{
	char path[256];
	struct sample s;
	int ret;

	snprintf(path, sizeof(path), "tests/regress/unwind/%s", name);
	if (load(path, &s) < 0) {
		check(0, "%s: cannot read", path);
		return -2;
	}
	memset(out, 0, sizeof(*out));
	out->ips = ips;
	out->max = max;
	ret = pfc_unwind_walk(&s.in, find, &s, out);
	free(s.buf);
	return ret;
}

static void test_walks(void)
{
	uint64_t ips[127];
	struct pfc_unwind_out o;
	int r;

	/* a real sample: spin b a main __libc_start_call_main __libc_start_main _start, and the end */
	r = walk("callgraph-sample.bin", 127, &o, ips);
	check(r == 0 && o.n == 7 && o.end == PFC_UNWIND_END_OK,
	      "callgraph sample: 7 frames to _start (n %d end %d)", o.n, o.end);
	check(o.n == 7 && (ips[o.n - 1] & 0xfff) == 0x070,
	      "callgraph sample: the last frame is _start+0x20 (ip %llx)", (unsigned long long)ips[o.n - 1]);
	r = walk("cpp-sample.bin", 127, &o, ips);
	check(r == 0 && o.n >= 4 && o.end == PFC_UNWIND_END_OK,
	      "C++ sample unwinds (n %d end %d)", o.n, o.end);
	/* perf's depth limit */
	r = walk("callgraph-sample.bin", 3, &o, ips);
	check(r == 0 && o.n == 3 && o.end == PFC_UNWIND_END_MAX,
	      "depth limit: 3 frames (n %d end %d)", o.n, o.end);
	/* 64 bytes of stack: the walk leaves the copy and says so */
	r = walk("truncated-stack.bin", 127, &o, ips);
	check(r == 0 && o.n < 7 && o.end == PFC_UNWIND_END_STACK,
	      "truncated copy: cut, by the stack (n %d end %d)", o.n, o.end);
	/* SP at 0x10, the copy elsewhere: perf reads the frame's words from the [stack] mapping
	 * as 0, so one more frame (0 - 1) at most, and the walk says why it ended */
	r = walk("sp-outside.bin", 127, &o, ips);
	check(r == 0 && o.n <= 2 && o.end == PFC_UNWIND_END_STACK,
	      "SP outside the copy: cut (n %d end %d)", o.n, o.end);
	/* a register set without IP and SP */
	r = walk("no-sp-ip.bin", 127, &o, ips);
	check(r == -1 && o.n == 0 && o.end == PFC_UNWIND_END_NOREGS,
	      "no IP/SP: nothing (n %d end %d)", o.n, o.end);
	/* every stack word points at the stack, frame-pointer walk on: it must end */
	r = walk("self-pointing.bin", 127, &o, ips);
	check(r == 0 && o.n <= 127,
	      "self-pointing stack ends (n %d end %d)", o.n, o.end);
}

static void test_a2l(void)
{
	const char *n[8];
	struct pfc_a2l *a;
	int k;

	/* libc's symbols only: BFD picks the first of the aliases at 0x27280 in table order */
	a = pfc_a2l_open("fixtures/root/usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug", NULL);
	check(a != NULL, "open libc debug file");
	k = a ? pfc_a2l_lookup(a, 0x27304, n, 8) : 0;
	check(k == 1 && !strcmp(n[0], "__libc_start_main_alias_2"), "libc 0x27304: __libc_start_main_alias_2");
	k = a ? pfc_a2l_lookup(a, 0x27249, n, 8) : 0;
	check(k == 1 && !strcmp(n[0], "__libc_start_call_main"), "libc 0x27249: __libc_start_call_main");
	k = a ? pfc_a2l_lookup(a, 0x10, n, 8) : 0;
	check(k == 0, "libc 0x10: ??:0");
	check(a && !pfc_a2l_has_dwarf(a), "the symbols-only libc debug file has no DWARF");
	/* a file without DWARF of its own takes none from a file without any either */
	check(a && pfc_a2l_separate(a, "fixtures/root/usr/lib/debug/.build-id/93/"
				       "ac61ec5a8eb1396f9fbd350e3169a558528a40.debug") < 0 && !pfc_a2l_has_dwarf(a),
	      "a separate file without DWARF is not taken");
	/* BFD's separate debug file (libc6-dbg's, reduced in dwarf-libc-dbg): its DWARF names */
	check(a && pfc_a2l_separate(a, "fixtures/dwarf-libc-dbg/debug/.build-id/93/"
				       "ac61ec5a8eb1396f9fbd350e3169a558528a40.debug") == 0 && pfc_a2l_has_dwarf(a),
	      "take the DWARF of libc's separate debug file");
	k = a ? pfc_a2l_lookup(a, 0x27304, n, 8) : 0;
	check(k == 1 && !strcmp(n[0], "__libc_start_main_impl"), "libc 0x27304 with DWARF: __libc_start_main_impl");
	k = a ? pfc_a2l_lookup(a, 0x27249, n, 8) : 0;
	check(k == 1 && !strcmp(n[0], "__libc_start_call_main"), "libc 0x27249 with DWARF: __libc_start_call_main");
	pfc_a2l_close(a);

	/* C++ DWARF: `addr2line -i -f -e FILE 0x11ef 0x11f4 0x11ef` printed these */
	a = pfc_a2l_open("fixtures/root/usr/lib/debug/.build-id/c9/d07e34b7bb29cb3bce42af6166b5cf32ca1e5d.debug", NULL);
	check(a != NULL, "open libdwlib debug file");
	k = a ? pfc_a2l_lookup(a, 0x11ef, n, 8) : 0;
	check(k == 2 && !strcmp(n[0], "_ZN3geo9integrateEPKdii") && !strcmp(n[1], "_ZN3geo9integrateEPKdii"),
	      "0x11ef first: the symbol's name, then the caller");
	k = a ? pfc_a2l_lookup(a, 0x11f4, n, 8) : 0;
	check(k == 3 && !strcmp(n[0], "_ZNK3geo4Vec3IdE3dotERKS1_") && !strcmp(n[1], "energy") &&
	      !strcmp(n[2], "_ZN3geo9integrateEPKdii"), "0x11f4: dot, energy, integrate");
	k = a ? pfc_a2l_lookup(a, 0x11ef, n, 8) : 0;
	check(k == 2 && !strcmp(n[0], "energy"), "0x11ef again: energy (BFD remembers)");
	k = a ? pfc_a2l_lookup(a, 0x1125, n, 8) : 0;
	check(k == 1 && !strcmp(n[0], "_ZN3geoL8by_valueEPKvS1_"), "0x1125: a static function by its symbol");
	pfc_a2l_close(a);
}

/* anything at [0x4000, 0x6000) is JIT code (no CFI), nothing else is mapped */
static int find_jit(void *arg, uint64_t addr, struct pfc_unwind_map *out)
{
	(void)arg;
	if (addr < 0x4000 || addr >= 0x6000)
		return -1;
	memset(out, 0, sizeof(*out));
	out->start = 0x4000;
	out->end = 0x6000;
	out->jit = 1;
	return 0;
}

static int find_none(void *arg, uint64_t addr, struct pfc_unwind_map *out)
{
	(void)arg;
	(void)addr;
	(void)out;
	return -1;
}

/* The recording's architecture decides which registers are read (aarch64: perf's arm64 layout). */
static void test_arch(void)
{
	uint64_t regs[33], ips[8];
	uint8_t stack[64];
	struct pfc_unwind_in in;
	struct pfc_unwind_out o;
	int i, r;

	check(pfc_unwind_arch_of("x86_64", 6) == PFC_UNWIND_X86_64 && pfc_unwind_arch_of("i686", 4) == PFC_UNWIND_X86_64 &&
	      pfc_unwind_arch_of("x86", 3) == PFC_UNWIND_X86_64, "x86 names are x86-64");
	check(pfc_unwind_arch_of("aarch64", 7) == PFC_UNWIND_AARCH64 && pfc_unwind_arch_of("arm64", 5) == PFC_UNWIND_AARCH64,
	      "aarch64 and arm64 are aarch64");
	check(pfc_unwind_arch_of("armv7l", 6) == PFC_UNWIND_UNKNOWN && pfc_unwind_arch_of("riscv64", 7) == PFC_UNWIND_UNKNOWN &&
	      pfc_unwind_arch_of("aarch6", 6) == PFC_UNWIND_UNKNOWN, "other architectures are unknown");
	/* DWARF -> perf: x86-64's DWARF order is rax rdx rcx rbx rsi rdi rbp rsp r8..r15, RA */
	check(pfc_unwind_perf_reg(PFC_UNWIND_X86_64, 0) == PFC_PREG_AX && pfc_unwind_perf_reg(PFC_UNWIND_X86_64, 1) == PFC_PREG_DX &&
	      pfc_unwind_perf_reg(PFC_UNWIND_X86_64, 3) == PFC_PREG_BX && pfc_unwind_perf_reg(PFC_UNWIND_X86_64, 6) == PFC_PREG_BP &&
	      pfc_unwind_perf_reg(PFC_UNWIND_X86_64, 7) == PFC_PREG_SP && pfc_unwind_perf_reg(PFC_UNWIND_X86_64, 8) == PFC_PREG_R8 &&
	      pfc_unwind_perf_reg(PFC_UNWIND_X86_64, 16) == PFC_PREG_IP && pfc_unwind_perf_reg(PFC_UNWIND_X86_64, 17) == -1,
	      "x86-64 DWARF registers map to PERF_REG_X86_*");
	check(pfc_unwind_perf_ip(PFC_UNWIND_X86_64) == 8 && pfc_unwind_perf_sp(PFC_UNWIND_X86_64) == 7, "x86-64 ip 8, sp 7");
	for (i = 0, r = 1; i <= 30; i++)
		r &= pfc_unwind_perf_reg(PFC_UNWIND_AARCH64, i) == i;
	check(r && pfc_unwind_perf_reg(PFC_UNWIND_AARCH64, 31) == PFC_PREG_ARM64_SP &&
	      pfc_unwind_perf_reg(PFC_UNWIND_AARCH64, 32) == -1 && pfc_unwind_perf_reg(PFC_UNWIND_AARCH64, -1) == -1,
	      "aarch64 DWARF x0..x30, sp are PERF_REG_ARM64_X0..LR, SP");
	check(pfc_unwind_perf_ip(PFC_UNWIND_AARCH64) == 32 && pfc_unwind_perf_sp(PFC_UNWIND_AARCH64) == 31, "aarch64 pc 32, sp 31");
	check(pfc_unwind_perf_ip(PFC_UNWIND_UNKNOWN) == -1 && pfc_unwind_perf_reg(PFC_UNWIND_UNKNOWN, 0) == -1,
	      "an unknown architecture has no registers");

	/* x0..x30, sp, pc (sample_regs_user 0x1ffffffff): the pc is the 33rd, not x8 */
	for (i = 0; i < 33; i++)
		regs[i] = 0x100 + (uint64_t)i;
	regs[29] = 0x1010;		/* x29: a frame record in the copy */
	regs[31] = 0x1000;		/* sp */
	regs[32] = 0x4000;		/* pc, in JIT code */
	memset(stack, 0, sizeof(stack));
	stack[0x18] = 0x08;		/* [x29 + 8] = 0x5008, [x29] = 0: the end */
	stack[0x19] = 0x50;
	memset(&in, 0, sizeof(in));
	in.arch = PFC_UNWIND_AARCH64;
	in.regs = (const uint8_t *)regs;
	in.mask = 0x1ffffffffULL;
	in.stack = stack;
	in.stack_size = sizeof(stack);
	memset(&o, 0, sizeof(o));
	o.ips = ips;
	o.max = 8;
	r = pfc_unwind_walk(&in, find_none, NULL, &o);
	check(r == 0 && o.n == 1 && ips[0] == 0x4000, "aarch64: the pc from PERF_REG_ARM64_PC (n %d ip %llx)", o.n,
	      (unsigned long long)ips[0]);
	in.beyond_perf = 1;
	r = pfc_unwind_walk(&in, find_jit, NULL, &o);
	check(r == 0 && o.n == 2 && ips[0] == 0x4000 && ips[1] == 0x5007 && o.fp_frames == 1,
	      "aarch64 JIT code: the x29 frame record gives the caller (n %d ip1 %llx)", o.n, (unsigned long long)ips[1]);
	in.abi = 1;			/* a 32-bit process: the pc, no walk */
	r = pfc_unwind_walk(&in, find_jit, NULL, &o);
	check(r == 0 && o.n == 1 && ips[0] == 0x4000, "aarch64 32-bit process: the pc alone (n %d)", o.n);
	in.abi = 2;
	in.mask = 0xffffffffULL;	/* no pc */
	r = pfc_unwind_walk(&in, find_jit, NULL, &o);
	check(r == -1 && o.n == 0 && o.end == PFC_UNWIND_END_NOREGS, "aarch64 without pc: nothing");

	/* an unknown architecture: the sample's ip only, whatever the registers say */
	in.mask = 0x1ffffffffULL;
	in.arch = PFC_UNWIND_UNKNOWN;
	in.ip = 0x7777;
	r = pfc_unwind_walk(&in, find_jit, NULL, &o);
	check(r == 0 && o.n == 1 && ips[0] == 0x7777, "unknown architecture: the sample's ip alone (n %d)", o.n);
	in.ip = 0;
	r = pfc_unwind_walk(&in, find_jit, NULL, &o);
	check(r == -1 && o.n == 0 && o.end == PFC_UNWIND_END_NOREGS, "unknown architecture without ip: nothing");
}

/* A library stored in a zip (fuzz/seeds/apk/libdwlib.apk: the fixtures' libdwlib.so stored as
 * lib/arm64-v8a/libx.so after a compressed AndroidManifest.xml) is the same file as on disk. */
static void test_zip(void)
{
	const char *apk = "fuzz/seeds/apk/libdwlib.apk", *why;
	struct pfc_cfi *z = pfc_cfi_open_in_zip(apk, "lib/arm64-v8a/libx.so", &why), *f = cfis[4];
	uint8_t a[20], b[20], e[4];
	int na, nb;

	check(z != NULL, "%s: the stored library opens", apk);
	if (!z)
		return;
	na = pfc_cfi_build_id(z, a, sizeof(a));
	nb = pfc_cfi_build_id(f, b, sizeof(b));
	check(na == 20 && na == nb && !memcmp(a, b, 20), "the library in the zip has the file's build-id");
	check(pfc_cfi_read(z, 0, e, 4) == 0 && !memcmp(e, "\x7f" "ELF", 4), "offset 0 is the library's first byte");
	check(pfc_cfi_image_fd(z) >= 0, "the library's bytes as a memory file");
	pfc_cfi_close(z);
	check(!pfc_cfi_open_in_zip(apk, "AndroidManifest.xml", &why) && !strcmp(why, "no such member stored uncompressed"),
	      "a compressed member is not read (%s)", why);
	check(!pfc_cfi_open_in_zip(apk, "lib/arm64-v8a/liby.so", &why), "a member that is not there");
	check(!pfc_cfi_open_in_zip(files_libdwlib, "lib/arm64-v8a/libx.so", &why) && !strcmp(why, "no such member stored uncompressed"),
	      "an ELF file is no zip (%s)", why);
}

int main(void)
{
	static const char *const files[5] = {
		NULL,
		"fixtures/root/tmp/probe/fx/bin/callgraph",
		"fixtures/root/usr/lib/x86_64-linux-gnu/libc.so.6",
		"fixtures/root/tmp/probe/fx/bin/dwapp",
		"fixtures/root/tmp/probe/fx/bin/libdwlib.so",
	};
	const char *why;
	int i;

	for (i = 1; i < 5; i++) {
		cfis[i] = pfc_cfi_open(files[i], &why);
		check(cfis[i] != NULL, "CFI of %s", files[i]);
	}
	test_walks();
	test_arch();
	test_zip();
	test_a2l();
	for (i = 1; i < 5; i++)
		pfc_cfi_close(cfis[i]);
	return check_done("unwind");
}
