// SPDX-License-Identifier: MIT
/*
 * One recording session: sets up the pieces in an order that loses nothing (probes attached
 * and the pid traced before the child may exec), runs the main loop (signals, periodic clock
 * and loss records) and tears down in an order that writes everything (sampling stopped, ring
 * buffer drained, CUPTI clients flushed, then the end records).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "autograd/autograd_probe.h"
#include "bpf_setup.h"
#include "clock.h"
#include "config.h"
#include "cupti_rx.h"
#include "cfi/cfi_cache.h"
#include "cfi/cfi_loader.h"
#include "inproc_share.h"
#include "driver_trace.h"
#include "gpu_attach.h"
#include "jit/jit_maps.h"
#include "kallsyms.h"
#include "output.h"
#include "proc_table.h"
#include "procmaps.h"
#include "python/py_procs.h"
#include "rb_drain.h"
#include "fd_limit.h"
#include "host_copy.h"
#include "session.h"
#include "symbol_pack.h"
#include "target.h"
#include "trace_writer.h"
#include "writer_thread.h"
#include "xpu_stats_when.h"

#define CLOCK_SYNC_INTERVAL_NS (10ull * 1000 * 1000 * 1000)
#define LOSS_POLL_INTERVAL_NS (1000ull * 1000 * 1000)
#define CLOCK_SYNC_BRACKETS 10
#define WRITER_QUEUE_BYTES (64u << 20)
#define CUPTI_STOP_TIMEOUT_MS 5000
#define GPU_LIB_NAME "libxpu-cupti.so"

struct session {
	const struct record_config *cfg;
	struct bpf_state *bpf;
	struct writer_thread *wt;
	struct procmaps *pm;
	struct host_copy *copies;	/* files only the processes reach, for the pack; may be NULL */
	struct py_procs *py;
	struct jit_maps *jit;
	struct autograd_probe *ag;	/* PyTorch autograd probes; NULL with --no-autograd */
	struct driver_trace *driver;	/* --driver, NULL when off or unavailable */
	struct cfi_loader *cfi;		/* -g cfi: the unwind-table builder */
	struct cfi_cache *cfi_cache;	/* its tables kept across recordings; NULL: none */
	struct walk_share *ws;		/* --launch-walk=inproc: what the libraries walk with */
	struct rb_drain *drain;
	struct proc_table *pt;		/* the traced processes, with the handlers below */
	struct cupti_rx *rx;
	struct target target;
	struct output out;
	pid_t pid;
	int sfd;
	char *gpu_lib;
	char *env[8];			/* NULL-terminated */
	uint64_t reported[XPU_CNT_NR];	/* counter values already written as LOST */
	uint64_t off_cpu_pending, off_cpu_open;	/* --off-cpu: left in the table at the end */
	uint64_t start_mono_ns;
	int got_signal;
	bool hard_stop;
	bool write_failed;
	bool child_reaped;
	int child_status;
	uint64_t deadline_ns;		/* --duration: when to stop; 0 = none */
	bool duration_hit;
	/* stopping a launched command: the next step if its tree still runs by then; 0 = none */
	uint64_t escalate_at_ns;
	int stop_signal;		/* the last signal the tree was sent to stop it */
};

/*
 * After the SIGINT of ^C or --duration, how long the command's tree gets to exit before
 * SIGTERM, and after SIGTERM before recording stops and leaves it running.
 */
#define STOP_GRACE_S 5
#define STOP_GRACE_NS (STOP_GRACE_S * 1000000000ull)

/*
 * libxpu-cupti.so of this very xpu-record, found from its own path so a build and an install
 * never mix: next to it (build/), or in ../lib/xpu-perf/ (make install).
 */
static char *find_gpu_lib(void)
{
	static const char *const where[] = { "", "/../lib/xpu-perf" };
	char exe[PATH_MAX], real[PATH_MAX], *path, *dir;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t i;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	dir = dirname(exe);
	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		if (asprintf(&path, "%s%s/%s", dir, where[i], GPU_LIB_NAME) < 0)
			return NULL;
		/* the target gets a plain absolute path in CUDA_INJECTION64_PATH */
		if (!access(path, R_OK) && realpath(path, real)) {
			free(path);
			return strdup(real);
		}
		free(path);
	}
	return NULL;
}

static int is_traced_cb(void *ctx, pid_t pid)
{
	struct session *s = ctx;

	return bpf_state__is_traced(s->bpf, pid);
}

/* The in-process walk's launches: to the drain, which takes them as the ring buffer's. */
static int inproc_events_cb(void *ctx, uint32_t pid, const void *entries, size_t len,
			    uint32_t launches)
{
	struct session *s = ctx;

	return rb_drain__inject(s->drain, entries, len, launches);
}

/* A library's DONE: its launches queued so far processed before it is let go to its exit. */
static int inproc_sync_cb(void *ctx, uint32_t pid, int timeout_ms)
{
	struct session *s = ctx;

	return rb_drain__sync(s->drain, timeout_ms);
}

/* Where a library keeps its threads' last launches, for the autograd node probe. */
static void inproc_slots_cb(void *ctx, uint32_t pid, uint64_t addr, uint32_t nslots)
{
	struct session *s = ctx;

	if (s->ag && bpf_state__set_autograd_inproc(s->bpf, pid, addr, nslots) && addr)
		log_info("pid %u: autograd cannot see its in-process launches", pid);
}

static size_t join_args(char *buf, size_t size, int argc, char *const *argv)
{
	size_t len = 0, n;
	int i;

	for (i = 0; i < argc && argv[i]; i++) {
		n = strlen(argv[i]) + 1;
		if (len + n > size)
			break;
		memcpy(buf + len, argv[i], n);
		len += n;
	}
	return len;
}

