// SPDX-License-Identifier: MIT
/*
 * API-enter callbacks: for each launch, graph launch, copy, memset, synchronize, allocation and
 * release call, call the
 * exported marker xpu_cupti_api_enter(); xpu-record's BPF uprobe on it takes the CPU stack with
 * the correlation id in the same program. Only ENTER calls the marker (the prototype also fired
 * on EXIT and counted every kernel twice), and driver calls made by a runtime call are skipped,
 * so there is exactly one marker call per user-visible API call. Once xpu-record has shared its
 * unwind tables, the launch entry (launch_entry.c) takes the stack in process instead, and
 * calls the marker only where it cannot.
 *
 * The kernel (memcpy, memset) record must carry the id the marker saw. The runtime's id is the
 * one we pass; should CUPTI tag the work with the nested driver call's id instead (its memcpy
 * record documents "the driver API record that launched it"), callbacks__map_corr() maps it back
 * through a table filled here at the nested driver ENTER.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inproc_walk.h"
#include "xpu_cupti.h"

/*
 * The probed marker, void xpu_cupti_api_enter(uint32_t corr_id, uint32_t cbid, uint32_t domain),
 * written in assembly so that its first instruction is a 5-byte NOP. Linux 6.18+ optimizes a
 * uprobe on a nop5 into a call to a trampoline and a syscall instead of an int3 trap and a
 * single-step: measured with bench/marker_bench, the cost per hit dropped from 7.1 to 1.x us.
 * Older kernels probe the nop5 the usual way. At the probe the arguments are still in rdi, rsi
 * and rdx, and the return address is at [rsp], as at any function entry. The CFI directives
 * give it an FDE, so that xpu-record's walk steps out of it by its row: without one, every
 * launch's walk took the frame-pointer fallback there (a return-address check, ~1 per launch
 * in cfi_fp_no_fde), which also skipped its caller, whose frame pointer it followed.
 * xc_api_enter, the same address under a hidden name, is what the launch entry
 * (launch_entry.c) jumps to: directly, where the exported name would go through the PLT.
 */
#if defined(__x86_64__)
__asm__(".text\n"
	".globl xpu_cupti_api_enter\n"
	".type xpu_cupti_api_enter, @function\n"
	".globl xc_api_enter\n"
	".hidden xc_api_enter\n"
	".type xc_api_enter, @function\n"
	".p2align 4\n"
	"xpu_cupti_api_enter:\n"
	"xc_api_enter:\n"
	"\t.cfi_startproc\n"
	"\t.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size xpu_cupti_api_enter, .-xpu_cupti_api_enter\n"
	".size xc_api_enter, .-xc_api_enter\n");
#else
__attribute__((noinline, used, visibility("default"))) void
xpu_cupti_api_enter(uint32_t corr_id, uint32_t cbid, uint32_t domain)
{
	/* the uprobe reads the arguments from registers: keep the call and its arguments */
	__asm__ volatile("" : : "r"(corr_id), "r"(cbid), "r"(domain) : "memory");
}
#endif

/* Outermost runtime call of this thread, and how deep we are in runtime calls. */
static __thread int rt_depth;
/*
 * A collection ended by STOP unsubscribes between some thread's API enter and its exit, whose
 * callback then never comes: that thread's depth would stay above 0 into the next collection
 * (a later xpu-record -p) and no launch of it would call the marker. Each subscribe starts a
 * new epoch; a thread's first callback in it starts from depth 0.
 */
static unsigned int epoch;
static __thread unsigned int rt_epoch;
/* XPU_CUPTI_NO_MARKER=1 (diagnosis only): callbacks run but the probed marker is not called */
static bool no_marker;
static __thread uint32_t rt_corr;
/*
 * The traced call (one that takes a launch stack) this thread is in, 0 outside: a graph node
 * made during it (graph_nodes.c) gets its id, so its capture stack is that call's launch stack.
 */
static __thread uint32_t call_corr;
/* set by callbacks__hold_new_calls() once a fatal signal's final flush begins */
static int hold_calls;

