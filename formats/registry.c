/*
 * registry.c - the table of output formats, and lookup by name or by file name ending.
 */
#include <string.h>
#include "formats/writer.h"

const struct pfc_writer *const pfc_writers[] = {
	&pfc_writer_folded,
	&pfc_writer_perf_script,
	&pfc_writer_speedscope,
	&pfc_writer_svg,
	&pfc_writer_perfview,
	NULL,
};

const struct pfc_writer *pfc_writer_by_name(const char *name)
{
	size_t i;

	for (i = 0; pfc_writers[i]; i++)
		if (!strcmp(pfc_writers[i]->name, name))
			return pfc_writers[i];
	return NULL;
}

const struct pfc_writer *pfc_writer_by_filename(const char *path)
{
	size_t i, j, n = strlen(path);

	for (i = 0; pfc_writers[i]; i++)
		for (j = 0; pfc_writers[i]->suffixes[j]; j++) {
			size_t k = strlen(pfc_writers[i]->suffixes[j]);
			if (n >= k && !strcmp(path + n - k, pfc_writers[i]->suffixes[j]))
				return pfc_writers[i];
		}
	return NULL;
}
