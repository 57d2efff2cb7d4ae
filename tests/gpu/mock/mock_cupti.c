// SPDX-License-Identifier: MIT
/*
 * A fake libcupti for testing libxpu-cupti.so on a machine without a GPU: it keeps the callbacks
 * the library registers, and the host program (mock_host.c) drives API calls and activity
 * records through mock_*() functions. Only what the library uses is implemented.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cupti.h>

static CUpti_CallbackFunc api_cb;
static CUpti_BuffersCallbackRequestFunc buf_req;
static CUpti_BuffersCallbackCompleteFunc buf_done;
static CUpti_TimestampCallbackFunc ts_cb;
static int enabled_cb[2][1024];
/* CUPTI_CB_DOMAIN_RESOURCE's ids (the graph node callbacks), apart from the API domains' */
static int enabled_res[64];
static int enabled_kind[64];
/* per-API activity switches of CUPTI 12+ (cuptiActivityEnable{Runtime,Driver}Api) */
static int api_records[2][1024];
static uint8_t pending[1 << 20];
static size_t pending_len;
/* fake_cuda_app records from its thread while the library flushes from another */
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t dropped_once = 5;
int mock_busy;			/* make cuptiSubscribe fail like under Nsight */
/* microseconds cuptiActivityDisable takes before it stops recording: widens any gap between
 * the library's steps at a fatal signal, so that a launch in it shows */
int mock_disable_delay_us;

struct name { int domain; uint32_t cbid; const char *name; };
static const struct name names[] = {
	{ CUPTI_CB_DOMAIN_RUNTIME_API, 211, "cudaLaunchKernel_v7000" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, 41, "cudaMemcpyAsync_v3020" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, 10, "cudaGetLastError_v3020" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, 311, "cudaGraphLaunch_v10000" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, 165, "cudaDeviceSynchronize_v3020" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, 20, "cudaMalloc_v3020" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, 22, "cudaFree_v3020" },
	{ CUPTI_CB_DOMAIN_DRIVER_API, 243, "cuMemAlloc_v2" },
	{ CUPTI_CB_DOMAIN_DRIVER_API, 307, "cuLaunchKernel" },
	{ CUPTI_CB_DOMAIN_DRIVER_API, 279, "cuMemcpyHtoDAsync_v2" },
	{ CUPTI_CB_DOMAIN_DRIVER_API, 17, "cuCtxGetDevice" },
	{ CUPTI_CB_DOMAIN_DRIVER_API, 514, "cuGraphLaunch" },
	{ CUPTI_CB_DOMAIN_DRIVER_API, 127, "cuStreamSynchronize" },
	/* CUDA graphs (tests/gpu/mock/fake_cuda_graphs.c): real ids of CUDA 13's headers */
	{ CUPTI_CB_DOMAIN_RUNTIME_API, 289, "cudaGraphAddKernelNode_v10000" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, 298, "cudaGraphAddChildGraphNode_v10000" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, 307, "cudaGraphAddDependencies_v10000" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, 310, "cudaGraphInstantiate_v10000" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, 315, "cudaStreamBeginCapture_v10000" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, 335, "cudaGraphExecUpdate_v10020" },
};

