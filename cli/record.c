/*
 * record.c - perfconv record [-p PID,... | -a | -- COMMAND]: from a live system to a pack in
 * one command.  It owns the command's options (its table makes its --help), perf record as a
 * child process, the wait (duration, signals, the target's end), the order in which all is
 * undone on every way out, and the pack, made in-process by the pack writer.  The preflight is
 * record_preflight.c's, each .NET runtime's perf map and event session record_dotnet.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/convert.h"
#include "cli/record.h"
#include "converter/jit/dotnetname.h"
#include "formats/writer.h"

#ifndef PERFCONV_VERSION
#define PERFCONV_VERSION "0.1.0"
#endif

#define EXIT_ABANDONED 130
/* seconds the runtime gets to send its rundown after StopTracing */
#define RUNDOWN_TIMEOUT 30.0
/* seconds perf gets to write its file after SIGINT */
#define PERF_STOP_TIMEOUT 60.0
/* seconds perf may take to start writing (it reads /proc for every process first) */
#define PERF_START_TIMEOUT 30.0
#define MAX_DOTNET 256

enum {
	OPT_DURATION = 256,
	OPT_CALL_GRAPH,
	OPT_DOTNET_EVENTS,
	OPT_OFF_CPU,
	OPT_THREAD_TIME,
	OPT_OFFLINE,
	OPT_SYMBOL_SERVER,
};

struct rec_opt {
	int val;
	const char *name;
	char shortopt;
	int has_arg;
	const char *arg;
	const char *help;
};

/* the one source of record's options: getopt's table and its --help */
static const struct rec_opt rec_table[] = {
	{ 'p', "pid", 'p', 1, "PID[,PID...]", "record these processes (default: the whole machine)" },
	{ 'a', "all-cpus", 'a', 0, NULL, "record the whole machine (the default without -p or a command)" },
	{ OPT_DURATION, "duration", 0, 1, "SECONDS", "stop after this long (default: at Ctrl-C or SIGTERM, or when the target ends)" },
	{ 'F', "freq", 'F', 1, "HZ", "samples a second (default: 999)" },
	{ OPT_CALL_GRAPH, "call-graph", 0, 1, "fp|dwarf", "how perf records stacks: frame pointers (the default) or DWARF stack copies" },
	{ OPT_DOTNET_EVENTS, "dotnet-events", 0, 1, "LIST", "runtime events of .NET processes, into PID.nettrace files: gc, alloc, jit, exceptions, loader, threadpool, contention, or none (default: gc,exceptions,jit)" },
	{ OPT_OFF_CPU, "off-cpu", 0, 0, NULL, "record where threads wait: sched:sched_switch samples and switch events, for perfconv --off-cpu (instead of CPU samples)" },
	{ OPT_THREAD_TIME, "thread-time", 0, 0, NULL, "record CPU samples and sched:sched_switch samples, for perfconv --thread-time" },
	{ 'f', "format", 'f', 1, "LIST", "also convert the pack into these formats beside it (folded,svg,speedscope,pprof,trace.zip,perf-script,top), with --off-cpu or --thread-time as recorded" },
	{ OPT_SYMBOL_SERVER, "symbol-server", 0, 1, "URL", "fetch the .NET runtime's debug files (libcoreclr.so, libclrjit.so) by build-id from this symbol server while recording, for the pack (repeatable; default: PERFCONV_SYMBOL_SERVERS)" },
	{ OPT_OFFLINE, "offline", 0, 0, NULL, "ask no symbol server or debuginfod server, while recording or packing" },
	{ 'o', "output", 'o', 1, "FILE", "the pack to write (default: NAME-DATE-TIME.perfpack in the current directory, NAME the target's)" },
	{ 'q', "quiet", 'q', 0, NULL, "print no progress, summary or warnings" },
	{ 'v', "verbose", 'v', 0, NULL, "print the perf command line and more detail" },
	{ 'h', "help", 'h', 0, NULL, "show this help and exit" },
};

#define NR_REC_OPTS (sizeof(rec_table) / sizeof(rec_table[0]))

