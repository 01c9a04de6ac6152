/*
 * r2rmap.c - ReadyToRun symbol sources: the crossgen2 r2rmap and crossgen1 NI map parsers,
 * the perfinfo-PID.map parser, the search for the map of an image (next to it, in the map
 * directory, under symfs: places asked of files.c) and the checks that tie a map to the
 * image that ran (the r2rmap signature against the PE's debug entry 21, the MVID against
 * perfinfo).  A map that cannot be tied to the image is never used: a wrong name is worse
 * than none.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>
#include "converter/files/files.h"
#include "converter/jit/pe.h"
#include "converter/util/bytes.h"
#include "converter/util/fileio.h"
#include "converter/util/hex.h"
#include "converter/jit/r2rmap.h"

static const char *const status_str[PFC_R2R__MAX] = {
	[PFC_R2R_NONE] = "not a PE image",
	[PFC_R2R_MAPPED] = "not in the map",
	[PFC_R2R_NO_FILE] = "image not readable",
	[PFC_R2R_NOT_R2R] = "no ReadyToRun code",
	[PFC_R2R_NO_MAP] = "no map found",
	[PFC_R2R_MISMATCH] = "signature mismatch",
	[PFC_R2R_BAD_MAP] = "map without signature",
};

const char *pfc_r2r_status_str(int status)
{
	return status >= 0 && status < PFC_R2R__MAX ? status_str[status] : "?";
}

/* ---- map files ---- */

