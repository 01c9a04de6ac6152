/*
 * r2rmeta.c - the ReadyToRun code map of a PE image, from untrusted bytes: the R2R header
 * (CLI ManagedNativeHeader, or a composite's RTR_HEADER export), RUNTIME_FUNCTIONS, the
 * entry-point tables in their NativeFormat encodings, the HotColdMap and the components of
 * a composite image.  All of it is decoded once into methods sorted by their first runtime
 * function; names come from the defining module's metadata (ecma.c), lazily.  Tables whose
 * bytes are damaged are counted and skipped: a wrong name is never made up from them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "converter/util/bytes.h"
#include "converter/jit/ecma.h"
#include "converter/jit/r2rmeta.h"
#include "converter/util/fileio.h"
#include "converter/util/hex.h"

#define RTR_SIGNATURE 0x00525452
#define COR_IL_LIBRARY 0x4
#define R2R_FLAG_COMPONENT 0x20
enum {
	SEC_RUNTIME_FUNCTIONS = 102, SEC_METHODDEF_ENTRYPOINTS = 103, SEC_INSTANCE_ENTRYPOINTS = 109,
	SEC_MANIFEST_METADATA = 112, SEC_COMPONENT_ASSEMBLIES = 115, SEC_OWNER_COMPOSITE = 116,
	SEC_HOT_COLD_MAP = 120,
};
#define MAX_MODULES 4096		/* assemblies one image may name */
#define NONE 0xFFFFFFFFu
#define INSTANCE (1ull << 63)		/* owner[]: an instance entry (its signature's offset) */
#define MAX_FRAGMENTS 4096		/* runtime functions one method part may span */

struct module {
	char *name;                /* assembly simple name */
	struct pfc_ecma md;
	int state;                 /* 0 not read yet, 1 read, -1 cannot be */
	uint32_t cor_rva;          /* composite with embedded IL: its CLI header in the image */
	void *map;                 /* its own file (a component stub, another module), mapped */
	size_t map_len;
};

struct pfc_r2rmeta {
	const uint8_t *buf;
	size_t len;
	void *own_map;             /* buf, when pfc_r2rmeta_open mapped it */
	struct pfc_files *files;   /* where the modules beside the image are asked for (or dir) */
	enum pfc_files_base files_base;
	char *files_dir;
	char *dir;
	struct pfc_pe pe;
	int composite;
	uint16_t major, minor;
	/* Memory first touched costs more than decoding here (a page fault per 4 KiB), so
	 * the tables are read in place and the one array made is owner[]. */
	const uint8_t *ftab;       /* RUNTIME_FUNCTIONS, sorted by begin */
	uint32_t nfuncs, esz;
	uint64_t *owner;           /* per runtime function that starts a method: its entry
	                            * (module << 32 | MethodDef RID, or INSTANCE | signature offset); 0 */
	size_t nm;
	const uint8_t *hc;         /* HotColdMap pairs {cold, hot}, sorted */
	uint32_t npairs, first_cold;
	struct module *mods;
	size_t nmods, capmods;
	uint32_t corelib;          /* composite: module index of System.Private.CoreLib, or NONE */
	struct pfc_ecma manifest;
	int has_manifest;
	size_t nr_bad_entries, nr_bad_names;
	struct pfc_sb tmp;
};

/* ---- NativeFormat (readytorun-format.md "Native Format") ---- */

struct nf {
	const uint8_t *p;          /* a section's bytes */
	size_t len;
};

static int nf_uint(const struct nf *s, size_t *pos, uint32_t *v)
{
	const uint8_t *b = s->p + *pos;
	size_t left = *pos < s->len ? s->len - *pos : 0;

	if (!left)
		return -1;
	if (!(b[0] & 1)) {
		*v = b[0] >> 1;
		*pos += 1;
	} else if (!(b[0] & 2)) {
		if (left < 2)
			return -1;
		*v = (uint32_t)b[0] >> 2 | (uint32_t)b[1] << 6;
		*pos += 2;
	} else if (!(b[0] & 4)) {
		if (left < 3)
			return -1;
		*v = (uint32_t)b[0] >> 3 | (uint32_t)b[1] << 5 | (uint32_t)b[2] << 13;
		*pos += 3;
	} else if (!(b[0] & 8)) {
		if (left < 4)
			return -1;
		*v = (uint32_t)b[0] >> 4 | (uint32_t)b[1] << 4 | (uint32_t)b[2] << 12 | (uint32_t)b[3] << 20;
		*pos += 4;
	} else if (!(b[0] & 16)) {
		if (left < 5)
			return -1;
		*v = pfc_ld32(b + 1, 0);
		*pos += 5;
	} else {
		return -1;
	}
	return 0;
}

/* Signed: the same layout, sign-extended from the top byte. */
static int nf_int(const struct nf *s, size_t *pos, int64_t *v)
{
	size_t at = *pos;
	uint32_t u;

	if (nf_uint(s, pos, &u) < 0)
		return -1;
	switch (*pos - at) {
	case 1: *v = (int8_t)s->p[at] >> 1; break;
	case 2: *v = (int64_t)(int8_t)s->p[at + 1] * 64 + (s->p[at] >> 2); break;
	case 3: *v = (int64_t)(int8_t)s->p[at + 2] * 8192 + (u & 0x1FFF); break;
	case 4: *v = (int64_t)(int8_t)s->p[at + 3] * 1048576 + (u & 0xFFFFF); break;
	default: *v = (int32_t)u; break;
	}
	return 0;
}

