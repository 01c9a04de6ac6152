/*
 * files.c - where the bytes of every file a symbol source needs come from: this machine's
 * directories (--symfs, the build-id cache, /proc, /tmp, --map-dir, kallsyms), or a pack's
 * members.  It owns the joining of places and paths, the rule of which local files may
 * serve a pack, the record of what a conversion used (for writing a pack), and the pack's
 * MANIFEST.  It does not parse any of the files it finds.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "converter/files/files.h"
#include "converter/files/pack.h"

static const char *const base_names[PFC_FILES_NR] = {
	[PFC_FILES_ROOT] = "root", [PFC_FILES_HOST] = "host", [PFC_FILES_BUILDID] = "buildid",
	[PFC_FILES_PROC] = "proc", [PFC_FILES_TMP] = "tmp", [PFC_FILES_MAPDIR] = "mapdir",
	[PFC_FILES_KERNEL] = "kernel", [PFC_FILES_DEBUGINFOD] = "debuginfod", [PFC_FILES_SYMSRV] = "symsrv",
};

/* A file of the pack: (base, rel) -> member, with its name on the recording machine. */
struct packed {
	int base;
	const char *rel, *name, *member;
	int fd;
};

/* A directory listing of the pack: one name per entry. */
struct listed {
	int base;
	const char *rel, *entry;
};

struct pfc_files {
	struct pfc_files_opts o;
	const struct pfc_pack *pack;
	char *manifest;              /* the pack's MANIFEST, NUL-terminated, cut into fields */
	struct packed *packed;
	size_t nr_packed;
	struct listed *listed;
	size_t nr_listed;
	unsigned pack_has;           /* bases the packing conversion had (1 << base) */
	long long mtime;             /* the recording's, from the MANIFEST */
	const char *recording;       /* its name where the pack was written */
	const char **events;         /* the runtime's event streams: member, name, member, ... */
	size_t nr_events;
	int have_mtime;
	struct pfc_files_entry *rec; /* opts.record: what was found, in order */
	size_t nr_rec, cap_rec;
	int vdso_fd;                 /* this process's vdso image in a memory file, or -1 */
	char vdso_path[32];
};

const char *pfc_files_base_name(enum pfc_files_base base)
{
	return (unsigned)base < PFC_FILES_NR ? base_names[base] : "?";
}

int pfc_files_base_from_name(const char *name, size_t len)
{
	int i;

	for (i = 0; i < PFC_FILES_NR; i++)
		if (strlen(base_names[i]) == len && !memcmp(base_names[i], name, len))
			return i;
	return -1;
}

static int cmp_key(int b1, const char *r1, int b2, const char *r2)
{
	return b1 != b2 ? (b1 < b2 ? -1 : 1) : strcmp(r1, r2);
}

static int cmp_packed(const void *a, const void *b)
{
	const struct packed *x = a, *y = b;
	return cmp_key(x->base, x->rel, y->base, y->rel);
}

static int cmp_listed(const void *a, const void *b)
{
	const struct listed *x = a, *y = b;
	int c = cmp_key(x->base, x->rel, y->base, y->rel);
	return c ? c : strcmp(x->entry, y->entry);
}

/* The next element of a growing array *v of *n (capacity *cap), not yet counted; NULL
 * when memory ran out. */
static void *grow(void *v, size_t *n, size_t *cap, size_t size)
{
	void **pv = v;

	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		void *nv = realloc(*pv, nc * size);
		if (!nv)
			return NULL;
		*pv = nv;
		*cap = nc;
	}
	return (char *)*pv + *n * size;
}

/* Split a line at tabs into at most max fields; returns how many. */
static size_t split_tabs(char *line, char **f, size_t max)
{
	size_t n = 0;

	f[n++] = line;
	for (; *line && n < max; line++)
		if (*line == '\t') {
			*line = 0;
			f[n++] = line + 1;
		}
	return n;
}

