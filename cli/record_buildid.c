/*
 * record_buildid.c - the BUILD_ID section perf record would have written, written by perfconv
 * record itself.  perf runs with --no-buildid, which spares it reading its whole file again
 * when it stops (most of the time from the end of a recording to the pack); this file reads the
 * file once, right after perf's exit, marks the files the samples' addresses fall in, reads
 * their build-ids on the recording machine and adds the section, as perf 6.1 would have.  It
 * neither runs perf nor packs.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include "cli/record.h"
#include "converter/native/buildid.h"
#include "converter/util/bytes.h"
#include "converter/native/symtab.h"
#include "converter/perffile/evsel.h"
#include "converter/perffile/perf_file.h"
#include "converter/perffile/reader.h"

#define REC_MMAP 1
#define REC_FORK 7
#define REC_SAMPLE 9
#define REC_MMAP2 10
#define NAME_ALIGN 64		/* perf's write_buildid pads each name to this */
#define ENTRY_FIXED 36		/* header, pid, build_id[24] */

struct bmap {
	int32_t pid;            /* -1: the kernel's */
	uint64_t start, end;
	uint32_t file;          /* index in files */
	uint64_t time;          /* its record's time; 0 when it has none (perf's synthesized maps) */
};

struct bfile {
	char *name;
	int kernel;             /* the kernel or a module */
	int hit;
	int32_t pid;            /* a process that mapped it: its mount namespace has the file */
	uint64_t first;         /* its first mapping's time: perf makes its list of DSOs in time order */
	size_t order;           /* its first mapping's place in the file */
};

struct bfork {
	int32_t pid, ppid;
	uint64_t time;
};

/* a sample whose address no mapping seen so far covered: each CPU's records come in their own
 * order, so a mapping may follow, in the file, a sample taken after it */
struct bpending {
	int32_t pid;
	int kernel;
	uint64_t ip, time;
};

/* one process's mappings, in the order they came: a system-wide recording has thousands of
 * processes, and each sample looks in its own */
struct bproc {
	int32_t pid;
	uint32_t *maps;         /* indexes in maps */
	size_t n, cap;
};

struct bscan {
	struct pfc_reader *rd;
	struct pfc_error *err;
	struct bmap *maps;
	size_t nmaps, cmaps;
	struct bfile *files;
	size_t nfiles, cfiles;
	struct bfork *forks;
	size_t nforks, cforks;
	struct bproc *procs;    /* open addressing by pid; pid 0 marks a free slot (-1: the kernel) */
	size_t cprocs, nprocs;
	struct bpending *pending;
	size_t npending, cpending;
	int vdso;               /* a [vdso] was mapped: perf writes its build-id, hit or not */
	int nomem;
};

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap * 2 : 64;
	void *q;

	if (n < *cap)
		return p;
	if (!(q = realloc(p, c * size)))
		return NULL;
	*cap = c;
	return q;
}

static uint32_t ld32(const struct bscan *b, const uint8_t *p)
{
	return pfc_ld32(p, b->rd->swap);
}

static uint64_t ld64(const struct bscan *b, const uint8_t *p)
{
	return pfc_ld64(p, b->rd->swap);
}

static uint32_t pid_hash(int32_t pid)
{
	return (uint32_t)pid * 2654435761u;
}

/* pid's slot (created when make is set); NULL when it has none, or out of memory */
static struct bproc *proc_of(struct bscan *b, int32_t pid, int make)
{
	size_t i;

	if (pid == 0)
		pid = INT32_MIN;	/* the idle task: 0 marks a free slot */
	if (make && (b->nprocs + 1) * 2 > b->cprocs) {
		size_t c = b->cprocs ? b->cprocs * 2 : 256, k;
		struct bproc *t = calloc(c, sizeof(*t));
		if (!t)
			return NULL;
		for (k = 0; k < b->cprocs; k++)
			if (b->procs[k].pid) {
				for (i = pid_hash(b->procs[k].pid) & (c - 1); t[i].pid; i = (i + 1) & (c - 1))
					;
				t[i] = b->procs[k];
			}
		free(b->procs);
		b->procs = t;
		b->cprocs = c;
	}
	if (!b->cprocs)
		return NULL;
	for (i = pid_hash(pid) & (b->cprocs - 1); b->procs[i].pid; i = (i + 1) & (b->cprocs - 1))
		if (b->procs[i].pid == pid)
			return &b->procs[i];
	if (!make)
		return NULL;
	b->procs[i].pid = pid;
	b->nprocs++;
	return &b->procs[i];
}

