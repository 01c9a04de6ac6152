/*
 * perfmapctl.c - perfconv --enable-perfmap PID[:TYPE] and --disable-perfmap PID: ask a running
 * .NET 8+ process, through its diagnostics socket, to start or stop writing its perf map
 * and jitdump, so that a service can be profiled without a restart.  This file finds the
 * socket (in the process's own mount namespace and with its own pid when it runs in a
 * container), connects, sends one request, waits for one reply with a deadline, and says
 * what happened.  The finding of the socket and the I/O with a deadline are shared with
 * perfconv record (perfmapctl.h); the bytes of the request and the decoding of the reply
 * are converter/jit/diagipc.c's; nothing else is ever sent from here.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/perfmapctl.h"
#include "converter/jit/diagipc.h"

ssize_t pfc_diagsock_read_small(const char *path, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	return (ssize_t)n;
}

double pfc_diagsock_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int pfc_diagsock_ms_left(double deadline)
{
	double l = deadline - pfc_diagsock_now();
	return l <= 0 ? 0 : (int)(l * 1000) + 1;
}

static const char *type_words(enum pfc_perfmap_type t)
{
	switch (t) {
	case PFC_PERFMAP_TYPE_JITDUMP: return "jitdump";
	case PFC_PERFMAP_TYPE_PERFMAP: return "perf map";
	default: return "perf map and jitdump";
	}
}

/* "process 123 (dotnet)", with the pid it sees when that differs */
static const char *who(const struct pfc_diag_target *t)
{
	static char s[160];
	if (t->nspid && t->nspid != t->pid)
		snprintf(s, sizeof(s), "process %ld (%s, pid %ld in its namespace)", t->pid, t->comm, t->nspid);
	else
		snprintf(s, sizeof(s), "process %ld (%s)", t->pid, t->comm);
	return s;
}

/* Look in DIR for the runtime's socket of t; the best so far stays in f.  The key of the
 * name is the process's start time, so a socket left behind by an earlier process with the
 * same pid (pid 1 in every container) loses to the live one; else the newest wins. */
static void scan_dir(const struct pfc_diag_target *t, const char *dir, struct pfc_diag_found *f)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d) {
		if ((errno == EACCES || errno == EPERM) && !f->eacces) {
			f->eacces = 1;
			snprintf(f->denied, sizeof(f->denied), "%s", dir);
		}
		return;
	}
	while ((de = readdir(d))) {
		uint64_t key;
		struct stat st;
		char path[PATH_MAX];
		int match;

		if (!pfc_diagipc_socket_name(de->d_name, t->nspid, &key))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path) ||
		    lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
			continue;
		if (!strcmp(path, f->path))
			continue;
		f->n++;
		match = t->starttime && key == t->starttime;
		if (f->path[0] && (f->key_matches > match ||
				   (f->key_matches == match &&
				    (st.st_mtim.tv_sec < f->mtime.tv_sec ||
				     (st.st_mtim.tv_sec == f->mtime.tv_sec && st.st_mtim.tv_nsec <= f->mtime.tv_nsec)))))
			continue;
		snprintf(f->path, sizeof(f->path), "%s", path);
		f->key = key;
		f->mtime = st.st_mtim;
		f->key_matches = match;
	}
	closedir(d);
}

