/*
 * hdrprint.c - owns the `--header` text: perf 6.1's `perf report --header-only` (and -I) output,
 * rebuilt byte for byte from a pfc_hdr_view.  Feature payloads are untrusted and are decoded here
 * through a bounds-checked cursor.  Like perf, every feature is first "processed" (a failure stops
 * the later ones, which then print as empty) and printed afterwards; in pipe mode each is processed
 * and printed in turn.  Reading the file and the record stream is the reader's job, not this one.
 */
#include <byteswap.h>
#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

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

static void cur_init(struct cur *c, const struct pfc_blob *b, int swap)
{
	c->p = b->data;
	c->size = b->data ? b->size : 0;
	c->off = 0;
	c->swap = swap;
}

static uint64_t cur_left(const struct cur *c)
{
	return c->size - c->off;
}

static int cur_skip(struct cur *c, uint64_t n)
{
	if (n > cur_left(c))
		return -1;
	c->off += n;
	return 0;
}

static int cur_u32(struct cur *c, uint32_t *v)
{
	uint32_t x;

	if (cur_left(c) < 4)
		return -1;
	memcpy(&x, c->p + c->off, 4);
	c->off += 4;
	*v = c->swap ? bswap_32(x) : x;
	return 0;
}

static int cur_u64(struct cur *c, uint64_t *v)
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

static int cur_str(struct cur *c, struct hstr *s)
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

static int hstr_eq(const struct hstr *s, const char *lit)
{
	return s->set && s->n == strlen(lit) && !memcmp(s->s, lit, s->n);
}

static void put_hstr(FILE *out, const struct hstr *s)
{
	if (!s->set)
		fputs("(null)", out);
	else
		fwrite(s->s, 1, s->n, out);
}

/* string_size() of header.c: what perf believes a string occupied (uses strlen, not len). */
static uint64_t hstr_size(const struct hstr *s)
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

static unsigned flag_bits(uint64_t flags, int bit, int width)
{
	return (unsigned)((flags >> bit) & ((1u << width) - 1));
}

static uint64_t ld_n(const uint8_t *b, size_t n, size_t off, size_t w)
{
	uint64_t v = 0;
	uint32_t v32;
	uint16_t v16;

	if (off + w > n)
		return 0;
	switch (w) {
	case 2: memcpy(&v16, b + off, 2); v = v16; break;
	case 4: memcpy(&v32, b + off, 4); v = v32; break;
	default: memcpy(&v, b + off, 8); break;
	}
	return v;
}

static int host_is_be(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 0;
}

static uint8_t rev8(uint8_t x)
{
	x = (uint8_t)((x & 0xf0) >> 4 | (x & 0x0f) << 4);
	x = (uint8_t)((x & 0xcc) >> 2 | (x & 0x33) << 2);
	return (uint8_t)((x & 0xaa) >> 1 | (x & 0x55) << 1);
}

/*
 * Decode an on-file attr of n bytes (n <= 128 is what perf 6.1 keeps).  With swap, perf's
 * perf_event__attr_swap() swaps type and size always and every other field only when it lies
 * below attr.size; the bitfield word is bit-reversed per byte (when size > 40) rather than
 * byte-swapped.  The bitfield is read as little-endian bit order; a big-endian layout (a
 * big-endian host, or swap) is turned around first.
 */
static void hattr_decode(struct hattr *a, const uint8_t *b, size_t n, int swap)
{
	uint8_t fb[8] = { 0 };
	uint64_t f = 0;
	int i;

	memset(a, 0, sizeof(*a));
	a->type = (uint32_t)ld_n(b, n, 0, 4);
	a->size = (uint32_t)ld_n(b, n, 4, 4);
	if (swap) {
		a->type = bswap_32(a->type);
		a->size = bswap_32(a->size);
	}
#define SW64(off) (swap && a->size > (off) ? bswap_64(ld_n(b, n, off, 8)) : ld_n(b, n, off, 8))
#define SW32(off) (swap && a->size > (off) ? bswap_32((uint32_t)ld_n(b, n, off, 4)) \
					   : (uint32_t)ld_n(b, n, off, 4))
