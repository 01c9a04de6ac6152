/*
 * hdrprint.c - owns the `--header` text: perf 6.1's `perf report --header-only` (and -I) output,
 * rebuilt byte for byte from a pfc_hdr_view.  Feature payloads are untrusted and are decoded here
 * through a bounds-checked cursor.  Like perf, every feature is first "processed" (a failure stops
 * the later ones, which then print as empty) and printed afterwards; in pipe mode each is processed
 * and printed in turn.  Reading the file and the record stream is the reader's job, not this one.
 * Decoding attrs is hdrattr.c's and processing the features hdrfeat.c's; this file prints.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "converter/perffile/hdrint.h"
#include "converter/util/hex.h"

/* ------------------------------------------------------------------ printing */

static void print_strings_line(FILE *out, const struct hdr_state *st, int feat,
			       const struct slist *l, const char *prefix)
{
	struct cur c;
	struct hstr s;
	uint32_t i;

	if (!l->set)
		return;
	feat_cur(st, feat, &c);
	c.off = l->off;
	for (i = 0; i < l->nr && !cur_str(&c, &s); i++) {
		fputs(prefix, out);
		put_hstr(out, &s);
		fputc('\n', out);
	}
}

static void print_cmdline(FILE *out, const struct hdr_state *st)
{
	struct cur c;
	struct hstr s;
	uint32_t i;

	fputs("# cmdline : ", out);
	if (st->cmdline.set) {
		feat_cur(st, PFC_FEAT_CMDLINE, &c);
		c.off = st->cmdline.off;
		for (i = 0; i < st->cmdline.nr && !cur_str(&c, &s); i++) {
			/* single quotes are printed as \' */
			size_t j, from = 0;

			for (j = 0; j < s.n; j++) {
				if (s.s[j] != '\'')
					continue;
				fwrite(s.s + from, 1, j - from, out);
				fputs("\\'", out);
				from = j + 1;
			}
			fwrite(s.s + from, 1, s.n - from, out);
			fputc(' ', out);
		}
	}
	fputc('\n', out);
}

/* print_event_desc(): re-reads EVENT_DESC; any failure gives the "not available" line. */
static void print_event_desc(FILE *out, const struct hdr_state *st)
{
	struct cur c;
	uint32_t nre, sz, i, nr, j;
	uint64_t start, k = 0;
	int ok = 1;

	feat_cur(st, PFC_FEAT_EVENT_DESC, &c);
	if (cur_u32(&c, &nre) || cur_u32(&c, &sz))
		ok = 0;
	/* First pass: validate everything as read_event_desc() does. */
	start = c.off;
	for (i = 0; ok && i < nre; i++) {
		struct hattr a;
		struct hstr name = { 0 };
		size_t msz = sz < HDR_ATTR_SIZE_61 ? sz : HDR_ATTR_SIZE_61;

		if (sz > cur_left(&c)) {
			ok = 0;
			break;
		}
		hdr_attr_decode(&a, c.p + c.off, msz, c.swap);
		c.off += sz;
		if (hdr_attr_check(&a) || cur_u32(&c, &nr) || cur_str(&c, &name) ||
		    nr > cur_left(&c) / 8)
			ok = 0;
		else
			c.off += (uint64_t)nr * 8;
	}
	if (!ok) {
		fputs("# event desc: not available or unable to read\n", out);
		return;
	}
	c.off = start;
	for (i = 0; i < nre; i++) {
		struct hattr a;
		struct hstr name = { 0 };
		size_t msz = sz < HDR_ATTR_SIZE_61 ? sz : HDR_ATTR_SIZE_61;

		hdr_attr_decode(&a, c.p + c.off, msz, c.swap);
		c.off += sz;
		cur_u32(&c, &nr);
		cur_str(&c, &name);
		if (!a.size)            /* perf's list ends at the first attr with size 0 */
			break;
		fputs("# event : name = ", out);
		put_hstr(out, &name);
		fputs(", ", out);
		if (nr) {
			fputs(", id = {", out);
			for (j = 0; j < nr; j++) {
				cur_u64(&c, &k);
				fprintf(out, "%s %" PRIu64, j ? "," : "", k);
			}
			fputs(" }", out);
		}
		hdr_attr_print(out, &a);
		fputc('\n', out);
	}
}

