/*
 * kernel.c - everything about the recorded kernel: whether this machine runs it (build-id,
 * release), where its symbols come from and the symbol cache's key for them, the thread that
 * reads them while records are processed, perf-compat's relocation and default range, and
 * the kernel map as perf stretches it at the first kernel address.  It does not read kallsyms
 * files (native/kallsyms.c) nor keep the cache (native/symcache.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "converter/kernel.h"
#include "converter/native/buildid.h"
#include "converter/session.h"
#include "converter/symbolize.h"
#include "converter/native/symcache.h"
#include "converter/native/symtab.h"
#include "converter/util/bytes.h"

/* ---- is the recorded kernel the running one ---- */

/* This machine's kernel files: /proc/kallsyms, /sys/kernel/notes, and its release (uname),
 * or the files kallsyms, notes and osrelease of the tuning's running_kernel, a directory
 * that stands for the running kernel in the tests (PERFCONV_RUNNING_KERNEL). */
static const char *running_file(struct pfc_session *s, const char *name)
{
	const char *dir = s->tuning->running_kernel;
	int i;

	if (!dir || !*dir)
		return !strcmp(name, "kallsyms") ? "/proc/kallsyms" : !strcmp(name, "notes") ? "/sys/kernel/notes" : NULL;
	/* one buffer a name: files.c keeps the kallsyms path */
	i = !strcmp(name, "kallsyms") ? 0 : !strcmp(name, "notes") ? 1 : 2;
	snprintf(s->kernel.running_path[i], sizeof(s->kernel.running_path[i]), "%s/%s", dir, name);
	return s->kernel.running_path[i];
}

/* The recorded kernel's build-id (the BUILD_ID feature, or a kernel MMAP2 of
 * --buildid-mmap): its length, 0 when the recording has none. */
static int recorded_kernel_build_id(const struct pfc_session *s, uint8_t *out)
{
	const struct pfc_machine *m = &s->machine;
	size_t i;

	for (i = 0; i < m->nr_bids; i++)
		if (m->bids[i].kernel && m->bids[i].len > 0 && !strcmp(m->bids[i].path, "[kernel.kallsyms]")) {
			memcpy(out, m->bids[i].id, 20);
			return m->bids[i].len;
		}
	for (i = 0; i < m->nr_dsos; i++)
		if (m->dsos[i]->kind == PFC_DSO_KERNEL && m->dsos[i]->build_id_len > 0) {
			memcpy(out, m->dsos[i]->build_id, 20);
			return m->dsos[i]->build_id_len;
		}
	return 0;
}

/* The running kernel's build-id, from /sys/kernel/notes (perf's sysfs__read_build_id) or the
 * tests' stand-in, as the symbol cache keys it: its length, 0 when it cannot be read. */
static int running_kernel_build_id(const struct pfc_session *s, uint8_t *out)
{
	return (int)pfc_buildid_running_kernel(s->tuning->running_kernel, out, 20);
}

enum { KERNEL_IS_RUNNING, KERNEL_OTHER_BUILD_ID, KERNEL_OTHER_RELEASE, KERNEL_NO_RELEASE, KERNEL_SYMFS };

/*
 * Whether this machine's /proc/kallsyms names the recording's kernel (s->kernel.why says
 * why not).  perf 6.1 (dso__find_kallsyms): a kernel build-id in the recording must be the
 * running kernel's; a recording without one (pipe mode, --no-buildid) gets /proc/kallsyms
 * whatever kernel recorded it, so another machine's recording gets this machine's names,
 * wrong ones; and with --symfs perf reads no kernel symbols of this machine at all ("do
 * not try local files if a symfs was given", dso__load_kernel_sym).  --perf-compat does
 * the same.  The default names such a recording's kernel
 * frames only when it was recorded by a kernel of the running release (OSRELEASE), and
 * leaves them unnamed otherwise, as perf prints a kernel frame it cannot name.
 */
