// SPDX-License-Identifier: MIT
/*
 * CUPTI activity records -> our records (common/xpu_format.h). No CUPTI struct leaves this file:
 * the trace must stay readable when CUPTI changes its layouts.
 *
 * We read the current record versions of the CUDA 13 headers, but a process may bring an older
 * libcupti (a PyTorch cu12 wheel), which hands out the previous version of each record. Every
 * field read here sits at the same offset in both versions (checked below), and no field that
 * only the newer version has is read.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xpu_cupti.h"

#define SAME_OFFSET(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f), #a "." #f)
SAME_OFFSET(CUpti_ActivityKernel10, CUpti_ActivityKernel9, registersPerThread);
SAME_OFFSET(CUpti_ActivityKernel10, CUpti_ActivityKernel9, start);
SAME_OFFSET(CUpti_ActivityKernel10, CUpti_ActivityKernel9, end);
SAME_OFFSET(CUpti_ActivityKernel10, CUpti_ActivityKernel9, deviceId);
SAME_OFFSET(CUpti_ActivityKernel10, CUpti_ActivityKernel9, contextId);
SAME_OFFSET(CUpti_ActivityKernel10, CUpti_ActivityKernel9, streamId);
SAME_OFFSET(CUpti_ActivityKernel10, CUpti_ActivityKernel9, gridX);
SAME_OFFSET(CUpti_ActivityKernel10, CUpti_ActivityKernel9, blockZ);
SAME_OFFSET(CUpti_ActivityKernel10, CUpti_ActivityKernel9, staticSharedMemory);
SAME_OFFSET(CUpti_ActivityKernel10, CUpti_ActivityKernel9, dynamicSharedMemory);
SAME_OFFSET(CUpti_ActivityKernel10, CUpti_ActivityKernel9, correlationId);
SAME_OFFSET(CUpti_ActivityKernel10, CUpti_ActivityKernel9, name);
SAME_OFFSET(CUpti_ActivityKernel10, CUpti_ActivityKernel9, graphNodeId);
SAME_OFFSET(CUpti_ActivityKernel10, CUpti_ActivityKernel9, graphId);
SAME_OFFSET(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy5, bytes);
SAME_OFFSET(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy5, start);
SAME_OFFSET(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy5, correlationId);
SAME_OFFSET(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy5, runtimeCorrelationId);
SAME_OFFSET(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy5, graphId);
SAME_OFFSET(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy5, graphNodeId);
SAME_OFFSET(CUpti_ActivitySynchronization2, CUpti_ActivitySynchronization, cudaEventId);
SAME_OFFSET(CUpti_ActivityMarkerData2, CUpti_ActivityMarkerData, color);
SAME_OFFSET(CUpti_ActivityOverhead3, CUpti_ActivityOverhead2, correlationId);
SAME_OFFSET(CUpti_ActivityGraphTrace2, CUpti_ActivityGraphTrace, streamId);
SAME_OFFSET(CUpti_ActivityMemory4, CUpti_ActivityMemory3, memoryOperationType);
SAME_OFFSET(CUpti_ActivityMemory4, CUpti_ActivityMemory3, memoryKind);
SAME_OFFSET(CUpti_ActivityMemory4, CUpti_ActivityMemory3, correlationId);
SAME_OFFSET(CUpti_ActivityMemory4, CUpti_ActivityMemory3, address);
SAME_OFFSET(CUpti_ActivityMemory4, CUpti_ActivityMemory3, bytes);
SAME_OFFSET(CUpti_ActivityMemory4, CUpti_ActivityMemory3, timestamp);
SAME_OFFSET(CUpti_ActivityMemory4, CUpti_ActivityMemory3, deviceId);
SAME_OFFSET(CUpti_ActivityMemory4, CUpti_ActivityMemory3, contextId);
SAME_OFFSET(CUpti_ActivityMemory4, CUpti_ActivityMemory3, streamId);
SAME_OFFSET(CUpti_ActivityMemory4, CUpti_ActivityMemory3, isAsync);

/* Our enums take CUPTI's values, so conversion is a range check. */
_Static_assert((int)XPU_MEMCPY_PTOP == (int)CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, "memcpy kinds");
_Static_assert((int)XPU_MEMCPY_HTOH == (int)CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, "memcpy kinds");
_Static_assert((int)XPU_MEM_MANAGED_STATIC == (int)CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC, "memory kinds");
_Static_assert((int)XPU_SYNC_CONTEXT == (int)CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, "sync");
_Static_assert((int)XPU_SYNC_STREAM_WAIT_EVENT == (int)CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT,
	       "sync");

