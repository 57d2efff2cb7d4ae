/* SPDX-License-Identifier: MIT */
/*
 * On-disk structures of the .xpu trace file, version 1.
 *
 * This header (with xpu_stats.def, the STATS counters it includes) is the only place where
 * on-disk layouts live; format-spec/FORMAT.md is the normative prose for it. Rules (see the
 * spec): little-endian, fixed-width fields, units in names, explicit enum values that are
 * appended and never reused, fields only appended at the end of a record body. A reader
 * zero-fills fields a shorter (older) record lacks and ignores bytes a longer (newer) one has.
 */
#ifndef XPU_FORMAT_H
#define XPU_FORMAT_H

#include <stdint.h>

#define XPU_FILE_MAGIC "XPUTRACE"
#define XPU_FORMAT_MAJOR 1
#define XPU_FORMAT_MINOR 13

#define XPU_FRAME_MAGIC "XFRM"
#define XPU_TRAILER_MAGIC "XPUEND\0\0"

/* A frame never holds more than this many raw bytes; the reader refuses larger claims. */
#define XPU_FRAME_MAX_RAW_BYTES (16u << 20)
/* No single record may exceed this (a kallsyms chunk or a 64 KiB stack copy fits). */
#define XPU_RECORD_MAX_BYTES (1u << 20)
#define XPU_BUILD_ID_MAX 20
#define XPU_STACK_MAX_DEPTH 512

struct xpu_file_header {
	char magic[8];		/* "XPUTRACE" */
	uint16_t major;
	uint16_t minor;
	uint32_t header_size;	/* sizeof(struct xpu_file_header); frames start here */
	uint32_t flags;		/* none defined yet */
	uint32_t reserved0;
	uint64_t feature_bits;	/* none defined yet */
	uint8_t uuid[16];
	uint64_t create_realtime_ns;
	uint32_t reserved1;
	uint32_t hdr_crc32c;	/* CRC-32C of the first 60 bytes */
};
_Static_assert(sizeof(struct xpu_file_header) == 64, "file header size");

enum xpu_codec {
	XPU_CODEC_NONE = 0,
	XPU_CODEC_ZSTD = 1,
};

struct xpu_frame_header {
	char magic[4];		/* "XFRM" */
	uint32_t hdr_crc32c;	/* CRC-32C of bytes 8..55 of this header */
	uint64_t seq;		/* 0, 1, 2, ... in file order */
	uint32_t raw_size;	/* bytes of records after decompression */
	uint32_t comp_size;	/* bytes of payload that follow this header */
	uint16_t codec;		/* enum xpu_codec */
	uint16_t flags;
	uint32_t record_count;
	uint32_t payload_crc32c; /* CRC-32C of the comp_size payload bytes */
	uint32_t reserved;
	uint64_t ts_min_ns;	/* CLOCK_MONOTONIC range of timestamped records; 0 when none */
	uint64_t ts_max_ns;
};
_Static_assert(sizeof(struct xpu_frame_header) == 56, "frame header size");

/* Written as the last bytes of a cleanly finished file, after the last frame. */
struct xpu_trailer {
	char magic[8];		/* "XPUEND\0\0" */
	uint64_t frame_count;
	uint64_t record_count;
	uint32_t reserved;
	uint32_t crc32c;	/* CRC-32C of the first 28 bytes */
};
_Static_assert(sizeof(struct xpu_trailer) == 32, "trailer size");

/* Every record: this header, then the body; size includes the header and is a multiple of 8. */
struct xpu_record_header {
	uint16_t type;		/* enum xpu_record_type */
	uint16_t flags;
	uint32_t size;
};
_Static_assert(sizeof(struct xpu_record_header) == 8, "record header size");

/* Each type has a row in record_fields.c: its name, shortest body and fields of ids and times. */
enum xpu_record_type {
	XPU_REC_SESSION = 1,
	XPU_REC_CLOCK_SYNC = 2,
	XPU_REC_STRING = 3,
	XPU_REC_STACK = 4,
	XPU_REC_DSO = 5,
	XPU_REC_MAPPING = 6,
	XPU_REC_TASK = 7,
	XPU_REC_CPU_SAMPLE = 8,
	XPU_REC_LOST = 9,
	XPU_REC_STATS = 10,
	XPU_REC_KSYMS = 11,
	XPU_REC_SESSION_END = 12,
	XPU_REC_USER_STACK_COPY = 13,	/* since 1.1 */
	XPU_REC_USER_STACK_TOP = 14,	/* since 1.2 */
	XPU_REC_PY_RUNTIME = 15,	/* since 1.3: a CPython interpreter found in a process */
	XPU_REC_PY_CODE = 16,		/* since 1.3: a Python code object's names and line table */
	XPU_REC_PY_STACK = 17,		/* since 1.3: a thread's Python frames at an event */
	XPU_REC_JIT_SYMBOL = 18,	/* since 1.4: a JIT-compiled function's name and range */
	XPU_REC_VDSO_IMAGE = 19,	/* since 1.4: the bytes of a vdso DSO, for its symbols */
	/* GPU (CUPTI), converted in the injected library */
	XPU_REC_GPU_DEVICE = 20,
	XPU_REC_GPU_KERNEL = 21,
	XPU_REC_GPU_MEMCPY = 22,
	XPU_REC_GPU_MEMSET = 23,
	XPU_REC_GPU_SYNC = 24,
	XPU_REC_GPU_API = 25,
	XPU_REC_GPU_LAUNCH = 26,
	XPU_REC_NVTX = 27,
	XPU_REC_GPU_OVERHEAD = 28,
	XPU_REC_GPU_PROCESS = 29,
	XPU_REC_GPU_MEMORY = 30,	/* since 1.4: a GPU memory allocation or release */
	XPU_REC_DRIVER_IOCTL = 31,	/* since 1.4: an ioctl on an NVIDIA device file */
	XPU_REC_PROCESS_ENV = 32,	/* since 1.6: a process's rank in a distributed job */
	XPU_REC_OFF_CPU = 40,		/* since 1.6: a thread blocked (xpu-record --off-cpu) */
	XPU_REC_AUTOGRAD_NODE = 41,	/* since 1.10: PyTorch autograd node set on an output */
	XPU_REC_AUTOGRAD_EVAL = 42,	/* since 1.10: PyTorch autograd evaluated a node */
	XPU_REC_AUTOGRAD_PROBE = 43,	/* since 1.10: autograd probes of a file, or why none */
	XPU_REC_GPU_GRAPH_NODE = 44,	/* since 1.12: a CUDA graph node made, copied or changed */
	XPU_REC_TYPE_MAX_KNOWN = 44,
};

