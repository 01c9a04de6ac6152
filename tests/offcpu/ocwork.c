/*
 * ocwork.c - the known workload of tests/offcpu.sh: threads whose blocked times are known.
 *   oc-sleeper  sleeps NA (10) x 20 ms in sleep_a(), then NB (5) x 50 ms in sleep_b()
 *   oc-reader   blocks in reader_wait() on a pipe that oc-writer writes every 30 ms
 *   oc-writer   sleeps 30 ms in writer_pause() between writes
 *   oc-spinner  runs without blocking until the others are done (the control: no off-CPU time)
 * Each thread measures its own time in the blocking system calls (CLOCK_MONOTONIC) and the
 * program writes the totals in nanoseconds to the file named by argv[1]: the oracle the test
 * compares the off-CPU profile with.  With a second argument it also writes there the start and
 * end (CLOCK_MONOTONIC, the clock of perf record -k 1) of each sleep in sleep_b(), one per line:
 * the windows of the --time test.  The blocking calls are made with an inline `syscall`
 * instruction, so that the sampled user ip is inside the named function and frame pointers
 * name every caller (a libc wrapper without a frame would hide its caller).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NA 10
#define NB 5
#define NPIPE 15

static long sys3(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return ret;
}

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t t_a, t_b, t_read, t_pause;
static uint64_t b_at[NB][2];
static int nb;
static int pipefd[2];
static volatile int done;

__attribute__((noinline, unused)) static uint64_t nap(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	uint64_t t0 = now();
	sys3(SYS_nanosleep, (long)&ts, 0, 0);
	return now() - t0;
}

__attribute__((noinline)) static void sleep_a(void)
{
	struct timespec ts = { 0, 20 * 1000000L };
	uint64_t t0 = now();
	sys3(SYS_nanosleep, (long)&ts, 0, 0);
	t_a += now() - t0;
}

__attribute__((noinline)) static void sleep_b(void)
{
	struct timespec ts = { 0, 50 * 1000000L };
	uint64_t t0 = now(), t1;
	sys3(SYS_nanosleep, (long)&ts, 0, 0);
	t1 = now();
	t_b += t1 - t0;
	if (nb < NB) {
		b_at[nb][0] = t0;
		b_at[nb++][1] = t1;
	}
}

static void *sleeper(void *arg)
{
	int i;
	(void)arg;
	pthread_setname_np(pthread_self(), "oc-sleeper");
	for (i = 0; i < NA; i++)
		sleep_a();
	for (i = 0; i < NB; i++)
		sleep_b();
	return NULL;
}

__attribute__((noinline)) static long reader_wait(char *c)
{
	uint64_t t0 = now();
	long n = sys3(SYS_read, pipefd[0], (long)c, 1);
	t_read += now() - t0;
	return n;
}

static void *reader(void *arg)
{
	char c;
	(void)arg;
	pthread_setname_np(pthread_self(), "oc-reader");
	while (reader_wait(&c) == 1 && c != 'q')
		;
	return NULL;
}

__attribute__((noinline)) static void writer_pause(void)
{
	struct timespec ts = { 0, 30 * 1000000L };
	uint64_t t0 = now();
	sys3(SYS_nanosleep, (long)&ts, 0, 0);
	t_pause += now() - t0;
}

static void *writer(void *arg)
{
	int i;
	(void)arg;
	pthread_setname_np(pthread_self(), "oc-writer");
	for (i = 0; i < NPIPE; i++) {
		writer_pause();
		if (write(pipefd[1], i + 1 < NPIPE ? "x" : "q", 1) != 1)
			abort();
	}
	return NULL;
}

__attribute__((noinline)) static void spin(void)
{
	while (!done)
		;
}

static void *spinner(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "oc-spinner");
	spin();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t ts, tr, tw, tp;
	FILE *f;

	if (argc < 2 || argc > 3 || pipe(pipefd) < 0)
		return 2;
	(void)nap;
	pthread_create(&tp, NULL, spinner, NULL);
	pthread_create(&ts, NULL, sleeper, NULL);
	pthread_create(&tr, NULL, reader, NULL);
	pthread_create(&tw, NULL, writer, NULL);
	pthread_join(ts, NULL);
	pthread_join(tr, NULL);
	pthread_join(tw, NULL);
	done = 1;
	pthread_join(tp, NULL);
	f = fopen(argv[1], "w");
	if (!f)
		return 1;
	fprintf(f, "sleep_a %llu\nsleep_b %llu\nreader_wait %llu\nwriter_pause %llu\n", (unsigned long long)t_a,
		(unsigned long long)t_b, (unsigned long long)t_read, (unsigned long long)t_pause);
	if (fclose(f) != 0)
		return 1;
	if (argc == 3) {
		int i;
		if (!(f = fopen(argv[2], "w")))
			return 1;
		for (i = 0; i < nb; i++)
			fprintf(f, "%llu %llu\n", (unsigned long long)b_at[i][0], (unsigned long long)b_at[i][1]);
		return fclose(f) != 0;
	}
	return 0;
}
