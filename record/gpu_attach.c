// SPDX-License-Identifier: MIT
/* Loading libxpu-cupti.so into a running CUDA process (see gpu_attach.h). */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* The parent pid of pid from /proc/PID/stat (its comm may hold spaces and parentheses). */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *close;
	FILE *f;
	int ppid = 0;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	close = strrchr(buf, ')');
	if (!close || sscanf(close + 1, " %*c %d", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

struct proc_link {
	pid_t pid, ppid;
};

/* Every process and its parent, from one pass over /proc; NULL (and *n 0) if none was read. */
static struct proc_link *read_links(size_t *n)
{
	struct proc_link *l = NULL, *grown;
	size_t cap = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		pid_t p = (pid_t)atoi(de->d_name), pp;

		if (p <= 0 || !(pp = parent_of(p)))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 1024;
			grown = realloc(l, cap * sizeof(*l));
			if (!grown)
				break;
			l = grown;
		}
		l[(*n)++] = (struct proc_link){ p, pp };
	}
	closedir(d);
	return l;
}

/*
 * The children and grandchildren of pid (a launcher's ranks: torchrun's agent's, or under a
 * shell in between) that have loaded CUDA, as "; its descendant 12 has loaded it: ..." for the
 * error: -p of a launcher or its shell records none of its ranks' GPU work, which is what was
 * meant. Empty if there are none.
 */
#define HINT_MAX 8
#define HINT_CHILDREN 64

static void cuda_children(pid_t pid, char *out, size_t size)
{
	pid_t children[HINT_CHILDREN], found[HINT_MAX];
	char list[HINT_MAX * 12];
	size_t n, nchildren = 0, nfound = 0, i, k, len;
	struct proc_link *l = read_links(&n);

	out[0] = 0;
	for (i = 0; i < n; i++)
		if (l[i].ppid == pid && nchildren < HINT_CHILDREN)
			children[nchildren++] = l[i].pid;
	for (i = 0; i < n && nfound < HINT_MAX; i++) {
		bool under = l[i].ppid == pid;

		for (k = 0; !under && k < nchildren; k++)
			under = l[i].ppid == children[k];
		if (under && maps_file(l[i].pid, "libcuda.so"))
			found[nfound++] = l[i].pid;
	}
	free(l);
	if (!nfound)
		return;
	for (k = 0, len = 0; k < nfound && len < sizeof(list); k++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", k ? "," : "",
					(int)found[k]);
	snprintf(out, size, "; %s %s %s loaded it: -p %s records %s GPU work",
		 nfound > 1 ? "its descendants" : "its descendant", list, nfound > 1 ? "have" : "has",
		 list, nfound > 1 ? "their" : "its");
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
		char hint[256];

		cuda_children(pid, hint, sizeof(hint));
		snprintf(err, errlen, "pid %d has not loaded CUDA (libcuda.so): CPU only%s", (int)pid,
			 hint);
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