#define SW16(off) (swap && a->size > (off) ? bswap_16((uint16_t)ld_n(b, n, off, 2)) \
					   : (uint16_t)ld_n(b, n, off, 2))
	a->config = SW64(8);
	a->sample_period = SW64(16);
	a->sample_type = SW64(24);
	a->read_format = SW64(32);
	a->wakeup_events = SW32(48);
	a->bp_type = SW32(52);
	a->bp_addr = SW64(56);
	a->bp_len = SW64(64);
	a->branch_sample_type = SW64(72);
	a->sample_regs_user = SW64(80);
	a->sample_stack_user = SW32(88);
	a->clockid = (int32_t)SW32(92);
	a->sample_regs_intr = SW64(96);
	a->aux_watermark = SW32(104);
	a->sample_max_stack = SW16(108);
	a->reserved_2 = SW16(110);
	a->aux_sample_size = SW32(112);
	a->reserved_3 = SW32(116);
	a->sig_data = SW64(120);
#undef SW64
#undef SW32
#undef SW16
	if (n >= 48)
		memcpy(fb, b + 40, 8);
	if (host_is_be() != (swap && a->size > 40))
		for (i = 0; i < 8; i++)
			fb[i] = rev8(fb[i]);
	for (i = 7; i >= 0; i--)
		f = f << 8 | fb[i];
	a->flags = f;
}

static void hattr_from_host(struct hattr *a, const struct perf_event_attr *h)
{
	memset(a, 0, sizeof(*a));
	a->type = h->type;
	a->size = h->size;
	a->config = h->config;
	a->sample_period = h->sample_period;
	a->sample_type = h->sample_type;
	a->read_format = h->read_format;
	a->flags = (uint64_t)h->exclude_user << F_EXCLUDE_USER |
		   (uint64_t)h->exclude_kernel << F_EXCLUDE_KERNEL |
		   (uint64_t)h->exclude_hv << F_EXCLUDE_HV |
		   (uint64_t)h->precise_ip << F_PRECISE_IP |
		   (uint64_t)h->exclude_host << F_EXCLUDE_HOST |
		   (uint64_t)h->exclude_guest << F_EXCLUDE_GUEST;
	a->bp_type = h->bp_type;
	a->bp_addr = h->bp_addr;
}

/* perf_attr_check() of perf 6.1: reserved bits and bits newer than 6.1 make it refuse. */
static int hattr_check(const struct hattr *a)
{
	if ((a->flags >> F_RESERVED_1) || a->reserved_2 || a->reserved_3)
		return -1;
	if (a->sample_type & ~((1ULL << 25) - 1))
		return -1;
	if (a->read_format & ~((1ULL << 5) - 1))
		return -1;
	if ((a->sample_type & (1ULL << 11)) && (a->branch_sample_type & ~((1ULL << 19) - 1)))
		return -1;
	return 0;
}

static const char *const sample_type_names[] = {
	"IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD", "STREAM_ID",
	"RAW", "BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT", "DATA_SRC", "IDENTIFIER",
	"TRANSACTION", "REGS_INTR", "PHYS_ADDR", "AUX", "CGROUP", "DATA_PAGE_SIZE",
	"CODE_PAGE_SIZE", "WEIGHT_STRUCT",
};
/* perf's bit_names order for sample_type (TRANSACTION is not in perf's list). */
static const int sample_type_order[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 18, 15, 14, 19, 20, 21, 22, 23, 24, -1
};
static const char *const branch_names[] = {
	"USER", "KERNEL", "HV", "ANY", "ANY_CALL", "ANY_RETURN", "IND_CALL", "ABORT_TX", "IN_TX",
	"NO_TX", "COND", "CALL_STACK", "IND_JUMP", "CALL", "NO_FLAGS", "NO_CYCLES", "TYPE_SAVE",
	"HW_INDEX", "PRIV_SAVE", NULL
};
static const char *const read_format_names[] = {
	"TOTAL_TIME_ENABLED", "TOTAL_TIME_RUNNING", "ID", "GROUP", "LOST", NULL
};

/* __p_bits(): names of the known bits joined by '|'; leaves buf untouched when none is set
 * (perf then prints whatever the buffer held before, and so do we). */
