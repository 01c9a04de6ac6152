/*
 * unwind.c - owns the DWARF walk of one sample's user stack.  The rules are those of
 * perf 6.1 built with libunwind 1.6 (Debian's): the CFI of a file comes from its
 * .eh_frame_hdr table only, memory is the stack copy (minus its last word, as perf's
 * access_mem has it) or the file mapped at the address, a pc without an FDE falls back
 * on libunwind's frame-pointer guess, and return addresses are reported minus one.  The
 * CFI itself is parsed by elfutils' libdw, once per file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include "converter/native/elfread.h"
#include "converter/native/unwind.h"
#include "converter/util/bytes.h"

#define NREGS 17	/* DWARF x86-64: rax..r15, then the return address column */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16
#define EXPR_STACK 64

/*
 * The rules of one pc as libdw gives them, copied: a stack of the same program asks for the
 * same few hundred pcs again and again, and libdw searches the FDE table, runs the CIE's and
 * FDE's instructions and allocates a frame each time.  A rule longer than RULE_OPS
 * operations is not kept (libdw is asked again for that pc).
 */
#define RULE_OPS 4
#define RULES_SLOTS 1024	/* per file, direct-mapped by pc */

enum { RULES_OK, RULES_NO_FDE, RULES_BAD, RULES_NO_CFA };

struct cfi_rule {
	int8_t n;		/* operations; 0: none (same value, or undefined when undef) */
	uint8_t undef;
	Dwarf_Op ops[RULE_OPS];
};

struct cfi_rules {
	uint64_t pc;
	uint8_t used;
	uint8_t status;		/* RULES_*: what libdw said of the pc */
	uint8_t fail_at;	/* the register libdw gave no rule for; NREGS: none */
	uint8_t signalp;
	int8_t ncfa;
	Dwarf_Op cfa[RULE_OPS];
	struct cfi_rule reg[NREGS];
};

struct pfc_cfi {
	struct cfi_rules *rules;	/* RULES_SLOTS, allocated at the first walk through the file */
	int fd;
	Elf *elf;
	Dwarf_CFI *cfi;
	uint64_t bias;		/* CFI address = file offset + bias (perf: .eh_frame_hdr's sh_addr - sh_offset) */
	uint64_t size;		/* of the file */
	const uint8_t *image;	/* the file's bytes (libelf's mapping) */
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

struct pfc_cfi *pfc_cfi_open(const char *path, const char **why)
{
	struct pfc_cfi *c = calloc(1, sizeof(*c));
	GElf_Shdr sh;
	off_t end;

	*why = "out of memory";
	if (!c)
		return NULL;
	c->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0) {
		*why = "no file";
		free(c);
		return NULL;
	}
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
	/* perf's libunwind path reads the FDE table of .eh_frame_hdr, nothing else */
	*why = "no .eh_frame_hdr";
	if (!scn_by_name(c->elf, ".eh_frame_hdr", &sh) || sh.sh_type == SHT_NOBITS)
		goto fail;
	c->bias = sh.sh_addr - sh.sh_offset;
	*why = "unreadable .eh_frame";
	c->cfi = dwarf_getcfi_elf(c->elf);
	if (!c->cfi)
		goto fail;
	{
		/* libdw does not export its error numbers: learn the one for a pc without FDE */
		Dwarf_Frame *f = NULL;
		if (dwarf_cfi_addrframe(c->cfi, (Dwarf_Addr)-16, &f) == 0)
			free(f);
		else
			c->no_match = dwarf_errno();
	}
	return c;
fail:
	pfc_cfi_close(c);
	return NULL;
}

