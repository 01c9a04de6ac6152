/*
 * r2rmeta.h - names of ReadyToRun code from the image itself: the RUNTIME_FUNCTIONS table,
 * the MethodDefEntryPoints (NativeArray) and InstanceMethodEntryPoints (NativeHashtable)
 * sections, the HotColdMap, composite images and their components, decoded once into a
 * table of methods sorted by code address; a method's name is formatted from the ECMA-335
 * metadata (ecma.c) only when asked, and kept.  Finding the image of a mapping, and r2rmap
 * files, are r2rmap.c's business; which frames ask is the session's.
 */
#ifndef PFC_R2RMETA_H
#define PFC_R2RMETA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "converter/util/error.h"
#include "converter/files/files.h"
#include "converter/util/strbuf.h"
#include "converter/jit/pe.h"

struct pfc_r2rmeta;

/* Name styles: the runtime's perf map / jitdump one with its [PreJIT] tier tag, or
 * crossgen2's r2rmap one. */
enum pfc_r2rmeta_style { PFC_R2RMETA_RUNTIME, PFC_R2RMETA_R2RMAP };

struct pfc_r2rmeta_hit {
	size_t method;             /* index for pfc_r2rmeta_name */
	int cold;                  /* in the method's cold part ([PreJit-cold]) */
	uint32_t begin, end;       /* RVAs of the part that holds the address: [begin, end) */
	uint32_t span_begin, span_end;	/* the RVAs around the address that find the same part:
	                                 * the runtime function's (a cache of names keys on it) */
};

struct pfc_r2rmeta_stats {
	size_t nr_funcs;           /* RUNTIME_FUNCTIONs */
	size_t nr_methods;         /* method bodies found through the entry-point tables */
	size_t nr_components;      /* assemblies whose code the image holds (1 unless composite) */
	size_t nr_bad_entries;     /* entry-point table entries that did not decode */
	size_t nr_bad_names;       /* methods whose name could not be formatted */
	int composite;
};

/*
 * Decode the code map of the PE image in buf[0, len) (kept, not copied: it must outlive the
 * result).  dir, when not NULL, is where the assemblies it refers to are looked for as
 * NAME.dll (a composite's component stubs, other modules of its version bubble).  Returns 0,
 * -PFC_ERR_UNSUPPORTED for a PE without ReadyToRun code (err says why: IL only, a component
 * stub whose code is in another file), or another negative code with the offset in err.
 */
int pfc_r2rmeta_parse(const uint8_t *buf, size_t len, const char *dir, struct pfc_r2rmeta **out,
		      struct pfc_error *err);
/* Map a file and parse it, its directory being dir.  -PFC_ERR_OPEN when it cannot be read. */
int pfc_r2rmeta_open(const char *path, struct pfc_r2rmeta **out, struct pfc_error *err);
/* The modules beside the image (a composite's components, a version bubble's assemblies)
 * are asked of files as BASE "DIR/NAME.dll", DIR the directory of rel, the image's own
 * question: where it came from, a pack included. */
void pfc_r2rmeta_use_files(struct pfc_r2rmeta *r, struct pfc_files *files, enum pfc_files_base base, const char *rel);
void pfc_r2rmeta_free(struct pfc_r2rmeta *r);
/* The simple name of module k (k < the number of modules) when its names were read from a
 * file of its own (a composite's component stub, another module of the version bubble, asked
 * of files as above), else NULL: what a name made so far needed besides the image. */
const char *pfc_r2rmeta_module_file(const struct pfc_r2rmeta *r, size_t k);
size_t pfc_r2rmeta_nr_modules(const struct pfc_r2rmeta *r);

const struct pfc_pe *pfc_r2rmeta_pe(const struct pfc_r2rmeta *r);
void pfc_r2rmeta_stats(const struct pfc_r2rmeta *r, struct pfc_r2rmeta_stats *st);

/* The method part whose code holds rva: 0, or -1 when no method's does. */
int pfc_r2rmeta_find(const struct pfc_r2rmeta *r, uint32_t rva, struct pfc_r2rmeta_hit *hit);
/* The runtime-style name with its tier tag, formatted on first use and kept; NULL when the
 * metadata does not give one. */
const char *pfc_r2rmeta_name(struct pfc_r2rmeta *r, size_t method, int cold);
/* Append a method's name in either style to sb: 0 or -1. */
int pfc_r2rmeta_format(struct pfc_r2rmeta *r, size_t method, enum pfc_r2rmeta_style style, int cold,
		       struct pfc_sb *sb);

/*
 * Every method body as "RRRRRRRR LL name" lines sorted by RVA (crossgen2's r2rmap line
 * format); R2RMAP style adds crossgen2's five header lines when the image's debug entry 21
 * gives the signature, and leaves out cold parts as crossgen2 does.  Returns the number of
 * methods whose name could not be formatted (printed as "?"), or a negative error.
 */
int pfc_r2rmeta_dump(struct pfc_r2rmeta *r, enum pfc_r2rmeta_style style, FILE *out);

#endif
