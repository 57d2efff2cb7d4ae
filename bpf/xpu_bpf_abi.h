/* SPDX-License-Identifier: MIT */
/*
 * The ABI between bpf/xpu.bpf.c and xpu-record: ring-buffer events, counters and map keys.
 * Never written to disk (common/xpu_format.h is the on-disk layout); it only has to match
 * between the BPF object and the recorder built with it.
 */
#ifndef XPU_BPF_ABI_H
#define XPU_BPF_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * bpf_get_stack() stops at the perf_event_max_stack sysctl (127 by default); one more slot
 * lets the uprobe put the return address read at [sp] in front of the FP walk.
 */
#define XPU_BPF_MAX_FRAMES 128
/*
 * User frames an event holds: -g cfi walks up to this many (PyTorch's native stacks through
 * the interpreter pass 128); bpf_get_stack() still stops at the sysctl's limit.
 */
#define XPU_BPF_MAX_UFRAMES 256
#define XPU_BPF_COMM_LEN 16

enum xpu_ev_type {
	XPU_EV_SAMPLE = 1,
	XPU_EV_TASK = 2,
	XPU_EV_MMAP = 3,	/* an executable mmap returned: rescan this pid's maps */
	XPU_EV_GPU_LAUNCH = 4,
	XPU_EV_USTACK = 5,	/* -g dwarf: precedes the SAMPLE or GPU_LAUNCH it belongs to */
	XPU_EV_PYSTACK = 6,	/* Python frames: precede the SAMPLE or GPU_LAUNCH they belong to */
	XPU_EV_OFFCPU = 7,	/* --off-cpu: one block of a thread (struct xpu_ev_offcpu) */
	XPU_EV_AG_NODE = 8,	/* PyTorch autograd: a node got its output (struct xpu_ev_ag_node) */
	XPU_EV_AG_EVAL = 9,	/* PyTorch autograd: a node's evaluation began */
};

/*
 * Per-CPU scratch slots of the stack copy, Python walk and CFI walk: 0 the sampler, 1 the
 * launch uprobe, 2 --off-cpu (sched_switch and sys_exit). Programs that can interrupt each
 * other on one CPU never share a slot.
 */
#define XPU_BPF_SLOTS 3

/* Same values as enum xpu_task_kind in xpu_format.h. */
enum xpu_ev_task_kind {
	XPU_EV_TASK_FORK = 1,
	XPU_EV_TASK_THREAD = 2,
	XPU_EV_TASK_EXEC = 3,
	XPU_EV_TASK_EXIT = 4,
	XPU_EV_TASK_THREAD_EXIT = 5,
	XPU_EV_TASK_COMM = 6,
};

