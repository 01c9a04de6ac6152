/*
 * symcache.c - owns the symbol cache's entries (kernel symbols, and ELF files' tables for
 * elfsym.c): the key of the running kernel, the
 * entry format (a header with magic, version, byte order, key, size and CRC-64 over the
 * rest, then symtab.c's image of the table), reading an entry (mapped, checked, copied into
 * a table), writing one atomically, and the bound on how many, and how many bytes, are kept
 * of each kind.  Deciding when the running kernel's symbols are the recording's is
 * kernel.c's and files.c's business; what proves an ELF file's identity is elfsym.c's.
 *
 * Why a cache: /proc/kallsyms has no size and the kernel formats every line on each read
 * (s_show, vsnprintf): reading and parsing it was a third of a small conversion's time.
 * The entry holds the finished table (symbols after perf's fixups, with perf's tree), so a
 * hit costs one read of a few MB and a check.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <isa-l/crc64.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "converter/native/buildid.h"
#include "converter/native/symcache.h"
#include "converter/util/hex.h"

#define MAGIC "PFCKSYM\n"
#define VERSION 1u
#define BYTE_ORDER_MARK 0x01020304u
#define ENTRY_MAX ((size_t)1 << 30)

const struct pfc_symcache_kind pfc_symcache_kallsyms = { "kallsyms", PFC_SYMCACHE_ENTRIES, (uint64_t)1 << 30, 0 };
/* a .NET service maps a dozen ELF files, whose tables take 0.1 to 5 MB each */
const struct pfc_symcache_kind pfc_symcache_elf = { "elf", 256, (uint64_t)256 << 20, 0 };
/* a ReadyToRun image's method names that frames asked for (r2rcache.c): a .NET service loads
 * 50 to 100 images, whose entries take 1 kB to 1 MB */
const struct pfc_symcache_kind pfc_symcache_r2r = { "r2r", 1024, (uint64_t)128 << 20, 0 };
/* /proc/kallsyms as read, for packs: 5 to 15 MB each */
const struct pfc_symcache_kind pfc_symcache_kallsyms_text = { "kallsyms-text", PFC_SYMCACHE_ENTRIES, (uint64_t)1 << 30, 0 };
/* a pack member's compressed frame: a .NET service's packs share 50 to 100 of them, 32 kB
 * (smaller ones are not kept) to 3 MB (the kernel's symbols) */
const struct pfc_symcache_kind pfc_symcache_pack = { "pack", 2048, (uint64_t)256 << 20, 0 };
/* what a pack member's tar bytes hash to, by the file's identity, and whether two files have
 * the same bytes (formats/perfpack.c): a few hundred bytes each, one or two a file packed */
const struct pfc_symcache_kind pfc_symcache_pack_sum = { "pack-sum", 2048, (uint64_t)4 << 20, 0 };
/* a libc debug file's sections take 10 MB inflated */
const struct pfc_symcache_kind pfc_symcache_dwarf = { "dwarf", 32, (uint64_t)512 << 20, 1 };

/* magic[8], version u32, byte order u32, image size u64, crc u64, key[256], image (at an
 * offset that keeps its 8-byte fields aligned in a mapping) */
#define HEADER (8 + 4 + 4 + 8 + 8 + PFC_SYMCACHE_KEY_MAX)
_Static_assert(HEADER % 8 == 0, "the image is read in place");