/* a file's index, added the first time it is mapped: perf's list of DSOs keeps that order */
static int file_of(struct bscan *b, const char *name, size_t len, int kernel, int32_t pid)
{
	struct bfile *f;
	size_t i;

	for (i = 0; i < b->nfiles; i++)
		if (!strncmp(b->files[i].name, name, len) && !b->files[i].name[len])
			return (int)i;
	if (!(b->files = grow(b->files, &b->cfiles, b->nfiles, sizeof(*b->files))))
		return -1;
	f = &b->files[b->nfiles];
	memset(f, 0, sizeof(*f));
	if (!(f->name = strndup(name, len)))
		return -1;
	f->kernel = kernel;
	f->pid = pid;
	f->first = UINT64_MAX;
	f->order = b->nfiles;
	return (int)b->nfiles++;
}

/* a non-sample record's time, from its sample_id_all trailer; 0 when it has none */
static uint64_t record_time(struct bscan *b, const struct pfc_rec *r)
{
	struct pfc_evsel *ev;
	struct pfc_sample s;

	if (!b->rd->nr_evsels || !(ev = pfc_reader_evsel_of(b->rd, r)) || !ev->sample_id_all)
		return 0;
	memset(&s, 0, sizeof(s));
	if (pfc_sample_parse_id(ev, r->data + 8, r->size - 8, b->rd->swap, &s) < 0 || !(s.flags & PFC_S_HAS_TIME))
		return 0;
	return s.time;
}