static int cmp_ent(const void *a, const void *b)
{
	const struct pfc_r2rmap_ent *x = a, *y = b;

	if (x->rva != y->rva)
		return x->rva < y->rva ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int parse_small_int(const char *p, size_t n, int *out)
{
	long v = 0;
	size_t i;

	if (!n || n > 6)
		return -1;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	*out = (int)v;
	return 0;
}

static void header_line(struct pfc_r2rmap *m, uint64_t rva, const char *val, size_t n)
{
	int v;

	switch (rva) {
	case 0xFFFFFFFF: {
		size_t i;
		if (n != 32)
			break;
		for (i = 0; i < 16; i++) {
			int hi = pfc_hexval((unsigned char)val[2 * i]), lo = pfc_hexval((unsigned char)val[2 * i + 1]);
			if (hi < 0 || lo < 0)
				return;
			m->sig[i] = (uint8_t)(hi << 4 | lo);
		}
		m->has_sig = 1;
		break;
	}
	case 0xFFFFFFFE:
		if (!parse_small_int(val, n, &v))
			m->version = (uint32_t)v;
		break;
	case 0xFFFFFFFD:
		if (!parse_small_int(val, n, &v))
			m->os = v;
		break;
	case 0xFFFFFFFC:
		if (!parse_small_int(val, n, &v))
			m->arch = v;
		break;
	case 0xFFFFFFFB:
		if (!parse_small_int(val, n, &v))
			m->abi = v;
		break;
	default:
		break;
	}
}

int pfc_r2rmap_parse(const char *buf, size_t len, struct pfc_r2rmap *m, struct pfc_error *err)
{
	size_t pos = 0;
	uint32_t line = 0;

	memset(m, 0, sizeof(*m));
	m->os = m->arch = m->abi = -1;
	while (pos < len) {
		const char *l = buf + pos, *nl = memchr(l, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - l) : len - pos, i, k, nlen;
		uint64_t rva, size;
		const char *name;
		struct pfc_r2rmap_ent *e;

		pos += ll + (nl ? 1 : 0);
		line++;
		{
			const char *z = memchr(l, '\0', ll);
			if (z)
				ll = (size_t)(z - l);
		}
		while (ll && (l[ll - 1] == '\r' || l[ll - 1] == ' '))
			ll--;
		if (!ll)
			continue;
		if (!(k = pfc_parse_hex(l, ll, &rva)))
			goto bad;
		i = k;
		if (i >= ll || l[i] != ' ')
			goto bad;
		i++;
		if (!(k = pfc_parse_hex(l + i, ll - i, &size)) || size > UINT32_MAX)
			goto bad;
		i += k;
		if (i >= ll || l[i] != ' ')
			goto bad;
		name = l + i + 1;
		nlen = ll - i - 1;
		if (!nlen)
			goto bad;
		if (rva > 0xFFFFFFF0 && rva <= 0xFFFFFFFF) {
			header_line(m, rva, name, nlen);
			continue;
		}
		if (!size)
			goto bad;
		if (m->n == m->cap) {
			size_t cap = m->cap ? m->cap * 2 : 256;
			struct pfc_r2rmap_ent *nv = realloc(m->v, cap * sizeof(*nv));
			if (!nv)
				goto oom;
			m->v = nv;
			m->cap = cap;
		}
		if (m->names_len + nlen + 1 > m->names_cap || nlen > UINT32_MAX) {
			size_t cap = m->names_cap ? m->names_cap : 4096;
			char *nn;
			while (cap < m->names_len + nlen + 1)
				cap *= 2;
			nn = realloc(m->names, cap);
			if (!nn)
				goto oom;
			m->names = nn;
			m->names_cap = cap;
		}
		e = &m->v[m->n++];
		e->rva = rva;
		e->len = (uint32_t)size;
		e->line = line;
		e->name_off = (uint32_t)m->names_len;
		e->name_len = (uint32_t)nlen;
		memcpy(m->names + m->names_len, name, nlen);
		m->names[m->names_len + nlen] = 0;
		m->names_len += nlen + 1;
		continue;
bad:
		m->nr_bad_lines++;
	}
	if (m->n) {
		qsort(m->v, m->n, sizeof(*m->v), cmp_ent);
		if (pfc_ivindex_init(&m->ix, m->n) < 0)
			goto oom;
		for (size_t i = 0; i < m->n; i++)
			pfc_ivindex_set(&m->ix, i, m->v[i].rva, m->v[i].rva + m->v[i].len);
		pfc_ivindex_finish(&m->ix);
	}
	return 0;
oom:
	pfc_r2rmap_free(m);
	return PFC_FAIL_NOOFF(err, NOMEM, "R2R map");
}

/* The whole file at path, called name in messages (a pack's member is read from elsewhere). */
static int read_whole(const char *path, const char *name, char **buf, size_t *len, struct pfc_error *err)
{
	int r = pfc_read_file(path, UINT64_MAX, buf, len);

	if (r == PFC_READ_NOMEM)
		return PFC_FAIL_NOOFF(err, NOMEM, "'%s'", name);
	if (r < 0)
		return PFC_FAIL_NOOFF(err, OPEN, "'%s': %s", name, strerror(errno));
	return 0;
}

static int r2rmap_read(const char *path, const char *name, struct pfc_r2rmap *m, struct pfc_error *err)
{
	char *buf;
	size_t len;
	int ret;

	memset(m, 0, sizeof(*m));
	if ((ret = read_whole(path, name, &buf, &len, err)) < 0)
		return ret;
	ret = pfc_r2rmap_parse(buf, len, m, err);
	free(buf);
	return ret;
}

int pfc_r2rmap_load(const char *path, struct pfc_r2rmap *m, struct pfc_error *err)
{
	return r2rmap_read(path, path, m, err);
}

void pfc_r2rmap_free(struct pfc_r2rmap *m)
{
	free(m->v);
	free(m->names);
	pfc_ivindex_free(&m->ix);
	memset(m, 0, sizeof(*m));
}

const struct pfc_r2rmap_ent *pfc_r2rmap_find(const struct pfc_r2rmap *m, uint64_t rva)
{
	const struct pfc_r2rmap_ent *best = NULL;
	size_t i;

	/* maps from crossgen do not overlap; a hand-merged one might: the smallest entry that
	 * covers rva, the later line winning ties */
	for (i = pfc_ivindex_first(&m->ix, rva); i != SIZE_MAX; i = pfc_ivindex_next(&m->ix, rva, i))
		if (!best || m->v[i].len < best->len)
			best = &m->v[i];
	return best;
}

/* ---- perfinfo ---- */

static int add_perfinfo(struct pfc_perfinfo *pi, const char *path, size_t plen, const uint8_t mvid[16],
			uint64_t base, int has_base, int pid)
{
	struct pfc_perfinfo_ent *e;

	if (pi->n == pi->cap) {
		size_t cap = pi->cap ? pi->cap * 2 : 32;
		struct pfc_perfinfo_ent *nv = realloc(pi->v, cap * sizeof(*nv));
		if (!nv)
			return -1;
		pi->v = nv;
		pi->cap = cap;
	}
	e = &pi->v[pi->n];
	e->path = malloc(plen + 1);
	if (!e->path)
		return -1;
	memcpy(e->path, path, plen);
	e->path[plen] = 0;
	memcpy(e->mvid, mvid, 16);
	e->base = base;
	e->has_base = has_base;
	e->pid = pid;
	pi->n++;
	return 0;
}

int pfc_perfinfo_parse(const char *buf, size_t len, int pid, struct pfc_perfinfo *pi, struct pfc_error *err)
{
	size_t pos = 0;

	while (pos < len) {
		const char *l = buf + pos, *nl = memchr(l, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - l) : len - pos;
		const char *f[3];	/* the last three fields */
		size_t fl[3], nf = 0, end, j;
		uint8_t mvid[16];
		uint64_t base = 0;
		int has_base = 0;
		const char *semi;

		pos += ll + (nl ? 1 : 0);
		while (ll && (l[ll - 1] == '\r' || l[ll - 1] == '\0'))
			ll--;
		if (!ll)
			continue;
		if (memchr(l, '\0', ll))
			goto bad;
		semi = memchr(l, ';', ll);
		if (!semi)
			goto bad;
		if (!((semi - l == 9 && !memcmp(l, "ImageLoad", 9)) || (semi - l == 6 && !memcmp(l, "NILoad", 6)))) {
			continue;	/* another record type: not ours */
		}
		/* fields after the path are read from the right: a path may hold ';' */
		end = ll;
		if (l[end - 1] == ';')
			end--;
		for (nf = 0; nf < 3; nf++) {
			size_t k = end;
			while (k > (size_t)(semi - l) + 1 && l[k - 1] != ';')
				k--;
			if (k <= (size_t)(semi - l) + 1)
				break;
			f[nf] = l + k;
			fl[nf] = end - k;
			end = k - 1;
		}
		/* f[0] is the last field: a base after the GUID, or the GUID itself */
		if (nf >= 2 && !pfc_pe_guid_parse(f[1], fl[1], mvid)) {
			size_t used = fl[0] ? pfc_parse_hex(f[0], fl[0], &base) : 0;
			if (!fl[0] || used != fl[0])
				goto bad;
			has_base = 1;
			/* path = from after the type to before the GUID */
			j = (size_t)(f[1] - l) - 1;
		} else if (nf >= 1 && !pfc_pe_guid_parse(f[0], fl[0], mvid)) {
			j = (size_t)(f[0] - l) - 1;
		} else {
			goto bad;
		}
		if (j <= (size_t)(semi - l) + 1)
			goto bad;
		if (add_perfinfo(pi, semi + 1, j - (size_t)(semi - l) - 1, mvid, base, has_base, pid) < 0)
			return PFC_FAIL_NOOFF(err, NOMEM, "perfinfo");
		continue;
bad:
		pi->nr_bad_lines++;
	}
	return 0;
}

static int perfinfo_read(const char *path, const char *name, int pid, struct pfc_perfinfo *pi,
			 struct pfc_error *err)
{
	char *buf;
	size_t len;
	int ret;

	if ((ret = read_whole(path, name, &buf, &len, err)) < 0)
		return ret;
	ret = pfc_perfinfo_parse(buf, len, pid, pi, err);
	free(buf);
	return ret;
}

int pfc_perfinfo_load(const char *path, int pid, struct pfc_perfinfo *pi, struct pfc_error *err)
{
	return perfinfo_read(path, path, pid, pi, err);
}

int pfc_perfinfo_load_from(struct pfc_files *files, int32_t pid, struct pfc_perfinfo *pi, struct pfc_error *err)
{
	/* perfcollect copies them into the map directory; the runtime writes them to /tmp */
	static const enum pfc_files_base bases[2] = { PFC_FILES_MAPDIR, PFC_FILES_TMP };
	struct pfc_found f;
	char rel[64], why[64];
	size_t i;
	int ret;

	snprintf(rel, sizeof(rel), "perfinfo-%d.map", pid);
	for (i = !pfc_files_has(files, PFC_FILES_MAPDIR); i < 2; i++) {
		if (!pfc_files_find(files, bases[i], rel, 0, &f) ||
		    (ret = perfinfo_read(f.path, f.name, pid, pi, err)) == -PFC_ERR_OPEN)
			continue;
		if (ret == 0) {
			snprintf(why, sizeof(why), "perfinfo of pid %d", pid);
			pfc_files_note(files, bases[i], rel, why, pid, NULL, 0);
		}
		return ret;
	}
	return PFC_FAIL_NOOFF(err, OPEN, "no %s", rel);
}

void pfc_perfinfo_free(struct pfc_perfinfo *pi)
{
	size_t i;

	for (i = 0; i < pi->n; i++)
		free(pi->v[i].path);
	free(pi->v);
	memset(pi, 0, sizeof(*pi));
}

/* ---- finding and checking the map of an image ---- */

int pfc_r2r_is_pe(struct pfc_files *files, const char *path)
{
	struct pfc_found f;
	uint8_t head[0x40];
	uint8_t sig[4];
	ssize_t n;
	uint32_t lfanew;
	int fd = -1;

	if (!pfc_files_find(files, PFC_FILES_ROOT, path, 0, &f) || (fd = open(f.path, O_RDONLY | O_CLOEXEC)) < 0) {
		/* not there: a .dll or .exe is taken for a PE image, so that its frames are
		 * counted as R2R frames whose image is missing (perf shows [unknown] either way) */
		size_t n = strlen(path);
		return n > 4 && (!strcasecmp(path + n - 4, ".dll") || !strcasecmp(path + n - 4, ".exe"));
	}
	n = pread(fd, head, sizeof(head), 0);
	if (n != (ssize_t)sizeof(head) || head[0] != 'M' || head[1] != 'Z') {
		close(fd);
		return 0;
	}
	memcpy(&lfanew, head + 0x3c, 4);
	n = pread(fd, sig, 4, lfanew);
	close(fd);
	return n == 4 && !memcmp(sig, "PE\0\0", 4);
}

/* A directory asked of files.c: a place, and its path there up to its final '/' ("" for
 * the top). */
struct place {
	enum pfc_files_base base;
	char rel[4096];
};

static void place_set(struct place *p, enum pfc_files_base base, const char *rel, size_t len)
{
	p->base = base;
	memcpy(p->rel, rel, len);
	p->rel[len] = 0;
}

/* The directories a map may be in, best first: next to the image (under symfs), the map
 * directory, the symfs root. */
static size_t map_dirs(struct pfc_files *files, const char *image, struct place dirs[3])
{
	size_t n = 0;
	const char *slash = strrchr(image, '/');
	size_t dl = slash ? (size_t)(slash + 1 - image) : 0;

	if (dl < sizeof(dirs[0].rel))
		place_set(&dirs[n++], PFC_FILES_ROOT, image, dl);
	if (pfc_files_has(files, PFC_FILES_MAPDIR))
		place_set(&dirs[n++], PFC_FILES_MAPDIR, "", 0);
	if (pfc_files_has(files, PFC_FILES_ROOT))
		place_set(&dirs[n++], PFC_FILES_ROOT, "/", 1);
	return n;
}

/* File name in directory dir. */
static int find_at(struct pfc_files *files, const struct place *dir, const char *name, struct pfc_found *f)
{
	char rel[4096];
	int n = snprintf(rel, sizeof(rel), "%s%s", dir->rel, name);

	return n >= 0 && (size_t)n < sizeof(rel) && pfc_files_find(files, dir->base, rel, 0, f);
}

static int find_in_dirs(struct pfc_files *files, const struct place *dirs, size_t nd, const char *name,
			struct pfc_found *f)
{
	size_t i;

	for (i = 0; i < nd; i++)
		if (find_at(files, &dirs[i], name, f))
			return 0;
	return -1;
}

/* Simple name of an image: "x/System.Linq.dll" -> "System.Linq" (also drops ".ni"). */
static void simple_name(const char *path, char *out, size_t size)
{
	const char *b = strrchr(path, '/');
	size_t n;

	b = b ? b + 1 : path;
	n = strlen(b);
	if (n > 4 && (!strcasecmp(b + n - 4, ".dll") || !strcasecmp(b + n - 4, ".exe")))
		n -= 4;
	if (n > 3 && !strncasecmp(b + n - 3, ".ni", 3))
		n -= 3;
	if (n >= size)
		n = size - 1;
	memcpy(out, b, n);
	out[n] = 0;
}

/*
 * A symbol server cache (dotnet-symbol, SSQP key "R2R PerfMap v1"):
 * <dir>/<name>/r2rmap-v1-<signature>/<name>, all lower case, under the map directory or
 * the symfs root.
 */
static int find_in_cache(const struct pfc_r2r_opts *o, const struct pfc_pe *pe, struct pfc_found *f)
{
	static const enum pfc_files_base roots[2] = { PFC_FILES_MAPDIR, PFC_FILES_ROOT };
	struct place root;
	char lname[256], key[512];
	size_t i;
	int n;

	if (!pe->has_perfmap || !pe->perfmap_name[0])
		return -1;
	for (i = 0; pe->perfmap_name[i] && i < sizeof(lname) - 1; i++)
		lname[i] = (char)(pe->perfmap_name[i] >= 'A' && pe->perfmap_name[i] <= 'Z' ?
				  pe->perfmap_name[i] - 'A' + 'a' : pe->perfmap_name[i]);
	lname[i] = 0;
	n = snprintf(key, sizeof(key), "%s/r2rmap-v1-", lname);
	if (n < 0 || (size_t)n + 32 + strlen(lname) + 2 > sizeof(key))
		return -1;
	pfc_hex_format(key + n, pe->perfmap_sig, 16);
	n += 32;
	snprintf(key + n, sizeof(key) - (size_t)n, "/%s", lname);
	for (i = 0; i < 2; i++) {
		place_set(&root, roots[i], "/", i);	/* the map directory's top, the symfs root */
		if (pfc_files_has(o->files, roots[i]) && find_at(o->files, &root, key, f))
			return 0;
	}
	return -1;
}

/* Map entries -> symbols in file offset space.  An entry whose RVA no section holds is
 * dropped (it cannot be hit through a file mapping). */
static int map_to_symtab(const struct pfc_pe *pe, const struct pfc_r2rmap *m, struct pfc_symtab *t)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		const struct pfc_r2rmap_ent *e = &m->v[i];
		int64_t off = pfc_pe_rva_to_offset(pe, e->rva);
		if (off < 0)
			continue;
		if (pfc_symtab_add(t, (uint64_t)off, e->len, 1, pfc_r2rmap_name(m, e), e->name_len) < 0)
			return -PFC_ERR_NOMEM;
	}
	return 0;
}

