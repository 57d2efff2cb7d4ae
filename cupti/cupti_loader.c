// SPDX-License-Identifier: MIT
/*
 * Finds the libcupti of the target and resolves what we use with dlsym. We never link libcupti:
 * PyTorch wheels bring their own copy, and two CUPTI copies in one process fight over the same
 * driver callbacks. So prefer one already loaded, then one next to the CUDA libraries the
 * process loaded, then the toolkit's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xpu_cupti.h"

struct cupti_fns cupti;

static const char *const sonames[] = { "libcupti.so.13", "libcupti.so.12", "libcupti.so" };

static void *try_open(const char *path, int flags)
{
	void *h = dlopen(path, flags);

	if (h)
		xc_info("using %s", path);
	return h;
}

/* libcupti*.so* in dir, newest soname first. */
static void *try_dir(const char *dir)
{
	char path[PATH_MAX];
	size_t i;
	void *h;

	for (i = 0; i < sizeof(sonames) / sizeof(sonames[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, sonames[i]);
		if (access(path, R_OK))
			continue;
		h = try_open(path, RTLD_NOW | RTLD_LOCAL);
		if (h)
			return h;
	}
	return NULL;
}

struct near_ctx {
	void *handle;
};

/*
 * For each loaded CUDA library (libcudart, libcuda, torch's libs, anything in a pip "nvidia/"
 * tree), look for libcupti in its directory and in the wheel layouts next to it:
 * nvidia/cuda_cupti/lib (cu12 wheels) and nvidia/cu13/lib (cu13 wheels).
 */
static int near_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct near_ctx *ctx = data;
	const char *name = info->dlpi_name;
	char dir[PATH_MAX], alt[PATH_MAX + 64];
	const char *slash, *nv;

	if (ctx->handle || !name || name[0] != '/')
		return ctx->handle != NULL;
	if (!strstr(name, "libcudart") && !strstr(name, "libcuda.so") && !strstr(name, "/nvidia/") &&
	    !strstr(name, "/torch/lib/"))
		return 0;
	slash = strrchr(name, '/');
	if ((size_t)(slash - name) >= sizeof(dir))
		return 0;
	memcpy(dir, name, slash - name);
	dir[slash - name] = '\0';
	ctx->handle = try_dir(dir);
	if (ctx->handle)
		return 1;
	nv = strstr(dir, "/nvidia/");
	if (!nv) {
		/* .../site-packages/torch/lib -> .../site-packages/nvidia/... */
		nv = strstr(dir, "/torch/lib");
		if (!nv)
			return 0;
		snprintf(alt, sizeof(alt), "%.*s/nvidia/cuda_cupti/lib", (int)(nv - dir), dir);
		ctx->handle = try_dir(alt);
		if (!ctx->handle) {
			snprintf(alt, sizeof(alt), "%.*s/nvidia/cu13/lib", (int)(nv - dir), dir);
			ctx->handle = try_dir(alt);
		}
		return ctx->handle != NULL;
	}
	snprintf(alt, sizeof(alt), "%.*s/nvidia/cuda_cupti/lib", (int)(nv - dir), dir);
	ctx->handle = try_dir(alt);
	if (!ctx->handle) {
		snprintf(alt, sizeof(alt), "%.*s/nvidia/cu13/lib", (int)(nv - dir), dir);
		ctx->handle = try_dir(alt);
	}
	return ctx->handle != NULL;
}

