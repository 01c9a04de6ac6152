/*
 * test_r2rcache.c - checks the payload of a ReadyToRun image's entry in the symbol cache
 * (r2rcache.c): answers added in any order are read back sorted, each RVA of a span finds
 * its name and method start and RVAs outside every span find nothing; a second conversion's
 * answers merge with the first's (overlaps kept once, modules once and sorted); a payload
 * with any byte changed either is refused or reads as a consistent map, and one cut short is
 * refused; the whole entry (symcache.c's header and checksum) round-trips on disk under the
 * "r2r" kind, and an entry with a byte changed on disk is reported corrupt and removed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "converter/jit/r2rcache.h"
#include "converter/native/symcache.h"
#include "tests/unit/check.h"

static void expect(const struct pfc_r2rcache_view *v, uint32_t rva, const char *name, uint32_t begin, const char *what)
{
	const char *n = NULL;
	uint32_t b = 0;
	int got = pfc_r2rcache_find(v, rva, &n, &b);

	if (!name && begin == 0) {
		check(!got, "%s: nothing at %#x", what, rva);
		return;
	}
	check(got == 1 && b == begin && ((!name && !n) || (name && n && !strcmp(n, name))),
	      "%s: %#x is in '%s' from %#x (got %d '%s' %#x)", what, rva, name ? name : "(none)", begin, got,
	      n ? n : "(none)", b);
}

/* every byte of p changed in turn: refused, or a map whose every lookup is in bounds */
static void flips(const uint8_t *p, size_t len)
{
	uint8_t *c = malloc(len);
	size_t i, refused = 0;

	for (i = 0; c && i < len; i++) {
		struct pfc_r2rcache_view v;
		memcpy(c, p, len);
		c[i] ^= 0x5a;
		if (pfc_r2rcache_parse(c, len, &v) < 0) {
			refused++;
			continue;
		}
		for (uint32_t r = 0; r < 0x3000; r += 7) {
			const char *n;
			uint32_t b;
			if (pfc_r2rcache_find(&v, r, &n, &b) && n)
				check(n >= v.pool && n < v.pool + v.pool_len, "flip %zu: name inside the pool", i);
		}
	}
	for (i = 0; c && i < len; i++)
		check(pfc_r2rcache_parse(p, i, &(struct pfc_r2rcache_view){ 0 }) < 0, "cut to %zu bytes: refused", i);
	check(refused > len / 4, "most changed bytes are refused (%zu of %zu)", refused, len);
	free(c);
}

