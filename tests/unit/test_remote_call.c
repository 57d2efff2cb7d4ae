// SPDX-License-Identifier: MIT
/*
 * record/remote_call.c on real processes (root: ptrace). Into tests/unit/remote_call_target.c
 * it dlopen()s tests/unit/remote_call_lib.c and calls it, as xpu-record -p does with
 * libxpu-cupti.so. A SIGUSR1 sent mid-call is delivered after, its siginfo intact; a SIGSTOP
 * mid-call leaves the process stopped after; a crash and a timeout are survived; and the
 * target ends as if nothing happened: the borrowed thread's vector registers and errno
 * intact, its other threads never held up, its exit normal. Also: a process that does not
 * exist, one already traced, and one whose only thread sleeps through its restart block
 * (never borrowed, and its sleep not cut short).
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "remote_call.h"

#define TARGET FIXTURE_DIR "/remote_call_target"
#define LIB FIXTURE_DIR "/remote_call_lib.so"
#define USR1_VALUE 4242

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Starts argv[0], its stdout in *out when out is set. */
static pid_t spawn(char *const argv[], int *out)
{
	int fds[2];
	pid_t pid;

	if (out && pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		if (out) {
			dup2(fds[1], STDOUT_FILENO);
			close(fds[0]);
			close(fds[1]);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	if (out) {
		close(fds[1]);
		*out = fds[0];
	}
	return pid;
}

/* What fd says until EOF or timeout_ms, appended to buf. */
static size_t read_until_eof(int fd, char *buf, size_t len, int timeout_ms)
{
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	size_t got = strlen(buf);
	struct pollfd p = { fd, POLLIN, 0 };
	ssize_t n;

	while (got + 1 < len && now_ms() < deadline) {
		if (poll(&p, 1, (int)(deadline - now_ms())) <= 0)
			break;
		n = read(fd, buf + got, len - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		buf[got] = '\0';
	}
	return got;
}

/* Reads one line (the target's "ready"), within timeout_ms. */
static bool read_line(int fd, char *buf, size_t len, int timeout_ms)
{
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	struct pollfd p = { fd, POLLIN, 0 };
	size_t got = 0;

	while (got + 1 < len && now_ms() < deadline) {
		if (poll(&p, 1, (int)(deadline - now_ms())) <= 0 || read(fd, buf + got, 1) != 1)
			break;
		if (buf[got++] == '\n')
			break;
	}
	buf[got] = '\0';
	return got && buf[got - 1] == '\n';
}

static long peek_long(pid_t pid, uint64_t addr)
{
	long v = -1;
	struct iovec local = { &v, sizeof(v) }, remote = { (void *)(uintptr_t)addr, sizeof(v) };

	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != sizeof(v))
		return -1;
	return v;
}

static int peek_int(pid_t pid, uint64_t addr)
{
	int v = -1;
	struct iovec local = { &v, sizeof(v) }, remote = { (void *)(uintptr_t)addr, sizeof(v) };

	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != sizeof(v))
		return -1;
	return v;
}

static void no_such_process(void)
{
	struct remote_thread *t = (void *)1;
	char err[256];
	pid_t gone = fork();
	int ret;

	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	ret = remote_thread__seize(gone, 200, &t, err, sizeof(err));
	CHECK(ret == -ESRCH && !t && err[0], "seize of exited PID %d: %d (%s)", gone, ret, err);
	CHECK(!remote_sym(gone, "libc.so.6", "dlopen", err, sizeof(err)) && err[0],
	      "symbol of an exited process");
}

/*
 * sleep(1)'s thread waits in a relative clock_nanosleep, which restarts through its restart
 * block: interrupted every few ms for the whole timeout, it is never borrowed, and sleeps its
 * full time all the same.
 */
static void refuses_restart_block(void)
{
	char *argv[] = { "/bin/sleep", "0.6", NULL };
	struct remote_thread *t = NULL;
	uint64_t start = now_ms(), took;
	char err[256];
	int ret, status = -1;
	pid_t pid = spawn(argv, NULL);

	CHECK(pid > 0, "spawn sleep");
	if (pid <= 0)
		return;
	sleep_ms(100);
	ret = remote_thread__seize(pid, 300, &t, err, sizeof(err));
	CHECK(ret == -ETIMEDOUT && !t, "seize of sleep(1): %d (%s)", ret, err);
	remote_thread__release(t);
	waitpid(pid, &status, 0);
	took = now_ms() - start;
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "sleep(1) status 0x%x", status);
	CHECK(took >= 580, "sleep 0.6 took %llu ms: cut short", (unsigned long long)took);
}

