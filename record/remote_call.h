/* SPDX-License-Identifier: MIT */
/*
 * Calls a function inside another, running process through ptrace, as debuggers do: for
 * xpu-record -p PID, which must load libxpu-cupti.so into a CUDA process that is already
 * running (dlopen() it there, then call its start function). x86-64 Linux only.
 *
 * One thread of the target is borrowed: stopped where it waited in a system call, its
 * registers and extended FPU state saved, pointed at the function with a return address of 0,
 * resumed until the return faults at 0, then put back exactly as it was; its wait restarts
 * and the process never sees the visit. The other threads run on meanwhile.
 *
 * ptrace belongs to the thread that attached: every remote_thread__*() call on one
 * remote_thread must come from the thread that seized it, and no thread of the caller may
 * waitpid(-1) meanwhile (it would take the stops these functions wait for).
 */
#ifndef XPU_RECORD_REMOTE_CALL_H
#define XPU_RECORD_REMOTE_CALL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One thread of a process, held stopped under ptrace at a point safe to run a call on. */
struct remote_thread;

/*
 * Picks a thread of pid blocked in a wait that restarts cleanly (futex, poll, read, ...; see
 * /proc/PID/task/TID/syscall), seizes and interrupts it, saves its registers and FPU state,
 * and keeps it if it stopped inside that system call with a restart that does not depend on
 * the thread's restart block (which a call of ours could overwrite). Otherwise it is let go
 * and the next thread tried, the whole scan again every few ms, within timeout_ms.
 * 0 and *out, or -errno and one line in err: -ESRCH (no such process), -EPERM (ptrace not
 * permitted), -EBUSY (already traced), -ETIMEDOUT (no thread at a safe point in time),
 * -EOPNOTSUPP (32-bit code, or a CET shadow stack, which our return to 0 would violate).
 * A thread that does not stop within 2 s of being interrupted (uninterruptible sleep) cannot
 * be detached running: it stays traced by the calling thread until that thread exits.
 */
int remote_thread__seize(pid_t pid, int timeout_ms, struct remote_thread **out, char *err,
			 size_t errlen);

/* The thread borrowed, for messages (and for a test that signals it). */
pid_t remote_thread__tid(const struct remote_thread *t);

/*
 * Copies len bytes onto the thread's stack, below its red zone and below what was pushed
 * before, for the next call (a path for dlopen()). Their address in the target, 0 on error.
 * The next remote_thread__call() consumes everything pushed.
 */
uint64_t remote_thread__push_data(struct remote_thread *t, const void *data, size_t len);

/*
 * Calls fn(args[0], ..., args[nargs - 1]) on the thread: up to 6 integer or pointer
 * arguments (System V ABI), its return value (rax) in *ret. Signals that reach the thread
 * meanwhile are held and delivered by remote_thread__release(). The registers and FPU state
 * are put back after every call, whatever happened.
 * 0, or -errno and one line in err: -EFAULT (the call crashed: the target goes on, the
 * crash is not delivered), -ETIMEDOUT (no return within timeout_ms: the call was abandoned
 * where it was, so any lock it held stays held), -ESRCH (the thread exited), -EINVAL.
 */
int remote_thread__call(struct remote_thread *t, uint64_t fn, const uint64_t *args, int nargs,
			int timeout_ms, uint64_t *ret, char *err, size_t errlen);

/*
 * Puts the thread back as it was seized (registers, FPU state, errno), delivers the signals
 * it received while borrowed, each with its own siginfo, and detaches; frees t. Safe after
 * any failure, and with NULL.
 */
void remote_thread__release(struct remote_thread *t);

/*
 * The address in pid of the dynamic symbol name (its default version) of the first mapped
 * file whose base name starts with lib_prefix ("libc.so.6", "libxpu-cupti.so"), read from the
 * file the process mapped (through /proc/PID/map_files, or /proc/PID/root, so containers
 * work). 0 and err when not found. For dlopen: libc.so.6 exports it from glibc 2.34 on, older
 * ones from libdl.so.2 only (mapped only in processes that link it).
 */
uint64_t remote_sym(pid_t pid, const char *lib_prefix, const char *name, char *err,
		    size_t errlen);

#endif
