/*
 * record_dotnet.c - perfconv record's conversation with each .NET runtime in the recording:
 * its perf map switched on for the recording (and off again only if it was off before), and
 * an EventPipe session (CollectTracing2) whose nettrace stream a thread writes to a file until
 * StopTracing and the rundown end it.  The socket is found as --enable-perfmap finds it
 * (perfmapctl.h); the bytes are converter/jit/diagipc.c's.  It does not start or stop perf.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/record.h"

/* seconds a runtime gets to answer one request */
#define REPLY_TIMEOUT 5.0
/* the session's buffer in the runtime, in MB (dotnet-trace's default) */
#define BUFFER_MB 256u

/* "process 123 (dotnet)", with the pid it sees when that differs */
static const char *who(const struct pfc_rec_proc *p)
{
	static __thread char s[160];
	if (p->t.nspid && p->t.nspid != p->t.pid)
		snprintf(s, sizeof(s), "process %ld (%s, pid %ld in its namespace)", p->t.pid, p->t.comm, p->t.nspid);
	else
		snprintf(s, sizeof(s), "process %ld (%s)", p->t.pid, p->t.comm);
	return s;
}

/* The perf map was on before us when the runtime holds its perf-PID.map or jit-PID.dump open:
 * it keeps them open exactly while writing them, whether DOTNET_PerfMapEnabled started it
 * or an earlier EnablePerfMap did, and closes them on DisablePerfMap.  When /proc/PID/fd
 * cannot be read, DOTNET_PerfMapEnabled (or COMPlus_) in its environment decides.  A file
 * merely present is no sign: the runtime leaves it behind when it stops writing. */
static int perfmap_on(const struct pfc_rec_proc *p, const char *env, ssize_t envlen)
{
	char dir[96], link[PATH_MAX], path[PATH_MAX + 96], map[64], dump[64], v[16];
	struct dirent *de;
	DIR *d;
	int on = 0;

	snprintf(dir, sizeof(dir), "%s/fd", p->t.proc);
	snprintf(map, sizeof(map), "/perf-%ld.map", p->t.nspid);
	snprintf(dump, sizeof(dump), "/jit-%ld.dump", p->t.nspid);
	if ((d = opendir(dir))) {
		while (!on && (de = readdir(d))) {
			ssize_t n;
			size_t k;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if ((n = readlink(path, link, sizeof(link) - 1)) <= 0)
				continue;
			link[n] = 0;
			k = (size_t)n;
			on = (k > strlen(map) && !strcmp(link + k - strlen(map), map)) ||
			     (k > strlen(dump) && !strcmp(link + k - strlen(dump), dump));
		}
		closedir(d);
		return on;
	}
	if (envlen < 0)
		return 0;
	if ((pfc_diagipc_environ_get(env, (size_t)envlen, "DOTNET_PerfMapEnabled", v, sizeof(v)) ||
	     pfc_diagipc_environ_get(env, (size_t)envlen, "COMPlus_PerfMapEnabled", v, sizeof(v))) && strcmp(v, "0"))
		return 1;
	return 0;
}

int pfc_rec_dotnet_probe(struct pfc_rec_proc *p)
{
	static char env[1 << 17];
	struct pfc_diag_found f;
	char failed[128], dirs[3 * PATH_MAX];
	ssize_t envlen;

	p->fd = p->out_fd = p->idle_fd = -1;
	p->t.opt = "record";
	snprintf(p->t.proc, sizeof(p->t.proc), "/proc/%ld", p->t.pid);
	if (pfc_diagsock_target(&p->t, failed, sizeof(failed)) < 0) {
		fprintf(stderr, "perfconv: record: %s: cannot read %s: %s\n", who(p), failed, strerror(errno));
		return -1;
	}
	envlen = pfc_diagsock_find(&p->t, env, sizeof(env), &f, dirs, sizeof(dirs));
	snprintf(p->sock, sizeof(p->sock), "%s", f.path);
	p->perfmap_was_on = perfmap_on(p, env, envlen);
	p->major = pfc_rec_dotnet_version(p->t.pid);
	return 0;
}

/* one request, one reply, on conn (a connection the runtime made to perfconv's port, after
 * its advertise message; taken over and closed here) or, when conn is -1, on a new connection
 * to the runtime's socket.  The connection is returned open (for a session's stream) when keep
 * is set.  0 with rep, or -1 (warned, with what for). */
