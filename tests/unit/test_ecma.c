/*
 * test_ecma.c - ecma.c and r2rmeta.c on real and damaged images: crossgen2's own r2rmap of
 * tests/data/r2r/r2rapp.dll must come out of the image's metadata line for line, every
 * mapped method must be found by address, the shipped System.Private.CoreLib (when runtime
 * 10.0.12 is installed) must decode without a failed entry and give the runtime's own
 * [PreJIT] names, and every prefix and byte-flipped copy of the image must be refused or
 * read cleanly (never a crash, a hang or a made-up name).
 * usage: test_ecma [DATA_DIR]   (default "tests/data/r2r")
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "loadfile.h"
#include "converter/jit/ecma.h"
#include "converter/jit/r2rmap.h"
#include "converter/jit/r2rmeta.h"

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

#define CORELIB "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/System.Private.CoreLib.dll"

static char *dump(struct pfc_r2rmeta *r, enum pfc_r2rmeta_style style, int *bad)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	*bad = pfc_r2rmeta_dump(r, style, f);
	fclose(f);
	return out;
}

/* The ECMA-335 II.23.2 examples of compressed integers. */
static void test_compressed(void)
{
	static const struct { uint8_t b[4]; int n; uint32_t v; } ex[] = {
		{ { 0x03 }, 1, 0x03 }, { { 0x7F }, 1, 0x7F }, { { 0x80, 0x80 }, 2, 0x80 },
		{ { 0xAE, 0x57 }, 2, 0x2E57 }, { { 0xBF, 0xFF }, 2, 0x3FFF },
		{ { 0xC0, 0x00, 0x40, 0x00 }, 4, 0x4000 }, { { 0xDF, 0xFF, 0xFF, 0xFF }, 4, 0x1FFFFFFF },
	};
	size_t i;

	for (i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		const uint8_t *p = ex[i].b;
		uint32_t v = 0;
		CHECK(pfc_ecma_uncompress(&p, ex[i].b + ex[i].n, &v) == 0 && v == ex[i].v && p == ex[i].b + ex[i].n,
		      "example %zu: got 0x%x", i, v);
		p = ex[i].b;
		CHECK(pfc_ecma_uncompress(&p, ex[i].b + ex[i].n - 1, &v) < 0, "example %zu cut short", i);
	}
	{
		const uint8_t bad[4] = { 0xE0, 0, 0, 0 }, *p = bad;
		uint32_t v;
		CHECK(pfc_ecma_uncompress(&p, bad + 4, &v) < 0, "0xE0 is not a compressed integer");
	}
}

/* crossgen2's map of the image, compared line for line with the image's own names. */
static void test_app(const char *dir)
{
	char path[4096], *img, *map, *out;
	size_t ilen, mlen;
	struct pfc_r2rmeta *r;
	struct pfc_r2rmeta_stats st;
	struct pfc_error err;
	struct pfc_r2rmap m;
	int bad = -1, ret;
	size_t i;

	snprintf(path, sizeof(path), "%s/r2rapp.dll", dir);
	img = load_file(path, &ilen);
	snprintf(path, sizeof(path), "%s/r2rapp.ni.r2rmap", dir);
	map = load_file(path, &mlen);
	CHECK(img && map, "cannot read the test data in %s", dir);
	if (!img || !map) {
		free(img);
		free(map);
		return;
	}
	memset(&err, 0, sizeof(err));
	ret = pfc_r2rmeta_parse((const uint8_t *)img, ilen, NULL, &r, &err);
	CHECK(ret == 0, "parse: %d %s", ret, err.detail);
	if (ret < 0)
		goto out;
	pfc_r2rmeta_stats(r, &st);
	CHECK(st.nr_bad_entries == 0 && !st.composite && st.nr_methods == 3, "%zu methods, %zu bad entries",
	      st.nr_methods, st.nr_bad_entries);
	out = dump(r, PFC_R2RMETA_R2RMAP, &bad);
	CHECK(out && bad == 0, "dump: %d names not formatted", bad);
	CHECK(out && !strcmp(out, map), "r2rmap style differs from crossgen2's map:\n%s---\n%s", out ? out : "", map);
	free(out);
	/* every entry of the map: found by its first and last byte, with its range */
	memset(&m, 0, sizeof(m));
	CHECK(pfc_r2rmap_parse(map, mlen, &m, &err) == 0 && m.n == 3, "map entries");
	for (i = 0; i < m.n; i++) {
		struct pfc_r2rmeta_hit h;
		const struct pfc_r2rmap_ent *e = &m.v[i];
		const char *nm = pfc_r2rmap_name(&m, e), *colons = strstr(nm, "::"), *rt;
		CHECK(pfc_r2rmeta_find(r, (uint32_t)e->rva, &h) == 0 && h.begin == e->rva &&
		      h.end == e->rva + e->len && !h.cold, "find 0x%llx", (unsigned long long)e->rva);
		CHECK(pfc_r2rmeta_find(r, (uint32_t)(e->rva + e->len - 1), &h) == 0 && h.begin == e->rva,
		      "find the last byte of 0x%llx", (unsigned long long)e->rva);
		/* the runtime's style names the same method of the same assembly */
		rt = pfc_r2rmeta_find(r, (uint32_t)e->rva, &h) == 0 ? pfc_r2rmeta_name(r, h.method, h.cold) : NULL;
		CHECK(rt && colons && strstr(rt, "[r2rapp] ") && strstr(rt, "[PreJIT]") &&
		      strncmp(strstr(rt, "::"), colons, (size_t)(strchr(colons, '(') - colons + 1)) == 0,
		      "runtime name of %s: %s", nm, rt ? rt : "(none)");
	}
	{
		struct pfc_r2rmeta_hit h;
		CHECK(pfc_r2rmeta_find(r, 0x1000, &h) < 0, "an address before the code is no method");
		CHECK(pfc_r2rmeta_find(r, 0xFFFFFFF0, &h) < 0, "an address after the code is no method");
	}
	pfc_r2rmap_free(&m);
	pfc_r2rmeta_free(r);
out:
	free(img);
	free(map);
}

