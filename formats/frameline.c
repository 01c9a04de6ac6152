/*
 * frameline.c - owns the text of one callchain frame line as perf script prints it: the
 * address right-aligned in 16 columns, the symbol (with its offset when asked), the DSO in
 * parentheses, "(inlined)" in place of the DSO for perf's inlined frames.  perfscript.c and
 * perfview.c print their frames through it, so their lines cannot drift apart; what a
 * writer does with a name's line breaks is its own (put).
 */
#include <string.h>
#include "converter/machine/machine.h"
#include "converter/util/strbuf.h"
#include "formats/frameline.h"
#include "formats/perfscript.h"

size_t pfc_frameline_room(const struct pfc_intern *strings, const struct pfc_frame *f)
{
	return PFC_FRAMELINE_FIXED + (f->resolved ? pfc_intern_len(strings, f->sym_text) : 0) +
	       (!f->inlined && f->dso ? strlen(f->dso->name) : 0);
}

static char *copy(char *d, const char *s, size_t n)
{
	memcpy(d, s, n);
	return d + n;
}

/* By hand: printf's parsing was a third of making the lines. */
size_t pfc_frameline_fmt(char *d0, const struct pfc_intern *strings, const struct pfc_frame *f, unsigned fields,
			 pfc_frameline_put *put)
{
	char hex[16], *d = d0;
	size_t nd = (size_t)(pfc_put_hex(hex, f->addr) - hex);

	if (!put)
		put = copy;
	*d++ = '\t';
	memset(d, ' ', 16 - nd);
	d = copy(d + 16 - nd, hex, nd);
	if (fields & PFC_PS_SYM) {
		*d++ = ' ';
		if (f->resolved) {
			d = put(d, pfc_intern_str(strings, f->sym_text), pfc_intern_len(strings, f->sym_text));
			if (fields & PFC_PS_SYMOFF)
				d = pfc_put_hex(copy(d, "+0x", 3), f->symoff);
		} else {
			d = copy(d, "[unknown]", 9);
		}
	}
	/* perf: an inlined frame prints "(inlined)" after everything else, in place of its DSO */
	if ((fields & PFC_PS_DSO) && !f->inlined) {
		d = copy(d, " (", 2);
		d = f->dso ? put(d, f->dso->name, strlen(f->dso->name)) : copy(d, "[unknown]", 9);
		*d++ = ')';
	}
	if (f->inlined && (fields & PFC_PS_SYM))
		d = copy(d, " (inlined)", 10);
	*d++ = '\n';
	return (size_t)(d - d0);
}