/*
 * A fatal signal's flush runs in our flusher thread while the target's threads go on calling
 * CUDA. Unsubscribing and disabling activity are two steps; launches in between left a kernel
 * without its launch stack (or the other way round), and the flush chased new work. A thread
 * that enters an API call from then on sleeps here until the re-raised signal ends the process.
 * Not forever: should the flush need a lock that this thread holds inside the CUDA call (CUPTI
 * runs callbacks from within the API), the wait ends after XC_HOLD_MAX_MS and the call goes on
 * unmarked, so a deadlock costs a delay, never a hang.
 */
#define XC_HOLD_MAX_MS 2000

void callbacks__hold_new_calls(void)
{
	__atomic_store_n(&hold_calls, 1, __ATOMIC_SEQ_CST);
}

/* false at once while no fatal signal is being flushed; else true after the wait */
static bool holding(void)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	if (!__atomic_load_n(&hold_calls, __ATOMIC_SEQ_CST))
		return false;
	for (i = 0; i < XC_HOLD_MAX_MS; i++)
		nanosleep(&ms, NULL);
	return true;
}

/* driver corr id -> runtime corr id, direct-mapped; a slot holds (driver << 32 | runtime). */
#define CORR_MAP_BITS 18
static uint64_t *corr_map;

static void corr_map_put(uint32_t driver_corr, uint32_t runtime_corr)
{
	uint64_t *slot;

	if (!corr_map || driver_corr == runtime_corr)
		return;
	slot = &corr_map[driver_corr & ((1u << CORR_MAP_BITS) - 1)];
	__atomic_store_n(slot, (uint64_t)driver_corr << 32 | runtime_corr, __ATOMIC_RELEASE);
}

uint32_t callbacks__map_corr(uint32_t corr_id)
{
	uint64_t v;

	if (!corr_map || !corr_id)
		return corr_id;
	v = __atomic_load_n(&corr_map[corr_id & ((1u << CORR_MAP_BITS) - 1)], __ATOMIC_ACQUIRE);
	if ((uint32_t)(v >> 32) == corr_id && (uint32_t)v)
		return (uint32_t)v;
	return corr_id;
}

/* headroom over our headers' sizes for a newer libcupti; unknown ids just fail the lookup */
#define RUNTIME_MAX_CBID (CUPTI_RUNTIME_TRACE_CBID_SIZE + 256)
#define DRIVER_MAX_CBID (CUPTI_DRIVER_TRACE_CBID_SIZE + 256)

/*
 * Per callback id: whether its ENTER calls the marker (a launch, copy, memset, sync or
 * allocation: what the launch stacks are taken for), and which synchronization it is.
 */
enum { CB_MARKER = 1u << 0, CB_SYNC_PTSZ = 1u << 1, CB_GRAPH_UPDATE = 1u << 2 };
struct cb_info {
	uint8_t flags;
	uint8_t sync;		/* enum xpu_sync_kind, XPU_SYNC_UNKNOWN: not a synchronization */
};
static struct cb_info rt_info[RUNTIME_MAX_CBID], drv_info[DRIVER_MAX_CBID];
/* the graph node callbacks are on (graph_nodes.c): cudaGraphExecUpdate is watched too */
static bool graph_nodes;

/*
 * Synchronization records without CUPTI's synchronization activity: that kind makes CUPTI
 * trace every API call of the process to find the few that synchronize (on the PyTorch loop of
 * bench/gpu/ladder.py it cost more than all the other kinds together), while the callbacks of
 * the synchronizing calls alone cost nothing to the others. The record is the call's own time
 * on the calling thread (CUPTI's is the same wait, taken inside the driver), with the id the
 * marker saw, the current context and, for a stream, CUPTI's id of it. Calls that fail are not
 * recorded, as CUPTI records none by default. The records wait in a queue of their own until
 * the conversion thread or the flusher sends them: a synchronizing thread never waits for the
 * transport's lock. XPU_CUPTI_KINDS=sync (activity__sync_from_callbacks() false) is CUPTI's way.
 */
static bool sync_cb;
#define SYNC_QUEUE 16384
static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xpu_rec_gpu_sync sync_q[SYNC_QUEUE];
static unsigned int sync_n;
static __thread struct xpu_rec_gpu_sync sync_open;	/* start_ns 0: none open */
static __thread CUcontext sync_ctx;
static __thread uint32_t sync_cbid;
static __thread CUpti_CallbackDomain sync_domain;

