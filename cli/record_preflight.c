/*
 * record_preflight.c - what perfconv record checks before it starts anything, each problem
 * printed with its fix: perf there and new enough, the kernel letting it record
 * (perf_event_paranoid, CAP_PERFMON), kernel names readable (kptr_restrict), the pids there
 * and which of them run .NET (and which .NET), the output directory writable with room for
 * the recording.  It starts nothing and changes nothing; record.c acts on what it finds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli/record.h"

extern char **environ;

/* perf 4.1 brought -k (--clockid), which lines samples up with the runtime's clock */
#define PERF_MIN_MAJOR 4
#define PERF_MIN_MINOR 1
/* bytes a sample takes in perf.data, about: a frame-pointer chain of ~40 frames, or the
 * 8 KiB stack copy of --call-graph dwarf */
#define SAMPLE_BYTES_FP 400.0
#define SAMPLE_BYTES_DWARF 8600.0
/* room kept free beside the recording's estimate, for the pack and the event streams */
#define SPARE_BYTES (64.0 * 1024 * 1024)

static long read_long(const char *path, long dflt)
{
	char buf[64];
	long v;

	if (pfc_diagsock_read_small(path, buf, sizeof(buf)) <= 0 || sscanf(buf, "%ld", &v) != 1)
		return dflt;
	return v;
}

/* the capability bit in this process's effective set */
static int has_cap(int bit)
{
	char buf[4096], *p;
	unsigned long long eff;

	if (geteuid() == 0)
		return 1;
	if (pfc_diagsock_read_small("/proc/self/status", buf, sizeof(buf)) <= 0 || !(p = strstr(buf, "\nCapEff:")) ||
	    sscanf(p + 8, "%llx", &eff) != 1)
		return 0;
	return (int)((eff >> bit) & 1);
}

/* the capability bit in this process's effective set, for root too (a container's root
 * may lack it) */
static int cap_effective(int bit)
{
	char buf[4096], *p;
	unsigned long long eff;

	if (pfc_diagsock_read_small("/proc/self/status", buf, sizeof(buf)) <= 0 || !(p = strstr(buf, "\nCapEff:")) ||
	    sscanf(p + 8, "%llx", &eff) != 1)
		return 1;	/* cannot tell: let the recording say */
	return (int)((eff >> bit) & 1);
}

#define CAP_SYS_PTRACE_BIT 19

/* Can perfconv (and perf) reach the process: its /proc/PID/root, where a container's socket
 * and perf map are, and its events?  Both take ptrace access, which a process with
 * capabilities perfconv lacks (another container's root) grants only with CAP_SYS_PTRACE.
 * 0, or -1 (printed, with the fix). */
static int check_reach(long pid)
{
	char path[64], comm[64] = "?";
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%ld/root/", pid);
	if ((d = opendir(path))) {
		closedir(d);
		return 0;
	}
	if (errno != EACCES && errno != EPERM)
		return 0;	/* gone meanwhile: perf says so */
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	if (pfc_diagsock_read_small(path, comm, sizeof(comm)) > 0)
		comm[strcspn(comm, "\n")] = 0;
	if (geteuid() == 0 && !cap_effective(CAP_SYS_PTRACE_BIT))
		fprintf(stderr, "perfconv: record: -p: process %ld (%s) cannot be reached: /proc/%ld/root: permission "
			"denied; perfconv runs as root without CAP_SYS_PTRACE, which reaching a process of another "
			"container (its files, its socket, its samples) takes: give it that capability (docker run "
			"--cap-add SYS_PTRACE; Kubernetes: securityContext.capabilities.add: [\"SYS_PTRACE\"])\n", pid, comm,
			pid);
	else
		fprintf(stderr, "perfconv: record: -p: process %ld (%s) cannot be reached: /proc/%ld/root: permission "
			"denied; run perfconv as the process's user or as root\n", pid, comm, pid);
	return -1;
}

/* `perf --version` into out[cap] (stdout and stderr); its exit status, or -1 with errno
 * when perf cannot be run at all */
