// SPDX-License-Identifier: MIT
/*
 * The BPF stack walkers as user code (walker_host.h): bpf_shim.h stands in for the kernel,
 * then bpf/py_walk.bpf.h and bpf/cfi_walk.bpf.h are included unchanged, in xpu.bpf.c's
 * order. The maps they declare are the plain structs libbpf's macros make of them; this file
 * gives them storage and answers the shim's lookups by their address.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpf_shim.h"
#include "py_walk.bpf.h"
#include "cfi_walk.bpf.h"

#include "cfi/cfi_build.h"
#include "python/py_layout.h"
#include "walker_host.h"
#include "xpu_format.h"

_Static_assert(WALK_MAX_FRAMES == XPU_BPF_MAX_UFRAMES, "walk_native.ips");
_Static_assert(sizeof(((struct walk_py *)0)->frames) / sizeof(struct walk_py_frame) ==
		       XPU_BPF_PY_MAX_FRAMES, "walk_py.frames");

__u64 shim_counters[XPU_CNT_NR];

enum shim_kind { SHIM_ARRAY, SHIM_HASH, SHIM_OF_MAPS };

struct shim_entry {
	void *key, *value;
};

/* One map: an array's values back to back, a hash's entries, or an outer map's inner maps. */
struct shim_map {
	const void *def;		/* the walker's map variable */
	enum shim_kind kind;
	size_t key_size, value_size, max;
	unsigned char *data;
	struct shim_entry *ents;
	size_t n;
	struct shim_map **inner;
};

#define MAX_ENTRIES(m) (sizeof(*(m).max_entries) / sizeof(int))
#define SHIM_MAP(m, k)                                                                     \
	{ .def = &(m), .kind = (k), .key_size = sizeof(*(m).key),                          \
	  .value_size = sizeof(*(m).value), .max = MAX_ENTRIES(m) }

static struct shim_map maps[] = {
	SHIM_MAP(cfi_procs, SHIM_HASH),
	SHIM_MAP(cfi_scratch, SHIM_ARRAY),
	SHIM_MAP(cfi_row_cache, SHIM_ARRAY),
	SHIM_MAP(py_procs, SHIM_HASH),
	SHIM_MAP(py_threads, SHIM_HASH),
	SHIM_MAP(py_scratch, SHIM_ARRAY),
	{ .def = &cfi_tables, .kind = SHIM_OF_MAPS, .key_size = sizeof(__u32),
	  .max = MAX_ENTRIES(cfi_tables) },
};
#define NR_MAPS (sizeof(maps) / sizeof(maps[0]))

static const struct snapshot *snap;
static struct task_struct task;
static __u64 clock_ns, missing;
static struct xpu_ev_pystack last_pystack;
static __u32 last_pystack_bytes;
static struct py_code_layout py_code;
static unsigned int py_version;
static int has_python;

static void shim_die(const char *what, const void *map)
{
	fprintf(stderr, "walker_host: %s on a map the shim does not know (%p)\n", what, map);
	abort();
}

static struct shim_map *find_map(const void *def)
{
	size_t i, t;

	for (i = 0; i < NR_MAPS; i++)
		if (maps[i].def == def)
			return &maps[i];
	/* an inner map is the value cfi_tables gave: its own shim_map */
	for (i = 0; i < NR_MAPS; i++)
		for (t = 0; maps[i].kind == SHIM_OF_MAPS && maps[i].inner && t < maps[i].max; t++)
			if (maps[i].inner[t] == def)
				return maps[i].inner[t];
	return NULL;
}

static struct shim_entry *hash_find(struct shim_map *m, const void *key)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!memcmp(m->ents[i].key, key, m->key_size))
			return &m->ents[i];
	return NULL;
}

void *shim_map_lookup(const void *map, const void *key)
{
	struct shim_map *m = find_map(map);
	struct shim_entry *e;
	__u32 k;

	if (!m)
		shim_die("lookup", map);
	switch (m->kind) {
	case SHIM_ARRAY:
		memcpy(&k, key, sizeof(k));
		return k < m->max && m->data ? m->data + (size_t)k * m->value_size : NULL;
	case SHIM_OF_MAPS:
		memcpy(&k, key, sizeof(k));
		return k < m->max && m->inner ? m->inner[k] : NULL;
	case SHIM_HASH:
		e = hash_find(m, key);
		return e ? e->value : NULL;
	}
	return NULL;
}