static void bits_to_buf(char *buf, uint64_t v, const char *const *names, const int *order)
{
	size_t len = 0;
	int first = 1, i;

	for (i = 0; order ? order[i] >= 0 : names[i] != NULL; i++) {
		int bit = order ? order[i] : i;

		if (!(v & (1ULL << bit)))
			continue;
		len += (size_t)snprintf(buf + len, len < HDR_BUF ? HDR_BUF - len : 0, "%s%s",
					first ? "" : "|", names[bit]);
		if (len >= HDR_BUF)
			len = HDR_BUF - 1;
		first = 0;
	}
}

/* perf_event_attr__fprintf() of perf 6.1 with the ", %s = %s" callback of print_event_desc. */
static void hattr_print(FILE *out, const struct hattr *a)
{
	static const struct { const char *name; int bit, width; } fl[] = {
		{ "disabled", F_DISABLED, 1 }, { "inherit", F_INHERIT, 1 },
		{ "pinned", F_PINNED, 1 }, { "exclusive", F_EXCLUSIVE, 1 },
		{ "exclude_user", F_EXCLUDE_USER, 1 }, { "exclude_kernel", F_EXCLUDE_KERNEL, 1 },
		{ "exclude_hv", F_EXCLUDE_HV, 1 }, { "exclude_idle", F_EXCLUDE_IDLE, 1 },
		{ "mmap", F_MMAP, 1 }, { "comm", F_COMM, 1 }, { "freq", F_FREQ, 1 },
		{ "inherit_stat", F_INHERIT_STAT, 1 }, { "enable_on_exec", F_ENABLE_ON_EXEC, 1 },
		{ "task", F_TASK, 1 }, { "watermark", F_WATERMARK, 1 },
		{ "precise_ip", F_PRECISE_IP, 2 }, { "mmap_data", F_MMAP_DATA, 1 },
		{ "sample_id_all", F_SAMPLE_ID_ALL, 1 }, { "exclude_host", F_EXCLUDE_HOST, 1 },
		{ "exclude_guest", F_EXCLUDE_GUEST, 1 },
		{ "exclude_callchain_kernel", F_EXCLUDE_CALLCHAIN_KERNEL, 1 },
		{ "exclude_callchain_user", F_EXCLUDE_CALLCHAIN_USER, 1 },
		{ "mmap2", F_MMAP2, 1 }, { "comm_exec", F_COMM_EXEC, 1 },
		{ "use_clockid", F_USE_CLOCKID, 1 }, { "context_switch", F_CONTEXT_SWITCH, 1 },
		{ "write_backward", F_WRITE_BACKWARD, 1 }, { "namespaces", F_NAMESPACES, 1 },
		{ "ksymbol", F_KSYMBOL, 1 }, { "bpf_event", F_BPF_EVENT, 1 },
		{ "aux_output", F_AUX_OUTPUT, 1 }, { "cgroup", F_CGROUP, 1 },
		{ "text_poke", F_TEXT_POKE, 1 }, { "build_id", F_BUILD_ID, 1 },
		{ "inherit_thread", F_INHERIT_THREAD, 1 }, { "remove_on_exec", F_REMOVE_ON_EXEC, 1 },
		{ "sigtrap", F_SIGTRAP, 1 },
	};
	char buf[HDR_BUF] = "";
	size_t i;

#define P(name, cond, ...) do { if (cond) { snprintf(buf, sizeof(buf), __VA_ARGS__); \
			fprintf(out, ", %s = %s", name, buf); } } while (0)
	P("type", a->type, "%" PRIu32, a->type);
	P("size", a->size, "%" PRIu32, a->size);
	P("config", a->config, "%#" PRIx64, a->config);
	P("{ sample_period, sample_freq }", a->sample_period, "%" PRIu64, a->sample_period);
	if (a->sample_type) {
		bits_to_buf(buf, a->sample_type, sample_type_names, sample_type_order);
		fprintf(out, ", %s = %s", "sample_type", buf);
	}
	if (a->read_format) {
		bits_to_buf(buf, a->read_format, read_format_names, NULL);
		fprintf(out, ", %s = %s", "read_format", buf);
	}
	for (i = 0; i < sizeof(fl) / sizeof(fl[0]); i++) {
		unsigned v = flag_bits(a->flags, fl[i].bit, fl[i].width);

		P(fl[i].name, v, "%u", v);
	}
	P("{ wakeup_events, wakeup_watermark }", a->wakeup_events, "%" PRIu32, a->wakeup_events);
	P("bp_type", a->bp_type, "%" PRIu32, a->bp_type);
	P("{ bp_addr, config1 }", a->bp_addr, "%#" PRIx64, a->bp_addr);
	P("{ bp_len, config2 }", a->bp_len, "%#" PRIx64, a->bp_len);
	if (a->branch_sample_type) {
		bits_to_buf(buf, a->branch_sample_type, branch_names, NULL);
		fprintf(out, ", %s = %s", "branch_sample_type", buf);
	}
	P("sample_regs_user", a->sample_regs_user, "%#" PRIx64, a->sample_regs_user);
	P("sample_stack_user", a->sample_stack_user, "%" PRIu32, a->sample_stack_user);
	P("clockid", a->clockid, "%" PRId64, (int64_t)a->clockid);
	P("sample_regs_intr", a->sample_regs_intr, "%#" PRIx64, a->sample_regs_intr);
	P("aux_watermark", a->aux_watermark, "%" PRIu32, a->aux_watermark);
	P("sample_max_stack", a->sample_max_stack, "%u", (unsigned)a->sample_max_stack);
	P("aux_sample_size", a->aux_sample_size, "%" PRIu32, a->aux_sample_size);
	P("sig_data", a->sig_data, "%" PRIu64, a->sig_data);
