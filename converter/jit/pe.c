/*
 * pe.c - PE/COFF headers of .NET images, read from untrusted bytes: DOS and PE headers,
 * the optional header (PE32 and PE32+), sections, the debug directory (CodeView RSDS and
 * the R2R perf map entry), the CLR header with the MVID from the metadata, and the
 * ReadyToRun header's RUNTIME_FUNCTIONS.  Everything is read through struct pfc_cursor;
 * nothing is cast onto file bytes.  It does not find or read map files (r2rmap.c does).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "converter/util/bytes.h"
#include "converter/jit/pe.h"

#define IMAGE_DOS_SIGNATURE 0x5A4D
#define IMAGE_NT_SIGNATURE 0x00004550
#define PE32_MAGIC 0x10b
#define PE32PLUS_MAGIC 0x20b
#define DIR_DEBUG 6
#define DIR_CLR 14
#define RTR_SIGNATURE 0x00525452	/* "RTR" */
#define R2R_SECTION_RUNTIME_FUNCTIONS 102
#define CV_RSDS 0x53445352		/* "RSDS" */
#define R2RM_MAGIC 0x4D523252		/* "R2RM" */
#define METADATA_SIGNATURE 0x424A5342	/* "BSJB" */

/* R2R images built for a non-Windows OS XOR the machine with an OS value
 * (crossgen2 TargetExtensions MachineOSOverride); numbering as in the r2rmap header. */
static const struct { uint16_t xor_val; int os; } os_override[] = {
	{ 0x7B79, 2 },	/* Linux */
	{ 0x4644, 3 },	/* Apple */
	{ 0xADC4, 4 },	/* FreeBSD */
	{ 0x1993, 5 },	/* NetBSD */
	{ 0x1992, 6 },	/* SunOS */
};

static int known_machine(uint16_t m)
{
	return m == 0x14c || m == 0x8664 || m == 0xaa64 || m == 0x1c4 || m == 0x5064 || m == 0x6264;
}

static uint16_t cur_u16(struct pfc_cursor *c)
{
	uint16_t v;
	if (!pfc_cur_need(c, 2))
		return 0;
	v = pfc_ld16(c->p, 0);
	c->p += 2;
	return v;
}

static int seek(struct pfc_cursor *c, const uint8_t *buf, size_t len, uint64_t off)
{
	if (off > len) {
		c->bad = 1;
		return -1;
	}
	pfc_cur_init(c, buf + off, len - off, 0);
	return 0;
}

int pfc_pe_sniff(const uint8_t *buf, size_t len)
{
	uint32_t lfanew;

	if (len < 0x40 || pfc_ld16(buf, 0) != IMAGE_DOS_SIGNATURE)
		return 0;
	lfanew = pfc_ld32(buf + 0x3c, 0);
	return (uint64_t)lfanew + 4 <= len && pfc_ld32(buf + lfanew, 0) == IMAGE_NT_SIGNATURE;
}

int64_t pfc_pe_rva_to_offset(const struct pfc_pe *pe, uint64_t rva)
{
	uint32_t i;

	if (rva < pe->size_of_headers && rva < (pe->nsections ? pe->sec[0].va : UINT32_MAX))
		return (int64_t)rva;
	for (i = 0; i < pe->nsections; i++) {
		const struct pfc_pe_section *s = &pe->sec[i];
		if (rva >= s->va && rva - s->va < s->raw_size)
			return (int64_t)(s->raw + (rva - s->va));
	}
	return -1;
}

int64_t pfc_pe_offset_to_rva(const struct pfc_pe *pe, uint64_t off)
{
	uint32_t i;

	for (i = 0; i < pe->nsections; i++) {
		const struct pfc_pe_section *s = &pe->sec[i];
		uint32_t n = s->raw_size;
		if (s->vsize && s->vsize < n)
			n = s->vsize;
		if (off >= s->raw && off - s->raw < n)
			return (int64_t)(s->va + (off - s->raw));
	}
	return -1;
}

