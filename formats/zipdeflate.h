/*
 * zipdeflate.h - one zip entry's deflate stream made on worker threads (zipdeflate.c): the
 * caller adds items (records of its own, each with the most and the least bytes of text it
 * formats into), the workers format them through the caller's function and deflate them in
 * chunks, and the chunks go into the archive in order.
 */
#ifndef PFC_ZIPDEFLATE_H
#define PFC_ZIPDEFLATE_H

#include <stddef.h>
#include <stdint.h>
#include "formats/zipfile.h"

struct pfc_zipdfl;

/* An item's text into D, at most the room it was added with; its length, or SIZE_MAX when
 * it cannot be formatted.  Runs on the worker threads, at the same time: it may only read
 * what the caller made before pfc_zipdfl_start.  EXTRA: the bytes added with the item. */
typedef size_t (*pfc_zipdfl_format_fn)(void *arg, const void *item, const char *extra, uint32_t extra_len, char *d);

/* Workers that deflate into the entry of ZIP opened last (pfc_zip_entry_begin); items are
 * ITEM_SIZE bytes, copied; WHAT names the text in messages.  NULL when they cannot start
 * (ZIP's error set). */
struct pfc_zipdfl *pfc_zipdfl_start(struct pfc_zip *zip, size_t item_size, pfc_zipdfl_format_fn format, void *arg,
				    const char *what);
/* One item and its EXTRA bytes; ROOM: the most bytes its text takes, LOW: the least (the
 * previous chunk's last 32 KiB, the dictionary, are formatted again from enough items). */
int pfc_zipdfl_add(struct pfc_zipdfl *d, const void *item, const char *extra, uint32_t extra_len, uint64_t room,
		   uint64_t low);
/* The last chunk deflated and everything written; SUM: the entry's CRC and sizes. */
int pfc_zipdfl_finish(struct pfc_zipdfl *d, struct pfc_zip_sum *sum);
/* The workers stopped and everything freed; NULL is fine. */
void pfc_zipdfl_free(struct pfc_zipdfl *d);

#endif
