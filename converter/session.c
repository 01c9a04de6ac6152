/*
 * session.c - drives one conversion: record dispatch (user records at once, kernel
 * records through the ordering queue), machine updates, sample -> frame tuple ->
 * aggregate, and symbolization of the unique frames afterwards.  Callchains are walked
 * the way perf 6.1's thread__resolve_callchain_sample walks them: context markers switch
 * between kernel and user maps, an unknown marker discards the chain, at most max_stack
 * frames are kept, and each address is looked up as it was recorded.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "converter/perffile/hdrprint.h"
#include "converter/util/mem.h"
#include "converter/util/bytes.h"
#include "converter/session.h"
#include "converter/native/buildid.h"
#include "converter/native/symcache.h"
#include "converter/files/pack.h"
#include "converter/jit/dotnetname.h"
#include "converter/jit/perfmap.h"
#include "converter/jit/r2rmap.h"
#include "converter/r2rframes.h"
#include "converter/native/symtab.h"
#include "converter/native/a2l.h"
#include "converter/native/unwind.h"
#include "converter/perffile/tracedata.h"

#define PFC_REG_X86_IP 8

static void dwarf_dso_free(struct pfc_session *s);
static int deliver(void *ctx, const struct pfc_qev *ev);
static int on_record(void *ctx, const struct pfc_rec *r);
static int kernel_matches_running(struct pfc_session *s);

/* ---- kernel symbols, read on a second thread while the records are processed ---- */

struct pfc_kpreload {
	pthread_t thread;
	struct pfc_found found;
	const char *path;
	const char *cache_dir;       /* the running kernel's symbols may come from the cache */
	struct pfc_symtab *t;
	int ret;
	int cache;                   /* SYMCACHE_* of the load */
	int done;                    /* set by the thread when t is complete */
};

enum { SYMCACHE_OFF, SYMCACHE_HIT, SYMCACHE_MISS, SYMCACHE_CORRUPT };

/* Kernel symbols from PATH, or from the cache when the file is the running kernel's
 * kallsyms (cache_dir set only then): a hit reads the finished table, a miss reads the
 * file and writes the entry for the next conversion on this boot.  Sets *cache. */
static int kernel_syms_load(const char *path, const char *cache_dir, struct pfc_symtab *t, int *cache)
{
	struct pfc_symcache_key key;
	int ret;

	*cache = SYMCACHE_OFF;
	if (!cache_dir || pfc_symcache_key(&key) < 0)
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

static void *kpreload_main(void *arg)
{
	struct pfc_kpreload *k = arg;
	const char *delay = getenv("PERFCONV_PRELOAD_DELAY_MS");	/* for the tests of the retry */

	if (delay && *delay)
		usleep((useconds_t)strtoul(delay, NULL, 10) * 1000);
	k->ret = kernel_syms_load(k->path, k->cache_dir, k->t, &k->cache);
	__atomic_store_n(&k->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int kpreload_done(const struct pfc_session *s)
{
	return s->kpreload && __atomic_load_n(&s->kpreload->done, __ATOMIC_ACQUIRE);
}

/* This machine's kernel files: /proc/kallsyms, /sys/kernel/notes, and its release (uname),
 * or the files kallsyms, notes and osrelease of PERFCONV_RUNNING_KERNEL, a directory that
 * stands for the running kernel in the tests. */
static const char *running_file(struct pfc_session *s, const char *name)
{
	const char *dir = getenv("PERFCONV_RUNNING_KERNEL");
	int i;

	if (!dir || !*dir)
		return !strcmp(name, "kallsyms") ? "/proc/kallsyms" : !strcmp(name, "notes") ? "/sys/kernel/notes" : NULL;
	/* one buffer a name: files.c keeps the kallsyms path */
	i = !strcmp(name, "kallsyms") ? 0 : !strcmp(name, "notes") ? 1 : 2;
	snprintf(s->running_path[i], sizeof(s->running_path[i]), "%s/%s", dir, name);
	return s->running_path[i];
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

/* Reading and sorting a kallsyms file costs as much as decoding a large recording, and
 * needs nothing from it: it starts at the first kernel address (a recording without one
 * never reads it), and its table is taken when a kernel frame needs it. */
static void kpreload_start(struct pfc_session *s)
{
	struct pfc_kpreload *k = calloc(1, sizeof(*k));

	if (!k)
		return;
	if (!(k->path = kernel_syms_path(s, &k->found))) {
		free(k);
		return;
	}
	k->cache_dir = pfc_session_kernel_cache_dir(s, &k->found);
	k->t = calloc(1, sizeof(*k->t));
	if (!k->t || pthread_create(&k->thread, NULL, kpreload_main, k) != 0) {
		free(k->t);
		free(k);
		return;
	}
	s->kpreload = k;
}

/* Wait for the preload; returns its table (NULL: failed or not started) and its status. */
static struct pfc_symtab *kpreload_take(struct pfc_session *s, int *ret, struct pfc_found *found)
{
	struct pfc_kpreload *k = s->kpreload;
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
	s->kpreload = NULL;
	return t;
}

static int bad_record(struct pfc_session *s, uint64_t off, uint32_t type, const char *what)
{
	return PFC_FAIL(s->err, CORRUPT, off, "record of type %u: %s", type, what);
}

/* ---- build-ids from the header ---- */

static void load_build_ids(struct pfc_session *s, const uint8_t *p, uint64_t len)
{
	struct pfc_reader *rd = &s->rd;
	uint64_t pos = 0;

	while (len - pos >= 8 + 4 + 24) {
		uint16_t misc = pfc_ld16(p + pos + 4, rd->swap);
		uint16_t size = pfc_ld16(p + pos + 6, rd->swap);
		const uint8_t *e = p + pos;
		int idlen = 20, cpumode;
		char name[4096];
		size_t n;

		if (size < 8 + 4 + 24 || size > len - pos)
			break;
		if (misc & PFC_MISC_BUILD_ID_SIZE) {
			idlen = e[12 + 20];
			if (idlen > 20)
				idlen = 20;
		}
		n = strnlen((const char *)e + 36, size - 36);
		if (n >= sizeof(name))
			n = sizeof(name) - 1;
		memcpy(name, e + 36, n);
		name[n] = 0;
		cpumode = misc & PFC_MISC_CPUMODE_MASK;
		pfc_machine_add_build_id(&s->machine, name, e + 12, idlen,
					 cpumode == PERF_RECORD_MISC_KERNEL || cpumode == PERF_RECORD_MISC_GUEST_KERNEL);
		pos += size;
	}
}

int pfc_session_open(struct pfc_session *s, const struct pfc_opts *o, struct pfc_error *err)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->opts = o;
	s->err = err;
	s->unwind_arch = -1;
	if (pfc_intern_init(&s->strings) < 0 || pfc_machine_init(&s->machine, &s->strings) < 0 ||
	    pfc_stacks_init(&s->stacks) < 0)
		return PFC_FAIL_NOOFF(err, NOMEM, "session");
	pfc_order_init(&s->order, deliver, s);
	pfc_stream_init(&s->stream);
	{	/* tests: spill the stream to its temporary file from this size on */
		const char *lim = getenv("PERFCONV_STREAM_MEM");
		if (lim && *lim)
			s->stream.mem_limit = (size_t)strtoull(lim, NULL, 10);
	}
	if (strcmp(o->input, "-") && pfc_pack_detect(o->input) == 1) {
		/* a pack: its recording is read in place, its members answer first */
		if ((ret = pfc_pack_open(&s->pack, o->input, err)) < 0)
			return ret;
		if (pfc_pack_fd(s->pack, PFC_PACK_RECORDING, NULL) < 0)
			return PFC_FAIL_NOOFF(err, CORRUPT, "the pack has no member '%s'", PFC_PACK_RECORDING);
		snprintf(s->pack_input, sizeof(s->pack_input), "/proc/self/fd/%d", pfc_pack_fd(s->pack, PFC_PACK_RECORDING, NULL));
	}
	ret = pfc_reader_open(&s->rd, s->pack ? s->pack_input : o->input, err);
	if (ret < 0) {
		if (s->pack && !err->file[0])	/* offsets are the recording's, inside the pack */
			snprintf(err->file, sizeof(err->file), "%s: member %s", o->input, PFC_PACK_RECORDING);
		return ret;
	}
	{
		struct pfc_files_opts fo = {
			.symfs = o->symfs, .buildid_dir = o->buildid_dir, .buildid_dir_given = o->buildid_dir_given,
			.map_dir = o->map_dir,
			.kallsyms = o->kallsyms,
			.proc = getenv("PERFCONV_PROC"), .tmp = getenv("PERFCONV_TMP"), .record = o->record_files,
			.debug_dir = getenv("PERFCONV_DEBUG_DIR"),
		};
		if (!(s->files = pfc_files_new(&fo, s->pack)))
			return PFC_FAIL_NOOFF(err, NOMEM, "session");
		if ((ret = pfc_files_load_pack(s->files, err)) < 0) {
			snprintf(err->file, sizeof(err->file), "%s", o->input);
			return ret;
		}
		s->recording_path = s->recording_name = o->input;
		if (s->pack) {	/* "captured on", and trace.zip's entry times: the recording's */
			long long t;
			if (pfc_files_pack_mtime(s->files, &t)) {
				s->rd.mtime = t;
				s->rd.have_mtime = 1;
			}
			s->recording_path = s->pack_input;
			if (pfc_files_pack_recording(s->files))
				s->recording_name = pfc_files_pack_recording(s->files);
		}
	}
	{
		struct pfc_jitsym_opts jo = {
			.files = s->files, .pid_map = o->pid_map, .nr_pid_map = o->nr_pid_map,
			.resolve = o->resolve_jit, .log = o->log, .verbose = o->verbose,
		};
		pfc_jitsyms_init(&s->jit, &jo, &s->machine, &s->rd, err);
	}
	s->rd.warn = o->log;
	if ((o->offcpu || o->thread_time) &&
	    !(s->offcpu = pfc_offcpu_new(o->offcpu == PFC_OFFCPU_ALL ? PFC_OFFCPU_ALL : PFC_OFFCPU_BLOCKED, o->thread_time)))
		return PFC_FAIL_NOOFF(err, NOMEM, "session");
	/* only when the user named servers: never a query otherwise */
	if (o->debuginfod_urls && *o->debuginfod_urls &&
	    pfc_debuginfod_open(&s->dbgf, o->debuginfod_urls, o->debuginfod_timeout, o->log) < 0 && o->log)
		fprintf(o->log, "perfconv: warning: debuginfod: cannot start the client\n");
	/* the same for symbol servers (pfc_symsrv_open says why it cannot start) */
	if (o->symsrv_urls && *o->symsrv_urls)
		pfc_symsrv_open(&s->ssrv, o->symsrv_urls, o->symsrv_cache, o->symsrv_timeout, o->log);
	/* perf's idle thread: pid/tid 0 is "swapper" */
	if (pfc_machine_comm(&s->machine, 0, 0, "swapper", 7) < 0)
		return PFC_FAIL_NOOFF(err, NOMEM, "session");
	if (pfc_feat_has(&s->rd, PFC_FEAT_BUILD_ID))
		load_build_ids(s, s->rd.feat[PFC_FEAT_BUILD_ID].data, s->rd.feat[PFC_FEAT_BUILD_ID].size);
	/* a pipe stream's OSRELEASE comes later, as a record: that one loads when needed */
	if (o->preload_kernel && !s->rd.pipe_mode && !(getenv("PERFCONV_PRELOAD") && !strcmp(getenv("PERFCONV_PRELOAD"), "0")))
		s->kpreload_wanted = 1;
	return 0;
}

void pfc_session_close(struct pfc_session *s)
{
	size_t i;
	int kret;
	struct pfc_symtab *kt = kpreload_take(s, &kret, NULL);

	pfc_debuginfod_close(&s->dbgf);
	pfc_symsrv_close(&s->ssrv);
	if (kt) {
		pfc_symtab_free(kt);
		free(kt);
	}

	for (i = 0; i < s->machine.nr_dsos; i++) {
		struct pfc_dso *d = s->machine.dsos[i];
		if (d->syms) {
			pfc_symtab_free(d->syms);
			free(d->syms);
		}
	}
	pfc_jitsyms_exit(&s->jit);
	pfc_offcpu_free(s->offcpu);
	dwarf_dso_free(s);
	if (s->perfinfo) {
		pfc_perfinfo_free(s->perfinfo);
		free(s->perfinfo);
	}
	pfc_r2rframes_free(s);
	free(s->ucache);
	s->ucache = NULL;
	pfc_order_exit(&s->order);
	pfc_stacks_exit(&s->stacks);
	pfc_machine_exit(&s->machine);
	pfc_intern_exit(&s->strings);
	pfc_reader_close(&s->rd);
	pfc_files_free(s->files);
	pfc_pack_close(s->pack);
	free(s->evsel_first_seq);
	free(s->fbuf);
	free(s->raw);
	for (size_t b = 0; b < s->raw_nblocks; b++)
		free(s->raw_blocks[b]);
	free(s->raw_blocks);
	free(s->raw_block_used);
	pfc_stream_exit(&s->stream);
	free(s->stream_per_stack);
}

const char *pfc_session_thread_comm(struct pfc_session *s, int32_t pid, int32_t tid)
{
	const struct pfc_thread *th = pfc_machine_find_thread(&s->machine, pid, tid);

	return th && th->comm_set ? pfc_intern_str(&s->strings, th->comm) : NULL;
}

/* The value of the line "KEY: value" of an event format's text, bounded by it; NULL if none. */
static const char *format_line(const char *text, size_t len, const char *key, size_t *vlen)
{
	size_t klen = strlen(key), pos = 0;

	while (pos < len) {
		const char *eol = memchr(text + pos, '\n', len - pos);
		size_t n = eol ? (size_t)(eol - (text + pos)) : len - pos;
		if (n > klen && !memcmp(text + pos, key, klen)) {
			*vlen = n - klen;
			return text + pos + klen;
		}
		pos += n + 1;
	}
	return NULL;
}

/* One event format of the tracing data: its "name:" and "ID:" name the tracepoint
 * evsels of that id that no header named (perf's evsel__prepare_tracepoint_event). */
static int tp_name_format(void *arg, const char *sys, const char *text, size_t len)
{
	struct pfc_session *s = arg;
	const char *name, *id;
	size_t nlen, idlen, i;
	char buf[128], num[24];
	unsigned long long config;

	if (!(name = format_line(text, len, "name: ", &nlen)) || !(id = format_line(text, len, "ID: ", &idlen)) ||
	    !idlen || idlen >= sizeof(num))
		return 0;
	memcpy(num, id, idlen);
	num[idlen] = 0;
	config = strtoull(num, NULL, 10);
	for (i = 0; i < s->rd.nr_evsels; i++) {
		struct pfc_evsel *ev = s->rd.evsels[i];
		if (ev->name || ev->attr.type != PERF_TYPE_TRACEPOINT || ev->attr.config != config)
			continue;
		snprintf(buf, sizeof(buf), "%s:%.*s", sys, (int)(nlen > 127 ? 127 : nlen), name);
		ev->name = strdup(buf);
	}
	return 0;
}

const char *pfc_session_evsel_name(struct pfc_session *s, size_t idx)
{
	struct pfc_evsel *ev;
	char buf[256];

	if (idx >= s->rd.nr_evsels)
		return "[unknown]";
	ev = s->rd.evsels[idx];
	if (!ev->name && ev->attr.type == PERF_TYPE_TRACEPOINT && !s->tp_names_tried && s->rd.tracing_data.data) {
		struct pfc_error e;
		memset(&e, 0, sizeof(e));
		s->tp_names_tried = 1;
		(void)pfc_tracedata_formats(s->rd.tracing_data.data, s->rd.tracing_data.size,
					    s->rd.tracing_data_offset, tp_name_format, s, &e);
	}
	if (!ev->name) {
		pfc_hdr_format_name(buf, sizeof(buf), &ev->attr);
		ev->name = strdup(buf);
		if (!ev->name)
			return "[unknown]";
	}
	return ev->name;
}

uint64_t pfc_session_evsel_first(const struct pfc_session *s, size_t idx)
{
	if (idx >= s->nr_evsel_first)
		return UINT64_MAX;
	return s->evsel_first_seq[idx];
}

/* ---- samples ---- */

/*
 * The callchain cache.  An entry is a key header followed by the raw callchain words,
 * both in one arena of 64-bit words; the open-addressing table holds 8 bytes a slot (the
 * hash's high half as a tag, the entry's arena index), so that it stays small and
 * cache-friendly however many distinct chains there are.
 */
struct pfc_rawkey {
	const struct pfc_maps *maps;
	uint64_t gen, kgen;
	uint32_t comm, evsel;
	int32_t pid, tid;
	uint32_t nr;              /* callchain words that follow */
	uint32_t stack;           /* the aggregated stack (from here on, not part of the key) */
	uint64_t hash;
	/* samples found here, added to the stack when processing ends (raw_settle): a hit
	 * then touches no memory but this entry */
	uint64_t period, count;
};

#define RAWKEY_WORDS (sizeof(struct pfc_rawkey) / 8)
#define RAW_TAG(h) (((h) >> 32 | 1) << 32)
/* a slot's low half: arena block << RAW_BLOCK_SHIFT | word in the block */
#ifndef PFC_RAW_BLOCK_SHIFT            /* smaller in the fuzz build (make fuzz), as order.c's blocks */
#define PFC_RAW_BLOCK_SHIFT 18
#endif
#define RAW_BLOCK_SHIFT PFC_RAW_BLOCK_SHIFT
#define RAW_BLOCK_WORDS ((uint64_t)1 << RAW_BLOCK_SHIFT)    /* 2 MiB (shift 18) */
#define RAW_MAX_BLOCKS ((size_t)1 << (32 - RAW_BLOCK_SHIFT))

/* A polynomial over the chain's words (an add and a multiply each), mixed at the end so
 * that the words' high bits reach the low bits the table indexes with. */
static uint64_t hash_chain(const uint8_t *p, uint64_t nr, uint64_t seed)
{
	uint64_t h = seed ^ (nr * 0x9E3779B97F4A7C15ULL), i, v;

	for (i = 0; i < nr; i++) {
		memcpy(&v, p + i * 8, 8);
		h = (h + v) * 0xff51afd7ed558ccdULL;
	}
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 29);
}

/* The callchain cache's hash of a sample: its chain and thread, from the record alone, so
 * that the reading thread can work it out (the key compares comm, maps and the rest). */
static inline uint64_t chain_hash(const uint8_t *chain, uint64_t nr, int32_t pid, int32_t tid)
{
	return hash_chain(chain, nr, ((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid) * 0x9E3779B97F4A7C15ULL);
}

static void raw_key(struct pfc_rawkey *k, const struct pfc_session *s, const struct pfc_thread *th,
		    uint32_t evsel, int32_t pid, int32_t tid, uint32_t nr)
{
	memset(k, 0, sizeof(*k));
	k->maps = th->maps;
	k->gen = th->maps->cgen;
	k->kgen = s->machine.kgen;
	k->comm = th->comm;
	k->evsel = evsel;
	k->pid = pid;
	k->tid = tid;
	k->nr = nr;
}

static struct pfc_rawkey *raw_entry(const struct pfc_session *s, uint64_t slot)
{
	uint32_t at = (uint32_t)slot;

	return (struct pfc_rawkey *)(s->raw_blocks[at >> RAW_BLOCK_SHIFT] + (at & (RAW_BLOCK_WORDS - 1)));
}

/* Add the samples counted in the cache to their stacks. */
static void raw_settle(struct pfc_session *s)
{
	size_t b;
	uint64_t at;

	for (b = 0; b < s->raw_nblocks; b++) {
		for (at = 0; at < s->raw_block_used[b];) {
			struct pfc_rawkey *k = (struct pfc_rawkey *)(s->raw_blocks[b] + at);
			struct pfc_stack *st = &s->stacks.stacks[k->stack];
			st->period += k->period;
			st->count += k->count;
			s->st.nr_frames += k->count * st->nr;
			k->period = k->count = 0;
			at += RAWKEY_WORDS + k->nr;
		}
	}
}

/*
 * What a lookup compares an entry's key with: its first five words as the entry holds them,
 * and nr.  Made from values in registers, with two 32-bit fields paired into the word they
 * share: a key built on the stack with 32-bit stores and compared with 64-bit loads (gcc
 * merges the two compares) stalled every probe on store-to-load forwarding.
 */
struct rawprobe {
	uint64_t maps, gen, kgen, comm_evsel, pid_tid;
	uint32_t nr;
};

/*
 * The word that holds the 32-bit `first` and, after it in memory, `second`.  The halves come
 * as 64-bit values: gcc spills a 32-bit value with a 32-bit store and may take it back with a
 * 64-bit load to shift it, a load the store cannot forward to (a stall of the probe's key on
 * every sample, as evsel was).
 */
static inline uint64_t pair32(uint64_t first, uint64_t second)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return first << 32 | (uint32_t)second;
#else
	return second << 32 | (uint32_t)first;
#endif
}

static inline void raw_probe(struct rawprobe *q, const struct pfc_maps *maps, uint64_t gen, uint64_t kgen,
			     uint64_t comm, uint64_t evsel, int32_t pid, int32_t tid, uint32_t nr)
{
	q->maps = (uint64_t)(uintptr_t)maps;
	q->gen = gen;
	q->kgen = kgen;
	q->comm_evsel = pair32(comm, evsel);
	q->pid_tid = pair32((uint32_t)pid, (uint32_t)tid);	/* zero-extended */
	q->nr = nr;
}

_Static_assert(offsetof(struct pfc_rawkey, gen) == 8 && offsetof(struct pfc_rawkey, kgen) == 16 &&
		       offsetof(struct pfc_rawkey, comm) == 24 && offsetof(struct pfc_rawkey, evsel) == 28 &&
		       offsetof(struct pfc_rawkey, pid) == 32 && offsetof(struct pfc_rawkey, tid) == 36,
	       "raw_key_eq reads the key's first five words");

static inline int raw_key_eq(const struct pfc_rawkey *e, const struct rawprobe *q)
{
	uint64_t w[5];

	memcpy(w, e, sizeof(w));	/* maps, gen, kgen, comm and evsel, pid and tid */
	return w[0] == q->maps && w[1] == q->gen && w[2] == q->kgen && w[3] == q->comm_evsel && w[4] == q->pid_tid &&
	       e->nr == q->nr;
}

/* A cached chain against a record's (unaligned) one, compared in place: libc's memcmp
 * takes 32 bytes a step, a third of the instructions of a word loop on 12-frame chains. */
static inline int chain_eq(const uint64_t *e, const uint8_t *chain, uint32_t nr)
{
	return memcmp(e, chain, (size_t)nr * 8) == 0;
}

/* The slot of the entry equal to (k, chain), or the empty slot where it would go. */
static inline __attribute__((always_inline)) uint64_t *raw_lookup(struct pfc_session *s, uint64_t h,
								       const struct rawprobe *k, const uint8_t *chain)
{
	uint64_t tag = RAW_TAG(h), mask = s->raw_cap - 1;
	size_t i;

	for (i = h & mask;; i = (i + 1) & mask) {
		uint64_t *slot = &s->raw[i];
		const uint64_t *e;
		if (!*slot)
			return slot;
		if ((*slot & 0xffffffff00000000ULL) != tag)
			continue;
		e = (const uint64_t *)raw_entry(s, *slot);
		if (raw_key_eq((const struct pfc_rawkey *)e, k) && chain_eq(e + RAWKEY_WORDS, chain, k->nr))
			return slot;
	}
}

/* The cached entry of a sample's raw callchain in its thread's current maps, or NULL;
 * *hash is the chain's hash either way, for raw_insert. */
static inline __attribute__((always_inline)) struct pfc_rawkey *raw_find(struct pfc_session *s, const struct pfc_thread *th, uint64_t evsel, int32_t pid,
				   int32_t tid, const uint8_t *chain, uint32_t nr, uint64_t *hash)
{
	struct rawprobe q;
	uint64_t *slot;

	*hash = s->have_chain_hash ? s->chain_hash : chain_hash(chain, nr, pid, tid);
	if (!s->raw_cap)
		return NULL;
	__asm__("" : "+r"(evsel));	/* a full word to gcc, spilled as one (pair32) */
	raw_probe(&q, th->maps, th->maps->cgen, s->machine.kgen, th->comm, evsel, pid, tid, nr);
	slot = raw_lookup(s, *hash, &q, chain);
	return *slot ? raw_entry(s, *slot) : NULL;
}

/* A sample counted in its cached entry: added to the stack when processing ends. */
static void raw_count(struct pfc_session *s, struct pfc_evsel *ev, struct pfc_rawkey *e, uint64_t period)
{
	s->nr_raw_hits++;
	ev->period_total += period;
	e->period += period;
	e->count++;
}

static int raw_grow(struct pfc_session *s)
{
	size_t cap = s->raw_cap ? s->raw_cap * 2 : 4096, i;
	uint64_t *n = pfc_mem_calloc(cap, sizeof(*n));

	if (!n)
		return -1;
	for (i = 0; i < s->raw_cap; i++) {
		uint64_t v = s->raw[i];
		size_t j;
		if (!v)
			continue;
		for (j = raw_entry(s, v)->hash & (cap - 1); n[j]; j = (j + 1) & (cap - 1))
			;
		n[j] = v;
	}
	free(s->raw);
	s->raw = n;
	s->raw_cap = cap;
	return 0;
}

/* Remember that (k, chain) aggregates into stack.  A full arena is not an error: the
 * chain is then resolved again the next time. */
static int raw_insert(struct pfc_session *s, uint64_t h, struct pfc_rawkey *k, const uint8_t *chain, uint32_t stack)
{
	uint64_t *slot, need = RAWKEY_WORDS + k->nr;
	struct rawprobe q;

	if ((s->raw_count + 1) * 2 > s->raw_cap && raw_grow(s) < 0)
		return -1;
	if (need > RAW_BLOCK_WORDS)
		return 0;
	if (!s->raw_nblocks || s->raw_block_used[s->raw_nblocks - 1] + need > RAW_BLOCK_WORDS) {
		uint64_t *blk;
		if (s->raw_nblocks == RAW_MAX_BLOCKS)
			return 0;
		if (s->raw_nblocks == s->raw_blocks_cap) {
			size_t cap = s->raw_blocks_cap ? s->raw_blocks_cap * 2 : 16;
			uint64_t **nb = realloc(s->raw_blocks, cap * sizeof(*nb));
			uint32_t *nu;
			if (!nb)
				return -1;
			s->raw_blocks = nb;
			nu = realloc(s->raw_block_used, cap * sizeof(*nu));
			if (!nu)
				return -1;
			s->raw_block_used = nu;
			s->raw_blocks_cap = cap;
		}
		if (!(blk = pfc_mem_alloc(RAW_BLOCK_WORDS * sizeof(*blk))))
			return -1;
		s->raw_blocks[s->raw_nblocks] = blk;
		s->raw_block_used[s->raw_nblocks++] = 0;
	}
	raw_probe(&q, k->maps, k->gen, k->kgen, k->comm, k->evsel, k->pid, k->tid, k->nr);
	slot = raw_lookup(s, h, &q, chain);
	if (*slot)
		return 0;
	k->stack = stack;
	k->hash = h;
	k->period = 0;
	k->count = 0;
	{
		size_t b = s->raw_nblocks - 1;
		uint64_t *e = s->raw_blocks[b] + s->raw_block_used[b];
		memcpy(e, k, sizeof(*k));
		memcpy(e + RAWKEY_WORDS, chain, (size_t)k->nr * 8);
		*slot = RAW_TAG(h) | (uint64_t)b << RAW_BLOCK_SHIFT | s->raw_block_used[b];
		s->raw_block_used[b] += (uint32_t)need;
	}
	s->raw_count++;
	return 0;
}

static int push_id(struct pfc_session *s, uint32_t *n, uint32_t id)
{
	if (*n == s->fbuf_cap) {
		size_t cap = s->fbuf_cap ? s->fbuf_cap * 2 : 256;
		uint32_t *nb = realloc(s->fbuf, cap * sizeof(*nb));
		if (!nb)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "frame buffer");
		s->fbuf = nb;
		s->fbuf_cap = cap;
	}
	s->fbuf[(*n)++] = id;
	return 0;
}

static int push_frame(struct pfc_session *s, uint32_t *n, const struct pfc_dso *dso, uint64_t addr, int kernel)
{
	uint32_t id = pfc_stacks_frame(&s->stacks, dso, addr, kernel);

	if (id == UINT32_MAX)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "frame table");
	return push_id(s, n, id);
}

