/*
 * evsel.c - decode plans and the sample decoders.  Field order and sizes follow the
 * PERF_RECORD_SAMPLE comment in <linux/perf_event.h>; every variable-length field is
 * checked against the record size before it is used, even when it is only skipped.
 */
#include <string.h>
#include "converter/util/bytes.h"
#include "converter/perffile/evsel.h"

#ifndef PERF_SAMPLE_WEIGHT_STRUCT
#define PERF_SAMPLE_WEIGHT_STRUCT (1U << 24)
#endif
#ifndef PERF_SAMPLE_DATA_PAGE_SIZE
#define PERF_SAMPLE_DATA_PAGE_SIZE (1U << 22)
#endif
#ifndef PERF_SAMPLE_CODE_PAGE_SIZE
#define PERF_SAMPLE_CODE_PAGE_SIZE (1U << 23)
#endif
#ifndef PERF_SAMPLE_CGROUP
#define PERF_SAMPLE_CGROUP (1U << 21)
#endif
#ifndef PERF_SAMPLE_AUX
#define PERF_SAMPLE_AUX (1U << 20)
#endif
#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif
#ifndef PERF_SAMPLE_BRANCH_HW_INDEX
#define PERF_SAMPLE_BRANCH_HW_INDEX (1U << 17)
#endif
#define PFC_SAMPLE_BRANCH_COUNTERS (1U << 19)

/* The offsets of pfc_evsel's fixed layout: the fields before PERF_SAMPLE_CALLCHAIN in the
 * order pfc_sample_parse reads them, all 8 bytes. */
static void prepare_fixed(struct pfc_evsel *ev, uint64_t st)
{
	unsigned off = 0;

	ev->sample_time_off = PFC_NO_FIELD;
	if (st & PERF_SAMPLE_TIME)
		ev->sample_time_off = (uint16_t)(8 * (!!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) +
						      !!(st & PERF_SAMPLE_TID)));
	ev->cc_off = 0;
	ev->tid_off = ev->time_off = ev->period_off = PFC_NO_FIELD;
	if (!(st & PERF_SAMPLE_CALLCHAIN) || !(st & PERF_SAMPLE_TID) ||
	    (st & (PERF_SAMPLE_READ | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_BRANCH_STACK)))
		return;
	if (st & PERF_SAMPLE_IDENTIFIER) off += 8;
	if (st & PERF_SAMPLE_IP) off += 8;
	ev->tid_off = (uint16_t)off;
	off += 8;
	if (st & PERF_SAMPLE_TIME) {
		ev->time_off = (uint16_t)off;
		off += 8;
	}
	if (st & PERF_SAMPLE_ADDR) off += 8;
	if (st & PERF_SAMPLE_ID) off += 8;
	if (st & PERF_SAMPLE_STREAM_ID) off += 8;
	if (st & PERF_SAMPLE_CPU) off += 8;
	if (st & PERF_SAMPLE_PERIOD) {
		ev->period_off = (uint16_t)off;
		off += 8;
	}
	ev->cc_off = (uint16_t)off;
}

void pfc_evsel_prepare(struct pfc_evsel *ev)
{
	uint64_t st = ev->attr.sample_type;
	unsigned n = 0;

	ev->sample_type = st;
	ev->read_format = ev->attr.read_format;
	ev->branch_sample_type = ev->attr.branch_sample_type;
	ev->regs_user_nr = __builtin_popcountll(ev->attr.sample_regs_user);
	ev->regs_intr_nr = __builtin_popcountll(ev->attr.sample_regs_intr);
	ev->sample_id_all = ev->attr.sample_id_all;
	if (st & PERF_SAMPLE_TID) n++;
	if (st & PERF_SAMPLE_TIME) n++;
	if (st & PERF_SAMPLE_ID) n++;
	if (st & PERF_SAMPLE_STREAM_ID) n++;
	if (st & PERF_SAMPLE_CPU) n++;
	if (st & PERF_SAMPLE_IDENTIFIER) n++;
	ev->id_hdr_size = n * 8;
	prepare_fixed(ev, st);
}

