/*
 * datasrc.h - the text perf script prints for a memory sample's data source (PERF_SAMPLE_DATA_SRC,
 * perf mem and load-latency events): "|OP LOAD|LVL L1 or L1 hit|SNP None|TLB L1 or L2 hit|LCK No|BLK  N/A",
 * as perf 6.1's perf_script__meminfo_scnprintf (util/mem-events.c) writes it.
 */
#ifndef PFC_DATASRC_H
#define PFC_DATASRC_H

#include <stddef.h>
#include <stdint.h>

/* Write the text of data_src into out (size bytes, NUL-terminated, cut to fit); its length. */
size_t pfc_datasrc_text(char *out, size_t size, uint64_t data_src);

#endif
