/*
 * fuzz_ecma.c - the ECMA-335 metadata reader and the ReadyToRun code map: an input that
 * starts with "MZ" is a PE image, decoded as perfconv --r2r-dump does (code map, every
 * method's name in both styles, lookups); any other input is a metadata root, whose every
 * TypeDef and MethodDef is formatted.  Seeds: the test app and small framework images of
 * the installed runtime (copied at run time, not kept in the tree), the largest 119 KB.
 * Inputs are capped at 120 KiB: libFuzzer copies a larger input into memory that ASan maps
 * for it and unmaps after the run, and the unmap (a TLB flush on every CPU) costs more than
 * a run.  The lookups step through the image 0x301 bytes at a time (they stepped 0x61, which
 * formatted the same methods' names again and again: 16% of the time for no new code).
 */
// FUZZ_MAX_LEN: 122880
// FUZZ_SEEDS: tests/data/r2r/*.dll tests/regress/ecma/* /usr/share/dotnet/shared/Microsoft.NETCore.App/*/System.Collections.Specialized.dll /usr/share/dotnet/shared/Microsoft.NETCore.App/*/System.Net.Ping.dll /usr/share/dotnet/shared/Microsoft.NETCore.App/*/System.Text.Encodings.Web.dll /usr/share/dotnet/shared/Microsoft.NETCore.App/*/System.Threading.Tasks.Parallel.dll
#include "converter/util/error.h"
#include "converter/jit/ecma.h"
#include "converter/jit/r2rmeta.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void metadata(const uint8_t *data, size_t size)
{
	struct pfc_ecma m;
	struct pfc_error err;
	struct pfc_sb sb = { 0 };
	static const enum pfc_sigstyle styles[3] = { PFC_SIG_ILDASM, PFC_SIG_TYPESTRING, PFC_SIG_R2RMAP };
	uint32_t i;
	int k;

	memset(&err, 0, sizeof(err));
	if (pfc_ecma_open(&m, data, size, &err) < 0)
		return;
	pfc_ecma_mvid(&m);
	for (k = 0; k < 3; k++) {
		struct pfc_sigfmt f = { .style = styles[k] };
		for (i = 1; i <= m.rows[PFC_MD_TYPEDEF] && i < 2000; i++) {
			sb.len = 0;
			pfc_ecma_token(&f, &m, (uint32_t)PFC_MD_TYPEDEF << 24 | i, &sb);
		}
		for (i = 1; i <= m.rows[PFC_MD_TYPESPEC] && i < 2000; i++) {
			sb.len = 0;
			pfc_ecma_token(&f, &m, (uint32_t)PFC_MD_TYPESPEC << 24 | i, &sb);
		}
		for (i = 1; i <= m.rows[PFC_MD_METHODDEF] && i < 2000; i++) {
			const uint8_t *sig;
			uint32_t len;
			sb.len = 0;
			pfc_ecma_method_owner(&m, i);
			if (pfc_ecma_blob(&m, pfc_ecma_col(&m, PFC_MD_METHODDEF, i, 4), &sig, &len) == 0)
				pfc_ecma_method_sig(&f, &m, sig, len, "x", 1, &sb);
		}
	}
	free(sb.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pfc_r2rmeta *r;
	struct pfc_error err;
	FILE *out;

	if (size < 2 || data[0] != 'M' || data[1] != 'Z') {
		metadata(data, size);
		return 0;
	}
	memset(&err, 0, sizeof(err));
	if (pfc_r2rmeta_parse(data, size, NULL, &r, &err) < 0)
		return 0;
	out = fopen("/dev/null", "w");
	if (out) {
		pfc_r2rmeta_dump(r, PFC_R2RMETA_RUNTIME, out);
		pfc_r2rmeta_dump(r, PFC_R2RMETA_R2RMAP, out);
		fclose(out);
	}
	{
		struct pfc_r2rmeta_hit h;
		uint32_t rva;
		for (rva = 0; rva < 0x40000; rva += 0x301)
			if (pfc_r2rmeta_find(r, rva, &h) == 0)
				pfc_r2rmeta_name(r, h.method, h.cold);
	}
	pfc_r2rmeta_free(r);
	return 0;
}