static void usage(FILE *fp)
{
	size_t i;

	fprintf(fp, "usage: perfconv record [OPTION]... [-p PID[,PID...] | -a | -- COMMAND [ARG]...]\n"
		    "Record with perf and pack the recording with every file its frames need; switch on the perf\n"
		    "maps of .NET processes for the recording and stream their runtime events beside the pack.\n\n");
	for (i = 0; i < NR_REC_OPTS; i++) {
		const struct rec_opt *d = &rec_table[i];
		char left[64];

		if (d->shortopt)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", d->shortopt, d->name, d->arg ? " " : "", d->arg ? d->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", d->name, d->arg ? " " : "", d->arg ? d->arg : "");
		fprintf(fp, "  %-26s %s\n", left, d->help);
	}
	fprintf(fp, "\nExit status: 0 packed, 1 failed (the preflight's problems say what to do), 2 usage error,\n"
		    "130 abandoned by a second Ctrl-C.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("perfconv: record: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'perfconv record --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

/* ---- signals: the first SIGINT/SIGTERM stops cleanly, a second abandons ---- */

static volatile sig_atomic_t stop_signals;

static void on_stop(int sig)
{
	(void)sig;
	stop_signals++;
}

static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* ---- the recording's state: everything that must be undone on every way out ---- */

struct rec {
	struct pfc_rec_opts o;
	struct pfc_rec_pre pre;
	char out[PATH_MAX];          /* the pack */
	char outdir[PATH_MAX];
	char work[PATH_MAX];         /* OUTDIR/.NAME.record-XXXXXX: perf.data, perf.log, the streams */
	char events[PATH_MAX];       /* NAME.events: the streams' final place */
	char data[PATH_MAX + 32], log[PATH_MAX + 32];
	pid_t perf;                  /* perf record; 0 when not running */
	int perf_status, perf_exited, perf_signaled;
	long child;                  /* -- COMMAND: the command's pid (perf's child) */
	struct pfc_rec_proc dn[MAX_DOTNET];
	int ndn;
	struct pfc_rec_port port;    /* -- COMMAND: the runtime connects here before its first managed code */
	double t0;                   /* when perf began to write: the duration counts from there */
	struct pfc_rec_count count;  /* the samples written so far */
	struct pfc_rec_debug debug;  /* the runtime's debug files, fetched meanwhile */
	char symcache[PATH_MAX];     /* the symbol servers' cache */
	int ready;
	double header_seen;          /* when perf's file header appeared; 0: not yet */
	int progress_shown;
	int restarts;                /* perf started again after it failed to start */
};

static int parse_pids(struct pfc_rec_opts *o, const char *arg)
{
	const char *p = arg;

	while (*p) {
		char *end;
		long v;
		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || errno || v <= 0 || v > 0x3fffffff || (*end && *end != ','))
			return -1;
		if (o->npids == PFC_REC_MAX_PIDS)
			return -1;
		o->pids[o->npids++] = v;
		p = *end ? end + 1 : end;
	}
	return o->npids ? 0 : -1;
}

/* -f LIST into ws[max] (none when ws is NULL: a check): their number, or -1 (printed).  The
 * pack is made anyway, and a profile of waits has no place in the formats of samples. */
static int parse_formats(const struct pfc_rec_opts *o, const struct pfc_writer **ws, int max)
{
	const char *f = o->formats;
	int n = 0, i;

	while (*f) {
		size_t len = strcspn(f, ",");
		char name[64];
		const struct pfc_writer *w = NULL;
		if (len && len < sizeof(name)) {
			memcpy(name, f, len);
			name[len] = 0;
			w = pfc_writer_by_name(name);
		}
		if (!w || w == &pfc_writer_pack) {
			fprintf(stderr, "perfconv: record: -f '%s': %s%.*s%s (folded, svg, speedscope, firefox, pprof, "
				"trace.zip, perf-script, top, runtime)\nTry 'perfconv record --help' for more information.\n", o->formats,
				w ? "" : "unknown format '", w ? 0 : (int)len, f,
				w ? "the pack is always made: -f names the formats made beside it" : "'");
			return -1;
		}
		if ((o->offcpu || o->thread_time) && (w->needs & PFC_NEED_STREAM)) {
			fprintf(stderr, "perfconv: record: -f '%s': %s makes a profile, and the %s format prints samples: use "
				"folded, svg, speedscope or pprof\nTry 'perfconv record --help' for more information.\n",
				o->formats, o->thread_time ? "--thread-time" : "--off-cpu", w->name);
			return -1;
		}
		if (ws) {
			for (i = 0; i < n && ws[i] != w; i++)
				;
			if (i == n && n < max)
				ws[n++] = w;
		}
		f += len + (f[len] == ',');
	}
	return n;
}

static int parse_args(struct pfc_rec_opts *o, int argc, char **argv)
{
	struct option longopts[NR_REC_OPTS + 1];
	char shortopts[32] = "+";	/* stop at the command's first word */
	char bad[64];
	size_t i, k = 1;
	int opt;

	memset(o, 0, sizeof(*o));
	o->freq = 999;
	o->events = "gc,exceptions,jit";
	for (i = 0; i < NR_REC_OPTS; i++) {
		longopts[i].name = rec_table[i].name;
		longopts[i].has_arg = rec_table[i].has_arg ? required_argument : no_argument;
		longopts[i].flag = NULL;
		longopts[i].val = rec_table[i].val;
		if (rec_table[i].shortopt) {
			shortopts[k++] = rec_table[i].shortopt;
			if (rec_table[i].has_arg)
				shortopts[k++] = ':';
		}
	}
	memset(&longopts[NR_REC_OPTS], 0, sizeof(longopts[0]));
	shortopts[k] = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		char *end;
		switch (opt) {
		case 'p':
			if (parse_pids(o, optarg) < 0)
				return usage_error("-p '%s': expected PID or PID,PID,... (at most 64)", optarg);
			break;
		case 'a': o->all = 1; break;
		case OPT_DURATION:
			errno = 0;
			o->duration = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->duration > 0) || o->duration > 1e7)
				return usage_error("--duration '%s': expected a number of seconds greater than 0", optarg);
			break;
		case 'F':
			errno = 0;
			o->freq = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || o->freq < 1 || o->freq > 100000)
				return usage_error("-F '%s': expected samples a second, from 1 to 100000", optarg);
			break;
		case OPT_CALL_GRAPH:
			if (!strcmp(optarg, "dwarf"))
				o->dwarf = 1;
			else if (strcmp(optarg, "fp"))
				return usage_error("--call-graph '%s': fp or dwarf", optarg);
			break;
		case OPT_DOTNET_EVENTS: o->events = optarg; break;
		case OPT_OFF_CPU: o->offcpu = 1; break;
		case OPT_THREAD_TIME: o->thread_time = 1; break;
		case 'f': o->formats = optarg; break;
		case OPT_OFFLINE: o->offline = 1; break;
		case OPT_SYMBOL_SERVER:
			if (strpbrk(optarg, " \t\n") || strlen(o->symsrv) + strlen(optarg) + 2 > sizeof(o->symsrv))
				return usage_error("--symbol-server '%s': one URL, without spaces", optarg);
			if (*o->symsrv)
				strcat(o->symsrv, " ");
			strcat(o->symsrv, optarg);
			break;
		case 'o': o->output = optarg; break;
		case 'q': o->quiet = 1; break;
		case 'v': o->verbose++; break;
		case 'h': usage(stdout); return -1;
		default:
			fputs("Try 'perfconv record --help' for more information.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (pfc_diagipc_events_parse(o->events, &o->keywords, &o->level, bad, sizeof(bad)) < 0) {
		fprintf(stderr, "perfconv: record: --dotnet-events: unknown event kind '%s' in '%s' (gc, alloc, jit, exceptions, "
			"loader, threadpool, contention, or none)\nTry 'perfconv record --help' for more information.\n", bad,
			o->events);
		return EXIT_USAGE;
	}
	if (o->offcpu && o->thread_time)
		return usage_error("%s", "--off-cpu and --thread-time: give one (--thread-time has the off-CPU time too)");
	if (o->formats && parse_formats(o, NULL, 0) < 0)
		return EXIT_USAGE;
	if (optind < argc)
		o->cmd = argv + optind;
	if ((o->cmd != NULL) + (o->npids > 0) + o->all > 1)
		return usage_error("%s", "give one target: -p PID, -a, or a command after --");
	if (!o->cmd && !o->npids)
		o->all = 1;
	return 0;
}