void callbacks__drain_syncs(void)
{
	static struct xpu_rec_gpu_sync out[256];	/* under the transport's lock */
	unsigned int n, i;

	do {
		pthread_mutex_lock(&sync_lock);
		n = sync_n < 256 ? sync_n : 256;
		sync_n -= n;
		memcpy(out, sync_q + sync_n, n * sizeof(out[0]));
		pthread_mutex_unlock(&sync_lock);
		for (i = 0; i < n; i++)
			transport__append(XPU_REC_GPU_SYNC, &out[i], sizeof(out[i]));
	} while (n == 256);
}

static void sync_begin(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		       const CUpti_CallbackData *cb, const struct cb_info *info)
{
	uint32_t id;

	sync_open = (struct xpu_rec_gpu_sync){
		.start_ns = xc_mono_ns(),
		.pid = xc_pid,
		.corr_id = cb->correlationId,
		.kind = info->sync,
		.stream = 0xffffffffu,
	};
	sync_ctx = cb->context;
	sync_cbid = cbid;
	sync_domain = domain;
	if ((info->sync == XPU_SYNC_STREAM || info->sync == XPU_SYNC_STREAM_WAIT_EVENT) &&
	    cb->functionParams && cupti.cuptiGetStreamIdEx &&
	    /* each of these calls takes the stream first, in both APIs */
	    cupti.cuptiGetStreamIdEx(cb->context, *(CUstream const *)cb->functionParams,
				     !!(info->flags & CB_SYNC_PTSZ), &id) == CUPTI_SUCCESS)
		sync_open.stream = id;
}

static void sync_end(const CUpti_CallbackData *cb)
{
	struct xpu_rec_gpu_sync r = sync_open;
	CUcontext ctx = sync_ctx ? sync_ctx : cb->context;
	uint32_t id;
	bool full;

	sync_open.start_ns = 0;
	/* cudaError_t and CUresult alike: 0 is success */
	if (cb->functionReturnValue && *(const int *)cb->functionReturnValue)
		return;
	r.end_ns = xc_mono_ns();
	if (ctx && cupti.cuptiGetContextId && cupti.cuptiGetContextId(ctx, &id) == CUPTI_SUCCESS)
		r.context = id;
	pthread_mutex_lock(&sync_lock);
	full = sync_n == SYNC_QUEUE;
	if (!full)
		sync_q[sync_n++] = r;
	pthread_mutex_unlock(&sync_lock);
	if (full) {
		/* thousands of syncs within one flush period: send them from here, this once */
		transport__lock();
		callbacks__drain_syncs();
		transport__append(XPU_REC_GPU_SYNC, &r, sizeof(r));
		transport__unlock();
	}
}

/*
 * A launch's stack: walked in process once the recorder's tables are mapped, else (and
 * wherever the walk cannot finish) by BPF at the marker. Inlined, so that the marker is called
 * from api_cb itself on both paths and BPF sees the same stack either way.
 */
static inline __attribute__((always_inline)) void launch_stack(uint32_t corr_id, uint32_t cbid,
							       uint32_t domain)
{
	int st = __atomic_load_n(&xc_inproc, __ATOMIC_ACQUIRE);

	if (st == XC_INPROC_ON && inproc_walk__have_share()) {
		xpu_cupti_launch(corr_id, cbid, domain);
		return;
	}
	if (st != XC_INPROC_OFF)
		inproc_walk__count(XPU_INPROC_FB_NO_SHARE, 1);
	xpu_cupti_api_enter(corr_id, cbid, domain);
}

/* XPU_CUPTI_API=callbacks: the API records are made here (api_records.c), not by CUPTI */
static bool api_cb_records;

/* cudaError_t and CUresult alike: 0 is success */
static inline int32_t return_code(const CUpti_CallbackData *cb)
{
	return cb->functionReturnValue ? *(const int32_t *)cb->functionReturnValue : 0;
}

