// SPDX-License-Identifier: MIT
/*
 * Drives build/libxpu-cupti.so against mock_cupti.c, with the real receiver (record/cupti_rx.c)
 * and a stub writer, in a forked "target" process. Checks what a GPU run cannot show cheaply:
 * the marker gets exactly the ids the kernel records carry (runtime launch, driver launch,
 * nested driver ids, graphs, copies, allocations), strings are defined before use, NVTX ranges
 * pair up, memory records keep address, size and kind,
 * drops are reported, the exit flush ends with FLUSHED + DONE, a forked child stays silent,
 * a busy CUPTI makes the library step aside, and a thread launching on through a fatal signal
 * leaves no kernel without its marker.
 *
 * Usage: mock_host LIBXPU_CUPTI MOCK_CUPTI
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include <cupti.h>

#include "../../../record/cupti_rx.c"
#include "record_fields.h"

static int passed, failed;
#define CHECK(c, ...)                                                                       \
	do {                                                                                \
		if (c) {                                                                    \
			passed++;                                                           \
		} else {                                                                    \
			failed++;                                                           \
			fprintf(stderr, "FAIL line %d: %s: ", __LINE__, #c);                \
			fprintf(stderr, __VA_ARGS__);                                       \
			fputc('\n', stderr);                                                \
		}                                                                           \
	} while (0)

/* ---- stub writer: keep every record, resolve strings per source --------------------------- */
struct rec {
	uint32_t source;
	uint16_t type;
	uint8_t body[128];
};
static struct rec recs[4096];
static int nrecs;
static char *strs[256];		/* single source per run in these tests */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int undefined_refs;

int writer_thread__submit_foreign(struct writer_thread *wt, uint32_t source_id, const void *records,
				  size_t len)
{
	const uint8_t *p = records;
	size_t off = 0;
	uint32_t offs[8];

	pthread_mutex_lock(&mu);
	while (off < len && nrecs < 4096) {
		struct xpu_record_header h;
		struct rec *r = &recs[nrecs++];
		size_t n, i;

		memcpy(&h, p + off, sizeof(h));
		r->source = source_id;
		r->type = h.type;
		memcpy(r->body, p + off + 8, h.size - 8 < 128 ? h.size - 8 : 128);
		if (h.type == XPU_REC_STRING) {
			struct xpu_rec_string s;

			memcpy(&s, r->body, sizeof(s));
			if (s.id < 256)
				strs[s.id] = strndup((const char *)p + off + 16, s.len);
		}
		/* every string field must refer to an id defined earlier in the stream */
		n = xpu_record_string_fields(h.type, offs, 8);
		for (i = 0; i < n; i++) {
			uint32_t id;

			memcpy(&id, p + off + 8 + offs[i], 4);
			if (id && (id >= 256 || !strs[id]))
				undefined_refs++;
		}
		off += h.size;
	}
	pthread_mutex_unlock(&mu);
	return 0;
}

void writer_thread__source_closed(struct writer_thread *wt, uint32_t source_id)
{
}

static int traced(void *ctx, pid_t pid)
{
	return 1;
}

static const char *str(uint32_t id)
{
	return id && id < 256 && strs[id] ? strs[id] : "";
}

/* ---- the target side ------------------------------------------------------------------------- */
static uint32_t markers[64][3];
static int nmarkers;
/* RUN_SIGNAL: every marker's id is also appended here, as the target dies with its memory */
static int marker_log = -1;

/* Interposes the library's marker (it calls it through the PLT), as the uprobe would see it. */
__attribute__((visibility("default"))) void xpu_cupti_api_enter(uint32_t corr, uint32_t cbid,
								uint32_t domain)
{
	if (marker_log >= 0 && write(marker_log, &corr, sizeof(corr)) != sizeof(corr))
		abort();
	if (nmarkers < 64) {
		markers[nmarkers][0] = corr;
		markers[nmarkers][1] = cbid;
		markers[nmarkers][2] = domain;
		nmarkers++;
	}
}

static void (*mock_api)(int, uint32_t, int, uint32_t);
static void (*mock_record)(const void *, uint32_t);
static uint64_t (*mock_now)(void);

