/*
 * test_jit.c - unit tests of the JIT symbol sources: the perf map parser's tolerance and
 * lookup rules, the jitdump parser on records built byte by byte (every record type, code
 * bytes present or not, both byte orders, hostile lengths, a record cut short) and its
 * time-aware lookup, the NStgid parser, .NET name rewriting on names taken from a real
 * .NET 10 perf map, and the classification of executable mappings.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "converter/jit/dotnetname.h"
#include "converter/machine/intern.h"
#include "converter/jit/jitdump.h"
#include "converter/jit/jitsym.h"
#include "converter/machine/machine.h"
#include "converter/jit/perfmap.h"
#include "tests/unit/check.h"

/* ---------- perf maps ---------- */

static const char *pm_name(const struct pfc_perfmap *m, uint64_t addr)
{
	const struct pfc_perfmap_ent *e = pfc_perfmap_find(m, addr);
	return e ? pfc_perfmap_name(m, e) : NULL;
}

static int streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static void test_perfmap(void)
{
	struct pfc_perfmap m;
	/* .NET 10 writes 0x and lower case; .NET 7 16 upper-case digits; V8 and Mono bare hex */
	static const char forms[] =
		"0x7f7425c71ff0 a9 int64 [app] Demo.Work.Program::Inner(int32)[QuickJitted]\n"
		"00007F1484580018 48 stub<1> AllocateTemporaryEntryPoints<PRECODE_FIXUP>\r\n"
		"413c16a0 88 Hot:Inner (int)\n"
		"0X1000 10 upper x\n"
		"2000 0x20 hex size\n"
		"garbage line\n"
		"3000 zz bad size\n"
		"\n"
		"4000 10 name with\0 a NUL\n"
		"5000 0 empty size\n"
		"ffffffffffffffff 10 wraps\n"
		"6000 10 half-written last";
	check(pfc_perfmap_parse(&m, forms, sizeof(forms) - 1) == 0, "perfmap: parse");
	check(m.n == 7, "perfmap: 7 good lines, got %zu", m.n);
	check(m.nr_bad_lines == 4, "perfmap: 4 bad lines, got %llu", (unsigned long long)m.nr_bad_lines);
	check(streq(pm_name(&m, 0x7f7425c71ff0 + 0xa8), "int64 [app] Demo.Work.Program::Inner(int32)[QuickJitted]"),
	      "perfmap: 0x prefix, name with spaces and brackets");
	check(!pm_name(&m, 0x7f7425c71ff0 + 0xa9), "perfmap: end is exclusive");
	check(streq(pm_name(&m, 0x00007F1484580018), "stub<1> AllocateTemporaryEntryPoints<PRECODE_FIXUP>"),
	      "perfmap: upper-case 16 digits, CR stripped");
	check(streq(pm_name(&m, 0x413c16a0 + 0x10), "Hot:Inner (int)"), "perfmap: mono line");
	check(streq(pm_name(&m, 0x1005), "upper x"), "perfmap: 0X");
	check(streq(pm_name(&m, 0x201f), "hex size"), "perfmap: 0x on the size");
	check(streq(pm_name(&m, 0x4001), "name with"), "perfmap: a NUL ends the name");
	check(streq(pm_name(&m, 0x6001), "half-written last"), "perfmap: last line without newline");
	check(!pm_name(&m, 0x5000), "perfmap: size 0 skipped");
	pfc_perfmap_free(&m);

	/* lookup policy */
	static const char rules[] =
		"1000 1000 stub ReportStubBlock<FixupPrecode>\n"      /* a block */
		"1100 18 stub Allocate<FixupPrecode>\n"               /* a stub inside it */
		"1200 100 instance void [app] A::M()[QuickJitted]\n"  /* a method inside it */
		"1200 40 void [app] B::Reused()[QuickJitted]\n"       /* same start, later line */
		"3000 100 outer\n"
		"3010 10 inner\n"
		"5000 20 first\n"
		"5000 20 second\n"
		"7000 100 big method\n"
		"7000 10 stub small stub\n";
	check(pfc_perfmap_parse(&m, rules, sizeof(rules) - 1) == 0, "perfmap rules: parse");
	check(streq(pm_name(&m, 0x1010), "stub ReportStubBlock<FixupPrecode>"), "perfmap: only the block covers it");
	check(streq(pm_name(&m, 0x1105), "stub Allocate<FixupPrecode>"), "perfmap: the smaller stub beats its block");
	check(streq(pm_name(&m, 0x1205), "void [app] B::Reused()[QuickJitted]"),
	      "perfmap: same start, the later line wins");
	check(streq(pm_name(&m, 0x1250), "instance void [app] A::M()[QuickJitted]"),
	      "perfmap: a method beats the stub block around it");
	check(streq(pm_name(&m, 0x3015), "inner"), "perfmap: smallest enclosing range");
	check(streq(pm_name(&m, 0x3020), "outer"), "perfmap: outside the inner range");
	check(streq(pm_name(&m, 0x5001), "second"), "perfmap: equal ranges, the later line");
	check(streq(pm_name(&m, 0x7001), "big method"), "perfmap: a method beats a smaller stub");
	check(!pm_name(&m, 0x2000) && !pm_name(&m, 0xfff), "perfmap: nothing outside");
	pfc_perfmap_free(&m);

	check(pfc_perfmap_parse(&m, "", 0) == 0 && m.n == 0 && !pfc_perfmap_find(&m, 0), "perfmap: empty file");
	pfc_perfmap_free(&m);
}

