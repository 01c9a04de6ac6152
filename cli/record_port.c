/*
 * record_port.c - the diagnostic port of perfconv record -- COMMAND: a socket perfconv listens
 * on, given to the command as DOTNET_DiagnosticPorts=PATH,connect,suspend, so that its runtime
 * connects before running any managed code and waits there; perfconv opens the EventPipe
 * session on that first connection and resumes the runtime on the next, so that no event of
 * the start-up is lost.  The messages' bytes are converter/jit/diagipc.c's, the session and
 * the requests record_dotnet.c's; it does not start the command or perf.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "cli/record.h"

/* seconds a runtime that connected gets to send its advertise message (it sends it at once) */
#define ADVERTISE_TIMEOUT 2.0

int pfc_rec_port_open(struct pfc_rec_port *port, const char *dir)
{
	struct sockaddr_un sa;
	const char *prev = getenv("DOTNET_DiagnosticPorts");
	int fd;

	memset(port, 0, sizeof(*port));
	port->fd = -1;
	if ((size_t)snprintf(port->path, sizeof(port->path), "%s/diag.sock", dir) >= sizeof(port->path)) {
		/* a socket's name holds 107 bytes: a deep output directory takes one in $TMPDIR */
		const char *tmp = getenv("TMPDIR");
		snprintf(port->dir, sizeof(port->dir), "%s/perfconv-port-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
		if (!mkdtemp(port->dir) ||
		    (size_t)snprintf(port->path, sizeof(port->path), "%s/diag.sock", port->dir) >= sizeof(port->path)) {
			fprintf(stderr, "perfconv: record: cannot make a directory for the diagnostic port in '%s': %s\n",
				port->dir, errno ? strerror(errno) : "its name is too long");
			port->dir[0] = 0;
			return -1;
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, port->path, strlen(port->path) + 1);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
		fprintf(stderr, "perfconv: record: cannot listen on '%s' for the command's runtime: %s\n", port->path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	port->fd = fd;
	/* suspend: the runtime waits for ResumeRuntime before its first managed code; the
	 * user's own ports stay, each suspending one needs its own resume */
	snprintf(port->env, sizeof(port->env), "%s%s%s,connect,suspend", prev && *prev ? prev : "",
		 prev && *prev ? ";" : "", port->path);
	return 0;
}

/* the 34 bytes of the advertise message, read before the deadline: 0 with a, -1 (warned) */
static int read_advertise(int c, const char *path, struct pfc_diagipc_advertise *a, int quiet)
{
	uint8_t buf[PFC_DIAGIPC_ADVERTISE_LEN];
	struct pfc_error e;
	double deadline = pfc_diagsock_now() + ADVERTISE_TIMEOUT;
	size_t got = 0;
	int ret;

	memset(&e, 0, sizeof(e));
	for (;;) {
		struct pollfd pf = { .fd = c, .events = POLLIN };
		ssize_t n;
		ret = pfc_diagipc_decode_advertise(buf, got, a, &e);
		if (ret != -PFC_ERR_TRUNCATED)
			break;
		n = recv(c, buf + got, sizeof(buf) - got, 0);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			if (!quiet)
				fprintf(stderr, "perfconv: record: warning: '%s': a connection ended after %zu bytes of the %u of "
					"an advertise message\n", path, got, PFC_DIAGIPC_ADVERTISE_LEN);
			return -1;
		}
		if (pfc_diagsock_ms_left(deadline) <= 0) {
			if (!quiet)
				fprintf(stderr, "perfconv: record: warning: '%s': a connection sent %zu bytes of an advertise "
					"message in %g s\n", path, got, ADVERTISE_TIMEOUT);
			return -1;
		}
		poll(&pf, 1, pfc_diagsock_ms_left(deadline));
	}
	if (ret < 0) {
		if (!quiet)
			fprintf(stderr, "perfconv: record: warning: '%s': malformed advertise message at offset %llu: %s; "
				"the connection is closed\n", path, (unsigned long long)e.offset, e.detail);
		return -1;
	}
	return 0;
}

/* one connection of a runtime, after its advertise message */
static void answer(int c, const struct pfc_diagipc_advertise *a, struct pfc_rec_proc *dn, int *ndn, int max,
		   const struct pfc_rec_opts *o, const char *dir)
{
	struct pfc_rec_proc *p = NULL, spare;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	int i;

	for (i = 0; i < *ndn; i++)
		if (dn[i].from_port && !memcmp(dn[i].cookie, a->cookie, sizeof(a->cookie)))
			p = &dn[i];
	if (!p) {
		/* a new runtime: the command, or a process it started with the same environment */
		p = *ndn < max ? &dn[(*ndn)++] : &spare;
		memset(p, 0, sizeof(*p));
		/* the pid perf and /proc know: the peer's, in perfconv's pid namespace; the
		 * advertised one is the pid the runtime sees */
		p->t.pid = getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == 0 && cr.pid > 0 ? (long)cr.pid
											     : (long)a->pid;
		if (pfc_rec_dotnet_probe(p) < 0)
			snprintf(p->t.comm, sizeof(p->t.comm), "?");
		p->fd = p->out_fd = p->idle_fd = -1;
		p->from_port = 1;
		memcpy(p->cookie, a->cookie, sizeof(p->cookie));
		if (o->verbose)
			fprintf(stderr, "perfconv: record: process %ld (%s) connected to the diagnostic port, suspended\n",
				p->t.pid, p->t.comm);
		if (o->keywords && p != &spare) {
			pfc_rec_dotnet_start_on(p, c, o, dir);
			return;
		}
	}
	if (!p->resumed) {
		p->resumed = 1;
		if (pfc_rec_dotnet_resume(p, c, o->quiet) == 0 && o->verbose)
			fprintf(stderr, "perfconv: record: process %ld (%s) resumed\n", p->t.pid, p->t.comm);
		return;
	}
	/* each command takes a connection, and the runtime makes the next at once: the newest
	 * is kept for StopTracing, the older closed (the runtime reconnects after a close) */
	if (p->idle_fd >= 0)
		close(p->idle_fd);
	p->idle_fd = c;
}

void pfc_rec_port_serve(struct pfc_rec_port *port, struct pfc_rec_proc *dn, int *ndn, int max,
			const struct pfc_rec_opts *o, const char *dir, int ms)
{
	struct pollfd pf = { .fd = port->fd, .events = POLLIN };

	if (port->fd < 0) {
		if (ms > 0)
			poll(NULL, 0, ms);
		return;
	}
	if (poll(&pf, 1, ms) <= 0)
		return;
	for (;;) {
		struct pfc_diagipc_advertise a;
		int c = accept4(port->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c < 0)
			return;
		if (read_advertise(c, port->path, &a, o->quiet) < 0) {
			close(c);
			continue;
		}
		answer(c, &a, dn, ndn, max, o, dir);
	}
}

void pfc_rec_port_close(struct pfc_rec_port *port, struct pfc_rec_proc *dn, int ndn)
{
	int i;

	for (i = 0; i < ndn; i++)
		if (dn[i].from_port && dn[i].idle_fd >= 0) {
			close(dn[i].idle_fd);
			dn[i].idle_fd = -1;
		}
	if (port->fd < 0)
		return;
	close(port->fd);
	port->fd = -1;
	unlink(port->path);
	if (port->dir[0])
		rmdir(port->dir);
}
