/*
 * batch.c - batch mode (-O DIR): finds the recordings among the arguments, names each
 * output after its input, skips inputs whose outputs are newer, and converts the rest in
 * worker processes made with fork() (-j N of them, each converting one input after
 * another, every format from one read), so that an input that crashes the converter is
 * a failed file and the others go on.  The conversion itself is convert.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli/batch.h"
#include "converter/files/pack.h"
#include "cli/convert.h"

/* a worker's result is one write() to its pipe, read whole by one read() */
_Static_assert(sizeof(struct pfc_job_result) <= PIPE_BUF, "a job result must fit one atomic pipe write");

struct input {
	char *path;                  /* as found: ARG or ARG/sub/name */
	char *rel;                   /* names the outputs */
	dev_t dev;
	ino_t ino;
	char *outs[16];
	int todo[16];                /* this format's output is missing or older than the input */
	int ntodo;
	int failed_early;            /* could not be read at all: msg says why */
	char msg[512];
};

struct batch {
	struct cli *c;
	const struct pfc_writer *const *ws;
	size_t nws;
	struct input *v;
	size_t n, cap;
	dev_t out_dev;
	ino_t out_ino;
	int have_out;
	size_t stale;                /* temporary files of an interrupted run, removed */
};

static struct input *add_input(struct batch *b, const char *path, const char *rel)
{
	struct input *in;

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct input *nv = realloc(b->v, cap * sizeof(*nv));
		if (!nv)
			return NULL;
		b->v = nv;
		b->cap = cap;
	}
	in = &b->v[b->n];
	memset(in, 0, sizeof(*in));
	in->path = strdup(path);
	in->rel = strdup(rel);
	if (!in->path || !in->rel) {
		free(in->path);
		free(in->rel);
		return NULL;
	}
	b->n++;
	return in;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

/* perf.data, *.data, perf.data.*, *.perfpack, or any file that starts with a perf.data magic
 * (file or pipe mode, either byte order) or is a pack: a pipe capture can have any name. */