#undef P
}

/* ------------------------------------------------------------------ event names */

/* evsel__add_modifiers(): ":u", ":pppH", ":HG", ... appended to an event name. */
static void add_modifiers(char *bf, size_t size, const struct hattr *a)
{
	unsigned precise = flag_bits(a->flags, F_PRECISE_IP, 2), i;
	int exclude_guest_default = 0;
	char m[16];
	size_t r = 0;

	if (flag_bits(a->flags, F_EXCLUDE_KERNEL, 1) || flag_bits(a->flags, F_EXCLUDE_USER, 1) ||
	    flag_bits(a->flags, F_EXCLUDE_HV, 1)) {
		if (!flag_bits(a->flags, F_EXCLUDE_KERNEL, 1))
			m[r++] = 'k';
		if (!flag_bits(a->flags, F_EXCLUDE_USER, 1))
			m[r++] = 'u';
		if (!flag_bits(a->flags, F_EXCLUDE_HV, 1))
			m[r++] = 'h';
		exclude_guest_default = 1;
	}
	for (i = 0; i < precise; i++)
		m[r++] = 'p';
	if (precise)
		exclude_guest_default = 1;
	if (flag_bits(a->flags, F_EXCLUDE_HOST, 1) ||
	    (int)flag_bits(a->flags, F_EXCLUDE_GUEST, 1) == exclude_guest_default) {
		if (!flag_bits(a->flags, F_EXCLUDE_HOST, 1))
			m[r++] = 'H';
		if (!flag_bits(a->flags, F_EXCLUDE_GUEST, 1))
			m[r++] = 'G';
	}
	m[r] = 0;
	if (r)
		snprintf(bf, size, ":%s", m);
}

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches",
	"branch-misses", "bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend",
	"ref-cycles",
};
static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
	"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
};
static const char *const cache_type[] = {
	"L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch", "node",
};
static const char *const cache_op[][2] = {
	{ "load", "loads" }, { "store", "stores" }, { "prefetch", "prefetches" },
};
static const char *const cache_result[] = { "refs", "misses" };
/* evsel__hw_cache_stat: which ops each cache type supports (bit = op). */
static const unsigned char cache_ops_ok[] = { 7, 5, 7, 7, 1, 1, 7 };

