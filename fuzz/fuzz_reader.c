/*
 * fuzz_reader.c - the whole conversion of one perf.data: reader, ordering, machine,
 * symbolization and the folded writer, as `perfconv -i FILE` runs it.  Symbols come from
 * nowhere (no symfs, an empty kallsyms), so only the input bytes drive the code.  Inputs of
 * some sizes go through the off-CPU analysis too (--off-cpu, --thread-time).
 */
// FUZZ_SEEDS: fixtures/*/perf.data fixtures/*/pipe.data fuzz/seeds/reader/*
#include "converter/session.h"
#include "formats/writer.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	static char empty_ksyms[] = "/dev/null";
	struct pfc_opts o;
	struct pfc_session s;
	struct pfc_error err;
	struct pfc_wopts wo;
	char path[32];

	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	if (pfc_fuzz_file(data, size, path) < 0)
		return 0;
	memset(&o, 0, sizeof(o));
	memset(&err, 0, sizeof(err));
	memset(&wo, 0, sizeof(wo));
	o.input = path;
	o.max_stack = 127;
	o.kallsyms = empty_ksyms;
	o.symfs = "/nonexistent";
	o.map_dir = "/nonexistent";
	o.keep_stream = size & 1;	/* both pipelines: aggregate only, and the sample stream */
	o.offcpu = (size >> 1) % 3;	/* none, blocked, all */
	o.thread_time = (size >> 1) % 3 == 2;
	wo.kernel = wo.jit = wo.addrs = 1;
	if (pfc_session_open(&s, &o, &err) == 0 && pfc_session_process(&s) == 0 && pfc_session_symbolize(&s) == 0)
		pfc_writer_folded.write(null, &s, &wo, &err);
	pfc_session_close(&s);
	return 0;
}
