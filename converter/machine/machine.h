/*
 * machine.h - perf's thread -> maps -> DSO model for one recording: threads by tid with
 * their comm, per-process address maps as they are at the current point of the
 * (time-ordered) record stream, the kernel map, and the DSO table (one entry per path and
 * build-id, shared by all processes).  Symbols are not loaded here; see symbolize.c.
 */
#ifndef PFC_MACHINE_H
#define PFC_MACHINE_H

#include <stddef.h>
#include <stdint.h>
#include "converter/machine/intern.h"

/*
 * What an executable mapping holds decides where its symbols come from.  The names are
 * always the ones perf prints, so that output keyed on them stays perf's.
 */
enum pfc_dso_kind {
	PFC_DSO_FILE,        /* an ELF file on disk (also perf inject's jitted-PID-N.so: see jitted) */
	PFC_DSO_KERNEL,      /* [kernel.kallsyms] */
	PFC_DSO_PERFMAP,     /* anonymous executable memory: /tmp/perf-PID.map */
	PFC_DSO_VDSO,        /* [vdso] */
	PFC_DSO_KSYM,        /* kernel code announced by a KSYMBOL record (BPF, trampolines) */
	PFC_DSO_OTHER,       /* [heap], [stack], non-exec anon memory, ... : never resolves */
	PFC_DSO_PE,          /* a PE image mapped from disk (.NET ReadyToRun .dll/.exe): not ELF */
	PFC_DSO_JIT,         /* JIT code perf does not treat as anonymous: an executable
			      * memfd:doublemapper (.NET W^X) or [anon:NAME] mapping */
	PFC_DSO_JITMARK,     /* the marker mapping of a jitdump, jit-PID.dump */
	PFC_DSO_JITCODE,     /* one code load of a jitdump read directly (not a mapping of
			      * the recording): named as perf inject names its jitted-PID-N.so */
	PFC_DSO_LABEL,       /* not code: a frame that names what a thread did ("[off-cpu: S]" of
			      * --thread-time); the name is the symbol */
};

static inline int pfc_dso_is_jit_region(int kind)
{
	return kind == PFC_DSO_PERFMAP || kind == PFC_DSO_JIT;
}

struct pfc_symtab;
struct pfc_perfmap;

struct pfc_dso {
	uint32_t id;               /* index in the DSO table */
	enum pfc_dso_kind kind;
	const char *name;          /* as perf prints it (interned) */
	uint8_t build_id[20];
	int build_id_len;
	int pid;                   /* PERFMAP: the pid of /tmp/perf-PID.map */
	int loaded;                /* symbols were looked for */
	int unresolved_warned;
	struct pfc_symtab *syms;   /* NULL until loaded, or when none were found */
	struct pfc_perfmap *perfmap; /* PERFMAP: the parsed perf-PID.map (owned by the session) */
	int jitted;                /* FILE: a jitted-PID-N.so written by perf inject --jit */
	const char *jit_name;      /* JITCODE: the method name of the load */
	uint64_t jit_start;        /* JITCODE: its code address */
	int jit_events;            /* JITCODE: a method of the runtime's events (--events), not a jitdump's */
	const char *perfmap_path;  /* PERFMAP: the file it was read from (interned) */
	int r2r;                   /* FILE that is a PE image: enum pfc_r2r_status (r2rmap.h), 0 = not PE */
	int no_symtab;             /* FILE: loaded, and no file had a .symtab (stripped: .dynsym or nothing) */
	int not_found;             /* FILE: loaded, no_symtab, and not stripped: 1 no file was found to read,
				    * 2 the file there is another build (its build-id differs) */
	const char *r2r_why;       /* PE image not resolved: why, as r2rmap.c says it (interned), or NULL */
	int from_debuginfod;       /* FILE: its symbols came from a debuginfod server */
	struct pfc_dso *hnext;
};

struct pfc_map {
	uint64_t start, end, pgoff;
	struct pfc_dso *dso;
	uint32_t prot, flags;
	int identity;              /* map_ip(ip) == ip (anon/JIT, kernel) */
	/* the callchain caches' bookkeeping, not part of the mapping: its maps' cgen + 1 when a
	 * cached frame was found in it (seen), or in no map below it and above the one before */
	uint64_t seen, gap_seen;
};

struct pfc_maps {
	struct pfc_map *v;         /* sorted by start, non-overlapping */
	size_t n, cap;
	uint64_t gen;              /* bumped by every change: caches keyed on it stay valid */
	/* The callchain caches' generation (chaincache.c, callchain.c), bumped only by a change that may name
	 * an address looked up under it otherwise: a map over a map such an address was found
	 * in (seen), unless it maps that part the same way (same DSO, offset, protection and
	 * flags), or over a gap where one was found in no map (gap_seen, top_seen above the
	 * last map), a fork's copy, or pfc_maps_bump.  A .NET process maps each new piece of
	 * JIT code (hundreds) beside the code already run, or maps its code region again a
	 * page longer, and each of those bumped gen. */
	uint64_t cgen, top_seen;
	uint64_t jit_changes;      /* session.c (note_jit_map): the JIT symbols' changes when cgen was last checked */
	size_t hint;               /* the map found last: looked at first (any index below n is
	                            * safe: maps do not overlap) */
	uint8_t unwindable;        /* perf-compat: a map whose ELF perf could read was seen */
};