/* ---- names ---- */

/* the default output: NAME-YYYYmmdd-HHMMSS.perfpack, NAME the command's, the first
 * process's comm, or "system" */
static void default_output(const struct pfc_rec_opts *o, char *out, size_t cap)
{
	char name[64] = "system", stamp[32], path[64];
	time_t now = time(NULL);
	struct tm tm;
	size_t i;

	if (o->cmd) {
		const char *w = o->cmd[0], *s;
		/* `dotnet app.dll` is named after the app */
		if (!strcmp((s = strrchr(w, '/')) ? s + 1 : w, "dotnet") && o->cmd[1] && o->cmd[1][0] != '-')
			w = o->cmd[1];
		s = strrchr(w, '/');
		snprintf(name, sizeof(name), "%s", s ? s + 1 : w);
		if (strlen(name) > 4 && !strcmp(name + strlen(name) - 4, ".dll"))
			name[strlen(name) - 4] = 0;
	} else if (o->npids) {
		snprintf(path, sizeof(path), "/proc/%ld/comm", o->pids[0]);
		if (pfc_diagsock_read_small(path, name, sizeof(name)) > 0)
			name[strcspn(name, "\n")] = 0;
		else
			snprintf(name, sizeof(name), "%ld", o->pids[0]);
	}
	/* a comm may hold anything: keep a name that every shell and file system takes */
	for (i = 0; name[i]; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '.' || name[i] == '_' || name[i] == '-'))
			name[i] = '_';
	if (!name[0] || name[0] == '.')
		snprintf(name, sizeof(name), "record");
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(out, cap, "%s-%s.perfpack", name, stamp);
}

/* NAME.perfpack -> NAME.events (the directory of the streams) */
static void events_dir(const char *out, char *dir, size_t cap)
{
	size_t n = strlen(out);

	if (n > 9 && !strcmp(out + n - 9, ".perfpack"))
		n -= 9;
	snprintf(dir, cap, "%.*s.events", (int)n, out);
}

/* ---- processes ---- */

static int is_dotnet_pid(long pid)
{
	return pfc_rec_dotnet_version(pid) >= 0;
}

static void add_dotnet(struct rec *r, long pid)
{
	struct pfc_rec_proc *p;

	if (r->ndn == MAX_DOTNET)
		return;
	p = &r->dn[r->ndn];
	memset(p, 0, sizeof(*p));
	p->t.pid = pid;
	if (pfc_rec_dotnet_probe(p) == 0)
		r->ndn++;
}

/* the .NET processes in scope: the pids given, or every one on the machine */
static void find_dotnet(struct rec *r)
{
	int i;

	if (r->o.npids) {
		for (i = 0; i < r->o.npids; i++)
			if (is_dotnet_pid(r->o.pids[i]))
				add_dotnet(r, r->o.pids[i]);
		return;
	}
	if (r->o.all) {
		DIR *d = opendir("/proc");
		struct dirent *de;
		long self = (long)getpid();
		if (!d)
			return;
		while ((de = readdir(d))) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);
			if (*end || pid <= 0 || pid == self)
				continue;
			if (is_dotnet_pid(pid))
				add_dotnet(r, pid);
		}
		closedir(d);
	}
}

/* -- COMMAND: perf's child, the command, once perf has forked it; 0 before */
static long perf_child(pid_t perf)
{
	char path[96], buf[256];
	long child = 0;

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", (long)perf, (long)perf);
	if (pfc_diagsock_read_small(path, buf, sizeof(buf)) > 0)
		child = strtol(buf, NULL, 10);
	return child;
}

/* ---- perf ---- */

