// SPDX-License-Identifier: MIT
/*
 * BPF lifecycle: open, set rodata and map sizes, load, attach; every attach is checked and a
 * missing optional tracepoint (mmap) degrades to rescanning on samples instead of failing.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_setup.h"
#include "config.h"
#include "xpu.skel.h"

#define XPU_GPU_MARKER "xpu_cupti_api_enter"

struct bpf_state {
	struct xpu_bpf *skel;
	struct bpf_link **links;	/* tracepoints, mmap, uprobe */
	size_t nr_links;
	struct bpf_link **perf_links;
	int *perf_fds;
	int nr_cpus;
	bool mmap_tracking;
	bool tracefs_mounted;		/* by us: unmounted at the end, as we found the host */
	bool gpu_attached;
	bool off_cpu;
	struct bpf_link *off_links[3];	/* --off-cpu: detached with the sampler */
	const char *gpu_lib;
	unsigned int freq_hz;
	/*
	 * autograd probes: attached by the drain thread as PyTorch libraries appear. Their
	 * programs are verified only then (a second instance of the object, on the first one's
	 * maps): their CFI walk is a third of the verifier's time at start, which a target
	 * without PyTorch never needs. Under ag_lock.
	 */
	pthread_mutex_t ag_lock;
	bool autograd;			/* not --no-autograd */
	struct xpu_bpf *ag_skel;	/* loaded: on_ag_node and on_ag_eval_begin only */
	int ag_load_err;		/* the load failed (not retried): its errno */
	char ag_load_msg[160];
	struct bpf_link **ag_links;
	size_t nr_ag_links;
};

static void set_err(char *err, size_t errlen, const char *what, int e)
{
	/* as root, EACCES from loading is the verifier's refusal, not a missing privilege */
	if ((e == EPERM || e == EACCES) && !geteuid() && !strcmp(what, "bpf()"))
		snprintf(err, errlen, "the kernel's verifier refused a BPF program (bpf(): %s; "
			 "-v shows its log)", strerror(e));
	else if (e == EPERM || e == EACCES)
		snprintf(err, errlen,
			 "need root or CAP_BPF+CAP_PERFMON to load BPF programs (%s: %s)", what,
			 strerror(e));
	else if (!strcmp(what, "bpf()"))
		snprintf(err, errlen, "loading BPF programs (bpf()): %s (-vv shows the verifier log)",
			 strerror(e));
	else
		snprintf(err, errlen, "%s: %s", what, strerror(e));
}

static bool tracepoint_exists(struct bpf_state *st, const char *cat, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/%s/id", cat, name);
	if (!access(path, F_OK))
		return true;
	/*
	 * Some hosts (minimal VMs, containers) leave tracefs unmounted; libbpf needs it to
	 * resolve tracepoint ids. We are root here; the mount goes again at the end.
	 */
	if (access("/sys/kernel/tracing/events", F_OK) &&
	    !mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL)) {
		st->tracefs_mounted = true;
		if (!access(path, F_OK))
			return true;
	}
	snprintf(path, sizeof(path), "/sys/kernel/debug/tracing/events/%s/%s/id", cat, name);
	return !access(path, F_OK);
}

/*
 * -vvv: the verifier's statistics of the stack-taking programs (instructions processed, time),
 * what start-up spends the most on. A buffer each: the kernel writes the log at the end, and
 * refuses the load (ENOSPC) when it does not fit: the statistics list every subprogram's stack
 * depth, past 1 KiB for these programs, so the buffers are roomy.
 */
#define VERIFIER_STATS_LEN (64 << 10)
static char verifier_stats[2][VERIFIER_STATS_LEN];

static struct bpf_program *stats_prog(struct xpu_bpf *skel, int i)
{
	return i ? skel->progs.on_gpu_launch : skel->progs.on_sample;
}

static void want_verifier_stats(struct xpu_bpf *skel)
{
	int i;

	for (i = 0; i < 2; i++) {
		verifier_stats[i][0] = 0;
		bpf_program__set_log_buf(stats_prog(skel, i), verifier_stats[i], VERIFIER_STATS_LEN);
		bpf_program__set_log_level(stats_prog(skel, i), 4);
	}
}