/* ---- recording context ---------------------------------------------------------------- */

enum xpu_stack_mode {
	XPU_STACK_FP = 1,
	XPU_STACK_DWARF = 2,
	XPU_STACK_CFI = 3,	/* since 1.5: unwound in BPF with .eh_frame-derived tables */
};

enum xpu_session_flags {
	XPU_SESSION_KERNEL_STACKS = 1u << 0,
	XPU_SESSION_ATTACHED = 1u << 1,	/* -p PID rather than a launched command */
	XPU_SESSION_GPU = 1u << 2,	/* CUPTI injection was enabled */
	XPU_SESSION_OFF_CPU = 1u << 3,	/* since 1.6: --off-cpu: OFF_CPU records were taken */
	/* since 1.7, -g cfi: events whose walk fell short also have a DWARF stack copy */
	XPU_SESSION_CFI_SHORT_COPIES = 1u << 4,
	/* since 1.10: PyTorch libraries mapped by the traced tree get the autograd probes */
	XPU_SESSION_AUTOGRAD = 1u << 5,
};

/* String fields are ids of STRING records written earlier; 0 means absent. */
struct xpu_rec_session {
	uint32_t ncpu;
	uint32_t page_size_bytes;
	uint32_t sample_freq_hz;
	uint32_t stack_mode;		/* enum xpu_stack_mode */
	uint32_t flags;			/* enum xpu_session_flags */
	uint32_t target_pid;		/* the launched child or the attached pid */
	uint64_t start_mono_ns;
	uint64_t start_realtime_ns;
	uint32_t host_str;
	uint32_t kernel_str;		/* uname release and version */
	uint32_t arch_str;
	uint32_t version_str;		/* xpu-record version */
	uint32_t cmdline_str;		/* argv, each argument NUL-terminated */
	uint32_t options_str;		/* xpu-record's own command line, likewise */
	uint32_t dwarf_stack_bytes;	/* bytes of user stack copied per event in dwarf mode */
	uint32_t dwarf_top_bytes;	/* since 1.2: -g dwarf,SIZE,TOP's TOP; 0 before or off */
};
_Static_assert(sizeof(struct xpu_rec_session) == 72, "session size");

enum xpu_end_reason {
	XPU_END_TARGET_EXITED = 1,
	XPU_END_SIGNAL = 2,		/* xpu-record got SIGINT/SIGTERM */
	XPU_END_ERROR = 3,
	XPU_END_DURATION = 4,
};

struct xpu_rec_session_end {
	uint64_t end_mono_ns;
	uint32_t reason;		/* enum xpu_end_reason */
	int32_t exit_code;		/* target's exit status, -1 if unknown */
	int32_t term_signal;		/* signal that ended the target, 0 if none */
	uint32_t reserved;
};
_Static_assert(sizeof(struct xpu_rec_session_end) == 24, "session end size");

/* One bracket of clock reads: realtime/boottime read between two monotonic reads. */
struct xpu_rec_clock_sync {
	uint64_t mono_ns;
	uint64_t realtime_ns;
	uint64_t boottime_ns;
	uint64_t uncertainty_ns;	/* width of the narrowest bracket */
};
_Static_assert(sizeof(struct xpu_rec_clock_sync) == 32, "clock sync size");

/* Followed by len bytes (not NUL-terminated), padded to 8. */
struct xpu_rec_string {
	uint32_t id;
	uint32_t len;
};

/* Followed by (nr_kernel + nr_user) u64 addresses: kernel frames first, leaf first. */
struct xpu_rec_stack {
	uint32_t id;
	uint16_t nr_kernel;
	uint16_t nr_user;
};

