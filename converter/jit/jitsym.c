/*
 * jitsym.c - per-process JIT symbol sources.  A runtime names its perf-PID.map and
 * jit-PID.dump with its pid as it sees it, which inside a container is not the pid perf
 * recorded; the files may have been copied elsewhere, or left by an earlier process with
 * the same pid.  This file finds the pid the runtime used, asks files.c for the files in a
 * fixed order (--map-dir, the live process's /proc/PID/root, the host), refuses a file
 * whose code does not lie in the process's recorded JIT mappings, and answers lookups.  It
 * does not parse the files (perfmap.c, jitdump.c), join their paths (files.c) nor decide
 * when to look (callchain.c).  It also lists the side files a trace.zip or a pack carries.
 */
#include <lzma.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "converter/files/files.h"
#include "converter/jit/jitdump.h"
#include "converter/util/fileio.h"
#include "converter/jit/jitsym.h"
#include "converter/jit/perfmap.h"
#include "converter/perffile/reader.h"

struct jrange {
	uint64_t start, end;
};

/* A place a file of the runtime's may be in, as asked of files.c. */
struct cand {
	enum pfc_files_base base;
	char rel[4096];
};

struct pfc_jitproc {
	int32_t pid;                /* as recorded (host) */
	int32_t nspid;              /* as the runtime named its files */
	const char *nspid_src;      /* how nspid was found; NULL: it is the host pid */
	char *marker;               /* the jitdump marker mapping's path */
	struct jrange *ranges;      /* executable JIT regions and PE images, as mapped */
	size_t nr_ranges, cap_ranges;
	int pm_tried, jd_tried, live_checked, live;
	struct pfc_perfmap *pm;
	struct pfc_found *pm_found; /* its file: the jitdump may be next to it */
	struct pfc_jitdump *jd;
	char *jd_path;
	struct pfc_found *jd_found; /* the jitdump's file (jd_tried: the one read, or NULL) */
	char *jd_dir;               /* perf inject writes jitted-*.so next to the marker */
	int jd_timed;
	int jd_provisional;         /* none of its loads was old enough to be checked yet */
	uint64_t cut_in;            /* unnamed JIT frames in the code of its jitdump's cut last record */
	uint64_t cut_after;         /* others, that records after it might name (no perf map) */
	uint64_t cut_first;         /* the first of them */
	struct pfc_dso *pm_dso;     /* the DSO of its perf map's frames, once one was named */
	/* Counts the changes above that may name an address otherwise (pfc_jitsyms_changes);
	 * one more JIT range does not, once there is one: ranges are read only when a file is
	 * checked, once, and by wants() for whether there are any. */
	uint64_t changes;
};

void pfc_jitsyms_init(struct pfc_jitsyms *j, const struct pfc_jitsym_opts *o, struct pfc_machine *m,
		      const struct pfc_reader *rd, struct pfc_error *err)
{
	memset(j, 0, sizeof(*j));
	j->o = *o;
	j->m = m;
	j->rd = rd;
	j->err = err;
}

void pfc_jitsyms_exit(struct pfc_jitsyms *j)
{
	size_t i;

	for (i = 0; i < j->nr_procs; i++) {
		struct pfc_jitproc *p = j->procs[i];
		if (p->pm) {
			pfc_perfmap_free(p->pm);
			free(p->pm);
		}
		if (p->jd) {
			pfc_jitdump_free(p->jd);
			free(p->jd);
		}
		free(p->marker);
		free(p->ranges);
		free(p->pm_found);
		free(p->jd_path);
		free(p->jd_found);
		free(p->jd_dir);
		free(p);
	}
	free(j->procs);
	memset(j, 0, sizeof(*j));
}

int pfc_jitsyms_parse_nstgid(const char *st, size_t len)
{
	const char *p = st, *end = st + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if ((size_t)(le - p) > 7 && !memcmp(p, "NStgid:", 7)) {
			/* tab-separated, outermost namespace first: the last field is the pid
			 * the process sees itself as */
			const char *q = le;
			long v = 0;
			int digits = 0;
			while (q > p + 7 && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\r'))
				q--;
			while (q > p + 7 && q[-1] >= '0' && q[-1] <= '9')
				q--;
			for (; q < le && *q >= '0' && *q <= '9'; q++) {
				v = v * 10 + (*q - '0');
				if (v > 0x7fffffff)
					return -1;
				digits++;
			}
			return digits ? (int)v : -1;
		}
		p = le + 1;
	}
	return -1;
}

