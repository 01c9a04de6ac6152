/*
 * ecma.c - ECMA-335 metadata from untrusted bytes (partition II §22-§24): the metadata root,
 * streams, the "#~" table header and the size of every column, heap lookups, and the
 * signature grammar printed in the runtime's and crossgen2's styles.  Every read is bounds
 * checked; recursion in types, nesting and signatures is bounded, so hostile metadata gives
 * an error value or a wrong name, never a crash or a hang.  It does not know where code is.
 */
#include <stdio.h>
#include <string.h>
#include "converter/util/bytes.h"
#include "converter/jit/ecma.h"

#define MD_SIGNATURE 0x424A5342	/* "BSJB" */
#define MAX_DEPTH 48			/* of nested types in a signature, and of nested classes */

/* Column kinds of the schema: fixed sizes, heap indexes, simple table indexes (COL_TAB +
 * table) and coded indexes (COL_CODED + kind). */
enum { COL_END, COL_U2, COL_U4, COL_U8, COL_STR, COL_GUID, COL_BLOB, COL_TAB = 0x10, COL_CODED = 0x80 };
#define T(x) (COL_TAB + (x))
#define C(x) (COL_CODED + (x))

enum { CI_TYPEDEFORREF, CI_HASCONSTANT, CI_HASCUSTOMATTRIBUTE, CI_HASFIELDMARSHAL, CI_HASDECLSECURITY,
       CI_MEMBERREFPARENT, CI_HASSEMANTICS, CI_METHODDEFORREF, CI_MEMBERFORWARDED, CI_IMPLEMENTATION,
       CI_CUSTOMATTRIBUTETYPE, CI_RESOLUTIONSCOPE, CI_TYPEORMETHODDEF, CI__MAX };

/* Tables of each coded index, in tag order (-1: unused tag); the tag width. */
static const struct { uint8_t bits; signed char tab[22]; uint8_t n; } coded[CI__MAX] = {
	[CI_TYPEDEFORREF] = { 2, { 0x02, 0x01, 0x1B }, 3 },
	[CI_HASCONSTANT] = { 2, { 0x04, 0x08, 0x17 }, 3 },
	[CI_HASCUSTOMATTRIBUTE] = { 5, { 0x06, 0x04, 0x01, 0x02, 0x08, 0x09, 0x0A, 0x00, 0x0E, 0x17, 0x14, 0x11, 0x1A,
					 0x1B, 0x20, 0x23, 0x26, 0x27, 0x28, 0x2A, 0x2C, 0x2B }, 22 },
	[CI_HASFIELDMARSHAL] = { 1, { 0x04, 0x08 }, 2 },
	[CI_HASDECLSECURITY] = { 2, { 0x02, 0x06, 0x20 }, 3 },
	[CI_MEMBERREFPARENT] = { 3, { 0x02, 0x01, 0x1A, 0x06, 0x1B }, 5 },
	[CI_HASSEMANTICS] = { 1, { 0x14, 0x17 }, 2 },
	[CI_METHODDEFORREF] = { 1, { 0x06, 0x0A }, 2 },
	[CI_MEMBERFORWARDED] = { 1, { 0x04, 0x06 }, 2 },
	[CI_IMPLEMENTATION] = { 2, { 0x26, 0x23, 0x27 }, 3 },
	[CI_CUSTOMATTRIBUTETYPE] = { 3, { 0x06, 0x0A }, 2 },	/* the size depends on these two only */
	[CI_RESOLUTIONSCOPE] = { 2, { 0x00, 0x1A, 0x23, 0x01 }, 4 },
	[CI_TYPEORMETHODDEF] = { 1, { 0x02, 0x06 }, 2 },
};