/* NativeArray element i: its data offset, or -1 when absent or damaged. */
static int nf_array_get(const struct nf *s, size_t base, uint32_t esz, uint32_t i, size_t *data)
{
	size_t boff = base + (size_t)(i / 16) * esz, p, q;
	uint32_t bit, v;

	if (boff + esz > s->len)
		return -1;
	p = base + (esz == 1 ? s->p[boff] : esz == 2 ? pfc_ld16(s->p + boff, 0) : pfc_ld32(s->p + boff, 0));
	for (bit = 8; bit; bit >>= 1) {
		q = p;
		if (nf_uint(s, &q, &v) < 0)
			return -1;
		if (i & bit) {
			if (v & 2) {
				p += v >> 2;
				continue;
			}
		} else if (v & 1) {
			p = q;
			continue;
		}
		if ((v & 3) == 0 && (v >> 2) == (i & 15)) {
			*data = q;
			return 0;
		}
		return -1;
	}
	*data = p;
	return 0;
}

/* ---- the image ---- */

static int section_bytes(const struct pfc_r2rmeta *r, uint32_t rva, uint32_t size, struct nf *s)
{
	int64_t off = pfc_pe_rva_to_offset(&r->pe, rva);

	if (off < 0 || (uint64_t)off + size > r->len)
		return -1;
	s->p = r->buf + off;
	s->len = size;
	return 0;
}

/* The sections of an R2R (core) header: type -> rva, size. */
struct r2r_sections {
	uint32_t rva[128], size[128];	/* by type - 100 */
};

static int read_sections(const struct pfc_r2rmeta *r, uint64_t off, uint32_t n, struct r2r_sections *sec,
			 struct pfc_error *err)
{
	struct pfc_cursor c;
	uint32_t i;

	memset(sec, 0, sizeof(*sec));
	if (off > r->len || n > 4096)
		return PFC_FAIL(err, CORRUPT, off, "ReadyToRun header with %u sections", n);
	pfc_cur_init(&c, r->buf + off, r->len - off, 0);
	for (i = 0; i < n; i++) {
		uint32_t t = pfc_cur_u32(&c), rva = pfc_cur_u32(&c), size = pfc_cur_u32(&c);
		if (c.bad)
			return PFC_FAIL(err, TRUNCATED, off + 12ull * i, "ReadyToRun section list is cut short");
		if (t >= 100 && t < 228) {
			sec->rva[t - 100] = rva;
			sec->size[t - 100] = size;
		}
	}
	return 0;
}

static uint32_t add_module(struct pfc_r2rmeta *r, const char *name, size_t n)
{
	struct module *md;

	if (r->nmods == r->capmods) {
		size_t cap = r->capmods ? r->capmods * 2 : 8;
		struct module *v;
		if (r->nmods >= MAX_MODULES || !(v = realloc(r->mods, cap * sizeof(*v))))
			return NONE;
		r->mods = v;
		r->capmods = cap;
	}
	md = &r->mods[r->nmods];
	memset(md, 0, sizeof(*md));
	md->name = malloc(n + 1);
	if (!md->name)
		return NONE;
	memcpy(md->name, name, n);
	md->name[n] = 0;
	return (uint32_t)r->nmods++;
}

/* Metadata root of a PE image's CLI header at rva in bytes b. */
static int md_of_cli(const struct pfc_pe *pe, const uint8_t *b, size_t len, uint32_t cli_rva, struct pfc_ecma *md,
		     struct pfc_error *err)
{
	int64_t off = pfc_pe_rva_to_offset(pe, cli_rva), moff;
	uint32_t mrva, msize;

	if (off < 0 || (uint64_t)off + 16 > len)
		return PFC_FAIL(err, CORRUPT, 0, "CLI header outside the image");
	mrva = pfc_ld32(b + off + 8, 0);
	msize = pfc_ld32(b + off + 12, 0);
	moff = pfc_pe_rva_to_offset(pe, mrva);
	if (moff < 0 || (uint64_t)moff + msize > len)
		return PFC_FAIL(err, CORRUPT, (uint64_t)off + 8, "metadata outside the image");
	return pfc_ecma_open(md, b + moff, msize, err);
}

/* A module's metadata, read on first use: the image's own, a composite's embedded one, or
 * DIR/NAME.dll. */
static const struct pfc_ecma *module_md(struct pfc_r2rmeta *r, uint32_t k)
{
	struct module *mo;
	struct pfc_error e;

	if (k >= r->nmods)
		return NULL;
	mo = &r->mods[k];
	if (mo->state)
		return mo->state > 0 ? &mo->md : NULL;
	mo->state = -1;
	memset(&e, 0, sizeof(e));
	if (mo->cor_rva) {
		if (md_of_cli(&r->pe, r->buf, r->len, mo->cor_rva, &mo->md, &e) == 0)
			mo->state = 1;
	} else if (r->dir || r->files) {
		char path[4096];
		struct pfc_found f;
		struct pfc_pe pe;
		int n = 0;
		if (strchr(mo->name, '/'))
			return NULL;
		if (r->files) {	/* asked like the image itself: a pack has the modules it used */
			if (!pfc_files_findf(r->files, r->files_base, 0, &f, "%s/%s.dll", r->files_dir, mo->name))
				return NULL;
			n = snprintf(path, sizeof(path), "%s", f.path);
		} else {
			n = snprintf(path, sizeof(path), "%s/%s.dll", r->dir, mo->name);
		}
		if (n < 0 || (size_t)n >= sizeof(path) || pfc_map_file(path, UINT32_MAX, &mo->map, &mo->map_len) < 0)
			return NULL;
		if (r->files)
			pfc_files_note(r->files, f.base, f.rel, "ReadyToRun module of a composite or version bubble", -1,
				       NULL, 0);
		if (pfc_pe_parse_headers(mo->map, mo->map_len, &pe, &e) == 0 && pe.is_managed && pe.md_size) {
			int64_t off = pfc_pe_rva_to_offset(&pe, pe.md_rva);
			if (off >= 0 && (uint64_t)off + pe.md_size <= mo->map_len &&
			    pfc_ecma_open(&mo->md, (const uint8_t *)mo->map + off, pe.md_size, &e) == 0)
				mo->state = 1;
		}
		pfc_pe_free(&pe);
	}
	return mo->state > 0 ? &mo->md : NULL;
}