static void print_verifier_stats(struct xpu_bpf *skel)
{
	int i;

	for (i = 0; i < 2; i++) {
		char *line = strstr(verifier_stats[i], "processed"), *nl;

		if (!line || !bpf_program__autoload(stats_prog(skel, i)))
			continue;
		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		log_info("verifier: %s: %s", bpf_program__name(stats_prog(skel, i)), line);
	}
}

int bpf_state__load(struct bpf_state **out, const struct bpf_setup_opts *opts, char *err,
		    size_t errlen)
{
	struct bpf_state *st = calloc(1, sizeof(*st));
	int ret;

	if (!st)
		return -ENOMEM;
	pthread_mutex_init(&st->ag_lock, NULL);
	st->skel = xpu_bpf__open();
	if (!st->skel) {
		ret = -errno;
		set_err(err, errlen, "opening the BPF object", -ret);
		goto fail;
	}
	st->skel->rodata->kernel_stacks = opts->kernel_stacks;
	st->skel->rodata->ustack_bytes = opts->ustack_bytes;
	st->skel->rodata->ustack_top_bytes = opts->ustack_top_bytes;
	st->skel->rodata->cfi_walk = opts->cfi;
	st->skel->rodata->copy_short_walks = opts->copy_short_walks;
	if (opts->ustack_bytes) {
		int ncpu = libbpf_num_possible_cpus();

		ret = ncpu > 0 ? bpf_map__set_max_entries(st->skel->maps.ustack_scratch,
							  XPU_BPF_SLOTS * (uint32_t)ncpu) :
				   ncpu;
		if (ret) {
			set_err(err, errlen, "sizing the stack copy scratch map", -ret);
			goto fail;
		}
	}
	ret = bpf_map__set_max_entries(st->skel->maps.events, (uint32_t)opts->ringbuf_bytes);
	if (ret) {
		set_err(err, errlen, "sizing the ring buffer", -ret);
		goto fail;
	}
	st->mmap_tracking = tracepoint_exists(st, "syscalls", "sys_enter_mmap") &&
			    tracepoint_exists(st, "syscalls", "sys_exit_mmap");
	if (!st->mmap_tracking) {
		log_info("no syscalls:sys_*_mmap tracepoints; dlopen'ed code is found from samples");
		bpf_program__set_autoload(st->skel->progs.on_mmap_enter, false);
		bpf_program__set_autoload(st->skel->progs.on_mmap_exit, false);
	}
	if (!opts->gpu_lib)
		bpf_program__set_autoload(st->skel->progs.on_gpu_launch, false);
	/* loaded at the first PyTorch library, if one comes (bpf_state__load_autograd) */
	st->autograd = opts->autograd;
	bpf_program__set_autoload(st->skel->progs.on_ag_node, false);
	bpf_program__set_autoload(st->skel->progs.on_ag_eval_begin, false);
	st->off_cpu = opts->off_cpu;
	st->skel->rodata->off_cpu = opts->off_cpu;
	st->skel->rodata->off_cpu_min_ns = opts->off_cpu_min_ns;
	if (!opts->off_cpu) {
		/* a preallocated hash: 5 MiB of kernel memory for nothing */
		bpf_map__set_max_entries(st->skel->maps.off_cpu_threads, 1);
		bpf_program__set_autoload(st->skel->progs.on_sched_switch, false);
		bpf_program__set_autoload(st->skel->progs.on_sched_waking, false);
		bpf_program__set_autoload(st->skel->progs.on_sys_exit_offcpu, false);
	}
	st->gpu_lib = opts->gpu_lib;
	st->freq_hz = opts->freq_hz;
	if (xpu_verbose >= 3)	/* -vv: libbpf prints the whole log of a refusal instead */
		want_verifier_stats(st->skel);
	ret = xpu_bpf__load(st->skel);
	if (ret) {
		set_err(err, errlen, "bpf()", -ret);
		goto fail;
	}
	if (xpu_verbose >= 3)
		print_verifier_stats(st->skel);
	*out = st;
	return 0;
fail:
	bpf_state__destroy(st);
	return ret < 0 ? ret : -EINVAL;
}

static int add_link(struct bpf_state *st, struct bpf_link *link)
{
	struct bpf_link **l = realloc(st->links, (st->nr_links + 1) * sizeof(*l));

	if (!l) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	st->links = l;
	st->links[st->nr_links++] = link;
	return 0;
}