static void kernel(uint32_t corr, const char *name, uint32_t graph)
{
	CUpti_ActivityKernel10 k = { .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL };

	k.start = mock_now();
	k.end = k.start + 1000;
	k.correlationId = corr;
	k.name = name;
	k.gridX = 4;
	k.blockX = 128;
	k.graphId = graph;
	k.graphNodeId = graph ? 77 : 0;
	mock_record(&k, sizeof(k));
}

/*
 * RUN_SIGNAL: a second thread that launches until the process dies (ids from 1000 on), at most
 * one launch per 100 us so that a slow flusher cannot overflow the host's 4096 records.
 */
static void *launch_on(void *arg)
{
	struct timespec pause_100us = { 0, 100000 };
	uint32_t corr;

	for (corr = 1000;; corr++) {
		mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 211, CUPTI_API_ENTER, corr);
		kernel(corr, "_Z9launch_onv", 0);
		mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 211, CUPTI_API_EXIT, corr);
		nanosleep(&pause_100us, NULL);
	}
	return NULL;
}

enum run_mode {
	RUN_NORMAL,
	RUN_BUSY,		/* another CUPTI subscriber */
	RUN_SIGNAL,		/* the target dies of SIGTERM, which it never handles */
};

static int target(const char *lib, const char *mock, enum run_mode mode)
{
	bool busy = mode == RUN_BUSY;
	int (*init)(void);
	void *m, *l;
	int *mock_busy;

	m = dlopen(mock, RTLD_NOW | RTLD_GLOBAL);
	l = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!m || !l) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	*(void **)&mock_api = dlsym(m, "mock_api");
	*(void **)&mock_record = dlsym(m, "mock_record");
	*(void **)&mock_now = dlsym(m, "mock_now");
	mock_busy = dlsym(m, "mock_busy");
	*mock_busy = busy;
	*(void **)&init = dlsym(l, "InitializeInjection");
	if (init() != 1)
		return 3;
	if (busy) {
		mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 211, CUPTI_API_ENTER, 1);
		return nmarkers == 0 ? 0 : 4;
	}

	if (mode == RUN_SIGNAL) {
		struct timespec ms = { 0, 5000000 };
		pthread_t t;

		marker_log = open(getenv("MOCK_MARKER_LOG"), O_WRONLY | O_APPEND);
		*(int *)dlsym(m, "mock_disable_delay_us") = 20000;
		mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 211, CUPTI_API_ENTER, 100);
		kernel(100, "_Z6killedv", 0);
		mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 211, CUPTI_API_EXIT, 100);
		if (marker_log < 0 || pthread_create(&t, NULL, launch_on, NULL))
			return 6;
		nanosleep(&ms, NULL);
		raise(SIGTERM);
		for (;;)
			pause();
	}
	/* A: runtime launch; CUPTI tags the kernel with the nested driver call's id */
	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 211, CUPTI_API_ENTER, 100);
	mock_api(CUPTI_CB_DOMAIN_DRIVER_API, 307, CUPTI_API_ENTER, 101);
	mock_api(CUPTI_CB_DOMAIN_DRIVER_API, 307, CUPTI_API_EXIT, 101);
	kernel(101, "_Z1av", 0);
	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 211, CUPTI_API_EXIT, 100);
	/* B: runtime launch tagged with the runtime id */
	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 211, CUPTI_API_ENTER, 200);
	mock_api(CUPTI_CB_DOMAIN_DRIVER_API, 307, CUPTI_API_ENTER, 200);
	mock_api(CUPTI_CB_DOMAIN_DRIVER_API, 307, CUPTI_API_EXIT, 200);
	kernel(200, "_Z1bv", 0);
	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 211, CUPTI_API_EXIT, 200);
	/* C: driver launch from outside any runtime call (Triton, PyTorch's own cuLaunchKernel) */
	mock_api(CUPTI_CB_DOMAIN_DRIVER_API, 307, CUPTI_API_ENTER, 300);
	kernel(300, "triton_kernel", 0);
	mock_api(CUPTI_CB_DOMAIN_DRIVER_API, 307, CUPTI_API_EXIT, 300);
	/* D: calls we do not subscribe to never reach the marker */
	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 10, CUPTI_API_ENTER, 350);
	mock_api(CUPTI_CB_DOMAIN_DRIVER_API, 17, CUPTI_API_ENTER, 351);
	/* E: async copy through the runtime */
	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 41, CUPTI_API_ENTER, 400);
	mock_api(CUPTI_CB_DOMAIN_DRIVER_API, 279, CUPTI_API_ENTER, 401);
	mock_api(CUPTI_CB_DOMAIN_DRIVER_API, 279, CUPTI_API_EXIT, 401);
	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 41, CUPTI_API_EXIT, 400);
	{
		CUpti_ActivityMemcpy6 c = { .kind = CUPTI_ACTIVITY_KIND_MEMCPY };

		c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
		c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
		c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		c.bytes = 4096;
		c.start = mock_now();
		c.end = c.start + 500;
		c.correlationId = 401;
		c.runtimeCorrelationId = 400;
		mock_record(&c, sizeof(c));
	}
	/* F: a graph launch, two kernels with the launch's id */
	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 311, CUPTI_API_ENTER, 500);
	mock_api(CUPTI_CB_DOMAIN_DRIVER_API, 514, CUPTI_API_ENTER, 501);
	kernel(501, "_Z1gv", 9);
	kernel(501, "_Z1hv", 9);
	mock_api(CUPTI_CB_DOMAIN_DRIVER_API, 514, CUPTI_API_EXIT, 501);
	mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 311, CUPTI_API_EXIT, 500);
	/* G: cudaMalloc, the record tagged with the nested cuMemAlloc's id; then cudaFree */
	{
		CUpti_ActivityMemory4 a = { .kind = CUPTI_ACTIVITY_KIND_MEMORY2 };

		mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 20, CUPTI_API_ENTER, 600);
		mock_api(CUPTI_CB_DOMAIN_DRIVER_API, 243, CUPTI_API_ENTER, 601);
		a.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
		a.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		a.correlationId = 601;
		a.address = 0x7f0000200000ull;
		a.bytes = 1u << 20;
		a.timestamp = mock_now();
		a.deviceId = 0;
		a.streamId = 7;
		mock_record(&a, sizeof(a));
		mock_api(CUPTI_CB_DOMAIN_DRIVER_API, 243, CUPTI_API_EXIT, 601);
		mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 20, CUPTI_API_EXIT, 600);
		mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 22, CUPTI_API_ENTER, 700);
		a.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
		a.correlationId = 700;
		a.timestamp = mock_now() + 10;
		mock_record(&a, sizeof(a));
		mock_api(CUPTI_CB_DOMAIN_RUNTIME_API, 22, CUPTI_API_EXIT, 700);
	}
	/* NVTX range with color, and an instantaneous marker */
	{
		CUpti_ActivityMarker2 s = { .kind = CUPTI_ACTIVITY_KIND_MARKER };
		CUpti_ActivityMarkerData2 d = { .kind = CUPTI_ACTIVITY_KIND_MARKER_DATA };

		s.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
		s.id = 1;
		s.name = "train_step";
		s.timestamp = mock_now();
		s.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
		s.objectId.pt.threadId = 4242;
		mock_record(&s, sizeof(s));
		d.flags = CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB;
		d.id = 1;
		d.color = 0xff00ff00;
		mock_record(&d, sizeof(d));
		s.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
		s.name = NULL;
		s.timestamp = mock_now() + 10;
		mock_record(&s, sizeof(s));
		s.flags = CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;
		s.id = 2;
		s.name = "checkpoint";
		mock_record(&s, sizeof(s));
	}
	{
		CUpti_ActivityAPI a = { .kind = CUPTI_ACTIVITY_KIND_RUNTIME, .cbid = 211 };

		a.start = mock_now();
		a.end = a.start + 100;
		a.correlationId = 100;
		a.threadId = 4242;
		mock_record(&a, sizeof(a));
	}
	/*
	 * H: synchronizations, recorded from their own callbacks (not CUPTI's activity): a device
	 * sync through the runtime (its nested driver call is not a second one), a stream sync
	 * through the driver on stream id 12, and one that failed (not recorded, as by CUPTI)
	 */
	{
		void (*api_p)(CUpti_CallbackDomain, uint32_t, CUpti_ApiCallbackSite, uint32_t,
			      const void *, void *) = dlsym(m, "mock_api_params");
		CUstream stream = (CUstream)(uintptr_t)(0x5000 + 12);
		int ok = 0, bad = 1;

		api_p(CUPTI_CB_DOMAIN_RUNTIME_API, 165, CUPTI_API_ENTER, 800, NULL, &ok);
		api_p(CUPTI_CB_DOMAIN_DRIVER_API, 127, CUPTI_API_ENTER, 801, &stream, &ok);
		api_p(CUPTI_CB_DOMAIN_DRIVER_API, 127, CUPTI_API_EXIT, 801, &stream, &ok);
		api_p(CUPTI_CB_DOMAIN_RUNTIME_API, 165, CUPTI_API_EXIT, 800, NULL, &ok);
		api_p(CUPTI_CB_DOMAIN_DRIVER_API, 127, CUPTI_API_ENTER, 900, &stream, &ok);
		api_p(CUPTI_CB_DOMAIN_DRIVER_API, 127, CUPTI_API_EXIT, 900, &stream, &ok);
		api_p(CUPTI_CB_DOMAIN_DRIVER_API, 127, CUPTI_API_ENTER, 901, &stream, &bad);
		api_p(CUPTI_CB_DOMAIN_DRIVER_API, 127, CUPTI_API_EXIT, 901, &stream, &bad);
	}
	/* a forked child must neither flush nor say DONE on our connection */
	{
		pid_t kid = fork();

		if (kid == 0)
			exit(0);
		waitpid(kid, NULL, 0);
	}
	/* expected markers: A, B, C, E, F, G's malloc and free, H's three syncs */
	if (nmarkers != 10 || markers[0][0] != 100 || markers[1][0] != 200 || markers[2][0] != 300 ||
	    markers[2][2] != XPU_API_DRIVER || markers[3][0] != 400 || markers[4][0] != 500 ||
	    markers[5][0] != 600 || markers[6][0] != 700 || markers[7][0] != 800 ||
	    markers[8][0] != 900 || markers[9][0] != 901) {
		int i;

		for (i = 0; i < nmarkers; i++)
			fprintf(stderr, "marker %u %u %u\n", markers[i][0], markers[i][1], markers[i][2]);
		return 5;
	}
	return 0;	/* exit() runs the library's atexit flush */
}