static void submit_clock_sync(struct session *s)
{
	struct xpu_rec_clock_sync cs;
	struct wt_rec r = {
		.type = XPU_REC_CLOCK_SYNC, .body = &cs, .body_size = sizeof(cs), .must_keep = true,
	};

	clock_sync__measure(&cs, CLOCK_SYNC_BRACKETS);
	r.ts_ns = cs.mono_ns;
	writer_thread__submit(s->wt, &r);
}

static void submit_session(struct session *s, uint64_t start_mono, uint64_t start_rt)
{
	const struct record_config *cfg = s->cfg;
	static char cmdline[16384], options[8192], kernel[400];
	struct xpu_rec_session rec = {
		.ncpu = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN),
		.page_size_bytes = (uint32_t)sysconf(_SC_PAGESIZE),
		.sample_freq_hz = cfg->freq_hz,
		.stack_mode = cfg->cfi ? XPU_STACK_CFI :
			      cfg->dwarf_bytes ? XPU_STACK_DWARF : XPU_STACK_FP,
		.dwarf_stack_bytes = cfg->dwarf_bytes,
		.dwarf_top_bytes = cfg->dwarf_top_bytes,
		.target_pid = (uint32_t)s->pid,
		.start_mono_ns = start_mono,
		.start_realtime_ns = start_rt,
	};
	struct wt_rec r = {
		.type = XPU_REC_SESSION, .ts_ns = start_mono,
		.body = &rec, .body_size = sizeof(rec), .nr_str = 6, .must_keep = true,
	};
	struct utsname u;
	size_t cmd_len, opt_len;

	uname(&u);
	snprintf(kernel, sizeof(kernel), "%s %s", u.release, u.version);
	if (cfg->kernel_stacks)
		rec.flags |= XPU_SESSION_KERNEL_STACKS;
	if (cfg->attach_pid)
		rec.flags |= XPU_SESSION_ATTACHED;
	if (s->rx)
		rec.flags |= XPU_SESSION_GPU;
	if (cfg->off_cpu)
		rec.flags |= XPU_SESSION_OFF_CPU;
	if (cfg->copy_short_walks)
		rec.flags |= XPU_SESSION_CFI_SHORT_COPIES;
	if (!cfg->no_autograd)
		rec.flags |= XPU_SESSION_AUTOGRAD;
	if (cfg->attach_pid)
		cmd_len = target__cmdline(cfg->attach_pid, cmdline, sizeof(cmdline));
	else
		cmd_len = join_args(cmdline, sizeof(cmdline), INT_MAX, cfg->cmd);

#define STR(i, field, val, n)                                            \
	do {                                                             \
		r.str[i].off = offsetof(struct xpu_rec_session, field);  \
		r.str[i].s = (val);                                      \
		r.str[i].len = (uint32_t)(n);                            \
	} while (0)
	STR(0, host_str, u.nodename, strlen(u.nodename));
	STR(1, kernel_str, kernel, strlen(kernel));
	STR(2, arch_str, u.machine, strlen(u.machine));
	STR(3, version_str, XPU_VERSION, strlen(XPU_VERSION));
	STR(4, cmdline_str, cmdline, cmd_len);
	opt_len = join_args(options, sizeof(options), cfg->argc, cfg->argv);
	STR(5, options_str, options, opt_len);
#undef STR
	writer_thread__submit(s->wt, &r);
}

static void submit_lost(struct session *s, uint32_t source, uint64_t count, uint64_t ts)
{
	struct xpu_rec_lost lost = { .ts_ns = ts, .source = source, .count = count };
	struct wt_rec r = {
		.type = XPU_REC_LOST, .ts_ns = ts,
		.body = &lost, .body_size = sizeof(lost), .must_keep = true,
	};

	writer_thread__submit(s->wt, &r);
}

/* Writes the growth of the BPF loss counters since the last call as LOST records. */
static void report_bpf_losses(struct session *s, uint64_t *cnt)
{
	uint64_t now = clock_mono_ns();

	if (bpf_state__read_counters(s->bpf, cnt))
		return;
	if (cnt[XPU_CNT_RB_LOST] > s->reported[XPU_CNT_RB_LOST])
		submit_lost(s, XPU_LOST_RINGBUF,
			    cnt[XPU_CNT_RB_LOST] - s->reported[XPU_CNT_RB_LOST], now);
	if (cnt[XPU_CNT_USTACK_ERR] + cnt[XPU_CNT_KSTACK_ERR] >
	    s->reported[XPU_CNT_USTACK_ERR] + s->reported[XPU_CNT_KSTACK_ERR])
		submit_lost(s, XPU_LOST_STACK,
			    cnt[XPU_CNT_USTACK_ERR] + cnt[XPU_CNT_KSTACK_ERR] -
				    s->reported[XPU_CNT_USTACK_ERR] -
				    s->reported[XPU_CNT_KSTACK_ERR], now);
	if (cnt[XPU_CNT_OFFCPU_LOST] > s->reported[XPU_CNT_OFFCPU_LOST])
		submit_lost(s, XPU_LOST_OFF_CPU,
			    cnt[XPU_CNT_OFFCPU_LOST] - s->reported[XPU_CNT_OFFCPU_LOST], now);
	memcpy(s->reported, cnt, sizeof(s->reported));
}

static void reap_child(struct session *s)
{
	int status;
	pid_t p;

	while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
		if (p == s->target.pid && !s->cfg->attach_pid) {
			s->child_reaped = true;
			s->child_status = status;
		}
	}
}

/*
 * A stop signal to every live process of the launched tree, then SIGCONT, as a shell's kill
 * does for a stopped job: a stopped process (SIGSTOP, ^Z, a debugger's) would hold it pending
 * and outlive the grace periods without ever seeing it.
 */
static void signal_tree(struct session *s, int sig)
{
	proc_table__signal(s->pt, sig);
	proc_table__signal(s->pt, SIGCONT);
}

/*
 * Stop signal for a launched command: the command gets it, and a line says so, so a target
 * that ignores it never leaves the user waiting in silence; session__escalate() follows up.
 */
