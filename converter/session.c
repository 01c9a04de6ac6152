/*
 * session.c - one conversion's driver (perf's session.c and ordered-events.c): opening the
 * input (a recording or a pack) and the symbol sources' clients, each record dispatched by
 * type, kernel records in time order through the ordering queue, the pipeline when the input
 * allows it (pipeline.c), and the end of processing.  Samples, frames, symbols, the kernel and
 * DWARF stacks are other files' (sample.c, callchain.c, symbolize.c, kernel.c, unwind_user.c).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "converter/session.h"
#include "converter/pipeline.h"
#include "converter/r2rframes.h"
#include "converter/files/pack.h"
#include "converter/perffile/hdrprint.h"
#include "converter/perffile/tpformat.h"
#include "converter/util/bytes.h"

static int deliver(void *ctx, const struct pfc_qev *ev);
static inline __attribute__((always_inline)) uint64_t record_time(struct pfc_session *s, const struct pfc_rec *r);

static int bad_record(struct pfc_session *s, uint64_t off, uint32_t type, const char *what)
{
	return PFC_FAIL(s->err, CORRUPT, off, "record of type %u: %s", type, what);
}

/* ---- build-ids from the header ---- */

static void load_build_ids(struct pfc_session *s, const uint8_t *p, uint64_t len)
{
	struct pfc_reader *rd = &s->rd;
	uint64_t pos = 0;

	while (len - pos >= 8 + 4 + 24) {
		uint16_t misc = pfc_ld16(p + pos + 4, rd->swap);
		uint16_t size = pfc_ld16(p + pos + 6, rd->swap);
		const uint8_t *e = p + pos;
		int idlen = 20, cpumode;
		char name[4096];
		size_t n;

		if (size < 8 + 4 + 24 || size > len - pos)
			break;
		if (misc & PFC_MISC_BUILD_ID_SIZE) {
			idlen = e[12 + 20];
			if (idlen > 20)
				idlen = 20;
		}
		n = strnlen((const char *)e + 36, size - 36);
		if (n >= sizeof(name))
			n = sizeof(name) - 1;
		memcpy(name, e + 36, n);
		name[n] = 0;
		cpumode = misc & PFC_MISC_CPUMODE_MASK;
		pfc_machine_add_build_id(&s->machine, name, e + 12, idlen,
					 cpumode == PERF_RECORD_MISC_KERNEL || cpumode == PERF_RECORD_MISC_GUEST_KERNEL);
		pos += size;
	}
}

/* ---- opening and closing ---- */

