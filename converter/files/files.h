/*
 * files.h - the one place that answers "the bytes of the file this DSO, pid or kernel
 * needs".  A symbol source names what it wants as a place (enum pfc_files_base) and a path
 * relative to it; files.c joins it with this machine's directories (--symfs, the build-id
 * cache, /proc, /tmp, --map-dir), or takes it from a pack.  Sources never join paths or
 * open symbol files by name themselves.
 *
 * The same (place, path) names the same file on every machine: a pack stores each file a
 * conversion used under that name, so converting the pack asks the same questions and gets
 * the same bytes.  While a pack is read, a file of this machine serves only where the user
 * named its directory for this conversion (--symfs, --buildid-dir, --map-dir, --kallsyms;
 * debuginfod servers); a build-id, where the caller knows one, is still checked.
 */
#ifndef PFC_FILES_H
#define PFC_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "converter/util/error.h"

/* The places a file is asked for in.  The path is relative to the place. */
enum pfc_files_base {
	PFC_FILES_ROOT,       /* the recorded file system (--symfs, or /): an absolute recorded path */
	PFC_FILES_HOST,       /* this machine's own path, outside --symfs (a debuglink's, a jitdump marker's) */
	PFC_FILES_BUILDID,    /* the build-id cache (--buildid-dir, $HOME/.debug): "ab/cdef.../elf" */
	PFC_FILES_PROC,       /* /proc: "PID/comm", "PID/status", "PID/root/tmp/perf-N.map" */
	PFC_FILES_TMP,        /* /tmp of the recording machine: "perf-PID.map", "jit-PID.dump" */
	PFC_FILES_MAPDIR,     /* --map-dir: "perf-N.map" */
	PFC_FILES_KERNEL,     /* the recorded kernel's symbols: "kallsyms" (/proc/kallsyms or --kallsyms) */
	PFC_FILES_DEBUGINFOD, /* fetched from a debuginfod server: "HEX/debuginfo" */
	PFC_FILES_SYMSRV,     /* fetched from a symbol server, by its SSQP key:
			       * "_.debug/elf-buildid-sym-HEX/_.debug" */
	PFC_FILES_NR
};

enum {
	/* the caller checks that the file is the recorded one (its build-id): a file of this
	 * machine may serve a pack */
	PFC_FILES_VERIFIED = 1 << 0,
	/* the file is only looked at (exists, is regular), not read: nothing to pack */
	PFC_FILES_PROBE = 1 << 1,
};

/* A file found: where to open it, and its name on the machine that recorded (for messages
 * and for the writers that name the files they used). */
struct pfc_found {
	char path[4096];      /* open this: a local path, or a pack member as /proc/self/fd/N */
	char name[4096];      /* the recording machine's path of it */
	int from_pack;
	enum pfc_files_base base;  /* the question it answered */
	char rel[4096];
};

struct pfc_files_opts {
	const char *symfs;        /* NULL or "": / */
	const char *buildid_dir;  /* NULL: no build-id cache */
	int buildid_dir_given;    /* named by the user (--buildid-dir), not $HOME/.debug */
	const char *map_dir;      /* --map-dir, or NULL */
	const char *kallsyms;     /* --kallsyms, or NULL */
	const char *running_kallsyms; /* "/proc/kallsyms" when the recorded kernel is the running one */
	const char *proc;         /* NULL: /proc (tests point it elsewhere) */
	const char *tmp;          /* NULL: /tmp */
	const char *debug_dir;    /* NULL: /usr/lib/debug, for the host's paths under it (tests) */
	int record;               /* remember every file found, for a pack (pfc_files_recorded) */
};

struct pfc_pack;
struct pfc_files;

/* pack: the pack being converted (its members come first, and this machine's files serve
 * only as said above), or NULL.  The pack stays the caller's. */
struct pfc_files *pfc_files_new(const struct pfc_files_opts *o, const struct pfc_pack *pack);
void pfc_files_free(struct pfc_files *f);

/* The running kernel's symbols serve the recording (its kernel is the running one): path,
 * or NULL when it is not.  Never used for a pack. */
void pfc_files_set_running_kallsyms(struct pfc_files *f, const char *path);
/* This process's vdso image, as a path to open (perf-compat's stand-in for a recorded
 * [vdso] without a build-id: perf 6.1 reads its own), or NULL.  Never for a pack. */
