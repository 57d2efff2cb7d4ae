// SPDX-License-Identifier: MIT
/*
 * The program's own code and a launch's site by it (user_code.h): the rule, on paths and on
 * the frames of a named stack.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/user_code.h"
#include "sym/pyframes.h"

#define OWN 1
#define NOT_OWN 2
/* the kinds of file user_code.own caches, in the top bits of its second key */
#define K_NATIVE (1ull << 62)
#define K_PYTHON (2ull << 62)

static bool starts(const char *s, const char *pfx)
{
	return !strncmp(s, pfx, strlen(pfx));
}

/* "/lib/python3.12/", "/lib64/python3.11/": an interpreter's standard library, anywhere */
static bool in_stdlib(const char *path)
{
	const char *p;

	for (p = strstr(path, "/python"); p; p = strstr(p + 1, "/python"))
		if (p[7] >= '2' && p[7] <= '3' && p - path >= 4 &&
		    (!strncmp(p - 4, "/lib", 4) || (p - path >= 6 && !strncmp(p - 6, "/lib64", 6))))
			return true;
	return false;
}

/*
 * What installs frameworks: pip's directories, and the code frameworks generate at run time
 * (TorchInductor's output, Triton's launchers), which is theirs even though no package holds it.
 */
static bool framework_install(const char *path)
{
	return strstr(path, "/site-packages/") || strstr(path, "/dist-packages/") ||
	       strstr(path, "/torchinductor_") || strstr(path, "/.triton/") || in_stdlib(path);
}

static bool under(const char *path, const char *prefix, const char *sub)
{
	size_t n = strlen(prefix);

	return *prefix && !strncmp(path, prefix, n) && starts(path + n, sub);
}

bool user_code__python_file_own(const char *file, const char *prefix)
{
	/* "<frozen importlib._bootstrap>", "<string>" (dataclasses' generated methods), fx's
	 * "<eval_with_key>.3": the interpreter's or the framework's, never a file of the user */
	if (!file || !*file || file[0] == '<')
		return false;
	return !framework_install(file) && !under(file, prefix, "/lib/") &&
	       !under(file, prefix, "/lib64/");
}

/* The distribution's directories; /usr/local and /opt are the machine's own installs. */
static bool system_dir(const char *path)
{
	static const char *const dirs[] = {
		"/usr/lib", "/usr/bin/", "/usr/sbin/", "/usr/libexec/", "/lib/", "/lib32/",
		"/lib64/", "/libx32/", "/bin/", "/sbin/", "/snap/", "/usr/local/cuda",
		"/usr/local/nvidia/", "/opt/nvidia/", "/opt/rocm",
	};
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (starts(path, dirs[i]))
			return true;
	return false;
}

bool user_code__native_file_own(const char *path, bool main_binary, bool interpreter,
				const char *prefix)
{
	const char *base;

	if (!path || path[0] != '/')	/* "[vdso]", "[anon]", a path the trace lacks */
		return false;
	base = strrchr(path, '/') + 1;
	/* the profiler's own library is in no system directory, and never the program */
	if (interpreter || starts(base, "libxpu-"))
		return false;
	/* the program, wherever it is installed: /usr/bin/ffmpeg is ffmpeg's own */
	if (main_binary)
		return true;
	return !system_dir(path) && !framework_install(path) && !under(path, prefix, "/lib/") &&
	       !under(path, prefix, "/lib64/");
}

