/* SPDX-License-Identifier: MIT */
/*
 * How much of a report's backward work (PyTorch autograd evaluations, see sym/backward.h) went
 * under the forward code that caused it, for the text header and info.
 */
#ifndef XPU_REPORT_MODEL_BACKWARD_SHARE_H
#define XPU_REPORT_MODEL_BACKWARD_SHARE_H

#include <stdint.h>
#include <stdio.h>

#include "model/session.h"

struct backward_share {
	uint64_t gpu_ns, gpu_attributed_ns;	/* GPU work launched inside an evaluation */
};

/* Over the GPU work the session's filter keeps. 0 or -ENOMEM. */
int backward_share__compute(const struct session *s, struct backward_share *b);
/*
 * For GPU work launched by launch (an index into the trace's launches) inside an evaluation:
 * the node's frame name ("[backward] MmBackward0") and the forward site, the innermost Python
 * frame of the forward stack ("mlp (model.py)", or the frame above the node's without Python).
 * 1 when found, 0 when the launch is not backward work put under a forward stack, -ENOMEM.
 */
int backward_share__site(const struct session *s, size_t launch, const char **node,
			 const char **site);
/*
 * The header lines: what share of backward work is under its forward stack, and each
 * PyTorch library that could not be probed (why). Nothing for a trace without autograd.
 */
int backward_share__print(const struct session *s, FILE *out, const char *prefix, const char *cont);

#endif