enum xpu_dso_kind {
	XPU_DSO_ELF = 1,
	XPU_DSO_KERNEL = 2,
	XPU_DSO_VDSO = 3,
	XPU_DSO_ANON = 4,	/* JIT or anonymous executable memory */
};

struct xpu_rec_dso {
	uint32_t id;
	uint32_t path_str;
	uint8_t build_id_len;		/* 0: no build-id could be read */
	uint8_t kind;			/* enum xpu_dso_kind */
	uint16_t reserved;
	uint8_t build_id[XPU_BUILD_ID_MAX];
	uint64_t size_bytes;
	uint64_t mtime_ns;
};
_Static_assert(sizeof(struct xpu_rec_dso) == 48, "dso size");

/* Since 1.4: the whole in-memory image of a DSO of kind XPU_DSO_VDSO. Followed by size bytes. */
#define XPU_VDSO_IMAGE_MAX_BYTES (64u << 10)

struct xpu_rec_vdso_image {
	uint32_t dso_id;		/* a DSO record written earlier */
	uint32_t size;			/* image bytes that follow; <= XPU_VDSO_IMAGE_MAX_BYTES */
};
_Static_assert(sizeof(struct xpu_rec_vdso_image) == 8, "vdso image size");

struct xpu_rec_mapping {
	uint64_t ts_ns;
	uint32_t pid;
	uint32_t dso_id;
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;			/* file offset of start */
	uint32_t prot;			/* PROT_* */
	uint32_t reserved;
};
_Static_assert(sizeof(struct xpu_rec_mapping) == 48, "mapping size");

enum xpu_task_kind {
	XPU_TASK_FORK = 1,		/* new process: pid is the child, parent_pid its parent */
	XPU_TASK_THREAD = 2,		/* new thread tid in process pid */
	XPU_TASK_EXEC = 3,		/* pid executed a new image; comm is the new name */
	XPU_TASK_EXIT = 4,		/* whole process pid exited */
	XPU_TASK_THREAD_EXIT = 5,
	XPU_TASK_COMM = 6,		/* name of a thread seen, or renamed */
};

struct xpu_rec_task {
	uint64_t ts_ns;
	uint32_t kind;			/* enum xpu_task_kind */
	uint32_t pid;
	uint32_t tid;
	uint32_t parent_pid;
	uint32_t comm_str;
	int32_t exit_code;		/* wait status for EXIT, else 0 */
};
_Static_assert(sizeof(struct xpu_rec_task) == 32, "task size");

/* CPU_SAMPLE and GPU_LAUNCH flags */
enum xpu_event_flags {
	/* since 1.5, -g cfi: the user stack reached a frame whose CFI says it has no caller */
	XPU_EVENT_USER_OUTERMOST = 1u << 0,
	/*
	 * since 1.13, GPU_LAUNCH only: the stack was walked by the launching thread itself, in
	 * libxpu-cupti.so (the in-process walk), not by the BPF probe
	 */
	XPU_EVENT_IN_PROCESS = 1u << 1,
};

struct xpu_rec_cpu_sample {
	uint64_t ts_ns;
	uint32_t pid;
	uint32_t tid;
	uint32_t stack_id;		/* 0: no stack could be taken */
	uint16_t cpu;
	uint16_t flags;
	uint32_t py_stack_id;		/* since 1.3: PY_STACK id, 0: no Python frames */
	uint32_t reserved;
};
_Static_assert(sizeof(struct xpu_rec_cpu_sample) == 32, "cpu sample size");

/* OFF_CPU state: why the thread left the CPU */
enum xpu_off_cpu_state {
	XPU_OFF_PREEMPTED = 1,		/* runnable: preempted or yielded, waited for a CPU */
	XPU_OFF_SLEEPING = 2,		/* interruptible sleep: a lock, pipe, socket, timer, poll */
	XPU_OFF_BLOCKED = 3,		/* uninterruptible sleep (D): disk I/O, page faults */
	XPU_OFF_OTHER = 4,		/* stopped, traced, or another state */
};

enum xpu_off_cpu_flags {
	/* bit 0 as CPU_SAMPLE's: XPU_EVENT_USER_OUTERMOST */
	XPU_OFF_NO_STACK = 1u << 1,	/* the stack was gone before it could be taken */
};

/*
 * Since 1.6: a thread of the traced tree off its CPU for at least the recording's minimum
 * (STATS XPU_STAT_OFF_CPU_MIN_NS). Its stack is the user stack it blocked in; a
 * USER_STACK_COPY or PY_STACK joins it as a CPU_SAMPLE's does (for_type 40, same tid and ts_ns).
 */
struct xpu_rec_off_cpu {
	uint64_t ts_ns;			/* switched out */
	uint64_t dur_ns;		/* until switched in again */
	uint32_t pid;
	uint32_t tid;
	uint32_t stack_id;		/* 0: no stack */
	uint32_t py_stack_id;		/* PY_STACK id, 0: no Python frames */
	uint32_t waker_tid;		/* thread whose wakeup ended it, 0: unknown */
	uint16_t state;			/* enum xpu_off_cpu_state */
	uint16_t flags;			/* enum xpu_off_cpu_flags */
};
_Static_assert(sizeof(struct xpu_rec_off_cpu) == 40, "off cpu size");