static int start_perf(struct rec *r)
{
	char freq[64], *argv[32 + PFC_REC_MAX_PIDS], pids[PFC_REC_MAX_PIDS * 12] = "";
	int n = 0, i, logfd;
	pid_t pid;

	argv[n++] = "perf";
	argv[n++] = "record";
	/* the runtime's EventPipe timestamps are CLOCK_MONOTONIC: so are the samples' */
	argv[n++] = "-k";
	argv[n++] = "mono";
	if (r->o.dwarf) {
		argv[n++] = "--call-graph";
		argv[n++] = "dwarf";
	} else {
		argv[n++] = "-g";
	}
	if (r->o.offcpu || r->o.thread_time) {
		/* every switch-out with its stack (a tracepoint's period is 1: no -F, which would
		 * sample it by frequency), and the switch-ins that end each wait where it ends */
		argv[n++] = "-e";
		argv[n++] = "sched:sched_switch";
		argv[n++] = "--switch-events";
	}
	if (r->o.thread_time) {
		snprintf(freq, sizeof(freq), "cpu-clock/freq=%ld/", r->o.freq);
		argv[n++] = "-e";
		argv[n++] = freq;
	} else if (!r->o.offcpu) {
		snprintf(freq, sizeof(freq), "%ld", r->o.freq);
		argv[n++] = "-F";
		argv[n++] = freq;
	}
	/* Not perf's own pass over its file for the build-ids of the files its samples hit: most
	 * of its stop (1.5-2.7 s of a 10 s recording of a busy ASP.NET service on the loaded
	 * test machine).  perfconv reads the file right after perf's exit, twenty times faster,
	 * and writes the same section (record_buildid.c).  --no-buildid also leaves perf's
	 * build-id cache alone; the pack carries the files themselves.  Not --buildid-mmap
	 * either: perf 6.1 with it reported thousands of wake-ups for a few hundred samples,
	 * and exited with status 255 and no message in two of three 1 s recordings of Probe. */
	argv[n++] = "--no-buildid";
	argv[n++] = "-o";
	argv[n++] = r->data;
	if (r->o.npids) {
		for (i = 0; i < r->o.npids; i++)
			snprintf(pids + strlen(pids), sizeof(pids) - strlen(pids), "%s%ld", i ? "," : "", r->o.pids[i]);
		argv[n++] = "-p";
		argv[n++] = pids;
	} else if (r->o.all) {
		argv[n++] = "-a";
	}
	if (r->o.cmd) {
		argv[n++] = "--";
		for (i = 0; r->o.cmd[i] && n < (int)(sizeof(argv) / sizeof(argv[0])) - 1; i++)
			argv[n++] = r->o.cmd[i];
	}
	argv[n] = NULL;
	if (r->o.verbose) {
		fputs("perfconv: record:", stderr);
		for (i = 0; i < n; i++)
			fprintf(stderr, " %s", argv[i]);
		fputc('\n', stderr);
	}
	logfd = open(r->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (logfd < 0) {
		fprintf(stderr, "perfconv: record: cannot create '%s': %s\n", r->log, strerror(errno));
		return -1;
	}
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "perfconv: record: cannot start perf: %s\n", strerror(errno));
		close(logfd);
		return -1;
	}
	if (pid == 0) {
		sigset_t none;
		/* its own process group: a Ctrl-C at the terminal reaches perfconv alone, which
		 * stops the event sessions first and then perf */
		setpgid(0, 0);
		/* and it ends with perfconv, even a perfconv killed with SIGKILL */
		prctl(PR_SET_PDEATHSIG, SIGINT);
		if (getppid() == 1)
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* perf's messages go to the log, read at the end; a command's own output (perf's
		 * stdout is the command's) stays the user's */
		if (!r->o.cmd)
			dup2(logfd, 1);
		dup2(logfd, 2);
		if (!r->o.cmd) {
			int nul = open("/dev/null", O_RDONLY);
			if (nul >= 0)
				dup2(nul, 0);
		} else {
			/* the command writes its perf map and jitdump from its first method on */
			setenv("DOTNET_PerfMapEnabled", "1", 0);
			/* and its runtime waits on perfconv's port until its session is open */
			if (r->port.fd >= 0)
				setenv("DOTNET_DiagnosticPorts", r->port.env, 1);
		}
		execvp("perf", argv);
		dprintf(2, "perfconv: record: cannot run perf: %s\n", strerror(errno));
		_exit(127);
	}
	close(logfd);
	setpgid(pid, pid);
	r->perf = pid;
	return 0;
}

/* has perf ended? (reaps it) */
static int perf_ended(struct rec *r)
{
	int st;
	pid_t w;

	if (!r->perf)
		return 1;
	w = waitpid(r->perf, &st, WNOHANG);
	if (w == r->perf) {
		r->perf = 0;
		r->perf_exited = 1;
		r->perf_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		r->perf_signaled = WIFSIGNALED(st);
		return 1;
	}
	return 0;
}

static off_t file_size(const char *path);

/* Seconds after its header that a perf without FINISHED_INIT records (before 5.17) is taken
 * to have described the processes already running */
#define PERF_INIT_GRACE 2.0

/* perf has written its file's header and then its FINISHED_INIT record, after the
 * description of every process already running: its events are open and its SIGINT handler
 * is set.  A SIGINT before the header kills it with nothing written; one while it still
 * describes the processes (seconds for a busy .NET process on a loaded machine) made it exit
 * with status 255 and nothing said. */
static int perf_ready(struct rec *r)
{
	double now;

	if (r->ready)
		return 1;
	if (file_size(r->data) <= 0)
		return 0;
	now = pfc_diagsock_now();
	if (!r->header_seen)
		r->header_seen = now;
	pfc_rec_count_update(&r->count, r->data);
	if (r->count.init_done || r->count.stopped || now - r->header_seen >= PERF_INIT_GRACE) {
		r->ready = 1;
		r->t0 = now;
	}
	return r->ready;
}