static void print_cpu_topology(FILE *out, const struct hdr_state *st)
{
	struct cur c;
	int32_t i, cpu_nr = st->nr_cpus_avail;

	print_strings_line(out, st, PFC_FEAT_CPU_TOPOLOGY, &st->topo.cores, "# sibling sockets : ");
	if (st->topo.nr_dies)
		print_strings_line(out, st, PFC_FEAT_CPU_TOPOLOGY, &st->topo.dies,
				   "# sibling dies    : ");
	print_strings_line(out, st, PFC_FEAT_CPU_TOPOLOGY, &st->topo.threads,
			   "# sibling threads : ");
	feat_cur(st, PFC_FEAT_CPU_TOPOLOGY, &c);
	if (!st->topo.cpu_valid) {
		if (st->topo.nr_dies)
			fputs("# Core ID, Die ID and Socket ID information is not available\n", out);
		else
			fputs("# Core ID and Socket ID information is not available\n", out);
		return;
	}
	for (i = 0; i < cpu_nr; i++) {
		uint32_t core = 0, sock = 0, die = 0;

		if (st->topo.cpu_ids) {     /* else perf's zeroed array */
			c.off = st->topo.cpu_off + (uint64_t)i * 8;
			if (cur_u32(&c, &core) || cur_u32(&c, &sock))
				break;
		}
		if (st->topo.die_ids) {
			c.off = st->topo.die_off + (uint64_t)i * 4;
			cur_u32(&c, &die);
		}
		if (st->topo.nr_dies)
			fprintf(out, "# CPU %d: Core ID %d, Die ID %d, Socket ID %d\n", (int)i,
				(int)core, (int)die, (int)sock);
		else
			fprintf(out, "# CPU %d: Core ID %d, Socket ID %d\n", (int)i, (int)core,
				(int)sock);
	}
}

static void print_numa(FILE *out, const struct hdr_state *st)
{
	struct cur c;
	uint32_t i, node;
	uint64_t total, freem;
	struct hstr s;
	char buf[HDR_BUF];

	if (!st->numa.set)
		return;
	feat_cur(st, PFC_FEAT_NUMA_TOPOLOGY, &c);
	c.off = st->numa.off;
	for (i = 0; i < st->numa.nr; i++) {
		if (cur_u32(&c, &node) || cur_u64(&c, &total) || cur_u64(&c, &freem) ||
		    cur_str(&c, &s))
			return;
		hdr_cpulist_format(&s, buf, sizeof(buf));
		fprintf(out, "# node%u meminfo  : total = %" PRIu64 " kB, free = %" PRIu64 " kB\n",
			node, total, freem);
		fprintf(out, "# node%u cpu list : %s\n", node, buf);
	}
}

static void print_pmu_mappings(FILE *out, const struct hdr_state *st)
{
	struct cur c;
	uint32_t i, type;
	struct hstr s;

	if (!st->nr_pmu_mappings) {
		fputs("# pmu mappings: not available\n", out);
		return;
	}
	if (!st->pmu_map.set) {
		fputs("# pmu mappings: unable to read\n", out);
		return;
	}
	feat_cur(st, PFC_FEAT_PMU_MAPPINGS, &c);
	c.off = st->pmu_map.off;
	for (i = 0; i < st->pmu_map.nr; i++) {
		if (cur_u32(&c, &type) || cur_str(&c, &s))
			break;
		fputs(i ? ", " : "# pmu mappings: ", out);
		put_hstr(out, &s);
		fprintf(out, " = %" PRIu32, type);
	}
	fputc('\n', out);
}

static void evsel_name(FILE *out, const struct pfc_hdr_view *v, size_t k)
{
	char buf[256];

	if (v->evsels[k].name) {
		fputs(v->evsels[k].name, out);
		return;
	}
	fputs(pfc_hdr_format_name(buf, sizeof(buf), &v->evsels[k].attr), out);
}

