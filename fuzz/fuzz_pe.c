/*
 * fuzz_pe.c - the PE image parser of ReadyToRun .dll files: headers, sections, the debug
 * directory, CLR metadata (MVID) and the R2R function table, and offset -> RVA; and the
 * ranges a pack leaves as holes (pfc_pe_unread_ranges), which must lie in the image, in order,
 * clear of its headers.
 */
// FUZZ_MAX_LEN: 65536
// FUZZ_SEEDS: tests/data/r2r/*.dll
#include "converter/util/error.h"
#include "converter/jit/pe.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pfc_pe pe;
	struct pfc_error err;
	uint64_t off, *r;
	size_t n, i;

	memset(&err, 0, sizeof(err));
	if (pfc_pe_unread_ranges(data, size, &r, &n) == 0) {
		for (i = 0; i < n; i++)
			if (!r[2 * i + 1] || r[2 * i] + r[2 * i + 1] > size || r[2 * i] + r[2 * i + 1] < r[2 * i] ||
			    (i && r[2 * i] < r[2 * i - 2] + r[2 * i - 1]))
				abort();
		free(r);
	}
	pfc_pe_sniff(data, size);
	if (pfc_pe_parse(data, size, &pe, &err) == 0) {
		for (off = 0; off < size; off += 512)
			pfc_pe_offset_to_rva(&pe, off);
		pfc_pe_free(&pe);
	}
	return 0;
}
