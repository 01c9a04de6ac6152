/*
 * test_ctf.c - formats/ctf.c and ctfnames.c: the LTTng names of the runtime's events (fields
 * declared one by one, packed, an older version's name for a newer one that only appends, none),
 * and reading the streams as the channels fill: the fixture's app.nettrace, a corrupt stream
 * (named, with its offset) and one cut short (read up to the cut).  What TraceEvent
 * and babeltrace2 read back from the archive is tests/perfview-events.sh's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/ctf.h"
#include "tests/unit/check.h"
#include "tests/unit/loadfile.h"

#define NT "fixtures/dotnet-events/app.nettrace"

static void names(void)
{
	const struct pfc_ctf_name *n;
	int older;
	uint32_t id, v;

	n = pfc_ctf_name_find(1, 2, &older);
	check(n && !strcmp(n->name, "GCStart_V2") && !older && n->fields &&
	      !strcmp(n->fields, "u32:Count u32:Depth u32:Reason u32:Type u16:ClrInstanceID u64:ClientSequenceNumber"),
	      "GCStart version 2: %s", n ? n->name : "none");
	n = pfc_ctf_name_find(256, 0, &older);
	check(n && !strcmp(n->name, "ExceptionThrownStop") && n->fields && !n->fields[0], "ExceptionThrownStop: no fields");
	n = pfc_ctf_name_find(143, 2, &older);
	check(n && !strcmp(n->name, "MethodLoadVerbose_V2") && !n->fields, "MethodLoadVerbose_V2 is packed (strings)");
	n = pfc_ctf_name_find(10, 4, &older);
	check(n && !strcmp(n->name, "GCAllocationTick_V3") && older, "GCAllocationTick V4 goes as V3");
	n = pfc_ctf_name_find(4, 2, &older);
	check(n && !strcmp(n->name, "GCHeapStats_V1") && older, "GCHeapStats V2 goes as V1");
	n = pfc_ctf_name_find(205, 4, &older);
	check(n && !strcmp(n->name, "GCGlobalHeapHistory_V2") && older, "GCGlobalHeapHistory V4 goes as V2");
	check(!pfc_ctf_name_find(10, 5, &older) && !older, "GCAllocationTick V5 is not known to append only");
	check(!pfc_ctf_name_find(39, 0, &older), "GCDynamicEvent has no LTTng name in TraceEvent");
	check(!pfc_ctf_name_find(0, 0, &older), "event 0");
	/* every name found is the one asked for, or older's */
	for (id = 0; id < 400; id++)
		for (v = 0; v < 6; v++)
			if ((n = pfc_ctf_name_find(id, v, &older)))
				check(n->id == id && (older ? n->version < v : n->version == v),
				      "event %u version %u named %s (%u, %u)", id, v, n->name, n->id, n->version);
}

/* pfc_ctf_read and pfc_ctf_fill on one stream in memory, as the conversion hands them over
 * (converter/events/), with no process names */
static int read_one(struct pfc_ctf **c, const char *name, const char *buf, size_t len, struct pfc_error *err)
{
	struct pfc_events_file f;
	struct pfc_events ev;
	int ret;

	memset(&f, 0, sizeof(f));
	memset(&ev, 0, sizeof(ev));
	f.name = (char *)name;
	f.buf = (const uint8_t *)buf;
	f.len = len;
	ev.v = &f;
	ev.n = 1;
	if ((ret = pfc_ctf_read(c, &ev, NULL, err)) < 0)
		return ret;
	return pfc_ctf_fill(*c, NULL, NULL, err);
}

static void streams(void)
{
	struct pfc_ctf *c = NULL;
	struct pfc_error err;
	size_t len;
	char *buf = load_file(NT, &len), orig[4];
	int ret;

	check(buf != NULL && len > 300000, "reading %s", NT);
	if (!buf)
		return;
	memset(&err, 0, sizeof(err));
	check(read_one(&c, NT, buf, len, &err) == 0, "%s: %s", NT, err.detail);
	pfc_ctf_free(c);

	/* an event block's header claiming 65535 bytes */
	memcpy(orig, buf + 447, 4);
	memcpy(buf + 447, "\377\377\377\177", 4);
	memset(&err, 0, sizeof(err));
	ret = read_one(&c, "bad.nettrace", buf, len, &err);
	check(ret < 0 && err.has_offset && err.offset > 400 && err.offset < 1000 && !strcmp(err.file, "bad.nettrace"),
	      "a corrupt stream: %d, offset %llu in '%s'", ret, (unsigned long long)err.offset, err.file);
	pfc_ctf_free(c);

	/* cut inside its events: read up to the cut */
	memcpy(buf + 447, orig, 4);
	memset(&err, 0, sizeof(err));
	check(read_one(&c, "cut.nettrace", buf, 300000, &err) == 0, "a cut stream: %s", err.detail);
	pfc_ctf_free(c);
	free(buf);
}

int main(void)
{
	names();
	streams();
	return check_done("test_ctf");
}
