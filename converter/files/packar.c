/*
 * packar.c - what the pack's reader and writer share: libarchive, loaded when a pack is
 * first read or written rather than at start, and the rules of member names (which names a
 * pack may hold, how a hostile one is shown in a message, the locale their conversion needs).
 * Reading packs is packread.c's, writing them packwrite.c's.  The static build (PFC_STATIC,
 * `make static`) links libarchive in instead of loading it.
 */
#include <dlfcn.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "converter/files/packint.h"

#define STR(x) STR_(x)
#define STR_(x) #x

static struct pfc_pack_ar ar;

#ifdef PFC_STATIC
/* a static binary has no dynamic loader to load a library with: its functions are linked in */
static void ar_load_once(void)
{
#define X(f) ar.f = f;
	AR_FUNCTIONS(X)
#undef X
	ar.ok = 1;
}
#else
static void ar_load_once(void)
{
	void *lib = dlopen(AR_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	const char *e;

	if (!lib) {
		e = dlerror();
		snprintf(ar.why, sizeof(ar.why), "%s", e ? e : "not found");
		return;
	}
#define X(f) \
	if (!(*(void **)&ar.f = dlsym(lib, #f))) { \
		snprintf(ar.why, sizeof(ar.why), "%s has no %s", AR_SONAME, #f); \
		return; \
	}
	AR_FUNCTIONS(X)
#undef X
	ar.ok = 1;
}
#endif

int pfc_pack_ar_load(struct pfc_error *err)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, ar_load_once);
	return ar.ok ? 0 : PFC_FAIL_NOOFF(err, UNSUPPORTED, "packs need libarchive (Debian: libarchive13): %s", ar.why);
}

const struct pfc_pack_ar *pfc_pack_ar(void)
{
	return &ar;
}

/* Why a member name is refused, or NULL: names are lookup keys, never paths, but a pack that
 * GNU tar would extract outside its directory, or whose names garble a terminal, is refused. */
const char *pfc_pack_bad_name(const char *s)
{
	size_t n = strlen(s), i, comp = 0;

	if (!n)
		return "an empty name";
	if (n > PFC_PACK_MAX_NAME)
		return "a name longer than " STR(PFC_PACK_MAX_NAME) " bytes";
	if (s[0] == '/')
		return "an absolute name";
	for (i = 0; i <= n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c && (c < 0x20 || c == 0x7f))
			return "a control character in its name";
		if (c == '/' || !c) {
			if (i - comp == 2 && s[comp] == '.' && s[comp + 1] == '.')
				return "a '..' component in its name";
			comp = i + 1;
		}
	}
	return NULL;
}

/* A name for a message: control bytes escaped (a hostile name must not drive the terminal),
 * cut at 120 bytes. */
const char *pfc_pack_shown(const char *s, char out[160])
{
	size_t o = 0;

	for (; s && *s && o < 120; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f || c == '\\')
			o += (size_t)snprintf(out + o, 160 - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	if (s && *s)
		o += (size_t)snprintf(out + o, 160 - o, "...");
	out[o] = 0;
	return out;
}

/* libarchive converts names between the locale's charset and the UTF-8 of pax headers, and
 * perfconv runs in the C locale, where no name but an ASCII one converts: its calls that
 * convert run in C.UTF-8 on this thread.  Names must be UTF-8 (GNU tar warns on others). */
locale_t pfc_pack_utf8_enter(locale_t *utf8)
{
	*utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	return *utf8 ? uselocale(*utf8) : (locale_t)0;
}

void pfc_pack_utf8_leave(locale_t utf8, locale_t old)
{
	if (utf8) {
		uselocale(old);
		freelocale(utf8);
	}
}
