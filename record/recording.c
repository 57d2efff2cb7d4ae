// SPDX-License-Identifier: MIT
/*
 * One recording: the parts (parts.c: BPF, the trace and its writer, the mapping reader, the
 * drain, then the features) set up in an order that loses nothing (probes attached and the pid
 * traced before the child may exec), the main loop (signals, the child, the parts' periodic
 * work) and the teardown in an order that writes everything (sampling stopped, the parts that
 * feed the drain stopped, the drain, then the end records). It names no part: each verb is a
 * loop over the table; what stays here is the signals, the child and the loops.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "part.h"
#include "parts.h"
#include "proc_table.h"
#include "recording.h"
#include "stat_sink.h"
#include "target.h"

struct recording {
	const struct record_config *cfg;
	struct proc_table *pt;		/* the traced processes, with the parts' handlers */
	struct rec_ctx ctx;		/* what the parts see of the recording */
	void *part_state[REC_PARTS_MAX];	/* by row of rec_parts[] */
	bool part_on[REC_PARTS_MAX];	/* its setup succeeded: it gets every later call */
	struct target target;
	pid_t pid;
	int sfd;
	int got_signal;
	bool hard_stop;
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

/* A verb of part.h whose hooks all take (state, ctx), by its offset in struct rec_part. */
typedef void (*part_verb_fn)(void *state, struct rec_ctx *c);
typedef int (*part_step_fn)(void *state, struct rec_ctx *c);
#define PART_VERB(hook) offsetof(struct rec_part, hook)

/* Calls one verb of every part that runs, in the table's order or in reverse. */
static void parts__each(struct recording *s, size_t verb, bool reverse)
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

/* A verb that may fail (attach, start), in the table's order: 0, or -1 at the first failure. */
static int parts__step(struct recording *s, size_t verb)
{
	part_step_fn fn;
	size_t i;

	for (i = 0; i < rec_parts_nr; i++) {
		if (!s->part_on[i])
			continue;
		memcpy(&fn, (const char *)rec_parts[i] + verb, sizeof(fn));
		if (fn && fn(s->part_state[i], &s->ctx))
			return -1;
	}
	return 0;
}

static void reap_child(struct recording *s)
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
static void signal_tree(struct recording *s, int sig)
{
	proc_table__signal(s->pt, sig);
	proc_table__signal(s->pt, SIGCONT);
}

/*
 * Stop signal for a launched command: the command gets it, and a line says so, so a target
 * that ignores it never leaves the user waiting in silence; recording__escalate() follows up.
 */
static void forward_stop(struct recording *s, const struct signalfd_siginfo *si)
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

static void handle_signals(struct recording *s)
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

static bool tree_done(struct recording *s)
{
	if (s->hard_stop)
		return true;
	if (!s->cfg->attach_pid && !s->child_reaped)
		return false;
	return proc_table__live(s->pt) == 0;
}

/*
 * --duration ran out: an attached process is left alone and recording stops now; a launched
 * command's tree is stopped as ^C would (its CUPTI library flushes on SIGINT).
 */
static void duration_check(struct recording *s, uint64_t now)
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
static void recording__escalate(struct recording *s, uint64_t now)
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

