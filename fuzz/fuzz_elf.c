/*
 * fuzz_elf.c - the ELF symbol loader: symbol tables, program headers, PLT, build-id and
 * debug link of one file, then lookups over the table it built.  The C library's debug file
 * of the fixtures (8,200 symbols, 310 KB) seeds it as a cut of some 400 symbols
 * (fuzz/seeds/elf/libc-cut.debug, made by scripts/fuzz-seeds-elf.sh): the loader's code
 * covered from the seeds is the same, and a run on it takes a fraction of the time.  Inputs
 * are capped at 32 KiB, above the largest seed: libFuzzer copies an input over 128 KB into
 * memory that ASan maps for it and unmaps after the run, and that unmap (a TLB flush on
 * every CPU) was a quarter of the time.
 */
// FUZZ_MAX_LEN: 32768
// FUZZ_SEEDS: fixtures/root/usr/lib/debug/.build-id/[7ce]?/*.debug fixtures/root/tmp/probe/fx/run/node-jitdump/jitted-15218-80.so fixtures/root/tmp/probe/fx/run/node-jitdump/jitted-15218-681.so fuzz/seeds/elf/*
#include <sys/stat.h>

#include "converter/native/symtab.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The loader looks for a file's symbols in the places perf does (/usr/lib/debug/.build-id/,
 * the debug link's directories, ...) under the symfs.  With the host's root as the symfs, an
 * input that kept the build-id of the fixtures' C library loaded the host's own libc6-dbg file
 * (4 MB, 4,864 symbols) in every run instead of the input's table.  The input is SYMFS/in
 * instead, a link to the input's memfd in a private directory, so that only its bytes are
 * read.  The build-id path of that C library links to the input too: an input that keeps
 * its build-id goes through the build-id candidate (found, its build-id compared), the
 * others through lookups that find nothing.
 */
#define LIBC_ID_DIR "/usr/lib/debug/.build-id/93"
#define LIBC_ID_FILE LIBC_ID_DIR "/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug"
static char symfs[32];

static void symfs_path(char *out, size_t size, const char *rel)
{
	snprintf(out, size, "%s%s", symfs, rel);
}

static void symfs_remove(void)
{
	static const char *const rm[] = { "/in", LIBC_ID_FILE };
	static const char *const dirs[] = { LIBC_ID_DIR, "/usr/lib/debug/.build-id", "/usr/lib/debug",
					    "/usr/lib", "/usr", "" };
	char p[128];
	size_t i;

	for (i = 0; i < sizeof(rm) / sizeof(rm[0]); i++) {
		symfs_path(p, sizeof(p), rm[i]);
		unlink(p);
	}
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		symfs_path(p, sizeof(p), dirs[i]);
		rmdir(p);
	}
}

static int symfs_make(const char *input)
{
	static const char *const dirs[] = { "/usr", "/usr/lib", "/usr/lib/debug",
					    "/usr/lib/debug/.build-id", LIBC_ID_DIR };
	static int status = 1;
	char p[128];
	size_t i;

	if (status <= 0)
		return status;
	status = -1;
	snprintf(symfs, sizeof(symfs), "/tmp/pfc-fuzz-elf-XXXXXX");
	if (!mkdtemp(symfs))
		return -1;
	atexit(symfs_remove);
	symfs_path(p, sizeof(p), "/in");
	if (symlink(input, p) < 0)
		return -1;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		symfs_path(p, sizeof(p), dirs[i]);
		if (mkdir(p, 0700) < 0)
			return -1;
	}
	symfs_path(p, sizeof(p), LIBC_ID_FILE);
	if (symlink(input, p) < 0)
		return -1;
	status = 0;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pfc_symopts so;
	struct pfc_symtab t;
	struct pfc_dso_load info;
	uint8_t bid[20];
	int bidlen = 0;
	char path[32];
	size_t i;

	if (pfc_fuzz_file(data, size, path) < 0 || symfs_make(path) < 0)
		return 0;
	memset(&so, 0, sizeof(so));
	memset(&t, 0, sizeof(t));
	memset(&info, 0, sizeof(info));
	so.files = pfc_files_new(&(struct pfc_files_opts){ .symfs = symfs }, NULL);
	so.buildid_from_symfs = 1;	/* perfconv's default: the build-id of SYMFS/in */
	pfc_elf_build_id(path, bid, &bidlen);
	if (pfc_elf_load(&so, "/in", NULL, 0, &t, &info) == 0) {
		if (pfc_symtab_check(&t) != 0)
			abort();
		for (i = 0; i < t.nr; i++) {
			pfc_symtab_find(&t, t.syms[i].start);
			pfc_symtab_find(&t, t.syms[i].end);
		}
	}
	pfc_symtab_free(&t);
	pfc_files_free(so.files);
	return 0;
}
