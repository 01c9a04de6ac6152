/*
 * r2rmap.h - symbols of ReadyToRun images (.NET assemblies with precompiled code, mapped from
 * disk as PE files): the crossgen2 <Name>.ni.r2rmap and crossgen1 <Name>.ni.{MVID}.map
 * formats, the runtime's perfinfo-PID.map image list, finding the map that belongs to an
 * image and checking its signature, and turning it into a symbol table in perf's file
 * offset space.  PE parsing itself is pe.c; the DSO and map model is machine.c.
 */
#ifndef PFC_R2RMAP_H
#define PFC_R2RMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "converter/util/error.h"
#include "converter/native/symtab.h"
#include "converter/util/ivindex.h"

struct pfc_files;

struct pfc_r2rmap_ent {
	uint64_t rva;
	uint32_t len;
	uint32_t line;             /* 1-based line number: later lines win ties */
	uint32_t name_off, name_len;
};

struct pfc_r2rmap {
	int has_sig;               /* an FFFFFFFF header line was seen */
	uint8_t sig[16];
	uint32_t version;          /* FFFFFFFE: FormatVersion (0 = absent) */
	int os, arch, abi;         /* FFFFFFFD / FFFFFFFC / FFFFFFFB, -1 = absent */
	struct pfc_r2rmap_ent *v;  /* sorted by rva, then line */
	size_t n, cap;
	struct pfc_ivindex ix;     /* the entries' ranges */
	char *names;
	size_t names_len, names_cap;
	size_t nr_bad_lines;       /* lines that did not parse, skipped */
};

/*
 * Parse a map: lines "RVA SP LENGTH SP NAME", both hex of any width (crossgen2 writes
 * %08X and %02X, crossgen1 %08x or 16 digits), pseudo-RVAs above 0xFFFFFFF0 are crossgen2's
 * header.  A missing final newline and CR line ends are accepted; a line that does not
 * parse is counted and skipped.  Returns 0 or -PFC_ERR_NOMEM.
 */
int pfc_r2rmap_parse(const char *buf, size_t len, struct pfc_r2rmap *m, struct pfc_error *err);
int pfc_r2rmap_load(const char *path, struct pfc_r2rmap *m, struct pfc_error *err);
void pfc_r2rmap_free(struct pfc_r2rmap *m);
/* The entry holding rva (the smallest one when they overlap), or NULL. */
const struct pfc_r2rmap_ent *pfc_r2rmap_find(const struct pfc_r2rmap *m, uint64_t rva);
static inline const char *pfc_r2rmap_name(const struct pfc_r2rmap *m, const struct pfc_r2rmap_ent *e)
{
	return m->names + e->name_off;
}

/* perfinfo-PID.map: "ImageLoad;path;{mvid};[base;]" or the 2016 "NILoad;path;{guid}". */
struct pfc_perfinfo_ent {
	char *path;
	uint8_t mvid[16];
	uint64_t base;             /* load base of an R2R image; 0 = not R2R or not written */
	int has_base;
	int pid;                   /* of the file it came from */
};

struct pfc_perfinfo {
	struct pfc_perfinfo_ent *v;
	size_t n, cap;
	size_t nr_bad_lines;
};

/* Append the image lines of one file's bytes.  0 or -PFC_ERR_NOMEM. */
int pfc_perfinfo_parse(const char *buf, size_t len, int pid, struct pfc_perfinfo *pi, struct pfc_error *err);
/* Read a file; -PFC_ERR_OPEN when it cannot be read. */
int pfc_perfinfo_load(const char *path, int pid, struct pfc_perfinfo *pi, struct pfc_error *err);
/* The perfinfo-PID.map of process pid, from the map directory when there is one, else (or
 * when it is not there) /tmp; -PFC_ERR_OPEN when there is none. */
int pfc_perfinfo_load_from(struct pfc_files *files, int32_t pid, struct pfc_perfinfo *pi, struct pfc_error *err);
void pfc_perfinfo_free(struct pfc_perfinfo *pi);

/* What became of a PE DSO (struct pfc_dso.r2r). */
enum pfc_r2r_status {
	PFC_R2R_NONE = 0,          /* not a PE image */
	PFC_R2R_MAPPED,            /* a map was found and matches: its frames resolve */
	PFC_R2R_NO_FILE,           /* the image cannot be read */
	PFC_R2R_NOT_R2R,           /* a PE without ReadyToRun code */
	PFC_R2R_NO_MAP,            /* no map file found */
	PFC_R2R_MISMATCH,          /* map or file of another build than the one that ran */
	PFC_R2R_BAD_MAP,           /* a map without the header that lets it be checked */
	PFC_R2R__MAX
};

const char *pfc_r2r_status_str(int status);

struct pfc_r2r_opts {
	struct pfc_files *files;   /* the image under symfs, the maps next to it and in the map dir */
	const struct pfc_perfinfo *perfinfo;   /* images the processes loaded; may be NULL */
	int funcs;                 /* without a usable map: name frames [image+0xRVA] by R2R function */
	FILE *log;                 /* warnings; NULL = quiet */
	int verbose;
};

struct pfc_r2r_result {
	int status;                /* enum pfc_r2r_status */
	char map_path[4096];       /* the map used (or rejected), as the recording machine named it */
	char why[512];             /* detail of a mismatch */
	int wrong_image;           /* the file is not the image that ran (another MVID) */
	size_t nr_syms;
};

/*
 * Load the symbols of the PE image recorded at `path` into t, in the file offset space of
 * struct pfc_dso frames (ip - map start + pgoff); symbol names are the map's method names.
 * Returns 0 (result->status says what happened, t may stay empty) or a negative error.
 * Only a map whose signature matches the image is used: a mismatch warns and leaves the
 * frames unresolved (or, with o->funcs, named by function RVA).
 */
int pfc_r2r_load(const struct pfc_r2r_opts *o, const char *path, struct pfc_symtab *t,
		 struct pfc_r2r_result *res, struct pfc_error *err);

/* 1 when the file recorded at path (under symfs) starts like a PE image, or is missing and
 * named like one (.dll, .exe). */
int pfc_r2r_is_pe(struct pfc_files *files, const char *path);

#endif