static void print_group_desc(FILE *out, const struct hdr_state *st)
{
	const struct pfc_hdr_view *v = st->v;
	uint32_t nr = 0;
	size_t k;

	if (!st->leader)
		return;
	for (k = 0; k < v->nr_evsels; k++) {
		if (st->leader[k] == k && st->nr_members[k] > 1) {
			fputs("# group: ", out);
			if (st->group_name[k].set)
				put_hstr(out, &st->group_name[k]);
			fputc('{', out);
			evsel_name(out, v, k);
			nr = (uint32_t)st->nr_members[k] - 1;
		} else if (nr) {
			fputc(',', out);
			evsel_name(out, v, k);
			if (--nr == 0)
				fputs("}\n", out);
		}
	}
}

static void print_cache(FILE *out, const struct hdr_state *st)
{
	struct cur c;
	uint32_t i, level, x;
	struct hstr type, size, map;

	fputs("# CPU cache info:\n", out);
	if (!st->caches.set)
		return;
	feat_cur(st, PFC_FEAT_CACHE, &c);
	c.off = st->caches.off;
	for (i = 0; i < st->caches.nr; i++) {
		if (cur_u32(&c, &level) || cur_u32(&c, &x) || cur_u32(&c, &x) || cur_u32(&c, &x) ||
		    cur_str(&c, &type) || cur_str(&c, &size) || cur_str(&c, &map))
			return;
		fprintf(out, "#  L%d %-15.*s %8.*s [", (int)level, (int)type.n, type.s,
			(int)size.n, size.s);
		put_hstr(out, &map);
		fputs("]\n", out);
	}
}

static void print_sample_time(FILE *out, const struct hdr_state *st)
{
	uint64_t f = st->first_sample_time, l = st->last_sample_time;

	fprintf(out, "# time of first sample : %" PRIu64 ".%06" PRIu64 "\n",
		f / HDR_NSEC_PER_SEC, (f % HDR_NSEC_PER_SEC) / 1000);
	fprintf(out, "# time of last sample : %" PRIu64 ".%06" PRIu64 "\n",
		l / HDR_NSEC_PER_SEC, (l % HDR_NSEC_PER_SEC) / 1000);
	fprintf(out, "# sample duration : %10.3f ms\n", (double)(l - f) / 1000000.0);
}

/* First bit >= from that equals val in the bitmap of nbits bits whose words start at wo
 * (already bounds-checked by mem_node_read); nbits when there is none. */
static uint64_t next_bit(struct cur *w, uint64_t wo, uint64_t nbits, uint64_t from, int val)
{
	uint64_t word;

	while (from < nbits) {
		w->off = wo + from / 64 * 8;
		if (cur_u64(w, &word))
			return nbits;
		if (!val)
			word = ~word;
		word >>= from % 64;
		if (word) {
			from += (uint64_t)__builtin_ctzll(word);
			return from < nbits ? from : nbits;
		}
		from = (from / 64 + 1) * 64;
	}
	return nbits;
}

