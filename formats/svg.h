/*
 * svg.h - the SVG flame graph writer's frame kinds and colors, exposed for unit tests.
 */
#ifndef PFC_SVG_H
#define PFC_SVG_H

#include <stddef.h>
#include <stdio.h>
#include "converter/machine/stacks.h"
#include "converter/machine/machine.h"

#define PFC_SVG_DEFAULT_WIDTH 1200

/* What a frame's color says: each kind is a hue family, shaded by a hash of the name. */
enum pfc_svg_kind {
	PFC_SVG_NATIVE,     /* user code of a binary or library: red */
	PFC_SVG_KERNEL,     /* kernel, modules, BPF: orange */
	PFC_SVG_JIT,        /* JIT and managed code (perf maps, perf inject --jit): green */
	PFC_SVG_PROCESS,    /* the process name and the whole: grey blue */
};

enum pfc_svg_kind pfc_svg_frame_kind(const struct pfc_frame *f);
/* "rgb(r,g,b)" for a frame of this kind and name. */
void pfc_svg_color(int kind, const char *name, size_t n, char *buf, size_t size);
/* Writes s as XML text, at most max characters (SIZE_MAX: all): & < > " escaped, bytes
 * that are not UTF-8 and characters XML forbids replaced by U+FFFD. */
void pfc_svg_put_xml(FILE *out, const char *s, size_t n, size_t max);
/* The label of a frame w pixels wide (flamegraph.pl's rule: 0.59 em a character, at least
 * three characters, ".."; a .NET name that does not fit starts at its type or method) as XML text. */
void pfc_svg_put_label(FILE *out, const char *s, size_t n, double w);
/* A .NET name "Assembly!Namespace.Type::Method(params)": the byte offsets of Type and Method;
 * 0 for any other name.  A label that does not fit starts there. */
int pfc_svg_dotnet_parts(const char *s, size_t n, size_t *type, size_t *method);

#endif
