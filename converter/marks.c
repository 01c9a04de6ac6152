/*
 * marks.c - the list of perf's own moments in a recording (lost events, throttling) that
 * session.c fills from its record handlers when a writer asks for them.  Only the list: what
 * a record means is decoded by session.c, and how a mark is drawn is the writer's.
 */
#include <stdlib.h>
#include "converter/marks.h"

void pfc_marks_init(struct pfc_marks *m)
{
	m->v = NULL;
	m->n = m->cap = 0;
}

void pfc_marks_exit(struct pfc_marks *m)
{
	free(m->v);
	pfc_marks_init(m);
}

int pfc_marks_add(struct pfc_marks *m, const struct pfc_mark *mark)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct pfc_mark *v = realloc(m->v, cap * sizeof(*v));
		if (!v)
			return -1;
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n++] = *mark;
	return 0;
}

const char *pfc_marks_kind_name(unsigned kind)
{
	static const char *const names[PFC_MARK__MAX] = { "LOST", "LOST_SAMPLES", "THROTTLE", "UNTHROTTLE" };

	return kind < PFC_MARK__MAX ? names[kind] : "?";
}
