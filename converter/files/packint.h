/*
 * packint.h - what the pack's reader (packread.c) and writer (packwrite.c) share, private to
 * them: libarchive's functions, loaded on first use (packar.c), and the rules and display of
 * member names.  The interface of packs is pack.h.
 */
#ifndef PFC_PACKINT_H
#define PFC_PACKINT_H

#include <archive.h>
#include <archive_entry.h>
#include <locale.h>
#include "converter/files/pack.h"

/*
 * libarchive, with the ICU and libxml2 it brings, takes longer to load than a small
 * conversion takes to run: it is loaded when a pack is read or written, not at start.
 */
#define AR_SONAME "libarchive.so.13"
#define AR_FUNCTIONS(X) \
	X(archive_entry_copy_pathname) \
	X(archive_entry_filetype) \
	X(archive_entry_free) \
	X(archive_entry_hardlink) \
	X(archive_entry_new) \
	X(archive_entry_pathname) \
	X(archive_entry_set_filetype) \
	X(archive_entry_set_gid) \
	X(archive_entry_set_mtime) \
	X(archive_entry_set_perm) \
	X(archive_entry_set_size) \
	X(archive_entry_set_uid) \
	X(archive_entry_size) \
	X(archive_entry_size_is_set) \
	X(archive_entry_sparse_add_entry) \
	X(archive_entry_sparse_count) \
	X(archive_entry_symlink) \
	X(archive_error_string) \
	X(archive_filter_bytes) \
	X(archive_filter_code) \
	X(archive_filter_count) \
	X(archive_read_data_block) \
	X(archive_read_free) \
	X(archive_read_new) \
	X(archive_read_next_header) \
	X(archive_read_open_memory) \
	X(archive_read_support_filter_zstd) \
	X(archive_read_support_format_tar) \
	X(archive_set_error) \
	X(archive_write_close) \
	X(archive_write_data) \
	X(archive_write_finish_entry) \
	X(archive_write_free) \
	X(archive_write_header) \
	X(archive_write_new) \
	X(archive_write_open2) \
	X(archive_write_set_bytes_in_last_block) \
	X(archive_write_set_bytes_per_block) \
	X(archive_write_set_format_pax_restricted) \
	X(archive_version_number)

struct pfc_pack_ar {
#define X(f) __typeof__(f) *f;
	AR_FUNCTIONS(X)
#undef X
	int ok;
	char why[160];
};

/* 0 with libarchive's functions set, or an error naming what is missing. */
int pfc_pack_ar_load(struct pfc_error *err);
/* libarchive's functions: only after pfc_pack_ar_load succeeded. */
const struct pfc_pack_ar *pfc_pack_ar(void);
#define AR (pfc_pack_ar())

#define ZSTD_MAGIC "\x28\xb5\x2f\xfd"
#define MAGIC_LEN (sizeof(PFC_PACK_MAGIC) - 1)

/* Why a member name is refused, or NULL. */
const char *pfc_pack_bad_name(const char *s);
/* A name for a message: control bytes escaped, cut at 120 bytes. */
const char *pfc_pack_shown(const char *s, char out[160]);
/* libarchive's calls that convert names run between these, in C.UTF-8 on this thread. */
locale_t pfc_pack_utf8_enter(locale_t *utf8);
void pfc_pack_utf8_leave(locale_t utf8, locale_t old);

#endif
