/*
 * test_svg.c - tests the SVG writer's pieces that the end-to-end test (tests/svg.sh) cannot
 * reach with the fixtures' names: XML escaping of hostile names (markup characters, bytes
 * that are not UTF-8, control characters), label truncation by characters, frame kinds
 * by DSO and the color families.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "converter/machine/machine.h"
#include "converter/machine/stacks.h"
#include "formats/svg.h"

static int passed, failed;

#define CHECK(cond, ...) do { \
		if (cond) { \
			passed++; \
		} else { \
			failed++; \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
		} \
	} while (0)

/* what pfc_svg_put_xml (max characters) or pfc_svg_put_label (w >= 0) writes */
static char *render(const char *s, size_t n, size_t max, double w)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	if (w >= 0)
		pfc_svg_put_label(f, s, n, w);
	else
		pfc_svg_put_xml(f, s, n, max);
	fclose(f);
	return buf;
}

static void xml_case(const char *in, size_t n, const char *want)
{
	char *got = render(in, n, SIZE_MAX, -1);

	CHECK(!strcmp(got, want), "xml of '%.*s': got '%s', want '%s'", (int)n, in, got, want);
	free(got);
}

static void label_case(const char *in, double w, const char *want)
{
	char *got = render(in, strlen(in), 0, w);

	CHECK(!strcmp(got, want), "label of '%s' in %.1f px: got '%s', want '%s'", in, w, got, want);
	free(got);
}

static void test_xml(void)
{
	xml_case("plain", 5, "plain");
	xml_case("a<b>&\"c'", 8, "a&lt;b&gt;&amp;&quot;c'");
	xml_case("std::map<int, T>::at", 20, "std::map&lt;int, T&gt;::at");
	/* valid UTF-8 passes; each maximal invalid subpart is one U+FFFD */
	xml_case("caf\xc3\xa9", 5, "caf\xc3\xa9");
	xml_case("x\xffy", 3, "x\xef\xbf\xbdy");
	xml_case("x\xe2\x82y", 4, "x\xef\xbf\xbdy");            /* truncated 3-byte sequence */
	xml_case("x\xc0\xafy", 4, "x\xef\xbf\xbd\xef\xbf\xbdy"); /* overlong: two bad bytes */
	xml_case("x\xed\xa0\x80y", 5, "x\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdy"); /* a surrogate */
	xml_case("\xf0\x9f\x94\xa5", 4, "\xf0\x9f\x94\xa5");
	xml_case("end\xf0\x9f", 5, "end\xef\xbf\xbd");           /* cut at the end of the string */
	/* controls but the tab are replaced (XML 1.0 forbids most, and would turn a return into a newline) */
	xml_case("a\x01" "b\x7f" "c\td", 7, "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\td");
	xml_case("a\nb", 3, "a\xef\xbf\xbd" "b");
	xml_case("nul\0in", 6, "nul\xef\xbf\xbdin");
	xml_case("\xef\xbf\xbe", 3, "\xef\xbf\xbd");             /* U+FFFE */
}

