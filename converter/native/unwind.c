/*
 * unwind.c - owns the DWARF walk of one sample's user stack.  The rules are those of
 * perf 6.1 built with libunwind 1.6 (Debian's): the CFI of a file comes from its
 * .eh_frame_hdr table only, memory is the stack copy (minus its last word, as perf's
 * access_mem has it) or the file mapped at the address, a pc without an FDE falls back
 * on libunwind's frame-pointer guess, and return addresses are reported minus one.  The
 * CFI itself is parsed by elfutils' libdw, once per file.  The registers are those of the
 * recording's architecture (struct arch_desc): x86-64 as perf 6.1 unwinds it, aarch64 with
 * the same walk over its own registers (perf 6.1 on x86-64 has no aarch64 unwinder, so
 * there is no perf output to match there: the rules are libunwind's aarch64 ones).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include "converter/native/buildid.h"
#include "converter/native/elfread.h"
#include "converter/native/unwind.h"
#include "converter/util/bytes.h"
#include "converter/util/mem.h"

#define NREGS 31	/* the most DWARF columns an architecture keeps: aarch64's x0..x30 */
#define EXPR_STACK 64

/*
 * What the walk needs to know of an architecture.  x86-64: DWARF rax..r15 (0..15) and the
 * return-address column 16, which is the pc itself.  aarch64: x0..x30 (0..30), sp 31, the
 * return address in x30 (lr): a frame whose CFI leaves lr alone returns to lr, which is how
 * a leaf function's pc comes from the sample's lr register.
 */
struct arch_desc {
	int nregs;		/* DWARF columns kept, from 0 */
	int sp, fp, ra;		/* DWARF numbers: stack pointer (reads as the CFA), frame pointer, return address */
	int ra_is_pc;		/* the return-address column is the pc (x86-64), not a register */
	int fp_end;		/* libunwind x86-64: an undefined frame pointer ends the walk ("NULL RBP") */
	int x86_guesses;	/* libunwind x86-64's signal-frame and PLT checks, on x86 code bytes */
	int preg_ip, preg_sp;	/* perf's numbers of the pc and the stack pointer */
	int8_t to_perf[NREGS];	/* DWARF register -> perf register; -1: none */
};

static const struct arch_desc arch_x86_64 = {
	17, 7, 6, 16, 1, 1, 1, PFC_PREG_IP, PFC_PREG_SP,
	{ PFC_PREG_AX, PFC_PREG_DX, PFC_PREG_CX, PFC_PREG_BX, PFC_PREG_SI, PFC_PREG_DI, PFC_PREG_BP,
	  PFC_PREG_SP, 16, 17, 18, 19, 20, 21, 22, 23, PFC_PREG_IP,
	  -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1 },
};

static const struct arch_desc arch_aarch64 = {
	31, 31, 29, 30, 0, 0, 0, PFC_PREG_ARM64_PC, PFC_PREG_ARM64_SP,
	{ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
	  26, 27, 28, PFC_PREG_ARM64_X29, PFC_PREG_ARM64_LR },
};

static const struct arch_desc *arch_desc(int arch)
{
	return arch == PFC_UNWIND_X86_64 ? &arch_x86_64 : arch == PFC_UNWIND_AARCH64 ? &arch_aarch64 : NULL;
}

enum pfc_unwind_arch pfc_unwind_arch_of(const char *a, size_t len)
{
	if ((len == 6 && !memcmp(a, "x86_64", 6)) || (len == 3 && !memcmp(a, "x86", 3)) ||
	    (len == 4 && a[0] == 'i' && !memcmp(a + 2, "86", 2)))
		return PFC_UNWIND_X86_64;
	if ((len == 7 && !memcmp(a, "aarch64", 7)) || (len == 5 && !memcmp(a, "arm64", 5)))
		return PFC_UNWIND_AARCH64;
	return PFC_UNWIND_UNKNOWN;
}

int pfc_unwind_perf_reg(enum pfc_unwind_arch arch, int dwreg)
{
	const struct arch_desc *a = arch_desc(arch);

	if (!a || dwreg < 0)
		return -1;
	if (dwreg == a->sp)
		return a->preg_sp;
	return dwreg < a->nregs ? a->to_perf[dwreg] : -1;
}

int pfc_unwind_perf_ip(enum pfc_unwind_arch arch)
{
	const struct arch_desc *a = arch_desc(arch);

	return a ? a->preg_ip : -1;
}

int pfc_unwind_perf_sp(enum pfc_unwind_arch arch)
{
	const struct arch_desc *a = arch_desc(arch);

	return a ? a->preg_sp : -1;
}

/*
 * The rules of one pc as libdw gives them, copied: a stack of the same program asks for the
 * same few hundred pcs again and again, and libdw searches the FDE table, runs the CIE's and
 * FDE's instructions and allocates a frame each time.  A rule longer than RULE_OPS
 * operations is not kept (libdw is asked again for that pc).
 */
#define RULE_OPS 4
#define RULES_SLOTS 1024	/* per file, direct-mapped by pc */

enum { RULES_OK, RULES_NO_FDE, RULES_BAD, RULES_NO_CFA };

enum { RULE_EXPR, RULE_AT_CFA, RULE_VAL_CFA };

struct cfi_rule {
	int8_t n;		/* operations; 0: none (same value, or undefined when undef) */
	uint8_t undef;
	uint8_t kind;		/* RULE_AT_CFA: saved at CFA + off (offset(N)); RULE_VAL_CFA: is CFA + off
				 * (val_offset(N)); RULE_EXPR: evaluate ops */
	uint64_t off;
	Dwarf_Op ops[RULE_OPS];
};