static void print_mem_topology(FILE *out, const struct hdr_state *st)
{
	struct cur c;
	uint64_t i;
	char map[100];

	fprintf(out, "# memory nodes (nr %d, block size 0x%llx):\n",
		st->mem_set ? (int)st->nr_mem_nodes : 0, (unsigned long long)st->mem_bsize);
	if (!st->mem_set)
		return;
	feat_cur(st, PFC_FEAT_MEM_TOPOLOGY, &c);
	c.off = st->mem_off;
	/* perf formats each node's bitmap into the same stack buffer and writes nothing for an
	 * empty bitmap, so an empty node shows the previous node's list. */
	map[0] = 0;
	for (i = 0; i < st->nr_mem_nodes; i++) {
		uint64_t node, nbits, wo, weight = 0, bit, size, n;
		char sz[50];
		size_t len = 0;
		int unit = 0, first = 1;
		struct cur w = c;

		if (hdr_mem_node_read(&c, &node, &nbits, &wo))
			return;
		/* bitmap_scnprintf into a 100-byte buffer: ranges "0-23,32-199", cut at 99.  perf
		 * passes the bit count as an unsigned int. */
		nbits = (uint32_t)nbits;
		bit = 0;
		while ((bit = next_bit(&w, wo, nbits, bit, 1)) < nbits) {
			uint64_t lo = bit, hi = next_bit(&w, wo, nbits, bit, 0) - 1;

			weight += hi - lo + 1;
			if (len < sizeof(map) - 1) {
				int k = lo == hi ? snprintf(map + len, sizeof(map) - len, "%s%" PRIu64,
							    first ? "" : ",", lo)
					: snprintf(map + len, sizeof(map) - len, "%s%" PRIu64 "-%" PRIu64,
						   first ? "" : ",", lo, hi);

				len += k > 0 ? (size_t)k : 0;
				if (len > sizeof(map) - 1)
					len = sizeof(map) - 1;
			}
			first = 0;
			bit = hi + 1;
		}
		size = st->mem_bsize * weight;
		for (n = size; n / 1024 > 1 && unit < 3; unit++)
			n /= 1024;
		snprintf(sz, sizeof(sz), "%" PRIu64 "%c", n, "BKMG"[unit]);
		fprintf(out, "#  %3" PRIu64 " [%s]: %s\n", node, sz, map);
	}
}

static const char *clockid_name(int32_t id)
{
	switch (id) {
	case 1: return "monotonic";
	case 4: return "monotonic_raw";
	case 0: return "realtime";
	case 7: return "boottime";
	case 11: return "tai";
	default: return "(not found)";
	}
}

static void print_clock_data(FILE *out, const struct hdr_state *st)
{
	time_t tod_sec;
	long tod_usec, clk_sec, clk_nsec;
	uint64_t ref;
	struct tm tm;
	char date[64], tstr[96];
	const char *name = clockid_name(st->clock.clockid);

	if (!st->clock.enabled) {
		fputs("# reference time disabled\n", out);
		return;
	}
	ref = st->clock.tod_ns;
	tod_sec = (time_t)(ref / HDR_NSEC_PER_SEC);
	tod_usec = (long)((ref - (uint64_t)tod_sec * HDR_NSEC_PER_SEC) / 1000);
	ref = st->clock.clockid_ns;
	clk_sec = (long)(ref / HDR_NSEC_PER_SEC);
	clk_nsec = (long)(ref - (uint64_t)clk_sec * HDR_NSEC_PER_SEC);
	if (!localtime_r(&tod_sec, &tm)) {
		snprintf(tstr, sizeof(tstr), "<error>");
	} else {
		strftime(date, sizeof(date), "%F %T", &tm);
		snprintf(tstr, sizeof(tstr), "%s.%06d", date, (int)tod_usec);
	}
	fprintf(out, "# clockid: %s (%u)\n", name, (unsigned)st->clock.clockid);
	fprintf(out, "# reference time: %s = %ld.%06d (TOD) = %ld.%09ld (%s)\n", tstr,
		(long)tod_sec, (int)tod_usec, clk_sec, clk_nsec, name);
}

/* "# <pmu> pmu capabilities: a=b, c=d" from { u32 nr; { name, value }[nr] } at c. */
static int print_caps(FILE *out, struct cur *c, const struct hstr *pmu, const char *lit)
{
	uint32_t nr, i;
	struct hstr name, value;

	if (cur_u32(c, &nr))
		return -1;
	fputs("# ", out);
	if (pmu)
		put_hstr(out, pmu);
	else
		fputs(lit, out);
	if (!nr) {
		fputs(" pmu capabilities: not available\n", out);
		return 0;
	}
	fputs(" pmu capabilities: ", out);
	for (i = 0; i < nr; i++) {
		if (cur_str(c, &name) || cur_str(c, &value))
			break;
		if (i)
			fputs(", ", out);
		put_hstr(out, &name);
		fputc('=', out);
		put_hstr(out, &value);
	}
	fputc('\n', out);
	return 0;
}

