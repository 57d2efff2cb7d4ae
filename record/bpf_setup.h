/* SPDX-License-Identifier: MIT */
/* Loading and attaching bpf/xpu.bpf.c, per-CPU perf events, and reading its counters. */
#ifndef XPU_RECORD_BPF_SETUP_H
#define XPU_RECORD_BPF_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "xpu_bpf_abi.h"

struct bpf_state;

struct bpf_setup_opts {
	unsigned int freq_hz;
	bool kernel_stacks;
	unsigned int ustack_bytes;	/* -g dwarf copy size; 0: frame pointers only */
	unsigned int ustack_top_bytes;	/* -g dwarf,SIZE,TOP: bytes below the stack top */
	bool cfi;			/* -g cfi: walk user stacks with the cfi_* tables */
	bool copy_short_walks;		/* -g cfi: copy ustack_bytes only where a walk fell short */
	size_t ringbuf_bytes;		/* power of two, multiple of the page size */
	const char *gpu_lib;		/* libxpu-cupti.so to uprobe, or NULL */
	bool off_cpu;			/* --off-cpu: sched_switch, sched_waking, sys_exit */
	bool autograd;			/* PyTorch autograd probes (not --no-autograd) */
	uint64_t off_cpu_min_ns;
};

/* open -> rodata and map sizes -> load. Negative errno and one line in err on failure. */
int bpf_state__load(struct bpf_state **out, const struct bpf_setup_opts *opts, char *err,
		    size_t errlen);
/* Attaches every program and opens the sampling perf events on all online CPUs. */
int bpf_state__attach(struct bpf_state *st, char *err, size_t errlen);
int bpf_state__trace_pid(struct bpf_state *st, pid_t pid, bool before_exec);
/* Whether pid is, or was until it exited, a process of the traced tree. */
bool bpf_state__is_traced(struct bpf_state *st, pid_t pid);
int bpf_state__events_fd(struct bpf_state *st);
/* The traced-tgid map, shared with bpf/driver.bpf.c (record/driver_trace.c). */
int bpf_state__traced_fd(struct bpf_state *st);
/* The map xpu-record fills with each Python process's layout (struct xpu_py_layout). */
int bpf_state__py_map_fd(struct bpf_state *st);
/* -g cfi: the cfi_tables (array of row maps) and cfi_procs maps. */
void bpf_state__cfi_fds(struct bpf_state *st, int *tables_fd, int *procs_fd);
/* Sums the per-CPU counters into out[XPU_CNT_NR]. */
int bpf_state__read_counters(struct bpf_state *st, uint64_t *out);
bool bpf_state__gpu_attached(struct bpf_state *st);
/*
 * Loads (verifies) the autograd probes' programs (bpf/autograd.bpf.h), which bpf_state__load
 * leaves out: at the first PyTorch library, or ahead when the command links one. Once: later
 * calls return the first one's result. Safe from any thread. 0, or negative errno and one line
 * in err.
 */
int bpf_state__load_autograd(struct bpf_state *st, char *err, size_t errlen);
/* Whether they were loaded. */
bool bpf_state__autograd_loaded(struct bpf_state *st);
/*
 * Attaches the autograd probes to the file at path, loading them first if need be: the node
 * probe at file offset set_edge_off, the evaluation's begin at evaluate_off, both with cookie
 * (an offset 0: that probe left out). Safe from any thread. 0, or negative errno and one line
 * in err.
 */
int bpf_state__attach_autograd(struct bpf_state *st, const char *path, uint64_t set_edge_off,
			       uint64_t evaluate_off, uint32_t cookie, char *err, size_t errlen);
/* Where pid's PyTorch node counter is (bpf/autograd.bpf.h ag_tls); NULL forgets it. 0 or -errno. */
int bpf_state__set_autograd_counter(struct bpf_state *st, uint32_t pid,
				    const struct xpu_ag_tls *place);
/*
 * Where pid's libxpu-cupti.so keeps its threads' last in-process launches (bpf/autograd.bpf.h
 * ag_inproc; nslots a power of two); addr 0 forgets it. Safe from any thread. 0 or -errno.
 */
int bpf_state__set_autograd_inproc(struct bpf_state *st, uint32_t pid, uint64_t addr,
				   uint32_t nslots);
/* Stops sampling (perf events and uprobe) so the ring buffer can be drained to the end. */
void bpf_state__stop_sampling(struct bpf_state *st);
/*
 * --off-cpu, once stopped: threads whose finished block still waited for its stack (*pending:
 * lost) and threads still off their CPU (*open). 0 or negative errno.
 */
int bpf_state__off_cpu_leftover(struct bpf_state *st, uint64_t *pending, uint64_t *open);
/*
 * -v: the sample and launch programs' run counts and run time, when the kernel keeps
 * them (sysctl kernel.bpf_stats_enabled=1; bench/cfi_overhead.py sets it).
 */
void bpf_state__log_run_times(struct bpf_state *st);
void bpf_state__destroy(struct bpf_state *st);

#endif
