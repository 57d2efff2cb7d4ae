// SPDX-License-Identifier: MIT
/*
 * A function call inside another process over ptrace (see remote_call.h).
 *
 * Where the borrowed thread stands: PTRACE_INTERRUPT stops it in the kernel's signal code on
 * its way out of the wait, with rax = -ERESTART* and orig_rax = the system call, before the
 * kernel decides to restart it. A call sets orig_rax = -1, so nothing is restarted at our rip;
 * putting the saved registers back restores the decision, and the wait restarts on detach,
 * re-executed from its registers. Except for -ERESTART_RESTARTBLOCK (relative sleeps, waits
 * with a timeout): that restart runs current->restart_block, which a call that sleeps and is
 * interrupted in turn would overwrite; such threads are not borrowed.
 *
 * Waits poll waitpid(WNOHANG): waitpid has no timeout, and a SIGCHLD handler or signalfd is
 * the caller's business, not ours.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "maps_file.h"
#include "remote_call.h"

#define RED_ZONE		128	/* below rsp, owned by the interrupted leaf function */
#define PUSH_MAX		(64 * 1024)	/* data pushed for one call, at most */
#define ERESTART_RESTARTBLOCK	516	/* the kernel's, not in the uapi headers */
#define XSTATE_MAX		(64 * 1024)	/* above any XSAVE area (AMX's is 11 KiB) */
#define STOP_GRACE_MS		2000	/* a stop we asked for comes in microseconds */
#define RESCAN_MS		5	/* between scans of the threads in seize */
#define USER64_CS		0x33	/* the code segment of 64-bit user code */
#define EFLAGS_TF		0x100
#define EFLAGS_DF		0x400	/* the ABI wants it clear at a call */
#ifndef NT_X86_SHSTK
#define NT_X86_SHSTK		0x204	/* Linux 6.6 */
#endif

struct remote_thread {
	pid_t pid, tid;
	struct user_regs_struct saved;	/* as seized */
	struct iovec xstate;		/* as seized: XSAVE area, the size the kernel gave */
	uint64_t data_sp;		/* lowest byte pushed for the next call */
	uint64_t errno_addr;		/* the thread's errno, 0 when unknown */
	int saved_errno;
	siginfo_t *held;		/* received while borrowed, delivered on release */
	size_t nheld, held_cap;
	bool stopped;			/* in a ptrace stop: registers may be read and written */
	bool gone;			/* exited, or no longer ours to wait for */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	nanosleep(&ts, NULL);
}

/*
 * The next stop of t, until deadline: 1 (stopped, *status set), 0 (deadline passed, still
 * running) or -ESRCH (exited). Polls with a nap that grows to 2 ms, so a call of a few ms is
 * seen promptly and a long one costs little.
 */
static int wait_stop(struct remote_thread *t, uint64_t deadline, int *status)
{
	long nap_us = 50;
	pid_t r;

	for (;;) {
		r = waitpid(t->tid, status, __WALL | WNOHANG);
		if (r == t->tid) {
			if (WIFSTOPPED(*status)) {
				t->stopped = true;
				return 1;
			}
			t->gone = true;		/* exited or killed */
			return -ESRCH;
		}
		if (r < 0 && errno != EINTR) {
			t->gone = true;		/* ECHILD: not our tracee any more */
			return -ESRCH;
		}
		if (now_ms() >= deadline)
			return 0;
		sleep_us(nap_us);
		if (nap_us < 2000)
			nap_us *= 2;
	}
}

static int resume(struct remote_thread *t, int sig)
{
	if (ptrace(PTRACE_CONT, t->tid, 0, (void *)(long)sig)) {
		t->gone = errno == ESRCH;
		return -errno;
	}
	t->stopped = false;
	return 0;
}

static bool event_stop(int status)
{
	return status >> 16 == PTRACE_EVENT_STOP;
}