static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, got = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)got < size - 1 && (n = read(fd, buf + got, size - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

/* /proc/modules without the use counts: the names and load addresses of the modules, whose
 * symbols kallsyms lists (a module loaded since the entry was written changes the key) */
static uint64_t modules_hash(void)
{
	FILE *f = fopen("/proc/modules", "re");
	char line[4096];
	uint64_t h = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char name[256], addr[64];

		if (sscanf(line, "%255s %*s %*s %*s %*s %63s", name, addr) == 2) {
			h = crc64_ecma_refl(h, (const uint8_t *)name, strlen(name) + 1);
			h = crc64_ecma_refl(h, (const uint8_t *)addr, strlen(addr) + 1);
		}
	}
	fclose(f);
	return h;
}

int pfc_symcache_key(struct pfc_symcache_key *k, const char *running_kernel)
{
	char bid[2 * PFC_BUILDID_MAX + 1], boot[64], kptr[16];
	uint8_t id[PFC_BUILDID_MAX];
	uint64_t h;
	ssize_t n;
	int len;

	memset(k, 0, sizeof(*k));
	n = read_small("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	if (n <= 0)
		return n < 0 ? (int)n : -ENOENT;
	boot[strcspn(boot, "\n")] = '\0';
	if (read_small("/proc/sys/kernel/kptr_restrict", kptr, sizeof(kptr)) <= 0)
		strcpy(kptr, "?");
	kptr[strcspn(kptr, "\n")] = '\0';
	/* the running kernel as session.c asks whether it is the recording's: the tests' stand-in too */
	pfc_hex_format(bid, id, pfc_buildid_running_kernel(running_kernel, id, sizeof(id)));
	/* what kallsyms shows depends on kptr_restrict and on who reads it (CAP_SYSLOG) */
	len = snprintf(k->text, sizeof(k->text), "bid=%s boot=%s kptr=%s euid0=%d mods=%016llx", bid, boot,
		       kptr, geteuid() == 0, (unsigned long long)modules_hash());
	if (len < 0 || (size_t)len >= sizeof(k->text))
		return -ENAMETOOLONG;
	h = crc64_ecma_refl(0, (const uint8_t *)k->text, sizeof(k->text));
	snprintf(k->name, sizeof(k->name), "%016llx", (unsigned long long)h);
	return 0;
}

int pfc_symcache_key_text(struct pfc_symcache_key *k, const char *text)
{
	size_t n = strlen(text);
	uint64_t h;

	memset(k, 0, sizeof(*k));
	if (n >= sizeof(k->text))
		return -ENAMETOOLONG;
	memcpy(k->text, text, n);
	h = crc64_ecma_refl(0, (const uint8_t *)k->text, sizeof(k->text));
	snprintf(k->name, sizeof(k->name), "%016llx", (unsigned long long)h);
	return 0;
}

static int entry_path(const char *dir, const char *sub, const char *name, char *out, size_t size)
{
	int n = snprintf(out, size, "%s/%s%s%s", dir, sub, name ? "/" : "", name ? name : "");

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* An entry of len bytes whose header (the first HEADER bytes of p) is k's: 0, with its CRC. */
static int header_check(const uint8_t *p, size_t len, const struct pfc_symcache_key *k, uint64_t *crc)
{
	uint32_t version, order;
	uint64_t size;

	if (len < HEADER || memcmp(p, MAGIC, 8) != 0)
		return -EINVAL;
	memcpy(&version, p + 8, 4);
	memcpy(&order, p + 12, 4);
	memcpy(&size, p + 16, 8);
	memcpy(crc, p + 24, 8);
	if (version != VERSION || order != BYTE_ORDER_MARK || size != len - HEADER)
		return -EINVAL;
	if (memcmp(p + 32, k->text, PFC_SYMCACHE_KEY_MAX) != 0)
		return -EINVAL;
	return 0;
}

/* 0 when p holds k's entry, whole: its header, key and checksum */
static int entry_check(const uint8_t *p, size_t len, const struct pfc_symcache_key *k)
{
	uint64_t crc;

	if (header_check(p, len, k, &crc) < 0 || crc64_ecma_refl(0, p + 32, len - 32) != crc)
		return -EINVAL;
	return 0;
}

int pfc_symcache_parse(const uint8_t *p, size_t len, const struct pfc_symcache_key *k, struct pfc_symtab *t)
{
	memset(t, 0, sizeof(*t));
	if (entry_check(p, len, k) < 0)
		return -EINVAL;
	return pfc_symtab_from_image(t, p + HEADER, len - HEADER);
}

/* An entry's bytes: the header for k, then the payload */
static int encode_bytes(const struct pfc_symcache_key *k, const void *payload, size_t n, uint8_t **out, size_t *len)
{
	uint64_t size = n, crc;
	uint32_t v = VERSION, order = BYTE_ORDER_MARK;
	uint8_t *p;

	if (n > ENTRY_MAX - HEADER || !(p = malloc(HEADER + n)))
		return -ENOMEM;
	memcpy(p, MAGIC, 8);
	memcpy(p + 8, &v, 4);
	memcpy(p + 12, &order, 4);
	memcpy(p + 16, &size, 8);
	memcpy(p + 32, k->text, PFC_SYMCACHE_KEY_MAX);
	memcpy(p + HEADER, payload, n);
	crc = crc64_ecma_refl(0, p + 32, HEADER - 32 + n);
	memcpy(p + 24, &crc, 8);
	*out = p;
	*len = HEADER + n;
	return 0;
}

int pfc_symcache_encode(const struct pfc_symcache_key *k, const struct pfc_symtab *t, uint8_t **out, size_t *len)
{
	uint8_t *img;
	size_t n;
	int ret = pfc_symtab_image(t, &img, &n);

	if (ret)
		return ret;
	ret = encode_bytes(k, img, n, out, len);
	free(img);
	return ret;
}

int pfc_symcache_get(const char *dir, const struct pfc_symcache_kind *kind, const struct pfc_symcache_key *k,
		   struct pfc_symcache_bytes *b)
{
	char path[PATH_MAX];
	struct stat st;
	void *map;
	int fd, ret;

	memset(b, 0, sizeof(*b));
	if (entry_path(dir, kind->sub, k->name, path, sizeof(path)) < 0)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < HEADER || (size_t)st.st_size > ENTRY_MAX) {
		close(fd);
		unlink(path);
		return -EINVAL;
	}
	/* a kind whose reader (libelf) may write to what it is given is mapped writable, privately:
	 * the file stays as it is, and pages are copied only when written, so they are read in
	 * ahead without MAP_POPULATE (which would copy every one) */
	map = mmap(NULL, (size_t)st.st_size, kind->writable ? PROT_READ | PROT_WRITE : PROT_READ,
		   kind->writable ? MAP_PRIVATE : MAP_PRIVATE | MAP_POPULATE, fd, 0);
#ifdef MADV_POPULATE_READ
	if (map != MAP_FAILED && kind->writable)
		madvise(map, (size_t)st.st_size, MADV_POPULATE_READ);
#endif
	if (map == MAP_FAILED) {
		ret = -errno;
		close(fd);
		return ret;
	}
	/* entries are replaced by rename, never rewritten, so the mapped bytes do not change
	 * under a reader */
	ret = entry_check(map, (size_t)st.st_size, k);
	if (ret == 0) {
		futimens(fd, NULL);	/* recently used: evicted last */
		b->p = (const uint8_t *)map + HEADER;
		b->len = (size_t)st.st_size - HEADER;
		b->map = map;
		b->map_len = (size_t)st.st_size;
		memcpy(&b->crc, (const uint8_t *)map + 24, 8);
	} else {
		munmap(map, (size_t)st.st_size);
		unlink(path);	/* corrupt or another key's: written again after this read */
	}
	close(fd);
	return ret == 0 ? 1 : ret;
}

int pfc_symcache_peek(const char *dir, const struct pfc_symcache_kind *kind, const struct pfc_symcache_key *k,
		    uint64_t *crc, size_t *len)
{
	char path[PATH_MAX];
	uint8_t h[HEADER];
	struct stat st;
	int fd, ret;

	if (entry_path(dir, kind->sub, k->name, path, sizeof(path)) < 0)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	ret = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= HEADER && (size_t)st.st_size <= ENTRY_MAX &&
	      pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) && header_check(h, (size_t)st.st_size, k, crc) == 0;
	if (ret) {
		futimens(fd, NULL);	/* recently used: evicted last */
		*len = (size_t)st.st_size - HEADER;
	}
	close(fd);
	return ret;
}

void pfc_symcache_remove(const char *dir, const struct pfc_symcache_kind *kind, const struct pfc_symcache_key *k)
{
	char path[PATH_MAX];

	if (entry_path(dir, kind->sub, k->name, path, sizeof(path)) == 0)
		unlink(path);
}

void pfc_symcache_bytes_free(struct pfc_symcache_bytes *b)
{
	if (b->map)
		munmap(b->map, b->map_len);
	memset(b, 0, sizeof(*b));
}

int pfc_symcache_load_kind(const char *dir, const struct pfc_symcache_kind *kind, const struct pfc_symcache_key *k,
			 struct pfc_symtab *t)
{
	struct pfc_symcache_bytes b;
	int ret = pfc_symcache_get(dir, kind, k, &b);

	memset(t, 0, sizeof(*t));
	if (ret != 1)
		return ret;
	/* the table reads the mapping in place and unmaps it when freed, also on failure */
	ret = pfc_symtab_view_image(t, b.p, b.len, b.map, b.map_len);
	if (ret == -EINVAL) {
		char path[PATH_MAX];

		if (entry_path(dir, kind->sub, k->name, path, sizeof(path)) == 0)
			unlink(path);	/* whole, but no table: written again after this read */
	}
	return ret == 0 ? 1 : ret;
}

int pfc_symcache_load(const char *dir, const struct pfc_symcache_key *k, struct pfc_symtab *t)
{
	return pfc_symcache_load_kind(dir, &pfc_symcache_kallsyms, k, t);
}

struct old_entry {
	char name[32];
	struct timespec mtime;
	uint64_t size;
};

static int cmp_newest_first(const void *a, const void *b)
{
	const struct old_entry *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? 1 : -1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Keep the most recently used entries of a kind, as many as its bound allows in number
 * and in bytes (the newest one always); other writers' temporary files older than a
 * minute are theirs no more. */
static void evict(const char *kdir, const struct pfc_symcache_kind *kind)
{
	uint64_t bytes = 0;
	struct old_entry *e = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d = opendir(kdir);
	int dfd;

	if (!d)
		return;
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] == '.' && (!de->d_name[1] || de->d_name[1] == '.'))
			continue;
		if (strlen(de->d_name) >= sizeof(e->name) || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (de->d_name[0] == '.') {
			if (st.st_mtime + 60 < time(NULL))
				unlinkat(dfd, de->d_name, 0);
			continue;
		}
		if (n == cap) {
			struct old_entry *p = realloc(e, (cap = cap ? cap * 2 : 16) * sizeof(*e));
			if (!p)
				break;
			e = p;
		}
		snprintf(e[n].name, sizeof(e[n].name), "%s", de->d_name);
		e[n].size = (uint64_t)st.st_size;
		bytes += e[n].size;
		e[n++].mtime = st.st_mtim;
	}
	if (n > kind->max_entries || bytes > kind->max_bytes) {
		qsort(e, n, sizeof(*e), cmp_newest_first);
		for (i = 0, bytes = 0; i < n; i++) {
			bytes += e[i].size;
			if (i && (i >= kind->max_entries || bytes > kind->max_bytes))
				unlinkat(dfd, e[i].name, 0);
		}
	}
	free(e);
	closedir(d);
}