static void load_dso(struct pfc_session *s, struct pfc_dso *d);

/* perf loads the kernel's symbols the first time a kernel address falls in the kernel
 * map, and then stretches that map to the first and last kallsyms symbol: from then on
 * init text beyond _etext resolves too. */
static void load_kernel(struct pfc_session *s)
{
	struct pfc_machine *m = &s->machine;
	const struct pfc_symtab *t;

	s->kernel_loaded = 1;
	m->kgen++;
	/* the first kernel address may fall in a module's map before any record made the kernel's */
	if (!m->kernel)
		m->kernel = pfc_machine_dso_findnew(m, "[kernel.kallsyms]", 17, PFC_DSO_KERNEL, -1);
	if (!m->kernel)
		return;
	if (!m->kernel->loaded)
		load_dso(s, m->kernel);
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

	s->kernel_pending = 0;
	load_kernel(s);
	if (!m->have_kernel_map)
		return;
	for (i = s->kernel_pending_frame0; i < s->stacks.nr_frames; i++) {
		const struct pfc_frame *f = &s->stacks.frames[i];
		int inside = f->addr >= m->kstart && f->addr < m->kend;
		/* the map before the stretch is the recorded one (or none): either way round */
		if ((f->dso == m->kernel && !inside) || (!f->dso && f->kernel && inside))
			s->kernel_preload_conflict = 1;
	}
}

static void kernel_first_hit(struct pfc_session *s)
{
	if (s->kpreload_wanted) {
		s->kpreload_wanted = 0;
		kpreload_start(s);
	}
	if (s->kpreload && !kpreload_done(s)) {
		s->kernel_pending = 1;
		s->kernel_loaded = 1;
		s->kernel_pending_frame0 = s->stacks.nr_frames;
		return;
	}
	load_kernel(s);
}

static void load_dso(struct pfc_session *s, struct pfc_dso *d);

/*
 * Whether perf 6.1 names the code at ip of a user mapping by itself: from the ELF file's
 * symbols (perf inject's jitted-*.so included) or from the perf map of an anonymous
 * region.  A jitdump read directly is looked up only where perf has no name, so that the
 * default never names a frame otherwise than perf does.  It loads the DSO's symbols, once,
 * as symbolization would.
 */
