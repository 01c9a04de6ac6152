/*
 * env.h - the PERFCONV_* environment, read once (env.c): the users' variables, which cli/
 * applies itself, and the tests' settings, which go down with the options as struct pfc_tuning.
 */
#ifndef PFC_CLI_ENV_H
#define PFC_CLI_ENV_H

#include "converter/util/tuning.h"

struct pfc_cli_env {
	struct pfc_tuning tuning;    /* for converter/ and formats/, through pfc_opts and pfc_wopts */
	const char *symbol_servers;  /* PERFCONV_SYMBOL_SERVERS, when not empty */
	int no_cache;                /* PERFCONV_CACHE=0 */
	int no_heap_setup;           /* PERFCONV_NO_HEAP_SETUP, set to anything */
	double progress_delay;       /* PERFCONV_PROGRESS_DELAY: seconds before the first progress line */
	const char *test_crash;      /* PERFCONV_TEST_CRASH: a batch worker crashes on an input of this name */
};

/* Fills E from the environment; a variable not set (or set to what the table calls its
 * default) gives the value of a run without it. */
void pfc_cli_env_read(struct pfc_cli_env *e);

#endif