static void forward_stop(struct session *s, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;

	/*
	 * A terminal's ^C (SI_KERNEL) already reached the child, which shares our process
	 * group; only a signal sent to xpu-record alone is forwarded.
	 */
	if (si->ssi_code == SI_KERNEL) {
		log_err("SIG%s reached PID %d from the terminal; ^C again stops recording",
			sigabbrev_np(sig), s->pid);
	} else if (!s->child_reaped) {
		kill(s->target.pid, sig);
		/* a stopped command would only hold the signal pending */
		kill(s->target.pid, SIGCONT);
		log_err("forwarded SIG%s to PID %d; ^C again stops recording", sigabbrev_np(sig),
			s->pid);
	} else {
		signal_tree(s, sig);
		log_err("forwarded SIG%s to the %u processes left of PID %d; ^C again stops "
			"recording", sigabbrev_np(sig), proc_table__live(s->pt), s->pid);
	}
	s->stop_signal = sig;
	if (!s->escalate_at_ns)
		s->escalate_at_ns = clock_mono_ns() + STOP_GRACE_NS;
}

static void handle_signals(struct session *s)
{
	struct signalfd_siginfo si;

	while (read(s->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			reap_child(s);
			continue;
		}
		if (s->got_signal && !s->cfg->attach_pid && !s->hard_stop)
			log_err("SIG%s again: recording stopped; PID %d keeps running",
				sigabbrev_np((int)si.ssi_signo), s->pid);
		if (s->got_signal || s->cfg->attach_pid) {
			/* Second signal, or attached: stop now and leave the target alone. */
			s->got_signal = (int)si.ssi_signo;
			s->hard_stop = true;
			continue;
		}
		s->got_signal = (int)si.ssi_signo;
		forward_stop(s, &si);
	}
}

static bool tree_done(struct session *s)
{
	if (s->hard_stop)
		return true;
	if (!s->cfg->attach_pid && !s->child_reaped)
		return false;
	return proc_table__live(s->pt) == 0;
}

/*
 * The trace cannot grow (full disk, quota, I/O error): say so once, and stop sampling so the
 * target pays nothing more. A launched target is left to run to completion, still our child
 * (its status and ^C work as before); xpu-record then exits non-zero. Attached: stop now.
 */
static void write_failed(struct session *s)
{
	s->write_failed = true;
	log_err("cannot write %s: %s; recording stopped%s, the trace so far stays readable",
		s->out.shown, strerror(-writer_thread__error(s->wt)),
		s->cfg->attach_pid ? "" : " (the command keeps running)");
	bpf_state__stop_sampling(s->bpf);
	if (s->cfg->attach_pid)
		s->hard_stop = true;
}

/*
 * --duration ran out: an attached process is left alone and recording stops now; a launched
 * command's tree is stopped as ^C would (its CUPTI library flushes on SIGINT).
 */
static void duration_check(struct session *s, uint64_t now)
{
	if (!s->deadline_ns || now < s->deadline_ns || s->duration_hit)
		return;
	s->duration_hit = true;
	log_info("--duration reached: stopping");
	if (s->cfg->attach_pid) {
		s->hard_stop = true;
		return;
	}
	if (s->got_signal)
		return;	/* already being stopped by a signal */
	signal_tree(s, SIGINT);
	s->stop_signal = SIGINT;
	s->escalate_at_ns = now + STOP_GRACE_NS;
}

/*
 * A launched tree that outlives its stop signal by STOP_GRACE_S gets SIGTERM; one that
 * outlives SIGTERM too is left running and recording stops, so neither ^C nor --duration
 * can wait forever.
 */
static void session__escalate(struct session *s, uint64_t now)
{
	unsigned int live;

	if (!s->escalate_at_ns || now < s->escalate_at_ns)
		return;
	live = proc_table__live(s->pt);
	if (!live) {
		s->escalate_at_ns = 0;
		return;
	}
	if (s->stop_signal != SIGTERM) {
		log_err("%u process%s of PID %d still running %d s after SIG%s; sending SIGTERM",
			live, live == 1 ? "" : "es", s->pid, STOP_GRACE_S,
			sigabbrev_np(s->stop_signal));
		signal_tree(s, SIGTERM);
		s->stop_signal = SIGTERM;
		s->escalate_at_ns = now + STOP_GRACE_NS;
		return;
	}
	log_err("%u process%s of PID %d still running %d s after SIGTERM; recording stopped, "
		"the command keeps running", live, live == 1 ? "" : "es", s->pid, STOP_GRACE_S);
	s->escalate_at_ns = 0;
	s->hard_stop = true;
}

static void main_loop(struct session *s)
{
	uint64_t next_clock = clock_mono_ns() + CLOCK_SYNC_INTERVAL_NS;
	uint64_t next_loss = clock_mono_ns() + LOSS_POLL_INTERVAL_NS;
	uint64_t cnt[XPU_CNT_NR], now;

	while (!tree_done(s)) {
		struct pollfd pfd = { .fd = s->sfd, .events = POLLIN };

		if (poll(&pfd, 1, 100) > 0)
			handle_signals(s);
		/* SIGCHLD can coalesce; reaping here too keeps the exit status exact. */
		if (!s->cfg->attach_pid && !s->child_reaped)
			reap_child(s);
		if (!s->write_failed && writer_thread__error(s->wt))
			write_failed(s);
		now = clock_mono_ns();
		duration_check(s, now);
		session__escalate(s, now);
		if (now >= next_clock) {
			submit_clock_sync(s);
			next_clock = now + CLOCK_SYNC_INTERVAL_NS;
		}
		if (now >= next_loss) {
			report_bpf_losses(s, cnt);
			next_loss = now + LOSS_POLL_INTERVAL_NS;
		}
	}
}

static int exit_status_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