static int perf_names(struct pfc_session *s, const struct pfc_map *map, uint64_t ip)
{
	struct pfc_dso *d = (struct pfc_dso *)map->dso;
	const char *name;
	size_t len;
	uint64_t start;

	switch (d->kind) {
	case PFC_DSO_FILE:
	case PFC_DSO_VDSO:
		if (d->jitted)
			return 1;
		if (!d->loaded)
			load_dso(s, d);
		return d->r2r == PFC_R2R_NONE && d->syms &&
		       pfc_symtab_find(d->syms, map->identity ? ip : ip - map->start + map->pgoff);
	case PFC_DSO_PERFMAP:
		if (!d->loaded)
			load_dso(s, d);
		return d->perfmap && pfc_perfmap_resolve(d->perfmap, ip, 0, &name, &len, &start) > 0;
	default:
		return 0;
	}
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

	s->kdef_tried = 1;
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
static const struct pfc_map *kernel_touch(struct pfc_session *s, struct pfc_thread *th, uint64_t ip)
{
	const struct pfc_map *map;

	if (!s->machine.have_kernel_map && !s->kdef_tried)
		kernel_default_range(s);
	/* an address beyond the recorded kernel map (init text, modules) waits for the table */
	if (s->kernel_pending && (kpreload_done(s) || !pfc_machine_find_map(&s->machine, th, 1, ip)))
		kernel_stretch_pending(s);
	map = pfc_machine_find_map(&s->machine, th, 1, ip);
	if (map && !s->kernel_loaded)
		kernel_first_hit(s);
	return map;
}

/*
 * A user address's frame, once found, for the mappings it was found in: a .NET process's
 * frames cost a map lookup, perf's symbol lookup, a jitdump and a perf-map lookup each, and
 * the same few thousand addresses come back sample after sample (a quarter of converting
 * an ASP.NET recording).  Direct-mapped; an answer that depended on the time (a jitdump
 * read by time, or not yet checked against the process) is not kept.
 */
#define UCACHE_BITS 15
struct pfc_ucache_ent {
	const struct pfc_maps *maps;
	uint64_t gen, ip;
	uint32_t id;                  /* frame id + 1; 0: empty */
};

static struct pfc_ucache_ent *ucache_slot(struct pfc_session *s, const struct pfc_maps *maps, uint64_t ip)
{
	uint64_t h = (ip ^ (uint64_t)(uintptr_t)maps * 0x9E3779B97F4A7C15ULL) * 0xbf58476d1ce4e5b9ULL;

	if (!s->ucache && !(s->ucache = calloc((size_t)1 << UCACHE_BITS, sizeof(*s->ucache))))
		return NULL;
	return &s->ucache[h >> (64 - UCACHE_BITS)];
}

static int add_ip_lookup(struct pfc_session *s, struct pfc_thread *th, uint32_t *n, int cpumode, uint64_t ip);

static int add_ip(struct pfc_session *s, struct pfc_thread *th, uint32_t *n, int cpumode, uint64_t ip)
{
	struct pfc_ucache_ent *e;
	int timed = s->cur_timed, ret, kernel = 0;
	uint32_t before = *n;
	const struct pfc_maps *maps;
	uint64_t gen;

	if (cpumode == PERF_RECORD_MISC_USER && th->maps) {
		maps = th->maps;
		gen = maps->cgen;
	} else if (cpumode == PERF_RECORD_MISC_KERNEL && s->kernel_loaded && !s->kernel_pending &&
		   s->machine.have_kernel_map) {
		/* the kernel's frames, the same in every thread once its map and symbols are in,
		 * under a key no thread's maps have */
		maps = (const struct pfc_maps *)&s->machine;
		gen = s->machine.kgen;
		kernel = 1;
	} else {
		return add_ip_lookup(s, th, n, cpumode, ip);
	}
	if (!(e = ucache_slot(s, maps, ip))) {
		if (!kernel)
			pfc_maps_watch(th->maps, ip);
		return add_ip_lookup(s, th, n, cpumode, ip);
	}
	if (e->id && e->ip == ip && e->maps == maps && e->gen == gen)
		return push_id(s, n, e->id - 1);
	/* a user address looked up under the maps' cgen, which this cache and the callchain
	 * cache may keep: the maps watch it (the lookup finds the same map) */
	if (!kernel)
		pfc_maps_watch(th->maps, ip);
	s->cur_timed = 0;
	ret = add_ip_lookup(s, th, n, cpumode, ip);
	/* with --resolve-jit, a process's jitdump, once read, is looked up for its other
	 * mappings too: only then do its answers stay.  A kernel frame is kept only if looking
	 * it up left the kernel's map as it was. */
	if (ret == 0 && !s->cur_timed && *n == before + 1 &&
	    (kernel ? s->machine.kgen == gen && !s->kernel_pending :
	     !s->opts->resolve_jit || pfc_jitsyms_settled(&s->jit, th->pid))) {
		e->maps = maps;
		e->gen = gen;
		e->ip = ip;
		e->id = s->fbuf[*n - 1] + 1;
	}
	s->cur_timed |= timed;
	return ret;
}

/* The frame at ip in map (NULL: in no map), kernel or user. */
static int add_map_frame(struct pfc_session *s, struct pfc_thread *th, uint32_t *n, int kernel, uint64_t ip,
			 const struct pfc_map *map)
{
	if (!map)
		return push_frame(s, n, NULL, ip, kernel);
	/*
	 * JIT code where perf 6.1 leaves it unresolved, so only on request (--resolve-jit;
	 * the default output stays perf's):
	 *  - .NET 7+ (W^X) runs JIT code from "/memfd:doublemapper (deleted)" mappings, which
	 *    perf does not count as anonymous, so it never consults the perf map for them;
	 *  - perf reads a jitdump only after perf inject --jit; here it is read directly, and
	 *    its frames are named as perf inject names them (jitted-PID-N.so), so that the
	 *    output equals perf's on the injected file;
	 *  - a container runtime names its files with its own pid (jitsym.c).
	 * A jitdump also describes code outside JIT regions (V8's embedded builtins live in
	 * the node binary, CoreCLR's [PreJIT] code in ReadyToRun images), and perf inject's
	 * mappings cover whatever was there, so in a process with a jitdump every user
	 * address is looked up in it first.
	 * The address looked up is the absolute ip: perf maps and jitdumps hold the
	 * executable (RX) addresses.
	 */
	if (s->opts->resolve_jit && !kernel && map->dso && pfc_jitsyms_wants(&s->jit, th->pid, map) &&
	    !perf_names(s, map, ip)) {
		const struct pfc_dso *dso = map->dso;
		uint64_t addr = 0;
		int ret = pfc_jitsyms_lookup(&s->jit, th->pid, map, ip, s->cur_time, s->cur_have_time, &dso, &addr,
					     &s->cur_timed);
		if (ret < 0)
			return ret;
		if (dso != map->dso)
			return push_frame(s, n, dso, addr, kernel);
	}
	return push_frame(s, n, map->dso, map->identity ? ip : ip - map->start + map->pgoff, kernel);
}

/* One frame at ip, looked up: its map in the thread's address space (user) or the kernel's. */
static int add_ip_lookup(struct pfc_session *s, struct pfc_thread *th, uint32_t *n, int cpumode, uint64_t ip)
{
	const struct pfc_map *map = NULL;
	int kernel = cpumode == PERF_RECORD_MISC_KERNEL;

	if (kernel)
		map = kernel_touch(s, th, ip);
	else if (cpumode == PERF_RECORD_MISC_USER)
		map = pfc_machine_find_map(&s->machine, th, 0, ip);
	return add_map_frame(s, th, n, kernel, ip, map);
}

/* ---- --call-graph dwarf: the user part of a stack, unwound from the copied stack ---- */

struct pfc_dwarf_dso {
	struct pfc_cfi *cfi;
	struct pfc_a2l *a2l;
	char *symsrc;                 /* the file the symbols came from (perf's symsrc_filename) */
	uint8_t cfi_tried, a2l_tried;
};

struct pfc_inl_ent {                 /* (DSO, address) -> inline names of that frame; none: a plain frame */
	uint64_t addr;
	uint32_t dso;                 /* id + 1; 0 = empty slot */
	uint32_t first, n;            /* in inl_names */
};

struct pfc_inl_name {
	uint32_t name;                /* interned name + 1, 0 = the symbol itself */
	uint32_t fid;                 /* its frame's id, UINT32_MAX until the first use */
};

struct pfc_uc_ent {                  /* one user stack already unwound */
	uint64_t h1, h2;
	const struct pfc_maps *maps;
	uint64_t gen;
	uint32_t first, n;            /* frame ids in uc_frames */
	uint8_t used;
};

static struct pfc_dwarf_dso *dwarf_dso(struct pfc_session *s, const struct pfc_dso *d)
{
	if (d->id >= s->nr_ddso) {
		size_t n = s->nr_ddso ? s->nr_ddso : 64;
		struct pfc_dwarf_dso *v;
		while (n <= d->id)
			n *= 2;
		v = realloc(s->ddso, n * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + s->nr_ddso, 0, (n - s->nr_ddso) * sizeof(*v));
		s->ddso = v;
		s->nr_ddso = n;
	}
	return &s->ddso[d->id];
}

const char *pfc_session_dso_symsrc(const struct pfc_session *s, const struct pfc_dso *d)
{
	return d && d->id < s->nr_ddso ? s->ddso[d->id].symsrc : NULL;
}

static void dwarf_dso_free(struct pfc_session *s)
{
	size_t i;

	for (i = 0; i < s->nr_ddso; i++) {
		pfc_cfi_close(s->ddso[i].cfi);
		pfc_a2l_close(s->ddso[i].a2l);
		free(s->ddso[i].symsrc);
	}
	free(s->ddso);
	free(s->inl);
	free(s->inl_names);
	free(s->uc);
	free(s->uc_frames);
	free(s->uips);
	free(s->rv_keys);
	free(s->rv_vals);
}

/*
 * An Android library mapped straight from its .apk, which keeps it uncompressed: the map's
 * name is simpleperf's "/data/app/x/base.apk!/lib/arm64-v8a/libx.so", its offset the .apk's.
 * The build-id, when the recording gives one, is the library's: checked here, not by files.c.
 */
static struct pfc_cfi *apk_cfi(struct pfc_session *s, const struct pfc_dso *d, const char **why)
{
	const char *bang = strstr(d->name, ".apk!/");
	struct pfc_found found;
	struct pfc_cfi *c;
	uint8_t id[20];
	char apk[4096];
	size_t n = (size_t)(bang - d->name) + 4;
	int k;

	*why = "no file";
	if (n >= sizeof(apk))
		return NULL;
	memcpy(apk, d->name, n);
	apk[n] = 0;
	if (!pfc_files_find(s->files, PFC_FILES_ROOT, apk, 0, &found) ||
	    !(c = pfc_cfi_open_in_zip(found.path, bang + 6, why)))
		return NULL;
	if (d->build_id_len && ((k = pfc_cfi_build_id(c, id, sizeof(id))) <= 0 ||
				!pfc_build_id_equal(d->build_id, (int)d->build_id_len, id, k))) {
		*why = "another build-id";
		pfc_cfi_close(c);
		return NULL;
	}
	pfc_files_note(s->files, PFC_FILES_ROOT, apk, "call frame information", -1, NULL, 0);
	return c;
}

/* The CFI of a file DSO, opened at first use: perf reads it from the binary itself. */
static struct pfc_cfi *dso_cfi(struct pfc_session *s, const struct pfc_dso *d)
{
	struct pfc_dwarf_dso *dd;
	struct pfc_found found;
	const char *why = "no file";

	if (d->kind != PFC_DSO_FILE || d->jitted)
		return NULL;
	dd = dwarf_dso(s, d);
	if (!dd)
		return NULL;
	if (!dd->cfi_tried) {
		dd->cfi_tried = 1;
		/* perf reads it from the binary itself; a build-id proves it is the recorded one */
		if (strstr(d->name, ".apk!/"))	/* perf 6.1 finds no file of that name */
			dd->cfi = s->opts->perf_compat ? NULL : apk_cfi(s, d, &why);
		else if (pfc_files_find(s->files, PFC_FILES_ROOT, d->name, d->build_id_len ? PFC_FILES_VERIFIED : 0, &found) &&
		    (dd->cfi = pfc_cfi_open(found.path, &why)))
			pfc_files_note(s->files, PFC_FILES_ROOT, d->name, "call frame information", -1,
				       d->build_id, d->build_id_len);
		if (!dd->cfi && s->opts->verbose && s->opts->log)
			fprintf(s->opts->log, "perfconv: '%s': no call frame information (%s)\n", d->name, why);
	}
	return dd->cfi;
}

struct find_arg {
	struct pfc_session *s;
	struct pfc_thread *th;
};

static int unwind_find(void *arg, uint64_t addr, struct pfc_unwind_map *out)
{
	struct find_arg *fa = arg;
	const struct pfc_map *map = pfc_machine_find_map(&fa->s->machine, fa->th, 0, addr);

	if (!map)
		return -1;
	out->start = map->start;
	out->end = map->end;
	out->pgoff = map->pgoff;
	out->cfi = map->dso ? dso_cfi(fa->s, map->dso) : NULL;
	/* ReadyToRun code in a PE image has no CFI either, and keeps frame pointers like the
	 * JIT's code: crossed the same way (a wait in CoreLib's Monitor.Enter reaches its caller) */
	out->jit = !map->dso || map->identity || pfc_dso_is_jit_region(map->dso->kind) ||
		   map->dso->kind == PFC_DSO_JITCODE || map->dso->kind == PFC_DSO_PE || map->dso->jitted;
	return 0;
}

static uint64_t mixh(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

/*
 * Two independent 64-bit hashes of the registers and the stack bytes: the cache key.
 * Every byte of every copy passes through here (the recording's bulk), so the stack
 * words go round four independent lanes per hash: one chain would wait on each multiply.
 */
static void stack_hash2(const struct pfc_sample *smp, uint64_t *h1, uint64_t *h2)
{
	uint64_t a = 0x243f6a8885a308d3ULL ^ smp->regs_user_mask, b = 0x13198a2e03707344ULL ^ smp->stack_user_dyn_size;
	uint64_t la[4] = { 0x452821e638d01377ULL, 0xbe5466cf34e90c6cULL, 0xc0ac29b7c97c50ddULL, 0x3f84d5b5b5470917ULL };
	uint64_t lb[4] = { 0x9216d5d98979fb1bULL, 0xd1310ba698dfb5acULL, 0x2ffd72dbd01adfb7ULL, 0xb8e1afed6a267e96ULL };
	size_t i, k, nr = (size_t)__builtin_popcountll(smp->regs_user_mask) * 8, ns = smp->stack_user_dyn_size;
	uint64_t w;

	for (i = 0; i + 8 <= nr; i += 8) {
		memcpy(&w, smp->regs_user + i, 8);
		a = mixh(a, w);
		b = mixh(b + i, w ^ 0xa5a5a5a5a5a5a5a5ULL);
	}
	for (i = 0; i + 32 <= ns; i += 32) {
		for (k = 0; k < 4; k++) {
			memcpy(&w, smp->stack_user + i + k * 8, 8);
			la[k] = mixh(la[k], w);
			lb[k] = (lb[k] ^ w) * 0xff51afd7ed558ccdULL + (lb[k] >> 31);
		}
	}
	for (k = 0; k < 4; k++) {
		a = mixh(a, la[k]);
		b = mixh(b, lb[k] ^ 0x5bd1e9955bd1e995ULL);
	}
	for (; i + 8 <= ns; i += 8) {
		memcpy(&w, smp->stack_user + i, 8);
		a = mixh(a, w);
		b = (b ^ w) * 0xff51afd7ed558ccdULL + (b >> 31);
	}
	for (; i < ns; i++) {
		a = mixh(a, smp->stack_user[i]);
		b = mixh(b, smp->stack_user[i] + 0x100);
	}
	*h1 = a;
	*h2 = b ^ (b >> 33);
}

static struct pfc_uc_ent *uc_slot(struct pfc_session *s, uint64_t h1, uint64_t h2, const struct pfc_maps *maps)
{
	size_t j;

	if (!s->uc_cap)
		return NULL;
	j = (size_t)h1 & (s->uc_cap - 1);
	while (s->uc[j].used) {
		struct pfc_uc_ent *e = &s->uc[j];
		if (e->h1 == h1 && e->h2 == h2 && e->maps == maps && e->gen == maps->gen)
			return e;
		j = (j + 1) & (s->uc_cap - 1);
	}
	return &s->uc[j];
}

static int uc_insert(struct pfc_session *s, uint64_t h1, uint64_t h2, const struct pfc_maps *maps,
		     const uint32_t *frames, uint32_t n)
{
	struct pfc_uc_ent *e;

	if ((s->uc_count + 1) * 2 > s->uc_cap) {
		size_t cap = s->uc_cap ? s->uc_cap * 2 : 1024, i;
		struct pfc_uc_ent *old = s->uc, *nv = calloc(cap, sizeof(*nv));
		size_t ocap = s->uc_cap;
		if (!nv)
			return -1;
		s->uc = nv;
		s->uc_cap = cap;
		for (i = 0; i < ocap; i++)
			if (old[i].used) {
				size_t j = (size_t)old[i].h1 & (cap - 1);
				while (nv[j].used)
					j = (j + 1) & (cap - 1);
				nv[j] = old[i];
			}
		free(old);
	}
	if (s->nr_uc_frames + n > s->cap_uc_frames) {
		size_t cap = s->cap_uc_frames ? s->cap_uc_frames * 2 : 4096;
		uint32_t *nf;
		while (cap < s->nr_uc_frames + n)
			cap *= 2;
		nf = realloc(s->uc_frames, cap * sizeof(*nf));
		if (!nf)
			return -1;
		s->uc_frames = nf;
		s->cap_uc_frames = cap;
	}
	e = uc_slot(s, h1, h2, maps);
	if (e->used)
		return 0;
	e->used = 1;
	e->h1 = h1;
	e->h2 = h2;
	e->maps = maps;
	e->gen = maps->gen;
	e->first = (uint32_t)s->nr_uc_frames;
	e->n = n;
	if (n)
		memcpy(s->uc_frames + s->nr_uc_frames, frames, n * sizeof(*frames));
	s->nr_uc_frames += n;
	s->uc_count++;
	return 0;
}

/*
 * addr2line (BFD) reads a file without DWARF through its separate debug file: the first of
 * .build-id/xx/yyyy.debug relative to perf's working directory, the same under .debug/, and
 * /usr/lib/debug/.build-id/xx/yyyy.debug, of this machine whatever --symfs says, whose
 * build-id is the file's.  The last one is the one that matters (libc6-dbg's files are
 * there): a symbols-only libc debug file under --symfs names libc's frames from its
 * symbols, the host's libc6-dbg file from its DWARF (__libc_start_main_impl).  The file
 * is found by build-id and checked, so the answers are the recorded binary's, in the
 * default mode as with --perf-compat.  (The two working-directory paths, and the
 * .gnu_debuglink BFD follows when there is no build-id file, are left out.)
 */
static void a2l_separate(struct pfc_session *s, struct pfc_a2l *a, const char *symsrc)
{
	static const char digits[] = "0123456789abcdef";
	uint8_t bid[20], have[20];
	int len = 0, have_len = 0, i;
	char hex[41];
	struct pfc_found found;

	if (!a || pfc_a2l_has_dwarf(a) || pfc_elf_build_id(symsrc, bid, &len) != 0 || len <= 0)
		return;
	for (i = 0; i < len; i++) {
		hex[2 * i] = digits[bid[i] >> 4];
		hex[2 * i + 1] = digits[bid[i] & 15];
	}
	hex[2 * len] = '\0';
	if (!pfc_files_findf(s->files, PFC_FILES_HOST, PFC_FILES_VERIFIED, &found,
			     "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2))
		return;
	if (pfc_elf_build_id(found.path, have, &have_len) != 0 || have_len != len || memcmp(have, bid, len))
		return;
	if (pfc_a2l_separate(a, found.path) == 0)
		pfc_files_note(s->files, found.base, found.rel, "debug file (DWARF) addr2line reads", -1, bid, len);
}

/*
 * The names perf gives the frames at one address of a DSO (append_inlines, perf 6.1):
 * it asks addr2line about the file its symbols came from; every record addr2line prints
 * becomes a frame at that address, the record that names perf's own symbol as that
 * symbol, the others "(inlined)".  No record: the plain frame.
 */
static struct pfc_inl_ent *inline_names(struct pfc_session *s, const struct pfc_dso *d, uint64_t addr)
{
	const struct pfc_sym *sym;
	struct pfc_inl_ent *e;
	struct pfc_dwarf_dso *dd;
	const char *names[64];
	size_t j;
	int n, i;

	if ((s->inl_count + 1) * 2 > s->inl_cap) {
		size_t cap = s->inl_cap ? s->inl_cap * 2 : 1024, k;
		struct pfc_inl_ent *nv = calloc(cap, sizeof(*nv));
		if (!nv)
			return NULL;
		for (k = 0; k < s->inl_cap; k++)
			if (s->inl[k].dso) {
				size_t h = (size_t)mixh(s->inl[k].addr, s->inl[k].dso) & (cap - 1);
				while (nv[h].dso)
					h = (h + 1) & (cap - 1);
				nv[h] = s->inl[k];
			}
		free(s->inl);
		s->inl = nv;
		s->inl_cap = cap;
	}
	j = (size_t)mixh(addr, d->id + 1) & (s->inl_cap - 1);
	while (s->inl[j].dso) {
		if (s->inl[j].dso == d->id + 1 && s->inl[j].addr == addr)
			return &s->inl[j];
		j = (j + 1) & (s->inl_cap - 1);
	}
	e = &s->inl[j];
	e->dso = d->id + 1;
	e->addr = addr;
	e->first = (uint32_t)s->nr_inl_names;
	e->n = 0;
	s->inl_count++;
	/* an address outside every symbol is a plain frame */
	sym = d->syms ? pfc_symtab_find(d->syms, addr) : NULL;
	if (!sym)
		return e;
	dd = dwarf_dso(s, d);
	if (!dd || !dd->symsrc)
		return e;
	if (!dd->a2l_tried) {
		dd->a2l_tried = 1;
		dd->a2l = pfc_a2l_open(dd->symsrc, s->opts->perf_compat ? NULL : s->opts->cache_dir);
		a2l_separate(s, dd->a2l, dd->symsrc);
		switch (pfc_a2l_cache_state(dd->a2l)) {
		case PFC_DWIMG_HIT:
			s->st.nr_dcache_hits++;
			break;
		case PFC_DWIMG_CORRUPT:
			s->st.nr_dcache_corrupt++;
			/* fall through */
		case PFC_DWIMG_MISS:
			s->st.nr_dcache_misses++;
			break;
		default:
			break;
		}
	}
	if (!dd->a2l)
		return e;
	n = pfc_a2l_lookup(dd->a2l, addr + pfc_a2l_text_offset(dd->a2l), names, 64);
	if (s->nr_inl_names + (size_t)n > s->cap_inl_names) {
		size_t cap = s->cap_inl_names ? s->cap_inl_names * 2 : 1024;
		struct pfc_inl_name *nn;
		while (cap < s->nr_inl_names + (size_t)n)
			cap *= 2;
		nn = realloc(s->inl_names, cap * sizeof(*nn));
		if (!nn)
			return NULL;
		s->inl_names = nn;
		s->cap_inl_names = cap;
	}
	for (i = 0; i < n; i++) {
		char *dm = pfc_demangle(names[i]);
		const char *nm = dm ? dm : names[i];
		uint32_t id = 0;
		if (strcmp(nm, sym->name)) {
			id = pfc_intern(&s->strings, nm, strlen(nm));
			if (id == UINT32_MAX) {
				free(dm);
				return NULL;
			}
			id++;
		}
		free(dm);
		s->inl_names[s->nr_inl_names].name = id;
		s->inl_names[s->nr_inl_names++].fid = UINT32_MAX;
	}
	e->n = (uint32_t)n;
	return e;
}

/* One unwound user frame, with the inlined frames perf adds in front of it. */
static int add_unwound(struct pfc_session *s, struct pfc_thread *th, uint32_t *n, uint64_t ip)
{
	const struct pfc_map *map = pfc_machine_find_map(&s->machine, th, 0, ip);
	struct pfc_dso *d = map ? map->dso : NULL;
	const struct pfc_inl_ent *e;
	uint64_t addr;
	uint32_t i;

	if (!d || d->kind != PFC_DSO_FILE || map->identity)
		return add_map_frame(s, th, n, 0, ip, map);
	addr = ip - map->start + map->pgoff;
	if (!d->loaded)
		load_dso(s, d);
	e = inline_names(s, d, addr);
	if (!e)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "inline frames");
	if (!e->n)
		return add_map_frame(s, th, n, 0, ip, map);
	for (i = 0; i < e->n; i++) {
		struct pfc_inl_name *in = &s->inl_names[e->first + i];
		int ret;
		/* the frame of a (DSO, address, name) is the same for the whole session */
		if (in->fid == UINT32_MAX &&
		    (in->fid = pfc_stacks_frame_inl(&s->stacks, d, addr, 0, in->name)) == UINT32_MAX)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "frame table");
		if ((ret = push_id(s, n, in->fid)) < 0)
			return ret;
	}
	return 0;
}

#define UC_WINDOW 512	/* a quarter of hits shows in 512 stacks; each costs a hash of its copy */
#define UC_OFF (64 * 1024)

/*
 * The architecture whose registers a sample's user registers are (feature ARCH; without it,
 * x86-64 as ever).  perf 6.1 on x86-64 has no unwinder for another one ("unwind: target
 * platform=arm64 is not supported"): perf-compat unwinds no user stack there (perf_unwinds).
 */
static int unwind_arch(struct pfc_session *s)
{
	const struct pfc_blob *b = &s->rd.feat[PFC_FEAT_ARCH];
	struct pfc_cursor c;
	const char *a;
	uint32_t len;

	if (s->unwind_arch >= 0)
		return s->unwind_arch;
	s->unwind_arch = PFC_UNWIND_X86_64;
	if (!pfc_feat_has(&s->rd, PFC_FEAT_ARCH))
		return s->unwind_arch;
	pfc_cur_init(&c, b->data, b->size, s->rd.swap);
	len = pfc_cur_u32(&c);
	a = (const char *)pfc_cur_bytes(&c, len);
	if (a && len)
		s->unwind_arch = (int)pfc_unwind_arch_of(a, strnlen(a, len));
	return s->unwind_arch;
}

/*
 * perf-compat: perf 6.1 gives an address space its DWARF unwinder only when one of its maps
 * has an ELF file perf can read, to learn its class (unwind__prepare_access, at each map's
 * insertion, until one does); without one, a sample's user stack gets no frame at all, not
 * even its ip.  A static binary absent here, beside a [vdso] whose build-id the recording
 * gives (perf then looks for that image in the build-id cache only), is such a process.
 * Readable here: a file with call frame information, or a [vdso] without a build-id (perf
 * reads its own).  Once one is seen, the address space keeps it, as perf's does.
 */
static int perf_unwinds(struct pfc_session *s, struct pfc_thread *th)
{
	struct pfc_maps *ms = th->maps;
	size_t i;

	if (!s->opts->perf_compat || !ms || ms->unwindable)
		return 1;
	if (unwind_arch(s) != PFC_UNWIND_X86_64)
		return 0;
	for (i = 0; i < ms->n && !ms->unwindable; i++) {
		const struct pfc_dso *d = ms->v[i].dso;
		if (d && ((d->kind == PFC_DSO_VDSO && !d->build_id_len) ||
			  (d->kind == PFC_DSO_FILE && dso_cfi(s, d))))
			ms->unwindable = 1;
	}
	return ms->unwindable;
}

/*
 * perf's thread__resolve_callchain_unwind: the user stack of a sample recorded with
 * REGS_USER and STACK_USER, unwound and appended after the kernel part.  A stack seen
 * before (same registers, same bytes, same address space) gets the frames it got then.
 */
static int unwind_user(struct pfc_session *s, struct pfc_evsel *ev, struct pfc_thread *th,
		       const struct pfc_sample *smp, uint32_t *n)
{
	struct pfc_unwind_in in = {
		/* the sample's ip stands for the pc only of a sample taken in user mode */
		.arch = unwind_arch(s), .abi = smp->regs_user_abi,
		.ip = (smp->misc & PFC_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER ? smp->ip : 0,
		.regs = smp->regs_user, .mask = smp->regs_user_mask, .swap = s->rd.swap,
		.stack = smp->stack_user, .stack_size = smp->stack_user_dyn_size,
		.beyond_perf = s->opts->resolve_jit,
	};
	struct pfc_unwind_out out = { 0 };
	struct find_arg fa = { s, th };
	struct pfc_uc_ent *e;
	uint64_t h1, h2;
	uint32_t n0 = *n;
	int i, ret, timed = s->cur_timed;

	(void)ev;
	if (!(smp->flags & PFC_S_HAS_REGS_USER) || !(smp->flags & PFC_S_HAS_STACK_USER) ||
	    !smp->stack_user_dyn_size || !perf_unwinds(s, th))
		return 0;
	/*
	 * The key reads every byte of the copy, the unwinder only the frames it walks: about
	 * as much work as unwinding and naming the stack again.  So the cache pays only where
	 * stacks repeat (a thread waiting, a tight loop): each window of UC_WINDOW lookups
	 * with fewer than a quarter of hits turns it off for the next UC_OFF stacks.  The
	 * output is the same either way.
	 */
	if (!s->uc_window) {
		const char *w = getenv("PERFCONV_UC_WINDOW");
		s->uc_window = w && atoi(w) > 0 ? (uint32_t)atoi(w) : UC_WINDOW;
	}
	if (s->uc_off) {
		s->uc_off--;
		e = NULL;
		h1 = h2 = 0;
	} else {
		stack_hash2(smp, &h1, &h2);
		h2 ^= (uint64_t)in.beyond_perf;
		h1 ^= in.arch == PFC_UNWIND_UNKNOWN ? in.ip : 0;	/* its one frame is the ip */
		e = uc_slot(s, h1, h2, th->maps);
		s->uc_hit += e && e->used;
		if (++s->uc_probed == s->uc_window) {
			if (s->uc_hit < s->uc_window / 4)
				s->uc_off = s->uc_window * (UC_OFF / UC_WINDOW);
			s->uc_probed = s->uc_hit = 0;
		}
	}
	if (e && e->used) {
		s->st.nr_dwarf_cache_hits++;
		s->st.nr_dwarf_unwound++;
		for (i = 0; i < (int)e->n; i++)
			if ((ret = push_id(s, n, s->uc_frames[e->first + i])) < 0)
				return ret;
		return 0;
	}
	if (!s->uips && !(s->uips = malloc(sizeof(*s->uips) * (size_t)(s->opts->max_stack > 0 ? s->opts->max_stack : 1))))
		return PFC_FAIL_NOOFF(s->err, NOMEM, "unwind buffer");
	out.ips = s->uips;
	out.max = s->opts->max_stack > 0 ? s->opts->max_stack : 1;
	pfc_unwind_walk(&in, unwind_find, &fa, &out);
	s->st.nr_dwarf_unwound++;
	s->st.nr_dwarf_fp_frames += (uint64_t)out.fp_frames;
	switch (out.end) {
	case PFC_UNWIND_END_STACK:
		s->st.nr_dwarf_cut_stack++;
		break;
	case PFC_UNWIND_END_NOREGS:
		s->st.nr_dwarf_bad_regs++;
		break;
	case PFC_UNWIND_END_BADCFI:
		s->st.nr_dwarf_bad_cfi++;
		break;
	default:
		break;
	}
	for (i = 0; i < out.n; i++) {
		/* perf skips a zero address, and keeps everything else, unresolved or not */
		if (!out.ips[i])
			continue;
		if ((ret = add_unwound(s, th, n, out.ips[i])) < 0)
			return ret;
	}
	s->cur_timed |= timed;
	/* no frame yet in the whole sample leaves the frame buffer NULL: no pointer into it */
	if (!s->cur_timed && !s->uc_off && uc_insert(s, h1, h2, th->maps, s->fbuf ? s->fbuf + n0 : NULL, *n - n0) < 0)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "unwind cache");
	return 0;
}

/* The user part of an LBR call stack, as perf 6.1 builds it (see the caller). */
static int add_lbr(struct pfc_session *s, struct pfc_thread *th, uint32_t *n, const struct pfc_sample *smp,
		   int swap)
{
	uint64_t i;
	int ret;

	if ((ret = add_ip(s, th, n, PERF_RECORD_MISC_USER, pfc_ld64(smp->branch + 8, swap))) < 0)
		return ret;
	for (i = 0; i < smp->branch_nr; i++)
		if ((ret = add_ip(s, th, n, PERF_RECORD_MISC_USER, pfc_ld64(smp->branch + i * 24, swap))) < 0)
			return ret;
	return 0;
}

/* Keep a sample in the time-ordered stream. */
static int keep_sample(struct pfc_session *s, const struct pfc_sample *smp, uint32_t stack)
{
	struct pfc_srec r;

	memset(&r, 0, sizeof(r));
	r.time = smp->flags & PFC_S_HAS_TIME ? smp->time : 0;
	r.period = smp->flags & PFC_S_HAS_PERIOD ? smp->period : 0;
	r.ip = smp->ip;
	r.addr = smp->addr;
	r.weight = smp->weight;
	r.data_src = smp->data_src;
	r.stack = stack;
	r.cpu = smp->flags & PFC_S_HAS_CPU ? smp->cpu : UINT32_MAX;
	r.misc = smp->misc;
	r.flags = (uint16_t)smp->flags;
	/* perf record -c N: no PERIOD field, every sample stands for the attr's fixed period,
	 * which perf script prints (tracepoints excepted) */
	if (!(smp->flags & PFC_S_HAS_PERIOD) && smp->evsel && smp->evsel->attr.type != PERF_TYPE_TRACEPOINT &&
	    !smp->evsel->attr.freq && smp->evsel->attr.sample_period) {
		r.period = smp->evsel->attr.sample_period;
		r.flags |= PFC_S_HAS_PERIOD;
	}
	r.raw = smp->raw;
	r.raw_len = smp->raw_size;
	if (stack >= s->nr_stream_per_stack) {
		size_t n = s->nr_stream_per_stack ? s->nr_stream_per_stack * 2 : 4096;
		uint64_t *c;
		while (n <= stack)
			n *= 2;
		if (!(c = realloc(s->stream_per_stack, n * sizeof(*c))))
			return PFC_FAIL_NOOFF(s->err, NOMEM, "sample stream");
		memset(c + s->nr_stream_per_stack, 0, (n - s->nr_stream_per_stack) * sizeof(*c));
		s->stream_per_stack = c;
		s->nr_stream_per_stack = n;
	}
	s->stream_per_stack[stack]++;
	if (pfc_stream_add(&s->stream, &r) < 0)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "sample stream (memory or temporary file)");
	return 0;
}

/* 1: keep the sample, 0: filtered out, < 0: error (percentages without sample times).
 * perf script filters in the same place: after the thread is found, before anything is
 * resolved or counted as printed.  any_time: only the thread filters apply (a sample that
 * starts an off-CPU interval, which offcpu.c clips to the --time window itself). */
static int filter_sample(struct pfc_session *s, const struct pfc_sample *smp, const struct pfc_thread *th,
			 int any_time)
{
	struct pfc_filter *f = s->opts->filter;
	uint64_t t = smp->flags & PFC_S_HAS_TIME ? smp->time : 0;

	if (f->time_str && !f->time_resolved) {
		uint64_t first = 0, last = 0;
		const struct pfc_blob *b = &s->rd.feat[PFC_FEAT_SAMPLE_TIME];
		if (pfc_feat_has(&s->rd, PFC_FEAT_SAMPLE_TIME) && b->data && b->size >= 16) {
			first = pfc_ld64(b->data, s->rd.swap);
			last = pfc_ld64(b->data + 8, s->rd.swap);
		}
		int ret = pfc_filter_resolve_time(f, first, last, s->err);
		if (ret < 0)
			return ret;
	}
	if (!any_time && !pfc_filter_time_keep(f, t))
		return 0;
	return pfc_filter_thread_keep(f, th->pid, th->tid, pfc_intern_str(&s->strings, th->comm));
}

static int deliver_sample(struct pfc_session *s, struct pfc_evsel *ev, const struct pfc_sample *smp);

/* The slot of a counter id's last value (perf's sid->period), created at 0. */
static uint64_t *read_last(struct pfc_session *s, uint64_t id)
{
	size_t j;

	if (id == UINT64_MAX)	/* its key, id + 1, would be the empty slot's */
		return &s->rv_last_max;
	if ((s->rv_count + 1) * 2 > s->rv_cap) {
		size_t cap = s->rv_cap ? s->rv_cap * 2 : 64, k;
		uint64_t *nk = calloc(cap, sizeof(*nk)), *nv = calloc(cap, sizeof(*nv));
		if (!nk || !nv) {
			free(nk);
			free(nv);
			return NULL;
		}
		for (k = 0; k < s->rv_cap; k++)
			if (s->rv_keys[k]) {
				j = (size_t)(s->rv_keys[k] * 0x9e3779b97f4a7c15ULL) & (cap - 1);
				while (nk[j])
					j = (j + 1) & (cap - 1);
				nk[j] = s->rv_keys[k];
				nv[j] = s->rv_vals[k];
			}
		free(s->rv_keys);
		free(s->rv_vals);
		s->rv_keys = nk;
		s->rv_vals = nv;
		s->rv_cap = cap;
	}
	j = (size_t)((id + 1) * 0x9e3779b97f4a7c15ULL) & (s->rv_cap - 1);
	while (s->rv_keys[j]) {
		if (s->rv_keys[j] == id + 1)
			return &s->rv_vals[j];
		j = (j + 1) & (s->rv_cap - 1);
	}
	s->rv_keys[j] = id + 1;
	s->rv_vals[j] = 0;
	s->rv_count++;
	return &s->rv_vals[j];
}

/*
 * Most samples of a recording repeat a callchain already seen in the same thread and maps,
 * and only count there.  Such a sample is looked up straight from its record, through the
 * event's fixed layout, before it is decoded: 1 when it was counted (what deliver_sample
 * does with a cache hit, when no filter, off-CPU time or sample stream needs it), 0 when it
 * must be decoded and delivered, negative on error.
 */
static int sample_cached(struct pfc_session *s, struct pfc_evsel *ev, const uint8_t *data, uint32_t size)
{
	const uint8_t *b = data + 8;
	uint32_t len = size - 8;
	int swap = s->rd.swap;
	uint64_t nr, hash, period;
	int32_t pid, tid;
	struct pfc_thread *th;
	struct pfc_rawkey *e;

	if (!s->raw_cap || len < (uint32_t)ev->cc_off + 8)
		return 0;
	nr = pfc_ld64(b + ev->cc_off, swap);
	if (nr > (len - ev->cc_off - 8) / 8)
		return 0;
	pid = (int32_t)pfc_ld32(b + ev->tid_off, swap);
	tid = (int32_t)pfc_ld32(b + ev->tid_off + 4, swap);
	if (!(th = pfc_machine_findnew_thread(&s->machine, pid, tid)))
		return PFC_FAIL_NOOFF(s->err, NOMEM, "thread");
	e = raw_find(s, th, (uint32_t)ev->idx, pid, tid, b + ev->cc_off + 8, (uint32_t)nr, &hash);
	if (!e)
		return 0;
	s->st.nr_samples++;
	ev->nr_samples++;
	if ((size_t)ev->idx < s->nr_evsel_first && s->evsel_first_seq[ev->idx] == UINT64_MAX)
		s->evsel_first_seq[ev->idx] = s->sample_seq;
	s->sample_seq++;
	if (ev->period_off != PFC_NO_FIELD)
		period = pfc_ld64(b + ev->period_off, swap) ? pfc_ld64(b + ev->period_off, swap) : 1;
	else
		period = !ev->attr.freq && ev->attr.sample_period ? ev->attr.sample_period : 1;
	s->cur_have_time = ev->time_off != PFC_NO_FIELD;
	s->cur_time = s->cur_have_time ? pfc_ld64(b + ev->time_off, swap) : 0;
	s->cur_timed = 0;
	raw_count(s, ev, e, period);
	return 1;
}

/*
 * perf's evlist__deliver_sample: a sample with PERF_SAMPLE_READ (a group read with
 * `-e '{a,b}:S'`, or --sample-read) is delivered once per counter value it carries, to
 * the event that counter's id belongs to, with the period the counter advanced since its
 * last value in a sample (deliver_sample_value); a counter that did not advance, or whose
 * id is unknown, gives no sample.  The callchain, time, thread and cpu are the record's.
 * So perf script prints one sample per member, and folded stacks count each event as
 * perf script | stackcollapse-perf.pl does: the first event seen, or --event's.
 */
static int process_sample(struct pfc_session *s, struct pfc_evsel *ev, const uint8_t *data, uint32_t size,
			  uint64_t off)
{
	struct pfc_sample smp;
	int swap = s->rd.swap, ret;
	uint64_t i;

	ret = pfc_sample_parse(ev, data + 8, size - 8, swap, off, &smp, s->err);
	if (ret < 0)
		return ret;
	smp.misc = pfc_ld16(data + 4, swap);
	if (!(smp.flags & PFC_S_HAS_READ))
		return deliver_sample(s, ev, &smp);
	for (i = 0; i < smp.read_nr; i++) {
		const uint8_t *v = smp.read_values + i * smp.read_stride * 8;
		uint64_t value = pfc_ld64(v, swap);
		uint64_t id = smp.read_id_off ? pfc_ld64(v + smp.read_id_off * 8, swap) : 0;
		struct pfc_evsel *mev = smp.read_id_off ? pfc_reader_find_id(&s->rd, id) : NULL;
		uint64_t *last;
		struct pfc_sample one;

		if (!mev)
			continue;
		if (!(last = read_last(s, id)))
			return PFC_FAIL_NOOFF(s->err, NOMEM, "sample read values");
		one = smp;
		one.evsel = mev;
		one.id = id;
		one.period = value - *last;
		one.flags |= PFC_S_HAS_PERIOD | PFC_S_HAS_ID;
		*last = value;
		if (!one.period)
			continue;
		if ((ret = deliver_sample(s, mev, &one)) < 0)
			return ret;
	}
	return 0;
}

/* One sample, of event ev, into the aggregate and the stream. */
static int deliver_sample(struct pfc_session *s, struct pfc_evsel *ev, const struct pfc_sample *smp)
{
	struct pfc_thread *th;
	uint32_t n = 0;
	int swap = s->rd.swap, ret, user_frames = 0, cacheable, lbr;
	uint64_t period, rawhash = 0;
	uint32_t stack;
	struct pfc_rawkey rawkey;
	unsigned oc_start = 0;

	s->st.nr_samples++;	/* a group read's record counts once per sample it delivers */
	ev->nr_samples++;
	th = pfc_machine_findnew_thread(&s->machine, (int32_t)smp->pid, (int32_t)smp->tid);
	if (!th)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "thread");
	/* off-CPU intervals end on any sign that the thread runs, filtered or not */
	if (s->offcpu && (ret = pfc_offcpu_sample(s, ev, smp, &oc_start)) < 0)
		return ret;
	/* a sample that starts an off-CPU interval before the --time window is kept: offcpu.c
	 * counts the part of the interval inside the window */
	if (s->opts->filter && (ret = filter_sample(s, smp, th, oc_start != 0)) <= 0) {
		if (ret == 0)
			s->st.nr_samples_filtered++;
		return ret;
	}
	if ((size_t)ev->idx < s->nr_evsel_first && s->evsel_first_seq[ev->idx] == UINT64_MAX)
		s->evsel_first_seq[ev->idx] = s->sample_seq;
	s->sample_seq++;
	/* without PERF_SAMPLE_PERIOD (perf record -c N) every sample stands for the fixed period,
	 * which perf script prints and stackcollapse-perf.pl sums */
	if (smp->flags & PFC_S_HAS_PERIOD)
		period = smp->period ? smp->period : 1;
	else
		period = !ev->attr.freq && ev->attr.sample_period ? ev->attr.sample_period : 1;
	s->cur_time = smp->time;
	s->cur_have_time = !!(smp->flags & PFC_S_HAS_TIME);
	s->cur_timed = 0;
	/* perf-compat, an LBR call stack (--call-graph lbr): perf's user part of the stack is
	 * the branch entries' (resolve_lbr_callchain_sample, callee order): the first entry's
	 * target, then every entry's source, looked up as user addresses.  A sample without
	 * entries keeps its callchain: there perf reads the first entry past the sample's end. */
	lbr = s->opts->perf_compat && (ev->branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK) &&
	      (ev->sample_type & PERF_SAMPLE_BRANCH_STACK) && smp->branch && smp->branch_nr &&
	      !(ev->branch_sample_type & (1U << 19));	/* PERF_SAMPLE_BRANCH_COUNTERS: another layout */
	cacheable = (smp->flags & PFC_S_HAS_CALLCHAIN) && !(ev->sample_type & PERF_SAMPLE_STACK_USER) &&
		    smp->callchain_nr <= UINT32_MAX && !lbr;
	if (cacheable) {
		struct pfc_rawkey *e = raw_find(s, th, (uint32_t)ev->idx, (int32_t)smp->pid, (int32_t)smp->tid,
						smp->callchain, (uint32_t)smp->callchain_nr, &rawhash);
		if (e) {
			raw_count(s, ev, e, period);
			if (oc_start && (ret = pfc_offcpu_start(s, smp, e->stack, oc_start)) < 0)
				return ret;
			return s->opts->keep_stream ? keep_sample(s, smp, e->stack) : 0;
		}
	}
	if (smp->flags & PFC_S_HAS_CALLCHAIN) {
		int cpumode = PERF_RECORD_MISC_USER, entries = 0;
		uint64_t i;

		/* perf resolves the sample's own ip (machine__resolve) before its callchain: the
		 * first kernel sample loads the kernel's symbols there, and every frame of the
		 * chain is looked up in the map they shrank (an address of another architecture's
		 * kernel, outside this machine's kallsyms range, is then in no map) */
		if (!s->kernel_loaded && (smp->misc & PFC_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
			kernel_touch(s, th, smp->ip);
		for (i = 0; i < smp->callchain_nr && entries < s->opts->max_stack; i++) {
			uint64_t ip = pfc_chain_ip(smp, i, swap);
			if (ip >= PFC_CONTEXT_MAX) {
				if (ip == PFC_CONTEXT_HV)
					cpumode = PERF_RECORD_MISC_HYPERVISOR;
				else if (ip == PFC_CONTEXT_KERNEL)
					cpumode = PERF_RECORD_MISC_KERNEL;
				else if (ip == PFC_CONTEXT_USER && lbr) {
					if ((ret = add_lbr(s, th, &n, smp, swap)) < 0)
						return ret;
					break;
				} else if (ip == PFC_CONTEXT_USER)
					cpumode = PERF_RECORD_MISC_USER;
				else {	/* perf discards a chain with a context it does not know */
					n = 0;
					break;
				}
				continue;
			}
			entries++;
			if (cpumode == PERF_RECORD_MISC_USER)
				user_frames++;
			if ((ret = add_ip(s, th, &n, cpumode, ip)) < 0)
				return ret;
		}
	} else {
		int cpumode = smp->misc & PFC_MISC_CPUMODE_MASK;
		if ((ret = add_ip(s, th, &n, cpumode, smp->ip)) < 0)
			return ret;
	}
	/* --call-graph dwarf: the kernel gave only the kernel part; the user part is
	 * unwound from the copied stack, as perf does after the kernel's frames */
	if ((ev->sample_type & PERF_SAMPLE_STACK_USER) && (ev->sample_type & PERF_SAMPLE_REGS_USER) &&
	    (smp->flags & PFC_S_HAS_CALLCHAIN) && !user_frames) {
		if ((ret = unwind_user(s, ev, th, smp, &n)) < 0)
			return ret;
	}
	s->st.nr_frames += n;
	ev->period_total += period;
	stack = pfc_stacks_add(&s->stacks, (uint32_t)ev->idx, th->comm, (int32_t)smp->pid, (int32_t)smp->tid,
			       s->fbuf, n, period);
	if (stack == UINT32_MAX)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "stack table");
	/* the kernel map may change while frames are resolved: cache only afterwards; a
	 * chain whose JIT names depended on the time is never reused */
	if (cacheable && !s->cur_timed) {
		raw_key(&rawkey, s, th, (uint32_t)ev->idx, (int32_t)smp->pid, (int32_t)smp->tid,
			(uint32_t)smp->callchain_nr);
		if (raw_insert(s, rawhash, &rawkey, smp->callchain, stack) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "callchain cache");
	}
	if (oc_start && (ret = pfc_offcpu_start(s, smp, stack, oc_start)) < 0)
		return ret;
	return s->opts->keep_stream ? keep_sample(s, smp, stack) : 0;
}

/* ---- other kernel records ---- */

static uint64_t trailer_size(struct pfc_session *s, struct pfc_evsel *ev)
{
	(void)s;
	return ev->sample_id_all ? ev->id_hdr_size : 0;
}

/* Tell the JIT symbol sources about a new user mapping (JIT regions, PE images, markers). */
static int note_jit_map(struct pfc_session *s, int32_t pid, int32_t tid, uint64_t start, const char *fname,
			uint64_t fnlen)
{
	struct pfc_thread *th = pfc_machine_findnew_thread(&s->machine, pid, tid);
	const struct pfc_map *map;
	char name[4096];
	size_t n = strnlen(fname, fnlen);
	int ret;

	if (!th)
		return -1;
	map = pfc_machine_find_map(&s->machine, th, 0, start);
	if (map && map->dso && map->start == start) {
		if (n >= sizeof(name))
			n = sizeof(name) - 1;
		memcpy(name, fname, n);
		name[n] = 0;
		if ((ret = pfc_jitsyms_note_map(&s->jit, th->pid, map, name)) < 0)
			return ret;
	}
	/* The frames cached under the maps' cgen were named with the JIT symbols as they were
	 * then: if those changed since (this mapping, or a lookup that read a file), the caches
	 * start over here, at the mapping change, as they did when every change of the maps
	 * started them over.  Never at the lookup itself, which they did not either. */
	if (th->maps) {
		uint64_t c = pfc_jitsyms_changes(&s->jit, th->pid);
		if (c != th->maps->jit_changes) {
			th->maps->jit_changes = c;
			pfc_maps_bump(th->maps);
		}
	}
	return 0;
}

static int process_record(struct pfc_session *s, const uint8_t *data, uint32_t size, uint64_t off)
{
	struct pfc_reader *rd = &s->rd;
	uint32_t type = pfc_ld32(data, rd->swap);
	uint16_t misc = pfc_ld16(data + 4, rd->swap);
	struct pfc_rec rec = { .type = type, .misc = misc, .size = size, .data = data, .offset = off };
	struct pfc_evsel *ev = pfc_reader_evsel_of(rd, &rec);
	const uint8_t *b = data + 8;
	uint64_t blen = size - 8, tsz;
	int swap = rd->swap, cpumode = misc & PFC_MISC_CPUMODE_MASK;

	if (!ev)
		return PFC_FAIL(s->err, CORRUPT, off, "record before any event attribute");
	if (type == PERF_RECORD_SAMPLE)
		return process_sample(s, ev, data, size, off);
	tsz = trailer_size(s, ev);
	if (tsz > blen)
		return bad_record(s, off, type, "shorter than its sample_id trailer");
	blen -= tsz;
	switch (type) {
	case PERF_RECORD_MMAP:
		if (blen < 32)
			return bad_record(s, off, type, "short MMAP");
		if (pfc_machine_mmap(&s->machine, (int32_t)pfc_ld32(b, swap), (int32_t)pfc_ld32(b + 4, swap),
				     cpumode == PERF_RECORD_MISC_KERNEL || cpumode == PERF_RECORD_MISC_GUEST_KERNEL,
				     pfc_ld64(b + 8, swap), pfc_ld64(b + 16, swap), pfc_ld64(b + 24, swap),
				     (misc & (1 << 13)) ? PROT_READ : PROT_EXEC, MAP_PRIVATE, NULL, 0,
				     (const char *)b + 32, blen - 32) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "mmap");
		if (cpumode != PERF_RECORD_MISC_KERNEL && cpumode != PERF_RECORD_MISC_GUEST_KERNEL &&
		    note_jit_map(s, (int32_t)pfc_ld32(b, swap), (int32_t)pfc_ld32(b + 4, swap), pfc_ld64(b + 8, swap),
				 (const char *)b + 32, blen - 32) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "mmap");
		break;
	case PERF_RECORD_MMAP2: {
		const uint8_t *bid = NULL;
		int bidlen = 0;
		if (blen < 64)
			return bad_record(s, off, type, "short MMAP2");
		if (misc & PFC_MISC_MMAP_BUILD_ID) {
			bidlen = b[32];
			if (bidlen > 20)
				bidlen = 20;
			bid = b + 36;
		}
		if (pfc_machine_mmap(&s->machine, (int32_t)pfc_ld32(b, swap), (int32_t)pfc_ld32(b + 4, swap),
				     cpumode == PERF_RECORD_MISC_KERNEL || cpumode == PERF_RECORD_MISC_GUEST_KERNEL,
				     pfc_ld64(b + 8, swap), pfc_ld64(b + 16, swap), pfc_ld64(b + 24, swap),
				     pfc_ld32(b + 56, swap), pfc_ld32(b + 60, swap), bid, bidlen,
				     (const char *)b + 64, blen - 64) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "mmap");
		if (cpumode != PERF_RECORD_MISC_KERNEL && cpumode != PERF_RECORD_MISC_GUEST_KERNEL &&
		    note_jit_map(s, (int32_t)pfc_ld32(b, swap), (int32_t)pfc_ld32(b + 4, swap), pfc_ld64(b + 8, swap),
				 (const char *)b + 64, blen - 64) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "mmap");
		break;
	}
	case PERF_RECORD_COMM:
		if (blen < 8)
			return bad_record(s, off, type, "short COMM");
		if (pfc_machine_comm(&s->machine, (int32_t)pfc_ld32(b, swap), (int32_t)pfc_ld32(b + 4, swap),
				     (const char *)b + 8, blen - 8) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "comm");
		break;
	case PERF_RECORD_FORK:
		if (blen < 16)
			return bad_record(s, off, type, "short FORK");
		if (pfc_machine_fork(&s->machine, (int32_t)pfc_ld32(b, swap), (int32_t)pfc_ld32(b + 8, swap),
				     (int32_t)pfc_ld32(b + 4, swap), (int32_t)pfc_ld32(b + 12, swap)) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "fork");
		break;
	case PERF_RECORD_EXIT:
		if (blen < 16)
			return bad_record(s, off, type, "short EXIT");
		/* perf keeps exited threads: nothing changes for later lookups; a thread's
		 * off-CPU interval ends here at the latest */
		if (s->offcpu && blen >= 24)
			pfc_offcpu_exit(s, (int32_t)pfc_ld32(b + 8, swap), pfc_ld64(b + 16, swap));
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		/* --switch-events: the thread of the sample_id trailer switches in (out records
		 * carry PERF_RECORD_MISC_SWITCH_OUT); without a trailer there is no thread */
		if (s->offcpu && !(misc & PERF_RECORD_MISC_SWITCH_OUT) && ev->sample_id_all) {
			struct pfc_sample id;
			if (pfc_sample_parse_id(ev, data + 8, size - 8, swap, &id) == 0 && (id.flags & PFC_S_HAS_TIME) &&
			    (id.flags & PFC_S_HAS_TID))
				pfc_offcpu_switch_in(s, (int32_t)id.tid, id.time);
		}
		break;
	case PERF_RECORD_KSYMBOL:
		if (blen < 16)
			return bad_record(s, off, type, "short KSYMBOL");
		if (pfc_machine_ksymbol(&s->machine, pfc_ld64(b, swap), pfc_ld32(b + 8, swap), (const char *)b + 16,
					blen - 16, pfc_ld16(b + 14, swap) & 1) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "ksymbol");
		break;
	case PERF_RECORD_LOST:
		if (blen < 16)
			return bad_record(s, off, type, "short LOST");
		s->st.nr_lost_records++;
		s->st.nr_lost_events += pfc_ld64(b + 8, swap);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (blen < 8)
			return bad_record(s, off, type, "short LOST_SAMPLES");
		s->st.nr_lost_samples += pfc_ld64(b, swap);
		ev->nr_lost_samples += pfc_ld64(b, swap);
		break;
	default:
		break;
	}
	return 0;
}

/* One record: a sample the callchain cache counts (sample_cached) without decoding it or
 * process_record's frame, the rest through process_record. */
static int process_one(struct pfc_session *s, const uint8_t *data, uint32_t size, uint64_t off)
{
	if (pfc_ld32(data, s->rd.swap) == PERF_RECORD_SAMPLE && !s->opts->filter && !s->offcpu && !s->opts->keep_stream) {
		struct pfc_rec rec = { .type = PERF_RECORD_SAMPLE, .size = size, .data = data, .offset = off };
		struct pfc_evsel *ev = pfc_reader_evsel_of(&s->rd, &rec);
		int ret;
		if (ev && ev->cc_off && (ret = sample_cached(s, ev, data, size)))
			return ret < 0 ? ret : 0;
	}
	return process_record(s, data, size, off);
}

/* ---- the pipeline ----
 * With a mapped input, one thread reads and orders the records (pfc_reader_run, the
 * ordering queue) and the calling thread processes them, in the order that the one-thread
 * conversion processes them.  What the reading thread hands over goes through a pfc_chan:
 * records, and when mapped bytes and copies of compressed records may be given back, so
 * that this happens only after the records before it were processed.  Header records that
 * change the events or build-ids wait until everything before them was processed
 * (pfc_chan_barrier, through the reader's sync hook).
 */
enum { ITEM_RECORD, ITEM_HASHED, ITEM_RELEASE, ITEM_FREE };

/*
 * The callchain cache's hash of a sample record, worked out on the reading thread, which
 * has time to spare: 1 when the record is a sample with the fixed layout sample_cached
 * looks up.  Reads only the record and its event's layout, which processing does not change.
 */
static int sample_chain_hash(struct pfc_session *s, const uint8_t *data, uint32_t size, uint64_t *h)
{
	struct pfc_rec rec = { .type = PERF_RECORD_SAMPLE, .size = size, .data = data };
	const struct pfc_evsel *ev;
	const uint8_t *b = data + 8;
	uint32_t len = size - 8;
	int swap = s->rd.swap;
	uint64_t nr;

	if (pfc_ld32(data, swap) != PERF_RECORD_SAMPLE || !(ev = pfc_reader_evsel_of(&s->rd, &rec)) || !ev->cc_off ||
	    len < (uint32_t)ev->cc_off + 8)
		return 0;
	nr = pfc_ld64(b + ev->cc_off, swap);
	if (nr > (len - ev->cc_off - 8) / 8)
		return 0;
	*h = chain_hash(b + ev->cc_off + 8, nr, (int32_t)pfc_ld32(b + ev->tid_off, swap),
			(int32_t)pfc_ld32(b + ev->tid_off + 4, swap));
	return 1;
}

static int deliver(void *ctx, const struct pfc_qev *ev)
{
	struct pfc_session *s = ctx;

	if (s->chan) {
		uint64_t h;
		if (sample_chain_hash(s, ev->data, ev->size, &h))
			return pfc_chan_push_aux(s->chan, ev->data, ev->offset, ev->size, ITEM_HASHED, h) != 0 ?
				       -PFC_ERR_NOMEM : 0;
		return pfc_chan_push(s->chan, ev->data, ev->offset, ev->size, ITEM_RECORD) != 0 ? -PFC_ERR_NOMEM : 0;
	}
	return process_one(s, ev->data, ev->size, ev->offset);
}

static void retire_copies(void *ctx, struct pfc_arena_block *b)
{
	struct pfc_session *s = ctx;

	/* not queued (the processing thread has stopped): nothing reads b; queued, the
	 * processing thread frees it, even after it stopped */
	if (pfc_chan_push(s->chan, b, 0, 0, ITEM_FREE) < 0)
		pfc_order_arena_free(b);
}

static int sync_reader(void *ctx)
{
	struct pfc_session *s = ctx;

	return pfc_chan_barrier(s->chan) < 0 ? -PFC_ERR_NOMEM : 0;
}

static void *read_main(void *arg)
{
	struct pfc_session *s = arg;
	int ret = pfc_reader_run(&s->rd, on_record, s);

	if (ret == 0)
		ret = pfc_order_flush_all(&s->order);
	if (ret < 0 && !s->perr.code)
		PFC_FAIL_NOOFF(&s->perr, NOMEM, "ordering queue");
	s->pret = ret;
	pfc_chan_close(s->chan);
	return NULL;
}

/* Back to one thread: the reader and the queue report and free as they do without it. */
static void pipeline_end(struct pfc_session *s, struct pfc_chan *chan)
{
	s->chan = NULL;
	s->rd.err = s->err;
	s->rd.sync = NULL;
	s->order.retire = NULL;
	pfc_chan_exit(chan);
}

/* The ring between the two threads: records and batch size.  The fuzz build (make fuzz) makes
 * it small, so that a full ring and its waits happen in small inputs, and a run does not fault
 * in the 1 MiB ring. */
#ifndef PFC_PIPELINE_RING
#define PFC_PIPELINE_RING (1u << 15)
#define PFC_PIPELINE_BATCH 2048
#endif
/* the bytes of records in the ring: with DWARF stack copies, the memory the reader runs ahead
 * by (chan.h); a few thousand samples still keep both threads busy */
#define PFC_PIPELINE_BYTES ((uint64_t)16 << 20)

/*
 * The processing thread waits on memory more than it computes: a sample's record was
 * written by the reading thread's core, its callchain cache slot and entry are anywhere in
 * a table of megabytes.  The ring says which ones come next (the record, and for a hashed
 * sample its slot), so they are asked for ahead: the record and the slot PREFETCH_AHEAD
 * items ahead, the entry the slot names half as far ahead, once the slot has arrived.
 */
#define PREFETCH_AHEAD 8

static inline void prefetch_record(const struct pfc_session *s, const struct pfc_chan_item *it)
{
	if (it->kind == ITEM_HASHED) {
		__builtin_prefetch(it->data);
		__builtin_prefetch((const uint8_t *)it->data + 64);
		if (s->raw_cap)
			__builtin_prefetch(&s->raw[it->aux & (s->raw_cap - 1)]);
	}
}

static inline void prefetch_entry(const struct pfc_session *s, const struct pfc_chan_item *it)
{
	uint64_t slot;

	if (it->kind != ITEM_HASHED || !s->raw_cap)
		return;
	slot = s->raw[it->aux & (s->raw_cap - 1)];
	if (slot && (slot & 0xffffffff00000000ULL) == RAW_TAG(it->aux)) {
		const uint8_t *e = (const uint8_t *)raw_entry(s, slot);
		__builtin_prefetch(e);
		__builtin_prefetch(e + 64);
		__builtin_prefetch(e + 128);
	}
}

/* 1: processed in two threads (*ret is the result), 0: not possible here. */
static int process_pipelined(struct pfc_session *s, int *ret)
{
	const char *env = getenv("PERFCONV_PIPELINE");
	struct pfc_chan chan;
	pthread_t th;
	const struct pfc_chan_item *items;
	size_t n, i;
	int cret = 0;
	uint64_t nrec = 0;

	if (s->rd.streaming || (env && !strcmp(env, "0")))
		return 0;
	if (pfc_chan_init(&chan, PFC_PIPELINE_RING, PFC_PIPELINE_BATCH) < 0)
		return 0;
	chan.max_bytes = PFC_PIPELINE_BYTES;
	s->chan = &chan;
	memset(&s->perr, 0, sizeof(s->perr));
	s->release_to = 0;
	s->pret = 0;
	s->rd.err = &s->perr;
	s->rd.sync = sync_reader;
	s->rd.sync_ctx = s;
	s->order.retire = retire_copies;
	if (pthread_create(&th, NULL, read_main, s)) {
		pipeline_end(s, &chan);
		return 0;
	}
	while ((n = pfc_chan_take(&chan, &items)) > 0) {
		for (i = 0; i < n; i++) {
			const struct pfc_chan_item *it = &items[i];
			if (i + PREFETCH_AHEAD < n)
				prefetch_record(s, &items[i + PREFETCH_AHEAD]);
			if (i + PREFETCH_AHEAD / 2 < n)
				prefetch_entry(s, &items[i + PREFETCH_AHEAD / 2]);
			switch (it->kind) {
			case ITEM_RECORD:
			case ITEM_HASHED:
				if (cret < 0)
					break;
				s->chain_hash = it->aux;
				s->have_chain_hash = it->kind == ITEM_HASHED;
				cret = process_one(s, it->data, it->size, it->offset);
				s->have_chain_hash = 0;
				if (cret < 0)
					pfc_chan_stop(&chan);
				else if (s->opts->progress && !(++nrec & 255))
					s->opts->progress(s->opts->progress_arg, s);
				break;
			case ITEM_RELEASE:
				/* released on the reading thread (release_to) */
				if (it->offset > __atomic_load_n(&s->release_to, __ATOMIC_RELAXED))
					__atomic_store_n(&s->release_to, it->offset, __ATOMIC_RELEASE);
				break;
			case ITEM_FREE:
				pfc_order_arena_free((struct pfc_arena_block *)it->data);
				break;
			}
		}
		pfc_chan_done(&chan, n);
	}
	pthread_join(th, NULL);
	pipeline_end(s, &chan);
	if (cret < 0)
		*ret = cret;
	else if (s->pret < 0) {
		*s->err = s->perr;
		*ret = s->pret;
	} else
		*ret = 0;
	return 1;
}

/* The timestamp of a kernel record, or 0 when it has none. */
static inline __attribute__((always_inline)) uint64_t record_time(struct pfc_session *s, const struct pfc_rec *r)
{
	struct pfc_evsel *ev = pfc_reader_evsel_of(&s->rd, r);

	if (!ev || ev->sample_time_off == PFC_NO_FIELD)
		return 0;
	if (r->type == PERF_RECORD_SAMPLE) {
		if ((uint64_t)ev->sample_time_off + 8 > (uint64_t)r->size - 8)
			return 0;
		return pfc_ld64(r->data + 8 + ev->sample_time_off, s->rd.swap);
	} else {
		struct pfc_sample smp;
		if (pfc_sample_parse_id(ev, r->data + 8, r->size - 8, s->rd.swap, &smp) < 0)
			return 0;
		return smp.time;
	}
}

static int on_record(void *ctx, const struct pfc_rec *r)
{
	struct pfc_session *s = ctx;

	s->st.nr_records++;
	if (r->type < PFC_REC_MAX)
		s->st.nr_by_type[r->type]++;
	if (s->opts->progress && !s->chan && !(s->st.nr_records & 255))
		s->opts->progress(s->opts->progress_arg, s);
	if (r->type >= 64) {
		switch (r->type) {
		case PFC_REC_FINISHED_ROUND:
			/* (in the pipeline also without ordering: copies are given back per round) */
			if (s->ordered || s->chan) {
				int ret = pfc_order_round(&s->order);
				if (ret < 0)
					return s->rd.err->code ? ret : PFC_FAIL_NOOFF(s->rd.err, NOMEM, "ordering queue");
			}
			/* mapped records before the oldest one still queued are done with */
			if (!r->compressed && !s->rd.streaming) {
				uint64_t low = pfc_order_low_offset(&s->order, r->offset);
				if (!s->chan)
					pfc_reader_release(&s->rd, low);
				else if (pfc_chan_push(s->chan, NULL, low, 0, ITEM_RELEASE) != 0)
					return -PFC_ERR_NOMEM;
				else	/* what the processing thread has finished, from an earlier round */
					pfc_reader_release(&s->rd, __atomic_load_n(&s->release_to, __ATOMIC_ACQUIRE));
			}
			break;
		case PFC_REC_HEADER_BUILD_ID:
			load_build_ids(s, r->data, r->size);
			break;
		case PFC_REC_HEADER_ATTR:
			if (s->nr_evsel_first < s->rd.nr_evsels) {
				uint64_t *n = realloc(s->evsel_first_seq, s->rd.nr_evsels * sizeof(*n));
				if (!n)
					return PFC_FAIL_NOOFF(s->rd.err, NOMEM, "evsels");
				while (s->nr_evsel_first < s->rd.nr_evsels)
					n[s->nr_evsel_first++] = UINT64_MAX;
				s->evsel_first_seq = n;
			}
			s->ordered = !s->opts->no_sort && s->rd.sample_id_all;
			break;
		default:
			break;
		}
		return 0;
	}
	if (r->type >= PFC_RECORD_KERNEL_MAX)
		return 0;
	if (!s->rd.nr_evsels)
		return PFC_FAIL(s->rd.err, CORRUPT, r->offset, "record of type %u before any event attribute", r->type);
	if (s->ordered) {
		uint64_t ts = record_time(s, r);
		/* perf delivers records without a usable timestamp at once */
		if (ts && ts != UINT64_MAX) {
			if (pfc_order_queue(&s->order, ts, r->data, r->size, r->offset, r->compressed, r->transient) < 0)
				return PFC_FAIL_NOOFF(s->rd.err, NOMEM, "ordering queue");
			return 0;
		}
	}
	if (s->chan) {
		const uint8_t *data = r->data;
		if (r->transient && !(data = pfc_order_copy(&s->order, r->data, r->size)))
			return PFC_FAIL_NOOFF(s->rd.err, NOMEM, "record copy");
		return pfc_chan_push(s->chan, data, r->offset, r->size, ITEM_RECORD) != 0 ? -PFC_ERR_NOMEM : 0;
	}
	return process_one(s, r->data, r->size, r->offset);
}

int pfc_session_process(struct pfc_session *s)
{
	int ret;
	size_t i;

	s->nr_evsel_first = s->rd.nr_evsels;
	if (s->nr_evsel_first) {
		s->evsel_first_seq = malloc(s->nr_evsel_first * sizeof(*s->evsel_first_seq));
		if (!s->evsel_first_seq)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "evsels");
		for (i = 0; i < s->nr_evsel_first; i++)
			s->evsel_first_seq[i] = UINT64_MAX;
	}
	s->ordered = !s->opts->no_sort && s->rd.nr_evsels && s->rd.sample_id_all;
	if (!s->ordered && s->rd.nr_evsels && !s->rd.sample_id_all && s->opts->log && s->opts->verbose)
		fprintf(s->opts->log, "perfconv: '%s': no sample_id_all, processing records in file order\n",
			s->opts->input);
	if (!process_pipelined(s, &ret)) {
		ret = pfc_reader_run(&s->rd, on_record, s);
		if (ret == 0) {
			ret = pfc_order_flush_all(&s->order);
			if (ret < 0 && !s->err->code)
				ret = PFC_FAIL_NOOFF(s->err, NOMEM, "ordering queue");
		}
	}
	raw_settle(s);
	if (ret < 0)
		return ret;
	if (s->offcpu && (ret = pfc_offcpu_finish(s)) < 0)
		return ret;
	s->st.nr_out_of_order = s->order.nr_out_of_order;
	if (pfc_stream_finish(&s->stream) < 0)
		return PFC_FAIL_NOOFF(s->err, IO, "cannot write the sample stream's temporary file");
	if (ret == 0 && s->kernel_pending)
		kernel_stretch_pending(s);
	if (ret == 0 && s->kernel_preload_conflict)
		return PFC_FAIL_NOOFF(s->err, RETRY, "kernel frames outside the kallsyms range were seen before it was read");
	return ret;
}