static int truncated(struct pfc_error *err, uint64_t off, const char *what)
{
	return PFC_FAIL(err, CORRUPT, off, "sample field '%s' runs past the end of the record", what);
}

int pfc_sample_parse(const struct pfc_evsel *ev, const uint8_t *body, uint64_t len, int swap,
		     uint64_t file_offset, struct pfc_sample *s, struct pfc_error *err)
{
	struct pfc_cursor c;
	uint64_t st = ev->sample_type;
	const uint8_t *q;

	memset(s, 0, sizeof(*s));
	s->evsel = ev;
	s->file_offset = file_offset;
	s->cpu = (uint32_t)-1;
	s->pid = s->tid = (uint32_t)-1;
	pfc_cur_init(&c, body, len, swap);

#define NEED(n, what) do { if (!pfc_cur_need(&c, (n))) return truncated(err, file_offset, what); } while (0)
	if (st & PERF_SAMPLE_IDENTIFIER) {
		NEED(8, "identifier");
		s->id = pfc_cur_u64(&c);
		s->flags |= PFC_S_HAS_ID;
	}
	if (st & PERF_SAMPLE_IP) {
		NEED(8, "ip");
		s->ip = pfc_cur_u64(&c);
	}
	if (st & PERF_SAMPLE_TID) {
		NEED(8, "tid");
		s->pid = pfc_cur_u32(&c);
		s->tid = pfc_cur_u32(&c);
		s->flags |= PFC_S_HAS_TID;
	}
	if (st & PERF_SAMPLE_TIME) {
		NEED(8, "time");
		s->time = pfc_cur_u64(&c);
		s->flags |= PFC_S_HAS_TIME;
	}
	if (st & PERF_SAMPLE_ADDR) {
		NEED(8, "addr");
		s->addr = pfc_cur_u64(&c);
	}
	if (st & PERF_SAMPLE_ID) {
		NEED(8, "id");
		s->id = pfc_cur_u64(&c);
		s->flags |= PFC_S_HAS_ID;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		NEED(8, "stream_id");
		s->stream_id = pfc_cur_u64(&c);
	}
	if (st & PERF_SAMPLE_CPU) {
		NEED(8, "cpu");
		s->cpu = pfc_cur_u32(&c);
		(void)pfc_cur_u32(&c);
		s->flags |= PFC_S_HAS_CPU;
	}
	if (st & PERF_SAMPLE_PERIOD) {
		NEED(8, "period");
		s->period = pfc_cur_u64(&c);
		s->flags |= PFC_S_HAS_PERIOD;
	}
	if (st & PERF_SAMPLE_READ) {
		uint64_t rf = ev->read_format, nr = 1, per = 1, fixed = 0;
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED) fixed++;
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING) fixed++;
		if (rf & PERF_FORMAT_ID) per++;
		if (rf & PERF_FORMAT_LOST) per++;
		if (rf & PERF_FORMAT_GROUP) {
			NEED(8, "read.nr");
			nr = pfc_cur_u64(&c);
			NEED(fixed * 8, "read");
			c.p += fixed * 8;
			if (nr > len / 8 / per)
				return truncated(err, file_offset, "read.values");
			NEED(nr * per * 8, "read.values");
			s->read_values = c.p;
			s->read_stride = (uint32_t)per;
			s->read_id_off = rf & PERF_FORMAT_ID ? 1 : 0;
			c.p += nr * per * 8;
		} else {
			NEED((1 + fixed + per - 1) * 8, "read");
			s->read_values = c.p;
			s->read_stride = (uint32_t)(fixed + per);
			s->read_id_off = rf & PERF_FORMAT_ID ? (uint32_t)(1 + fixed) : 0;
			c.p += (1 + fixed + per - 1) * 8;
		}
		s->read_nr = nr;
		s->flags |= PFC_S_HAS_READ;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		NEED(8, "callchain.nr");
		s->callchain_nr = pfc_cur_u64(&c);
		if (s->callchain_nr > pfc_cur_left(&c) / 8)
			return truncated(err, file_offset, "callchain");
		s->callchain = c.p;
		c.p += s->callchain_nr * 8;
		s->flags |= PFC_S_HAS_CALLCHAIN;
	}
	if (st & PERF_SAMPLE_RAW) {
		NEED(4, "raw.size");
		s->raw_size = pfc_cur_u32(&c);
		NEED(s->raw_size, "raw");
		s->raw = c.p;
		c.p += s->raw_size;
		s->flags |= PFC_S_HAS_RAW;
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t per = 3;
		NEED(8, "branch.nr");
		s->branch_nr = pfc_cur_u64(&c);
		if (ev->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
			NEED(8, "branch.hw_idx");
			s->branch_hw_idx = pfc_cur_u64(&c);
		}
		if (ev->branch_sample_type & PFC_SAMPLE_BRANCH_COUNTERS)
			per = 4;
		if (s->branch_nr > pfc_cur_left(&c) / 8 / per)
			return truncated(err, file_offset, "branch_stack");
		s->branch = c.p;
		c.p += s->branch_nr * 8 * per;
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		NEED(8, "regs_user.abi");
		s->regs_user_abi = pfc_cur_u64(&c);
		if (s->regs_user_abi) {
			NEED((uint64_t)ev->regs_user_nr * 8, "regs_user");
			s->regs_user = c.p;
			s->regs_user_mask = ev->attr.sample_regs_user;
			c.p += (uint64_t)ev->regs_user_nr * 8;
			s->flags |= PFC_S_HAS_REGS_USER;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		NEED(8, "stack_user.size");
		s->stack_user_size = pfc_cur_u64(&c);
		if (s->stack_user_size) {
			NEED(s->stack_user_size, "stack_user");
			s->stack_user = c.p;
			c.p += s->stack_user_size;
			NEED(8, "stack_user.dyn_size");
			s->stack_user_dyn_size = pfc_cur_u64(&c);
			if (s->stack_user_dyn_size > s->stack_user_size)
				s->stack_user_dyn_size = s->stack_user_size;
			s->flags |= PFC_S_HAS_STACK_USER;
		}
	}
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		NEED(8, "weight");
		s->weight = pfc_cur_u64(&c);
		s->flags |= PFC_S_HAS_MEM;
	}
	if (st & PERF_SAMPLE_DATA_SRC) {
		NEED(8, "data_src");
		s->data_src = pfc_cur_u64(&c);
		s->flags |= PFC_S_HAS_MEM;
	}
	if (st & PERF_SAMPLE_TRANSACTION) {
		NEED(8, "transaction");
		s->transaction = pfc_cur_u64(&c);
	}
	if (st & PERF_SAMPLE_REGS_INTR) {
		uint64_t abi;
		NEED(8, "regs_intr.abi");
		abi = pfc_cur_u64(&c);
		if (abi) {
			NEED((uint64_t)ev->regs_intr_nr * 8, "regs_intr");
			c.p += (uint64_t)ev->regs_intr_nr * 8;
		}
	}
	if (st & PERF_SAMPLE_PHYS_ADDR) {
		NEED(8, "phys_addr");
		s->phys_addr = pfc_cur_u64(&c);
	}
	if (st & PERF_SAMPLE_CGROUP) {
		NEED(8, "cgroup");
		s->cgroup = pfc_cur_u64(&c);
	}
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE) {
		NEED(8, "data_page_size");
		s->data_page_size = pfc_cur_u64(&c);
	}
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE) {
		NEED(8, "code_page_size");
		s->code_page_size = pfc_cur_u64(&c);
	}
	if (st & PERF_SAMPLE_AUX) {
		NEED(8, "aux.size");
		s->aux_size = pfc_cur_u64(&c);
		NEED(s->aux_size, "aux");
		s->aux = c.p;
		c.p += s->aux_size;
	}
