/* SPDX-License-Identifier: MIT */
/*
 * Each thread's last launch whose walk reached the end of its stack, kept so that an autograd
 * node made by the same op (bpf/autograd.bpf.h: XPU_EV_AG_FROM_LAUNCH) gets that stack without
 * a walk of its own. Used by the ring-buffer thread only. Needs no root.
 */
#ifndef XPU_RECORD_AG_LAUNCH_CACHE_H
#define XPU_RECORD_AG_LAUNCH_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "xpu_bpf_abi.h"
#include "xpu_format.h"

struct ag_launch_cache;

/* One stack as a record carries it: user frames leaf first, then Python frames. */
struct ag_stack {
	uint64_t ips[XPU_BPF_MAX_UFRAMES + 1];
	uint16_t nr_user;
	uint64_t py[XPU_PY_MAX_FRAMES];
	uint16_t nr_py, py_flags;
};

struct ag_launch_cache *ag_launch_cache__new(void);
void ag_launch_cache__free(struct ag_launch_cache *c);
/* The launch of thread tid stamped ts: its user frames (leaf first) and Python frames. */
void ag_launch_cache__put(struct ag_launch_cache *c, uint32_t tid, uint64_t ts, const uint64_t *ips,
			  uint16_t nr_user, const uint64_t *py, uint16_t nr_py, uint16_t py_flags);
/*
 * The forward stack of a node set by the code at caller (the return address into
 * set_gradient_edge's caller) during the launch of thread tid stamped launch_ts, into out: the
 * caller first (in the place of a walked stack's probed function, which the report does not
 * show), then the launch's frames from the outermost down to the last of the op's library
 * (lib_start..lib_end, the mapping that holds caller), where the op's kernels began. False when
 * that launch is not the thread's last one kept (then nothing is known).
 */
bool ag_launch_cache__node_stack(const struct ag_launch_cache *c, uint32_t tid, uint64_t launch_ts,
				 uint64_t caller, uint64_t lib_start, uint64_t lib_end,
				 struct ag_stack *out);

#endif
