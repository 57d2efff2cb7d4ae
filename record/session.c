// SPDX-License-Identifier: MIT
/*
 * One recording session: sets up the core (BPF, the writer, the process table, the mapping
 * reader) and then the parts (parts.c) in an order that loses nothing (probes attached and the
 * pid traced before the child may exec), runs the main loop (signals, periodic clock and loss
 * records) and tears down in an order that writes everything (sampling stopped, the parts that
 * feed the ring buffer's drain stopped, the drain, then the end records). It names no part:
 * each verb is a loop over the table.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf_setup.h"
#include "clock.h"
#include "config.h"
#include "fd_limit.h"
#include "gpu_lib.h"
#include "human_bytes.h"
#include "output.h"
#include "part.h"
#include "parts.h"
#include "proc_table.h"
#include "procmaps.h"
#include "rb_drain.h"
#include "session.h"
#include "stat_sink.h"
#include "target.h"
#include "trace_writer.h"
#include "writer_thread.h"

#define CLOCK_SYNC_INTERVAL_NS (10ull * 1000 * 1000 * 1000)
#define LOSS_POLL_INTERVAL_NS (1000ull * 1000 * 1000)
#define CLOCK_SYNC_BRACKETS 10
#define WRITER_QUEUE_BYTES (64u << 20)

struct session {
	const struct record_config *cfg;
	struct bpf_state *bpf;
	struct writer_thread *wt;
	struct procmaps *pm;
	struct rb_drain *drain;
	struct proc_table *pt;		/* the traced processes, with the parts' handlers */
	struct rec_ctx ctx;		/* what the parts see of the above */
	void *part_state[REC_PARTS_MAX];	/* by row of rec_parts[] */
	bool part_on[REC_PARTS_MAX];	/* its setup succeeded: it gets every later call */
	struct rb_drain_stats drained;
	struct target target;
	struct output out;
	pid_t pid;
	int sfd;
	char *gpu_lib;
	uint64_t reported[XPU_CNT_NR];	/* counter values already written as LOST */
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
	rec.flags |= s->ctx.session_flags;
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

/* A verb of part.h whose hooks all take (state, ctx): its offset in struct rec_part. */
typedef void (*part_verb_fn)(void *state, struct rec_ctx *c);
#define PART_VERB(hook) offsetof(struct rec_part, hook)

/* Calls one verb of every part that runs, in the table's order or in reverse. */
static void parts__each(struct session *s, size_t verb, bool reverse)
{
	size_t k, i;
	part_verb_fn fn;

	for (k = 0; k < rec_parts_nr; k++) {
		i = reverse ? rec_parts_nr - 1 - k : k;
		if (!s->part_on[i])
			continue;
		memcpy(&fn, (const char *)rec_parts[i] + verb, sizeof(fn));
		if (fn)
			fn(s->part_state[i], &s->ctx);
	}
}

/*
 * Each part that is wanted, in the table's order: set up, its handler into the process table.
 * A required part that fails stops the recording; another is off (it said why). 0, or -1.
 */
static int parts__setup(struct session *s)
{
	struct map_handler *h;
	size_t i;

	for (i = 0; i < rec_parts_nr; i++) {
		const struct rec_part *p = rec_parts[i];

		if (p->wanted && !p->wanted(&s->ctx))
			continue;
		if (p->setup && p->setup(&s->ctx, &s->part_state[i])) {
			if (p->required)
				return -1;
			continue;
		}
		s->part_on[i] = true;
		h = p->handler ? p->handler(s->part_state[i]) : NULL;
		if (h && proc_table__add_handler(s->pt, h))
			return -1;
	}
	return 0;
}