/* Without a usable map: one symbol per RUNTIME_FUNCTION, "[image+0xRVA]". */
static int funcs_to_symtab(const struct pfc_pe *pe, const char *path, struct pfc_symtab *t)
{
	const char *b = strrchr(path, '/');
	char name[512];
	size_t i;

	b = b ? b + 1 : path;
	for (i = 0; i < pe->nr_funcs; i++) {
		const struct pfc_pe_func *f = &pe->funcs[i];
		int64_t off = pfc_pe_rva_to_offset(pe, f->begin);
		int n;
		if (off < 0)
			continue;
		n = snprintf(name, sizeof(name), "[%s+0x%x]", b, f->begin);
		if (n < 0 || (size_t)n >= sizeof(name))
			continue;
		if (pfc_symtab_add(t, (uint64_t)off, f->end - f->begin, 1, name, (size_t)n) < 0)
			return -PFC_ERR_NOMEM;
	}
	return 0;
}

static const int arch_of_machine[][2] = {
	{ 0x1c4, 1 }, { 0xaa64, 2 }, { 0x8664, 3 }, { 0x14c, 4 }, { 0x5064, 5 }, { 0x6264, 6 },
};

static int check_r2rmap(const struct pfc_pe *pe, const struct pfc_r2rmap *m, char *why, size_t size)
{
	static const uint8_t zero[16];
	char a[33], b[33];
	size_t i;

	if (!m->has_sig || !memcmp(m->sig, zero, 16)) {
		snprintf(why, size, "the map has no signature line");
		return PFC_R2R_BAD_MAP;
	}
	if (!pe->has_perfmap) {
		snprintf(why, size, "the image has no R2R perf map debug entry to check the map against");
		return PFC_R2R_BAD_MAP;
	}
	if (memcmp(m->sig, pe->perfmap_sig, 16)) {
		snprintf(why, size, "map signature %s, image %s", pfc_hex_format_upper(a, m->sig, 16),
			 pfc_hex_format_upper(b, pe->perfmap_sig, 16));
		return PFC_R2R_MISMATCH;
	}
	if (m->arch >= 0)
		for (i = 0; i < sizeof(arch_of_machine) / sizeof(arch_of_machine[0]); i++)
			if (arch_of_machine[i][0] == pe->machine_plain && arch_of_machine[i][1] != m->arch) {
				snprintf(why, size, "map for architecture %d, image for %d", m->arch,
					 arch_of_machine[i][1]);
				return PFC_R2R_MISMATCH;
			}
	return PFC_R2R_MAPPED;
}