/* ---------- jitdump ---------- */

struct jb {
	uint8_t *buf;
	size_t n, cap;
	int swap;
};

static void jput(struct jb *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 256;
		b->buf = realloc(b->buf, b->cap);
	}
	memcpy(b->buf + b->n, p, n);
	b->n += n;
}

static void j32(struct jb *b, uint32_t v)
{
	if (b->swap)
		v = __builtin_bswap32(v);
	jput(b, &v, 4);
}

static void j64(struct jb *b, uint64_t v)
{
	if (b->swap)
		v = __builtin_bswap64(v);
	jput(b, &v, 8);
}

static void j_header(struct jb *b, uint32_t pid)
{
	j32(b, PFC_JITDUMP_MAGIC);
	j32(b, 1);
	j32(b, 40);
	j32(b, 62);	/* EM_X86_64 */
	j32(b, 0);
	j32(b, pid);
	j64(b, 1000);
	j64(b, 0);
}

static void j_load(struct jb *b, uint64_t ts, uint64_t addr, uint64_t size, uint64_t idx, const char *name,
		   int with_code)
{
	size_t nl = strlen(name) + 1, code = with_code ? size : 0;
	uint8_t *zeros = calloc(1, code + 1);

	j32(b, 0);
	j32(b, (uint32_t)(16 + 40 + nl + code));
	j64(b, ts);
	j32(b, 42);
	j32(b, 43);
	j64(b, addr);
	j64(b, addr);
	j64(b, size);
	j64(b, idx);
	jput(b, name, nl);
	jput(b, zeros, code);
	free(zeros);
}

static const char *jd_name(const struct pfc_jitdump *jd, uint64_t addr, uint64_t t, int timed)
{
	const struct pfc_jitdump_ent *e = pfc_jitdump_find(jd, addr, t, timed);
	return e ? pfc_jitdump_name(jd, e) : NULL;
}