static uint32_t module_by_name(struct pfc_r2rmeta *r, const char *name)
{
	size_t i;

	if (!*name)
		return NONE;
	for (i = 0; i < r->nmods; i++)
		if (!strcasecmp(r->mods[i].name, name))
			return (uint32_t)i;
	return add_module(r, name, strlen(name));
}

/* Module override index (MODULE_ZAPSIG, UpdateContext) -> module (readytorun-format.md
 * "ManifestMetadata"; zapsig.cpp DecodeModuleFromIndex). */
static const struct pfc_ecma *module_of_index(void *ctx, const struct pfc_ecma *md, uint32_t index)
{
	struct pfc_r2rmeta *r = ctx;
	uint32_t ilar = 0, rid;
	int v63 = r->major > 6 || (r->major == 6 && r->minor >= 3);
	const struct pfc_ecma *own = r->composite ? NULL : module_md(r, 0);

	if (index == 0)
		return md;
	if (own)
		ilar = own->rows[PFC_MD_ASSEMBLYREF];
	if (index <= ilar)
		return module_md(r, module_by_name(r, pfc_ecma_str(own, pfc_ecma_col(own, PFC_MD_ASSEMBLYREF, index, 3))));
	if (!r->has_manifest)
		return NULL;
	if (v63 && index == ilar + 1)
		return NULL;		/* the manifest itself defines no types */
	rid = v63 ? index - ilar - 1 : index - ilar;
	if (r->composite && rid >= 1 && rid - 1 < r->nmods)	/* component k is manifest row k + 1 */
		return module_md(r, rid - 1);
	return module_md(r, module_by_name(r, pfc_ecma_str(&r->manifest,
							   pfc_ecma_col(&r->manifest, PFC_MD_ASSEMBLYREF, rid, 3))));
}

static void add_method(struct pfc_r2rmeta *r, uint32_t rf, uint64_t entry)
{
	if (rf >= r->nfuncs) {
		r->nr_bad_entries++;
		return;
	}
	if (!r->owner[rf]) {		/* entries sharing code: the first found names it */
		r->owner[rf] = entry;
		r->nm++;
	}
}

/* Entry-point value (§6.4): the runtime function index. */
static int entry_rf(const struct nf *s, size_t pos, uint32_t *rf)
{
	uint32_t v;

	if (nf_uint(s, &pos, &v) < 0)
		return -1;
	*rf = v & 1 ? v >> 2 : v >> 1;
	return 0;
}

static int methoddef_entries(struct pfc_r2rmeta *r, uint32_t rva, uint32_t size, uint32_t module)
{
	struct nf s;
	size_t pos = 0, data;
	uint32_t h, count, esz, i, rf;

	if (!size)
		return 0;
	if (section_bytes(r, rva, size, &s) < 0 || nf_uint(&s, &pos, &h) < 0 || (h & 3) == 3) {
		r->nr_bad_entries++;
		return 0;
	}
	count = h >> 2;
	esz = 1u << (h & 3);
	/* one block offset per 16 elements must fit: bounds the loop by the section size */
	if (((uint64_t)count + 15) / 16 * esz > s.len - pos) {
		r->nr_bad_entries++;
		return 0;
	}
	for (i = 0; i < count; i++) {
		if (nf_array_get(&s, pos, esz, i, &data) < 0)
			continue;
		if (entry_rf(&s, data, &rf) < 0) {
			r->nr_bad_entries++;
			continue;
		}
		add_method(r, rf, (uint64_t)module << 32 | (i + 1));
	}
	return 0;
}

/* Walk an R2R method signature (§6.5) from p: the owner type span, method instantiation,
 * and where the entry-point value starts.  Tokens are not looked at. */
struct msig {
	uint32_t flags, ctx_index, rid;
	const uint8_t *owner, *owner_end;
	const uint8_t *minst;      /* the first method type argument */
	uint32_t nminst;
	const uint8_t *end;        /* after the signature */
};

static int walk_msig(const uint8_t *p, const uint8_t *end, struct msig *ms)
{
	static const struct pfc_sigfmt skip = { .style = PFC_SIG_R2RMAP };
	uint32_t i;

	memset(ms, 0, sizeof(*ms));
	if (pfc_ecma_uncompress(&p, end, &ms->flags) < 0)
		return -1;
	if ((ms->flags & 0x80) && pfc_ecma_uncompress(&p, end, &ms->ctx_index) < 0)
		return -1;
	if (ms->flags & 0x40) {
		ms->owner = p;
		if (pfc_ecma_type(&skip, NULL, &p, end, NULL) < 0)
			return -1;
		ms->owner_end = p;
	}
	if (ms->flags & 0x08)		/* a slot instead of a token: not in entry tables */
		return -1;
	if (pfc_ecma_uncompress(&p, end, &ms->rid) < 0)
		return -1;
	if (ms->flags & 0x04) {
		if (pfc_ecma_uncompress(&p, end, &ms->nminst) < 0 || ms->nminst > 1024)
			return -1;
		ms->minst = p;
		for (i = 0; i < ms->nminst; i++)
			if (pfc_ecma_type(&skip, NULL, &p, end, NULL) < 0)
				return -1;
	}
	if ((ms->flags & 0x20) && pfc_ecma_type(&skip, NULL, &p, end, NULL) < 0)
		return -1;
	ms->end = p;
	return 0;
}