int pfc_session_open(struct pfc_session *s, const struct pfc_opts *o, struct pfc_error *err)
{
	static const struct pfc_tuning no_tuning;
	int ret;

	memset(s, 0, sizeof(*s));
	s->opts = o;
	s->tuning = o->tuning ? o->tuning : &no_tuning;
	s->err = err;
	s->unwind.arch = -1;
	if (pfc_intern_init(&s->strings) < 0 || pfc_machine_init(&s->machine, &s->strings) < 0 ||
	    pfc_stacks_init(&s->stacks) < 0)
		return PFC_FAIL_NOOFF(err, NOMEM, "session");
	pfc_order_init(&s->order, deliver, s);
	pfc_stream_init(&s->stream);
	pfc_marks_init(&s->marks);
	pfc_times_init(&s->times);
	if (s->tuning->stream_mem_set)	/* tests: spill the stream to its temporary file from this size on */
		s->stream.mem_limit = s->tuning->stream_mem;
	if (strcmp(o->input, "-") && pfc_pack_detect(o->input) == 1) {
		/* a pack: its recording is read in place, its members answer first */
		if ((ret = pfc_pack_open(&s->pack, o->input, err)) < 0)
			return ret;
		if (pfc_pack_fd(s->pack, PFC_PACK_RECORDING, NULL) < 0)
			return PFC_FAIL_NOOFF(err, CORRUPT, "the pack has no member '%s'", PFC_PACK_RECORDING);
		snprintf(s->pack_input, sizeof(s->pack_input), "/proc/self/fd/%d", pfc_pack_fd(s->pack, PFC_PACK_RECORDING, NULL));
	}
	ret = pfc_reader_open(&s->rd, s->pack ? s->pack_input : o->input, err);
	if (ret < 0) {
		if (s->pack && !err->file[0])	/* offsets are the recording's, inside the pack */
			snprintf(err->file, sizeof(err->file), "%s: member %s", o->input, PFC_PACK_RECORDING);
		return ret;
	}
	{
		struct pfc_files_opts fo = {
			.symfs = o->symfs, .buildid_dir = o->buildid_dir, .buildid_dir_given = o->buildid_dir_given,
			.map_dir = o->map_dir,
			.kallsyms = o->kallsyms,
			.proc = s->tuning->proc, .tmp = s->tuning->tmp, .record = o->record_files,
			.debug_dir = s->tuning->debug_dir,
		};
		if (!(s->files = pfc_files_new(&fo, s->pack)))
			return PFC_FAIL_NOOFF(err, NOMEM, "session");
		if ((ret = pfc_files_load_pack(s->files, err)) < 0) {
			snprintf(err->file, sizeof(err->file), "%s", o->input);
			return ret;
		}
		s->recording_path = s->recording_name = o->input;
		if (s->pack) {	/* "captured on", and trace.zip's entry times: the recording's */
			long long t;
			if (pfc_files_pack_mtime(s->files, &t)) {
				s->rd.mtime = t;
				s->rd.have_mtime = 1;
			}
			s->recording_path = s->pack_input;
			if (pfc_files_pack_recording(s->files))
				s->recording_name = pfc_files_pack_recording(s->files);
		}
	}
	{
		struct pfc_jitsym_opts jo = {
			.files = s->files, .pid_map = o->pid_map, .nr_pid_map = o->nr_pid_map,
			.resolve = o->resolve_jit, .log = o->log, .verbose = o->verbose,
		};
		pfc_jitsyms_init(&s->jit, &jo, &s->machine, &s->rd, err);
	}
	s->rd.warn = o->log;
	if ((ret = pfc_evsample_open(s)) < 0)
		return ret;
	if ((o->offcpu || o->thread_time) &&
	    !(s->offcpu = pfc_offcpu_new(o->offcpu == PFC_OFFCPU_ALL ? PFC_OFFCPU_ALL : PFC_OFFCPU_BLOCKED, o->thread_time)))
		return PFC_FAIL_NOOFF(err, NOMEM, "session");
	/* only when the user named servers: never a query otherwise */
	if (o->debuginfod_urls && *o->debuginfod_urls &&
	    pfc_debuginfod_open(&s->dbgf, o->debuginfod_urls, o->debuginfod_timeout, o->log) < 0 && o->log)
		fprintf(o->log, "perfconv: warning: debuginfod: cannot start the client\n");
	/* the same for symbol servers (pfc_symsrv_open says why it cannot start) */
	if (o->symsrv_urls && *o->symsrv_urls)
		pfc_symsrv_open(&s->ssrv, o->symsrv_urls, o->symsrv_cache, o->symsrv_timeout, o->log);
	/* perf's idle thread: pid/tid 0 is "swapper" */
	if (pfc_machine_comm(&s->machine, 0, 0, "swapper", 7) < 0)
		return PFC_FAIL_NOOFF(err, NOMEM, "session");
	if (pfc_feat_has(&s->rd, PFC_FEAT_BUILD_ID))
		load_build_ids(s, s->rd.feat[PFC_FEAT_BUILD_ID].data, s->rd.feat[PFC_FEAT_BUILD_ID].size);
	pfc_kernel_init(s);
	return 0;
}

