/*
 * perfmap.h - JIT symbol maps in perf's /tmp/perf-PID.map text format ("START SIZE name",
 * hex, one per line), as written by CoreCLR, V8, Mono and others.
 */
#ifndef PFC_PERFMAP_H
#define PFC_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include "converter/native/symtab.h"
#include "converter/util/ivindex.h"

struct pfc_perfmap_ent {
	uint64_t start, end;
	uint32_t line;              /* line number: later lines describe newer code */
	uint32_t name_off, name_len;
	uint8_t stub;               /* a CoreCLR stub line ("stub ...", "stub<N> ...") */
};

struct pfc_perfmap {
	struct pfc_perfmap_ent *v;  /* sorted by start, then line */
	struct pfc_ivindex ix;      /* the entries' ranges */
	size_t n;
	char *names;
	size_t names_len;
	uint64_t nr_bad_lines;
	struct pfc_symtab *perf_tree;   /* perf's symbol tree of the map, built on first lookup */
	int perf_tree_failed;
};

/* Parse a perf map from memory.  Tolerant: optional 0x, any case, CR line ends, NUL
 * bytes, a half-written last line.  Returns 0 or -1 on out of memory. */
int pfc_perfmap_parse(struct pfc_perfmap *m, const char *buf, size_t len);
/* Read and parse a file; -1 when it cannot be read. */
int pfc_perfmap_load(struct pfc_perfmap *m, const char *path);
void pfc_perfmap_free(struct pfc_perfmap *m);
/* The entry covering addr, NULL when none.  Among the entries that cover it:
 *  - a method wins over a stub ("stub ..." lines: CoreCLR 8+ reports whole stub blocks,
 *    which cover the methods and stubs allocated inside them);
 *  - of two entries starting at the same address the later line wins (the code there
 *    was replaced: the map has no time, file order is the best clue);
 *  - otherwise the smallest range wins (a block and an entry inside it), and on equal
 *    sizes the later line. */
const struct pfc_perfmap_ent *pfc_perfmap_find(const struct pfc_perfmap *m, uint64_t addr);

/*
 * The symbol perf 6.1 gives addr: perf inserts the lines into its symbol tree in file order
 * and takes the first symbol its search meets (dso__load_perf_map, symbols__find), which
 * among entries that share a start (Mono writes several trampolines at one address) is
 * neither the first nor the last line but what the tree's shape says.  With beyond_perf,
 * an address perf's search misses is looked up by pfc_perfmap_find's rules.  Returns 1 with
 * the name and its start, 0 when none covers addr, -1 when out of memory.
 */
int pfc_perfmap_resolve(struct pfc_perfmap *m, uint64_t addr, int beyond_perf, const char **name, size_t *len,
			uint64_t *start);

static inline const char *pfc_perfmap_name(const struct pfc_perfmap *m, const struct pfc_perfmap_ent *e)
{
	return m->names + e->name_off;
}

#endif