/* ---- symbols ---- */

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
static int running_kernel_build_id(uint8_t *out)
{
	return (int)pfc_buildid_running_kernel(out, 20);
}

enum { KERNEL_IS_RUNNING, KERNEL_OTHER_BUILD_ID, KERNEL_OTHER_RELEASE, KERNEL_NO_RELEASE, KERNEL_SYMFS };

/*
 * Whether this machine's /proc/kallsyms names the recording's kernel (s->kernel_why says
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

	s->kernel_why = KERNEL_IS_RUNNING;
	if (s->opts->perf_compat && s->opts->symfs && *s->opts->symfs) {
		s->kernel_why = KERNEL_SYMFS;
		return 0;
	}
	if (rlen > 0 && (nlen = running_kernel_build_id(run)) > 0) {
		if (nlen == rlen && !memcmp(rec, run, (size_t)rlen))
			return 1;
		s->kernel_why = KERNEL_OTHER_BUILD_ID;
		return 0;
	}
	if (rlen <= 0 && s->opts->perf_compat)
		return 1;
	if (!pfc_feat_has(&s->rd, PFC_FEAT_OSRELEASE) || uname(&u) < 0) {
		s->kernel_why = KERNEL_NO_RELEASE;
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
	s->kernel_why = str ? KERNEL_OTHER_RELEASE : KERNEL_NO_RELEASE;
	return 0;
}

/* ---- ReadyToRun images ---- */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