void pfc_session_close(struct pfc_session *s)
{
	pfc_kernel_exit(s);
	pfc_debuginfod_close(&s->dbgf);
	pfc_symsrv_close(&s->ssrv);
	pfc_jitsyms_exit(&s->jit);
	pfc_offcpu_free(s->offcpu);
	pfc_evsample_exit(s);
	pfc_unwind_exit(s);
	pfc_inline_exit(s);
	pfc_sample_exit(s);
	pfc_r2rframes_free(s);
	pfc_symbolize_exit(s);
	pfc_callchain_exit(s);
	pfc_order_exit(&s->order);
	pfc_stacks_exit(&s->stacks);
	pfc_machine_exit(&s->machine);
	pfc_intern_exit(&s->strings);
	pfc_reader_close(&s->rd);
	pfc_files_free(s->files);
	pfc_pack_close(s->pack);
	pfc_chaincache_free(&s->chains);
	pfc_stream_exit(&s->stream);
	free(s->stream_per_stack);
	pfc_marks_exit(&s->marks);
	pfc_times_exit(&s->times);
}

/* ---- names writers ask for ---- */

const char *pfc_session_thread_comm(struct pfc_session *s, int32_t pid, int32_t tid)
{
	const struct pfc_thread *th = pfc_machine_find_thread(&s->machine, pid, tid);

	return th && th->comm_set ? pfc_intern_str(&s->strings, th->comm) : NULL;
}

const char *pfc_session_evsel_name(struct pfc_session *s, size_t idx)
{
	struct pfc_evsel *ev;
	char buf[256];

	if (idx >= s->rd.nr_evsels)
		return "[unknown]";
	ev = s->rd.evsels[idx];
	if (!ev->name && ev->attr.type == PERF_TYPE_TRACEPOINT && !s->tp_names_tried && s->rd.tracing_data.data) {
		s->tp_names_tried = 1;
		pfc_tpformat_name_evsels(&s->rd);
	}
	if (!ev->name) {
		pfc_hdr_format_name(buf, sizeof(buf), &ev->attr);
		ev->name = strdup(buf);
		if (!ev->name)
			return "[unknown]";
	}
	return ev->name;
}

/* ---- one record ---- */

static uint64_t trailer_size(struct pfc_session *s, struct pfc_evsel *ev)
{
	(void)s;
	return ev->sample_id_all ? ev->id_hdr_size : 0;
}

/* Tell the JIT symbol sources about a new user mapping (JIT regions, PE images, markers). */
static int note_jit_map(struct pfc_session *s, int32_t pid, int32_t tid, uint64_t start, const char *fname,
			uint64_t fnlen)
{
	struct pfc_thread *th = pfc_machine_findnew_thread(&s->machine, pid, tid);
	const struct pfc_map *map;
	char name[4096];
	size_t n = strnlen(fname, fnlen);
	int ret;

	if (!th)
		return -1;
	map = pfc_machine_find_map(&s->machine, th, 0, start);
	if (map && map->dso && map->start == start) {
		if (n >= sizeof(name))
			n = sizeof(name) - 1;
		memcpy(name, fname, n);
		name[n] = 0;
		if ((ret = pfc_jitsyms_note_map(&s->jit, th->pid, map, name)) < 0)
			return ret;
	}
	/* The frames cached under the maps' cgen were named with the JIT symbols as they were
	 * then: if those changed since (this mapping, or a lookup that read a file), the caches
	 * start over here, at the mapping change, as they did when every change of the maps
	 * started them over.  Never at the lookup itself, which they did not either. */
	if (th->maps) {
		uint64_t c = pfc_jitsyms_changes(&s->jit, th->pid);
		if (c != th->maps->jit_changes) {
			th->maps->jit_changes = c;
			pfc_maps_bump(th->maps);
		}
	}
	return 0;
}

/* A lost-events or throttle record kept as a mark (opts->keep_marks), with the thread and time
 * of its sample_id trailer when the event has one; time, when not 0, is the record's own. */
