/*
 * test_symcache.c - checks the kernel symbol cache (symcache.c) and the table image it stores
 * (symtab.c): a table read back from an entry answers every lookup as the table read from
 * the kallsyms file (the fixtures' and, where readable, this machine's /proc/kallsyms); an
 * entry with any byte changed, cut short, of another key or version is refused; entries
 * are written atomically and no more than PFC_SYMCACHE_ENTRIES are kept.  The ELF kind: a
 * binary's table is written on the first load and read on the second, answering as the
 * table read from the file; a corrupt entry is reported, removed and written again; the
 * bound in bytes keeps the newest entries.  Byte entries (kallsyms-text) round-trip.  An
 * image read in place with damaged trees or records: every lookup ends, none reads outside.
 * The build-id note walker (buildid.c) on notes of other kinds, empty, odd-sized and cut
 * short, and the running kernel's key naming the build-id of the tests' stand-in kernel.
 * usage: test_symcache [FIXTURES_DIR]   (default "fixtures")
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "converter/native/buildid.h"
#include "converter/native/symcache.h"
#include "tests/unit/check.h"

static int same_sym(const struct pfc_sym *a, const struct pfc_sym *b)
{
	if (!a || !b)
		return a == b;
	return a->start == b->start && a->end == b->end && !strcmp(a->name, b->name) &&
	       !a->module == !b->module && (!a->module || !strcmp(a->module, b->module)) &&
	       a->binding == b->binding && a->flags == b->flags;
}

/* every lookup at each symbol's edges gives the same symbol in both tables */
static void compare(const char *what, const struct pfc_symtab *a, const struct pfc_symtab *b)
{
	size_t i, bad = 0;

	check(a->nr == b->nr, "%s: %zu symbols, read back %zu", what, a->nr, b->nr);
	check(pfc_symtab_check(b) == 0, "%s: the trees read back are valid", what);
	for (i = 0; i < a->nr && bad < 5; i++) {
		uint64_t at[5] = { a->syms[i].start, a->syms[i].start + 1, a->syms[i].end - 1, a->syms[i].end,
				   a->syms[i].start - 1 };
		int k;

		for (k = 0; k < 5; k++)
			if (!same_sym(pfc_symtab_find(a, at[k]), pfc_symtab_find(b, at[k]))) {
				bad++;
				check(0, "%s: lookup of %#llx differs", what, (unsigned long long)at[k]);
			}
	}
	check(bad == 0, "%s: every lookup the same", what);
}