static enum xc_graph_mode graph_mode;
static uint64_t cupti_dropped;

/* ---- buffers: a small pool, so steady state allocates nothing ------------------------------- */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static void *pool_free;		/* free list linked through the first word of each buffer */
static unsigned pool_allocated;
static size_t buf_bytes = 8u << 20;
static unsigned buf_max = 64;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	void *b;

	pthread_mutex_lock(&pool_lock);
	b = pool_free;
	if (b) {
		pool_free = *(void **)b;
	} else if (pool_allocated < buf_max) {
		b = aligned_alloc(8, buf_bytes);
		if (b)
			pool_allocated++;
	}
	pthread_mutex_unlock(&pool_lock);
	if (!b)
		xc_err_once("all %u activity buffers in use: CUPTI will drop records", buf_max);
	*buffer = b;
	*size = b ? buf_bytes : 0;
	*max_records = 0;
}

static void buffer_release(uint8_t *b)
{
	pthread_mutex_lock(&pool_lock);
	*(void **)b = pool_free;
	pool_free = b;
	pthread_mutex_unlock(&pool_lock);
}

/* ---- NVTX: CUPTI reports range start and end separately; we pair them by id ----------------- */

struct nvtx_open {
	uint32_t id;			/* 0: free slot */
	uint32_t tid;
	uint64_t start_ns;
	uint32_t name_str;
	uint32_t domain_str;
	uint32_t color_argb;
};
#define NVTX_SLOTS 4096
static struct nvtx_open nvtx_open[NVTX_SLOTS];

static struct nvtx_open *nvtx_find(uint32_t id, bool create)
{
	uint32_t i, h = (id * 2654435761u) & (NVTX_SLOTS - 1);

	for (i = 0; i < NVTX_SLOTS; i++) {
		struct nvtx_open *o = &nvtx_open[(h + i) & (NVTX_SLOTS - 1)];

		if (o->id == id)
			return o;
		if (!o->id) {
			if (!create)
				return NULL;
			o->id = id;
			return o;
		}
	}
	return NULL;
}

static void nvtx_remove(struct nvtx_open *o)
{
	/* backward-shift deletion keeps the linear probe chains intact */
	uint32_t i = o - nvtx_open, j = i;

	for (;;) {
		uint32_t k;

		j = (j + 1) & (NVTX_SLOTS - 1);
		if (!nvtx_open[j].id)
			break;
		k = (nvtx_open[j].id * 2654435761u) & (NVTX_SLOTS - 1);
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			nvtx_open[i] = nvtx_open[j];
			i = j;
		}
	}
	nvtx_open[i].id = 0;
}

static uint32_t thread_of(CUpti_ActivityObjectKind kind, const CUpti_ActivityObjectKindId *id)
{
	return kind == CUPTI_ACTIVITY_OBJECT_THREAD ? id->pt.threadId : 0;
}

static void convert_marker(const CUpti_ActivityMarker2 *m)
{
	struct xpu_rec_nvtx n = { .pid = xc_pid };
	struct nvtx_open *o;

	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
		n.start_ns = n.end_ns = xc_ts(m->timestamp);
		n.tid = thread_of(m->objectKind, &m->objectId);
		n.name_str = transport__string(m->name);
		n.domain_str = transport__string(m->domain);
		n.kind = XPU_NVTX_MARKER;
		transport__append(XPU_REC_NVTX, &n, sizeof(n));
	} else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
		o = nvtx_find(m->id, true);
		if (!o) {
			xc_err_once("more than %d NVTX ranges open at once: dropping some", NVTX_SLOTS);
			return;
		}
		o->tid = thread_of(m->objectKind, &m->objectId);
		o->start_ns = xc_ts(m->timestamp);
		o->name_str = transport__string(m->name);
		o->domain_str = transport__string(m->domain);
		o->color_argb = 0;
	} else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
		o = nvtx_find(m->id, false);
		if (!o)
			return;
		n.start_ns = o->start_ns;
		n.end_ns = xc_ts(m->timestamp);
		n.tid = o->tid;
		n.name_str = o->name_str;
		n.domain_str = o->domain_str;
		n.kind = XPU_NVTX_RANGE;
		n.color_argb = o->color_argb;
		nvtx_remove(o);
		transport__append(XPU_REC_NVTX, &n, sizeof(n));
	}
}