/* perfinfo-PID.map of every recorded process (the map directory first, then /tmp): which
 * image, by MVID, each process loaded from a path.  Read once, when the first PE image
 * is loaded. */
static struct pfc_perfinfo *r2r_perfinfo(struct pfc_session *s)
{
	const struct pfc_machine *m = &s->machine;
	struct pfc_error e;
	int *pids;
	size_t i, n = 0;

	if (s->perfinfo)
		return s->perfinfo;
	s->perfinfo = calloc(1, sizeof(*s->perfinfo));
	pids = calloc(m->tcount + 1, sizeof(*pids));
	if (!s->perfinfo || !pids) {
		free(pids);
		return s->perfinfo;
	}
	for (i = 0; i < m->tcap; i++) {
		const struct pfc_thread *t;
		for (t = m->thash[i]; t && n < m->tcount; t = t->hnext)
			if (t->pid > 0)
				pids[n++] = t->pid;
	}
	qsort(pids, n, sizeof(*pids), cmp_int);
	for (i = 0; i < n; i++) {
		if (i && pids[i] == pids[i - 1])
			continue;
		memset(&e, 0, sizeof(e));
		pfc_perfinfo_load_from(s->files, pids[i], s->perfinfo, &e);
	}
	free(pids);
	return s->perfinfo;
}

