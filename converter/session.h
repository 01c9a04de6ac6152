/*
 * session.h - one conversion: reads a recording through reader.c, orders its records,
 * keeps the machine state, turns samples into frame tuples and aggregates them, then
 * resolves each unique frame once.  Settings (struct pfc_opts) are kept apart from the
 * state (struct pfc_session); writers get the finished, read-only result.  The state's
 * parts are defined by the files of converter/ that own them.
 */
#ifndef PFC_SESSION_H
#define PFC_SESSION_H

#include <stdio.h>
#include <stdint.h>
#include "converter/perffile/chan.h"
#include "converter/util/error.h"
#include "converter/util/tuning.h"
#include "converter/machine/filter.h"
#include "converter/machine/intern.h"
#include "converter/jit/jitsym.h"
#include "converter/machine/machine.h"
#include "converter/perffile/order.h"
#include "converter/perffile/reader.h"
#include "converter/machine/stacks.h"
#include "converter/stream.h"
#include "converter/marks.h"
#include "converter/times.h"
#include "converter/offcpu.h"
#include "converter/native/debuginfod.h"
#include "converter/native/symsrv.h"
#include "converter/files/files.h"
#include "converter/machine/chaincache.h"
#include "converter/callchain.h"
#include "converter/inline.h"
#include "converter/kernel.h"
#include "converter/pipeline.h"
#include "converter/evsample.h"
#include "converter/r2rframes.h"
#include "converter/sample.h"
#include "converter/symbolize.h"
#include "converter/unwind_user.h"

struct pfc_session;

struct pfc_opts {
	const char *input;
	const struct pfc_tuning *tuning;  /* the tests' PERFCONV_* settings (cli/env.c); NULL: none */
	const char *symfs;
	const char *kallsyms;
	const char *buildid_dir;     /* NULL: $HOME/.debug */
	int buildid_dir_given;       /* --buildid-dir, not the default */
	const char *map_dir;         /* where perf-PID.map files were copied */
	int no_sort;                 /* process in file order */
	int minidebuginfo;           /* also read .gnu_debugdata symbols (perf 6.1 does not) */
	int max_stack;               /* perf script's limit: 127 */
	int verbose;
	int record_files;            /* remember every file the symbol sources used (writing a pack) */
	int preload_kernel;          /* read kernel symbols on a second thread from the start */
	int keep_stream;             /* keep every sample in time order (writers that need it) */
	int keep_marks;              /* keep lost-events and throttle records as marks (s->marks) */
	int keep_times;              /* keep every sample's time, period and stack (s->times) */
	int r2r_funcs;               /* R2R images without a usable map: name frames by function RVA */
	const char *debuginfod_urls; /* servers to fetch missing debug files from; NULL: none */
	double debuginfod_timeout;   /* seconds per file; 0: 10 */
	const char *symsrv_urls;     /* symbol servers (SSQP) to fetch missing debug files from; NULL: none */
	double symsrv_timeout;       /* seconds to connect and the longest stall; 0: 10 */
	const char *symsrv_cache;    /* where their files are kept ($XDG_CACHE_HOME/perfconv-symbols) */
	const char *cache_dir;       /* the kernel symbol cache ($XDG_CACHE_HOME/perfconv); NULL: none */
	FILE *log;                   /* warnings; NULL = quiet */
	/* JIT code */
	/* Names beyond perf 6.1's (on by default; off with --perf-compat): W^X JIT code, jitdumps
	 * read without perf inject, container pids, ReadyToRun methods.  Where perf names a
	 * frame, the name is perf's in either mode. */
	int resolve_jit;             /* also where perf does not: see pfc_callchain_add_map_frame */
	int perf_compat;             /* perf 6.1's names exactly, none added (--perf-compat) */
	const struct pfc_pidmap *pid_map; /* --pid-map HOST=NS */
	size_t nr_pid_map;
	int dotnet_names;            /* PFC_DOTNET_NAMES_*: the display names of folded, SVG, speedscope */
	int dotnet_names_text;       /* the same for the text formats (perf-script, trace.zip) */
	int strip_tiers;             /* drop .NET tier tags ([OptimizedTier1], ...) from the display names */
	int strip_tiers_text;        /* the same for the text formats' names */
	int script_pids;             /* folded --pid/--tid print "?" for the pid, as stackcollapse-perf.pl
				      * does (--perf-compat; --diff, whose two recordings' pids differ) */
	int fold_runs;               /* the aggregating writers draw a run of unnamed frames of one DSO
				      * as one frame (pfc_stacks_run_tail) */
	int offcpu;                  /* PFC_OFFCPU_*: weigh sched_switch callchains by the time slept */
	int thread_time;             /* off-CPU intervals and cpu-clock/task-clock samples in one profile */
	struct pfc_filter *filter;   /* samples to keep (perf script's --comm/--pid=/--tid=/--time); NULL: all */
	/* the .NET runtime's events (evsample.c): --events FILE.nettrace, one a process (none:
	 * a pack's own), and what they do to the samples */
	const char *const *events;
	size_t nr_events;
	const int32_t *events_pids;  /* each stream's process in the recording, 0: the stream's own pid
				      * (perfconv record knows it for a runtime in a pid namespace) */
	int alloc;                   /* --alloc: the allocation events' stacks, in bytes, instead of perf's samples */
	int during_gc;               /* --during gc: only the samples taken while their process was paused for a GC */
	int throw_frames;            /* -f runtime: name the frames that throw each exception type */
	int runtime_marks;           /* -f firefox: each GC, exception and JIT compilation, for a timeline */
	int events_read_later;       /* an output reads every event of the streams (trace.zip's CTF), and
				      * finds a corrupt one: the load reads their Trace objects only,
				      * unless the samples need their contents */
	/* called every few thousand records while reading (bytes done, samples); NULL: none */
	void (*progress)(void *arg, const struct pfc_session *s);
	void *progress_arg;
};