static int is_recording(const char *path, const char *name)
{
	struct stat st;
	char magic[8];
	int fd, ok = 0;

	if (!strcmp(name, "perf.data") || ends_with(name, ".data") || !strncmp(name, "perf.data.", 10) ||
	    ends_with(name, ".perfpack"))
		return 1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (read(fd, magic, 8) == 8)
		ok = !memcmp(magic, "PERFILE2", 8) || !memcmp(magic, "2ELIFREP", 8);
	if (!ok && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		ok = pfc_pack_detect(path) == 1;
	close(fd);
	return ok;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Walk dir in name order (the same inputs give the same order and the same lines). */
static int walk(struct batch *b, const char *dir, const char *rel, int depth)
{
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	int ret = 0;

	if (depth > 64)
		return 0;
	if (!(d = opendir(dir))) {
		struct input *in = add_input(b, dir, rel[0] ? rel : dir);
		if (!in)
			return -1;
		in->failed_early = 1;
		snprintf(in->msg, sizeof(in->msg), "'%s': cannot read the directory: %s", dir, strerror(errno));
		return 0;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == cap) {
			char **nv = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*nv));
			if (!nv) {
				ret = -1;
				break;
			}
			names = nv;
		}
		if (!(names[n] = strdup(e->d_name))) {
			ret = -1;
			break;
		}
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n && ret == 0; i++) {
		char path[PATH_MAX], sub[PATH_MAX];
		struct stat st;

		/* "in/" as typed gives in/x.data, not in//x.data */
		size_t dl = strlen(dir);
		int slash = dl && dir[dl - 1] == '/';

		if (snprintf(path, sizeof(path), "%s%s%s", dir, slash ? "" : "/", names[i]) >= (int)sizeof(path) ||
		    snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", names[i]) >= (int)sizeof(sub))
			continue;
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {	/* symbolic links to directories are not followed: no loops */
			if (b->have_out && st.st_dev == b->out_dev && st.st_ino == b->out_ino)
				continue;	/* the output directory inside an input directory */
			ret = walk(b, path, sub, depth + 1);
		} else if ((S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) && is_recording(path, names[i])) {
			if (S_ISLNK(st.st_mode) && (stat(path, &st) < 0 || !S_ISREG(st.st_mode)))
				continue;
			if (!add_input(b, path, sub))
				ret = -1;
		}
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

/*
 * Output names: OUTDIR/REL.SUFFIX, SUFFIX being the format's file ending (.folded, ...).
 * REL is the input's path relative to the directory argument it was found in
 * (DIR/host1/perf.data -> OUTDIR/host1/perf.data.folded), or the file name of a file
 * argument.  When two inputs would get the same REL, each of them uses its path as given
 * instead, with a leading "/" and any "." or ".." components left out.
 */

/* The input's path without a leading "/" and without "." and ".." components. */
static void path_as_rel(const char *path, char *out, size_t len)
{
	size_t o = 0;
	const char *p = path;

	while (*p && o + 1 < len) {
		size_t n;
		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (!n)
			break;
		if (!(n == 1 && p[0] == '.') && !(n == 2 && p[0] == '.' && p[1] == '.')) {
			if (o && o + 1 < len)
				out[o++] = '/';
			if (o + n >= len)
				n = len - o - 1;
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
	}
	out[o] = 0;
	if (!o)
		snprintf(out, len, "input");
}

static int cmp_rel(const void *a, const void *b)
{
	const struct input *x = *(struct input *const *)a, *y = *(struct input *const *)b;
	return strcmp(x->rel, y->rel);
}

/* Two inputs with the same REL: both are named after their whole path instead. */
static int resolve_collisions(struct batch *b)
{
	struct input **idx;
	size_t i, j;

	if (b->n < 2)
		return 0;
	if (!(idx = malloc(b->n * sizeof(*idx))))
		return -1;
	for (i = 0; i < b->n; i++)
		idx[i] = &b->v[i];
	qsort(idx, b->n, sizeof(*idx), cmp_rel);
	for (i = 0; i < b->n; i = j) {
		for (j = i + 1; j < b->n && !strcmp(idx[i]->rel, idx[j]->rel); j++)
			;
		if (j - i > 1) {
			size_t k;
			for (k = i; k < j; k++) {
				char rel[PATH_MAX];
				path_as_rel(idx[k]->path, rel, sizeof(rel));
				free(idx[k]->rel);
				if (!(idx[k]->rel = strdup(rel))) {
					free(idx);
					return -1;
				}
			}
		}
	}
	free(idx);
	return 0;
}

static const char *suffix_of(const struct pfc_writer *w, char *buf, size_t len)
{
	if (w->suffixes && w->suffixes[0])
		return w->suffixes[0];
	snprintf(buf, len, ".%s", w->name);
	return buf;
}

static int newer(const struct stat *a, const struct stat *b)
{
	return a->st_mtim.tv_sec > b->st_mtim.tv_sec ||
	       (a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec > b->st_mtim.tv_nsec);
}

static size_t remove_leftovers(const char *out, pid_t pid);

/* Output names, and which of them are missing or older than the input. */
static int plan(struct batch *b, struct input *in)
{
	struct stat ist, ost;
	size_t k;

	if (in->failed_early)
		return 0;
	if (stat(in->path, &ist) < 0) {
		in->failed_early = 1;
		snprintf(in->msg, sizeof(in->msg), "'%s': cannot open: %s", in->path, strerror(errno));
		return 0;
	}
	for (k = 0; k < b->nws; k++) {
		char sbuf[64], path[PATH_MAX];
		size_t ol = strlen(b->c->outdir);
		const char *sep = ol && b->c->outdir[ol - 1] == '/' ? "" : "/";	/* -O out/ */

		if (snprintf(path, sizeof(path), "%s%s%s%s", b->c->outdir, sep, in->rel, suffix_of(b->ws[k], sbuf, sizeof(sbuf))) >=
		    (int)sizeof(path)) {
			in->failed_early = 1;
			snprintf(in->msg, sizeof(in->msg), "'%s': the output name is too long", in->path);
			return 0;
		}
		if (!(in->outs[k] = strdup(path)))
			return -1;
		/* what an interrupted run left: its outputs are whole (renamed into place) or missing */
		b->stale += remove_leftovers(path, 0);
		/* a comparison depends on its base too: always made again */
		in->todo[k] = b->c->force || b->c->diff || stat(path, &ost) < 0 || !newer(&ost, &ist);
		in->ntodo += in->todo[k];
	}
	return 0;
}

static int mkdirs(char *path, mode_t mode)
{
	char *p;

	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, mode) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return 0;
}

/* A process that can write no more: none with that id, or one that died and whose parent has
 * not collected it yet (a zombie: a batch killed as a group leaves its workers so, until the
 * init process reaps them, which some containers' init never does). */
static int process_gone(long pid)
{
	char path[64], buf[512], *rp;
	ssize_t n;
	int fd;

	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* "PID (COMM) STATE ...": COMM may hold spaces and parentheses, the state follows the last ')' */
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
}

/* Temporary files of an output are "NAME.tmp.PID.XXXXXX" (output.c), PID being the
 * process that writes it.  remove_leftovers(OUT, PID) removes those of process PID (a
 * worker that crashed or was stopped); with PID 0, those of every process that is gone (a
 * batch killed with SIGKILL, a machine that lost power), and the "NAME.tmp.XXXXXX" of
 * older versions.  Files of a live process, another batch writing into the same directory,
 * stay.  Returns how many were removed. */
static size_t remove_leftovers(const char *out, pid_t pid)
{
	char dir[PATH_MAX], prefix[PATH_MAX];
	const char *slash = strrchr(out, '/');
	size_t plen, removed = 0;
	DIR *d;
	struct dirent *e;

	if (!slash)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - out), out);
	snprintf(prefix, sizeof(prefix), "%s.tmp.", slash + 1);
	plen = strlen(prefix);
	if (!(d = opendir(dir)))
		return 0;
	while ((e = readdir(d))) {
		const char *rest = e->d_name + plen;
		char p[PATH_MAX], *dot;
		long owner;

		if (strncmp(e->d_name, prefix, plen))
			continue;
		if (strlen(rest) == 6 && !strchr(rest, '.')) {
			if (pid)
				continue;	/* an older version's name: no owner to tell */
		} else {
			errno = 0;
			owner = strtol(rest, &dot, 10);
			if (errno || dot == rest || *dot != '.' || strlen(dot + 1) != 6 || owner <= 0)
				continue;
			if (pid ? owner != (long)pid : !process_gone(owner))
				continue;
		}
		if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) < (int)sizeof(p) && unlink(p) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

/* One input in a worker: convert it and send the result up the pipe.  Returns 0, or -1
 * when the pipe is gone (the parent ended). */
static int work_one(struct batch *b, struct input *in, int fd)
{
	const struct pfc_writer *ws[16];
	const char *outs[16];
	struct pfc_job_result res;
	struct pfc_filter filter = b->c->filter;
	const char *crash = b->c->env.test_crash;	/* tests: a worker that crashes */
	size_t k, n = 0;

	memset(&res, 0, sizeof(res));
	for (k = 0; k < b->nws; k++) {
		if (!in->todo[k])
			continue;
		if (mkdirs(in->outs[k], 0777) < 0) {
			snprintf(res.msg, sizeof(res.msg), "'%s': cannot create the directory of '%s': %s", in->path,
				 in->outs[k], strerror(errno));
			return write(fd, &res, sizeof(res)) == (ssize_t)sizeof(res) ? 0 : -1;
		}
		ws[n] = b->ws[k];
		outs[n++] = in->outs[k];
	}
	if (crash && *crash && strstr(in->path, crash))
		abort();
	pfc_cli_convert(b->c, in->path, ws, outs, n, &res);
	/* --time in percent was resolved against this input's sample times: the next input
	 * resolves it against its own */
	if (b->c->filter.ranges != filter.ranges)
		free(b->c->filter.ranges);
	b->c->filter = filter;
	return write(fd, &res, sizeof(res)) == (ssize_t)sizeof(res) ? 0 : -1;
}

/*
 * The worker: converts the inputs whose indices the parent sends, one at a time, and sends
 * each one's result up the result pipe; it ends when the parent closes the command pipe.
 * One process converts many inputs, so that the memory one conversion faulted in (the heap,
 * on huge pages: heap.c) serves the next instead of being zeroed again in a new process,
 * and a process is made and torn down per worker, not per input.  A crash still takes only
 * the input being converted: the parent reports it and starts another worker for the rest.
 */
static void worker(struct batch *b, int cmd, int fd)
{
	uint64_t idx;
	ssize_t got;

	for (;;) {
		while ((got = read(cmd, &idx, sizeof(idx))) < 0 && errno == EINTR)
			;
		if (got != (ssize_t)sizeof(idx) || idx >= b->n)
			_exit(EXIT_OK);
		if (work_one(b, &b->v[idx], fd) < 0)
			_exit(3);
	}
}

struct running {
	pid_t pid;
	int fd;                      /* its results */
	int cmd;                     /* the indices of its inputs */
	size_t idx;
	int busy;                    /* converting idx */
	double start;
};

/* End a worker (kill: at once) and return its wait status. */
static int worker_end(struct running *w, int kill_it)
{
	int status = 0;

	close(w->cmd);	/* an idle worker reads the end of its commands and exits */
	if (kill_it)
		kill(w->pid, SIGKILL);
	while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
		;
	close(w->fd);
	return status;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct totals {
	size_t converted, uptodate, failed, grown;
	uint64_t samples;
};

static void report(struct batch *b, struct input *in, const struct pfc_job_result *r, struct totals *t)
{
	const struct cli *c = b->c;

	if (!r->ok) {
		t->failed++;
		fprintf(stderr, "perfconv: FAIL %s\n", r->msg);
		fputs(r->hints, stderr);
		return;
	}
	t->converted++;
	t->samples += r->samples;
	if (r->grown)
		t->grown++;
	if (c->quiet)
		return;
	fprintf(stderr, "perfconv: ok   '%s': %llu samples", in->path, (unsigned long long)r->samples);
	if (r->kept != r->samples)
		fprintf(stderr, " (%llu kept)", (unsigned long long)r->kept);
	fprintf(stderr, ", %.2f s, %.1f%% of sampled frames unresolved\n", r->seconds,
		r->frames ? 100.0 * (double)r->unresolved / (double)r->frames : 0.0);
	/* the file's own hints (symsummary.c) under its line, not lost in the worker */
	fputs(r->hints, stderr);
	if (c->verbose) {
		size_t k;
		for (k = 0; k < b->nws; k++)
			if (in->todo[k])
				fprintf(stderr, "perfconv:      -> '%s'\n", in->outs[k]);
	}
}

static void crashed(struct input *in, int status, struct pfc_job_result *r, int got)
{
	if (WIFSIGNALED(status)) {
		r->ok = 0;
		snprintf(r->msg, sizeof(r->msg), "'%s': the conversion crashed (signal %d, %s); no output written",
			 in->path, WTERMSIG(status), strsignal(WTERMSIG(status)));
	} else if (!got) {
		r->ok = 0;
		snprintf(r->msg, sizeof(r->msg), "'%s': the conversion ended without a result (exit status %d)",
			 in->path, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
}

/* The index of a worker that has finished, or (*timed_out) one past its --timeout;
 * SIZE_MAX when waiting failed. */
static size_t wait_worker(const struct cli *c, const struct running *run, size_t nrun, int *timed_out)
{
	struct pollfd pfd[64], *p = nrun <= 64 ? pfd : malloc(nrun * sizeof(*p));
	size_t k, found = SIZE_MAX;

	if (!p)
		return SIZE_MAX;
	*timed_out = 0;
	for (k = 0; k < nrun; k++) {
		p[k].fd = run[k].fd;
		p[k].events = POLLIN;
		p[k].revents = 0;
	}
	for (;;) {
		int ms = -1, n;
		double t = now_s();
		if (c->timeout > 0) {
			for (k = 0; k < nrun; k++) {
				double left = run[k].start + c->timeout - t;
				int m = left <= 0 ? 0 : left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
				if (ms < 0 || m < ms)
					ms = m;
			}
		}
		n = poll(p, nrun, ms);
		if (n < 0 && errno != EINTR)
			break;
		for (k = 0; n > 0 && k < nrun; k++)
			if (p[k].revents) {
				found = k;
				break;
			}
		if (found != SIZE_MAX)
			break;
		t = now_s();
		for (k = 0; c->timeout > 0 && k < nrun; k++)
			if (t >= run[k].start + c->timeout) {
				*timed_out = 1;
				found = k;
				break;
			}
		if (found != SIZE_MAX)
			break;
	}
	if (p != pfd)
		free(p);
	return found;
}

/* The inputs: each file argument, and the recordings found under each directory argument,
 * once each, with their output names and what is to be done for them; -1 when out of
 * memory. */
static int collect_inputs(struct batch *b, char *const *args, int nargs)
{
	struct stat st;
	size_t i;
	int a;

	for (a = 0; a < nargs; a++) {
		const char *arg = args[a];
		int ret = 0;
		if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
			ret = walk(b, arg, "", 0);
		} else {
			const char *base = strrchr(arg, '/');
			struct input *in = add_input(b, arg, base && base[1] ? base + 1 : arg);
			if (!in)
				ret = -1;
		}
		if (ret < 0)
			return -1;
	}
	/* the same file named twice (a file argument inside a directory argument): once */
	for (i = 0; i < b->n; i++) {
		size_t j;
		if (stat(b->v[i].path, &st) < 0)
			continue;
		b->v[i].dev = st.st_dev;
		b->v[i].ino = st.st_ino;
		for (j = 0; j < i; j++)
			if (b->v[j].ino == st.st_ino && b->v[j].dev == st.st_dev && !b->v[j].failed_early)
				break;
		if (j < i) {
			free(b->v[i].path);
			free(b->v[i].rel);
			memmove(&b->v[i], &b->v[i + 1], (b->n - i - 1) * sizeof(b->v[0]));
			b->n--;
			i--;
		}
	}
	if (resolve_collisions(b) < 0)
		return -1;
	for (i = 0; i < b->n; i++)
		if (plan(b, &b->v[i]) < 0)
			return -1;
	return 0;
}

/* A new worker, forked with its two pipes and given input *NEXT; a worker that cannot be
 * started fails that input.  The child never returns. */
static void start_worker(struct batch *b, struct running *run, size_t *nrun, size_t *next, void (*old_pipe)(int),
			 struct totals *t)
{
	struct input *in = &b->v[*next];
	struct pfc_job_result r;
	int res[2] = { -1, -1 }, cmd[2] = { -1, -1 };
	uint64_t idx = *next;
	pid_t pid = -1;
	size_t k;

	memset(&r, 0, sizeof(r));
	fflush(stdout);
	fflush(stderr);
	if (pipe2(res, O_CLOEXEC) < 0 || pipe2(cmd, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		snprintf(r.msg, sizeof(r.msg), "'%s': cannot start a worker: %s", in->path, strerror(errno));
		for (k = 0; k < 2; k++) {
			if (res[k] >= 0)
				close(res[k]);
			if (cmd[k] >= 0)
				close(cmd[k]);
		}
		report(b, in, &r, t);
		++*next;
		return;
	}
	if (pid == 0) {
		signal(SIGPIPE, old_pipe);
		for (k = 0; k < *nrun; k++) {
			close(run[k].fd);
			close(run[k].cmd);
		}
		close(res[0]);
		close(cmd[1]);
		worker(b, cmd[0], res[1]);
	}
	close(res[1]);
	close(cmd[0]);
	run[*nrun].pid = pid;
	run[*nrun].fd = res[0];
	run[*nrun].cmd = cmd[1];
	run[*nrun].busy = 0;
	if (write(run[*nrun].cmd, &idx, sizeof(idx)) != (ssize_t)sizeof(idx)) {
		snprintf(r.msg, sizeof(r.msg), "'%s': cannot start a worker: %s", in->path, strerror(errno));
		worker_end(&run[*nrun], 1);
		report(b, in, &r, t);
		++*next;
		return;
	}
	run[*nrun].busy = 1;
	run[*nrun].idx = (*next)++;
	run[*nrun].start = now_s();
	++*nrun;
}

/* Worker K is done with its input, or (TIMED_OUT) has run past --timeout: its result
 * reported, its leftovers removed on failure, and it is replaced if it did not return one. */
static void collect_result(struct batch *b, struct running *run, size_t *nrun, size_t k, int timed_out,
			   struct totals *t)
{
	const struct cli *c = b->c;
	struct pfc_job_result r;
	ssize_t got;
	int status;

	memset(&r, 0, sizeof(r));
	got = timed_out ? 0 : read(run[k].fd, &r, sizeof(r));
	r.msg[sizeof(r.msg) - 1] = 0;
	r.hints[sizeof(r.hints) - 1] = 0;
	if (got != (ssize_t)sizeof(r)) {
		/* killed, or it died converting: its input failed, and it is replaced */
		status = worker_end(&run[k], 1);
		if (timed_out) {
			r.ok = 0;
			snprintf(r.msg, sizeof(r.msg), "'%s': stopped after %g s (--timeout); no output written",
				 b->v[run[k].idx].path, c->timeout);
		} else {
			crashed(&b->v[run[k].idx], status, &r, 0);
		}
	}
	if (!r.ok) {
		size_t f;
		for (f = 0; f < b->nws; f++)
			if (b->v[run[k].idx].todo[f])
				remove_leftovers(b->v[run[k].idx].outs[f], run[k].pid);
	}
	report(b, &b->v[run[k].idx], &r, t);
	if (got != (ssize_t)sizeof(r))
		run[k] = run[--*nrun];
	else
		run[k].busy = 0;
}

int pfc_batch_run(struct cli *c, char *const *args, int nargs, const struct pfc_writer *const *ws, size_t nws)
{
	struct batch b;
	struct running *run;
	struct totals t;
	struct stat st;
	size_t i, next = 0, nrun = 0;
	double t0 = now_s();
	void (*old_pipe)(int);

	memset(&b, 0, sizeof(b));
	memset(&t, 0, sizeof(t));
	b.c = c;
	b.ws = ws;
	b.nws = nws;
	c->progress = 0;			/* workers share stderr: one line per file instead */
	/* per-file warnings would interleave: each worker keeps its own and the parent prints
	 * them under the file's line (summary.c, pfc_cli_batch_hints) */
	if (mkdir(c->outdir, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "perfconv: cannot create '%s': %s\n", c->outdir, strerror(errno));
		return EXIT_FAILED;
	}
	if (stat(c->outdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "perfconv: '%s': not a directory\n", c->outdir);
		return EXIT_FAILED;
	}
	b.out_dev = st.st_dev;
	b.out_ino = st.st_ino;
	b.have_out = 1;
	if (collect_inputs(&b, args, nargs) < 0) {
		fprintf(stderr, "perfconv: out of memory\n");
		return EXIT_FAILED;
	}
	if (!b.n && !c->quiet)
		fprintf(stderr, "perfconv: no recordings found\n");
	if (b.stale && !c->quiet)
		fprintf(stderr, "perfconv: removed %zu temporary file%s of an interrupted run\n", b.stale,
			b.stale == 1 ? "" : "s");
	if (!(run = calloc((size_t)c->jobs, sizeof(*run)))) {
		fprintf(stderr, "perfconv: out of memory\n");
		return EXIT_FAILED;
	}
	/* a worker gone while idle makes a write to its command pipe fail, not end the batch */
	old_pipe = signal(SIGPIPE, SIG_IGN);
	for (;;) {
		size_t k;
		int timed_out = 0;

		/* the next input that needs converting, reporting those that do not */
		while (next < b.n && (b.v[next].failed_early || !b.v[next].ntodo)) {
			struct input *in = &b.v[next++];
			struct pfc_job_result r;

			memset(&r, 0, sizeof(r));
			if (in->failed_early) {
				snprintf(r.msg, sizeof(r.msg), "%s", in->msg);
				report(&b, in, &r, &t);
			} else {
				t.uptodate++;
				if (!c->quiet)
					fprintf(stderr, "perfconv: skip '%s': up to date (--force converts it again)\n", in->path);
			}
		}
		/* an idle worker takes it, or ends when there is none left */
		for (k = 0; k < nrun && run[k].busy; k++)
			;
		if (k < nrun) {
			uint64_t idx = next;
			if (next < b.n && write(run[k].cmd, &idx, sizeof(idx)) == (ssize_t)sizeof(idx)) {
				run[k].busy = 1;
				run[k].idx = next++;
				run[k].start = now_s();
			} else {
				/* nothing left, or the worker is gone (the input goes to another) */
				worker_end(&run[k], next < b.n);
				run[k] = run[--nrun];
			}
			continue;
		}
		/* start a worker while there are free slots */
		if (nrun < (size_t)c->jobs && next < b.n) {
			start_worker(&b, run, &nrun, &next, old_pipe, &t);
			continue;
		}
		if (!nrun)
			break;
		/* a worker is done with its input when its result pipe is readable (the result,
		 * or the end of the pipe when it died); with --timeout one that runs too long is
		 * killed */
		k = wait_worker(c, run, nrun, &timed_out);
		if (k == SIZE_MAX)
			break;
		collect_result(&b, run, &nrun, k, timed_out, &t);
	}
	while (nrun)
		worker_end(&run[--nrun], 0);
	signal(SIGPIPE, old_pipe);
	free(run);
	if (!c->quiet || t.failed)
		fprintf(stderr, "perfconv: %zu file%s: %zu converted, %zu up to date, %zu failed; %llu samples in %.2f s\n",
			b.n, b.n == 1 ? "" : "s", t.converted, t.uptodate, t.failed, (unsigned long long)t.samples,
			now_s() - t0);
	for (i = 0; i < b.n; i++) {
		size_t k;
		for (k = 0; k < nws; k++)
			free(b.v[i].outs[k]);
		free(b.v[i].path);
		free(b.v[i].rel);
	}
	free(b.v);
	if (t.grown && !c->quiet)
		fprintf(stderr, "perfconv: %zu file%s grew by more than --fail-if-grown allows\n", t.grown,
			t.grown == 1 ? "" : "s");
	return t.failed ? EXIT_FAILED : t.grown ? EXIT_GROWN : EXIT_OK;
}