#undef NEED
	(void)q;
	return 0;
}

int pfc_sample_parse_id(const struct pfc_evsel *ev, const uint8_t *body, uint64_t len, int swap,
			struct pfc_sample *s)
{
	uint64_t st = ev->sample_type;
	const uint8_t *p;

	memset(s, 0, sizeof(*s));
	s->evsel = ev;
	s->cpu = (uint32_t)-1;
	s->pid = s->tid = (uint32_t)-1;
	if (!ev->sample_id_all || ev->id_hdr_size > len)
		return -1;
	/* The trailer is read backwards from the end of the record, as perf does. */
	p = body + len;
	if (st & PERF_SAMPLE_IDENTIFIER) {
		p -= 8;
		s->id = pfc_ld64(p, swap);
		s->flags |= PFC_S_HAS_ID;
	}
	if (st & PERF_SAMPLE_CPU) {
		p -= 8;
		s->cpu = pfc_ld32(p, swap);
		s->flags |= PFC_S_HAS_CPU;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		p -= 8;
		s->stream_id = pfc_ld64(p, swap);
	}
	if (st & PERF_SAMPLE_ID) {
		p -= 8;
		s->id = pfc_ld64(p, swap);
		s->flags |= PFC_S_HAS_ID;
	}
	if (st & PERF_SAMPLE_TIME) {
		p -= 8;
		s->time = pfc_ld64(p, swap);
		s->flags |= PFC_S_HAS_TIME;
	}
	if (st & PERF_SAMPLE_TID) {
		p -= 8;
		s->pid = pfc_ld32(p, swap);
		s->tid = pfc_ld32(p + 4, swap);
		s->flags |= PFC_S_HAS_TID;
	}
	return 0;
}

