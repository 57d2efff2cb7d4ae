// SPDX-License-Identifier: MIT
/*
 * Entry points of libxpu-cupti.so. The CUDA driver calls InitializeInjection() once during
 * cuInit() because xpu-record put this library in CUDA_INJECTION64_PATH; or xpu-record -p loads
 * it into a running process and calls xpu_cupti_attach() there (record/gpu_attach.c). Whatever
 * fails, the target keeps running: we log one line, tell the recorder when we can, and step
 * aside. When the recorder asks (STOP: it ended before the process), collection stops and the
 * process goes on at its own speed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cupti_wire.h"
#include "event_ring.h"
#include "inproc_walk.h"
#include "xpu_cupti.h"

uint32_t xc_pid;

static bool active;		/* activity collection running in this process */
static bool attached;		/* loaded by xpu-record -p into a running process */
static int claimed;		/* 1 while this process reports to a recorder (or tries to) */
static pthread_t flusher;
static bool flusher_started;
static bool flusher_stop;
static unsigned flush_ms = 500;
/*
 * While launches are walked in process, the flusher empties the threads' event rings this
 * often: at 25k launches/s a ring of RING_BYTES holds several times that period's events.
 */
#define RING_DRAIN_MS 20
#define WALK_STATS_MS 1000
#define RINGS 64
#define RING_BYTES (1ull << 20)

__attribute__((constructor)) static void xc_ctor(void)
{
	const char *v = getenv("XPU_CUPTI_VERBOSE");

	xc_verbose = v && *v && strcmp(v, "0");
	xc_pid = (uint32_t)getpid();
}

/*
 * CUPTI's own periodic flush only hands back full buffers; a quiet process would keep its last
 * records until exit and lose them to a SIGKILL. Ask for completed records every flush_ms.
 * The same thread finishes the trace when a terminating signal arrives (see fatal_handler).
 */
static int wake_pipe[2] = { -1, -1 };
static volatile sig_atomic_t fatal_signal;
static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void flush_and_die(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	/*
	 * The target's threads would go on launching until the signal's default action ends them:
	 * hold every new API call first, then stop collecting, or the forced flush chases an
	 * endless stream of new records (seen with a launch loop: the target outlived the signal
	 * by minutes). Holding rather than unsubscribing keeps launches and kernels paired: a
	 * launch in the gap between unsubscribing and disabling activity had a kernel and no stack.
	 * A launch whose marker fired just before the hold may still lose its kernel (one per
	 * thread at most). No unsubscribe: the process dies next.
	 */
	callbacks__hold_new_calls();
	activity__stop();
	activity__flush(true);
	active = false;
	transport__finish(activity__cupti_dropped());
	sigaction(sig, &dfl, NULL);
	kill(getpid(), sig);
}

/*
 * The recorder ended first (STOP, or its socket closed): no callback enters us any more, every
 * kind goes off, the last records go out with DONE, and CUPTI detaches, so the process runs on
 * as it did before. Runs on the flusher thread, never inside a callback.
 */
static void stop_collecting(void)
{
	struct timespec settle = { 0, 20 * 1000000 };
	uint64_t dropped;

	/*
	 * Activity off first: a launch after it has a stack and no kernel, which costs nothing,
	 * where one between an unsubscribe and the disable would have a kernel and no stack.
	 */
	activity__stop();
	callbacks__unsubscribe();
	/* a callback already past CUPTI's dispatch finishes in this time */
	nanosleep(&settle, NULL);
	activity__flush(true);
	active = false;
	dropped = activity__cupti_dropped();	/* takes the transport's lock itself */
	transport__lock();
	transport__process_state(XPU_GPU_PROC_DETACHED, dropped, 0);
	transport__unlock();
	transport__finish(dropped);
	if (cupti.cuptiFinalize)
		cupti.cuptiFinalize();
	xc_info("pid %d: collection stopped at the recorder's request", (int)xc_pid);
}

static bool inproc_on(void)
{
	return __atomic_load_n(&xc_inproc, __ATOMIC_ACQUIRE) == XC_INPROC_ON;
}