static int attach_prog(struct bpf_state *st, struct bpf_program *prog, char *err, size_t errlen)
{
	struct bpf_link *link = bpf_program__attach(prog);
	char what[128];

	if (!link) {
		int e = errno;

		snprintf(what, sizeof(what), "attaching %s", bpf_program__name(prog));
		set_err(err, errlen, what, e);
		return -e;
	}
	return add_link(st, link);
}

/* Online CPUs from sysfs ("0-3,5"); falls back to every possible CPU. */
static int online_cpus(bool *online, int nr_possible)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int a, b, n = 0, i;
	char sep;

	if (!f) {
		for (i = 0; i < nr_possible; i++)
			online[i] = true;
		return nr_possible;
	}
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
			if (fscanf(f, "%d", &b) != 1)
				break;
			if (fscanf(f, "%c", &sep) != 1)
				sep = '\n';
		}
		for (i = a; i <= b && i < nr_possible; i++, n++)
			online[i] = true;
		if (sep != ',')
			break;
	}
	fclose(f);
	return n;
}

static int open_perf_events(struct bpf_state *st, char *err, size_t errlen)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = st->freq_hz,
	};
	int nr = libbpf_num_possible_cpus(), cpu, attached = 0, first_err = 0;
	bool *online;

	if (nr <= 0)
		return -EINVAL;
	online = calloc(nr, sizeof(*online));
	st->perf_fds = calloc(nr, sizeof(*st->perf_fds));
	st->perf_links = calloc(nr, sizeof(*st->perf_links));
	if (!online || !st->perf_fds || !st->perf_links) {
		free(online);
		return -ENOMEM;
	}
	st->nr_cpus = nr;
	online_cpus(online, nr);
	for (cpu = 0; cpu < nr; cpu++) {
		st->perf_fds[cpu] = -1;
		if (!online[cpu])
			continue;
		st->perf_fds[cpu] = syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
					    PERF_FLAG_FD_CLOEXEC);
		if (st->perf_fds[cpu] < 0) {
			if (!first_err)
				first_err = errno;
			log_info("perf_event_open on cpu %d: %s", cpu, strerror(errno));
			continue;
		}
		st->perf_links[cpu] = bpf_program__attach_perf_event(st->skel->progs.on_sample,
								     st->perf_fds[cpu]);
		if (!st->perf_links[cpu]) {
			first_err = errno;
			set_err(err, errlen, "attaching the sampler to a perf event", errno);
			free(online);
			return -first_err;
		}
		attached++;
	}
	free(online);
	if (!attached) {
		if (first_err == EINVAL)
			snprintf(err, errlen,
				 "perf_event_open(cpu-clock, %u Hz): %s (above "
				 "kernel.perf_event_max_sample_rate?)",
				 st->freq_hz, strerror(first_err));
		else if (first_err == EACCES || first_err == EPERM)
			set_err(err, errlen, "perf_event_open()", first_err);
		else
			snprintf(err, errlen, "perf_event_open(cpu-clock): %s",
				 strerror(first_err ? first_err : ENODEV));
		return -(first_err ? first_err : ENODEV);
	}
	return 0;
}

/* --off-cpu: the block tracker (bpf/offcpu.bpf.h); the exit program is attached already. */
static int attach_off_cpu(struct bpf_state *st, char *err, size_t errlen)
{
	struct bpf_program *progs[3] = { st->skel->progs.on_sched_switch,
					 st->skel->progs.on_sched_waking,
					 st->skel->progs.on_sys_exit_offcpu };
	int i;

	for (i = 0; i < 3; i++) {
		st->off_links[i] = bpf_program__attach(progs[i]);
		if (!st->off_links[i]) {
			char what[128];
			int e = errno;

			snprintf(what, sizeof(what), "--off-cpu: attaching %s",
				 bpf_program__name(progs[i]));
			set_err(err, errlen, what, e);
			return -e;
		}
	}
	return 0;
}