static int load_r2r(struct pfc_session *s, struct pfc_dso *d, struct pfc_symtab *t)
{
	const struct pfc_opts *o = s->opts;
	struct pfc_r2r_opts ro = { .files = s->files, .funcs = o->r2r_funcs,
				   .log = o->log, .verbose = o->verbose };
	struct pfc_r2r_result res;
	int ret;

	if (o->perf_compat)	/* perf names no ReadyToRun code */
		return 0;
	ro.perfinfo = r2r_perfinfo(s);
	ret = pfc_r2r_load(&ro, d->name, t, &res, s->err);
	d->r2r = res.status;
	/* why its frames stay unnamed, for the summary's list under -v */
	if (res.status != PFC_R2R_MAPPED && res.why[0]) {
		uint32_t id = pfc_intern(&s->strings, res.why, strlen(res.why));
		if (id != UINT32_MAX)
			d->r2r_why = pfc_intern_str(&s->strings, id);
	}
	if (res.wrong_image)
		pfc_r2rframes_refuse(s, d);
	return ret;
}

/* Count a frame of a PE image for the summary. */
static void r2r_count(struct pfc_session *s, const struct pfc_dso *d, int resolved)
{
	if (resolved && d->r2r == PFC_R2R_MAPPED)
		s->st.nr_r2r_resolved++;
	else if (d->r2r > 0 && d->r2r < 8)
		s->st.nr_r2r_unresolved[d->r2r]++;
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

/*
 * The default mode names a library mapped from an .apk from its bytes inside the .apk (the one
 * its CFI comes from, build-id checked): /proc/self/fd/N into BUF, or NULL.  perf 6.1 looks for a
 * file of that name and finds none, so --perf-compat does not.
 */
static const char *apk_member(struct pfc_session *s, const struct pfc_dso *d, char *buf, size_t size)
{
	struct pfc_cfi *c;
	int fd;

	if (d->kind != PFC_DSO_FILE || !strstr(d->name, ".apk!/") || !(c = dso_cfi(s, d)) ||
	    (fd = pfc_cfi_image_fd(c)) < 0)
		return NULL;
	snprintf(buf, size, "/proc/self/fd/%d", fd);
	return buf;
}

static void load_dso(struct pfc_session *s, struct pfc_dso *d)
{
	const struct pfc_opts *o = s->opts;
	struct pfc_symtab *t;
	int ret = 0;

	d->loaded = 1;
	t = calloc(1, sizeof(*t));
	if (!t)
		return;
	switch (d->kind) {
	case PFC_DSO_VDSO:
		/* only perf's build-id cache can hold the image of the recording's vdso; perf
		 * names one without a build-id from its own, this machine's (files.c) */
		if (!d->build_id_len && (!o->perf_compat || !pfc_files_own_vdso(s->files)))
			break;
		/* fall through */
	case PFC_DSO_FILE: {
		char apk_image[64];
		struct pfc_symopts so = { .files = s->files, .verbose = o->verbose,
					   .image = d->kind == PFC_DSO_VDSO && !d->build_id_len ?
							    pfc_files_own_vdso(s->files) :
					   !o->perf_compat ? apk_member(s, d, apk_image, sizeof(apk_image)) : NULL,
					   .minidebuginfo = o->minidebuginfo,
					   /* perf-compat: perf reads the build-id only of a path present on this host */
					   .buildid_from_symfs = !o->perf_compat,
					   .debuginfod = s->dbgf.client ? &s->dbgf : NULL,
					   .symsrv = s->ssrv.nr_urls ? &s->ssrv : NULL,
					   /* perf-compat reads as perf does, every time */
					   .cache_dir = o->perf_compat ? NULL : o->cache_dir };
		struct pfc_dso_load info;
		if (d->kind == PFC_DSO_FILE && pfc_r2r_is_pe(s->files, d->name)) {
			ret = load_r2r(s, d, t);
			break;
		}
		memset(&info, 0, sizeof(info));
		ret = pfc_elf_load(&so, d->name, d->build_id, d->build_id_len, t, &info);
		s->st.nr_ecache_hits += info.cache == PFC_SYMCACHE_HIT;
		s->st.nr_ecache_misses += info.cache == PFC_SYMCACHE_MISS || info.cache == PFC_SYMCACHE_CORRUPT;
		s->st.nr_ecache_corrupt += info.cache == PFC_SYMCACHE_CORRUPT;
		if (info.found && info.used_path[0] && d->kind == PFC_DSO_FILE) {
			/* addr2line, for the inlined frames of DWARF-unwound stacks, reads this file */
			struct pfc_dwarf_dso *dd = dwarf_dso(s, d);
			if (dd && !dd->symsrc)
				dd->symsrc = strdup(info.used_path);
		}
		d->no_symtab = d->kind == PFC_DSO_FILE && (!info.found || info.from_dynsym);
		d->not_found = d->kind != PFC_DSO_FILE || info.found ? 0 : info.buildid_mismatch ? 2 : 1;
		d->from_debuginfod = info.from_debuginfod;
		if (info.buildid_mismatch && o->log)
			fprintf(o->log, "perfconv: warning: '%s': build-id mismatch, its frames stay unresolved\n",
				d->name);
		break;
	}
	case PFC_DSO_PE:
		/* a .dll/.exe mapping: a ReadyToRun image, or (pfc_r2r_load says why) none */
		ret = load_r2r(s, d, t);
		break;
	case PFC_DSO_KERNEL: {
		struct pfc_found kf;
		struct pfc_symtab *pre = kpreload_take(s, &ret, &kf);
		if (pre) {
			free(t);
			t = pre;
			if (ret >= 0)
				ret = kernel_reloc(s, kf.path, t);
		} else if (kernel_syms_path(s, &kf)) {
			int cache;
			ret = kernel_syms_load(kf.path, pfc_session_kernel_cache_dir(s, &kf), t, &cache);
			symcache_count(s, cache);
			if (ret >= 0)
				ret = kernel_reloc(s, kf.path, t);
		} else if (o->log)
			fprintf(o->log, "perfconv: warning: kernel frames left unnamed: %s; to name them, "
				"give --kallsyms a copy of /proc/kallsyms from the machine that recorded%s\n",
				pfc_files_from_pack(s->files) ?
				"the pack has no kernel symbols (it was made where the recorded kernel was not running)" :
				s->kernel_why == KERNEL_IS_RUNNING ? "the running kernel's symbols cannot be read" :
				s->kernel_why == KERNEL_SYMFS ?
				"with --symfs, perf (--perf-compat) reads no kernel symbols of this machine" :
				s->kernel_why == KERNEL_OTHER_BUILD_ID ?
				"the recording's kernel build-id is not the running kernel's" :
				s->kernel_why == KERNEL_OTHER_RELEASE ?
				"the recording has no kernel build-id and another kernel release recorded it" :
				"the recording has no kernel build-id nor kernel release to check against the running kernel",
				pfc_files_from_pack(s->files) ? "" : ", or convert a pack made there (-f pack)");
		break;
	}
	case PFC_DSO_PERFMAP: {
		/* found, checked and owned by the JIT symbol sources (jitsym.c) */
		const char *path;
		d->perfmap = pfc_jitsyms_perfmap(&s->jit, d->pid);
		path = d->perfmap ? pfc_jitsyms_perfmap_path(&s->jit, d->pid) : NULL;
		if (path) {	/* only for writers that copy the map */
			uint32_t id = pfc_intern(&s->strings, path, strlen(path));
			if (id != UINT32_MAX)
				d->perfmap_path = pfc_intern_str(&s->strings, id);
		}
		break;
	}
	default:
		break;
	}
	if (ret < 0 || !t->nr) {
		pfc_symtab_free(t);
		free(t);
		return;
	}
	d->syms = t;
}

/* Intern a .NET or JIT name rewritten in one --dotnet-names form (and --strip-tiers). */
static uint32_t intern_jit_form(struct pfc_session *s, const char *name, size_t len, int form)
{
	char buf[8192];

	if (form == PFC_DOTNET_NAMES_KEEP && !s->opts->strip_tiers)
		return pfc_intern(&s->strings, name, len);
	len = pfc_dotnet_name(buf, sizeof(buf), name, len, form, s->opts->strip_tiers);
	return pfc_intern(&s->strings, buf, len);
}

/*
 * Name a frame.  A JIT or .NET name (perf map, jitdump, ReadyToRun) is rewritten twice: in
 * the display form of the aggregating writers (short by default: a frame starts with its
 * assembly or namespace) and in the text form of perf-script and trace.zip (the runtime's
 * own, which PerfView parses).  Other names are used as they are.
 */
static int name_frame(struct pfc_session *s, struct pfc_frame *f, const char *name, size_t len, int jit)
{
	f->sym = jit ? intern_jit_form(s, name, len, s->opts->dotnet_names) : pfc_intern(&s->strings, name, len);
	if (f->sym == UINT32_MAX)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "symbol names");
	f->sym_text = jit && s->opts->dotnet_names_text != s->opts->dotnet_names
			      ? intern_jit_form(s, name, len, s->opts->dotnet_names_text)
			      : f->sym;
	if (f->sym_text == UINT32_MAX)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "symbol names");
	f->resolved = 1;
	return 0;
}