/* crossgen2's maps of a composite image (names from its component stubs' metadata) and of
 * an image with generic instantiations, against the images' own names. */
static void test_map_of(const char *dir, const char *image, const char *mapname, int composite, size_t nmethods)
{
	char path[4096], *map, *out;
	size_t mlen;
	struct pfc_r2rmeta *r;
	struct pfc_r2rmeta_stats st;
	struct pfc_error err;
	int bad = -1, ret;

	snprintf(path, sizeof(path), "%s/%s", dir, mapname);
	map = load_file(path, &mlen);
	snprintf(path, sizeof(path), "%s/%s", dir, image);
	memset(&err, 0, sizeof(err));
	ret = pfc_r2rmeta_open(path, &r, &err);
	CHECK(map && ret == 0, "%s: %s", path, err.detail);
	if (ret < 0 || !map) {
		free(map);
		return;
	}
	pfc_r2rmeta_stats(r, &st);
	CHECK(st.composite == composite && st.nr_methods == nmethods && !st.nr_bad_entries,
	      "%s: composite %d, %zu methods, %zu bad entries", image, st.composite, st.nr_methods, st.nr_bad_entries);
	out = dump(r, PFC_R2RMETA_R2RMAP, &bad);
	CHECK(out && bad == 0 && !strcmp(out, map), "%s: r2rmap style differs from crossgen2's map:\n%s---\n%s", image,
	      out ? out : "", map);
	free(out);
	out = dump(r, PFC_R2RMETA_RUNTIME, &bad);
	CHECK(out && bad == 0, "%s: %d runtime names not formatted", image, bad);
	free(out);
	pfc_r2rmeta_free(r);
	free(map);
}

static void test_composite(const char *dir)
{
	char d[4096];
	struct pfc_r2rmeta *r;
	struct pfc_error err;

	snprintf(d, sizeof(d), "%s/composite", dir);
	test_map_of(d, "app.r2r.dll", "app.r2r.ni.r2rmap", 1, 13);
	test_map_of(d, "single/fmt.dll", "single/fmt.ni.r2rmap", 0, 8);
	/* a component stub has no code: it says where the code is */
	snprintf(d, sizeof(d), "%s/composite/app.dll", dir);
	memset(&err, 0, sizeof(err));
	CHECK(pfc_r2rmeta_open(d, &r, &err) == -PFC_ERR_UNSUPPORTED && strstr(err.detail, "'app.r2r.dll'"),
	      "component stub: %s", err.detail);
}

/* The shipped CoreLib: the doc's counts and names observed from runtime 10.0.12 itself
 * (its jitdump [PreJIT] records). */
