/*
 * test_r2r.c - pe.c and r2rmap.c on real and damaged inputs: the PE headers, debug directory,
 * MVID and RUNTIME_FUNCTIONS of a crossgen2 image (tests/data/r2r/r2rapp.dll), its r2rmap,
 * crossgen1-style maps, every historical perfinfo line form, and the PE parser on every
 * prefix and on byte-flipped copies of the image (it must fail cleanly, never crash).
 * usage: test_r2r [DATA_DIR]   (default "tests/data/r2r")
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "loadfile.h"
#include "converter/jit/pe.h"
#include "converter/jit/r2rmap.h"

static int failed, passed;

#define CHECK(cond, ...) do { \
	if (cond) { \
		passed++; \
	} else { \
		failed++; \
		printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
		printf(__VA_ARGS__); \
		printf("\n"); \
	} \
} while (0)

/* The MVID was checked independently: crossgen2's signature is
 * MD5(MVID || u32 os || u32 arch || u32 abi) for a one-assembly image, and
 * MD5(9e809784d8720a469c893a2a331061a5 02000000 03000000 01000000) is the map's
 * 25CCCFC76ADA1DEAEE52FD576EC81FFF. */
static const char mvid_str[] = "{8497809e-72d8-460a-9c89-3a2a331061a5}";
static const uint8_t sig[16] = { 0x25, 0xCC, 0xCF, 0xC7, 0x6A, 0xDA, 0x1D, 0xEA,
				 0xEE, 0x52, 0xFD, 0x57, 0x6E, 0xC8, 0x1F, 0xFF };

static void test_pe(const uint8_t *buf, size_t len)
{
	struct pfc_pe pe;
	struct pfc_error e = { 0 };
	char g[40];
	const struct pfc_pe_func *f;
	int ret = pfc_pe_parse(buf, len, &pe, &e);

	CHECK(ret == 0, "ret %d: %s", ret, e.detail);
	CHECK(pfc_pe_sniff(buf, len), "sniff");
	CHECK(pe.machine == 0xfd1d && pe.machine_plain == 0x8664 && pe.target_os == 2,
	      "machine %x plain %x os %d", pe.machine, pe.machine_plain, pe.target_os);
	CHECK(pe.pe32plus && pe.image_base == 0x180000000ull, "base %llx", (unsigned long long)pe.image_base);
	CHECK(pe.nsections == 3 && !strcmp(pe.sec[0].name, ".text") && pe.sec[0].va == 0x10200 &&
	      pe.sec[0].raw == 0x200, "sections %u %s %x %x", pe.nsections, pe.sec[0].name, pe.sec[0].va, pe.sec[0].raw);
	CHECK(pe.has_perfmap && !strcmp(pe.perfmap_name, "r2rapp.ni.r2rmap") && pe.perfmap_version == 1 &&
	      !memcmp(pe.perfmap_sig, sig, 16), "perfmap entry '%s' v%u", pe.perfmap_name, pe.perfmap_version);
	CHECK(pe.has_codeview && pe.cv_age == 1 && strstr(pe.cv_pdb, "r2rapp.pdb"), "codeview '%s'", pe.cv_pdb);
	CHECK(pe.is_managed && pe.has_mvid, "managed %d mvid %d", pe.is_managed, pe.has_mvid);
	pfc_pe_guid_str(pe.mvid, g);
	CHECK(!strcmp(g, mvid_str), "mvid %s", g);
	CHECK(pe.is_r2r && !(pe.r2r_flags & PFC_R2R_FLAG_COMPONENT), "r2r %d flags %x", pe.is_r2r, pe.r2r_flags);
	CHECK(pe.nr_funcs == 3, "%zu runtime functions", pe.nr_funcs);
	/* perf prints the frame at file offset 0xaa1; the map says Leaf is RVA 0x10A80 + 0x4F */
	CHECK(pfc_pe_offset_to_rva(&pe, 0xaa1) == 0x10aa1, "rva %lld", (long long)pfc_pe_offset_to_rva(&pe, 0xaa1));
	CHECK(pfc_pe_rva_to_offset(&pe, 0x10aa1) == 0xaa1, "offset");
	CHECK(pfc_pe_offset_to_rva(&pe, 0x100000) == -1, "offset beyond every section");
	f = pfc_pe_find_func(&pe, 0x10aa1);
	CHECK(f && f->begin == 0x10a80 && f->end == 0x10acf, "func %x-%x", f ? f->begin : 0, f ? f->end : 0);
	CHECK(!pfc_pe_find_func(&pe, 0x10a7f), "no function before the first");
	pfc_pe_free(&pe);
}