static const uint8_t schema[PFC_MD_NTABLES][PFC_MD_MAXCOLS + 1] = {
	[0x00] = { COL_U2, COL_STR, COL_GUID, COL_GUID, COL_GUID },
	[0x01] = { C(CI_RESOLUTIONSCOPE), COL_STR, COL_STR },
	[0x02] = { COL_U4, COL_STR, COL_STR, C(CI_TYPEDEFORREF), T(0x04), T(0x06) },
	[0x03] = { T(0x04) },
	[0x04] = { COL_U2, COL_STR, COL_BLOB },
	[0x05] = { T(0x06) },
	[0x06] = { COL_U4, COL_U2, COL_U2, COL_STR, COL_BLOB, T(0x08) },
	[0x07] = { T(0x08) },
	[0x08] = { COL_U2, COL_U2, COL_STR },
	[0x09] = { T(0x02), C(CI_TYPEDEFORREF) },
	[0x0A] = { C(CI_MEMBERREFPARENT), COL_STR, COL_BLOB },
	[0x0B] = { COL_U2, C(CI_HASCONSTANT), COL_BLOB },
	[0x0C] = { C(CI_HASCUSTOMATTRIBUTE), C(CI_CUSTOMATTRIBUTETYPE), COL_BLOB },
	[0x0D] = { C(CI_HASFIELDMARSHAL), COL_BLOB },
	[0x0E] = { COL_U2, C(CI_HASDECLSECURITY), COL_BLOB },
	[0x0F] = { COL_U2, COL_U4, T(0x02) },
	[0x10] = { COL_U4, T(0x04) },
	[0x11] = { COL_BLOB },
	[0x12] = { T(0x02), T(0x14) },
	[0x13] = { T(0x14) },
	[0x14] = { COL_U2, COL_STR, C(CI_TYPEDEFORREF) },
	[0x15] = { T(0x02), T(0x17) },
	[0x16] = { T(0x17) },
	[0x17] = { COL_U2, COL_STR, COL_BLOB },
	[0x18] = { COL_U2, T(0x06), C(CI_HASSEMANTICS) },
	[0x19] = { T(0x02), C(CI_METHODDEFORREF), C(CI_METHODDEFORREF) },
	[0x1A] = { COL_STR },
	[0x1B] = { COL_BLOB },
	[0x1C] = { COL_U2, C(CI_MEMBERFORWARDED), COL_STR, T(0x1A) },
	[0x1D] = { COL_U4, T(0x04) },
	[0x1E] = { COL_U4, COL_U4 },
	[0x1F] = { COL_U4 },
	[0x20] = { COL_U4, COL_U8, COL_U4, COL_BLOB, COL_STR, COL_STR },
	[0x21] = { COL_U4 },
	[0x22] = { COL_U4, COL_U4, COL_U4 },
	[0x23] = { COL_U8, COL_U4, COL_BLOB, COL_STR, COL_STR, COL_BLOB },
	[0x24] = { COL_U4, T(0x23) },
	[0x25] = { COL_U4, COL_U4, COL_U4, T(0x23) },
	[0x26] = { COL_U4, COL_STR, COL_BLOB },
	[0x27] = { COL_U4, COL_U4, COL_STR, COL_STR, C(CI_IMPLEMENTATION) },
	[0x28] = { COL_U4, COL_U4, COL_STR, C(CI_IMPLEMENTATION) },
	[0x29] = { T(0x02), T(0x02) },
	[0x2A] = { COL_U2, COL_U2, C(CI_TYPEORMETHODDEF), COL_STR },
	[0x2B] = { C(CI_METHODDEFORREF), COL_BLOB },
	[0x2C] = { T(0x2A), C(CI_TYPEDEFORREF) },
};

static uint16_t ld16(const uint8_t *p)
{
	return pfc_ld16(p, 0);
}

static int cur_u16(struct pfc_cursor *c, uint32_t *v)
{
	const uint8_t *p = pfc_cur_bytes(c, 2);
	*v = p ? ld16(p) : 0;
	return p ? 0 : -1;
}

