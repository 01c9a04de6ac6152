/*
 * events.c - perfconv --events FILE.nettrace: the runtime report of one .NET process's own
 * events (GCs and their pauses, allocations, heap, JIT, exceptions) from the stream dotnet-trace
 * wrote, to standard output or -o.  Reading is converter/events/, the text formats/runtime.c;
 * this file opens, reports errors and exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "cli/cli.h"
#include "converter/events/events.h"
#include "converter/events/runtime.h"
#include "converter/util/fileio.h"
#include "formats/runtime.h"

/* a nettrace is read whole from its mapping; a session of hours fits well below this */
#define EVENTS_MAX_BYTES (64ull << 30)

int pfc_cli_events(const char *path, const char *output, int quiet)
{
	static struct pfc_runtime rt;     /* large: its decoded event holds string buffers */
	struct pfc_error err;
	struct pfc_sb sb = { 0 };
	struct pfc_events_file f;    /* the mapping, read through a window of it */
	void *map = NULL;
	size_t len = 0;
	FILE *out = stdout;
	int ret;

	memset(&err, 0, sizeof(err));
	if (pfc_map_file(path, EVENTS_MAX_BYTES, &map, &len) < 0) {
		fprintf(stderr, "perfconv: cannot open '%s': %m\n", path);
		return EXIT_FAILED;
	}
	memset(&f, 0, sizeof(f));
	f.buf = map;
	f.len = len;
	f.mapped = 1;
	ret = pfc_runtime_read_file(&rt, &f, &err);
	if (ret < 0) {
		if (err.has_offset)
			fprintf(stderr, "perfconv: '%s': %s at offset %llu: %s\n", path, pfc_strerror(err.code),
				(unsigned long long)err.offset, err.detail);
		else
			fprintf(stderr, "perfconv: '%s': %s\n", path, err.detail[0] ? err.detail : pfc_strerror(-ret));
		pfc_runtime_free(&rt);
		munmap(map, len);
		return EXIT_FAILED;
	}
	ret = pfc_runtime_text(&rt, path, 0, NULL, 0, &sb);
	if (ret == 0 && output && strcmp(output, "-") && !(out = fopen(output, "w"))) {
		fprintf(stderr, "perfconv: cannot open '%s': %m\n", output);
		ret = -PFC_ERR_OPEN;
	} else if (ret == 0) {
		if (fwrite(sb.buf, 1, sb.len, out) != sb.len || fflush(out) != 0 || ferror(out))
			ret = -PFC_ERR_WRITE;
		if (out != stdout && fclose(out) != 0)
			ret = -PFC_ERR_WRITE;
		if (ret < 0)
			fprintf(stderr, "perfconv: '%s': %s\n", output ? output : "-", pfc_strerror(-ret));
	} else {
		fprintf(stderr, "perfconv: '%s': %s\n", path, pfc_strerror(-ret));
	}
	if (ret == 0 && !quiet)
		fprintf(stderr, "perfconv: '%s': %llu events, %llu of other kinds%s\n", path,
			(unsigned long long)rt.stream.nr_events, (unsigned long long)rt.other_events,
			rt.stream.complete ? "" : ", the stream is cut short");
	free(sb.buf);
	pfc_runtime_free(&rt);
	munmap(map, len);
	return ret < 0 ? EXIT_FAILED : EXIT_OK;
}
