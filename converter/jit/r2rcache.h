/*
 * r2rcache.h - the method map of a ReadyToRun image as the symbol cache keeps it
 * (r2rcache.c): the names r2rmeta.c made for the runtime functions that frames landed in,
 * each with the RVAs that find it, the start of its method part, and the modules beside
 * the image whose files those names were read from.  This module owns the entry's payload
 * (its layout, the check of untrusted bytes, the lookup, the merge of old and new names);
 * the key, the files and when to read or write are r2rframes.c's, the entry's header,
 * checksum, bound and atomic write symcache.c's.
 */
#ifndef PFC_R2RCACHE_H
#define PFC_R2RCACHE_H

#include <stddef.h>
#include <stdint.h>

#define PFC_R2RCACHE_NONE 0xFFFFFFFFu	/* a record without a name: the image names nothing there */

/* One answer of r2rmeta.c: every RVA in [span_begin, span_end) is in the method part that
 * starts at begin, named by name (an offset into the names), or in none. */
struct pfc_r2rcache_rec {
	uint32_t span_begin, span_end, begin, name;
};

/* A payload read in place (it must outlive the view); every offset checked. */
struct pfc_r2rcache_view {
	const uint8_t *recs;	/* nrec records of 16 bytes, sorted, not overlapping */
	uint32_t nrec;
	const uint8_t *mods;	/* nmods name offsets */
	uint32_t nmods;
	const char *pool;	/* NUL-terminated names */
	uint32_t pool_len;
	uint32_t nr_methods, nr_bad_entries;	/* the image's, for -v */
	int composite;
};

/* 0 with v filled, or -EINVAL when the bytes are not a whole, consistent payload. */
int pfc_r2rcache_parse(const uint8_t *p, size_t len, struct pfc_r2rcache_view *v);
/* The record whose span holds rva: 1 with *name (NULL when it has none) and *begin, or 0. */
int pfc_r2rcache_find(const struct pfc_r2rcache_view *v, uint32_t rva, const char **name, uint32_t *begin);
/* The simple name of module i < v->nmods. */
const char *pfc_r2rcache_module(const struct pfc_r2rcache_view *v, uint32_t i);

/* The answers of one conversion, to be merged with the entry it read (if any). */
struct pfc_r2rcache_add {
	struct pfc_r2rcache_rec *recs;	/* name: an offset into pool */
	size_t n, cap;
	char *pool;
	size_t pool_len, pool_cap;
	char **mods;
	size_t nmods;
	int oom;
};
/* Keep one answer (name NULL: none).  A failure to allocate only makes the entry smaller. */
void pfc_r2rcache_add(struct pfc_r2rcache_add *a, uint32_t span_begin, uint32_t span_end, uint32_t begin,
		      const char *name);
/* A module whose file the names read. */
void pfc_r2rcache_add_module(struct pfc_r2rcache_add *a, const char *name);
void pfc_r2rcache_add_free(struct pfc_r2rcache_add *a);
/* The payload of old (NULL: none) and a together, with the image's figures (*out: free it).
 * 0 or -ENOMEM. */
int pfc_r2rcache_encode(const struct pfc_r2rcache_view *old, struct pfc_r2rcache_add *a, uint32_t nr_methods,
			uint32_t nr_bad_entries, int composite, uint8_t **out, size_t *len);

#endif