/* SIGINT to perf and wait for it to write its file; then harder, so that it never outlives us */
static void stop_perf(struct rec *r, int abandon)
{
	double deadline;

	if (!r->perf || perf_ended(r))
		return;
	deadline = pfc_diagsock_now() + PERF_START_TIMEOUT;
	while (!abandon && !perf_ready(r) && !perf_ended(r) && stop_signals < 2 && pfc_diagsock_ms_left(deadline) > 0)
		poll(NULL, 0, 20);
	if (!r->perf)
		return;
	kill(r->perf, abandon ? SIGTERM : SIGINT);
	deadline = pfc_diagsock_now() + (abandon ? 2.0 : PERF_STOP_TIMEOUT);
	while (!perf_ended(r)) {
		if (pfc_diagsock_ms_left(deadline) <= 0) {
			/* its group: a command it started too */
			int st;
			kill(-r->perf, SIGKILL);
			kill(r->perf, SIGKILL);
			while (waitpid(r->perf, &st, 0) < 0 && errno == EINTR)
				;
			r->perf = 0;
			r->perf_exited = 1;
			r->perf_status = 128 + SIGKILL;
			break;
		}
		if (!abandon && stop_signals > 1) {
			abandon = 1;
			kill(r->perf, SIGTERM);
			deadline = pfc_diagsock_now() + 2.0;
		}
		poll(NULL, 0, 20);
	}
}

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : 0;
}

/* perf said it wrote its file (its last lines: warnings of lost samples may come first) */
static int perf_wrote(const struct rec *r)
{
	static char buf[1 << 18];
	ssize_t n = pfc_diagsock_read_small(r->log, buf, sizeof(buf));
	return n > 0 && strstr(buf, "[ perf record: Captured and wrote") != NULL && file_size(r->data) > 0;
}

static void print_perf_log(const struct rec *r)
{
	char buf[4096];
	ssize_t n = pfc_diagsock_read_small(r->log, buf, sizeof(buf));
	char *line, *save = NULL;

	if (n <= 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		fprintf(stderr, "perf: %s\n", line);
}

/* ---- progress ---- */

static void progress(struct rec *r, int last)
{
	uint64_t ev = 0;
	int i;

	/* on a terminal only: a log gets no line rewritten with \r */
	if (r->o.quiet || !isatty(STDERR_FILENO))
		return;
	for (i = 0; i < r->ndn; i++)
		ev += __atomic_load_n(&r->dn[i].bytes, __ATOMIC_RELAXED);
	pfc_rec_count_update(&r->count, r->data);
	fprintf(stderr, "\rperfconv: record: %.0f s, %llu samples, perf.data %.1f MB, runtime events %.1f MB%s",
		pfc_diagsock_now() - r->t0, (unsigned long long)r->count.samples, (double)file_size(r->data) / 1e6,
		(double)ev / 1e6, last ? "\n" : "   ");
	r->progress_shown = !last;
}

/* ---- the end: undo what was started, in the order that keeps the most ---- */

static void rm_work(struct rec *r)
{
	DIR *d;
	struct dirent *de;
	char path[PATH_MAX + 300];

	pfc_rec_count_close(&r->count);
	if (!r->work[0])
		return;
	if ((d = opendir(r->work))) {
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
				snprintf(path, sizeof(path), "%s/%s", r->work, de->d_name);
				unlink(path);
			}
		closedir(d);
	}
	rmdir(r->work);
	r->work[0] = 0;
}

/* Stop the sessions and perf, then switch the perf maps we switched on off again.  On every
 * way out.  The runtimes' rundowns and perf's last write take a second or more each on a busy
 * machine: both are asked for first and waited for together, so the pack waits for the longer
 * only.  A command is the exception: perf ends it when it stops, which would cut its rundown,
 * so its sessions end first. */
static void stop_all(struct rec *r, int abandon)
{
	double t = pfc_diagsock_now();
	int i;

	if (r->progress_shown)
		progress(r, 1);
	if (!abandon && !r->o.cmd) {
		/* perf first: a session's end ends the runtime's thread that streamed it, and perf
		 * 6.1 attached with -p polls the exited thread's events in a loop (POLLHUP, at
		 * 100% of a CPU: 10,000 wake-ups in the few milliseconds before its SIGINT) */
		if (r->perf && perf_ready(r) && !perf_ended(r))
			kill(r->perf, SIGINT);
		for (i = 0; i < r->ndn; i++)
			pfc_rec_dotnet_stop_send(&r->dn[i], r->o.quiet);
	}
	for (i = 0; i < r->ndn; i++)
		pfc_rec_dotnet_stop(&r->dn[i], RUNDOWN_TIMEOUT, abandon, &stop_signals, r->o.quiet);
	pfc_rec_port_close(&r->port, r->dn, r->ndn);
	if (r->o.verbose && r->ndn)
		fprintf(stderr, "perfconv: record: the event sessions ended %.2f s after the stop\n", pfc_diagsock_now() - t);
	stop_perf(r, abandon);
	if (r->o.verbose)
		fprintf(stderr, "perfconv: record: perf ended %.2f s after the stop\n", pfc_diagsock_now() - t);
	for (i = 0; i < r->ndn; i++)
		pfc_rec_dotnet_restore(&r->dn[i], r->o.quiet);
}