/* XPU_LOST_RINGBUF = 1, ...: the sources, a row each in xpu_lost.def */
enum xpu_lost_source {
#define XPU_LOST(name, id, report_name, what) XPU_LOST_##name = id,
#include "xpu_lost.def"
#undef XPU_LOST
};
/* Source ids and 0 (unnamed): the rows' ids run 1, 2, ... */
enum {
	XPU_LOST_SOURCES = 1
#define XPU_LOST(name, id, report_name, what) + 1
#include "xpu_lost.def"
#undef XPU_LOST
};

struct xpu_rec_lost {
	uint64_t ts_ns;
	uint32_t source;		/* enum xpu_lost_source */
	uint32_t pid;			/* 0 when not per process */
	uint64_t count;
};
_Static_assert(sizeof(struct xpu_rec_lost) == 24, "lost size");

/* XPU_STAT_SAMPLES = 1, ...: the counters, a row each in xpu_stats.def */
enum xpu_stat_id {
#define XPU_STAT(name, id, info_name, part) XPU_STAT_##name = id,
#include "xpu_stats.def"
#undef XPU_STAT
};
/* The counters there are: the most entries one STATS record holds */
enum {
	XPU_STATS_MAX = 0
#define XPU_STAT(name, id, info_name, part) + 1
#include "xpu_stats.def"
#undef XPU_STAT
};

/* Followed by count entries. Written at the end; a reader sums nothing, the last one wins. */
struct xpu_rec_stats {
	uint32_t count;
	uint32_t reserved;
};

struct xpu_stat_entry {
	uint32_t id;			/* enum xpu_stat_id */
	uint32_t reserved;
	uint64_t value;
};

/*
 * Since 1.1, `-g dwarf`: the top of a thread's user stack and the registers an unwinder starts
 * from, copied when a CPU_SAMPLE or GPU_LAUNCH was taken. It belongs to the record of type
 * for_type with the same tid and ts_ns (written just before it; readers match by key, not by
 * position). Followed by size bytes: the user memory at [regs[XPU_UREG_SP], + size), then
 * zero padding to 8.
 */
enum xpu_regs_abi {
	XPU_REGS_X86_64 = 1,
};

/* Index into regs[] for XPU_REGS_X86_64. */
enum xpu_ureg {
	XPU_UREG_IP = 0,
	XPU_UREG_SP = 1,
	XPU_UREG_BP = 2,
	XPU_UREG_BX = 3,
	XPU_UREG_R12 = 4,
	XPU_UREG_R13 = 5,
	XPU_UREG_R14 = 6,
	XPU_UREG_R15 = 7,
	XPU_UREG_NR = 8,
};

#define XPU_STACK_COPY_MAX_BYTES (64u << 10)

struct xpu_rec_user_stack_copy {
	uint64_t ts_ns;			/* equal to the owning record's ts_ns */
	uint32_t pid;
	uint32_t tid;
	uint16_t for_type;		/* XPU_REC_CPU_SAMPLE or XPU_REC_GPU_LAUNCH */
	uint16_t regs_abi;		/* enum xpu_regs_abi */
	uint32_t size;			/* stack bytes that follow; <= XPU_STACK_COPY_MAX_BYTES */
	uint64_t regs[XPU_UREG_NR];
};
_Static_assert(sizeof(struct xpu_rec_user_stack_copy) == 88, "user stack copy size");

#define XPU_STACK_TOP_MAX_BYTES (32u << 10)

/*
 * Since 1.2, -g dwarf,SIZE,TOP: the bytes just below the top of the thread's stack, when the
 * USER_STACK_COPY of the same (for_type, tid, ts_ns) stopped short of it. Followed by size bytes
 * of user memory from addr.
 */
struct xpu_rec_user_stack_top {
	uint64_t ts_ns;			/* equal to the copy's (and its owner's) ts_ns */
	uint32_t pid;
	uint32_t tid;
	uint16_t for_type;		/* XPU_REC_CPU_SAMPLE or XPU_REC_GPU_LAUNCH */
	uint16_t reserved;
	uint32_t size;			/* bytes that follow; <= XPU_STACK_TOP_MAX_BYTES */
	uint64_t addr;			/* user address of the first byte */
};
_Static_assert(sizeof(struct xpu_rec_user_stack_top) == 32, "user stack top size");

/* ---- Python (since 1.3) ---------------------------------------------------------------- */

enum xpu_py_status {
	XPU_PY_SUPPORTED = 1,		/* frames are recorded for this process */
	XPU_PY_UNSUPPORTED_VERSION = 2,	/* a CPython whose layout this recorder does not know */
	XPU_PY_FREE_THREADED = 3,	/* a free-threaded (no-GIL) build: not supported */
	XPU_PY_DISABLED = 4,		/* xpu-record --no-python */
	XPU_PY_NO_ROOM = 5,		/* the recorder's table of Python processes was full */
};

/*
 * A CPython runtime found in process pid (in the ELF file dso_id), once per exec image. The
 * evaluator ranges are absolute addresses of _PyEval_EvalFrameDefault (and its split-off
 * cold part, 0 when none) in that process: the report puts each activation's Python frames
 * where the native stack passes through them.
 */
