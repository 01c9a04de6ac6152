/*
 * perf_file.h - perf's on-disk container structures that <linux/perf_event.h> does not
 * define: the file header, feature numbers, perf's user record types (>= 64) and the
 * callchain context markers.  Kernel record and sample layouts come from the uapi header.
 * Layouts follow tools/perf/util/header.[ch] and session.c as written by perf 6.x.
 */
#ifndef PFC_PERF_FILE_H
#define PFC_PERF_FILE_H

#include <stdint.h>
#include <linux/perf_event.h>

#define PFC_MAGIC2      0x32454c4946524550ULL   /* "PERFILE2" read as little-endian u64 */
#define PFC_MAGIC2_SW   0x50455246494c4532ULL   /* same, other byte order */
#define PFC_MAGIC1      0x454c494646524550ULL   /* "PERFFILE" (version 1) */

#define PFC_FILE_HEADER_SIZE 104
#define PFC_PIPE_HEADER_SIZE 16
#define PFC_NAME_ALIGN 64

struct pfc_file_section {
	uint64_t offset;
	uint64_t size;
};

/* Feature bits of the header bitmap (header.h HEADER_*). */
enum pfc_feature {
	PFC_FEAT_RESERVED = 0,
	PFC_FEAT_TRACING_DATA = 1,
	PFC_FEAT_BUILD_ID,
	PFC_FEAT_HOSTNAME,
	PFC_FEAT_OSRELEASE,
	PFC_FEAT_VERSION,
	PFC_FEAT_ARCH,
	PFC_FEAT_NRCPUS,
	PFC_FEAT_CPUDESC,
	PFC_FEAT_CPUID,
	PFC_FEAT_TOTAL_MEM,
	PFC_FEAT_CMDLINE,
	PFC_FEAT_EVENT_DESC,
	PFC_FEAT_CPU_TOPOLOGY,
	PFC_FEAT_NUMA_TOPOLOGY,
	PFC_FEAT_BRANCH_STACK,
	PFC_FEAT_PMU_MAPPINGS,
	PFC_FEAT_GROUP_DESC,
	PFC_FEAT_AUXTRACE,
	PFC_FEAT_STAT,
	PFC_FEAT_CACHE,
	PFC_FEAT_SAMPLE_TIME,
	PFC_FEAT_MEM_TOPOLOGY,
	PFC_FEAT_CLOCKID,
	PFC_FEAT_DIR_FORMAT,
	PFC_FEAT_BPF_PROG_INFO,
	PFC_FEAT_BPF_BTF,
	PFC_FEAT_COMPRESSED,
	PFC_FEAT_CPU_PMU_CAPS,
	PFC_FEAT_CLOCK_DATA,
	PFC_FEAT_HYBRID_TOPOLOGY,
	PFC_FEAT_PMU_CAPS,
	PFC_FEAT_LAST_KNOWN,            /* perf 6.1's HEADER_LAST_FEATURE */
	PFC_FEAT_BITS = 256,
};

/* perf's own record types, written by perf rather than the kernel. */
enum pfc_user_record {
	PFC_REC_HEADER_ATTR = 64,
	PFC_REC_HEADER_EVENT_TYPE = 65,
	PFC_REC_HEADER_TRACING_DATA = 66,
	PFC_REC_HEADER_BUILD_ID = 67,
	PFC_REC_FINISHED_ROUND = 68,
	PFC_REC_ID_INDEX = 69,
	PFC_REC_AUXTRACE_INFO = 70,
	PFC_REC_AUXTRACE = 71,
	PFC_REC_AUXTRACE_ERROR = 72,
	PFC_REC_THREAD_MAP = 73,
	PFC_REC_CPU_MAP = 74,
	PFC_REC_STAT_CONFIG = 75,
	PFC_REC_STAT = 76,
	PFC_REC_STAT_ROUND = 77,
	PFC_REC_EVENT_UPDATE = 78,
	PFC_REC_TIME_CONV = 79,
	PFC_REC_HEADER_FEATURE = 80,
	PFC_REC_COMPRESSED = 81,
	PFC_REC_FINISHED_INIT = 82,
	PFC_REC_COMPRESSED2 = 83,
	PFC_REC_MAX = 84,
};

/* Kernel record types newer than some uapi headers. */
#define PFC_RECORD_CALLCHAIN_DEFERRED 22
#define PFC_RECORD_KERNEL_MAX 23

/* misc bits */
#define PFC_MISC_CPUMODE_MASK 7
#define PFC_MISC_MMAP_BUILD_ID (1 << 14)
#define PFC_MISC_COMM_EXEC (1 << 13)
#define PFC_MISC_BUILD_ID_SIZE (1 << 15)

/* Callchain context markers: every value >= PFC_CONTEXT_MAX is a marker. */
#define PFC_CONTEXT_HV            ((uint64_t)-32)
#define PFC_CONTEXT_KERNEL        ((uint64_t)-128)
#define PFC_CONTEXT_USER          ((uint64_t)-512)
#define PFC_CONTEXT_USER_DEFERRED ((uint64_t)-640)
#define PFC_CONTEXT_GUEST         ((uint64_t)-2048)
#define PFC_CONTEXT_GUEST_KERNEL  ((uint64_t)-2176)
#define PFC_CONTEXT_GUEST_USER    ((uint64_t)-2560)
#define PFC_CONTEXT_MAX           ((uint64_t)-4095)

#endif
