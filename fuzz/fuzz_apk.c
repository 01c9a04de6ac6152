/*
 * fuzz_apk.c - a library stored in a zip (an Android .apk): the zip's end record, central
 * directory and local header that say where the member's bytes are, then the member as an
 * ELF file with its CFI (pfc_cfi_open_in_zip), its build-id, its bytes as a memory file and
 * reads at file offsets.  Seeded with a zip of the fixtures' libdwlib.so stored as
 * lib/arm64-v8a/libx.so beside a compressed file (fuzz/seeds/apk/, made with Python's zipfile).
 */
// FUZZ_MAX_LEN: 32768
// FUZZ_SEEDS: fuzz/seeds/apk/*
#include "converter/native/unwind.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[32];
	const char *why;
	struct pfc_cfi *c;
	uint8_t id[20], b[8];
	uint64_t off;

	if (pfc_fuzz_file(data, size, path) < 0)
		return 0;
	c = pfc_cfi_open_in_zip(path, "lib/arm64-v8a/libx.so", &why);
	if (!c)
		return 0;
	if (pfc_cfi_build_id(c, id, sizeof(id)) > (int)sizeof(id))
		abort();
	(void)pfc_cfi_image_fd(c);
	for (off = 0; off < 0x10000; off += 0x1ff)
		(void)pfc_cfi_read(c, off, b, sizeof(b));
	pfc_cfi_close(c);
	return 0;
}