static int perf_version_text(char *out, size_t cap)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = { "perf", "--version", NULL };
	int pfd[2], status;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	errno = posix_spawnp(&pid, "perf", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (errno) {
		int saved = errno;
		close(pfd[0]);
		errno = saved;
		return -1;
	}
	while (n + 1 < cap && ((r = read(pfd[0], out + n, cap - 1 - n)) > 0 || (r < 0 && errno == EINTR)))
		if (r > 0)
			n += (size_t)r;
	out[n] = 0;
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int check_perf(struct pfc_rec_pre *pre)
{
	char text[1024], *v;
	int rc = perf_version_text(text, sizeof(text));

	if (rc < 0) {
		fprintf(stderr, "perfconv: record: cannot run perf: %s; install it (Debian: apt-get install linux-perf) "
			"or put it on PATH\n", strerror(errno));
		return -1;
	}
	text[strcspn(text, "\n")] = 0;
	if (rc != 0 || !(v = strstr(text, "perf version ")) ||
	    sscanf(v + 13, "%d.%d", &pre->perf_major, &pre->perf_minor) != 2) {
		fprintf(stderr, "perfconv: record: 'perf --version' %s%s%s%s; install the perf of the running kernel "
			"(Debian: apt-get install linux-perf)\n", rc ? "failed" : "printed no version",
			*text ? " ('" : "", text, *text ? "')" : "");
		return -1;
	}
	if (pre->perf_major < PERF_MIN_MAJOR || (pre->perf_major == PERF_MIN_MAJOR && pre->perf_minor < PERF_MIN_MINOR)) {
		fprintf(stderr, "perfconv: record: perf %d.%d is too old: perfconv record needs perf %d.%d or newer "
			"(-k, to share the runtime's clock); install a newer linux-perf\n", pre->perf_major,
			pre->perf_minor, PERF_MIN_MAJOR, PERF_MIN_MINOR);
		return -1;
	}
	return 0;
}

/* perf_event_paranoid: -1 all, 0 no raw tracepoints, 1 no CPU-wide events, 2 user space
 * only, and Debian's 3 none at all, for a process without CAP_PERFMON (38) or CAP_SYS_ADMIN (21) */
static int check_kernel(const struct pfc_rec_opts *o, struct pfc_rec_pre *pre)
{
	long paranoid = read_long("/proc/sys/kernel/perf_event_paranoid", 2);
	long kptr = read_long("/proc/sys/kernel/kptr_restrict", 0);
	int privileged = has_cap(38) || has_cap(21);
	static const char fix[] = "run perfconv as root, give perf and perfconv CAP_PERFMON "
				  "(setcap cap_perfmon,cap_sys_ptrace+ep), or lower it (sysctl kernel.perf_event_paranoid=%d)";

	if (!privileged && o->all && paranoid > 0) {
		fprintf(stderr, "perfconv: record: recording the whole machine needs kernel.perf_event_paranoid 0 or less "
			"(it is %ld): ", paranoid);
		fprintf(stderr, fix, 0);
		fputs("; or give -p PID or a command\n", stderr);
		return -1;
	}
	if (!privileged && paranoid > 2) {
		fprintf(stderr, "perfconv: record: kernel.perf_event_paranoid is %ld, which lets no user record: ", paranoid);
		fprintf(stderr, fix, 1);
		fputc('\n', stderr);
		return -1;
	}
	if (!privileged && paranoid == 2) {
		pre->user_only = 1;
		if (!o->quiet) {
			fprintf(stderr, "perfconv: record: warning: kernel.perf_event_paranoid is 2: user space only, no "
				"kernel frames; for them ");
			fprintf(stderr, fix, 1);
			fputc('\n', stderr);
		}
	}
	/* kallsyms shows addresses to root (CAP_SYSLOG) at 1, to nobody at 2 */
	if (!o->quiet && (kptr >= 2 || (kptr == 1 && !has_cap(34))))
		fprintf(stderr, "perfconv: record: warning: kernel.kptr_restrict is %ld: /proc/kallsyms hides its "
			"addresses%s, so kernel frames stay unnamed; to name them run sysctl kernel.kptr_restrict=0\n", kptr,
			kptr == 1 ? " from users without CAP_SYSLOG" : "");
	return 0;
}

int pfc_rec_dotnet_version(long pid)
{
	char path[64], line[4096];
	FILE *fp;
	int major = -1;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	if (!(fp = fopen(path, "re")))
		return -1;
	while (major < 0 && fgets(line, sizeof(line), fp)) {
		char *lib = strstr(line, "/libcoreclr.so"), *ver;
		int m;
		if (!lib)
			continue;
		*lib = 0;
		major = 0;
		/* a shared runtime: .../shared/Microsoft.NETCore.App/8.0.11/libcoreclr.so */
		if ((ver = strrchr(line, '/')) && strstr(line, "/Microsoft.NETCore.App") && sscanf(ver + 1, "%d.", &m) == 1 &&
		    m > 0 && m < 1000)
			major = m;
	}
	fclose(fp);
	return major;
}

static int check_pids(const struct pfc_rec_opts *o)
{
	char path[64];
	struct stat st;
	int i;

	for (i = 0; i < o->npids; i++) {
		long pid = o->pids[i];
		int ver;
		snprintf(path, sizeof(path), "/proc/%ld", pid);
		if (stat(path, &st) < 0) {
			fprintf(stderr, "perfconv: record: -p: no process %ld (%s %s); give the pid of a running process\n",
				pid, path, errno == ENOENT ? "does not exist" : strerror(errno));
			return -1;
		}
		if (check_reach(pid) < 0)
			return -1;
		if (!o->keywords || o->quiet)
			continue;
		ver = pfc_rec_dotnet_version(pid);
		if (ver < 0)
			fprintf(stderr, "perfconv: record: warning: process %ld does not run .NET (no libcoreclr.so in its "
				"maps): --dotnet-events '%s' does not apply to it; recording its CPU only\n", pid, o->events);
	}
	return 0;
}

static int check_output(const struct pfc_rec_opts *o, const char *dir)
{
	struct statvfs vfs;
	struct stat st;
	double free_bytes, need, rate;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (stat(dir, &st) < 0) {
		fprintf(stderr, "perfconv: record: the output directory '%s' %s; create it or give -o in another one\n", dir,
			errno == ENOENT ? "does not exist" : strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "perfconv: record: the output directory '%s' is not a directory; give -o in a directory\n",
			dir);
		return -1;
	}
	if (statvfs(dir, &vfs) < 0 || (vfs.f_flag & ST_RDONLY) || vfs.f_blocks == 0 || access(dir, W_OK) < 0) {
		fprintf(stderr, "perfconv: record: cannot write in the output directory '%s'%s; give -o in a directory "
			"you can write\n", dir, (vfs.f_flag & ST_RDONLY) ? " (a read-only file system)" :
			vfs.f_blocks == 0 ? " (a file system that holds no files)" : "");
		return -1;
	}
	free_bytes = (double)vfs.f_bavail * (double)vfs.f_frsize;
	rate = (double)o->freq * (double)(ncpu > 0 ? ncpu : 1) * (o->dwarf ? SAMPLE_BYTES_DWARF : SAMPLE_BYTES_FP);
	need = SPARE_BYTES + (o->duration > 0 ? rate * o->duration : 0);
	if (free_bytes < need) {
		fprintf(stderr, "perfconv: record: '%s' has %.0f MB free, and the recording %s needs about %.0f MB; free some "
			"space, give a shorter --duration, a lower -F, or -o on another file system\n", dir, free_bytes / 1e6,
			o->duration > 0 ? "asked for" : "with its pack", need / 1e6);
		return -1;
	}
	if (o->verbose && rate > 0)
		fprintf(stderr, "perfconv: record: '%s' has %.0f MB free: about %.0f s of recording at most\n", dir,
			free_bytes / 1e6, (free_bytes - SPARE_BYTES) / rate);
	return 0;
}

int pfc_rec_preflight(const struct pfc_rec_opts *o, const char *outdir, struct pfc_rec_pre *pre)
{
	memset(pre, 0, sizeof(*pre));
	if (check_pids(o) < 0 || check_output(o, outdir) < 0 || check_perf(pre) < 0 || check_kernel(o, pre) < 0)
		return -1;
	return 0;
}