static int keep_mark(struct pfc_session *s, const struct pfc_evsel *ev, const uint8_t *data, uint32_t size,
		     unsigned kind, uint64_t value, uint64_t time)
{
	struct pfc_mark m = { .value = value, .pid = -1, .tid = -1, .evsel = (uint32_t)ev->idx, .kind = (uint8_t)kind };
	struct pfc_sample id;

	if (ev->sample_id_all && pfc_sample_parse_id(ev, data + 8, size - 8, s->rd.swap, &id) == 0) {
		if (id.flags & PFC_S_HAS_TID) {
			m.pid = (int32_t)id.pid;
			m.tid = (int32_t)id.tid;
		}
		if (id.flags & PFC_S_HAS_TIME) {
			m.time = id.time;
			m.has_time = 1;
		}
	}
	if (time) {
		m.time = time;
		m.has_time = 1;
	}
	if (pfc_marks_add(&s->marks, &m) < 0)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "marks");
	return 0;
}

static int process_record(struct pfc_session *s, const uint8_t *data, uint32_t size, uint64_t off)
{
	struct pfc_reader *rd = &s->rd;
	uint32_t type = pfc_ld32(data, rd->swap);
	uint16_t misc = pfc_ld16(data + 4, rd->swap);
	struct pfc_rec rec = { .type = type, .misc = misc, .size = size, .data = data, .offset = off };
	struct pfc_evsel *ev = pfc_reader_evsel_of(rd, &rec);
	const uint8_t *b = data + 8;
	uint64_t blen = size - 8, tsz;
	int swap = rd->swap, cpumode = misc & PFC_MISC_CPUMODE_MASK;

	if (!ev)
		return PFC_FAIL(s->err, CORRUPT, off, "record before any event attribute");
	if (type == PERF_RECORD_SAMPLE)
		return pfc_sample_process(s, ev, data, size, off);
	tsz = trailer_size(s, ev);
	if (tsz > blen)
		return bad_record(s, off, type, "shorter than its sample_id trailer");
	blen -= tsz;
	switch (type) {
	case PERF_RECORD_MMAP:
		if (blen < 32)
			return bad_record(s, off, type, "short MMAP");
		if (pfc_machine_mmap(&s->machine, (int32_t)pfc_ld32(b, swap), (int32_t)pfc_ld32(b + 4, swap),
				     cpumode == PERF_RECORD_MISC_KERNEL || cpumode == PERF_RECORD_MISC_GUEST_KERNEL,
				     pfc_ld64(b + 8, swap), pfc_ld64(b + 16, swap), pfc_ld64(b + 24, swap),
				     (misc & (1 << 13)) ? PROT_READ : PROT_EXEC, MAP_PRIVATE, NULL, 0,
				     (const char *)b + 32, blen - 32) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "mmap");
		if (cpumode != PERF_RECORD_MISC_KERNEL && cpumode != PERF_RECORD_MISC_GUEST_KERNEL &&
		    note_jit_map(s, (int32_t)pfc_ld32(b, swap), (int32_t)pfc_ld32(b + 4, swap), pfc_ld64(b + 8, swap),
				 (const char *)b + 32, blen - 32) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "mmap");
		break;
	case PERF_RECORD_MMAP2: {
		const uint8_t *bid = NULL;
		int bidlen = 0;
		if (blen < 64)
			return bad_record(s, off, type, "short MMAP2");
		if (misc & PFC_MISC_MMAP_BUILD_ID) {
			bidlen = b[32];
			if (bidlen > 20)
				bidlen = 20;
			bid = b + 36;
		}
		if (pfc_machine_mmap(&s->machine, (int32_t)pfc_ld32(b, swap), (int32_t)pfc_ld32(b + 4, swap),
				     cpumode == PERF_RECORD_MISC_KERNEL || cpumode == PERF_RECORD_MISC_GUEST_KERNEL,
				     pfc_ld64(b + 8, swap), pfc_ld64(b + 16, swap), pfc_ld64(b + 24, swap),
				     pfc_ld32(b + 56, swap), pfc_ld32(b + 60, swap), bid, bidlen,
				     (const char *)b + 64, blen - 64) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "mmap");
		if (cpumode != PERF_RECORD_MISC_KERNEL && cpumode != PERF_RECORD_MISC_GUEST_KERNEL &&
		    note_jit_map(s, (int32_t)pfc_ld32(b, swap), (int32_t)pfc_ld32(b + 4, swap), pfc_ld64(b + 8, swap),
				 (const char *)b + 64, blen - 64) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "mmap");
		break;
	}
	case PERF_RECORD_COMM:
		if (blen < 8)
			return bad_record(s, off, type, "short COMM");
		if (pfc_machine_comm(&s->machine, (int32_t)pfc_ld32(b, swap), (int32_t)pfc_ld32(b + 4, swap),
				     (const char *)b + 8, blen - 8) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "comm");
		break;
	case PERF_RECORD_FORK:
		if (blen < 16)
			return bad_record(s, off, type, "short FORK");
		if (pfc_machine_fork(&s->machine, (int32_t)pfc_ld32(b, swap), (int32_t)pfc_ld32(b + 8, swap),
				     (int32_t)pfc_ld32(b + 4, swap), (int32_t)pfc_ld32(b + 12, swap)) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "fork");
		break;
	case PERF_RECORD_EXIT:
		if (blen < 16)
			return bad_record(s, off, type, "short EXIT");
		/* perf keeps exited threads: nothing changes for later lookups; a thread's
		 * off-CPU interval ends here at the latest */
		if (s->offcpu && blen >= 24)
			pfc_offcpu_exit(s, (int32_t)pfc_ld32(b + 8, swap), pfc_ld64(b + 16, swap));
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		/* --switch-events: the thread of the sample_id trailer switches in (out records
		 * carry PERF_RECORD_MISC_SWITCH_OUT); without a trailer there is no thread */
		if (s->offcpu && !(misc & PERF_RECORD_MISC_SWITCH_OUT) && ev->sample_id_all) {
			struct pfc_sample id;
			if (pfc_sample_parse_id(ev, data + 8, size - 8, swap, &id) == 0 && (id.flags & PFC_S_HAS_TIME) &&
			    (id.flags & PFC_S_HAS_TID))
				pfc_offcpu_switch_in(s, (int32_t)id.tid, id.time);
		}
		break;
	case PERF_RECORD_KSYMBOL:
		if (blen < 16)
			return bad_record(s, off, type, "short KSYMBOL");
		if (pfc_machine_ksymbol(&s->machine, pfc_ld64(b, swap), pfc_ld32(b + 8, swap), (const char *)b + 16,
					blen - 16, pfc_ld16(b + 14, swap) & 1) < 0)
			return PFC_FAIL_NOOFF(s->err, NOMEM, "ksymbol");
		break;
	case PERF_RECORD_LOST:
		if (blen < 16)
			return bad_record(s, off, type, "short LOST");
		s->st.nr_lost_records++;
		s->st.nr_lost_events += pfc_ld64(b + 8, swap);
		if (s->opts->keep_marks)
			return keep_mark(s, ev, data, size, PFC_MARK_LOST, pfc_ld64(b + 8, swap), 0);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (blen < 8)
			return bad_record(s, off, type, "short LOST_SAMPLES");
		s->st.nr_lost_samples += pfc_ld64(b, swap);
		ev->nr_lost_samples += pfc_ld64(b, swap);
		if (s->opts->keep_marks)
			return keep_mark(s, ev, data, size, PFC_MARK_LOST_SAMPLES, pfc_ld64(b, swap), 0);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		/* { time, id, stream_id }: the time is the record's own, trailer or not */
		if (blen >= 24 && s->opts->keep_marks)
			return keep_mark(s, ev, data, size, type == PERF_RECORD_THROTTLE ? PFC_MARK_THROTTLE :
					 PFC_MARK_UNTHROTTLE, 0, pfc_ld64(b, swap));
		break;
	default:
		break;
	}
	return 0;
}

