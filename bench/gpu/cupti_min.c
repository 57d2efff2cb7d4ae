// SPDX-License-Identifier: MIT
/*
 * The CUPTI floor: the least an activity client can do, to measure what CUPTI itself costs a
 * target against what xpu-perf's library adds (issue 28). Injected like libxpu-cupti.so:
 *
 *   CUDA_INJECTION64_PATH=/path/libcupti_min.so python3 bench/gpu/torch_bench.py none 300
 *
 * InitializeInjection() enables concurrent-kernel, memcpy and memset activity only, with
 * CUPTI's default clock; the buffer callbacks hand out malloc'ed buffers and, when CUPTI hands
 * one back, count its records and free it; an atexit handler forces the last flush. No
 * callbacks are subscribed, nothing is converted or sent. CUPTI_MIN_VERBOSE=1 prints the
 * counts at exit; CUPTI_MIN_BUFFER_MB sets the buffer size (default 8, as libxpu-cupti.so);
 * XPU_CUPTI_LIB names the libcupti to use (else the one the process loads, found as
 * libxpu-cupti.so finds it: already loaded, next to a loaded CUDA library, then by soname).
 *
 * Built with: gcc -O2 -shared -fPIC -I$CUDA_HOME/include -o libcupti_min.so cupti_min.c -ldl
 * (tests/gpu/ladder.sh does this). libcupti is opened with dlopen, never linked, so that the
 * process's own copy (a PyTorch wheel's) is the one used, as libxpu-cupti.so does.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cupti.h>

static struct {
	__typeof__(cuptiActivityRegisterCallbacks) *register_callbacks;
	__typeof__(cuptiActivityEnable) *enable;
	__typeof__(cuptiActivityGetNextRecord) *next_record;
	__typeof__(cuptiActivityGetNumDroppedRecords) *num_dropped;
	__typeof__(cuptiActivityFlushAll) *flush_all;
} fn;

static size_t buf_bytes = 8u << 20;
static uint64_t n_records, n_buffers, n_dropped;
static int verbose;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, buf_bytes);
	*size = *buffer ? buf_bytes : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
				      size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	uint64_t n = 0;
	size_t dropped = 0;

	if (buffer) {
		while (fn.next_record(buffer, valid, &rec) == CUPTI_SUCCESS)
			n++;
		__atomic_add_fetch(&n_records, n, __ATOMIC_RELAXED);
		__atomic_add_fetch(&n_buffers, 1, __ATOMIC_RELAXED);
	}
	if (fn.num_dropped(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped)
		__atomic_add_fetch(&n_dropped, dropped, __ATOMIC_RELAXED);
	free(buffer);
}

static void at_exit(void)
{
	fn.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (verbose)
		fprintf(stderr, "cupti_min: pid %d: %llu records in %llu buffers, %llu dropped\n",
			(int)getpid(), (unsigned long long)n_records,
			(unsigned long long)n_buffers, (unsigned long long)n_dropped);
}

static void *open_in(const char *dir)
{
	static const char *const names[] = { "libcupti.so.13", "libcupti.so.12" };
	char path[PATH_MAX];
	void *h;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!access(path, R_OK) && (h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
			return h;
	}
	return NULL;
}

/* libcupti next to a loaded CUDA library, or in the pip wheel layouts beside torch/lib */
static int near_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	void **h = data;
	const char *name = info->dlpi_name, *slash, *cut;
	char dir[PATH_MAX], alt[PATH_MAX + 32];

	if (!name || name[0] != '/' ||
	    (!strstr(name, "libcudart") && !strstr(name, "/nvidia/") && !strstr(name, "/torch/lib/")))
		return 0;
	slash = strrchr(name, '/');
	if ((size_t)(slash - name) >= sizeof(dir))
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - name), name);
	if ((*h = open_in(dir)))
		return 1;
	cut = strstr(dir, "/nvidia/");
	if (!cut)
		cut = strstr(dir, "/torch/lib");
	if (!cut)
		return 0;
	snprintf(alt, sizeof(alt), "%.*s/nvidia/cu13/lib", (int)(cut - dir), dir);
	if ((*h = open_in(alt)))
		return 1;
	snprintf(alt, sizeof(alt), "%.*s/nvidia/cuda_cupti/lib", (int)(cut - dir), dir);
	return (*h = open_in(alt)) != NULL;
}

static void *find_cupti(void)
{
	const char *env = getenv("XPU_CUPTI_LIB");
	void *h = NULL;

	if (env && *env)
		return dlopen(env, RTLD_NOW | RTLD_LOCAL);
	if ((h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD)) ||
	    (h = dlopen("libcupti.so.12", RTLD_NOW | RTLD_NOLOAD)))
		return h;
	dl_iterate_phdr(near_loaded, &h);
	if (h)
		return h;
	if ((h = open_in("/usr/local/cuda/extras/CUPTI/lib64")) || (h = open_in("/usr/local/cuda/lib64")))
		return h;
	if ((h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL)))
		return h;
	return dlopen("libcupti.so.12", RTLD_NOW | RTLD_LOCAL);
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
		CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMSET,
	};
	const char *env = getenv("CUPTI_MIN_BUFFER_MB");
	void *h;

	verbose = getenv("CUPTI_MIN_VERBOSE") && strcmp(getenv("CUPTI_MIN_VERBOSE"), "0");
	if (env && atoi(env) > 0 && atoi(env) <= 256)
		buf_bytes = (size_t)atoi(env) << 20;
	h = find_cupti();
	if (!h) {
		fprintf(stderr, "cupti_min: no libcupti found\n");
		return 1;
	}
	*(void **)&fn.register_callbacks = dlsym(h, "cuptiActivityRegisterCallbacks");
	*(void **)&fn.enable = dlsym(h, "cuptiActivityEnable");
	*(void **)&fn.next_record = dlsym(h, "cuptiActivityGetNextRecord");
	*(void **)&fn.num_dropped = dlsym(h, "cuptiActivityGetNumDroppedRecords");
	*(void **)&fn.flush_all = dlsym(h, "cuptiActivityFlushAll");
	if (!fn.register_callbacks || !fn.enable || !fn.next_record || !fn.num_dropped ||
	    !fn.flush_all) {
		fprintf(stderr, "cupti_min: libcupti lacks the activity API\n");
		return 1;
	}
	if (fn.register_callbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
		fprintf(stderr, "cupti_min: cuptiActivityRegisterCallbacks failed\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (fn.enable(kinds[i]) != CUPTI_SUCCESS)
			fprintf(stderr, "cupti_min: cannot enable activity kind %d\n", (int)kinds[i]);
	atexit(at_exit);
	return 1;
}