struct cfi_rules {
	uint64_t pc;
	uint8_t status;		/* RULES_*: what libdw said of the pc */
	uint8_t nregs;		/* the columns asked for (the architecture's): part of the key */
	uint8_t fail_at;	/* the register libdw gave no rule for; 0xff: none */
	uint8_t signalp;
	int8_t ncfa;
	uint8_t nact;		/* the registers a step changes, in order; the last may be fail_at */
	uint8_t act[NREGS];
	Dwarf_Op cfa[RULE_OPS];
	struct cfi_rule reg[NREGS];
};

struct pfc_cfi {
	struct cfi_rules *rules;	/* RULES_SLOTS, allocated at the first walk through the file */
	/* the slots filled: a slot is written before it is ever read, so that its page is
	 * backed by one fault (a read first would map the zero page, and the write then copy
	 * it and flush the other threads' TLBs) */
	uint64_t rules_used[RULES_SLOTS / 64];
	int fd;
	Elf *elf;
	Dwarf_CFI *cfi;
	uint64_t bias;		/* CFI address = file offset + bias (perf: .eh_frame_hdr's sh_addr - sh_offset) */
	uint64_t size;		/* of the file */
	const uint8_t *image;	/* the file's bytes (libelf's mapping) */
	void *zmap;		/* a zip mapped whole, when the ELF file is one of its members */
	size_t zmap_size;
	int image_fd;		/* pfc_cfi_image_fd's memory file, -1 until then */
	int no_match;		/* libdw's error number for "no FDE covers this pc" */
};

static Elf_Scn *scn_by_name(Elf *elf, const char *want, GElf_Shdr *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;
		if (!gelf_getshdr(scn, out))
			continue;
		name = elf_strptr(elf, shstrndx, out->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

static int cfi_setup(struct pfc_cfi *c, const char **why);

/* A new pfc_cfi with PATH open, or NULL with *why set. */
static struct pfc_cfi *cfi_new(const char *path, const char **why)
{
	struct pfc_cfi *c = calloc(1, sizeof(*c));

	*why = "out of memory";
	if (!c)
		return NULL;
	c->image_fd = -1;
	c->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0) {
		*why = "no file";
		free(c);
		return NULL;
	}
	return c;
}

struct pfc_cfi *pfc_cfi_open(const char *path, const char **why)
{
	struct pfc_cfi *c = cfi_new(path, why);
	off_t end;

	if (!c)
		return NULL;
	end = lseek(c->fd, 0, SEEK_END);
	c->size = end > 0 ? (uint64_t)end : 0;
	elf_version(EV_CURRENT);
	c->elf = elf_begin(c->fd, PFC_ELF_C_READ, NULL);
	*why = "not an ELF file";
	if (!c->elf || elf_kind(c->elf) != ELF_K_ELF)
		goto fail;
	{
		size_t n = 0;
		char *img = elf_rawfile(c->elf, &n);
		if (img && n == c->size)
			c->image = (const uint8_t *)img;
	}
	if (cfi_setup(c, why) == 0)
		return c;
fail:
	pfc_cfi_close(c);
	return NULL;
}

/* The CFI of c->elf: 0, or -1 with *why set. */
static int cfi_setup(struct pfc_cfi *c, const char **why)
{
	GElf_Shdr sh;

	/* perf's libunwind path reads the FDE table of .eh_frame_hdr, nothing else */
	*why = "no .eh_frame_hdr";
	if (!scn_by_name(c->elf, ".eh_frame_hdr", &sh) || sh.sh_type == SHT_NOBITS)
		return -1;
	c->bias = sh.sh_addr - sh.sh_offset;
	*why = "unreadable .eh_frame";
	c->cfi = dwarf_getcfi_elf(c->elf);
	if (!c->cfi)
		return -1;
	{
		/* libdw does not export its error numbers: learn the one for a pc without FDE */
		Dwarf_Frame *f = NULL;
		if (dwarf_cfi_addrframe(c->cfi, (Dwarf_Addr)-16, &f) == 0)
			free(f);
		else
			c->no_match = dwarf_errno();
	}
	return 0;
}

int pfc_cfi_image_fd(struct pfc_cfi *c)
{
	size_t done = 0;
	ssize_t n;

	if (c->image_fd >= 0 || !c->image)
		return c->image_fd;
	if ((c->image_fd = memfd_create("apk-member", MFD_CLOEXEC)) < 0)
		return -1;
	while (done < c->size) {
		n = write(c->image_fd, c->image + done, c->size - done);
		if (n <= 0) {
			close(c->image_fd);
			return c->image_fd = -1;
		}
		done += (size_t)n;
	}
	return c->image_fd;
}

int pfc_cfi_build_id(struct pfc_cfi *c, uint8_t *out, size_t max)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(c->elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n;

		/* notes aligned to 8 (ELF_T_NHDR8: .note.gnu.property) never hold a build-id */
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)) ||
		    !d->d_buf || d->d_type != ELF_T_NHDR)
			continue;
		if ((n = pfc_buildid_from_notes(d->d_buf, d->d_size, out, max)) > 0)
			return (int)n;
	}
	return 0;
}

static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const uint8_t *p) { return le16(p) | le16(p + 2) << 16; }