struct target {
	pid_t pid;
	int out;
	uint64_t iterations, usr1, usr1_value, waiter_checks;	/* its counters, by address */
};

static bool start_target(struct target *tg)
{
	char *argv[] = { TARGET, NULL };
	char line[128], err[256];

	tg->pid = spawn(argv, &tg->out);
	CHECK(tg->pid > 0, "spawn %s", TARGET);
	if (tg->pid <= 0)
		return false;
	CHECK(read_line(tg->out, line, sizeof(line), 5000) && !strncmp(line, "ready", 5),
	      "target says '%s'", line);
	sleep_ms(50);	/* its threads settle in their loops */
	/* its own executable, a PIE: the load bias of the main program */
	tg->iterations = remote_sym(tg->pid, "remote_call_target", "target_iterations", err,
				    sizeof(err));
	CHECK(tg->iterations, "target_iterations: %s", err);
	tg->usr1 = remote_sym(tg->pid, "remote_call_target", "target_usr1", err, sizeof(err));
	tg->usr1_value = remote_sym(tg->pid, "remote_call_target", "target_usr1_value", err,
				    sizeof(err));
	tg->waiter_checks = remote_sym(tg->pid, "remote_call_target", "target_waiter_checks", err,
				       sizeof(err));
	CHECK(tg->usr1 && tg->usr1_value && tg->waiter_checks, "target counters: %s", err);
	return tg->iterations && tg->usr1 && tg->usr1_value && tg->waiter_checks;
}

/* A second profiler, in a process of its own, while we hold a thread of pid. */
static void second_tracer_refused(pid_t pid)
{
	struct remote_thread *t = NULL;
	char err[256] = "", msg[300] = "";
	int fds[2], ret = 0, status;
	pid_t child;

	if (pipe(fds))
		return;
	child = fork();
	if (child == 0) {
		close(fds[0]);
		ret = remote_thread__seize(pid, 300, &t, err, sizeof(err));
		remote_thread__release(t);
		snprintf(msg, sizeof(msg), "%d %s", ret, err);
		if (write(fds[1], msg, strlen(msg)) < 0)
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	read_until_eof(fds[0], msg, sizeof(msg), 5000);
	close(fds[0]);
	waitpid(child, &status, 0);
	ret = atoi(msg);
	CHECK((ret == -EBUSY || ret == -EPERM) && strstr(msg, "already traced"),
	      "second seize: %s", msg);
}

struct signaller {
	pid_t pid, tid;		/* tid 0: to the process */
	int sig, after_ms;
};

/* To a thread with a value, as sigqueue() sends it (whether its siginfo survives shows). */
static void *send_signal(void *arg)
{
	struct signaller *s = arg;
	siginfo_t si = { .si_signo = s->sig, .si_code = SI_QUEUE };

	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = USR1_VALUE;
	sleep_ms(s->after_ms);
	if (s->tid)
		syscall(SYS_rt_tgsigqueueinfo, s->pid, s->tid, s->sig, &si);
	else
		kill(s->pid, s->sig);
	return NULL;
}

/* The state letter in /proc/PID/task/TID/stat, '?' when unreadable. */
static char task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] ? p[2] : '?';
}