static void *flusher_main(void *arg)
{
	struct pollfd p[2] = { { .fd = wake_pipe[0], .events = POLLIN },
			       { .fd = transport__fd(), .events = POLLIN } };
	uint64_t next_flush = xc_mono_ns() + flush_ms * 1000000ull, next_stats = 0;

	while (!__atomic_load_n(&flusher_stop, __ATOMIC_ACQUIRE)) {
		uint64_t now = xc_mono_ns();
		int wait_ms = now < next_flush ? (int)((next_flush - now) / 1000000ull) + 1 : 0;
		char drain[16];

		/* the activity flush keeps its own period; only the rings are drained more often */
		if (inproc_on() && wait_ms > RING_DRAIN_MS)
			wait_ms = RING_DRAIN_MS;
		p[0].revents = p[1].revents = 0;
		if (poll(p, 2, wait_ms) > 0 && (p[0].revents & POLLIN) &&
		    read(wake_pipe[0], drain, sizeof(drain)) < 0)
			p[0].revents = 0;
		if (__atomic_load_n(&flusher_stop, __ATOMIC_ACQUIRE))
			break;
		if (fatal_signal) {
			flush_and_die(fatal_signal);
			break;
		}
		/* closed under us (the transport lost the connection): poll would spin on it */
		if (p[1].revents & POLLNVAL)
			p[1].fd = -1;
		if ((p[1].revents & ~POLLNVAL) && transport__stop_requested()) {
			stop_collecting();
			flusher_started = false;	/* at exit there is nothing to join */
			pthread_detach(pthread_self());
			close(wake_pipe[0]);
			close(wake_pipe[1]);
			wake_pipe[0] = wake_pipe[1] = -1;
			/* a later xpu-record -p may start collecting again */
			__atomic_store_n(&claimed, 0, __ATOMIC_RELEASE);
			break;
		}
		now = xc_mono_ns();
		if (inproc_on()) {
			if (event_ring__pool_busy())
				transport__send_events();
			if (now >= next_stats) {
				transport__send_walk_stats();
				next_stats = now + WALK_STATS_MS * 1000000ull;
			}
		}
		if (now >= next_flush) {
			activity__flush(false);
			next_flush = xc_mono_ns() + flush_ms * 1000000ull;
		}
	}
	return NULL;
}

/* A launching thread filled its ring past half: drain now rather than at the period. */
static void ring_wake(void)
{
	int fd = __atomic_load_n(&wake_pipe[1], __ATOMIC_RELAXED);
	char b = 0;

	if (fd >= 0 && write(fd, &b, 1) < 0)
		b = 1;	/* full pipe: the flusher is awake anyway */
}

/*
 * The recorder sends its SHARE right after reading HELLO, or never (launch stacks off, BPF
 * walks only, -g dwarf). Launches made before the flusher would read it all take the marker;
 * a program that launches at once (every short one) would have none walked in process. So
 * wait for it here, before any callback, at most XPU_CUPTI_SHARE_WAIT_MS: a recorder that
 * knows whether it sends one sets it (0: none comes), and the default bounds what waiting
 * for nothing costs a process at CUDA's initialization.
 */
#define SHARE_WAIT_DEFAULT_MS 50
#define SHARE_WAIT_MAX_MS 5000

static void await_share(void)
{
	const char *env = getenv("XPU_CUPTI_SHARE_WAIT_MS");
	long ms = SHARE_WAIT_DEFAULT_MS;

	if (env && *env >= '0' && *env <= '9')
		ms = strtol(env, NULL, 10);
	if (ms > SHARE_WAIT_MAX_MS)
		ms = SHARE_WAIT_MAX_MS;
	if (ms > 0 && transport__await_share((unsigned int)ms))
		xc_info("pid %d: the recorder's tables mapped before the first launch", (int)xc_pid);
}

/*
 * The in-process launch walk, once per process (a later attach reuses it): off with
 * XPU_CUPTI_INPROC=0 (diagnosis), or when it cannot be set up; the recorder's tables are then
 * ignored and every launch takes the marker.
 */
static void inproc_setup(void)
{
	static int done, err;
	const char *env = getenv("XPU_CUPTI_INPROC");

	if (env && !strcmp(env, "0")) {
		transport__inproc_allow(false);
		return;
	}
	xc_inproc_check = env && !strcmp(env, "check");
	if (!done) {
		done = 1;
		err = inproc_walk__init();
		if (!err)
			err = event_ring__pool_init(RINGS, RING_BYTES);
		if (err)
			xc_log("no in-process launch walk (%s): launch stacks come from BPF",
			       strerror(-err));
		else
			event_ring__pool_set_wake(ring_wake);
	}
	transport__inproc_allow(!err);
}