static int mkdirs(char *path)
{
	char *p;

	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	return mkdir(path, 0700) < 0 && errno != EEXIST ? -errno : 0;
}

static int put_entry(const char *dir, const struct pfc_symcache_kind *kind, const struct pfc_symcache_key *k,
		     uint8_t *buf, size_t len)
{
	char kdir[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX + 32];
	size_t off = 0;
	int fd, ret;

	if (entry_path(dir, kind->sub, NULL, kdir, sizeof(kdir)) < 0 ||
	    entry_path(dir, kind->sub, k->name, path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	if ((ret = mkdirs(kdir)) < 0)
		return ret;
	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", kdir, k->name, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (off < len) {
		ssize_t n = write(fd, buf + off, len - off);
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	else
		evict(kdir, kind);
	return ret;
}

int pfc_symcache_put(const char *dir, const struct pfc_symcache_kind *kind, const struct pfc_symcache_key *k,
		   const void *payload, size_t len)
{
	uint8_t *buf;
	size_t n;
	int ret = encode_bytes(k, payload, len, &buf, &n);

	if (ret)
		return ret;
	ret = put_entry(dir, kind, k, buf, n);
	free(buf);
	return ret;
}

int pfc_symcache_store_kind(const char *dir, const struct pfc_symcache_kind *kind, const struct pfc_symcache_key *k,
			  const struct pfc_symtab *t)
{
	uint8_t *buf;
	size_t len;
	int ret = pfc_symcache_encode(k, t, &buf, &len);

	if (ret)
		return ret;
	ret = put_entry(dir, kind, k, buf, len);
	free(buf);
	return ret;
}

int pfc_symcache_store(const char *dir, const struct pfc_symcache_key *k, const struct pfc_symtab *t)
{
	return pfc_symcache_store_kind(dir, &pfc_symcache_kallsyms, k, t);
}

/* --- a pack writer's frames (converter/files/packwrite.c) ----------------------------------- */

static int frames_get(struct pfc_packw_frames *o, const char *text, const void **p, size_t *len)
{
	struct pfc_symcache_frames *f = (struct pfc_symcache_frames *)o;
	struct pfc_symcache_key k;
	int got;

	if (pfc_symcache_key_text(&k, text) < 0)
		return 0;
	got = pfc_symcache_get(f->dir, f->kind, &k, &f->cur);
	if (got == 1) {
		*p = f->cur.p;
		*len = f->cur.len;
		return 1;
	}
	return got == -EINVAL ? -1 : 0;
}

static void frames_done(struct pfc_packw_frames *o)
{
	pfc_symcache_bytes_free(&((struct pfc_symcache_frames *)o)->cur);
}

static void frames_bad(struct pfc_packw_frames *o, const char *text)
{
	struct pfc_symcache_frames *f = (struct pfc_symcache_frames *)o;
	struct pfc_symcache_key k;

	if (pfc_symcache_key_text(&k, text) == 0)
		pfc_symcache_remove(f->dir, f->kind, &k);
}

static void frames_put(struct pfc_packw_frames *o, const char *text, const void *p, size_t len)
{
	struct pfc_symcache_frames *f = (struct pfc_symcache_frames *)o;
	struct pfc_symcache_key k;

	if (pfc_symcache_key_text(&k, text) == 0)
		pfc_symcache_put(f->dir, f->kind, &k, p, len);
}

void pfc_symcache_frames_init_kind(struct pfc_symcache_frames *f, const char *dir, const struct pfc_symcache_kind *kind)
{
	memset(f, 0, sizeof(*f));
	f->ops = (struct pfc_packw_frames){ frames_get, frames_done, frames_bad, frames_put };
	f->dir = dir;
	f->kind = kind;
}

void pfc_symcache_frames_init(struct pfc_symcache_frames *f, const char *dir)
{
	pfc_symcache_frames_init_kind(f, dir, &pfc_symcache_pack);
}