int bpf_state__attach(struct bpf_state *st, char *err, size_t errlen)
{
	struct xpu_bpf *s = st->skel;
	int ret;

	if ((ret = attach_prog(st, s->progs.on_fork, err, errlen)) ||
	    (ret = attach_prog(st, s->progs.on_exec, err, errlen)) ||
	    (ret = attach_prog(st, s->progs.on_exit, err, errlen)) ||
	    (ret = attach_prog(st, s->progs.on_rename, err, errlen)))
		return ret;
	if (st->mmap_tracking && ((ret = attach_prog(st, s->progs.on_mmap_enter, err, errlen)) ||
				  (ret = attach_prog(st, s->progs.on_mmap_exit, err, errlen))))
		return ret;
	if (st->gpu_lib) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = XPU_GPU_MARKER);
		struct bpf_link *link;

		/* pid -1: every process; the program keeps only traced tgids. */
		link = bpf_program__attach_uprobe_opts(s->progs.on_gpu_launch, -1, st->gpu_lib, 0,
						       &uo);
		if (!link) {
			char what[512];

			ret = -errno;
			snprintf(what, sizeof(what), "uprobe on %s in %s", XPU_GPU_MARKER,
				 st->gpu_lib);
			set_err(err, errlen, what, -ret);
			return ret;
		}
		ret = add_link(st, link);
		if (ret)
			return ret;
		st->gpu_attached = true;
	}
	if (st->off_cpu && (ret = attach_off_cpu(st, err, errlen)))
		return ret;
	return open_perf_events(st, err, errlen);
}

int bpf_state__trace_pid(struct bpf_state *st, pid_t pid, bool before_exec)
{
	uint32_t key = (uint32_t)pid;
	uint8_t v = before_exec ? XPU_TRACED_BEFORE_EXEC : XPU_TRACED;

	if (bpf_map__update_elem(st->skel->maps.traced_tgids, &key, sizeof(key), &v,
				 sizeof(v), BPF_ANY))
		return -errno;
	return 0;
}

bool bpf_state__is_traced(struct bpf_state *st, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	uint8_t v;

	return !bpf_map__lookup_elem(st->skel->maps.traced_tgids, &key, sizeof(key), &v,
				     sizeof(v), 0) ||
	       !bpf_map__lookup_elem(st->skel->maps.exited_tgids, &key, sizeof(key), &v,
				     sizeof(v), 0);
}

int bpf_state__events_fd(struct bpf_state *st)
{
	return bpf_map__fd(st->skel->maps.events);
}

int bpf_state__traced_fd(struct bpf_state *st)
{
	return bpf_map__fd(st->skel->maps.traced_tgids);
}

void bpf_state__cfi_fds(struct bpf_state *st, int *tables_fd, int *procs_fd)
{
	*tables_fd = bpf_map__fd(st->skel->maps.cfi_tables);
	*procs_fd = bpf_map__fd(st->skel->maps.cfi_procs);
}

int bpf_state__py_map_fd(struct bpf_state *st)
{
	return bpf_map__fd(st->skel->maps.py_procs);
}

int bpf_state__set_autograd_counter(struct bpf_state *st, uint32_t pid,
				    const struct xpu_ag_tls *place)
{
	struct bpf_map *m = st->skel->maps.ag_tls;

	if (!place)
		return bpf_map__delete_elem(m, &pid, sizeof(pid), 0);
	return bpf_map__update_elem(m, &pid, sizeof(pid), place, sizeof(*place), BPF_ANY);
}

int bpf_state__set_autograd_inproc(struct bpf_state *st, uint32_t pid, uint64_t addr,
				   uint32_t nslots)
{
	struct bpf_map *m = st->skel->maps.ag_inproc;
	struct xpu_ag_inproc v = { .addr = addr, .nslots = nslots };

	if (!addr)
		return bpf_map__delete_elem(m, &pid, sizeof(pid), 0);
	return bpf_map__update_elem(m, &pid, sizeof(pid), &v, sizeof(v), BPF_ANY);
}

bool bpf_state__gpu_attached(struct bpf_state *st)
{
	return st->gpu_attached;
}

static int attach_ag_one(struct bpf_state *st, struct bpf_program *prog, const char *path,
			 uint64_t off, bool retprobe, uint32_t cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = retprobe, .bpf_cookie = cookie);
	struct bpf_link *link, **l;

	/* pid -1: every process mapping the file; the programs keep only traced tgids */
	link = bpf_program__attach_uprobe_opts(prog, -1, path, (size_t)off, &uo);
	if (!link)
		return -errno;
	l = realloc(st->ag_links, (st->nr_ag_links + 1) * sizeof(*l));
	if (!l) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	st->ag_links = l;
	st->ag_links[st->nr_ag_links++] = link;
	return 0;
}