static void print_cpu_pmu_caps(FILE *out, const struct hdr_state *st)
{
	struct cur c;

	if (!st->cpu_pmu_caps.set || !st->cpu_pmu_caps.nr) {
		fputs("# cpu pmu capabilities: not available\n", out);
		return;
	}
	feat_cur(st, PFC_FEAT_CPU_PMU_CAPS, &c);
	c.off = st->cpu_pmu_caps.off;
	print_caps(out, &c, NULL, "cpu");
}

static void print_pmu_caps(FILE *out, const struct hdr_state *st)
{
	struct cur c;
	uint32_t i, n;
	struct hstr pmu;

	if (!st->pmu_caps.set)
		return;
	feat_cur(st, PFC_FEAT_PMU_CAPS, &c);
	c.off = st->pmu_caps.off;
	for (i = 0; i < st->pmu_caps.nr; i++) {
		/* the pmu name follows its caps: find it first */
		struct cur caps = c;

		if (cur_u32(&c, &n) || hdr_skip_strings(&c, n) || hdr_skip_strings(&c, n) ||
		    cur_str(&c, &pmu))
			return;
		print_caps(out, &caps, &pmu, NULL);
	}
}

static void print_hybrid(FILE *out, const struct hdr_state *st)
{
	struct cur c;
	struct hstr pmu, cpus;
	uint32_t i;

	fputs("# hybrid cpu system:\n", out);
	if (!st->hybrid.set)
		return;
	feat_cur(st, PFC_FEAT_HYBRID_TOPOLOGY, &c);
	c.off = st->hybrid.off;
	for (i = 0; i < st->hybrid.nr; i++) {
		if (cur_str(&c, &pmu) || cur_str(&c, &cpus))
			return;
		fputs("# ", out);
		put_hstr(out, &pmu);
		fputs(" cpu list : ", out);
		put_hstr(out, &cpus);
		fputc('\n', out);
	}
}

/* ---- BPF: bpf_event__print_bpf_prog_info() */

/* BTF header (native byte order only): -1 when libbpf's btf__new() would refuse it. */
static int btf_header(const uint8_t *d, uint32_t size, uint32_t h[5])
{
	uint16_t magic;

	if (size < 24)
		return -1;
	memcpy(&magic, d, 2);
	if (magic != 0xeb9f)
		return -1;
	memcpy(h, d + 4, 20);   /* hdr_len, type_off, type_len, str_off, str_len */
	if (h[0] < 24 || h[0] > size || h[1] > size - h[0] || h[2] > size - h[0] - h[1] ||
	    h[3] > size - h[0] || h[4] > size - h[0] - h[3] || !h[4])
		return -1;
	return 0;
}

/* Minimal BTF reader: the name of type `id` (1-based), or NULL. */
static const char *btf_type_name(const uint8_t *d, uint32_t size, uint32_t id, size_t *len)
{
	uint32_t h[5], hdr_len, str_off, str_len, off, end, cur_id = 1;

	if (btf_header(d, size, h))
		return NULL;
	hdr_len = h[0];
	str_off = h[3];
	str_len = h[4];
	off = hdr_len + h[1];
	end = off + h[2];
	while (off + 12 <= end) {
		uint32_t name_off, info, vlen, kind, extra;

		memcpy(&name_off, d + off, 4);
		memcpy(&info, d + off + 4, 4);
		vlen = info & 0xffff;
		kind = (info >> 24) & 0x1f;
		switch (kind) {
		case 1: case 14: case 17: extra = 4; break;          /* INT, VAR, DECL_TAG */
		case 3: extra = 12; break;                           /* ARRAY */
		case 4: case 5: case 15: case 19: extra = 12 * vlen; break; /* STRUCT..ENUM64 */
		case 6: case 13: extra = 8 * vlen; break;            /* ENUM, FUNC_PROTO */
		case 2: case 7: case 8: case 9: case 10: case 11: case 12: case 16: case 18:
			extra = 0;
			break;
		default:
			return NULL;
		}
		if (cur_id == id) {
			const char *s;

			if (name_off >= str_len)
				return NULL;
			s = (const char *)d + hdr_len + str_off + name_off;
			*len = strnlen(s, str_len - name_off);
			return s;
		}
		if (extra > end - off - 12)
			return NULL;
		off += 12 + extra;
		cur_id++;
	}
	return NULL;
}