CUptiResult cuptiGetVersion(uint32_t *v) { *v = 130001; return CUPTI_SUCCESS; }
CUptiResult cuptiGetResultString(CUptiResult r, const char **s) { *s = "mock error"; return CUPTI_SUCCESS; }
CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *u)
{
	if (mock_busy)
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	api_cb = cb;
	*s = (CUpti_SubscriberHandle)1;
	return CUPTI_SUCCESS;
}
CUptiResult cuptiEnableCallback(uint32_t en, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
				CUpti_CallbackId cbid)
{
	if (d == CUPTI_CB_DOMAIN_RESOURCE) {
		if (cbid >= 64)
			return CUPTI_ERROR_INVALID_PARAMETER;
		enabled_res[cbid] = en;
	} else if (cbid < 1024) {
		enabled_cb[d == CUPTI_CB_DOMAIN_DRIVER_API][cbid] = en;
	}
	return CUPTI_SUCCESS;
}
CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t cbid, const char **name)
{
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((int)d == names[i].domain && cbid == names[i].cbid) {
			*name = names[i].name;
			return CUPTI_SUCCESS;
		}
	*name = NULL;
	return CUPTI_ERROR_INVALID_PARAMETER;
}
CUptiResult cuptiActivityEnable(CUpti_ActivityKind k) { enabled_kind[k & 63] = 1; return CUPTI_SUCCESS; }
CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t en)
{
	if (cbid >= 1024)
		return CUPTI_ERROR_INVALID_PARAMETER;
	api_records[0][cbid] = en;
	return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t en)
{
	if (cbid >= 1024)
		return CUPTI_ERROR_INVALID_PARAMETER;
	api_records[1][cbid] = en;
	return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	if (mock_disable_delay_us)
		usleep(mock_disable_delay_us);
	enabled_kind[k & 63] = 0;
	return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
					   CUpti_BuffersCallbackCompleteFunc c)
{
	buf_req = r;
	buf_done = c;
	return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	uint8_t *p = *rec ? (uint8_t *)*rec : buf;

	if (*rec) {
		uint32_t size;

		memcpy(&size, p - 8, 4);
		p += size;
	}
	p += 8;	/* mock layout: u32 size, pad, then the record */
	if (p >= buf + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)p;
	return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *d)
{
	*d = dropped_once;
	dropped_once = 0;
	return CUPTI_SUCCESS;
}
static CUptiResult flush_locked(void)
{
	uint8_t *b;
	size_t size, max;

	if (!pending_len || !buf_req)
		return CUPTI_SUCCESS;
	buf_req(&b, &size, &max);
	if (!b || size < pending_len)
		return CUPTI_ERROR_UNKNOWN;
	memcpy(b, pending, pending_len);
	size = pending_len;
	pending_len = 0;
	buf_done(NULL, 0, b, size, size);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	CUptiResult r;

	pthread_mutex_lock(&pending_lock);
	r = flush_locked();
	pthread_mutex_unlock(&pending_lock);
	return r;
}
CUptiResult cuptiActivityFlushPeriod(uint32_t t) { return CUPTI_SUCCESS; }
CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f) { ts_cb = f; return CUPTI_SUCCESS; }
CUptiResult cuptiGetTimestamp(uint64_t *t) { *t = ts_cb ? ts_cb() : 0; return CUPTI_SUCCESS; }
CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType t) { return CUPTI_SUCCESS; }
/* a detaching client (xpu-record -p's end): no more callbacks, as CUPTI's own */
CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
	api_cb = NULL;
	memset(enabled_cb, 0, sizeof(enabled_cb));
	memset(enabled_res, 0, sizeof(enabled_res));
	return CUPTI_SUCCESS;
}
int mock_finalized;
CUptiResult cuptiFinalize(void)
{
	mock_finalized = 1;
	return CUPTI_SUCCESS;
}

/* ---- driving ---------------------------------------------------------------------------- */

uint64_t mock_now(void) { return ts_cb ? ts_cb() : 0; }
int mock_kind_enabled(int kind) { return enabled_kind[kind & 63]; }
int mock_cb_enabled(int driver, uint32_t cbid) { return enabled_cb[!!driver][cbid]; }

/* API calls a subscriber was called back for (an attach's window, not the whole run) */
unsigned long mock_callbacks;

void mock_api(CUpti_CallbackDomain d, uint32_t cbid, CUpti_ApiCallbackSite site, uint32_t corr)
{
	CUpti_CallbackData cb = { .callbackSite = site, .correlationId = corr };
	CUpti_CallbackFunc f = api_cb;

	if (f && cbid < 1024 && enabled_cb[d == CUPTI_CB_DOMAIN_DRIVER_API][cbid]) {
		if (site == CUPTI_API_ENTER)
			__atomic_add_fetch(&mock_callbacks, 1, __ATOMIC_RELAXED);
		f(NULL, d, cbid, &cb);
	}
}