static int add_map(struct bscan *b, const struct pfc_rec *r, size_t name_at)
{
	const uint8_t *rec = r->data;
	uint32_t size = r->size;
	uint16_t misc = r->misc;
	int32_t pid = (int32_t)ld32(b, rec + 8);
	uint64_t start = ld64(b, rec + 16), len = ld64(b, rec + 24);
	int kernel = (misc & PFC_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	struct bproc *pr;
	size_t n;
	int f;

	if (size <= name_at)
		return 0;
	n = strnlen((const char *)rec + name_at, size - name_at);
	if (!n)
		return 0;
	if (!strncmp((const char *)rec + name_at, "[vdso]", n))
		b->vdso = 1;
	if ((f = file_of(b, (const char *)rec + name_at, n, kernel, kernel ? -1 : pid)) < 0)
		return -1;
	if (!(b->maps = grow(b->maps, &b->cmaps, b->nmaps, sizeof(*b->maps))))
		return -1;
	if (!(pr = proc_of(b, kernel ? -1 : pid, 1)) || !(pr->maps = grow(pr->maps, &pr->cap, pr->n, sizeof(*pr->maps))))
		return -1;
	pr->maps[pr->n++] = (uint32_t)b->nmaps;
	b->maps[b->nmaps] = (struct bmap){ kernel ? -1 : pid, start, start + len, (uint32_t)f, record_time(b, r) };
	if (b->maps[b->nmaps].time < b->files[f].first)
		b->files[f].first = b->maps[b->nmaps].time;
	b->nmaps++;
	return 0;
}

/* The file at ip for pid at time t, as perf's thread__find_map finds it in time order: the
 * newest mapping of the process that covers it and is not later than t, else of the process
 * it was forked from (before the fork).  The kernel's: a module's mapping, else the kernel
 * itself, whose map perf stretches over every kernel address. */
static struct bfile *find(struct bscan *b, int32_t pid, uint64_t ip, int kernel, uint64_t t)
{
	uint64_t before = t;
	struct bproc *pr;
	size_t i, k;
	int hops;

	if (kernel) {
		struct bfile *text = NULL;
		if (!(pr = proc_of(b, -1, 0)))
			return NULL;
		for (i = pr->n; i-- > 0;) {
			const struct bmap *m = &b->maps[pr->maps[i]];
			struct bfile *f = &b->files[m->file];
			if (!strncmp(f->name, "[kernel.kallsyms]", 17)) {
				text = text ? text : f;
				continue;
			}
			if (ip >= m->start && ip < m->end)
				return f;
		}
		return text;
	}
	for (hops = 0; hops < 64; hops++) {
		if ((pr = proc_of(b, pid, 0)))
			for (i = pr->n; i-- > 0;) {
				const struct bmap *m = &b->maps[pr->maps[i]];
				if (m->time <= before && ip >= m->start && ip < m->end)
					return &b->files[m->file];
			}
		for (k = b->nforks; k-- > 0 && b->forks[k].pid != pid;)
			;
		if (k == (size_t)-1)
			return NULL;
		if (b->forks[k].time < before)
			before = b->forks[k].time;
		pid = b->forks[k].ppid;
	}
	return NULL;
}

static int by_first(const void *a, const void *b)
{
	const struct bfile *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int on_record(void *ctx, const struct pfc_rec *r)
{
	struct bscan *b = ctx;
	struct pfc_sample s;
	struct pfc_evsel *ev;
	struct bfile *f;
	int cpumode;

	switch (r->type) {
	case REC_MMAP:
		return add_map(b, r, 40) < 0 ? (b->nomem = 1, -1) : 0;
	case REC_MMAP2:
		return add_map(b, r, 72) < 0 ? (b->nomem = 1, -1) : 0;
	case REC_FORK:
		if (r->size < 32 || ld32(b, r->data + 8) == ld32(b, r->data + 12))
			return 0;	/* a thread, not a process */
		if (!(b->forks = grow(b->forks, &b->cforks, b->nforks, sizeof(*b->forks))))
			return b->nomem = 1, -1;
		b->forks[b->nforks++] = (struct bfork){ (int32_t)ld32(b, r->data + 8), (int32_t)ld32(b, r->data + 12),
							ld64(b, r->data + 24) };
		return 0;
	case REC_SAMPLE:
		if (!b->rd->nr_evsels || !(ev = pfc_reader_evsel_of(b->rd, r)) || !(ev->sample_type & PERF_SAMPLE_IP))
			return 0;
		if (pfc_sample_parse(ev, r->data + 8, r->size - 8, b->rd->swap, r->offset, &s, b->err) < 0)
			return 0;	/* the conversion says what is wrong with it */
		cpumode = r->misc & PFC_MISC_CPUMODE_MASK;
		if (cpumode != PERF_RECORD_MISC_KERNEL && cpumode != PERF_RECORD_MISC_USER)
			return 0;
		if (!(s.flags & PFC_S_HAS_TIME))
			s.time = UINT64_MAX;	/* no times: the file's order is the only one */
		if ((f = find(b, (int32_t)s.pid, s.ip, cpumode == PERF_RECORD_MISC_KERNEL, s.time))) {
			f->hit = 1;
			return 0;
		}
		if (!(b->pending = grow(b->pending, &b->cpending, b->npending, sizeof(*b->pending))))
			return b->nomem = 1, -1;
		b->pending[b->npending++] = (struct bpending){ (int32_t)s.pid, cpumode == PERF_RECORD_MISC_KERNEL, s.ip,
							       s.time };
		return 0;
	default:
		return 0;
	}
}

/* the build-id of the vdso this process runs with: the kernel gives every process of one ABI
 * the same, and perf too reads its own */
static int vdso_build_id(uint8_t *out)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Phdr *ph;
	int i;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	ph = (const Elf64_Phdr *)((const uint8_t *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_NOTE) {
			size_t n = pfc_buildid_from_notes((const uint8_t *)eh + ph[i].p_offset, ph[i].p_filesz, out,
							  PFC_BUILDID_MAX);
			if (n)
				return (int)n;
		}
	return 0;
}

/* a module's build-id as loaded: /sys/module/NAME/notes, NAME the file's without .ko */
static int module_build_id(const char *path, uint8_t *out)
{
	const char *base = strrchr(path, '/');
	char name[256], notes[512];
	size_t i;

	base = base ? base + 1 : path;
	if (*base == '[')
		base++;
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(base, ".]"), base);
	for (i = 0; name[i]; i++)
		if (name[i] == '-')
			name[i] = '_';
	snprintf(notes, sizeof(notes), "/sys/module/%s/notes/.note.gnu.build-id", name);
	return (int)pfc_buildid_read_notes(notes, out, PFC_BUILDID_MAX);
}

/* A user file's build-id, read in the process's mount namespace when it still runs (perf enters
 * it), else at its path here.  perf reads no build-id of what is not a file: anonymous memory,
 * a deleted file, a memfd. */
static int user_build_id(const struct bfile *f, uint8_t *out)
{
	char path[PATH_MAX + 64];
	size_t n = strlen(f->name);
	int len = 0;

	if (f->name[0] != '/' || (n > 10 && !strcmp(f->name + n - 10, " (deleted)")) || !strncmp(f->name, "/memfd:", 7))
		return 0;
	if (f->pid > 0 && snprintf(path, sizeof(path), "/proc/%d/root%s", f->pid, f->name) < (int)sizeof(path) &&
	    pfc_elf_build_id(path, out, &len) == 0)
		return len;
	if (pfc_elf_build_id(f->name, out, &len) == 0)
		return len;
	return 0;
}

/* one entry as perf's write_buildid lays it out, appended to *buf */
static int put_entry(uint8_t **buf, size_t *len, size_t *cap, const char *name, const uint8_t *id, int idlen,
		     uint16_t misc)
{
	size_t nlen = strlen(name) + 1, padded = (nlen + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;
	size_t size = ENTRY_FIXED + padded;
	uint8_t *e;
	int32_t pid = -1;	/* the host's machine */

	if (size > UINT16_MAX)
		return 0;
	while (*len + size > *cap) {
		uint8_t *q = realloc(*buf, *cap ? *cap * 2 : 4096);
		if (!q)
			return -1;
		*buf = q;
		*cap = *cap ? *cap * 2 : 4096;
	}
	e = *buf + *len;
	memset(e, 0, size);
	misc |= PFC_MISC_BUILD_ID_SIZE;
	memcpy(e + 4, &misc, 2);
	memcpy(e + 6, &(uint16_t){ (uint16_t)size }, 2);
	memcpy(e + 8, &pid, 4);
	memcpy(e + 12, id, (size_t)idlen);
	e[12 + 20] = (uint8_t)idlen;
	memcpy(e + ENTRY_FIXED, name, nlen);
	*len += size;
	return 0;
}

/* The section into the file: the feature table after the data grows by one entry, BUILD_ID's,
 * and the sections follow it in the order of their bits, as perf lays them out. */
static int write_section(struct pfc_reader *rd, const char *path, const uint8_t *sec, size_t seclen, char *msg,
			 size_t cap)
{
	uint64_t at = rd->data.offset + rd->data.size, off;
	uint64_t bitmap[4];
	uint8_t *tail = NULL, *old = NULL;
	size_t nfeat = 0, i, k, tlen = 0, oldlen;
	struct stat st;
	int fd = -1, ret = -1;

	memcpy(bitmap, rd->feat_bitmap, sizeof(bitmap));
	bitmap[PFC_FEAT_BUILD_ID / 64] |= 1ull << (PFC_FEAT_BUILD_ID % 64);
	for (i = 0; i < 256; i++)
		nfeat += (bitmap[i / 64] >> (i % 64)) & 1;
	for (i = 0, tlen = nfeat * 16; i < PFC_FEAT_BITS; i++)
		if (i == PFC_FEAT_BUILD_ID)
			tlen += seclen;
		else if (pfc_feat_has(rd, (int)i))
			tlen += rd->feat[i].size;
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_size < at) {
		snprintf(msg, cap, "cannot open '%s' to write its build-ids: %s", path, strerror(errno ? errno : EINVAL));
		goto out;
	}
	oldlen = (size_t)((uint64_t)st.st_size - at);
	if (!(tail = calloc(1, tlen)) || !(old = malloc(oldlen ? oldlen : 1))) {
		snprintf(msg, cap, "out of memory for the build-ids of '%s'", path);
		goto out;
	}
	if (pread(fd, old, oldlen, (off_t)at) != (ssize_t)oldlen) {
		snprintf(msg, cap, "cannot read '%s' at offset %llu: %s", path, (unsigned long long)at, strerror(errno));
		goto out;
	}
	off = at + nfeat * 16;
	for (i = 0, k = 0; i < PFC_FEAT_BITS && k < nfeat; i++) {
		const uint8_t *src;
		uint64_t size;
		if (!((bitmap[i / 64] >> (i % 64)) & 1))
			continue;
		if (i == PFC_FEAT_BUILD_ID)
			src = sec, size = seclen;
		else
			src = rd->feat[i].data, size = rd->feat[i].size;
		memcpy(tail + k * 16, &off, 8);
		memcpy(tail + k * 16 + 8, &size, 8);
		memcpy(tail + (off - at), src, size);
		off += size;
		k++;
	}
	if (rd->swap || k != nfeat) {
		snprintf(msg, cap, "'%s': a feature table perfconv does not write into", path);
		goto out;
	}
	/* the old tail is in memory: put it back if the new one cannot be written whole */
	if (pwrite(fd, tail, tlen, (off_t)at) != (ssize_t)tlen || ftruncate(fd, (off_t)(at + tlen)) < 0 ||
	    pwrite(fd, bitmap, sizeof(bitmap), 72) != (ssize_t)sizeof(bitmap)) {
		snprintf(msg, cap, "cannot write the build-ids into '%s': %s", path, strerror(errno));
		if (pwrite(fd, old, oldlen, (off_t)at) == (ssize_t)oldlen && ftruncate(fd, (off_t)(at + oldlen)) == 0)
			pwrite(fd, rd->feat_bitmap, sizeof(rd->feat_bitmap), 72);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(tail);
	free(old);
	return ret;
}

int pfc_rec_buildid_add(const char *path, int *nr, char *msg, size_t cap)
{
	struct pfc_reader rd;
	struct pfc_error err;
	struct bscan b;
	uint8_t *sec = NULL, id[PFC_BUILDID_MAX];
	size_t seclen = 0, seccap = 0, i;
	int ret = -1, len;

	*nr = 0;
	memset(&rd, 0, sizeof(rd));
	memset(&err, 0, sizeof(err));
	memset(&b, 0, sizeof(b));
	if (pfc_reader_open(&rd, path, &err) < 0) {
		snprintf(msg, cap, "cannot read '%s': %s", path, err.detail);
		return -1;
	}
	if (rd.pipe_mode || pfc_feat_has(&rd, PFC_FEAT_BUILD_ID) || !rd.map) {
		ret = 0;	/* perf wrote them, or a file of another shape: nothing to add */
		goto out;
	}
	b.rd = &rd;
	b.err = &err;
	if (pfc_reader_run(&rd, on_record, &b) < 0 && b.nomem) {
		snprintf(msg, cap, "out of memory reading '%s'", path);
		goto out;
	}
	/* a malformed record ends the scan, not the recording: the conversion reports it */
	for (i = 0; i < b.npending; i++) {
		struct bfile *f = find(&b, b.pending[i].pid, b.pending[i].ip, b.pending[i].kernel, b.pending[i].time);
		if (f)
			f->hit = 1;
	}
	qsort(b.files, b.nfiles, sizeof(*b.files), by_first);
	for (i = 0; i < b.nfiles; i++) {
		const struct bfile *f = &b.files[i];
		int vdso = !strcmp(f->name, "[vdso]");
		if (!f->hit && !(vdso && b.vdso))
			continue;
		memset(id, 0, sizeof(id));
		if (vdso)
			len = vdso_build_id(id);
		else if (f->kernel && !strncmp(f->name, "[kernel.kallsyms]", 17))
			len = (int)pfc_buildid_running_kernel(NULL, id, sizeof(id));
		else if (f->kernel)
			len = module_build_id(f->name, id);
		else
			len = user_build_id(f, id);
		if (len <= 0)
			continue;
		if (put_entry(&sec, &seclen, &seccap, f->kernel && !strncmp(f->name, "[kernel.kallsyms]", 17) ?
			      "[kernel.kallsyms]" : f->name, id, len,
			      f->kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER) < 0) {
			snprintf(msg, cap, "out of memory for the build-ids of '%s'", path);
			goto out;
		}
		(*nr)++;
	}
	ret = write_section(&rd, path, sec, seclen, msg, cap);
out:
	for (i = 0; i < b.nfiles; i++)
		free(b.files[i].name);
	free(b.files);
	for (i = 0; i < b.cprocs; i++)
		free(b.procs[i].maps);
	free(b.procs);
	free(b.maps);
	free(b.forks);
	free(b.pending);
	free(sec);
	pfc_reader_close(&rd);
	return ret;
}