static void test_corelib(void)
{
	static const struct { const char *name; uint32_t len; } prejit[] = {
		{ "instance !1 [System.Private.CoreLib] System.Collections.Generic.Dictionary`2[System.Int32,System.__Canon]::get_Item(!0)[PreJIT]", 0x2a },
		{ "native int [System.Private.CoreLib] System.Runtime.CompilerServices.GenericsHelpers::ClassWithSlotAndModule(native int,valuetype System.Runtime.CompilerServices.GenericsHelpers/GenericHandleArgs*)[PreJIT]", 0xa1 },
	};
	struct pfc_r2rmeta *r;
	struct pfc_r2rmeta_stats st;
	struct pfc_error err;
	struct timespec t0, t1;
	char *out, line[1024];
	int bad = -1, ret;
	size_t i;

	memset(&err, 0, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = pfc_r2rmeta_open(CORELIB, &r, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ret == -PFC_ERR_OPEN) {
		printf("skip corelib: %s is not installed\n", CORELIB);
		return;
	}
	CHECK(ret == 0, "parse: %s", err.detail);
	if (ret < 0)
		return;
	pfc_r2rmeta_stats(r, &st);
	printf("corelib: %zu methods in %zu runtime functions, decoded in %.1f ms\n", st.nr_methods, st.nr_funcs,
	       (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	/* 21,579 MethodDef and 27,076 instance entries, 50,482 runtime functions */
	CHECK(st.nr_methods == 48655 && st.nr_funcs == 50482 && st.nr_bad_entries == 0, "%zu methods, %zu funcs, %zu bad",
	      st.nr_methods, st.nr_funcs, st.nr_bad_entries);
	out = dump(r, PFC_R2RMETA_RUNTIME, &bad);
	CHECK(out && bad == 0, "%d names not formatted", bad);
	for (i = 0; out && i < sizeof(prejit) / sizeof(prejit[0]); i++) {
		snprintf(line, sizeof(line), " %02X %s\n", prejit[i].len, prejit[i].name);
		CHECK(strstr(out, line) != NULL, "no line '%s'", line);
	}
	free(out);
	out = dump(r, PFC_R2RMETA_R2RMAP, &bad);
	CHECK(out && bad == 0 && !strstr(out, "!0"), "r2rmap style: %d not formatted or a generic parameter left", bad);
	free(out);
	pfc_r2rmeta_free(r);
}

/* Damaged images: refused with an error value, or read; the dump never crashes either. */
static void try_bytes(const uint8_t *b, size_t len, size_t *nok)
{
	struct pfc_r2rmeta *r;
	struct pfc_error err;
	int bad;

	memset(&err, 0, sizeof(err));
	if (pfc_r2rmeta_parse(b, len, NULL, &r, &err) == 0) {
		char *out = dump(r, PFC_R2RMETA_RUNTIME, &bad);
		free(out);
		out = dump(r, PFC_R2RMETA_R2RMAP, &bad);
		free(out);
		pfc_r2rmeta_free(r);
		(*nok)++;
	} else {
		CHECK(err.code != 0, "refused without an error code");
	}
}

static void test_damaged(const char *dir, const char *name, int flips)
{
	char path[4096], *img;
	uint8_t *copy;
	size_t len, cut, nok = 0;
	int i;
	unsigned seed = 12345;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	img = load_file(path, &len);
	if (!img)
		return;
	/* every prefix, in a buffer of exactly that size so that ASan sees any overread */
	for (cut = 0; cut < len; cut++) {
		copy = malloc(cut ? cut : 1);
		memcpy(copy, img, cut);
		try_bytes(copy, cut, &nok);
		free(copy);
	}
	CHECK(nok < len, "prefixes: %zu of %zu read", nok, len);
	/* byte flips: one to eight random bytes of the image */
	copy = malloc(len);
	for (i = 0; i < flips; i++) {
		int k, n;
		memcpy(copy, img, len);
		seed = seed * 1103515245 + 12345;
		n = 1 + (int)(seed >> 16) % 8;
		for (k = 0; k < n; k++) {
			seed = seed * 1103515245 + 12345;
			copy[(seed >> 8) % len] ^= (uint8_t)(1 + (seed >> 3) % 255);
		}
		try_bytes(copy, len, &nok);
	}
	free(copy);
	free(img);
	passed++;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "tests/data/r2r";

	test_compressed();
	test_app(dir);
	test_composite(dir);
	test_corelib();
	test_damaged(dir, "r2rapp.dll", 20000);
	test_damaged(dir, "composite/app.r2r.dll", 5000);
	test_damaged(dir, "composite/single/fmt.dll", 5000);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
