/*
 * hdrfeat.c - processing of the header's feature payloads as perf 6.1's process_* functions
 * do: each payload is untrusted and decoded through the bounds-checked cursor into struct
 * hdr_state, which hdrprint.c prints from.  Like perf, a failure stops the later features,
 * which then print as empty.
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>

#include "converter/perffile/hdrint.h"

const char *const hdr_feat_names[HDR_NR_FEAT] = {
	NULL, "TRACING_DATA", "BUILD_ID", "HOSTNAME", "OSRELEASE", "VERSION", "ARCH", "NRCPUS",
	"CPUDESC", "CPUID", "TOTAL_MEM", "CMDLINE", "EVENT_DESC", "CPU_TOPOLOGY",
	"NUMA_TOPOLOGY", "BRANCH_STACK", "PMU_MAPPINGS", "GROUP_DESC", "AUXTRACE", "STAT",
	"CACHE", "SAMPLE_TIME", "MEM_TOPOLOGY", "CLOCKID", "DIR_FORMAT", "BPF_PROG_INFO",
	"BPF_BTF", "COMPRESSED", "CPU_PMU_CAPS", "CLOCK_DATA", "HYBRID_TOPOLOGY", "PMU_CAPS",
};

/* Features printed only with -I (the others print in full or not at all). */
int hdr_feat_full_only(int feat)
{
	return feat == PFC_FEAT_CPU_TOPOLOGY || feat == PFC_FEAT_NUMA_TOPOLOGY ||
	       feat == PFC_FEAT_CACHE || feat == PFC_FEAT_MEM_TOPOLOGY ||
	       feat == PFC_FEAT_HYBRID_TOPOLOGY;
}

/* Features perf has no print function for. */
int hdr_feat_no_print(int feat)
{
	return feat == PFC_FEAT_RESERVED || feat == PFC_FEAT_TRACING_DATA ||
	       feat == PFC_FEAT_BUILD_ID;
}

/* Features perf has no process function for (pipe mode skips them entirely). */
int hdr_feat_no_process(int feat)
{
	return feat == PFC_FEAT_RESERVED || feat == PFC_FEAT_BRANCH_STACK ||
	       feat == PFC_FEAT_STAT;
}

/* ---- cpu lists (perf_cpu_map__new + cpu_map__snprint) */

struct cpu_iv {
	unsigned long lo, hi;
};