static void fmt_name(char *buf, size_t size, const struct hattr *a)
{
	int n = 0;

	if (!size)
		return;
	switch (a->type) {
	case 0: /* PERF_TYPE_HARDWARE */
		n = snprintf(buf, size, "%s", a->config < sizeof(hw_names) / sizeof(hw_names[0]) ?
			     hw_names[a->config] : "unknown-hardware");
		break;
	case 1: /* PERF_TYPE_SOFTWARE */
		n = snprintf(buf, size, "%s", a->config < sizeof(sw_names) / sizeof(sw_names[0]) ?
			     sw_names[a->config] : "unknown-software");
		break;
	case 2: /* PERF_TYPE_TRACEPOINT */
		snprintf(buf, size, "unknown tracepoint");
		return;
	case 3: { /* PERF_TYPE_HW_CACHE */
		unsigned t = a->config & 0xff, op = (a->config >> 8) & 0xff;
		unsigned res = (a->config >> 16) & 0xff;

		if (t >= 7)
			n = snprintf(buf, size, "unknown-ext-hardware-cache-type");
		else if (op >= 3)
			n = snprintf(buf, size, "unknown-ext-hardware-cache-op");
		else if (res >= 2)
			n = snprintf(buf, size, "unknown-ext-hardware-cache-result");
		else if (!(cache_ops_ok[t] & (1u << op)))
			n = snprintf(buf, size, "invalid-cache");
		else if (res)
			n = snprintf(buf, size, "%s-%s-%s", cache_type[t], cache_op[op][0],
				     cache_result[res]);
		else
			n = snprintf(buf, size, "%s-%s", cache_type[t], cache_op[op][1]);
		break;
	}
	case 4: /* PERF_TYPE_RAW */
		n = snprintf(buf, size, "raw 0x%" PRIx64, a->config);
		break;
	case 5: /* PERF_TYPE_BREAKPOINT */
		n = snprintf(buf, size, "mem:0x%" PRIx64 ":%s%s%s", a->bp_addr,
			     a->bp_type & 1 ? "r" : "", a->bp_type & 2 ? "w" : "",
			     a->bp_type & 4 ? "x" : "");
		break;
	default:
		snprintf(buf, size, "unknown attr type: %d", (int)a->type);
		return;
	}
	if (n < 0)
		n = 0;
	if ((size_t)n >= size)
		return;
	add_modifiers(buf + n, size - (size_t)n, a);
}

char *pfc_hdr_format_name(char *buf, size_t size, const struct perf_event_attr *attr)
{
	struct hattr a;

	if (!buf || !size)
		return buf;
	buf[0] = 0;
	if (!attr)
		return buf;
	hattr_from_host(&a, attr);
	fmt_name(buf, size, &a);
	return buf;
}

/* ------------------------------------------------------------------ feature state */

static const char *const feat_names[HDR_NR_FEAT] = {
	NULL, "TRACING_DATA", "BUILD_ID", "HOSTNAME", "OSRELEASE", "VERSION", "ARCH", "NRCPUS",
	"CPUDESC", "CPUID", "TOTAL_MEM", "CMDLINE", "EVENT_DESC", "CPU_TOPOLOGY",
	"NUMA_TOPOLOGY", "BRANCH_STACK", "PMU_MAPPINGS", "GROUP_DESC", "AUXTRACE", "STAT",
	"CACHE", "SAMPLE_TIME", "MEM_TOPOLOGY", "CLOCKID", "DIR_FORMAT", "BPF_PROG_INFO",
	"BPF_BTF", "COMPRESSED", "CPU_PMU_CAPS", "CLOCK_DATA", "HYBRID_TOPOLOGY", "PMU_CAPS",
};

/* Features printed only with -I (the others print in full or not at all). */
static int feat_full_only(int feat)
{
	return feat == PFC_FEAT_CPU_TOPOLOGY || feat == PFC_FEAT_NUMA_TOPOLOGY ||
	       feat == PFC_FEAT_CACHE || feat == PFC_FEAT_MEM_TOPOLOGY ||
	       feat == PFC_FEAT_HYBRID_TOPOLOGY;
}

/* Features perf has no print function for. */
static int feat_no_print(int feat)
{
	return feat == PFC_FEAT_RESERVED || feat == PFC_FEAT_TRACING_DATA ||
	       feat == PFC_FEAT_BUILD_ID;
}

