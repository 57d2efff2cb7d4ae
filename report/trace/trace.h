/* SPDX-License-Identifier: MIT */
/*
 * The loaded trace: per-type arrays and id tables. Everything in a trace is untrusted: ids
 * are looked up through the maps here, and a miss is counted, never dereferenced.
 */
#ifndef XPU_REPORT_TRACE_H
#define XPU_REPORT_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/containers.h"
#include "trace_reader.h"
#include "xpu_format.h"

/* ---- the loaded trace ------------------------------------------------------------------------ */

struct tr_string {
	char *s;		/* NUL-terminated copy; may contain NULs (cmdline) */
	uint32_t len;
};

struct tr_stack {
	uint16_t nr_kernel, nr_user;
	uint64_t *ips;		/* kernel leaf first, then user leaf first */
};

/* A -g dwarf stack copy while unwind.c streams it: data is valid during one step. */
struct tr_ucopy {
	struct xpu_rec_user_stack_copy rec;
	/* the event it belongs to as its own trace recorded it (rec is remapped when merged) */
	uint32_t raw_pid, raw_tid;
	uint64_t raw_ts;
	const uint8_t *data;	/* rec.size bytes */
	/* -g dwarf,SIZE,TOP: the window below the thread's stack top (USER_STACK_TOP) */
	uint64_t top_addr;
	uint32_t top_size;
	const uint8_t *top_data;
};

/* PY_CODE: a Python code object's names and line table (copied) */
struct tr_py_code {
	uint32_t name_str, filename_str;
	int32_t firstlineno;
	uint16_t linetable_kind;
	uint32_t linetable_size;
	uint8_t *linetable;
};

/* PY_STACK: Python frames, leaf first (XPU_PY_FRAME_* entries) */
struct tr_py_stack {
	uint16_t nr, flags;
	uint64_t *frames;
};

struct tr_dso {
	struct xpu_rec_dso rec;
	const char *path;	/* "" when the path string is unknown */
	uint8_t *image;		/* VDSO_IMAGE bytes (copied), NULL when none */
	uint32_t image_len;
};

struct tr_proc {
	uint32_t pid;
	uint32_t parent_pid;	/* from its FORK record; 0 when not seen */
	uint32_t comm_str;	/* latest EXEC/COMM name of the main thread */
	uint64_t comm_ts;
	uint64_t *exec_ts;	/* sorted; defines address-space generations */
	size_t nexec, exec_cap;
	uint64_t samples;
};

struct tr_thread {
	uint32_t pid, tid;
	uint32_t comm_str;
	uint64_t comm_ts;
	uint64_t samples;
};

/*
 * How one trace of several given together (xpu-report A.xpu B.xpu) enters the merged trace,
 * applied to each record as it is read (merge.c decides it). All zero: as recorded.
 */
struct tr_remap {
	int64_t shift_ns;		/* added to every CLOCK_MONOTONIC time: the merged axis */
	uint32_t task_base;		/* added to pids and tids (0: none collides with another's) */
	uint32_t string_base, stack_base, dso_base, py_code_base, py_stack_base;
	uint32_t device_base;		/* added to device numbers: the GPUs of another host */
	bool skip_ksyms;		/* kallsyms of another host: not this kernel's */
	bool drop_clocks;		/* not the part whose clock pairs map the merged axis */
	/* collect: the first read of each trace, which leaves records as they are and notes */
	bool collect;
	struct kmap tasks;		/* every pid and tid (the caller frees it) */
	uint32_t max_string, max_stack, max_dso, max_py_code, max_py_stack, max_device;
	bool nomem;
	uint64_t max_records;		/* this trace's share of the bound (0: the default) */
};

/*
 * Applies rm to one record of type type (its struct, as read): to each time, task and id its
 * row in the table of record types (record_fields.h) names. Collects in collect mode.
 */
void tr_remap__record(struct tr_remap *rm, uint16_t type, void *rec);
/* The same for a pid or tid, and for a monotonic time (0 stays 0: "none"). */
uint32_t tr_remap__task(struct tr_remap *rm, uint32_t id);
uint64_t tr_remap__ts(const struct tr_remap *rm, uint64_t ts);
/* A PY_STACK entry (XPU_PY_FRAME): its code id remapped. */
uint64_t tr_remap__py_frame(struct tr_remap *rm, uint64_t e);

/* One of several traces merged into one (merge.c), with what it was alone. */
struct tr_part {
	const char *path;
	struct tr_remap rm;
	bool has_session, has_end;
	struct xpu_rec_session session;	/* remapped: string ids and times of the merged trace */
	struct xpu_rec_session_end end;
	size_t nclocks;
	uint64_t clock_unc_min_ns, clock_unc_max_ns;	/* over its CLOCK_SYNC pairs */
	struct trace_reader_status st;
	struct trace_reader *reader;	/* unwind.c's second pass reads its stack copies */
};