void pfc_pe_guid_str(const uint8_t g[16], char *out)
{
	sprintf(out, "{%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x}",
		g[3], g[2], g[1], g[0], g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12], g[13], g[14],
		g[15]);
}

int pfc_pe_guid_parse(const char *s, size_t len, uint8_t g[16])
{
	/* byte order of the text's 16 bytes in the stored GUID */
	static const int pos[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
	uint8_t b[16];
	size_t i;
	int n = 0;

	if (len >= 2 && s[0] == '{' && s[len - 1] == '}') {
		s++;
		len -= 2;
	}
	if (len != 36)
		return -1;
	for (i = 0; i < len;) {
		int hi, lo;
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return -1;
			i++;
			continue;
		}
		hi = pfc_hexval((unsigned char)s[i]);
		lo = i + 1 < len ? pfc_hexval((unsigned char)s[i + 1]) : -1;
		if (hi < 0 || lo < 0 || n >= 16)
			return -1;
		b[n++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	if (n != 16)
		return -1;
	for (i = 0; i < 16; i++)
		g[pos[i]] = b[i];
	return 0;
}

static void copy_cstr(char *dst, size_t size, const uint8_t *p, size_t avail)
{
	size_t n = strnlen((const char *)p, avail);
	if (n >= size)
		n = size - 1;
	memcpy(dst, p, n);
	dst[n] = 0;
}

/* One debug directory entry; damage leaves the entry unused. */
static void parse_debug_entry(struct pfc_pe *pe, const uint8_t *buf, size_t len, uint32_t type,
			      uint32_t size, uint32_t file_off)
{
	struct pfc_cursor c;

	if ((uint64_t)file_off + size > len || size < 4)
		return;
	pfc_cur_init(&c, buf + file_off, size, 0);
	if (type == PFC_PE_DEBUG_CODEVIEW) {
		const uint8_t *g;
		if (pfc_cur_u32(&c) != CV_RSDS)
			return;
		g = pfc_cur_bytes(&c, 16);
		pe->cv_age = pfc_cur_u32(&c);
		if (c.bad || !g)
			return;
		memcpy(pe->cv_guid, g, 16);
		copy_cstr(pe->cv_pdb, sizeof(pe->cv_pdb), c.p, pfc_cur_left(&c));
		pe->has_codeview = 1;
	} else if (type == PFC_PE_DEBUG_R2R_PERFMAP) {
		const uint8_t *sig;
		if (pfc_cur_u32(&c) != R2RM_MAGIC)
			return;
		sig = pfc_cur_bytes(&c, 16);
		pe->perfmap_version = pfc_cur_u32(&c);
		if (c.bad || !sig)
			return;
		memcpy(pe->perfmap_sig, sig, 16);
		copy_cstr(pe->perfmap_name, sizeof(pe->perfmap_name), c.p, pfc_cur_left(&c));
		/* a name with a path separator could point anywhere: keep only plain names */
		if (strchr(pe->perfmap_name, '/') || !strcmp(pe->perfmap_name, "..") || !strcmp(pe->perfmap_name, "."))
			pe->perfmap_name[0] = 0;
		pe->has_perfmap = 1;
	}
}

/* The metadata root -> "#~" Module row -> "#GUID": the MVID. */
static void parse_mvid(struct pfc_pe *pe, const uint8_t *buf, size_t len, uint32_t md_rva, uint32_t md_size)
{
	int64_t off = pfc_pe_rva_to_offset(pe, md_rva);
	struct pfc_cursor c;
	uint32_t vlen, i, nstreams;
	uint64_t tbl_off = 0, tbl_size = 0, guid_off = 0, guid_size = 0;
	uint64_t valid;
	uint8_t heaps;
	uint32_t guid_idx;

	if (off < 0 || (uint64_t)off + md_size > len || md_size < 16)
		return;
	pfc_cur_init(&c, buf + off, md_size, 0);
	if (pfc_cur_u32(&c) != METADATA_SIGNATURE)
		return;
	pfc_cur_bytes(&c, 8);		/* major, minor, reserved */
	vlen = pfc_cur_u32(&c);
	pfc_cur_bytes(&c, vlen);
	cur_u16(&c);			/* flags */
	nstreams = cur_u16(&c);
	for (i = 0; i < nstreams && !c.bad; i++) {
		uint32_t so = pfc_cur_u32(&c), ss = pfc_cur_u32(&c);
		size_t n = strnlen((const char *)c.p, pfc_cur_left(&c) < 32 ? pfc_cur_left(&c) : 32);
		const char *name = (const char *)c.p;
		if (n >= 32 || n == pfc_cur_left(&c))
			return;
		if ((n == 2 && !memcmp(name, "#~", 2)) || (n == 2 && !memcmp(name, "#-", 2))) {
			tbl_off = so;
			tbl_size = ss;
		} else if (n == 5 && !memcmp(name, "#GUID", 5)) {
			guid_off = so;
			guid_size = ss;
		}
		pfc_cur_bytes(&c, (n + 1 + 3) & ~(size_t)3);
	}
	if (c.bad || !tbl_size || !guid_size || tbl_off + tbl_size > md_size || guid_off + guid_size > md_size)
		return;
	pfc_cur_init(&c, buf + off + tbl_off, tbl_size, 0);
	pfc_cur_bytes(&c, 6);		/* reserved, major, minor */
	heaps = 0;
	{
		const uint8_t *h = pfc_cur_bytes(&c, 2);
		if (h)
			heaps = h[0];
	}
	valid = pfc_cur_u64(&c);
	pfc_cur_u64(&c);		/* sorted */
	if (!(valid & 1))		/* no Module table */
		return;
	for (i = 0; i < 64; i++)
		if (valid >> i & 1)
			pfc_cur_u32(&c);
	if (heaps & 0x20)		/* extra data (uncompressed "#-" tables) */
		pfc_cur_u32(&c);
	cur_u16(&c);			/* Module.Generation */
	if (heaps & 1)			/* Module.Name: string heap index */
		pfc_cur_u32(&c);
	else
		cur_u16(&c);
	guid_idx = heaps & 2 ? pfc_cur_u32(&c) : cur_u16(&c);
	if (c.bad || !guid_idx || (uint64_t)guid_idx * 16 > guid_size)
		return;
	memcpy(pe->mvid, buf + off + guid_off + (uint64_t)(guid_idx - 1) * 16, 16);
	pe->has_mvid = 1;
}

static int cmp_func(const void *a, const void *b)
{
	const struct pfc_pe_func *x = a, *y = b;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* The READYTORUN header; with funcs, its RUNTIME_FUNCTIONS table too. */
static int parse_r2r(struct pfc_pe *pe, const uint8_t *buf, size_t len, uint32_t rva, uint32_t size, int funcs)
{
	int64_t off = pfc_pe_rva_to_offset(pe, rva);
	struct pfc_cursor c;
	uint32_t i, nsec, fr_rva = 0, fr_size = 0, esz;

	if (off < 0 || (uint64_t)off + size > len || size < 16)
		return 0;
	pfc_cur_init(&c, buf + off, size, 0);
	if (pfc_cur_u32(&c) != RTR_SIGNATURE)
		return 0;
	pe->r2r_major = cur_u16(&c);
	pe->r2r_minor = cur_u16(&c);
	pe->r2r_flags = pfc_cur_u32(&c);
	nsec = pfc_cur_u32(&c);
	pe->is_r2r = 1;
	if (!funcs)
		return 0;
	/* the section array may run past the directory's stated size in some writers: bound
	 * it by the file instead */
	pfc_cur_init(&c, buf + off + 16, len - (uint64_t)off - 16, 0);
	for (i = 0; i < nsec && !c.bad; i++) {
		uint32_t t = pfc_cur_u32(&c), r = pfc_cur_u32(&c), s = pfc_cur_u32(&c);
		if (!c.bad && t == R2R_SECTION_RUNTIME_FUNCTIONS) {
			fr_rva = r;
			fr_size = s;
		}
	}
	if (!fr_size)
		return 0;
	/* x64 and x86 RUNTIME_FUNCTIONs carry an end; ARM ones do not */
	esz = (pe->machine_plain == 0x8664 || pe->machine_plain == 0x14c) ? 12 : 8;
	off = pfc_pe_rva_to_offset(pe, fr_rva);
	if (off < 0 || (uint64_t)off + fr_size > len)
		return 0;
	pe->funcs = malloc((fr_size / esz + 1) * sizeof(*pe->funcs));
	if (!pe->funcs)
		return -PFC_ERR_NOMEM;
	pfc_cur_init(&c, buf + off, fr_size, 0);
	while (pfc_cur_left(&c) >= esz) {
		struct pfc_pe_func *f = &pe->funcs[pe->nr_funcs];
		f->begin = pfc_cur_u32(&c);
		f->end = esz == 12 ? pfc_cur_u32(&c) : 0;
		pfc_cur_u32(&c);	/* unwind data */
		pe->nr_funcs++;
	}
	/* crossgen2 writes them sorted: check before paying for a sort */
	for (i = 1; i < pe->nr_funcs && pe->funcs[i - 1].begin <= pe->funcs[i].begin; i++)
		;
	if (i < pe->nr_funcs)
		qsort(pe->funcs, pe->nr_funcs, sizeof(*pe->funcs), cmp_func);
	for (i = 0; i < pe->nr_funcs; i++) {
		struct pfc_pe_func *f = &pe->funcs[i];
		if (f->end <= f->begin)
			f->end = i + 1 < pe->nr_funcs ? pe->funcs[i + 1].begin : f->begin + 1;
	}
	return 0;
}

const struct pfc_pe_func *pfc_pe_find_func(const struct pfc_pe *pe, uint32_t rva)
{
	size_t lo = 0, hi = pe->nr_funcs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pe->funcs[mid].begin <= rva)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && rva < pe->funcs[lo - 1].end)
		return &pe->funcs[lo - 1];
	return NULL;
}

/* How much of an image parse reads: the headers (not the READYTORUN one), the READYTORUN
 * header too, or its RUNTIME_FUNCTIONS table as well (one entry a method). */
enum { PE_HEADERS, PE_R2R, PE_FUNCS };

static int parse(const uint8_t *buf, size_t len, struct pfc_pe *pe, struct pfc_error *err, int level)
{
	struct pfc_cursor c;
	uint32_t lfanew, i, ndirs, opt_size;
	uint64_t opt_start;
	uint16_t magic;
	uint32_t dir_rva[16] = { 0 }, dir_size[16] = { 0 };
	int ret;

	memset(pe, 0, sizeof(*pe));
	if (len < 0x40 || pfc_ld16(buf, 0) != IMAGE_DOS_SIGNATURE)
		return PFC_FAIL(err, BAD_MAGIC, 0, "not a PE image (no MZ header)");
	lfanew = pfc_ld32(buf + 0x3c, 0);
	if (seek(&c, buf, len, lfanew) < 0 || pfc_cur_u32(&c) != IMAGE_NT_SIGNATURE)
		return PFC_FAIL(err, BAD_MAGIC, 0x3c, "no PE signature at e_lfanew %u", lfanew);
	/* COFF file header */
	pe->machine = cur_u16(&c);
	pe->nsections = cur_u16(&c);
	pe->timestamp = pfc_cur_u32(&c);
	pfc_cur_bytes(&c, 8);		/* symbol table, number of symbols */
	opt_size = cur_u16(&c);
	cur_u16(&c);			/* characteristics */
	if (c.bad)
		return PFC_FAIL(err, TRUNCATED, lfanew, "PE file header is cut short");
	pe->machine_plain = pe->machine;
	if (!known_machine(pe->machine)) {
		for (i = 0; i < sizeof(os_override) / sizeof(os_override[0]); i++)
			if (known_machine(pe->machine ^ os_override[i].xor_val)) {
				pe->machine_plain = pe->machine ^ os_override[i].xor_val;
				pe->target_os = os_override[i].os;
				break;
			}
	} else {
		pe->target_os = 1;
	}
	if (pe->nsections > PFC_PE_MAX_SECTIONS)
		return PFC_FAIL(err, CORRUPT, lfanew + 6, "PE image with %u sections", pe->nsections);
	/* optional header */
	opt_start = (uint64_t)(c.p - buf);
	if (opt_size < 2 || opt_start + opt_size > len)
		return PFC_FAIL(err, TRUNCATED, opt_start, "PE optional header of %u bytes is cut short", opt_size);
	pfc_cur_init(&c, buf + opt_start, opt_size, 0);
	magic = cur_u16(&c);
	if (magic != PE32_MAGIC && magic != PE32PLUS_MAGIC)
		return PFC_FAIL(err, CORRUPT, opt_start, "unknown PE optional header magic 0x%x", magic);
	pe->pe32plus = magic == PE32PLUS_MAGIC;
	pfc_cur_bytes(&c, 22);		/* linker version .. BaseOfCode */
	if (pe->pe32plus) {
		pe->image_base = pfc_cur_u64(&c);
	} else {
		pfc_cur_u32(&c);	/* BaseOfData */
		pe->image_base = pfc_cur_u32(&c);
	}
	pfc_cur_bytes(&c, 24);		/* alignments .. Win32VersionValue */
	pe->size_of_image = pfc_cur_u32(&c);
	pe->size_of_headers = pfc_cur_u32(&c);
	pfc_cur_bytes(&c, 8);		/* checksum, subsystem, dll characteristics */
	pfc_cur_bytes(&c, pe->pe32plus ? 32 : 16);	/* stack and heap sizes */
	pfc_cur_u32(&c);		/* loader flags */
	ndirs = pfc_cur_u32(&c);
	if (c.bad)
		return PFC_FAIL(err, TRUNCATED, opt_start, "PE optional header is cut short");
	for (i = 0; i < ndirs && i < 16 && pfc_cur_left(&c) >= 8; i++) {
		dir_rva[i] = pfc_cur_u32(&c);
		dir_size[i] = pfc_cur_u32(&c);
	}
	pe->export_rva = dir_rva[0];
	pe->export_size = dir_size[0];
	/* section table */
	if (seek(&c, buf, len, opt_start + opt_size) < 0)
		return PFC_FAIL(err, TRUNCATED, opt_start + opt_size, "PE section table is missing");
	for (i = 0; i < pe->nsections; i++) {
		struct pfc_pe_section *s = &pe->sec[i];
		const uint8_t *nm = pfc_cur_bytes(&c, 8);
		s->vsize = pfc_cur_u32(&c);
		s->va = pfc_cur_u32(&c);
		s->raw_size = pfc_cur_u32(&c);
		s->raw = pfc_cur_u32(&c);
		pfc_cur_bytes(&c, 12);	/* relocations, line numbers */
		s->characteristics = pfc_cur_u32(&c);
		if (c.bad || !nm)
			return PFC_FAIL(err, TRUNCATED, opt_start + opt_size + (uint64_t)i * 40,
					"PE section header %u is cut short", i);
		memcpy(s->name, nm, 8);
		s->name[8] = 0;
		/* a raw range beyond the file: keep only what is there */
		if (s->raw > len)
			s->raw_size = 0;
		else if ((uint64_t)s->raw + s->raw_size > len)
			s->raw_size = (uint32_t)(len - s->raw);
	}
	/* debug directory: 28-byte entries */
	if (dir_size[DIR_DEBUG]) {
		int64_t off = pfc_pe_rva_to_offset(pe, dir_rva[DIR_DEBUG]);
		if (off >= 0 && (uint64_t)off + dir_size[DIR_DEBUG] <= len) {
			pfc_cur_init(&c, buf + off, dir_size[DIR_DEBUG], 0);
			while (pfc_cur_left(&c) >= 28) {
				uint32_t type, size, ptr;
				pfc_cur_bytes(&c, 12);	/* characteristics, time stamp, versions */
				type = pfc_cur_u32(&c);
				size = pfc_cur_u32(&c);
				pfc_cur_u32(&c);	/* AddressOfRawData */
				ptr = pfc_cur_u32(&c);
				parse_debug_entry(pe, buf, len, type, size, ptr);
			}
		}
	}
	/* CLR header: MetaData at 8, ManagedNativeHeader (the R2R header) at 64 */
	if (dir_size[DIR_CLR] >= 72) {
		int64_t off = pfc_pe_rva_to_offset(pe, dir_rva[DIR_CLR]);
		if (off >= 0 && (uint64_t)off + 72 <= len) {
			uint32_t md_rva, md_size, nh_rva, nh_size;
			pfc_cur_init(&c, buf + off, 72, 0);
			pfc_cur_bytes(&c, 8);
			md_rva = pfc_cur_u32(&c);
			md_size = pfc_cur_u32(&c);
			pe->cor_flags = pfc_cur_u32(&c);
			pfc_cur_bytes(&c, 44);
			nh_rva = pfc_cur_u32(&c);
			nh_size = pfc_cur_u32(&c);
			pe->is_managed = 1;
			pe->md_rva = md_rva;
			pe->md_size = md_size;
			pe->native_rva = nh_rva;
			pe->native_size = nh_size;
			parse_mvid(pe, buf, len, md_rva, md_size);
			if (level > PE_HEADERS && nh_size &&
			    (ret = parse_r2r(pe, buf, len, nh_rva, nh_size, level == PE_FUNCS)) < 0)
				return PFC_FAIL_NOOFF(err, NOMEM, "R2R runtime functions");
		}
	}
	return 0;
}

int pfc_pe_parse(const uint8_t *buf, size_t len, struct pfc_pe *pe, struct pfc_error *err)
{
	return parse(buf, len, pe, err, PE_FUNCS);
}

int pfc_pe_parse_headers(const uint8_t *buf, size_t len, struct pfc_pe *pe, struct pfc_error *err)
{
	return parse(buf, len, pe, err, PE_HEADERS);
}

int pfc_pe_load(const char *path, struct pfc_pe *pe, int funcs, struct pfc_error *err)
{
	struct stat st;
	void *p;
	int fd, ret;

	memset(pe, 0, sizeof(*pe));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return PFC_FAIL_NOOFF(err, OPEN, "'%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return PFC_FAIL_NOOFF(err, OPEN, "'%s': not a regular file", path);
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return PFC_FAIL_NOOFF(err, IO, "'%s': %s", path, strerror(errno));
	ret = parse(p, (size_t)st.st_size, pe, err, funcs ? PE_FUNCS : PE_R2R);
	munmap(p, (size_t)st.st_size);
	return ret;
}

static int overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/* File ranges, (offset, size) pairs. */
struct ranges {
	uint64_t *v;
	size_t n, cap;
	int oom;
};

/* [off, off + size) clipped to the file: a reader that finds a range cut short reads
 * nothing of it, and what it would read of it is kept. */
static void keep(struct ranges *k, size_t len, int64_t off, uint64_t size)
{
	if (off < 0 || (uint64_t)off >= len || !size)
		return;
	if (size > len - (uint64_t)off)
		size = len - (uint64_t)off;
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 32;
		uint64_t *v = realloc(k->v, cap * 2 * sizeof(*v));
		if (!v) {
			k->oom = 1;
			return;
		}
		k->v = v;
		k->cap = cap;
	}
	k->v[2 * k->n] = (uint64_t)off;
	k->v[2 * k->n + 1] = size;
	k->n++;
}

static int by_offset(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The ReadyToRun sections a symbol source reads (pe.c, r2rmeta.c): RUNTIME_FUNCTIONS,
 * MethodDefEntryPoints, InstanceEntryPoints, ManifestMetadata, ComponentAssemblies,
 * OwnerCompositeExecutable, HotColdMap.  Their entry-point and signature blobs lie in
 * the sections themselves (NativeFormat offsets from the section's start). */
static int r2r_section_is_read(uint32_t t)
{
	return t == 102 || t == 103 || t == 109 || t == 112 || t == 115 || t == 116 || t == 120;
}

/*
 * What the symbol sources read of a managed image, as file ranges: the headers and the
 * section table, the debug directory and the data of its entries, the CLR header, the
 * metadata whole, and the ReadyToRun header with its section list and the sections of
 * r2r_section_is_read.  0 when the image is not one this rule covers (not managed, an
 * export directory, a composite image or one of its components, a ReadyToRun header
 * without its signature, a damaged table): the caller keeps more.
 */
static int read_ranges(const uint8_t *buf, size_t len, const struct pfc_pe *pe, struct ranges *k)
{
	uint32_t lfanew = pfc_ld32(buf + 0x3c, 0), ndirs, i, dir_rva[16] = { 0 }, dir_size[16] = { 0 };
	uint64_t opt_start = (uint64_t)lfanew + 24, opt_size, dd, table_end;
	int64_t off;

	if (!pe->is_managed || !pe->md_size || opt_start > len)
		return 0;
	opt_size = pfc_ld16(buf + lfanew + 20, 0);
	table_end = opt_start + opt_size + 40ull * pe->nsections;
	keep(k, len, 0, table_end > pe->size_of_headers ? table_end : pe->size_of_headers);
	/* the data directories, as parse() reads them */
	dd = opt_start + (pe->pe32plus ? 112 : 96);
	if (dd > opt_start + opt_size || dd > len)
		return 0;
	ndirs = pfc_ld32(buf + dd - 4, 0);
	for (i = 0; i < ndirs && i < 16 && dd + 8ull * i + 8 <= opt_start + opt_size && dd + 8ull * i + 8 <= len; i++) {
		dir_rva[i] = pfc_ld32(buf + dd + 8ull * i, 0);
		dir_size[i] = pfc_ld32(buf + dd + 8ull * i + 4, 0);
	}
	if (dir_size[0])
		return 0;	/* exports: a composite image's RTR_HEADER */
	if (dir_size[DIR_DEBUG] && (off = pfc_pe_rva_to_offset(pe, dir_rva[DIR_DEBUG])) >= 0) {
		uint64_t e;
		keep(k, len, off, dir_size[DIR_DEBUG]);
		for (e = (uint64_t)off; e + 28 <= (uint64_t)off + dir_size[DIR_DEBUG] && e + 28 <= len; e += 28)
			keep(k, len, pfc_ld32(buf + e + 24, 0), pfc_ld32(buf + e + 16, 0));
	}
	keep(k, len, pfc_pe_rva_to_offset(pe, dir_rva[DIR_CLR]), dir_size[DIR_CLR] > 72 ? dir_size[DIR_CLR] : 72);
	keep(k, len, pfc_pe_rva_to_offset(pe, pe->md_rva), pe->md_size);
	if (pe->native_size) {
		uint32_t nsec, flags;
		if ((off = pfc_pe_rva_to_offset(pe, pe->native_rva)) < 0 || (uint64_t)off + 16 > len ||
		    pfc_ld32(buf + off, 0) != RTR_SIGNATURE)
			return 0;
		flags = pfc_ld32(buf + off + 8, 0);
		nsec = pfc_ld32(buf + off + 12, 0);
		if ((flags & 0x20) || nsec > 4096 || (uint64_t)off + 16 + 12ull * nsec > len)
			return 0;	/* a component of a composite image; a damaged list */
		keep(k, len, off, 16 + 12ull * nsec > pe->native_size ? 16 + 12ull * nsec : pe->native_size);
		for (i = 0; i < nsec; i++) {
			const uint8_t *s = buf + off + 16 + 12ull * i;
			uint32_t t = pfc_ld32(s, 0);
			if (t == 115)
				return 0;	/* ComponentAssemblies: a composite image */
			if (r2r_section_is_read(t))
				keep(k, len, pfc_pe_rva_to_offset(pe, pfc_ld32(s + 4, 0)), pfc_ld32(s + 8, 0));
		}
	}
	return !k->oom;
}

/* The gaps between the kept ranges of [0, len), into *ranges. */
static int complement(struct ranges *k, size_t len, uint64_t **ranges, size_t *n)
{
	struct ranges g = { 0 };
	uint64_t at = 0;
	size_t i;

	qsort(k->v, k->n, 2 * sizeof(*k->v), by_offset);
	for (i = 0; i < k->n; i++) {
		uint64_t b = k->v[2 * i], e = b + k->v[2 * i + 1];
		if (b > at)
			keep(&g, len, (int64_t)at, b - at);
		if (e > at)
			at = e;
	}
	if (at < len)
		keep(&g, len, (int64_t)at, len - at);
	if (g.oom) {
		free(g.v);
		return -ENOMEM;
	}
	*ranges = g.v;
	*n = g.n;
	return 0;
}

int pfc_pe_unread_ranges(const uint8_t *buf, size_t len, uint64_t **ranges, size_t *n)
{
	struct pfc_pe pe;
	struct pfc_error err;
	struct ranges kept = { 0 };
	uint64_t *v;
	size_t i, k = 0;
	int ret;

	*ranges = NULL;
	*n = 0;
	memset(&err, 0, sizeof(err));
	if (!pfc_pe_sniff(buf, len) || pfc_pe_parse(buf, len, &pe, &err) < 0)
		return 0;
	if (read_ranges(buf, len, &pe, &kept)) {
		pfc_pe_free(&pe);
		ret = complement(&kept, len, ranges, n);
		free(kept.v);
		return ret;
	}
	free(kept.v);
	/* x64 RUNTIME_FUNCTIONs carry their end: the code is exactly [begin, end) */
	if (!pe.is_r2r || pe.machine_plain != 0x8664 || !pe.nr_funcs) {
		pfc_pe_free(&pe);
		return 0;
	}
	if (!(v = malloc(2 * pe.nr_funcs * sizeof(*v)))) {
		pfc_pe_free(&pe);
		return -ENOMEM;
	}
	for (i = 0; i < pe.nr_funcs; i++) {
		const struct pfc_pe_func *f = &pe.funcs[i];
		int64_t off = pfc_pe_rva_to_offset(&pe, f->begin), last;
		uint64_t size = f->end > f->begin ? (uint64_t)f->end - f->begin : 0;

		if (!size)
			continue;	/* two functions at one address: no code of its own */
		last = pfc_pe_rva_to_offset(&pe, f->end - 1);
		/* in one section, in the file, clear of what the readers read */
		if (off < 0 || last != off + (int64_t)size - 1 || (uint64_t)off < pe.size_of_headers ||
		    (uint64_t)off + size > len || overlaps(f->begin, size, pe.md_rva, pe.md_size) ||
		    overlaps(f->begin, size, pe.native_rva, pe.native_size))
			continue;
		if (k && v[2 * (k - 1)] + v[2 * (k - 1) + 1] > (uint64_t)off)
			continue;	/* overlapping the one before: no code map crossgen2 writes */
		v[2 * k] = (uint64_t)off;
		v[2 * k + 1] = size;
		k++;
	}
	pfc_pe_free(&pe);
	if (!k) {
		free(v);
		return 0;
	}
	*ranges = v;
	*n = k;
	return 0;
}

void pfc_pe_free(struct pfc_pe *pe)
{
	free(pe->funcs);
	pe->funcs = NULL;
	pe->nr_funcs = 0;
}
