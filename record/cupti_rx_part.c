// SPDX-License-Identifier: MIT
/*
 * The CUPTI receiver as a part of the recorder (part.h): the socket that the injected
 * libxpu-cupti.so sends GPU records (and the launches it walked in process) to, and the
 * environment that injects the library into a launched command, or, with -p, CUPTI started in
 * each process mid-run. Its three GPU rows are in every STATS record (0 without the library),
 * its INPROC rows once a library walked launches in process, or tried to.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf_setup.h"
#include "cupti_rx.h"
#include "gpu_attach.h"
#include "part.h"
#include "rb_drain.h"
#include "stat_sink.h"

#define CUPTI_STOP_TIMEOUT_MS 5000
#define CHILD_ENV_MAX 8

struct rx_part {
	struct rec_ctx *c;
	struct cupti_rx *rx;		/* NULL: no GPU tracing (no library, or it failed) */
	struct cupti_rx_stats st;	/* its final counters, once stopped */
	char *env[CHILD_ENV_MAX];	/* NULL-terminated */
};

static int is_traced_cb(void *ctx, pid_t pid)
{
	struct rx_part *p = ctx;

	return bpf_state__is_traced(p->c->bpf, pid);
}

/* The in-process walk's launches: to the drain, which takes them as the ring buffer's. */
static int inproc_events_cb(void *ctx, uint32_t pid, const void *entries, size_t len,
			    uint32_t launches)
{
	struct rx_part *p = ctx;

	return rb_drain__inject(p->c->drain, entries, len, launches);
}

/* A library's DONE: its launches queued so far processed before it is let go to its exit. */
static int inproc_sync_cb(void *ctx, uint32_t pid, int timeout_ms)
{
	struct rx_part *p = ctx;

	return rb_drain__sync(p->c->drain, timeout_ms);
}