/*
 * Where MEMBER's bytes start in the zip Z of N bytes, and how many: 0, or -1 when it is not
 * there or not stored as it is (Android maps a library from its .apk only when it is stored
 * uncompressed, so a compressed one cannot be what a map shows).  The end-of-central-directory
 * record, the central directory entry, then the local header, which has its own extra field.
 */
static int zip_member(const uint8_t *z, size_t n, const char *member, uint64_t *off, uint64_t *size)
{
	size_t i, mlen = strlen(member), eocd = (size_t)-1, cd, cd_end, k;

	if (n < 22)
		return -1;
	for (i = n - 22;; i--) {	/* the comment after it is at most 65535 bytes */
		if (le32(z + i) == 0x06054b50 && i + 22 + le16(z + i + 20) <= n) {
			eocd = i;
			break;
		}
		if (!i || n - i > 22 + 65535)
			break;
	}
	if (eocd == (size_t)-1)
		return -1;
	cd = le32(z + eocd + 16);
	cd_end = cd + (size_t)le32(z + eocd + 12);
	if (cd > eocd || cd_end > eocd || cd_end < cd)
		return -1;
	for (k = cd; k + 46 <= cd_end;) {
		size_t nl = le16(z + k + 28), el = le16(z + k + 30), cl = le16(z + k + 32);
		if (le32(z + k) != 0x02014b50 || k + 46 + nl > cd_end)
			return -1;
		if (nl == mlen && !memcmp(z + k + 46, member, mlen)) {
			size_t lh = le32(z + k + 42), data;
			uint64_t csize = le32(z + k + 20), usize = le32(z + k + 24);
			if (le16(z + k + 10) != 0 || csize != usize || lh > n || n - lh < 30 || le32(z + lh) != 0x04034b50)
				return -1;
			data = lh + 30 + le16(z + lh + 26) + le16(z + lh + 28);
			if (data > n || usize > n - data)
				return -1;
			*off = data;
			*size = usize;
			return 0;
		}
		k += 46 + nl + el + cl;
	}
	return -1;
}

struct pfc_cfi *pfc_cfi_open_in_zip(const char *path, const char *member, const char **why)
{
	struct pfc_cfi *c = cfi_new(path, why);
	struct stat st;
	uint64_t off, size;

	if (!c)
		return NULL;
	*why = "not a zip file";
	if (fstat(c->fd, &st) < 0 || st.st_size < 22)
		goto fail;
	c->zmap_size = (size_t)st.st_size;
	/* private and writable: libelf may write into what it is given, never into the file */
	c->zmap = mmap(NULL, c->zmap_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, c->fd, 0);
	if (c->zmap == MAP_FAILED) {
		c->zmap = NULL;
		goto fail;
	}
	*why = "no such member stored uncompressed";
	if (zip_member(c->zmap, c->zmap_size, member, &off, &size) < 0)
		goto fail;
	c->size = size;
	c->image = (const uint8_t *)c->zmap + off;
	elf_version(EV_CURRENT);
	c->elf = elf_memory((char *)c->zmap + off, (size_t)size);
	*why = "not an ELF file";
	if (!c->elf || elf_kind(c->elf) != ELF_K_ELF)
		goto fail;
	if (cfi_setup(c, why) == 0)
		return c;
fail:
	pfc_cfi_close(c);
	return NULL;
}

