/*
 * kallsyms.c - owns reading a kallsyms file (/proc/kallsyms format) into a symbol table
 * the way perf 6.1 does: which lines and types count, the binding taken from the type
 * letter, and the kallsyms flavour of the end fixup.  Mapping kernel or module addresses
 * to this table (relocation, module maps) is the caller's business.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "converter/util/bytes.h"
#include "converter/util/mem.h"
#include "converter/native/symtab.h"

/* perf 6.1 KSYM_NAME_LEN; longer names are cut (perf overruns its buffer there) */
#define KSYM_NAME_MAX 512
#define KALLSYMS_MAX_SIZE (1024u * 1024 * 1024)

/*
 * Types perf keeps (symbol_type__filter: T, W, D, B in either case).  Checked with
 * perf 6.1 by adding a symbol of each letter to a fixture's kallsyms just before a sampled
 * address: t T w W d D b B are used, r R a A v V u U n N c C g G s S i I ? are not.
 */
static int type_kept(int type)
{
	type = toupper(type);
	return type == 'T' || type == 'W' || type == 'D' || type == 'B';
}

/* perf's kallsyms2elf_binding: only 'W' is weak; a lowercase letter is local */
static int type_binding(int type)
{
	if (type == 'W')
		return PFC_SYM_WEAK;
	return isupper(type) ? PFC_SYM_GLOBAL : PFC_SYM_LOCAL;
}

static int read_all(const char *file, char **out, size_t *outlen)
{
	FILE *f = fopen(file, "r");
	size_t len = 0, cap = 0, first = 8u << 20;	/* /proc/kallsyms, whose size reads 0: 5 to 15 MB */
	char *buf = NULL;
	struct stat st;

	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < (off_t)KALLSYMS_MAX_SIZE)
		first = (size_t)st.st_size + 65536;	/* a copy of it (--kallsyms FILE) */
	for (;;) {
		size_t n;

		if (cap - len < 65536) {
			char *p;

			if (cap >= KALLSYMS_MAX_SIZE) {
				free(buf);
				fclose(f);
				return -EFBIG;
			}
			cap = cap ? cap * 2 : first;
			p = pfc_mem_realloc(buf, len, cap);
			if (!p) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = p;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		int err = errno ? -errno : -EIO;

		free(buf);
		fclose(f);
		return err;
	}
	fclose(f);
	*out = buf;
	*outlen = len;
	return 0;
}

int pfc_kallsyms_load(const char *file, struct pfc_symtab *t)
{
	char *buf = NULL;
	size_t len = 0, pos = 0;
	int err;

	err = read_all(file, &buf, &len);
	if (err)
		return err;
	while (pos < len) {
		size_t eol, name_start, name_len;
		uint64_t addr = 0;
		int ndigits = 0, type, d;

		eol = pos;
		while (eol < len && buf[eol] != '\n')
			eol++;
		/* "<hex> <type> <name>": anything else is skipped like perf does */
		while (pos < eol && (d = pfc_hexval((unsigned char)buf[pos])) >= 0) {
			addr = addr << 4 | (uint64_t)d;
			ndigits++;
			pos++;
		}
		if (ndigits == 0 || pos + 2 >= eol || buf[pos] != ' ' || buf[pos + 2] != ' ')
			goto next;
		type = (unsigned char)buf[pos + 1];
		name_start = pos + 3;
		name_len = eol - name_start;
		if (name_len > KSYM_NAME_MAX)
			name_len = KSYM_NAME_MAX;
		if (!type_kept(type))
			goto next;
		/* perf drops ARM mapping/local symbols starting with '$' */
		if (name_len > 0 && buf[name_start] == '$')
			goto next;
		err = pfc_symtab_add(t, addr, 0, type_binding(type), buf + name_start, name_len);
		if (err) {
			free(buf);
			return err;
		}
next:
		pos = eol + 1;
	}
	free(buf);
	/*
	 * Module symbols read "addr t name\t[module]".  perf keeps the whole line as the name
	 * through the fixups (the "[" marks the kernel/module boundary there, and the suffix
	 * counts in the name length of the duplicate choice); the fixup then cuts it.
	 */
	err = pfc_symtab_fixup(t, PFC_SYMTAB_KALLSYMS);
	if (!err)
		err = pfc_symtab_finish(t);
	return err;
}

int pfc_kallsyms_func_start(const char *file, const char *name, uint64_t *addr)
{
	char *buf = NULL;
	size_t len = 0, pos = 0, nlen = strlen(name);
	int err;

	err = read_all(file, &buf, &len);
	if (err)
		return err;
	err = -ENOENT;
	while (pos < len) {
		size_t eol = pos;
		uint64_t a = 0;
		int ndigits = 0, type, d;

		while (eol < len && buf[eol] != '\n')
			eol++;
		while (pos < eol && (d = pfc_hexval((unsigned char)buf[pos])) >= 0) {
			a = a << 4 | (uint64_t)d;
			ndigits++;
			pos++;
		}
		if (ndigits && pos + 2 < eol && buf[pos] == ' ' && buf[pos + 2] == ' ') {
			type = toupper((unsigned char)buf[pos + 1]);
			if ((type == 'T' || type == 'W' || type == 'A') && eol - (pos + 3) == nlen &&
			    !memcmp(buf + pos + 3, name, nlen)) {
				*addr = a;
				err = 0;
				break;
			}
		}
		pos = eol + 1;
	}
	free(buf);
	return err;
}
