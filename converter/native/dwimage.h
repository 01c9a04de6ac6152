/*
 * dwimage.h - a debug file's compressed DWARF sections, inflated into one in-memory ELF image
 * for libdw, and kept in the symbol cache by the file's build-id.
 */
#ifndef PFC_DWIMAGE_H
#define PFC_DWIMAGE_H

#include <stdint.h>
#include <libelf.h>

#include "converter/native/symcache.h"

/* The bytes of an image: inflated here (heap), or the symbol cache's entry (cached). */
struct pfc_dwimg {
	uint8_t *heap;
	struct pfc_symcache_bytes cached;
};

/* What the symbol cache gave: not asked (OFF: no cache, nothing compressed, no build-id),
 * the inflated image (HIT), or nothing, so it was inflated and written (MISS; CORRUPT: the
 * entry was damaged, removed and written again). */
enum pfc_dwimg_cache { PFC_DWIMG_OFF, PFC_DWIMG_HIT, PFC_DWIMG_MISS, PFC_DWIMG_CORRUPT };

/*
 * The image of elf's debug sections, with the compressed ones inflated, as an ELF file libdw
 * opens instead of elf, or NULL when elf has nothing compressed or is not the common case
 * (64-bit, native byte order, not relocatable, no dwz file): then libdw reads elf itself.
 * With cache_dir and a build-id of 8 bytes or more, the image is read from the symbol cache,
 * or written there, keyed by the build-id and file_size (the file's bytes).  *img holds the bytes until pfc_dwimg_free, after elf_end of the result.
 */
Elf *pfc_dwimg_open(Elf *elf, uint64_t file_size, const char *cache_dir, struct pfc_dwimg *img,
		    enum pfc_dwimg_cache *cache);
void pfc_dwimg_free(struct pfc_dwimg *img);
/* The size of the file open at fd (0 when fstat fails): pfc_dwimg_open's file_size. */
uint64_t pfc_dwimg_fd_size(int fd);

#endif