static int kernel_matches_running(struct pfc_session *s)
{
	struct utsname u;
	const struct pfc_blob *b = &s->rd.feat[PFC_FEAT_OSRELEASE];
	struct pfc_cursor c;
	uint8_t rec[20], run[20];
	int rlen = recorded_kernel_build_id(s, rec), nlen;
	uint32_t len;
	const char *str;

	s->kernel.why = KERNEL_IS_RUNNING;
	if (s->opts->perf_compat && s->opts->symfs && *s->opts->symfs) {
		s->kernel.why = KERNEL_SYMFS;
		return 0;
	}
	if (rlen > 0 && (nlen = running_kernel_build_id(s, run)) > 0) {
		if (nlen == rlen && !memcmp(rec, run, (size_t)rlen))
			return 1;
		s->kernel.why = KERNEL_OTHER_BUILD_ID;
		return 0;
	}
	if (rlen <= 0 && s->opts->perf_compat)
		return 1;
	if (!pfc_feat_has(&s->rd, PFC_FEAT_OSRELEASE) || uname(&u) < 0) {
		s->kernel.why = KERNEL_NO_RELEASE;
		return 0;
	}
	if (running_file(s, "osrelease")) {	/* the tests' running kernel */
		FILE *f = fopen(running_file(s, "osrelease"), "r");
		if (!f || !fgets(u.release, sizeof(u.release), f))
			u.release[0] = '\0';
		if (f)
			fclose(f);
		u.release[strcspn(u.release, "\n")] = '\0';
	}
	pfc_cur_init(&c, b->data, b->size, s->rd.swap);
	len = pfc_cur_u32(&c);
	str = (const char *)pfc_cur_bytes(&c, len);
	if (str && strnlen(str, len) == strlen(u.release) && !strncmp(str, u.release, len))
		return 1;
	s->kernel.why = str ? KERNEL_OTHER_RELEASE : KERNEL_NO_RELEASE;
	return 0;
}

/* ---- its symbols, the symbol cache's key for them, and where they are read ---- */

enum { SYMCACHE_OFF, SYMCACHE_HIT, SYMCACHE_MISS, SYMCACHE_CORRUPT };

/* Kernel symbols from PATH, or from the cache when the file is the running kernel's
 * kallsyms (cache_dir set only then): a hit reads the finished table, a miss reads the
 * file and writes the entry for the next conversion on this boot.  Sets *cache. */
static int kernel_syms_load(const char *path, const char *cache_dir, const char *running_kernel, struct pfc_symtab *t,
			    int *cache)
{
	struct pfc_symcache_key key;
	int ret;

	*cache = SYMCACHE_OFF;
	if (!cache_dir || pfc_symcache_key(&key, running_kernel) < 0)
		return pfc_kallsyms_load(path, t);
	ret = pfc_symcache_load(cache_dir, &key, t);
	if (ret == 1) {
		*cache = SYMCACHE_HIT;
		return 0;
	}
	*cache = ret == -EINVAL ? SYMCACHE_CORRUPT : SYMCACHE_MISS;
	ret = pfc_kallsyms_load(path, t);
	if (!ret && t->nr)
		pfc_symcache_store(cache_dir, &key, t);	/* a cache that cannot be written is no cache */
	return ret;
}

static void symcache_count(struct pfc_session *s, int cache)
{
	s->st.nr_symcache_hits += cache == SYMCACHE_HIT;
	s->st.nr_symcache_misses += cache == SYMCACHE_MISS || cache == SYMCACHE_CORRUPT;
	s->st.nr_symcache_corrupt += cache == SYMCACHE_CORRUPT;
}

/* the cache directory when FOUND is the running kernel's kallsyms, else NULL */
const char *pfc_session_kernel_cache_dir(struct pfc_session *s, const struct pfc_found *found)
{
	/* perf-compat may move the table by the recording's reference symbol, which a cached table
	 * searched in place cannot take */
	if (!s->opts->cache_dir || s->opts->perf_compat)
		return NULL;
	return pfc_files_running_kernel(s->files, found) ? s->opts->cache_dir : NULL;
}