static int instance_entries(struct pfc_r2rmeta *r, uint32_t rva, uint32_t size)
{
	struct nf s;
	uint32_t h, nb, esz, b, start, stop, prev = 0;

	if (!size)
		return 0;
	if (section_bytes(r, rva, size, &s) < 0 || s.len < 1) {
		r->nr_bad_entries++;
		return 0;
	}
	h = s.p[0];
	esz = 1u << (h & 3);
	if ((h & 3) == 3 || (h >> 2) > 24 || ((uint64_t)(1u << (h >> 2)) + 1) * esz > s.len - 1) {
		r->nr_bad_entries++;
		return 0;
	}
	nb = 1u << (h >> 2);
#define CELL(i) (esz == 1 ? s.p[1 + (i)] : esz == 2 ? pfc_ld16(s.p + 1 + 2 * (size_t)(i), 0) : pfc_ld32(s.p + 1 + 4 * (size_t)(i), 0))
	for (b = 0; b < nb; b++) {
		size_t pos;
		start = CELL(b);
		stop = CELL(b + 1);
		/* buckets follow each other: each byte is walked once */
		if (start < prev || stop < start || (uint64_t)stop + 1 > s.len) {
			r->nr_bad_entries++;
			return 0;
		}
		prev = start;
		pos = 1 + (size_t)start;
		while (pos < 1 + (size_t)stop) {
			size_t field, rec;
			int64_t off;
			struct msig ms;
			uint32_t rf;
			pos++;			/* low byte of the hash */
			field = pos;
			if (nf_int(&s, &pos, &off) < 0) {
				r->nr_bad_entries++;
				return 0;
			}
			if ((int64_t)field + off < 0 || (uint64_t)((int64_t)field + off) >= s.len) {
				r->nr_bad_entries++;
				continue;
			}
			rec = (size_t)((int64_t)field + off);
			if (walk_msig(s.p + rec, s.p + s.len, &ms) < 0 ||
			    entry_rf(&s, (size_t)(ms.end - s.p), &rf) < 0) {
				r->nr_bad_entries++;
				continue;
			}
			add_method(r, rf, INSTANCE | (uint64_t)(s.p + rec - r->buf));
		}
	}
#undef CELL
	return 0;
}

static uint32_t fbegin(const struct pfc_r2rmeta *r, uint32_t i)
{
	return pfc_ld32(r->ftab + (size_t)i * r->esz, 0);
}

/* x64 entries carry their end; the others end where the next one starts */
static uint32_t fend(const struct pfc_r2rmeta *r, uint32_t i)
{
	uint32_t b = fbegin(r, i), e = r->esz == 12 ? pfc_ld32(r->ftab + (size_t)i * 12 + 4, 0) : 0;

	if (e > b)
		return e;
	return i + 1 < r->nfuncs && fbegin(r, i + 1) > b ? fbegin(r, i + 1) : b + 1;
}

static uint32_t pair_cold(const struct pfc_r2rmeta *r, uint32_t i)
{
	return pfc_ld32(r->hc + 8 * (size_t)i, 0);
}

static uint32_t pair_hot(const struct pfc_r2rmeta *r, uint32_t i)
{
	return pfc_ld32(r->hc + 8 * (size_t)i + 4, 0);
}

/* The HotColdMap (§5.5): kept only when its cold indexes are sorted, in range and after
 * every hot fragment; a split method's cold part runs to the next pair's. */
static void hot_cold(struct pfc_r2rmeta *r, uint32_t rva, uint32_t size)
{
	struct nf hc;
	uint32_t i;

	r->first_cold = r->nfuncs;
	if (!size || section_bytes(r, rva, size, &hc) < 0)
		return;
	r->hc = hc.p;
	r->npairs = size / 8;
	for (i = 0; i < r->npairs; i++) {
		uint32_t cold = pair_cold(r, i), hot = pair_hot(r, i);
		if (cold >= r->nfuncs || hot >= r->nfuncs || (i && cold <= pair_cold(r, i - 1)) ||
		    (i && hot <= pair_hot(r, i - 1))) {
			r->npairs = 0;
			r->nr_bad_entries++;
			return;
		}
	}
	if (r->npairs)
		r->first_cold = pair_cold(r, 0);
}

/* The end of the hot part starting at rf: the next method's start, the cold fragments or
 * the table's end. */
static uint32_t hot_end(const struct pfc_r2rmeta *r, uint32_t rf)
{
	uint32_t j = rf + 1;

	while (j < r->first_cold && j < r->nfuncs && !r->owner[j] && j - rf < MAX_FRAGMENTS)
		j++;
	return j;
}

static uint32_t cold_end(const struct pfc_r2rmeta *r, uint32_t pair)
{
	return pair + 1 < r->npairs ? pair_cold(r, pair + 1) : r->nfuncs;
}

static int find_export(const struct pfc_r2rmeta *r, const char *want, uint32_t *rva)
{
	int64_t off = pfc_pe_rva_to_offset(&r->pe, r->pe.export_rva);
	uint32_t nfun, nnames, afun, anames, aord, i;
	int64_t ofun, onames, oord;

	if (!r->pe.export_size || off < 0 || (uint64_t)off + 40 > r->len)
		return -1;
	nfun = pfc_ld32(r->buf + off + 0x14, 0);
	nnames = pfc_ld32(r->buf + off + 0x18, 0);
	afun = pfc_ld32(r->buf + off + 0x1C, 0);
	anames = pfc_ld32(r->buf + off + 0x20, 0);
	aord = pfc_ld32(r->buf + off + 0x24, 0);
	ofun = pfc_pe_rva_to_offset(&r->pe, afun);
	onames = pfc_pe_rva_to_offset(&r->pe, anames);
	oord = pfc_pe_rva_to_offset(&r->pe, aord);
	if (ofun < 0 || onames < 0 || oord < 0 || (uint64_t)ofun + 4ull * nfun > r->len ||
	    (uint64_t)onames + 4ull * nnames > r->len || (uint64_t)oord + 2ull * nnames > r->len)
		return -1;
	for (i = 0; i < nnames; i++) {
		int64_t no = pfc_pe_rva_to_offset(&r->pe, pfc_ld32(r->buf + onames + 4ull * i, 0));
		uint16_t ord;
		size_t wl = strlen(want) + 1;
		if (no < 0 || (uint64_t)no + wl > r->len || memcmp(r->buf + no, want, wl))
			continue;
		ord = pfc_ld16(r->buf + oord + 2ull * i, 0);
		if (ord >= nfun)
			return -1;
		*rva = pfc_ld32(r->buf + ofun + 4ull * ord, 0);
		return 0;
	}
	return -1;
}