void pfc_cfi_close(struct pfc_cfi *c)
{
	if (!c)
		return;
	free(c->rules);
	if (c->cfi)
		dwarf_cfi_end(c->cfi);
	if (c->elf)
		elf_end(c->elf);
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
};

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
	if (w->find(w->arg, addr, &m) < 0) {
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

	if (reg == REG_RSP) {	/* libunwind x86-64: the stack pointer reads as the CFA */
		*val = w->cfa;
		return 0;
	}
	if (reg < 0 || reg >= NREGS)
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

/* DWARF register -> perf register */
static const int dwarf_to_perf[NREGS] = {
	PFC_PREG_AX, PFC_PREG_DX, PFC_PREG_CX, PFC_PREG_BX, PFC_PREG_SI, PFC_PREG_DI, PFC_PREG_BP,
	PFC_PREG_SP, 16, 17, 18, 19, 20, 21, 22, 23, PFC_PREG_IP,
};

static int perf_reg(const struct pfc_unwind_in *in, int preg, uint64_t *val)
{
	unsigned idx;

	if (!(in->mask >> preg & 1))
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
		if (r < 0 || r >= NREGS)
			return -1;
		if (r == REG_RSP) {
			out->kind = LOC_VAL;
			out->v = w->rule_cfa;
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
			if (r == REG_RA) {	/* the column of the return address is the pc */
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

/* The rules of cfi_pc from libdw into *r; 0, or -1 when one is too long to keep. */
static int rules_fill(struct pfc_cfi *cfi, uint64_t cfi_pc, struct cfi_rules *r)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op mem[3], *ops;
	size_t nops;
	bool signalp = false;
	int reg, ret = -1;

	memset(r, 0, sizeof(*r));
	r->pc = cfi_pc;
	r->fail_at = NREGS;
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
	for (reg = 0; reg < NREGS; reg++) {
		if (reg == REG_RSP)
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
	}
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
	for (r = 0; r < NREGS; r++) {
		if (r == REG_RSP)
			continue;
		if (dwarf_frame_register(frame, r, mem, &ops, &nops) != 0)
			goto out;
		if (!nops) {
			/* undefined: the end for the return address, and for %rbp (libunwind's
			 * "NULL RBP" end); other registers keep their place, as libunwind
			 * treats every register CFI does not mention */
			if (ops == mem && (r == REG_RA || r == REG_RBP))
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
	if (w->loc[REG_RA].kind == LOC_NULL) {
		w->ip = 0;
		ret = 0;
		goto out;
	}
	if (loc_get(w, REG_RA, &w->ip) < 0) {
		ret = -EINVAL;
		goto out;
	}
	ret = 1;
	if (w->ip == prev_ip && w->cfa == prev_cfa) {
		ret = -ELOOP;
		goto out;
	}
	if (w->loc[REG_RBP].kind == LOC_NULL) {
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
	uint64_t cfa, prev_ip = w->ip, prev_cfa = w->cfa;
	int reg;

	if (!cfi->rules)
		cfi->rules = calloc(RULES_SLOTS, sizeof(*cfi->rules));	/* untouched slots cost nothing */
	r = cfi->rules ? &cfi->rules[(cfi_pc ^ cfi_pc >> 10) % RULES_SLOTS] : &one;
	if (!r->used || r->pc != cfi_pc) {
		if (rules_fill(cfi, cfi_pc, &one) < 0)
			return step_cfi_libdw(w, cfi, cfi_pc);	/* too long to keep */
		if (r != &one) {
			*r = one;
			r->used = 1;
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
	memcpy(nl, w->loc, sizeof(nl));
	for (reg = 0; reg < NREGS; reg++) {
		if (reg == REG_RSP)
			continue;
		if (reg == r->fail_at)
			return -EINVAL;
		if (!r->reg[reg].n) {
			/* undefined: the end for the return address, and for %rbp (libunwind's
			 * "NULL RBP" end); other registers keep their place, as libunwind
			 * treats every register CFI does not mention */
			if (r->reg[reg].undef && (reg == REG_RA || reg == REG_RBP))
				nl[reg].kind = LOC_NULL;
			continue;
		}
		/* the rule's expression starts from the new CFA (libdw puts DW_OP_call_frame_cfa
		 * first); registers in it, %rsp too (sigreturn's CFI reads the ucontext through
		 * it), are still this frame's, as libunwind reads them before it moves on */
		w->rule_cfa = cfa;
		if (eval(w, r->reg[reg].ops, (size_t)r->reg[reg].n, 0, 0, &nl[reg]) < 0)
			return -EINVAL;
	}
	memcpy(w->loc, nl, sizeof(nl));
	w->cfa = cfa;
	if (w->loc[REG_RA].kind == LOC_NULL) {
		w->ip = 0;
		return 0;
	}
	if (loc_get(w, REG_RA, &w->ip) < 0)
		return -EINVAL;
	if (w->ip == prev_ip && w->cfa == prev_cfa)
		return -ELOOP;
	if (w->loc[REG_RBP].kind == LOC_NULL) {
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

/* Beyond perf: code without CFI (JIT) is crossed on its frame-pointer chain, inside the copy. */
static int step_fp(struct walk *w)
{
	uint64_t rbp, rbp1, ra;
	int r;

	if (loc_get(w, REG_RBP, &rbp) < 0 || rbp < w->cfa || rbp - w->cfa > w->in->stack_size)
		return 0;
	if (mem_read(w, rbp, &rbp1) < 0 || mem_read(w, rbp + 8, &ra) < 0 || !ra) {
		w->stack_miss = 0;
		return 0;
	}
	for (r = 0; r < NREGS; r++)
		if (r != 3 && r < 12)	/* callee-saved rbx, r12-r15 are unknown now, like the rest */
			w->loc[r].kind = LOC_NULL;
	for (r = 12; r < 16; r++)
		w->loc[r].kind = LOC_NULL;
	w->loc[3].kind = LOC_NULL;
	w->loc[REG_RBP].kind = LOC_VAL;
	w->loc[REG_RBP].v = rbp1;
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
	if (w->find(w->arg, pc, &m) < 0)
		return -EINVAL;
	if (!m.cfi) {
		if (w->in->beyond_perf && m.jit) {
			*fp = 1;
			return step_fp(w);
		}
		return -EINVAL;
	}
	ret = step_cfi(w, m.cfi, pc - m.start + m.pgoff + m.cfi->bias);
	if (ret == -ENOENT)
		ret = step_guess(w);
	else
		w->via_cfi = 1;
	return ret;
}

int pfc_unwind_walk(const struct pfc_unwind_in *in, pfc_unwind_find_fn find, void *arg, struct pfc_unwind_out *out)
{
	struct walk w;
	uint64_t v;
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
	if (perf_reg(in, PFC_PREG_IP, &w.ip) < 0) {
		out->end = PFC_UNWIND_END_NOREGS;
		return -1;
	}
	out->ips[out->n++] = w.ip;
	if (out->max < 2)
		return 0;
	/* unw_init_remote reads the pc and the stack pointer: both must be there */
	if (perf_reg(in, PFC_PREG_SP, &w.cfa) < 0) {
		out->end = PFC_UNWIND_END_NOREGS;
		return 0;
	}
	w.sp0 = w.cfa;
	for (r = 0; r < NREGS; r++) {
		if (r == REG_RSP)
			continue;
		if (perf_reg(in, dwarf_to_perf[r], &v) == 0) {
			w.loc[r].kind = LOC_VAL;
			w.loc[r].v = v;
		} else {
			w.loc[r].kind = LOC_MISSING;
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
		else if (w.via_cfi)
			out->ips[out->n++] = w.ip - 1;
		else
			out->ips[out->n++] = is_signal_frame(&w, w.ip) ? w.ip : w.ip - 1;
		w.stack_miss = 0;
		out->fp_frames += fp;
	}
	return 0;
}