static int call(struct pfc_rec_proc *p, int conn, const uint8_t *req, size_t len, int session, int keep,
		struct pfc_diagipc_reply *rep, const char *what, int quiet)
{
	uint8_t in[PFC_DIAGIPC_REPLY_MAX];
	struct pfc_error e;
	double deadline = pfc_diagsock_now() + REPLY_TIMEOUT;
	size_t got = 0;
	int fd = conn, err = 0, ret;

	if (fd < 0)
		fd = pfc_diagsock_connect(p->sock, deadline, &err);
	if (fd < 0) {
		if (!quiet)
			fprintf(stderr, "perfconv: record: warning: %s: cannot connect to '%s' for %s: %s\n", who(p), p->sock,
				what, strerror(err));
		return -1;
	}
	if (pfc_diagsock_send(fd, req, len, deadline, &err) < 0) {
		if (!quiet)
			fprintf(stderr, "perfconv: record: warning: %s: cannot send %s: %s\n", who(p), what, strerror(err));
		close(fd);
		return -1;
	}
	ret = pfc_diagsock_recv_reply(fd, deadline, session, in, sizeof(in), &got, rep, &e);
	if (ret != 0) {
		if (!quiet) {
			if (ret > 0)
				fprintf(stderr, "perfconv: record: warning: %s: malformed reply to %s at offset %llu: %s\n",
					who(p), what, (unsigned long long)e.offset, e.detail);
			else
				fprintf(stderr, "perfconv: record: warning: %s: no reply to %s: %s\n", who(p), what,
					ret == -ECONNRESET ? "the runtime closed the connection" : strerror(-ret));
		}
		close(fd);
		return -1;
	}
	if (keep && rep->ok)
		p->fd = fd;
	else
		close(fd);
	return 0;
}

static void perfmap_switch_on(struct pfc_rec_proc *p, int quiet)
{
	uint8_t req[PFC_DIAGIPC_REQUEST_MAX];
	struct pfc_diagipc_reply rep;
	size_t len = pfc_diagipc_encode_perfmap(req, 1, PFC_PERFMAP_TYPE_ALL);
	const char *name;

	if (call(p, -1, req, len, 0, 0, &rep, "EnablePerfMap", quiet) < 0)
		return;
	if (rep.ok && rep.hresult == 0) {
		p->perfmap_enabled = 1;
		if (!quiet)
			fprintf(stderr, "perfconv: record: %s: perf map and jitdump switched on for the recording\n", who(p));
		return;
	}
	if (quiet)
		return;
	if (rep.hresult == PFC_DIAGIPC_E_UNKNOWN_COMMAND) {
		fprintf(stderr, "perfconv: record: warning: %s: the runtime has no EnablePerfMap (it is older than .NET 8): "
			"its JIT-compiled methods stay unnamed; start it with DOTNET_PerfMapEnabled=1 to name them\n", who(p));
		return;
	}
	name = pfc_diagipc_hresult_name(rep.hresult);
	fprintf(stderr, "perfconv: record: warning: %s: EnablePerfMap answered HRESULT 0x%08x%s%s: its JIT-compiled "
		"methods may stay unnamed\n", who(p), rep.hresult, name ? " " : "", name ? name : "");
}

/* The stream thread: the session's bytes, as they come, into the file.  It ends at the end
 * of the stream (after StopTracing and the rundown, or when the process exits) or when the
 * main thread shuts the connection down. */
static void *stream_main(void *arg)
{
	struct pfc_rec_proc *p = arg;
	uint8_t buf[1 << 16];

	for (;;) {
		ssize_t n = recv(p->fd, buf, sizeof(buf), 0), off = 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			struct pollfd pf = { .fd = p->fd, .events = POLLIN };
			poll(&pf, 1, 1000);
			continue;
		}
		if (n <= 0) {
			if (n < 0)
				__atomic_store_n(&p->stream_errno, errno, __ATOMIC_RELAXED);
			break;
		}
		while (off < n) {
			ssize_t w = write(p->out_fd, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				__atomic_store_n(&p->stream_errno, w < 0 ? errno : EIO, __ATOMIC_RELAXED);
				goto out;
			}
			off += w;
			__atomic_add_fetch(&p->bytes, (uint64_t)w, __ATOMIC_RELAXED);
		}
	}