static int parse(struct pfc_r2rmeta *r, struct pfc_error *err)
{
	uint32_t hdr_rva = 0, nsec, flags, i;
	int64_t hoff;
	struct r2r_sections sec;
	struct nf s;
	uint32_t esz;
	int ret;

	if ((ret = pfc_pe_parse_headers(r->buf, r->len, &r->pe, err)) < 0)
		return ret;
	if (r->len > UINT32_MAX)
		return PFC_FAIL_NOOFF(err, UNSUPPORTED, "image larger than 4 GiB");
	if (r->pe.is_managed && (r->pe.cor_flags & COR_IL_LIBRARY) && r->pe.native_size)
		hdr_rva = r->pe.native_rva;
	else if (find_export(r, "RTR_HEADER", &hdr_rva) == 0)
		r->composite = 1;
	else
		return PFC_FAIL_NOOFF(err, UNSUPPORTED, "no ReadyToRun code (IL only)");
	hoff = pfc_pe_rva_to_offset(&r->pe, hdr_rva);
	if (hoff < 0 || (uint64_t)hoff + 16 > r->len)
		return PFC_FAIL(err, CORRUPT, 0, "ReadyToRun header at RVA 0x%x outside the image", hdr_rva);
	if (pfc_ld32(r->buf + hoff, 0) != RTR_SIGNATURE)
		return PFC_FAIL(err, UNSUPPORTED, (uint64_t)hoff, "no ReadyToRun signature");
	r->major = pfc_ld16(r->buf + hoff + 4, 0);
	r->minor = pfc_ld16(r->buf + hoff + 6, 0);
	flags = pfc_ld32(r->buf + hoff + 8, 0);
	nsec = pfc_ld32(r->buf + hoff + 12, 0);
	if ((ret = read_sections(r, (uint64_t)hoff + 16, nsec, &sec, err)) < 0)
		return ret;
	if (flags & R2R_FLAG_COMPONENT) {
		struct nf o;
		if (sec.size[SEC_OWNER_COMPOSITE - 100] &&
		    section_bytes(r, sec.rva[SEC_OWNER_COMPOSITE - 100], sec.size[SEC_OWNER_COMPOSITE - 100], &o) == 0)
			return PFC_FAIL_NOOFF(err, UNSUPPORTED, "a component of the composite image '%.*s'",
					      (int)strnlen((const char *)o.p, o.len < 255 ? o.len : 255), o.p);
		return PFC_FAIL_NOOFF(err, UNSUPPORTED, "a component of a composite image");
	}
	/* a composite may also have a CLI header pointing at the same header: the components say */
	if (sec.size[SEC_COMPONENT_ASSEMBLIES - 100])
		r->composite = 1;
	/* RUNTIME_FUNCTIONS: x64 {begin, end, unwind}, the others {begin, unwind} */
	esz = r->pe.machine_plain == 0x8664 ? 12 : 8;
	if (section_bytes(r, sec.rva[SEC_RUNTIME_FUNCTIONS - 100], sec.size[SEC_RUNTIME_FUNCTIONS - 100], &s) < 0)
		return PFC_FAIL_NOOFF(err, CORRUPT, "RUNTIME_FUNCTIONS outside the image");
	r->nfuncs = (uint32_t)(s.len / esz);
	r->esz = esz;
	r->ftab = s.p;
	for (i = 1; i < r->nfuncs; i++)
		if (fbegin(r, i) < fbegin(r, i - 1))
			return PFC_FAIL(err, CORRUPT, (uint64_t)(s.p - r->buf) + (uint64_t)i * esz,
					"RUNTIME_FUNCTIONS not sorted");
	r->owner = calloc((size_t)r->nfuncs + 1, sizeof(*r->owner));
	if (!r->owner)
		return PFC_FAIL_NOOFF(err, NOMEM, "ReadyToRun methods");
	/* the manifest: module override indexes and composite components */
	if (sec.size[SEC_MANIFEST_METADATA - 100] &&
	    section_bytes(r, sec.rva[SEC_MANIFEST_METADATA - 100], sec.size[SEC_MANIFEST_METADATA - 100], &s) == 0) {
		struct pfc_error e;
		memset(&e, 0, sizeof(e));
		r->has_manifest = pfc_ecma_open(&r->manifest, s.p, s.len, &e) == 0;
	}
	r->corelib = NONE;
	if (!r->composite) {
		/* module 0: the image's own metadata */
		const struct pfc_ecma *own;
		if (add_module(r, "", 0) == NONE)
			return PFC_FAIL_NOOFF(err, NOMEM, "modules");
		r->mods[0].cor_rva = 0;
		r->mods[0].state = -1;
		if (r->pe.md_size) {
			int64_t off = pfc_pe_rva_to_offset(&r->pe, r->pe.md_rva);
			if (off < 0 || (uint64_t)off + r->pe.md_size > r->len)
				return PFC_FAIL_NOOFF(err, CORRUPT, "metadata outside the image");
			if ((ret = pfc_ecma_open(&r->mods[0].md, r->buf + off, r->pe.md_size, err)) < 0)
				return ret;
			r->mods[0].state = 1;
		}
		own = module_md(r, 0);
		if (!own)
			return PFC_FAIL_NOOFF(err, CORRUPT, "ReadyToRun image without metadata");
		free(r->mods[0].name);
		r->mods[0].name = strdup(own->name);
		if (!r->mods[0].name)
			return PFC_FAIL_NOOFF(err, NOMEM, "modules");
		if ((ret = methoddef_entries(r, sec.rva[SEC_METHODDEF_ENTRYPOINTS - 100],
					     sec.size[SEC_METHODDEF_ENTRYPOINTS - 100], 0)) < 0)
			return PFC_FAIL_NOOFF(err, NOMEM, "ReadyToRun methods");
	} else {
		/* ComponentAssemblies: {CorHeaderRVA, size, CoreHeaderRVA, size} per manifest AssemblyRef */
		uint32_t n = sec.size[SEC_COMPONENT_ASSEMBLIES - 100] / 16;
		if (!r->has_manifest)
			return PFC_FAIL_NOOFF(err, CORRUPT, "composite image without manifest metadata");
		if (section_bytes(r, sec.rva[SEC_COMPONENT_ASSEMBLIES - 100], n * 16, &s) < 0)
			return PFC_FAIL_NOOFF(err, CORRUPT, "ComponentAssemblies outside the image");
		if (n > r->manifest.rows[PFC_MD_ASSEMBLYREF])
			n = r->manifest.rows[PFC_MD_ASSEMBLYREF];
		for (i = 0; i < n; i++) {
			const char *name = pfc_ecma_str(&r->manifest, pfc_ecma_col(&r->manifest, PFC_MD_ASSEMBLYREF, i + 1, 3));
			uint32_t cor = pfc_ld32(s.p + 16 * i, 0), core = pfc_ld32(s.p + 16 * i + 8, 0);
			int64_t coff = pfc_pe_rva_to_offset(&r->pe, core);
			struct r2r_sections cs;
			struct pfc_error e;
			uint32_t k = add_module(r, name, strlen(name));
			if (k == NONE)
				return PFC_FAIL_NOOFF(err, NOMEM, "modules");
			r->mods[k].cor_rva = cor;
			if (!strcmp(name, "System.Private.CoreLib"))
				r->corelib = k;
			memset(&e, 0, sizeof(e));
			if (coff < 0 || (uint64_t)coff + 8 > r->len ||
			    read_sections(r, (uint64_t)coff + 8, pfc_ld32(r->buf + coff + 4, 0), &cs, &e) < 0) {
				r->nr_bad_entries++;
				continue;
			}
			if ((ret = methoddef_entries(r, cs.rva[SEC_METHODDEF_ENTRYPOINTS - 100],
						     cs.size[SEC_METHODDEF_ENTRYPOINTS - 100], k)) < 0)
				return PFC_FAIL_NOOFF(err, NOMEM, "ReadyToRun methods");
		}
	}
	if ((ret = instance_entries(r, sec.rva[SEC_INSTANCE_ENTRYPOINTS - 100], sec.size[SEC_INSTANCE_ENTRYPOINTS - 100])) < 0)
		return PFC_FAIL_NOOFF(err, NOMEM, "ReadyToRun methods");
	hot_cold(r, sec.rva[SEC_HOT_COLD_MAP - 100], sec.size[SEC_HOT_COLD_MAP - 100]);
	return 0;
}