static void convert_marker_data(const CUpti_ActivityMarkerData2 *d)
{
	struct nvtx_open *o = nvtx_find(d->id, false);

	/* color of an open range; instantaneous markers were sent already and stay uncolored */
	if (o && (d->flags & CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB))
		o->color_argb = d->color;
}

/* ---- the other kinds ------------------------------------------------------------------------ */

static void convert_kernel(const CUpti_ActivityKernel10 *k)
{
	struct xpu_rec_gpu_kernel r = {
		.start_ns = xc_ts(k->start),
		.end_ns = xc_ts(k->end),
		.pid = xc_pid,
		.corr_id = callbacks__map_corr(k->correlationId),
		.device = k->deviceId,
		.context = k->contextId,
		.stream = k->streamId,
		.grid_x = (uint32_t)k->gridX,
		.grid_y = (uint32_t)k->gridY,
		.grid_z = (uint32_t)k->gridZ,
		.block_x = (uint32_t)k->blockX,
		.block_y = (uint32_t)k->blockY,
		.block_z = (uint32_t)k->blockZ,
		.static_smem_bytes = (uint32_t)k->staticSharedMemory,
		.dynamic_smem_bytes = (uint32_t)k->dynamicSharedMemory,
		.registers_per_thread = k->registersPerThread,
		.flags = k->graphId ? XPU_GPU_IN_GRAPH : 0,
		.graph_id = k->graphId,
		.graph_node_id = k->graphNodeId,
	};

	r.name_str = transport__string(k->name);
	transport__append(XPU_REC_GPU_KERNEL, &r, sizeof(r));
}

/* XPU_CUDA_GRAPHS=graph: one kernel-like record per graph launch, named "cudaGraph#<id>". */
static void convert_graph(const CUpti_ActivityGraphTrace2 *g)
{
	struct xpu_rec_gpu_kernel r = {
		.start_ns = xc_ts(g->start),
		.end_ns = xc_ts(g->end),
		.pid = xc_pid,
		.corr_id = callbacks__map_corr(g->correlationId),
		.device = g->deviceId,
		.context = g->contextId,
		.stream = g->streamId,
		.flags = XPU_GPU_IN_GRAPH,
		.graph_id = g->graphId,
	};
	char name[48];

	snprintf(name, sizeof(name), "cudaGraph#%u", g->graphId);
	r.name_str = transport__string(name);
	transport__append(XPU_REC_GPU_KERNEL, &r, sizeof(r));
}

static uint8_t mem_kind(uint32_t k)
{
	return k <= XPU_MEM_MANAGED_STATIC ? k : XPU_MEM_UNKNOWN;
}

static void convert_memcpy(const CUpti_ActivityMemcpy6 *m)
{
	/* the runtime's id when a runtime call made the copy: that is the id the marker saw */
	uint32_t corr = m->runtimeCorrelationId ? m->runtimeCorrelationId : m->correlationId;
	struct xpu_rec_gpu_memcpy r = {
		.start_ns = xc_ts(m->start),
		.end_ns = xc_ts(m->end),
		.bytes = m->bytes,
		.pid = xc_pid,
		.corr_id = callbacks__map_corr(corr),
		.device = m->deviceId,
		.context = m->contextId,
		.stream = m->streamId,
		.copy_kind = m->copyKind <= XPU_MEMCPY_PTOP ? m->copyKind : XPU_MEMCPY_UNKNOWN,
		.src_kind = mem_kind(m->srcKind),
		.dst_kind = mem_kind(m->dstKind),
		.src_device = m->deviceId,
		.dst_device = m->deviceId,
		.flags = m->graphId ? XPU_GPU_IN_GRAPH : 0,
		.graph_id = m->graphId,
		.graph_node_id = m->graphNodeId,
	};

	transport__append(XPU_REC_GPU_MEMCPY, &r, sizeof(r));
}

