/*
 * gate.c - the two sides of --diff as the command line sees them: the base recording, read
 * and symbolized once before any input with the inputs' options and filters, and
 * --fail-if-grown's gate, which lists the functions whose share of the total grew by more
 * than allowed.  The comparison itself (two profiles side by side, per-function totals) is
 * formats/diff.c's; the exit code is perfconv.c's and batch.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/convert.h"
#include "cli/gate.h"
#include "formats/diff.h"

int pfc_cli_base_open(struct cli *c, char *msg, size_t size)
{
	struct pfc_error err;
	int ret;

	memset(&err, 0, sizeof(err));
	c->base = calloc(1, sizeof(*c->base));
	if (!c->base) {
		snprintf(msg, size, "'%s': out of memory", c->diff);
		return -PFC_ERR_NOMEM;
	}
	/* the same options and filters as the inputs, so that both sides are cut alike; a --time
	 * in percent is resolved against the base's own samples */
	c->base_opts = c->opts;
	c->base_opts.input = c->diff;
	/* --events are the new recording's streams: a base that --alloc or --during gc compares
	 * brings its own, as a pack made with --events */
	c->base_opts.events = NULL;
	c->base_opts.nr_events = 0;
	c->base_opts.throw_frames = 0;
	c->base_opts.keep_stream = 0;
	c->base_opts.record_files = 0;
	c->base_opts.progress = NULL;
	c->base_opts.preload_kernel = 1;
	c->base_filter = c->filter;
	c->base_filter.ranges = NULL;
	c->base_filter.nr_ranges = 0;
	c->base_filter.time_resolved = !c->filter.time_percent;
	if (!c->filter.time_percent && c->filter.nr_ranges) {
		c->base_filter.ranges = malloc(c->filter.nr_ranges * sizeof(*c->filter.ranges));
		if (!c->base_filter.ranges) {
			snprintf(msg, size, "'%s': out of memory", c->diff);
			return -PFC_ERR_NOMEM;
		}
		memcpy(c->base_filter.ranges, c->filter.ranges, c->filter.nr_ranges * sizeof(*c->filter.ranges));
		c->base_filter.nr_ranges = c->filter.nr_ranges;
	}
	c->base_opts.filter = pfc_filter_active(&c->base_filter) ? &c->base_filter : NULL;
	ret = pfc_cli_read(c->base, &c->base_opts, &c->base_filter, PFC_CLI_READ_RECORDS, NULL, NULL, &err);
	if (ret == 0)
		ret = pfc_session_symbolize(c->base);
	if (ret != 0) {
		pfc_cli_format_error(c, c->diff, &err, msg, size);
		pfc_session_close(c->base);
		free(c->base);
		c->base = NULL;
	}
	return ret;
}

void pfc_cli_base_close(struct cli *c)
{
	if (c->base) {
		pfc_session_close(c->base);
		free(c->base);
		c->base = NULL;
	}
	free(c->base_filter.ranges);
	c->base_filter.ranges = NULL;
}

/* One line of the gate's list: in the hints in batch mode, where what does not fit is left
 * out, else on stderr unless -q. */
static void gate_line(const struct cli *c, const char *line, char *hints, size_t size, size_t *used)
{
	if (c->outdir) {
		if (*used + strlen(line) < size)
			*used += (size_t)snprintf(hints + *used, size - *used, "%s", line);
	} else if (!c->quiet) {
		fputs(line, stderr);
	}
}

/* --fail-if-grown PCT: the functions whose total share grew by more than PCT points, on
 * stderr (a single conversion, unless -q) or in the hints the batch parent prints under the
 * file's line; returns how many, or a negative error code. */
int pfc_cli_gate(struct cli *c, struct pfc_session *s, const char *input, char *hints, size_t size,
		 struct pfc_error *err)
{
	struct pfc_wopts wo = c->wopts;
	struct pfc_diff d;
	struct pfc_funcs f;
	size_t i, used = strlen(hints);
	int ret, grown = 0;

	memset(&f, 0, sizeof(f));
	wo.diff_base = c->base;
	ret = pfc_diff_build(&d, s, &wo, err);
	if (ret == 0)
		ret = pfc_funcs_build(&f, &d, err);
	if (ret == 0) {
		pfc_funcs_sort(&f, 0, 1);
		for (i = 0; i < f.n; i++) {
			const struct pfc_func *fn = &f.v[i];
			char line[512];
			if (!(fn->dtotal > c->fail_if_grown))
				continue;
			if (!grown++) {
				snprintf(line, sizeof(line), "perfconv: '%s': grew by more than %g points of total share "
					 "against '%s' (--fail-if-grown):\n", input, c->fail_if_grown, c->diff);
				gate_line(c, line, hints, size, &used);
			}
			snprintf(line, sizeof(line), "  %+.2f  %6.2f%% -> %6.2f%%  %.*s\n", fn->dtotal,
				 pfc_diff_share(fn->total[0], d.sum[0]), pfc_diff_share(fn->total[1], d.sum[1]),
				 (int)(fn->len < 400 ? fn->len : 400), fn->name);
			gate_line(c, line, hints, size, &used);
		}
	}
	pfc_funcs_free(&f);
	pfc_diff_free(&d);
	return ret < 0 ? ret : grown;
}