/* A fault of the code running (si_code > 0: the kernel's), not a signal someone sent. */
static bool synchronous_fault(const siginfo_t *si)
{
	switch (si->si_signo) {
	case SIGSEGV:
	case SIGBUS:
	case SIGILL:
	case SIGFPE:
	case SIGTRAP:
	case SIGSYS:
		return si->si_code > 0;
	}
	return false;
}

/* Keeps a signal that reached the thread during a call, to deliver it on release. */
static int hold_signal(struct remote_thread *t, const siginfo_t *si)
{
	if (t->nheld == t->held_cap) {
		size_t cap = t->held_cap ? t->held_cap * 2 : 4;
		siginfo_t *h = realloc(t->held, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		t->held = h;
		t->held_cap = cap;
	}
	t->held[t->nheld++] = *si;
	return 0;
}

/*
 * len bytes between buf and the target's addr, written when write: process_vm_{readv,writev},
 * else /proc/PID/mem, where seccomp filters those out (some containers).
 */
static int access_mem(pid_t pid, uint64_t addr, void *buf, size_t len, bool write)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	char path[64];
	ssize_t n;
	int fd;

	n = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
		  : process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write ? pwrite(fd, buf, len, (off_t)addr) : pread(fd, buf, len, (off_t)addr);
	close(fd);
	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

static int write_mem(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	return access_mem(pid, addr, (void *)buf, len, true);
}

static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	return access_mem(pid, addr, buf, len, false);
}

/* Puts the registers and FPU state back as seized. */
static int restore_regs(struct remote_thread *t)
{
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &t->saved) ||
	    ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE, &t->xstate)) {
		t->gone = errno == ESRCH;
		return -errno;
	}
	return 0;
}

/* ---- seizing a thread ---------------------------------------------------------------------- */

/*
 * How well a wait survives being interrupted, lower first; -1: not borrowed. Waits that
 * restart (-ERESTARTSYS, -ERESTARTNOHAND) come first; epoll_wait and sigtimedwait return
 * EINTR to the program on any ptrace stop, so only if nothing better is there; relative
 * sleeps restart through the restart block (refused once seen) and come last. Anything else
 * (an ioctl into a driver, say) may not expect an interruption at all.
 */
static int wait_rank(long nr)
{
	switch (nr) {
	case SYS_futex:
		return 0;
	case SYS_poll:
	case SYS_ppoll:
	case SYS_select:
	case SYS_pselect6:
	case SYS_read:
	case SYS_readv:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_accept:
	case SYS_accept4:
	case SYS_wait4:
	case SYS_waitid:
	case SYS_pause:
	case SYS_rt_sigsuspend:
		return 1;
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
	case SYS_rt_sigtimedwait:
		return 2;
	case SYS_nanosleep:
	case SYS_clock_nanosleep:
		return 3;
	}
	return -1;
}

/* added to the rank of a thread of the CUDA driver or NCCL (see remote_thread__seize) */
#define RANK_LIBRARY_THREAD 10

struct candidate {
	pid_t tid;
	int rank;
};