/* Features perf has no process function for (pipe mode skips them entirely). */
static int feat_no_process(int feat)
{
	return feat == PFC_FEAT_RESERVED || feat == PFC_FEAT_BRANCH_STACK ||
	       feat == PFC_FEAT_STAT;
}

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

static void feat_cur(const struct hdr_state *st, int feat, struct cur *c)
{
	cur_init(c, &st->v->feat[feat], st->v->needs_swap);
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
static int cpulist_format(const struct hstr *in, char *out, size_t outsz)
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
static int skip_strings(struct cur *c, uint32_t nr)
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
	if (skip_strings(&c, nr))
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
	if (skip_strings(&c, nr))
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
		if (cpulist_format(&s, buf, sizeof(buf)))
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
static int mem_node_read(struct cur *c, uint64_t *node, uint64_t *nbits, uint64_t *words_off)
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
		if (mem_node_read(&c, &node, &nbits, &wo))
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
	if (cur_u32(&c, &nr) || skip_strings(&c, nr) || skip_strings(&c, nr))
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
		if (cur_u32(&c, &n) || skip_strings(&c, n) || skip_strings(&c, n) ||
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
	if (skip_strings(&c, nr) || skip_strings(&c, nr))
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
#define BPF_INFO_SIZE_61 232            /* sizeof(struct bpf_prog_info) in perf 6.1's uapi */

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

static uint64_t blob_ld(const struct pfc_blob *b, uint64_t off, unsigned w, int swap)
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
		p.id = info_len >= 8 ? (uint32_t)blob_ld(&st->v->feat[PFC_FEAT_BPF_PROG_INFO],
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

static int process_feat(struct hdr_state *st, int feat)
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
		hattr_decode(&a, c.p + c.off, msz, c.swap);
		c.off += sz;
		if (hattr_check(&a) || cur_u32(&c, &nr) || cur_str(&c, &name) ||
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

		hattr_decode(&a, c.p + c.off, msz, c.swap);
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
		hattr_print(out, &a);
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
		cpulist_format(&s, buf, sizeof(buf));
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

		if (mem_node_read(&c, &node, &nbits, &wo))
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

		if (cur_u32(&c, &n) || skip_strings(&c, n) || skip_strings(&c, n) ||
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
			size_t sl = 0, n = 0, t;

			memcpy(&addr, b->data + p->data_off + ksyms + 8ull * i, 8);
			memcpy(&len, b->data + p->data_off + lens + 4ull * i, 4);
			n = (size_t)snprintf(name, sizeof(name), "bpf_prog_");
			for (t = 0; t < 8; t++)
				n += (size_t)snprintf(name + n, sizeof(name) - n, "%02x",
						      b->data[p->data_off + tags + 8ull * i + t]);
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

	if (feat_no_print(feat))
		return;
	if (feat_full_only(feat) && !full) {
		fprintf(out, "# %s info available, use -I to display\n", feat_names[feat]);
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

/* Order what processing collected the way perf's rb-trees hand it out: by id, and an id seen
 * again is dropped (perf keeps the first).  Safe to call more than once. */
static void sort_bpf(struct hdr_state *st)
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
			if (feat_set(v, feat) && process_feat(&st, feat))
				break;
		sort_bpf(&st);
		for (feat = 0; feat < HDR_NR_FEAT; feat++)
			if (feat_set(v, feat))
				print_feat(out, &st, feat, full);
		fputs("# missing features: ", out);
		for (feat = 1; feat < HDR_NR_FEAT; feat++)
			if (!feat_set(v, feat))
				fprintf(out, "%s ", feat_names[feat]);
		fputc('\n', out);
	}
end:
	fputs("# ========\n#\n", out);
	if (v->pipe_mode && !feat_set(v, PFC_FEAT_RESERVED)) {
		/* Pipe mode: features print as their HEADER_FEATURE records are processed. */
		for (feat = 1; feat < HDR_NR_FEAT; feat++) {
			if (!feat_set(v, feat) || feat_no_process(feat))
				continue;
			if (process_feat(&st, feat))
				break;
			sort_bpf(&st);
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