/* Per-CPU counters, summed by user space over all possible CPUs. */
enum xpu_bpf_counter {
	XPU_CNT_SAMPLES = 0,		/* perf_event hits in traced tgids */
	XPU_CNT_RB_LOST = 1,		/* bpf_ringbuf_reserve() failed: event lost */
	XPU_CNT_USTACK_ERR = 2,		/* bpf_get_stack(user) < 0 */
	XPU_CNT_KSTACK_ERR = 3,		/* bpf_get_stack(kernel) < 0 */
	XPU_CNT_TASK_EVENTS = 4,
	XPU_CNT_MMAP_EVENTS = 5,
	XPU_CNT_GPU_LAUNCHES = 6,
	XPU_CNT_TRACED_FULL = 7,	/* traced_tgids map full: a child is not followed */
	XPU_CNT_USTACK_COPIES = 8,	/* -g dwarf: stack copies sent */
	XPU_CNT_USTACK_COPY_ERR = 9,	/* -g dwarf: not a byte of the user stack was readable */
	XPU_CNT_USTACK_TOP_ERR = 10,	/* -g dwarf,SIZE,TOP: stack top unknown or unreadable */
	XPU_CNT_PY_STACKS = 11,		/* Python frame lists sent */
	XPU_CNT_PY_NO_THREAD = 12,	/* event in a Python process whose thread has no state */
	XPU_CNT_PY_READ_ERR = 13,	/* a Python walk ended at unreadable memory */
	XPU_CNT_PY_TRUNCATED = 14,	/* a Python walk ended at the frame limit */
	XPU_CNT_PY_THREAD_SCANS = 15,	/* thread-state list walks (cache misses) */
	/* -g cfi: walks, frames, how walks ended, and frames unwound by frame pointer instead */
	XPU_CNT_CFI_WALKS = 16,
	XPU_CNT_CFI_FRAMES = 17,
	XPU_CNT_CFI_END_OUTERMOST = 18,	/* the CFI says there is no caller, or a zero address */
	XPU_CNT_CFI_END_FP = 19,	/* a frame-pointer step found no valid frame */
	XPU_CNT_CFI_END_READ = 20,	/* unreadable stack memory */
	XPU_CNT_CFI_END_LIMIT = 21,	/* XPU_BPF_MAX_UFRAMES reached */
	XPU_CNT_CFI_END_BAD_SP = 22,	/* the stack pointer did not grow towards the caller */
	XPU_CNT_CFI_FP_NO_MAP = 23,	/* frame in no known executable mapping */
	XPU_CNT_CFI_FP_NO_TABLE = 24,	/* its file's table was not loaded (yet) */
	XPU_CNT_CFI_FP_NO_ROW = 25,	/* no FDE covers the address */
	XPU_CNT_CFI_FP_UNSUPPORTED = 26, /* the rule is one the walk does not evaluate */
	XPU_CNT_CFI_NO_PROC = 27,	/* walk in a process without loaded mappings: all fp */
	XPU_CNT_CFI_SCAN = 28,		/* return address found by a stack scan (JIT code) */
	/* --off-cpu */
	XPU_CNT_OFFCPU_SHORT = 29,	/* blocks shorter than the minimum: not recorded */
	XPU_CNT_OFFCPU_LOST = 30,	/* blocks over the minimum that could not be kept */
	XPU_CNT_OFFCPU_NO_STACK = 31,	/* blocks sent without a stack: it was gone */
	XPU_CNT_CFI_SHORT_COPIES = 32,	/* -g cfi: stack copies of walks that fell short */
	XPU_CNT_CFI_CACHE_HITS = 33,	/* -g cfi: frames whose row came from the row cache */
	XPU_CNT_CFI_STACK_READS = 34,	/* -g cfi: user-memory reads of the walk's stack window */
	XPU_CNT_PY_FRAME_READS = 35,	/* user-memory reads of Python frames (data stack window) */
	XPU_CNT_PY_CODE_CACHE_HITS = 36,	/* Python frames whose fingerprint came from the cache */
	/* PyTorch autograd (backward attribution) */
	XPU_CNT_AG_NODES = 37,		/* node events sent (forward: a node set on an output) */
	XPU_CNT_AG_NODE_REPEATS = 38,	/* further outputs of the node just sent: not sent again */
	XPU_CNT_AG_EVALS = 39,		/* evaluation events sent */
	XPU_CNT_AG_READ_ERR = 40,	/* a node or edge pointer could not be read */
	XPU_CNT_AG_NODES_FROM_LAUNCH = 41,	/* node events that name their op's launch, unwalked */
	XPU_CNT_NR = 42,
};

struct xpu_ev_hdr {
	__u32 type;			/* enum xpu_ev_type */
	__u32 pid;			/* tgid */
	__u32 tid;
	__u32 cpu;
	__u64 ts_ns;			/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
};

/*
 * traced_tgids values: a traced process; the launched command between its fork from
 * xpu-record and its exec (its pc is still in xpu-record's image, whose mappings the trace
 * does not hold: its samples and blocks are not taken; the exec makes it XPU_TRACED)
 */
enum xpu_traced {
	XPU_TRACED = 1,
	XPU_TRACED_BEFORE_EXEC = 2,
};

