/*
 * machine.c - threads, address maps and DSOs, updated by COMM/FORK/EXIT/MMAP records in
 * time order.  The rules are perf's (machine.c, thread.c, maps.c of perf 6.1): threads are
 * keyed by tid; threads of one process share the leader's maps; a FORK into another
 * process copies the parent's maps; a new map cuts away whatever it overlaps; anonymous
 * executable memory is named /tmp/perf-PID.map and mapped 1:1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include "converter/machine/machine.h"
#include "converter/perffile/perf_file.h"

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

int pfc_machine_init(struct pfc_machine *m, struct pfc_intern *strings)
{
	memset(m, 0, sizeof(*m));
	m->strings = strings;
	m->tcap = 1024;
	m->thash = calloc(m->tcap, sizeof(*m->thash));
	m->dcap = 256;
	m->dhash = calloc(m->dcap, sizeof(*m->dhash));
	if (!m->thash || !m->dhash)
		return -1;
	return 0;
}

void pfc_machine_exit(struct pfc_machine *m)
{
	size_t i;

	for (i = 0; i < m->tcap; i++) {
		struct pfc_thread *t = m->thash[i], *n;
		for (; t; t = n) {
			n = t->hnext;
			free(t);
		}
	}
	free(m->thash);
	for (i = 0; i < m->nr_all_maps; i++) {
		free(m->all_maps[i]->v);
		free(m->all_maps[i]);
	}
	free(m->all_maps);
	free(m->ksym_maps.v);
	free(m->kmod_maps.v);
	for (i = 0; i < m->nr_dsos; i++)
		free(m->dsos[i]);
	free(m->dsos);
	free(m->dhash);
	free(m->bids);
	memset(m, 0, sizeof(*m));
}

/* ---- maps ---- */

static struct pfc_maps *maps_new(struct pfc_machine *m)
{
	struct pfc_maps *ms = calloc(1, sizeof(*ms));

	if (!ms)
		return NULL;
	if (m->nr_all_maps == m->cap_all_maps) {
		size_t cap = m->cap_all_maps ? m->cap_all_maps * 2 : 64;
		struct pfc_maps **n = realloc(m->all_maps, cap * sizeof(*n));
		if (!n) {
			free(ms);
			return NULL;
		}
		m->all_maps = n;
		m->cap_all_maps = cap;
	}
	m->all_maps[m->nr_all_maps++] = ms;
	return ms;
}

static int maps_reserve(struct pfc_maps *ms, size_t extra)
{
	if (ms->n + extra > ms->cap) {
		size_t cap = ms->cap ? ms->cap * 2 : 16;
		struct pfc_map *n;
		while (cap < ms->n + extra)
			cap *= 2;
		n = realloc(ms->v, cap * sizeof(*n));
		if (!n)
			return -1;
		ms->v = n;
		ms->cap = cap;
	}
	return 0;
}