/* The kallsyms file this session will read (--kallsyms, the running kernel's when it is
 * the recorded one, a pack's), or NULL (then a warning says why, later). */
static const char *kernel_syms_path(struct pfc_session *s, struct pfc_found *found)
{
	/* asked when the first kernel frame needs it: a pipe stream tells its kernel late */
	pfc_files_set_running_kallsyms(s->files, kernel_matches_running(s) ? running_file(s, "kallsyms") : NULL);
	if (!pfc_files_find(s->files, PFC_FILES_KERNEL, "kallsyms", 0, found))
		return NULL;
	pfc_files_note(s->files, PFC_FILES_KERNEL, "kallsyms", "kernel symbols", -1, NULL, 0);
	return found->path;
}

/*
 * perf-compat: perf moves the kallsyms symbols by where the recording's kernel map says its
 * reference symbol (_text) was against where the kallsyms file has it (kallsyms__delta), so
 * that another boot's KASLR offset, or another kernel's, shifts every name alike.  A file
 * without that symbol gives no names, as perf's load fails.  The default reads only the
 * recording's own kernel symbols, where the delta is 0 (the same boot) or unknown.
 */
static int kernel_reloc(struct pfc_session *s, const char *path, struct pfc_symtab *t)
{
	const struct pfc_machine *m = &s->machine;
	uint64_t addr;

	if (!s->opts->perf_compat || !m->kref_name[0])
		return 0;
	if (pfc_kallsyms_func_start(path, m->kref_name, &addr) < 0) {
		pfc_symtab_free(t);
		return 0;
	}
	pfc_symtab_shift(t, addr - m->kref_addr);
	return 0;
}

/* ---- the second thread that reads them while the records are processed ---- */

struct pfc_kernel_preload {
	pthread_t thread;
	struct pfc_found found;
	const char *path;
	const char *cache_dir;       /* the running kernel's symbols may come from the cache */
	struct pfc_symtab *t;
	int ret;
	int cache;                   /* SYMCACHE_* of the load */
	int done;                    /* set by the thread when t is complete */
	const char *running_kernel;  /* the tuning's, for the cache's key */
	unsigned long delay_ms;      /* the tuning's preload_delay_ms */
};