/*
 * -g cfi: the walk reached a frame whose CFI says it has no caller (a thread's first); a
 * walk that fell short where a stack copy can help the report (bpf/cfi_walk.bpf.h copy_pays)
 */
enum xpu_ev_uflags {
	XPU_EV_U_OUTERMOST = 1,
	XPU_EV_U_COPY_PAYS = 2,
};

/* Stack sizes are bpf_get_stack()'s return value: bytes, or a negative errno. */
struct xpu_ev_sample {
	struct xpu_ev_hdr hdr;
	__s32 kstack_bytes;
	__s32 ustack_bytes;
	__u32 uflags;			/* enum xpu_ev_uflags */
	__u32 reserved;
	__u64 kips[XPU_BPF_MAX_FRAMES];
	__u64 uips[XPU_BPF_MAX_UFRAMES];
};

struct xpu_ev_task {
	struct xpu_ev_hdr hdr;
	__u32 kind;			/* enum xpu_ev_task_kind */
	__u32 parent_pid;		/* FORK: tgid of the parent */
	__s32 exit_code;		/* EXIT: task->exit_code (wait status) */
	__u32 old_tid;			/* EXEC: tid that called execve (may differ from pid) */
	char comm[XPU_BPF_COMM_LEN];
};

struct xpu_ev_mmap {
	struct xpu_ev_hdr hdr;
	__u64 addr;			/* mmap() return value */
};

/*
 * uips[ustart .. ustart + nr_user) is the stack, leaf first: the marker's IP, then its caller
 * (from [sp]), then the FP walk.
 */
struct xpu_ev_gpu_launch {
	struct xpu_ev_hdr hdr;
	__u32 corr_id;
	__u32 cbid;
	__u32 domain;
	__u32 ustart;
	__s32 nr_user;			/* frames, or a negative errno from bpf_get_stack() */
	__u32 uflags;			/* enum xpu_ev_uflags */
	__u64 uips[XPU_BPF_MAX_UFRAMES + 1];
};

/*
 * PyTorch autograd, forward side: a uprobe on torch::autograd::impl::set_gradient_edge(const
 * Variable&, Edge) (Edge by invisible reference: its first word is the Node*), the moment an
 * op's output gets the node its backward will run. Carries the stack as a launch does, or,
 * with XPU_EV_AG_FROM_LAUNCH, names the launch of the same op whose stack it shares (the
 * thread's last GPU_LAUNCH, stamped launch_ts) and the return address into its caller
 * (uips[0], nr_user 0).
 */
enum xpu_ev_ag_flags {
	XPU_EV_AG_FROM_LAUNCH = 1u << 0,
};

struct xpu_ev_ag_node {
	struct xpu_ev_hdr hdr;
	__u64 node;			/* Node* */
	__u64 vtable;			/* the node's vtable pointer: its class */
	__u32 ustart;
	__s32 nr_user;			/* frames, or a negative errno from bpf_get_stack() */
	__u32 uflags;			/* enum xpu_ev_uflags */
	__u32 ag_flags;			/* enum xpu_ev_ag_flags */
	__u64 launch_ts;		/* XPU_EV_AG_FROM_LAUNCH: that launch's hdr.ts_ns */
	__u64 uips[XPU_BPF_MAX_UFRAMES + 1];
};

/*
 * Where a process's PyTorch keeps the thread's node counter (at::sequence_number), filled by
 * xpu-record once the library is loaded (record/tls_ref.h): the module id of libtorch_cpu's
 * TLS block and the counter's offset in it.
 */
struct xpu_ag_tls {
	__u64 modid;
	__u64 off;
};

/*
 * Where a process's libxpu-cupti.so keeps each thread's last in-process launch for the node
 * event (common/walk_share.h struct xpu_ag_inproc_slot[nslots] at addr), filled by xpu-record
 * from the library's XPU_CUPTI_MSG_INPROC: nslots a power of two, at most this many.
 */