static void submit_end(struct session *s, int *exit_code)
{
	struct xpu_rec_session_end end = { .end_mono_ns = clock_mono_ns(), .exit_code = -1 };
	struct wt_rec r = {
		.type = XPU_REC_SESSION_END, .ts_ns = end.end_mono_ns,
		.body = &end, .body_size = sizeof(end), .must_keep = true,
	};
	int status;
	bool have = false;

	if (!s->cfg->attach_pid && s->child_reaped) {
		status = s->child_status;
		have = true;
	} else if (s->cfg->attach_pid && !proc_table__exit_status(s->pt, s->pid, &status)) {
		have = true;
	}
	if (have) {
		if (WIFEXITED(status))
			end.exit_code = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			end.term_signal = WTERMSIG(status);
		*exit_code = exit_status_of(status);
		/* --duration ending the command is the recording working as asked, not a failure */
		if (s->duration_hit && !s->got_signal && WIFSIGNALED(status) &&
		    (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM))
			*exit_code = 0;
	} else if (s->got_signal) {
		*exit_code = 128 + s->got_signal;
	} else if (s->duration_hit && !s->cfg->attach_pid) {
		/* the command outlived --duration's SIGINT and SIGTERM: as a second ^C would */
		*exit_code = 128 + SIGINT;
	} else {
		*exit_code = 0;
	}
	end.reason = s->got_signal ? XPU_END_SIGNAL :
		     s->duration_hit ? XPU_END_DURATION : XPU_END_TARGET_EXITED;
	writer_thread__submit(s->wt, &r);
}

/*
 * The target runs as the sudo user (or, attached, as whoever owns it): let it reach the CUPTI
 * socket in its 0700 directory.
 */
static void chown_socket(uid_t uid, gid_t gid, const char *path)
{
	char *dir = strdup(path);

	if (!dir)
		return;
	if (chown(dirname(dir), uid, gid) || chown(path, uid, gid))
		log_err("GPU data may be missing: cannot give the CUPTI socket to uid %u: %s",
			(unsigned int)uid, strerror(errno));
	free(dir);
}

/* The real uid and gid of pid, from /proc/PID/status; false when unreadable. */
static bool process_owner(pid_t pid, uid_t *uid, gid_t *gid)
{
	char path[64], line[256];
	unsigned int u = 0, g = 0;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		found += sscanf(line, "Uid: %u", &u) == 1;
		found += sscanf(line, "Gid: %u", &g) == 1;
	}
	fclose(f);
	*uid = u;
	*gid = g;
	return found == 2;
}

/*
 * -p on a process that uses CUDA: CUPTI started there now (record/gpu_attach.h). Whatever
 * fails, the CPU recording goes on, and the reason is said once.
 */
static void attach_gpu(struct session *s, pid_t pid)
{
	char err[512] = "";
	int e;

	e = gpu_attach__inject(pid, s->gpu_lib, cupti_rx__socket_path(s->rx), err, sizeof(err));
	if (!e)
		log_info("GPU: CUPTI started in pid %d mid-run: its GPU work from now on is recorded",
			 pid);
	else if (e == -ENOENT && strstr(err, "has not loaded CUDA"))
		log_err("%s", err);
	else
		log_err("GPU work of pid %d not recorded: %s", pid, err);
}

static int setup_signals(struct session *s)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	/* Blocked before any thread starts, so every thread inherits the mask. */
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return -EINVAL;
	s->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return s->sfd < 0 ? -errno : 0;
}

/*
 * Everything that must exist before the target may run: BPF loaded, signals routed to the
 * signalfd, the trace open with its writer thread, the mapping and Python trackers, and the
 * CUPTI receiver with the environment that injects the library. 0, or -1 with the error said.
 */
