/*
 * fuzz_reader.c - the whole conversion of one perf.data: reader, ordering, machine,
 * symbolization and the folded writer, as `perfconv -i FILE` runs it.  Symbols come from
 * nowhere (no symfs, an empty kallsyms), so only the input bytes drive the code.  Inputs of
 * some sizes go through the off-CPU analysis too (--off-cpu, --thread-time), and the header
 * printer (--header, --header-only -I) reads the feature sections of every input.  Half
 * the sizes convert with --perf-compat.
 *
 * Seeds are the tiny files of fuzz/seeds/reader (scripts/fuzz-seeds.py cuts them from the
 * fixtures: one record type or one feature section each); whole recordings would make each
 * run read hundreds of records.  What a run costs beyond its input is kept small: the
 * kallsyms file is a short regular file (for a character device such as /dev/null the
 * loader reserves 8 MiB, the size of a /proc/kallsyms, and under ASan every byte of that
 * costs), and the reading thread of the pipeline (a thread's start and end cost more under
 * ASan than the conversion of a small input) runs for one input size in eight only.  make fuzz
 * builds the library with small arena blocks and a small pipeline ring (FUZZ_DEFS in the
 * Makefile), and ASan's quarantine is 4 MiB (FUZZ_ASAN_OPTIONS below): with the default 256 MiB
 * every run's allocations are fresh pages, and faulting them in was half of a run's time.
 */
// FUZZ_SEEDS: fuzz/seeds/reader/* tests/regress/reader/*
// FUZZ_MAX_LEN: 32768
// FUZZ_ASAN_OPTIONS: quarantine_size_mb=4
#include "converter/session.h"
#include "formats/writer.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char rk[] = "/tmp/pfc-fuzz-kernel-XXXXXX", rkfile[64];

/* the stand-in for the running kernel's directory goes when the fuzzer exits */
static void remove_rk(void)
{
	unlink(rkfile);
	rmdir(rk);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	static char ksyms[32];
	static const char ksyms_text[] =
		"ffffffff81000000 T _stext\nffffffff81001000 T do_syscall_64\nffffffff81002000 t schedule\n";
	static struct pfc_tuning tn;	/* what PERFCONV_RUNNING_KERNEL and PERFCONV_PIPELINE give */
	struct pfc_opts o;
	struct pfc_session s;
	struct pfc_error err;
	struct pfc_wopts wo;
	char path[32];

	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	if (!ksyms[0]) {
		int fd = memfd_create("pfc-fuzz-kallsyms", 0);
		if (fd < 0 || write(fd, ksyms_text, sizeof(ksyms_text) - 1) != (ssize_t)sizeof(ksyms_text) - 1)
			abort();
		snprintf(ksyms, sizeof(ksyms), "/proc/self/fd/%d", fd);
		/* --perf-compat reads "this machine's" kallsyms: the same short file stands for it */
		if (!mkdtemp(rk))
			abort();
		snprintf(rkfile, sizeof(rkfile), "%s/kallsyms", rk);
		if (symlink(ksyms, rkfile) < 0)
			abort();
		atexit(remove_rk);
		tn.running_kernel = rk;
	}
	if (pfc_fuzz_file(data, size, path) < 0)
		return 0;
	memset(&o, 0, sizeof(o));
	memset(&err, 0, sizeof(err));
	memset(&wo, 0, sizeof(wo));
	o.input = path;
	o.max_stack = 127;
	o.kallsyms = ksyms;
	o.symfs = "/nonexistent";
	o.map_dir = "/nonexistent";
	o.keep_stream = size & 1;	/* both pipelines: aggregate only, and the sample stream */
	o.offcpu = (size >> 1) % 3;	/* none, blocked, all */
	o.thread_time = (size >> 1) % 3 == 2;
	o.perf_compat = (size >> 6) & 1;	/* perf's own rules: the running kernel's map, no foreign unwinding */
	wo.kernel = wo.jit = wo.addrs = 1;
	tn.no_pipeline = (size >> 3) % 8 != 0;
	o.tuning = &tn;
	if (pfc_session_open(&s, &o, &err) == 0) {
		if (pfc_session_process(&s) == 0 && pfc_session_symbolize(&s) == 0)
			pfc_writer_folded.write(null, &s, &wo, &err);
		pfc_session_print_header(&s, null, (size >> 2) & 1, 1);
	}
	pfc_session_close(&s);
	return 0;
}
