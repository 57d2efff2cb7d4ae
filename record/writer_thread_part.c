// SPDX-License-Identifier: MIT
/*
 * The trace as a part of the recorder (part.h): the file opened (output.h) with its writer
 * thread, which every later part writes through (c->wt); its own records (SESSION and a
 * CLOCK_SYNC first, one every 10 s, a CLOCK_SYNC and SESSION_END last), STATS at close and the
 * file put in place, or not; a write that fails said once; then the last lines on stderr.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "clock.h"
#include "fd_limit.h"
#include "human_bytes.h"
#include "output.h"
#include "part.h"
#include "rb_drain.h"
#include "stat_sink.h"
#include "target.h"
#include "trace_writer.h"
#include "writer_thread.h"

#define CLOCK_SYNC_INTERVAL_NS (10ull * 1000 * 1000 * 1000)
#define CLOCK_SYNC_BRACKETS 10
#define WRITER_QUEUE_BYTES (64u << 20)

struct writer_part {
	struct rec_ctx *c;
	struct writer_thread *wt;
	struct output out;
	uint64_t next_clock;		/* the next CLOCK_SYNC; 0: at the first tick */
	bool write_failed;		/* said once, at the tick that saw it */
	int finish_err;			/* writer_thread__finish()'s */
	struct wt_summary sum;
};