struct trace {
	struct xpu_file_header hdr;
	struct trace_reader_status st;

	bool has_session, has_end;
	struct xpu_rec_session session;
	struct xpu_rec_session_end end;

	struct tr_string *strings;	size_t nstrings, strings_cap;
	struct tr_stack *stacks;	size_t nstacks, stacks_cap;
	struct tr_dso *dsos;		size_t ndsos, dsos_cap;
	struct kmap string_ids, stack_ids, dso_ids;

	struct xpu_rec_clock_sync *clocks;	size_t nclocks, clocks_cap;
	struct xpu_rec_mapping *mappings;	size_t nmappings, mappings_cap;
	struct xpu_rec_task *tasks;		size_t ntasks, tasks_cap;
	struct xpu_rec_cpu_sample *samples;	size_t nsamples, samples_cap;
	struct xpu_rec_lost *lost;		size_t nlost, lost_cap;
	struct xpu_rec_gpu_kernel *kernels;	size_t nkernels, kernels_cap;
	struct xpu_rec_gpu_memcpy *memcpys;	size_t nmemcpys, memcpys_cap;
	struct xpu_rec_gpu_memset *memsets;	size_t nmemsets, memsets_cap;
	struct xpu_rec_gpu_launch *launches;	size_t nlaunches, launches_cap;
	struct xpu_rec_gpu_device *devices;	size_t ndevices, devices_cap;
	struct xpu_rec_gpu_process *gpu_procs;	size_t ngpu_procs, gpu_procs_cap;
	struct xpu_rec_gpu_sync *syncs;		size_t nsyncs, syncs_cap;
	/* file order, unsorted: the timeline (output/chrome/) and the text report (output/text/)
	 * read them */
	struct xpu_rec_gpu_api *apis;		size_t napis, apis_cap;
	struct xpu_rec_nvtx *nvtxs;		size_t nnvtxs, nvtxs_cap;
	/* 1.4, file order: GPU memory (CUPTI), ioctls on NVIDIA device files (--driver) */
	struct xpu_rec_gpu_memory *memories;	size_t nmemories, memories_cap;
	struct xpu_rec_driver_ioctl *ioctls;	size_t nioctls, ioctls_cap;
	/* 1.6, sorted by time: blocks of threads off their CPU (--off-cpu) */
	struct xpu_rec_off_cpu *offcpus;	size_t noffcpus, offcpus_cap;
	/*
	 * 1.10, PyTorch autograd: nodes by time (forward), evaluations by begin time (backward),
	 * and each library's probe outcome in file order
	 */
	struct xpu_rec_autograd_node *ag_nodes;		size_t nag_nodes, ag_nodes_cap;
	struct xpu_rec_autograd_eval *ag_evals;		size_t nag_evals, ag_evals_cap;
	struct xpu_rec_autograd_probe *ag_probes;	size_t nag_probes, ag_probes_cap;
	/* 1.12, file order: CUDA graph nodes made, copied and changed (model/gpu_graph.c) */
	struct xpu_rec_gpu_graph_node *graph_nodes;	size_t ngraph_nodes, graph_nodes_cap;
	/* 1.6, file order: RANK and friends of processes with the injected library */
	struct xpu_rec_process_env *penvs;	size_t npenvs, penvs_cap;
	struct kmap penv_ids;			/* pid -> its last penvs index */
	/* Python (1.3): runtimes by file order, code objects and frame lists by id */
	struct xpu_rec_py_runtime *py_runtimes;	size_t npy_runtimes, py_runtimes_cap;
	struct tr_py_code *py_codes;		size_t npy_codes, py_codes_cap;
	struct tr_py_stack *py_stacks;		size_t npy_stacks, py_stacks_cap;
	struct kmap py_code_ids, py_stack_ids;
	/* JIT code (1.4), file order: jitsyms.c indexes them */
	struct xpu_rec_jit_symbol *jit_syms;	size_t njit_syms, jit_syms_cap;

	/*
	 * USER_STACK_COPY records are counted, not kept: they can be gigabytes (64 KiB each).
	 * unwind.c reads them in a second pass over the reader's bytes, kept open for that.
	 */
	size_t nucopies;
	struct trace_reader *reader;

	struct xpu_stat_entry *stats;	size_t nstats;	/* the last STATS record */

	/* several traces merged (xpu-report A.xpu B.xpu): one part each; none for one trace */
	struct tr_part *parts;		size_t nparts;
	struct kmap part_of_task;	/* merged pid or tid -> index in parts */
	struct tr_remap *rm;		/* while loading: the part being read, or NULL */
	uint32_t cur_part;