static void calls(void)
{
	struct remote_thread *t = NULL;
	struct signaller sig;
	struct target tg;
	pthread_t th;
	uint64_t dlopen_fn, hello, sleep_fn, handle = 0, ret = 0, path, msg, args[7];
	long before, after = 0, checks;
	char err[256], comm[64] = "", out[8192] = "", *done;
	pid_t tid;
	int r, status = -1;

	if (!start_target(&tg))
		return;
	r = remote_thread__seize(tg.pid, 2000, &t, err, sizeof(err));
	CHECK(r == 0 && t, "seize: %d (%s)", r, err);
	if (r)
		goto out;
	{
		char p[64];
		FILE *f;

		snprintf(p, sizeof(p), "/proc/%d/task/%d/comm", tg.pid, remote_thread__tid(t));
		f = fopen(p, "r");
		if (f && fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		if (f)
			fclose(f);
	}
	/* the nanosleep of main restarts through its restart block; the worker never waits */
	CHECK(!strcmp(comm, "waiter"), "borrowed thread '%s', not the futex waiter", comm);
	second_tracer_refused(tg.pid);

	dlopen_fn = remote_sym(tg.pid, "libc.so.6", "dlopen", err, sizeof(err));
	if (!dlopen_fn)		/* glibc before 2.34 */
		dlopen_fn = remote_sym(tg.pid, "libdl.so.2", "dlopen", err, sizeof(err));
	CHECK(dlopen_fn, "dlopen: %s", err);
	CHECK(!remote_sym(tg.pid, "libc.so.6", "no_such_function", err, sizeof(err)) &&
		      strstr(err, "no_such_function"),
	      "missing symbol: '%s'", err);
	CHECK(!remote_sym(tg.pid, "no_such_lib", "dlopen", err, sizeof(err)) && err[0],
	      "missing library");
	path = remote_thread__push_data(t, LIB, sizeof(LIB));
	CHECK(path, "push the path");
	args[0] = path;
	args[1] = RTLD_NOW;
	r = remote_thread__call(t, dlopen_fn, args, 2, 5000, &handle, err, sizeof(err));
	CHECK(r == 0 && handle, "dlopen in the target: %d %s, handle 0x%llx", r, err,
	      (unsigned long long)handle);

	hello = remote_sym(tg.pid, "remote_call_lib", "remote_hello", err, sizeof(err));
	sleep_fn = remote_sym(tg.pid, "remote_call_lib", "remote_sleep_ms", err, sizeof(err));
	CHECK(hello && sleep_fn, "the loaded library's functions: %s", err);
	msg = remote_thread__push_data(t, "hello", 6);
	args[0] = msg;
	args[1] = 20;
	r = remote_thread__call(t, hello, args, 2, 2000, &ret, err, sizeof(err));
	CHECK(r == 0 && ret == 41, "remote_hello: %d %s, returned %llu", r, err,
	      (unsigned long long)ret);

	/* a signal to the borrowed thread mid-call waits until it is let go */
	tid = remote_thread__tid(t);
	sig = (struct signaller){ tg.pid, tid, SIGUSR1, 80 };
	before = peek_long(tg.pid, tg.iterations);
	pthread_create(&th, NULL, send_signal, &sig);
	args[0] = 200;
	r = remote_thread__call(t, sleep_fn, args, 1, 5000, &ret, err, sizeof(err));
	pthread_join(th, NULL);
	after = peek_long(tg.pid, tg.iterations);
	CHECK(r == 0 && ret == 200, "remote_sleep_ms: %d %s, returned %llu", r, err,
	      (unsigned long long)ret);
	CHECK(after - before >= 20, "the other threads ran meanwhile: %ld iterations in 200 ms",
	      after - before);
	CHECK(peek_int(tg.pid, tg.usr1) == 0, "SIGUSR1 held during the call");

	/* ^Z mid-call: the call ends all the same, and the process is stopped after release */
	sig = (struct signaller){ tg.pid, 0, SIGSTOP, 30 };
	pthread_create(&th, NULL, send_signal, &sig);
	args[0] = 100;
	r = remote_thread__call(t, sleep_fn, args, 1, 5000, &ret, err, sizeof(err));
	pthread_join(th, NULL);
	CHECK(r == 0 && ret == 100, "remote_sleep_ms through a SIGSTOP: %d %s", r, err);
	CHECK(task_state(tg.pid, tg.pid) == 'T', "the main thread is stopped: %c",
	      task_state(tg.pid, tg.pid));

	/* crashes: the registers are put back, the fault is not delivered */
	r = remote_thread__call(t, 0x10, NULL, 0, 2000, &ret, err, sizeof(err));
	CHECK(r == -EFAULT && strstr(err, "SIGSEGV"), "call of 0x10: %d %s", r, err);
	r = remote_thread__call(t, 0, NULL, 0, 2000, &ret, err, sizeof(err));
	CHECK(r == -EFAULT, "call of 0 is a crash, not a return: %d %s", r, err);
	r = remote_thread__call(t, hello, args, 7, 2000, &ret, err, sizeof(err));
	CHECK(r == -EINVAL, "7 arguments: %d", r);

	/* a call that does not return in time is abandoned; the thread serves on */
	args[0] = 5000;
	r = remote_thread__call(t, sleep_fn, args, 1, 100, &ret, err, sizeof(err));
	CHECK(r == -ETIMEDOUT, "5 s sleep with a 100 ms timeout: %d %s", r, err);
	args[0] = remote_thread__push_data(t, "again", 6);
	args[1] = 5;
	r = remote_thread__call(t, hello, args, 2, 2000, &ret, err, sizeof(err));
	CHECK(r == 0 && ret == 11, "remote_hello after the timeout: %d %s, %llu", r, err,
	      (unsigned long long)ret);

	checks = peek_long(tg.pid, tg.waiter_checks);
	remote_thread__release(t);
	t = NULL;
	for (r = 0; r < 100 && task_state(tg.pid, tid) != 'T'; r++)
		sleep_ms(10);
	CHECK(task_state(tg.pid, tid) == 'T', "released into the group stop: %c",
	      task_state(tg.pid, tid));
	CHECK(peek_int(tg.pid, tg.usr1) == 0, "SIGUSR1 waits for SIGCONT");
	kill(tg.pid, SIGCONT);
	for (r = 0; r < 200 && peek_int(tg.pid, tg.usr1) != 1; r++)
		sleep_ms(10);
	CHECK(peek_int(tg.pid, tg.usr1) == 1, "SIGUSR1 delivered on release: %d",
	      peek_int(tg.pid, tg.usr1));
	CHECK(peek_int(tg.pid, tg.usr1_value) == USR1_VALUE, "with its siginfo: si_value %d",
	      peek_int(tg.pid, tg.usr1_value));
	before = peek_long(tg.pid, tg.iterations);
	sleep_ms(200);
	after = peek_long(tg.pid, tg.iterations);
	CHECK(after - before >= 20, "runs on after release: %ld iterations in 200 ms",
	      after - before);
	CHECK(peek_long(tg.pid, tg.waiter_checks) > checks,
	      "the borrowed thread went back to its loop and checked its registers");
out:
	remote_thread__release(t);
	kill(tg.pid, SIGTERM);
	read_until_eof(tg.out, out, sizeof(out), 5000);
	close(tg.out);
	waitpid(tg.pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "target status 0x%x: %s", status, out);
	CHECK(strstr(out, "hello msg=hello x=20\n") && strstr(out, "hello msg=again x=5\n"),
	      "the calls ran in the target: %s", out);
	done = strstr(out, "ok iterations=");
	CHECK(done && strstr(done, "usr1=1 fp_errors=0 errno_errors=0"), "target: %s", out);
	CHECK(done && atol(done + 14) >= after, "iterations %ld at the end, %ld before",
	      done ? atol(done + 14) : 0, after);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("skip: needs root for ptrace\n");
		return 77;	/* tests/run-tests.sh: SKIP */
	}
	no_such_process();
	refuses_restart_block();
	calls();
	return unit_finish();
}