/* What a sample was delivered with, kept for writers that need the stream. */
struct pfc_session_stats {
	uint64_t nr_records;
	uint64_t nr_by_type[PFC_REC_MAX];
	uint64_t nr_samples;          /* as perf delivers them: a group read's record gives several */
	uint64_t nr_samples_bad;      /* samples that could not be decoded */
	uint64_t nr_samples_filtered; /* read, but left out by the filter */
	uint64_t nr_lost_events, nr_lost_records, nr_lost_samples;
	uint64_t nr_frames;           /* frames in all samples */
	uint64_t nr_unresolved_user, nr_unresolved_kernel, nr_unresolved_nomap;
	/* --call-graph dwarf: samples unwound, walks served from the cache of identical
	 * stacks, frames found on the frame-pointer chain through JIT code, and walks cut
	 * short by bad input (stack copy too short, registers missing, CFI unusable or looping) */
	uint64_t nr_dwarf_unwound, nr_dwarf_cache_hits, nr_dwarf_fp_frames;
	uint64_t nr_dwarf_cut_stack, nr_dwarf_bad_regs, nr_dwarf_bad_cfi, nr_dwarf_bad_stack;
	/* unique JIT frames by the source of their name */
	uint64_t nr_jit_perfmap, nr_jit_jitdump, nr_jit_jitted, nr_jit_unresolved;
	uint64_t nr_jit_events;      /* named by the runtime's method events (--events) */
	/* unique frames in ReadyToRun (PE) images: resolved, and unresolved by enum pfc_r2r_status */
	uint64_t nr_r2r_resolved;
	uint64_t nr_r2r_unresolved[8];
	uint64_t nr_r2r_metadata;     /* of the resolved: named from the image's own metadata */
	uint64_t nr_out_of_order;
	/* the running kernel's symbols: served by the cache, read and cached (a miss), of which
	 * an entry was there but corrupt and ignored */
	uint64_t nr_symcache_hits, nr_symcache_misses, nr_symcache_corrupt;
	/* the symbol cache's ELF tables (elfsym.c): hits, misses (written), corrupt entries among them */
	uint64_t nr_ecache_hits, nr_ecache_misses, nr_ecache_corrupt;
	uint64_t nr_dcache_hits, nr_dcache_misses, nr_dcache_corrupt;	/* inflated DWARF images */
	/* ReadyToRun images whose method names came from the symbol cache (r2rframes.c), whose
	 * names were made and written, and corrupt entries among the latter */
	uint64_t nr_rcache_hits, nr_rcache_misses, nr_rcache_corrupt;
};

/*
 * One conversion's state.  Each part a file of converter/ owns is a struct of that file's
 * header, embedded here; the rest is shared: the reader, machine, strings, stacks and
 * statistics that every part and the writers read.
 */
