/*
 * perfmapctl.h - a running .NET process's diagnostics socket, found the one way
 * --enable-perfmap finds it (its $TMPDIR, /tmp, through /proc/PID/root for another mount
 * namespace, the live process's key before a stale socket's), and the socket I/O with a
 * deadline: shared by --enable-perfmap (perfmapctl.c) and perfconv record (record_dotnet.c).
 * The bytes sent and the decoding of replies are converter/jit/diagipc.c's.  Nothing here prints.
 */
#ifndef PFC_CLI_PERFMAPCTL_H
#define PFC_CLI_PERFMAPCTL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include "converter/jit/diagipc.h"

struct pfc_diag_target {
	const char *opt;        /* the command line's word for messages: "--enable-perfmap", "record" */
	long pid;               /* as given: the pid in perfconv's pid namespace */
	long nspid;             /* the pid the process sees (its innermost NStgid) */
	char comm[64];
	char proc[64];          /* /proc/PID: set by the caller with pid */
	uint64_t starttime;
};

struct pfc_diag_found {
	char path[PATH_MAX];    /* the socket; empty when none was found */
	uint64_t key;
	struct timespec mtime;
	int n;                  /* sockets found */
	int key_matches;        /* the chosen one's key is the process's start time */
	int eacces;             /* a directory could not be read: permission */
	char denied[PATH_MAX];
};

/* The first cap-1 bytes of a small /proc file, NUL-terminated; -1 with errno when unreadable. */
ssize_t pfc_diagsock_read_small(const char *path, char *buf, size_t cap);

/* CLOCK_MONOTONIC in seconds, and the milliseconds left before a deadline on it (at least 0). */
double pfc_diagsock_now(void);
int pfc_diagsock_ms_left(double deadline);

/* t->comm, nspid and starttime from /proc (t->pid and t->proc set): 0, or -1 with errno and
 * the file that could not be read in failed[cap]. */
int pfc_diagsock_target(struct pfc_diag_target *t, char *failed, size_t cap);

/* Look for t's socket: f->path, empty when none; dirs[dcap] says where it was looked for.
 * The process's environment is read into env[envcap]: its length, -1 when unreadable. */
ssize_t pfc_diagsock_find(const struct pfc_diag_target *t, char *env, size_t envcap, struct pfc_diag_found *f,
			  char *dirs, size_t dcap);

/* Does the process map the CoreCLR runtime (libcoreclr.so)?  1, 0, -1 when its maps are unreadable. */
int pfc_diagsock_maps_coreclr(const struct pfc_diag_target *t);

/* Connect to the socket (non-blocking, AF_UNIX) before the deadline: the descriptor, or -1 with *err. */
int pfc_diagsock_connect(const char *path, double deadline, int *err);

/* Send all of buf before the deadline: 0, or -1 with *err. */
int pfc_diagsock_send(int fd, const uint8_t *buf, size_t len, double deadline, int *err);

/* Read one reply (session: a CollectTracing2/StopTracing one, whose OK holds a session id)
 * into in[cap], never a byte past it.  0: decoded into rep; 1: malformed, e says where;
 * -ETIMEDOUT; -ECONNRESET: closed after *got bytes; another -errno. */
int pfc_diagsock_recv_reply(int fd, double deadline, int session, uint8_t *in, size_t cap, size_t *got,
			    struct pfc_diagipc_reply *rep, struct pfc_error *e);

#endif