static int cmp_candidate(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank - y->rank;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* A small /proc file of the thread, NUL-terminated: its length or -errno. */
static ssize_t read_task_file(pid_t pid, pid_t tid, const char *name, char *buf, size_t len)
{
	char path[96];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", pid, tid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

static pid_t tracer_of(pid_t pid, pid_t tid)
{
	char buf[4096], *p;

	if (read_task_file(pid, tid, "status", buf, sizeof(buf)) < 0)
		return 0;
	p = strstr(buf, "\nTracerPid:");
	return p ? (pid_t)strtol(p + 11, NULL, 10) : 0;
}

/* Sleeping interruptibly ('S'): a thread in 'D' would not stop for PTRACE_INTERRUPT yet. */
static bool sleeping(pid_t pid, pid_t tid)
{
	char buf[1024], *p;

	if (read_task_file(pid, tid, "stat", buf, sizeof(buf)) < 0)
		return false;
	p = strrchr(buf, ')');		/* the name in () may hold anything */
	return p && p[1] == ' ' && p[2] == 'S';
}

static int busy_error(pid_t pid, pid_t tracer, char *err, size_t errlen)
{
	snprintf(err, errlen,
		 "PID %d is already traced (a debugger or another profiler): by PID %d", pid,
		 tracer);
	return -EBUSY;
}

static int perm_error(char *err, size_t errlen)
{
	snprintf(err, errlen,
		 "ptrace not permitted: kernel.yama.ptrace_scope or missing CAP_SYS_PTRACE");
	return -EPERM;
}

/*
 * The threads of pid waiting in a system call worth trying, best first, in *out (*n of them).
 * -EBUSY when a thread is traced already: a debugger holds them all, and two visitors at once
 * would only stall each other.
 */
static int list_candidates(pid_t pid, struct candidate **out, size_t *n, char *err,
			   size_t errlen)
{
	struct candidate *c = NULL, *nc;
	size_t cap = 0, cnt = 0;
	char path[64], buf[256];
	struct dirent *de;
	pid_t tid, tracer;
	ssize_t len;
	DIR *dir;
	int rank, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir) {
		snprintf(err, errlen, "no process %d", pid);
		return -ESRCH;
	}
	while ((de = readdir(dir))) {
		tid = (pid_t)strtol(de->d_name, NULL, 10);
		if (tid <= 0)
			continue;
		tracer = tracer_of(pid, tid);
		if (tracer) {
			ret = busy_error(pid, tracer, err, errlen);
			break;
		}
		len = read_task_file(pid, tid, "syscall", buf, sizeof(buf));
		if (len == -EACCES || len == -EPERM) {
			ret = perm_error(err, errlen);
			break;
		}
		/* "running", or "-1 ..." (blocked outside a system call): nothing to borrow */
		if (len <= 0 || buf[0] < '0' || buf[0] > '9')
			continue;
		rank = wait_rank(strtol(buf, NULL, 10));
		if (rank < 0 || !sleeping(pid, tid))
			continue;
		/*
		 * The CUDA driver's and NCCL's own threads wait inside the libraries a call into
		 * CUPTI goes through, maybe holding their locks: borrowed only when nothing else is.
		 */
		if (read_task_file(pid, tid, "comm", buf, sizeof(buf)) > 0 &&
		    (!strncmp(buf, "cuda", 4) || !strncmp(buf, "nccl", 4)))
			rank += RANK_LIBRARY_THREAD;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			nc = realloc(c, cap * sizeof(*c));
			if (!nc) {
				ret = -ENOMEM;
				break;
			}
			c = nc;
		}
		c[cnt].tid = tid;
		c[cnt++].rank = rank;
	}
	closedir(dir);
	if (ret) {
		free(c);
		return ret;
	}
	if (cnt)
		qsort(c, cnt, sizeof(*c), cmp_candidate);
	*out = c;
	*n = cnt;
	return 0;
}

/* Lets go of a thread whose registers were never changed. */
static void detach_untouched(struct remote_thread *t)
{
	if (t->stopped && !t->gone)
		ptrace(PTRACE_DETACH, t->tid, 0, 0);
	free(t->xstate.iov_base);
	free(t->held);
	free(t);
}

/*
 * Waits for the stop PTRACE_INTERRUPT asked for. A signal on its way to the thread may stop
 * it first: it is passed on at once, siginfo untouched (no call runs yet), and the interrupt
 * stop follows. 0, -EAGAIN (a job-control stop: the process is stopped, nothing to borrow),
 * -ESRCH, -ETIMEDOUT.
 */
static int wait_interrupt(struct remote_thread *t, uint64_t deadline)
{
	int status, r;

	for (;;) {
		r = wait_stop(t, deadline, &status);
		if (r < 0)
			return r;
		if (!r)
			return -ETIMEDOUT;
		if (event_stop(status))
			return WSTOPSIG(status) == SIGTRAP ? 0 : -EAGAIN;
		r = resume(t, status >> 16 ? 0 : WSTOPSIG(status));
		if (r)
			return r;
	}
}