void pfc_cfi_close(struct pfc_cfi *c)
{
	if (!c)
		return;
	pfc_mem_sparse_free(c->rules, RULES_SLOTS * sizeof(*c->rules));
	if (c->cfi)
		dwarf_cfi_end(c->cfi);
	if (c->elf)
		elf_end(c->elf);
	if (c->zmap)
		munmap(c->zmap, c->zmap_size);
	if (c->image_fd >= 0)
		close(c->image_fd);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

int pfc_cfi_read(struct pfc_cfi *c, uint64_t off, void *buf, size_t n)
{
	if (off > c->size || n > c->size - off)
		return -1;
	if (c->image) {
		memcpy(buf, c->image + off, n);
		return 0;
	}
	return pread(c->fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

/* ---- the walk ---- */

enum loc_kind { LOC_NULL, LOC_VAL, LOC_MEM, LOC_MISSING };

struct loc {
	uint8_t kind;
	uint64_t v;
};

struct walk {
	const struct arch_desc *a;
	const struct pfc_unwind_in *in;
	pfc_unwind_find_fn find;
	void *arg;
	uint64_t sp0;		/* the sample's SP: the copy starts there */
	struct loc loc[NREGS];
	uint64_t ip, cfa;
	uint64_t rule_cfa;	/* while a frame's register rules are evaluated: its CFA */
	int use_prev;		/* look up ip - 1 (a return address), not ip */
	int via_signal;		/* the last step went through a signal frame's CFI */
	int via_cfi;		/* the last step used CFI (not the guess, not the frame pointers) */
	int stack_miss;		/* a read fell outside the copy */
	int cut;		/* ... while reading the frames (not a probe of code bytes) */
	struct pfc_unwind_map last;	/* the map found last: the maps stay as they are for a walk */
	int have_last;
};

static int find_map(struct walk *w, uint64_t addr, struct pfc_unwind_map *m)
{
	if (w->have_last && addr >= w->last.start && addr < w->last.end) {
		*m = w->last;
		return 0;
	}
	if (w->find(w->arg, addr, m) < 0)
		return -1;
	w->last = *m;
	w->have_last = m->end > m->start;
	return 0;
}

/*
 * perf's access_mem: the copy, except its last word.  Elsewhere the file mapped there
 * (access_dso_mem); where a map has no readable file ([stack] beyond the copy, [heap],
 * anonymous memory) perf's callback returns a positive value that libunwind takes for
 * success, so the word reads as 0.  Only an address outside every map fails.
 */
static int mem_read(struct walk *w, uint64_t addr, uint64_t *val)
{
	const struct pfc_unwind_in *in = w->in;
	struct pfc_unwind_map m;

	if (addr + 8 < addr)
		return -1;
	if (addr >= w->sp0 && addr + 8 < w->sp0 + in->stack_size) {
		*val = pfc_ld64(in->stack + (addr - w->sp0), in->swap);
		return 0;
	}
	if (find_map(w, addr, &m) < 0) {
		w->stack_miss = w->cut = 1;
		return -1;
	}
	if (m.cfi) {
		uint8_t b[8];
		if (pfc_cfi_read(m.cfi, addr - m.start + m.pgoff, b, 8) == 0) {
			*val = pfc_ld64(b, in->swap);
			return 0;
		}
	}
	w->stack_miss = w->cut = 1;
	*val = 0;
	return 0;
}

static int loc_get(struct walk *w, int reg, uint64_t *val)
{
	const struct loc *l;

	if (reg == w->a->sp) {	/* libunwind: the stack pointer reads as the CFA */
		*val = w->cfa;
		return 0;
	}
	if (reg < 0 || reg >= w->a->nregs)
		return -1;
	l = &w->loc[reg];
	switch (l->kind) {
	case LOC_VAL:
		*val = l->v;
		return 0;
	case LOC_MEM:
		return mem_read(w, l->v, val);
	default:
		return -1;
	}
}

static int perf_reg(const struct pfc_unwind_in *in, int preg, uint64_t *val)
{
	unsigned idx;

	if (preg < 0 || preg > 63 || !(in->mask >> preg & 1))
		return -1;
	idx = (unsigned)__builtin_popcountll(in->mask & ((1ULL << preg) - 1));
	*val = pfc_ld64(in->regs + (size_t)idx * 8, in->swap);
	return 0;
}

/*
 * Evaluate a CFI expression.  Returns 0 with the result in *out: LOC_MEM (an address),
 * LOC_VAL (DW_OP_stack_value) or a register's own location (DW_OP_regN alone).
 */
static int eval(struct walk *w, const Dwarf_Op *ops, size_t nops, uint64_t push, int have_push, struct loc *out)
{
	uint64_t st[EXPR_STACK];
	size_t sp = 0, i;
	int is_value = 0;

	if (have_push)
		st[sp++] = push;
	if (nops == 1 && (ops[0].atom == DW_OP_regx || (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31))) {
		int r = ops[0].atom == DW_OP_regx ? (int)ops[0].number : ops[0].atom - DW_OP_reg0;
		if (r == w->a->sp) {
			out->kind = LOC_VAL;
			out->v = w->rule_cfa;
		} else if (r < 0 || r >= w->a->nregs) {
			return -1;
		} else {
			*out = w->loc[r];
		}
		return 0;
	}
#define NEED(k) do { if (sp < (k)) return -1; } while (0)
#define PUSH(x) do { if (sp >= EXPR_STACK) return -1; st[sp++] = (x); } while (0)
	for (i = 0; i < nops; i++) {
		uint8_t op = ops[i].atom;
		uint64_t a, b;
		if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
			PUSH((uint64_t)(op - DW_OP_lit0));
			continue;
		}
		if ((op >= DW_OP_breg0 && op <= DW_OP_breg31) || op == DW_OP_bregx) {
			int r = op == DW_OP_bregx ? (int)ops[i].number : op - DW_OP_breg0;
			uint64_t off = op == DW_OP_bregx ? ops[i].number2 : ops[i].number;
			if (r == w->a->ra && w->a->ra_is_pc) {	/* the column of the return address is the pc */
				a = w->ip;
			} else if (loc_get(w, r, &a) < 0) {
				return -1;
			}
			PUSH(a + off);
			continue;
		}
		switch (op) {
		case DW_OP_call_frame_cfa:
			PUSH(w->rule_cfa);
			break;
		case DW_OP_addr:
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
		case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
		case DW_OP_constu: case DW_OP_consts:
			PUSH(ops[i].number);
			break;
		case DW_OP_plus_uconst:
			NEED(1);
			st[sp - 1] += ops[i].number;
			break;
		case DW_OP_dup:
			NEED(1);
			a = st[sp - 1];
			PUSH(a);
			break;
		case DW_OP_drop:
			NEED(1);
			sp--;
			break;
		case DW_OP_over:
			NEED(2);
			a = st[sp - 2];
			PUSH(a);
			break;
		case DW_OP_pick:
			NEED(ops[i].number + 1);
			a = st[sp - 1 - ops[i].number];
			PUSH(a);
			break;
		case DW_OP_swap:
			NEED(2);
			a = st[sp - 1];
			st[sp - 1] = st[sp - 2];
			st[sp - 2] = a;
			break;
		case DW_OP_deref:
			NEED(1);
			if (mem_read(w, st[sp - 1], &a) < 0)
				return -1;
			st[sp - 1] = a;
			break;
		case DW_OP_abs:
			NEED(1);
			if ((int64_t)st[sp - 1] < 0)
				st[sp - 1] = -st[sp - 1];
			break;
		case DW_OP_neg:
			NEED(1);
			st[sp - 1] = -st[sp - 1];
			break;
		case DW_OP_not:
			NEED(1);
			st[sp - 1] = ~st[sp - 1];
			break;
		case DW_OP_and: case DW_OP_or: case DW_OP_xor: case DW_OP_plus: case DW_OP_minus:
		case DW_OP_mul: case DW_OP_shl: case DW_OP_shr: case DW_OP_shra:
		case DW_OP_eq: case DW_OP_ne: case DW_OP_lt: case DW_OP_le: case DW_OP_gt: case DW_OP_ge:
			NEED(2);
			b = st[--sp];
			a = st[sp - 1];
			switch (op) {
			case DW_OP_and: a &= b; break;
			case DW_OP_or: a |= b; break;
			case DW_OP_xor: a ^= b; break;
			case DW_OP_plus: a += b; break;
			case DW_OP_minus: a -= b; break;
			case DW_OP_mul: a *= b; break;
			case DW_OP_shl: a = b < 64 ? a << b : 0; break;
			case DW_OP_shr: a = b < 64 ? a >> b : 0; break;
			case DW_OP_shra: a = (uint64_t)((int64_t)a >> (b < 63 ? b : 63)); break;
			case DW_OP_eq: a = a == b; break;
			case DW_OP_ne: a = a != b; break;
			case DW_OP_lt: a = (int64_t)a < (int64_t)b; break;
			case DW_OP_le: a = (int64_t)a <= (int64_t)b; break;
			case DW_OP_gt: a = (int64_t)a > (int64_t)b; break;
			case DW_OP_ge: a = (int64_t)a >= (int64_t)b; break;
			}
			st[sp - 1] = a;
			break;
		case DW_OP_nop:
			break;
		case DW_OP_stack_value:
			is_value = 1;
			break;
		default:
			return -1;	/* branches and the rest: no CFI of a real program needs them */
		}
	}
#undef NEED
#undef PUSH
	if (!sp)
		return -1;
	out->kind = is_value ? LOC_VAL : LOC_MEM;
	out->v = st[sp - 1];
	return 0;
}

/* libunwind's unw_is_signal_frame: the pc is at `mov $15,%rax; syscall` (rt_sigreturn). */
static int is_signal_frame(struct walk *w, uint64_t ip)
{
	uint64_t w0, w1;
	int cut = w->cut, ret;

	ret = mem_read(w, ip, &w0) == 0 && mem_read(w, ip + 8, &w1) == 0 &&
	      w0 == 0x0f0000000fc0c748ULL && (w1 & 0xff) == 0x05;
	w->cut = cut;
	return ret;
}

/* libunwind's is_plt_entry: jmp *disp(%rip); push $n; jmp ... */
static int is_plt_entry(struct walk *w)
{
	uint64_t w0, w1;
	int cut = w->cut, ret;

	ret = mem_read(w, w->ip, &w0) == 0 && mem_read(w, w->ip + 8, &w1) == 0 &&
	      (w0 & 0xffff) == 0x25ff && ((w0 >> 48) & 0xff) == 0x68 && ((w1 >> 24) & 0xff) == 0xe9;
	w->cut = cut;
	return ret;
}

/*
 * libdw writes offset(N) as DW_OP_call_frame_cfa, DW_OP_plus_uconst N (the second left out
 * for 0) and val_offset(N) the same with DW_OP_stack_value after: nearly every rule of a
 * compiler's CFI.  Those are kept as CFA + off, with the result eval would give.
 */
static void rule_kind(struct cfi_rule *ru)
{
	const Dwarf_Op *o = ru->ops;
	int n = ru->n, k = 1;

	ru->kind = RULE_EXPR;
	ru->off = 0;
	if (n < 1 || o[0].atom != DW_OP_call_frame_cfa)
		return;
	if (k < n && o[k].atom == DW_OP_plus_uconst)
		ru->off = o[k++].number;
	if (k == n)
		ru->kind = RULE_AT_CFA;
	else if (k + 1 == n && o[k].atom == DW_OP_stack_value)
		ru->kind = RULE_VAL_CFA;
}

/* The rules of cfi_pc from libdw into *r; 0, or -1 when one is too long to keep. */
static int rules_fill(struct pfc_cfi *cfi, const struct arch_desc *a, uint64_t cfi_pc, struct cfi_rules *r)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op mem[3], *ops;
	size_t nops;
	bool signalp = false;
	int reg, ret = -1;

	memset(r, 0, sizeof(*r));
	r->pc = cfi_pc;
	r->nregs = (uint8_t)a->nregs;
	r->fail_at = 0xff;
	if (dwarf_cfi_addrframe(cfi->cfi, cfi_pc, &frame) != 0) {
		r->status = dwarf_errno() == cfi->no_match ? RULES_NO_FDE : RULES_BAD;
		return 0;
	}
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || !nops) {
		r->status = RULES_NO_CFA;
		ret = 0;
		goto out;
	}
	if (nops > RULE_OPS)
		goto out;
	memcpy(r->cfa, ops, nops * sizeof(*ops));
	r->ncfa = (int8_t)nops;
	for (reg = 0; reg < a->nregs; reg++) {
		if (reg == a->sp)
			continue;
		if (dwarf_frame_register(frame, reg, mem, &ops, &nops) != 0) {
			r->fail_at = (uint8_t)reg;
			break;
		}
		if (nops > RULE_OPS)
			goto out;
		r->reg[reg].undef = !nops && ops == mem;
		r->reg[reg].n = (int8_t)nops;
		if (nops)
			memcpy(r->reg[reg].ops, ops, nops * sizeof(*ops));
		rule_kind(&r->reg[reg]);
		/* a register without a rule keeps its place; an undefined one matters only as
		 * the return address or x86-64's frame pointer (step_cfi) */
		if (nops || (r->reg[reg].undef && (reg == a->ra || (a->fp_end && reg == a->fp))))
			r->act[r->nact++] = (uint8_t)reg;
	}
	if (r->fail_at != 0xff)
		r->act[r->nact++] = r->fail_at;
	dwarf_frame_info(frame, NULL, NULL, &signalp);
	r->signalp = signalp;
	ret = 0;
out:
	free(frame);
	return ret;
}