static void test_jitdump_records(int swap)
{
	struct jb b = { .swap = swap };
	struct pfc_jitdump jd;
	struct pfc_error err;
	int ret;

	j_header(&b, 1);
	/* DEBUG_INFO for the next load: 2 entries */
	j32(&b, 2);
	j32(&b, 16 + 16 + 2 * (16 + 6));
	j64(&b, 100);
	j64(&b, 0x1000);
	j64(&b, 2);
	j64(&b, 0x1000); j32(&b, 10); j32(&b, 0); jput(&b, "a.cs\0", 5); jput(&b, "", 1);
	j64(&b, 0x1008); j32(&b, 11); j32(&b, 0); jput(&b, "a.cs\0", 5); jput(&b, "", 1);
	j_load(&b, 110, 0x1000, 0x40, 1, "void [app] A::Old()[QuickJitted]", 1);
	j_load(&b, 120, 0x2000, 0x40, 2, "stub Block<FixupPrecode>", 0);	/* no code bytes */
	/* UNWINDING_INFO: 8 bytes of data, 4 of them eh_frame_hdr */
	j32(&b, 4);
	j32(&b, 16 + 24 + 8);
	j64(&b, 130);
	j64(&b, 8); j64(&b, 4); j64(&b, 8);
	j64(&b, 0);
	/* an unknown record type, skipped by its size */
	j32(&b, 99);
	j32(&b, 16 + 5);
	j64(&b, 135);
	jput(&b, "xxxxx", 5);
	/* the address is used again by new code */
	j_load(&b, 200, 0x1000, 0x40, 3, "void [app] A::New()[OptimizedTier1]", 1);
	/* MOVE of load 2 to 0x3000 */
	j32(&b, 1);
	j32(&b, 16 + 48);
	j64(&b, 300);
	j32(&b, 42); j32(&b, 43); j64(&b, 0x3000); j64(&b, 0x2000); j64(&b, 0x3000); j64(&b, 0x40); j64(&b, 2);
	/* CLOSE: what follows is not read */
	j32(&b, 3);
	j32(&b, 16);
	j64(&b, 400);
	j_load(&b, 500, 0x9000, 0x40, 4, "after close", 1);

	memset(&err, 0, sizeof(err));
	ret = pfc_jitdump_parse(&jd, b.buf, b.n, &err);
	check(ret == 0, "jitdump(swap=%d): parse: %d %s", swap, ret, err.detail);
	if (ret == 0) {
		check(jd.swap == swap && jd.pid == 1 && jd.elf_mach == 62, "jitdump(swap=%d): header", swap);
		check(jd.nr_load == 3 && jd.nr_move == 1 && jd.nr_debug == 1 && jd.nr_unwind == 1 && jd.nr_close == 1 &&
			      jd.nr_unknown == 1 && jd.nr_no_code == 1,
		      "jitdump(swap=%d): record counts", swap);
		check(jd.n == 4, "jitdump(swap=%d): 3 loads and a move, got %zu", swap, jd.n);
		check(streq(jd_name(&jd, 0x1010, 150, 1), "void [app] A::Old()[QuickJitted]"),
		      "jitdump(swap=%d): before the reuse, the old code", swap);
		check(streq(jd_name(&jd, 0x1010, 200, 1), "void [app] A::New()[OptimizedTier1]"),
		      "jitdump(swap=%d): at the reuse's time, the new code", swap);
		check(!jd_name(&jd, 0x1010, 105, 1), "jitdump(swap=%d): nothing before the first load", swap);
		check(streq(jd_name(&jd, 0x1010, 0, 0), "void [app] A::New()[OptimizedTier1]"),
		      "jitdump(swap=%d): without time, the latest load", swap);
		check(streq(jd_name(&jd, 0x2010, 150, 1), "stub Block<FixupPrecode>"),
		      "jitdump(swap=%d): a load without its code bytes", swap);
		check(streq(jd_name(&jd, 0x3010, 350, 1), "stub Block<FixupPrecode>") && !jd_name(&jd, 0x3010, 250, 1),
		      "jitdump(swap=%d): a MOVE takes the load's name from its time on", swap);
		check(!jd_name(&jd, 0x9010, 600, 1), "jitdump(swap=%d): nothing after CLOSE", swap);
		{
			const struct pfc_jitdump_ent *e = pfc_jitdump_find(&jd, 0x1000, 150, 1);
			check(e && e->nr_lines == 2 && e->code_index == 1, "jitdump(swap=%d): DEBUG_INFO attached", swap);
		}
		pfc_jitdump_free(&jd);
	}

	/* every cut of the file: an error or a clean stop, never a crash (ASan checks reads) */
	{
		size_t cut, ok = 0, truncated = 0;
		for (cut = 0; cut < b.n; cut++) {
			uint8_t *copy = malloc(cut + 1);
			memcpy(copy, b.buf, cut);
			memset(&err, 0, sizeof(err));
			if (pfc_jitdump_parse(&jd, copy, cut, &err) == 0) {
				ok++;
				truncated += jd.truncated;
				pfc_jitdump_free(&jd);
			}
			free(copy);
		}
		check(ok > 0 && truncated > 0, "jitdump(swap=%d): cuts parse up to the cut record (%zu ok, %zu truncated)",
		      swap, ok, truncated);
	}
	free(b.buf);
}