/*
 * The registers and the XSAVE area; refuses what our call cannot handle: a 32-bit thread
 * (another ABI) and a CET shadow stack (our ret to 0 would not match it).
 */
static int save_state(struct remote_thread *t, char *err, size_t errlen)
{
	uint64_t ssp = 0;
	struct iovec shstk = { &ssp, sizeof(ssp) };
	void *x;

	if (ptrace(PTRACE_GETREGS, t->tid, 0, &t->saved))
		return -errno;
	if (t->saved.cs != USER64_CS) {
		snprintf(err, errlen, "thread %d runs 32-bit code: not supported", t->tid);
		return -EOPNOTSUPP;
	}
	t->xstate.iov_base = malloc(XSTATE_MAX);
	t->xstate.iov_len = XSTATE_MAX;
	if (!t->xstate.iov_base)
		return -ENOMEM;
	if (ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &t->xstate)) {
		int e = errno;

		snprintf(err, errlen, "thread %d: cannot read its FPU state: %s", t->tid,
			 strerror(e));
		return -e;
	}
	x = realloc(t->xstate.iov_base, t->xstate.iov_len);
	if (x)
		t->xstate.iov_base = x;
	if (!ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_SHSTK, &shstk)) {
		snprintf(err, errlen, "thread %d runs with a CET shadow stack: not supported",
			 t->tid);
		return -EOPNOTSUPP;
	}
	t->data_sp = t->saved.rsp - RED_ZONE;
	return 0;
}

/*
 * Seizes tid and keeps it if it stopped at a safe point: 0 and *out, -EAGAIN (not safe now,
 * let go), -ESRCH (gone), or the error that ends the seize (-EPERM, -EBUSY, ...).
 */
static int try_thread(pid_t pid, pid_t tid, uint64_t deadline, struct remote_thread **out,
		      char *err, size_t errlen)
{
	struct remote_thread *t = calloc(1, sizeof(*t));
	pid_t tracer;
	int ret;

	if (!t)
		return -ENOMEM;
	t->pid = pid;
	t->tid = tid;
	if (ptrace(PTRACE_SEIZE, tid, 0, 0)) {
		ret = -errno;
		free(t);
		if (ret != -EPERM)
			return ret;
		/* EPERM is also what a second tracer gets */
		tracer = tracer_of(pid, tid);
		return tracer ? busy_error(pid, tracer, err, errlen) : perm_error(err, errlen);
	}
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0)) {
		ret = -errno;
		detach_untouched(t);
		return ret;
	}
	/* it was asleep: give it the full grace even when the seize's time is nearly up */
	if (deadline < now_ms() + STOP_GRACE_MS)
		deadline = now_ms() + STOP_GRACE_MS;
	ret = wait_interrupt(t, deadline);
	if (ret == -ETIMEDOUT) {
		/* cannot detach a running tracee: it stops later, and stays ours until we exit */
		snprintf(err, errlen,
			 "thread %d did not stop within %d ms (uninterruptible sleep); it stays "
			 "attached to this thread", tid, STOP_GRACE_MS);
		free(t);
		return ret;
	}
	if (ret) {
		detach_untouched(t);
		return ret;
	}
	ret = save_state(t, err, errlen);
	if (!ret && ((int64_t)t->saved.orig_rax < 0 ||
		     (int64_t)t->saved.rax == -ERESTART_RESTARTBLOCK))
		ret = -EAGAIN;	/* woke up meanwhile, or its restart needs the restart block */
	if (ret) {
		detach_untouched(t);
		return ret;
	}
	*out = t;
	return 0;
}

/*
 * The thread's errno, put back on release: the functions we call set it freely (dlopen's path
 * search does), and the interrupted code may read it after its wait returns.
 */