	char *ksyms;			/* KSYMS chunks concatenated in seq order */
	size_t ksyms_len;
	uint32_t ksyms_next_seq;
	uint64_t ksyms_out_of_order;

	struct tr_proc *procs;		size_t nprocs, procs_cap;
	struct tr_thread *threads;	size_t nthreads, threads_cap;
	struct kmap proc_ids, thread_ids;

	/* what the records kept hold in memory, and the most they may (trace__keep_bound) */
	uint64_t kept_bytes, keep_max;

	uint64_t type_counts[XPU_REC_TYPE_MAX_KNOWN + 1];
	uint64_t unknown_types;
	/*
	 * integrity counters, all shown by `info`: each reference (by a record) to an id no
	 * record defines is counted once, at load
	 */
	uint64_t bad_string_refs, bad_stack_refs, bad_dso_refs;
	uint64_t dup_ids, bad_records;
};

/*
 * The records of a trace kept in memory, in bytes (what each holds: load.c's keep_cost), are
 * bounded: by default TRACE_KEEP_PER_FILE_BYTE times the file's size, at least
 * TRACE_KEEP_MIN_DEFAULT and at most TRACE_KEEP_MAX_DEFAULT (--max-records sets it instead).
 * Recorded traces keep 2 to 11 times their size (docs/robustness.md), and a report's
 * peak memory is about twice what it keeps; a small file of highly compressible records held
 * gigabytes. Past the bound reading stops as at damage: TRACE_END_LIMIT.
 */
#define TRACE_KEEP_PER_FILE_BYTE 64
#define TRACE_KEEP_MIN_DEFAULT (32ull << 20)
#define TRACE_KEEP_MAX_DEFAULT (2ull << 30)
/* The bound for a file of file_bytes: max_records when set (UINT64_MAX: none), else the default. */
uint64_t trace__keep_bound(uint64_t file_bytes, uint64_t max_records);

/*
 * Reads a trace, within the default bound. Once loaded it is read-only: what the report
 * derives (stacks, names) lives in the report's session. 0, or negative errno with a one-line
 * message in err.
 */
int trace__load(struct trace *t, const char *path, char *err, size_t errlen);
/* trace__load within max_records bytes of records (trace__keep_bound). */
int trace__load_max(struct trace *t, const char *path, uint64_t max_records, char *err,
		    size_t errlen);
/* trace__load through rm (NULL: none), e.g. in collect mode, within rm->max_records. */
int trace__load_remap(struct trace *t, const char *path, struct tr_remap *rm, char *err,
		      size_t errlen);
/* The part (index into t->parts) a merged pid or tid belongs to; 0 for a single trace. */
uint32_t trace__part_of(const struct trace *t, uint32_t pid);
/* The host of a pid (its trace's SESSION host), "" when unknown. */
const char *trace__host(const struct trace *t, uint32_t pid);
/* The pid as its own host knew it (pids of a trace that collided with another's are moved). */
uint32_t trace__real_pid(const struct trace *t, uint32_t pid);
/* A merged device number as its host knew it, and that host ("" for one trace). */
uint32_t trace__real_device(const struct trace *t, uint32_t device, const char **host);
void trace__free(struct trace *t);
/*
 * Where a trace starts on its monotonic axis: the session's start, else its first event; what
 * --time-range counts from.
 */
uint64_t trace__start(const struct trace *t);
/* The last STATS record's value of counter id (common/xpu_stats.def); 0 when not written. */
uint64_t trace__stat(const struct trace *t, uint32_t id);
/* NULL for 0 or an unknown id (load counted every unknown one). */
const char *trace__string(const struct trace *t, uint32_t id);
const struct tr_stack *trace__stack(const struct trace *t, uint32_t id);
const struct tr_dso *trace__dso(const struct trace *t, uint32_t id);
const struct tr_py_stack *trace__py_stack(const struct trace *t, uint32_t id);
const struct tr_py_code *trace__py_code(const struct trace *t, uint32_t id);
const struct tr_proc *trace__proc(const struct trace *t, uint32_t pid);
const struct tr_thread *trace__thread(const struct trace *t, uint32_t tid);
/* Address-space generation of pid at ts: the number of EXECs at or before ts. */
uint32_t trace__generation(const struct trace *t, uint32_t pid, uint64_t ts);
/* Process name for display: never NULL. */
const char *trace__comm(const struct trace *t, uint32_t pid, char *buf, size_t len);
/* The PROCESS_ENV of pid (its last), else its nearest ancestor's; NULL: no rank known. */
const struct xpu_rec_process_env *trace__process_env(const struct trace *t, uint32_t pid);

#endif