static void round_trip(const char *what, const char *kallsyms, const struct pfc_symcache_key *k)
{
	struct pfc_symtab t, u;
	uint8_t *buf;
	size_t len, i, refused = 0, tried = 0;

	memset(&t, 0, sizeof(t));
	if (pfc_kallsyms_load(kallsyms, &t) != 0 || t.nr == 0) {
		printf("%s: cannot read '%s', skipped\n", what, kallsyms);
		pfc_symtab_free(&t);
		return;
	}
	check(pfc_symcache_encode(k, &t, &buf, &len) == 0, "%s: encode", what);
	check(pfc_symcache_parse(buf, len, k, &u) == 0, "%s: parse", what);
	compare(what, &t, &u);
	pfc_symtab_free(&u);
	{
		/* the same read in place from a file, as a conversion reads it */
		char dir[] = "/tmp/test_symcache.XXXXXX", cmd[300], name[300];
		uint64_t lo[2] = { 0 }, hi[2] = { 0 };

		if (mkdtemp(dir)) {
			check(pfc_symcache_store(dir, k, &t) == 0, "%s: store", what);
			check(pfc_symcache_load(dir, k, &u) == 1 && u.img, "%s: read in place", what);
			snprintf(name, sizeof(name), "%s in place", what);
			compare(name, &t, &u);
			check(pfc_symtab_core_range(&t, &lo[0], &hi[0]) == pfc_symtab_core_range(&u, &lo[1], &hi[1]) &&
			      lo[0] == lo[1] && hi[0] == hi[1], "%s: the same range outside modules", what);
			pfc_symtab_free(&u);
			snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
			check(system(cmd) == 0, "%s: clean up", what);
		}
	}
	/* cut anywhere: refused */
	for (i = 0; i < len; i += len / 97 + 1) {
		tried++;
		if (pfc_symcache_parse(buf, i, k, &u) == -EINVAL)
			refused++;
		pfc_symtab_free(&u);
	}
	check(refused == tried, "%s: %zu of %zu truncated entries refused", what, refused, tried);
	/* one byte changed anywhere (header, key, records, names): refused */
	refused = tried = 0;
	for (i = 0; i < len; i += len / 211 + 1) {
		buf[i] ^= 0x20;
		tried++;
		if (pfc_symcache_parse(buf, len, k, &u) == -EINVAL)
			refused++;
		pfc_symtab_free(&u);
		buf[i] ^= 0x20;
	}
	check(refused == tried, "%s: %zu of %zu changed entries refused", what, refused, tried);
	free(buf);
	pfc_symtab_free(&t);
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* store, load, a corrupt entry, the bound */
static void on_disk(const char *kallsyms)
{
	char dir[] = "/tmp/test_symcache.XXXXXX", kdir[256], path[512], cmd[300];
	struct pfc_symcache_key k = { 0 }, other;
	struct pfc_symtab t, u;
	FILE *f;
	int i;

	memset(&t, 0, sizeof(t));
	if (!mkdtemp(dir) || pfc_kallsyms_load(kallsyms, &t) != 0) {
		check(0, "on disk: set-up");
		return;
	}
	snprintf(kdir, sizeof(kdir), "%s/kallsyms", dir);
	snprintf(k.text, sizeof(k.text), "bid=test boot=1");
	snprintf(k.name, sizeof(k.name), "00000000000000aa");
	check(pfc_symcache_load(dir, &k, &u) == 0, "on disk: a miss before any store");
	check(pfc_symcache_store(dir, &k, &t) == 0, "on disk: store");
	check(pfc_symcache_load(dir, &k, &u) == 1, "on disk: a hit after the store");
	compare("on disk", &t, &u);
	pfc_symtab_free(&u);
	/* another key whose name is the same file (a hash collision): refused and removed */
	other = k;
	snprintf(other.text, sizeof(other.text), "bid=test boot=2");
	check(pfc_symcache_load(dir, &other, &u) == -EINVAL, "on disk: another key's entry is refused");
	snprintf(path, sizeof(path), "%s/%s", kdir, k.name);
	check(access(path, F_OK) != 0, "on disk: the refused entry is removed");
	/* a byte flipped on disk */
	check(pfc_symcache_store(dir, &k, &t) == 0, "on disk: store again");
	f = fopen(path, "r+b");
	if (f) {
		fseek(f, 1000, SEEK_SET);
		fputc(0x5a ^ fgetc(f), f);
		fseek(f, 1000, SEEK_SET);
		fclose(f);
	}
	check(pfc_symcache_load(dir, &k, &u) == -EINVAL, "on disk: a corrupt entry is refused");
	check(pfc_symcache_load(dir, &k, &u) == 0, "on disk: and then missing");
	/* the bound: the newest PFC_SYMCACHE_ENTRIES stay */
	for (i = 0; i < PFC_SYMCACHE_ENTRIES + 4; i++) {
		snprintf(k.name, sizeof(k.name), "%016x", i);
		pfc_symcache_store(dir, &k, &t);
		usleep(2000);	/* distinct modification times */
	}
	check(count_entries(kdir) == PFC_SYMCACHE_ENTRIES, "on disk: %zu entries kept, %d wanted", count_entries(kdir),
	      PFC_SYMCACHE_ENTRIES);
	snprintf(k.name, sizeof(k.name), "%016x", PFC_SYMCACHE_ENTRIES + 3);
	check(pfc_symcache_load(dir, &k, &u) == 1, "on disk: the newest entry is kept");
	pfc_symtab_free(&u);
	snprintf(k.name, sizeof(k.name), "%016x", 0);
	check(pfc_symcache_load(dir, &k, &u) == 0, "on disk: the oldest entry is gone");
	pfc_symtab_free(&t);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	check(system(cmd) == 0, "on disk: clean up");
}

/* the fixture libc's build-id: given, so that no place is searched for the file */
static const uint8_t libc_bid[20] = { 0x93, 0xac, 0x61, 0xec, 0x5a, 0x8e, 0xb1, 0x39, 0x6f, 0x9f,
				      0xbd, 0x35, 0x0e, 0x31, 0x69, 0xa5, 0x58, 0x52, 0x8a, 0x40 };

static void count_load(const char *dir, const char *file, struct pfc_symtab *t, struct pfc_dso_load *info)
{
	struct pfc_symopts o = { .image = file, .cache_dir = dir };

	memset(t, 0, sizeof(*t));
	check(pfc_elf_load(&o, "/usr/lib/x86_64-linux-gnu/libc.so.6", libc_bid, 20, t, info) == 0 && t->nr,
	      "elf: '%s' loads", file);
}

/* the ELF kind through pfc_elf_load, the bound in bytes, byte entries */
static void elf_kind(const char *fx)
{
	char dir[] = "/tmp/test_symcache.XXXXXX", file[4096], edir[300], path[600], cmd[300];
	struct pfc_symtab plain, a, b;
	struct pfc_dso_load info;
	struct pfc_symopts o = { 0 };
	struct pfc_symcache_kind tiny = { "tiny", 100, 1, 0 };	/* one byte: only the newest stays */
	struct pfc_symcache_key k;
	struct pfc_symcache_bytes bytes;
	DIR *d;
	struct dirent *e;
	FILE *f;
	int i;

	snprintf(file, sizeof(file), "%s/root/usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug", fx);
	if (access(file, R_OK) != 0 || !mkdtemp(dir)) {
		printf("elf: no '%s', skipped\n", file);
		return;
	}
	o.image = file;
	memset(&plain, 0, sizeof(plain));
	check(pfc_elf_load(&o, "/usr/lib/x86_64-linux-gnu/libc.so.6", libc_bid, 20, &plain, &info) == 0 &&
	      info.cache == PFC_SYMCACHE_OFF, "elf: no cache without a directory");
	count_load(dir, file, &a, &info);
	check(info.cache == PFC_SYMCACHE_MISS && !a.img, "elf: the first load misses and reads the file");
	compare("elf miss", &plain, &a);
	count_load(dir, file, &b, &info);
	check(info.cache == PFC_SYMCACHE_HIT && b.img && info.found, "elf: the second load hits, in place");
	compare("elf hit", &plain, &b);
	pfc_symtab_free(&a);
	pfc_symtab_free(&b);
	/* the entry's one file: a byte changed in it */
	snprintf(edir, sizeof(edir), "%s/elf", dir);
	path[0] = 0;
	if ((d = opendir(edir))) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				snprintf(path, sizeof(path), "%s/%s", edir, e->d_name);
		closedir(d);
	}
	check(count_entries(edir) == 1 && (f = fopen(path, "r+b")) != NULL, "elf: one entry");
	if (path[0] && (f = fopen(path, "r+b"))) {
		fseek(f, 4000, SEEK_SET);
		fputc(0x11 ^ fgetc(f), f);
		fclose(f);
	}
	count_load(dir, file, &a, &info);
	check(info.cache == PFC_SYMCACHE_CORRUPT && !a.img, "elf: a corrupt entry is reported and not used");
	compare("elf after corrupt", &plain, &a);
	pfc_symtab_free(&a);
	count_load(dir, file, &b, &info);
	check(info.cache == PFC_SYMCACHE_HIT, "elf: and written again");
	compare("elf rewritten", &plain, &b);
	pfc_symtab_free(&b);
	/* the bound in bytes */
	for (i = 0; i < 4; i++) {
		char text[64];
		snprintf(text, sizeof(text), "tiny %d", i);
		pfc_symcache_key_text(&k, text);
		check(pfc_symcache_store_kind(dir, &tiny, &k, &plain) == 0, "tiny: store %d", i);
		usleep(2000);
	}
	snprintf(edir, sizeof(edir), "%s/tiny", dir);
	check(count_entries(edir) == 1, "tiny: %zu entries kept over the bound in bytes, 1 wanted", count_entries(edir));
	check(pfc_symcache_load_kind(dir, &tiny, &k, &a) == 1, "tiny: the newest stays");
	pfc_symtab_free(&a);
	/* byte entries */
	pfc_symcache_key_text(&k, "bytes");
	check(pfc_symcache_put(dir, &pfc_symcache_kallsyms_text, &k, "ffffffff81000000 T _text\n", 26) == 0 &&
	      pfc_symcache_get(dir, &pfc_symcache_kallsyms_text, &k, &bytes) == 1 && bytes.len == 26 &&
	      !memcmp(bytes.p, "ffffffff81000000 T _text\n", 26), "bytes: round trip");
	pfc_symcache_bytes_free(&bytes);
	/* a peek: the header's CRC and length, the bytes unread; a flipped byte of the bytes
	 * does not change what the CRC names (the get refuses the entry), a flipped byte of the
	 * key makes it another key's */
	{
		uint64_t crc = 0, crc2 = 0;
		size_t len = 0;
		char epath[PATH_MAX + 64];
		FILE *f;

		check(pfc_symcache_get(dir, &pfc_symcache_kallsyms_text, &k, &bytes) == 1, "bytes: got again");
		crc2 = bytes.crc;
		pfc_symcache_bytes_free(&bytes);
		check(pfc_symcache_peek(dir, &pfc_symcache_kallsyms_text, &k, &crc, &len) == 1 && crc == crc2 && len == 26,
		      "bytes: a peek gives the entry's CRC and length (%zu)", len);
		snprintf(epath, sizeof(epath), "%s/kallsyms-text/%s", dir, k.name);
		if ((f = fopen(epath, "r+b"))) {
			fseek(f, -3, SEEK_END);
			fputc('X', f);
			fclose(f);
		}
		check(pfc_symcache_peek(dir, &pfc_symcache_kallsyms_text, &k, &crc, &len) == 1 && crc == crc2,
		      "bytes: a peek does not read the bytes");
		check(pfc_symcache_get(dir, &pfc_symcache_kallsyms_text, &k, &bytes) == -EINVAL, "bytes: the get checks them");
		check(pfc_symcache_peek(dir, &pfc_symcache_kallsyms_text, &k, &crc, &len) == 0,
		      "bytes: a peek misses the entry the get removed");
		check(pfc_symcache_put(dir, &pfc_symcache_kallsyms_text, &k, "ffffffff81000000 T _text\n", 26) == 0,
		      "bytes: written again");
		if ((f = fopen(epath, "r+b"))) {
			fseek(f, 40, SEEK_SET);	/* in the key text */
			fputc('#', f);
			fclose(f);
		}
		check(pfc_symcache_peek(dir, &pfc_symcache_kallsyms_text, &k, &crc, &len) == 0, "bytes: another key's header misses");
	}
	pfc_symcache_key_text(&k, "other");
	check(pfc_symcache_get(dir, &pfc_symcache_kallsyms_text, &k, &bytes) == 0, "bytes: another key misses");
	check(pfc_symcache_peek(dir, &pfc_symcache_kallsyms_text, &k, &(uint64_t){ 0 }, &(size_t){ 0 }) == 0,
	      "bytes: a peek of another key misses");
	pfc_symtab_free(&plain);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	check(system(cmd) == 0, "elf: clean up");
}

