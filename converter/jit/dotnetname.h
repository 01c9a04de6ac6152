/*
 * dotnetname.h - rewriting of .NET method names as CoreCLR writes them into perf maps
 * and jitdumps ("[instance ]RET [Assembly] Namespace.Type::Method(PARAMS)[Tier]"): a
 * shorter "Assembly!Namespace.Type::Method(PARAMS)" form like PerfView's, and removal of
 * the optimization tier tag so that one method re-JITted at another tier is one frame.
 * Names of other shapes (V8, Mono, stubs) pass through unchanged.
 */
#ifndef PFC_DOTNETNAME_H
#define PFC_DOTNETNAME_H

#include <stddef.h>

enum {
	PFC_DOTNET_NAMES_KEEP = 0,  /* verbatim, as perf script prints them */
	PFC_DOTNET_NAMES_SHORT = 1, /* Assembly!Namespace.Type::Method(params) */
};

/* Write the rewritten name of in[0..n) to out (NUL-terminated, cut to cap - 1 bytes) and
 * return its length. */
size_t pfc_dotnet_name(char *out, size_t cap, const char *in, size_t n, int names, int strip_tiers);

/* The length of a tier tag "[Tier]" at the start of s (with its following space), or 0. */
size_t pfc_dotnet_leading_tier(const char *s, size_t n);
/* The length of a tier tag "[Tier]" at the end of s, or 0. */
size_t pfc_dotnet_trailing_tier(const char *s, size_t n);

#endif