/* Reverse the bit order of every byte: bitfields of a foreign-endian attr. */
static uint8_t revbits(uint8_t b)
{
	b = (uint8_t)((b & 0xF0) >> 4 | (b & 0x0F) << 4);
	b = (uint8_t)((b & 0xCC) >> 2 | (b & 0x33) << 2);
	b = (uint8_t)((b & 0xAA) >> 1 | (b & 0x55) << 1);
	return b;
}

int pfc_attr_load(struct perf_event_attr *attr, uint32_t *recorded_size, const uint8_t *p,
		  uint64_t avail, int swap)
{
	uint32_t size;
	uint64_t copy;
	uint8_t buf[sizeof(*attr)];

	if (avail < PERF_ATTR_SIZE_VER0)
		return -1;
	size = pfc_ld32(p + 4, swap);
	if (size == 0)
		size = PERF_ATTR_SIZE_VER0;
	if (size < PERF_ATTR_SIZE_VER0 || size > avail)
		return -1;
	*recorded_size = size;
	copy = size < sizeof(buf) ? size : sizeof(buf);
	memset(buf, 0, sizeof(buf));
	memcpy(buf, p, copy);
	if (swap) {
		/* Field widths of perf_event_attr by offset (uapi layout up to config3). */
		static const struct { uint8_t off, width; } f[] = {
			{0, 4}, {4, 4}, {8, 8}, {16, 8}, {24, 8}, {32, 8}, {48, 4}, {52, 4},
			{56, 8}, {64, 8}, {72, 8}, {80, 8}, {88, 4}, {92, 4}, {96, 8}, {104, 4},
			{108, 2}, {110, 2}, {112, 4}, {116, 4}, {120, 8}, {128, 8},
		};
		size_t i;

		for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
			uint8_t *q = buf + f[i].off;
			if (f[i].off + f[i].width > copy)
				break;
			if (f[i].width == 8) {
				uint64_t v;
				memcpy(&v, q, 8);
				v = __builtin_bswap64(v);
				memcpy(q, &v, 8);
			} else if (f[i].width == 4) {
				uint32_t v;
				memcpy(&v, q, 4);
				v = __builtin_bswap32(v);
				memcpy(q, &v, 4);
			} else {
				uint16_t v;
				memcpy(&v, q, 2);
				v = __builtin_bswap16(v);
				memcpy(q, &v, 2);
			}
		}
		/* The flag bitfields (offset 40) are not swapped as a word: a compiler of the
		 * other byte order allocates them from the other end of each byte, so only
		 * the bit order within each byte is reversed (as perf's swap_bitfield does). */
		if (copy >= 48)
			for (i = 40; i < 48; i++)
				buf[i] = revbits(buf[i]);
	}
	memcpy(attr, buf, sizeof(*attr));
	return 0;
}