struct xpu_rec_py_runtime {
	uint64_t ts_ns;
	uint32_t pid;
	uint32_t status;		/* enum xpu_py_status */
	uint32_t version_hex;		/* PY_VERSION_HEX, e.g. 0x030c01f0; 0x030a0000 when only the minor is known */
	uint32_t dso_id;
	uint64_t eval_start, eval_end;
	uint64_t eval_cold_start, eval_cold_end;
};
_Static_assert(sizeof(struct xpu_rec_py_runtime) == 56, "py runtime size");

enum xpu_py_linetable {
	XPU_PY_LINETABLE_NONE = 0,
	XPU_PY_LINETABLE_310 = 1,	/* CPython 3.10 co_linetable: (byte delta, line delta) pairs */
	XPU_PY_LINETABLE_311 = 2,	/* CPython 3.11+ location table */
};

/* Caps applied by the recorder to what it reads from the target's memory. */
#define XPU_PY_NAME_MAX_BYTES 1024
#define XPU_PY_LINETABLE_MAX_BYTES (64u << 10)
#define XPU_PY_MAX_FRAMES 128

/*
 * A code object, read from the target's memory while it ran. Followed by linetable_size
 * bytes of its line table (format linetable_kind), then zero padding to 8.
 */
struct xpu_rec_py_code {
	uint32_t id;			/* PY_STACK entries refer to it */
	uint32_t name_str;		/* co_qualname (3.11+) or co_name (3.10) */
	uint32_t filename_str;		/* co_filename */
	int32_t firstlineno;
	uint16_t linetable_kind;	/* enum xpu_py_linetable */
	uint16_t reserved;
	uint32_t linetable_size;
};
_Static_assert(sizeof(struct xpu_rec_py_code) == 24, "py code size");

/*
 * Python frames of one thread at one event, leaf first. Followed by nr u64 entries:
 * bits 0..31 the PY_CODE id (0: the code object could not be read), bits 32..62 the index of
 * the instruction being run in code units, bit 63 set on the first frame run by its
 * evaluator call (the frames after it, towards the root, belong to an outer call).
 */
enum xpu_py_stack_flags {
	XPU_PY_STACK_TRUNCATED = 1u << 0,	/* the walk stopped at the frame limit */
	XPU_PY_STACK_READ_ERROR = 1u << 1,	/* the walk stopped at unreadable memory */
};

struct xpu_rec_py_stack {
	uint32_t id;
	uint16_t nr;			/* <= XPU_PY_MAX_FRAMES */
	uint16_t flags;			/* enum xpu_py_stack_flags */
};
_Static_assert(sizeof(struct xpu_rec_py_stack) == 8, "py stack size");

#define XPU_PY_FRAME_CODE(e) ((uint32_t)(e))
#define XPU_PY_FRAME_INSTR(e) ((uint32_t)((e) >> 32) & 0x7fffffffu)
#define XPU_PY_FRAME_ENTRY(e) (((e) >> 63) & 1)
#define XPU_PY_FRAME(code, instr, entry) \
	((uint64_t)(code) | (uint64_t)((instr) & 0x7fffffffu) << 32 | (uint64_t)!!(entry) << 63)

/* ---- JIT code (since 1.4) --------------------------------------------------------------- */

enum xpu_jit_source {
	XPU_JIT_PERF_MAP = 1,		/* /tmp/perf-PID.map (`START SIZE name` lines) */
	XPU_JIT_DUMP = 2,		/* a jitdump file the process mapped (jit-PID.dump) */
};

/* Caps the recorder applies to what a target's JIT files claim. */
#define XPU_JIT_NAME_MAX_BYTES 1024
#define XPU_JIT_MAX_SYMBOLS 262144	/* per process */

/*
 * Code a runtime generated in process pid, named by the runtime itself (read at the end of
 * the recording). A report names addresses in [start, start + size_bytes) that no ELF file
 * holds with name_str; where ranges overlap, the later record wins.
 */
struct xpu_rec_jit_symbol {
	uint64_t start;
	uint64_t size_bytes;
	uint64_t load_ts_ns;		/* jitdump: when the code was loaded (CLOCK_MONOTONIC); else 0 */
	uint32_t pid;
	uint32_t name_str;
	uint16_t source;		/* enum xpu_jit_source */
	uint16_t reserved0;
	uint32_t reserved1;
};
_Static_assert(sizeof(struct xpu_rec_jit_symbol) == 40, "jit symbol size");

/* A chunk of /proc/kallsyms text taken at record time, followed by len bytes. */
struct xpu_rec_ksyms {
	uint32_t seq;			/* chunks in order: 0, 1, ... */
	uint32_t len;
};

/* ---- GPU ------------------------------------------------------------------------------ */
/* All GPU timestamps are CLOCK_MONOTONIC ns (CUPTI's timestamp callback returns them). */

struct xpu_rec_gpu_device {
	uint32_t pid;			/* process that reported it */
	uint32_t device;
	uint32_t name_str;
	uint32_t compute_major;
	uint32_t compute_minor;
	uint32_t sm_count;
	uint64_t global_memory_bytes;
};
_Static_assert(sizeof(struct xpu_rec_gpu_device) == 32, "gpu device size");

