/* SPDX-License-Identifier: MIT */
/*
 * The naming phase: every stack an output will print is named in one pass, with one progress
 * line ("naming frames"), after the session is set up and the profile aggregated and before
 * the output runs. The outputs then read the names (session__stack, profile__frames) and
 * never call the symbolizer; the folded way of a sample enters sym/ once, from here.
 */
#ifndef XPU_REPORT_MODEL_NAMING_H
#define XPU_REPORT_MODEL_NAMING_H

#include "model/profile.h"
#include "model/session.h"

/* The stacks an output draws (cmd/formats.c gives each format its set). */
enum naming_set {
	NAME_PROFILE = 1 << 0,		/* the profile's entries (launch stacks trimmed) */
	NAME_SAMPLES = 1 << 1,		/* the CPU samples the filter keeps */
	NAME_LAUNCHES = 1 << 2,		/* the launches the filter keeps, untrimmed */
	NAME_OFF_CPU = 1 << 3,		/* the off-CPU blocks the filter keeps */
	NAME_STOPS = 1 << 4,		/* where DWARF walks ended short (info's dwarf stops) */
	NAME_ALLOC_SITES = 1 << 5,	/* the launch stacks of the GPU allocations kept, trimmed */
	NAME_BACKWARD = 1 << 6,		/* launches of backward work: their forward sites */
	/* the launch stacks, trimmed, of the GPU work kept and of the API calls and syncs the
	 * filter keeps (text's launch sites and blocking calls) */
	NAME_GPU_SITES = 1 << 7,
	NAME_DSOS = 1 << 8,		/* every DSO's file looked up (info lists where it came from) */
	NAME_LAUNCH_SITES = 1 << 9,	/* the launches the filter keeps, trimmed (jsonl) */
	/*
	 * the capture launches of the graph work kept (model/gpu_graph.h), trimmed and not,
	 * wherever they fall: a replay inside --time-range may have been captured before it
	 */
	NAME_GRAPH_SITES = 1 << 10,
	/* the forward stacks of PyTorch's autograd nodes the filter keeps, untrimmed (archive) */
	NAME_AG_NODES = 1 << 11,
};

/*
 * Names the stacks of sets (enum naming_set) in s, and with NAME_PROFILE every entry of p,
 * then applies --dso to p (which needs the names). 0 or -ENOMEM.
 */
int session__name(struct session *s, struct profile *p, unsigned int sets);

#endif