/* One record: a sample the callchain cache counts (pfc_sample_cached) without decoding it or
 * process_record's frame, the rest through process_record. */
int pfc_session_record(struct pfc_session *s, const uint8_t *data, uint32_t size, uint64_t off)
{
	/* --alloc: the runtime's allocations up to this record's time go first, so that their
	 * stacks meet the maps as they were then */
	if (!s->evs.started && s->evs.events.n && s->rd.nr_evsels && pfc_ld32(data, s->rd.swap) < PFC_RECORD_KERNEL_MAX) {
		int ret = pfc_evsample_start(s);
		if (ret < 0)
			return ret;
	}
	if (s->evs.feeding) {
		struct pfc_rec rec = { .type = pfc_ld32(data, s->rd.swap), .size = size, .data = data, .offset = off };
		uint64_t t = rec.type < PFC_RECORD_KERNEL_MAX ? record_time(s, &rec) : 0;
		int ret;
		if (t && t != UINT64_MAX && (ret = pfc_evsample_until(s, t)) < 0)
			return ret;
	}
	if (pfc_ld32(data, s->rd.swap) == PERF_RECORD_SAMPLE && !s->opts->filter && !s->offcpu && !s->opts->keep_stream &&
	    !s->evs.filtering && !s->evs.counting) {
		struct pfc_rec rec = { .type = PERF_RECORD_SAMPLE, .size = size, .data = data, .offset = off };
		struct pfc_evsel *ev = pfc_reader_evsel_of(&s->rd, &rec);
		int ret;
		if (ev && ev->cc_off && (ret = pfc_sample_cached(s, ev, data, size)))
			return ret < 0 ? ret : 0;
	}
	return process_record(s, data, size, off);
}