enum xpu_gpu_flags {
	XPU_GPU_IN_GRAPH = 1u << 0,	/* executed as part of a CUDA graph launch */
};

struct xpu_rec_gpu_kernel {
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t pid;
	uint32_t corr_id;		/* correlation id of the launching API call */
	uint32_t name_str;		/* mangled name; the report demangles */
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t grid_x, grid_y, grid_z;
	uint32_t block_x, block_y, block_z;
	uint32_t static_smem_bytes;
	uint32_t dynamic_smem_bytes;
	uint16_t registers_per_thread;
	uint16_t flags;			/* enum xpu_gpu_flags */
	uint32_t graph_id;
	uint64_t graph_node_id;
};
_Static_assert(sizeof(struct xpu_rec_gpu_kernel) == 88, "gpu kernel size");

enum xpu_memcpy_kind {
	XPU_MEMCPY_UNKNOWN = 0,
	XPU_MEMCPY_HTOD = 1,
	XPU_MEMCPY_DTOH = 2,
	XPU_MEMCPY_HTOA = 3,
	XPU_MEMCPY_ATOH = 4,
	XPU_MEMCPY_ATOA = 5,
	XPU_MEMCPY_ATOD = 6,
	XPU_MEMCPY_DTOA = 7,
	XPU_MEMCPY_DTOD = 8,
	XPU_MEMCPY_HTOH = 9,
	XPU_MEMCPY_PTOP = 10,
};

enum xpu_memory_kind {
	XPU_MEM_UNKNOWN = 0,
	XPU_MEM_PAGEABLE = 1,
	XPU_MEM_PINNED = 2,
	XPU_MEM_DEVICE = 3,
	XPU_MEM_ARRAY = 4,
	XPU_MEM_MANAGED = 5,
	XPU_MEM_DEVICE_STATIC = 6,
	XPU_MEM_MANAGED_STATIC = 7,
};

struct xpu_rec_gpu_memcpy {
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t bytes;
	uint32_t pid;
	uint32_t corr_id;
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint8_t copy_kind;		/* enum xpu_memcpy_kind */
	uint8_t src_kind;		/* enum xpu_memory_kind */
	uint8_t dst_kind;
	uint8_t reserved0;
	uint32_t src_device;		/* peer copies; else equal to device */
	uint32_t dst_device;
	uint16_t flags;			/* enum xpu_gpu_flags */
	uint16_t reserved1;
	uint32_t graph_id;
	uint64_t graph_node_id;		/* since 1.12: CUPTI's id of the node that ran it, 0: none */
};
_Static_assert(sizeof(struct xpu_rec_gpu_memcpy) == 72, "gpu memcpy size");

struct xpu_rec_gpu_memset {
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t bytes;
	uint32_t pid;
	uint32_t corr_id;
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t value;
	uint8_t mem_kind;		/* enum xpu_memory_kind */
	uint8_t reserved0;
	uint16_t flags;			/* enum xpu_gpu_flags */
	uint32_t graph_id;
	uint64_t graph_node_id;		/* since 1.12: CUPTI's id of the node that ran it, 0: none */
};
_Static_assert(sizeof(struct xpu_rec_gpu_memset) == 64, "gpu memset size");

enum xpu_sync_kind {
	XPU_SYNC_UNKNOWN = 0,
	XPU_SYNC_EVENT = 1,
	XPU_SYNC_STREAM_WAIT_EVENT = 2,
	XPU_SYNC_STREAM = 3,
	XPU_SYNC_CONTEXT = 4,		/* cudaDeviceSynchronize / cuCtxSynchronize */
};

struct xpu_rec_gpu_sync {
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t pid;
	uint32_t corr_id;
	uint32_t kind;			/* enum xpu_sync_kind */
	uint32_t context;
	uint32_t stream;		/* 0xffffffff when not stream-specific */
	uint32_t reserved;
};
_Static_assert(sizeof(struct xpu_rec_gpu_sync) == 40, "gpu sync size");

enum xpu_api_domain {
	XPU_API_RUNTIME = 1,
	XPU_API_DRIVER = 2,
};

struct xpu_rec_gpu_api {
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t pid;
	uint32_t tid;
	uint32_t corr_id;
	uint32_t cbid;			/* CUPTI callback id within its domain */
	uint32_t domain;		/* enum xpu_api_domain */
	uint32_t name_str;		/* API function name */
	int32_t return_code;
	uint32_t reserved;
};
_Static_assert(sizeof(struct xpu_rec_gpu_api) == 48, "gpu api size");

/* The CPU stack at the entry of a launching API call, from the BPF uprobe on the marker. */
struct xpu_rec_gpu_launch {
	uint64_t ts_ns;
	uint32_t pid;
	uint32_t tid;
	uint32_t corr_id;
	uint32_t cbid;
	uint32_t domain;		/* enum xpu_api_domain */
	uint32_t stack_id;
	uint32_t py_stack_id;		/* since 1.3: PY_STACK id, 0: no Python frames */
	uint32_t flags;			/* since 1.5: enum xpu_event_flags (was reserved) */
};
_Static_assert(sizeof(struct xpu_rec_gpu_launch) == 40, "gpu launch size");

