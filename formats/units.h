/*
 * units.h - what a profile's weights measure, and their text for a person (units.c): the
 * clock events' periods and the off-CPU and thread-time profiles are nanoseconds, read as
 * seconds or milliseconds with the samples beside; other events' weights are counts.
 */
#ifndef PFC_UNITS_H
#define PFC_UNITS_H

#include <stdint.h>
#include <stdio.h>
#include "converter/session.h"
#include "formats/writer.h"

/* cpu-clock or task-clock: an event whose period is nanoseconds of CPU time. */
int pfc_units_clock_event(const struct pfc_evsel *ev);

struct pfc_units {
	int time;                   /* the weights are nanoseconds */
	const char *what;           /* the event's name, or the time profile's ("off-CPU time") */
	uint64_t samples;           /* the samples the profile is made of */
};

/* The units of the profile the folded writer walks in s with o (--event's, else the event
 * of the first sample; the time profile of --off-cpu and --thread-time). */
void pfc_units_of(struct pfc_session *s, const struct pfc_wopts *o, struct pfc_units *u);
/* WEIGHT as a person reads it: "5.914 s of cpu-clock in 5914 samples", "1234567 cycles in
 * 89 samples", "89 samples". */
void pfc_units_put(FILE *out, const struct pfc_units *u, uint64_t weight);

#endif