static void print_bpf_prog_info(FILE *out, const struct hdr_state *st)
{
	const struct pfc_blob *b = &st->v->feat[PFC_FEAT_BPF_PROG_INFO];
	const struct pfc_blob *bb = &st->v->feat[PFC_FEAT_BPF_BTF];
	size_t k;

	for (k = 0; k < st->nr_progs; k++) {
		const struct bpf_prog *p = &st->progs[k];
		uint8_t info[BPF_INFO_SIZE_61] = { 0 };
		uint32_t nr_ksyms, nr_lens, nr_tags, btf_id, rec_size, i, v32;
		uint64_t ksyms, lens, tags, finfo;
		const struct bpf_btf *btf = NULL;
		uint32_t hdr[5];
		char name[64];

		memcpy(info, b->data + p->info_off, p->info_len);
#define I32(o) (memcpy(&v32, info + (o), 4), v32)
#define I64(o) (memcpy(&ksyms, info + (o), 8), ksyms)
		nr_ksyms = I32(104);
		nr_lens = I32(108);
		nr_tags = I32(180);
		btf_id = I32(128);
		rec_size = I32(132);
		lens = I64(120);
		tags = I64(184);
		finfo = I64(136);
		ksyms = I64(112);
#undef I32
#undef I64
		if (nr_ksyms != nr_tags || nr_ksyms != nr_lens)
			continue;
		if (!nr_ksyms) {
			fprintf(out, "# bpf_prog_info %u:\n", p->id);
			continue;
		}
		/* array fields hold offsets into data[] for the arrays perf saved */
		if (!(p->arrays & (1u << 3)) || !(p->arrays & (1u << 4)) || !(p->arrays & (1u << 8)))
			continue;
		if (ksyms > p->data_len || (uint64_t)nr_ksyms * 8 > p->data_len - ksyms ||
		    lens > p->data_len || (uint64_t)nr_lens * 4 > p->data_len - lens ||
		    tags > p->data_len || (uint64_t)nr_tags * 8 > p->data_len - tags)
			continue;
		if (btf_id && st->nr_btfs) {
			size_t lo = 0, hi = st->nr_btfs;

			while (lo < hi) {       /* btfs are sorted by id, one per id */
				size_t mid = lo + (hi - lo) / 2;

				if (st->btfs[mid].id < btf_id)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < st->nr_btfs && st->btfs[lo].id == btf_id)
				btf = &st->btfs[lo];
		}
		if (btf && btf_header(bb->data + btf->off, btf->size, hdr))
			btf = NULL;             /* btf__new() would have failed */
		if (nr_ksyms != 1)
			fprintf(out, "# bpf_prog_info %u:\n", p->id);
		for (i = 0; i < nr_ksyms; i++) {
			uint64_t addr;
			uint32_t len;
			const char *short_name = NULL;
			size_t sl = 0, n = 0;

			memcpy(&addr, b->data + p->data_off + ksyms + 8ull * i, 8);
			memcpy(&len, b->data + p->data_off + lens + 4ull * i, 4);
			n = (size_t)snprintf(name, sizeof(name), "bpf_prog_");
			pfc_hex_format(name + n, b->data + p->data_off + tags + 8ull * i, 8);	/* the tag */
			n += 16;
			if (btf) {
				uint64_t fo = (uint64_t)i * rec_size + 4;
				uint32_t type_id;

				if ((p->arrays & (1u << 5)) && finfo <= p->data_len &&
				    fo <= p->data_len - finfo && p->data_len - finfo - fo >= 4) {
					fo += finfo;
					memcpy(&type_id, b->data + p->data_off + fo, 4);
					short_name = btf_type_name(bb->data + btf->off, btf->size,
								   type_id, &sl);
				}
			} else if (i == 0 && nr_ksyms == 1) {
				short_name = (const char *)info + 64;
				sl = strnlen(short_name, 16);
				if (!sl)
					short_name = NULL;
			} else {
				short_name = "F";
				sl = 1;
			}
			if (nr_ksyms == 1)
				fprintf(out, "# bpf_prog_info %u: %s%s%.*s addr 0x%llx size %u\n", p->id,
					name, short_name ? "_" : "", (int)sl, short_name ? short_name : "",
					(unsigned long long)addr, len);
			else
				fprintf(out, "# \tsub_prog %u: %s%s%.*s addr 0x%llx size %u\n", i, name,
					short_name ? "_" : "", (int)sl, short_name ? short_name : "",
					(unsigned long long)addr, len);
		}
	}
}

