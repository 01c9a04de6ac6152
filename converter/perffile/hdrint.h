/*
 * hdrint.h - what the three parts of the header printer share: the bounds-checked cursor
 * over a feature payload, perf header strings, the decoded perf_event_attr (hdrattr.c), the
 * state that feature processing leaves for printing (hdrfeat.c), and the calls between
 * them.  Private to hdrattr.c, hdrfeat.c and hdrprint.c; the public interface is hdrprint.h.
 */
#ifndef PFC_HDRINT_H
#define PFC_HDRINT_H

#include <byteswap.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "converter/perffile/hdrprint.h"

#define HDR_NR_FEAT PFC_FEAT_LAST_KNOWN /* perf 6.1's HEADER_LAST_FEATURE (32) */
#define HDR_NSEC_PER_SEC ((uint64_t)1000000000)
#define HDR_ATTR_SIZE_61 128           /* sizeof(struct perf_event_attr) in perf 6.1 */
#define HDR_BUF 1024                   /* perf's attr value buffer (BUF_SIZE) */

/* ------------------------------------------------------------------ cursor */

struct cur {
	const uint8_t *p;
	uint64_t size, off;
	int swap;
};

static inline void cur_init(struct cur *c, const struct pfc_blob *b, int swap)
{
	c->p = b->data;
	c->size = b->data ? b->size : 0;
	c->off = 0;
	c->swap = swap;
}

static inline uint64_t cur_left(const struct cur *c)
{
	return c->size - c->off;
}

static inline int cur_skip(struct cur *c, uint64_t n)
{
	if (n > cur_left(c))
		return -1;
	c->off += n;
	return 0;
}

static inline int cur_u32(struct cur *c, uint32_t *v)
{
	uint32_t x;

	if (cur_left(c) < 4)
		return -1;
	memcpy(&x, c->p + c->off, 4);
	c->off += 4;
	*v = c->swap ? bswap_32(x) : x;
	return 0;
}

static inline int cur_u64(struct cur *c, uint64_t *v)
{
	uint64_t x;

	if (cur_left(c) < 8)
		return -1;
	memcpy(&x, c->p + c->off, 8);
	c->off += 8;
	*v = c->swap ? bswap_64(x) : x;
	return 0;
}

/* perf_header_string: u32 len (NUL and padding included), then len bytes.  The text is what
 * precedes the first NUL; it never extends past len (perf would read on). */
struct hstr {
	const char *s;
	size_t n;
	int set;
};

static inline int cur_str(struct cur *c, struct hstr *s)
{
	uint32_t len;

	if (cur_u32(c, &len) || len > cur_left(c))
		return -1;
	s->s = (const char *)c->p + c->off;
	s->n = strnlen(s->s, len);
	s->set = 1;
	c->off += len;
	return 0;
}

static inline int hstr_eq(const struct hstr *s, const char *lit)
{
	return s->set && s->n == strlen(lit) && !memcmp(s->s, lit, s->n);
}

static inline void put_hstr(FILE *out, const struct hstr *s)
{
	if (!s->set)
		fputs("(null)", out);
	else
		fwrite(s->s, 1, s->n, out);
}

/* string_size() of header.c: what perf believes a string occupied (uses strlen, not len). */
static inline uint64_t hstr_size(const struct hstr *s)
{
	return ((s->n + 1 + PFC_NAME_ALIGN - 1) / PFC_NAME_ALIGN) * PFC_NAME_ALIGN + 4;
}

/* ------------------------------------------------------------------ attrs */

/* The perf 6.1 perf_event_attr fields perf prints, with the bitfield word as a plain u64
 * numbered little-endian style (bit 0 = disabled). */
struct hattr {
	uint32_t type, size;
	uint64_t config, sample_period, sample_type, read_format, flags;
	uint32_t wakeup_events, bp_type;
	uint64_t bp_addr, bp_len, branch_sample_type, sample_regs_user;
	uint32_t sample_stack_user;
	int32_t clockid;
	uint64_t sample_regs_intr;
	uint32_t aux_watermark;
	uint16_t sample_max_stack, reserved_2;
	uint32_t aux_sample_size, reserved_3;
	uint64_t sig_data;
};

