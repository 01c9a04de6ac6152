/*
 * hdrattr.c - perf_event_attr as the header printer sees it: decoded from file bytes in
 * either byte order (perf_event__attr_swap's rules), checked, printed as perf 6.1's
 * perf_event_attr__fprintf does, and named as evsel__name names an event without a
 * recorded name (pfc_hdr_format_name, which the reader uses too).
 */
#include <inttypes.h>

#include "converter/perffile/hdrint.h"

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
void hdr_attr_decode(struct hattr *a, const uint8_t *b, size_t n, int swap)
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
int hdr_attr_check(const struct hattr *a)
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
void hdr_attr_print(FILE *out, const struct hattr *a)
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

