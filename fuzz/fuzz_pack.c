/*
 * fuzz_pack.c - the pack reader (converter/files/packread.c): detection, then the zstd frames,
 * the tar stream through libarchive and the limits; on success every member's bytes are
 * read through their mapping and the reader's promises are checked (MANIFEST first with its
 * magic, names that are keys and never paths, sizes that match).
 *
 * libarchive and libzstd are the system's, without coverage, and a mutated zstd frame is
 * mostly a broken one: an input that does not start with the zstd magic is a tar stream,
 * which the target compresses into a pack, so that mutations reach the tar headers.  Seeds:
 * small packs written by pfc_packw (*.perfpack) and their tar streams (*.tar).  A pack that
 * opens has its MANIFEST read as a conversion reads it (files.c) and asked a few questions.
 */
// FUZZ_MAX_LEN: 16384
// FUZZ_SEEDS: fuzz/seeds/pack/*
// FUZZ_ASAN_OPTIONS: quarantine_size_mb=0:thread_local_quarantine_size_kb=0
#include <zstd.h>
#include "converter/files/files.h"
#include "converter/files/pack.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* a name the reader must have refused: empty, absolute, or with a '..' component */
static int bad_name(const char *s)
{
	size_t n = strlen(s);

	return !n || s[0] == '/' || !strcmp(s, "..") || !strncmp(s, "../", 3) || strstr(s, "/../") ||
	       (n >= 3 && !strcmp(s + n - 3, "/.."));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static ZSTD_CCtx *cc;
	static uint8_t z[ZSTD_COMPRESSBOUND(16384)];
	struct pfc_pack *p = NULL;
	struct pfc_error err;

	if ((size < 4 || memcmp(data, "\x28\xb5\x2f\xfd", 4)) && size <= 16384) {
		if (!cc && !(cc = ZSTD_createCCtx()))
			return 0;
		size = ZSTD_compressCCtx(cc, z, sizeof(z), data, size, 1);
		if (ZSTD_isError(size))
			return 0;
		data = z;
	}
	/* not compared with what open says: detection looks at the first tar header only, and
	 * a pack may start with a pax header (a long or UTF-8 name) that it does not read */
	pfc_pack_detect_mem(data, size);
	memset(&err, 0, sizeof(err));
	if (pfc_pack_open_mem(&p, data, size, &err) < 0) {
		if (p || !err.code)
			abort();
		return 0;
	}
	if (pfc_pack_count(p) < 1 || strcmp(pfc_pack_name_at(p, 0), PFC_PACK_MANIFEST))
		abort();
	for (size_t i = 0; i < pfc_pack_count(p); i++) {
		const char *name = pfc_pack_name_at(p, i);
		uint64_t n = UINT64_MAX, nfd = UINT64_MAX;
		const unsigned char *b = pfc_pack_bytes(p, name, &n);
		volatile unsigned sum = 0;

		if (!b || pfc_pack_fd(p, name, &nfd) < 0 || nfd != n || bad_name(name))
			abort();
		if (i == 0 && (n < sizeof(PFC_PACK_MAGIC) - 1 || memcmp(b, PFC_PACK_MAGIC, sizeof(PFC_PACK_MAGIC) - 1)))
			abort();
		for (uint64_t k = 0; k < n; k += 64)
			sum += b[k];
		(void)sum;
	}
	/* the MANIFEST as a conversion reads it (files.c), and a few questions to it */
	{
		struct pfc_files_opts fo = { 0 };
		struct pfc_files *f = pfc_files_new(&fo, p);
		struct pfc_found found;
		long long t;

		memset(&err, 0, sizeof(err));
		if (f && pfc_files_load_pack(f, &err) == 0) {
			pfc_files_find(f, PFC_FILES_KERNEL, "kallsyms", 0, &found);
			pfc_files_find(f, PFC_FILES_ROOT, "/usr/lib/x86_64-linux-gnu/libc.so.6", 0, &found);
			pfc_files_find(f, PFC_FILES_TMP, "perf-1.map", PFC_FILES_PROBE, &found);
			pfc_files_pack_mtime(f, &t);
			(void)pfc_files_pack_recording(f);
		} else if (f && !err.code) {
			abort();
		}
		pfc_files_free(f);
	}
	pfc_pack_close(p);
	return 0;
}
