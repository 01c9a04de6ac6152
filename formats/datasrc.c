/*
 * datasrc.c - perf 6.1's text of a memory sample's data source (util/mem-events.c): the
 * operation, the memory level (its bits, then the level number), snoop, TLB, lock and block
 * fields of union perf_mem_data_src, each decoded as perf does, into a bounded buffer.  It
 * owns no state; perfscript.c pads and prints the text.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "formats/datasrc.h"

struct sbuf {
	char *p;
	size_t size, len;
};

static void add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->len + 1 >= b->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->size - b->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len += (size_t)n < b->size - b->len ? (size_t)n : b->size - b->len - 1;
}

/* The bits of m named by names[], joined by " or "; how many were named. */
static int bits(struct sbuf *b, uint64_t m, const char *const *names, size_t nr, int printed)
{
	size_t i;

	for (i = 0; m && i < nr; i++, m >>= 1) {
		if (!(m & 1))
			continue;
		if (printed++)
			add(b, " or ");
		add(b, "%s", names[i]);
	}
	return printed;
}

static const char *const mem_lvl[] = {
	"N/A", "HIT", "MISS", "L1", "LFB/MAB", "L2", "L3", "Local RAM", "Remote RAM (1 hop)",
	"Remote RAM (2 hops)", "Remote Cache (1 hop)", "Remote Cache (2 hops)", "I/O", "Uncached",
};
static const char *const mem_lvlnum[16] = {
	[0x0b] = "Any cache", [0x0c] = "LFB/MAB", [0x0d] = "RAM", [0x0e] = "PMEM", [0x0f] = "N/A",
};
static const char *const mem_hops[] = { "", "core, same node", "node, same socket", "socket, same board",
					"board" };
static const char *const snoop_access[] = { "N/A", "None", "Hit", "Miss", "HitM" };
static const char *const snoopx_access[] = { "Fwd" };
static const char *const tlb_access[] = { "N/A", "HIT", "MISS", "L1", "L2", "Walker", "Fault" };

size_t pfc_datasrc_text(char *out, size_t size, uint64_t d)
{
	struct sbuf b = { out, size, 0 };
	uint64_t op = d & 0x1f, lvl = (d >> 5) & 0x3fff, snoop = (d >> 19) & 0x1f, lock = (d >> 24) & 3;
	uint64_t tlb = (d >> 26) & 0x7f, lvlnum = (d >> 33) & 0xf, remote = (d >> 37) & 1;
	uint64_t snoopx = (d >> 38) & 3, blk = (d >> 40) & 7, hops = (d >> 43) & 7;
	size_t start;
	int printed = 0;

	if (!size)
		return 0;
	out[0] = 0;
	add(&b, "|OP ");
	add(&b, "%s", op & 2 ? "LOAD" : op & 4 ? "STORE" : op & 8 ? "PFETCH" : op & 16 ? "EXEC" : "N/A");

	add(&b, "|LVL ");
	start = b.len;
	if (remote)
		add(&b, "Remote ");
	if (hops && hops < sizeof(mem_hops) / sizeof(mem_hops[0]))
		add(&b, "%s ", mem_hops[hops]);
	else
		printed = bits(&b, lvl & ~(uint64_t)6, mem_lvl, sizeof(mem_lvl) / sizeof(mem_lvl[0]), 0);
	if (lvlnum) {
		if (printed++)
			add(&b, " or ");
		if (mem_lvlnum[lvlnum])
			add(&b, "%s", mem_lvlnum[lvlnum]);
		else
			add(&b, "L%d", (int)lvlnum);
	}
	if (b.len == start)
		add(&b, "N/A");
	if (lvl & 2)
		add(&b, " hit");
	if (lvl & 4)
		add(&b, " miss");

	add(&b, "|SNP ");
	start = b.len;
	printed = bits(&b, snoop, snoop_access, sizeof(snoop_access) / sizeof(snoop_access[0]), 0);
	bits(&b, snoopx & 1, snoopx_access, 1, printed);	/* perf 6.1 names Fwd only */
	if (b.len == start)
		add(&b, "N/A");

	add(&b, "|TLB ");
	start = b.len;
	bits(&b, tlb & ~(uint64_t)6, tlb_access, sizeof(tlb_access) / sizeof(tlb_access[0]), 0);
	if (b.len == start)
		add(&b, "N/A");
	if (tlb & 2)
		add(&b, " hit");
	if (tlb & 4)
		add(&b, " miss");

	add(&b, "|LCK ");
	add(&b, "%s", lock & 1 ? "N/A" : lock & 2 ? "Yes" : "No");

	add(&b, "|BLK ");
	if (!blk || (blk & 1))
		add(&b, " N/A");
	else {
		if (blk & 2)
			add(&b, " Data");
		if (blk & 4)
			add(&b, " Addr");
	}
	return b.len;
}