/* /proc/PID/FILE of the recording machine (comm, status); what is noted for a pack. */
static char *read_proc(struct pfc_jitsyms *j, int32_t pid, const char *file, const char *what, size_t *len)
{
	struct pfc_found found;
	char rel[64], why[64];
	FILE *f;
	char *buf;
	size_t n;

	snprintf(rel, sizeof(rel), "%d/%s", pid, file);
	if (!pfc_files_find(j->o.files, PFC_FILES_PROC, rel, 0, &found) || !(f = fopen(found.path, "re")))
		return NULL;
	snprintf(why, sizeof(why), "%s of pid %d", what, pid);
	pfc_files_note(j->o.files, PFC_FILES_PROC, rel, why, pid, NULL, 0);
	buf = malloc(8192);
	if (!buf) {
		fclose(f);
		return NULL;
	}
	n = fread(buf, 1, 8191, f);
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

/* Whether the recorded process still runs: /proc/PID exists and has the recorded comm
 * (a pid reused by an unrelated process must not lend its files). */
static int is_live(struct pfc_jitsyms *j, struct pfc_jitproc *p)
{
	size_t len;
	char *comm;
	struct pfc_thread *t;

	if (p->live_checked)
		return p->live;
	p->live_checked = 1;
	p->changes++;
	comm = read_proc(j, p->pid, "comm", "command", &len);
	if (!comm)
		return 0;
	while (len && (comm[len - 1] == '\n'))
		comm[--len] = 0;
	t = pfc_machine_findnew_thread(j->m, p->pid, p->pid);
	p->live = !t || !t->comm_set || !strcmp(comm, pfc_intern_str(j->m->strings, t->comm));
	free(comm);
	return p->live;
}


#define MAX_JIT_FILE ((uint64_t)1 << 32)

/* Read a whole regular file; NULL when it cannot be read. */
static uint8_t *read_file(const char *path, size_t *len)
{
	char *buf;

	return pfc_read_file(path, MAX_JIT_FILE, &buf, len) == 0 ? (uint8_t *)buf : NULL;
}

/* Decompress an .xz file (maps and dumps are often kept compressed), at most MAX_JIT_FILE
 * bytes of output; NULL when it is not a complete .xz stream. */
static uint8_t *read_xz(const char *path, size_t *len)
{
	size_t in_len, cap = 1 << 20;
	uint8_t *in = read_file(path, &in_len), *out = NULL;
	lzma_stream strm = LZMA_STREAM_INIT;
	lzma_ret r = LZMA_OK;

	if (!in)
		return NULL;
	if (lzma_stream_decoder(&strm, UINT64_MAX, 0) != LZMA_OK || !(out = malloc(cap)))
		goto fail;
	strm.next_in = in;
	strm.avail_in = in_len;
	strm.next_out = out;
	strm.avail_out = cap;
	while ((r = lzma_code(&strm, LZMA_FINISH)) == LZMA_OK) {
		if (!strm.avail_out) {
			uint8_t *n;
			if ((uint64_t)cap * 2 > MAX_JIT_FILE || !(n = realloc(out, cap * 2)))
				goto fail;
			out = n;
			strm.next_out = out + cap;
			strm.avail_out = cap;
			cap *= 2;
		}
	}
	if (r != LZMA_STREAM_END)
		goto fail;
	*len = (size_t)strm.total_out;
	lzma_end(&strm);
	free(in);
	return out;
fail:
	lzma_end(&strm);
	free(in);
	free(out);
	return NULL;
}

/* A candidate place: BASE and REL formatted. */
static void cand_set(struct cand *c, enum pfc_files_base base, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cand_set(struct cand *c, enum pfc_files_base base, const char *fmt, ...)
{
	va_list ap;
	int n;

	c->base = base;
	va_start(ap, fmt);
	n = vsnprintf(c->rel, sizeof(c->rel), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(c->rel))
		c->rel[0] = 0;	/* too long: a place that holds nothing */
}

/*
 * Ask for a candidate.  *label is what the list of paths tried shows of it: the file's name,
 * else this machine's path that was tried (files.c leaves it in path), else the place
 * itself (a pack without the file).
 */
static int find_cand(struct pfc_jitsyms *j, const struct cand *c, struct pfc_found *f, char *label, size_t cap)
{
	int hit;

	f->path[0] = f->name[0] = 0;
	hit = pfc_files_find(j->o.files, c->base, c->rel, 0, f);
	if (hit || f->path[0])
		snprintf(label, cap, "%s", hit ? f->name : f->path);
	else
		snprintf(label, cap, "%s:%s", pfc_files_base_name(c->base), c->rel);
	return hit;
}

/* The file of a candidate find_cand found (hit), or else the same name with .xz; c->rel
 * and *f then say which was read. */
static uint8_t *read_jit_file(struct pfc_jitsyms *j, struct cand *c, int hit, struct pfc_found *f, size_t *len)
{
	size_t n = strlen(c->rel);
	uint8_t *b;

	if (hit && (b = read_file(f->path, len)))
		return b;
	if (n + 4 > sizeof(c->rel))
		return NULL;
	memcpy(c->rel + n, ".xz", 4);
	if (pfc_files_find(j->o.files, c->base, c->rel, 0, f) && (b = read_xz(f->path, len)))
		return b;
	c->rel[n] = 0;
	return NULL;
}

static struct pfc_jitproc *proc_findnew(struct pfc_jitsyms *j, int32_t pid)
{
	struct pfc_jitproc *p;
	size_t i;

	if (j->last && j->last->pid == pid)
		return j->last;
	for (i = 0; i < j->nr_procs; i++)
		if (j->procs[i]->pid == pid)
			return j->last = j->procs[i];
	if (j->nr_procs == j->cap_procs) {
		size_t cap = j->cap_procs ? j->cap_procs * 2 : 16;
		struct pfc_jitproc **n = realloc(j->procs, cap * sizeof(*n));
		if (!n)
			return NULL;
		j->procs = n;
		j->cap_procs = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->nspid = pid;
	p->changes = 1;
	for (i = 0; i < j->o.nr_pid_map; i++)
		if (j->o.pid_map[i].host == pid) {
			p->nspid = j->o.pid_map[i].ns;
			p->nspid_src = "--pid-map";
		}
	j->procs[j->nr_procs++] = p;
	return j->last = p;
}

/* The pid the runtime used, once the recording has been seen as far as it matters. */
static void settle_nspid(struct pfc_jitsyms *j, struct pfc_jitproc *p)
{
	size_t len;
	char *st;
	int ns;

	if (p->nspid_src)
		return;
	if (!is_live(j, p))
		return;
	st = read_proc(j, p->pid, "status", "pid namespace", &len);
	if (!st)
		return;
	ns = pfc_jitsyms_parse_nstgid(st, len);
	free(st);
	if (ns > 0) {
		p->nspid = ns;
		p->nspid_src = "NStgid";
	}
}

int pfc_jitsyms_note_map(struct pfc_jitsyms *j, int32_t pid, const struct pfc_map *map, const char *filename)
{
	struct pfc_jitproc *p;
	int ns;

	if (!map->dso || pid <= 0)
		return 0;
	if (map->dso->kind != PFC_DSO_JITMARK && map->dso->kind != PFC_DSO_PE &&
	    !pfc_dso_is_jit_region(map->dso->kind))
		return 0;
	if (!(p = proc_findnew(j, pid)))
		return -1;
	if (map->dso->kind == PFC_DSO_JITMARK) {
		p->changes++;
		if (!p->marker && !(p->marker = strdup(filename)))
			return -1;
		if (!p->jd)	/* looked for too early: look again, now with the marker's path */
			p->jd_tried = 0;
		/* the runtime named the dump with its own pid: unless the user said otherwise,
		 * that is the pid of all its files */
		if (pfc_machine_is_jitdump_name(filename, &ns) && ns > 0 && !p->nspid_src) {
			p->nspid = ns;
			p->nspid_src = "the jitdump marker";
		}
		return 0;
	}
	if (p->nr_ranges == p->cap_ranges) {
		size_t cap = p->cap_ranges ? p->cap_ranges * 2 : 16;
		struct jrange *n = realloc(p->ranges, cap * sizeof(*n));
		if (!n)
			return -1;
		p->ranges = n;
		p->cap_ranges = cap;
	}
	if (!p->nr_ranges)
		p->changes++;
	p->ranges[p->nr_ranges].start = map->start;
	p->ranges[p->nr_ranges].end = map->end;
	p->nr_ranges++;
	return 0;
}

static int in_ranges(const struct pfc_jitproc *p, uint64_t addr)
{
	size_t i;

	for (i = 0; i < p->nr_ranges; i++)
		if (addr >= p->ranges[i].start && addr < p->ranges[i].end)
			return 1;
	return 0;
}

/*
 * A file left by an earlier process with the same pid (pid 1 in every container) names
 * code at other addresses: ASLR places each process's code heaps elsewhere.  A file is
 * taken as this process's when at least one of its entries lies in one of the process's
 * recorded JIT mappings or PE images; a process without any recorded JIT mapping cannot
 * have JIT frames, so nothing is checked.  Entries after `limit` (a time) are not
 * counted: their mappings may not have been seen yet.
 */
static int belongs(const struct pfc_jitproc *p, const uint64_t *starts, size_t stride, size_t n,
		   const uint64_t *times, uint64_t limit, uint64_t *checked)
{
	size_t i;

	*checked = 0;
	if (!p->nr_ranges)
		return 1;
	for (i = 0; i < n; i++) {
		const uint64_t *a = (const uint64_t *)((const char *)starts + i * stride);
		if (times && *(const uint64_t *)((const char *)times + i * stride) > limit)
			continue;
		(*checked)++;
		if (in_ranges(p, *a))
			return 1;
	}
	return !*checked;
}

static void warn(struct pfc_jitsyms *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct pfc_jitsyms *j, const char *fmt, ...)
{
	va_list ap;

	if (!j->o.log)
		return;
	fputs("perfconv: warning: ", j->o.log);
	va_start(ap, fmt);
	vfprintf(j->o.log, fmt, ap);
	va_end(ap);
	fputc('\n', j->o.log);
}

/* A list of the paths tried, for the warning that says nothing was found. */
struct tried {
	char buf[2048];
	size_t len;
};

static void tried_add(struct tried *t, const char *path)
{
	int n = snprintf(t->buf + t->len, sizeof(t->buf) - t->len, "%s'%s'", t->len ? ", " : "", path);

	if (n > 0 && (size_t)n < sizeof(t->buf) - t->len)
		t->len += (size_t)n;
}

static int tried_has(const struct tried *t, const char *path)
{
	char q[4096 + 32];

	snprintf(q, sizeof(q), "'%s'", path);
	return strstr(t->buf, q) != NULL;
}

/* Read and parse the perf map of a candidate (or its .xz); NULL when it cannot be read or
 * holds no entry.  c->rel and *f say which file was read. */
static struct pfc_perfmap *read_perfmap(struct pfc_jitsyms *j, struct cand *c, int hit, struct pfc_found *f)
{
	struct pfc_perfmap *pm;
	size_t len;
	uint8_t *buf = read_jit_file(j, c, hit, f, &len);

	if (!buf)
		return NULL;
	if (!(pm = calloc(1, sizeof(*pm))) || pfc_perfmap_parse(pm, (const char *)buf, len) < 0 || !pm->n) {
		if (pm)
			pfc_perfmap_free(pm);
		free(pm);
		pm = NULL;
	}
	free(buf);
	return pm;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* The pids of the perf-N.map names of the map directory. */
struct scan {
	const struct pfc_jitproc *p;
	int32_t *pids, n, cap;
};

static int scan_name(void *arg, const char *name)
{
	struct scan *sc = arg;
	int pid, end = 0;

	if (sscanf(name, "perf-%d.map%n", &pid, &end) != 1 || pid <= 0 || pid == sc->p->nspid || pid == sc->p->pid ||
	    (name[end] && strcmp(name + end, ".xz")))
		return 0;
	if (sc->n == sc->cap) {
		int32_t *np = realloc(sc->pids, (size_t)(sc->cap ? sc->cap * 2 : 16) * sizeof(*np));
		if (!np)
			return 1;
		sc->pids = np;
		sc->cap = sc->cap ? sc->cap * 2 : 16;
	}
	sc->pids[sc->n++] = pid;
	return 0;
}

/*
 * A process recorded by attaching to it (perf record -p) inside a pid namespace, converted
 * after it ended: no jitdump marker was recorded (the runtime does not keep it mapped) and
 * /proc no longer tells its pid in the namespace, so its perf-NSPID.map copied into
 * --map-dir goes by an unknown name.  Such a map is recognised by its code: the first
 * perf-N.map there (in the order of N) one of whose entries lies in the process's recorded
 * JIT mappings is taken, and N becomes the pid the runtime used, for its jitdump too.
 * A process without recorded JIT mappings gives no evidence: nothing is taken.
 */
static struct pfc_perfmap *scan_map_dir(struct pfc_jitsyms *j, struct pfc_jitproc *p, struct cand *c,
					struct pfc_found *f)
{
	struct scan sc = { .p = p };
	int32_t i;
	struct pfc_perfmap *found = NULL;

	if (!p->nr_ranges)
		return NULL;
	pfc_files_list(j->o.files, PFC_FILES_MAPDIR, "", scan_name, &sc);
	if (sc.n)
		qsort(sc.pids, (size_t)sc.n, sizeof(*sc.pids), cmp_i32);
	for (i = 0; i < sc.n && !found; i++) {
		uint64_t checked;
		char label[4096 + 16];
		int hit;
		if (i && sc.pids[i] == sc.pids[i - 1])	/* perf-N.map and perf-N.map.xz */
			continue;
		cand_set(c, PFC_FILES_MAPDIR, "perf-%d.map", sc.pids[i]);
		hit = find_cand(j, c, f, label, sizeof(label));
		if (!(found = read_perfmap(j, c, hit, f)))
			continue;
		if (!belongs(p, found->n ? &found->v[0].start : NULL, sizeof(found->v[0]), found->n, NULL, 0, &checked)) {
			pfc_perfmap_free(found);
			free(found);
			found = NULL;
			continue;
		}
		p->nspid = sc.pids[i];
		p->nspid_src = "its perf map in --map-dir, whose code lies in its JIT mappings";
	}
	free(sc.pids);
	return found;
}

/* The perf map found is the process's from now on. */
static struct pfc_perfmap *take_perfmap(struct pfc_jitsyms *j, struct pfc_jitproc *p, struct pfc_perfmap *pm,
					const struct pfc_found *f)
{
	char why[64];

	p->pm = pm;
	if ((p->pm_found = malloc(sizeof(*f))))
		*p->pm_found = *f;
	snprintf(why, sizeof(why), "perf map of pid %d", p->pid);
	pfc_files_note(j->o.files, f->base, f->rel, why, p->pid, NULL, 0);
	if (j->o.verbose && j->o.log)
		fprintf(j->o.log, "perfconv: pid %d: perf map '%s' (%zu entries%s%s)\n", p->pid, f->name, pm->n,
			p->nspid_src ? ", pid in its namespace from " : "", p->nspid_src ? p->nspid_src : "");
	return pm;
}

/* No perf map for p: what would give one.  A process that still runs can be asked for its
 * map now; one in a pid namespace named it with its inner pid.  One that ended took a /tmp
 * of its own (systemd's PrivateTmp, a container) with it: the map had to be copied, or the
 * recording packed with its files, before that. */
static void missing_map_warning(struct pfc_jitsyms *j, struct pfc_jitproc *p, const char *tried, int map_dir)
{
	char hint[512];

	if (is_live(j, p) && p->nspid != p->pid)
		snprintf(hint, sizeof(hint), "; pid %d still runs, as pid %d in its pid namespace, and its runtime "
			 "names the map perf-%d.map: 'perfconv --enable-perfmap %d' has it written now, and where "
			 "that file is converted away from this machine give --pid-map %d=%d",
			 p->pid, p->nspid, p->nspid, p->pid, p->pid, p->nspid);
	else if (is_live(j, p))
		snprintf(hint, sizeof(hint), "; pid %d still runs: 'perfconv --enable-perfmap %d' has its runtime "
			 "write the map now, then convert again", p->pid, p->pid);
	else if (!map_dir)
		snprintf(hint, sizeof(hint), " (the runtime writes it with DOTNET_PerfMapEnabled=1, in a /tmp that may "
			 "be its own: copy it out before the process ends, or pack the recording on the recording "
			 "machine, -o X.perfpack, or record with 'perfconv record')");
	else
		hint[0] = 0;
	warn(j, "no JIT symbols for pid %d: no perf map, looked for %s%s", p->pid, tried, hint);
}

struct pfc_perfmap *pfc_jitsyms_perfmap(struct pfc_jitsyms *j, int32_t pid)
{
	struct pfc_jitproc *p = proc_findnew(j, pid);
	struct cand cand[4];
	size_t nc = 0, i;
	struct tried t = { .len = 0 };
	struct pfc_found f;
	int map_dir = pfc_files_has(j->o.files, PFC_FILES_MAPDIR);

	if (!p)
		return NULL;
	if (p->pm_tried)
		return p->pm;
	p->pm_tried = 1;
	p->changes++;
	settle_nspid(j, p);
	if (map_dir) {
		cand_set(&cand[nc++], PFC_FILES_MAPDIR, "perf-%d.map", p->nspid);
		if (p->nspid != p->pid)
			cand_set(&cand[nc++], PFC_FILES_MAPDIR, "perf-%d.map", p->pid);
	}
	if (is_live(j, p))
		cand_set(&cand[nc++], PFC_FILES_PROC, "%d/root/tmp/perf-%d.map", p->pid, p->nspid);
	cand_set(&cand[nc++], PFC_FILES_TMP, "perf-%d.map", p->pid);
	for (i = 0; i < nc; i++) {
		struct pfc_perfmap *pm;
		uint64_t checked;
		char label[4096 + 16];
		int hit = find_cand(j, &cand[i], &f, label, sizeof(label));

		tried_add(&t, label);
		if (!(pm = read_perfmap(j, &cand[i], hit, &f)))
			continue;
		if (!belongs(p, pm->n ? &pm->v[0].start : NULL, sizeof(pm->v[0]), pm->n, NULL, 0, &checked)) {
			warn(j, "'%s' is not the perf map of pid %d: none of its %zu entries lies in the "
				"process's JIT mappings (left by an earlier process with the same pid?); not used",
			     f.name, p->pid, pm->n);
			pfc_perfmap_free(pm);
			free(pm);
			continue;
		}
		return take_perfmap(j, p, pm, &f);
	}
	if (map_dir && !p->nspid_src) {
		struct pfc_perfmap *pm = scan_map_dir(j, p, &cand[0], &f);
		if (pm)
			return take_perfmap(j, p, pm, &f);
	}
	missing_map_warning(j, p, t.buf, map_dir);
	return NULL;
}

/* A perf map read from its .xz copy is no file a writer can copy as it is. */
const struct pfc_found *pfc_jitsyms_perfmap_found(struct pfc_jitsyms *j, int32_t pid)
{
	const struct pfc_jitproc *p = proc_findnew(j, pid);
	size_t n;

	if (!p || !p->pm || !p->pm_found)
		return NULL;
	n = strlen(p->pm_found->rel);
	return n > 3 && !strcmp(p->pm_found->rel + n - 3, ".xz") ? NULL : p->pm_found;
}

const char *pfc_jitsyms_perfmap_path(struct pfc_jitsyms *j, int32_t pid)
{
	const struct pfc_found *f = pfc_jitsyms_perfmap_found(j, pid);

	return f ? f->name : NULL;
}

/* Whether the recording's clock is the jitdump's (CLOCK_MONOTONIC); *why when not. */
static int clock_matches(struct pfc_jitsyms *j)
{
	size_t i;

	if (j->clock_checked)
		return j->clock_ok;
	j->clock_checked = 1;
	j->clock_ok = j->rd->nr_evsels > 0;
	j->clock_why = "the recording has no events";
	for (i = 0; i < j->rd->nr_evsels; i++) {
		const struct perf_event_attr *a = &j->rd->evsels[i]->attr;
		if (!(a->sample_type & PERF_SAMPLE_TIME)) {
			j->clock_ok = 0;
			j->clock_why = "the samples have no time stamps";
			break;
		}
		if (!a->use_clockid || a->clockid != CLOCK_MONOTONIC) {
			j->clock_ok = 0;
			j->clock_why = "the recording's clock is not CLOCK_MONOTONIC (record with perf record -k 1)";
			break;
		}
	}
	return j->clock_ok;
}

static char *dir_of(const char *path)
{
	const char *s = strrchr(path, '/');

	if (!s)
		return strdup(".");
	if (s == path)
		return strdup("/");
	return strndup(path, (size_t)(s - path));
}

static void stale_warning(struct pfc_jitsyms *j, struct pfc_jitproc *p, const char *path, uint64_t checked)
{
	warn(j, "'%s' is not the jitdump of pid %d: none of its %llu code loads lies in the "
		"process's JIT mappings (left by an earlier process with the same pid?); not used",
	     path, p->pid, (unsigned long long)checked);
}

/*
 * The places the jitdump of a process may be, in the order they are tried: the map directory
 * (the name the process mapped, jit-NSPID.dump, jit-PID.dump), the live process's own file
 * system through /proc/PID/root (its mapped path, its /tmp), the path it mapped as this
 * machine has it, next to its perf map, and /tmp.  The conversion and the writers that copy
 * the file (trace.zip, packs) ask here, so that they take the same file.  load_perfmap: the
 * perf map may be looked for first, for the place next to it.  Fills cand[8]; their number.
 */
static size_t jitdump_places(struct pfc_jitsyms *j, struct pfc_jitproc *p, struct cand *cand, int load_perfmap)
{
	const char *base = p->marker ? strrchr(p->marker, '/') : NULL;
	size_t nc = 0;

	settle_nspid(j, p);
	base = base ? base + 1 : p->marker;
	if (pfc_files_has(j->o.files, PFC_FILES_MAPDIR)) {
		if (base)
			cand_set(&cand[nc++], PFC_FILES_MAPDIR, "%s", base);
		cand_set(&cand[nc++], PFC_FILES_MAPDIR, "jit-%d.dump", p->nspid);
		if (p->nspid != p->pid)
			cand_set(&cand[nc++], PFC_FILES_MAPDIR, "jit-%d.dump", p->pid);
	}
	if (is_live(j, p)) {
		if (p->marker)
			cand_set(&cand[nc++], PFC_FILES_PROC, "%d/root%s", p->pid, p->marker);
		cand_set(&cand[nc++], PFC_FILES_PROC, "%d/root/tmp/jit-%d.dump", p->pid, p->nspid);
	}
	if (p->marker)	/* the path the process mapped */
		cand_set(&cand[nc++], PFC_FILES_HOST, "%s", p->marker);
	if (!p->pm_tried && load_perfmap)
		pfc_jitsyms_perfmap(j, p->pid);
	if (p->pm_found) {	/* next to the perf map: its place, its directory */
		const char *s = strrchr(p->pm_found->rel, '/');
		cand_set(&cand[nc++], p->pm_found->base, "%.*sjit-%d.dump", s ? (int)(s + 1 - p->pm_found->rel) : 0,
			 p->pm_found->rel, p->nspid);
	}
	cand_set(&cand[nc++], PFC_FILES_TMP, "jit-%d.dump", p->pid);
	return nc;
}

/* Find, parse and check the jitdump of a process (once).  A corrupt one is an error. */
static int load_jitdump(struct pfc_jitsyms *j, struct pfc_jitproc *p, uint64_t now, int have_time)
{
	struct cand cand[8];
	size_t nc, i;
	struct tried t = { .len = 0 };
	struct pfc_found f;

	p->jd_tried = 1;
	p->changes++;
	nc = jitdump_places(j, p, cand, 1);
	for (i = 0; i < nc; i++) {
		struct pfc_jitdump *jd;
		struct pfc_error e;
		uint64_t checked;
		size_t k, len;
		int dup = 0, ret, hit;
		char label[4096 + 16];
		uint8_t *buf;

		/* the same place twice, or the same file through two places (a marker in
		 * /tmp): looked at once */
		for (k = 0; k < i; k++)
			dup |= cand[k].base == cand[i].base && !strcmp(cand[k].rel, cand[i].rel);
		if (dup || !cand[i].rel[0])
			continue;
		hit = find_cand(j, &cand[i], &f, label, sizeof(label));
		if (tried_has(&t, label))
			continue;
		tried_add(&t, label);
		if (!(buf = read_jit_file(j, &cand[i], hit, &f, &len)))
			continue;
		if (!(jd = calloc(1, sizeof(*jd)))) {
			free(buf);
			return PFC_FAIL_NOOFF(j->err, NOMEM, "jitdump");
		}
		memset(&e, 0, sizeof(e));
		ret = pfc_jitdump_parse(jd, buf, len, &e);
		free(buf);
		if (ret < 0) {
			free(jd);
			/* hostile or broken input: the conversion stops and names the file */
			*j->err = e;
			{
				size_t fl = strnlen(f.name, sizeof(j->err->file) - 1);
				memcpy(j->err->file, f.name, fl);
				j->err->file[fl] = 0;
			}
			return ret;
		}
		/* the header has the pid the writer saw, in its own pid namespace: the process's
		 * host pid and its inner pid are two pids, and the message says which is which */
		if (jd->pid != (uint32_t)p->nspid && p->nspid_src) {
			if (p->nspid == p->pid)
				warn(j, "'%s' was written by pid %u, not by pid %d (from %s); not used", f.name, jd->pid,
				     p->pid, p->nspid_src);
			else
				warn(j, "'%s' was written by pid %u, not by pid %d, which is what pid %d was in its pid "
					"namespace (from %s)%s; not used", f.name, jd->pid, p->nspid, p->pid, p->nspid_src,
				     jd->pid == (uint32_t)p->pid ? ": the dump has the host pid, as a process outside a pid "
								   "namespace writes it" : "");
			pfc_jitdump_free(jd);
			free(jd);
			continue;
		}
		p->jd_timed = clock_matches(j) && have_time && !(jd->flags & PFC_JITDUMP_FLAG_ARCH_TIMESTAMP);
		/* a jitdump cut before its first record has no entries (and no array) */
		if (!belongs(p, jd->n ? &jd->v[0].start : NULL, sizeof(jd->v[0]), jd->n,
			     p->jd_timed && jd->n ? &jd->v[0].time : NULL, now, &checked)) {
			stale_warning(j, p, f.name, checked);
			pfc_jitdump_free(jd);
			free(jd);
			continue;
		}
		/* no load is older than this sample: the check waits for one (until then
		 * nothing can be found in it anyway) */
		p->jd_provisional = p->jd_timed && !checked && jd->n;
		if (!p->jd_timed)
			warn(j, "'%s': JIT code is looked up without time (the latest load wins): %s", f.name,
			     !clock_matches(j) ? j->clock_why
			     : !have_time ? "the samples have no time stamps"
			     : "the jitdump has architecture time stamps");
		/* an incomplete last record is normal: the process was killed, or still ran, while
		 * it was written; .NET 10 leaves one in every jitdump, a stub's code load cut
		 * short, after which it writes nothing.  It matters only for a JIT frame that no
		 * record or perf map names, which that record may have named: the frames are
		 * counted as they are symbolized (pfc_jitsyms_note_unnamed), and a warning says
		 * how many (pfc_jitsyms_cut_report) */
		if (jd->truncated && j->o.verbose && j->o.log)
			fprintf(j->o.log, "perfconv: pid %d: jitdump '%s': the last record, at offset %llu, is incomplete; "
				"the records before it are used\n", p->pid, f.name, (unsigned long long)jd->truncated_at);
		p->jd = jd;
		p->jd_path = strdup(f.name);
		p->jd_dir = dir_of(p->marker ? p->marker : f.name);
		if (!p->jd_path || !p->jd_dir || !(p->jd_found = malloc(sizeof(f))))
			return PFC_FAIL_NOOFF(j->err, NOMEM, "jitdump");
		*p->jd_found = f;
		{
			char why[64];
			snprintf(why, sizeof(why), "jitdump of pid %d", p->pid);
			pfc_files_note(j->o.files, f.base, f.rel, why, p->pid, NULL, 0);
		}
		if (j->o.verbose && j->o.log)
			fprintf(j->o.log, "perfconv: pid %d: jitdump '%s' (%zu code loads, %s)\n", p->pid, f.name, jd->n,
				p->jd_timed ? "looked up by time" : "without time");
		return 0;
	}
	if (p->marker)
		warn(j, "pid %d recorded a jitdump but none was found that belongs to it: looked for %s", p->pid, t.buf);
	return 0;
}

int pfc_jitsyms_jitdump_find(struct pfc_jitsyms *j, int32_t pid, struct pfc_found *f)
{
	struct pfc_jitproc *p = proc_findnew(j, pid);
	struct cand cand[8];
	size_t nc, i, n;

	if (!p)
		return 0;
	if (p->jd_tried) {	/* the conversion looked: the file it read, or none */
		if (!p->jd_found)
			return 0;
		*f = *p->jd_found;
	} else {
		/* no JIT frame of the process asked (perf inject's jitted-*.so named them): the
		 * first file in the places the conversion would have tried, without its perf map */
		nc = jitdump_places(j, p, cand, 0);
		for (i = 0; i < nc; i++)
			if (cand[i].rel[0] && pfc_files_find(j->o.files, cand[i].base, cand[i].rel, 0, f))
				break;
		if (i == nc)
			return 0;
	}
	/* a jitdump read from its .xz copy is no file a writer can copy as it is */
	n = strlen(f->rel);
	return !(n > 3 && !strcmp(f->rel + n - 3, ".xz"));
}

int pfc_jitsyms_settled(const struct pfc_jitsyms *j, int32_t pid)
{
	const struct pfc_jitproc *p = j->last && j->last->pid == pid ? j->last : NULL;
	size_t i;

	for (i = 0; !p && i < j->nr_procs; i++)
		if (j->procs[i]->pid == pid)
			p = j->procs[i];
	return p && p->jd_tried && !p->jd_provisional && !p->jd_timed;
}

uint64_t pfc_jitsyms_changes(const struct pfc_jitsyms *j, int32_t pid)
{
	const struct pfc_jitproc *p = j->last && j->last->pid == pid ? j->last : NULL;
	size_t i;

	for (i = 0; !p && i < j->nr_procs; i++)
		if (j->procs[i]->pid == pid)
			p = j->procs[i];
	return p ? p->changes : 0;
}

int pfc_jitsyms_wants(struct pfc_jitsyms *j, int32_t pid, const struct pfc_map *map)
{
	struct pfc_jitproc *p;
	size_t i;

	if (pfc_dso_is_jit_region(map->dso->kind) || map->dso->kind == PFC_DSO_PE)
		return 1;
	if (j->last && j->last->pid == pid)
		p = j->last;
	else {
		for (p = NULL, i = 0; i < j->nr_procs; i++)
			if (j->procs[i]->pid == pid) {
				p = j->last = j->procs[i];
				break;
			}
	}
	/* a process whose jitdump was read, or whose jitdump is known (from its marker) and
	 * that has mapped JIT code: a jitdump names code outside JIT regions too (V8's
	 * builtins in the node binary), which a sample may show before any JIT frame */
	return p && (p->jd || (p->marker && !p->jd_tried && p->nr_ranges));
}

void pfc_jitsyms_note_unnamed(struct pfc_jitsyms *j, int32_t pid, uint64_t addr)
{
	struct pfc_jitproc *p = proc_findnew(j, pid);
	const struct pfc_jitdump *jd = p ? p->jd : NULL;

	if (!jd || !jd->truncated)
		return;
	if (jd->cut_end && addr >= jd->cut_start && addr < jd->cut_end) {
		if (!p->cut_in++)
			p->cut_first = addr;
		return;
	}
	/* code outside the cut record's may be in records written after it, if the writer went
	 * on (a dump read while its process ran).  A perf map, which the runtime writes beside
	 * the jitdump, names all of it: what it leaves unnamed was never the jitdump's (.NET 10
	 * writes nothing more after its cut stub record, and its perf map is complete) */
	if (p->pm)
		return;
	if (!p->cut_in && !p->cut_after)
		p->cut_first = addr;
	p->cut_after++;
}

void pfc_jitsyms_cut_report(struct pfc_jitsyms *j)
{
	size_t i;
	char range[96];

	for (i = 0; i < j->nr_procs; i++) {
		const struct pfc_jitproc *p = j->procs[i];
		uint64_t n;
		if (!p->jd || !p->jd->truncated || !(n = p->cut_in + p->cut_after))
			continue;
		range[0] = 0;
		if (p->jd->cut_end)
			snprintf(range, sizeof(range), ", a code load of %#llx-%#llx,",
				 (unsigned long long)p->jd->cut_start, (unsigned long long)p->jd->cut_end);
		warn(j, "'%s': the last record, at offset %llu%s is incomplete: %llu sampled JIT address%s of pid %d "
			"(first %#llx) left unnamed: %s; read the jitdump once the runtime has finished writing it "
			"(after the process exits or is stopped)",
		     p->jd_path, (unsigned long long)p->jd->truncated_at, range, (unsigned long long)n,
		     n == 1 ? "" : "es", p->pid, (unsigned long long)p->cut_first,
		     p->cut_after ? "the records after it, not yet written when it was read, may name them"
				  : "in the code that record loads");
	}
}

int pfc_jitsyms_lookup(struct pfc_jitsyms *j, int32_t pid, const struct pfc_map *map, uint64_t ip,
		       uint64_t time, int have_time, const struct pfc_dso **dso, uint64_t *addr, int *timed)
{
	struct pfc_jitproc *p = proc_findnew(j, pid);
	int ret;

	if (!p)
		return PFC_FAIL_NOOFF(j->err, NOMEM, "JIT symbols");
	if (!p->jd_tried && (ret = load_jitdump(j, p, time, have_time)) < 0)
		return ret;
	if (p->jd && p->jd_provisional && time >= p->jd->min_time) {
		uint64_t checked;
		p->changes++;
		if (!belongs(p, p->jd->n ? &p->jd->v[0].start : NULL, sizeof(p->jd->v[0]), p->jd->n,
			     p->jd->n ? &p->jd->v[0].time : NULL, time, &checked)) {
			stale_warning(j, p, p->jd_path, checked);
			pfc_jitdump_free(p->jd);
			free(p->jd);
			p->jd = NULL;
			free(p->jd_found);	/* nor is it the file to copy */
			p->jd_found = NULL;
		}
		p->jd_provisional = 0;
	}
	if (p->jd) {
		const struct pfc_jitdump_ent *e = pfc_jitdump_find(p->jd, ip, time, p->jd_timed);
		if (p->jd_timed)
			*timed = 1;
		j->nr_jitdump_lookups++;
		if (e) {
			/* the frame perf shows after perf inject --jit: the jitted-PID-N.so it
			 * writes next to the dump for this load, mapped at the code address */
			char name[4096 + 64];
			struct pfc_dso *d;
			int n = snprintf(name, sizeof(name), "%s/jitted-%u-%llu.so", p->jd_dir, e->pid,
					 (unsigned long long)e->code_index);
			d = pfc_machine_dso_findnew(j->m, name, (size_t)n, PFC_DSO_JITCODE, pid);
			if (!d)
				return PFC_FAIL_NOOFF(j->err, NOMEM, "JIT symbols");
			if (d->kind == PFC_DSO_JITCODE && !d->jit_name) {
				uint32_t id = pfc_intern(j->m->strings, pfc_jitdump_name(p->jd, e), e->name_len);
				if (id == UINT32_MAX)
					return PFC_FAIL_NOOFF(j->err, NOMEM, "JIT symbols");
				d->jit_name = pfc_intern_str(j->m->strings, id);
				d->jit_start = e->start;
			}
			*dso = d;
			*addr = ip;
			return 0;
		}
	}
	/* R2R code of a PE image comes only through the jitdump ([PreJIT] loads); other
	 * files are not JIT code */
	if (!pfc_dso_is_jit_region(map->dso->kind))
		return 0;
	{
		struct pfc_perfmap *pm = pfc_jitsyms_perfmap(j, pid);
		char name[64];
		struct pfc_dso *d;

		if (!pm || !pfc_perfmap_find(pm, ip))
			return 0;
		/* found once a process: formatting the name and finding it for each frame was a
		 * tenth of converting a .NET recording */
		if (!(d = p->pm_dso)) {
			snprintf(name, sizeof(name), "/tmp/perf-%d.map", pid);
			d = pfc_machine_dso_findnew(j->m, name, strlen(name), PFC_DSO_PERFMAP, pid);
			if (!d)
				return PFC_FAIL_NOOFF(j->err, NOMEM, "JIT symbols");
			p->pm_dso = d;
		}
		*dso = d;
		*addr = ip;
	}
	return 0;
}

/* ---- the files a trace.zip or a pack carries beside the recording ---- */

int pfc_jitsyms_side_files(struct pfc_jitsyms *j, int (*fn)(void *arg, const char *path, const char *name,
							      const char *entry), void *arg)
{
	const struct pfc_machine *m = j->m;
	struct pfc_files *files = j->o.files;
	struct pfc_found found;
	int *pids = NULL;
	size_t i, nr_pids = 0;
	int ret = 0;

	if (!(pids = calloc(m->nr_dsos + 1, sizeof(*pids))))
		return PFC_FAIL_NOOFF(j->err, NOMEM, "side files");
	for (i = 0; i < m->nr_dsos && ret == 0; i++) {
		const struct pfc_dso *d = m->dsos[i];
		const struct pfc_found *pm;
		int pid = -1;

		if (!d->loaded)
			continue;
		if (d->kind == PFC_DSO_PERFMAP && d->perfmap_path && (pm = pfc_jitsyms_perfmap_found(j, d->pid))) {
			const char *b = strrchr(pm->rel, '/');
			b = b ? b + 1 : pm->rel;
			pid = d->pid;
			if (fn)
				ret = fn(arg, pm->path, pm->name, strrchr(d->perfmap_path, '/') ? strrchr(d->perfmap_path, '/') + 1 : d->perfmap_path);
			/* ${mapFile/perf/perfinfo}, as perfcollect copied it */
			if (ret == 0 && !strncmp(b, "perf-", 5) &&
			    pfc_files_findf(files, pm->base, 0, &found, "%.*sperfinfo-%s", (int)(b - pm->rel), pm->rel, b + 5)) {
				const char *e = strrchr(found.name, '/');
				pfc_files_note(files, found.base, found.rel, "perfinfo of a perf map", d->pid, NULL, 0);
				if (fn)
					ret = fn(arg, found.path, found.name, e ? e + 1 : found.name);
			}
		} else if (d->kind == PFC_DSO_FILE) {
			pid = pfc_machine_jitted_pid(d->name);
		}
		if (pid > 0) {
			size_t k;
			for (k = 0; k < nr_pids && pids[k] != pid; k++)
				;
			if (k == nr_pids)
				pids[nr_pids++] = pid;
		}
	}
	for (i = 0; i < nr_pids && ret == 0; i++) {
		if (!pfc_jitsyms_jitdump_find(j, pids[i], &found))
			continue;
		pfc_files_note(files, found.base, found.rel, "jitdump of a process with JIT frames", pids[i], NULL, 0);
		if (fn) {
			char entry[64];
			snprintf(entry, sizeof(entry), "jit-%d.dump", pids[i]);
			ret = fn(arg, found.path, found.name, entry);
		}
	}
	free(pids);
	return ret;
}