static char marker_log_path[] = "/tmp/xpu-mock-markers-XXXXXX";

static int run(const char *lib, const char *mock, enum run_mode mode)
{
	char err[256];
	struct cupti_rx *rx;
	pid_t kid;
	int status;

	nrecs = 0;
	memset(strs, 0, sizeof(strs));
	rx = cupti_rx__start(NULL, traced, NULL, err, sizeof(err));
	if (!rx) {
		fprintf(stderr, "rx: %s\n", err);
		return -1;
	}
	kid = fork();
	if (kid == 0) {
		setenv("MOCK_MARKER_LOG", marker_log_path, 1);
		setenv("XPU_CUPTI_SOCKET", cupti_rx__socket_path(rx), 1);
		setenv("XPU_CUPTI_LIB", mock, 1);
		exit(target(lib, mock, mode));
	}
	waitpid(kid, &status, 0);
	cupti_rx__stop(rx, 2000, NULL);
	if (mode == RUN_SIGNAL)
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
		      "target still dies of SIGTERM (status %#x)", status);
	else
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "target exit status %d",
		      WEXITSTATUS(status));
	return kid;
}

int main(int argc, char **argv)
{
	uint32_t kcorr[8];
	int i, nk = 0, nmemcpy = 0, nnvtx = 0, ngraph = 0, nflushed = 0, nlost = 0, napi = 0;
	int nsync = 0;
	struct xpu_rec_gpu_sync sync_recs[4] = { 0 };
	int nsubfail = 0, nalloc = 0, nfree = 0;
	uint64_t now;
	pid_t kid;

	if (argc != 3) {
		fprintf(stderr, "usage: %s LIBXPU_CUPTI MOCK_CUPTI\n", argv[0]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	kid = run(argv[1], argv[2], RUN_NORMAL);
	now = clock_mono_ns();
	for (i = 0; i < nrecs; i++) {
		struct rec *r = &recs[i];

		switch (r->type) {
		case XPU_REC_GPU_KERNEL: {
			struct xpu_rec_gpu_kernel k;

			memcpy(&k, r->body, sizeof(k));
			if (nk < 8)
				kcorr[nk] = k.corr_id;
			nk++;
			CHECK(k.pid == (uint32_t)kid, "kernel pid %u", k.pid);
			CHECK(k.end_ns > k.start_ns && k.start_ns <= now && now - k.start_ns < 10000000000ull,
			      "kernel times are CLOCK_MONOTONIC: %llu vs now %llu",
			      (unsigned long long)k.start_ns, (unsigned long long)now);
			CHECK(*str(k.name_str), "kernel name defined");
			if (k.flags & XPU_GPU_IN_GRAPH) {
				ngraph++;
				CHECK(k.graph_id == 9 && k.graph_node_id == 77, "graph ids");
			}
			break;
		}
		case XPU_REC_GPU_MEMCPY: {
			struct xpu_rec_gpu_memcpy c;

			memcpy(&c, r->body, sizeof(c));
			nmemcpy++;
			CHECK(c.corr_id == 400 && c.copy_kind == XPU_MEMCPY_HTOD && c.bytes == 4096 &&
				      c.src_kind == XPU_MEM_PINNED && c.dst_kind == XPU_MEM_DEVICE,
			      "memcpy corr %u kind %u", c.corr_id, c.copy_kind);
			break;
		}
		case XPU_REC_NVTX: {
			struct xpu_rec_nvtx n;

			memcpy(&n, r->body, sizeof(n));
			nnvtx++;
			if (n.kind == XPU_NVTX_RANGE)
				CHECK(!strcmp(str(n.name_str), "train_step") && n.end_ns > n.start_ns &&
					      n.color_argb == 0xff00ff00 && n.tid == 4242,
				      "nvtx range %s", str(n.name_str));
			else
				CHECK(!strcmp(str(n.name_str), "checkpoint") && n.start_ns == n.end_ns,
				      "nvtx marker");
			break;
		}
		case XPU_REC_GPU_API: {
			struct xpu_rec_gpu_api a;

			memcpy(&a, r->body, sizeof(a));
			napi++;
			CHECK(!strcmp(str(a.name_str), "cudaLaunchKernel_v7000") && a.corr_id == 100 &&
				      a.domain == XPU_API_RUNTIME && a.tid == 4242,
			      "api record %s", str(a.name_str));
			break;
		}
		case XPU_REC_GPU_MEMORY: {
			struct xpu_rec_gpu_memory m;

			memcpy(&m, r->body, sizeof(m));
			nalloc += m.op == XPU_GPU_MEM_ALLOC;
			nfree += m.op == XPU_GPU_MEM_FREE;
			CHECK(m.pid == (uint32_t)kid && m.address == 0x7f0000200000ull &&
				      m.bytes == 1u << 20 && m.mem_kind == XPU_MEM_DEVICE &&
				      m.stream == 0xffffffffu && !m.flags,
			      "memory record pid %u address %#llx bytes %llu kind %u stream %u",
			      m.pid, (unsigned long long)m.address, (unsigned long long)m.bytes,
			      m.mem_kind, m.stream);
			CHECK(m.corr_id == (m.op == XPU_GPU_MEM_ALLOC ? 600u : 700u),
			      "memory op %u corr %u is the marker's", m.op, m.corr_id);
			break;
		}
		case XPU_REC_GPU_SYNC: {
			struct xpu_rec_gpu_sync y;

			memcpy(&y, r->body, sizeof(y));
			if (nsync < 4)
				sync_recs[nsync] = y;
			nsync++;
			CHECK(y.pid == (uint32_t)kid && y.end_ns >= y.start_ns && y.start_ns <= now &&
				      now - y.start_ns < 10000000000ull,
			      "sync pid %u times %llu..%llu", y.pid, (unsigned long long)y.start_ns,
			      (unsigned long long)y.end_ns);
			break;
		}
		case XPU_REC_LOST: {
			struct xpu_rec_lost l;

			memcpy(&l, r->body, sizeof(l));
			nlost++;
			CHECK(l.source == XPU_LOST_CUPTI_RECORDS && l.count == 5, "lost %u %llu",
			      l.source, (unsigned long long)l.count);
			break;
		}
		case XPU_REC_GPU_PROCESS: {
			struct xpu_rec_gpu_process p;

			memcpy(&p, r->body, sizeof(p));
			nflushed += p.state == XPU_GPU_PROC_FLUSHED;
			if (p.state == XPU_GPU_PROC_FLUSHED)
				CHECK(p.cupti_dropped == 5, "dropped in FLUSHED %llu",
				      (unsigned long long)p.cupti_dropped);
			break;
		}
		}
	}
	CHECK(nk == 5, "kernels %d", nk);
	CHECK(nk >= 5 && kcorr[0] == 100 && kcorr[1] == 200 && kcorr[2] == 300 && kcorr[3] == 500 &&
		      kcorr[4] == 500,
	      "kernel corr ids equal the marker's: %u %u %u %u %u", kcorr[0], kcorr[1], kcorr[2],
	      kcorr[3], kcorr[4]);
	CHECK(ngraph == 2, "graph kernels %d", ngraph);
	CHECK(nmemcpy == 1, "memcpy %d", nmemcpy);
	CHECK(nsync == 2, "synchronization records %d (the failed one not among them)", nsync);
	CHECK(nsync >= 2 && sync_recs[0].corr_id == 800 && sync_recs[0].kind == XPU_SYNC_CONTEXT &&
		      sync_recs[0].context == 3 && sync_recs[0].stream == 0xffffffffu,
	      "device sync: corr %u kind %u context %u stream %u", sync_recs[0].corr_id,
	      sync_recs[0].kind, sync_recs[0].context, sync_recs[0].stream);
	CHECK(nsync >= 2 && sync_recs[1].corr_id == 900 && sync_recs[1].kind == XPU_SYNC_STREAM &&
		      sync_recs[1].context == 3 && sync_recs[1].stream == 12,
	      "stream sync: corr %u kind %u context %u stream %u", sync_recs[1].corr_id,
	      sync_recs[1].kind, sync_recs[1].context, sync_recs[1].stream);
	CHECK(nnvtx == 2, "nvtx %d", nnvtx);
	CHECK(napi == 1, "api %d", napi);
	CHECK(nalloc == 1 && nfree == 1, "memory records: %d allocations, %d releases", nalloc,
	      nfree);
	CHECK(nlost == 1, "lost %d", nlost);
	CHECK(nflushed == 1, "exactly one FLUSHED (the forked child stayed silent): %d", nflushed);
	CHECK(undefined_refs == 0, "string ids used before definition: %d", undefined_refs);

	/*
	 * XPU_CUPTI_API=callbacks: the same run, its API records made by the launch callbacks:
	 * one per marked call (the failed sync included, with its code), with the calling thread's
	 * id and the call's name; CUPTI's own API record (tid 4242) is not enabled, so not sent.
	 */
	{
		static const uint32_t want[] = { 100, 200, 300, 400, 500, 600, 700, 800, 900, 901 };
		uint32_t seen[16];
		int nseen = 0, ncupti = 0, j;
		pid_t apikid;

		setenv("XPU_CUPTI_API", "callbacks", 1);
		apikid = run(argv[1], argv[2], RUN_NORMAL);
		unsetenv("XPU_CUPTI_API");
		for (i = 0; i < nrecs; i++) {
			struct xpu_rec_gpu_api a;

			if (recs[i].type != XPU_REC_GPU_API)
				continue;
			memcpy(&a, recs[i].body, sizeof(a));
			if (a.tid == 4242) {
				ncupti++;
				continue;
			}
			if (nseen < 16)
				seen[nseen] = a.corr_id;
			nseen++;
			CHECK(a.pid == (uint32_t)apikid && a.tid == (uint32_t)apikid &&
				      a.end_ns >= a.start_ns && a.start_ns > 0 && *str(a.name_str),
			      "callback api record: corr %u pid %u tid %u %llu..%llu %s", a.corr_id,
			      a.pid, a.tid, (unsigned long long)a.start_ns,
			      (unsigned long long)a.end_ns, str(a.name_str));
			CHECK(a.return_code == (a.corr_id == 901 ? 1 : 0), "corr %u return code %d",
			      a.corr_id, a.return_code);
			CHECK(a.domain == (a.corr_id == 300 || a.corr_id >= 900 ? XPU_API_DRIVER
										   : XPU_API_RUNTIME),
			      "corr %u domain %u", a.corr_id, a.domain);
			if (a.corr_id == 100)
				CHECK(!strcmp(str(a.name_str), "cudaLaunchKernel_v7000"), "name %s",
				      str(a.name_str));
		}
		CHECK(ncupti == 0, "CUPTI's own API records were enabled: %d", ncupti);
		CHECK(nseen == (int)(sizeof(want) / sizeof(want[0])), "callback api records %d", nseen);
		for (j = 0; j < nseen && j < 16 && j < (int)(sizeof(want) / sizeof(want[0])); j++)
			CHECK(seen[j] == want[j], "callback api record %d: corr %u, want %u", j, seen[j],
			      want[j]);
	}

	run(argv[1], argv[2], RUN_BUSY);
	for (i = 0; i < nrecs; i++) {
		struct xpu_rec_gpu_process p;

		if (recs[i].type != XPU_REC_GPU_PROCESS)
			continue;
		memcpy(&p, recs[i].body, sizeof(p));
		nsubfail += p.state == XPU_GPU_PROC_SUBSCRIBE_FAILED;
	}
	CHECK(nsubfail == 1, "busy CUPTI reported as SUBSCRIBE_FAILED");

	/*
	 * SIGTERM with the default action: records are flushed and DONE is sent before dying. A
	 * second thread launches on through the signal, and the mock's slow activity disable
	 * leaves time for launches during the flush: none of them may leave a kernel without its
	 * marker (the library holds calls entered after the signal).
	 */
	{
		int fd = mkstemp(marker_log_path), nmarked = 0, unmarked = 0, first_unmarked = 0;
		bool killed_kernel = false;
		static uint32_t marked[1 << 20];

		CHECK(fd >= 0, "cannot create %s", marker_log_path);
		run(argv[1], argv[2], RUN_SIGNAL);
		if (fd >= 0) {
			ssize_t n = read(fd, marked, sizeof(marked));

			nmarked = n > 0 ? (int)(n / sizeof(uint32_t)) : 0;
			close(fd);
			unlink(marker_log_path);
		}
		nk = nflushed = 0;
		for (i = 0; i < nrecs; i++) {
			struct xpu_rec_gpu_process p;
			struct xpu_rec_gpu_kernel k;
			bool found = false;
			int j;

			if (recs[i].type == XPU_REC_GPU_KERNEL) {
				memcpy(&k, recs[i].body, sizeof(k));
				nk++;
				killed_kernel |= k.corr_id == 100;
				for (j = 0; j < nmarked && !found; j++)
					found = marked[j] == k.corr_id;
				if (!found && !unmarked++)
					first_unmarked = (int)k.corr_id;
			}
			if (recs[i].type != XPU_REC_GPU_PROCESS)
				continue;
			memcpy(&p, recs[i].body, sizeof(p));
			nflushed += p.state == XPU_GPU_PROC_FLUSHED;
		}
		CHECK(killed_kernel, "the killed target's kernel was flushed");
		CHECK(nk > 1, "the launching thread's kernels were flushed (%d kernels)", nk);
		CHECK(unmarked == 0, "%d of %d kernels have no marker (first: id %d; %d markers)",
		      unmarked, nk, first_unmarked, nmarked);
		CHECK(nflushed == 1, "the killed target said FLUSHED (%d)", nflushed);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
