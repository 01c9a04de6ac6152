/*
 * test_datasrc.c - perf 6.1's data source text (formats/datasrc.c): the values of a
 * load-latency recording (quipper's perf.data.weight_struct) against the text perf script
 * printed for them, and the edges: nothing set, every bit set, a buffer too small.
 */
#include <string.h>
#include "formats/datasrc.h"
#include "tests/unit/check.h"

static void one(uint64_t v, const char *want)
{
	char out[200];
	size_t n = pfc_datasrc_text(out, sizeof(out), v);

	check(n == strlen(want) && !strcmp(out, want), "%#llx: '%s', want '%s'", (unsigned long long)v, out,
	      want);
}

int main(void)
{
	char small[8];
	size_t n;

	/* perf script's text for these data sources of perf.data.weight_struct */
	one(0x11868100242ull, "|OP LOAD|LVL LFB/MAB or LFB/MAB hit|SNP None|TLB L1 or L2 hit|LCK No|BLK  N/A");
	one(0x10268100142ull, "|OP LOAD|LVL L1 or L1 hit|SNP None|TLB L1 or L2 hit|LCK No|BLK  N/A");
	one(0x1026a100142ull, "|OP LOAD|LVL L1 or L1 hit|SNP None|TLB L1 or L2 hit|LCK Yes|BLK  N/A");
	one(0x10468100442ull, "|OP LOAD|LVL L2 or L2 hit|SNP None|TLB L1 or L2 hit|LCK No|BLK  N/A");
	one(0x10650100842ull, "|OP LOAD|LVL L3 or L3 hit|SNP None|TLB L2 miss|LCK No|BLK  N/A");
	/* nothing set */
	one(0, "|OP N/A|LVL N/A|SNP N/A|TLB N/A|LCK No|BLK  N/A");
	/* every bit, the hops "board": the first operation, the hops in place of the levels */
	one(~(7ull << 43) | 4ull << 43, "|OP LOAD|LVL Remote board N/A hit miss|SNP N/A or None or Hit or Miss or "
					 "HitM or Fwd|TLB N/A or L1 or L2 or Walker or Fault hit miss|LCK N/A|BLK  N/A");
	/* hops 7, past perf's table (which it reads out of bounds): the levels instead */
	one(7ull << 43 | 0x142, "|OP LOAD|LVL L1 hit|SNP N/A|TLB N/A|LCK No|BLK  N/A");
	/* cut to the buffer, NUL-terminated */
	n = pfc_datasrc_text(small, sizeof(small), 0x11868100242ull);
	check(n == sizeof(small) - 1 && !memcmp(small, "|OP LOA", 8), "cut: %zu '%s'", n, small);
	check(pfc_datasrc_text(small, 0, 1) == 0, "size 0");
	return check_done("test_datasrc");
}