/* A jitdump with one record patched by `patch`; returns the parse status and err. */
static int parse_patched(void (*patch)(struct jb *), struct pfc_error *err)
{
	struct jb b = { 0 };
	struct pfc_jitdump jd;
	int ret;

	j_header(&b, 7);
	patch(&b);
	memset(err, 0, sizeof(*err));
	ret = pfc_jitdump_parse(&jd, b.buf, b.n, err);
	if (ret == 0)
		pfc_jitdump_free(&jd);
	free(b.buf);
	return ret;
}

static void p_tiny(struct jb *b) { j32(b, 0); j32(b, 8); j64(b, 1); }
static void p_noname(struct jb *b)
{
	j32(b, 0); j32(b, 16 + 40 + 4); j64(b, 1);
	j32(b, 1); j32(b, 1); j64(b, 0x10); j64(b, 0x10); j64(b, 4); j64(b, 1); jput(b, "abcd", 4);
}
static void p_wrap(struct jb *b)
{
	j32(b, 0); j32(b, 16 + 40 + 2); j64(b, 1);
	j32(b, 1); j32(b, 1); j64(b, 0); j64(b, UINT64_MAX - 4); j64(b, 16); j64(b, 1); jput(b, "x", 2);
}
static void p_debug_count(struct jb *b)
{
	j32(b, 2); j32(b, 16 + 16 + 8); j64(b, 1);
	j64(b, 0x10); j64(b, 1ULL << 60); j64(b, 0);
}
static void p_unwind(struct jb *b)
{
	j32(b, 4); j32(b, 16 + 24); j64(b, 1);
	j64(b, 1000); j64(b, 0); j64(b, 0);
}
static void p_short_load(struct jb *b) { j32(b, 0); j32(b, 16 + 8); j64(b, 1); j64(b, 0); }