static void print_feat(FILE *out, struct hdr_state *st, int feat, int full)
{
	size_t k;

	if (hdr_feat_no_print(feat))
		return;
	if (hdr_feat_full_only(feat) && !full) {
		fprintf(out, "# %s info available, use -I to display\n", hdr_feat_names[feat]);
		return;
	}
	switch (feat) {
	case PFC_FEAT_HOSTNAME:
		fputs("# hostname : ", out);
		put_hstr(out, &st->hostname);
		fputc('\n', out);
		break;
	case PFC_FEAT_OSRELEASE:
		fputs("# os release : ", out);
		put_hstr(out, &st->osrelease);
		fputc('\n', out);
		break;
	case PFC_FEAT_VERSION:
		fputs("# perf version : ", out);
		put_hstr(out, &st->version);
		fputc('\n', out);
		break;
	case PFC_FEAT_ARCH:
		fputs("# arch : ", out);
		put_hstr(out, &st->arch);
		fputc('\n', out);
		break;
	case PFC_FEAT_NRCPUS:
		fprintf(out, "# nrcpus online : %u\n", (unsigned)st->nr_cpus_online);
		fprintf(out, "# nrcpus avail : %u\n", (unsigned)st->nr_cpus_avail);
		break;
	case PFC_FEAT_CPUDESC:
		fputs("# cpudesc : ", out);
		put_hstr(out, &st->cpudesc);
		fputc('\n', out);
		break;
	case PFC_FEAT_CPUID:
		fputs("# cpuid : ", out);
		put_hstr(out, &st->cpuid);
		fputc('\n', out);
		break;
	case PFC_FEAT_TOTAL_MEM:
		fprintf(out, "# total memory : %llu kB\n", (unsigned long long)st->total_mem);
		break;
	case PFC_FEAT_CMDLINE:
		print_cmdline(out, st);
		break;
	case PFC_FEAT_EVENT_DESC:
		print_event_desc(out, st);
		break;
	case PFC_FEAT_CPU_TOPOLOGY:
		print_cpu_topology(out, st);
		break;
	case PFC_FEAT_NUMA_TOPOLOGY:
		print_numa(out, st);
		break;
	case PFC_FEAT_BRANCH_STACK:
		fputs("# contains samples with branch stack\n", out);
		break;
	case PFC_FEAT_PMU_MAPPINGS:
		print_pmu_mappings(out, st);
		break;
	case PFC_FEAT_GROUP_DESC:
		print_group_desc(out, st);
		break;
	case PFC_FEAT_AUXTRACE:
		fputs("# contains AUX area data (e.g. instruction trace)\n", out);
		break;
	case PFC_FEAT_STAT:
		fputs("# contains stat data\n", out);
		break;
	case PFC_FEAT_CACHE:
		print_cache(out, st);
		break;
	case PFC_FEAT_SAMPLE_TIME:
		print_sample_time(out, st);
		break;
	case PFC_FEAT_MEM_TOPOLOGY:
		print_mem_topology(out, st);
		break;
	case PFC_FEAT_CLOCKID:
		fprintf(out, "# clockid frequency: %" PRIu64 " MHz\n", st->clockid_res_ns * 1000);
		break;
	case PFC_FEAT_DIR_FORMAT:
		fprintf(out, "# directory data version : %" PRIu64 "\n", st->dir_version);
		break;
	case PFC_FEAT_BPF_PROG_INFO:
		print_bpf_prog_info(out, st);
		break;
	case PFC_FEAT_BPF_BTF:
		for (k = 0; k < st->nr_btfs; k++)
			fprintf(out, "# btf info of id %u\n", st->btfs[k].id);
		break;
	case PFC_FEAT_COMPRESSED:
		fprintf(out, "# compressed : %s, level = %d, ratio = %d\n",
			st->comp_type == 1 ? "Zstd" : "Unknown", (int)st->comp_level,
			(int)st->comp_ratio);
		break;
	case PFC_FEAT_CPU_PMU_CAPS:
		print_cpu_pmu_caps(out, st);
		break;
	case PFC_FEAT_CLOCK_DATA:
		print_clock_data(out, st);
		break;
	case PFC_FEAT_HYBRID_TOPOLOGY:
		print_hybrid(out, st);
		break;
	case PFC_FEAT_PMU_CAPS:
		print_pmu_caps(out, st);
		break;
	default:
		break;
	}
}

