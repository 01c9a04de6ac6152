/*
 * fuzz_unwind.c - the DWARF unwinder on hostile registers, stack bytes and mappings.
 * Input: u8 flags (bit 0: beyond perf; bits 1-2: the architecture, 0 x86-64, 1 aarch64,
 * 2 and 3 one the unwinder does not know, whose sample ip is the first register), u8 number
 * of maps (<= 16), per map u64 start, end, pgoff, u8 file (0 anonymous, 1 callgraph, 2 libc,
 * 3 dwapp, 4 libdwlib.so from fixtures/root, their real CFI), u8 jit; then u64
 * sample_regs_user, the registers, and the rest is the copied stack.
 * fuzz/seeds/unwind/make-seeds.py cuts seeds from fixtures; aarch64-apk.bin is the sample of
 * simpleperf's perf_unwind_embedded_lib_in_apk.data (tests/data/foreign/), its library's map
 * taken for JIT code (no aarch64 file here has CFI).
 */
// FUZZ_MAX_LEN: 12288
// FUZZ_SEEDS: fuzz/seeds/unwind/*.bin tests/regress/unwind/*
#include "converter/native/unwind.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fmap {
	uint64_t start, end, pgoff;
	uint8_t file, jit;
};

struct fctx {
	struct fmap maps[16];
	int n;
};

static struct pfc_cfi *cfis[5];

static int find(void *arg, uint64_t addr, struct pfc_unwind_map *out)
{
	struct fctx *c = arg;
	int i;

	for (i = 0; i < c->n; i++)
		if (addr >= c->maps[i].start && addr < c->maps[i].end) {
			out->start = c->maps[i].start;
			out->end = c->maps[i].end;
			out->pgoff = c->maps[i].pgoff;
			out->cfi = cfis[c->maps[i].file % 5];
			out->jit = c->maps[i].jit;
			return 0;
		}
	return -1;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int opened;
	static const char *const files[5] = {
		NULL,
		"fixtures/root/tmp/probe/fx/bin/callgraph",
		"fixtures/root/usr/lib/x86_64-linux-gnu/libc.so.6",
		"fixtures/root/tmp/probe/fx/bin/dwapp",
		"fixtures/root/tmp/probe/fx/bin/libdwlib.so",
	};
	struct fctx c;
	struct pfc_unwind_in in;
	struct pfc_unwind_out out;
	uint64_t ips[127];
	size_t pos = 2, nregs;
	int i;

	if (!opened) {
		const char *why;
		opened = 1;
		for (i = 1; i < 5; i++)
			cfis[i] = pfc_cfi_open(files[i], &why);
	}
	if (size < 2)
		return 0;
	memset(&c, 0, sizeof(c));
	c.n = data[1] > 16 ? 16 : data[1];
	for (i = 0; i < c.n; i++, pos += 26) {
		if (pos + 26 > size)
			return 0;
		c.maps[i].start = rd64(data + pos);
		c.maps[i].end = rd64(data + pos + 8);
		c.maps[i].pgoff = rd64(data + pos + 16);
		c.maps[i].file = data[pos + 24];
		c.maps[i].jit = data[pos + 25];
	}
	if (pos + 8 > size)
		return 0;
	memset(&in, 0, sizeof(in));
	in.mask = rd64(data + pos);
	pos += 8;
	nregs = (size_t)__builtin_popcountll(in.mask);
	if (nregs * 8 > size - pos)
		return 0;
	in.regs = data + pos;
	pos += nregs * 8;
	in.stack = data + pos;
	in.stack_size = size - pos;
	in.beyond_perf = data[0] & 1;
	in.arch = (data[0] >> 1 & 3) == 0 ? PFC_UNWIND_X86_64 : (data[0] >> 1 & 3) == 1 ? PFC_UNWIND_AARCH64 : PFC_UNWIND_UNKNOWN;
	in.ip = nregs ? rd64(in.regs) : 0;
	memset(&out, 0, sizeof(out));
	out.ips = ips;
	out.max = 127;
	pfc_unwind_walk(&in, find, &c, &out);
	if (out.n < 0 || out.n > out.max)
		abort();
	return 0;
}
