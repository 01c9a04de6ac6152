/*
 * packpass.h - a pack's share of a conversion: its recording compressed early, and the
 * second pass under --perf-compat (packpass.c).
 */
#ifndef PFC_CLI_PACKPASS_H
#define PFC_CLI_PACKPASS_H

#include "cli/cli.h"
#include "converter/files/pack.h"

/* The recording INPUT compressed while it is converted, when O records files for a pack
 * and INPUT is a regular file that is not a pack; NULL otherwise (pfc_packw_pre_free). */
struct pfc_packw_pre *pfc_cli_pack_pre_start(const char *input, const struct pfc_opts *o);

/* Under --perf-compat, when O records files: the files a default-mode conversion of INPUT
 * reads join S's record; a failure is a warning on O's log. */
void pfc_cli_pack_second_pass(const struct cli *c, struct pfc_session *s, const struct pfc_opts *o,
			      const char *input);

#endif
