// SPDX-License-Identifier: MIT
/*
 * BPF as a part of the recorder (part.h): bpf/xpu.bpf.c loaded at setup (the others' setup
 * finds its maps in c->bpf), the command's pids traced and every probe attached once it is
 * forked, its loss counters written as LOST records while it records and once the drain is
 * gone, sampling stopped after the others' quiesce. Its rows: the ring buffer's and the stack
 * mode's counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_setup.h"
#include "clock.h"
#include "part.h"
#include "stat_sink.h"
#include "writer_thread.h"

#define LOSS_POLL_INTERVAL_NS (1000ull * 1000 * 1000)

struct bpf_part {
	struct bpf_state *bpf;
	uint64_t reported[XPU_CNT_NR];	/* counter values already written as LOST */
	uint64_t next_loss;		/* the counters' next read; 0: at the first tick */
	bool stopped;			/* sampling stopped for a trace that cannot grow */
};

static int bpf_part__setup(struct rec_ctx *c, void **state)
{
	const struct record_config *cfg = c->cfg;
	struct bpf_setup_opts bo = {
		.freq_hz = cfg->freq_hz,
		.kernel_stacks = cfg->kernel_stacks,
		.ustack_bytes = cfg->dwarf_bytes,
		.ustack_top_bytes = cfg->dwarf_top_bytes,
		.cfi = cfg->cfi,
		.copy_short_walks = cfg->copy_short_walks,
		.ringbuf_bytes = (size_t)cfg->ringbuf_mb << 20,
		.gpu_lib = c->gpu_lib,
		.off_cpu = cfg->off_cpu,
		.off_cpu_min_ns = cfg->off_cpu_min_ns,
		.autograd = !cfg->no_autograd,
	};
	struct bpf_part *p = calloc(1, sizeof(*p));
	char err[512] = "";

	if (!p)
		return -1;
	if (bpf_state__load(&p->bpf, &bo, err, sizeof(err))) {
		log_err("%s", err);
		free(p);
		return -1;
	}
	c->bpf = p->bpf;
	*state = p;
	return 0;
}

/* The command, sampled from its exec on (before it, it is xpu-record's image), then the probes. */
static int bpf_part__attach(void *state, struct rec_ctx *c)
{
	const struct record_config *cfg = c->cfg;
	struct bpf_part *p = state;
	char err[512] = "";
	unsigned int i;
	pid_t pid = c->pid;
	int e;

	e = bpf_state__trace_pid(p->bpf, pid, !cfg->attach_pid);
	for (i = 1; !e && i < cfg->nattach; i++) {
		pid = cfg->attach_pids[i];
		e = bpf_state__trace_pid(p->bpf, pid, false);
	}
	if (e) {
		log_err("cannot trace pid %d: %s", pid, strerror(-e));
		return -1;
	}
	if (bpf_state__attach(p->bpf, err, sizeof(err))) {
		log_err("%s", err);
		return -1;
	}
	return 0;
}

static void submit_lost(struct rec_ctx *c, uint32_t source, uint64_t count, uint64_t ts)
{
	struct xpu_rec_lost lost = { .ts_ns = ts, .source = source, .count = count };
	struct wt_rec r = {
		.type = XPU_REC_LOST, .ts_ns = ts,
		.body = &lost, .body_size = sizeof(lost), .must_keep = true,
	};

	writer_thread__submit(c->wt, &r);
}

