/*
 * gate.h - --diff's base recording and --fail-if-grown's gate (gate.c).
 */
#ifndef PFC_CLI_GATE_H
#define PFC_CLI_GATE_H

#include <stddef.h>
#include "cli/cli.h"

/* --diff BASE: reads and symbolizes the base recording (c->diff) into c->base with the
 * options and filters of the inputs, before any input is read; on failure msg says why.
 * pfc_cli_base_close frees it. */
int pfc_cli_base_open(struct cli *c, char *msg, size_t size);
void pfc_cli_base_close(struct cli *c);

/* --fail-if-grown PCT: the functions of S whose total share grew by more than PCT points
 * against c->base, on stderr (a single conversion, unless -q) or appended to HINTS (batch
 * mode); returns how many, or a negative error code. */
int pfc_cli_gate(struct cli *c, struct pfc_session *s, const char *input, char *hints, size_t size,
		 struct pfc_error *err);

#endif
