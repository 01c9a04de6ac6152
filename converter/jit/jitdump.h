/*
 * jitdump.h - reader for the jitdump files JIT runtimes write (jit-PID.dump: CoreCLR with
 * PerfMapEnabled=1/2, V8 --perf-prof, ...), in the format of Linux perf's
 * jitdump-specification.txt, and a time-aware lookup of the code loads it describes.
 * It reads the dump itself: perf inject --jit is not needed.
 */
#ifndef PFC_JITDUMP_H
#define PFC_JITDUMP_H

#include <stddef.h>
#include <stdint.h>
#include "converter/util/error.h"
#include "converter/util/ivindex.h"

enum {
	PFC_JIT_CODE_LOAD = 0,
	PFC_JIT_CODE_MOVE = 1,
	PFC_JIT_CODE_DEBUG_INFO = 2,
	PFC_JIT_CODE_CLOSE = 3,
	PFC_JIT_CODE_UNWINDING_INFO = 4,
};

#define PFC_JITDUMP_MAGIC 0x4A695444u          /* "JiTD" in the writer's byte order */
#define PFC_JITDUMP_FLAG_ARCH_TIMESTAMP 1u

/* One piece of code: a LOAD, or a MOVE of a loaded piece to a new address. */
struct pfc_jitdump_ent {
	uint64_t start, end;        /* code address range */
	uint64_t time;              /* the record's timestamp */
	uint64_t code_index;        /* perf inject names its file jitted-PID-<code_index>.so */
	uint32_t seq;               /* record order */
	uint32_t pid;               /* the record's pid (the writer's, in its pid namespace) */
	uint32_t name_off, name_len;
	uint32_t nr_lines;          /* line-table entries of the DEBUG_INFO record before it */
	uint8_t moved;              /* made by a MOVE */
};

struct pfc_jitdump {
	/* header */
	uint32_t version, elf_mach, pid;
	uint64_t time, flags;
	int swap;
	/* code loads, sorted by start then seq */
	struct pfc_jitdump_ent *v;
	struct pfc_ivindex ix;      /* the loads' ranges */
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	/* what the file held */
	uint64_t nr_load, nr_move, nr_debug, nr_unwind, nr_close, nr_unknown;
	uint64_t nr_no_code;        /* loads without their code bytes (allowed) */
	uint64_t nr_move_orphan;    /* moves of a code index no load announced */
	int truncated;              /* the last record was cut short (writer still running) */
	uint64_t truncated_at;      /* its offset */
	uint64_t cut_start, cut_end;/* the code of the cut record, when it is a load whose fixed part
				     * was written (else both 0): what it would have named */
	uint64_t min_time, max_time;/* of the loads */
};

/* Parse a jitdump held in memory (the fuzzing entry point).  A malformed header or
 * record gives PFC_ERR_CORRUPT / PFC_ERR_BAD_MAGIC / PFC_ERR_UNSUPPORTED with its file
 * offset in err; a record cut short at the end of the buffer is not an error (truncated
 * is set and the records before it are kept).  Returns 0 or a negative error code. */
int pfc_jitdump_parse(struct pfc_jitdump *jd, const uint8_t *buf, size_t len, struct pfc_error *err);
/* Read and parse a file; PFC_ERR_OPEN when it cannot be read. */
int pfc_jitdump_load(struct pfc_jitdump *jd, const char *path, struct pfc_error *err);
void pfc_jitdump_free(struct pfc_jitdump *jd);

/* The code covering addr.  With use_time, the latest load at or before `time` (what perf
 * inject's time-ordered mappings give); without, the latest load of the file. */
const struct pfc_jitdump_ent *pfc_jitdump_find(const struct pfc_jitdump *jd, uint64_t addr, uint64_t time,
					       int use_time);

static inline const char *pfc_jitdump_name(const struct pfc_jitdump *jd, const struct pfc_jitdump_ent *e)
{
	return jd->names + e->name_off;
}

#endif