/* ---- reading: user records at once, kernel records in time order ----
 * perf's ordered-events.c: a kernel record with a timestamp waits in the ordering queue until
 * a FINISHED_ROUND says that nothing older can come (order.c); the queue hands it back here
 * (deliver).  In the pipeline, records go to the processing thread instead (pipeline.c).
 */

static int deliver(void *ctx, const struct pfc_qev *ev)
{
	struct pfc_session *s = ctx;

	if (s->pipeline.chan)
		return pfc_pipeline_deliver(s, ev->data, ev->size, ev->offset);
	return pfc_session_record(s, ev->data, ev->size, ev->offset);
}

/* The timestamp of a kernel record, or 0 when it has none. */
static inline __attribute__((always_inline)) uint64_t record_time(struct pfc_session *s, const struct pfc_rec *r)
{
	struct pfc_evsel *ev = pfc_reader_evsel_of(&s->rd, r);

	if (!ev || ev->sample_time_off == PFC_NO_FIELD)
		return 0;
	if (r->type == PERF_RECORD_SAMPLE) {
		if ((uint64_t)ev->sample_time_off + 8 > (uint64_t)r->size - 8)
			return 0;
		return pfc_ld64(r->data + 8 + ev->sample_time_off, s->rd.swap);
	} else {
		struct pfc_sample smp;
		if (pfc_sample_parse_id(ev, r->data + 8, r->size - 8, s->rd.swap, &smp) < 0)
			return 0;
		return smp.time;
	}
}

