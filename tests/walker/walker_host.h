/* SPDX-License-Identifier: MIT */
/*
 * bpf/cfi_walk.bpf.h and bpf/py_walk.bpf.h run in user space (walker_host.c) against one
 * loaded snapshot: the maps xpu-record would fill are filled from it (CFI rows built from its
 * mapped files by record/cfi/cfi_build.c, the CPython layout by record/python/py_layout.c), and the
 * walkers' user-memory reads are served from it.
 */
#ifndef XPU_WALKER_HOST_H
#define XPU_WALKER_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

#define WALK_MAX_FRAMES 256		/* XPU_BPF_MAX_UFRAMES */

struct walk_native {
	uint64_t ips[WALK_MAX_FRAMES];
	uint32_t n;
	int outermost;
	uint64_t frames_by_fp;		/* XPU_CNT_CFI_FP_* and END_FP: frames without a row */
	uint64_t cache_hits;
};

struct walk_py_frame {
	uint64_t code;
	uint32_t instr;			/* instruction index | XPU_PY_EV_ENTRY */
	uint32_t firstlineno;
	char name[64];			/* co_name, read from the snapshot */
};

struct walk_py {
	int has_python;			/* a mapped file holds a CPython runtime */
	unsigned int version_hex;
	struct walk_py_frame frames[128];
	uint32_t n;
	uint32_t flags;			/* enum xpu_ev_py_flags */
};

/* 0, or negative errno with a line in err. */
int walker_host__load(const struct snapshot *s, char *err, size_t errlen);
void walker_host__unload(void);
/* cfi_walk_stack() from the snapshot's registers */
void walker_host__native(struct walk_native *out);
/* emit_pystack() for the snapshot's thread */
void walker_host__python(struct walk_py *out);
/*
 * The first address the walkers read that the process had mapped but the snapshot did not
 * keep (0: none): the walk then saw less than the kernel would have, and is not checked.
 */
uint64_t walker_host__missing(void);

/*
 * The walk's shared row cache (cfi_row_cache) on its own: the row packed as
 * kind | rbp_off8 << 8 | cfa_off << 16, and the entry an address and generation map to, which
 * a test may overwrite with half of another's to stand for a torn read.
 */
struct walk_cache_entry {
	uint64_t check, val;
};
void walker_host__cache_put(uint64_t pc, uint32_t gen, uint32_t row);
/* 1 and *row on a hit, else 0 */
int walker_host__cache_get(uint64_t pc, uint32_t gen, uint32_t *row);
struct walk_cache_entry *walker_host__cache_entry(uint64_t pc, uint32_t gen);

#endif