static int session__setup(struct session *s)
{
	const struct record_config *cfg = s->cfg;
	unsigned int i;
	struct bpf_setup_opts bo = {
		.freq_hz = cfg->freq_hz,
		.kernel_stacks = cfg->kernel_stacks,
		.ustack_bytes = cfg->dwarf_bytes,
		.ustack_top_bytes = cfg->dwarf_top_bytes,
		.cfi = cfg->cfi,
		.copy_short_walks = cfg->copy_short_walks,
		.ringbuf_bytes = (size_t)cfg->ringbuf_mb << 20,
		.off_cpu = cfg->off_cpu,
		.off_cpu_min_ns = cfg->off_cpu_min_ns,
		.autograd = !cfg->no_autograd,
	};
	struct trace_writer_opts wo = { 0 };
	struct trace_writer *w;
	char err[512] = "";
	int fd;

	if (!cfg->no_gpu) {
		s->gpu_lib = find_gpu_lib();
		log_info("GPU: %s", s->gpu_lib ? s->gpu_lib : "no " GPU_LIB_NAME " found, CPU only");
	}
	bo.gpu_lib = s->gpu_lib;
	for (i = 0; i < cfg->nattach; i++) {
		if (kill(cfg->attach_pids[i], 0) && errno == ESRCH) {
			log_err("no process with pid %d", cfg->attach_pids[i]);
			return -1;
		}
	}
	if (bpf_state__load(&s->bpf, &bo, err, sizeof(err))) {
		log_err("%s", err);
		return -1;
	}
	if (cfg->driver) {
		s->driver = driver_trace__load(bpf_state__traced_fd(s->bpf),
					       bpf_state__events_fd(s->bpf), err, sizeof(err));
		if (!s->driver)
			log_err("%s", err);
	}
	if (setup_signals(s)) {
		log_err("cannot set up signal handling: %s", strerror(errno));
		return -1;
	}
	fd = output__open(&s->out, cfg);
	if (fd < 0)
		return -1;
	w = trace_writer__open_fd(fd, &wo);
	if (!w) {
		log_err("cannot write %s: %s", s->out.shown, strerror(errno));
		close(fd);
		output__discard(&s->out);
		return -1;
	}
	s->wt = writer_thread__start(w, WRITER_QUEUE_BYTES);
	if (!s->wt) {
		log_err("cannot start the writer thread: %s", strerror(errno));
		trace_writer__close(w);
		return -1;
	}
	s->pt = proc_table__new();
	if (!s->pt)
		return -1;
	s->pm = procmaps__new(s->wt, s->pt);
	if (!s->pm)
		return -1;
	/* before the command runs: its short-lived children's mappings come from these */
	procmaps__use_kernel_events(s->pm);
	if (!cfg->no_pack && !s->out.to_stdout) {
		struct user_creds user;

		if (cfg->sudo)
			user_creds__load(&user, cfg->user_uid, cfg->user_gid, cfg->user_name);
		s->copies = host_copy__new(s->out.path, cfg->sudo ? &user : NULL);
		procmaps__set_copies(s->pm, s->copies);
	}
	/*
	 * The handlers, in the order the table calls them: Python first, so that a launch's
	 * frames are joined before autograd keeps its stack for the nodes of the same op.
	 */
	s->py = py_procs__new(s->wt, bpf_state__py_map_fd(s->bpf), !cfg->no_python);
	if (!s->py || proc_table__add_handler(s->pt, py_procs__handler(s->py)))
		return -1;
	if (!cfg->no_autograd) {
		s->ag = autograd_probe__new(s->bpf, s->wt);
		if (!s->ag || proc_table__add_handler(s->pt, autograd_probe__handler(s->ag)))
			return -1;
	}
	s->jit = jit_maps__new(s->wt);
	if (!s->jit || proc_table__add_handler(s->pt, jit_maps__handler(s->jit)))
		return -1;
	if (cfg->cfi) {
		int tables_fd, procs_fd;

		bpf_state__cfi_fds(s->bpf, &tables_fd, &procs_fd);
		/* before the loader's first table: the vdso's is queued as it starts */
		if (cfg->launch_walk_inproc && s->gpu_lib) {
			s->ws = walk_share__new(XPU_CFI_MEM_BYTES);
			if (!s->ws)
				log_err("launch stacks walked in BPF only: %s", strerror(errno));
			py_procs__set_walk_share(s->py, s->ws);
			if (s->ag)
				autograd_probe__set_walk_share(s->ag, s->ws);
		}
		if (!cfg->no_cache) {
			char dir[4096];
			int cerr = cfg->cache_dir ? 0 : cfi_cache__default_dir(dir, sizeof(dir));

			if (!cerr)
				s->cfi_cache = cfi_cache__open(cfg->cache_dir ? cfg->cache_dir : dir,
							       (uint64_t)CFI_CACHE_DEFAULT_MB << 20, &cerr);
			/* said once: every table is then built, as without a cache */
			if (!s->cfi_cache)
				log_err("no unwind-table cache (%s): %s",
					cfg->cache_dir ? cfg->cache_dir : "the default directory",
					 cerr == -EPERM ? "not owned by this user, or writable by others" : strerror(-cerr));
		}
		s->cfi = cfi_loader__new(tables_fd, procs_fd, XPU_CFI_MEM_BYTES, s->ws, s->cfi_cache);
		if (!s->cfi) {
			log_err("cannot start the unwind-table builder");
			return -1;
		}
		if (proc_table__add_handler(s->pt, cfi_loader__handler(s->cfi)))
			return -1;
		/* built while the probes attach; the start waits for the rest below */
		if (!cfg->attach_pid && cfi_loader__prepare(s->cfi, cfg->cmd[0]) < 0)
			log_info("cfi: cannot read %s's libraries ahead", cfg->cmd[0]);
	}
	if (s->gpu_lib && cfg->attach_pid) {
		uid_t uid;
		gid_t gid;

		s->rx = cupti_rx__start(s->wt, is_traced_cb, s, err, sizeof(err));
		if (!s->rx)
			log_err("GPU tracing off: %s", err);
		else if (process_owner(cfg->attach_pid, &uid, &gid) && uid)
			chown_socket(uid, gid, cupti_rx__socket_path(s->rx));
	} else if (s->gpu_lib) {
		s->rx = cupti_rx__start(s->wt, is_traced_cb, s, err, sizeof(err));
		if (!s->rx) {
			log_err("GPU tracing off: %s", err);
		} else if (asprintf(&s->env[0], "CUDA_INJECTION64_PATH=%s", s->gpu_lib) < 0 ||
			   asprintf(&s->env[1], "XPU_CUPTI_SOCKET=%s", cupti_rx__socket_path(s->rx)) < 0 ||
			   /* NVTX calls reach CUPTI only through the NVTX injection hook. */
			   asprintf(&s->env[2], "NVTX_INJECTION64_PATH=%s",
				    getenv("NVTX_INJECTION64_PATH") ? getenv("NVTX_INJECTION64_PATH")
								    : s->gpu_lib) < 0 ||
			   asprintf(&s->env[3], "XPU_CUDA_GRAPHS=%s",
				    cfg->cuda_graphs ? cfg->cuda_graphs : "node") < 0) {
			return -1;
		} else if (cfg->no_launch_stacks &&
			   /* no launch callbacks, and no API records, which only launch stacks use */
			   (!(s->env[4] = strdup("XPU_CUPTI_LAUNCH_STACKS=0")) ||
			    !(s->env[5] = strdup("XPU_CUPTI_API=none")))) {
			return -1;
		}
	}
	if (s->rx && cfg->drop_root)
		chown_socket(cfg->user_uid, cfg->user_gid, cupti_rx__socket_path(s->rx));
	if (s->rx && s->ws)
		cupti_rx__set_walk_share(s->rx, s->ws);
	/*
	 * How long the library waits at connect for the SHARE sent in answer to its HELLO
	 * (cupti-wire.md): none comes without a share, so not at all; with one, long enough
	 * for a receiver thread that a loaded machine runs late (it answers in a millisecond
	 * otherwise): the default of 50 ms left a short program's first launches to BPF.
	 */
	if (s->rx && s->env[0] && !cfg->attach_pid) {
		size_t k = 0;

		while (s->env[k])
			k++;
		if (k + 1 < sizeof(s->env) / sizeof(s->env[0]) &&
		    !(s->env[k] = strdup(s->ws ? "XPU_CUPTI_SHARE_WAIT_MS=5000" :
					 "XPU_CUPTI_SHARE_WAIT_MS=0")))
			return -1;
	}
	return 0;
}