/* The loading thread's nice value while the autograd programs are verified */
#define AG_LOAD_NICE (-10)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The autograd programs, loaded from a second instance of the object whose every map is the
 * first instance's (the same ring buffer, counters, walk tables, ag_* maps, and .rodata, which
 * the verifier reads as the first load froze it): only the two programs are verified. ag_lock
 * held. 0 or negative errno, with a line in ag_load_msg.
 */
static int load_autograd(struct bpf_state *st)
{
	uint64_t t0 = mono_ns();
	pid_t tid = (pid_t)syscall(SYS_gettid);
	struct xpu_bpf *ag;
	struct bpf_program *prog;
	struct bpf_map *map, *mine;
	bool boosted;
	int ret, prio;

	ag = xpu_bpf__open();
	if (!ag) {
		ret = -errno;
		set_err(st->ag_load_msg, sizeof(st->ag_load_msg), "opening the BPF object", -ret);
		return ret;
	}
	*ag->rodata = *st->skel->rodata;
	bpf_object__for_each_map(map, ag->obj) {
		mine = bpf_object__find_map_by_name(st->skel->obj, bpf_map__name(map));
		ret = mine && bpf_map__fd(mine) >= 0 ? bpf_map__reuse_fd(map, bpf_map__fd(mine)) :
						       -ENOENT;
		if (ret) {
			char what[128];

			snprintf(what, sizeof(what), "sharing map %s", bpf_map__name(map));
			set_err(st->ag_load_msg, sizeof(st->ag_load_msg), what, -ret);
			goto fail;
		}
	}
	bpf_object__for_each_program(prog, ag->obj)
		bpf_program__set_autoload(prog, prog == ag->progs.on_ag_node ||
						       prog == ag->progs.on_ag_eval_begin);
	/*
	 * The target runs on meanwhile (importing PyTorch: a node made before the probes attach
	 * is missed) and the CFI workers build its tables: ahead of them, the verifier's CPU time
	 * takes about as much wall time on a busy machine (0.2 s here, where nice 0 took 0.25 to
	 * 0.55 s; the first forward came 1.2 s after libtorch_cpu was mapped).
	 */
	errno = 0;
	prio = getpriority(PRIO_PROCESS, (id_t)tid);
	boosted = !errno && prio > AG_LOAD_NICE &&
		  !setpriority(PRIO_PROCESS, (id_t)tid, AG_LOAD_NICE);
	ret = xpu_bpf__load(ag);
	if (boosted)
		setpriority(PRIO_PROCESS, (id_t)tid, prio);
	if (ret) {
		set_err(st->ag_load_msg, sizeof(st->ag_load_msg), "bpf()", -ret);
		goto fail;
	}
	st->ag_skel = ag;
	log_info("autograd: probes' BPF programs loaded in %.1f ms", (mono_ns() - t0) / 1e6);
	return 0;
fail:
	xpu_bpf__destroy(ag);
	return ret < 0 ? ret : -EINVAL;
}

int bpf_state__load_autograd(struct bpf_state *st, char *err, size_t errlen)
{
	int ret = 0;

	if (!st->autograd) {
		snprintf(err, errlen, "autograd probes off");
		return -ENOTSUP;
	}
	pthread_mutex_lock(&st->ag_lock);
	/* a refusal is the same at every file: said once, never verified again */
	if (!st->ag_skel && !st->ag_load_err && (ret = load_autograd(st)))
		st->ag_load_err = ret;
	if (!st->ag_skel) {
		ret = st->ag_load_err;
		snprintf(err, errlen, "%s", st->ag_load_msg);
	}
	pthread_mutex_unlock(&st->ag_lock);
	return ret;
}

bool bpf_state__autograd_loaded(struct bpf_state *st)
{
	bool loaded;

	pthread_mutex_lock(&st->ag_lock);
	loaded = st->ag_skel != NULL;
	pthread_mutex_unlock(&st->ag_lock);
	return loaded;
}

int bpf_state__attach_autograd(struct bpf_state *st, const char *path, uint64_t set_edge_off,
			       uint64_t evaluate_off, uint32_t cookie, char *err, size_t errlen)
{
	struct xpu_bpf *ag;
	int ret;

	ret = bpf_state__load_autograd(st, err, errlen);
	if (ret)
		return ret;
	pthread_mutex_lock(&st->ag_lock);
	ag = st->ag_skel;
	ret = set_edge_off ? attach_ag_one(st, ag->progs.on_ag_node, path, set_edge_off, false,
					   cookie) : 0;
	if (!ret && evaluate_off)
		ret = attach_ag_one(st, ag->progs.on_ag_eval_begin, path, evaluate_off, false,
				    cookie);
	pthread_mutex_unlock(&st->ag_lock);
	if (ret)
		snprintf(err, errlen, "attaching a uprobe: %s", strerror(-ret));
	return ret;
}