static void test_jitdump_hostile(void)
{
	struct pfc_error err;
	uint8_t hdr[40];
	struct pfc_jitdump jd;
	static const struct {
		void (*patch)(struct jb *);
		const char *what;
	} cases[] = {
		{ p_tiny, "a record smaller than its header" },
		{ p_noname, "a LOAD name without NUL" },
		{ p_wrap, "a LOAD range that wraps" },
		{ p_debug_count, "a DEBUG_INFO count larger than the record" },
		{ p_unwind, "UNWINDING_INFO sizes larger than the record" },
		{ p_short_load, "a LOAD shorter than its fixed part" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = parse_patched(cases[i].patch, &err);
		check(ret == -PFC_ERR_CORRUPT && err.has_offset && err.offset == 40,
		      "jitdump: %s is corrupt at offset 40 (ret %d, offset %llu, %s)", cases[i].what, ret,
		      (unsigned long long)err.offset, err.detail);
	}
	memset(hdr, 0, sizeof(hdr));
	memset(&err, 0, sizeof(err));
	check(pfc_jitdump_parse(&jd, hdr, sizeof(hdr), &err) == -PFC_ERR_BAD_MAGIC, "jitdump: bad magic");
	{
		struct jb b = { 0 };
		j_header(&b, 1);
		b.buf[4] = 9;	/* version 9 */
		memset(&err, 0, sizeof(err));
		check(pfc_jitdump_parse(&jd, b.buf, b.n, &err) == -PFC_ERR_UNSUPPORTED, "jitdump: unknown version");
		b.buf[4] = 1;
		b.buf[8] = 200;	/* header size past the end */
		memset(&err, 0, sizeof(err));
		check(pfc_jitdump_parse(&jd, b.buf, b.n, &err) == -PFC_ERR_CORRUPT, "jitdump: header size too big");
		b.buf[8] = 40;
		memset(&err, 0, sizeof(err));
		check(pfc_jitdump_parse(&jd, b.buf, 20, &err) == -PFC_ERR_TRUNCATED, "jitdump: half a header");
		memset(&err, 0, sizeof(err));
		check(pfc_jitdump_parse(&jd, b.buf, b.n, &err) == 0 && jd.n == 0, "jitdump: header only");
		pfc_jitdump_free(&jd);
		free(b.buf);
	}
}

/* ---------- NStgid ---------- */

static void test_nstgid(void)
{
	static const char two[] = "Name:\tdotnet\nTgid:\t4242\nNgid:\t0\nPid:\t4242\nNStgid:\t4242\t1\nNSpid:\t4242\t1\n";
	static const char three[] = "Tgid:\t9\nNStgid:\t9000\t17\t3\n";
	static const char one[] = "NStgid:\t4242\n";
	static const char none[] = "Name:\tx\nTgid:\t1\n";

	check(pfc_jitsyms_parse_nstgid(two, strlen(two)) == 1, "NStgid: two levels, the last field");
	check(pfc_jitsyms_parse_nstgid(three, strlen(three)) == 3, "NStgid: three levels");
	check(pfc_jitsyms_parse_nstgid(one, strlen(one)) == 4242, "NStgid: no namespace");
	check(pfc_jitsyms_parse_nstgid(none, strlen(none)) == -1, "NStgid: absent (old kernel)");
}

/* ---------- .NET names (from a .NET 10.0.12 perf map and jitdump) ---------- */

static void name_case(const char *in, int form, int strip, const char *want)
{
	char out[1024];
	size_t n = pfc_dotnet_name(out, sizeof(out), in, strlen(in), form, strip);

	check(n == strlen(out) && !strcmp(out, want), "name(%s%s): '%s' -> '%s', want '%s'",
	      form == PFC_DOTNET_NAMES_SHORT ? "short" : "keep", strip ? ",strip" : "", in, out, want);
}

static void test_names(void)
{
	const int S = PFC_DOTNET_NAMES_SHORT, K = PFC_DOTNET_NAMES_KEEP;

	name_case("int64 [app] Demo.Work.Program::Inner(int32)[OptimizedTier1OSR]", S, 0,
		  "app!Demo.Work.Program::Inner(int32)[OptimizedTier1OSR]");
	name_case("int64 [app] Demo.Work.Program::Inner(int32)[OptimizedTier1OSR]", S, 1,
		  "app!Demo.Work.Program::Inner(int32)");
	name_case("int64 [app] Demo.Work.Program::Inner(int32)[QuickJitted]", K, 1,
		  "int64 [app] Demo.Work.Program::Inner(int32)");
	name_case("int64 [app] Demo.Work.Program::Inner(int32)[QuickJitted]", K, 0,
		  "int64 [app] Demo.Work.Program::Inner(int32)[QuickJitted]");
	name_case("instance !1& [System.Private.CoreLib] System.Collections.Generic.Dictionary`2[System.__Canon,"
		  "System.Int32]::FindValue(!0)[InstrumentedTierOptimized]", S, 0,
		  "System.Private.CoreLib!System.Collections.Generic.Dictionary`2[System.__Canon,System.Int32]::"
		  "FindValue(!0)[InstrumentedTierOptimized]");
	name_case("valuetype System.Runtime.CompilerServices.StaticsHelpers/ThreadLocalData* [System.Private.CoreLib] "
		  "System.Threading.Thread::GetThreadStaticsBase()[QuickJitted]", S, 1,
		  "System.Private.CoreLib!System.Threading.Thread::GetThreadStaticsBase()");
	name_case("bool [System.Private.CoreLib] System.DateTime::op_LessThan(valuetype System.DateTime,valuetype "
		  "System.DateTime)[OptimizedTier1]", S, 1,
		  "System.Private.CoreLib!System.DateTime::op_LessThan(System.DateTime,System.DateTime)");
	name_case("int32 [app] Demo.Work.Program::Lookup(class Demo.Work.Hot`1<int32>,int32)[OptimizedTier1OSR]", S, 1,
		  "app!Demo.Work.Program::Lookup(Demo.Work.Hot`1<int32>,int32)");
	name_case("instance void [System.Private.CoreLib] System.Collections.Generic.Dictionary`2[System.__Canon,"
		  "System.__Canon]::.ctor(int32,class System.Collections.Generic.IEqualityComparer`1<!0>)[PreJIT]", S, 1,
		  "System.Private.CoreLib!System.Collections.Generic.Dictionary`2[System.__Canon,System.__Canon]::"
		  ".ctor(int32,System.Collections.Generic.IEqualityComparer`1<!0>)");
	/* .NET 7 era (dotnet --info map): parameter types with their own [Assembly] */
	name_case("class System.Linq.IOrderedEnumerable`1<!!0> [System.Linq] System.Linq.Enumerable::OrderBy(class "
		  "[System.Runtime]System.Collections.Generic.IEnumerable`1<!!0>,class [System.Runtime]System.Func`2<!!0,"
		  "!!1>)[QuickJitted]", S, 0,
		  "System.Linq!System.Linq.Enumerable::OrderBy(System.Collections.Generic.IEnumerable`1<!!0>,"
		  "System.Func`2<!!0,!!1>)[QuickJitted]");
	/* an array rank is not an assembly */
	name_case("instance !0[] [System.Private.CoreLib] System.Collections.Generic.List`1[System.__Canon]::ToArray()"
		  "[OptimizedTier1]", S, 1,
		  "System.Private.CoreLib!System.Collections.Generic.List`1[System.__Canon]::ToArray()");
	/* a leading tier tag and no assembly */
	name_case("[OptimizedTier1] System.Foo::Bar(int)", S, 0, "[OptimizedTier1] System.Foo::Bar(int)");
	name_case("[OptimizedTier1] System.Foo::Bar(int)", S, 1, "System.Foo::Bar(int)");
	name_case("[OptimizedTier1] System.Foo::Bar(int)", K, 1, "System.Foo::Bar(int)");
	/* not methods: kept */
	name_case("stub Allocate<FixupPrecode>", S, 1, "stub Allocate<FixupPrecode>");
	name_case("stub<7> AllocateTemporaryEntryPoints<PRECODE_STUB>", S, 1,
		  "stub<7> AllocateTemporaryEntryPoints<PRECODE_STUB>");
	name_case("Hot:Inner (int)", S, 1, "Hot:Inner (int)");
	name_case("LazyCompile:*fib /tmp/probe/fx/bin/hot.js:3", S, 1, "LazyCompile:*fib /tmp/probe/fx/bin/hot.js:3");
	name_case("Builtin:JSEntry", S, 1, "Builtin:JSEntry");
	/* brackets that are not tiers */
	name_case("int32[] [app] A::B()[]", K, 1, "int32[] [app] A::B()[]");
	name_case("x [a b]", K, 1, "x [a b]");
	/* tag characters back to the start and no '[' (the walk back stops at the first byte) */
	check(pfc_dotnet_trailing_tier("abcd]", 5) == 0, "name: 'abcd]' has no trailing tier");
	check(pfc_dotnet_trailing_tier("[Ab]", 4) == 0, "name: '[Ab]' alone has no trailing tier");
	name_case("Tier1]", S, 1, "Tier1]");
	{
		char small[8];
		size_t n = pfc_dotnet_name(small, sizeof(small), "int64 [app] A::B()", 18, S, 0);
		check(n == 7 && !strcmp(small, "app!A::"), "name: cut to the buffer");
	}
}

/* ---------- mapping kinds ---------- */

static int kind_of(struct pfc_machine *m, int pid, uint64_t start, const char *name, uint32_t prot)
{
	struct pfc_thread *t;
	const struct pfc_map *map;

	if (pfc_machine_mmap(m, pid, pid, 0, start, 0x1000, 0, prot, MAP_PRIVATE, NULL, 0, name, strlen(name) + 1) < 0)
		return -1;
	t = pfc_machine_findnew_thread(m, pid, pid);
	map = pfc_machine_find_map(m, t, 0, start);
	return map && map->dso ? (int)map->dso->kind : -1;
}

static void test_kinds(void)
{
	struct pfc_intern in;
	struct pfc_machine m;
	int jpid = 0;
	const uint32_t X = PROT_READ | PROT_EXEC;

	pfc_intern_init(&in);
	pfc_machine_init(&m, &in);
	check(kind_of(&m, 10, 0x10000, "//anon", X) == PFC_DSO_PERFMAP, "kind: //anon");
	check(kind_of(&m, 10, 0x20000, "/memfd:doublemapper (deleted)", X) == PFC_DSO_JIT, "kind: /memfd:doublemapper");
	check(kind_of(&m, 10, 0x30000, "memfd:doublemapper", X) == PFC_DSO_JIT, "kind: memfd:doublemapper");
	check(kind_of(&m, 10, 0x40000, "[anon:v8 code]", X) == PFC_DSO_JIT, "kind: [anon:...] exec");
	check(kind_of(&m, 10, 0x50000, "[anon:heap]", PROT_READ) == PFC_DSO_OTHER, "kind: [anon:...] data");
	check(kind_of(&m, 10, 0x60000, "/tmp/jit-1.dump", X) == PFC_DSO_JITMARK, "kind: jitdump marker");
	check(kind_of(&m, 10, 0x70000,
		      "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/System.Private.CoreLib.dll", X) == PFC_DSO_PE,
	      "kind: ReadyToRun .dll");
	check(kind_of(&m, 10, 0x80000, "/tmp/jitted-1-5.so", X) == PFC_DSO_FILE, "kind: jitted .so is ELF");
	check(kind_of(&m, 10, 0x90000, "[vdso]", X) == PFC_DSO_VDSO, "kind: vdso");
	check(kind_of(&m, 10, 0xa0000, "/usr/lib/libc.so.6", X) == PFC_DSO_FILE, "kind: ELF");
	{
		struct pfc_thread *t = pfc_machine_findnew_thread(&m, 10, 10);
		const struct pfc_map *map = pfc_machine_find_map(&m, t, 0, 0x80000);
		check(map && map->dso->jitted, "kind: jitted .so flagged");
		map = pfc_machine_find_map(&m, t, 0, 0x20000);
		check(map && !strcmp(map->dso->name, "/memfd:doublemapper (deleted)") && !map->identity,
		      "kind: memfd keeps perf's name and file offsets");
	}
	check(pfc_machine_is_jitdump_name("/tmp/jit-4242.dump", &jpid) && jpid == 4242, "jitdump name: pid");
	check(!pfc_machine_is_jitdump_name("/tmp/jit-.dump", NULL) && !pfc_machine_is_jitdump_name("/tmp/jit-1.dump2", NULL) &&
		      !pfc_machine_is_jitdump_name("/tmp/xjit-1.dump", NULL),
	      "jitdump name: others refused");
	pfc_machine_exit(&m);
	pfc_intern_exit(&in);
}

int main(void)
{
	test_perfmap();
	test_jitdump_records(0);
	test_jitdump_records(1);
	test_jitdump_hostile();
	test_nstgid();
	test_names();
	test_kinds();
	return check_done("test_jit");
}