/*
 * Forks the command behind its start gate (or takes the attached pid), puts its pid in the
 * traced tree and attaches every probe. 0, or -1 with the error said.
 */
static int session__launch(struct session *s)
{
	const struct record_config *cfg = s->cfg;
	char err[512] = "";
	unsigned int i = 0;
	int e;

	if (cfg->attach_pid) {
		s->pid = cfg->attach_pid;
	} else {
		s->target.drop_root = cfg->drop_root;
		s->target.uid = cfg->user_uid;
		s->target.gid = cfg->user_gid;
		s->target.user = cfg->user_name;
		s->target.nofile = cfg->nofile;
		e = target__launch(&s->target, cfg->cmd, s->rx ? s->env : NULL);
		if (e) {
			log_err("cannot fork: %s", strerror(-e));
			return -1;
		}
		s->pid = s->target.pid;
	}
	if (proc_table__add_live(s->pt, s->pid)) {
		log_err("cannot track pid %d: %s", s->pid, strerror(ENOMEM));
		return -1;
	}
	e = bpf_state__trace_pid(s->bpf, s->pid);
	for (i = 1; !e && i < cfg->nattach; i++) {
		e = proc_table__add_live(s->pt, cfg->attach_pids[i]);
		if (!e)
			e = bpf_state__trace_pid(s->bpf, cfg->attach_pids[i]);
	}
	if (e) {
		log_err("cannot trace pid %d: %s", i ? cfg->attach_pids[i - 1] : s->pid, strerror(-e));
		return -1;
	}
	if (bpf_state__attach(s->bpf, err, sizeof(err))) {
		log_err("%s", err);
		return -1;
	}
	return 0;
}

/*
 * The first records (session, clock, kernel symbols, an attached process's threads and
 * mappings), the drain thread, then the command's first instruction. 0, or -1.
 */
static int session__start(struct session *s)
{
	const struct record_config *cfg = s->cfg;
	char err[512] = "";
	uint64_t start_rt;
	unsigned int i;
	int e;

	start_rt = clock_realtime_ns();
	s->start_mono_ns = clock_mono_ns();
	submit_session(s, s->start_mono_ns, start_rt);
	submit_clock_sync(s);
	if (cfg->kernel_stacks) {
		e = kallsyms__snapshot(s->wt);
		if (e < 0)
			log_err("kernel symbols not captured: /proc/kallsyms: %s", strerror(-e));
	}
	for (i = 0; i < cfg->nattach; i++) {
		target__describe_threads(cfg->attach_pids[i], s->wt, s->start_mono_ns);
		procmaps__scan(s->pm, cfg->attach_pids[i], s->start_mono_ns);
	}
	s->drain = rb_drain__start(bpf_state__events_fd(s->bpf), s->wt, s->pm, s->pt);
	if (!s->drain) {
		log_err("cannot start the ring buffer thread: %s", strerror(errno));
		return -1;
	}
	if (s->rx) {
		struct cupti_rx_sink sink = {
			.on_events = inproc_events_cb, .on_inproc = inproc_slots_cb,
			.on_sync = inproc_sync_cb, .ctx = s,
		};

		cupti_rx__set_sink(s->rx, &sink);
	}
	if (s->driver) {
		rb_drain__route(s->drain, driver_trace__handler(s->driver, s->wt));
		if (driver_trace__attach(s->driver, err, sizeof(err))) {
			log_err("%s", err);
			rb_drain__unroute(s->drain, driver_trace__handler(s->driver, s->wt));
			driver_trace__destroy(s->driver);
			s->driver = NULL;
		}
	}
	if (s->cfi && !cfg->attach_pid) {
		uint64_t held = cfi_loader__wait(s->cfi, XPU_CFI_START_WAIT_NS);

		log_info("cfi: start held %.1f ms for the first tables", held / 1e6);
	}
	if (!cfg->attach_pid && target__release(&s->target, 1)) {
		log_err("cannot start the target: %s", strerror(errno));
		return -1;
	}
	for (i = 0; s->rx && i < cfg->nattach; i++)
		attach_gpu(s, cfg->attach_pids[i]);
	log_info("recording pid %d at %u Hz into %s (ring buffer %u MiB)", s->pid, cfg->freq_hz,
		 s->out.partial ? s->out.partial : s->out.shown, cfg->ringbuf_mb);
	if (cfg->duration_ns)
		s->deadline_ns = clock_mono_ns() + cfg->duration_ns;
	return 0;
}

/*
 * The session's counters of the STATS record (xpu_stats.def): the rows of each mode that is
 * on, in the table's order; the driver tracer and the writer add theirs.
 */
#define STAT_WHEN(cond, i, v)                                                        \
	do {                                                                         \
		if (cond)                                                            \
			stats[n++] = (struct xpu_stat_entry){ .id = (i), .value = (v) }; \
	} while (0);
