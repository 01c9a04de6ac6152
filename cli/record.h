/*
 * record.h - perfconv record: one command from a live process (a .NET service, the whole
 * machine or a command it starts) to a pack.  record.c parses the command line and drives the
 * recording; record_preflight.c checks what would make it fail or lose names before anything
 * starts; record_dotnet.c talks to each .NET runtime (its perf map, its EventPipe session);
 * record_port.c is the diagnostic port a command's runtime connects to before its first
 * managed code; record_count.c counts the samples for the progress line; record_debug.c
 * fetches the runtime's debug files while perf records.
 * perf record, run as a child process, does the collecting; the pack writer does the packing.
 */
#ifndef PFC_CLI_RECORD_H
#define PFC_CLI_RECORD_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include "cli/perfmapctl.h"

#define PFC_REC_MAX_PIDS 64

/* what the command line asked for */
struct pfc_rec_opts {
	double duration;             /* --duration SECONDS; 0: until SIGINT or SIGTERM */
	long freq;                   /* -F HZ */
	int dwarf;                   /* --call-graph dwarf (else fp) */
	const char *events;          /* --dotnet-events LIST, as given */
	uint64_t keywords;           /* ... as the runtime provider's keywords; 0: none */
	uint32_t level;
	const char *output;          /* -o, else a name made of the target and the time */
	int verbose, quiet;
	int all;                     /* -a, or no target: the whole machine */
	long pids[PFC_REC_MAX_PIDS];  /* -p PID,... */
	int npids;
	char **cmd;                  /* -- COMMAND ARGS...: NULL-terminated */
	int offcpu;                  /* --off-cpu: sched:sched_switch (with --switch-events) */
	int thread_time;             /* --thread-time: the same and cpu-clock */
	const char *formats;         /* -f LIST: also converted into the pack's directory */
	int offline;                 /* --offline: no symbol server or debuginfod is asked */
	char symsrv[4096];           /* --symbol-server URLs, space-separated; empty: PERFCONV_SYMBOL_SERVERS */
};

/* the runtime's debug files fetched while perf records (record_debug.c) */
#define PFC_REC_MAX_DEBUG 16
enum { PFC_REC_DEBUG_ASKED, PFC_REC_DEBUG_FETCHED, PFC_REC_DEBUG_CACHED, PFC_REC_DEBUG_MISSING };
struct pfc_rec_debug_file {
	uint8_t build_id[20];
	int len;
	char name[64];               /* libcoreclr.so */
	int state;
};
struct pfc_rec_debug {
	const char *urls, *cache;    /* the symbol servers and their cache; NULL: none (nothing fetched) */
	double timeout;
	int quiet;
	struct pfc_rec_debug_file files[PFC_REC_MAX_DEBUG];
	size_t n;
	int started, done;
	pthread_t thread;
};

/* the samples perf has written so far (record_count.c) */
struct pfc_rec_count {
	int fd;                      /* the file's descriptor plus one; 0: not open */
	uint64_t off;                /* the next record's offset; 0: the header is not read yet */
	uint64_t samples;
	int init_done;               /* perf's FINISHED_INIT: the processes already running are described */
	int stopped;                 /* a record it could not read: the count stays where it is */
};

/* one .NET process in the recording */
struct pfc_rec_proc {
	struct pfc_diag_target t;
	char sock[PATH_MAX];         /* its diagnostics socket; empty: none found */
	int major;                   /* .NET major version from the runtime's path; 0: unknown */
	int perfmap_was_on;          /* on before we came (see record_dotnet.c for the rule) */
	int perfmap_enabled;         /* we switched it on: switch it off at the end */
	/* the EventPipe session: its connection, streamed into path by a thread */
	int fd, out_fd;
	uint64_t session;
	int have_session, thread_started;
	pthread_t thread;
	char path[PATH_MAX];
	uint64_t bytes;              /* written so far (atomic: the thread adds, the progress reads) */
	int done;                    /* the stream ended (atomic) */
	int stream_errno;            /* why it ended, when not at the end of the stream */
	/* a runtime that connected to perfconv's diagnostic port (-- COMMAND) */
	int from_port;
	uint8_t cookie[16];          /* its advertised instance cookie */
	int resumed;                 /* ResumeRuntime sent */
	int idle_fd;                 /* its latest connection, waiting for a command; -1: none */
	int stop_sent;               /* StopTracing sent: the rundown is on its way */
};

/* the diagnostic port of -- COMMAND: a socket perfconv listens on, named to the command by
 * DOTNET_DiagnosticPorts=PATH,connect,suspend */
struct pfc_rec_port {
	int fd;                      /* listening; -1: no port */
	char path[108];              /* sun_path's size */
	char dir[PATH_MAX];          /* a directory made for it when the work directory's name is too long */
	char env[PATH_MAX + 160];    /* the variable's value for the command */
};