#define XPU_AG_INPROC_MAX_SLOTS 65536u

struct xpu_ag_inproc {
	__u64 addr;
	__u32 nslots;
	__u32 reserved;
};

/*
 * glibc x86-64: the word at the thread pointer + XPU_TLS_TCB_DTV is the thread's dtv; its
 * entries are XPU_TLS_DTV_ENTRY bytes, the first word of entry m the address of module m's block
 * (XPU_TLS_DTV_UNALLOCATED before the thread's first use), and the word before entry 0 their
 * count.
 */
#define XPU_TLS_TCB_DTV 8
#define XPU_TLS_DTV_ENTRY 16
#define XPU_TLS_DTV_UNALLOCATED 0xffffffffffffffffull

/*
 * PyTorch autograd, backward side: Engine::evaluate_function(graph_task, Node*, ...) entered,
 * with the node, its vtable, the return address at [sp] (in every stack of the thread until it
 * returns: no end event is needed), the probed instruction's address and sp there (a nested
 * evaluation's is lower). cookie names the file the probe is in.
 */
struct xpu_ev_ag_eval {
	struct xpu_ev_hdr hdr;
	__u64 node;
	__u64 vtable;
	__u64 ret_addr;
	__u64 ip;
	__u64 sp;
	__u32 cookie;			/* the attach cookie: index of the probed file */
	__u32 reserved;
};

/*
 * -g dwarf: user registers and the top `size` bytes of the user stack from regs[1] (sp). The
 * header has the same ts_ns and tid as the SAMPLE or GPU_LAUNCH event (for_type) sent right
 * after it. Only the header and `size` bytes are sent (bpf_ringbuf_output); data[] is the
 * per-CPU scratch area's room. Same regs[] order as enum xpu_ureg in xpu_format.h.
 */
#define XPU_BPF_USTACK_MAX (64u << 10)
#define XPU_BPF_USTACK_TOP_MAX (32u << 10)
#define XPU_BPF_NR_UREGS 8

/*
 * -g dwarf,SIZE,TOP: when the copy stops short of the thread's stack top, the TOP bytes below
 * that top (top_addr, top_size) follow the copy's size bytes in data[]: the outermost frames
 * (main, a thread's start, the Python interpreter's) beyond a huge frame or a deep stack.
 */
struct xpu_ev_ustack {
	struct xpu_ev_hdr hdr;
	__u32 for_type;			/* XPU_EV_SAMPLE or XPU_EV_GPU_LAUNCH */
	__u32 size;
	__u64 regs[XPU_BPF_NR_UREGS];
	__u64 top_addr;
	__u32 top_size;			/* 0: no top window */
	__u32 reserved;
	__u8 data[XPU_BPF_USTACK_MAX + XPU_BPF_USTACK_TOP_MAX];
};

/* --off-cpu: why a thread left the CPU (same values as enum xpu_off_cpu_state) */
enum xpu_ev_off_state {
	XPU_EV_OFF_PREEMPTED = 1,	/* runnable: preempted or yielded */
	XPU_EV_OFF_SLEEPING = 2,	/* interruptible sleep: waits on a lock, pipe, socket, timer */
	XPU_EV_OFF_BLOCKED = 3,		/* uninterruptible sleep (D): disk I/O, page faults */
	XPU_EV_OFF_OTHER = 4,		/* stopped, traced, or a state not named above */
};

/* enum xpu_off_cpu_flags in xpu_format.h */
#define XPU_EV_OFF_NO_STACK 2

/*
 * --off-cpu: one block, sent from the thread's own context after it ended (see bpf/offcpu.bpf.h),
 * with the user stack it blocked in. hdr.ts_ns is the switch-out time; a USER_STACK or PYSTACK
 * event with the same ts_ns and for_type XPU_EV_OFFCPU precedes it.
 */