int pfc_r2rmeta_parse(const uint8_t *buf, size_t len, const char *dir, struct pfc_r2rmeta **out,
		      struct pfc_error *err)
{
	struct pfc_r2rmeta *r = calloc(1, sizeof(*r));
	int ret;

	*out = NULL;
	if (!r)
		return PFC_FAIL_NOOFF(err, NOMEM, "ReadyToRun image");
	r->buf = buf;
	r->len = len;
	if (dir && !(r->dir = strdup(dir))) {
		free(r);
		return PFC_FAIL_NOOFF(err, NOMEM, "ReadyToRun image");
	}
	ret = parse(r, err);
	if (ret < 0) {
		pfc_r2rmeta_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

int pfc_r2rmeta_open(const char *path, struct pfc_r2rmeta **out, struct pfc_error *err)
{
	void *map;
	size_t len;
	char dir[4096];
	const char *slash = strrchr(path, '/');
	int ret;

	*out = NULL;
	if (pfc_map_file(path, UINT32_MAX, &map, &len) < 0)
		return PFC_FAIL_NOOFF(err, OPEN, "'%s': %s", path, errno ? strerror(errno) : "not a regular file");
	if (slash && (size_t)(slash - path) < sizeof(dir)) {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = 0;
		if (slash == path)
			strcpy(dir, "/");
	} else {
		strcpy(dir, ".");
	}
	ret = pfc_r2rmeta_parse(map, len, dir, out, err);
	if (ret < 0) {
		munmap(map, len);
		return ret;
	}
	(*out)->own_map = map;
	return 0;
}

void pfc_r2rmeta_use_files(struct pfc_r2rmeta *r, struct pfc_files *files, enum pfc_files_base base, const char *rel)
{
	const char *slash = strrchr(rel, '/');

	free(r->files_dir);
	r->files_dir = strndup(rel, slash ? (size_t)(slash - rel) : 0);
	r->files = r->files_dir ? files : NULL;
	r->files_base = base;
}

void pfc_r2rmeta_free(struct pfc_r2rmeta *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nmods; i++) {
		free(r->mods[i].name);
		if (r->mods[i].map)
			munmap(r->mods[i].map, r->mods[i].map_len);
	}
	free(r->mods);
	free(r->owner);
	free(r->dir);
	free(r->files_dir);
	free(r->tmp.buf);
	pfc_pe_free(&r->pe);
	if (r->own_map)
		munmap(r->own_map, r->len);
	free(r);
}

const char *pfc_r2rmeta_module_file(const struct pfc_r2rmeta *r, size_t k)
{
	return k < r->nmods && r->mods[k].map ? r->mods[k].name : NULL;
}

size_t pfc_r2rmeta_nr_modules(const struct pfc_r2rmeta *r)
{
	return r->nmods;
}

const struct pfc_pe *pfc_r2rmeta_pe(const struct pfc_r2rmeta *r)
{
	return &r->pe;
}

void pfc_r2rmeta_stats(const struct pfc_r2rmeta *r, struct pfc_r2rmeta_stats *st)
{
	st->nr_funcs = r->nfuncs;
	st->nr_methods = r->nm;
	st->nr_components = r->composite ? r->nmods : 1;
	st->nr_bad_entries = r->nr_bad_entries;
	st->nr_bad_names = r->nr_bad_names;
	st->composite = r->composite;
}

int pfc_r2rmeta_find(const struct pfc_r2rmeta *r, uint32_t rva, struct pfc_r2rmeta_hit *hit)
{
	uint32_t lo = 0, hi = r->nfuncs, i, j, end;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (fbegin(r, mid) <= rva)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || rva >= fend(r, lo - 1))
		return -1;
	i = lo - 1;
	if (i >= r->first_cold) {
		/* the pair whose cold range holds i */
		lo = 0;
		hi = r->npairs;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (pair_cold(r, mid) <= i)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo || !r->owner[pair_hot(r, lo - 1)])
			return -1;
		hit->method = pair_hot(r, lo - 1);
		hit->cold = 1;
		j = pair_cold(r, lo - 1);
		end = cold_end(r, lo - 1);
	} else {
		/* back to the entry that owns the fragment: a funclet follows its method */
		for (j = i; !r->owner[j]; j--)
			if (!j || i - j >= MAX_FRAGMENTS)
				return -1;
		hit->method = j;
		hit->cold = 0;
		end = hot_end(r, j);
	}
	/* the same i, so the same part, for every RVA from i's begin up to its end or the next
	 * function's begin */
	hit->span_begin = fbegin(r, i);
	hit->span_end = fend(r, i);
	if (i + 1 < r->nfuncs && fbegin(r, i + 1) < hit->span_end)
		hit->span_end = fbegin(r, i + 1);
	hit->begin = fbegin(r, j);
	hit->end = fend(r, end - 1);
	if (hit->end <= hit->begin)
		hit->end = hit->begin + 1;
	return 0;
}