/*
 * The MANIFEST, one line per fact, fields separated by tabs:
 *   perfpack 1
 *   has	BASE                                  the place was searched (--map-dir given)
 *   file	BASE	REL	MEMBER	SIZE	BUILD-ID|-	PID|-	NAME	WHY
 *   exists	BASE	REL	NAME                         seen to exist, never read
 *   entry	BASE	REL	NAME                         a directory listing's name
 *   recording	MEMBER	SIZE	NAME	MTIME                 the recording
 *   events	MEMBER	SIZE	NAME                         a .NET runtime's event stream (--events)
 * Lines of other kinds, and comments (#), are for people and later versions.
 */
static int load_manifest(struct pfc_files *f, struct pfc_error *err)
{
	uint64_t size;
	const char *mf = pfc_pack_bytes(f->pack, PFC_PACK_MANIFEST, &size);
	char *line, *next;
	size_t lineno = 0, cap_p = 0, cap_l = 0;

	if (!mf || size < strlen(PFC_PACK_MAGIC) || memcmp(mf, PFC_PACK_MAGIC, strlen(PFC_PACK_MAGIC)))
		return PFC_FAIL_NOOFF(err, CORRUPT, "the pack has no MANIFEST");
	if (!(f->manifest = malloc(size + 1)))
		return PFC_FAIL_NOOFF(err, NOMEM, "pack manifest");
	memcpy(f->manifest, mf, size);
	f->manifest[size] = 0;
	if (memchr(f->manifest, 0, size))
		return PFC_FAIL_NOOFF(err, CORRUPT, "MANIFEST: a NUL byte");
	for (line = f->manifest; line && *line; line = next) {
		char *fl[9];
		size_t n;
		int base;

		lineno++;
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (lineno == 1 || *line == '#' || !*line)
			continue;
		n = split_tabs(line, fl, 9);
		base = n >= 2 ? pfc_files_base_from_name(fl[1], strlen(fl[1])) : -1;
		if (!strcmp(fl[0], "has") && n == 2 && base >= 0) {
			f->pack_has |= 1u << base;
		} else if ((!strcmp(fl[0], "file") && n == 9 && base >= 0) ||
			   (!strcmp(fl[0], "exists") && n == 4 && base >= 0)) {
			int is_file = fl[0][0] == 'f';
			struct packed *p = grow(&f->packed, &f->nr_packed, &cap_p, sizeof(*p));
			if (!p)
				return PFC_FAIL_NOOFF(err, NOMEM, "pack manifest");
			p->base = base;
			p->rel = fl[2];
			p->member = is_file ? fl[3] : NULL;	/* exists: seen, never read */
			p->name = is_file ? fl[7] : fl[3];
			p->fd = is_file ? pfc_pack_fd(f->pack, fl[3], &size) : -1;
			if (is_file && p->fd < 0)
				return PFC_FAIL_NOOFF(err, CORRUPT, "MANIFEST line %zu: no member '%.200s'", lineno, fl[3]);
			f->nr_packed++;
		} else if (!strcmp(fl[0], "recording") && n >= 5) {
			char *end;
			if (*fl[3])
				f->recording = fl[3];
			long long t = strtoll(fl[4], &end, 10);
			if (*fl[4] && !*end) {
				f->mtime = t;
				f->have_mtime = 1;
			}
		} else if (!strcmp(fl[0], "events") && n >= 4) {
			const char **v = realloc(f->events, (f->nr_events + 1) * 3 * sizeof(*v));
			if (!v)
				return PFC_FAIL_NOOFF(err, NOMEM, "pack manifest");
			f->events = v;
			if (pfc_pack_fd(f->pack, fl[1], &size) < 0)
				return PFC_FAIL_NOOFF(err, CORRUPT, "MANIFEST line %zu: no member '%.200s'", lineno, fl[1]);
			v[3 * f->nr_events] = fl[1];
			v[3 * f->nr_events + 1] = fl[3];
			v[3 * f->nr_events + 2] = n >= 5 ? fl[4] : "";	/* the recorded process (newer packs) */
			f->nr_events++;
		} else if (!strcmp(fl[0], "entry") && n == 4 && base >= 0) {
			struct listed *l = grow(&f->listed, &f->nr_listed, &cap_l, sizeof(*l));
			if (!l)
				return PFC_FAIL_NOOFF(err, NOMEM, "pack manifest");
			f->nr_listed++;
			l->base = base;
			l->rel = fl[2];
			l->entry = fl[3];
		} else if (!strcmp(fl[0], "has") || !strcmp(fl[0], "file") || !strcmp(fl[0], "exists") ||
			   !strcmp(fl[0], "entry")) {
			return PFC_FAIL_NOOFF(err, CORRUPT, "MANIFEST line %zu: malformed '%s' line", lineno, fl[0]);
		}
	}
	if (f->nr_packed)
		qsort(f->packed, f->nr_packed, sizeof(*f->packed), cmp_packed);
	if (f->nr_listed)
		qsort(f->listed, f->nr_listed, sizeof(*f->listed), cmp_listed);
	return 0;
}