/* step_cfi asking libdw, for a pc whose rules are too long to keep */
static int step_cfi_libdw(struct walk *w, struct pfc_cfi *cfi, uint64_t cfi_pc)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op mem[3], *ops;
	size_t nops;
	struct loc nl[NREGS];
	uint64_t cfa, prev_ip = w->ip, prev_cfa = w->cfa;
	bool signalp = false;
	int r, ret = -EINVAL;

	if (dwarf_cfi_addrframe(cfi->cfi, cfi_pc, &frame) != 0)
		return dwarf_errno() == cfi->no_match ? -ENOENT : -EINVAL;
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || !nops)
		goto out;
	{
		struct loc l;
		/* the CFA expression gets a dummy 0 below it, as libunwind evaluates it */
		if (nops == 1 && (ops[0].atom == DW_OP_bregx || (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31))) {
			int reg = ops[0].atom == DW_OP_bregx ? (int)ops[0].number : ops[0].atom - DW_OP_breg0;
			uint64_t off = ops[0].atom == DW_OP_bregx ? ops[0].number2 : ops[0].number, v;
			if (loc_get(w, reg, &v) < 0)
				goto out;
			cfa = v + off;
		} else {
			if (eval(w, ops, nops, 0, 1, &l) < 0 || l.kind != LOC_MEM)
				goto out;
			cfa = l.v;
		}
	}
	memcpy(nl, w->loc, sizeof(nl));
	for (r = 0; r < w->a->nregs; r++) {
		if (r == w->a->sp)
			continue;
		if (dwarf_frame_register(frame, r, mem, &ops, &nops) != 0)
			goto out;
		if (!nops) {
			/* undefined: the end for the return address, and on x86-64 for %rbp
			 * (libunwind's "NULL RBP" end); other registers keep their place, as
			 * libunwind treats every register CFI does not mention */
			if (ops == mem && (r == w->a->ra || (w->a->fp_end && r == w->a->fp)))
				nl[r].kind = LOC_NULL;
			continue;
		}
		/* the rule's expression starts from the new CFA (libdw puts DW_OP_call_frame_cfa
		 * first); registers in it, %rsp too (sigreturn's CFI reads the ucontext through
		 * it), are still this frame's, as libunwind reads them before it moves on */
		w->rule_cfa = cfa;
		if (eval(w, ops, nops, 0, 0, &nl[r]) < 0)
			goto out;
	}
	dwarf_frame_info(frame, NULL, NULL, &signalp);
	memcpy(w->loc, nl, sizeof(nl));
	w->cfa = cfa;
	if (w->loc[w->a->ra].kind == LOC_NULL) {
		w->ip = 0;
		ret = 0;
		goto out;
	}
	if (loc_get(w, w->a->ra, &w->ip) < 0) {
		ret = -EINVAL;
		goto out;
	}
	ret = 1;
	if (w->ip == prev_ip && w->cfa == prev_cfa) {
		ret = -ELOOP;
		goto out;
	}
	if (w->a->fp_end && w->loc[w->a->fp].kind == LOC_NULL) {
		w->ip = 0;
		ret = 0;
	}
	w->use_prev = !signalp;
	w->via_signal = signalp;