/* Every prefix and many damaged copies: an error value or a result, never a crash (the
 * sanitizer build runs this too). */
static void test_pe_damage(const uint8_t *buf, size_t len)
{
	uint8_t *copy = malloc(len);
	struct pfc_pe pe;
	struct pfc_error e;
	size_t cut, i, ok = 0, bad = 0;
	uint32_t rnd = 12345;
	int ret;

	for (cut = 0; cut < len; cut++) {
		memset(&e, 0, sizeof(e));
		ret = pfc_pe_parse(buf, cut, &pe, &e);
		if (ret < 0)
			bad++;
		else
			ok++;
		if (ret < 0)
			CHECK(e.code != 0 && e.detail[0], "cut %zu: error without detail", cut);
		pfc_pe_free(&pe);
	}
	CHECK(bad > 0 && ok > 0, "prefixes: %zu parsed, %zu refused", ok, bad);
	CHECK(pfc_pe_parse(buf, 0x20, &pe, &e) == -PFC_ERR_BAD_MAGIC, "a 32-byte prefix is not a PE image");
	for (i = 0; i < 4000; i++) {
		size_t k, nflip;
		memcpy(copy, buf, len);
		rnd = rnd * 1103515245u + 12345u;
		nflip = 1 + (rnd >> 16) % 8;
		for (k = 0; k < nflip; k++) {
			rnd = rnd * 1103515245u + 12345u;
			/* most damage goes into the headers and the first page, where the parser reads */
			copy[(rnd >> 8) % (i & 1 ? 0x1000 : len)] ^= (uint8_t)(1u << (rnd % 8));
		}
		memset(&e, 0, sizeof(e));
		pfc_pe_parse(copy, len, &pe, &e);
		if (pe.nr_funcs) {
			const struct pfc_pe_func *f = pfc_pe_find_func(&pe, 0x10aa1);
			(void)f;
		}
		pfc_pe_free(&pe);
	}
	free(copy);
}

static void test_r2rmap(const char *buf, size_t len)
{
	struct pfc_r2rmap m;
	struct pfc_error e = { 0 };
	const struct pfc_r2rmap_ent *x;

	CHECK(pfc_r2rmap_parse(buf, len, &m, &e) == 0, "parse");
	CHECK(m.has_sig && !memcmp(m.sig, sig, 16), "signature");
	CHECK(m.version == 1 && m.os == 2 && m.arch == 3 && m.abi == 1, "header %u %d %d %d", m.version, m.os,
	      m.arch, m.abi);
	CHECK(m.n == 3 && m.nr_bad_lines == 0, "%zu entries, %zu bad", m.n, m.nr_bad_lines);
	x = pfc_r2rmap_find(&m, 0x10aa1);
	CHECK(x && !strcmp(pfc_r2rmap_name(&m, x), "System.Int64 Program::Leaf(System.Int64)"), "leaf: %s",
	      x ? pfc_r2rmap_name(&m, x) : "none");
	x = pfc_r2rmap_find(&m, 0x10acf);	/* Leaf is 0x4F long: 0x10acf is past it */
	CHECK(!x, "end is exclusive");
	x = pfc_r2rmap_find(&m, 0x10ae0 + 0xc9);
	CHECK(x && strstr(pfc_r2rmap_name(&m, x), "Main"), "main");
	CHECK(!pfc_r2rmap_find(&m, 0xFFFFFFFF), "header lines are not methods");
	pfc_r2rmap_free(&m);
}

