/*
 * perfpack.c - the pack writer: the recording, unchanged, and every file the conversion's
 * symbol sources used (files.c recorded them), with a MANIFEST that says what each member
 * answers, what it is and why it is there.  Converting the pack anywhere asks files.c the
 * same questions and gets these bytes back.  The container is converter/files/packwrite.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <xxhash.h>
#include "converter/files/files.h"
#include "converter/files/pack.h"
#include "converter/jit/pe.h"
#include "converter/native/symcache.h"
#include "converter/native/symtab.h"
#include "converter/util/fileio.h"
#include "converter/util/hex.h"
#include "converter/util/strbuf.h"
#include "formats/writer.h"

static const char *const pack_suffixes[] = { ".perfpack", NULL };

static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* A member name that tar lists as the file's path: files/PLACE/PATH, or files/PLACE/N/BASE
 * where PATH has components tar would not keep ("", ".", "..").  Names are never paths when
 * a pack is read; this is for people who list or unpack it. */
static void member_name(char *out, size_t size, const struct pfc_files_entry *e, size_t idx)
{
	const char *p = e->rel, *c;
	int clean = *p != 0;

	while (*p == '/')
		p++;
	for (c = p; clean && *c; ) {
		size_t n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			clean = 0;
		c += n;
		if (*c == '/')
			c++;
	}
	if (clean && *p && strlen(p) < 3000)
		snprintf(out, size, "files/%s/%s", pfc_files_base_name(e->base), p);
	else
		snprintf(out, size, "files/%s/%zu/%s", pfc_files_base_name(e->base), idx, base_of(e->local));
}

/*
 * What names a file's bytes for as long as they stay the same, so that what was learned by
 * reading them (what its tar bytes hash to, whether it equals another file) is kept in the
 * symbol cache and not read again: the device, inode, size and times of change, as git's
 * index and ccache's inode cache take them, with this perfconv's build-id (which decides the
 * holes) and whether holes are cut.  Every write to a file moves its ctime, which nothing
 * can set back; a file changed within the same tick of the clock as the ctime it had when
 * it was read would keep it, so only a file whose ctime is SETTLED seconds old when it is
 * read gets an id (and a newer file is read as before), and only from a perfconv with a
 * build-id.  NULL: no id.
 */
#define SETTLED 2
struct file_id {
	char text[320];
};