int main(void)
{
	struct pfc_r2rcache_add a = { 0 }, b = { 0 };
	struct pfc_r2rcache_view v, w;
	struct pfc_symcache_key k;
	struct pfc_symcache_bytes e;
	uint8_t *p, *q;
	size_t len, qlen;
	char dir[] = "/tmp/perfconv-r2rcache.XXXXXX", path[4096];

	/* one conversion's answers, out of order, one twice, one without a name */
	pfc_r2rcache_add(&a, 0x2000, 0x2040, 0x2000, "[System.Private.CoreLib] System.String::Concat(string,string)[PreJIT]");
	pfc_r2rcache_add(&a, 0x1000, 0x1080, 0x1000, "[A] B::C()[PreJIT]");
	pfc_r2rcache_add(&a, 0x1080, 0x10a0, 0x1000, "[A] B::C()[PreJIT]");	/* its funclet */
	pfc_r2rcache_add(&a, 0x2000, 0x2040, 0x2000, "[System.Private.CoreLib] System.String::Concat(string,string)[PreJIT]");
	pfc_r2rcache_add(&a, 0x1800, 0x1801, 0x1800, NULL);
	pfc_r2rcache_add(&a, 0x10, 0x10, 0x10, "empty span: not kept");
	pfc_r2rcache_add_module(&a, "System.Runtime");
	pfc_r2rcache_add_module(&a, "System.Runtime");
	pfc_r2rcache_add_module(&a, "bad/name");
	check(pfc_r2rcache_encode(NULL, &a, 48655, 2, 0, &p, &len) == 0, "encode");
	check(pfc_r2rcache_parse(p, len, &v) == 0, "read back");
	check(v.nrec == 4 && v.nmods == 1 && v.nr_methods == 48655 && v.nr_bad_entries == 2 && !v.composite,
	      "4 records, 1 module, the figures (%u %u %u)", v.nrec, v.nmods, v.nr_methods);
	check(v.nmods == 1 && !strcmp(pfc_r2rcache_module(&v, 0), "System.Runtime"), "the module");
	expect(&v, 0x1000, "[A] B::C()[PreJIT]", 0x1000, "first");
	expect(&v, 0x109f, "[A] B::C()[PreJIT]", 0x1000, "funclet");
	expect(&v, 0x10a0, NULL, 0, "past the funclet");
	expect(&v, 0x0fff, NULL, 0, "before the first");
	expect(&v, 0x1800, NULL, 0x1800, "no method there");
	expect(&v, 0x1801, NULL, 0, "past the answer without a name");
	expect(&v, 0x203f, "[System.Private.CoreLib] System.String::Concat(string,string)[PreJIT]", 0x2000, "last");
	expect(&v, 0x2040, NULL, 0, "past the last");

	/* the next conversion: new answers, one overlapping an old one, a second module */
	pfc_r2rcache_add(&b, 0x3000, 0x3010, 0x2ff0 + 0x10, "[A] D::E()[PreJit-cold]");
	pfc_r2rcache_add(&b, 0x1000, 0x1080, 0x1000, "[A] B::C()[PreJIT]");
	pfc_r2rcache_add(&b, 0x0800, 0x0900, 0x0800, "[A] F::G()[PreJIT]");
	pfc_r2rcache_add_module(&b, "Another");
	pfc_r2rcache_add_module(&b, "System.Runtime");
	check(pfc_r2rcache_encode(&v, &b, 48655, 2, 1, &q, &qlen) == 0, "merge");
	check(pfc_r2rcache_parse(q, qlen, &w) == 0 && w.nrec == 6 && w.nmods == 2 && w.composite,
	      "merged: 6 records, 2 modules (%u, %u)", w.nrec, w.nmods);
	check(w.nmods == 2 && !strcmp(pfc_r2rcache_module(&w, 0), "Another") &&
	      !strcmp(pfc_r2rcache_module(&w, 1), "System.Runtime"), "modules sorted, once");
	expect(&w, 0x0850, "[A] F::G()[PreJIT]", 0x0800, "merged: new");
	expect(&w, 0x1090, "[A] B::C()[PreJIT]", 0x1000, "merged: old");
	expect(&w, 0x3005, "[A] D::E()[PreJit-cold]", 0x3000, "merged: new cold");
	flips(q, qlen);

	/* on disk: symcache.c's header and checksum around it */
	check(mkdtemp(dir) != NULL, "temporary directory");
	check(pfc_symcache_key_text(&k, "r2r exe=test mvid={00000000-0000-0000-0000-000000000000} size=1") == 0, "key");
	check(pfc_symcache_put(dir, &pfc_symcache_r2r, &k, q, qlen) == 0, "written");
	check(pfc_symcache_get(dir, &pfc_symcache_r2r, &k, &e) == 1 && e.len == qlen && !memcmp(e.p, q, qlen), "read");
	pfc_symcache_bytes_free(&e);
	snprintf(path, sizeof(path), "%s/r2r/%s", dir, k.name);
	{
		FILE *f = fopen(path, "r+b");
		check(f && fseek(f, -3, SEEK_END) == 0 && fputc('#', f) != EOF && fclose(f) == 0, "a byte changed");
	}
	check(pfc_symcache_get(dir, &pfc_symcache_r2r, &k, &e) == -EINVAL, "a changed entry is corrupt");
	check(access(path, F_OK) != 0, "and removed");
	check(pfc_symcache_put(dir, &pfc_symcache_r2r, &k, q, qlen) == 0 && pfc_symcache_get(dir, &pfc_symcache_r2r, &k, &e) == 1,
	      "written again, read");
	pfc_symcache_bytes_free(&e);
	unlink(path);
	snprintf(path, sizeof(path), "%s/r2r", dir);
	rmdir(path);
	rmdir(dir);

	free(p);
	free(q);
	pfc_r2rcache_add_free(&a);
	pfc_r2rcache_add_free(&b);
	return check_done("test_r2rcache");
}