long shim_map_update(const void *map, const void *key, const void *value, __u64 flags)
{
	struct shim_map *m = find_map(map);
	struct shim_entry *e, *ents;

	if (!m)
		shim_die("update", map);
	if (m->kind != SHIM_HASH)
		shim_die("update of an array", map);
	e = hash_find(m, key);
	if ((e && flags == BPF_NOEXIST) || (!e && flags == BPF_EXIST))
		return e ? -EEXIST : -ENOENT;
	if (!e) {
		if (m->n == m->max)
			return -E2BIG;
		ents = realloc(m->ents, (m->n + 1) * sizeof(*ents));
		if (!ents)
			return -ENOMEM;
		m->ents = ents;
		e = &ents[m->n];
		e->key = malloc(m->key_size);
		e->value = malloc(m->value_size);
		if (!e->key || !e->value) {
			free(e->key);
			free(e->value);
			return -ENOMEM;
		}
		m->n++;
		memcpy(e->key, key, m->key_size);
	}
	memcpy(e->value, value, m->value_size);
	return 0;
}

long shim_ringbuf_output(const void *map, const void *data, __u64 size, __u64 flags)
{
	if (map != &events || size > sizeof(last_pystack))
		shim_die("ringbuf output", map);
	memcpy(&last_pystack, data, size);
	last_pystack_bytes = (__u32)size;
	return 0;
}

long shim_probe_read_user(void *dst, __u32 size, const void *src)
{
	int err = snapshot__mem(snap, (uint64_t)(uintptr_t)src, dst, size);

	if (err == -ENODATA && !missing)
		missing = (uint64_t)(uintptr_t)src;
	if (err) {
		memset(dst, 0, size);	/* as the kernel leaves a failed read's buffer */
		return -EFAULT;
	}
	return 0;
}

struct task_struct *shim_current_task(void)
{
	return &task;
}

__u64 shim_ktime_get_ns(void)
{
	return clock_ns += 1000;	/* a fixed clock: walks repeat exactly */
}

static void map_reset(struct shim_map *m)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		free(m->ents[i].key);
		free(m->ents[i].value);
	}
	free(m->ents);
	m->ents = NULL;
	m->n = 0;
	free(m->data);
	m->data = NULL;
	if (m->inner) {
		for (i = 0; i < m->max; i++)
			if (m->inner[i]) {
				free(m->inner[i]->data);
				free(m->inner[i]);
			}
		free(m->inner);
		m->inner = NULL;
	}
}

void walker_host__unload(void)
{
	size_t i;

	for (i = 0; i < NR_MAPS; i++)
		map_reset(&maps[i]);
	memset(shim_counters, 0, sizeof(shim_counters));
	snap = NULL;
	missing = 0;
	has_python = 0;
}

/*
 * One table in cfi_tables at index table: rows then page index, exactly as big as the inner
 * map load_rows() creates (so ASan sees a read past it), and the map entry pointing at it.
 */
static int add_table(struct shim_map *outer, uint32_t table, const struct cfi_table *t,
		     const struct snap_map *sm, uint64_t bias, struct xpu_cfi_map *out)
{
	struct shim_map *in = calloc(1, sizeof(*in));
	uint32_t *index = NULL, page0, npages;
	size_t slots;
	int err;

	if (!in)
		return -ENOMEM;
	err = cfi_table__index(t, &index, &page0, &npages);
	if (err) {
		free(in);
		return err;
	}
	slots = t->nr + (npages + 1) / 2;
	in->def = in;
	in->kind = SHIM_ARRAY;
	in->key_size = sizeof(__u32);
	in->value_size = sizeof(struct xpu_cfi_row);
	in->max = slots;
	in->data = malloc(slots * sizeof(struct xpu_cfi_row));
	if (!in->data) {
		free(index);
		free(in);
		return -ENOMEM;
	}
	memcpy(in->data, t->rows, t->nr * sizeof(*t->rows));
	memcpy(in->data + t->nr * sizeof(*t->rows), index, (npages + 1) / 2 * sizeof(*t->rows));
	free(index);
	outer->inner[table] = in;
	*out = (struct xpu_cfi_map){ .start = sm->start, .end = sm->end, .bias = bias,
				     .table = table, .nrows = (__u32)t->nr, .page0 = page0,
				     .npages = npages };
	return 0;
}