static void convert_peer(const CUpti_ActivityMemcpyPtoP4 *m)
{
	struct xpu_rec_gpu_memcpy r = {
		.start_ns = xc_ts(m->start),
		.end_ns = xc_ts(m->end),
		.bytes = m->bytes,
		.pid = xc_pid,
		.corr_id = callbacks__map_corr(m->correlationId),
		.device = m->deviceId,
		.context = m->contextId,
		.stream = m->streamId,
		.copy_kind = m->copyKind <= XPU_MEMCPY_PTOP ? m->copyKind : XPU_MEMCPY_UNKNOWN,
		.src_kind = mem_kind(m->srcKind),
		.dst_kind = mem_kind(m->dstKind),
		.src_device = m->srcDeviceId,
		.dst_device = m->dstDeviceId,
		.flags = m->graphId ? XPU_GPU_IN_GRAPH : 0,
		.graph_id = m->graphId,
		.graph_node_id = m->graphNodeId,
	};

	transport__append(XPU_REC_GPU_MEMCPY, &r, sizeof(r));
}

static void convert_memset(const CUpti_ActivityMemset4 *m)
{
	struct xpu_rec_gpu_memset r = {
		.start_ns = xc_ts(m->start),
		.end_ns = xc_ts(m->end),
		.bytes = m->bytes,
		.pid = xc_pid,
		.corr_id = callbacks__map_corr(m->correlationId),
		.device = m->deviceId,
		.context = m->contextId,
		.stream = m->streamId,
		.value = m->value,
		.mem_kind = mem_kind(m->memoryKind),
		.flags = m->graphId ? XPU_GPU_IN_GRAPH : 0,
		.graph_id = m->graphId,
		.graph_node_id = m->graphNodeId,
	};

	transport__append(XPU_REC_GPU_MEMSET, &r, sizeof(r));
}

/* An allocation or release; anything else CUPTI may add later is not ours to guess. */
static void convert_memory(const CUpti_ActivityMemory4 *m)
{
	struct xpu_rec_gpu_memory r = {
		.ts_ns = xc_ts(m->timestamp),
		.address = m->address,
		.bytes = m->bytes,
		.pid = xc_pid,
		.corr_id = callbacks__map_corr(m->correlationId),
		.device = m->deviceId,
		.context = m->contextId,
		.stream = m->isAsync ? m->streamId : 0xffffffffu,
		.mem_kind = mem_kind(m->memoryKind),
		.flags = m->isAsync ? XPU_GPU_MEM_ASYNC : 0,
	};

	if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
		r.op = XPU_GPU_MEM_ALLOC;
	else if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
		r.op = XPU_GPU_MEM_FREE;
	else
		return;
	transport__append(XPU_REC_GPU_MEMORY, &r, sizeof(r));
}

static void convert_sync(const CUpti_ActivitySynchronization2 *s)
{
	struct xpu_rec_gpu_sync r = {
		.start_ns = xc_ts(s->start),
		.end_ns = xc_ts(s->end),
		.pid = xc_pid,
		.corr_id = s->correlationId,
		.kind = (uint32_t)s->type <= XPU_SYNC_CONTEXT ? (uint32_t)s->type : XPU_SYNC_UNKNOWN,
		.context = s->contextId,
		.stream = s->streamId,
	};

	transport__append(XPU_REC_GPU_SYNC, &r, sizeof(r));
}

static void convert_api(const CUpti_ActivityAPI *a)
{
	bool rt = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
	struct xpu_rec_gpu_api r = {
		.start_ns = xc_ts(a->start),
		.end_ns = xc_ts(a->end),
		.pid = xc_pid,
		.tid = a->threadId,
		.corr_id = a->correlationId,
		.cbid = a->cbid,
		.domain = rt ? XPU_API_RUNTIME : XPU_API_DRIVER,
		.return_code = (int32_t)a->returnValue,
	};
	const char *name = NULL;

	if (cupti.cuptiGetCallbackName(rt ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
				       a->cbid, &name) == CUPTI_SUCCESS)
		r.name_str = transport__string(name);
	transport__append(XPU_REC_GPU_API, &r, sizeof(r));
}