/* ---- the pack ---- */

#define MAX_FORMATS 8

/* The settings of a plain `perfconv -i perf.data -o OUT.perfpack`: the best names, the
 * symbol cache, the build-id cache and any servers named in the environment.  The formats of
 * -f come out of the same conversion, beside the pack (NAME.folded, NAME.svg, ...), with
 * --off-cpu or --thread-time as recorded: in-process, as the pack. */
static int pack(struct rec *r)
{
	static char bdir[PATH_MAX], symcache[PATH_MAX], names[MAX_FORMATS][PATH_MAX + 32];
	static struct cli c;
	const struct pfc_writer *ws[1 + MAX_FORMATS] = { &pfc_writer_pack };
	const char *outs[1 + MAX_FORMATS] = { r->out };
	struct pfc_job_result res;
	const char *home = getenv("HOME"), *xdg = getenv("XDG_CACHE_HOME");
	size_t base = strlen(r->out);
	int ret, nf = 0, i;

	if (base > 9 && !strcmp(r->out + base - 9, ".perfpack"))
		base -= 9;
	if (r->o.formats)
		nf = parse_formats(&r->o, ws + 1, MAX_FORMATS);
	for (i = 0; i < nf; i++) {
		const struct pfc_writer *w = ws[1 + i];
		if (w->suffixes && w->suffixes[0])
			snprintf(names[i], sizeof(names[i]), "%.*s%s", (int)base, r->out, w->suffixes[0]);
		else
			snprintf(names[i], sizeof(names[i]), "%.*s.%s", (int)base, r->out, w->name);
		outs[1 + i] = names[i];
	}

	memset(&c, 0, sizeof(c));
	pfc_cli_env_read(&c.env);
	c.opts.tuning = &c.env.tuning;
	c.opts.input = r->data;
	c.opts.max_stack = 127;
	c.jobs = 1;
	c.wopts.version = PERFCONV_VERSION;
	c.fail_if_grown = -1;
	c.quiet = r->o.quiet;
	c.verbose = r->o.verbose;
	c.opts.verbose = r->o.verbose;
	c.opts.log = r->o.quiet ? NULL : stderr;
	c.opts.resolve_jit = 1;
	c.opts.offcpu = r->o.offcpu || r->o.thread_time ? PFC_OFFCPU_BLOCKED : 0;
	c.opts.thread_time = r->o.thread_time;
	c.opts.dotnet_names = PFC_DOTNET_NAMES_SHORT;
	c.opts.dotnet_names_text = PFC_DOTNET_NAMES_KEEP;
	c.opts.strip_tiers = 1;	/* the conversion's defaults (settle_options) */
	c.opts.fold_runs = 1;
	if (!r->o.offline && getenv("DEBUGINFOD_URLS") && *getenv("DEBUGINFOD_URLS"))
		c.opts.debuginfod_urls = getenv("DEBUGINFOD_URLS");
	/* the servers the runtime's debug files came from: their cache answers without a request */
	c.opts.symsrv_urls = r->debug.urls;
	c.opts.symsrv_cache = r->debug.cache;
	c.opts.symsrv_timeout = r->debug.timeout;
	if (!c.env.no_cache) {
		if (xdg && xdg[0] == '/')
			snprintf(symcache, sizeof(symcache), "%s/perfconv", xdg);
		else if (home && *home)
			snprintf(symcache, sizeof(symcache), "%s/.cache/perfconv", home);
		c.opts.cache_dir = *symcache ? symcache : NULL;
	}
	if (home && *home) {
		snprintf(bdir, sizeof(bdir), "%s/.debug", home);
		c.opts.buildid_dir = bdir;
	}
	/* the runtimes' streams, ended with their rundown by now, go into the pack (and into the
	 * formats beside it: -f runtime, trace.zip's CTF) */
	for (i = 0; i < r->ndn && c.opts.nr_events < PFC_CLI_MAX_EVENTS; i++)
		if (r->dn[i].path[0] && file_size(r->dn[i].path) > 0) {
			/* a runtime in a pid namespace names its stream by its pid there: the
			 * recording's process is the host pid, which the pack then records */
			c.events_pids[c.opts.nr_events] = (int32_t)r->dn[i].t.pid;
			c.events[c.opts.nr_events++] = r->dn[i].path;
		}
	c.opts.events = c.opts.nr_events ? c.events : NULL;
	c.opts.events_pids = c.opts.nr_events ? c.events_pids : NULL;
	c.progress = !c.quiet && isatty(STDERR_FILENO);
	c.umask = umask(0);
	umask(c.umask);
	ret = pfc_cli_convert(&c, r->data, ws, outs, 1 + (size_t)(nf > 0 ? nf : 0), &res);
	pfc_filter_free(&c.filter);
	if (ret != 0) {
		fprintf(stderr, "perfconv: record: %s\n", res.msg);
		return -1;
	}
	return 0;
}

/* the build-ids perf left out (--no-buildid), read on this machine before anything changes */
static int add_build_ids(struct rec *r)
{
	char msg[PATH_MAX + 128];
	double t = pfc_diagsock_now();
	int nr;

	if (pfc_rec_buildid_add(r->data, &nr, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "perfconv: record: %s\n", msg);
		return -1;
	}
	if (r->o.verbose)
		fprintf(stderr, "perfconv: record: the build-ids of %d files with samples, in %.2f s\n", nr,
			pfc_diagsock_now() - t);
	return 0;
}

