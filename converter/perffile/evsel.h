/*
 * evsel.h - one recorded event (perf_event_attr + ids + name) and its decode plan, and
 * the PERF_RECORD_SAMPLE / sample_id_all decoders.  Decoding fills a caller-owned
 * struct pfc_sample with values and pointers into the record: nothing is allocated.
 * Which evsel a record belongs to (id_pos/is_pos) is decided in evlist.c.
 */
#ifndef PFC_EVSEL_H
#define PFC_EVSEL_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include "converter/util/error.h"

/* The attr bits that decide the sample layout, with precomputed sizes. */
struct pfc_evsel {
	struct perf_event_attr attr;   /* host order, zero-extended to sizeof */
	uint32_t attr_size;            /* attr.size as recorded (may exceed sizeof) */
	char *name;                    /* from EVENT_DESC / EVENT_UPDATE / derived */
	uint64_t *ids;
	size_t nr_ids, cap_ids;
	int idx;
	/* decode plan */
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t branch_sample_type;
	unsigned regs_user_nr, regs_intr_nr;
	unsigned id_hdr_size;          /* bytes of the sample_id_all trailer */
	int sample_id_all;
	/* A sample's fixed layout up to its callchain, byte offsets into the body, for the
	 * callchain cache's path (sample.c): cc_off is 0 when the sample has no callchain, no
	 * tid, or something before the callchain or after it that a cached stack cannot stand
	 * for (read values, a user stack copy, branch entries); time_off and period_off are
	 * PFC_NO_FIELD when absent. */
	uint16_t cc_off, tid_off, time_off, period_off;
	uint16_t sample_time_off;      /* a sample's time, whatever follows it; PFC_NO_FIELD: none */
	/* statistics */
	uint64_t nr_samples;
	uint64_t nr_lost_samples;
	uint64_t period_total;
};

#define PFC_NO_FIELD 0xffff

enum {
	PFC_S_HAS_TID = 1 << 0,
	PFC_S_HAS_TIME = 1 << 1,
	PFC_S_HAS_CPU = 1 << 2,
	PFC_S_HAS_PERIOD = 1 << 3,
	PFC_S_HAS_CALLCHAIN = 1 << 4,
	PFC_S_HAS_ID = 1 << 5,
	PFC_S_HAS_REGS_USER = 1 << 6,
	PFC_S_HAS_STACK_USER = 1 << 7,
	PFC_S_HAS_RAW = 1 << 8,
	PFC_S_HAS_READ = 1 << 9,
	PFC_S_HAS_MEM = 1 << 10,        /* WEIGHT, WEIGHT_STRUCT or DATA_SRC */
};

struct pfc_sample {
	const struct pfc_evsel *evsel;
	uint64_t file_offset;
	uint32_t flags;                /* PFC_S_HAS_* */
	uint16_t misc;
	uint64_t id, ip, addr, stream_id, period, time;
	uint32_t pid, tid, cpu;
	/* PERF_SAMPLE_READ: read_nr counter values (1 without PERF_FORMAT_GROUP), each
	 * read_stride u64 from read_values, the counter's value first and its id (0: none)
	 * read_id_off u64 after it */
	uint64_t read_nr;
	const uint8_t *read_values;
	uint32_t read_stride, read_id_off;
	/* callchain: nr u64 in file order */
	uint64_t callchain_nr;
	const uint8_t *callchain;
	/* raw (tracepoint payload) */
	uint32_t raw_size;
	const uint8_t *raw;
	/* branch stack */
	uint64_t branch_nr, branch_hw_idx;
	const uint8_t *branch;         /* { from, to, flags }[nr] */
	/* user registers and stack, for DWARF unwinding */
	uint64_t regs_user_abi, regs_user_mask;
	const uint8_t *regs_user;      /* popcount(mask) u64 */
	uint64_t stack_user_size, stack_user_dyn_size;
	const uint8_t *stack_user;
	uint64_t weight, data_src, transaction, phys_addr, cgroup, data_page_size, code_page_size;
	uint64_t aux_size;
	const uint8_t *aux;
};

void pfc_evsel_prepare(struct pfc_evsel *ev);

/* Decode a SAMPLE record body (after the 8-byte header), `len` bytes. */
int pfc_sample_parse(const struct pfc_evsel *ev, const uint8_t *body, uint64_t len, int swap,
		     uint64_t file_offset, struct pfc_sample *s, struct pfc_error *err);

/* Decode the sample_id_all trailer at the end of a non-sample record body. */
int pfc_sample_parse_id(const struct pfc_evsel *ev, const uint8_t *body, uint64_t len, int swap,
			struct pfc_sample *s);

/* Load perf_event_attr from file bytes (any size >= 64), swapping if needed. */
int pfc_attr_load(struct perf_event_attr *attr, uint32_t *recorded_size, const uint8_t *p,
		  uint64_t avail, int swap);

static inline uint64_t pfc_chain_ip(const struct pfc_sample *s, uint64_t i, int swap)
{
	uint64_t v;
	__builtin_memcpy(&v, s->callchain + i * 8, 8);
	return swap ? __builtin_bswap64(v) : v;
}

#endif