struct pfc_thread {
	int32_t pid, tid;
	uint32_t comm;             /* interned; ":tid" until a COMM arrives */
	int comm_set;
	uint64_t nr_samples;       /* samples read of this thread, filtered or not */
	struct pfc_maps *maps;     /* shared with the process leader */
	struct pfc_thread *hnext;
};

struct pfc_machine {
	struct pfc_intern *strings;
	/* threads by tid */
	struct pfc_thread **thash;
	size_t tcap, tcount;
	/* threads found lately, by tid's low bits: a sample's thread without the hash table */
#define PFC_TRECENT 256
	struct pfc_thread *recent[PFC_TRECENT];
	/* every maps object, to free them */
	struct pfc_maps **all_maps;
	size_t nr_all_maps, cap_all_maps;
	/* DSOs */
	struct pfc_dso **dsos;
	size_t nr_dsos, cap_dsos;
	struct pfc_dso **dhash;
	size_t dcap;
	/* kernel */
	struct pfc_dso *kernel;
	uint64_t kstart, kend;
	int have_kernel_map;
	/* the kernel map's relocation reference: "[kernel.kallsyms]_text" names _text, and its
	 * pgoff is where _text was on the recording machine (perf's ref_reloc_sym) */
	char kref_name[64];
	uint64_t kref_addr;
	/* perf-compat, a recording without a kernel map: perf's is the running kernel's
	 * [_text, _etext), which the session sets (have_kdef) */
	uint64_t kdef_start, kdef_end;
	int have_kdef;
	struct pfc_map kmap;
	struct pfc_maps ksym_maps;   /* KSYMBOL maps: one symbol each, named like their DSO */
	struct pfc_maps kmod_maps;   /* kernel modules, from their kernel MMAP records */
	uint64_t kgen;               /* bumped when kernel address resolution changes */
	/* build-ids from the BUILD_ID feature / HEADER_BUILD_ID, applied to DSOs by path */
	struct pfc_bid { const char *path; uint8_t id[20]; int len; int kernel; } *bids;
	size_t nr_bids, cap_bids;
};

int pfc_machine_init(struct pfc_machine *m, struct pfc_intern *strings);
void pfc_machine_exit(struct pfc_machine *m);

struct pfc_thread *pfc_machine_findnew_thread_slow(struct pfc_machine *m, int32_t pid, int32_t tid);
static inline struct pfc_thread *pfc_machine_findnew_thread(struct pfc_machine *m, int32_t pid, int32_t tid)
{
	struct pfc_thread *th = m->recent[(uint32_t)tid % PFC_TRECENT];

	return th && th->tid == tid && th->pid == pid ? th : pfc_machine_findnew_thread_slow(m, pid, tid);
}
/* The thread tid of process pid as it is now (threads are never removed); NULL when unknown. */
const struct pfc_thread *pfc_machine_find_thread(struct pfc_machine *m, int32_t pid, int32_t tid);
/* Every thread the machine knows, in no particular order. */
void pfc_machine_each_thread(const struct pfc_machine *m, void (*fn)(const struct pfc_thread *th, void *arg),
			     void *arg);
int pfc_machine_comm(struct pfc_machine *m, int32_t pid, int32_t tid, const char *comm, size_t len);
int pfc_machine_fork(struct pfc_machine *m, int32_t pid, int32_t tid, int32_t ppid, int32_t ptid);
int pfc_machine_mmap(struct pfc_machine *m, int32_t pid, int32_t tid, int kernel, uint64_t start,
		     uint64_t len, uint64_t pgoff, uint32_t prot, uint32_t flags,
		     const uint8_t *build_id, int build_id_len, const char *filename, size_t fnlen);
/* The DSO of this name, kind and pid (pid -1 unless per-process), created when new. */
struct pfc_dso *pfc_machine_dso_findnew(struct pfc_machine *m, const char *name, size_t len,
					enum pfc_dso_kind kind, int pid);
/* Whether a path's last component is "jit-<digits>.dump"; *pid gets the digits. */
int pfc_machine_is_jitdump_name(const char *path, int *pid);
int pfc_machine_add_build_id(struct pfc_machine *m, const char *path, const uint8_t *id, int len, int kernel);

/* KSYMBOL: kernel code [addr, addr+len) named `name` appears or (unregister) goes. */
/* The one reader of perf inject's "jitted-PID-N.so" names (an ELF file perf inject --jit
 * wrote for one jitdump load): its PID, 0 when the name is one but its PID is unusable, -1
 * when it is not one. */
int pfc_machine_jitted_pid(const char *path);
int pfc_machine_ksymbol(struct pfc_machine *m, uint64_t addr, uint32_t len, const char *name, size_t namelen,
			int unregister);

/* An address whose frame the callchain caches keep under maps->cgen (see cgen). */
void pfc_maps_watch(struct pfc_maps *ms, uint64_t addr);
/* Every frame cached under maps->cgen may be named otherwise now. */
static inline void pfc_maps_bump(struct pfc_maps *ms)
{
	ms->cgen++;
}

/* The map of `ip` for a thread, by cpumode (PERF_RECORD_MISC_KERNEL/USER); NULL = none. */
const struct pfc_map *pfc_machine_find_map(struct pfc_machine *m, struct pfc_thread *t, int kernel,
					   uint64_t ip);

/* The kernel's map as the machine has it now: the recorded kernel map, stretched to the kallsyms
 * range once the kernel's symbols are loaded.  kmap holds it as of the last call (a kernel
 * lookup makes one), so it may be older. */
const struct pfc_map *pfc_machine_kernel_map(struct pfc_machine *m);

#endif