/*
 * An image whose bytes pass its CRC but whose trees are not the ones pfc_symtab_image wrote
 * (only a writer's bug or a hand-made entry can give one) is searched in place without
 * checking every record first: each lookup checks the links it follows.  A cycle, a link
 * outside the records and a name outside the names make no symbol, and the lookup ends.
 * The layout: 16 bytes of head, then 40-byte records (start, end, name, module, left,
 * right, parent, ...), as symtab.c's struct image_sym.
 */
#define REC(i) (16 + (size_t)(i) * 40)
static void damaged_in_place(const char *kallsyms)
{
	struct pfc_symtab t, u;
	uint8_t *img, *p;
	size_t len, i, found = 0;
	int32_t root, x;
	uint64_t start;
	uint32_t bad;

	memset(&t, 0, sizeof(t));
	if (pfc_kallsyms_load(kallsyms, &t) != 0 || t.nr < 3 || pfc_symtab_image(&t, &img, &len) != 0) {
		check(0, "damaged image: cannot read '%s'", kallsyms);
		pfc_symtab_free(&t);
		return;
	}
	if (posix_memalign((void **)&p, 8, len) != 0)
		abort();
	memcpy(p, img, len);
	memcpy(&root, p + 8, 4);
	/* the whole image answers as the table: the checks in the lookup change no answer */
	check(pfc_symtab_view_image(&u, p, len, NULL, 0) == 0, "damaged image: the intact one is read");
	for (i = 0; i < t.nr; i++)
		found += pfc_symtab_find(&u, t.syms[i].start) != NULL;
	check(found == t.nr, "damaged image: intact, %zu of %zu symbols found at their start", found, t.nr);
	pfc_symtab_free(&u);

	/* the root's left link to itself: a lookup below the root goes round, then stops */
	memcpy(p + REC(root) + 24, &root, 4);
	check(pfc_symtab_view_image(&u, p, len, NULL, 0) == 0, "damaged image: a cycle is read");
	memcpy(&start, p + REC(root), 8);
	check(pfc_symtab_find(&u, 0) == NULL, "damaged image: a lookup in a cycle ends without a symbol");
	check(pfc_symtab_find(&u, start) != NULL, "damaged image: the root is still found");
	pfc_symtab_free(&u);
	memcpy(p, img, len);

	/* a link past the records */
	x = (int32_t)t.nr + 5;
	memcpy(p + REC(root) + 24, &x, 4);
	check(pfc_symtab_view_image(&u, p, len, NULL, 0) == 0 && pfc_symtab_find(&u, 0) == NULL,
	      "damaged image: a link outside the records ends the lookup");
	pfc_symtab_free(&u);
	memcpy(p, img, len);

	/* the root's name outside the names */
	bad = UINT32_MAX - 1;
	memcpy(p + REC(root) + 16, &bad, 4);
	check(pfc_symtab_view_image(&u, p, len, NULL, 0) == 0 && pfc_symtab_find(&u, start) == NULL,
	      "damaged image: a record naming bytes outside the names is no symbol");
	pfc_symtab_free(&u);
	free(p);
	free(img);
	pfc_symtab_free(&t);
}