static int note_errno(struct remote_thread *t)
{
	char err[256];
	uint64_t fn = remote_sym(t->pid, "libc.so.6", "__errno_location", err, sizeof(err));
	uint64_t addr = 0;
	int ret;

	/* a static or non-glibc program: errno stays as the calls leave it */
	if (!fn)
		return 0;
	ret = remote_thread__call(t, fn, NULL, 0, STOP_GRACE_MS, &addr, err, sizeof(err));
	if (ret)
		return ret;
	if (addr && !read_mem(t->pid, addr, &t->saved_errno, sizeof(t->saved_errno)))
		t->errno_addr = addr;
	return 0;
}

int remote_thread__seize(pid_t pid, int timeout_ms, struct remote_thread **out, char *err,
			 size_t errlen)
{
	uint64_t deadline = now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
	struct remote_thread *t = NULL;
	struct candidate *c;
	size_t n, i;
	int ret;

	*out = NULL;
	err[0] = '\0';
	if (pid <= 0 || pid == getpid()) {
		snprintf(err, errlen, "PID %d: not a process we can call into", pid);
		return -EINVAL;
	}
	for (;;) {
		ret = list_candidates(pid, &c, &n, err, errlen);
		if (ret)
			return ret;
		for (i = 0, ret = -EAGAIN; i < n; i++) {
			ret = try_thread(pid, c[i].tid, deadline, &t, err, errlen);
			/* borrowed, or an error that another thread would get too */
			if (ret != -EAGAIN && ret != -ESRCH)
				break;
		}
		free(c);
		if (!ret)
			break;
		if (ret != -EAGAIN && ret != -ESRCH)
			return ret;
		if (now_ms() >= deadline) {
			snprintf(err, errlen,
				 "no thread of PID %d waited at a safe point within %d ms (all "
				 "busy, or in sleeps that restart through their restart block)",
				 pid, timeout_ms);
			return -ETIMEDOUT;
		}
		sleep_us(RESCAN_MS * 1000);
	}
	ret = note_errno(t);
	if (ret) {
		snprintf(err, errlen, "thread %d: reading its errno: %s", t->tid, strerror(-ret));
		remote_thread__release(t);
		return ret;
	}
	*out = t;
	return 0;
}

pid_t remote_thread__tid(const struct remote_thread *t)
{
	return t->tid;
}

uint64_t remote_thread__push_data(struct remote_thread *t, const void *data, size_t len)
{
	uint64_t addr;

	if (!t || t->gone || !t->stopped || !len || len > PUSH_MAX ||
	    t->saved.rsp - RED_ZONE - t->data_sp + len > PUSH_MAX)
		return 0;
	addr = (t->data_sp - len) & ~15ull;
	if (write_mem(t->pid, addr, data, len))
		return 0;
	t->data_sp = addr;
	return addr;
}

/* ---- calling ------------------------------------------------------------------------------- */

/* Lays out the call: rip = fn, arguments, and a return address of 0 below the pushed data. */
static int start_call(struct remote_thread *t, uint64_t fn, const uint64_t *args, int nargs,
		      uint64_t *sp)
{
	struct user_regs_struct r = t->saved;
	unsigned long long *argregs[6] = { &r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9 };
	uint64_t zero = 0;
	int i, ret;

	/* at the function's entry (rsp + 8) % 16 == 0, as after a call instruction */
	*sp = (t->data_sp & ~15ull) - 8;
	t->data_sp = t->saved.rsp - RED_ZONE;
	ret = write_mem(t->pid, *sp, &zero, sizeof(zero));
	if (ret)
		return ret;
	for (i = 0; i < nargs; i++)
		*argregs[i] = args[i];
	r.rip = fn;
	r.rsp = *sp;
	r.rax = 0;		/* no vector registers used by a variadic callee */
	r.orig_rax = -1ull;	/* not in a system call: the kernel restarts nothing at our rip */
	r.eflags &= ~(unsigned long long)(EFLAGS_DF | EFLAGS_TF);
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &r)) {
		t->gone = errno == ESRCH;
		return -errno;
	}
	return 0;
}

