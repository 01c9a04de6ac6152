/*
 * pe.h - the parts of a PE/COFF image that ReadyToRun symbolization needs: the section
 * table (file offset <-> RVA), the debug directory (CodeView RSDS and the R2R perf map
 * entry, type 21), the CLR header with the assembly's MVID, and the ReadyToRun header
 * with its RUNTIME_FUNCTIONS table.  Parsing goes through a bounds-checked cursor over a
 * caller's buffer, so it can be fed hostile bytes; loading a file is a thin wrapper.
 * Which map file belongs to an image, and looking names up, is r2rmap.c's business.
 */
#ifndef PFC_PE_H
#define PFC_PE_H

#include <stddef.h>
#include <stdint.h>
#include "converter/util/error.h"

#define PFC_PE_MAX_SECTIONS 96

/* IMAGE_DEBUG_TYPE_* values read here */
#define PFC_PE_DEBUG_CODEVIEW 2
#define PFC_PE_DEBUG_R2R_PERFMAP 21

/* READYTORUN_FLAG_COMPONENT: a component of a composite image (its code is elsewhere). */
#define PFC_R2R_FLAG_COMPONENT 0x20

struct pfc_pe_section {
	char name[9];
	uint32_t va, vsize;        /* VirtualAddress, VirtualSize */
	uint32_t raw, raw_size;    /* PointerToRawData, SizeOfRawData */
	uint32_t characteristics;
};

struct pfc_pe_func {               /* one RUNTIME_FUNCTION of the R2R image */
	uint32_t begin, end;       /* RVAs, [begin, end) */
};

struct pfc_pe {
	uint16_t machine;          /* as in the file: R2R images XOR it with an OS value */
	uint16_t machine_plain;    /* IMAGE_FILE_MACHINE_* with the OS override removed */
	uint32_t timestamp;        /* TimeDateStamp (a hash of the contents in deterministic builds) */
	int target_os;             /* r2rmap TargetOS numbering: 0 unknown, 1 Windows, 2 Linux, 3 OSX, ... */
	int pe32plus;
	uint64_t image_base;
	uint32_t size_of_image, size_of_headers;
	uint32_t nsections;
	uint32_t export_rva, export_size;  /* data directory 0 (a composite's RTR_HEADER export) */
	struct pfc_pe_section sec[PFC_PE_MAX_SECTIONS];
	/* debug directory */
	int has_codeview;
	uint8_t cv_guid[16];
	uint32_t cv_age;
	char cv_pdb[256];
	int has_perfmap;
	uint8_t perfmap_sig[16];
	uint32_t perfmap_version;
	char perfmap_name[256];
	/* CLR */
	int is_managed;            /* has a CLR (COR20) header */
	uint32_t cor_flags;        /* its Flags (0x4 IL_LIBRARY: ReadyToRun code or component stub) */
	uint32_t md_rva, md_size;  /* its MetaData directory */
	uint32_t native_rva, native_size;  /* its ManagedNativeHeader (the R2R header) */
	int has_mvid;
	uint8_t mvid[16];          /* the Module row's GUID, as stored */
	int is_r2r;                /* the CLR header points at a READYTORUN header */
	uint16_t r2r_major, r2r_minor;
	uint32_t r2r_flags;
	struct pfc_pe_func *funcs; /* malloc'd, sorted by begin; NULL when none */
	size_t nr_funcs;
};

/*
 * Parse a PE image from buf[0, len) (the file's bytes: raw layout, not mapped).  Returns 0,
 * or -PFC_ERR_BAD_MAGIC when it is not a PE file, or another negative code with the
 * offset of the bad bytes recorded in err.  Damage outside the headers (a debug entry or
 * CLR metadata out of bounds) only leaves that part unset.  Free with pfc_pe_free.
 */
int pfc_pe_parse(const uint8_t *buf, size_t len, struct pfc_pe *pe, struct pfc_error *err);
/* The same without the ReadyToRun header (is_r2r stays 0, no funcs): for readers that
 * decode it themselves (r2rmeta.c). */
int pfc_pe_parse_headers(const uint8_t *buf, size_t len, struct pfc_pe *pe, struct pfc_error *err);
/* Read a file and parse it, its RUNTIME_FUNCTIONS (funcs, nr_funcs) only when funcs is set;
 * -PFC_ERR_OPEN when it cannot be read. */
int pfc_pe_load(const char *path, struct pfc_pe *pe, int funcs, struct pfc_error *err);
void pfc_pe_free(struct pfc_pe *pe);

/*
 * The byte ranges of a .NET image that no symbol source reads, as file offsets, which a pack
 * stores as zeros.  A managed image (IL only, or ReadyToRun but not composite) keeps only
 * what pe.c and r2rmeta.c read: the headers and section table, the debug directory and its
 * entries' data, the CLR header, the metadata, the ReadyToRun header with its section list
 * and the sections that name methods (RUNTIME_FUNCTIONS, the entry-point tables, the
 * manifest, the hot/cold map); IL, machine code, resources, debug info and the rest are
 * zeros.  Another ReadyToRun image (x64) loses only its methods' machine code, [begin, end)
 * of each RUNTIME_FUNCTION, clear of the headers, the metadata and the ReadyToRun header.
 * *ranges (free it) holds n pairs (offset, size), sorted and apart; 0 with n = 0 for any
 * other file.
 */
int pfc_pe_unread_ranges(const uint8_t *buf, size_t len, uint64_t **ranges, size_t *n);
/* 1 when the bytes start like a PE image ("MZ" and a PE signature where e_lfanew says). */
int pfc_pe_sniff(const uint8_t *buf, size_t len);

/* File offset -> RVA through the section that holds the offset; -1 when none does. */
int64_t pfc_pe_offset_to_rva(const struct pfc_pe *pe, uint64_t off);
/* RVA -> file offset; -1 when no section holds it. */
int64_t pfc_pe_rva_to_offset(const struct pfc_pe *pe, uint64_t rva);
/* The RUNTIME_FUNCTION holding rva, or NULL. */
const struct pfc_pe_func *pfc_pe_find_func(const struct pfc_pe *pe, uint32_t rva);

/* "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}" (lower case) of a GUID as stored; out >= 39 bytes. */
void pfc_pe_guid_str(const uint8_t g[16], char *out);
/* Parse a GUID string, braces optional, any case.  0 or -1. */
int pfc_pe_guid_parse(const char *s, size_t len, uint8_t g[16]);

#endif