/*
 * Everything that must exist before the target may run: BPF loaded, signals routed to the
 * signalfd, the trace open with its writer thread, the process table and the mapping reader,
 * then the parts (the CUPTI receiver among them, with the environment that injects the
 * library). 0, or -1 with the error said.
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
		s->gpu_lib = gpu_lib__find();
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
	s->ctx = (struct rec_ctx){
		.cfg = cfg, .bpf = s->bpf, .wt = s->wt, .pt = s->pt, .pm = s->pm,
		.gpu_lib = s->gpu_lib, .trace_path = s->out.to_stdout ? NULL : s->out.path,
	};
	return parts__setup(s);
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
		e = target__launch(&s->target, cfg->cmd, s->ctx.child_env);
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
	/* the launched command: sampled from its exec on (before it, it is xpu-record's image) */
	e = bpf_state__trace_pid(s->bpf, s->pid, !cfg->attach_pid);
	for (i = 1; !e && i < cfg->nattach; i++) {
		e = proc_table__add_live(s->pt, cfg->attach_pids[i]);
		if (!e)
			e = bpf_state__trace_pid(s->bpf, cfg->attach_pids[i], false);
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
 * The first records (session, clock, the parts' first ones, an attached process's threads and
 * mappings), the drain thread, the parts' start, then the command's first instruction. 0, or -1.
 */
static int session__start(struct session *s)
{
	const struct record_config *cfg = s->cfg;
	uint64_t start_rt;
	unsigned int i;

	start_rt = clock_realtime_ns();
	s->start_mono_ns = clock_mono_ns();
	submit_session(s, s->start_mono_ns, start_rt);
	submit_clock_sync(s);
	parts__each(s, PART_VERB(first_records), false);
	for (i = 0; i < cfg->nattach; i++) {
		target__describe_threads(cfg->attach_pids[i], s->wt, s->start_mono_ns);
		procmaps__scan(s->pm, cfg->attach_pids[i], s->start_mono_ns);
	}
	s->drain = rb_drain__start(bpf_state__events_fd(s->bpf), s->wt, s->pm, s->pt);
	if (!s->drain) {
		log_err("cannot start the ring buffer thread: %s", strerror(errno));
		return -1;
	}
	s->ctx.drain = s->drain;
	parts__each(s, PART_VERB(start), false);
	if (!cfg->attach_pid && target__release(&s->target, 1)) {
		log_err("cannot start the target: %s", strerror(errno));
		return -1;
	}
	log_info("recording pid %d at %u Hz into %s (ring buffer %u MiB)", s->pid, cfg->freq_hz,
		 s->out.partial ? s->out.partial : s->out.shown, cfg->ringbuf_mb);
	if (cfg->duration_ns)
		s->deadline_ns = clock_mono_ns() + cfg->duration_ns;
	return 0;
}

/*
 * The session's own counters of the STATS record (xpu_stats.def, part "session"): the drain's,
 * the mapping reader's, and BPF's of the stack mode.
 */
static void session__stats(struct session *s, struct stat_sink *sink,
			   const struct procmaps_stats *ps)
{
	const struct record_config *cfg = s->cfg;
	const struct rb_drain_stats *ds = &s->drained;
	const uint64_t *cnt = s->ctx.cnt;

	stat_sink__put(sink, XPU_STAT_SAMPLES, ds->samples);
	stat_sink__put(sink, XPU_STAT_RINGBUF_LOST, cnt[XPU_CNT_RB_LOST]);
	stat_sink__put(sink, XPU_STAT_STACK_ERRORS,
		       cnt[XPU_CNT_USTACK_ERR] + cnt[XPU_CNT_KSTACK_ERR]);
	stat_sink__put(sink, XPU_STAT_TASK_EVENTS, ds->task_events);
	stat_sink__put(sink, XPU_STAT_MAPPING_SCANS, ps->scans);
	stat_sink__put(sink, XPU_STAT_MAPPING_SCAN_FAILURES, ps->scan_failures);
	stat_sink__put(sink, XPU_STAT_MAPPINGS_FROM_EVENTS, ps->from_events);
	stat_sink__put(sink, XPU_STAT_MMAP_EVENTS_LOST, ps->events_lost + ps->events_dropped);
	stat_sink__put(sink, XPU_STAT_GPU_LAUNCHES, ds->gpu_launches);
	stat_sink__put(sink, XPU_STAT_MAPPING_QUERIES, ps->queries);
	stat_sink__put(sink, XPU_STAT_MAPPING_ENTRIES, ps->entries);
	stat_sink__put(sink, XPU_STAT_MAPPING_READ_FAILURES, ps->read_failures);
	stat_sink__put(sink, XPU_STAT_MAPPINGS_INHERITED, ps->inherited);
	stat_sink__put(sink, XPU_STAT_FD_EXHAUSTED, fd_limit__count());
	if (cfg->dwarf_bytes) {
		stat_sink__put(sink, XPU_STAT_STACK_COPIES, cnt[XPU_CNT_USTACK_COPIES]);
		stat_sink__put(sink, XPU_STAT_STACK_COPY_ERRORS, cnt[XPU_CNT_USTACK_COPY_ERR]);
		if (cfg->dwarf_top_bytes)
			stat_sink__put(sink, XPU_STAT_STACK_TOP_ERRORS,
				       cnt[XPU_CNT_USTACK_TOP_ERR]);
	}
}

/* The STATS entries of the session and of every part that ran, in xpu_stats.def's order. */
static unsigned int collect_stats(struct session *s, const struct procmaps_stats *ps,
				  struct xpu_stat_entry *stats, unsigned int room)
{
	struct stat_sink sink = { 0 };
	size_t i;

	session__stats(s, &sink, ps);
	for (i = 0; i < rec_parts_nr; i++) {
		if (s->part_on[i] && rec_parts[i]->stats)
			rec_parts[i]->stats(s->part_state[i], &s->ctx, &sink);
	}
	return stat_sink__entries(&sink, stats, room);
}

/* What each LOST source means to the user, and what to do about it (xpu_lost.def). */
static const char *const lost_what[WT_LOST_SOURCES] = {
	[0] = "records, of a kind this recorder does not name",
#define XPU_LOST(name, id, report_name, what) [id] = what,
#include "xpu_lost.def"
#undef XPU_LOST
};
_Static_assert(XPU_LOST_SOURCES <= WT_LOST_SOURCES, "the writer counts every LOST source");

/*
 * After every recording that wrote a trace: a line per loss class that is not zero (the
 * counts of the trace's LOST records, which the report shows too), then one line saying what
 * was written where, as perf does.
 */
static void say_summary(const struct session *s, const struct wt_summary *sum,
			const struct rec_summary *parts)
{
	uint64_t lost = 0;
	char bytes[32];
	unsigned int i;

	for (i = 0; i < WT_LOST_SOURCES; i++) {
		if (!sum->lost[i])
			continue;
		lost += sum->lost[i];
		log_err("lost %llu %s", (unsigned long long)sum->lost[i],
			lost_what[i] ? lost_what[i] : lost_what[0]);
	}
	human_bytes(bytes, sizeof(bytes), sum->file_bytes);
	log_err("%llu samples, %llu GPU records, %s%llu lost; wrote %s to %s%s",
		(unsigned long long)sum->samples, (unsigned long long)parts->gpu_records, parts->counts,
		(unsigned long long)lost, bytes,
		s->out.partial ? s->out.partial : s->out.shown, parts->beside);
}

/*
 * Sampling stopped, the parts that feed the drain stopped, then the drain, and the counters
 * of the whole recording gathered; the parts' last work once nothing else writes.
 */
static void session__stop(struct session *s)
{
	uint64_t cnt[XPU_CNT_NR] = { 0 };
	unsigned int n;

	parts__each(s, PART_VERB(quiesce), false);
	bpf_state__log_run_times(s->bpf);
	bpf_state__stop_sampling(s->bpf);
	parts__each(s, PART_VERB(stop), true);
	rb_drain__stop(s->drain, &s->drained);
	s->drain = NULL;
	s->ctx.drain = NULL;
	s->ctx.drained = &s->drained;
	report_bpf_losses(s, cnt);
	for (n = 0; n < XPU_CNT_NR; n++)
		s->ctx.cnt[n] += cnt[n];
	parts__each(s, PART_VERB(collect), true);
}

/*
 * Tears down in the order that writes everything: sampling stopped, ring buffer drained, CUPTI
 * clients flushed, then the end records and STATS; the trace committed, then what the parts
 * make of it. Returns xpu-record's exit status.
 */
static int session__finish(struct session *s)
{
	const struct record_config *cfg = s->cfg;
	struct procmaps_stats ps = { 0 };
	struct xpu_stat_entry stats[XPU_STATS_MAX];
	struct wt_summary sum = { 0 };
	struct rec_summary said = { 0 };
	const uint64_t *cnt = s->ctx.cnt;
	bool discard, committed = false;
	unsigned int n;
	size_t i;
	int ret = 1, e;

	session__stop(s);
	procmaps__get_stats(s->pm, &ps);
	submit_clock_sync(s);
	submit_end(s, &ret);
	n = collect_stats(s, &ps, stats, XPU_STATS_MAX);
	e = writer_thread__finish(s->wt, stats, n, &sum);
	s->wt = NULL;
	s->ctx.wt = NULL;
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
	if (committed && !discard && !e && !s->write_failed)
		parts__each(s, PART_VERB(committed), false);
	/* a failed write already said all there is, in one line */
	if (!discard && !e && !s->write_failed) {
		for (i = 0; i < rec_parts_nr; i++) {
			if (s->part_on[i] && rec_parts[i]->summary)
				rec_parts[i]->summary(s->part_state[i], &said);
		}
		say_summary(s, &sum, &said);
	}
	log_info("%llu samples, %llu lost in the ring buffer, %llu stack errors, %llu mappings, "
		 "%llu processes with unreadable mappings",
		 (unsigned long long)s->drained.samples, (unsigned long long)cnt[XPU_CNT_RB_LOST],
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
	/* the parts that feed the drain before the drain */
	s->ctx.aborted = true;
	parts__each(s, PART_VERB(stop), true);
	if (s->drain) {
		rb_drain__stop(s->drain, NULL);
		s->drain = NULL;
		s->ctx.drain = NULL;
	}
	if (s->wt) {
		writer_thread__finish(s->wt, NULL, 0, NULL);
		s->wt = NULL;
		s->ctx.wt = NULL;
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
	for (i = rec_parts_nr; i-- > 0;) {
		if (s->part_on[i] && rec_parts[i]->free)
			rec_parts[i]->free(s->part_state[i]);
	}
	bpf_state__destroy(s->bpf);
	if (s->sfd >= 0)
		close(s->sfd);
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