struct pfc_session {
	const struct pfc_opts *opts;
	const struct pfc_tuning *tuning;  /* opts->tuning, or one with nothing set */
	struct pfc_error *err;
	struct pfc_reader rd;
	struct pfc_intern strings;
	struct pfc_machine machine;
	struct pfc_stacks stacks;
	struct pfc_order order;
	int ordered;                  /* kernel records go through the ordering queue */
	struct pfc_session_stats st;
	int tp_names_tried;           /* tracepoint evsels named from the tracing data */
	struct pfc_sample_state samples;      /* sample.c */
	struct pfc_callchain callchain;       /* callchain.c: the sample being built */
	struct pfc_chaincache chains;         /* machine/chaincache.c: raw callchain -> stack */
	struct pfc_kernel_state kernel;       /* kernel.c */
	struct pfc_unwind_state unwind;       /* unwind_user.c: --call-graph dwarf */
	struct pfc_inline_state inlines;      /* inline.c: inlined frames of unwound stacks */
	struct pfc_symbolize_state symbolize; /* symbolize.c */
	struct pfc_r2rframes r2r;             /* r2rframes.c */
	struct pfc_pipeline pipeline;         /* pipeline.c: the reading thread */
	/* time-ordered sample stream (opts->keep_stream), read with pfc_stream_open */
	struct pfc_stream stream;
	uint64_t *stream_per_stack;   /* stack id -> its samples in the stream */
	size_t nr_stream_per_stack;
	struct pfc_marks marks;       /* opts->keep_marks: lost events and throttling, with their times */
	struct pfc_times times;       /* opts->keep_times: each sample's time, period and stack */
	int symbolized;
	struct pfc_jitsyms jit;       /* JIT symbol sources per process */
	struct pfc_evsample evs;      /* evsample.c: the runtime's event streams */
	struct pfc_offcpu *offcpu;    /* --off-cpu, --thread-time: the intervals (offcpu.c); NULL: off */
	struct pfc_debuginfod dbgf;   /* debuginfod client (opts->debuginfod_urls) and what it fetched */
	struct pfc_symsrv ssrv;       /* symbol-server client (opts->symsrv_urls) and what it fetched */
	struct pfc_files *files;      /* where every symbol source gets its files (files.c) */
	struct pfc_pack *pack;        /* the input is a pack: its members (pack.c) */
	char pack_input[64];          /* its recording, as a path to open */
	const char *recording_path;   /* the recording, to open: the input, or the pack's member */
	const char *recording_name;   /* its name, for the writers that name it: the input's, or
				       * the name it had where the pack was written */
};

int pfc_session_open(struct pfc_session *s, const struct pfc_opts *o, struct pfc_error *err);
/* Read all records (stats/header-only callers can stop after open). */
int pfc_session_process(struct pfc_session *s);
/* Resolve every unique frame to a symbol. */
int pfc_session_symbolize(struct pfc_session *s);
void pfc_session_close(struct pfc_session *s);
/* `perfconv --header[-only]`: the header on out, as perf report prints it; no_mtime prints no
 * file time (the fuzz target's memfd).  < 0 when it cannot be printed. */
int pfc_session_print_header(struct pfc_session *s, FILE *out, int full, int no_mtime);

/* The kernel's symbols (NULL when there are none), read now if no sample needed them yet:
 * perf resolves kernel function pointers in tracepoint payloads with them. */
const struct pfc_symtab *pfc_session_kernel_syms(struct pfc_session *s);
/* The symbol cache's directory when FOUND (a PFC_FILES_KERNEL answer) is the running
 * kernel's kallsyms, which the cache may stand in for; NULL otherwise (no cache,
 * --perf-compat, --kallsyms, a pack's). */
const char *pfc_session_kernel_cache_dir(struct pfc_session *s, const struct pfc_found *found);

const char *pfc_session_evsel_name(struct pfc_session *s, size_t idx);
/* The last name (COMM) the recording gave thread tid of process pid, or NULL when it gave none. */
const char *pfc_session_thread_comm(struct pfc_session *s, int32_t pid, int32_t tid);
/* Order of the first sample of an event (UINT64_MAX: no samples). */
uint64_t pfc_session_evsel_first(const struct pfc_session *s, size_t idx);

/* The file a DSO's symbols were read from (its debug file where one was found), or NULL:
 * where its DWARF line table is, for the source lines of its frames. */
const char *pfc_session_dso_symsrc(const struct pfc_session *s, const struct pfc_dso *d);

/* The files a trace.zip carries beside the recording (pfc_jitsyms_side_files). */
int pfc_session_side_files(struct pfc_session *s, int (*fn)(void *arg, const char *path, const char *name,
							     const char *entry), void *arg);

/* For the files of converter/ that make up a session: one record (data, size bytes at file
 * offset off) processed; and the records read to the end, kernel records through the
 * ordering queue (the pipeline's reading thread runs this). */
int pfc_session_record(struct pfc_session *s, const uint8_t *data, uint32_t size, uint64_t off);
int pfc_session_read(struct pfc_session *s);

#endif
