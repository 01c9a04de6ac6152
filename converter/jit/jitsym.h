/*
 * jitsym.h - the JIT symbol sources of each process of a recording: which pid the runtime
 * named its files with (containers), where its perf-PID.map and jit-PID.dump are, whether
 * they belong to this process at all, and the lookups that turn a JIT address into a
 * frame.  The files themselves are parsed by perfmap.c and jitdump.c.
 */
#ifndef PFC_JITSYM_H
#define PFC_JITSYM_H

#include <stdint.h>
#include <stdio.h>
#include "converter/util/error.h"
#include "converter/machine/machine.h"

struct pfc_perfmap;
struct pfc_jitdump;
struct pfc_reader;
struct pfc_files;
struct pfc_found;

/* A user's --pid-map HOST=NS. */
struct pfc_pidmap {
	int32_t host, ns;
};

struct pfc_jitsym_opts {
	struct pfc_files *files;    /* where the maps, dumps and /proc files are (--map-dir, a pack) */
	const struct pfc_pidmap *pid_map;
	size_t nr_pid_map;
	int resolve;                /* look JIT code up where perf does not (see callchain.c) */
	FILE *log;                  /* warnings; NULL = quiet */
	int verbose;
};

struct pfc_jitproc;

struct pfc_jitsyms {
	struct pfc_jitsym_opts o;
	struct pfc_machine *m;
	const struct pfc_reader *rd;
	struct pfc_error *err;
	struct pfc_jitproc **procs;
	size_t nr_procs, cap_procs;
	struct pfc_jitproc *last;
	int clock_checked, clock_ok;
	const char *clock_why;
	/* frames of unique (JIT) addresses looked up, by source */
	uint64_t nr_jitdump_lookups, nr_timed_lookups;
};

void pfc_jitsyms_init(struct pfc_jitsyms *j, const struct pfc_jitsym_opts *o, struct pfc_machine *m,
		      const struct pfc_reader *rd, struct pfc_error *err);
void pfc_jitsyms_exit(struct pfc_jitsyms *j);

/* A new executable mapping of process pid: remembers JIT regions, PE images and jitdump
 * markers (which also give the pid inside the process's namespace). */
int pfc_jitsyms_note_map(struct pfc_jitsyms *j, int32_t pid, const struct pfc_map *map, const char *filename);

/* Whether an address in this mapping of process pid may be JIT code worth a lookup: a JIT
 * region or PE image, or any mapping of a process that has (or may have) a jitdump. */
int pfc_jitsyms_wants(struct pfc_jitsyms *j, int32_t pid, const struct pfc_map *map);
/* Whether the lookups of process pid give the same answer at any later time (and mapping
 * change): its jitdump was looked for, kept or refused for good, and is not read by time. */
int pfc_jitsyms_settled(const struct pfc_jitsyms *j, int32_t pid);
/* A count that changes whenever what the lookups of process pid answer may have changed
 * (a file read or refused, a jitdump marker, the first JIT range; not the ranges after it):
 * a cache of frames keyed on the process's maps starts over at its next mapping change when
 * this count moved (session.c, note_jit_map). */
uint64_t pfc_jitsyms_changes(const struct pfc_jitsyms *j, int32_t pid);

/*
 * Resolve-mode lookup of a user address in a JIT region or PE image of process pid at
 * `time`: the jitdump first (time-aware when the clocks allow it), then the perf map.
 * On a hit *dso and *addr are replaced by the frame to record; *timed is set when the
 * answer depended on the time (the caller must then not reuse it for another sample).
 * Returns 0, or a negative error (a corrupt jitdump, out of memory).
 */
int pfc_jitsyms_lookup(struct pfc_jitsyms *j, int32_t pid, const struct pfc_map *map, uint64_t ip,
		       uint64_t time, int have_time, const struct pfc_dso **dso, uint64_t *addr, int *timed);

/* The perf map of process pid (found, checked and parsed once), or NULL with a warning. */
struct pfc_perfmap *pfc_jitsyms_perfmap(struct pfc_jitsyms *j, int32_t pid);

/* The file that perf map was read from, as the recording machine named it (for messages and
 * writers); NULL when it was read from an .xz copy or not found. */
const char *pfc_jitsyms_perfmap_path(struct pfc_jitsyms *j, int32_t pid);
/* That file as files.c found it: where to read its bytes (a pack's member, or the local
 * file), its name and its place; NULL as above. */
const struct pfc_found *pfc_jitsyms_perfmap_found(struct pfc_jitsyms *j, int32_t pid);

/* The jitdump of process pid for the writers that copy it (trace.zip, packs): the file the
 * conversion read, or, when no JIT frame of the process needed it, the first one in the
 * places the conversion tries, in its order.  1 with *f filled, 0 when there is none (or only
 * an .xz copy). */
int pfc_jitsyms_jitdump_find(struct pfc_jitsyms *j, int32_t pid, struct pfc_found *f);

/* The files a trace.zip carries beside the recording, as perfcollect collected them: the
 * perf maps that named frames, their perfinfo files, and the jitdumps of the processes
 * with JIT frames (a perf map's, or a jitted-PID-N.so's).  fn gets each one's path to open,
 * its name where it was recorded and its entry name in the archive; fn NULL only looks them
 * up (files.c records them for a pack). */
int pfc_jitsyms_side_files(struct pfc_jitsyms *j, int (*fn)(void *arg, const char *path, const char *name,
							      const char *entry), void *arg);
/* The pid inside the namespace of a process, read from a /proc/PID/status text: the last
 * field of its NStgid line; -1 when there is none.  Exposed for the unit tests. */
int pfc_jitsyms_parse_nstgid(const char *status, size_t len);

/* A JIT frame of pid at addr that nothing named: counted when the cut last record of the
 * process's jitdump may have named it (its code covers addr, or it was cut before saying). */
void pfc_jitsyms_note_unnamed(struct pfc_jitsyms *j, int32_t pid, uint64_t addr);
/* A warning for each process whose jitdump's cut last record left frames unnamed, with
 * how many; none for a cut record that cost no name. */
void pfc_jitsyms_cut_report(struct pfc_jitsyms *j);

#endif