const char *pfc_files_own_vdso(struct pfc_files *f);
/* Whether FOUND (PFC_FILES_KERNEL's answer) is the running kernel's own symbols, read from
 * this machine's kallsyms for a recording of this kernel: not --kallsyms, not a pack's.  Only
 * then may the kernel symbol cache (symcache.c) stand in for the file. */
int pfc_files_running_kernel(const struct pfc_files *f, const struct pfc_found *found);
/* Reads the pack's MANIFEST (after pfc_files_new with a pack): which member answers which
 * (place, path).  A malformed MANIFEST is an error. */
int pfc_files_load_pack(struct pfc_files *f, struct pfc_error *err);

/* Find the regular file REL in BASE; 1 with *out filled, 0 when there is none.  On a miss
 * out->path still holds this machine's path that was tried (or "" when none was), for the
 * messages that list the places looked at. */
int pfc_files_find(struct pfc_files *f, enum pfc_files_base base, const char *rel, unsigned flags,
		   struct pfc_found *out);
/* The same with REL formatted */
int pfc_files_findf(struct pfc_files *f, enum pfc_files_base base, unsigned flags, struct pfc_found *out,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Whether BASE was named for the conversion, now or when the pack was written: --symfs
 * (ROOT), --map-dir, a build-id cache, kernel symbols.  Places without an option: 1. */
int pfc_files_has(const struct pfc_files *f, enum pfc_files_base base);
/* The names in directory REL of BASE (a --map-dir scan), each passed to fn until it returns
 * non-zero; a pack gives the names the directory had when it was written. */
int pfc_files_list(struct pfc_files *f, enum pfc_files_base base, const char *rel,
		   int (*fn)(void *arg, const char *name), void *arg);
/* A file fetched to LOCAL for (base, rel) by a source that has its own client (debuginfod,
 * a symbol server):
 * recorded like a file found. */
void pfc_files_add(struct pfc_files *f, enum pfc_files_base base, const char *rel, const char *local);
/* Says why a found file is needed and what it is, for the pack's manifest: the last file
 * found in (base, rel).  pid < 0 and bid_len 0 when they do not apply. */
void pfc_files_note(struct pfc_files *f, enum pfc_files_base base, const char *rel, const char *why,
		    int32_t pid, const uint8_t *bid, int bid_len);
/* The recording's modification time as the pack's MANIFEST gives it; 0 when it does not. */
int pfc_files_pack_mtime(const struct pfc_files *f, long long *mtime);
/* The recording's name where the pack was written (its MANIFEST), or NULL. */
const char *pfc_files_pack_recording(const struct pfc_files *f);
/* The pack's i-th event stream of a .NET runtime (its MANIFEST's events lines): its member,
 * in *name the name it had where the pack was written, and in *pid the recording's process it
 * was laid on there (0: not said, an older pack); NULL past the last. */
const char *pfc_files_pack_events(const struct pfc_files *f, size_t i, const char **name, int32_t *pid);
/* Whether a pack is being read (sources tell the user other things then). */
int pfc_files_from_pack(const struct pfc_files *f);

/* What was found while recording (opts.record), in the order found. */
struct pfc_files_entry {
	enum pfc_files_base base;
	const char *rel;          /* the member's name under its place */
	const char *local;        /* where it is on this machine */
	const char *why;          /* pfc_files_note's, or NULL */
	int32_t pid;
	uint8_t bid[20];
	int bid_len;
	int is_list;              /* a directory's listing (names in `names`, NUL-separated) */
	int probe;                /* only seen to exist (PFC_FILES_PROBE), never read */
	const char *names;
	size_t names_len;
};
size_t pfc_files_recorded(const struct pfc_files *f, const struct pfc_files_entry **v);
/* Adds what another conversion of the same recording recorded (FROM) to F's record, each
 * (place, path) once: a pack made under --perf-compat also holds what perfconv's own rules
 * read.  -1 when memory runs out. */
int pfc_files_absorb(struct pfc_files *f, const struct pfc_files *from);
/* The places the conversion searched whose use changes the order of its questions
 * (1 << base): --map-dir, the build-id cache. */
unsigned pfc_files_bases_used(const struct pfc_files *f);
/* The place's name in a pack ("root", "buildid", "proc", ...), and back: -1 for none. */
const char *pfc_files_base_name(enum pfc_files_base base);
int pfc_files_base_from_name(const char *name, size_t len);

#endif