static int iv_cmp(const void *a, const void *b)
{
	const struct cpu_iv *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * Normalise a cpu list the way perf 6.1 parses and prints it: "3,0-1" -> "0-1,3".  Returns
 * -1 where perf_cpu_map__new() fails (the NUMA feature then fails to process).  Ranges are
 * kept as intervals, so "0-2000000000" costs nothing.
 */
int hdr_cpulist_format(const struct hstr *in, char *out, size_t outsz)
{
	struct cpu_iv *iv = NULL;
	size_t niv = 0, cap = 0, i, len = 0;
	char *s, *p, *list;
	int ret = -1;

	out[0] = 0;
	s = malloc(in->n + 1);
	if (!s)
		return -1;
	memcpy(s, in->s, in->n);
	s[in->n] = 0;
	list = s;
	if (!isdigit((unsigned char)*list) && *list)
		goto out;
	while (isdigit((unsigned char)*list)) {
		unsigned long start, end;

		p = NULL;
		start = strtoul(list, &p, 0);
		if (start >= INT_MAX || (*p && *p != ',' && *p != '-'))
			goto out;
		if (*p == '-') {
			list = ++p;
			p = NULL;
			end = strtoul(list, &p, 0);
			if (end >= INT_MAX || (*p && *p != ',') || end < start)
				goto out;
		} else {
			end = start;
		}
		if (niv == cap) {
			struct cpu_iv *n = realloc(iv, (cap = cap ? cap * 2 : 8) * sizeof(*iv));

			if (!n)
				goto out;
			iv = n;
		}
		iv[niv].lo = start;
		iv[niv++].hi = end;
		if (*p)
			++p;
		list = p;
	}
	if (!niv) {
		snprintf(out, outsz, "-1");    /* the dummy map */
		ret = 0;
		goto out;
	}
	qsort(iv, niv, sizeof(*iv), iv_cmp);
	for (i = 1; i < niv; i++)               /* a cpu listed twice is invalid */
		if (iv[i].lo <= iv[i - 1].hi)
			goto out;
	for (i = 0; i < niv; i++) {
		unsigned long lo = iv[i].lo, hi = iv[i].hi;

		while (i + 1 < niv && iv[i + 1].lo == hi + 1)
			hi = iv[++i].hi;
		if (len < outsz) {
			int n = lo == hi ? snprintf(out + len, outsz - len, "%s%lu", len ? "," : "", lo)
				: snprintf(out + len, outsz - len, "%s%lu-%lu", len ? "," : "", lo, hi);

			len += n > 0 ? (size_t)n : 0;
		}
	}
	ret = 0;
out:
	free(iv);
	free(s);
	return ret;
}

/* ---- processing (perf's process_* functions) */

static int proc_string(struct hdr_state *st, int feat, struct hstr *dst)
{
	struct cur c;

	feat_cur(st, feat, &c);
	return cur_str(&c, dst);
}

/* Walk nr strings from c; -1 when one does not fit. */
int hdr_skip_strings(struct cur *c, uint32_t nr)
{
	struct hstr s;

	while (nr--)
		if (cur_str(c, &s))
			return -1;
	return 0;
}

static int proc_cmdline(struct hdr_state *st)
{
	struct cur c;
	uint32_t nr;

	feat_cur(st, PFC_FEAT_CMDLINE, &c);
	if (cur_u32(&c, &nr))
		return -1;
	st->cmdline.nr = nr;
	st->cmdline.off = c.off;
	if (hdr_skip_strings(&c, nr))
		return -1;
	st->cmdline.set = 1;
	return 0;
}

static int proc_cpu_topology(struct hdr_state *st)
{
	struct cur c;
	uint64_t size = 0, secsize;
	uint32_t nr, i;
	int32_t cpu_nr = st->nr_cpus_avail;
	int core_test = 1;
	struct hstr s;

	feat_cur(st, PFC_FEAT_CPU_TOPOLOGY, &c);
	secsize = c.size;
	st->topo.cpu_nr = cpu_nr;
	if (cpu_nr < 0 || cpu_nr > (1 << 20))   /* refuse absurd counts (perf's calloc) */
		return -1;
	st->topo.cpu_valid = 1;
	if (cur_u32(&c, &nr))
		goto free_cpu;
	st->topo.nr_cores = nr;
	size += 4;
	st->topo.cores.off = c.off;
	for (i = 0; i < nr; i++) {
		if (cur_str(&c, &s))
			goto free_cpu;
		size += hstr_size(&s);
	}
	st->topo.cores.nr = nr;
	st->topo.cores.set = 1;
	if (cur_u32(&c, &nr))
		return -1;
	st->topo.nr_threads = nr;
	size += 4;
	st->topo.threads.off = c.off;
	for (i = 0; i < nr; i++) {
		if (cur_str(&c, &s))
			goto free_cpu;
		size += hstr_size(&s);
	}
	st->topo.threads.nr = nr;
	st->topo.threads.set = 1;
	if (secsize <= size) {          /* old perf: no core/socket ids */
		st->topo.cpu_valid = 0;
		return 0;
	}
	if (st->arch.set && ((st->arch.n >= 4 && !memcmp(st->arch.s, "s390", 4)) ||
			     (st->arch.n >= 7 && !memcmp(st->arch.s, "aarch64", 7))))
		core_test = 0;
	st->topo.cpu_off = c.off;
	for (i = 0; i < (uint32_t)cpu_nr; i++) {
		uint32_t core, sock;

		if (cur_u32(&c, &core) || cur_u32(&c, &sock))
			goto free_cpu;
		size += 8;
		if (core_test && sock != (uint32_t)-1 && sock > (uint32_t)cpu_nr)
			goto free_cpu;
	}
	st->topo.cpu_ids = 1;
	if (secsize <= size)            /* no die information */
		return 0;
	if (cur_u32(&c, &nr))
		return -1;
	st->topo.nr_dies = nr;
	st->topo.dies.off = c.off;
	if (hdr_skip_strings(&c, nr))
		goto free_cpu;
	st->topo.dies.nr = nr;
	st->topo.dies.set = 1;
	st->topo.die_off = c.off;
	for (i = 0; i < (uint32_t)cpu_nr; i++) {
		uint32_t die;

		if (cur_u32(&c, &die))
			goto free_cpu;
	}
	st->topo.die_ids = 1;
	return 0;
free_cpu:
	st->topo.cpu_valid = 0;
	return -1;
}

static int proc_numa(struct hdr_state *st)
{
	struct cur c;
	uint32_t nr, i, node;
	uint64_t m;
	struct hstr s;
	char buf[HDR_BUF];

	feat_cur(st, PFC_FEAT_NUMA_TOPOLOGY, &c);
	if (cur_u32(&c, &nr))
		return -1;
	st->numa.off = c.off;
	for (i = 0; i < nr; i++) {
		if (cur_u32(&c, &node) || cur_u64(&c, &m) || cur_u64(&c, &m) || cur_str(&c, &s))
			return -1;
		if (hdr_cpulist_format(&s, buf, sizeof(buf)))
			return -1;
	}
	st->numa.nr = nr;
	st->numa.set = 1;
	return 0;
}

static int proc_pmu_mappings(struct hdr_state *st)
{
	struct cur c;
	uint32_t nr, i, type;
	struct hstr s;

	feat_cur(st, PFC_FEAT_PMU_MAPPINGS, &c);
	if (cur_u32(&c, &nr))
		return -1;
	if (!nr)
		return 0;
	st->nr_pmu_mappings = nr;
	st->pmu_map.off = c.off;
	for (i = 0; i < nr; i++)
		if (cur_u32(&c, &type) || cur_str(&c, &s))
			return -1;
	st->pmu_map.nr = nr;
	st->pmu_map.set = 1;
	return 0;
}

static int proc_group_desc(struct hdr_state *st)
{
	const struct pfc_hdr_view *v = st->v;
	struct cur c;
	uint32_t nr_groups, i, nr = 0, a, b;
	uint64_t desc_off;
	struct hstr s;
	size_t k, leader = 0;

	feat_cur(st, PFC_FEAT_GROUP_DESC, &c);
	if (cur_u32(&c, &nr_groups))
		return -1;
	if (!nr_groups)
		return 0;
	desc_off = c.off;
	for (i = 0; i < nr_groups; i++)
		if (cur_str(&c, &s) || cur_u32(&c, &a) || cur_u32(&c, &b))
			return -1;
	if (!st->leader)
		return -1;
	/* Rebuild the groups as perf does: walk the evsels, consuming one desc per leader. */
	c.off = desc_off;
	i = 0;
	for (k = 0; k < v->nr_evsels; k++) {
		struct hstr name = { 0 };
		uint32_t lidx = 0, nrm = 0;
		uint64_t save = c.off;

		if (i < nr_groups) {
			cur_str(&c, &name);
			cur_u32(&c, &lidx);
			cur_u32(&c, &nrm);
		}
		if (i < nr_groups && (int)k == (int)lidx) {
			st->leader[k] = k;
			if (!hstr_eq(&name, "{anon_group}"))
				st->group_name[k] = name;
			st->nr_members[k] = (int32_t)nrm;
			if (nr > 0)
				return -1;
			leader = k;
			nr = (uint32_t)st->nr_members[k] - 1;
			i++;
		} else {
			c.off = save;
			if (nr) {
				st->leader[k] = leader;
				nr--;
			}
		}
	}
	if (i != nr_groups || nr != 0)
		return -1;
	return 0;
}

static int proc_auxtrace(struct hdr_state *st)
{
	struct cur c;
	uint64_t nr;

	feat_cur(st, PFC_FEAT_AUXTRACE, &c);
	if (cur_u64(&c, &nr))
		return -1;
	if (nr > (c.size - 8) / 16)
		return -1;
	return 0;
}

static int proc_cache(struct hdr_state *st)
{
	struct cur c;
	uint32_t ver, cnt, i, x;
	struct hstr s;

	feat_cur(st, PFC_FEAT_CACHE, &c);
	if (cur_u32(&c, &ver) || ver != 1 || cur_u32(&c, &cnt))
		return -1;
	st->caches.off = c.off;
	for (i = 0; i < cnt; i++)
		if (cur_u32(&c, &x) || cur_u32(&c, &x) || cur_u32(&c, &x) || cur_u32(&c, &x) ||
		    cur_str(&c, &s) || cur_str(&c, &s) || cur_str(&c, &s))
			return -1;
	st->caches.nr = cnt;
	st->caches.set = 1;
	return 0;
}

static int proc_sample_time(struct hdr_state *st)
{
	struct cur c;
	uint64_t a, b;

	feat_cur(st, PFC_FEAT_SAMPLE_TIME, &c);
	if (cur_u64(&c, &a) || cur_u64(&c, &b))
		return -1;
	st->first_sample_time = a;
	st->last_sample_time = b;
	return 0;
}

/* One MEM_TOPOLOGY node: u64 node, u64 size, then a bitmap { u64 nbits; u64 words[] }. */
int hdr_mem_node_read(struct cur *c, uint64_t *node, uint64_t *nbits, uint64_t *words_off)
{
	uint64_t sz, nwords;

	if (cur_u64(c, node) || cur_u64(c, &sz) || cur_u64(c, nbits))
		return -1;
	nwords = *nbits / 64 + (*nbits % 64 != 0);
	*words_off = c->off;
	if (nwords > cur_left(c) / 8)
		return -1;
	c->off += nwords * 8;
	return 0;
}

static int proc_mem_topology(struct hdr_state *st)
{
	struct cur c;
	uint64_t ver, bsize, nr, i, node, nbits, wo;

	feat_cur(st, PFC_FEAT_MEM_TOPOLOGY, &c);
	if (cur_u64(&c, &ver) || ver != 1 || cur_u64(&c, &bsize) || cur_u64(&c, &nr))
		return -1;
	st->mem_off = c.off;
	for (i = 0; i < nr; i++)
		if (hdr_mem_node_read(&c, &node, &nbits, &wo))
			return -1;
	st->mem_bsize = bsize;
	st->nr_mem_nodes = nr;
	st->mem_set = 1;
	return 0;
}

static int proc_clockid(struct hdr_state *st)
{
	struct cur c;

	feat_cur(st, PFC_FEAT_CLOCKID, &c);
	return cur_u64(&c, &st->clockid_res_ns);
}

static int proc_clock_data(struct hdr_state *st)
{
	struct cur c;
	uint32_t ver, id;

	feat_cur(st, PFC_FEAT_CLOCK_DATA, &c);
	if (cur_u32(&c, &ver) || ver != 1 || cur_u32(&c, &id))
		return -1;
	st->clock.clockid = (int32_t)id;
	if (cur_u64(&c, &st->clock.tod_ns) || cur_u64(&c, &st->clock.clockid_ns))
		return -1;
	st->clock.enabled = 1;
	return 0;
}

static int proc_compressed(struct hdr_state *st)
{
	struct cur c;

	feat_cur(st, PFC_FEAT_COMPRESSED, &c);
	if (cur_u32(&c, &st->comp_ver) || cur_u32(&c, &st->comp_type) ||
	    cur_u32(&c, &st->comp_level) || cur_u32(&c, &st->comp_ratio) ||
	    cur_u32(&c, &st->comp_mmap_len))
		return -1;
	return 0;
}

static int proc_cpu_pmu_caps(struct hdr_state *st)
{
	struct cur c;
	uint32_t nr;

	feat_cur(st, PFC_FEAT_CPU_PMU_CAPS, &c);
	st->cpu_pmu_caps.off = c.off;
	if (cur_u32(&c, &nr) || hdr_skip_strings(&c, nr) || hdr_skip_strings(&c, nr))
		return -1;
	st->cpu_pmu_caps.nr = nr;
	st->cpu_pmu_caps.set = 1;
	return 0;
}

static int proc_pmu_caps(struct hdr_state *st)
{
	struct cur c;
	uint32_t nr, i, n;
	struct hstr s;

	feat_cur(st, PFC_FEAT_PMU_CAPS, &c);
	if (cur_u32(&c, &nr))
		return -1;
	if (!nr)
		return 0;
	st->pmu_caps.off = c.off;
	for (i = 0; i < nr; i++) {
		if (cur_u32(&c, &n) || hdr_skip_strings(&c, n) || hdr_skip_strings(&c, n) ||
		    cur_str(&c, &s))
			return -1;
	}
	st->pmu_caps.nr = nr;
	st->pmu_caps.set = 1;
	return 0;
}

static int proc_hybrid(struct hdr_state *st)
{
	struct cur c;
	uint32_t nr;

	feat_cur(st, PFC_FEAT_HYBRID_TOPOLOGY, &c);
	if (cur_u32(&c, &nr))
		return -1;
	st->hybrid.off = c.off;
	if (hdr_skip_strings(&c, nr) || hdr_skip_strings(&c, nr))
		return -1;
	st->hybrid.nr = nr;
	st->hybrid.set = 1;
	return 0;
}

static int proc_dir_format(struct hdr_state *st)
{
	struct cur c;

	if (!st->v->is_dir)             /* perf WARNs and fails outside directory mode */
		return -1;
	feat_cur(st, PFC_FEAT_DIR_FORMAT, &c);
	return cur_u64(&c, &st->dir_version);
}

static int proc_tracing_data(struct hdr_state *st)
{
	static const uint8_t magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const struct pfc_blob *b = &st->v->feat[PFC_FEAT_TRACING_DATA];

	if (!b->data || b->size < sizeof(magic) || memcmp(b->data, magic, sizeof(magic)))
		return -1;
	return 0;
}

/* perf_bpil from BPF_PROG_INFO: u32 info_len, u32 data_len, u64 arrays, info, data. */

static int bpf_prog_cmp(const void *a, const void *b)
{
	const struct bpf_prog *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int bpf_btf_cmp(const void *a, const void *b)
{
	const struct bpf_btf *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Grow *arr (elements of size sz) so that one more fits; -1 when memory runs out. */
static int grow(void **arr, size_t nr, size_t *cap, size_t sz)
{
	void *n;

	if (nr < *cap)
		return 0;
	n = realloc(*arr, (*cap = *cap ? *cap * 2 : 16) * sz);
	if (!n)
		return -1;
	*arr = n;
	return 0;
}

uint64_t hdr_blob_ld(const struct pfc_blob *b, uint64_t off, unsigned w, int swap)
{
	uint64_t v = 0;
	uint32_t v32;

	if (!b->data || off > b->size || w > b->size - off)
		return 0;
	if (w == 4) {
		memcpy(&v32, b->data + off, 4);
		return swap ? bswap_32(v32) : v32;
	}
	memcpy(&v, b->data + off, 8);
	return swap ? bswap_64(v) : v;
}

static int proc_bpf_prog_info(struct hdr_state *st)
{
	struct cur c;
	uint32_t count, i, info_len, data_len;
	uint64_t arrays;

	if (st->v->needs_swap)          /* perf warns and keeps nothing */
		return 0;
	feat_cur(st, PFC_FEAT_BPF_PROG_INFO, &c);
	if (cur_u32(&c, &count))
		return -1;
	for (i = 0; i < count; i++) {
		struct bpf_prog p;

		if (cur_u32(&c, &info_len) || cur_u32(&c, &data_len))
			return -1;
		if (info_len > BPF_INFO_SIZE_61)
			return -1;
		if (cur_u64(&c, &arrays))
			return -1;
		p.info_off = c.off;
		if (cur_skip(&c, info_len))
			return -1;
		p.data_off = c.off;
		if (cur_skip(&c, data_len))
			return -1;
		p.info_len = info_len;
		p.data_len = data_len;
		p.arrays = arrays;
		p.id = info_len >= 8 ? (uint32_t)hdr_blob_ld(&st->v->feat[PFC_FEAT_BPF_PROG_INFO],
							p.info_off + 4, 4, 0) : 0;
		p.seq = st->nr_progs;
		if (grow((void **)&st->progs, st->nr_progs, &st->cap_progs, sizeof(p)))
			return -1;
		st->progs[st->nr_progs++] = p;
	}
	return 0;
}

static int proc_bpf_btf(struct hdr_state *st)
{
	struct cur c;
	uint32_t count, i, id, size;

	if (st->v->needs_swap)
		return 0;
	feat_cur(st, PFC_FEAT_BPF_BTF, &c);
	if (cur_u32(&c, &count))
		return -1;
	for (i = 0; i < count; i++) {
		struct bpf_btf b;

		if (cur_u32(&c, &id) || cur_u32(&c, &size))
			return -1;
		b.id = id;
		b.size = size;
		b.off = c.off;
		b.seq = st->nr_btfs;
		if (cur_skip(&c, size))
			return -1;
		if (grow((void **)&st->btfs, st->nr_btfs, &st->cap_btfs, sizeof(b)))
			return -1;
		st->btfs[st->nr_btfs++] = b;
	}
	return 0;
}

static int proc_nrcpus(struct hdr_state *st)
{
	struct cur c;
	uint32_t a, o;

	feat_cur(st, PFC_FEAT_NRCPUS, &c);
	if (cur_u32(&c, &a) || cur_u32(&c, &o))
		return -1;
	st->nr_cpus_avail = (int32_t)a;
	st->nr_cpus_online = (int32_t)o;
	return 0;
}

static int proc_total_mem(struct hdr_state *st)
{
	struct cur c;

	feat_cur(st, PFC_FEAT_TOTAL_MEM, &c);
	return cur_u64(&c, &st->total_mem);
}

int hdr_feat_process(struct hdr_state *st, int feat)
{
	/* In pipe mode perf hands these two the fd of the stream's start (0), not the payload:
	 * they fail (perf's stdin is not the feature), and so the stream stops there. */
	if (st->v->pipe_mode && (feat == PFC_FEAT_TRACING_DATA || feat == PFC_FEAT_AUXTRACE))
		return -1;
	switch (feat) {
	case PFC_FEAT_TRACING_DATA: return proc_tracing_data(st);
	case PFC_FEAT_HOSTNAME: return proc_string(st, feat, &st->hostname);
	case PFC_FEAT_OSRELEASE: return proc_string(st, feat, &st->osrelease);
	case PFC_FEAT_VERSION: return proc_string(st, feat, &st->version);
	case PFC_FEAT_ARCH: return proc_string(st, feat, &st->arch);
	case PFC_FEAT_NRCPUS: return proc_nrcpus(st);
	case PFC_FEAT_CPUDESC: return proc_string(st, feat, &st->cpudesc);
	case PFC_FEAT_CPUID: return proc_string(st, feat, &st->cpuid);
	case PFC_FEAT_TOTAL_MEM: return proc_total_mem(st);
	case PFC_FEAT_CMDLINE: return proc_cmdline(st);
	case PFC_FEAT_CPU_TOPOLOGY: return proc_cpu_topology(st);
	case PFC_FEAT_NUMA_TOPOLOGY: return proc_numa(st);
	case PFC_FEAT_PMU_MAPPINGS: return proc_pmu_mappings(st);
	case PFC_FEAT_GROUP_DESC: return proc_group_desc(st);
	case PFC_FEAT_AUXTRACE: return proc_auxtrace(st);
	case PFC_FEAT_CACHE: return proc_cache(st);
	case PFC_FEAT_SAMPLE_TIME: return proc_sample_time(st);
	case PFC_FEAT_MEM_TOPOLOGY: return proc_mem_topology(st);
	case PFC_FEAT_CLOCKID: return proc_clockid(st);
	case PFC_FEAT_DIR_FORMAT: return proc_dir_format(st);
	case PFC_FEAT_BPF_PROG_INFO: return proc_bpf_prog_info(st);
	case PFC_FEAT_BPF_BTF: return proc_bpf_btf(st);
	case PFC_FEAT_COMPRESSED: return proc_compressed(st);
	case PFC_FEAT_CPU_PMU_CAPS: return proc_cpu_pmu_caps(st);
	case PFC_FEAT_CLOCK_DATA: return proc_clock_data(st);
	case PFC_FEAT_HYBRID_TOPOLOGY: return proc_hybrid(st);
	case PFC_FEAT_PMU_CAPS: return proc_pmu_caps(st);
	default: return 0;      /* BUILD_ID, EVENT_DESC (printed from the blob), BRANCH_STACK, STAT */
	}
}

/* Order what processing collected the way perf's rb-trees hand it out: by id, and an id seen
 * again is dropped (perf keeps the first).  Safe to call more than once. */
void hdr_sort_bpf(struct hdr_state *st)
{
	size_t i, n;

	if (st->nr_progs > 1) {
		qsort(st->progs, st->nr_progs, sizeof(*st->progs), bpf_prog_cmp);
		for (i = n = 1; i < st->nr_progs; i++)
			if (st->progs[i].id != st->progs[n - 1].id)
				st->progs[n++] = st->progs[i];
		st->nr_progs = n;
	}
	if (st->nr_btfs > 1) {
		qsort(st->btfs, st->nr_btfs, sizeof(*st->btfs), bpf_btf_cmp);
		for (i = n = 1; i < st->nr_btfs; i++)
			if (st->btfs[i].id != st->btfs[n - 1].id)
				st->btfs[n++] = st->btfs[i];
		st->nr_btfs = n;
	}
}