/* same mount namespace as perfconv: its /tmp is ours */
static int same_mntns(const struct pfc_diag_target *t)
{
	struct stat a, b;
	char p[96];

	snprintf(p, sizeof(p), "%s/ns/mnt", t->proc);
	return stat("/proc/self/ns/mnt", &a) == 0 && stat(p, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

int pfc_diagsock_maps_coreclr(const struct pfc_diag_target *t)
{
	char p[96], line[4096];
	FILE *fp;
	int found = 0;

	snprintf(p, sizeof(p), "%s/maps", t->proc);
	if (!(fp = fopen(p, "re")))
		return -1;
	while (!found && fgets(line, sizeof(line), fp))
		found = strstr(line, "/libcoreclr.so") != NULL;
	fclose(fp);
	return found;
}

/* No socket: say why as well as one can tell from /proc. */
static int no_socket(const struct pfc_diag_target *t, const struct pfc_diag_found *f, const char *env, ssize_t envlen,
		     const char *dirs)
{
	char v[64];
	const char *knob = NULL;
	int clr;

	if (f->eacces) {
		fprintf(stderr, "perfconv: %s: %s: cannot read '%s': permission denied; run perfconv as the process's "
			"user or as root\n", t->opt, who(t), f->denied);
		return EXIT_FAILED;
	}
	if (envlen >= 0) {
		static const char *const knobs[] = { "DOTNET_EnableDiagnostics", "COMPlus_EnableDiagnostics",
						     "DOTNET_EnableDiagnostics_IPC", "COMPlus_EnableDiagnostics_IPC" };
		size_t i;
		for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]) && !knob; i++)
			if (pfc_diagipc_environ_get(env, (size_t)envlen, knobs[i], v, sizeof(v)) && !strcmp(v, "0"))
				knob = knobs[i];
	}
	if (knob) {
		fprintf(stderr, "perfconv: %s: %s runs with %s=0 in its environment: its diagnostics socket is turned "
			"off, so its perf map cannot be enabled at run time; restart it without %s=0, or with "
			"DOTNET_PerfMapEnabled=1\n", t->opt, who(t), knob, knob);
		return EXIT_FAILED;
	}
	clr = pfc_diagsock_maps_coreclr(t);
	if (clr == 1) {
		fprintf(stderr, "perfconv: %s: %s runs the .NET runtime but has no diagnostics socket "
			"dotnet-diagnostic-%ld-*-socket in %s%s; restart it with DOTNET_PerfMapEnabled=1\n",
			t->opt, who(t), t->nspid, dirs,
			envlen < 0 ? " (its environment is not readable: diagnostics may be turned off with "
				     "DOTNET_EnableDiagnostics=0)" : "");
		return EXIT_FAILED;
	}
	fprintf(stderr, "perfconv: %s: %s is not a .NET process: no diagnostics socket dotnet-diagnostic-%ld-*-socket "
		"in %s; give the pid of a .NET 8 or newer process%s\n", t->opt, who(t), t->nspid, dirs,
		envlen < 0 ? " (its environment is not readable: it may also run with DOTNET_EnableDiagnostics=0)" : "");
	return EXIT_FAILED;
}

int pfc_diagsock_connect(const char *path, double deadline, int *err)
{
	struct sockaddr_un sa;
	char alias[64];
	int fd, pfd = -1;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		/* a long path (a deep TMPDIR under /proc/PID/root): connect through our descriptor of it */
		pfd = open(path, O_PATH | O_CLOEXEC);
		if (pfd < 0) {
			*err = errno;
			return -1;
		}
		snprintf(alias, sizeof(alias), "/proc/self/fd/%d", pfd);
		path = alias;
	}
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*err = errno;
		goto out;
	}
	/* a listener whose backlog is full makes a non-blocking AF_UNIX connect fail with
	 * EAGAIN: try again until the deadline */
	while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN && pfc_diagsock_ms_left(deadline) > 0) {
			poll(NULL, 0, 20);
			continue;
		}
		*err = errno == EAGAIN ? ETIMEDOUT : errno;
		close(fd);
		fd = -1;
		break;
	}
out:
	if (pfd >= 0)
		close(pfd);
	return fd;
}

int pfc_diagsock_send(int fd, const uint8_t *buf, size_t len, double deadline, int *err)
{
	size_t off = 0;

	while (off < len) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		ssize_t w;
		int r = poll(&p, 1, pfc_diagsock_ms_left(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			*err = r == 0 ? ETIMEDOUT : errno;
			return -1;
		}
		w = send(fd, buf + off, len - off, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			*err = errno;
			return -1;
		}
		off += (size_t)w;
	}
	return 0;
}