#undef XPU_STATS_ALWAYS
#define XPU_STATS_ALWAYS(i, v) STAT_WHEN(true, i, v)
#undef XPU_STATS_DWARF
#define XPU_STATS_DWARF(i, v) STAT_WHEN(s->cfg->dwarf_bytes, i, v)
#undef XPU_STATS_DWARF_TOP
#define XPU_STATS_DWARF_TOP(i, v) STAT_WHEN(s->cfg->dwarf_bytes && s->cfg->dwarf_top_bytes, i, v)
#undef XPU_STATS_PY
#define XPU_STATS_PY(i, v) STAT_WHEN(pys->runtimes, i, v)
#undef XPU_STATS_JIT
#define XPU_STATS_JIT(i, v) STAT_WHEN(jms->symbols || jms->skipped, i, v)
#undef XPU_STATS_CFI
#define XPU_STATS_CFI(i, v) STAT_WHEN(s->cfg->cfi, i, v)
#undef XPU_STATS_CFI_SHORT
#define XPU_STATS_CFI_SHORT(i, v) STAT_WHEN(s->cfg->cfi && s->cfg->copy_short_walks, i, v)
#undef XPU_STATS_OFF_CPU
#define XPU_STATS_OFF_CPU(i, v) STAT_WHEN(s->cfg->off_cpu, i, v)
#undef XPU_STATS_AG
#define XPU_STATS_AG(i, v) STAT_WHEN(ags->files || ags->unavailable, i, v)
#undef XPU_STATS_INPROC
#define XPU_STATS_INPROC(i, v) STAT_WHEN(inproc_seen(rxs), i, v)

/* A library walked launches in process, or tried to: the INPROC rows. */
static bool inproc_seen(const struct cupti_rx_stats *rxs)
{
	return rxs->walk.inproc[XPU_INPROC_WALKS] || rxs->walk.inproc[XPU_INPROC_FALLBACKS] ||
	       rxs->inproc_launches || rxs->inproc_dropped || rxs->inproc_refused;
}

static unsigned int session__stats(struct session *s, struct xpu_stat_entry *stats,
				   const uint64_t *cnt, const struct rb_drain_stats *ds,
				   const struct procmaps_stats *ps, const struct host_copy_stats *hcs,
				   const struct py_procs_stats *pys,
				   const struct jit_maps_stats *jms, const struct cfi_loader_stats *cls,
				   const struct cupti_rx_stats *rxs,
				   const struct autograd_probe_stats *ags)
{
	unsigned int n = 0;

#define XPU_STAT XPU_STAT_WRITE
#include "xpu_stats.def"
#undef XPU_STAT
	return n;
}

/* What each LOST source means to the user, and what to do about it (xpu_lost.def). */
static const char *const lost_what[WT_LOST_SOURCES] = {
	[0] = "records, of a kind this recorder does not name",
#define XPU_LOST(name, id, report_name, what) [id] = what,
#include "xpu_lost.def"
#undef XPU_LOST
};
_Static_assert(XPU_LOST_SOURCES <= WT_LOST_SOURCES, "the writer counts every LOST source");

static void format_bytes(char *buf, size_t size, uint64_t b)
{
	if (b >= 10ull << 20)
		snprintf(buf, size, "%.0f MiB", (double)b / (1 << 20));
	else if (b >= 1 << 20)
		snprintf(buf, size, "%.1f MiB", (double)b / (1 << 20));
	else if (b >= 1 << 10)
		snprintf(buf, size, "%.1f KiB", (double)b / (1 << 10));
	else
		snprintf(buf, size, "%llu bytes", (unsigned long long)b);
}

/*
 * After every recording that wrote a trace: a line per loss class that is not zero (the
 * counts of the trace's LOST records, which the report shows too), then one line saying what
 * was written where, as perf does.
 */
static void say_summary(const struct session *s, const struct wt_summary *sum, uint64_t gpu_records,
			uint64_t off_cpu_blocks, const struct symbol_pack_done *pack)
{
	char pack_bytes[32], pack_said[4200] = "";
	uint64_t lost = 0;
	char bytes[32], blocks[48] = "";
	unsigned int i;

	for (i = 0; i < WT_LOST_SOURCES; i++) {
		if (!sum->lost[i])
			continue;
		lost += sum->lost[i];
		log_err("lost %llu %s", (unsigned long long)sum->lost[i],
			lost_what[i] ? lost_what[i] : lost_what[0]);
	}
	format_bytes(bytes, sizeof(bytes), sum->file_bytes);
	if (s->cfg->off_cpu)
		snprintf(blocks, sizeof(blocks), "%llu off-CPU blocks, ",
			 (unsigned long long)off_cpu_blocks);
	if (pack) {
		format_bytes(pack_bytes, sizeof(pack_bytes), pack->bytes);
		snprintf(pack_said, sizeof(pack_said), " and its symbol pack %s (%s, %.1f s)",
			 pack->path, pack_bytes, pack->seconds);
	}
	log_err("%llu samples, %llu GPU records, %s%llu lost; wrote %s to %s%s",
		(unsigned long long)sum->samples, (unsigned long long)gpu_records, blocks,
		(unsigned long long)lost, bytes,
		s->out.partial ? s->out.partial : s->out.shown, pack_said);
}

/*
 * Tears down in the order that writes everything: sampling stopped, ring buffer drained, CUPTI
 * clients flushed, then the end records and STATS. Returns xpu-record's exit status.
 */
