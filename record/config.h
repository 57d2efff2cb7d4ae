/* SPDX-License-Identifier: MIT */
/* xpu-record's options, filled by main.c and read by the recording (recording.c) and its parts. */
#ifndef XPU_RECORD_CONFIG_H
/* -p takes this many processes at most */
#define XPU_MAX_ATTACH 64

#define XPU_RECORD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

/*
 * 999 Hz: roughly 1 ms resolution, and not a multiple of common timer frequencies (100, 250,
 * 1000 Hz) so sampling does not lock step with periodic work.
 */
#define XPU_DEFAULT_FREQ_HZ 999
#define XPU_DEFAULT_OUTPUT "record.xpu"
#define XPU_DEFAULT_RINGBUF_MB 8
#define XPU_DWARF_RINGBUF_MAX_MB 64
/* -g cfi: room for about 500 copies of short walks */
#define XPU_CFI_RINGBUF_MB 32
/* perf's default for --call-graph dwarf: enough for ~50-100 typical frames. */
#define XPU_DEFAULT_DWARF_BYTES 8192
/*
 * With no -g: -g cfi, the walk in BPF with .eh_frame tables, and copies of the walks that fall
 * short. Measured on H200 hosts (BENCHMARKS.md): 100% of PyTorch launches and 99.7% of its CPU
 * samples complete at +43.8-48.2% on a PyTorch loop, against +71.7-81.0% for the copy mode
 * -g dwarf,32768,32768 (the default before) and +40.9-69.8% for Kineto, at 1.3x -g fp's trace.
 */
/*
 * The copies -g cfi takes of its short walks (and -g cfi,check of every event): those of the
 * copy mode that was the default before, complete stacks through PyTorch (100% of launches and
 * 98.9% of samples on that host).
 */
#define XPU_CFI_COPY_BYTES 32768
#define XPU_CFI_COPY_TOP_BYTES 32768

/*
 * --off-cpu: blocks shorter than this are counted, not recorded. One period of the default
 * 999 Hz sampler: the on-CPU view resolves no finer, and a short block costs one hash update.
 */
#define XPU_DEFAULT_OFF_CPU_MIN_NS (1000ull * 1000)

/* -g cfi: rows of unwind tables loaded at most (8 bytes each); more files fall back to fp */
#define XPU_CFI_MEM_BYTES (512ull << 20)
/* -g cfi: how long a launched command's start waits for the tables of its first files */
#define XPU_CFI_START_WAIT_NS (2000ull * 1000 * 1000)

struct record_config {
	const char *output;
	unsigned int freq_hz;
	bool kernel_stacks;
	unsigned int dwarf_bytes;	/* -g dwarf: user-stack bytes per event; 0 for -g fp */
	unsigned int dwarf_top_bytes;	/* -g dwarf,SIZE,TOP: bytes below the stack top; 0 off */
	bool cfi;			/* -g cfi: unwind in BPF (with dwarf_bytes: ,check copies too) */
	bool copy_short_walks;		/* -g cfi: the dwarf_bytes copies only of walks that fell short */
	bool no_gpu;
	bool no_launch_stacks;		/* --no-launch-stacks: GPU activity without launch stacks */
	const char *cache_dir;		/* --cache-dir: the unwind-table cache; NULL: the default */
	bool no_cache;			/* --no-cache: no table cache */
	/*
	 * --launch-walk=inproc (the default) with -g cfi or cfi,nocopy and launch stacks on:
	 * each launch's stack is walked by the launching thread in libxpu-cupti.so, over the
	 * tables shared with it, BPF taking only what it cannot finish; false: BPF takes all.
	 */
	bool launch_walk_inproc;
	/*
	 * --launch-walk=check (diagnosis): each launch walked in process is walked by BPF too, so
	 * the trace holds both stacks of the same launch (GPU_LAUNCH flags bit 1 tells them apart)
	 */
	bool launch_walk_check;
	bool no_pack;		/* --no-pack: no symbol pack at the end (symbol_pack.h) */
	bool pack_debuginfod;	/* --pack-debuginfod: the pack may ask DEBUGINFOD_URLS' servers */
	bool no_python;			/* --no-python: no Python frames */
	bool no_autograd;		/* --no-autograd: no PyTorch autograd probes */
	bool driver;			/* --driver: ioctls on NVIDIA device files */
	bool off_cpu;			/* --off-cpu: record blocks */
	uint64_t off_cpu_min_ns;	/* --off-cpu-min */
	const char *cuda_graphs;	/* XPU_CUDA_GRAPHS for the target: "node" or "graph" */
	int verbose;
	pid_t attach_pid;		/* 0: launch mode; else the first of attach_pids */
	pid_t attach_pids[XPU_MAX_ATTACH];	/* -p PID[,PID...]: all ranks of a host, say */
	unsigned int nattach;
	unsigned int ringbuf_mb;	/* power of two */
	uint64_t duration_ns;		/* --duration: stop after this long; 0 = until the end */
	char **cmd;			/* NULL-terminated, launch mode */
	int argc;			/* xpu-record's own argv, for the SESSION record */
	char **argv;
	/* Under sudo: the invoking user owns the trace and, unless keep_root, runs the command. */
	bool sudo;
	bool drop_root;
	uid_t user_uid;
	gid_t user_gid;
	const char *user_name;		/* SUDO_USER, for its supplementary groups; may be NULL */
	struct rlimit nofile;		/* ulimit -n as started: the command's (fd_limit.h) */
};

extern int xpu_verbose;

#define log_err(fmt, ...) fprintf(stderr, "xpu-record: " fmt "\n", ##__VA_ARGS__)
#define log_info(fmt, ...)                                                    \
	do {                                                                  \
		if (xpu_verbose)                                              \
			fprintf(stderr, "xpu-record: " fmt "\n", ##__VA_ARGS__); \
	} while (0)

#endif