int pfc_ecma_open(struct pfc_ecma *m, const uint8_t *md, size_t len, struct pfc_error *err)
{
	struct pfc_cursor c;
	uint32_t vlen, nstreams, i, j;
	uint64_t tbl_off = 0, tbl_size = 0, valid, off;
	uint8_t heaps;
	int have_tables = 0;

	memset(m, 0, sizeof(*m));
	m->name = "";
	m->root = md;
	m->len = len;
	pfc_cur_init(&c, md, len, 0);
	if (pfc_cur_u32(&c) != MD_SIGNATURE)
		return PFC_FAIL(err, BAD_MAGIC, 0, "no metadata signature (BSJB)");
	pfc_cur_bytes(&c, 8);			/* major, minor, reserved */
	vlen = pfc_cur_u32(&c);
	pfc_cur_bytes(&c, vlen);		/* version string */
	pfc_cur_bytes(&c, 2);			/* flags */
	if (cur_u16(&c, &nstreams) < 0 || c.bad)
		return PFC_FAIL(err, TRUNCATED, 12, "metadata root is cut short");
	for (i = 0; i < nstreams; i++) {
		uint64_t at = (uint64_t)(c.p - md);
		uint32_t so = pfc_cur_u32(&c), ss = pfc_cur_u32(&c);
		size_t left = pfc_cur_left(&c), n = strnlen((const char *)c.p, left < 32 ? left : 32);
		const char *name = (const char *)c.p;

		if (c.bad || n >= 32 || n == left)
			return PFC_FAIL(err, TRUNCATED, at, "metadata stream header %u is cut short", i);
		if ((uint64_t)so + ss > len)
			return PFC_FAIL(err, CORRUPT, at, "metadata stream '%.*s' lies outside the metadata", (int)n, name);
		if (n == 2 && !memcmp(name, "#~", 2)) {
			tbl_off = so;
			tbl_size = ss;
			have_tables = 1;
		} else if (n == 2 && !memcmp(name, "#-", 2)) {
			return PFC_FAIL(err, UNSUPPORTED, at, "uncompressed metadata tables (#-)");
		} else if (n == 8 && !memcmp(name, "#Strings", 8)) {
			m->str = md + so;
			m->str_len = ss;
		} else if (n == 5 && !memcmp(name, "#Blob", 5)) {
			m->blob = md + so;
			m->blob_len = ss;
		} else if (n == 5 && !memcmp(name, "#GUID", 5)) {
			m->guid = md + so;
			m->guid_len = ss;
		}
		pfc_cur_bytes(&c, (n + 1 + 3) & ~(size_t)3);
		if (c.bad)
			return PFC_FAIL(err, TRUNCATED, at, "metadata stream header %u is cut short", i);
	}
	if (!have_tables)
		return PFC_FAIL(err, CORRUPT, 0, "metadata without a #~ stream");
	pfc_cur_init(&c, md + tbl_off, tbl_size, 0);
	pfc_cur_bytes(&c, 6);			/* reserved, major, minor */
	{
		const uint8_t *h = pfc_cur_bytes(&c, 2);
		heaps = h ? h[0] : 0;
	}
	valid = pfc_cur_u64(&c);
	pfc_cur_u64(&c);			/* sorted */
	if (c.bad)
		return PFC_FAIL(err, TRUNCATED, tbl_off, "#~ header is cut short");
	if (valid >> PFC_MD_NTABLES)
		return PFC_FAIL(err, UNSUPPORTED, tbl_off + 8, "#~ stream with tables past 0x2C (valid 0x%llx)",
				(unsigned long long)valid);
	for (i = 0; i < PFC_MD_NTABLES; i++)
		if (valid >> i & 1)
			m->rows[i] = pfc_cur_u32(&c);
	if (heaps & 0x40)			/* extra data after the row counts */
		pfc_cur_u32(&c);
	if (c.bad)
		return PFC_FAIL(err, TRUNCATED, tbl_off + 24, "#~ row counts are cut short");
	/* column sizes, then where each table starts */
	off = (uint64_t)(c.p - md);
	for (i = 0; i < PFC_MD_NTABLES; i++) {
		uint32_t rs = 0;
		for (j = 0; j < PFC_MD_MAXCOLS && schema[i][j]; j++) {
			uint8_t k = schema[i][j], sz;
			if (k == COL_U2)
				sz = 2;
			else if (k == COL_U4)
				sz = 4;
			else if (k == COL_U8)
				sz = 8;
			else if (k == COL_STR)
				sz = heaps & 1 ? 4 : 2;
			else if (k == COL_GUID)
				sz = heaps & 2 ? 4 : 2;
			else if (k == COL_BLOB)
				sz = heaps & 4 ? 4 : 2;
			else if (k >= COL_CODED) {
				uint32_t max = 0, t;
				for (t = 0; t < coded[k - COL_CODED].n; t++)
					if (m->rows[(int)coded[k - COL_CODED].tab[t]] > max)
						max = m->rows[(int)coded[k - COL_CODED].tab[t]];
				sz = max < (1u << (16 - coded[k - COL_CODED].bits)) ? 2 : 4;
			} else
				sz = m->rows[k - COL_TAB] < 65536 ? 2 : 4;
			m->col_off[i][j] = (uint8_t)rs;
			m->col_size[i][j] = sz;
			rs += sz;
		}
		m->ncols[i] = (uint8_t)j;
		m->row_size[i] = (uint8_t)rs;
		if (!m->rows[i])
			continue;
		if (off + (uint64_t)m->rows[i] * rs > tbl_off + tbl_size)
			return PFC_FAIL(err, TRUNCATED, off, "metadata table 0x%02x (%u rows) runs past the #~ stream",
					i, m->rows[i]);
		m->tab[i] = md + off;
		off += (uint64_t)m->rows[i] * rs;
	}
	if (m->rows[PFC_MD_ASSEMBLY])
		m->name = pfc_ecma_str(m, pfc_ecma_col(m, PFC_MD_ASSEMBLY, 1, 4));
	if (!*m->name && m->rows[PFC_MD_MODULE])
		m->name = pfc_ecma_str(m, pfc_ecma_col(m, PFC_MD_MODULE, 1, 1));
	return 0;
}