/* The same with the call's parameters and return value (synchronizations read them). */
void mock_api_params(CUpti_CallbackDomain d, uint32_t cbid, CUpti_ApiCallbackSite site,
		     uint32_t corr, const void *params, void *ret)
{
	CUpti_CallbackData cb = { .callbackSite = site, .correlationId = corr,
				  .functionParams = params, .functionReturnValue = ret,
				  .context = (CUcontext)0x1000 };
	CUpti_CallbackFunc f = api_cb;

	if (f && cbid < 1024 && enabled_cb[d == CUPTI_CB_DOMAIN_DRIVER_API][cbid])
		f(NULL, d, cbid, &cb);
}

/* stream handle 0x5000 + n has CUPTI id n; context 0x1000 has id 3 */
CUptiResult cuptiGetStreamIdEx(CUcontext ctx, CUstream stream, uint8_t per_thread, uint32_t *id)
{
	*id = (uint32_t)((uintptr_t)stream - 0x5000);
	return CUPTI_SUCCESS;
}
CUptiResult cuptiGetContextId(CUcontext ctx, uint32_t *id)
{
	*id = ctx == (CUcontext)0x1000 ? 3 : 0;
	return CUPTI_SUCCESS;
}

/*
 * CUDA graphs: a handle's id is its value (node 0x1001 has id 0x1001), as cuptiGetGraphNodeId
 * and friends give ids; a NULL handle is refused as CUPTI refuses it.
 */
CUptiResult cuptiGetGraphNodeId(CUgraphNode node, uint64_t *id)
{
	if (!node)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*id = (uint64_t)(uintptr_t)node;
	return CUPTI_SUCCESS;
}
CUptiResult cuptiGetGraphId(CUgraph graph, uint32_t *id)
{
	if (!graph)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*id = (uint32_t)(uintptr_t)graph;
	return CUPTI_SUCCESS;
}
CUptiResult cuptiGetGraphExecId(CUgraphExec exec, uint32_t *id)
{
	if (!exec)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*id = (uint32_t)(uintptr_t)exec;
	return CUPTI_SUCCESS;
}

/* A graph resource callback (GRAPHNODE_CREATED, _CLONED, ...), as CUPTI makes it inside the
 * API call that changes the graph, on that call's thread. */
void mock_resource(uint32_t cbid, const CUpti_GraphData *g)
{
	CUpti_ResourceData rd = { .resourceDescriptor = (void *)g };
	CUpti_CallbackFunc f = api_cb;

	if (f && cbid < 64 && enabled_res[cbid])
		f(NULL, CUPTI_CB_DOMAIN_RESOURCE, cbid, &rd);
}

void mock_record(const void *rec, uint32_t size)
{
	uint32_t padded = (size + 7) & ~7u;

	const CUpti_ActivityAPI *api = rec;
	int kind = api->kind & 63;

	/* like CUPTI, record nothing of a kind that is not enabled, nor of an API not switched on */
	if (!enabled_kind[kind] &&
	    !((kind == CUPTI_ACTIVITY_KIND_RUNTIME || kind == CUPTI_ACTIVITY_KIND_DRIVER) &&
	      api->cbid < 1024 && api_records[kind == CUPTI_ACTIVITY_KIND_DRIVER][api->cbid]))
		return;
	pthread_mutex_lock(&pending_lock);
	/* a full buffer completes, as CUPTI's do */
	if (pending_len + 8 + padded > sizeof(pending))
		flush_locked();
	memcpy(pending + pending_len, &padded, 4);
	memset(pending + pending_len + 4, 0, 4);
	memcpy(pending + pending_len + 8, rec, size);
	pending_len += 8 + padded;
	pthread_mutex_unlock(&pending_lock);
}
