/*
 * symsummary.h - the summary's lines about missing symbols: what debuginfod fetched, which
 * stripped binaries cost how many frames, and how to get their debug files, and how the
 * --call-graph dwarf stacks were unwound (symsummary.c).
 */
#ifndef PFC_CLI_SYMSUMMARY_H
#define PFC_CLI_SYMSUMMARY_H

#include <stdio.h>
#include "converter/session.h"

void pfc_cli_symbol_summary(FILE *fp, const struct pfc_session *s);
/* -v: each PE image with unresolved ReadyToRun frames, how many, and why. */
void pfc_cli_r2r_images(FILE *fp, const struct pfc_session *s);
/* The summary lines on --call-graph dwarf stacks (nothing when there were none). */
void pfc_cli_dwarf_summary(FILE *fp, const struct pfc_session_stats *st);

#endif