int pfc_diagsock_target(struct pfc_diag_target *t, char *failed, size_t cap)
{
	char buf[4096], path[96];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/comm", t->proc);
	if (pfc_diagsock_read_small(path, t->comm, sizeof(t->comm)) > 0)
		t->comm[strcspn(t->comm, "\n")] = 0;
	else
		snprintf(t->comm, sizeof(t->comm), "?");
	snprintf(failed, cap, "%s/status", t->proc);
	if ((n = pfc_diagsock_read_small(failed, buf, sizeof(buf))) < 0)
		return -1;
	t->nspid = pfc_diagipc_status_nstgid(buf, (size_t)n);
	if (!t->nspid)		/* a kernel before 4.1 has no NStgid: no pid namespaces to mind */
		t->nspid = t->pid;
	snprintf(path, sizeof(path), "%s/stat", t->proc);
	if ((n = pfc_diagsock_read_small(path, buf, sizeof(buf))) > 0)
		t->starttime = pfc_diagipc_stat_starttime(buf, (size_t)n);
	return 0;
}

ssize_t pfc_diagsock_find(const struct pfc_diag_target *t, char *env, size_t envcap, struct pfc_diag_found *f,
			  char *dirs, size_t dcap)
{
	char tmpdir[PATH_MAX], dir[PATH_MAX + 96];
	ssize_t envlen;

	/* The runtime makes its socket in its $TMPDIR, else /tmp, in its own mount namespace,
	 * named with the pid it sees: through /proc/PID/root that is the same from anywhere. */
	snprintf(dir, sizeof(dir), "%s/environ", t->proc);
	envlen = pfc_diagsock_read_small(dir, env, envcap);
	tmpdir[0] = 0;
	if (envlen >= 0 && pfc_diagipc_environ_get(env, (size_t)envlen, "TMPDIR", tmpdir, sizeof(tmpdir)) &&
	    (tmpdir[0] != '/' || strstr(tmpdir, "/../")))
		tmpdir[0] = 0;
	while (strlen(tmpdir) > 1 && tmpdir[strlen(tmpdir) - 1] == '/')
		tmpdir[strlen(tmpdir) - 1] = 0;
	memset(f, 0, sizeof(*f));
	dirs[0] = 0;
	if (tmpdir[0] && strcmp(tmpdir, "/tmp")) {
		snprintf(dir, sizeof(dir), "%s/root%s", t->proc, tmpdir);
		scan_dir(t, dir, f);
		snprintf(dirs, dcap, "%s and ", dir);
	}
	snprintf(dir, sizeof(dir), "%s/root/tmp", t->proc);
	scan_dir(t, dir, f);
	snprintf(dirs + strlen(dirs), dcap - strlen(dirs), "%s", dir);
	if (!f->path[0] && f->eacces && same_mntns(t)) {
		/* /proc/PID/root needs ptrace access; in our own mount namespace /tmp is the same place */
		f->eacces = 0;
		if (tmpdir[0])
			scan_dir(t, tmpdir, f);
		scan_dir(t, "/tmp", f);
	}
	return envlen;
}

int pfc_diagsock_recv_reply(int fd, double deadline, int session, uint8_t *in, size_t cap, size_t *got,
			    struct pfc_diagipc_reply *rep, struct pfc_error *e)
{
	int ret;

	*got = 0;
	memset(e, 0, sizeof(*e));
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		size_t need = 0;
		ssize_t n;
		int r;