static void CUPTIAPI api_cb(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			    const void *cbdata)
{
	const CUpti_CallbackData *cb = cbdata;
	unsigned int now = __atomic_load_n(&epoch, __ATOMIC_RELAXED);

	if (rt_epoch != now) {
		rt_epoch = now;
		rt_depth = 0;
		sync_open.start_ns = 0;
	}
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		const struct cb_info *info = cbid < RUNTIME_MAX_CBID ? &rt_info[cbid] : NULL;

		if (cb->callbackSite == CUPTI_API_ENTER) {
			if (rt_depth++ == 0) {
				rt_corr = cb->correlationId;
				call_corr = info && (info->flags & CB_MARKER) ? cb->correlationId : 0;
				if (api_cb_records && info && (info->flags & CB_MARKER))
					api_records__begin(cb->correlationId, cbid, XPU_API_RUNTIME);
				if (info && (info->flags & CB_GRAPH_UPDATE))
					graph_nodes__exec_update(cb);
				if (info && (info->flags & CB_MARKER) && !no_marker && !holding())
					launch_stack(cb->correlationId, cbid, XPU_API_RUNTIME);
				if (info && info->sync && sync_cb)
					sync_begin(domain, cbid, cb, info);
			}
		} else if (rt_depth > 0) {
			if (rt_depth == 1)
				call_corr = 0;
			if (--rt_depth == 0 && api_cb_records)
				api_records__end(cb->correlationId, return_code(cb));
			if (rt_depth == 0 && sync_open.start_ns && sync_cbid == cbid &&
			    sync_domain == domain)
				sync_end(cb);
		}
	} else if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		/* only the graph node ids are enabled in this domain (graph_nodes__enable) */
		graph_nodes__resource(cbid, cbdata, call_corr);
	} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		const struct cb_info *info = cbid < DRIVER_MAX_CBID ? &drv_info[cbid] : NULL;

		if (cb->callbackSite != CUPTI_API_ENTER) {
			if (rt_depth == 0)
				call_corr = 0;
			if (rt_depth == 0 && api_cb_records)
				api_records__end(cb->correlationId, return_code(cb));
			if (rt_depth == 0 && sync_open.start_ns && sync_cbid == cbid &&
			    sync_domain == domain)
				sync_end(cb);
			return;
		}
		if (rt_depth > 0) {
			corr_map_put(cb->correlationId, rt_corr);
			return;
		}
		call_corr = info && (info->flags & CB_MARKER) ? cb->correlationId : 0;
		if (api_cb_records && info && (info->flags & CB_MARKER))
			api_records__begin(cb->correlationId, cbid, XPU_API_DRIVER);
		if (info && (info->flags & CB_GRAPH_UPDATE))
			graph_nodes__exec_update(cb);
		if (info && (info->flags & CB_MARKER) && !no_marker && !holding())
			launch_stack(cb->correlationId, cbid, XPU_API_DRIVER);
		if (info && info->sync && sync_cb)
			sync_begin(domain, cbid, cb, info);
	}
}

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": the version suffix is not part of the API. */
static size_t base_len(const char *name)
{
	const char *v = strrchr(name, '_');
	size_t n = strlen(name);

	if (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9' && strspn(v + 2, "0123456789") == strlen(v + 2))
		return v - name;
	return n;
}

static bool name_is(const char *name, size_t len, const char *want)
{
	return strlen(want) == len && !strncmp(name, want, len);
}

static bool name_has_prefix(const char *name, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !strncmp(name, prefix, n);
}

/*
 * Allocation and release calls: their GPU_MEMORY records join the stack the marker takes, as a
 * kernel joins its launch's (PyTorch's caching allocator calls cudaMalloc rarely, so this
 * costs little). Prefixes: cudaMalloc covers Async, Host, Managed, Pitch, 3D, Array...
 */
static const char *const runtime_memory[] = {
	"cudaMalloc", "cudaHostAlloc", "cudaFree", NULL,
};
static const char *const driver_memory[] = {
	"cuMemAlloc", "cuMemHostAlloc", "cuMemFree", "cuMemCreate", "cuMemRelease", "cuMemMap",
	"cuMemUnmap", NULL,
};

static bool memory_wanted(const char *n, size_t len, const char *const *prefixes)
{
	if (getenv("XPU_CUPTI_MEMORY") && !strcmp(getenv("XPU_CUPTI_MEMORY"), "0"))
		return false;
	for (; *prefixes; prefixes++)
		if (name_has_prefix(n, len, *prefixes))
			return true;
	return false;
}

/*
 * A call that adds a node to a graph (cudaGraphAddKernelNode, cudaGraphAddMemcpyNode1D,
 * cudaGraphAddNode, ...: the prefix and "Node" in the name; not cudaGraphAddDependencies):
 * its launch stack is the capture stack of the node it makes (graph_nodes.c). Captured
 * launches, copies and memsets are wanted already.
 */
static bool graph_node_call(const char *n, size_t len, const char *prefix)
{
	size_t i;

	/* without the node callbacks (off, or an old libcupti) their stacks would join nothing */
	if (!graph_nodes || !name_has_prefix(n, len, prefix))
		return false;
	for (i = strlen(prefix); i + 4 <= len; i++)
		if (!strncmp(n + i, "Node", 4))
			return true;
	return false;
}

/* cudaGraphExecUpdate, cuGraphExecUpdate: the exec graph's nodes may now run other work */
static bool graph_update_call(const char *n, size_t len)
{
	return name_is(n, len, "cudaGraphExecUpdate") || name_is(n, len, "cuGraphExecUpdate");
}

static bool runtime_wanted(const char *n, size_t len)
{
	static const char *const exact[] = {
		"cudaLaunchKernel", "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC",
		"cudaLaunchKernelExC_ptsz", "cudaLaunchCooperativeKernel",
		"cudaLaunchCooperativeKernel_ptsz", "cudaGraphLaunch", "cudaGraphLaunch_ptsz",
		"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaStreamSynchronize_ptsz",
		"cudaEventSynchronize",
	};
	size_t i;

	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (name_is(n, len, exact[i]))
			return true;
	return name_has_prefix(n, len, "cudaMemcpy") || name_has_prefix(n, len, "cudaMemset") ||
	       graph_node_call(n, len, "cudaGraphAdd") || memory_wanted(n, len, runtime_memory);
}

/* Which synchronization a call is, by name (the version suffix cut); XPU_SYNC_UNKNOWN: none. */
static uint8_t sync_kind_of(const char *n, size_t len, bool *ptsz)
{
	static const struct {
		const char *name;
		uint8_t kind;
	} syncs[] = {
		{ "cudaDeviceSynchronize", XPU_SYNC_CONTEXT }, { "cudaThreadSynchronize", XPU_SYNC_CONTEXT },
		{ "cudaStreamSynchronize", XPU_SYNC_STREAM }, { "cudaEventSynchronize", XPU_SYNC_EVENT },
		{ "cudaStreamWaitEvent", XPU_SYNC_STREAM_WAIT_EVENT },
		{ "cuCtxSynchronize", XPU_SYNC_CONTEXT }, { "cuStreamSynchronize", XPU_SYNC_STREAM },
		{ "cuEventSynchronize", XPU_SYNC_EVENT }, { "cuStreamWaitEvent", XPU_SYNC_STREAM_WAIT_EVENT },
	};
	size_t i, k;

	*ptsz = len > 5 && !strncmp(n + len - 5, "_ptsz", 5);
	k = *ptsz ? len - 5 : len;
	for (i = 0; i < sizeof(syncs) / sizeof(syncs[0]); i++)
		if (name_is(n, k, syncs[i].name))
			return syncs[i].kind;
	return XPU_SYNC_UNKNOWN;
}

static bool driver_wanted(const char *n, size_t len)
{
	static const char *const exact[] = {
		"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz",
		"cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz", "cuGraphLaunch",
		"cuGraphLaunch_ptsz", "cuCtxSynchronize", "cuStreamSynchronize",
		"cuStreamSynchronize_ptsz", "cuEventSynchronize",
	};
	size_t i;

	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (name_is(n, len, exact[i]))
			return true;
	return name_has_prefix(n, len, "cuMemcpy") || name_has_prefix(n, len, "cuMemset") ||
	       graph_node_call(n, len, "cuGraphAdd") || memory_wanted(n, len, driver_memory);
}

/*
 * The next callback id of one domain after cbid whose API is wanted, with its name; 0 after the
 * last. Chosen by name so that the ids of whichever libcupti the process has are used, not
 * those of our headers.
 */
static uint32_t next_wanted(CUpti_CallbackDomain domain, uint32_t cbid, uint32_t max_cbid,
			    bool (*wanted)(const char *, size_t), const char **name)
{
	while (++cbid < max_cbid) {
		*name = NULL;
		if (cupti.cuptiGetCallbackName(domain, cbid, name) == CUPTI_SUCCESS && *name &&
		    wanted(*name, base_len(*name)))
			return cbid;
	}
	return 0;
}

/*
 * Enables the callbacks of one domain's ids that take the marker (markers: launch stacks on)
 * or make a synchronization record (sync_cb); how many take the marker.
 */
static int enable_domain(CUpti_SubscriberHandle sub, CUpti_CallbackDomain domain, uint32_t max_cbid,
			 bool (*wanted)(const char *, size_t), struct cb_info *info, bool markers)
{
	uint32_t cbid;
	int n = 0;

	for (cbid = 1; cbid < max_cbid; cbid++) {
		const char *name = NULL;
		struct cb_info in = { 0 };
		bool ptsz;
		CUptiResult r;
		size_t len;

		if (cupti.cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
			continue;
		len = base_len(name);
		if (markers && wanted(name, len))
			in.flags |= CB_MARKER;
		if (markers && graph_nodes && graph_update_call(name, len))
			in.flags |= CB_GRAPH_UPDATE;
		if (sync_cb && (in.sync = sync_kind_of(name, len, &ptsz)) && ptsz)
			in.flags |= CB_SYNC_PTSZ;
		if (!in.flags && !in.sync)
			continue;
		r = cupti.cuptiEnableCallback(1, sub, domain, cbid);
		if (r != CUPTI_SUCCESS) {
			xc_err_once("cannot enable the callback for %s: %s", name,
				    cupti_loader__strerror(r));
			continue;
		}
		info[cbid] = in;
		n += !!(in.flags & CB_MARKER);
	}
	return n;
}

/* Turns on the API records of one domain's wanted ids; how many. */
static int enable_api_records(CUpti_CallbackDomain domain, uint32_t max_cbid,
			      bool (*wanted)(const char *, size_t),
			      CUptiResult (*enable)(CUpti_CallbackId, uint8_t))
{
	const char *name;
	uint32_t cbid;
	int n = 0;

	for (cbid = next_wanted(domain, 0, max_cbid, wanted, &name); cbid;
	     cbid = next_wanted(domain, cbid, max_cbid, wanted, &name))
		if (enable(cbid, 1) == CUPTI_SUCCESS)
			n++;
	return n;
}

int callbacks__enable_api_records(void)
{
	int n;

	if (!cupti.cuptiActivityEnableRuntimeApi || !cupti.cuptiActivityEnableDriverApi)
		return -1;
	n = enable_api_records(CUPTI_CB_DOMAIN_RUNTIME_API, RUNTIME_MAX_CBID, runtime_wanted,
			       cupti.cuptiActivityEnableRuntimeApi);
	n += enable_api_records(CUPTI_CB_DOMAIN_DRIVER_API, DRIVER_MAX_CBID, driver_wanted,
				cupti.cuptiActivityEnableDriverApi);
	xc_info("API records for %d runtime and driver API ids", n);
	return n;
}

static CUpti_SubscriberHandle subscriber;

void callbacks__unsubscribe(void)
{
	if (subscriber && cupti.cuptiUnsubscribe)
		cupti.cuptiUnsubscribe(subscriber);
	subscriber = NULL;
}

int callbacks__subscribe(void)
{
	CUpti_SubscriberHandle sub;
	char old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = "";
	CUptiResult r;
	bool markers;
	int nrt, ndrv;

	/*
	 * Without launch stacks the subscription tells whether another tool owns CUPTI and takes
	 * the synchronizations; XPU_CUPTI_SUBSCRIBE=0 skips it (to measure what a subscriber
	 * costs: no synchronization records then, unless CUPTI's activity takes them).
	 */
	if (getenv("XPU_CUPTI_LAUNCH_STACKS") && !strcmp(getenv("XPU_CUPTI_LAUNCH_STACKS"), "0") &&
	    getenv("XPU_CUPTI_SUBSCRIBE") && !strcmp(getenv("XPU_CUPTI_SUBSCRIBE"), "0"))
		return 0;
	if (cupti.cuptiSubscribe_v2) {
		CUpti_SubscriberParams p = {
			.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
			.subscriberName = "xpu-perf",
			.oldSubscriberName = old,
			.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN,
		};

		r = cupti.cuptiSubscribe_v2(&sub, api_cb, NULL, &p);
	} else {
		r = cupti.cuptiSubscribe(&sub, api_cb, NULL);
	}
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		xc_log("another CUPTI subscriber is active (%s): no GPU data for pid %d; CPU data is still recorded",
		       old[0] ? old : "Nsight/Kineto?", (int)xc_pid);
		return -EBUSY;
	}
	if (r != CUPTI_SUCCESS) {
		xc_log("cuptiSubscribe failed: %s: no GPU data for pid %d", cupti_loader__strerror(r),
		       (int)xc_pid);
		return -EIO;
	}
	subscriber = sub;
	__atomic_add_fetch(&epoch, 1, __ATOMIC_RELAXED);
	/* XPU_CUPTI_LAUNCH_STACKS=0: no launch callbacks, so no marker and no launch stacks */
	markers = !getenv("XPU_CUPTI_LAUNCH_STACKS") || strcmp(getenv("XPU_CUPTI_LAUNCH_STACKS"), "0");
	sync_cb = activity__sync_from_callbacks();
	no_marker = getenv("XPU_CUPTI_NO_MARKER") && !strcmp(getenv("XPU_CUPTI_NO_MARKER"), "1");
	api_cb_records = markers && api_records__from_callbacks() && !api_records__init();
	/* 2 MiB, touched only where ids land; a failure only loses the nested-driver remap */
	if (markers && !corr_map)	/* kept across a detach and a later attach */
		corr_map = calloc(1u << CORR_MAP_BITS, sizeof(*corr_map));
	memset(rt_info, 0, sizeof(rt_info));
	memset(drv_info, 0, sizeof(drv_info));
	/* a node's capture stack is its call's launch stack: nothing to join without markers */
	graph_nodes = markers && graph_nodes__enable(sub);
	/*
	 * XPU_CUPTI_RUNTIME_CALLBACKS=0 (diagnosis only, issue 38): no runtime-API callbacks, so
	 * a runtime launch costs CUPTI the two driver callbacks nested in it; its stack is then
	 * the driver call's, under a correlation id its kernel does not carry (not joined).
	 */
	if (getenv("XPU_CUPTI_RUNTIME_CALLBACKS") && !strcmp(getenv("XPU_CUPTI_RUNTIME_CALLBACKS"), "0"))
		nrt = 0;
	else
		nrt = enable_domain(sub, CUPTI_CB_DOMAIN_RUNTIME_API, RUNTIME_MAX_CBID,
				    runtime_wanted, rt_info, markers);
	/*
	 * XPU_CUPTI_DRIVER_CALLBACKS=0 (diagnosis only, issue 38): no driver-API callbacks, so a
	 * runtime launch costs two callbacks, not four; launches made through the driver API
	 * (Triton, JAX) then take no stack.
	 */
	if (getenv("XPU_CUPTI_DRIVER_CALLBACKS") && !strcmp(getenv("XPU_CUPTI_DRIVER_CALLBACKS"), "0"))
		ndrv = 0;
	else
		ndrv = enable_domain(sub, CUPTI_CB_DOMAIN_DRIVER_API, DRIVER_MAX_CBID, driver_wanted,
				     drv_info, markers);
	xc_info("launch callbacks: %d runtime, %d driver API ids; synchronization records from %s; "
		"graph nodes %s", nrt, ndrv, sync_cb ? "callbacks" : "CUPTI's activity",
		graph_nodes ? "traced" : "not traced");
	if (markers && !nrt && !ndrv)
		xc_err_once("no launch callback could be enabled: no launch stacks for pid %d",
			    (int)xc_pid);
	return 0;
}