enum {
	F_DISABLED, F_INHERIT, F_PINNED, F_EXCLUSIVE, F_EXCLUDE_USER, F_EXCLUDE_KERNEL,
	F_EXCLUDE_HV, F_EXCLUDE_IDLE, F_MMAP, F_COMM, F_FREQ, F_INHERIT_STAT, F_ENABLE_ON_EXEC,
	F_TASK, F_WATERMARK, F_PRECISE_IP /* 2 bits */, F_MMAP_DATA = 17, F_SAMPLE_ID_ALL,
	F_EXCLUDE_HOST, F_EXCLUDE_GUEST, F_EXCLUDE_CALLCHAIN_KERNEL, F_EXCLUDE_CALLCHAIN_USER,
	F_MMAP2, F_COMM_EXEC, F_USE_CLOCKID, F_CONTEXT_SWITCH, F_WRITE_BACKWARD, F_NAMESPACES,
	F_KSYMBOL, F_BPF_EVENT, F_AUX_OUTPUT, F_CGROUP, F_TEXT_POKE, F_BUILD_ID, F_INHERIT_THREAD,
	F_REMOVE_ON_EXEC, F_SIGTRAP, F_RESERVED_1 /* 26 bits, 38..63 */
};

void hdr_attr_decode(struct hattr *a, const uint8_t *b, size_t n, int swap);
int hdr_attr_check(const struct hattr *a);
void hdr_attr_print(FILE *out, const struct hattr *a);

/* ------------------------------------------------------------------ feature state */

#define BPF_INFO_SIZE_61 232            /* sizeof(struct bpf_prog_info) in perf 6.1's uapi */

struct bpf_prog {
	uint32_t id, info_len, data_len;
	size_t seq;                   /* file order: the first of a duplicated id wins */
	uint64_t arrays;
	uint64_t info_off, data_off;  /* into the BPF_PROG_INFO blob */
};

struct bpf_btf {
	uint32_t id, size;
	size_t seq;
	uint64_t off;                 /* into the BPF_BTF blob */
};

/* A list of strings (or records) counted and located by processing, re-walked to print. */
struct slist {
	uint32_t nr;
	uint64_t off;
	int set;
};

struct hdr_state {
	const struct pfc_hdr_view *v;
	struct hstr hostname, osrelease, version, arch, cpudesc, cpuid;
	int32_t nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem;
	struct slist cmdline;
	struct {
		struct slist cores, threads, dies;
		uint32_t nr_cores, nr_threads, nr_dies; /* as perf stores them */
		int cpu_valid, cpu_ids, die_ids;
		int32_t cpu_nr;
		uint64_t cpu_off, die_off;
	} topo;
	struct slist numa;
	uint32_t nr_pmu_mappings;
	struct slist pmu_map;
	struct slist caches;
	uint64_t first_sample_time, last_sample_time;
	uint64_t mem_bsize;
	uint64_t nr_mem_nodes;
	uint64_t mem_off;
	int mem_set;
	uint64_t clockid_res_ns;
	struct {
		int32_t clockid;
		uint64_t tod_ns, clockid_ns;
		int enabled;
	} clock;
	uint32_t comp_ver, comp_type, comp_level, comp_ratio, comp_mmap_len;
	struct slist cpu_pmu_caps;
	struct slist pmu_caps;
	struct slist hybrid;
	uint64_t dir_version;
	/* group desc: evsel leaders and member counts as process_group_desc leaves them */
	size_t *leader;
	int32_t *nr_members;
	struct hstr *group_name;
	/* bpf */
	struct bpf_prog *progs;
	size_t nr_progs, cap_progs;
	struct bpf_btf *btfs;
	size_t nr_btfs, cap_btfs;
};

static inline void feat_cur(const struct hdr_state *st, int feat, struct cur *c)
{
	cur_init(c, &st->v->feat[feat], st->v->needs_swap);
}

extern const char *const hdr_feat_names[HDR_NR_FEAT];
int hdr_feat_full_only(int feat);
int hdr_feat_no_print(int feat);
int hdr_feat_no_process(int feat);
int hdr_cpulist_format(const struct hstr *in, char *out, size_t outsz);
uint64_t hdr_blob_ld(const struct pfc_blob *b, uint64_t off, unsigned w, int swap);
int hdr_feat_process(struct hdr_state *st, int feat);
void hdr_sort_bpf(struct hdr_state *st);
int hdr_skip_strings(struct cur *c, uint32_t nr);
int hdr_mem_node_read(struct cur *c, uint64_t *node, uint64_t *nbits, uint64_t *words_off);

#endif