/* Index of the first map whose end is above addr. */
static size_t maps_lower(const struct pfc_maps *ms, uint64_t addr)
{
	size_t lo = 0, hi = ms->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ms->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether an address in both maps is the same code in each (cgen). */
static int same_code(const struct pfc_map *a, const struct pfc_map *b)
{
	return a->dso == b->dso && a->identity == b->identity && a->prot == b->prot && a->flags == b->flags &&
	       (a->identity || a->pgoff - a->start == b->pgoff - b->start);
}

/* Insert a map, cutting overlapped parts out of older maps (maps__fixup_overlappings). */
static int maps_insert(struct pfc_maps *ms, const struct pfc_map *nm)
{
	size_t i, j, k;
	struct pfc_map head, tail;
	int have_head = 0, have_tail = 0, seen = 0, keep = 0;
	uint64_t gap;

	if (nm->end <= nm->start)
		return 0;
	ms->gen++;
	if (maps_reserve(ms, 2) < 0)
		return -1;
	i = maps_lower(ms, nm->start);
	j = i;
	while (j < ms->n && ms->v[j].start < nm->end) {
		if (ms->v[j].seen == ms->cgen + 1) {
			if (same_code(&ms->v[j], nm))
				keep = 1;
			else
				seen = 1;
		}
		/* the gap below it, if the new map reaches into it */
		if (ms->v[j].gap_seen == ms->cgen + 1 && (j > i || nm->start < ms->v[j].start))
			seen = 1;
		j++;
	}
	/* the gap below the first map after it (or above the last) */
	if ((j == i || nm->end > ms->v[j - 1].end) && (j < ms->n ? ms->v[j].gap_seen : ms->top_seen) == ms->cgen + 1)
		seen = 1;
	/* a cached frame's address is in what the new map covers, mapped otherwise, or in no
	 * map there: the caches start over.  Mapped the same way, the new map holds such
	 * addresses now (keep). */
	if (seen) {
		ms->cgen++;
		keep = 0;
	}
	/* maps [i, j) overlap the new one: keep what sticks out on either side */
	if (i < j && ms->v[i].start < nm->start) {
		head = ms->v[i];
		head.end = nm->start;
		have_head = 1;
	}
	if (i < j && ms->v[j - 1].end > nm->end) {
		tail = ms->v[j - 1];
		if (!tail.identity)
			tail.pgoff += nm->end - tail.start;
		tail.start = nm->end;
		tail.gap_seen = 0;
		have_tail = 1;
	}
	/* the gap below the new map is what is left of the one below the first map it
	 * reaches (none after a head), with its mark */
	gap = !have_head && i < ms->n ? ms->v[i].gap_seen : 0;
	k = (size_t)have_head + 1 + (size_t)have_tail;
	/* replace [i, j) by head? new tail? */
	memmove(ms->v + i + k, ms->v + j, (ms->n - j) * sizeof(*ms->v));
	ms->n = ms->n - (j - i) + k;
	if (have_head)
		ms->v[i++] = head;
	ms->v[i] = *nm;
	ms->v[i].seen = keep ? ms->cgen + 1 : 0;
	ms->v[i].gap_seen = gap;
	i++;
	if (have_tail)
		ms->v[i] = tail;
	return 0;
}

static const struct pfc_map *maps_find(struct pfc_maps *ms, uint64_t addr)
{
	size_t i;

	if (!ms)
		return NULL;
	i = ms->hint;
	if (i < ms->n && ms->v[i].start <= addr && addr < ms->v[i].end)
		return &ms->v[i];
	i = maps_lower(ms, addr);
	if (i < ms->n && ms->v[i].start <= addr) {
		ms->hint = i;
		return &ms->v[i];
	}
	return NULL;
}

void pfc_maps_watch(struct pfc_maps *ms, uint64_t addr)
{
	size_t i;

	if (!ms)
		return;
	i = maps_lower(ms, addr);
	if (i == ms->n)
		ms->top_seen = ms->cgen + 1;
	else if (ms->v[i].start <= addr)
		ms->v[i].seen = ms->cgen + 1;
	else
		ms->v[i].gap_seen = ms->cgen + 1;
}

/* ---- threads ---- */

static size_t thash_idx(const struct pfc_machine *m, int32_t tid)
{
	return (size_t)mix((uint64_t)(uint32_t)tid) & (m->tcap - 1);
}

static struct pfc_thread *find_thread(struct pfc_machine *m, int32_t tid)
{
	struct pfc_thread *t = m->thash[thash_idx(m, tid)];

	for (; t; t = t->hnext)
		if (t->tid == tid)
			return t;
	return NULL;
}

static void remove_thread(struct pfc_machine *m, struct pfc_thread *th)
{
	struct pfc_thread **pp = &m->thash[thash_idx(m, th->tid)];

	if (m->recent[(uint32_t)th->tid % PFC_TRECENT] == th)
		m->recent[(uint32_t)th->tid % PFC_TRECENT] = NULL;
	for (; *pp; pp = &(*pp)->hnext)
		if (*pp == th) {
			*pp = th->hnext;
			m->tcount--;
			free(th);
			return;
		}
}

static int grow_threads(struct pfc_machine *m)
{
	size_t cap = m->tcap * 2, i;
	struct pfc_thread **h = calloc(cap, sizeof(*h));

	if (!h)
		return -1;
	for (i = 0; i < m->tcap; i++) {
		struct pfc_thread *t = m->thash[i], *n;
		for (; t; t = n) {
			size_t j = (size_t)mix((uint64_t)(uint32_t)t->tid) & (cap - 1);
			n = t->hnext;
			t->hnext = h[j];
			h[j] = t;
		}
	}
	free(m->thash);
	m->thash = h;
	m->tcap = cap;
	return 0;
}

static struct pfc_thread *findnew(struct pfc_machine *m, int32_t pid, int32_t tid);

/* machine__update_thread_pid: a thread first seen without its pid joins its process. */
static int update_thread_pid(struct pfc_machine *m, struct pfc_thread *th, int32_t pid)
{
	struct pfc_thread *leader;

	if (pid == th->pid || pid == -1 || th->pid != -1)
		return 0;
	th->pid = pid;
	if (th->pid == th->tid)
		return 0;
	leader = findnew(m, pid, pid);
	if (!leader)
		return -1;
	if (!leader->maps && !(leader->maps = maps_new(m)))
		return -1;
	th->maps = leader->maps;
	return 0;
}

static struct pfc_thread *findnew(struct pfc_machine *m, int32_t pid, int32_t tid)
{
	struct pfc_thread **rp = &m->recent[(uint32_t)tid % PFC_TRECENT], *th = *rp;
	char buf[32];
	size_t h;

	if (th && th->tid == tid && th->pid == pid)
		return th;
	if ((th = find_thread(m, tid))) {
		if (update_thread_pid(m, th, pid) < 0)
			return NULL;
		*rp = th;
		return th;
	}
	if ((m->tcount + 1) * 2 > m->tcap && grow_threads(m) < 0)
		return NULL;
	th = calloc(1, sizeof(*th));
	if (!th)
		return NULL;
	th->pid = pid;
	th->tid = tid;
	snprintf(buf, sizeof(buf), ":%d", tid);
	th->comm = pfc_intern(m->strings, buf, strlen(buf));
	h = thash_idx(m, tid);
	th->hnext = m->thash[h];
	m->thash[h] = th;
	m->tcount++;
	/* thread__init_maps */
	if (pid == tid || pid == -1) {
		th->maps = maps_new(m);
	} else {
		struct pfc_thread *leader = findnew(m, pid, pid);
		if (leader)
			th->maps = leader->maps;
	}
	if (!th->maps)
		return NULL;
	return th;
}

struct pfc_thread *pfc_machine_findnew_thread_slow(struct pfc_machine *m, int32_t pid, int32_t tid)
{
	return findnew(m, pid, tid);
}

const struct pfc_thread *pfc_machine_find_thread(struct pfc_machine *m, int32_t pid, int32_t tid)
{
	const struct pfc_thread *th = find_thread(m, tid);

	return th && th->pid == pid ? th : NULL;
}

void pfc_machine_each_thread(const struct pfc_machine *m, void (*fn)(const struct pfc_thread *th, void *arg),
			     void *arg)
{
	size_t i;
	const struct pfc_thread *t;

	for (i = 0; i < m->tcap; i++)
		for (t = m->thash[i]; t; t = t->hnext)
			fn(t, arg);
}

int pfc_machine_comm(struct pfc_machine *m, int32_t pid, int32_t tid, const char *comm, size_t len)
{
	struct pfc_thread *th = findnew(m, pid, tid);
	uint32_t id;

	if (!th)
		return -1;
	id = pfc_intern(m->strings, comm, strnlen(comm, len));
	if (id == UINT32_MAX)
		return -1;
	th->comm = id;
	th->comm_set = 1;
	return 0;
}

int pfc_machine_fork(struct pfc_machine *m, int32_t pid, int32_t tid, int32_t ppid, int32_t ptid)
{
	struct pfc_thread *th, *parent, pcopy;

	/* A fork of a thread into itself (clone of the group leader seen twice) changes nothing. */
	if (pid == ppid && tid == ptid)
		return 0;
	parent = findnew(m, ppid, ptid);
	if (!parent)
		return -1;
	if (parent->pid != ppid) {	/* stale thread reusing the tid: replace it */
		remove_thread(m, parent);
		parent = findnew(m, ppid, ptid);
		if (!parent)
			return -1;
	}
	/* perf keeps its reference to the parent while the thread at the child's tid is
	 * replaced, and that thread can be the parent itself (tid == ptid in another
	 * process): keep what the child inherits before it may be freed. */
	pcopy = *parent;
	parent = &pcopy;
	th = find_thread(m, tid);
	if (th)
		remove_thread(m, th);
	th = findnew(m, pid, tid);
	if (!th)
		return -1;
	if (parent->comm_set) {
		th->comm = parent->comm;
		th->comm_set = 1;
	}
	/* thread__clone_maps: a new process gets a copy of the parent's maps */
	if (parent->pid != th->pid && th->maps != parent->maps && parent->maps && parent->maps->n) {
		size_t i;
		if (!th->maps->n) {
			if (maps_reserve(th->maps, parent->maps->n) < 0)
				return -1;
			memcpy(th->maps->v, parent->maps->v, parent->maps->n * sizeof(struct pfc_map));
			th->maps->n = parent->maps->n;
			for (i = 0; i < th->maps->n; i++)
				th->maps->v[i].seen = th->maps->v[i].gap_seen = 0;
			th->maps->gen++;
		} else {
			for (i = 0; i < parent->maps->n; i++)
				if (maps_insert(th->maps, &parent->maps->v[i]) < 0)
					return -1;
		}
		pfc_maps_bump(th->maps);
	}
	return 0;
}

/* ---- DSOs ---- */

static size_t dso_hash(const char *name, int pid)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *name; name++) {
		h ^= (unsigned char)*name;
		h *= 1099511628211ULL;
	}
	return (size_t)mix(h ^ (uint64_t)(uint32_t)pid);
}

