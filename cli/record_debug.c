/*
 * record_debug.c - the debug files of each .NET runtime in a recording (libcoreclr.so,
 * libclrjit.so: stripped, Microsoft serves their symbols by build-id), fetched from the
 * configured symbol servers on a thread while perf records, into the symbol servers' cache,
 * where the pack's conversion finds them without a request and packs them.  The fetching and
 * its checks are converter/native/symsrv.c's; it does not decide when to record or pack.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/record.h"
#include "converter/native/symsrv.h"
#include "converter/native/symtab.h"

/* the runtime's native libraries whose debug files the frames of a .NET process need most */
static const char *const libs[] = { "/libcoreclr.so", "/libclrjit.so" };

/* add the runtime libraries p maps, as /proc/PID/root paths (the same file from any mount
 * namespace), to d's list, once per build-id */
static void collect(struct pfc_rec_debug *d, const struct pfc_rec_proc *p)
{
	char path[96], line[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%ld/maps", p->t.pid);
	if (!(fp = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), fp) && d->n < PFC_REC_MAX_DEBUG) {
		char *file = strchr(line, '/'), full[PATH_MAX];
		struct pfc_rec_debug_file *f = &d->files[d->n];
		size_t i, k, len;
		int j;

		if (!file)
			continue;
		file[strcspn(file, "\n")] = 0;
		len = strlen(file);
		for (j = 0, k = 0; j < (int)(sizeof(libs) / sizeof(libs[0])); j++)
			if (len > strlen(libs[j]) && !strcmp(file + len - strlen(libs[j]), libs[j]))
				k = 1;
		if (!k || snprintf(full, sizeof(full), "/proc/%ld/root%s", p->t.pid, file) >= (int)sizeof(full))
			continue;
		memset(f, 0, sizeof(*f));
		if (pfc_elf_build_id(full, f->build_id, &f->len) < 0 || f->len <= 0)
			continue;
		for (i = 0; i < d->n; i++)
			if (d->files[i].len == f->len && !memcmp(d->files[i].build_id, f->build_id, (size_t)f->len))
				break;
		if (i < d->n)
			continue;
		snprintf(f->name, sizeof(f->name), "%s", strrchr(file, '/') + 1);
		d->n++;
	}
	fclose(fp);
}

static void *fetch_main(void *arg)
{
	struct pfc_rec_debug *d = arg;
	struct pfc_symsrv s;
	char path[PATH_MAX];
	size_t i;

	memset(&s, 0, sizeof(s));
	if (pfc_symsrv_open(&s, d->urls, d->cache, d->timeout, d->quiet ? NULL : stderr) < 0)
		goto out;
	for (i = 0; i < d->n; i++) {
		struct pfc_rec_debug_file *f = &d->files[i];
		if (pfc_symsrv_cached(&s, f->build_id, f->len, path, sizeof(path)) == 0)
			f->state = PFC_REC_DEBUG_CACHED;
		else if (pfc_symsrv_fetch(&s, f->build_id, f->len, f->name, path, sizeof(path)) == 0)
			f->state = PFC_REC_DEBUG_FETCHED;
		else
			f->state = PFC_REC_DEBUG_MISSING;
	}
	pfc_symsrv_close(&s);
out:
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

void pfc_rec_debug_start(struct pfc_rec_debug *d, const struct pfc_rec_proc *dn, int ndn)
{
	sigset_t all, old;
	int i;

	if (d->started || !d->urls || !d->cache)
		return;
	for (i = 0; i < ndn; i++)
		collect(d, &dn[i]);
	if (!d->n)
		return;
	d->started = 1;
	/* the thread takes no signal: Ctrl-C is the main thread's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&d->thread, NULL, fetch_main, d) != 0)
		d->started = 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void pfc_rec_debug_finish(struct pfc_rec_debug *d)
{
	size_t i;
	int fetched = 0, cached = 0, missing = 0;
	char names[256] = "";

	if (!d->started)
		return;
	d->started = 0;
	pthread_join(d->thread, NULL);
	for (i = 0; i < d->n; i++) {
		const struct pfc_rec_debug_file *f = &d->files[i];
		fetched += f->state == PFC_REC_DEBUG_FETCHED;
		cached += f->state == PFC_REC_DEBUG_CACHED;
		missing += f->state != PFC_REC_DEBUG_FETCHED && f->state != PFC_REC_DEBUG_CACHED;
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "", f->name);
	}
	if (!d->quiet)
		fprintf(stderr, "perfconv: record: debug files of the .NET runtime (%s): %d fetched while recording, %d "
			"from the cache, %d not to be had\n", names, fetched, cached, missing);
}