/* a note in this machine's byte order at p: its size */
static size_t note(uint8_t *p, uint32_t type, const char *name, const uint8_t *desc, uint32_t descsz)
{
	uint32_t namesz = (uint32_t)strlen(name) + 1, h[3] = { namesz, descsz, type };
	size_t nsz = (namesz + 3u) & ~3u, dsz = (descsz + 3u) & ~3u;

	memset(p, 0, 12 + nsz + dsz);
	memcpy(p, h, 12);
	memcpy(p + 12, name, namesz);
	memcpy(p + 12 + nsz, desc, descsz);
	return 12 + nsz + dsz;
}

static void notes_walk(void)
{
	static const uint8_t id[20] = { 0x6e, 0xcd, 0x6e, 0xc2, 0x1e, 0xc6, 0x94, 0x16, 0xe5, 0x0a,
					0x8a, 0xa6, 0x73, 0x7e, 0x50, 0x09, 0x01, 0xdd, 0xb4, 0x7a };
	uint8_t buf[256], out[20];
	char dir[] = "/tmp/test_symcache.XXXXXX", path[300];
	struct pfc_symcache_key k;
	size_t n = 0, i;
	FILE *f;

	/* a Xen note, a GNU note of another type, then the build-id */
	n += note(buf + n, 3, "Xen", id, 8);
	n += note(buf + n, 1, "GNU", id, 16);
	n += note(buf + n, 3, "GNU", id, 20);
	memset(out, 0xff, sizeof(out));
	check(pfc_buildid_from_notes(buf, n, out, sizeof(out)) == 20 && !memcmp(out, id, 20), "the third note's build-id");
	for (i = 0; i < n; i++)
		check(pfc_buildid_from_notes(buf, i, out, sizeof(out)) == 0, "notes cut at %zu bytes: no build-id", i);
	/* perf's lengths: the descriptor rounded up to 4, at most max, the rest zeroed */
	n = note(buf, 3, "GNU", id, 3);
	memset(out, 0xff, sizeof(out));
	check(pfc_buildid_from_notes(buf, n, out, sizeof(out)) == 4 && !memcmp(out, id, 3) && !out[3] && !out[19],
	      "a 3-byte build-id: 4 bytes, zero-padded");
	n = note(buf, 3, "GNU", id, 20);
	check(pfc_buildid_from_notes(buf, n, out, 8) == 8 && !memcmp(out, id, 8), "at most max bytes");
	n = note(buf, 3, "GNU", id, 0);
	n += note(buf + n, 3, "GNU", id, 20);
	check(pfc_buildid_from_notes(buf, n, out, sizeof(out)) == 0, "an empty first build-id: none");
	n = note(buf, 3, "GNUX", id, 20);
	check(pfc_buildid_from_notes(buf, n, out, sizeof(out)) == 0, "another name: none");

	/* the running kernel's key names the stand-in's build-id, as session.c's check reads it */
	n = note(buf, 3, "GNU", id, 20);
	if (!mkdtemp(dir))
		return;
	snprintf(path, sizeof(path), "%s/notes", dir);
	if ((f = fopen(path, "wb"))) {
		fwrite(buf, 1, n, f);
		fclose(f);
	}
	check(pfc_buildid_running_kernel(dir, out, sizeof(out)) == 20 && !memcmp(out, id, 20), "the stand-in's build-id");
	check(pfc_symcache_key(&k, dir) != 0 || strstr(k.text, "bid=6ecd6ec21ec69416e50a8aa6737e500901ddb47a ") != NULL,
	      "the running kernel's key names the stand-in's build-id: %s", k.text);
	unlink(path);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	const char *fx = argc > 1 ? argv[1] : "fixtures";
	char kallsyms[4096];
	struct pfc_symcache_key k;

	snprintf(kallsyms, sizeof(kallsyms), "%s/root/kallsyms", fx);
	check(pfc_symcache_key(&k, NULL) == 0 && strstr(k.text, "boot=") && strlen(k.name) == 16, "the running kernel's key");
	round_trip("fixtures kallsyms", kallsyms, &k);
	if (access("/proc/kallsyms", R_OK) == 0)
		round_trip("/proc/kallsyms", "/proc/kallsyms", &k);
	on_disk(kallsyms);
	damaged_in_place(kallsyms);
	elf_kind(fx);
	notes_walk();
	return check_done("test_symcache");
}