/*
 * Since 1.10, PyTorch autograd. A node was set on an op's output (the uprobe on
 * torch::autograd::impl::set_gradient_edge): the stack is the forward code that created the
 * node. One record per node, not per output. A USER_STACK_COPY or PY_STACK joins it as a
 * GPU_LAUNCH's does (for_type 41, same tid and ts_ns). Since 1.11, with
 * XPU_AG_NODE_FROM_LAUNCH, the stack is that of the launch made by the same op (frame 0: the
 * return address into set_gradient_edge's caller; then the launch's frames from where the op
 * entered the caller's library outwards) and the Python frames are the launch's.
 */
enum xpu_ag_node_flags {
	/* bit 0 as CPU_SAMPLE's: XPU_EVENT_USER_OUTERMOST */
	XPU_AG_NODE_FROM_LAUNCH = 1u << 1,
};

struct xpu_rec_autograd_node {
	uint64_t ts_ns;
	uint32_t pid;
	uint32_t tid;
	uint64_t node_addr;		/* the Node's address in the process */
	uint64_t class_addr;		/* its vtable pointer: the node's class */
	uint32_t stack_id;
	uint32_t py_stack_id;		/* PY_STACK id, 0: no Python frames */
	uint32_t flags;			/* enum xpu_event_flags */
	uint32_t reserved;
};
_Static_assert(sizeof(struct xpu_rec_autograd_node) == 48, "autograd node size");

/*
 * Since 1.10: the autograd engine began to evaluate a node (Engine::evaluate_function) on
 * thread tid. Its end is not recorded: work of tid after begin_ns is the node's while the
 * thread's stack holds caller_ip (evaluate_function's return address).
 */
struct xpu_rec_autograd_eval {
	uint64_t begin_ns;
	uint32_t pid;
	uint32_t tid;
	uint64_t node_addr;
	uint64_t class_addr;		/* the vtable pointer, as in AUTOGRAD_NODE */
	uint64_t caller_ip;		/* the return address into evaluate_function's caller */
	uint32_t class_str;		/* the node's class ("MmBackward0"), 0: not named */
	uint16_t depth;			/* evaluations of tid this one runs inside (reentrant) */
	uint16_t flags;			/* none yet */
};
_Static_assert(sizeof(struct xpu_rec_autograd_eval) == 48, "autograd eval size");

enum xpu_autograd_probe_status {
	XPU_AUTOGRAD_PROBED = 1,	/* the probes are attached to the file */
	XPU_AUTOGRAD_UNAVAILABLE = 2,	/* a PyTorch file whose probes could not be attached */
};

/* Since 1.10: what became of a PyTorch library's autograd probes (once per file). */
struct xpu_rec_autograd_probe {
	uint64_t ts_ns;
	uint32_t pid;			/* the process whose mapping made us look */
	uint32_t dso_id;
	uint32_t status;		/* enum xpu_autograd_probe_status */
	uint32_t reason_str;		/* UNAVAILABLE: why, one line */
};
_Static_assert(sizeof(struct xpu_rec_autograd_probe) == 24, "autograd probe size");

/*
 * Since 1.12, CUDA graphs (CUPTI's resource callbacks for graph nodes, format-spec/gpu-records.md):
 * what lets a kernel, copy or memset a graph replays be put under the code that captured it.
 * A node made inside a traced API call (a launch, copy or memset captured from a stream, or
 * cudaGraphAdd*Node) is CREATED with that call's corr_id, whose GPU_LAUNCH holds the stack.
 * Instantiation (and cudaGraphClone) copies nodes: CLONED maps the copy's id to the node it was
 * copied from. A node whose parameters were replaced afterwards (UPDATED: cudaGraphExecUpdate,
 * cudaGraphExec*NodeSetParams) or every node of an exec graph given to cudaGraphExecUpdate
 * (EXEC_UPDATED) no longer runs what its capture site asked for: from ts_ns on, a reader keeps
 * its work under the replay's stack only.
 */
enum xpu_graph_node_op {
	XPU_GRAPH_NODE_CREATED = 1,
	XPU_GRAPH_NODE_CLONED = 2,
	XPU_GRAPH_NODE_UPDATED = 3,
	XPU_GRAPH_EXEC_UPDATED = 4,
};

struct xpu_rec_gpu_graph_node {
	uint64_t ts_ns;
	uint32_t pid;
	uint32_t tid;			/* the thread whose call made the change */
	uint64_t node_id;		/* CUPTI's node id; 0 for EXEC_UPDATED */
	uint64_t orig_node_id;		/* CLONED: the node it is a copy of; else 0 */
	uint32_t graph_id;		/* the graph that holds node_id, 0: unknown or an exec graph */
	uint32_t exec_id;		/* CLONED into an exec graph, EXEC_UPDATED: its id; else 0 */
	uint32_t corr_id;		/* CREATED: the traced API call it was made in; 0: none */
	uint16_t op;			/* enum xpu_graph_node_op */
	uint16_t node_type;		/* CUgraphNodeType: 0 kernel, 1 memcpy, 2 memset, 5 child graph, ... */
};
_Static_assert(sizeof(struct xpu_rec_gpu_graph_node) == 48, "gpu graph node size");