out:
	free(frame);
	return ret;
}

/* 1: stepped (w->ip is the caller's), 0: the end, < 0: failed (-EINVAL, -ENOENT: no FDE). */
static int step_cfi(struct walk *w, struct pfc_cfi *cfi, uint64_t cfi_pc)
{
	struct cfi_rules one, *r;
	struct loc nl[NREGS];
	size_t slot;
	uint64_t cfa, prev_ip = w->ip, prev_cfa = w->cfa;
	int reg, k;

	if (!cfi->rules)
		cfi->rules = pfc_mem_sparse(RULES_SLOTS * sizeof(*cfi->rules));	/* untouched slots cost nothing */
	slot = (size_t)((cfi_pc ^ cfi_pc >> 10) % RULES_SLOTS);
	r = cfi->rules ? &cfi->rules[slot] : &one;
	if (r == &one || !(cfi->rules_used[slot / 64] >> (slot % 64) & 1) || r->pc != cfi_pc || r->nregs != w->a->nregs) {
		if (rules_fill(cfi, w->a, cfi_pc, &one) < 0)
			return step_cfi_libdw(w, cfi, cfi_pc);	/* too long to keep */
		if (r != &one) {
			*r = one;
			cfi->rules_used[slot / 64] |= (uint64_t)1 << (slot % 64);
		}
	}
	switch (r->status) {
	case RULES_NO_FDE:
		return -ENOENT;
	case RULES_BAD:
	case RULES_NO_CFA:
		return -EINVAL;
	}
	{
		const Dwarf_Op *ops = r->cfa;
		struct loc l;
		/* the CFA expression gets a dummy 0 below it, as libunwind evaluates it */
		if (r->ncfa == 1 && (ops[0].atom == DW_OP_bregx || (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31))) {
			int cr = ops[0].atom == DW_OP_bregx ? (int)ops[0].number : ops[0].atom - DW_OP_breg0;
			uint64_t off = ops[0].atom == DW_OP_bregx ? ops[0].number2 : ops[0].number, v;
			if (loc_get(w, cr, &v) < 0)
				return -EINVAL;
			cfa = v + off;
		} else {
			if (eval(w, ops, (size_t)r->ncfa, 0, 1, &l) < 0 || l.kind != LOC_MEM)
				return -EINVAL;
			cfa = l.v;
		}
	}
	/* every rule reads this frame's registers: the new places are set after all of them */
	for (k = 0; k < r->nact; k++) {
		const struct cfi_rule *ru;
		reg = r->act[k];
		ru = &r->reg[reg];
		if (reg == r->fail_at)
			return -EINVAL;
		nl[k] = w->loc[reg];
		if (!ru->n) {
			/* undefined: the end for the return address, and on x86-64 for %rbp
			 * (libunwind's "NULL RBP" end); other registers keep their place, as
			 * libunwind treats every register CFI does not mention */
			nl[k].kind = LOC_NULL;
		} else if (ru->kind != RULE_EXPR) {
			nl[k].kind = ru->kind == RULE_AT_CFA ? LOC_MEM : LOC_VAL;
			nl[k].v = cfa + ru->off;
		} else {
			/* the rule's expression starts from the new CFA (libdw puts
			 * DW_OP_call_frame_cfa first); registers in it, %rsp too (sigreturn's CFI
			 * reads the ucontext through it), are still this frame's, as libunwind
			 * reads them before it moves on */
			w->rule_cfa = cfa;
			if (eval(w, ru->ops, (size_t)ru->n, 0, 0, &nl[k]) < 0)
				return -EINVAL;
		}
	}
	for (k = 0; k < r->nact; k++)
		w->loc[r->act[k]] = nl[k];
	w->cfa = cfa;
	if (w->loc[w->a->ra].kind == LOC_NULL) {
		w->ip = 0;
		return 0;
	}
	if (loc_get(w, w->a->ra, &w->ip) < 0)
		return -EINVAL;
	if (w->ip == prev_ip && w->cfa == prev_cfa)
		return -ELOOP;
	if (w->a->fp_end && w->loc[w->a->fp].kind == LOC_NULL) {
		w->ip = 0;
		w->use_prev = !r->signalp;
		w->via_signal = r->signalp;
		return 0;
	}
	w->use_prev = !r->signalp;
	w->via_signal = r->signalp;
	return 1;
}