struct pfc_files *pfc_files_new(const struct pfc_files_opts *o, const struct pfc_pack *pack)
{
	struct pfc_files *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->o = *o;
	if (!f->o.proc)
		f->o.proc = "/proc";
	if (!f->o.tmp)
		f->o.tmp = "/tmp";
	if (f->o.symfs && !*f->o.symfs)
		f->o.symfs = NULL;
	f->pack = pack;
	f->vdso_fd = -1;
	return f;
}

/*
 * perf-compat: perf 6.1 names the frames of a [vdso] whose build-id the recording does not
 * give from its own vdso, copied out of its memory (vdso.c): this machine's, whatever
 * kernel ran the recording.  The same image, from this process's memory (the auxiliary
 * vector's AT_SYSINFO_EHDR, its extent from /proc/self/maps), in a memory file.  Never for
 * a pack, whose recording machine is not this one.
 */
const char *pfc_files_own_vdso(struct pfc_files *f)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	unsigned long long lo, hi;
	char line[512];
	FILE *maps;
	int fd, found = 0;

	if (f->pack || !base)
		return NULL;
	if (f->vdso_fd >= 0)
		return f->vdso_path;
	if (!(maps = fopen("/proc/self/maps", "re")))
		return NULL;
	while (!found && fgets(line, sizeof(line), maps)) {
		size_t n = strlen(line);
		if (n >= 7 && !strcmp(line + n - 7, "[vdso]\n") && sscanf(line, "%llx-%llx", &lo, &hi) == 2 &&
		    lo == base && hi > lo && hi - lo <= (1u << 24))
			found = 1;
	}
	fclose(maps);
	if (!found || (fd = memfd_create("vdso", MFD_CLOEXEC)) < 0)
		return NULL;
	if (write(fd, (const void *)(uintptr_t)lo, (size_t)(hi - lo)) != (ssize_t)(hi - lo)) {
		close(fd);
		return NULL;
	}
	f->vdso_fd = fd;
	snprintf(f->vdso_path, sizeof(f->vdso_path), "/proc/self/fd/%d", fd);
	return f->vdso_path;
}

void pfc_files_set_running_kallsyms(struct pfc_files *f, const char *path)
{
	f->o.running_kallsyms = path;
}

int pfc_files_running_kernel(const struct pfc_files *f, const struct pfc_found *found)
{
	return !f->pack && !f->o.kallsyms && f->o.running_kallsyms && !found->from_pack &&
	       found->base == PFC_FILES_KERNEL && strcmp(found->path, f->o.running_kallsyms) == 0;
}

int pfc_files_load_pack(struct pfc_files *f, struct pfc_error *err)
{
	return f->pack ? load_manifest(f, err) : 0;
}

void pfc_files_free(struct pfc_files *f)
{
	size_t i;

	if (!f)
		return;
	if (f->vdso_fd >= 0)
		close(f->vdso_fd);
	for (i = 0; i < f->nr_rec; i++) {
		free((char *)f->rec[i].rel);
		free((char *)f->rec[i].local);
		free((char *)f->rec[i].why);
		free((char *)f->rec[i].names);
	}
	free(f->rec);
	free(f->packed);
	free(f->listed);
	free(f->manifest);
	free(f->events);
	free(f);
}

int pfc_files_pack_mtime(const struct pfc_files *f, long long *mtime)
{
	*mtime = f->mtime;
	return f->have_mtime;
}

const char *pfc_files_pack_recording(const struct pfc_files *f)
{
	return f->recording;
}