uint32_t pfc_ecma_col(const struct pfc_ecma *m, int table, uint32_t rid, int col)
{
	const uint8_t *p;

	if (table < 0 || table >= PFC_MD_NTABLES || !rid || rid > m->rows[table] || col >= m->ncols[table])
		return 0;
	p = m->tab[table] + (uint64_t)(rid - 1) * m->row_size[table] + m->col_off[table][col];
	if (m->col_size[table][col] == 2)
		return ld16(p);
	return pfc_ld32(p, 0);	/* the 8-byte version columns are never read */
}

const char *pfc_ecma_str(const struct pfc_ecma *m, uint32_t idx)
{
	if (!m->str || idx >= m->str_len || !memchr(m->str + idx, 0, m->str_len - idx))
		return "";
	return (const char *)m->str + idx;
}

int pfc_ecma_uncompress(const uint8_t **pp, const uint8_t *end, uint32_t *v)
{
	const uint8_t *p = *pp;

	if (p >= end)
		return -1;
	if (!(p[0] & 0x80)) {
		*v = p[0];
		*pp = p + 1;
	} else if ((p[0] & 0xC0) == 0x80) {
		if (end - p < 2)
			return -1;
		*v = (uint32_t)(p[0] & 0x3F) << 8 | p[1];
		*pp = p + 2;
	} else if ((p[0] & 0xE0) == 0xC0) {
		if (end - p < 4)
			return -1;
		*v = (uint32_t)(p[0] & 0x1F) << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
		*pp = p + 4;
	} else {
		return -1;
	}
	return 0;
}

/* II.23.2 signed form: 7, 14 or 29 bits, the sign in bit 0. */
static int uncompress_signed(const uint8_t **pp, const uint8_t *end, int32_t *v)
{
	const uint8_t *p = *pp;
	uint32_t u, bits;

	if (pfc_ecma_uncompress(pp, end, &u) < 0)
		return -1;
	bits = *pp - p == 1 ? 7 : *pp - p == 2 ? 14 : 29;
	*v = (int32_t)(u >> 1);
	if (u & 1)
		*v -= (int32_t)1 << (bits - 1);
	return 0;
}

int pfc_ecma_blob(const struct pfc_ecma *m, uint32_t idx, const uint8_t **p, uint32_t *len)
{
	const uint8_t *q, *end;
	uint32_t n;

	if (!m->blob || idx >= m->blob_len)
		return -1;
	q = m->blob + idx;
	end = m->blob + m->blob_len;
	if (pfc_ecma_uncompress(&q, end, &n) < 0 || n > (uint64_t)(end - q))
		return -1;
	*p = q;
	*len = n;
	return 0;
}

const uint8_t *pfc_ecma_mvid(const struct pfc_ecma *m)
{
	uint32_t g = pfc_ecma_col(m, PFC_MD_MODULE, 1, 2);

	if (!g || !m->guid || (uint64_t)g * 16 > m->guid_len)
		return NULL;
	return m->guid + (uint64_t)(g - 1) * 16;
}