/* the preflight's findings that the recording uses */
struct pfc_rec_pre {
	int perf_major, perf_minor;
	int user_only;               /* perf can record user space only (perf_event_paranoid 2) */
};

/* record_preflight.c: check perf, the kernel's settings, the targets and the output
 * directory; prints each problem with its fix.  0 to go on, -1 to stop (printed). */
int pfc_rec_preflight(const struct pfc_rec_opts *o, const char *outdir, struct pfc_rec_pre *pre);

/* record_preflight.c: the .NET major version a process runs, from the path of the
 * libcoreclr.so it maps (.../Microsoft.NETCore.App/8.0.1/libcoreclr.so); 0 when it maps
 * one from elsewhere (a self-contained app), -1 when it maps none or cannot be read. */
int pfc_rec_dotnet_version(long pid);

/* record_dotnet.c: look p up (p->t.pid set): its socket and whether its perf map is on.
 * 0, or -1 when the process cannot be read (printed). */
int pfc_rec_dotnet_probe(struct pfc_rec_proc *p);

/* record_dotnet.c: switch the perf map on (unless it is), and open the EventPipe session
 * into DIR/PID.nettrace when o asks for events.  Failures are warnings: the recording
 * goes on with what works. */
void pfc_rec_dotnet_start(struct pfc_rec_proc *p, const struct pfc_rec_opts *o, const char *dir);

/* record_dotnet.c: open the EventPipe session on conn, a connection the runtime made to
 * perfconv's port (taken over), as pfc_rec_dotnet_start does on the runtime's socket. */
void pfc_rec_dotnet_start_on(struct pfc_rec_proc *p, int conn, const struct pfc_rec_opts *o, const char *dir);

/* record_dotnet.c: ResumeRuntime on conn (taken over): 0, or -1 (warned unless quiet). */
int pfc_rec_dotnet_resume(struct pfc_rec_proc *p, int conn, int quiet);

/* record_port.c: listen on a socket in dir (or in $TMPDIR when dir's name is too long for a
 * socket's) and make the DOTNET_DiagnosticPorts value that names it, after what is set
 * already.  0, or -1 (printed). */
int pfc_rec_port_open(struct pfc_rec_port *port, const char *dir);

/* record_port.c: wait up to ms milliseconds for the runtimes' connections and answer each:
 * the first of a runtime opens its EventPipe session (when o asks for events) as a new entry
 * of dn[*ndn] (at most max), the next resumes it, later ones are kept for StopTracing.
 * Returns at once when nothing listens. */
void pfc_rec_port_serve(struct pfc_rec_port *port, struct pfc_rec_proc *dn, int *ndn, int max,
			const struct pfc_rec_opts *o, const char *dir, int ms);

/* record_port.c: close the port, its socket file and the connections kept. */
void pfc_rec_port_close(struct pfc_rec_port *port, struct pfc_rec_proc *dn, int ndn);

/* record_dotnet.c: stop the session (StopTracing on a second connection) and wait up to
 * timeout seconds for the stream's end (the rundown), less when *signals (if given) counts
 * a second Ctrl-C; abandon: close it at once. */
void pfc_rec_dotnet_stop(struct pfc_rec_proc *p, double timeout, int abandon, const volatile sig_atomic_t *signals,
			 int quiet);

/* record_dotnet.c: send StopTracing now, so that the rundown comes while perfconv stops
 * perf; pfc_rec_dotnet_stop then only waits for it. */
void pfc_rec_dotnet_stop_send(struct pfc_rec_proc *p, int quiet);

/* record_dotnet.c: switch the perf map off again if we switched it on. */
void pfc_rec_dotnet_restore(struct pfc_rec_proc *p, int quiet);

/* record_count.c: count the sample records perf appended to path since the last call. */
void pfc_rec_count_update(struct pfc_rec_count *k, const char *path);
void pfc_rec_count_close(struct pfc_rec_count *k);

/* record_debug.c: start fetching the debug files of the runtime libraries the processes map
 * (once; nothing without servers), and wait for the fetching to end, saying what came. */
void pfc_rec_debug_start(struct pfc_rec_debug *d, const struct pfc_rec_proc *dn, int ndn);
void pfc_rec_debug_finish(struct pfc_rec_debug *d);

/* record_buildid.c: the BUILD_ID section of perf's file at path, which perf (run with
 * --no-buildid) left out: the build-ids of the files its samples hit, read here now.  0 (nr:
 * how many), or -1 with msg; a file that has the section already is left alone. */
int pfc_rec_buildid_add(const char *path, int *nr, char *msg, size_t cap);

/* entry point: argv[0] is "record"; returns the exit status */
int pfc_cli_record(int argc, char **argv);

#endif