		ret = session ? pfc_diagipc_decode_session_reply(in, *got, rep, &need, e) :
				pfc_diagipc_decode_reply(in, *got, rep, &need, e);
		if (ret == 0)
			return 0;
		if (ret != -PFC_ERR_TRUNCATED)
			return 1;
		if (need > cap || *got >= need) {
			/* cannot happen: a whole reply decodes; keep the loop finite */
			PFC_FAIL(e, CORRUPT, *got, "reply of %zu bytes does not decode", *got);
			return 1;
		}
		r = poll(&p, 1, pfc_diagsock_ms_left(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			return -ETIMEDOUT;
		/* no more than the reply: after a session's comes its stream */
		n = r < 0 ? -1 : recv(fd, in + *got, need - *got, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		*got += (size_t)n;
	}
}

static int parse_target(const char *opt, const char *arg, int enable, struct pfc_diag_target *t, enum pfc_perfmap_type *type)
{
	char *end;
	long pid;

	errno = 0;
	pid = strtol(arg, &end, 10);
	if (end == arg || errno || pid <= 0 || pid > 0x3fffffff || (*end && *end != ':'))
		goto bad;
	*type = PFC_PERFMAP_TYPE_ALL;
	if (*end == ':') {
		const char *w = end + 1;
		if (!enable)
			goto bad;
		if (!strcmp(w, "all"))
			*type = PFC_PERFMAP_TYPE_ALL;
		else if (!strcmp(w, "jitdump"))
			*type = PFC_PERFMAP_TYPE_JITDUMP;
		else if (!strcmp(w, "perfmap") || !strcmp(w, "map"))
			*type = PFC_PERFMAP_TYPE_PERFMAP;
		else
			goto bad;
	}
	memset(t, 0, sizeof(*t));
	t->opt = opt;
	t->pid = pid;
	snprintf(t->proc, sizeof(t->proc), "/proc/%ld", pid);
	return 0;
bad:
	fprintf(stderr, "perfconv: %s: '%s' is not %s\nTry 'perfconv --help' for more information.\n", opt, arg,
		enable ? "PID or PID:TYPE (TYPE: all, jitdump or perfmap)" : "a PID");
	return -1;
}

int pfc_cli_perfmap(const char *arg, int enable, double timeout, int quiet)
{
	static char env[1 << 17];
	const char *opt = enable ? "--enable-perfmap" : "--disable-perfmap";
	struct pfc_diag_target t;
	struct pfc_diag_found f;
	enum pfc_perfmap_type type;
	struct pfc_diagipc_reply rep;
	struct pfc_error e;
	struct stat st;
	char dir[PATH_MAX + 96], dirs[3 * PATH_MAX];
	uint8_t req[PFC_DIAGIPC_REQUEST_MAX], in[PFC_DIAGIPC_REPLY_MAX];
	size_t reqlen, got = 0;
	ssize_t envlen;
	double deadline;
	int fd, err = 0, ret;
	const char *name;

	if (parse_target(opt, arg, enable, &t, &type) < 0)
		return EXIT_USAGE;
	if (stat(t.proc, &st) < 0) {
		if (errno == ENOENT)
			fprintf(stderr, "perfconv: %s: no process %ld (%s does not exist); give the pid of a running "
				".NET process\n", opt, t.pid, t.proc);
		else
			fprintf(stderr, "perfconv: %s: process %ld: cannot read %s: %s\n", opt, t.pid, t.proc, strerror(errno));
		return EXIT_FAILED;
	}
	if (pfc_diagsock_target(&t, dir, sizeof(dir)) < 0) {
		fprintf(stderr, "perfconv: %s: %s: cannot read %s: %s\n", opt, who(&t), dir, strerror(errno));
		return EXIT_FAILED;
	}
	envlen = pfc_diagsock_find(&t, env, sizeof(env), &f, dirs, sizeof(dirs));
	if (!f.path[0])
		return no_socket(&t, &f, env, envlen, dirs);

	deadline = pfc_diagsock_now() + timeout;
	fd = pfc_diagsock_connect(f.path, deadline, &err);
	if (fd < 0) {
		if (err == EACCES || err == EPERM)
			fprintf(stderr, "perfconv: %s: %s: cannot connect to '%s': %s; run perfconv as the process's user "
				"or as root\n", opt, who(&t), f.path, strerror(err));
		else if (err == ECONNREFUSED)
			fprintf(stderr, "perfconv: %s: %s: nothing listens on '%s' (a socket left behind by an ended "
				"process?); is %ld a running .NET process?\n", opt, who(&t), f.path, t.pid);
		else if (err == ETIMEDOUT)
			fprintf(stderr, "perfconv: %s: %s: '%s' accepted no connection within %g s (the runtime may be "
				"busy or suspended); try again, or give a longer --timeout\n", opt, who(&t), f.path, timeout);
		else
			fprintf(stderr, "perfconv: %s: %s: cannot connect to '%s': %s\n", opt, who(&t), f.path, strerror(err));
		return EXIT_FAILED;
	}
	reqlen = pfc_diagipc_encode_perfmap(req, enable, type);
	if (pfc_diagsock_send(fd, req, reqlen, deadline, &err) < 0) {
		if (err == ETIMEDOUT)
			fprintf(stderr, "perfconv: %s: %s: the runtime did not take the request on '%s' within %g s; try "
				"again, or give a longer --timeout\n", opt, who(&t), f.path, timeout);
		else
			fprintf(stderr, "perfconv: %s: %s: cannot send the request to '%s': %s\n", opt, who(&t), f.path,
				strerror(err));
		close(fd);
		return EXIT_FAILED;
	}

	/* one reply, read until it is whole, the peer closes or the deadline passes */
	ret = pfc_diagsock_recv_reply(fd, deadline, 0, in, sizeof(in), &got, &rep, &e);
	if (ret == -ETIMEDOUT) {
		fprintf(stderr, "perfconv: %s: %s: no answer on '%s' within %g s%s; the runtime may be busy or "
			"suspended: try again, or give a longer --timeout\n", opt, who(&t), f.path, timeout,
			got ? " (a reply was cut short)" : "");
		close(fd);
		return EXIT_FAILED;
	}
	if (ret == -ECONNRESET) {
		fprintf(stderr, "perfconv: %s: %s: the runtime closed the connection on '%s' after %zu bytes, "
			"without a whole reply%s\n", opt, who(&t), f.path, got,
			got ? "" : "; a runtime older than .NET 5 has no such commands");
		close(fd);
		return EXIT_FAILED;
	}
	if (ret < 0) {
		fprintf(stderr, "perfconv: %s: %s: cannot read the reply on '%s': %s\n", opt, who(&t), f.path,
			strerror(-ret));
		close(fd);
		return EXIT_FAILED;
	}
	close(fd);
	if (ret > 0) {
		fprintf(stderr, "perfconv: %s: %s: malformed reply on '%s' at offset %llu: %s\n", opt, who(&t), f.path,
			(unsigned long long)e.offset, e.detail);
		return EXIT_FAILED;
	}
	name = pfc_diagipc_hresult_name(rep.hresult);
	if (rep.ok && rep.hresult == 0) {
		if (!quiet) {
			if (enable)
				fprintf(stderr, "perfconv: %s: the runtime turned on its %s (perf-%ld.map, jit-%ld.dump in "
					"its /tmp), with every method compiled so far\n", who(&t), type_words(type),
					t.nspid, t.nspid);
			else
				fprintf(stderr, "perfconv: %s: the runtime turned off its perf map and jitdump\n", who(&t));
		}
		return EXIT_OK;
	}
	if (rep.hresult == PFC_DIAGIPC_E_UNKNOWN_COMMAND) {
		fprintf(stderr, "perfconv: %s: %s: the runtime does not know %s (HRESULT 0x%08x UNKNOWN_COMMAND): "
			"this needs .NET 8 or newer; for an older runtime start the process with DOTNET_PerfMapEnabled=1\n",
			opt, who(&t), enable ? "EnablePerfMap" : "DisablePerfMap", rep.hresult);
		return EXIT_FAILED;
	}
	if (rep.hresult == PFC_DIAGIPC_E_NOTSUPPORTED) {
		fprintf(stderr, "perfconv: %s: %s: this runtime has no perf map support (HRESULT 0x%08x NOTSUPPORTED)\n",
			opt, who(&t), rep.hresult);
		return EXIT_FAILED;
	}
	fprintf(stderr, "perfconv: %s: %s: the runtime answered %s with HRESULT 0x%08x%s%s\n", opt, who(&t),
		rep.ok ? "OK" : "Error", rep.hresult, name ? " " : "", name ? name : "");
	return EXIT_FAILED;
}