const char *pfc_files_pack_events(const struct pfc_files *f, size_t i, const char **name, int32_t *pid)
{
	char *end;
	long v;

	if (i >= f->nr_events)
		return NULL;
	*name = f->events[3 * i + 1];
	v = strtol(f->events[3 * i + 2], &end, 10);
	*pid = *f->events[3 * i + 2] && !*end && v > 0 && v <= INT32_MAX ? (int32_t)v : 0;
	return f->events[3 * i];
}

int pfc_files_from_pack(const struct pfc_files *f)
{
	return f && f->pack != NULL;
}

int pfc_files_has(const struct pfc_files *f, enum pfc_files_base base)
{
	switch (base) {
	case PFC_FILES_ROOT:
		return f->o.symfs != NULL || (f->pack_has & (1u << base));
	case PFC_FILES_MAPDIR:
		return f->o.map_dir != NULL || (f->pack_has & (1u << base));
	case PFC_FILES_BUILDID:
		return f->o.buildid_dir != NULL || (f->pack_has & (1u << base));
	case PFC_FILES_KERNEL:
		return f->o.kallsyms != NULL || (!f->pack && f->o.running_kallsyms) || (f->pack_has & (1u << base));
	default:
		return 1;
	}
}

/* Whether this machine's file may answer for BASE while a pack is read: only where the user
 * named the place for this conversion.  A pack alone converts as it did where it was
 * written; this machine's own directories (/, the build-id cache of $HOME, /tmp, /proc,
 * /proc/kallsyms) hold its own programs, processes and kernel, not the recorded ones. */
static int local_serves_pack(const struct pfc_files *f, enum pfc_files_base base, unsigned flags)
{
	(void)flags;
	switch (base) {
	case PFC_FILES_ROOT:
		return f->o.symfs != NULL;
	case PFC_FILES_BUILDID:
		return f->o.buildid_dir != NULL && f->o.buildid_dir_given;
	case PFC_FILES_MAPDIR:
		return f->o.map_dir != NULL;
	case PFC_FILES_KERNEL:
		return f->o.kallsyms != NULL;
	default:
		return 0;
	}
}

