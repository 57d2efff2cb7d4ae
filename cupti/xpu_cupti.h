/* SPDX-License-Identifier: MIT */
/*
 * Internals of libxpu-cupti.so, the library the CUDA driver loads into each target process
 * through CUDA_INJECTION64_PATH. Nothing here is exported; the exported symbols are
 * InitializeInjection, InitializeInjectionNvtx2 and the marker xpu_cupti_api_enter.
 */
#ifndef XPU_CUPTI_H
#define XPU_CUPTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "xpu_format.h"

/* ---- log.c: one line per distinct problem on stderr, prefixed "xpu-cupti:" ---------------- */
extern bool xc_verbose;
void xc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Logs at most once per call site. */
#define xc_err_once(...)                                                                   \
	do {                                                                               \
		static int __done;                                                         \
		if (!__atomic_exchange_n(&__done, 1, __ATOMIC_RELAXED))                    \
			xc_log(__VA_ARGS__);                                               \
	} while (0)
#define xc_info(...)                                                                       \
	do {                                                                               \
		if (xc_verbose)                                                            \
			xc_log(__VA_ARGS__);                                               \
	} while (0)

/* ---- cupti_loader.c: the libcupti of the process, resolved at run time -------------------- */
#define XC_FN(name) __typeof__(name) *name
struct cupti_fns {
	void *handle;
	char path[512];
	XC_FN(cuptiGetVersion);
	XC_FN(cuptiGetResultString);
	XC_FN(cuptiSubscribe);
	XC_FN(cuptiEnableCallback);
	XC_FN(cuptiGetCallbackName);
	XC_FN(cuptiActivityEnable);
	XC_FN(cuptiActivityDisable);
	XC_FN(cuptiActivityRegisterCallbacks);
	XC_FN(cuptiActivityGetNextRecord);
	XC_FN(cuptiActivityGetNumDroppedRecords);
	XC_FN(cuptiActivityFlushAll);
	XC_FN(cuptiActivityFlushPeriod);
	XC_FN(cuptiActivityRegisterTimestampCallback);
	XC_FN(cuptiGetTimestamp);
	XC_FN(cuptiSetThreadIdType);
	/* optional: absent in older CUPTI */
	XC_FN(cuptiSubscribe_v2);
	XC_FN(cuptiActivityEnableRuntimeApi);
	XC_FN(cuptiActivityEnableDriverApi);
	XC_FN(cuptiUnsubscribe);
	XC_FN(cuptiFinalize);
	XC_FN(cuptiActivityEnableHWTrace);
	XC_FN(cuptiGetStreamIdEx);
	XC_FN(cuptiGetContextId);
	XC_FN(cuptiGetGraphNodeId);
	XC_FN(cuptiGetGraphId);
	XC_FN(cuptiGetGraphExecId);
	/* NVTX injection entry of libcupti, forwarded to from our own */
	int (*InitializeInjectionNvtx2)(void *get_export_table);
};
#undef XC_FN
extern struct cupti_fns cupti;
/* Finds and dlopens libcupti and fills `cupti`. 0 or negative errno (one line logged). */
int cupti_loader__load(void);
const char *cupti_loader__strerror(CUptiResult r);

/* ---- clock.c -------------------------------------------------------------------------------- */
uint64_t xc_mono_ns(void);
/*
 * Makes CUPTI timestamps CLOCK_MONOTONIC: registers the timestamp callback, or measures an
 * offset to add. Call before enabling any activity kind. Returns true when the callback was
 * accepted; *offset_ns is what to add to every CUPTI timestamp (0 with the callback).
 */
bool clock__setup(int64_t *offset_ns);
extern int64_t xc_clock_offset_ns;
static inline uint64_t xc_ts(uint64_t cupti_ts)
{
	return cupti_ts ? (uint64_t)((int64_t)cupti_ts + xc_clock_offset_ns) : 0;
}

/* ---- transport.c: connection to the recorder, batches, strings ------------------------------ */
int transport__connect(uint32_t cupti_version, uint32_t hello_flags);
/* xpu-record -p: the recorder's socket, given by the attach call instead of the environment. */
void transport__set_socket_path(const char *path);
/* The connection's descriptor (-1 when none), for the flusher's poll. */
int transport__fd(void);
/*
 * After the descriptor polled readable: reads what the recorder sent (a SHARE is mapped here)
 * and says whether it asked to stop (STOP, or gone).
 */
bool transport__stop_requested(void);
bool transport__connected(void);
/* Serializes batch building: activity conversion runs on CUPTI's worker and on flushing threads. */
void transport__lock(void);
void transport__unlock(void);
/* With the lock held: appends one record to the open batch (sending it first when full). */
void transport__append(uint16_t type, const void *body, uint32_t body_size);
/* With the lock held: the connection-local id of a string, defining it first if new; 0: none. */
uint32_t transport__string(const char *s);
/* With the lock held: sends the open batch. */
void transport__flush(void);
/* With the lock held: a GPU_PROCESS record now. */
void transport__process_state(uint32_t state, uint64_t cupti_dropped, int64_t offset_ns);
/*
 * Final flush: the open batch, the event rings, the walk's counters; then DONE and close.
 * Idempotent.
 */
void transport__finish(uint64_t cupti_dropped);
/* Forked child: forget the parent's connection without touching it. */
void transport__abandon(void);
/*
 * The in-process launch walk (common/walk_share.h). xc_inproc says where this connection is:
 * OFF (XPU_CUPTI_INPROC=0, or the walk could not be set up: a SHARE is ignored), WAIT (no
 * share mapped for this connection: launches take the marker), ON (launches walk in process).
 */
