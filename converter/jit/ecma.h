/*
 * ecma.h - the ECMA-335 metadata of a .NET assembly, read from untrusted bytes: the
 * metadata root and its streams, the "#~" table header with every table's row size, the
 * #Strings, #Blob and #GUID heaps, and the type and signature grammar, printed in the three
 * styles names need: the runtime's perf map (ILDASM parameters), its owner types
 * (TypeString) and crossgen2's r2rmap.  Which method a code address belongs to is
 * r2rmeta.c's business; this file only reads metadata and formats what it is given.
 */
#ifndef PFC_ECMA_H
#define PFC_ECMA_H

#include <stddef.h>
#include <stdint.h>
#include "converter/util/error.h"
#include "converter/util/strbuf.h"

/* table numbers (ECMA-335 II.22) */
enum {
	PFC_MD_MODULE = 0x00, PFC_MD_TYPEREF = 0x01, PFC_MD_TYPEDEF = 0x02, PFC_MD_METHODDEF = 0x06,
	PFC_MD_MEMBERREF = 0x0A, PFC_MD_MODULEREF = 0x1A, PFC_MD_TYPESPEC = 0x1B,
	PFC_MD_ASSEMBLY = 0x20, PFC_MD_ASSEMBLYREF = 0x23, PFC_MD_NESTEDCLASS = 0x29,
	PFC_MD_GENERICPARAM = 0x2A, PFC_MD_METHODSPEC = 0x2B,
};
#define PFC_MD_NTABLES 0x2D        /* tables 0x00-0x2C; Portable PDB tables are refused */
#define PFC_MD_MAXCOLS 6

struct pfc_ecma {
	const uint8_t *root;       /* the metadata root ("BSJB") */
	size_t len;
	const uint8_t *str, *blob, *guid;
	uint32_t str_len, blob_len, guid_len;
	uint32_t rows[PFC_MD_NTABLES];
	const uint8_t *tab[PFC_MD_NTABLES];
	uint8_t row_size[PFC_MD_NTABLES];
	uint8_t ncols[PFC_MD_NTABLES];
	uint8_t col_off[PFC_MD_NTABLES][PFC_MD_MAXCOLS];
	uint8_t col_size[PFC_MD_NTABLES][PFC_MD_MAXCOLS];
	const char *name;          /* the Assembly row's Name, else the Module's; never NULL */
};

/*
 * Read the metadata root at md[0, len): streams, table header and row sizes.  Returns 0 or
 * a negative code with the offset (from md) of the bad bytes in err.  Nothing is copied:
 * m points into md, which must outlive it.
 */
int pfc_ecma_open(struct pfc_ecma *m, const uint8_t *md, size_t len, struct pfc_error *err);

/* Column col (0-based, in II.22 order) of row rid (1-based) of a table; 0 when out of range. */
uint32_t pfc_ecma_col(const struct pfc_ecma *m, int table, uint32_t rid, int col);
/* A #Strings entry; "" when the index or its terminator is out of the heap. */
const char *pfc_ecma_str(const struct pfc_ecma *m, uint32_t idx);
/* A #Blob entry; -1 when out of the heap. */
int pfc_ecma_blob(const struct pfc_ecma *m, uint32_t idx, const uint8_t **p, uint32_t *len);
/* The Module row's MVID; NULL when absent. */
const uint8_t *pfc_ecma_mvid(const struct pfc_ecma *m);
/* The TypeDef that owns MethodDef rid (0 when none). */
uint32_t pfc_ecma_method_owner(const struct pfc_ecma *m, uint32_t rid);

/* ECMA compressed unsigned integer (II.23.2) at *p < end; -1 when cut short or invalid. */
int pfc_ecma_uncompress(const uint8_t **p, const uint8_t *end, uint32_t *v);

/* How a type is printed. */
enum pfc_sigstyle {
	PFC_SIG_ILDASM,            /* runtime perf map parameters: int32, class [Asm]Ns.T/N, List`1<!0> */
	PFC_SIG_TYPESTRING,        /* runtime owner types: System.Int32, Ns.T+N, List`1[System.__Canon] */
	PFC_SIG_R2RMAP,            /* crossgen2 r2rmap: as TYPESTRING with ", " and generic parameters substituted */
};

/* A type signature of some module, for substitution. */
struct pfc_typearg {
	const struct pfc_ecma *md;
	const uint8_t *p, *end;
};

/* Turns a ReadyToRun module override index (ELEMENT_TYPE 0x3F) met in a signature of
 * module md into that module's metadata; NULL when unknown. */
typedef const struct pfc_ecma *(*pfc_ecma_module_fn)(void *ctx, const struct pfc_ecma *md, uint32_t index);

struct pfc_sigfmt {
	enum pfc_sigstyle style;
	const struct pfc_typearg *targs, *margs;   /* R2RMAP: !n and !!n stand for these */
	uint32_t ntargs, nmargs;
	pfc_ecma_module_fn module;
	void *ctx;
};

/*
 * Print (or, with sb NULL, only skip) one type at *p < end of a signature of module md;
 * *p moves past it.  ReadyToRun extensions (0x3E __Canon, 0x3F module override) are
 * understood.  0, or -1 on malformed or too deeply nested bytes.
 */
int pfc_ecma_type(const struct pfc_sigfmt *f, const struct pfc_ecma *md, const uint8_t **p, const uint8_t *end,
		  struct pfc_sb *sb);
/* A TypeDef, TypeRef or TypeSpec token (table << 24 | rid) as a class name. */
int pfc_ecma_token(const struct pfc_sigfmt *f, const struct pfc_ecma *md, uint32_t token, struct pfc_sb *sb);

/*
 * A MethodDefSig printed around `name` in the runtime's style (PrettyPrintSig):
 * "[instance ]ret name(p1,p2)", or with R2RMAP style "[ret ]name(p1, p2)" (void omitted).
 * 0 or -1.
 */
int pfc_ecma_method_sig(const struct pfc_sigfmt *f, const struct pfc_ecma *md, const uint8_t *sig, uint32_t len,
			const char *name, size_t name_len, struct pfc_sb *sb);

#endif