static void main_loop(struct recording *s)
{
	while (!tree_done(s)) {
		struct pollfd pfd = { .fd = s->sfd, .events = POLLIN };

		if (poll(&pfd, 1, 100) > 0)
			handle_signals(s);
		/* SIGCHLD can coalesce; reaping here too keeps the exit status exact. */
		if (!s->cfg->attach_pid && !s->child_reaped)
			reap_child(s);
		s->ctx.now_ns = clock_mono_ns();
		duration_check(s, s->ctx.now_ns);
		recording__escalate(s, s->ctx.now_ns);
		parts__each(s, PART_VERB(tick), true);
		/* the trace cannot grow: an attached process is left alone, recording stops now */
		if (s->ctx.write_failed && s->cfg->attach_pid)
			s->hard_stop = true;
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

/*
 * How the command ended, for SESSION_END (c->end), once the drain is gone (an attached
 * process's exit comes through it); returns xpu-record's exit status.
 */
static int recording__ended(struct recording *s)
{
	struct xpu_rec_session_end *end = &s->ctx.end;
	int status, exit_code;
	bool have = false;

	*end = (struct xpu_rec_session_end){ .exit_code = -1 };
	if (!s->cfg->attach_pid && s->child_reaped) {
		status = s->child_status;
		have = true;
	} else if (s->cfg->attach_pid && !proc_table__exit_status(s->pt, s->pid, &status)) {
		have = true;
	}
	if (have) {
		if (WIFEXITED(status))
			end->exit_code = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			end->term_signal = WTERMSIG(status);
		exit_code = exit_status_of(status);
		/* --duration ending the command is the recording working as asked, not a failure */
		if (s->duration_hit && !s->got_signal && WIFSIGNALED(status) &&
		    (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM))
			exit_code = 0;
	} else if (s->got_signal) {
		exit_code = 128 + s->got_signal;
	} else if (s->duration_hit && !s->cfg->attach_pid) {
		/* the command outlived --duration's SIGINT and SIGTERM: as a second ^C would */
		exit_code = 128 + SIGINT;
	} else {
		exit_code = 0;
	}
	end->reason = s->got_signal ? XPU_END_SIGNAL :
		      s->duration_hit ? XPU_END_DURATION : XPU_END_TARGET_EXITED;
	return exit_code;
}

static int setup_signals(struct recording *s)
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
 * Everything that must exist before the target may run: the process table, then each part
 * that is wanted, in the table's order: set up, its handler into the process table; signals
 * routed to the signalfd before the first part that starts a thread. A required part that
 * fails stops the recording; another is off (it said why). 0, or -1 with the error said.
 */
static int recording__setup(struct recording *s)
{
	const struct record_config *cfg = s->cfg;
	struct map_handler *h;
	unsigned int i;
	size_t k;

	for (i = 0; i < cfg->nattach; i++) {
		if (kill(cfg->attach_pids[i], 0) && errno == ESRCH) {
			log_err("no process with pid %d", cfg->attach_pids[i]);
			return -1;
		}
	}
	s->pt = proc_table__new();
	if (!s->pt)
		return -1;
	s->ctx = (struct rec_ctx){ .cfg = cfg, .pt = s->pt };
	for (k = 0; k < rec_parts_nr; k++) {
		const struct rec_part *p = rec_parts[k];

		if (p->wanted && !p->wanted(&s->ctx))
			continue;
		if (p->threads && s->sfd < 0 && setup_signals(s)) {
			log_err("cannot set up signal handling: %s", strerror(errno));
			return -1;
		}
		if (p->setup && p->setup(&s->ctx, &s->part_state[k])) {
			if (p->required)
				return -1;
			continue;
		}
		s->part_on[k] = true;
		h = p->handler ? p->handler(s->part_state[k]) : NULL;
		if (h && proc_table__add_handler(s->pt, h))
			return -1;
	}
	return 0;
}

/*
 * Forks the command behind its start gate (or takes the attached pids), puts its pids in the
 * traced tree and has the parts attach (every probe). 0, or -1 with the error said.
 */
static int recording__launch(struct recording *s)
{
	const struct record_config *cfg = s->cfg;
	unsigned int i;
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
	s->ctx.pid = s->pid;
	/* attached: attach_pids[0] is the first, s->pid */
	for (i = 0; i == 0 || i < cfg->nattach; i++) {
		pid_t pid = i ? cfg->attach_pids[i] : s->pid;

		if (proc_table__add_live(s->pt, pid)) {
			log_err("cannot track pid %d: %s", pid, strerror(ENOMEM));
			return -1;
		}
	}
	return parts__step(s, PART_VERB(attach));
}

/*
 * The first records (the session's, the clocks, the parts' first ones), the parts' start (the
 * drain thread first), then the command's first instruction. 0, or -1.
 */
static int recording__start(struct recording *s)
{
	const struct record_config *cfg = s->cfg;

	s->ctx.start_realtime_ns = clock_realtime_ns();
	s->ctx.start_mono_ns = clock_mono_ns();
	parts__each(s, PART_VERB(first_records), false);
	if (parts__step(s, PART_VERB(start)))
		return -1;
	if (!cfg->attach_pid && target__release(&s->target, 1)) {
		log_err("cannot start the target: %s", strerror(errno));
		return -1;
	}
	log_info("recording pid %d at %u Hz into %s (ring buffer %u MiB)", s->pid, cfg->freq_hz,
		 s->ctx.trace_shown, cfg->ringbuf_mb);
	if (cfg->duration_ns)
		s->deadline_ns = clock_mono_ns() + cfg->duration_ns;
	return 0;
}

/* The STATS entries of every part that ran, in xpu_stats.def's order. */
static unsigned int collect_stats(struct recording *s, struct xpu_stat_entry *stats,
				  unsigned int room)
{
	struct stat_sink sink = { 0 };
	size_t i;

	for (i = 0; i < rec_parts_nr; i++) {
		if (s->part_on[i] && rec_parts[i]->stats)
			rec_parts[i]->stats(s->part_state[i], &s->ctx, &sink);
	}
	return stat_sink__entries(&sink, stats, room);
}

/*
 * Tears down in the order that writes everything: the parts quiesced (sampling stopped last),
 * stopped (the drain once those that feed it are), their last records and the end records,
 * STATS; the trace committed, then what the parts make of it. Returns xpu-record's exit status.
 */
static int recording__finish(struct recording *s)
{
	const struct record_config *cfg = s->cfg;
	struct xpu_stat_entry stats[XPU_STATS_MAX];
	struct rec_summary said = { 0 };
	size_t i;
	int ret;

	parts__each(s, PART_VERB(quiesce), true);
	parts__each(s, PART_VERB(stop), true);
	ret = recording__ended(s);
	/* The command never ran (the child said why, in one line): no trace of it is kept. */
	s->ctx.discard = !cfg->attach_pid && s->child_reaped && target__exec_failed(&s->target);
	parts__each(s, PART_VERB(collect), true);
	s->ctx.nr_stats = collect_stats(s, stats, XPU_STATS_MAX);
	s->ctx.stats = stats;
	parts__each(s, PART_VERB(close), false);
	s->ctx.stats = NULL;
	if (s->ctx.failed)
		ret = ret ? ret : 1;
	if (s->ctx.committed)
		parts__each(s, PART_VERB(committed), false);
	for (i = rec_parts_nr; i-- > 0;) {
		if (s->part_on[i] && rec_parts[i]->summary)
			rec_parts[i]->summary(s->part_state[i], &said);
	}
	return ret;
}

/*
 * Setup failed somewhere: a command still behind its gate exits 127 without running, and a
 * trace that recorded nothing is removed rather than left looking like an empty profile.
 */
static void recording__abort(struct recording *s)
{
	if (!s->cfg->attach_pid && s->target.pid > 0) {
		target__release(&s->target, 0);
		waitpid(s->target.pid, NULL, 0);
	}
	/* the parts that feed the drain before the drain, the trace's writer after it */
	s->ctx.aborted = true;
	parts__each(s, PART_VERB(stop), true);
}

static void recording__free(struct recording *s)
{
	size_t i;

	if (s->target.exec_fd >= 0)
		close(s->target.exec_fd);
	/* the table first: it gives its handlers back what they keep in its slots */
	proc_table__free(s->pt);
	for (i = rec_parts_nr; i-- > 0;) {
		if (s->part_on[i] && rec_parts[i]->free)
			rec_parts[i]->free(s->part_state[i]);
	}
	if (s->sfd >= 0)
		close(s->sfd);
}

int recording__run(const struct record_config *cfg)
{
	struct recording s = { .cfg = cfg, .sfd = -1, .target = { .gate_fd = -1, .exec_fd = -1 } };
	int ret = 1;

	if (recording__setup(&s) || recording__launch(&s) || recording__start(&s)) {
		recording__abort(&s);
	} else {
		main_loop(&s);
		ret = recording__finish(&s);
	}
	recording__free(&s);
	return ret;
}