struct xpu_ev_offcpu {
	struct xpu_ev_hdr hdr;
	__u64 dur_ns;
	__u32 state;			/* enum xpu_ev_off_state */
	__u32 waker_tid;		/* thread that woke it, 0: unknown */
	__s32 ustack_bytes;
	__u32 uflags;			/* enum xpu_ev_uflags */
	__u32 flags;			/* XPU_EV_OFF_NO_STACK */
	__u32 reserved;
	__u64 uips[XPU_BPF_MAX_UFRAMES];	/* -g cfi walks this deep, fp to XPU_BPF_MAX_FRAMES */
};

/*
 * Python: where the walk finds a thread's frames in one process, filled by xpu-record from
 * the interpreter's ELF file (record/py_layout.c) and keyed by tgid in the py_procs map.
 * Offsets are bytes into the named CPython structure.
 */
enum xpu_py_frame_model {
	XPU_PY_MODEL_310 = 1,	/* tstate->frame: PyFrameObject chain, f_lasti */
	XPU_PY_MODEL_311 = 2,	/* tstate->cframe->current_frame; is_entry marks an activation */
	XPU_PY_MODEL_312 = 3,	/* same path; entry frames are owned by the C stack (owner 3) */
	XPU_PY_MODEL_313 = 4,	/* tstate->current_frame; owner as 3.12 */
};

#define XPU_PY_OWNED_BY_CSTACK 3
#define XPU_PY_FRAME_READ_MAX 104	/* bytes of a frame read at once: covers every field */

struct xpu_py_layout {
	__u64 runtime_addr;		/* &_PyRuntime in the process */
	__u8 model;			/* enum xpu_py_frame_model */
	__u8 frame_read;		/* bytes to read per frame, <= XPU_PY_FRAME_READ_MAX */
	__u16 rt_interp_head;		/* _PyRuntimeState.interpreters.head */
	__u16 interp_next;		/* PyInterpreterState.next */
	__u16 interp_threads_head;	/* .threads.head (3.10: .tstate_head) */
	__u16 ts_next;			/* PyThreadState.next */
	__u16 ts_id;			/* .native_thread_id (compared with the tid), or 3.10's
					 * .thread_id (pthread_self(), compared with fsbase) */
	__u16 ts_frame;			/* .frame (3.10), .cframe (3.11, 3.12), .current_frame */
	__u16 cframe_frame;		/* _PyCFrame.current_frame (3.11, 3.12) */
	__u16 fr_code;			/* f_code / f_executable */
	__u16 fr_previous;		/* f_back / previous */
	__u16 fr_instr;			/* f_lasti (int) / prev_instr / instr_ptr (pointer) */
	__u16 fr_marker;		/* is_entry (3.11) / owner (3.12+), one byte */
	__u16 co_firstlineno;		/* with co_filename, the code object's fingerprint */
	__u16 co_code_adaptive;		/* first instruction, for the instruction index */
	__u8 id_is_tid;			/* ts_id holds the native thread id */
	__u8 reserved;
	__u16 co_filename;		/* the file name's string object (a pointer) */
};

/* One frame as sent: instr bit 31 marks the first frame of its evaluator call. */
struct xpu_py_frame_ev {
	__u64 code;			/* address of the code object */
	__u32 instr;			/* instruction index in code units | activation bit */
	__u32 fingerprint;		/* xpu_py_code_fingerprint(): guards against address reuse */
};

/*
 * What tells two code objects at one address apart: the first line alone does not (every
 * module's code starts at line 1, and a module's code is freed once it has run, its address
 * free for the next module's). The file name's string object lives as long as any code of
 * its file, so code reusing the address of another file's code differs in it.
 */
static __always_inline __u32 xpu_py_code_fingerprint(__u32 firstlineno, __u64 filename)
{
	return firstlineno ^ (__u32)(((filename >> 4) * 0x9e3779b97f4a7c15ull) >> 32);
}

#define XPU_PY_EV_ENTRY (1u << 31)
#define XPU_BPF_PY_MAX_FRAMES 128