static void *find_cupti(void)
{
	struct near_ctx ctx = { 0 };
	const char *env;
	char dir[PATH_MAX];
	size_t i;
	void *h;

	/* an explicit choice wins (also how the tests load a mock) */
	env = getenv("XPU_CUPTI_LIB");
	if (env && *env)
		return try_open(env, RTLD_NOW | RTLD_LOCAL);

	for (i = 0; i < 2; i++) {
		h = dlopen(sonames[i], RTLD_NOW | RTLD_NOLOAD);
		if (h) {
			xc_info("using the already loaded %s", sonames[i]);
			return h;
		}
	}
	dl_iterate_phdr(near_cb, &ctx);
	if (ctx.handle)
		return ctx.handle;
	env = getenv("CUDA_HOME");
	if (env && *env) {
		snprintf(dir, sizeof(dir), "%s/extras/CUPTI/lib64", env);
		if ((h = try_dir(dir)))
			return h;
		snprintf(dir, sizeof(dir), "%s/lib64", env);
		if ((h = try_dir(dir)))
			return h;
	}
	if ((h = try_dir("/usr/local/cuda/extras/CUPTI/lib64")))
		return h;
	if ((h = try_dir("/usr/local/cuda/lib64")))
		return h;
	for (i = 0; i < sizeof(sonames) / sizeof(sonames[0]); i++)
		if ((h = try_open(sonames[i], RTLD_NOW | RTLD_LOCAL)))
			return h;
	return NULL;
}

#define RESOLVE(field, required)                                                           \
	do {                                                                               \
		*(void **)&cupti.field = dlsym(h, #field);                                 \
		if (!cupti.field && (required)) {                                          \
			xc_log("%s has no %s: no GPU data for pid %d", cupti.path, #field, \
			       (int)getpid());                                             \
			memset(&cupti, 0, sizeof(cupti));                                  \
			return -ENOENT;                                                    \
		}                                                                          \
	} while (0)

int cupti_loader__load(void)
{
	struct link_map *lm = NULL;
	void *h;

	if (cupti.handle)
		return 0;
	h = find_cupti();
	if (!h) {
		xc_log("no libcupti found (set XPU_CUPTI_LIB or CUDA_HOME): no GPU data for pid %d",
		       (int)getpid());
		return -ENOENT;
	}
	if (!dlinfo(h, RTLD_DI_LINKMAP, &lm) && lm && lm->l_name)
		snprintf(cupti.path, sizeof(cupti.path), "%s", lm->l_name);
	else
		snprintf(cupti.path, sizeof(cupti.path), "libcupti");

	RESOLVE(cuptiGetVersion, true);
	RESOLVE(cuptiGetResultString, true);
	RESOLVE(cuptiSubscribe, true);
	RESOLVE(cuptiEnableCallback, true);
	RESOLVE(cuptiGetCallbackName, true);
	RESOLVE(cuptiActivityEnable, true);
	RESOLVE(cuptiActivityDisable, true);
	RESOLVE(cuptiActivityRegisterCallbacks, true);
	RESOLVE(cuptiActivityGetNextRecord, true);
	RESOLVE(cuptiActivityGetNumDroppedRecords, true);
	RESOLVE(cuptiActivityFlushAll, true);
	RESOLVE(cuptiActivityFlushPeriod, true);
	RESOLVE(cuptiActivityRegisterTimestampCallback, true);
	RESOLVE(cuptiGetTimestamp, true);
	RESOLVE(cuptiSetThreadIdType, true);
	RESOLVE(cuptiSubscribe_v2, false);
	RESOLVE(cuptiActivityEnableRuntimeApi, false);
	RESOLVE(cuptiActivityEnableDriverApi, false);
	RESOLVE(cuptiUnsubscribe, false);
	RESOLVE(cuptiFinalize, false);
	RESOLVE(cuptiActivityEnableHWTrace, false);
	RESOLVE(cuptiGetStreamIdEx, false);
	RESOLVE(cuptiGetContextId, false);
	RESOLVE(cuptiGetGraphNodeId, false);
	RESOLVE(cuptiGetGraphId, false);
	RESOLVE(cuptiGetGraphExecId, false);
	RESOLVE(InitializeInjectionNvtx2, false);
	cupti.handle = h;
	return 0;
}

const char *cupti_loader__strerror(CUptiResult r)
{
	const char *s = NULL;

	if (cupti.cuptiGetResultString && cupti.cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}