static struct pfc_dso *dso_findnew(struct pfc_machine *m, const char *name, size_t len,
				   enum pfc_dso_kind kind, int pid)
{
	uint32_t nid = pfc_intern(m->strings, name, len);
	const char *iname;
	size_t h;
	struct pfc_dso *d;

	if (nid == UINT32_MAX)
		return NULL;
	iname = pfc_intern_str(m->strings, nid);
	h = dso_hash(iname, pid) & (m->dcap - 1);
	for (d = m->dhash[h]; d; d = d->hnext)
		if (d->name == iname && d->pid == pid)
			return d;
	if ((m->nr_dsos + 1) * 2 > m->dcap) {
		size_t cap = m->dcap * 2, i;
		struct pfc_dso **nh = calloc(cap, sizeof(*nh));
		if (!nh)
			return NULL;
		for (i = 0; i < m->nr_dsos; i++) {
			struct pfc_dso *x = m->dsos[i];
			size_t j = dso_hash(x->name, x->pid) & (cap - 1);
			x->hnext = nh[j];
			nh[j] = x;
		}
		free(m->dhash);
		m->dhash = nh;
		m->dcap = cap;
		h = dso_hash(iname, pid) & (m->dcap - 1);
	}
	if (m->nr_dsos == m->cap_dsos) {
		size_t cap = m->cap_dsos ? m->cap_dsos * 2 : 64;
		struct pfc_dso **n = realloc(m->dsos, cap * sizeof(*n));
		if (!n)
			return NULL;
		m->dsos = n;
		m->cap_dsos = cap;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->id = (uint32_t)m->nr_dsos;
	d->kind = kind;
	d->name = iname;
	d->pid = pid;
	m->dsos[m->nr_dsos++] = d;
	d->hnext = m->dhash[h];
	m->dhash[h] = d;
	/* a build-id from the header for this path */
	{
		size_t i;
		for (i = 0; i < m->nr_bids; i++)
			if (!strcmp(m->bids[i].path, iname)) {
				memcpy(d->build_id, m->bids[i].id, 20);
				d->build_id_len = m->bids[i].len;
				break;
			}
	}
	return d;
}

struct pfc_dso *pfc_machine_dso_findnew(struct pfc_machine *m, const char *name, size_t len,
					enum pfc_dso_kind kind, int pid)
{
	return dso_findnew(m, name, len, kind, pid);
}

int pfc_machine_add_build_id(struct pfc_machine *m, const char *path, const uint8_t *id, int len, int kernel)
{
	uint32_t nid = pfc_intern(m->strings, path, strlen(path));
	size_t i;

	if (nid == UINT32_MAX)
		return -1;
	if (m->nr_bids == m->cap_bids) {
		size_t cap = m->cap_bids ? m->cap_bids * 2 : 32;
		struct pfc_bid *n = realloc(m->bids, cap * sizeof(*n));
		if (!n)
			return -1;
		m->bids = n;
		m->cap_bids = cap;
	}
	if (len > 20)
		len = 20;
	m->bids[m->nr_bids].path = pfc_intern_str(m->strings, nid);
	memset(m->bids[m->nr_bids].id, 0, 20);
	memcpy(m->bids[m->nr_bids].id, id, (size_t)len);
	m->bids[m->nr_bids].len = len;
	m->bids[m->nr_bids].kernel = kernel;
	m->nr_bids++;
	for (i = 0; i < m->nr_dsos; i++)
		if (!strcmp(m->dsos[i]->name, path) && !m->dsos[i]->build_id_len) {
			memcpy(m->dsos[i]->build_id, id, (size_t)len);
			m->dsos[i]->build_id_len = len;
		}
	return 0;
}

static int is_anon(const char *f)
{
	return !strcmp(f, "//anon") || !strncmp(f, "/dev/zero", 9) || !strncmp(f, "/anon_hugepage", 14);
}

static int is_no_dso(const char *f)
{
	return !strncmp(f, "[stack", 6) || !strncmp(f, "/SYSV", 5) || !strcmp(f, "[heap]");
}

/* JIT code in a mapping perf 6.1 does not count as anonymous (its is_anon_memory knows
 * only //anon, /dev/zero and /anon_hugepage): .NET 7+ runs JITted code and stubs from the
 * executable view of a memfd ("memfd:doublemapper", shown by perf as
 * "/memfd:doublemapper (deleted)"), and a runtime may name its anonymous code with
 * PR_SET_VMA_ANON_NAME ("[anon:NAME]").  perf leaves their frames unresolved. */
static int is_jit_region(const char *f)
{
	if (*f == '/')
		f++;
	return !strncmp(f, "memfd:doublemapper", 18) || !strncmp(f, "[anon:", 6);
}

static const char *base_name(const char *f)
{
	const char *b = strrchr(f, '/');
	return b ? b + 1 : f;
}

/* "jit-<digits>.dump": the mapping a jitdump writer makes so that the dump's path gets
 * into the recording (perf inject --jit looks for exactly this name). */
int pfc_machine_is_jitdump_name(const char *f, int *pid)
{
	const char *b = base_name(f), *d;
	long v = 0;

	if (strncmp(b, "jit-", 4))
		return 0;
	for (d = b + 4; *d >= '0' && *d <= '9'; d++)
		if ((v = v * 10 + (*d - '0')) > 0x7fffffff)
			return 0;
	if (d == b + 4 || strcmp(d, ".dump"))
		return 0;
	if (pid)
		*pid = (int)v;
	return 1;
}

int pfc_machine_jitted_pid(const char *path)
{
	const char *b = base_name(path), *e;
	size_t n = strlen(b);
	long pid;

	if (strncmp(b, "jitted-", 7) || n <= 10 || strcmp(b + n - 3, ".so"))
		return -1;
	pid = strtol(b + 7, (char **)&e, 10);
	if (e == b + 7 || *e != '-' || pid <= 0 || pid > 0x7fffffff)
		return 0;
	return (int)pid;
}

/* A PE image (.NET assemblies, ReadyToRun code), known by its name: the file may be
 * absent when converting.  Such files are not ELF; perf leaves their frames unresolved. */
static int is_pe_name(const char *f)
{
	size_t n = strlen(f);

	return n > 4 && (!strcasecmp(f + n - 4, ".dll") || !strcasecmp(f + n - 4, ".exe"));
}

/*
 * perf's name of a kernel module (kmod_path__parse_name): "[name]" from ".../name.ko" (a
 * ".gz" or ".xz" after it too) with '-' made '_', or a "[name]" as it is; 0 when path names
 * no module.
 */
static int kmod_name(const char *path, char *out, size_t outlen)
{
	const char *b = strrchr(path, '/'), *ext = strrchr(path, '.');
	size_t i, n;

	b = b ? b + 1 : path;
	if (b[0] == '[') {
		if (!strncmp(b, "[kernel.kallsyms]", 17) || !strncmp(b, "[guest.kernel.kallsyms", 22) ||
		    !strncmp(b, "[vdso", 5) || !strncmp(b, "[vsyscall]", 10))
			return 0;
		n = strlen(b);
		if (n >= outlen)
			return 0;
		memcpy(out, b, n + 1);
	} else {
		if (!ext)
			return 0;
		if (!strcmp(ext, ".gz") || !strcmp(ext, ".xz"))
			ext -= 3;
		if (ext <= b || strncmp(ext, ".ko", 3))
			return 0;
		n = (size_t)(ext - b);
		if (n + 3 > outlen)
			return 0;
		out[0] = '[';
		memcpy(out + 1, b, n);
		out[n + 1] = ']';
		out[n + 2] = 0;
	}
	for (i = 0; out[i]; i++)
		if (out[i] == '-')
			out[i] = '_';
	return 1;
}

/*
 * A kernel module's map.  perf names the module by the path of its build-id entry in the
 * header when there is one (the module's DSO is that entry's, found by module name), else
 * "[name]"; its symbols would come from the recording machine's module file or, on the
 * running kernel, from /proc/kallsyms: neither is read here, so its frames stay unnamed,
 * as perf leaves those of another machine's modules.
 */
static int kmod_mmap(struct pfc_machine *m, uint64_t start, uint64_t len, const char *name)
{
	char mod[256], other[256];
	const char *dname = mod;
	struct pfc_map map;
	size_t i;

	if (!kmod_name(name, mod, sizeof(mod)))
		return 0;
	for (i = 0; i < m->nr_bids; i++)
		if (m->bids[i].kernel && kmod_name(m->bids[i].path, other, sizeof(other)) &&
		    !strcmp(other, mod)) {
			dname = m->bids[i].path;
			break;
		}
	memset(&map, 0, sizeof(map));
	map.start = start;
	map.end = start + len < start ? UINT64_MAX : start + len;
	map.identity = 1;
	map.dso = dso_findnew(m, dname, strlen(dname), PFC_DSO_OTHER, -1);
	if (!map.dso)
		return -1;
	i = maps_lower(&m->kmod_maps, start);
	if (i < m->kmod_maps.n && m->kmod_maps.v[i].start == start)
		return 0;	/* perf keeps the first */
	m->kgen++;
	return maps_insert(&m->kmod_maps, &map);
}

int pfc_machine_mmap(struct pfc_machine *m, int32_t pid, int32_t tid, int kernel, uint64_t start,
		     uint64_t len, uint64_t pgoff, uint32_t prot, uint32_t flags,
		     const uint8_t *build_id, int build_id_len, const char *filename, size_t fnlen)
{
	char name[4096 + 32];
	size_t n = strnlen(filename, fnlen);
	struct pfc_thread *th;
	struct pfc_map map;
	int anon, nodso;

	if (n >= 4096)
		n = 4095;
	memcpy(name, filename, n);
	name[n] = 0;
	if (kernel) {
		/* The kernel text mapping ([kernel.kallsyms]_text or _stext); modules and
		 * other kernel maps are resolved through kallsyms alone. */
		if (!strncmp(name, "[kernel.kallsyms]", 17)) {
			m->kstart = start;
			m->kend = start + len < start ? UINT64_MAX : start + len;
			m->have_kernel_map = 1;
			m->kgen++;
			if (pgoff && n > 17 && n - 17 < sizeof(m->kref_name)) {
				memcpy(m->kref_name, name + 17, n - 17 + 1);
				m->kref_addr = pgoff;
			}
			if (!m->kernel)
				m->kernel = dso_findnew(m, "[kernel.kallsyms]", 17, PFC_DSO_KERNEL, -1);
			if (m->kernel && build_id_len && !m->kernel->build_id_len) {
				memcpy(m->kernel->build_id, build_id, (size_t)build_id_len);
				m->kernel->build_id_len = build_id_len;
			}
			return 0;
		}
		if (name[0] == '/' || name[0] == '[')
			return kmod_mmap(m, start, len, name);
		return 0;
	}
	th = findnew(m, pid, tid);
	if (!th)
		return -1;
	memset(&map, 0, sizeof(map));
	map.start = start;
	map.end = start + len < start ? UINT64_MAX : start + len;
	map.pgoff = pgoff;
	map.prot = prot;
	map.flags = flags;
	anon = is_anon(name) || (flags & MAP_HUGETLB);
	nodso = is_no_dso(name);
	if ((anon || nodso) && (prot & PROT_EXEC)) {
		snprintf(name, sizeof(name), "/tmp/perf-%d.map", pid);
		map.dso = dso_findnew(m, name, strlen(name), PFC_DSO_PERFMAP, pid);
	} else if (!strcmp(name, "[vdso]")) {
		map.dso = dso_findnew(m, name, n, PFC_DSO_VDSO, -1);
		/* the image starts at the map (perf's map__new sets pgoff 0): kernels before
		 * 3.6 or so recorded the vdso's address as its offset */
		map.pgoff = 0;
	} else if ((prot & PROT_EXEC) && is_jit_region(name)) {
		/* per process: the same memfd name in two processes holds different code */
		map.dso = dso_findnew(m, name, n, PFC_DSO_JIT, pid);
	} else if ((prot & PROT_EXEC) && pfc_machine_is_jitdump_name(name, NULL)) {
		map.dso = dso_findnew(m, name, n, PFC_DSO_JITMARK, -1);
	} else if (anon || nodso || name[0] == '[') {
		map.dso = dso_findnew(m, name, n, PFC_DSO_OTHER, -1);
	} else if (is_pe_name(name)) {
		map.dso = dso_findnew(m, name, n, PFC_DSO_PE, -1);
	} else {
		map.dso = dso_findnew(m, name, n, PFC_DSO_FILE, -1);
		if (map.dso && pfc_machine_jitted_pid(name) >= 0)
			map.dso->jitted = 1;
	}
	if (!map.dso)
		return -1;
	map.identity = anon || nodso;
	if (build_id_len && !map.dso->build_id_len) {
		memcpy(map.dso->build_id, build_id, (size_t)(build_id_len > 20 ? 20 : build_id_len));
		map.dso->build_id_len = build_id_len > 20 ? 20 : build_id_len;
	}
	return maps_insert(th->maps, &map);
}

int pfc_machine_ksymbol(struct pfc_machine *m, uint64_t addr, uint32_t len, const char *name, size_t namelen,
			int unregister)
{
	struct pfc_map map;
	size_t n = strnlen(name, namelen), i;

	if (unregister) {
		i = maps_lower(&m->ksym_maps, addr);
		if (i < m->ksym_maps.n && m->ksym_maps.v[i].start == addr) {
			memmove(m->ksym_maps.v + i, m->ksym_maps.v + i + 1,
				(m->ksym_maps.n - i - 1) * sizeof(*m->ksym_maps.v));
			m->ksym_maps.n--;
			m->kgen++;
		}
		return 0;
	}
	if (!len || !n)
		return 0;
	memset(&map, 0, sizeof(map));
	map.start = addr;
	map.end = addr + len < addr ? UINT64_MAX : addr + len;
	map.dso = dso_findnew(m, name, n, PFC_DSO_KSYM, -1);
	if (!map.dso)
		return -1;
	m->kgen++;
	return maps_insert(&m->ksym_maps, &map);
}

const struct pfc_map *pfc_machine_kernel_map(struct pfc_machine *m)
{
	struct pfc_map *kmap = &m->kmap;

	kmap->start = m->have_kernel_map ? m->kstart : m->have_kdef ? m->kdef_start : 0;
	kmap->end = m->have_kernel_map ? m->kend : m->have_kdef ? m->kdef_end : UINT64_MAX;
	kmap->pgoff = kmap->start;
	kmap->dso = m->kernel;
	kmap->identity = 1;
	return kmap;
}

const struct pfc_map *pfc_machine_find_map(struct pfc_machine *m, struct pfc_thread *t, int kernel,
					   uint64_t ip)
{
	if (kernel) {
		const struct pfc_map *km = maps_find(&m->ksym_maps, ip);
		if (km)
			return km;
		if ((km = maps_find(&m->kmod_maps, ip)))
			return km;
		if (!m->kernel)
			m->kernel = dso_findnew(m, "[kernel.kallsyms]", 17, PFC_DSO_KERNEL, -1);
		if (!m->kernel)
			return NULL;
		if (m->have_kernel_map ? (ip < m->kstart || ip >= m->kend) :
		    m->have_kdef ? (ip < m->kdef_start || ip >= m->kdef_end) : ip < 0x8000000000000000ULL)
			return NULL;
		return pfc_machine_kernel_map(m);
	}
	return maps_find(t ? t->maps : NULL, ip);
}
