/*
 * buildid.h - the GNU build-id note walker: the build-id in a note section's bytes (an ELF
 * file's .note.gnu.build-id, .notes or .note, the kernel's /sys/kernel/notes), and the
 * running kernel's.  Where the sections come from (elfsym.c, unwind.c) and what a build-id
 * is compared with (session.c, symcache.c, elfsym.c) are their callers' business.
 */
#ifndef PFC_BUILDID_H
#define PFC_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#define PFC_BUILDID_MAX 20	/* what perf keeps of a build-id (BUILD_ID_SIZE) */

/*
 * The first note of type NT_GNU_BUILD_ID named "GNU" among the notes in p[0..n), which are in
 * this machine's byte order and 4-byte aligned: its length, the descriptor's size rounded up to
 * 4 as perf gives it (elf_read_build_id, sysfs__read_build_id), at most max; those bytes are
 * copied into out and the rest of its max bytes zeroed.  0 when there is none, or when the
 * first one is empty (out is then left alone).
 */
size_t pfc_buildid_from_notes(const void *p, size_t n, uint8_t *out, size_t max);

/* The same from the first 4 KiB of a notes file; 0 when it cannot be read. */
size_t pfc_buildid_read_notes(const char *path, uint8_t *out, size_t max);

/*
 * The running kernel's build-id: from /sys/kernel/notes, or from the notes file of the
 * directory DIR (the tuning's running_kernel, PERFCONV_RUNNING_KERNEL; NULL or empty: none),
 * which stands for the running kernel in the tests.
 * Whoever asks whether the running kernel is the recording's and whoever keys its symbols in
 * the cache read it here, so that both speak of the same kernel.
 */
size_t pfc_buildid_running_kernel(const char *dir, uint8_t *out, size_t max);

#endif
