/*
 * writer.h - the interface between the converter and the output formats.  A writer gets
 * the finished session read-only (frames already symbolized) and writes one file; it
 * declares what it needs so the pipeline keeps only that.
 */
#ifndef PFC_WRITER_H
#define PFC_WRITER_H

#include <stdio.h>
#include "converter/util/error.h"
#include "converter/session.h"

enum {
	PFC_NEED_STACKS = 1 << 0,   /* the aggregated stacks */
	PFC_NEED_STREAM = 1 << 1,   /* every sample in time order */
	PFC_NEED_LOG = 1 << 2,      /* the conversion's warnings as text (pfc_wopts.warnings) */
	PFC_OWN_GZIP = 1 << 3,      /* compresses its own output when pfc_wopts.gzip is set, or always */
	PFC_NO_GZIP = 1 << 4,       /* an archive already: a .gz name is refused */
	PFC_NEED_FILES = 1 << 5,    /* the files the symbol sources used (a pack): written after the others */
	PFC_DIFF = 1 << 6,          /* draws a comparison with --diff BASE (o->diff_base) */
	PFC_NEED_THROWS = 1 << 7,   /* the frames that threw the runtime's exceptions (--events) */
	PFC_NEED_MARKS = 1 << 8,    /* lost events and throttling with their times (s->marks) */
	PFC_NEED_TIMES = 1 << 9,    /* every sample's time, period and stack (s->times) */
	PFC_NEED_RUNTIME_MARKS = 1 << 10,  /* --events: GCs, exceptions and JIT with their times (s->evs.marking) */
	PFC_READS_EVENTS = 1 << 11, /* --events: reads every event of the streams itself (a corrupt one fails it) */
};

struct pfc_packw_pre;

/* What a pack holds, for the summary (the pack writer fills it). */
struct pfc_pack_summary {
	size_t files;               /* files packed (each once) */
	size_t by_place[PFC_FILES_NR];  /* of them, by the place of the first file with their bytes */
	uint64_t file_bytes;        /* their size */
	uint64_t pack_bytes;        /* the pack's size, compressed */
	uint64_t cache_hits, cache_misses, cache_corrupt;  /* members' frames in the symbol cache */
	uint64_t cache_known;  /* of the hits, members written without being read (known by their files) */
};

/* Options of the output formats (the CLI fills them). */
struct pfc_wopts {
	/* folded (stackcollapse-perf.pl options of the same names) */
	int pid, tid, kernel, jit, addrs;
	const char *event;          /* --event: keep only this event; NULL = the first one seen */
	/* perf-script */
	const char *fields;         /* --fields: perf script -F list; NULL = perf script's defaults */
	int gzip;                   /* compress the output (the output name ends in .gz) */
	/* speedscope */
	int speedscope_by;          /* PFC_SPEEDSCOPE_BY_*: one profile per thread or per process */
	const char *version;        /* perfconv's version, for formats that name their exporter */
	/* svg (flamegraph.pl options of the same names) */
	const char *title;          /* NULL: "Flame Graph", or "Icicle Graph" when inverted */
	int width;                  /* pixels; 0: 1200 */
	double minwidth;            /* frames narrower than this are left out (pixels, or % of the whole) */
	int minwidth_set, minwidth_pct;
	int inverted;               /* icicle graph: roots at the top */
	/* trace.zip */
	int include_perf_data;      /* add the recording itself */
	const char *output;         /* the output's name; NULL or "-" = stdout */
	const char *command_line;   /* as typed, for the log */
	const char *warnings;       /* PFC_NEED_LOG: what the conversion warned about */
	FILE *log;                  /* where a writer warns about what it writes (the CLI's stderr, or
				     * a batch worker's kept warnings); NULL: -q */
	struct pfc_pack_summary *pack_summary;  /* pack: filled when written; NULL: not wanted */
	struct pfc_packw_pre *pack_recording;  /* pack: the recording's frame, made meanwhile; NULL: none */
	/* --diff BASE: the base recording, read and symbolized with the same options; NULL: none */
	struct pfc_session *diff_base;
	int diff_normalize;         /* scale the base to the new total, as difffolded.pl -n */
	int negate;                 /* svg: flamegraph.pl --negate, red where a frame shrank */
	int top;                    /* top: how many functions (0: 20) */
};

enum { PFC_SPEEDSCOPE_BY_THREAD, PFC_SPEEDSCOPE_BY_PROCESS };

struct pfc_writer {
	const char *name;           /* -f NAME */
	const char *const *suffixes;/* output name endings that select it */
	unsigned needs;
	int (*write)(FILE *out, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err);
};

extern const struct pfc_writer pfc_writer_folded;
extern const struct pfc_writer pfc_writer_perf_script;
extern const struct pfc_writer pfc_writer_speedscope;
extern const struct pfc_writer pfc_writer_svg;
extern const struct pfc_writer pfc_writer_perfview;
extern const struct pfc_writer pfc_writer_pprof;
extern const struct pfc_writer pfc_writer_pack;
extern const struct pfc_writer pfc_writer_top;
extern const struct pfc_writer pfc_writer_runtime;
extern const struct pfc_writer pfc_writer_firefox;

/* All writers, NULL-terminated. */
extern const struct pfc_writer *const pfc_writers[];
const struct pfc_writer *pfc_writer_by_name(const char *name);
/* The writer an output name selects by its ending, or NULL.  A name ending in .gz that no
 * writer claims as a whole (.perf.txt.gz, .pb.gz) is looked up without it and sets *gzip. */
const struct pfc_writer *pfc_writer_by_filename(const char *path, int *gzip);
/* Whether an output name asks for gzip: it ends in .gz. */
int pfc_writer_name_gzip(const char *path);
/* Runs w on out, through gzip when o->gzip asks for it and w does not compress itself. */
int pfc_writer_write(const struct pfc_writer *w, FILE *out, struct pfc_session *s, const struct pfc_wopts *o,
		     struct pfc_error *err);
/* Writes the formats and the name endings that select them, one per line, for messages. */
void pfc_writer_list_suffixes(FILE *fp);

#endif