/*
 * A SIGINT/SIGTERM/SIGHUP with the default action would kill the process without running
 * atexit, losing up to flush_ms of GPU records. Where the target left the default action, our
 * handler only wakes the flusher (async-signal-safe), which flushes, sends DONE, restores the
 * default action and re-raises: the target still dies of the same signal. A target that
 * installs its own handler later simply replaces ours.
 */
static void fatal_handler(int sig)
{
	int saved = errno;
	char b = 1;

	if (!flusher_started || fatal_signal) {
		/* no flusher, or a second signal while flushing: die now, as without us */
		struct sigaction dfl = { .sa_handler = SIG_DFL };

		sigaction(sig, &dfl, NULL);
		kill(getpid(), sig);
	} else {
		fatal_signal = sig;
		if (write(wake_pipe[1], &b, 1) < 0)
			b = 0;
	}
	errno = saved;
}

static void fatal_handlers_install(void)
{
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction old, sa = { .sa_handler = fatal_handler, .sa_flags = SA_RESTART };

		if (sigaction(fatal_signals[i], NULL, &old) || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		sigemptyset(&sa.sa_mask);
		sigaction(fatal_signals[i], &sa, NULL);
	}
}

static void flusher_start(void)
{
	sigset_t all, old;
	const char *env = getenv("XPU_CUPTI_FLUSH_MS");

	if (env && atoi(env) >= 10)
		flush_ms = (unsigned)atoi(env);
	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK)) {
		xc_err_once("cannot start the flush thread: GPU records arrive late");
		return;
	}
	/* the target's signals must keep going to the target's threads */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (!pthread_create(&flusher, NULL, flusher_main, NULL)) {
		flusher_started = true;
		pthread_setname_np(flusher, "xpu-cupti-flush");
	} else {
		xc_err_once("cannot start the flush thread: GPU records arrive late");
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* a running process's signal dispositions are its own: an attach leaves them alone */
	if (flusher_started && !attached)
		fatal_handlers_install();
}

static void flusher_join(void)
{
	char b = 1;

	if (!flusher_started)
		return;
	__atomic_store_n(&flusher_stop, true, __ATOMIC_RELEASE);
	if (write(wake_pipe[1], &b, 1) < 0)
		b = 0;
	pthread_join(flusher, NULL);
	flusher_started = false;
}

static void at_exit(void)
{
	/* a forked child inherits this handler but not the connection */
	if ((uint32_t)getpid() != xc_pid)
		return;
	if (active) {
		flusher_join();
		activity__flush(true);
		active = false;
	}
	transport__finish(activity__cupti_dropped());
}

static void atfork_child(void)
{
	/*
	 * CUDA cannot be used in a child forked from a CUDA process; it also must not write into
	 * the parent's connection. If it execs, the new image loads us afresh and connects.
	 */
	active = false;
	flusher_started = false;
	activity__atfork_child();
	transport__abandon();
	event_ring__pool_atfork_child();
	api_records__atfork_child();
	xc_pid = (uint32_t)getpid();
}

static void report_and_close(uint32_t state)
{
	transport__lock();
	transport__process_state(state, 0, 0);
	transport__unlock();
	transport__finish(0);
}

/* A non-negative integer from the environment, -1 when unset or anything else. */
static int32_t env_int(const char *name)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end || v > INT32_MAX ? -1 : (int32_t)v;
}

/*
 * The process's place in a distributed job, as torchrun (and most launchers) set it, so that
 * a report splits ranks even within one recording. Nothing is sent outside such a job.
 */
static void send_process_env(void)
{
	struct xpu_rec_process_env e = {
		.ts_ns = xc_mono_ns(),
		.pid = xc_pid,
		.rank = env_int("RANK"),
		.local_rank = env_int("LOCAL_RANK"),
		.world_size = env_int("WORLD_SIZE"),
		.local_world_size = env_int("LOCAL_WORLD_SIZE"),
	};

	if (e.rank < 0 && e.local_rank < 0 && e.world_size < 0 && e.local_world_size < 0)
		return;
	transport__lock();
	transport__append(XPU_REC_PROCESS_ENV, &e, sizeof(e));
	transport__flush();
	transport__unlock();
}