enum xc_inproc_state { XC_INPROC_OFF = 0, XC_INPROC_WAIT = 1, XC_INPROC_ON = 2 };
extern int xc_inproc;
/*
 * XPU_CUPTI_INPROC=check (xpu-record --launch-walk=check, diagnosis): a launch walked in
 * process takes the marker as well, so that BPF walks the same launch and the trace can
 * compare the two stacks.
 */
extern bool xc_inproc_check;
/* At injection: whether a SHARE from the recorder is to be mapped at all. */
void transport__inproc_allow(bool allow);
/*
 * Right after connecting: waits up to wait_ms for the recorder's SHARE and maps it, so that
 * the first launches already walk in process. Returns at once on any other message (left for
 * the flusher). Whether the walk is on.
 */
bool transport__await_share(unsigned int wait_ms);
/* Takes the lock: sends what the event rings hold as EVENTS messages. */
void transport__send_events(void);
/* Takes the lock: sends the walk's counters (WALK_STATS), while the walk is on. */
void transport__send_walk_stats(void);

/* ---- launch_entry.c ------------------------------------------------------------------------ */
/* The probed marker (callbacks.c), and its hidden alias that the launch entry jumps to. */
void xpu_cupti_api_enter(uint32_t corr_id, uint32_t cbid, uint32_t domain);
/*
 * Instead of the marker while xc_inproc is ON: the launch's stack taken in process and queued
 * for the flusher, or, where that cannot be done exactly, the marker with the same stack.
 */
void xpu_cupti_launch(uint32_t corr_id, uint32_t cbid, uint32_t domain);

/* ---- activity.c --------------------------------------------------------------------------- */
enum xc_graph_mode {
	XC_GRAPH_NODE = 0,	/* per-kernel records with graphId/graphNodeId (default) */
	XC_GRAPH_WHOLE = 1,	/* one GRAPH_TRACE record per graph launch */
};
int activity__start(enum xc_graph_mode mode);
/* Disables every activity kind activity__start() enabled. */
void activity__stop(void);
/* Total CUPTI-dropped records seen so far. */
uint64_t activity__cupti_dropped(void);
/*
 * cuptiActivityFlushAll(); a forced flush also waits (a few seconds at most) until every
 * buffer it handed back is converted and sent.
 */
void activity__flush(bool forced);
/* Waits until the conversion thread has sent every buffer handed to it. */
void activity__drain(void);
/* Forked child: no conversion thread there. */
void activity__atfork_child(void);
/* Whether kernels are timed by hardware events (cuptiActivityEnableHWTrace, Blackwell+). */
bool activity__hw_trace(void);
/*
 * Whether synchronization records come from the synchronizing calls' callbacks (the default)
 * rather than from CUPTI's synchronization activity (XPU_CUPTI_KINDS=cupti-sync): from the
 * environment, so callbacks__subscribe() can ask before activity__start().
 */
bool activity__sync_from_callbacks(void);

/* ---- callbacks.c ---------------------------------------------------------------------------- */
int callbacks__subscribe(void);
/* No more callbacks (the recorder detaches): after it, no launch of the process enters us. */
void callbacks__unsubscribe(void);
/*
 * XPU_CUPTI_API=launches (default): API records only for the calls the launch callbacks take
 * (launches, syncs, copies, memsets, allocations), per API id. Returns how many ids, or -1 when
 * this libcupti cannot choose per API (the caller then records them all).
 */
int callbacks__enable_api_records(void);
/*
 * The process is about to die of a signal: from now on a thread entering a traced API call waits
 * (at most XC_HOLD_MAX_MS) instead of launching, so that nothing new starts between the final
 * flush and the death.
 */
void callbacks__hold_new_calls(void);
/* With the transport's lock held: appends the synchronization records queued so far. */
void callbacks__drain_syncs(void);
/* Kernel/memcpy/memset correlation id as CUPTI tagged it -> the id the marker saw. */
uint32_t callbacks__map_corr(uint32_t corr_id);

/* ---- graph_nodes.c: where each CUDA graph node came from (GPU_GRAPH_NODE records) --------- */
/*
 * Subscribes sub to the graph-node resource callbacks, unless XPU_CUPTI_GRAPH_NODES=0 or this
 * libcupti lacks the node id calls. Whether they are on.
 */
bool graph_nodes__enable(CUpti_SubscriberHandle sub);
/* XPU_CUDA_GRAPHS=replay: the node callbacks stay off. */
void graph_nodes__off(void);
/* Whether the node callbacks are to be on (neither replay mode nor XPU_CUPTI_GRAPH_NODES=0). */
bool graph_nodes__wanted(void);
/* A resource callback of the graph ids; call_corr: the traced API call this thread is in, 0: none. */
void graph_nodes__resource(CUpti_CallbackId cbid, const CUpti_ResourceData *rd, uint32_t call_corr);
/* ENTER of cudaGraphExecUpdate / cuGraphExecUpdate: the exec graph's capture sites end here. */
void graph_nodes__exec_update(const CUpti_CallbackData *cb);
/* With the transport's lock held: appends the records queued so far. */
void graph_nodes__drain(void);

/* ---- api_records.c -------------------------------------------------------------------------- */
/* XPU_CUPTI_API=callbacks: API records from the launch callbacks, none from CUPTI's activity. */
bool api_records__from_callbacks(void);
/* The queue; 0, or -1 (then API records are CUPTI's after all: the caller's choice). */
int api_records__init(void);
/* ENTER of an outermost recorded call on this thread; EXIT of the same call queues it. */
void api_records__begin(uint32_t corr_id, uint32_t cbid, uint32_t domain);
void api_records__end(uint32_t corr_id, int32_t return_code);
/* With the transport's lock held: sends the records queued so far. */
void api_records__drain(void);
void api_records__atfork_child(void);

/* Process-wide state that several files read. */
extern uint32_t xc_pid;

#endif