out:
	__atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void session_start(struct pfc_rec_proc *p, int conn, const struct pfc_rec_opts *o, const char *dir)
{
	static uint8_t req[4096];
	struct pfc_diagipc_provider prov = { o->keywords, o->level, PFC_DIAGIPC_RUNTIME_PROVIDER, NULL };
	struct pfc_diagipc_reply rep;
	sigset_t all, old;
	size_t len;
	int r;

	len = pfc_diagipc_encode_collect(req, sizeof(req), BUFFER_MB, 1, &prov, 1);
	if (!len) {
		if (conn >= 0)
			close(conn);
		return;
	}
	if (call(p, conn, req, len, 1, 1, &rep, "CollectTracing2", o->quiet) < 0)
		return;
	if (!rep.ok) {
		const char *name = pfc_diagipc_hresult_name(rep.hresult);
		if (!o->quiet)
			fprintf(stderr, "perfconv: record: warning: %s: the runtime refused the EventPipe session (HRESULT "
				"0x%08x%s%s): no runtime events from it\n", who(p), rep.hresult, name ? " " : "",
				name ? name : "");
		return;
	}
	p->session = rep.session;
	p->have_session = 1;
	snprintf(p->path, sizeof(p->path), "%s/%ld.nettrace", dir, p->t.pid);
	p->out_fd = open(p->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (p->out_fd < 0) {
		if (!o->quiet)
			fprintf(stderr, "perfconv: record: warning: cannot create '%s': %s: no runtime events from %s\n",
				p->path, strerror(errno), who(p));
		pfc_rec_dotnet_stop(p, 0, 1, NULL, 1);
		return;
	}
	/* the thread takes no signal: Ctrl-C is the main thread's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&p->thread, NULL, stream_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		if (!o->quiet)
			fprintf(stderr, "perfconv: record: warning: cannot start a thread: %s: no runtime events from %s\n",
				strerror(r), who(p));
		pfc_rec_dotnet_stop(p, 0, 1, NULL, 1);
		return;
	}
	p->thread_started = 1;
	if (o->verbose)
		fprintf(stderr, "perfconv: record: %s: EventPipe session %llu (keywords 0x%llx, level %u) into '%s'\n",
			who(p), (unsigned long long)p->session, (unsigned long long)o->keywords, o->level, p->path);
}

void pfc_rec_dotnet_start(struct pfc_rec_proc *p, const struct pfc_rec_opts *o, const char *dir)
{
	if (!p->sock[0]) {
		if (!o->quiet)
			fprintf(stderr, "perfconv: record: warning: %s maps the .NET runtime but has no diagnostics socket "
				"(started with DOTNET_EnableDiagnostics=0?): %s\n", who(p),
				p->perfmap_was_on ? "no runtime events from it" :
				"its JIT-compiled methods stay unnamed and no runtime events come from it; restart it "
				"with DOTNET_PerfMapEnabled=1");
		return;
	}
	if (p->perfmap_was_on) {
		if (o->verbose)
			fprintf(stderr, "perfconv: record: %s: its perf map is on already; it stays on\n", who(p));
	} else if (p->major > 0 && p->major < 8) {
		if (!o->quiet)
			fprintf(stderr, "perfconv: record: warning: %s runs .NET %d, which has no EnablePerfMap (.NET 8+): its "
				"JIT-compiled methods stay unnamed; restart it with DOTNET_PerfMapEnabled=1 to name them\n",
				who(p), p->major);
	} else {
		perfmap_switch_on(p, o->quiet);
	}
	if (o->keywords)
		session_start(p, -1, o, dir);
}

void pfc_rec_dotnet_start_on(struct pfc_rec_proc *p, int conn, const struct pfc_rec_opts *o, const char *dir)
{
	session_start(p, conn, o, dir);
}

int pfc_rec_dotnet_resume(struct pfc_rec_proc *p, int conn, int quiet)
{
	uint8_t req[PFC_DIAGIPC_HEADER_LEN];
	struct pfc_diagipc_reply rep;
	size_t len = pfc_diagipc_encode_resume(req);
	const char *name;

	if (call(p, conn, req, len, 0, 0, &rep, "ResumeRuntime", quiet) < 0)
		return -1;
	if (rep.ok && rep.hresult == 0)
		return 0;
	name = pfc_diagipc_hresult_name(rep.hresult);
	if (!quiet)
		fprintf(stderr, "perfconv: record: warning: %s: ResumeRuntime answered HRESULT 0x%08x%s%s\n", who(p),
			rep.hresult, name ? " " : "", name ? name : "");
	return -1;
}

/* wait for the stream thread to end, up to the deadline; 1 when it has */
static int wait_done(struct pfc_rec_proc *p, double deadline, const volatile sig_atomic_t *signals)
{
	while (!__atomic_load_n(&p->done, __ATOMIC_ACQUIRE)) {
		if (pfc_diagsock_ms_left(deadline) <= 0 || (signals && *signals > 1))
			return 0;
		poll(NULL, 0, 20);
	}
	return 1;
}

/* A stream that already ended (the process exited) needs no StopTracing; else the runtime
 * stops the session, sends the rundown and closes the stream.  Abandoning, the stop is still
 * sent, so that the runtime does not keep a session no one reads. */
static void stop_send(struct pfc_rec_proc *p, int abandon, int quiet)
{
	uint8_t req[PFC_DIAGIPC_STOP_LEN];
	struct pfc_diagipc_reply rep;
	size_t len;
	int conn;

	if (!p->have_session || p->stop_sent)
		return;
	p->stop_sent = 1;
	if (p->thread_started && __atomic_load_n(&p->done, __ATOMIC_ACQUIRE))
		return;
	len = pfc_diagipc_encode_stop(req, p->session);
	/* a runtime that connects to perfconv's port keeps a connection there, waiting for a
	 * command: StopTracing goes on it, else on the runtime's own socket */
	conn = p->idle_fd;
	p->idle_fd = -1;
	if (call(p, conn, req, len, 1, 0, &rep, "StopTracing", quiet || abandon) == 0 && !rep.ok && !quiet && !abandon)
		fprintf(stderr, "perfconv: record: warning: %s: StopTracing answered HRESULT 0x%08x\n", who(p),
			rep.hresult);
}

void pfc_rec_dotnet_stop_send(struct pfc_rec_proc *p, int quiet)
{
	stop_send(p, 0, quiet);
}

void pfc_rec_dotnet_stop(struct pfc_rec_proc *p, double timeout, int abandon, const volatile sig_atomic_t *signals,
			 int quiet)
{
	if (!p->have_session)
		return;
	stop_send(p, abandon, quiet);
	p->have_session = 0;
	if (p->thread_started) {
		if (!wait_done(p, pfc_diagsock_now() + (abandon ? 0.5 : timeout), signals)) {
			if (!quiet && !abandon && !(signals && *signals > 1))
				fprintf(stderr, "perfconv: record: warning: %s: the event stream did not end within %g s of "
					"StopTracing; '%s' may lack the rundown\n", who(p), timeout, p->path);
			shutdown(p->fd, SHUT_RDWR);
		}
		pthread_join(p->thread, NULL);
		p->thread_started = 0;
	}
	if (p->fd >= 0)
		close(p->fd);
	if (p->out_fd >= 0)
		close(p->out_fd);
	p->fd = p->out_fd = -1;
}

/* the process has ended, or is ending: gone, a zombie, or its socket gone with its exit */
static int ended(const struct pfc_rec_proc *p)
{
	char path[96], buf[512], *c;
	struct stat st;

	snprintf(path, sizeof(path), "%s/stat", p->t.proc);
	if (pfc_diagsock_read_small(path, buf, sizeof(buf)) <= 0 || !(c = strrchr(buf, ')')))
		return 1;
	if (c[1] == ' ' && (c[2] == 'Z' || c[2] == 'X'))
		return 1;
	return lstat(p->sock, &st) < 0 && errno == ENOENT;
}

void pfc_rec_dotnet_restore(struct pfc_rec_proc *p, int quiet)
{
	uint8_t req[PFC_DIAGIPC_REQUEST_MAX];
	struct pfc_diagipc_reply rep;
	size_t len;

	if (!p->perfmap_enabled)
		return;
	p->perfmap_enabled = 0;
	if (ended(p))
		return;         /* nothing to switch off */
	len = pfc_diagipc_encode_perfmap(req, 0, PFC_PERFMAP_TYPE_ALL);
	if (call(p, -1, req, len, 0, 0, &rep, "DisablePerfMap", 1) < 0 || !rep.ok || rep.hresult) {
		if (!quiet && !ended(p))
			fprintf(stderr, "perfconv: record: warning: %s: could not switch its perf map off again; "
				"run 'perfconv --disable-perfmap %ld'\n", who(p), p->t.pid);
		return;
	}
	if (!quiet)
		fprintf(stderr, "perfconv: record: %s: perf map and jitdump switched off again, as before\n", who(p));
}