/* Everything InitializeInjection() and xpu_cupti_attach() share. 0 once collecting. */
static int start_collection(uint32_t flags)
{
	const char *env;
	enum xc_graph_mode mode = XC_GRAPH_NODE;
	uint32_t version = 0;
	int64_t offset = 0;
	CUptiResult r;
	int err;

	xc_pid = (uint32_t)getpid();
	pthread_atfork(NULL, NULL, atfork_child);

	env = getenv("XPU_CUDA_GRAPHS");
	if (env && !strcmp(env, "graph")) {
		mode = XC_GRAPH_WHOLE;
		flags |= XPU_CUPTI_HELLO_GRAPH_MODE;
	} else if (env && !strcmp(env, "replay")) {
		/* per-node records under the replay's stack only: no graph node callbacks */
		graph_nodes__off();
	} else if (env && *env && strcmp(env, "node")) {
		xc_log("XPU_CUDA_GRAPHS=%s is not 'node', 'replay' or 'graph': using 'node'", env);
	}

	err = cupti_loader__load();
	if (err) {
		if (!transport__connect(0, flags | XPU_CUPTI_HELLO_NO_CUPTI)) {
			send_process_env();
			report_and_close(XPU_GPU_PROC_NO_CUPTI);
		}
		return err;
	}
	cupti.cuptiGetVersion(&version);
	/* connect before touching CUPTI: without a recorder there is nothing to collect for */
	err = transport__connect(version, flags);
	if (err)
		return err;
	send_process_env();
	if (attached) {
		transport__lock();
		transport__process_state(XPU_GPU_PROC_ATTACHED, 0, 0);
		transport__flush();
		transport__unlock();
	}

	inproc_setup();
	await_share();
	err = callbacks__subscribe();
	if (err) {
		/* Nsight or Kineto owns CUPTI: change nothing of theirs, not even the clock */
		report_and_close(XPU_GPU_PROC_SUBSCRIBE_FAILED);
		return err;
	}
	r = cupti.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (r != CUPTI_SUCCESS)
		xc_log("cuptiSetThreadIdType(SYSTEM): %s: GPU API thread ids may not be kernel tids",
		       cupti_loader__strerror(r));
	if (!clock__setup(&offset)) {
		transport__lock();
		transport__process_state(XPU_GPU_PROC_CLOCK_FALLBACK, 0, offset);
		transport__flush();
		transport__unlock();
	}
	err = activity__start(mode);
	if (err) {
		callbacks__unsubscribe();
		report_and_close(XPU_GPU_PROC_SUBSCRIBE_FAILED);
		return err;
	}
	active = true;
	atexit(at_exit);
	flusher_start();
	xc_info("pid %d: CUPTI %u from %s, graphs as %s%s", (int)xc_pid, version, cupti.path,
		mode == XC_GRAPH_WHOLE ? "graph" : "node", attached ? ", attached mid-run" : "");
	return 0;
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	static int once;

	if (__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL) ||
	    __atomic_exchange_n(&claimed, 1, __ATOMIC_ACQ_REL))
		return 1;
	if (start_collection(0))
		__atomic_store_n(&claimed, 0, __ATOMIC_RELEASE);
	return 1;
}

/*
 * xpu-record -p: called in the running process (through ptrace, on one of its threads stopped
 * in a system call) right after this library was loaded there, with the recorder's socket.
 * CUPTI starts as InitializeInjection() starts it, mid-run: work queued before is not claimed.
 * 0, or a negative errno (-EALREADY: this process already reports to a recorder). After a
 * recording's STOP the process can be attached to again.
 */
__attribute__((visibility("default"))) int xpu_cupti_attach(const char *socket_path)
{
	int err;

	if (__atomic_exchange_n(&claimed, 1, __ATOMIC_ACQ_REL))
		return -EALREADY;
	attached = true;
	flusher_stop = false;
	transport__set_socket_path(socket_path);
	err = start_collection(XPU_CUPTI_HELLO_ATTACHED);
	if (err)
		__atomic_store_n(&claimed, 0, __ATOMIC_RELEASE);
	return err;
}


/*
 * NVTX finds its tool through NVTX_INJECTION64_PATH. Pointing that at this library (rather than
 * at a libcupti whose path the recorder cannot know) lets NVTX initialize even before CUDA does;
 * we hand the call to the process's libcupti, which then reports ranges as MARKER records.
 */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(void *get_export_table)
{
	if (cupti_loader__load() || !cupti.InitializeInjectionNvtx2)
		return 0;
	return cupti.InitializeInjectionNvtx2(get_export_table);
}