enum xpu_nvtx_kind {
	XPU_NVTX_RANGE = 1,		/* push/pop or start/end range */
	XPU_NVTX_MARKER = 2,		/* instantaneous: start_ns == end_ns */
};

struct xpu_rec_nvtx {
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t pid;
	uint32_t tid;
	uint32_t name_str;
	uint32_t domain_str;
	uint32_t kind;			/* enum xpu_nvtx_kind */
	uint32_t color_argb;
};
_Static_assert(sizeof(struct xpu_rec_nvtx) == 40, "nvtx size");

struct xpu_rec_gpu_overhead {
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t pid;
	uint32_t tid;
	uint32_t kind;			/* CUPTI overhead kind, as reported */
	uint32_t reserved;
};
_Static_assert(sizeof(struct xpu_rec_gpu_overhead) == 32, "gpu overhead size");

enum xpu_gpu_process_state {
	XPU_GPU_PROC_CONNECTED = 1,	/* injected library checked in */
	XPU_GPU_PROC_SUBSCRIBE_FAILED = 2,/* CUPTI had another subscriber; no GPU data */
	XPU_GPU_PROC_CLOCK_FALLBACK = 3,/* timestamp callback refused: offset applied */
	XPU_GPU_PROC_FLUSHED = 4,	/* final flush done, connection closed cleanly */
	XPU_GPU_PROC_NO_CUPTI = 5,	/* no usable libcupti found in the process */
	/* since 1.11, xpu-record -p on a running process */
	XPU_GPU_PROC_ATTACHED = 6,	/* loaded mid-run: its GPU work before this is not recorded */
	XPU_GPU_PROC_DETACHED = 7,	/* collection stopped at the recorder's end; the process ran on */
};

/* State of one process's CUPTI side, with CUPTI's own dropped-record count so far. */
struct xpu_rec_gpu_process {
	uint64_t ts_ns;
	uint32_t pid;
	uint32_t state;			/* enum xpu_gpu_process_state */
	uint64_t cupti_dropped;
	int64_t clock_offset_ns;	/* added to CUPTI timestamps in fallback mode */
};
_Static_assert(sizeof(struct xpu_rec_gpu_process) == 32, "gpu process size");

/* ---- GPU memory and the driver below the CUDA API (since 1.4) --------------------------- */

enum xpu_gpu_mem_op {
	XPU_GPU_MEM_ALLOC = 1,
	XPU_GPU_MEM_FREE = 2,
};

enum xpu_gpu_mem_flags {
	XPU_GPU_MEM_ASYNC = 1u << 0,	/* stream-ordered (cudaMallocAsync, a memory pool) */
};

/*
 * One allocation or release of GPU-visible memory (CUPTI memory activity). corr_id is the
 * API call that made it, as for kernels: its GPU_LAUNCH holds the CPU stack of that call.
 */
struct xpu_rec_gpu_memory {
	uint64_t ts_ns;
	uint64_t address;
	uint64_t bytes;
	uint32_t pid;
	uint32_t corr_id;
	uint32_t device;
	uint32_t context;
	uint32_t stream;		/* 0xffffffff when not stream-ordered */
	uint8_t op;			/* enum xpu_gpu_mem_op */
	uint8_t mem_kind;		/* enum xpu_memory_kind */
	uint16_t flags;			/* enum xpu_gpu_mem_flags */
};
_Static_assert(sizeof(struct xpu_rec_gpu_memory) == 48, "gpu memory size");

enum xpu_ioctl_flags {
	XPU_IOCTL_DRIVER_TIMED = 1u << 0,	/* driver_ns measured by fentry/fexit in the module */
};

/* An ioctl of a traced thread on an NVIDIA device file (xpu-record --driver). */
struct xpu_rec_driver_ioctl {
	uint64_t start_ns;		/* syscall entry */
	uint64_t end_ns;		/* syscall exit */
	uint64_t driver_ns;		/* time inside the module's ioctl entry point; 0: not timed */
	int64_t ret;			/* the syscall's return value (negative errno) */
	uint32_t pid;
	uint32_t tid;
	uint32_t request;		/* the ioctl request code */
	uint32_t fd;
	uint32_t rdev;			/* device number, major << 20 | minor; 0 for a test file */
	uint32_t file_str;		/* the device file's path, e.g. /dev/nvidiactl */
	uint32_t flags;			/* enum xpu_ioctl_flags */
	uint32_t reserved;
};
_Static_assert(sizeof(struct xpu_rec_driver_ioctl) == 64, "driver ioctl size");

/* ---- distributed jobs (since 1.6) ------------------------------------------------------ */

/*
 * What a process that loaded the injected library read from its environment at start: its
 * place in a distributed job, as torchrun (and most launchers) set it. -1: not set, or not a
 * number.
 */
struct xpu_rec_process_env {
	uint64_t ts_ns;
	uint32_t pid;
	int32_t rank;			/* RANK */
	int32_t local_rank;		/* LOCAL_RANK */
	int32_t world_size;		/* WORLD_SIZE */
	int32_t local_world_size;	/* LOCAL_WORLD_SIZE */
	uint32_t reserved;
};
_Static_assert(sizeof(struct xpu_rec_process_env) == 32, "process env size");

#endif /* XPU_FORMAT_H */