static void test_label(void)
{
	/* 12 px font, 0.59 em a character: 7.08 px; three characters at least */
	label_case("function", 20.0, "");
	label_case("function", 21.3, "f..");
	label_case("function", 56.7, "function");
	label_case("function", 56.6, "funct..");
	label_case("a<b>c", 30.0, "a&lt;..");
	/* characters, not bytes: a multi-byte character is never cut */
	label_case("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 30.0, "\xc3\xa9\xc3\xa9..");
	label_case("\xc3\xa9\xc3\xa9\xc3\xa9", 22.0, "\xc3\xa9\xc3\xa9\xc3\xa9");
	label_case("x", 0, "");
	/* a .NET name that does not fit starts at its type, then at its method, never "Micr.." */
	label_case("Microsoft.AspNetCore.Server.Kestrel.Core!Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpProtocol::ProcessRequests(int)",
		   300.0, "HttpProtocol::ProcessRequests(int)");
	label_case("Microsoft.AspNetCore.Server.Kestrel.Core!Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpProtocol::ProcessRequests(int)",
		   150.0, "ProcessRequests(int)");
	label_case("Microsoft.AspNetCore.Server.Kestrel.Core!Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpProtocol::ProcessRequests(int)",
		   60.0, "Proces..");
	/* generic arguments hold dots and "::" is looked for outside brackets */
	label_case("System.Private.CoreLib!System.Collections.Generic.Dictionary`2[System.__Canon,System.Int32]::TryInsert",
		   400.0, "Dictionary`2[System.__Canon,System.Int32]::TryInsert");
	label_case("System.Private.CoreLib!System.Collections.Generic.Dictionary`2[System.__Canon,System.Int32]::TryInsert",
		   100.0, "TryInsert");
	/* a C++ name keeps flamegraph.pl's cut */
	label_case("std::vector<int>::push_back(int const&)", 100.0, "std::vector&lt;..");
}

static void test_kinds(void)
{
	struct pfc_dso kernel = { .kind = PFC_DSO_KERNEL, .name = "[kernel.kallsyms]" };
	struct pfc_dso bpf = { .kind = PFC_DSO_KSYM, .name = "bpf_prog_1234" };
	struct pfc_dso map = { .kind = PFC_DSO_PERFMAP, .name = "/tmp/perf-42.map" };
	struct pfc_dso jitted = { .kind = PFC_DSO_FILE, .name = "/root/.debug/jit/x/jitted-42-7.so" };
	struct pfc_dso libc = { .kind = PFC_DSO_FILE, .name = "/usr/lib/x86_64-linux-gnu/libc.so.6" };
	struct pfc_dso vdso = { .kind = PFC_DSO_VDSO, .name = "[vdso]" };
	struct pfc_frame f;
	char a[32], b[32];

	memset(&f, 0, sizeof(f));
	f.dso = &kernel;
	CHECK(pfc_svg_frame_kind(&f) == PFC_SVG_KERNEL, "kernel.kallsyms is kernel");
	f.dso = &bpf;
	CHECK(pfc_svg_frame_kind(&f) == PFC_SVG_KERNEL, "a KSYMBOL is kernel");
	f.dso = &map;
	CHECK(pfc_svg_frame_kind(&f) == PFC_SVG_JIT, "a perf map is JIT");
	f.dso = &jitted;
	CHECK(pfc_svg_frame_kind(&f) == PFC_SVG_JIT, "jitted-*.so is JIT");
	f.dso = &libc;
	CHECK(pfc_svg_frame_kind(&f) == PFC_SVG_NATIVE, "libc is native");
	/* a PE image's ReadyToRun code is managed code, coloured as JIT code */
	{
		struct pfc_dso pe = { .kind = PFC_DSO_FILE, .name = "/usr/share/dotnet/shared/x/System.Private.CoreLib.dll",
				      .r2r = 1 };
		f.dso = &pe;
		CHECK(pfc_svg_frame_kind(&f) == PFC_SVG_JIT, "a ReadyToRun image is managed (JIT) code");
	}
	f.dso = &vdso;
	CHECK(pfc_svg_frame_kind(&f) == PFC_SVG_NATIVE, "the vdso is user code");
	f.dso = NULL;
	CHECK(pfc_svg_frame_kind(&f) == PFC_SVG_NATIVE, "an unmapped user address is native");
	f.kernel = 1;
	CHECK(pfc_svg_frame_kind(&f) == PFC_SVG_KERNEL, "an unmapped kernel address is kernel");

	/* the same name gives the same color; the kind picks the family */
	pfc_svg_color(PFC_SVG_JIT, "Main", 4, a, sizeof(a));
	pfc_svg_color(PFC_SVG_JIT, "Main", 4, b, sizeof(b));
	CHECK(!strcmp(a, b), "colors are a function of the name: %s %s", a, b);
	{
		static const char *const names[] = { "a", "schedule", "do_syscall_64", "[unknown]", "main",
						     "JS:*inner", "\xff", "" };
		size_t i;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			int r, g, bl;
			size_t n = strlen(names[i]);

			pfc_svg_color(PFC_SVG_KERNEL, names[i], n, a, sizeof(a));
			CHECK(sscanf(a, "rgb(%d,%d,%d)", &r, &g, &bl) == 3 && r >= 225 && g >= 130 && g <= 190 &&
			      bl <= 40, "kernel orange: %s", a);
			pfc_svg_color(PFC_SVG_JIT, names[i], n, a, sizeof(a));
			CHECK(sscanf(a, "rgb(%d,%d,%d)", &r, &g, &bl) == 3 && g >= 170 && r <= 120 && bl <= 110,
			      "JIT green: %s", a);
			pfc_svg_color(PFC_SVG_NATIVE, names[i], n, a, sizeof(a));
			CHECK(sscanf(a, "rgb(%d,%d,%d)", &r, &g, &bl) == 3 && r >= 200 && g <= 130 && bl == g,
			      "native red: %s", a);
			pfc_svg_color(PFC_SVG_PROCESS, names[i], n, a, sizeof(a));
			CHECK(sscanf(a, "rgb(%d,%d,%d)", &r, &g, &bl) == 3 && bl > r && bl >= 205,
			      "process grey blue: %s", a);
		}
	}
}

int main(void)
{
	test_xml();
	test_label();
	test_kinds();
	printf("test_svg: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