static int feat_set(const struct pfc_hdr_view *v, int feat)
{
	return (v->feat_bitmap[feat / 64] >> (feat % 64)) & 1;
}

static int print_captured_on(FILE *out, const struct pfc_hdr_view *v)
{
	struct stat sb;
	time_t t;
	char buf[64];

	if (v->have_mtime) {
		t = (time_t)v->mtime;
	} else {
		int rc = (!v->path || !strcmp(v->path, "-")) ? fstat(0, &sb) : stat(v->path, &sb);

		if (rc)
			return -1;
		t = sb.st_mtime;
	}
	fprintf(out, "# captured on    : %s", ctime_r(&t, buf) ? buf : "(null)");
	return 0;
}

int pfc_hdr_print(FILE *out, const struct pfc_hdr_view *v, int full)
{
	struct hdr_state st;
	int feat, rc = 0;
	size_t k;

	memset(&st, 0, sizeof(st));
	st.v = v;
	if (v->nr_evsels && v->evsels) {
		st.leader = calloc(v->nr_evsels, sizeof(*st.leader));
		st.nr_members = calloc(v->nr_evsels, sizeof(*st.nr_members));
		st.group_name = calloc(v->nr_evsels, sizeof(*st.group_name));
		if (!st.leader || !st.nr_members || !st.group_name) {
			free(st.leader);
			st.leader = NULL;
		} else {
			for (k = 0; k < v->nr_evsels; k++)
				st.leader[k] = k;
		}
	}

	fputs("# ========\n", out);
	if (print_captured_on(out, v)) {
		rc = -1;
		goto end;
	}
	fprintf(out, "# header version : %u\n", (unsigned)v->header_version);
	fprintf(out, "# data offset    : %" PRIu64 "\n", v->data_offset);
	fprintf(out, "# data size      : %" PRIu64 "\n", v->data_size);
	fprintf(out, "# feat offset    : %" PRIu64 "\n", v->feat_offset);
	if (!v->pipe_mode) {
		/* perf_session__read_header(): process every feature, stop at the first failure */
		for (feat = 1; feat < HDR_NR_FEAT; feat++)
			if (feat_set(v, feat) && hdr_feat_process(&st, feat))
				break;
		hdr_sort_bpf(&st);
		for (feat = 0; feat < HDR_NR_FEAT; feat++)
			if (feat_set(v, feat))
				print_feat(out, &st, feat, full);
		fputs("# missing features: ", out);
		for (feat = 1; feat < HDR_NR_FEAT; feat++)
			if (!feat_set(v, feat))
				fprintf(out, "%s ", hdr_feat_names[feat]);
		fputc('\n', out);
	}
end:
	fputs("# ========\n#\n", out);
	if (v->pipe_mode && !feat_set(v, PFC_FEAT_RESERVED)) {
		/* Pipe mode: features print as their HEADER_FEATURE records are processed. */
		for (feat = 1; feat < HDR_NR_FEAT; feat++) {
			if (!feat_set(v, feat) || hdr_feat_no_process(feat))
				continue;
			if (hdr_feat_process(&st, feat))
				break;
			hdr_sort_bpf(&st);
			print_feat(out, &st, feat, full);
		}
	}
	free(st.leader);
	free(st.nr_members);
	free(st.group_name);
	free(st.progs);
	free(st.btfs);
	return rc;
}