/* the streams from the work directory to NAME.events/PID.nettrace */
static int keep_events(struct rec *r)
{
	char to[PATH_MAX * 2];
	int i, made = 0;

	for (i = 0; i < r->ndn; i++) {
		struct pfc_rec_proc *p = &r->dn[i];
		if (!p->path[0] || file_size(p->path) == 0)
			continue;
		if (!made && mkdir(r->events, 0777) < 0 && errno != EEXIST) {
			fprintf(stderr, "perfconv: record: cannot create '%s': %s\n", r->events, strerror(errno));
			return -1;
		}
		made = 1;
		snprintf(to, sizeof(to), "%s/%ld.nettrace", r->events, p->t.pid);
		if (rename(p->path, to) < 0) {
			fprintf(stderr, "perfconv: record: cannot move '%s' to '%s': %s\n", p->path, to, strerror(errno));
			return -1;
		}
		if (!r->o.quiet)
			fprintf(stderr, "perfconv: record: %s (%s): runtime events in '%s' (%.1f MB%s)\n", p->t.comm,
				p->t.proc + 6, to, (double)file_size(to) / 1e6,
				p->stream_errno ? ", the stream was cut" : "");
	}
	return 0;
}

/* ---- the command ---- */

/* seconds a symbol server gets to connect and the longest it may stall: the recording goes on
 * meanwhile, but a pack waits for it */
#define SYMSRV_TIMEOUT 5.0

/* the symbol servers (--symbol-server, else PERFCONV_SYMBOL_SERVERS) and their cache, as
 * perfconv's conversions keep it; none with --offline */
static void debug_settings(struct rec *r)
{
	struct pfc_cli_env env;
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	memset(&r->debug, 0, sizeof(r->debug));
	r->debug.quiet = r->o.quiet;
	r->debug.timeout = SYMSRV_TIMEOUT;
	if (r->o.offline)
		return;
	pfc_cli_env_read(&env);
	r->debug.urls = *r->o.symsrv ? r->o.symsrv : env.symbol_servers;
	if (xdg && xdg[0] == '/')
		snprintf(r->symcache, sizeof(r->symcache), "%s/perfconv-symbols", xdg);
	else if (home && *home)
		snprintf(r->symcache, sizeof(r->symcache), "%s/.cache/perfconv-symbols", home);
	r->debug.cache = r->symcache[0] ? r->symcache : NULL;
	if (!r->debug.cache)
		r->debug.urls = NULL;
}

/* wait up to ms for the runtimes that connect to the port (a suspended one waits for us) */
static void serve(struct rec *r, int ms)
{
	pfc_rec_port_serve(&r->port, r->dn, &r->ndn, MAX_DOTNET, &r->o, r->work, ms);
}

/* perf 6.1 attached to a busy .NET service (-p) may exit with status 255 and no error said
 * (at most a warning that it could not open a thread's events) while it starts, when a
 * thread of the target (a thread-pool worker retiring) ends in the meantime: it had recorded
 * nothing yet, so it is started again, twice at most.  One that says an error is not.  1 when
 * it was started again. */
#define PERF_RESTARTS 2
static int restart_perf(struct rec *r)
{
	char said[4096];

	if (r->ready || r->o.cmd || r->perf_status != 255 || r->restarts >= PERF_RESTARTS || stop_signals)
		return 0;
	if (pfc_diagsock_read_small(r->log, said, sizeof(said)) > 0 && strstr(said, "rror"))
		return 0;
	r->restarts++;
	if (r->o.verbose)
		fprintf(stderr, "perfconv: record: perf exited with status 255 while it started; starting it again\n");
	pfc_rec_count_close(&r->count);
	memset(&r->count, 0, sizeof(r->count));
	r->header_seen = 0;
	r->perf_exited = r->perf_signaled = r->perf_status = 0;
	unlink(r->data);
	r->t0 = pfc_diagsock_now();
	return start_perf(r) == 0;
}

static int wait_loop(struct rec *r)
{
	double next = 0, next_debug = 0;
	int attached = 0;

	for (;;) {
		double t = pfc_diagsock_now();

		if (stop_signals)
			return 0;
		if (perf_ended(r) && !restart_perf(r))
			return 1;
		if (!perf_ready(r)) {
			if (t - r->t0 > PERF_START_TIMEOUT) {
				fprintf(stderr, "perfconv: record: perf wrote nothing in %g s; stopping\n", PERF_START_TIMEOUT);
				return 0;
			}
			serve(r, 20);
			continue;
		}
		if (r->o.duration > 0 && t - r->t0 >= r->o.duration)
			return 0;
		/* the runtime's debug files, while perf records: a second in, when a command's
		 * runtime has connected and loaded its JIT */
		if (r->ndn && t - r->t0 >= 1.0 && t >= next_debug) {
			pfc_rec_debug_start(&r->debug, r->dn, r->ndn);
			next_debug = t + 1.0;	/* a runtime that maps no library yet: look again later */
		}
		/* -- COMMAND without the port: the runtime's socket appears early in its start-up;
		 * attach then */
		if (r->o.cmd && r->port.fd < 0 && !attached && r->o.keywords && t - r->t0 < 10) {
			if (!r->child)
				r->child = perf_child(r->perf);
			if (r->child && is_dotnet_pid(r->child)) {
				struct pfc_rec_proc *p = &r->dn[r->ndn];
				memset(p, 0, sizeof(*p));
				p->t.pid = r->child;
				if (pfc_rec_dotnet_probe(p) == 0 && p->sock[0]) {
					r->ndn++;
					pfc_rec_dotnet_start(p, &r->o, r->work);
					attached = 1;
				}
			}
		}
		if (t >= next) {
			progress(r, 0);
			next = t + 0.5;
		}
		serve(r, 50);
	}
}