static void *preload_main(void *arg)
{
	struct pfc_kernel_preload *k = arg;

	if (k->delay_ms)	/* for the tests of the retry */
		usleep((useconds_t)k->delay_ms * 1000);
	k->ret = kernel_syms_load(k->path, k->cache_dir, k->running_kernel, k->t, &k->cache);
	__atomic_store_n(&k->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int preload_done(const struct pfc_session *s)
{
	return s->kernel.preload && __atomic_load_n(&s->kernel.preload->done, __ATOMIC_ACQUIRE);
}

/* Reading and sorting a kallsyms file costs as much as decoding a large recording, and
 * needs nothing from it: it starts at the first kernel address (a recording without one
 * never reads it), and its table is taken when a kernel frame needs it. */
static void preload_start(struct pfc_session *s)
{
	struct pfc_kernel_preload *k = calloc(1, sizeof(*k));

	if (!k)
		return;
	if (!(k->path = kernel_syms_path(s, &k->found))) {
		free(k);
		return;
	}
	k->cache_dir = pfc_session_kernel_cache_dir(s, &k->found);
	k->running_kernel = s->tuning->running_kernel;
	k->delay_ms = s->tuning->preload_delay_ms;
	k->t = calloc(1, sizeof(*k->t));
	if (!k->t || pthread_create(&k->thread, NULL, preload_main, k) != 0) {
		free(k->t);
		free(k);
		return;
	}
	s->kernel.preload = k;
}

/* Wait for the preload; returns its table (NULL: failed or not started) and its status. */
static struct pfc_symtab *preload_take(struct pfc_session *s, int *ret, struct pfc_found *found)
{
	struct pfc_kernel_preload *k = s->kernel.preload;
	struct pfc_symtab *t;

	if (!k)
		return NULL;
	pthread_join(k->thread, NULL);
	t = k->t;
	*ret = k->ret;
	symcache_count(s, k->cache);
	if (found)
		*found = k->found;
	free(k);
	s->kernel.preload = NULL;
	return t;
}

/* ---- the table a load of the kernel's DSO gets ---- */

/* The kernel's symbols into *t (which the preload's table may replace): what pfc_symbolize_dso does
 * for the kernel.  < 0 on error; no symbols is no error, and a warning says why. */
int pfc_kernel_syms_read(struct pfc_session *s, struct pfc_symtab **t)
{
	const struct pfc_opts *o = s->opts;
	struct pfc_found kf;
	int ret = 0;
	struct pfc_symtab *pre = preload_take(s, &ret, &kf);

	if (pre) {
		free(*t);
		*t = pre;
		if (ret >= 0)
			ret = kernel_reloc(s, kf.path, *t);
	} else if (kernel_syms_path(s, &kf)) {
		int cache;
		ret = kernel_syms_load(kf.path, pfc_session_kernel_cache_dir(s, &kf), s->tuning->running_kernel, *t, &cache);
		symcache_count(s, cache);
		if (ret >= 0)
			ret = kernel_reloc(s, kf.path, *t);
	} else if (o->log)
		fprintf(o->log, "perfconv: warning: kernel frames left unnamed: %s; to name them, "
			"give --kallsyms a copy of /proc/kallsyms from the machine that recorded%s\n",
			pfc_files_from_pack(s->files) ?
			"the pack has no kernel symbols (it was made where the recorded kernel was not running)" :
			s->kernel.why == KERNEL_IS_RUNNING ? "the running kernel's symbols cannot be read" :
			s->kernel.why == KERNEL_SYMFS ?
			"with --symfs, perf (--perf-compat) reads no kernel symbols of this machine" :
			s->kernel.why == KERNEL_OTHER_BUILD_ID ?
			"the recording's kernel build-id is not the running kernel's" :
			s->kernel.why == KERNEL_OTHER_RELEASE ?
			"the recording has no kernel build-id and another kernel release recorded it" :
			"the recording has no kernel build-id nor kernel release to check against the running kernel",
			pfc_files_from_pack(s->files) ? "" : ", or convert a pack made there (-f pack)");
	return ret;
}

/* ---- the kernel map, as perf loads and stretches it ---- */

/* perf loads the kernel's symbols the first time a kernel address falls in the kernel
 * map, and then stretches that map to the first and last kallsyms symbol: from then on
 * init text beyond _etext resolves too. */
static void kernel_load(struct pfc_session *s)
{
	struct pfc_machine *m = &s->machine;
	const struct pfc_symtab *t;

	s->kernel.loaded = 1;
	m->kgen++;
	/* the first kernel address may fall in a module's map before any record made the kernel's */
	if (!m->kernel)
		m->kernel = pfc_machine_dso_findnew(m, "[kernel.kallsyms]", 17, PFC_DSO_KERNEL, -1);
	if (!m->kernel)
		return;
	if (!m->kernel->loaded)
		pfc_symbolize_dso(s, m->kernel);
	t = m->kernel->syms;
	if (!t || !pfc_symtab_core_range(t, &m->kstart, &m->kend))
		return;
	m->have_kernel_map = 1;
	m->kgen++;
}

/*
 * perf loads the kernel's symbols at the first kernel address, and the kernel map then
 * shrinks to the kallsyms range.  While a preload is still running the map is left as it
 * was: every kernel frame is then the same (kernel, ip) tuple that the stretched map gives,
 * except an address on one side of the kallsyms range's edges only: outside it (perf leaves
 * it without a map) or inside it but beyond the recorded kernel map (init text after
 * _etext, which perf resolves).
 * An address outside the recorded map waits for the preload, so only a kallsyms file that
 * ends before the recorded map does (a cut or foreign one) can leave such frames behind.
 * When the preload is in, they are looked for; pfc_session_process reports them as
 * -PFC_ERR_RETRY and the caller converts again without the preload.
 */
static void kernel_stretch_pending(struct pfc_session *s)
{
	const struct pfc_machine *m = &s->machine;
	size_t i;

	s->kernel.pending = 0;
	kernel_load(s);
	if (!m->have_kernel_map)
		return;
	for (i = s->kernel.pending_frame0; i < s->stacks.nr_frames; i++) {
		const struct pfc_frame *f = &s->stacks.frames[i];
		int inside = f->addr >= m->kstart && f->addr < m->kend;
		/* the map before the stretch is the recorded one (or none): either way round */
		if ((f->dso == m->kernel && !inside) || (!f->dso && f->kernel && inside))
			s->kernel.preload_conflict = 1;
	}
}

static void kernel_first_hit(struct pfc_session *s)
{
	if (s->kernel.preload_wanted) {
		s->kernel.preload_wanted = 0;
		preload_start(s);
	}
	if (s->kernel.preload && !preload_done(s)) {
		s->kernel.pending = 1;
		s->kernel.loaded = 1;
		s->kernel.pending_frame0 = s->stacks.nr_frames;
		return;
	}
	kernel_load(s);
}

/*
 * perf-compat: a recording without a kernel map (no kernel samples asked for, or an LBR
 * call stack of user branches) leaves perf with the one it makes from this machine's
 * /proc/kallsyms, [_text, _etext) (machine__get_running_kernel_start): a kernel address of
 * the recording outside it is in no map, [unknown] ([unknown]).
 */
static void kernel_default_range(struct pfc_session *s)
{
	const char *ks = running_file(s, "kallsyms");
	uint64_t start, end;

	s->kernel.default_tried = 1;
	if (!s->opts->perf_compat ||
	    (pfc_kallsyms_func_start(ks, "_text", &start) < 0 && pfc_kallsyms_func_start(ks, "_stext", &start) < 0) ||
	    !start)
		return;
	if (pfc_kallsyms_func_start(ks, "_etext", &end) < 0)
		end = UINT64_MAX;
	s->machine.kdef_start = start;
	s->machine.kdef_end = end;
	s->machine.have_kdef = 1;
	s->machine.kgen++;
}

/* The kernel map at a kernel address ip, as perf looks it up: the first hit loads the
 * kernel's symbols (which may shrink the map; the map found before stays the answer). */
const struct pfc_map *pfc_kernel_touch(struct pfc_session *s, struct pfc_thread *th, uint64_t ip)
{
	const struct pfc_map *map;

	if (!s->machine.have_kernel_map && !s->kernel.default_tried)
		kernel_default_range(s);
	/* an address beyond the recorded kernel map (init text, modules) waits for the table */
	if (s->kernel.pending && (preload_done(s) || !pfc_machine_find_map(&s->machine, th, 1, ip)))
		kernel_stretch_pending(s);
	map = pfc_machine_find_map(&s->machine, th, 1, ip);
	if (map && !s->kernel.loaded)
		kernel_first_hit(s);
	return map;
}

const struct pfc_symtab *pfc_session_kernel_syms(struct pfc_session *s)
{
	if (!s->machine.kernel)
		return NULL;
	if (!s->kernel.loaded)
		kernel_load(s);
	return s->machine.kernel->syms;
}

void pfc_kernel_init(struct pfc_session *s)
{
	/* a pipe stream's OSRELEASE comes later, as a record: that one loads when needed */
	if (s->opts->preload_kernel && !s->rd.pipe_mode && !s->tuning->no_preload)
		s->kernel.preload_wanted = 1;
}

int pfc_kernel_finish(struct pfc_session *s)
{
	if (s->kernel.pending)
		kernel_stretch_pending(s);
	if (s->kernel.preload_conflict)
		return PFC_FAIL_NOOFF(s->err, RETRY, "kernel frames outside the kallsyms range were seen before it was read");
	return 0;
}

void pfc_kernel_exit(struct pfc_session *s)
{
	int ret;
	struct pfc_symtab *t = preload_take(s, &ret, NULL);

	if (t) {
		pfc_symtab_free(t);
		free(t);
	}
}