static const char *signame(int sig)
{
	const char *s = sigabbrev_np(sig);

	return s ? s : "?";
}

/*
 * Runs the call laid out until it returns to 0 (rax in *ret), crashes, or times out;
 * meanwhile signals are held and group stops passed through (the call has to end).
 */
static int run_call(struct remote_thread *t, uint64_t sp, int timeout_ms, uint64_t *ret,
		    char *err, size_t errlen)
{
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	bool interrupted = false;
	struct user_regs_struct r;
	siginfo_t si;
	int status, w, e;

	if ((e = resume(t, 0)))
		return e;
	for (;;) {
		w = wait_stop(t, deadline, &status);
		if (w < 0) {
			snprintf(err, errlen, "thread %d exited during the call", t->tid);
			return -ESRCH;
		}
		if (!w && !interrupted) {
			if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0)) {
				t->gone = true;
				return -ESRCH;
			}
			interrupted = true;
			deadline = now_ms() + STOP_GRACE_MS;
			continue;
		}
		if (!w) {
			snprintf(err, errlen,
				 "thread %d: the call did not return within %d ms and the thread "
				 "does not stop (uninterruptible sleep)", t->tid, timeout_ms);
			return -ETIMEDOUT;
		}
		if (event_stop(status) && interrupted) {
			snprintf(err, errlen, "thread %d: the call did not return within %d ms; "
				 "abandoned where it was", t->tid, timeout_ms);
			return -ETIMEDOUT;
		}
		if (status >> 16) {		/* a group stop, or an interrupt of before */
			if ((e = resume(t, 0)))
				return e;
			continue;
		}
		if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si))
			return -ESRCH;
		if (synchronous_fault(&si)) {
			if (ptrace(PTRACE_GETREGS, t->tid, 0, &r))
				return -ESRCH;
			/* our return: ret popped the 0 we pushed and jumped to it */
			if (si.si_signo == SIGSEGV && r.rip == 0 && r.rsp == sp + 8) {
				*ret = r.rax;
				return 0;
			}
			snprintf(err, errlen, "thread %d: the call crashed: SIG%s at rip 0x%llx "
				 "(address %p)", t->tid, signame(si.si_signo), r.rip, si.si_addr);
			return -EFAULT;
		}
		if ((e = hold_signal(t, &si)) || (e = resume(t, 0)))
			return e;
	}
}

int remote_thread__call(struct remote_thread *t, uint64_t fn, const uint64_t *args, int nargs,
			int timeout_ms, uint64_t *ret, char *err, size_t errlen)
{
	uint64_t sp, rax = 0;
	int e, r;

	err[0] = '\0';
	if (!t || nargs < 0 || nargs > 6 || (nargs && !args) || timeout_ms < 0) {
		snprintf(err, errlen, "bad call: %d arguments", nargs);
		return -EINVAL;
	}
	if (t->gone || !t->stopped) {
		snprintf(err, errlen, "thread %d is not held any more", t->tid);
		return -ESRCH;
	}
	e = start_call(t, fn, args, nargs, &sp);
	if (!e)
		e = run_call(t, sp, timeout_ms, &rax, err, errlen);
	if (t->stopped && !t->gone) {
		r = restore_regs(t);
		if (r && !e)
			e = r;
	}
	if (e && !err[0])
		snprintf(err, errlen, "thread %d: %s", t->tid, strerror(-e));
	if (!e && ret)
		*ret = rax;
	return e;
}

/* ---- letting go ---------------------------------------------------------------------------- */

/*
 * Stops a thread a failed call left running (a call stuck in the kernel past the grace, that
 * may have come back by now). Signals meanwhile are held; a fault is the call's and dropped.
 */