int pfc_cli_record(int argc, char **argv)
{
	static struct rec r;
	char tmp[PATH_MAX], *base;
	int ret, i, ended;

	memset(&r, 0, sizeof(r));
	ret = parse_args(&r.o, argc, argv);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (r.o.output)
		snprintf(r.out, sizeof(r.out), "%s", r.o.output);
	else
		default_output(&r.o, r.out, sizeof(r.out));
	snprintf(tmp, sizeof(tmp), "%s", r.out);
	snprintf(r.outdir, sizeof(r.outdir), "%s", dirname(tmp));
	snprintf(tmp, sizeof(tmp), "%s", r.out);
	base = basename(tmp);
	events_dir(r.out, r.events, sizeof(r.events));

	if (pfc_rec_preflight(&r.o, r.outdir, &r.pre) < 0)
		return EXIT_FAILED;
	if ((size_t)snprintf(r.work, sizeof(r.work), "%s/.%s.record-XXXXXX", r.outdir, base) >= sizeof(r.work))
		return usage_error("-o '%s': the name is too long", r.out);
	if (!mkdtemp(r.work)) {
		fprintf(stderr, "perfconv: record: cannot create a directory in '%s': %s; give -o in a directory you can "
			"write\n", r.outdir, strerror(errno));
		return EXIT_FAILED;
	}
	snprintf(r.data, sizeof(r.data), "%s/perf.data", r.work);
	snprintf(r.log, sizeof(r.log), "%s/perf.log", r.work);
	r.port.fd = -1;
	debug_settings(&r);
	if (r.o.cmd && pfc_rec_port_open(&r.port, r.work) < 0) {
		rm_work(&r);
		return EXIT_FAILED;
	}
	catch_signals();

	/* the .NET processes first: their perf maps replay every method compiled so far, and
	 * their sessions are open before the first sample */
	if (!r.o.cmd) {
		find_dotnet(&r);
		for (i = 0; i < r.ndn && !stop_signals; i++)
			pfc_rec_dotnet_start(&r.dn[i], &r.o, r.work);
		if (r.o.all && r.o.keywords && !r.ndn && !r.o.quiet)
			fprintf(stderr, "perfconv: record: no .NET process runs here: no runtime events\n");
	}
	r.t0 = pfc_diagsock_now();
	if (stop_signals || start_perf(&r) < 0) {
		stop_all(&r, 1);
		rm_work(&r);
		return stop_signals ? EXIT_ABANDONED : EXIT_FAILED;
	}
	if (!r.o.quiet)
		fprintf(stderr, "perfconv: record: recording %s%s; Ctrl-C to stop%s\n",
			r.o.cmd ? "the command" : r.o.npids ? "the processes given" : "the whole machine",
			r.ndn ? " and the .NET runtime's events" : "",
			r.o.duration > 0 ? " early" : "");

	ended = wait_loop(&r);
	if (r.progress_shown)
		progress(&r, 1);
	/* a second signal from here on abandons */
	if (!ended && stop_signals && !r.o.quiet)
		fprintf(stderr, "perfconv: record: stopping (Ctrl-C again to abandon the recording)\n");
	stop_all(&r, 0);
	if (stop_signals > 1) {
		/* abandoned: kill what is left, remove what is half-written */
		stop_all(&r, 1);
		rm_work(&r);
		if (!r.o.quiet)
			fprintf(stderr, "perfconv: record: abandoned; nothing written\n");
		return EXIT_ABANDONED;
	}
	if (!perf_wrote(&r)) {
		fprintf(stderr, "perfconv: record: perf record failed (exit status %d)%s%s\n", r.perf_status,
			r.ready ? "" : " before it began to write (did the target end first?)",
			file_size(r.log) ? "; it said:" : "");
		print_perf_log(&r);
		rm_work(&r);
		return EXIT_FAILED;
	}
	if (ended && !r.o.quiet)
		fprintf(stderr, "perfconv: record: %s ended; packing what was recorded\n",
			r.o.cmd ? "the command" : "perf (the target processes)");
	if (r.o.verbose)
		print_perf_log(&r);
	pfc_rec_debug_finish(&r.debug);
	ret = add_build_ids(&r);
	if (ret == 0) {
		double t = pfc_diagsock_now();
		ret = pack(&r);
		if (r.o.verbose)
			fprintf(stderr, "perfconv: record: packed in %.2f s\n", pfc_diagsock_now() - t);
	}
	if (ret < 0 && stop_signals < 2) {
		/* the recording is not lost with the pack: it can be packed again, or converted */
		char keep[PATH_MAX + 16];
		size_t n = strlen(r.events) - 7;	/* NAME.events -> NAME.data */
		snprintf(keep, sizeof(keep), "%.*s.data", (int)n, r.events);
		if (rename(r.data, keep) == 0)
			fprintf(stderr, "perfconv: record: the recording is kept in '%s': pack it with perfconv -i '%s' -o "
				"'%s'\n", keep, keep, r.out);
	}
	if (keep_events(&r) < 0)
		ret = -1;
	rm_work(&r);
	if (stop_signals > 1) {
		unlink(r.out);
		return EXIT_ABANDONED;
	}
	return ret < 0 ? EXIT_FAILED : EXIT_OK;
}