/* The file of an executable map, or for the vdso its kept bytes in a memfd (as the recorder). */
static int map_fd(const struct snap_map *m)
{
	int fd;

	if (m->path[0] == '/')
		return m->fd >= 0 ? dup(m->fd) : -ENOENT;
	if (strcmp(m->path, "[vdso]") || !m->data)
		return -ENOENT;
	fd = memfd_create("walker-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, m->data, m->end - m->start) != (ssize_t)(m->end - m->start)) {
		close(fd);
		return -EIO;
	}
	return fd;
}

/* cfi_procs' value for the snapshot's process: one table per executable map with CFI. */
static int load_cfi(char *err, size_t errlen)
{
	struct shim_map *outer = find_map(&cfi_tables);
	struct xpu_cfi_proc *proc = calloc(1, sizeof(*proc));
	uint32_t table = 0;
	size_t i;
	int ret = 0;

	outer->inner = calloc(outer->max, sizeof(*outer->inner));
	if (!proc || !outer->inner) {
		free(proc);
		return -ENOMEM;
	}
	for (i = 0; i < snap->nmaps && proc->nr < XPU_CFI_MAX_MAPS; i++) {
		const struct snap_map *m = &snap->maps[i];
		struct cfi_table t = { 0 };
		uint64_t bias;
		int fd;

		if (!(m->prot & SNAP_PROT_X))
			continue;
		fd = map_fd(m);
		if (fd < 0)
			continue;
		ret = cfi_table__build(fd, &t);
		close(fd);
		if (ret || !t.nr || cfi_table__bias(&t, m->start, m->pgoff, &bias)) {
			cfi_table__free(&t);
			ret = 0;	/* no table: the walk steps by frame pointer here, as live */
			continue;
		}
		ret = add_table(outer, table, &t, m, bias, &proc->maps[proc->nr]);
		cfi_table__free(&t);
		if (ret) {
			snprintf(err, errlen, "cfi table of %s: %s", m->path, strerror(-ret));
			break;
		}
		table++;
		proc->nr++;
	}
	proc->gen = 1;
	if (!ret)
		ret = (int)shim_map_update(&cfi_procs, &snap->pid, proc, BPF_ANY);
	free(proc);
	return ret;
}

/* py_procs' value, when a mapped file holds a CPython runtime (as record/python/py_procs.c). */
static int load_python(char *err, size_t errlen)
{
	struct py_elf_info info;
	struct xpu_py_layout l;
	uint64_t bias;
	size_t i;

	for (i = 0; i < snap->nmaps; i++) {
		const struct snap_map *m = &snap->maps[i];

		if (m->fd < 0 || !strstr(m->path, "python") ||
		    py_layout__probe(m->fd, m->path, &info) != 1 ||
		    py_layout__bias(&info, m->start, m->pgoff, &bias))
			continue;
		if (info.status != XPU_PY_SUPPORTED) {
			snprintf(err, errlen, "%s: CPython %x not supported (status %u)", m->path,
				 info.version_hex, info.status);
			return -ENOTSUP;
		}
		l = info.walk;
		l.runtime_addr = bias + info.runtime_vaddr;
		py_code = info.code;
		py_version = info.version_hex;
		has_python = 1;
		return (int)shim_map_update(&py_procs, &snap->pid, &l, BPF_ANY);
	}
	return 0;
}

int walker_host__load(const struct snapshot *s, char *err, size_t errlen)
{
	size_t i;
	int ret;

	walker_host__unload();
	snap = s;
	for (i = 0; i < NR_MAPS; i++) {
		if (maps[i].kind != SHIM_ARRAY)
			continue;
		maps[i].data = calloc(maps[i].max, maps[i].value_size);
		if (!maps[i].data)
			return -ENOMEM;
	}
	memset(&task, 0, sizeof(task));
	task.regs.ip = s->ip;
	task.regs.sp = s->sp;
	task.regs.bp = s->bp;
	task.thread.fsbase = s->fsbase;
	snprintf(err, errlen, "?");
	ret = load_cfi(err, errlen);
	if (!ret)
		ret = load_python(err, errlen);
	return ret;
}

void walker_host__native(struct walk_native *out)
{
	__u64 ips[XPU_BPF_MAX_UFRAMES];
	__u32 uflags = 0;

	memset(out, 0, sizeof(*out));
	memset(shim_counters, 0, sizeof(shim_counters));
	out->n = cfi_walk_stack(0, snap->pid, ips, &uflags);
	memcpy(out->ips, ips, out->n * sizeof(ips[0]));
	out->outermost = !!(uflags & XPU_EV_U_OUTERMOST);
	out->frames_by_fp = shim_counters[XPU_CNT_CFI_FP_NO_MAP] +
			    shim_counters[XPU_CNT_CFI_FP_NO_TABLE] +
			    shim_counters[XPU_CNT_CFI_FP_NO_ROW] +
			    shim_counters[XPU_CNT_CFI_FP_UNSUPPORTED];
	out->cache_hits = shim_counters[XPU_CNT_CFI_CACHE_HITS];
}