/* Writes the growth of the BPF loss counters since the last call as LOST records. */
static void report_losses(struct bpf_part *p, struct rec_ctx *c, uint64_t *cnt)
{
	const uint64_t *was = p->reported;
	uint64_t now = clock_mono_ns();

	if (bpf_state__read_counters(p->bpf, cnt))
		return;
	if (cnt[XPU_CNT_RB_LOST] > was[XPU_CNT_RB_LOST])
		submit_lost(c, XPU_LOST_RINGBUF, cnt[XPU_CNT_RB_LOST] - was[XPU_CNT_RB_LOST], now);
	if (cnt[XPU_CNT_USTACK_ERR] + cnt[XPU_CNT_KSTACK_ERR] >
	    was[XPU_CNT_USTACK_ERR] + was[XPU_CNT_KSTACK_ERR])
		submit_lost(c, XPU_LOST_STACK,
			    cnt[XPU_CNT_USTACK_ERR] + cnt[XPU_CNT_KSTACK_ERR] -
				    was[XPU_CNT_USTACK_ERR] - was[XPU_CNT_KSTACK_ERR], now);
	if (cnt[XPU_CNT_OFFCPU_LOST] > was[XPU_CNT_OFFCPU_LOST])
		submit_lost(c, XPU_LOST_OFF_CPU,
			    cnt[XPU_CNT_OFFCPU_LOST] - was[XPU_CNT_OFFCPU_LOST], now);
	memcpy(p->reported, cnt, sizeof(p->reported));
}

/*
 * Losses every second; a trace that cannot grow stops sampling, so the target pays nothing
 * more (the trace's tick, before this one, said so).
 */
static void bpf_part__tick(void *state, struct rec_ctx *c)
{
	struct bpf_part *p = state;
	uint64_t cnt[XPU_CNT_NR];

	if (c->write_failed && !p->stopped) {
		bpf_state__stop_sampling(p->bpf);
		p->stopped = true;
	}
	if (!p->next_loss) {
		p->next_loss = c->now_ns + LOSS_POLL_INTERVAL_NS;
	} else if (c->now_ns >= p->next_loss) {
		report_losses(p, c, cnt);
		p->next_loss = c->now_ns + LOSS_POLL_INTERVAL_NS;
	}
}

/* After the others' quiesce, which may still need samples and launches taken. */
static void bpf_part__quiesce(void *state, struct rec_ctx *c)
{
	struct bpf_part *p = state;

	bpf_state__log_run_times(p->bpf);
	bpf_state__stop_sampling(p->bpf);
}

/* The drain is gone: the counters of the whole recording, their last growth as LOST. */
static void bpf_part__stop(void *state, struct rec_ctx *c)
{
	struct bpf_part *p = state;
	uint64_t cnt[XPU_CNT_NR] = { 0 };
	unsigned int n;

	if (c->aborted)
		return;
	report_losses(p, c, cnt);
	for (n = 0; n < XPU_CNT_NR; n++)
		c->cnt[n] += cnt[n];
}

static void bpf_part__stats(void *state, const struct rec_ctx *c, struct stat_sink *sink)
{
	const struct record_config *cfg = c->cfg;
	const uint64_t *cnt = c->cnt;

	stat_sink__put(sink, XPU_STAT_RINGBUF_LOST, cnt[XPU_CNT_RB_LOST]);
	stat_sink__put(sink, XPU_STAT_STACK_ERRORS,
		       cnt[XPU_CNT_USTACK_ERR] + cnt[XPU_CNT_KSTACK_ERR]);
	if (cfg->dwarf_bytes) {
		stat_sink__put(sink, XPU_STAT_STACK_COPIES, cnt[XPU_CNT_USTACK_COPIES]);
		stat_sink__put(sink, XPU_STAT_STACK_COPY_ERRORS, cnt[XPU_CNT_USTACK_COPY_ERR]);
		if (cfg->dwarf_top_bytes)
			stat_sink__put(sink, XPU_STAT_STACK_TOP_ERRORS,
				       cnt[XPU_CNT_USTACK_TOP_ERR]);
	}
}

static void bpf_part__free(void *state)
{
	struct bpf_part *p = state;

	bpf_state__destroy(p->bpf);
	free(p);
}

const struct rec_part bpf_part = {
	.name = "bpf",
	.required = true,
	.setup = bpf_part__setup,
	.attach = bpf_part__attach,
	.tick = bpf_part__tick,
	.quiesce = bpf_part__quiesce,
	.stop = bpf_part__stop,
	.stats = bpf_part__stats,
	.free = bpf_part__free,
};