/* This machine's path of (base, rel); -1 when the place has no directory here. */
static int local_path(const struct pfc_files *f, enum pfc_files_base base, const char *rel, char *out, size_t size)
{
	const char *dir = NULL;
	int n;

	switch (base) {
	case PFC_FILES_ROOT:
		if (!f->o.symfs)
			dir = "";
		else
			dir = f->o.symfs;
		n = snprintf(out, size, "%s%s%s", dir,
			     !*dir || dir[strlen(dir) - 1] == '/' || rel[0] == '/' ? "" : "/", rel);
		return n < 0 || (size_t)n >= size ? -1 : 0;
	case PFC_FILES_HOST:
		if (f->o.debug_dir && !strncmp(rel, "/usr/lib/debug/", 15)) {
			n = snprintf(out, size, "%s%s", f->o.debug_dir, rel + 14);
			return n < 0 || (size_t)n >= size ? -1 : 0;
		}
		n = snprintf(out, size, "%s", rel);
		return n < 0 || (size_t)n >= size ? -1 : 0;
	case PFC_FILES_KERNEL:
		dir = f->o.kallsyms ? f->o.kallsyms : f->pack ? NULL : f->o.running_kallsyms;
		if (!dir)
			return -1;
		n = snprintf(out, size, "%s", dir);
		return n < 0 || (size_t)n >= size ? -1 : 0;
	case PFC_FILES_BUILDID: dir = f->o.buildid_dir; break;
	case PFC_FILES_PROC: dir = f->o.proc; break;
	case PFC_FILES_TMP: dir = f->o.tmp; break;
	case PFC_FILES_MAPDIR: dir = f->o.map_dir; break;
	default: return -1;	/* debuginfod's and symbol servers' files come through pfc_files_add */
	}
	if (!dir)
		return -1;
	n = snprintf(out, size, "%s%s%s", dir, *rel && rel[0] != '/' ? "/" : "", rel);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

static const struct packed *pack_find(const struct pfc_files *f, enum pfc_files_base base, const char *rel)
{
	struct packed key = { .base = base, .rel = rel };

	return f->nr_packed ? bsearch(&key, f->packed, f->nr_packed, sizeof(key), cmp_packed) : NULL;
}

static struct pfc_files_entry *rec_find(struct pfc_files *f, enum pfc_files_base base, const char *rel, int is_list)
{
	size_t i;

	for (i = f->nr_rec; i-- > 0;)
		if (f->rec[i].base == base && f->rec[i].is_list == is_list && !strcmp(f->rec[i].rel, rel))
			return &f->rec[i];
	return NULL;
}

/* A name that a MANIFEST line can hold. */
static int storable(const char *s)
{
	for (; *s; s++)
		if (*s == '\t' || *s == '\n' || *s == '\r')
			return 0;
	return 1;
}

static struct pfc_files_entry *rec_add(struct pfc_files *f, enum pfc_files_base base, const char *rel,
				       const char *local, int is_list)
{
	struct pfc_files_entry *e = rec_find(f, base, rel, is_list);

	if (e)
		return e;
	if (!storable(rel) || !storable(local))
		return NULL;
	if (f->nr_rec == f->cap_rec) {
		size_t nc = f->cap_rec ? f->cap_rec * 2 : 64;
		struct pfc_files_entry *v = realloc(f->rec, nc * sizeof(*v));
		if (!v)
			return NULL;
		f->rec = v;
		f->cap_rec = nc;
	}
	e = &f->rec[f->nr_rec];
	memset(e, 0, sizeof(*e));
	e->base = base;
	e->pid = -1;
	e->probe = 1;	/* until it is read */
	e->is_list = is_list;
	e->rel = strdup(rel);
	e->local = strdup(local);
	if (!e->rel || !e->local) {
		free((char *)e->rel);
		free((char *)e->local);
		return NULL;
	}
	f->nr_rec++;
	return e;
}

int pfc_files_find(struct pfc_files *f, enum pfc_files_base base, const char *rel, unsigned flags,
		   struct pfc_found *out)
{
	struct stat st;

	out->from_pack = 0;
	out->base = base;
	out->path[0] = 0;
	snprintf(out->rel, sizeof(out->rel), "%s", rel);
	if (f->pack) {
		const struct packed *p = pack_find(f, base, rel);
		if (p && p->fd < 0 && (flags & PFC_FILES_PROBE)) {	/* seen to exist where recorded */
			snprintf(out->path, sizeof(out->path), "/dev/null");
			snprintf(out->name, sizeof(out->name), "%s", p->name);
			out->from_pack = 1;
			return 1;
		}
		if (p && p->fd >= 0) {
			snprintf(out->path, sizeof(out->path), "/proc/self/fd/%d", p->fd);
			snprintf(out->name, sizeof(out->name), "%s", p->name);
			out->from_pack = 1;
			return 1;
		}
		if (!local_serves_pack(f, base, flags)) {
			snprintf(out->path, sizeof(out->path), "%s:%s", base_names[base], rel);
			return 0;
		}
	}
	if (local_path(f, base, rel, out->path, sizeof(out->path)) < 0) {
		out->path[0] = 0;
		return 0;
	}
	if (stat(out->path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	memcpy(out->name, out->path, strlen(out->path) + 1);
	if (f->o.record) {
		struct pfc_files_entry *e = rec_add(f, base, rel, out->path, 0);
		if (e && e->rel && !(flags & PFC_FILES_PROBE))
			e->probe = 0;
	}
	return 1;
}

int pfc_files_findf(struct pfc_files *f, enum pfc_files_base base, unsigned flags, struct pfc_found *out,
		    const char *fmt, ...)
{
	char rel[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(rel))
		return 0;
	return pfc_files_find(f, base, rel, flags, out);
}

void pfc_files_add(struct pfc_files *f, enum pfc_files_base base, const char *rel, const char *local)
{
	struct pfc_files_entry *e;

	if (f->o.record && (e = rec_add(f, base, rel, local, 0)))
		e->probe = 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int pfc_files_list(struct pfc_files *f, enum pfc_files_base base, const char *rel,
		   int (*fn)(void *arg, const char *name), void *arg)
{
	char dir[4096];
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	DIR *d;
	struct dirent *e;
	int stop = 0;

	if (f->pack) {
		struct listed key = { .base = base, .rel = rel, .entry = "" };
		size_t lo = 0, hi = f->nr_listed;
		while (lo < hi) {	/* the first entry of (base, rel) */
			size_t mid = (lo + hi) / 2;
			if (cmp_listed(&f->listed[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < f->nr_listed && !cmp_key(f->listed[lo].base, f->listed[lo].rel, base, rel)) {
			for (i = lo; i < f->nr_listed && !cmp_key(f->listed[i].base, f->listed[i].rel, base, rel) && !stop; i++)
				stop = fn(arg, f->listed[i].entry);
			return 0;
		}
		if (!local_serves_pack(f, base, 0))
			return 0;
	}
	if (local_path(f, base, rel, dir, sizeof(dir)) < 0 || !(d = opendir(dir)))
		return 0;
	/* sorted, so that the listing a pack keeps is read in the same order */
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			char **v = realloc(names, nc * sizeof(*v));
			if (!v)
				break;
			names = v;
			cap = nc;
		}
		if (!(names[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	if (f->o.record) {
		struct pfc_files_entry *r = rec_add(f, base, rel, dir, 1);
		if (r && !r->names) {
			size_t len = 0, k;
			char *buf;
			for (i = 0; i < n; i++)
				len += storable(names[i]) ? strlen(names[i]) + 1 : 0;
			if ((buf = malloc(len + 1))) {
				for (i = 0, k = 0; i < n; i++)
					if (storable(names[i])) {
						memcpy(buf + k, names[i], strlen(names[i]) + 1);
						k += strlen(names[i]) + 1;
					}
				r->names = buf;
				r->names_len = len;
			}
		}
	}
	for (i = 0; i < n; i++) {
		if (!stop)
			stop = fn(arg, names[i]);
		free(names[i]);
	}
	free(names);
	return 0;
}

void pfc_files_note(struct pfc_files *f, enum pfc_files_base base, const char *rel, const char *why,
		    int32_t pid, const uint8_t *bid, int bid_len)
{
	struct pfc_files_entry *e;

	if (!f->o.record || !(e = rec_find(f, base, rel, 0)))
		return;
	if (why && !e->why && storable(why))
		e->why = strdup(why);
	if (pid >= 0)
		e->pid = pid;
	if (bid && bid_len > 0 && bid_len <= (int)sizeof(e->bid)) {
		memcpy(e->bid, bid, (size_t)bid_len);
		e->bid_len = bid_len;
	}
}

int pfc_files_absorb(struct pfc_files *f, const struct pfc_files *from)
{
	size_t i;

	if (!f->o.record)
		return 0;
	for (i = 0; i < from->nr_rec; i++) {
		const struct pfc_files_entry *s = &from->rec[i];
		struct pfc_files_entry *e = rec_add(f, s->base, s->rel, s->local, s->is_list);

		if (!e)
			return -1;
		if (!s->probe)
			e->probe = 0;
		if (s->why && !e->why && !(e->why = strdup(s->why)))
			return -1;
		if (e->pid < 0)
			e->pid = s->pid;
		if (!e->bid_len && s->bid_len) {
			memcpy(e->bid, s->bid, sizeof(e->bid));
			e->bid_len = s->bid_len;
		}
		if (s->is_list && !e->names && s->names) {
			char *names = malloc(s->names_len + 1);
			if (!names)
				return -1;
			memcpy(names, s->names, s->names_len);
			names[s->names_len] = 0;
			e->names = names;
			e->names_len = s->names_len;
		}
	}
	return 0;
}

size_t pfc_files_recorded(const struct pfc_files *f, const struct pfc_files_entry **v)
{
	*v = f->rec;
	return f->nr_rec;
}

unsigned pfc_files_bases_used(const struct pfc_files *f)
{
	unsigned m = f->pack_has;

	if (f->o.map_dir)
		m |= 1u << PFC_FILES_MAPDIR;
	if (f->o.buildid_dir)
		m |= 1u << PFC_FILES_BUILDID;
	if (f->o.symfs)
		m |= 1u << PFC_FILES_ROOT;
	return m;
}