static bool regain(struct remote_thread *t)
{
	uint64_t deadline = now_ms() + STOP_GRACE_MS;
	siginfo_t si;
	int status;

	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0))
		return false;
	for (;;) {
		if (wait_stop(t, deadline, &status) <= 0)
			return false;
		if (status >> 16)
			return true;
		if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si))
			return false;
		if (synchronous_fault(&si))
			return true;
		if (hold_signal(t, &si) || resume(t, 0))
			return false;
	}
}

/*
 * Delivers the held signals in order, each with its own siginfo, then detaches. A signal is
 * only passed on from its signal-delivery stop, so each is raised again with tgkill(), which
 * brings the thread to that stop, where its siginfo is put back and it is injected on the
 * next resume (the last one by PTRACE_DETACH). Signals that arrive meanwhile pass as they come.
 */
static void deliver_and_detach(struct remote_thread *t)
{
	int status, inject = 0, w;
	size_t i;

	for (i = 0; i < t->nheld; i++) {
		const siginfo_t *si = &t->held[i];

		if (syscall(SYS_tgkill, t->pid, t->tid, si->si_signo))
			return;		/* gone */
		for (;;) {
			if (resume(t, inject))
				return;
			inject = 0;
			w = wait_stop(t, now_ms() + STOP_GRACE_MS, &status);
			if (w < 0)
				return;
			if (!w) {
				/*
				 * Blocked by now (the call changed the mask, or a handler runs
				 * long): it stays pending, with tgkill's siginfo; so do the rest.
				 */
				if (!regain(t))
					return;
				for (i++; i < t->nheld; i++)
					syscall(SYS_tgkill, t->pid, t->tid, t->held[i].si_signo);
				goto detach;
			}
			if (status >> 16)
				continue;
			inject = WSTOPSIG(status);
			if (inject == si->si_signo) {
				ptrace(PTRACE_SETSIGINFO, t->tid, 0, si);
				break;
			}
		}
	}
detach:
	ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)inject);
}

void remote_thread__release(struct remote_thread *t)
{
	if (!t)
		return;
	if (!t->gone && !t->stopped && !regain(t))
		goto out;	/* stuck: stays attached to this thread until it exits */
	if (!t->gone) {
		if (t->errno_addr)
			write_mem(t->pid, t->errno_addr, &t->saved_errno, sizeof(t->saved_errno));
		if (!restore_regs(t))
			deliver_and_detach(t);
	}
out:
	free(t->xstate.iov_base);
	free(t->held);
	free(t);
}

/* ---- symbols ------------------------------------------------------------------------------- */

struct lib_map {
	uint64_t start, end;
	unsigned long inode;
	char path[PATH_MAX];
};

static bool base_name_matches(const char *path, const char *prefix)
{
	const char *base = strrchr(path, '/');

	return base && !strncmp(base + 1, prefix, strlen(prefix));
}

struct find_lib {
	const char *prefix;
	struct lib_map *m;
};

static int is_lib(void *ctx, const struct maps_entry *e)
{
	struct find_lib *fl = ctx;
	size_t len = strlen(e->path);

	if (e->pgoff || e->path[0] != '/')
		return 0;
	if (len > 10 && !strcmp(e->path + len - 10, " (deleted)"))
		len -= 10;
	if (len >= sizeof(fl->m->path))
		return 0;
	memcpy(fl->m->path, e->path, len);
	fl->m->path[len] = '\0';
	if (!base_name_matches(fl->m->path, fl->prefix))
		return 0;
	fl->m->start = e->start;
	fl->m->end = e->end;
	fl->m->inode = e->ino;
	return 1;
}

/* The first mapping of file offset 0 of a file whose base name starts with prefix. */
static int find_mapping(pid_t pid, const char *prefix, struct lib_map *m, char *err,
			size_t errlen)
{
	struct find_lib fl = { prefix, m };
	int ret = maps_file__each(pid, is_lib, &fl);

	if (ret == -ENOENT) {
		snprintf(err, errlen, "no process %d", pid);
		return -ESRCH;
	}
	if (ret < 0) {
		snprintf(err, errlen, "/proc/%d/maps: %s", pid, strerror(-ret));
		return ret;
	}
	if (!ret) {
		snprintf(err, errlen, "PID %d maps no file named %s*", pid, prefix);
		return -ENOENT;
	}
	return 0;
}