/* Type arguments of a generic owner signature ([0x3F idx] 0x15 CLASS|VALUETYPE tok n args). */
static uint32_t owner_args(const struct pfc_ecma *md, const uint8_t *p, const uint8_t *end, struct pfc_typearg *a,
			   uint32_t max)
{
	static const struct pfc_sigfmt skip = { .style = PFC_SIG_R2RMAP };
	uint32_t v, n, i;

	if (p < end && *p == 0x3F) {
		p++;
		if (pfc_ecma_uncompress(&p, end, &v) < 0)
			return 0;
	}
	if (p >= end || *p++ != 0x15)
		return 0;
	if (pfc_ecma_type(&skip, md, &p, end, NULL) < 0 || pfc_ecma_uncompress(&p, end, &n) < 0)
		return 0;
	for (i = 0; i < n && i < max; i++) {
		a[i].md = md;
		a[i].p = p;
		if (pfc_ecma_type(&skip, md, &p, end, NULL) < 0)
			return 0;
		a[i].end = p;
	}
	return i;
}

int pfc_r2rmeta_format(struct pfc_r2rmeta *r, size_t mi, enum pfc_r2rmeta_style style, int cold, struct pfc_sb *sb)
{
	uint64_t entry;
	const struct pfc_ecma *ctx, *mmd;
	struct pfc_sigfmt f = { .module = module_of_index, .ctx = r };
	struct pfc_typearg targs[64], margs[64];
	struct msig ms;
	struct pfc_sb name = { 0 };
	const uint8_t *sig;
	uint32_t sig_len, rid, owner_td = 0, i;
	size_t start = sb->len;
	int ret = -1;

	if (mi >= r->nfuncs || !(entry = r->owner[mi]))
		return -1;
	memset(&ms, 0, sizeof(ms));
	if (!(entry & INSTANCE)) {
		mmd = ctx = module_md(r, (uint32_t)(entry >> 32));
		rid = (uint32_t)entry;
		if (!mmd)
			return -1;
		owner_td = pfc_ecma_method_owner(mmd, rid);
	} else {
		if (walk_msig(r->buf + (uint32_t)entry, r->buf + r->len, &ms) < 0)
			return -1;
		/* the token context: the image's module, or the composite's CoreLib for owners
		 * given without a module (primitives, string, object) */
		ctx = module_md(r, r->composite ? r->corelib : 0);
		if (ms.flags & 0x80)
			ctx = module_of_index(r, ctx, ms.ctx_index);
		mmd = ctx;
		if (ms.owner && ms.owner < ms.owner_end && ms.owner[0] == 0x3F) {
			const uint8_t *q = ms.owner + 1;
			uint32_t idx;
			if (pfc_ecma_uncompress(&q, ms.owner_end, &idx) < 0 || !(mmd = module_of_index(r, ctx, idx)))
				return -1;
		}
		/* a composite without CoreLib among its components (framework-dependent): types
		 * given without a module are primitives, which need no metadata */
		if (!ctx)
			ctx = mmd;
		if (!ctx)
			return -1;
		rid = ms.rid;
		if (!ms.owner)
			owner_td = pfc_ecma_method_owner(mmd, rid);
	}
	if (!rid || rid > mmd->rows[PFC_MD_METHODDEF] ||
	    pfc_ecma_blob(mmd, pfc_ecma_col(mmd, PFC_MD_METHODDEF, rid, 4), &sig, &sig_len) < 0)
		return -1;
	/* "[Asm] Owner::Name" (runtime) or "Owner::Name" (r2rmap) */
	if (style == PFC_R2RMETA_RUNTIME) {
		f.style = PFC_SIG_TYPESTRING;
		pfc_sb_addc(&name, '[');
		pfc_sb_adds(&name, mmd->name);
		pfc_sb_adds(&name, "] ");
	} else {
		f.style = PFC_SIG_R2RMAP;
	}
	if (ms.owner) {
		const uint8_t *q = ms.owner;
		if (pfc_ecma_type(&f, ctx, &q, ms.owner_end, &name) < 0)
			goto out;
	} else if (pfc_ecma_token(&f, mmd, (uint32_t)PFC_MD_TYPEDEF << 24 | owner_td, &name) < 0) {
		goto out;
	}
	pfc_sb_adds(&name, "::");
	pfc_sb_adds(&name, pfc_ecma_str(mmd, pfc_ecma_col(mmd, PFC_MD_METHODDEF, rid, 3)));
	if (name.oom)
		goto out;
	if (style == PFC_R2RMETA_RUNTIME) {
		f.style = PFC_SIG_ILDASM;
	} else {
		if (ms.owner)
			f.ntargs = owner_args(ctx, ms.owner, ms.owner_end, targs, 64);
		f.targs = targs;
		if (ms.minst) {
			const uint8_t *q = ms.minst;
			static const struct pfc_sigfmt skip = { .style = PFC_SIG_R2RMAP };
			for (i = 0; i < ms.nminst && i < 64; i++) {
				margs[i].md = ctx;
				margs[i].p = q;
				if (pfc_ecma_type(&skip, ctx, &q, ms.end, NULL) < 0)
					goto out;
				margs[i].end = q;
			}
			f.nmargs = i;
		}
		f.margs = margs;
	}
	if (pfc_ecma_method_sig(&f, mmd, sig, sig_len, name.buf, name.len, sb) < 0)
		goto out;
	if (style == PFC_R2RMETA_RUNTIME)
		pfc_sb_adds(sb, cold ? "[PreJit-cold]" : "[PreJIT]");
	ret = sb->oom ? -1 : 0;
out:
	if (ret < 0 && sb->len > start) {
		sb->len = start;
		sb->buf[start] = 0;
	}
	free(name.buf);
	return ret;
}

