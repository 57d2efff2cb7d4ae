// SPDX-License-Identifier: MIT
/* Loading libxpu-cupti.so into a running CUDA process (see gpu_attach.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpu_attach.h"
#include "maps_file.h"
#include "remote_call.h"

/* Time a thread may take to get to a safe stop, and each call (loading CUPTI takes a while). */
#define ATTACH_SEIZE_MS 3000
#define ATTACH_CALL_MS 20000

static int has_base_name(void *prefix, const struct maps_entry *e)
{
	const char *base = strrchr(e->path, '/');

	return base && !strncmp(base + 1, prefix, strlen(prefix));
}

/* Whether pid maps a file whose base name starts with prefix. */
static bool maps_file(pid_t pid, const char *prefix)
{
	return maps_file__each(pid, has_base_name, (void *)prefix) > 0;
}

int gpu_attach__inject(pid_t pid, const char *lib, const char *socket_path, char *err,
		       size_t errlen)
{
	struct remote_thread *t = NULL;
	uint64_t dlopen_fn, attach_fn, args[2], ret = 0;
	const char *base = strrchr(lib, '/') ? strrchr(lib, '/') + 1 : lib;
	char why[256] = "";
	bool loaded;
	int e;

	if (!maps_file(pid, "libcuda.so")) {
		snprintf(err, errlen, "pid %d has not loaded CUDA (libcuda.so): CPU only", (int)pid);
		return -ENOENT;
	}
	/* loaded by an earlier recording (or at launch): only its collection is started again */
	loaded = maps_file(pid, base);
	dlopen_fn = remote_sym(pid, "libc.so.6", "dlopen", why, sizeof(why));
	if (!dlopen_fn)
		dlopen_fn = remote_sym(pid, "libdl.so.2", "dlopen", why, sizeof(why));
	if (!dlopen_fn && !loaded) {
		snprintf(err, errlen, "no dlopen in pid %d: %s", (int)pid, why);
		return -ENOENT;
	}
	e = remote_thread__seize(pid, ATTACH_SEIZE_MS, &t, why, sizeof(why));
	if (e) {
		snprintf(err, errlen, "%s", why);
		return e;
	}
	if (!loaded) {
		args[0] = remote_thread__push_data(t, lib, strlen(lib) + 1);
		args[1] = RTLD_NOW | RTLD_LOCAL;
		e = args[0] ? remote_thread__call(t, dlopen_fn, args, 2, ATTACH_CALL_MS, &ret, why,
						  sizeof(why))
			    : -EIO;
		if (!e && !ret)
			e = -ENOEXEC;
		if (e) {
			snprintf(err, errlen, "dlopen(%s) in pid %d failed%s%s", lib, (int)pid,
				 why[0] ? ": " : "", why);
			goto out;
		}
	}
	attach_fn = remote_sym(pid, base, "xpu_cupti_attach", why, sizeof(why));
	if (!attach_fn) {
		snprintf(err, errlen, "xpu_cupti_attach not found in pid %d: %s", (int)pid, why);
		e = -ENOENT;
		goto out;
	}
	args[0] = remote_thread__push_data(t, socket_path, strlen(socket_path) + 1);
	e = args[0] ? remote_thread__call(t, attach_fn, args, 1, ATTACH_CALL_MS, &ret, why,
					  sizeof(why))
		    : -EIO;
	if (e) {
		snprintf(err, errlen, "starting CUPTI in pid %d: %s", (int)pid, why);
		goto out;
	}
	/* the call's int result, sign-extended */
	e = (int)(int32_t)ret;
	if (e == -EALREADY)
		snprintf(err, errlen, "pid %d already reports to a recorder (another xpu-record?)",
			 (int)pid);
	else if (e)
		snprintf(err, errlen, "CUPTI did not start in pid %d: %s%s", (int)pid, strerror(-e),
			 e == -EBUSY ? " (another CUPTI subscriber: Nsight, Kineto)" : "");
out:
	remote_thread__release(t);
	return e;
}