/*
 * The file as the process mapped it: map_files names the very mapping (even deleted or
 * replaced since); /proc/PID/root the path in its mount namespace (then checked by inode).
 */
static int open_mapped(pid_t pid, const struct lib_map *m)
{
	char path[PATH_MAX + 64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, m->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) || st.st_ino != m->inode)) {
		close(fd);
		return -ESTALE;
	}
	return fd < 0 ? -errno : fd;
}

/* The first PT_LOAD's p_vaddr, page-aligned: what the mapping of file offset 0 starts at. */
static int first_load_vaddr(Elf *elf, uint64_t *vaddr)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	size_t nph, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nph))
		return -ENOEXEC;
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset >= page)
			return -ENOEXEC;	/* then offset 0 is not mapped by it */
		*vaddr = ph.p_vaddr & ~(page - 1);
		return 0;
	}
	return -ENOEXEC;
}

/*
 * name's value in .dynsym: its default version (name@@V) before a hidden older one (name@V,
 * which glibc keeps for programs linked long ago).
 */
static int dynsym_value(Elf *elf, const char *name, GElf_Sym *out, char *err, size_t errlen)
{
	Elf_Data *syms = NULL, *vers = NULL;
	Elf_Scn *scn = NULL;
	size_t strtab = 0, n = 0, i;
	bool found = false;
	GElf_Versym v;
	GElf_Shdr sh;
	GElf_Sym s;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM && sh.sh_entsize) {
			syms = elf_getdata(scn, NULL);
			strtab = sh.sh_link;
			n = sh.sh_size / sh.sh_entsize;
		} else if (sh.sh_type == SHT_GNU_versym) {
			vers = elf_getdata(scn, NULL);
		}
	}
	if (!syms) {
		snprintf(err, errlen, "no .dynsym");
		return -ENOENT;
	}
	for (i = 1; i < n; i++) {
		const char *sn;

		if (!gelf_getsym(syms, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		sn = elf_strptr(elf, strtab, s.st_name);
		if (!sn || strcmp(sn, name))
			continue;
		if (GELF_ST_TYPE(s.st_info) == STT_GNU_IFUNC) {
			snprintf(err, errlen, "%s is an IFUNC: its address is a resolver's", name);
			return -ENOTSUP;
		}
		*out = s;
		found = true;
		if (!vers || !gelf_getversym(vers, (int)i, &v) || !(v & 0x8000))
			return 0;	/* the default version */
	}
	if (!found)
		snprintf(err, errlen, "no dynamic symbol %s", name);
	return found ? 0 : -ENOENT;
}

uint64_t remote_sym(pid_t pid, const char *lib_prefix, const char *name, char *err,
		    size_t errlen)
{
	struct lib_map m;
	uint64_t vaddr, addr = 0;
	GElf_Sym s;
	Elf *elf = NULL;
	int fd;

	err[0] = '\0';
	if (find_mapping(pid, lib_prefix, &m, err, errlen))
		return 0;
	fd = open_mapped(pid, &m);
	if (fd < 0) {
		snprintf(err, errlen, "PID %d: cannot open %s: %s", pid, m.path, strerror(-fd));
		return 0;
	}
	if (elf_version(EV_CURRENT) != EV_NONE)
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(err, errlen, "%s: not an ELF file", m.path);
	} else if (first_load_vaddr(elf, &vaddr)) {
		snprintf(err, errlen, "%s: no PT_LOAD at file offset 0", m.path);
	} else if (!dynsym_value(elf, name, &s, err, errlen)) {
		addr = m.start - vaddr + s.st_value;
	} else {
		char why[128];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s: %s", m.path, why);
	}
	elf_end(elf);
	close(fd);
	return addr;
}