int pfc_r2r_load(const struct pfc_r2r_opts *o, const char *path, struct pfc_symtab *t,
		 struct pfc_r2r_result *res, struct pfc_error *err)
{
	char name[512], name1[512], stem[256];
	struct place dirs[3];
	struct pfc_found img, mf;
	const char *file = img.name;	/* the image, in messages */
	struct pfc_error perr;
	struct pfc_pe pe;
	struct pfc_r2rmap m;
	const uint8_t *mvid = NULL;
	size_t nd, i;
	int ret = 0, have_map = 0, wrong_file = 0;

	memset(res, 0, sizeof(*res));
	memset(&perr, 0, sizeof(perr));
	memset(&m, 0, sizeof(m));
	memset(&pe, 0, sizeof(pe));
	if (!pfc_files_find(o->files, PFC_FILES_ROOT, path, 0, &img))
		ret = PFC_FAIL_NOOFF(&perr, OPEN, "'%s': not found", path);
	else
		ret = pfc_pe_load(img.path, &pe, o->funcs, &perr);	/* functions only for --r2r-rva's symbols */
	if (ret < 0) {
		res->status = PFC_R2R_NO_FILE;
		snprintf(res->why, sizeof(res->why), "%s", perr.detail);
		/* a file that is there but does not parse is worth a warning; a missing one is
		 * only counted (perf is silent about it too) */
		if (ret != -PFC_ERR_OPEN && ret != 0 && o->log) {
			if (perr.has_offset)
				fprintf(o->log, "perfconv: warning: '%s': bad PE image at offset %llu: %s; its frames stay unresolved\n",
					file, (unsigned long long)perr.offset, perr.detail);
			else
				fprintf(o->log, "perfconv: warning: '%s': %s: %s; its frames stay unresolved\n", file,
					pfc_strerror(perr.code), perr.detail);
		}
		pfc_pe_free(&pe);
		return ret == -PFC_ERR_NOMEM ? PFC_FAIL_NOOFF(err, NOMEM, "PE image") : 0;
	}
	/* a composite image has no CLR header of its own, but its debug entry 21 names its map */
	if (!pe.is_r2r && !pe.has_perfmap) {
		res->status = PFC_R2R_NOT_R2R;
		goto out;
	}
	/* perfinfo: the image (MVID) each process loaded from this path */
	for (i = 0; o->perfinfo && i < o->perfinfo->n; i++) {
		const struct pfc_perfinfo_ent *e = &o->perfinfo->v[i];
		char g1[40], g2[40];
		if (strcmp(e->path, path))
			continue;
		mvid = e->mvid;
		if (pe.has_mvid && memcmp(pe.mvid, e->mvid, 16)) {
			pfc_pe_guid_str(e->mvid, g1);
			pfc_pe_guid_str(pe.mvid, g2);
			res->status = PFC_R2R_MISMATCH;
			wrong_file = 1;
			res->wrong_image = 1;
			snprintf(res->why, sizeof(res->why), "pid %d loaded MVID %s (perfinfo-%d.map), the file has %s",
				 e->pid, g1, e->pid, g2);
			goto out;
		}
	}
	if (!mvid && pe.has_mvid)
		mvid = pe.mvid;
	pfc_files_note(o->files, PFC_FILES_ROOT, path, "ReadyToRun image", -1, NULL, 0);
	nd = map_dirs(o->files, path, dirs);
	/* crossgen2: the name in the debug entry, else <Name>.ni.r2rmap */
	simple_name(path, stem, sizeof(stem));
	if (pe.has_perfmap && pe.perfmap_name[0])
		snprintf(name, sizeof(name), "%s", pe.perfmap_name);
	else
		snprintf(name, sizeof(name), "%s.ni.r2rmap", stem);
	if (find_in_dirs(o->files, dirs, nd, name, &mf) == 0 || find_in_cache(o, &pe, &mf) == 0) {
		ret = r2rmap_read(mf.path, mf.name, &m, err);
		if (ret < 0)
			goto out;
		snprintf(res->map_path, sizeof(res->map_path), "%s", mf.name);
		res->status = check_r2rmap(&pe, &m, res->why, sizeof(res->why));
		have_map = res->status == PFC_R2R_MAPPED;
	} else if (mvid) {
		/* crossgen1: <Name>.ni.{MVID}.map, the MVID in either case */
		char g[40];
		size_t k;
		for (k = 0; k < 2 && !have_map; k++) {
			pfc_pe_guid_str(mvid, g);
			if (k)
				for (i = 0; g[i]; i++)
					if (g[i] >= 'a' && g[i] <= 'f')
						g[i] = (char)(g[i] - 'a' + 'A');
			snprintf(name1, sizeof(name1), "%s.ni.%s.map", stem, g);
			if (find_in_dirs(o->files, dirs, nd, name1, &mf) == 0) {
				ret = r2rmap_read(mf.path, mf.name, &m, err);
				if (ret < 0)
					goto out;
				snprintf(res->map_path, sizeof(res->map_path), "%s", mf.name);
				res->status = PFC_R2R_MAPPED;
				have_map = 1;
			}
		}
	}
	if (!res->status) {
		res->status = PFC_R2R_NO_MAP;
		if (o->verbose && o->log)
			fprintf(o->log, "perfconv: '%s': no ReadyToRun map: looked for '%s'%s%s%s next to it%s%s\n", path,
				name, mvid ? " and '" : "", mvid ? name1 : "", mvid ? "'" : "",
				pfc_files_has(o->files, PFC_FILES_MAPDIR) ? ", in the map directory" : "",
				pfc_files_has(o->files, PFC_FILES_ROOT) ? ", under symfs" : "");
	}
	if (have_map) {
		ret = map_to_symtab(&pe, &m, t);
		if (ret < 0) {
			ret = PFC_FAIL_NOOFF(err, NOMEM, "R2R symbols");
			goto out;
		}
		pfc_files_note(o->files, mf.base, mf.rel, "ReadyToRun map", -1, NULL, 0);
		if (o->verbose && o->log)
			fprintf(o->log, "perfconv: '%s': %zu methods from '%s'\n", path, m.n, res->map_path);
	}
out:
	if ((res->status == PFC_R2R_MISMATCH || res->status == PFC_R2R_BAD_MAP) && o->log) {
		if (res->map_path[0])
			fprintf(o->log, "perfconv: warning: '%s': not used for '%s': %s; its frames stay unresolved\n",
				res->map_path, path, res->why);
		else
			fprintf(o->log, "perfconv: warning: '%s': not the image that ran: %s; its frames stay unresolved\n",
				file, res->why);
	}
	/* by function RVA only from the file that ran: another build has other functions */
	if (!have_map && o->funcs && pe.nr_funcs && !wrong_file) {
		ret = funcs_to_symtab(&pe, path, t);
		if (ret < 0)
			ret = PFC_FAIL_NOOFF(err, NOMEM, "R2R symbols");
	}
	if (ret == 0 && t->nr) {
		ret = pfc_symtab_fixup(t, PFC_SYMTAB_ELF);
		if (ret == 0)
			ret = pfc_symtab_finish(t);
		if (ret < 0)
			ret = PFC_FAIL_NOOFF(err, NOMEM, "R2R symbols");
	}
	res->nr_syms = t->nr;
	pfc_r2rmap_free(&m);
	pfc_pe_free(&pe);
	return ret;
}