const struct pfc_symtab *pfc_session_kernel_syms(struct pfc_session *s)
{
	if (!s->machine.kernel)
		return NULL;
	if (!s->kernel_loaded)
		load_kernel(s);
	return s->machine.kernel->syms;
}

int pfc_session_symbolize(struct pfc_session *s)
{
	size_t i;
	int ret;

	if (s->symbolized)
		return 0;
	s->symbolized = 1;
	for (i = 0; i < s->stacks.nr_frames; i++) {
		struct pfc_frame *f = &s->stacks.frames[i];
		struct pfc_dso *d = (struct pfc_dso *)f->dso;
		const struct pfc_sym *sym;

		if (!d) {
			s->st.nr_unresolved_nomap++;
			continue;
		}
		if (d->kind == PFC_DSO_KSYM) {	/* the map is the symbol */
			if ((ret = name_frame(s, f, d->name, strlen(d->name), 0)) < 0)
				return ret;
			f->symoff = f->addr;
			continue;
		}
		if (d->kind == PFC_DSO_LABEL) {	/* a name, not code */
			f->sym = pfc_intern(&s->strings, d->name, strlen(d->name));
			if (f->sym == UINT32_MAX)
				return PFC_FAIL_NOOFF(s->err, NOMEM, "symbol names");
			f->symoff = 0;
			f->resolved = 1;
			continue;
		}
		if (d->kind == PFC_DSO_JITCODE) {	/* one load of a jitdump: the load is the symbol */
			if ((ret = name_frame(s, f, d->jit_name, strlen(d->jit_name), 1)) < 0)
				return ret;
			f->symoff = f->addr - d->jit_start;
			s->st.nr_jit_jitdump++;
			continue;
		}
		if (!d->loaded)
			load_dso(s, d);
		if (d->perfmap) {
			const char *name;
			size_t len;
			uint64_t start;
			int found = pfc_perfmap_resolve(d->perfmap, f->addr, s->opts->resolve_jit, &name, &len, &start);
			if (found < 0)
				return PFC_FAIL_NOOFF(s->err, NOMEM, "symbol names");
			if (found) {
				if ((ret = name_frame(s, f, name, len, 1)) < 0)
					return ret;
				f->symoff = f->addr - start;
				s->st.nr_jit_perfmap++;
				continue;
			}
		}
		sym = d->syms ? pfc_symtab_find(d->syms, f->addr) : NULL;
		/* a ReadyToRun frame no matching map names (--r2r-rva's [image+0xRVA] names
		 * are only a fallback): the method from the image's metadata.  Also where
		 * r2rmap.c found no R2R header (a composite has its own) or no file under the
		 * recorded path (a container's, under /proc/PID/root). */
		if (d->r2r && s->opts->resolve_jit && (!sym || d->r2r != PFC_R2R_MAPPED)) {
			const char *name;
			uint64_t start;
			if (pfc_r2rframes_name(s, d, f->addr, &name, &start) == 0) {
				if ((ret = name_frame(s, f, name, strlen(name), 1)) < 0)
					return ret;
				f->symoff = f->addr - start;
				s->st.nr_r2r_resolved++;
				s->st.nr_r2r_metadata++;
				continue;
			}
		}
		if (d->r2r)
			r2r_count(s, d, sym != NULL);
		if (!sym) {
			if (f->kernel)
				s->st.nr_unresolved_kernel++;
			else
				s->st.nr_unresolved_user++;
			if (pfc_dso_is_jit_region(d->kind))
				s->st.nr_jit_unresolved++;
			continue;
		}
		if (d->jitted)	/* perf inject's ELF for one jitdump load */
			s->st.nr_jit_jitted++;
		/* ReadyToRun method names are .NET names too */
		if ((ret = name_frame(s, f, sym->name, strlen(sym->name), d->jitted || d->r2r != PFC_R2R_NONE)) < 0)
			return ret;
		f->symoff = f->addr - sym->start;
		if (f->inl) {	/* perf's inlined symbol: the function's name, the symbol's start */
			f->sym = f->sym_text = f->inl - 1;
			f->inlined = 1;
		}
	}
	return 0;
}