/* libunwind's guess where a file has CFI but none for this pc (x86_64 Gstep.c). */
#define REG_RBP 6
#define REG_RA 16
static int step_guess(struct walk *w)
{
	uint64_t prev_ip = w->ip, prev_cfa = w->cfa, rbp, unused;
	struct loc rbp_loc = { LOC_NULL, 0 }, rip_loc = { LOC_NULL, 0 };
	int r, invalid_prev_rip, ret = 0;

	if (is_signal_frame(w, w->ip))
		return 0;	/* a trampoline without CFI: perf's libunwind cannot go on either */
	if (is_plt_entry(w)) {
		w->loc[REG_RA].kind = LOC_MEM;
		w->loc[REG_RA].v = w->cfa;
		w->cfa += 8;
	} else if (w->loc[REG_RBP].kind == LOC_NULL) {
		for (r = 0; r < NREGS; r++)
			w->loc[r].kind = LOC_NULL;
	} else {
		if (loc_get(w, REG_RBP, &rbp) < 0)
			return -EINVAL;
		{
			int cut = w->cut;
			invalid_prev_rip = mem_read(w, prev_ip, &unused) != 0;
			w->cut = cut;
		}
		w->stack_miss = 0;
		if (!rbp && !invalid_prev_rip) {
			/* the end */
		} else {
			uint64_t rbp1;
			rbp_loc.kind = LOC_MEM;
			rbp_loc.v = rbp;
			rip_loc.kind = LOC_MEM;
			rip_loc.v = rbp + 8;
			if (mem_read(w, rbp, &rbp1) < 0 || rbp < w->cfa || rbp - w->cfa > 0x4000) {
				rip_loc.kind = LOC_NULL;
				rbp_loc.kind = LOC_NULL;
			}
			w->stack_miss = 0;
			w->cfa += 16;
		}
		for (r = 0; r < NREGS; r++)
			w->loc[r].kind = LOC_NULL;
		w->loc[REG_RBP] = rbp_loc;
		w->loc[REG_RA] = rip_loc;
		w->use_prev = 1;
		if (rbp_loc.kind == LOC_NULL && !invalid_prev_rip)
			return 0;
	}
	if (w->loc[REG_RA].kind != LOC_NULL) {
		if (loc_get(w, REG_RA, &w->ip) < 0)
			return -EINVAL;
		ret = 1;
	} else {
		w->ip = 0;
	}
	if (w->ip == prev_ip && w->cfa == prev_cfa)
		return -ELOOP;
	return ret;
}

/*
 * Beyond perf: code without CFI (JIT) is crossed on its frame-pointer chain, inside the copy:
 * [fp] is the caller's frame pointer, [fp + 8] the return address (%rbp on x86-64, x29 on
 * aarch64, where the frame record is the same two words).  On aarch64 it is also libunwind's
 * step for a pc its file has no FDE for.
 */