static int on_record(void *ctx, const struct pfc_rec *r)
{
	struct pfc_session *s = ctx;

	s->st.nr_records++;
	if (r->type < PFC_REC_MAX)
		s->st.nr_by_type[r->type]++;
	if (s->opts->progress && !s->pipeline.chan && !(s->st.nr_records & 255))
		s->opts->progress(s->opts->progress_arg, s);
	if (r->type >= 64) {
		switch (r->type) {
		case PFC_REC_FINISHED_ROUND:
			/* (in the pipeline also without ordering: copies are given back per round) */
			if (s->ordered || s->pipeline.chan) {
				int ret = pfc_order_round(&s->order);
				if (ret < 0)
					return s->rd.err->code ? ret : PFC_FAIL_NOOFF(s->rd.err, NOMEM, "ordering queue");
			}
			/* mapped records before the oldest one still queued are done with */
			if (!r->compressed && !s->rd.streaming) {
				uint64_t low = pfc_order_low_offset(&s->order, r->offset);
				if (!s->pipeline.chan)
					pfc_reader_release(&s->rd, low);
				else if (pfc_pipeline_release(s, low) < 0)
					return -PFC_ERR_NOMEM;
			}
			break;
		case PFC_REC_HEADER_BUILD_ID:
			load_build_ids(s, r->data, r->size);
			break;
		case PFC_REC_HEADER_ATTR:
			if (pfc_sample_evsels(s, s->rd.nr_evsels) < 0)
				return PFC_FAIL_NOOFF(s->rd.err, NOMEM, "evsels");
			s->ordered = !s->opts->no_sort && s->rd.sample_id_all;
			break;
		default:
			break;
		}
		return 0;
	}
	if (r->type >= PFC_RECORD_KERNEL_MAX)
		return 0;
	if (!s->rd.nr_evsels)
		return PFC_FAIL(s->rd.err, CORRUPT, r->offset, "record of type %u before any event attribute", r->type);
	if (s->ordered) {
		uint64_t ts = record_time(s, r);
		/* perf delivers records without a usable timestamp at once */
		if (ts && ts != UINT64_MAX) {
			if (pfc_order_queue(&s->order, ts, r->data, r->size, r->offset, r->compressed, r->transient) < 0)
				return PFC_FAIL_NOOFF(s->rd.err, NOMEM, "ordering queue");
			return 0;
		}
	}
	if (s->pipeline.chan) {
		const uint8_t *data = r->data;
		if (r->transient && !(data = pfc_order_copy(&s->order, r->data, r->size)))
			return PFC_FAIL_NOOFF(s->rd.err, NOMEM, "record copy");
		return pfc_pipeline_push(s, data, r->size, r->offset);
	}
	return pfc_session_record(s, r->data, r->size, r->offset);
}

int pfc_session_read(struct pfc_session *s)
{
	int ret = pfc_reader_run(&s->rd, on_record, s);

	return ret == 0 ? pfc_order_flush_all(&s->order) : ret;
}

int pfc_session_process(struct pfc_session *s)
{
	int ret;

	if (pfc_sample_evsels(s, s->rd.nr_evsels) < 0)
		return PFC_FAIL_NOOFF(s->err, NOMEM, "evsels");
	s->ordered = !s->opts->no_sort && s->rd.nr_evsels && s->rd.sample_id_all;
	if (s->rd.nr_evsels && s->evs.events.n && (ret = pfc_evsample_start(s)) < 0)
		return ret;
	if (!s->ordered && s->rd.nr_evsels && !s->rd.sample_id_all && s->opts->log && s->opts->verbose)
		fprintf(s->opts->log, "perfconv: '%s': no sample_id_all, processing records in file order\n",
			s->opts->input);
	if (!pfc_pipeline_run(s, &ret)) {
		ret = pfc_session_read(s);
		if (ret < 0 && !s->err->code)
			ret = PFC_FAIL_NOOFF(s->err, NOMEM, "ordering queue");
	}
	if (ret == 0)
		ret = pfc_evsample_finish(s);
	s->st.nr_frames += pfc_chaincache_settle(&s->chains, &s->stacks);
	if (ret < 0)
		return ret;
	if (s->offcpu && (ret = pfc_offcpu_finish(s, &s->st.nr_frames)) < 0)
		return ret;
	s->st.nr_out_of_order = s->order.nr_out_of_order;
	if (pfc_stream_finish(&s->stream) < 0)
		return PFC_FAIL_NOOFF(s->err, IO, "cannot write the sample stream's temporary file");
	return pfc_kernel_finish(s);
}

/* ---- what the session hands on to other parts ---- */

int pfc_session_print_header(struct pfc_session *s, FILE *out, int full, int no_mtime)
{
	return pfc_hdr_print_reader(out, &s->rd, s->opts->input, full, no_mtime);
}

int pfc_session_side_files(struct pfc_session *s, int (*fn)(void *arg, const char *path, const char *name,
							     const char *entry), void *arg)
{
	return pfc_jitsyms_side_files(&s->jit, fn, arg);
}