int bpf_state__read_counters(struct bpf_state *st, uint64_t *out)
{
	int nr = libbpf_num_possible_cpus(), i, c;
	uint64_t *vals;

	if (nr <= 0)
		return -EINVAL;
	vals = calloc(nr, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (i = 0; i < XPU_CNT_NR; i++) {
		uint32_t key = i;

		out[i] = 0;
		if (bpf_map__lookup_elem(st->skel->maps.counters, &key, sizeof(key), vals,
					 nr * sizeof(*vals), 0))
			continue;
		for (c = 0; c < nr; c++)
			out[i] += vals[c];
	}
	free(vals);
	return 0;
}

void bpf_state__log_run_times(struct bpf_state *st)
{
	struct xpu_bpf *ag = st->ag_skel ? st->ag_skel : st->skel;	/* the drain has stopped */
	struct bpf_program *progs[] = { st->skel->progs.on_sample, st->skel->progs.on_gpu_launch,
					ag->progs.on_ag_node, ag->progs.on_ag_eval_begin,
					st->skel->progs.on_sched_switch,
					st->skel->progs.on_sched_waking,
					st->skel->progs.on_sys_exit_offcpu };
	size_t i;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(progs[i]);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) || !info.run_cnt)
			continue;
		log_info("bpf %s: %llu runs, %llu ns in all", bpf_program__name(progs[i]),
			 (unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns);
	}
}

void bpf_state__stop_sampling(struct bpf_state *st)
{
	int cpu;
	size_t i;

	/* blocks sent after the drain stopped would be neither read nor counted */
	for (i = 0; i < sizeof(st->off_links) / sizeof(st->off_links[0]); i++) {
		bpf_link__destroy(st->off_links[i]);
		st->off_links[i] = NULL;
	}
	pthread_mutex_lock(&st->ag_lock);
	for (i = 0; i < st->nr_ag_links; i++)
		bpf_link__destroy(st->ag_links[i]);
	st->nr_ag_links = 0;
	pthread_mutex_unlock(&st->ag_lock);
	for (cpu = 0; cpu < st->nr_cpus; cpu++) {
		bpf_link__destroy(st->perf_links[cpu]);
		st->perf_links[cpu] = NULL;
		if (st->perf_fds[cpu] >= 0)
			close(st->perf_fds[cpu]);
		st->perf_fds[cpu] = -1;
	}
}

int bpf_state__off_cpu_leftover(struct bpf_state *st, uint64_t *pending, uint64_t *open)
{
	int fd = bpf_map__fd(st->skel->maps.off_cpu_threads);
	uint32_t key, next, *prev = NULL;
	struct {
		uint64_t out_ns, out_ip, out_sp;
		uint32_t out_state, waker;
		uint64_t pend_ns, pend_dur, pend_ip, pend_sp;
		uint32_t pend_state, pend_waker;
	} v;

	*pending = *open = 0;
	if (fd < 0)
		return -EINVAL;
	_Static_assert(sizeof(v) == 72, "struct off_cpu_thread of bpf/offcpu.bpf.h");
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		*pending += v.pend_ns != 0;
		*open += v.out_ns != 0;
	}
	return 0;
}

void bpf_state__destroy(struct bpf_state *st)
{
	size_t i;

	if (!st)
		return;
	bpf_state__stop_sampling(st);	/* nr_cpus is 0 before the perf events */
	free(st->perf_links);
	free(st->perf_fds);
	for (i = 0; i < st->nr_links; i++)
		bpf_link__destroy(st->links[i]);
	free(st->links);
	free(st->ag_links);
	pthread_mutex_destroy(&st->ag_lock);
	xpu_bpf__destroy(st->ag_skel);
	xpu_bpf__destroy(st->skel);
	/* lazily: a tracepoint still held elsewhere keeps what it uses; the name goes now */
	if (st->tracefs_mounted && umount2("/sys/kernel/tracing", MNT_DETACH))
		log_info("cannot unmount the tracefs mounted at start: %s", strerror(errno));
	free(st);
}