static int session__finish(struct session *s)
{
	const struct record_config *cfg = s->cfg;
	struct procmaps_stats ps = { 0 };
	struct host_copy_stats hcs = { 0 };
	struct rb_drain_stats ds = { 0 };
	struct py_procs_stats pys = { 0 };
	struct jit_maps_stats jms = { 0 };
	struct cfi_loader_stats cls = { 0 };
	struct cupti_rx_stats rxs = { 0 };
	struct autograd_probe_stats ags = { 0 };
	struct xpu_stat_entry stats[XPU_STATS_MAX];	/* the session's, then the driver's */
	struct wt_summary sum = { 0 };
	uint64_t cnt[XPU_CNT_NR] = { 0 };
	struct symbol_pack_done pack;
	bool discard, committed = false, packed = false;
	unsigned int n;
	int ret = 1, e;

	/* processes that run on (-p, -d) stop collecting while their launches are still taken */
	if (s->rx && cupti_rx__stop_clients(s->rx, CUPTI_STOP_TIMEOUT_MS) > 0)
		log_err("GPU: %s did not finish within %d ms: their last records may be missing",
			"some processes", CUPTI_STOP_TIMEOUT_MS);
	bpf_state__log_run_times(s->bpf);
	bpf_state__stop_sampling(s->bpf);
	/* the receiver first: its last launches walked in process go to the drain's queue */
	if (s->rx) {
		cupti_rx__stop(s->rx, CUPTI_STOP_TIMEOUT_MS, &rxs);
		s->rx = NULL;
	}
	rb_drain__stop(s->drain, &ds);
	s->drain = NULL;
	report_bpf_losses(s, cnt);
	/* the walk's counters of both paths: the library's totals are the BPF counters' kind */
	for (n = 0; n < XPU_CNT_NR; n++)
		cnt[n] += rxs.walk.cnt[n];
	/*
	 * Blocks that ended but still waited for their thread to run its own code (to take the
	 * stack) are lost; threads still blocked are counted, not closed: their block has no end.
	 */
	if (cfg->off_cpu &&
	    !bpf_state__off_cpu_leftover(s->bpf, &s->off_cpu_pending, &s->off_cpu_open) &&
	    s->off_cpu_pending)
		submit_lost(s, XPU_LOST_OFF_CPU, s->off_cpu_pending, clock_mono_ns());
	/* the drain thread is gone: the JIT files are complete (or, with -p, as far as written) */
	jit_maps__collect(s->jit, &jms);
	procmaps__get_stats(s->pm, &ps);
	/* a library replaced since it was mapped: copied now, from the descriptor kept */
	host_copy__last_look(s->copies);
	host_copy__get_stats(s->copies, &hcs);
	py_procs__get_stats(s->py, &pys);
	autograd_probe__get_stats(s->ag, &ags);
	if (s->cfi)
		cfi_loader__get_stats(s->cfi, &cls);
	submit_clock_sync(s);
	submit_end(s, &ret);
	n = session__stats(s, stats, cnt, &ds, &ps, &hcs, &pys, &jms, &cls, &rxs, &ags);
	if (s->driver)
		n += driver_trace__finish(s->driver, s->wt, stats + n,
					  sizeof(stats) / sizeof(stats[0]) - n);
	e = writer_thread__finish(s->wt, stats, n, &sum);
	s->wt = NULL;
	if (e || s->write_failed) {
		if (!s->write_failed)
			log_err("cannot write %s: %s", s->out.shown, strerror(-e));
		ret = ret ? ret : 1;
	}
	/*
	 * The command never ran (the child said why, in one line): keep an older trace rather
	 * than replace it with an empty one.
	 */
	discard = !cfg->attach_pid && s->child_reaped && target__exec_failed(&s->target);
	if (discard && !s->out.to_stdout)
		output__discard(&s->out);
	else if (output__commit(&s->out))
		ret = ret ? ret : 1;
	else
		committed = true;
	/* the trace is in place: its pack reads it like any report would */
	if (committed && !discard && !e && !s->write_failed && !s->out.to_stdout && !cfg->no_pack)
		packed = !symbol_pack__make(s->out.path, cfg, host_copy__dir(s->copies), &pack);
	/* the copies served the pack; they are the traced processes' files, not the user's */
	host_copy__free(s->copies);
	s->copies = NULL;
	/* a failed write already said all there is, in one line */
	if (!discard && !e && !s->write_failed)
		say_summary(s, &sum, rxs.records, ds.off_cpu_blocks, packed ? &pack : NULL);
	log_info("%llu samples, %llu lost in the ring buffer, %llu stack errors, %llu mappings, "
		 "%llu processes with unreadable mappings",
		 (unsigned long long)ds.samples, (unsigned long long)cnt[XPU_CNT_RB_LOST],
		 (unsigned long long)(cnt[XPU_CNT_USTACK_ERR] + cnt[XPU_CNT_KSTACK_ERR]),
		 (unsigned long long)ps.mappings, (unsigned long long)ps.scan_failures);
	return ret;
}

/*
 * Setup failed somewhere: a command still behind its gate exits 127 without running, and a
 * trace that recorded nothing is removed rather than left looking like an empty profile.
 */
static void session__abort(struct session *s)
{
	if (!s->cfg->attach_pid && s->target.pid > 0) {
		target__release(&s->target, 0);
		waitpid(s->target.pid, NULL, 0);
	}
	/* the receiver before the drain it hands launches to */
	if (s->rx) {
		cupti_rx__stop(s->rx, 0, NULL);
		s->rx = NULL;
	}
	if (s->drain) {
		rb_drain__stop(s->drain, NULL);
		s->drain = NULL;
	}
	if (s->wt) {
		writer_thread__finish(s->wt, NULL, 0, NULL);
		s->wt = NULL;
	}
	output__discard(&s->out);
}

static void session__free(struct session *s)
{
	size_t i;

	output__free(&s->out);
	if (s->target.exec_fd >= 0)
		close(s->target.exec_fd);
	/* the table first: it gives its handlers back what they keep in its slots */
	proc_table__free(s->pt);
	procmaps__free(s->pm);
	host_copy__free(s->copies);
	py_procs__free(s->py);
	jit_maps__free(s->jit);
	autograd_probe__free(s->ag);
	cfi_loader__free(s->cfi);
	cfi_cache__free(s->cfi_cache);
	/* after the loader's workers and the receiver, its last writer and reader */
	walk_share__free(s->ws);
	driver_trace__destroy(s->driver);
	bpf_state__destroy(s->bpf);
	if (s->sfd >= 0)
		close(s->sfd);
	for (i = 0; i < sizeof(s->env) / sizeof(s->env[0]); i++)
		free(s->env[i]);
	free(s->gpu_lib);
}

int session__run(const struct record_config *cfg)
{
	struct session s = { .cfg = cfg, .sfd = -1, .target = { .gate_fd = -1, .exec_fd = -1 } };
	int ret = 1;

	if (session__setup(&s) || session__launch(&s) || session__start(&s)) {
		session__abort(&s);
	} else {
		main_loop(&s);
		ret = session__finish(&s);
	}
	session__free(&s);
	return ret;
}