uint32_t pfc_ecma_method_owner(const struct pfc_ecma *m, uint32_t rid)
{
	uint32_t lo = 1, hi = m->rows[PFC_MD_TYPEDEF] + 1;	/* answer in [lo - 1, hi) */

	if (!rid || rid > m->rows[PFC_MD_METHODDEF])
		return 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (pfc_ecma_col(m, PFC_MD_TYPEDEF, mid, 5) <= rid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/* The TypeDef that encloses TypeDef rid (NestedClass is sorted by its first column); 0 = none. */
static uint32_t enclosing(const struct pfc_ecma *m, uint32_t rid)
{
	uint32_t lo = 1, hi = m->rows[PFC_MD_NESTEDCLASS] + 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2, v = pfc_ecma_col(m, PFC_MD_NESTEDCLASS, mid, 0);
		if (v == rid)
			return pfc_ecma_col(m, PFC_MD_NESTEDCLASS, mid, 1);
		if (v < rid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* The runtime's TypeString escapes these in simple names (typeparse.h IsTypeNameReservedChar). */
static void add_name(const struct pfc_sigfmt *f, struct pfc_sb *sb, const char *s)
{
	if (f->style != PFC_SIG_TYPESTRING || !strpbrk(s, ",[]&*+\\")) {
		pfc_sb_adds(sb, s);
		return;
	}
	for (; *s; s++) {
		if (strchr(",[]&*+\\", *s))
			pfc_sb_addc(sb, '\\');
		pfc_sb_addc(sb, *s);
	}
}

static void add_ns_name(const struct pfc_sigfmt *f, struct pfc_sb *sb, const char *ns, const char *name)
{
	if (*ns) {
		add_name(f, sb, ns);
		pfc_sb_addc(sb, '.');
	}
	add_name(f, sb, name);
}

static char nest_sep(const struct pfc_sigfmt *f)
{
	return f->style == PFC_SIG_ILDASM ? '/' : '+';
}

static int typedef_name(const struct pfc_sigfmt *f, const struct pfc_ecma *m, uint32_t rid, struct pfc_sb *sb)
{
	uint32_t chain[MAX_DEPTH];
	int n = 0, i;

	if (!rid || rid > m->rows[PFC_MD_TYPEDEF])
		return -1;
	while (rid && n < MAX_DEPTH) {
		chain[n++] = rid;
		rid = enclosing(m, rid);
	}
	if (rid)			/* deeper than any real nesting: a loop */
		return -1;
	for (i = n - 1; i >= 0; i--) {
		if (i != n - 1)
			pfc_sb_addc(sb, nest_sep(f));
		add_ns_name(f, sb, pfc_ecma_str(m, pfc_ecma_col(m, PFC_MD_TYPEDEF, chain[i], 2)),
			    pfc_ecma_str(m, pfc_ecma_col(m, PFC_MD_TYPEDEF, chain[i], 1)));
	}
	return 0;
}

static int typeref_name(const struct pfc_sigfmt *f, const struct pfc_ecma *m, uint32_t rid, struct pfc_sb *sb)
{
	uint32_t chain[MAX_DEPTH], scope = 0;
	int n = 0, i;

	if (!rid || rid > m->rows[PFC_MD_TYPEREF])
		return -1;
	for (;;) {
		if (n == MAX_DEPTH)
			return -1;
		chain[n++] = rid;
		scope = pfc_ecma_col(m, PFC_MD_TYPEREF, rid, 0);
		if ((scope & 3) != 3)
			break;
		rid = scope >> 2;
		if (!rid || rid > m->rows[PFC_MD_TYPEREF])
			return -1;
	}
	if (f->style == PFC_SIG_ILDASM) {
		uint32_t srid = scope >> 2;
		if ((scope & 3) == 2) {
			pfc_sb_addc(sb, '[');
			pfc_sb_adds(sb, pfc_ecma_str(m, pfc_ecma_col(m, PFC_MD_ASSEMBLYREF, srid, 3)));
			pfc_sb_addc(sb, ']');
		} else if ((scope & 3) == 1) {
			pfc_sb_adds(sb, "[.module ");
			pfc_sb_adds(sb, pfc_ecma_str(m, pfc_ecma_col(m, PFC_MD_MODULEREF, srid, 0)));
			pfc_sb_addc(sb, ']');
		}
	}
	for (i = n - 1; i >= 0; i--) {
		if (i != n - 1)
			pfc_sb_addc(sb, nest_sep(f));
		add_ns_name(f, sb, pfc_ecma_str(m, pfc_ecma_col(m, PFC_MD_TYPEREF, chain[i], 2)),
			    pfc_ecma_str(m, pfc_ecma_col(m, PFC_MD_TYPEREF, chain[i], 1)));
	}
	return 0;
}

static int type_r(const struct pfc_sigfmt *f, const struct pfc_ecma *md, const struct pfc_ecma *argmd,
		  const uint8_t **p, const uint8_t *end, struct pfc_sb *sb, int depth);

static int token_r(const struct pfc_sigfmt *f, const struct pfc_ecma *md, uint32_t token, struct pfc_sb *sb,
		   int depth)
{
	uint32_t rid = token & 0xFFFFFF;

	switch (token >> 24) {
	case PFC_MD_TYPEDEF:
		return typedef_name(f, md, rid, sb);
	case PFC_MD_TYPEREF:
		return typeref_name(f, md, rid, sb);
	case PFC_MD_TYPESPEC: {
		const uint8_t *s;
		uint32_t n;
		if (depth > MAX_DEPTH || pfc_ecma_blob(md, pfc_ecma_col(md, PFC_MD_TYPESPEC, rid, 0), &s, &n) < 0)
			return -1;
		return type_r(f, md, md, &s, s + n, sb, depth + 1);
	}
	}
	return -1;
}

int pfc_ecma_token(const struct pfc_sigfmt *f, const struct pfc_ecma *md, uint32_t token, struct pfc_sb *sb)
{
	return token_r(f, md, token, sb, 0);
}

/* TypeDefOrRefOrSpecEncoded (II.23.2.8) -> token */
static int read_tdor(const uint8_t **p, const uint8_t *end, uint32_t *token)
{
	static const uint32_t tab[4] = { PFC_MD_TYPEDEF, PFC_MD_TYPEREF, PFC_MD_TYPESPEC, 0 };
	uint32_t v;

	if (pfc_ecma_uncompress(p, end, &v) < 0 || (v & 3) == 3)
		return -1;
	*token = tab[v & 3] << 24 | v >> 2;
	return 0;
}

static const char *const ildasm_prim[] = {
	[0x01] = "void", [0x02] = "bool", [0x03] = "char", [0x04] = "int8", [0x05] = "uint8", [0x06] = "int16",
	[0x07] = "uint16", [0x08] = "int32", [0x09] = "uint32", [0x0A] = "int64", [0x0B] = "uint64",
	[0x0C] = "float32", [0x0D] = "float64", [0x0E] = "string", [0x16] = "typedref", [0x18] = "native int",
	[0x19] = "native uint", [0x1C] = "object",
};

static const char *const full_prim[] = {
	[0x01] = "System.Void", [0x02] = "System.Boolean", [0x03] = "System.Char", [0x04] = "System.SByte",
	[0x05] = "System.Byte", [0x06] = "System.Int16", [0x07] = "System.UInt16", [0x08] = "System.Int32",
	[0x09] = "System.UInt32", [0x0A] = "System.Int64", [0x0B] = "System.UInt64", [0x0C] = "System.Single",
	[0x0D] = "System.Double", [0x0E] = "System.String", [0x16] = "System.TypedReference",
	[0x18] = "System.IntPtr", [0x19] = "System.UIntPtr", [0x1C] = "System.Object",
};

static const char *list_sep(const struct pfc_sigfmt *f)
{
	return f->style == PFC_SIG_R2RMAP ? ", " : ",";
}

static int sig_r(const struct pfc_sigfmt *f, const struct pfc_ecma *md, const uint8_t **p, const uint8_t *end,
		 const char *name, size_t name_len, struct pfc_sb *sb, int depth);

/* sb NULL: skip the type without printing. */
static int type_r(const struct pfc_sigfmt *f, const struct pfc_ecma *md, const struct pfc_ecma *argmd,
		  const uint8_t **p, const uint8_t *end, struct pfc_sb *sb, int depth)
{
	uint8_t et;
	uint32_t v, tok, i, n;

	if (depth > MAX_DEPTH || *p >= end)
		return -1;
	et = *(*p)++;
	switch (et) {
	case 0x01: case 0x02: case 0x03: case 0x04: case 0x05: case 0x06: case 0x07: case 0x08: case 0x09:
	case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x0E: case 0x16: case 0x18: case 0x19: case 0x1C:
		if (sb)
			pfc_sb_adds(sb, f->style == PFC_SIG_ILDASM ? ildasm_prim[et] : full_prim[et]);
		return 0;
	case 0x0F:	/* PTR */
	case 0x10:	/* BYREF */
	case 0x45:	/* PINNED */
		if (type_r(f, md, argmd, p, end, sb, depth + 1) < 0)
			return -1;
		if (sb)
			pfc_sb_adds(sb, et == 0x0F ? "*" : et == 0x10 ? "&" : f->style == PFC_SIG_ILDASM ? " pinned" : "");
		return 0;
	case 0x11:	/* VALUETYPE */
	case 0x12:	/* CLASS */
		if (read_tdor(p, end, &tok) < 0)
			return -1;
		if (!sb)
			return 0;
		if (f->style == PFC_SIG_ILDASM)
			pfc_sb_adds(sb, et == 0x11 ? "valuetype " : "class ");
		return token_r(f, md, tok, sb, depth + 1);
	case 0x13:	/* VAR */
	case 0x1E:	/* MVAR */
		if (pfc_ecma_uncompress(p, end, &v) < 0)
			return -1;
		if (!sb)
			return 0;
		if (f->style == PFC_SIG_R2RMAP) {
			const struct pfc_typearg *a = et == 0x13 ? f->targs : f->margs;
			uint32_t na = et == 0x13 ? f->ntargs : f->nmargs;
			if (v < na) {
				const uint8_t *q = a[v].p;
				struct pfc_sigfmt g = *f;
				g.targs = g.margs = NULL;	/* the arguments are closed types */
				g.ntargs = g.nmargs = 0;
				return type_r(&g, a[v].md, a[v].md, &q, a[v].end, sb, depth + 1);
			}
		}
		pfc_sb_addf(sb, "%s%u", et == 0x13 ? "!" : "!!", v);
		return 0;
	case 0x14: {	/* ARRAY: type rank nsizes sizes... nlo lo... */
		uint32_t rank, nsz, nlo, sizes[32];
		int32_t lo[32];
		if (type_r(f, md, argmd, p, end, sb, depth + 1) < 0 || pfc_ecma_uncompress(p, end, &rank) < 0 ||
		    pfc_ecma_uncompress(p, end, &nsz) < 0 || nsz > 32 || nsz > rank)
			return -1;
		for (i = 0; i < nsz; i++)
			if (pfc_ecma_uncompress(p, end, &sizes[i]) < 0)
				return -1;
		if (pfc_ecma_uncompress(p, end, &nlo) < 0 || nlo > 32 || nlo > rank)
			return -1;
		for (i = 0; i < nlo; i++)
			if (uncompress_signed(p, end, &lo[i]) < 0)
				return -1;
		if (!sb)
			return 0;
		if (rank > 64)
			return -1;
		pfc_sb_addc(sb, '[');
		if (f->style != PFC_SIG_ILDASM) {
			if (rank == 1)
				pfc_sb_addc(sb, '*');
			for (i = 1; i < rank; i++)
				pfc_sb_addc(sb, ',');
		} else if (rank == 1 && !nsz && !nlo) {
			pfc_sb_adds(sb, "...");
		} else {
			for (i = 0; i < rank; i++) {
				if (i < nlo) {
					pfc_sb_addf(sb, "%d...", lo[i]);
					if (i < nsz)
						pfc_sb_addf(sb, "%d", (int)((uint32_t)lo[i] + sizes[i] - 1));
				} else if (i < nsz) {
					pfc_sb_addf(sb, "%d", (int)sizes[i]);
				}
				if (i + 1 < rank)
					pfc_sb_addc(sb, ',');
			}
		}
		pfc_sb_addc(sb, ']');
		return 0;
	}
	case 0x15:	/* GENERICINST: CLASS|VALUETYPE token count args */
		if (type_r(f, md, argmd, p, end, sb, depth + 1) < 0 || pfc_ecma_uncompress(p, end, &n) < 0 || n > 1024)
			return -1;
		if (sb)
			pfc_sb_addc(sb, f->style == PFC_SIG_ILDASM ? '<' : '[');
		for (i = 0; i < n; i++) {
			if (sb && i)
				pfc_sb_adds(sb, list_sep(f));
			if (type_r(f, argmd, argmd, p, end, sb, depth + 1) < 0)
				return -1;
		}
		if (sb)
			pfc_sb_addc(sb, f->style == PFC_SIG_ILDASM ? '>' : ']');
		return 0;
	case 0x1B:	/* FNPTR */
		if (sb && f->style == PFC_SIG_ILDASM)
			pfc_sb_adds(sb, "method ");
		return sig_r(f, md, p, end, "*", 1, sb, depth + 1);
	case 0x1D:	/* SZARRAY */
		if (type_r(f, md, argmd, p, end, sb, depth + 1) < 0)
			return -1;
		if (sb)
			pfc_sb_adds(sb, "[]");
		return 0;
	case 0x1F:	/* CMOD_REQD */
	case 0x20:	/* CMOD_OPT */
		if (read_tdor(p, end, &tok) < 0 || type_r(f, md, argmd, p, end, sb, depth + 1) < 0)
			return -1;
		if (sb && f->style == PFC_SIG_ILDASM) {
			pfc_sb_adds(sb, et == 0x1F ? " modreq(" : " modopt(");
			if (token_r(f, md, tok, sb, depth + 1) < 0)
				return -1;
			pfc_sb_addc(sb, ')');
		}
		return 0;
	case 0x3B:	/* VAR_ZAPSIG: a GenericParam RID */
		if (pfc_ecma_uncompress(p, end, &v) < 0)
			return -1;
		if (sb)
			pfc_sb_addf(sb, "!%u", v);
		return 0;
	case 0x3C:	/* NATIVE_ARRAY_TEMPLATE_ZAPSIG */
	case 0x3D:	/* NATIVE_VALUETYPE_ZAPSIG */
		return type_r(f, md, argmd, p, end, sb, depth + 1);
	case 0x3E:	/* CANON_ZAPSIG */
		if (sb)
			pfc_sb_adds(sb, f->style == PFC_SIG_ILDASM ? "class System.__Canon" : "System.__Canon");
		return 0;
	case 0x3F: {	/* MODULE_ZAPSIG: the next type's tokens are in another module */
		const struct pfc_ecma *m2 = md;
		if (pfc_ecma_uncompress(p, end, &v) < 0)
			return -1;
		if (sb) {
			m2 = f->module ? f->module(f->ctx, md, v) : NULL;
			if (!m2)
				return -1;
		}
		return type_r(f, m2, md, p, end, sb, depth + 1);
	}
	}
	return -1;
}

int pfc_ecma_type(const struct pfc_sigfmt *f, const struct pfc_ecma *md, const uint8_t **p, const uint8_t *end,
		  struct pfc_sb *sb)
{
	return type_r(f, md, md, p, end, sb, 0);
}

static const char *const callconv_words[16] = {
	[1] = "unmanaged cdecl ", [2] = "unmanaged stdcall ", [3] = "unmanaged thiscall ",
	[4] = "unmanaged fastcall ", [5] = "vararg ", [9] = "unmanaged ",
};

/* A method signature at *p around name.  R2RMAP: "[ret ]name(a, b)" (a function pointer
 * keeps its return type: "ret (a, b)"); otherwise ILDASM's "[instance ]ret name(a,b)". */
static int sig_r(const struct pfc_sigfmt *f, const struct pfc_ecma *md, const uint8_t **p, const uint8_t *end,
		 const char *name, size_t name_len, struct pfc_sb *sb, int depth)
{
	uint32_t cc, n, i, gen;
	int fnptr = name_len == 1 && name[0] == '*';
	int ildasm = f->style == PFC_SIG_ILDASM;

	if (depth > MAX_DEPTH || *p >= end)
		return -1;
	cc = *(*p)++;
	if ((cc & 0x10) && pfc_ecma_uncompress(p, end, &gen) < 0)
		return -1;
	if (pfc_ecma_uncompress(p, end, &n) < 0 || n > (uint64_t)(end - *p))
		return -1;
	if (sb && ildasm) {
		if (cc & 0x40)
			pfc_sb_adds(sb, "explicit ");
		if (cc & 0x20)
			pfc_sb_adds(sb, "instance ");
		if (callconv_words[cc & 15])
			pfc_sb_adds(sb, callconv_words[cc & 15]);
	}
	/* return type: R2RMAP leaves out void for methods (custom modifiers before it aside) */
	if (sb && !ildasm && !fnptr) {
		const uint8_t *q = *p;
		while (q < end && (*q == 0x1F || *q == 0x20)) {
			uint32_t tok;
			q++;
			if (read_tdor(&q, end, &tok) < 0)
				return -1;
		}
		if (q < end && *q == 0x01) {
			*p = q + 1;
		} else {
			if (type_r(f, md, md, p, end, sb, depth + 1) < 0)
				return -1;
			pfc_sb_addc(sb, ' ');
		}
	} else {
		if (type_r(f, md, md, p, end, sb, depth + 1) < 0)
			return -1;
		if (sb && (ildasm || fnptr))
			pfc_sb_addc(sb, ' ');
	}
	if (sb) {
		if (!ildasm && fnptr)
			pfc_sb_addc(sb, '(');
		else {
			pfc_sb_add(sb, name, name_len);
			pfc_sb_addc(sb, '(');
		}
	}
	for (i = 0; i < n; i++) {
		if (sb && i)
			pfc_sb_adds(sb, list_sep(f));
		if (*p < end && **p == 0x41) {	/* SENTINEL: the variable arguments follow */
			(*p)++;
			if (sb)
				pfc_sb_adds(sb, ildasm ? "...," : "..., ");
		}
		if (type_r(f, md, md, p, end, sb, depth + 1) < 0)
			return -1;
	}
	if (sb)
		pfc_sb_addc(sb, ')');
	return 0;
}

int pfc_ecma_method_sig(const struct pfc_sigfmt *f, const struct pfc_ecma *md, const uint8_t *sig, uint32_t len,
			const char *name, size_t name_len, struct pfc_sb *sb)
{
	const uint8_t *p = sig;
	return sig_r(f, md, &p, sig + len, name, name_len, sb, 0);
}