static void test_r2rmap_forms(void)
{
	/* crossgen1 with 16-digit RVAs, CRLF, a bad line, a long length, no final newline */
	static const char cg1[] =
		"0000000000893040 290 int32 [mscorlib] dynamicClass::IL_STUB_PInvoke(native int)\r\n"
		"garbage line\n"
		"00001000 1A2B3 void [mscorlib] X::Big()\n"
		"00000000008932D0 10 void [mscorlib] Y::Z()";
	/* a header whose signature is not 32 hex digits, a method of length 0 (bad) */
	static const char odd[] =
		"FFFFFFFF 00 1234\n"
		"00002000 00 Zero::Length()\n"
		"00002000 10 A::B()\n"
		"00002000 10 A::Later()\n"
		"00002004 04 A::Inner()\n";
	struct pfc_r2rmap m;
	struct pfc_error e = { 0 };
	const struct pfc_r2rmap_ent *x;

	CHECK(pfc_r2rmap_parse(cg1, sizeof(cg1) - 1, &m, &e) == 0, "parse");
	CHECK(m.n == 3 && m.nr_bad_lines == 1 && !m.has_sig, "%zu entries %zu bad", m.n, m.nr_bad_lines);
	x = pfc_r2rmap_find(&m, 0x893040 + 0x28f);
	CHECK(x && strstr(pfc_r2rmap_name(&m, x), "IL_STUB_PInvoke(native int)") &&
	      !strchr(pfc_r2rmap_name(&m, x), '\r'), "crlf");
	x = pfc_r2rmap_find(&m, 0x1000 + 0x1A2B2);
	CHECK(x && strstr(pfc_r2rmap_name(&m, x), "Big"), "long length");
	x = pfc_r2rmap_find(&m, 0x8932D5);
	CHECK(x && !strcmp(pfc_r2rmap_name(&m, x), "void [mscorlib] Y::Z()"), "last line without newline");
	pfc_r2rmap_free(&m);

	CHECK(pfc_r2rmap_parse(odd, sizeof(odd) - 1, &m, &e) == 0, "parse");
	CHECK(!m.has_sig && m.n == 3 && m.nr_bad_lines == 1, "sig %d n %zu bad %zu", m.has_sig, m.n, m.nr_bad_lines);
	x = pfc_r2rmap_find(&m, 0x2005);
	CHECK(x && !strcmp(pfc_r2rmap_name(&m, x), "A::Inner()"), "smallest enclosing: %s",
	      x ? pfc_r2rmap_name(&m, x) : "none");
	x = pfc_r2rmap_find(&m, 0x2001);
	CHECK(x && !strcmp(pfc_r2rmap_name(&m, x), "A::Later()"), "the later of equal ranges wins, got %s",
	      x ? pfc_r2rmap_name(&m, x) : "none");
	pfc_r2rmap_free(&m);

	CHECK(pfc_r2rmap_parse("", 0, &m, &e) == 0 && m.n == 0, "empty");
	pfc_r2rmap_free(&m);
}

static void test_perfinfo(void)
{
	static const char txt[] =
		/* 2016 */
		"NILoad;/path/to/mscorlib.ni.dll;{3fd6c14e-bf71-39bb-81bf-be5c67c31706}\n"
		/* 2.x to 7 */
		"ImageLoad;/usr/share/dotnet/shared/Microsoft.NETCore.App/3.1.0/System.Linq.dll;{8497809E-72D8-460A-9C89-3A2A331061A5};\n"
		/* .NET 8, with a base, a ';' inside the path, CRLF */
		"ImageLoad;/app/we;ird/r2rapp.dll;{8497809e-72d8-460a-9c89-3a2a331061a5};00007F9201340000;\r\n"
		/* .NET 8, not R2R */
		"ImageLoad;/app/il.dll;{00000000-0000-0000-0000-000000000001};0;\n"
		/* not ours, and broken ones */
		"SomethingElse;x;y;\n"
		"ImageLoad;/x.dll;{not-a-guid};\n"
		"ImageLoad;{8497809e-72d8-460a-9c89-3a2a331061a5};\n"
		"ImageLoad;/y.dll;{8497809e-72d8-460a-9c89-3a2a331061a5};zz;\n"
		"ImageLoad";
	struct pfc_perfinfo pi = { 0 };
	struct pfc_error e = { 0 };
	uint8_t g[16];
	char s[40];

	CHECK(pfc_perfinfo_parse(txt, sizeof(txt) - 1, 42, &pi, &e) == 0, "parse");
	CHECK(pi.n == 4, "%zu images", pi.n);
	CHECK(pi.nr_bad_lines == 4, "%zu bad lines", pi.nr_bad_lines);
	if (pi.n == 4) {
		CHECK(!strcmp(pi.v[0].path, "/path/to/mscorlib.ni.dll") && !pi.v[0].has_base, "NILoad %s", pi.v[0].path);
		pfc_pe_guid_str(pi.v[0].mvid, s);
		CHECK(!strcmp(s, "{3fd6c14e-bf71-39bb-81bf-be5c67c31706}"), "guid %s", s);
		pfc_pe_guid_str(pi.v[1].mvid, s);
		CHECK(!strcmp(s, mvid_str) && !pi.v[1].has_base && pi.v[1].pid == 42, "upper-case guid %s", s);
		CHECK(!strcmp(pi.v[2].path, "/app/we;ird/r2rapp.dll") && pi.v[2].has_base &&
		      pi.v[2].base == 0x7F9201340000ull, "path '%s' base %llx", pi.v[2].path,
		      (unsigned long long)pi.v[2].base);
		CHECK(pi.v[3].has_base && pi.v[3].base == 0, "base 0");
	}
	pfc_perfinfo_free(&pi);
	CHECK(pfc_pe_guid_parse("8497809e-72d8-460a-9c89-3a2a331061a5", 36, g) == 0, "bare guid");
	CHECK(pfc_pe_guid_parse("{8497809e-72d8-460a-9c89-3a2a331061a}", 38, g) < 0, "short guid");
	CHECK(pfc_pe_guid_parse("{8497809e+72d8-460a-9c89-3a2a331061a5}", 38, g) < 0, "bad separator");
}