/* Where a library keeps its threads' last launches, for the autograd node probe. */
static void inproc_slots_cb(void *ctx, uint32_t pid, uint64_t addr, uint32_t nslots)
{
	struct rx_part *p = ctx;

	if (!p->c->cfg->no_autograd &&
	    bpf_state__set_autograd_inproc(p->c->bpf, pid, addr, nslots) && addr)
		log_info("pid %u: autograd cannot see its in-process launches", pid);
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

/* What injects the library into the launched command, and how it talks to the receiver. */
static int build_env(struct rx_part *p)
{
	const struct record_config *cfg = p->c->cfg;
	const char *lib = p->c->gpu_lib, *nvtx = getenv("NVTX_INJECTION64_PATH");
	const char *graphs = cfg->cuda_graphs ? cfg->cuda_graphs : "node";
	char **env = p->env;
	size_t k;

	if (asprintf(&env[0], "CUDA_INJECTION64_PATH=%s", lib) < 0 ||
	    asprintf(&env[1], "XPU_CUPTI_SOCKET=%s", cupti_rx__socket_path(p->rx)) < 0 ||
	    /* NVTX calls reach CUPTI only through the NVTX injection hook. */
	    asprintf(&env[2], "NVTX_INJECTION64_PATH=%s", nvtx ? nvtx : lib) < 0 ||
	    asprintf(&env[3], "XPU_CUDA_GRAPHS=%s", graphs) < 0)
		return -1;
	/* no launch callbacks, and no API records, which only launch stacks use */
	if (cfg->no_launch_stacks && (!(env[4] = strdup("XPU_CUPTI_LAUNCH_STACKS=0")) ||
				      !(env[5] = strdup("XPU_CUPTI_API=none"))))
		return -1;
	/*
	 * How long the library waits at connect for the SHARE sent in answer to its HELLO
	 * (cupti-wire.md): none comes without a share, so not at all; with one, long enough
	 * for a receiver thread that a loaded machine runs late (it answers in a millisecond
	 * otherwise): the default of 50 ms left a short program's first launches to BPF.
	 */
	for (k = 0; env[k]; k++)
		;
	if (k + 1 < CHILD_ENV_MAX && !(env[k] = strdup(p->c->ws ? "XPU_CUPTI_SHARE_WAIT_MS=5000" :
							    "XPU_CUPTI_SHARE_WAIT_MS=0")))
		return -1;
	/* --launch-walk=check: the library walks in process and calls the marker as well */
	if (cfg->launch_walk_check && ++k + 1 < CHILD_ENV_MAX &&
	    !(env[k] = strdup("XPU_CUPTI_INPROC=check")))
		return -1;
	return 0;
}

/* The receiver, if there is a library to inject; an error only for want of memory. */
static int start_receiver(struct rx_part *p)
{
	const struct record_config *cfg = p->c->cfg;
	char err[512] = "";
	uid_t uid;
	gid_t gid;

	if (!p->c->gpu_lib)
		return 0;
	p->rx = cupti_rx__start(p->c->wt, is_traced_cb, p, err, sizeof(err));
	if (!p->rx) {
		log_err("GPU tracing off: %s", err);
		return 0;
	}
	p->c->session_flags |= XPU_SESSION_GPU;
	if (cfg->attach_pid && process_owner(cfg->attach_pid, &uid, &gid) && uid)
		chown_socket(uid, gid, cupti_rx__socket_path(p->rx));
	if (!cfg->attach_pid && build_env(p))
		return -1;
	if (cfg->drop_root)
		chown_socket(cfg->user_uid, cfg->user_gid, cupti_rx__socket_path(p->rx));
	if (p->c->ws)
		cupti_rx__set_walk_share(p->rx, p->c->ws);
	if (!cfg->attach_pid)
		p->c->child_env = p->env;
	return 0;
}

static void stop_receiver(struct rx_part *p, int timeout_ms, struct cupti_rx_stats *st)
{
	if (p->rx)
		cupti_rx__stop(p->rx, timeout_ms, st);
	p->rx = NULL;
}

static void rx_part__free(void *state)
{
	struct rx_part *p = state;
	size_t i;

	stop_receiver(p, 0, NULL);
	for (i = 0; i < CHILD_ENV_MAX; i++)
		free(p->env[i]);
	free(p);
}

static int rx_part__setup(struct rec_ctx *c, void **state)
{
	struct rx_part *p = calloc(1, sizeof(*p));

	if (!p)
		return -1;
	p->c = c;
	if (start_receiver(p)) {
		log_err("cannot set up GPU tracing: %s", strerror(ENOMEM));
		c->child_env = NULL;
		rx_part__free(p);
		return -1;
	}
	*state = p;
	return 0;
}

/*
 * -p on a process that uses CUDA: CUPTI started there now (record/gpu_attach.h). Whatever
 * fails, the CPU recording goes on, and the reason is said once.
 */
static void attach_gpu(struct rx_part *p, pid_t pid)
{
	char err[512] = "";
	int e;

	e = gpu_attach__inject(pid, p->c->gpu_lib, cupti_rx__socket_path(p->rx), err, sizeof(err));
	if (!e)
		log_info("GPU: CUPTI started in pid %d mid-run: its GPU work from now on is recorded",
			 pid);
	else if (e == -ENOENT && strstr(err, "has not loaded CUDA"))
		log_err("%s", err);
	else
		log_err("GPU work of pid %d not recorded: %s", pid, err);
}

/* The drain runs: in-process launches go to it; attached processes get CUPTI from now on. */
static int rx_part__start(void *state, struct rec_ctx *c)
{
	struct rx_part *p = state;
	struct cupti_rx_sink sink = {
		.on_events = inproc_events_cb, .on_inproc = inproc_slots_cb,
		.on_sync = inproc_sync_cb, .ctx = p,
	};
	unsigned int i;

	if (!p->rx)
		return 0;
	cupti_rx__set_sink(p->rx, &sink);
	for (i = 0; i < c->cfg->nattach; i++)
		attach_gpu(p, c->cfg->attach_pids[i]);
	return 0;
}

/* processes that run on (-p, -d) stop collecting while their launches are still taken */
static void rx_part__quiesce(void *state, struct rec_ctx *c)
{
	struct rx_part *p = state;

	if (p->rx && cupti_rx__stop_clients(p->rx, CUPTI_STOP_TIMEOUT_MS) > 0)
		log_err("GPU: %s did not finish within %d ms: their last records may be missing",
			"some processes", CUPTI_STOP_TIMEOUT_MS);
}

/*
 * Before the drain: its last launches walked in process go to the drain's queue. The walk's
 * counters of both paths add up: the library's totals are the BPF counters' kind.
 */
static void rx_part__stop(void *state, struct rec_ctx *c)
{
	struct rx_part *p = state;
	unsigned int i;

	if (c->aborted) {
		stop_receiver(p, 0, NULL);
		return;
	}
	stop_receiver(p, CUPTI_STOP_TIMEOUT_MS, &p->st);
	for (i = 0; i < XPU_CNT_NR; i++)
		c->cnt[i] += p->st.walk.cnt[i];
}

/* A library walked launches in process, or tried to: the INPROC rows. */
static bool inproc_seen(const struct cupti_rx_stats *st)
{
	return st->walk.inproc[XPU_INPROC_WALKS] || st->walk.inproc[XPU_INPROC_FALLBACKS] ||
	       st->inproc_launches || st->inproc_dropped || st->inproc_refused;
}

static void put_inproc(struct stat_sink *sink, const struct cupti_rx_stats *st,
		       const struct rb_drain_stats *drained)
{
	static const struct {
		enum xpu_stat_id id;
		unsigned int what;
	} walk[] = {
		{ XPU_STAT_INPROC_WALKS, XPU_INPROC_WALKS },
		{ XPU_STAT_INPROC_FALLBACKS, XPU_INPROC_FALLBACKS },
		{ XPU_STAT_INPROC_FB_NO_SHARE, XPU_INPROC_FB_NO_SHARE },
		{ XPU_STAT_INPROC_FB_NO_THREAD, XPU_INPROC_FB_NO_THREAD },
		{ XPU_STAT_INPROC_FB_OFF_STACK, XPU_INPROC_FB_OFF_STACK },
		{ XPU_STAT_INPROC_FB_NO_TABLE, XPU_INPROC_FB_NO_TABLE },
		{ XPU_STAT_INPROC_FB_CHANGED, XPU_INPROC_FB_CHANGED },
		{ XPU_STAT_INPROC_FB_CODE_READ, XPU_INPROC_FB_CODE_READ },
		{ XPU_STAT_INPROC_FB_PYTHON, XPU_INPROC_FB_PYTHON },
		{ XPU_STAT_INPROC_FB_RING_FULL, XPU_INPROC_FB_RING_FULL },
		{ XPU_STAT_INPROC_FB_INCOMPLETE, XPU_INPROC_FB_INCOMPLETE },
		{ XPU_STAT_INPROC_EVENT_BYTES, XPU_INPROC_EVENT_BYTES },
	};
	size_t i;

	for (i = 0; i < sizeof(walk) / sizeof(walk[0]); i++)
		stat_sink__put(sink, walk[i].id, st->walk.inproc[walk[i].what]);
	stat_sink__put(sink, XPU_STAT_INPROC_LAUNCHES, drained ? drained->inproc_launches : 0);
	stat_sink__put(sink, XPU_STAT_INPROC_TIMED, st->walk.inproc[XPU_INPROC_TIMED]);
	stat_sink__put(sink, XPU_STAT_INPROC_TIMED_NS, st->walk.inproc[XPU_INPROC_TIMED_NS]);
	stat_sink__put(sink, XPU_STAT_INPROC_MEMO_WALKS, st->walk.inproc[XPU_INPROC_MEMO_WALKS]);
	stat_sink__put(sink, XPU_STAT_INPROC_MEMO_FRAMES, st->walk.inproc[XPU_INPROC_MEMO_FRAMES]);
	stat_sink__put(sink, XPU_STAT_INPROC_EVENTS_DROPPED, st->inproc_dropped);
	stat_sink__put(sink, XPU_STAT_INPROC_LAUNCHES_LOST, st->inproc_refused);
}

static void rx_part__stats(void *state, const struct rec_ctx *c, struct stat_sink *sink)
{
	struct rx_part *p = state;

	stat_sink__put(sink, XPU_STAT_GPU_RECORDS, p->st.records);
	stat_sink__put(sink, XPU_STAT_CUPTI_CLIENTS, p->st.clients);
	stat_sink__put(sink, XPU_STAT_CUPTI_REJECTED, p->st.rejected);
	stat_sink__put(sink, XPU_STAT_GRAPH_NODES, p->st.graph_nodes);
	stat_sink__put(sink, XPU_STAT_GRAPH_NODES_NO_CALL, p->st.graph_nodes_no_call);
	stat_sink__put(sink, XPU_STAT_GRAPH_CLONES, p->st.graph_clones);
	stat_sink__put(sink, XPU_STAT_GRAPH_UPDATES, p->st.graph_updates);
	if (inproc_seen(&p->st))
		put_inproc(sink, &p->st, c->drained);
}

static void rx_part__summary(void *state, struct rec_summary *sum)
{
	struct rx_part *p = state;

	sum->gpu_records = p->st.records;
}

const struct rec_part cupti_rx_part = {
	.name = "cupti_rx",
	.required = true,
	.threads = true,
	.setup = rx_part__setup,
	.start = rx_part__start,
	.quiesce = rx_part__quiesce,
	.stop = rx_part__stop,
	.stats = rx_part__stats,
	.summary = rx_part__summary,
	.free = rx_part__free,
};