/* "jitted-PID-N.so" -> PID; -1 when the name is not one of perf inject's. */
static int jitted_pid(const char *name)
{
	const char *b = strrchr(name, '/'), *e;
	long pid;

	b = b ? b + 1 : name;
	if (strncmp(b, "jitted-", 7))
		return -1;
	pid = strtol(b + 7, (char **)&e, 10);
	if (e == b + 7 || *e != '-' || pid <= 0 || pid > 0x7fffffff)
		return -1;
	return (int)pid;
}

int pfc_session_side_files(struct pfc_session *s, int (*fn)(void *arg, const char *path, const char *name,
							     const char *entry), void *arg)
{
	const struct pfc_machine *m = &s->machine;
	struct pfc_found found;
	int *pids = NULL;
	size_t i, nr_pids = 0;
	int ret = 0;

	if (!(pids = calloc(m->nr_dsos + 1, sizeof(*pids))))
		return PFC_FAIL_NOOFF(s->err, NOMEM, "side files");
	for (i = 0; i < m->nr_dsos && ret == 0; i++) {
		const struct pfc_dso *d = m->dsos[i];
		const struct pfc_found *pm;
		int pid = -1;

		if (!d->loaded)
			continue;
		if (d->kind == PFC_DSO_PERFMAP && d->perfmap_path && (pm = pfc_jitsyms_perfmap_found(&s->jit, d->pid))) {
			const char *b = strrchr(pm->rel, '/');
			b = b ? b + 1 : pm->rel;
			pid = d->pid;
			if (fn)
				ret = fn(arg, pm->path, pm->name, strrchr(d->perfmap_path, '/') ? strrchr(d->perfmap_path, '/') + 1 : d->perfmap_path);
			/* ${mapFile/perf/perfinfo}, as perfcollect copied it */
			if (ret == 0 && !strncmp(b, "perf-", 5) &&
			    pfc_files_findf(s->files, pm->base, 0, &found, "%.*sperfinfo-%s", (int)(b - pm->rel), pm->rel, b + 5)) {
				const char *e = strrchr(found.name, '/');
				pfc_files_note(s->files, found.base, found.rel, "perfinfo of a perf map", d->pid, NULL, 0);
				if (fn)
					ret = fn(arg, found.path, found.name, e ? e + 1 : found.name);
			}
		} else if (d->kind == PFC_DSO_FILE) {
			pid = jitted_pid(d->name);
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
		if (!pfc_jitsyms_jitdump_find(&s->jit, pids[i], &found))
			continue;
		pfc_files_note(s->files, found.base, found.rel, "jitdump of a process with JIT frames", pids[i], NULL, 0);
		if (fn) {
			char entry[64];
			snprintf(entry, sizeof(entry), "jit-%d.dump", pids[i]);
			ret = fn(arg, found.path, found.name, entry);
		}
	}
	free(pids);
	return ret;
}

void pfc_session_dwarf_summary(const struct pfc_session *s, FILE *f)
{
	const struct pfc_session_stats *st = &s->st;
	uint64_t cut = st->nr_dwarf_cut_stack + st->nr_dwarf_bad_regs + st->nr_dwarf_bad_cfi;

	if (!st->nr_dwarf_unwound)
		return;
	fprintf(f, "perfconv: %llu user stacks unwound with DWARF (%llu the same as an earlier one)",
		(unsigned long long)st->nr_dwarf_unwound, (unsigned long long)st->nr_dwarf_cache_hits);
	if (st->nr_dwarf_fp_frames)
		fprintf(f, ", %llu frames through code without CFI on the frame-pointer chain",
			(unsigned long long)st->nr_dwarf_fp_frames);
	fputc('\n', f);
	if (cut)
		fprintf(f, "perfconv: warning: %llu user stacks cut short: %llu by the end of the copied stack, "
			"%llu by missing registers, %llu by unusable or looping CFI\n",
			(unsigned long long)cut, (unsigned long long)st->nr_dwarf_cut_stack,
			(unsigned long long)st->nr_dwarf_bad_regs, (unsigned long long)st->nr_dwarf_bad_cfi);
}

/* The header as perf report --header(-only) prints it, from what the reader kept. */
int pfc_session_print_header(struct pfc_session *s, FILE *out, int full, int no_mtime)
{
	struct pfc_hdr_view v;
	struct pfc_hdr_evsel *evs;
	size_t i;
	int ret;

	memset(&v, 0, sizeof(v));
	evs = calloc(s->rd.nr_evsels + 1, sizeof(*evs));
	if (!evs)
		return -1;
	for (i = 0; i < s->rd.nr_evsels; i++) {
		evs[i].attr = s->rd.evsels[i]->attr;
		evs[i].attr_size = s->rd.evsels[i]->attr_size;
		evs[i].name = s->rd.evsels[i]->name;
		evs[i].ids = s->rd.evsels[i]->ids;
		evs[i].nr_ids = s->rd.evsels[i]->nr_ids;
	}
	v.path = s->opts->input;
	v.pipe_mode = s->rd.pipe_mode;
	v.needs_swap = s->rd.swap;
	if (!s->rd.pipe_mode) {
		v.data_offset = s->rd.data.offset;
		v.data_size = s->rd.data.size;
		v.feat_offset = s->rd.feat_offset;
	}
	v.header_version = 1;
	memcpy(v.feat_bitmap, s->rd.feat_bitmap, sizeof(v.feat_bitmap));
	for (i = 0; i < PFC_FEAT_BITS; i++)
		v.feat[i] = s->rd.feat[i];
	v.evsels = evs;
	v.nr_evsels = s->rd.nr_evsels;
	v.have_mtime = no_mtime ? 1 : s->rd.have_mtime;
	v.mtime = no_mtime ? 0 : s->rd.mtime;
	ret = pfc_hdr_print(out, &v, full);
	free(evs);
	return ret;
}