const char *pfc_r2rmeta_name(struct pfc_r2rmeta *r, size_t mi, int cold)
{
	r->tmp.len = 0;
	if (r->tmp.buf)
		r->tmp.buf[0] = 0;
	if (pfc_r2rmeta_format(r, mi, PFC_R2RMETA_RUNTIME, cold, &r->tmp) < 0) {
		r->nr_bad_names++;
		return NULL;
	}
	return r->tmp.buf;
}

static const int arch_of_machine[][2] = {
	{ 0x1c4, 1 }, { 0xaa64, 2 }, { 0x8664, 3 }, { 0x14c, 4 }, { 0x5064, 5 }, { 0x6264, 6 },
};

int pfc_r2rmeta_dump(struct pfc_r2rmeta *r, enum pfc_r2rmeta_style style, FILE *out)
{
	struct pfc_sb sb = { 0 };
	size_t i, bad = 0;

	if (style == PFC_R2RMETA_R2RMAP && r->pe.has_perfmap) {
		int arch = 0;
		char sig[33];
		fprintf(out, "FFFFFFFF 00 %s", pfc_hex_format_upper(sig, r->pe.perfmap_sig, 16));
		for (i = 0; i < sizeof(arch_of_machine) / sizeof(arch_of_machine[0]); i++)
			if (arch_of_machine[i][0] == r->pe.machine_plain)
				arch = arch_of_machine[i][1];
		fprintf(out, "\nFFFFFFFE 00 %u\nFFFFFFFD 00 %d\nFFFFFFFC 00 %d\nFFFFFFFB 00 1\n", r->pe.perfmap_version,
			r->pe.target_os, arch);
	}
	/* hot parts in RVA order, then the cold parts, which all follow them */
	for (i = 0; i < r->nfuncs + (size_t)r->npairs; i++) {
		uint32_t j, end;
		int cold = i >= r->nfuncs;
		if (!cold) {
			if (i >= r->first_cold || !r->owner[i])
				continue;
			j = (uint32_t)i;
			end = hot_end(r, j);
		} else {
			uint32_t k = (uint32_t)(i - r->nfuncs);
			if (style == PFC_R2RMETA_R2RMAP || !r->owner[pair_hot(r, k)])
				continue;
			j = pair_cold(r, k);
			end = cold_end(r, k);
		}
		sb.len = 0;
		if (pfc_r2rmeta_format(r, cold ? pair_hot(r, (uint32_t)(i - r->nfuncs)) : j, style, cold, &sb) < 0) {
			bad++;
			pfc_sb_adds(&sb, "?");
		}
		if (sb.oom) {
			free(sb.buf);
			return -PFC_ERR_NOMEM;
		}
		fprintf(out, "%08X %02X %s\n", fbegin(r, j), fend(r, end - 1) > fbegin(r, j) ? fend(r, end - 1) - fbegin(r, j) : 1, sb.buf);
	}
	free(sb.buf);
	return (int)(bad > 0x7FFFFFFF ? 0x7FFFFFFF : bad);
}