static int writer_part__setup(struct rec_ctx *c, void **state)
{
	struct writer_part *p = calloc(1, sizeof(*p));
	struct trace_writer_opts wo = { 0 };
	struct trace_writer *w;
	int fd;

	if (!p)
		return -1;
	p->c = c;
	fd = output__open(&p->out, c->cfg);
	if (fd < 0)
		goto fail;
	w = trace_writer__open_fd(fd, &wo);
	if (!w) {
		log_err("cannot write %s: %s", p->out.shown, strerror(errno));
		close(fd);
		goto fail;
	}
	p->wt = writer_thread__start(w, WRITER_QUEUE_BYTES);
	if (!p->wt) {
		log_err("cannot start the writer thread: %s", strerror(errno));
		trace_writer__close(w);
		goto fail;
	}
	c->wt = p->wt;
	c->trace_path = p->out.to_stdout ? NULL : p->out.path;
	/* FILE.partial until close */
	c->trace_shown = p->out.partial ? p->out.partial : p->out.shown;
	*state = p;
	return 0;
fail:
	/* a file opened is removed: a trace that recorded nothing would look like an empty one */
	output__discard(&p->out);
	free(p);
	return -1;
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

static void submit_clock_sync(struct writer_part *p)
{
	struct xpu_rec_clock_sync cs;
	struct wt_rec r = {
		.type = XPU_REC_CLOCK_SYNC, .body = &cs, .body_size = sizeof(cs), .must_keep = true,
	};

	clock_sync__measure(&cs, CLOCK_SYNC_BRACKETS);
	r.ts_ns = cs.mono_ns;
	writer_thread__submit(p->wt, &r);
}

static void submit_session(struct writer_part *p, const struct rec_ctx *c)
{
	const struct record_config *cfg = c->cfg;
	static char cmdline[16384], options[8192], kernel[400];
	struct xpu_rec_session rec = {
		.ncpu = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN),
		.page_size_bytes = (uint32_t)sysconf(_SC_PAGESIZE),
		.sample_freq_hz = cfg->freq_hz,
		.stack_mode = cfg->cfi ? XPU_STACK_CFI :
			      cfg->dwarf_bytes ? XPU_STACK_DWARF : XPU_STACK_FP,
		.dwarf_stack_bytes = cfg->dwarf_bytes,
		.dwarf_top_bytes = cfg->dwarf_top_bytes,
		.target_pid = (uint32_t)c->pid,
		.start_mono_ns = c->start_mono_ns,
		.start_realtime_ns = c->start_realtime_ns,
	};
	struct wt_rec r = {
		.type = XPU_REC_SESSION, .ts_ns = c->start_mono_ns,
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
	rec.flags |= c->session_flags;
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
	writer_thread__submit(p->wt, &r);
}

/* The first records of every trace: what was recorded, and the clocks at its start. */
static void writer_part__first_records(void *state, struct rec_ctx *c)
{
	struct writer_part *p = state;

	submit_session(p, c);
	submit_clock_sync(p);
}

/*
 * The trace cannot grow (full disk, quota, I/O error): said once; the BPF part stops sampling
 * (its tick comes after this one) and the recording stops an attached one. A launched
 * target is left to run to completion, still the recording's child (its status and ^C work as
 * before); xpu-record then exits non-zero. Else a CLOCK_SYNC every 10 s.
 */
static void writer_part__tick(void *state, struct rec_ctx *c)
{
	struct writer_part *p = state;

	if (!p->write_failed && writer_thread__error(p->wt)) {
		p->write_failed = true;
		log_err("cannot write %s: %s; recording stopped%s, the trace so far stays readable",
			p->out.shown, strerror(-writer_thread__error(p->wt)),
			c->cfg->attach_pid ? "" : " (the command keeps running)");
		c->write_failed = true;
	}
	if (!p->next_clock) {
		p->next_clock = c->now_ns + CLOCK_SYNC_INTERVAL_NS;
	} else if (c->now_ns >= p->next_clock) {
		submit_clock_sync(p);
		p->next_clock = c->now_ns + CLOCK_SYNC_INTERVAL_NS;
	}
}

/* Setup or launch failed: what was written goes, and the file with it. */
static void writer_part__stop(void *state, struct rec_ctx *c)
{
	struct writer_part *p = state;

	if (!c->aborted)
		return;
	writer_thread__finish(p->wt, NULL, 0, NULL);
	p->wt = NULL;
	c->wt = NULL;
	output__discard(&p->out);
}

/* After every later part's last records: the clocks at the end, and how the command ended. */
static void writer_part__collect(void *state, struct rec_ctx *c)
{
	struct writer_part *p = state;
	struct xpu_rec_session_end end = c->end;
	struct wt_rec r = {
		.type = XPU_REC_SESSION_END,
		.body = &end, .body_size = sizeof(end), .must_keep = true,
	};

	submit_clock_sync(p);
	end.end_mono_ns = r.ts_ns = clock_mono_ns();
	writer_thread__submit(p->wt, &r);
}

static void writer_part__stats(void *state, const struct rec_ctx *c, struct stat_sink *sink)
{
	stat_sink__put(sink, XPU_STAT_FD_EXHAUSTED, fd_limit__count());
}

/*
 * Everything queued written, then STATS; the trace put in place, or, when the command never
 * ran (the child said why, in one line), an older trace kept rather than replaced by an empty
 * one.
 */
static void writer_part__close(void *state, struct rec_ctx *c)
{
	struct writer_part *p = state;
	bool committed = false;
	int e;

	e = writer_thread__finish(p->wt, c->stats, c->nr_stats, &p->sum);
	p->finish_err = e;
	p->wt = NULL;
	c->wt = NULL;
	if (e || p->write_failed) {
		if (!p->write_failed)
			log_err("cannot write %s: %s", p->out.shown, strerror(-e));
		c->failed = true;
	}
	if (c->discard && !p->out.to_stdout)
		output__discard(&p->out);
	else if (output__commit(&p->out))
		c->failed = true;
	else
		committed = true;
	c->committed = committed && !c->discard && !e && !p->write_failed;
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
static void say_summary(const struct writer_part *p, const struct rec_summary *parts)
{
	const struct wt_summary *sum = &p->sum;
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
		(unsigned long long)sum->samples, (unsigned long long)parts->gpu_records,
		parts->counts,
		(unsigned long long)lost, bytes,
		p->out.partial ? p->out.partial : p->out.shown, parts->beside);
}

/* The later parts' summary is in: a failed write already said all there is, in one line. */
static void writer_part__summary(void *state, struct rec_summary *sum)
{
	struct writer_part *p = state;
	const struct rec_ctx *c = p->c;
	const uint64_t *cnt = c->cnt;

	if (!c->discard && !p->finish_err && !p->write_failed)
		say_summary(p, sum);
	log_info("%llu samples, %llu lost in the ring buffer, %llu stack errors, %llu mappings, "
		 "%llu processes with unreadable mappings",
		 (unsigned long long)(c->drained ? c->drained->samples : 0),
		 (unsigned long long)cnt[XPU_CNT_RB_LOST],
		 (unsigned long long)(cnt[XPU_CNT_USTACK_ERR] + cnt[XPU_CNT_KSTACK_ERR]),
		 (unsigned long long)sum->mappings, (unsigned long long)sum->unreadable);
}

static void writer_part__free(void *state)
{
	struct writer_part *p = state;

	output__free(&p->out);
	free(p);
}

const struct rec_part writer_part = {
	.name = "writer",
	.required = true,
	.threads = true,
	.setup = writer_part__setup,
	.first_records = writer_part__first_records,
	.tick = writer_part__tick,
	.stop = writer_part__stop,
	.collect = writer_part__collect,
	.stats = writer_part__stats,
	.close = writer_part__close,
	.summary = writer_part__summary,
	.free = writer_part__free,
};