static const char *file_id(const char *path, int whole, struct file_id *id)
{
	struct stat st;
	struct timespec now;

	if (!*pfc_own_build_id() || stat(path, &st) < 0 || !S_ISREG(st.st_mode) || clock_gettime(CLOCK_REALTIME, &now) < 0 ||
	    st.st_ctim.tv_sec + SETTLED > now.tv_sec || st.st_mtim.tv_sec + SETTLED > now.tv_sec)
		return NULL;
	snprintf(id->text, sizeof(id->text), "perfconv=%s dev=%llx ino=%llu size=%lld mtime=%lld.%09ld ctime=%lld.%09ld whole=%d",
		 pfc_own_build_id(), (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, (long long)st.st_size,
		 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec, whole);
	return id->text;
}

/* Whether two regular files have the same bytes (a binary found at its path and in the
 * build-id cache is packed once): one file (perf's build-id cache hard-links what it can),
 * or both mapped and compared.  The answer for two files with ids is kept in the symbol
 * cache (kf, NULL: none): comparing perf's copies of the .NET runtime's libraries read 28 MB. */
static int same_bytes(const char *a, const char *b, uint64_t size, struct pfc_packw_frames *kf)
{
	struct stat sa, sb;
	struct file_id ia, ib;
	const char *ta, *tb;
	char key[PFC_PACKW_KEY_MAX];
	void *ma = NULL, *mb = NULL;
	size_t la = 0, lb = 0;
	int same;

	if (!stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino)
		return 1;
	if (!size || size > SIZE_MAX)
		return !size;
	key[0] = 0;
	if (kf && (ta = file_id(a, 0, &ia)) && (tb = file_id(b, 0, &ib))) {
		XXH3_state_t *x = XXH3_createState();
		const void *p;
		size_t l;
		int got;

		if (x && XXH3_128bits_reset(x) == XXH_OK && XXH3_128bits_update(x, ta, strlen(ta) + 1) == XXH_OK &&
		    XXH3_128bits_update(x, tb, strlen(tb) + 1) == XXH_OK) {
			XXH128_hash_t h = XXH3_128bits_digest(x);
			snprintf(key, sizeof(key), "pack-same-bytes xxh3-128=%016llx%016llx", (unsigned long long)h.high64,
				 (unsigned long long)h.low64);
		}
		XXH3_freeState(x);
		if (key[0] && (got = kf->get(kf, key, &p, &l)) == 1) {
			same = l == 1 && (*(const char *)p == '0' || *(const char *)p == '1') ? *(const char *)p == '1' : -1;
			kf->done(kf);
			if (same >= 0)
				return same;
			kf->bad(kf, key);
		}
	}
	same = !pfc_map_file(a, size, &ma, &la) && !pfc_map_file(b, size, &mb, &lb) && la == size && lb == size &&
	       !memcmp(ma, mb, (size_t)size);
	if (ma)
		munmap(ma, la);
	if (mb)
		munmap(mb, lb);
	if (key[0])
		kf->put(kf, key, same ? "1" : "0", 1);
	return same;
}

/* What /proc says is empty (a process's comm and status, kallsyms) is read whole, up to
 * this size, rather than copied by the size stat gives. */
#define PROC_FILE_MAX ((size_t)256 << 20)

/*
 * Whether e, a file the conversion read, is a /proc file of a process that has exited since
 * (ENOENT, ESRCH): it is left out of the pack, which then answers as /proc does now.  A pid
 * of the recording that a process of this machine has for a moment is asked for its comm
 * (jitsym.c's is_live), and that process may be gone when the pack is written.
 */
static int proc_gone(const struct pfc_session *s, const struct pfc_files_entry *e)
{
	struct stat st;

	if (e->base != PFC_FILES_PROC || stat(e->local, &st) == 0 || (errno != ENOENT && errno != ESRCH))
		return 0;
	if (s->opts->log)
		fprintf(s->opts->log, "perfconv: warning: '%s' is gone (its process has exited): not in the pack\n",
			e->local);
	return 1;
}

static int read_whole(const char *path, char **buf, size_t *len, struct pfc_error *err)
{
	size_t cap = 1 << 16, n = 0, got;
	char *b = malloc(cap);
	FILE *f = fopen(path, "rb");

	if (!b || !f) {
		free(b);
		if (f)
			fclose(f);
		return b ? PFC_FAIL_NOOFF(err, OPEN, "'%s': %s", path, strerror(errno)) : PFC_FAIL_NOOFF(err, NOMEM, "pack");
	}
	while ((got = fread(b + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *nb = cap < PROC_FILE_MAX ? realloc(b, cap * 2) : NULL;
			if (!nb) {
				free(b);
				fclose(f);
				return PFC_FAIL_NOOFF(err, NOMEM, "'%s': larger than %zu MB", path, PROC_FILE_MAX >> 20);
			}
			b = nb;
			cap *= 2;
		}
	}
	fclose(f);
	*buf = b;
	*len = n;
	return 0;
}

/* Whether a file starts as a PE image does ("MZ"): a ReadyToRun image is read whole only then. */
static int starts_mz(const char *path)
{
	char b[2];
	FILE *f = fopen(path, "rb");
	int mz = f && fread(b, 1, 2, f) == 2 && b[0] == 'M' && b[1] == 'Z';

	if (f)
		fclose(f);
	return mz;
}

/*
 * The running kernel's /proc/kallsyms, which a pack holds as it reads (the kernel formats
 * every line of it on each read: 15% of packing an ASP.NET recording), from the symbol
 * cache's "kallsyms-text" entry under the kernel's key (the build-id, boot, modules and
 * address visibility that key the symbol table), or read and put there.  *buf NULL, 0: not
 * the running kernel's, read it as any other /proc file.  *buf is b's mapping after a hit
 * (pfc_symcache_bytes_free), else malloc's.
 */
/* The symbol cache's directory and key of the running kernel's symbols as text (e is
 * /proc/kallsyms), or NULL when they have none. */
static const char *kallsyms_text_key(struct pfc_session *s, const struct pfc_files_entry *e, struct pfc_symcache_key *key)
{
	struct pfc_found f;
	const char *dir;

	memset(&f, 0, sizeof(f));
	f.base = e->base;
	snprintf(f.path, sizeof(f.path), "%s", e->local);
	if (!(dir = pfc_session_kernel_cache_dir(s, &f)) || pfc_symcache_key(key, s->tuning->running_kernel) < 0)
		return NULL;
	return dir;
}

static int kallsyms_text(struct pfc_session *s, const struct pfc_files_entry *e, char **buf, size_t *len,
			 struct pfc_symcache_bytes *b, struct pfc_error *err)
{
	struct pfc_symcache_key key;
	const char *dir;
	int ret;

	*buf = NULL;
	if (!(dir = kallsyms_text_key(s, e, &key)))
		return 0;
	/* a hit is read where it is mapped (b), until the member is written */
	if (pfc_symcache_get(dir, &pfc_symcache_kallsyms_text, &key, b) == 1) {
		*buf = (char *)b->p;
		*len = b->len;
		return 0;
	}
	if ((ret = read_whole(e->local, buf, len, err)) < 0)
		return ret;
	pfc_symcache_put(dir, &pfc_symcache_kallsyms_text, &key, *buf, *len);	/* unwritable: no cache */
	return 0;
}

/*
 * The running kernel's symbols as the symbol cache holds them, known by the CRC its entry
 * records, without reading the entry's 5 MB (mapping and checking them took 0.3-7 ms of a
 * pack whose folded conversion takes 15): when the pack frame cache has that text's frame,
 * the text is not needed.  1 with *crc and *len; 0: read it (kallsyms_text).
 */
static int kallsyms_peek(struct pfc_session *s, const struct pfc_files_entry *e, uint64_t *crc, size_t *len)
{
	struct pfc_symcache_key key;
	const char *dir = kallsyms_text_key(s, e, &key);

	return dir && pfc_symcache_peek(dir, &pfc_symcache_kallsyms_text, &key, crc, len) == 1;
}

static int by_offset(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Sort ranges and merge those that touch or overlap: *n becomes the count left. */
static void merge_ranges(uint64_t *r, size_t *n)
{
	size_t i, k = 0;

	qsort(r, *n, 2 * sizeof(*r), by_offset);
	for (i = 0; i < *n; i++) {
		if (k && r[2 * i] <= r[2 * (k - 1)] + r[2 * (k - 1) + 1]) {
			uint64_t e = r[2 * i] + r[2 * i + 1];
			if (e > r[2 * (k - 1)] + r[2 * (k - 1) + 1])
				r[2 * (k - 1) + 1] = e - r[2 * (k - 1)];
			continue;
		}
		r[2 * k] = r[2 * i];
		r[2 * k + 1] = r[2 * i + 1];
		k++;
	}
	*n = k;
}

/*
 * An ELF file (executable, library or debug file), or a .NET image, as the symbol sources
 * read it: what they never read is a hole, zeros at the same offsets in the pack
 * (pfc_elf_unread_ranges: loaded code and data, dynamic relocations, DWARF's locations and
 * macros; pfc_pe_unread_ranges: all of a managed image but its headers, metadata and
 * method tables), written as a sparse member.  The names, CFI, line tables, metadata and
 * code maps are the same bytes, and every reader finds them where it looks.  The file is
 * mapped, as the symbol sources map it, and its holes are never read.  *map NULL: not such
 * a file, pack it whole (streamed); else munmap(*map, size).
 */
static int as_read(const char *path, uint64_t size, void **map, uint64_t **holes, size_t *nholes,
		   struct pfc_error *err)
{
	uint64_t *r = NULL;
	size_t n = 0, len;
	int pe = 0;
	void *m;

	*map = NULL;
	*holes = NULL;
	*nholes = 0;
	if (pfc_elf_unread_ranges(path, &r, &n) < 0 || !n) {
		free(r);
		r = NULL;
		n = 0;
		if (!(pe = starts_mz(path)))
			return 0;
	}
	if (!size || size > SIZE_MAX || pfc_map_file(path, size, &m, &len) < 0) {
		free(r);
		return 0;	/* whole, streamed: its errors are add_file's */
	}
	if (len != size) {
		free(r);
		munmap(m, len);
		return PFC_FAIL_NOOFF(err, IO, "'%s' changed size while it was read", path);
	}
	if (pe && pfc_pe_unread_ranges(m, len, &r, &n) < 0) {
		munmap(m, len);
		return PFC_FAIL_NOOFF(err, NOMEM, "'%s'", path);
	}
	if (!pe)
		merge_ranges(r, &n);
	*map = m;	/* a PE image without anything to leave out: whole, from the map */
	*holes = r;
	*nholes = n;
	return 0;
}

static void free_bytes(char **bytes, struct pfc_symcache_bytes *kept, size_t i)
{
	if (kept[i].map)
		pfc_symcache_bytes_free(&kept[i]);
	else
		free(bytes[i]);
	bytes[i] = NULL;
}

/* The members of one pack: one per distinct file (by its bytes), named by the first place it
 * was found in, and where the bytes of each come from. */
struct members {
	const struct pfc_files_entry *v;	/* the files the conversion recorded */
	size_t n;
	size_t *member_of;            /* v[i] is packed as member_of[i]'s bytes; SIZE_MAX: not packed */
	size_t *sizes;
	char **bytes;                 /* the content of files read whole (/proc) */
	struct pfc_symcache_bytes *kept;	/* bytes[i] is kept[i]'s mapping when it has one */
	uint64_t *peek_crc;           /* /proc/kallsyms known by its cache entry's CRC, not read yet */
	uint8_t *peeked;
	uint64_t total;               /* the bytes of the distinct files */
	/* the symbol cache's "pack" and "pack-sum" entries (--no-cache: none) */
	struct pfc_symcache_frames kf, ks;
	struct pfc_packw_frames *frames, *sums;
	/* tests: PERFCONV_PACK_WHOLE=1 packs ELF files and ReadyToRun images whole, for the size comparison */
	int no_zero;
};

static void members_free(struct members *m)
{
	size_t i;

	for (i = 0; m->bytes && m->kept && i < m->n; i++)
		free_bytes(m->bytes, m->kept, i);
	if (!m->kept)
		for (i = 0; m->bytes && i < m->n; i++)
			free(m->bytes[i]);
	free(m->bytes);
	free(m->kept);
	free(m->peek_crc);
	free(m->peeked);
	free(m->member_of);
	free(m->sizes);
}

/* The MANIFEST's line of recorded file I, and its place among the members: its size, its
 * bytes when they are read now (/proc), or the earlier member with the same bytes. */
static int plan_file(struct pfc_session *s, struct members *m, size_t i, struct pfc_sb *mf, struct pfc_error *err)
{
	const struct pfc_files_entry *v = m->v, *e = &v[i];
	char bid[41] = "-", pid[16] = "-", member[4200];
	struct stat st;
	size_t k;
	int ret;

	if (e->is_list) {
		const char *p = e->names;
		for (; e->names && p < e->names + e->names_len; p += strlen(p) + 1)
			pfc_sb_addf(mf, "entry\t%s\t%s\t%s\n", pfc_files_base_name(e->base), e->rel, p);
		return 0;
	}
	if (e->probe) {
		pfc_sb_addf(mf, "exists\t%s\t%s\t%s\n", pfc_files_base_name(e->base), e->rel, e->local);
		return 0;
	}
	m->member_of[i] = SIZE_MAX;	/* not packed, until it is */
	if (stat(e->local, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (proc_gone(s, e))
			return 0;
		return PFC_FAIL_NOOFF(err, OPEN, "'%s': %s", e->local, strerror(errno));
	}
	m->sizes[i] = (uint64_t)st.st_size;
	if (!st.st_size && m->frames && kallsyms_peek(s, e, &m->peek_crc[i], &m->sizes[i])) {
		m->peeked[i] = 1;	/* read when its frame is not in the cache */
	} else if (!st.st_size) {	/* /proc: its bytes now, as the conversion read them */
		if ((ret = kallsyms_text(s, e, &m->bytes[i], &m->sizes[i], &m->kept[i], err)) < 0)
			return ret;
		if (!m->bytes[i] && (ret = read_whole(e->local, &m->bytes[i], &m->sizes[i], err)) < 0) {
			if (!proc_gone(s, e))
				return ret;
			memset(err, 0, sizeof(*err));
			return 0;
		}
	}
	m->member_of[i] = i;
	for (k = 0; k < i && !m->bytes[i] && !m->peeked[i]; k++)
		if (!v[k].is_list && !v[k].probe && m->member_of[k] == k && !m->bytes[k] && !m->peeked[k] &&
		    m->sizes[k] == m->sizes[i] &&
		    (!strcmp(v[k].local, e->local) || same_bytes(v[k].local, e->local, m->sizes[i], m->sums))) {
			m->member_of[i] = k;
			break;
		}
	if (m->member_of[i] == i)
		m->total += m->sizes[i];
	if (e->bid_len)
		pfc_hex_format(bid, e->bid, (size_t)e->bid_len);
	if (e->pid >= 0)
		snprintf(pid, sizeof(pid), "%d", e->pid);
	member_name(member, sizeof(member), &v[m->member_of[i]], m->member_of[i]);
	pfc_sb_addf(mf, "file\t%s\t%s\t%s\t%llu\t%s\t%s\t%s\t%s\n", pfc_files_base_name(e->base), e->rel,
		    member, (unsigned long long)m->sizes[i], bid, pid, e->local, e->why ? e->why : "used by the conversion");
	return 0;
}

/* The member of the k-th event stream: its own folder, apart from the recorded files' */
static void events_member(char *buf, size_t size, size_t k)
{
	snprintf(buf, size, "events/%zu.nettrace", k);
}

/* The MANIFEST: the recording, the places used, and a line per recorded file. */
static int plan_manifest(struct pfc_session *s, const struct pfc_wopts *o, struct members *m, struct pfc_sb *mf,
			 struct pfc_error *err)
{
	struct stat st;
	unsigned used;
	size_t i;
	int ret, b;

	if (stat(s->recording_path, &st) < 0 || !S_ISREG(st.st_mode))
		return PFC_FAIL_NOOFF(err, OPEN, "the recording '%s': %s", s->opts->input, strerror(errno));
	pfc_sb_addf(mf, "%s# perfconv %s: a recording and the files its samples' frames need.\n"
			"# file PLACE PATH MEMBER SIZE BUILD-ID PID NAME-WHERE-RECORDED WHY\n",
		    PFC_PACK_MAGIC, o->version ? o->version : "");
	pfc_sb_addf(mf, "recording\t%s\t%llu\t%s\t%lld\n", PFC_PACK_RECORDING, (unsigned long long)st.st_size,
		    s->recording_name, s->rd.have_mtime ? (long long)s->rd.mtime : (long long)st.st_mtime);
	/* the .NET runtime's event streams (--events): converting the pack reads them as the
	 * recording's, without --events, each on the process it was laid on here (the last
	 * field: its pid in the recording); a reader before them ignores the line */
	for (size_t k = 0; k < s->evs.events.n; k++) {
		char member[64];
		events_member(member, sizeof(member), k);
		pfc_sb_addf(mf, "events\t%s\t%zu\t%s\t%d\n", member, s->evs.events.v[k].len, s->evs.events.v[k].name,
			    s->evs.pids ? s->evs.pids[k] : (int32_t)s->evs.events.v[k].trace.pid);
	}
	used = pfc_files_bases_used(s->files);
	for (b = 0; b < PFC_FILES_NR; b++)
		if (used & (1u << b))
			pfc_sb_addf(mf, "has\t%s\n", pfc_files_base_name(b));
	for (i = 0; i < m->n; i++)
		if ((ret = plan_file(s, m, i, mf, err)) < 0)
			return ret;
	if (mf->oom)
		return PFC_FAIL_NOOFF(err, NOMEM, "pack manifest");
	return 0;
}

/* Member I into the pack: its frame from the symbol cache when the file is known unchanged,
 * else its bytes (read whole, or read as the conversion did, what it did not read zeroed). */
static int add_member(struct pfc_session *s, struct members *m, struct pfc_packw *w, size_t i, struct pfc_error *err)
{
	const struct pfc_files_entry *v = m->v;
	char member[4200];
	struct file_id fid;
	uint64_t *holes = NULL;
	size_t nholes = 0;
	void *map = NULL;
	int ret;

	member_name(member, sizeof(member), &v[i], i);
	/* a file packed before, unchanged: its frame, without reading it; the kernel's
	 * symbols by the CRC their cache entry records, without reading or hashing them */
	if (m->kept[i].map || m->peeked[i])
		snprintf(fid.text, sizeof(fid.text), "kallsyms-text crc64=%016llx size=%zu",
			 (unsigned long long)(m->peeked[i] ? m->peek_crc[i] : m->kept[i].crc),
			 m->peeked[i] ? m->sizes[i] : m->kept[i].len);
	if ((!m->bytes[i] || m->kept[i].map) && m->frames &&
	    (ret = pfc_packw_add_known(w, member, m->sizes[i], m->kept[i].map || m->peeked[i] ? fid.text :
				       file_id(v[i].local, m->no_zero, &fid), err)) != 0) {
		if (ret < 0)
			return ret;
		free_bytes(m->bytes, m->kept, i);
		return 0;
	}
	if (m->peeked[i]) {	/* its frame is not in the cache: its text, as the MANIFEST says */
		size_t len = 0;
		if ((ret = kallsyms_text(s, &v[i], &m->bytes[i], &len, &m->kept[i], err)) < 0)
			return ret;
		if (!m->bytes[i] && (ret = read_whole(v[i].local, &m->bytes[i], &len, err)) < 0)
			return ret;
		if (len != m->sizes[i] || (m->kept[i].map && m->kept[i].crc != m->peek_crc[i]))
			return PFC_FAIL_NOOFF(err, IO, "'%s': the kernel's symbols changed while the pack was "
						       "written (%zu bytes, %llu before): pack again",
					      v[i].local, len, (unsigned long long)m->sizes[i]);
	}
	if (!m->bytes[i] && !m->no_zero && (ret = as_read(v[i].local, m->sizes[i], &map, &holes, &nholes, err)) < 0)
		return ret;
	ret = m->bytes[i] ? pfc_packw_add_bytes(w, member, m->bytes[i], m->sizes[i], err)
	      : map       ? pfc_packw_add_holes(w, member, map, m->sizes[i], holes, nholes, err)
			  : pfc_packw_add_file(w, member, v[i].local, err);
	if (map)
		munmap(map, m->sizes[i]);
	free(holes);
	free_bytes(m->bytes, m->kept, i);
	return ret;
}

static void fill_summary(const struct members *m, struct pfc_pack_summary *ps, const struct pfc_packw_cache_stats *cst,
			 uint64_t packed_bytes)
{
	size_t i;

	memset(ps->by_place, 0, sizeof(ps->by_place));
	ps->files = 0;
	for (i = 0; i < m->n; i++)
		if (!m->v[i].is_list && !m->v[i].probe && m->member_of[i] == i) {
			ps->files++;
			ps->by_place[m->v[i].base]++;
		}
	ps->file_bytes = m->total;
	ps->pack_bytes = packed_bytes;
	ps->cache_hits = cst->hits;
	ps->cache_misses = cst->misses;
	ps->cache_corrupt = cst->corrupt;
	ps->cache_known = cst->known;
}

static int write_pack(FILE *out, struct pfc_session *s, const struct pfc_wopts *o, struct pfc_error *err)
{
	struct members m;
	struct pfc_sb mf;
	struct pfc_packw *w = NULL;
	struct pfc_packw_cache_stats cst;
	uint64_t packed_bytes = 0;
	size_t i, n;
	int ret;

	if (!strcmp(s->opts->input, "-"))
		return PFC_FAIL_NOOFF(err, USAGE, "a pack needs the recording as a file, not standard input");
	/* what only some writers ask for is asked now, so that the pack answers them too */
	pfc_session_kernel_syms(s);
	if ((ret = pfc_session_side_files(s, NULL, NULL)) < 0)
		return ret;
	memset(&m, 0, sizeof(m));
	memset(&mf, 0, sizeof(mf));
	m.n = n = pfc_files_recorded(s->files, &m.v);
	m.member_of = calloc(n + 1, sizeof(*m.member_of));
	m.sizes = calloc(n + 1, sizeof(*m.sizes));
	m.bytes = calloc(n + 1, sizeof(*m.bytes));
	m.kept = calloc(n + 1, sizeof(*m.kept));
	m.peek_crc = calloc(n + 1, sizeof(*m.peek_crc));
	m.peeked = calloc(n + 1, sizeof(*m.peeked));
	m.no_zero = s->tuning->pack_whole;
	if (!m.member_of || !m.sizes || !m.bytes || !m.kept || !m.peek_crc || !m.peeked) {
		ret = PFC_FAIL_NOOFF(err, NOMEM, "pack");
		goto out;
	}
	if (s->opts->cache_dir) {
		pfc_symcache_frames_init(&m.kf, s->opts->cache_dir);
		pfc_symcache_frames_init_kind(&m.ks, s->opts->cache_dir, &pfc_symcache_pack_sum);
		m.frames = &m.kf.ops;
		m.sums = &m.ks.ops;
	}
	if ((ret = plan_manifest(s, o, &m, &mf, err)) < 0)
		goto out;
	if ((ret = pfc_packw_open(&w, out, o->output, 0, s->tuning, err)) < 0)
		goto out;
	/* the members' frames come from the symbol cache, and go there (--no-cache: neither) */
	if (m.frames) {
		pfc_packw_keep(w, m.frames);
		pfc_packw_keep_sums(w, m.sums);
	}
	if ((ret = pfc_packw_add_bytes(w, PFC_PACK_MANIFEST, mf.buf, mf.len, err)) < 0 ||
	    (ret = pfc_packw_add_recording(w, PFC_PACK_RECORDING, s->recording_path, o->pack_recording, err)) < 0)
		goto out;
	for (i = 0; i < s->evs.events.n; i++) {
		char member[64];
		events_member(member, sizeof(member), i);
		if ((ret = pfc_packw_add_bytes(w, member, s->evs.events.v[i].buf, s->evs.events.v[i].len, err)) < 0)
			goto out;
	}
	for (i = 0; i < n; i++)
		if (!m.v[i].is_list && !m.v[i].probe && m.member_of[i] == i && (ret = add_member(s, &m, w, i, err)) < 0)
			goto out;
	pfc_packw_cache_stats(w, &cst);
	ret = pfc_packw_close(w, &packed_bytes, err);
	w = NULL;
	if (ret == 0 && o->pack_summary)
		fill_summary(&m, o->pack_summary, &cst, packed_bytes);
out:
	if (w)
		pfc_packw_abort(w);
	pfc_sb_free(&mf);
	members_free(&m);
	return ret;
}

const struct pfc_writer pfc_writer_pack = {
	.name = "pack",
	.suffixes = pack_suffixes,
	.needs = PFC_NEED_STACKS | PFC_NEED_FILES | PFC_NO_GZIP,
	.write = write_pack,
};