static int step_fp(struct walk *w)
{
	const struct arch_desc *a = w->a;
	uint64_t rbp, rbp1, ra;
	int r;

	if (loc_get(w, a->fp, &rbp) < 0 || rbp < w->cfa || rbp - w->cfa > w->in->stack_size)
		return 0;
	if (mem_read(w, rbp, &rbp1) < 0 || mem_read(w, rbp + 8, &ra) < 0 || !ra) {
		w->stack_miss = 0;
		return 0;
	}
	/* every register is unknown now, callee-saved ones too (x86-64's return-address
	 * column is no register: it stays as it was) */
	for (r = 0; r < a->nregs; r++)
		if (r != a->ra || !a->ra_is_pc)
			w->loc[r].kind = LOC_NULL;
	w->loc[a->fp].kind = LOC_VAL;
	w->loc[a->fp].v = rbp1;
	if (!a->ra_is_pc) {
		w->loc[a->ra].kind = LOC_VAL;
		w->loc[a->ra].v = ra;
	}
	w->cfa = rbp + 16;
	w->ip = ra;
	w->use_prev = 1;
	return 1;
}

static int step(struct walk *w, int *fp)
{
	struct pfc_unwind_map m;
	uint64_t pc = w->use_prev ? w->ip - 1 : w->ip;
	int ret;

	*fp = 0;
	w->via_signal = w->via_cfi = 0;
	if (find_map(w, pc, &m) < 0)
		return -EINVAL;
	if (!m.cfi) {
		if (w->in->beyond_perf && m.jit) {
			*fp = 1;
			return step_fp(w);
		}
		return -EINVAL;
	}
	ret = step_cfi(w, m.cfi, pc - m.start + m.pgoff + m.cfi->bias);
	if (ret == -ENOENT && !w->a->x86_guesses) {
		*fp = 1;
		ret = step_fp(w);
	} else if (ret == -ENOENT)
		ret = step_guess(w);
	else
		w->via_cfi = 1;
	return ret;
}

int pfc_unwind_walk(const struct pfc_unwind_in *in, pfc_unwind_find_fn find, void *arg, struct pfc_unwind_out *out)
{
	struct walk w;
	int r, fp;

	out->n = 0;
	out->end = PFC_UNWIND_END_OK;
	out->fp_frames = 0;
	if (out->max < 1)
		return 0;
	memset(&w, 0, sizeof(w));
	w.in = in;
	w.find = find;
	w.arg = arg;
	w.a = arch_desc(in->arch);
	if (!w.a) {
		/* registers of an architecture the walk does not know are not read at all: the
		 * sample's own ip is the one frame that is certain */
		if (!in->ip) {
			out->end = PFC_UNWIND_END_NOREGS;
			return -1;
		}
		out->ips[out->n++] = in->ip;
		return 0;
	}
	if (perf_reg(in, w.a->preg_ip, &w.ip) < 0) {
		out->end = PFC_UNWIND_END_NOREGS;
		return -1;
	}
	out->ips[out->n++] = w.ip;
	/* an arm64 kernel keeps a 32-bit process's pc at PERF_REG_ARM64_PC too, but its other
	 * registers are ARM's (r13 sp, r14 lr) and its code has ARM's unwind tables: no walk */
	if (out->max < 2 || (in->arch == PFC_UNWIND_AARCH64 && in->abi == 1))
		return 0;
	/* unw_init_remote reads the pc and the stack pointer: both must be there */
	if (perf_reg(in, w.a->preg_sp, &w.cfa) < 0) {
		out->end = PFC_UNWIND_END_NOREGS;
		return 0;
	}
	w.sp0 = w.cfa;
	{
		/* the sample keeps the registers of its mask in perf's order: one pass */
		int8_t idx[64];
		uint64_t m = in->mask;
		int k = 0;
		memset(idx, -1, sizeof(idx));
		for (; m; m &= m - 1)
			idx[__builtin_ctzll(m)] = (int8_t)k++;
		for (r = 0; r < w.a->nregs; r++) {
			int p = w.a->to_perf[r];
			if (r == w.a->sp)
				continue;
			if (p >= 0 && idx[p] >= 0) {
				w.loc[r].kind = LOC_VAL;
				w.loc[r].v = pfc_ld64(in->regs + (size_t)idx[p] * 8, in->swap);
			} else {
				w.loc[r].kind = LOC_MISSING;
			}
		}
	}
	for (;;) {
		int ret = step(&w, &fp);
		if (ret <= 0) {
			if (ret == -ELOOP)
				out->end = PFC_UNWIND_END_BADCFI;
			else if (w.cut)
				out->end = PFC_UNWIND_END_STACK;
			break;
		}
		if (out->n >= out->max) {
			out->end = PFC_UNWIND_END_MAX;
			break;
		}
		w.stack_miss = 0;
		/* perf: every frame but a signal frame's gives a return address: minus one.
		 * libunwind 1.6 (unw_is_signal_frame) calls a frame a signal frame when the
		 * CFI of the step that reached it was a signal frame's ('S': sigreturn's
		 * __restore_rt); so the trampoline's own address is still reported minus one,
		 * and the interrupted pc behind it as it is */
		if (w.via_signal)
			out->ips[out->n++] = w.ip;
		else if (w.via_cfi || !w.a->x86_guesses)
			out->ips[out->n++] = w.ip - 1;
		else
			out->ips[out->n++] = is_signal_frame(&w, w.ip) ? w.ip : w.ip - 1;
		w.stack_miss = 0;
		out->fp_frames += fp;
	}
	return 0;
}