/* The text parsers on every prefix of a real map and on random bytes: no crash, no read
 * past the buffer (the sanitizer build checks), and a prefix never has more entries. */
static void test_text_damage(const char *map, size_t len)
{
	static const char pinfo[] =
		"ImageLoad;/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/System.Private.CoreLib.dll;"
		"{473d0ad3-441b-4fee-a00f-67c03eb1e2b3};00007F9200260000;\n"
		"NILoad;/path/to/mscorlib.ni.dll;{3fd6c14e-bf71-39bb-81bf-be5c67c31706}\n";
	struct pfc_error e;
	struct pfc_r2rmap m;
	struct pfc_perfinfo pi;
	size_t cut, i, last = 0;
	uint32_t rnd = 777;
	char *junk;
	int mono = 1;

	for (cut = 0; cut <= len; cut++) {
		char *copy = malloc(cut + 1);	/* exactly cut bytes for the parser to see */
		memcpy(copy, map, cut);
		memset(&e, 0, sizeof(e));
		pfc_r2rmap_parse(copy, cut, &m, &e);
		if (m.n < last)
			mono = 0;
		last = m.n;
		pfc_r2rmap_free(&m);
		free(copy);
	}
	CHECK(mono && last == 3, "entries over prefixes: last %zu", last);
	for (cut = 0; cut <= sizeof(pinfo) - 1; cut++) {
		char *copy = malloc(cut + 1);
		memcpy(copy, pinfo, cut);
		memset(&pi, 0, sizeof(pi));
		memset(&e, 0, sizeof(e));
		pfc_perfinfo_parse(copy, cut, 1, &pi, &e);
		CHECK(pi.n <= 2, "perfinfo prefix %zu: %zu images", cut, pi.n);
		pfc_perfinfo_free(&pi);
		free(copy);
	}
	junk = malloc(4096);
	for (i = 0; i < 300; i++) {
		size_t k, n = (i * 37) % 4096;
		for (k = 0; k < n; k++) {
			rnd = rnd * 1103515245u + 12345u;
			/* mostly map-like characters, so that lines get far into the parser */
			junk[k] = "0123456789ABCDEFabcdef;{}- \n\r\0xF"[(rnd >> 16) % 32];
		}
		memset(&e, 0, sizeof(e));
		pfc_r2rmap_parse(junk, n, &m, &e);
		pfc_r2rmap_find(&m, rnd);
		pfc_r2rmap_free(&m);
		memset(&pi, 0, sizeof(pi));
		pfc_perfinfo_parse(junk, n, 1, &pi, &e);
		pfc_perfinfo_free(&pi);
	}
	free(junk);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "tests/data/r2r";
	char path[4096];
	size_t len;
	char *buf;

	snprintf(path, sizeof(path), "%s/r2rapp.dll", dir);
	buf = load_file(path, &len);
	if (!buf) {
		printf("FAIL cannot read %s\n", path);
		return 1;
	}
	test_pe((const uint8_t *)buf, len);
	test_pe_damage((const uint8_t *)buf, len);
	free(buf);
	snprintf(path, sizeof(path), "%s/r2rapp.ni.r2rmap", dir);
	buf = load_file(path, &len);
	if (!buf) {
		printf("FAIL cannot read %s\n", path);
		return 1;
	}
	test_r2rmap(buf, len);
	test_text_damage(buf, len);
	free(buf);
	test_r2rmap_forms();
	test_perfinfo();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