static void convert_overhead(const CUpti_ActivityOverhead3 *o)
{
	struct xpu_rec_gpu_overhead r = {
		.start_ns = xc_ts(o->start),
		.end_ns = xc_ts(o->end),
		.pid = xc_pid,
		.tid = thread_of(o->objectKind, &o->objectId),
		.kind = o->overheadKind,
	};

	transport__append(XPU_REC_GPU_OVERHEAD, &r, sizeof(r));
}

static void convert_device(const CUpti_ActivityDevice5 *d)
{
	struct xpu_rec_gpu_device r = {
		.pid = xc_pid,
		.device = d->id,
		.compute_major = d->computeCapabilityMajor,
		.compute_minor = d->computeCapabilityMinor,
		.sm_count = d->numMultiprocessors,
		.global_memory_bytes = d->globalMemorySize,
	};

	r.name_str = transport__string(d->name);
	transport__append(XPU_REC_GPU_DEVICE, &r, sizeof(r));
}

static void convert(const CUpti_Activity *rec)
{
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		convert_kernel((const CUpti_ActivityKernel10 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
		convert_graph((const CUpti_ActivityGraphTrace2 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		convert_memcpy((const CUpti_ActivityMemcpy6 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		convert_peer((const CUpti_ActivityMemcpyPtoP4 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		convert_memset((const CUpti_ActivityMemset4 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		convert_sync((const CUpti_ActivitySynchronization2 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		convert_memory((const CUpti_ActivityMemory4 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		convert_api((const CUpti_ActivityAPI *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MARKER:
		convert_marker((const CUpti_ActivityMarker2 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MARKER_DATA:
		convert_marker_data((const CUpti_ActivityMarkerData2 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		convert_overhead((const CUpti_ActivityOverhead3 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_DEVICE:
		convert_device((const CUpti_ActivityDevice5 *)rec);
		break;
	default:
		break;
	}
}

/* One completed buffer: its records converted and sent, the buffer back to the pool. */
static void buffer_convert(uint8_t *buffer, size_t valid, size_t dropped)
{
	CUpti_Activity *rec = NULL;

	transport__lock();
	if (transport__connected() && buffer) {
		while (cupti.cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
			convert(rec);
		if (dropped) {
			struct xpu_rec_lost l = {
				.ts_ns = xc_mono_ns(),
				.source = XPU_LOST_CUPTI_RECORDS,
				.pid = xc_pid,
				.count = dropped,
			};

			cupti_dropped += dropped;
			transport__append(XPU_REC_LOST, &l, sizeof(l));
			transport__process_state(XPU_GPU_PROC_CONNECTED, cupti_dropped,
						 xc_clock_offset_ns);
		}
		callbacks__drain_syncs();
		graph_nodes__drain();
		api_records__drain();
		transport__flush();
	}
	transport__unlock();
	if (buffer)
		buffer_release(buffer);
}

/*
 * Conversion and sending run on a thread of ours: CUPTI hands a buffer back on whichever
 * thread flushes (its worker, our flusher, a target thread at a forced flush) and would wait
 * for the conversion of up to 8 MiB of records, the string lookups and the socket sends.
 * The queue never holds more entries than buffers exist (buf_max), so it cannot overflow.
 * XPU_CUPTI_CONVERT=inline converts in the callback as before; none counts and drops the
 * records, as the minimal client of bench/gpu/cupti_min.c does (to measure; no GPU data).
 */
enum { CONVERT_THREAD, CONVERT_INLINE, CONVERT_NONE };
static int convert_mode = CONVERT_THREAD;
struct pending {
	uint8_t *buffer;
	size_t valid;
	size_t dropped;
};
#define QUEUE_MAX 257	/* > buf_max */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t more;		/* a buffer was queued */
	pthread_cond_t idle;		/* the queue ran empty and nothing is being converted */
	struct pending q[QUEUE_MAX];
	unsigned head, count;
	bool busy;
	bool started;
	pthread_t thread;
} cv = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.more = PTHREAD_COND_INITIALIZER,
	.idle = PTHREAD_COND_INITIALIZER,
};

static void *converter_main(void *arg)
{
	pthread_mutex_lock(&cv.lock);
	for (;;) {
		struct pending p;

		while (!cv.count)
			pthread_cond_wait(&cv.more, &cv.lock);
		p = cv.q[cv.head];
		cv.head = (cv.head + 1) % QUEUE_MAX;
		cv.count--;
		cv.busy = true;
		pthread_mutex_unlock(&cv.lock);
		buffer_convert(p.buffer, p.valid, p.dropped);
		pthread_mutex_lock(&cv.lock);
		cv.busy = false;
		if (!cv.count)
			pthread_cond_broadcast(&cv.idle);
	}
	return NULL;
}

static void converter_start(void)
{
	sigset_t all, old;

	if (cv.started || convert_mode != CONVERT_THREAD)
		return;
	/* the target's signals must keep going to the target's threads */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (!pthread_create(&cv.thread, NULL, converter_main, NULL)) {
		cv.started = true;
		pthread_setname_np(cv.thread, "xpu-cupti-conv");
	} else {
		xc_info("cannot start the conversion thread: converting in CUPTI's callback");
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void activity__drain(void)
{
	struct timespec deadline;

	if (!cv.started)
		return;
	/* bounded: a converter stuck on a dead recorder costs a delay, never a hang */
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	pthread_mutex_lock(&cv.lock);
	while ((cv.count || cv.busy) &&
	       pthread_cond_timedwait(&cv.idle, &cv.lock, &deadline) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&cv.lock);
}

void activity__flush(bool forced)
{
	cupti.cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
	if (forced)
		activity__drain();
	/* the synchronization records of callbacks.c, which no buffer brings */
	transport__lock();
	if (transport__connected()) {
		callbacks__drain_syncs();
		graph_nodes__drain();
		api_records__drain();
		transport__flush();
	}
	transport__unlock();
}

void activity__atfork_child(void)
{
	/* no converter thread in the child, and the queue's lock may have been held */
	pthread_mutex_init(&cv.lock, NULL);
	pthread_cond_init(&cv.more, NULL);
	pthread_cond_init(&cv.idle, NULL);
	cv.started = false;
	cv.busy = false;
	cv.count = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
				      size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	if (cupti.cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) != CUPTI_SUCCESS)
		dropped = 0;
	if (convert_mode == CONVERT_NONE) {
		static uint64_t counted;
		uint64_t n = 0;

		while (buffer && cupti.cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
			n++;
		__atomic_add_fetch(&counted, n, __ATOMIC_RELAXED);
		xc_info("XPU_CUPTI_CONVERT=none: %llu records dropped so far",
			(unsigned long long)__atomic_load_n(&counted, __ATOMIC_RELAXED));
		if (buffer)
			buffer_release(buffer);
		return;
	}
	if (!buffer || !cv.started) {
		buffer_convert(buffer, valid, dropped);
		return;
	}
	pthread_mutex_lock(&cv.lock);
	if (cv.count < QUEUE_MAX) {
		cv.q[(cv.head + cv.count) % QUEUE_MAX] =
			(struct pending){ .buffer = buffer, .valid = valid, .dropped = dropped };
		cv.count++;
		pthread_cond_signal(&cv.more);
		buffer = NULL;
	}
	pthread_mutex_unlock(&cv.lock);
	if (buffer)	/* cannot happen while buffers come from our pool */
		buffer_convert(buffer, valid, dropped);
}

uint64_t activity__cupti_dropped(void)
{
	uint64_t v;

	transport__lock();
	v = cupti_dropped;
	transport__unlock();
	return v;
}

/* the kinds enabled, to disable them all before a final flush under a fatal signal */
static CUpti_ActivityKind enabled[32];
static int nenabled;

static void enable(CUpti_ActivityKind kind, const char *what)
{
	CUptiResult r = cupti.cuptiActivityEnable(kind);

	if (r != CUPTI_SUCCESS)
		xc_log("cannot enable %s activity: %s", what, cupti_loader__strerror(r));
	else if (nenabled < (int)(sizeof(enabled) / sizeof(enabled[0])))
		enabled[nenabled++] = kind;
}

void activity__stop(void)
{
	while (nenabled > 0)
		cupti.cuptiActivityDisable(enabled[--nenabled]);
}

/*
 * The activity kinds beyond kernels, copies and memsets, which are always on. Each costs the
 * target something on every call it traces (bench/gpu/ladder.py measures them one by one).
 * XPU_CUPTI_KINDS replaces the default set with a comma-separated list of these names, "none"
 * or "default" (which may be combined: "default,overhead"). Overhead records (CUPTI's own
 * buffer flushes and instrumentation) are not used by xpu-report: off unless asked for.
 * Synchronization records come from our callbacks on the synchronizing calls (sync, see
 * callbacks.c); cupti-sync takes them from CUPTI's activity instead, which costs every call.
 */
enum {
	K_SYNC = 1u << 0,		/* from the synchronizing calls' callbacks (callbacks.c) */
	K_MEMORY = 1u << 1,
	K_MEMCPY2 = 1u << 2,
	K_MARKER = 1u << 3,
	K_OVERHEAD = 1u << 4,
	K_DEVICE = 1u << 5,
	K_CUPTI_SYNC = 1u << 6,		/* CUPTI's synchronization activity instead */
	K_DEFAULT = K_SYNC | K_MEMORY | K_MEMCPY2 | K_MARKER | K_DEVICE,
};
static const struct {
	const char *name;
	unsigned bits;
} kind_names[] = {
	{ "sync", K_SYNC }, { "memory", K_MEMORY }, { "memcpy2", K_MEMCPY2 },
	{ "marker", K_MARKER }, { "overhead", K_OVERHEAD }, { "device", K_DEVICE },
	{ "cupti-sync", K_CUPTI_SYNC }, { "default", K_DEFAULT },
	{ "all", K_DEFAULT | K_OVERHEAD | K_CUPTI_SYNC }, { "none", 0 },
};

static unsigned kinds_wanted(void)
{
	const char *env = getenv("XPU_CUPTI_KINDS");
	unsigned bits = 0;
	const char *p;

	if (!env || !*env) {
		bits = K_DEFAULT;
	} else {
		for (p = env; *p;) {
			size_t n = strcspn(p, ","), i;

			for (i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
				if (strlen(kind_names[i].name) == n && !strncmp(p, kind_names[i].name, n))
					break;
			if (i < sizeof(kind_names) / sizeof(kind_names[0]))
				bits |= kind_names[i].bits;
			else if (n)
				xc_log("XPU_CUPTI_KINDS: unknown kind '%.*s' (sync, memory, memcpy2, "
				       "marker, overhead, device, cupti-sync, default, all, none)",
				       (int)n, p);
			p += n;
			if (*p == ',')
				p++;
		}
	}
	/* allocations and releases: XPU_CUPTI_MEMORY=0 turns them off (to measure their cost) */
	env = getenv("XPU_CUPTI_MEMORY");
	if (env && !strcmp(env, "0"))
		bits &= ~(unsigned)K_MEMORY;
	/* one source of synchronization records: CUPTI's when asked for */
	if (bits & K_CUPTI_SYNC)
		bits &= ~(unsigned)K_SYNC;
	return bits;
}

bool activity__sync_from_callbacks(void)
{
	return kinds_wanted() & K_SYNC;
}

/*
 * Blackwell and later time kernels with hardware events instead of CUPTI's instrumentation and
 * semaphores (cuptiActivityEnableHWTrace): cheaper per kernel. Elsewhere CUPTI answers
 * NOT_SUPPORTED and nothing changes. XPU_CUPTI_HW_TRACE=0 keeps the instrumentation.
 */
static bool hw_trace;

static void hw_trace_try(void)
{
	const char *env = getenv("XPU_CUPTI_HW_TRACE");
	CUptiResult r;

	if (!cupti.cuptiActivityEnableHWTrace || (env && !strcmp(env, "0")))
		return;
	r = cupti.cuptiActivityEnableHWTrace(1);
	hw_trace = r == CUPTI_SUCCESS;
	xc_info("hardware-event kernel timestamps (cuptiActivityEnableHWTrace): %s",
		hw_trace ? "on" : cupti_loader__strerror(r));
}

bool activity__hw_trace(void)
{
	return hw_trace;
}

int activity__start(enum xc_graph_mode mode)
{
	enum { API_LAUNCHES, API_ALL, API_RUNTIME, API_NONE, API_CALLBACKS } api;
	unsigned kinds = kinds_wanted();
	const char *env;
	CUptiResult r;

	graph_mode = mode;
	env = getenv("XPU_CUPTI_BUFFER_MB");
	if (env && atoi(env) > 0 && atoi(env) <= 256)
		buf_bytes = (size_t)atoi(env) << 20;
	env = getenv("XPU_CUPTI_CONVERT");
	if (env && !strcmp(env, "inline"))
		convert_mode = CONVERT_INLINE;
	else if (env && !strcmp(env, "none"))
		convert_mode = CONVERT_NONE;
	else
		convert_mode = CONVERT_THREAD;
	converter_start();

	r = cupti.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		xc_log("cuptiActivityRegisterCallbacks: %s: no GPU data for pid %d",
		       cupti_loader__strerror(r), (int)xc_pid);
		return -EIO;
	}
	hw_trace_try();
	/* device records are emitted when the kind is enabled, so enable it first */
	if (kinds & K_DEVICE)
		enable(CUPTI_ACTIVITY_KIND_DEVICE, "device");
	enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernel");
	enable(CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy");
	if (kinds & K_MEMCPY2)
		enable(CUPTI_ACTIVITY_KIND_MEMCPY2, "peer memcpy");
	enable(CUPTI_ACTIVITY_KIND_MEMSET, "memset");
	if (kinds & K_CUPTI_SYNC)
		enable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronization");
	if (kinds & K_MEMORY)
		enable(CUPTI_ACTIVITY_KIND_MEMORY2, "memory");
	/*
	 * API records are the costliest kind: CUPTI records every call of the API it is enabled for,
	 * and PyTorch makes about 15 cheap calls (cudaGetDevice, cudaStreamIsCapturing...) per launch.
	 * XPU_CUPTI_API=launches (default): records only for the calls the launch callbacks take
	 * (launches, syncs, copies, memsets, allocations: what the report uses), through CUPTI's
	 * per-API switches; all where this libcupti has none. callbacks: the same calls' records,
	 * made by the launch callbacks themselves (api_records.c), none by CUPTI. all, runtime or
	 * none as asked.
	 */
	env = getenv("XPU_CUPTI_API");
	if (!env || !*env || !strcmp(env, "launches")) {
		api = API_LAUNCHES;
	} else if (!strcmp(env, "all")) {
		api = API_ALL;
	} else if (!strcmp(env, "runtime")) {
		api = API_RUNTIME;
	} else if (!strcmp(env, "none")) {
		api = API_NONE;
	} else if (!strcmp(env, "callbacks")) {
		api = API_CALLBACKS;
	} else {
		xc_log("XPU_CUPTI_API=%.32s: not all, launches, callbacks, runtime or none: using launches",
		       env);
		api = API_LAUNCHES;
	}
	if (api == API_CALLBACKS && !api_records__from_callbacks()) {
		xc_info("API records from callbacks: no queue; CUPTI's for the launch calls instead");
		api = API_LAUNCHES;
	}
	if (api == API_LAUNCHES && callbacks__enable_api_records() < 0) {
		xc_info("this libcupti cannot choose API records per call: recording all");
		api = API_ALL;
	}
	if (api == API_ALL || api == API_RUNTIME)
		enable(CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API");
	if (api == API_ALL)
		enable(CUPTI_ACTIVITY_KIND_DRIVER, "driver API");
	if (kinds & K_MARKER) {
		enable(CUPTI_ACTIVITY_KIND_MARKER, "NVTX marker");
		enable(CUPTI_ACTIVITY_KIND_MARKER_DATA, "NVTX marker data");
	}
	if (kinds & K_OVERHEAD)
		enable(CUPTI_ACTIVITY_KIND_OVERHEAD, "overhead");
	/* graph trace replaces the per-kernel records of graph launches; only on request */
	if (graph_mode == XC_GRAPH_WHOLE)
		enable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "graph trace");
	/*
	 * CUPTI's worker thread also recycles its device buffers and semaphores; a fixed period
	 * replaces its own heuristics. XPU_CUPTI_FLUSH_PERIOD_MS=0 leaves them alone (our flusher
	 * still hands back completed buffers every XPU_CUPTI_FLUSH_MS).
	 */
	env = getenv("XPU_CUPTI_FLUSH_PERIOD_MS");
	if (!env || atoi(env) > 0) {
		r = cupti.cuptiActivityFlushPeriod(env ? (uint32_t)atoi(env) : 500);
		if (r != CUPTI_SUCCESS)
			xc_info("cuptiActivityFlushPeriod: %s", cupti_loader__strerror(r));
	}
	return 0;
}