enum xpu_ev_py_flags {
	XPU_EV_PY_TRUNCATED = 1,
	XPU_EV_PY_READ_ERROR = 2,
};

/* Sent ahead of its SAMPLE or GPU_LAUNCH (same tid and ts_ns); only nr frames travel. */
struct xpu_ev_pystack {
	struct xpu_ev_hdr hdr;
	__u32 for_type;			/* XPU_EV_SAMPLE or XPU_EV_GPU_LAUNCH */
	__u16 nr;
	__u16 flags;			/* enum xpu_ev_py_flags */
	struct xpu_py_frame_ev frames[XPU_BPF_PY_MAX_FRAMES];
};


/*
 * -g cfi: unwind rows built by xpu-record from a file's .eh_frame (record/cfi_build.c). A
 * file's rows are sorted by pc (an ELF virtual address below 4 GiB); a row holds from its pc
 * up to the next row's. The return address is always at CFA - 8 (x86-64).
 */
enum xpu_cfi_kind {
	XPU_CFI_NONE = 0,		/* no FDE covers pc: frame pointer */
	XPU_CFI_RSP = 1,		/* CFA = rsp + cfa_off */
	XPU_CFI_RBP = 2,		/* CFA = rbp + cfa_off */
	XPU_CFI_RBP_DEREF = 3,		/* CFA = *(rbp + (s16)cfa_off): stack realignment */
	XPU_CFI_PLT = 4,		/* CFA = rsp + cfa_off, + 8 once (pc & 15) >= rbp_off8 */
	XPU_CFI_SIGNAL = 5,		/* a signal trampoline: registers in the ucontext at rsp */
	XPU_CFI_END = 6,		/* return address undefined: the outermost frame */
	XPU_CFI_UNSUPPORTED = 7,	/* a rule the walk cannot evaluate: frame pointer */
	/*
	 * CFA = *(rbp + (s16)cfa_off) and the caller's rbp at rbp + 8 * rbp_off8 (not at the
	 * CFA): a function that realigned its stack (gcc's DRAP) keeps both relative to rbp
	 */
	XPU_CFI_RBP_DEREF_AT_RBP = 8,
};

struct xpu_cfi_row {
	__u32 pc;
	__u8 kind;			/* enum xpu_cfi_kind */
	__s8 rbp_off8;			/* rbp saved at CFA + 8 * rbp_off8; 0: unchanged */
	__u16 cfa_off;
};

/*
 * A table's array holds its nrows rows, then a page index: word k (of npages, two per slot)
 * is the row that holds at the start of page page0 + k (2^XPU_CFI_PAGE_SHIFT bytes of code), so
 * a lookup searches only the rows of one page instead of the whole file.
 */
#define XPU_CFI_PAGE_SHIFT 10

/* One executable mapping of a traced process whose file has a table. */
struct xpu_cfi_map {
	__u64 start, end;
	__u64 bias;			/* table pc = address - bias */
	__u32 table;			/* index into cfi_tables */
	__u32 nrows;
	__u32 page0;			/* first indexed page: first row's pc >> XPU_CFI_PAGE_SHIFT */
	__u32 npages;			/* index words after the rows */
};

#define XPU_CFI_MAX_MAPS 512		/* executable mappings per process with tables */
#define XPU_CFI_MAX_TABLES 4096		/* files with tables at once */
#define XPU_CFI_MAX_ROWS (1u << 24)	/* rows of one file */
#define XPU_CFI_TABLE_PENDING 0xffffffffu	/* xpu_cfi_map.table: being built */

/* Per process, sorted by start, non-overlapping; only nr entries are meaningful. */
struct xpu_cfi_proc {
	__u32 nr;
	/*
	 * New on every update of the process's value (unique across processes): the walk's row
	 * cache keeps rows only for the generation they were found in.
	 */
	__u32 gen;
	struct xpu_cfi_map maps[XPU_CFI_MAX_MAPS];
};

#endif