bool user_code__launch_stub(const char *name, const char *below)
{
	static const char *const pfx[] = { "__device_stub_", "__cudaLaunchKernel_helper",
					   "__cudaLaunch", "cudaLaunchKernel<",
					   "cudaLaunchKernelEx<", "cudaLaunchCooperativeKernel<" };
	const char *m;
	size_t i, len;

	for (i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (starts(name, pfx[i]))
			return true;
	/* the host stub: "matmul_kernel(...)" above "__device_stub__Z13matmul_kernelPKfS0_Pf" */
	if (!below || strncmp(below, "__device_stub__Z", 16))
		return false;
	len = strtoul(below + 16, (char **)&m, 10);
	return len && strlen(m) >= len && !strncmp(name, m, len) &&
	       (name[len] == '(' || name[len] == '<');
}

/* "libtorch_cuda.so+0x261502d", "[unknown]": a frame without a name here */
static bool unnamed_frame(const char *name)
{
	return !name || name[0] == '[' || strstr(name, "+0x");
}

void user_code__init(struct user_code *u, const struct session *s)
{
	memset(u, 0, sizeof(*u));
	u->s = s;
}

void user_code__free(struct user_code *u)
{
	strpool__free(&u->names);
	kmap__free(&u->own);
	kmap__free(&u->exe);
	kmap__free(&u->sites);
	free(u->cache);
}

/* The process's PY_RUNTIME (any status): its interpreter's DSO index + 1, 0 for none. */
static uint32_t interpreter(const struct trace *t, uint32_t pid)
{
	size_t i;

	for (i = t->npy_runtimes; i-- > 0;) {
		const uint32_t *d;

		if (t->py_runtimes[i].pid != pid)
			continue;
		d = kmap__get(&t->dso_ids, t->py_runtimes[i].dso_id, 0);
		return d ? *d + 1 : UINT32_MAX;
	}
	return 0;
}

/* "/usr" of "/usr/bin/python3.12", "/opt/conda" of "/opt/conda/lib/libpython3.11.so": the
 * interpreter's installation; "" when its path says none */
static void install_prefix(const char *path, char *buf, size_t size)
{
	const char *dir = strrchr(path, '/'), *p;

	buf[0] = '\0';
	if (!dir || dir == path)
		return;
	for (p = dir - 1; p > path && *p != '/'; p--)
		;
	if (p < path || *p != '/' || !(starts(p, "/bin/") || starts(p, "/lib/") ||
				       starts(p, "/lib64/")))
		return;
	if ((size_t)(p - path) < size)
		snprintf(buf, size, "%.*s", (int)(p - path), path);
}

/*
 * The main binary of pid in its exec image gen: the ELF file mapped lowest by the mappings of
 * that image. The kernel maps a program below its libraries and ld.so (0x400000, or PIE's
 * 0x55...), and the trace records no exec path: that is how the mappings tell it. DSO index + 1,
 * 0 when none.
 */
static uint32_t main_binary(struct user_code *u, uint32_t pid, uint32_t gen)
{
	const struct trace *t = u->s->t;
	const struct pid_maps *pm = maps__pid(&u->s->dsos.maps, pid);
	uint32_t *v, best = 0;
	bool ins;
	size_t i;

	v = kmap__put(&u->exe, pid, gen, 0, &ins);
	if (!v)
		return 0;
	if (!ins)
		return *v;
	/* sorted by start: the first ELF mapping of the image is the lowest */
	for (i = 0; pm && i < pm->n && !best; i++) {
		const struct xpu_rec_mapping *m = &pm->m[i];
		const uint32_t *d = kmap__get(&t->dso_ids, m->dso_id, 0);

		if (d && t->dsos[*d].rec.kind == XPU_DSO_ELF &&
		    trace__generation(t, pid, m->ts_ns) == gen)
			best = *d + 1;
	}
	*kmap__get(&u->exe, pid, gen) = best;
	return best;
}

const struct tr_dso *user_code__main_binary(struct user_code *u, uint32_t pid, uint32_t gen)
{
	uint32_t d = main_binary(u, pid, gen);

	return d ? &u->s->t->dsos[d - 1] : NULL;
}

static int native_own(struct user_code *u, uint32_t pid, uint64_t ts, uint32_t file)
{
	const struct trace *t = u->s->t;
	uint32_t gen = trace__generation(t, pid, ts), interp, exe, *v;
	const char *path = t->dsos[file - 1].path, *base;
	char prefix[1024];
	bool ins, is_exe, is_interp;

	v = kmap__put(&u->own, pid, K_NATIVE | (uint64_t)gen << 32 | file, 0, &ins);
	if (!v)
		return -ENOMEM;
	if (!ins)
		return *v == OWN;
	interp = interpreter(t, pid);
	exe = main_binary(u, pid, gen);
	is_exe = exe == file;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	/* a Python process's main binary is the interpreter, though it runs on libpython */
	is_interp = file == interp || (interp && is_exe && starts(base, "python"));
	install_prefix(interp && interp <= t->ndsos ? t->dsos[interp - 1].path : "", prefix,
		       sizeof(prefix));
	*v = t->dsos[file - 1].rec.kind == XPU_DSO_ELF &&
	     user_code__native_file_own(path, is_exe, is_interp, prefix) ? OWN : NOT_OWN;
	return *v == OWN;
}

static int python_own(struct user_code *u, uint32_t pid, uint64_t ip)
{
	const struct trace *t = u->s->t;
	const struct tr_py_code *c = trace__py_code(t, PYF_CODE(ip));
	uint32_t interp, *v;
	char prefix[1024];
	bool ins;

	if (!c)
		return 0;
	v = kmap__put(&u->own, pid, K_PYTHON | PYF_CODE(ip), 0, &ins);
	if (!v)
		return -ENOMEM;
	if (!ins)
		return *v == OWN;
	interp = interpreter(t, pid);
	install_prefix(interp && interp <= t->ndsos ? t->dsos[interp - 1].path : "", prefix,
		       sizeof(prefix));
	*v = user_code__python_file_own(trace__string(t, c->filename_str), prefix) ? OWN : NOT_OWN;
	return *v == OWN;
}

/*
 * The derived stack's Python frames, leaf first: the symbolizer names each tagged address as
 * one frame, in order, so the k-th Python frame of the named stack (from its leaf) is the k-th
 * here. The tagged address keeps the code object (the file) and, for launches, the line.
 */
static uint32_t python_ips(const struct session *s, uint32_t stack_id, const uint64_t **ips,
			   uint64_t *buf, uint32_t cap)
{
	const struct tr_stack *st = derived_stacks__get(&s->stacks, stack_id);
	uint32_t i, n = 0;

	*ips = buf;
	for (i = 0; st && i < st->nr_user && n < cap; i++) {
		uint64_t ip = st->ips[st->nr_kernel + i];

		if (PYF_IS(ip))
			buf[n++] = ip;
	}
	return n;
}

#define PY_IPS_MAX 1024

static int find_site(struct user_code *u, uint32_t pid, uint64_t ts, uint32_t stack_id,
		     struct user_site *out)
{
	const struct session *s = u->s;
	const struct strpool *pool = &s->pool;
	const uint32_t *f, *files;
	const uint64_t *py;
	uint64_t pybuf[PY_IPS_MAX];
	uint32_t n, i, npy, k = 0;
	char name[2 * XPU_PY_NAME_MAX_BYTES + 32];
	const char *site = NULL;
	int err, r;

	memset(out, 0, sizeof(*out));
	err = session__stack(s, pid, ts, stack_id, true, &f, &n);
	if (err)
		return err;
	files = session__files(s, f);
	for (i = n; i > 1 && user_code__launch_stub(strpool__str(pool, f[i - 1]),
						    i < n ? strpool__str(pool, f[i]) : NULL); i--)
		;
	out->nframes = i;
	out->op = i ? f[i - 1] : 0;
	/* an op this machine cannot name: the innermost frame it can (a Python one, say) */
	for (; i > 0 && unnamed_frame(strpool__str(pool, f[i - 1])); i--)
		;
	if (i > 0)
		out->op = f[i - 1];
	if (!n)
		return 0;
	npy = python_ips(s, stack_id, &py, pybuf, PY_IPS_MAX);
	/* frames past the op's are stubs; the Python ones among them (none) still count */
	for (i = n; i-- > 0 && !site;) {
		uint32_t file = files ? files[i] : 0;
		const char *fname = strpool__str(pool, f[i]);

		if (file && !strcmp(session__file_name(s, file), "[python]")) {
			if (k >= npy)
				break;	/* not the stack the frames came from: no Python site */
			r = python_own(u, pid, py[k]);
			if (r < 0)
				return r;
			if (r && i < out->nframes) {
				int len = pyframes__name(s->t, py[k], true, name, sizeof(name));

				if (len > 0)
					site = name;
			}
			k++;
			continue;
		}
		if (i >= out->nframes || !file || file > s->t->ndsos || unnamed_frame(fname))
			continue;
		r = native_own(u, pid, ts, file);
		if (r < 0)
			return r;
		if (r)
			site = fname;
	}
	out->own = site != NULL;
	if (!site)
		site = strpool__str(pool, out->op);
	out->site = strpool__intern(&u->names, site, strlen(site));
	return out->site ? 0 : -ENOMEM;
}

int user_code__stack(struct user_code *u, uint32_t pid, uint64_t ts, uint32_t stack_id,
		     struct user_site *out)
{
	uint32_t gen = trace__generation(u->s->t, pid, ts), *v;
	struct user_site z = { 0 };
	bool ins;
	int err;

	v = kmap__put(&u->sites, pid, (uint64_t)gen << 32 | stack_id, (uint32_t)u->ncache, &ins);
	if (!v || (ins && VEC_PUSH(u->cache, u->ncache, u->cache_cap, z)))
		return -ENOMEM;
	if (ins) {
		err = find_site(u, pid, ts, stack_id, &u->cache[*v]);
		if (err) {
			/* not cached: the next call finds it as unknown again */
			u->ncache--;
			*kmap__get(&u->sites, pid, (uint64_t)gen << 32 | stack_id) = UINT32_MAX;
			return err;
		}
	}
	if (*v == UINT32_MAX)
		return -ENOENT;
	*out = u->cache[*v];
	return 0;
}

int user_code__launch(struct user_code *u, size_t i, struct user_site *out)
{
	const struct xpu_rec_gpu_launch *l = &u->s->t->launches[i];

	return user_code__stack(u, l->pid, l->ts_ns, session__launch_stack(u->s, i), out);
}