/* co_name of the code object at code, when it is a compact ASCII string (ours are) */
static void code_name(uint64_t code, char *name, size_t len)
{
	uint64_t str = 0, slen = 0;
	uint32_t state = 0;

	snprintf(name, len, "?");
	if (snapshot__mem(snap, code + py_code.co_name, &str, 8) ||
	    snapshot__mem(snap, str + py_code.str_length, &slen, 8) ||
	    snapshot__mem(snap, str + py_code.str_state, &state, 4))
		return;
	/* PyASCIIObject.state: interned:2, kind:3, compact:1, ascii:1 (3.10-3.13) */
	if (!(state & 1u << 5) || !(state & 1u << 6) || slen >= len)
		return;
	if (snapshot__mem(snap, str + py_code.ascii_data, name, slen))
		snprintf(name, len, "?");
	else
		name[slen] = 0;
}

/*
 * The first line of the code object at code, read from the snapshot, when the walk's
 * fingerprint is that object's (first line and file name); else ~0u, which no frame has.
 */
static uint32_t code_first_line(uint64_t code, uint32_t fingerprint)
{
	uint64_t filename = 0;
	int32_t first = 0;

	if (snapshot__mem(snap, code + py_code.co_firstlineno, &first, sizeof(first)) ||
	    snapshot__mem(snap, code + py_code.co_filename, &filename, sizeof(filename)) ||
	    xpu_py_code_fingerprint((uint32_t)first, filename) != fingerprint)
		return ~0u;
	return (uint32_t)first;
}

void walker_host__python(struct walk_py *out)
{
	__u32 i;

	memset(out, 0, sizeof(*out));
	out->has_python = has_python;
	out->version_hex = py_version;
	last_pystack_bytes = 0;
	if (!has_python)
		return;
	emit_pystack(0, snap->pid, snap->tid, 0, XPU_EV_SAMPLE);
	if (!last_pystack_bytes)
		return;
	out->n = last_pystack.nr;
	out->flags = last_pystack.flags;
	for (i = 0; i < out->n && i < XPU_BPF_PY_MAX_FRAMES; i++) {
		out->frames[i].code = last_pystack.frames[i].code;
		out->frames[i].instr = last_pystack.frames[i].instr;
		out->frames[i].firstlineno = code_first_line(out->frames[i].code,
							     last_pystack.frames[i].fingerprint);
		code_name(out->frames[i].code, out->frames[i].name, sizeof(out->frames[i].name));
	}
}

uint64_t walker_host__missing(void)
{
	return missing;
}

/* the cache's storage, also without a loaded snapshot (the cache tests load none) */
static void cache_ready(void)
{
	struct shim_map *m = find_map(&cfi_row_cache);

	if (m && !m->data)
		m->data = calloc(m->max, m->value_size);
	if (!m || !m->data)
		shim_die("allocation", &cfi_row_cache);
}

static struct xpu_cfi_row unpack_row(uint32_t packed)
{
	struct xpu_cfi_row r = { .kind = (__u8)packed, .rbp_off8 = (__s8)(packed >> 8),
				 .cfa_off = (__u16)(packed >> 16) };
	return r;
}

void walker_host__cache_put(uint64_t pc, uint32_t gen, uint32_t row)
{
	struct xpu_cfi_row r = unpack_row(row);

	cache_ready();
	cfi_cache_put(pc, gen, &r);
}

int walker_host__cache_get(uint64_t pc, uint32_t gen, uint32_t *row)
{
	struct xpu_cfi_row r;

	cache_ready();
	if (!cfi_cache_get(pc, gen, &r))
		return 0;
	*row = (uint32_t)r.kind | (uint32_t)(uint8_t)r.rbp_off8 << 8 | (uint32_t)r.cfa_off << 16;
	return 1;
}

struct walk_cache_entry *walker_host__cache_entry(uint64_t pc, uint32_t gen)
{
	__u32 k = cfi_cache_index(pc, gen);

	_Static_assert(sizeof(struct walk_cache_entry) == sizeof(struct cfi_cache_entry), "entry");
	cache_ready();
	return shim_map_lookup(&cfi_row_cache, &k);
}
