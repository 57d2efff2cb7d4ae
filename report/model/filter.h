/* SPDX-License-Identifier: MIT */
/*
 * The one filter of a report: --pid, --tid, --comm and --time-range, decided here for every
 * output and table alike. A GPU record's thread is its launching thread (gpu_join.h).
 */
#ifndef XPU_REPORT_MODEL_FILTER_H
#define XPU_REPORT_MODEL_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#include "model/opts.h"
#include "trace/trace.h"

#define FILTER_MAX_COMMS 64
#define FILTER_MAX_RANKS 64

struct filter {
	const struct trace *t;
	const uint32_t *pids;
	int npids;
	bool has_tid;
	uint32_t tid;
	char *comm_buf;			/* --comm, split at the commas */
	const char *comms[FILTER_MAX_COMMS];
	int ncomms;
	bool has_range;
	uint64_t r0, r1;		/* --time-range in monotonic ns, inclusive */
	/* multi-trace: --host (like --comm, split at the commas) and --rank */
	char *host_buf;
	const char *hosts[FILTER_MAX_COMMS];
	int nhosts;
	int32_t ranks[FILTER_MAX_RANKS];
	int nranks;
};

/* Whether s is a --rank list: N[,N...], at most FILTER_MAX_RANKS numbers >= 0. */
bool filter__ranks_ok(const char *s);

/* 0, -EINVAL (more than FILTER_MAX_COMMS names, or an empty one) or -ENOMEM. */
int filter__init(struct filter *f, const struct trace *t, const struct report_opts *o);
/* Whether any option filters. */
bool filter__active(const struct filter *f);
/*
 * Whether pid/tid pass --pid, --tid, --comm, --host (the host of its trace) and --rank (its
 * RANK, or its nearest ancestor's; none known: it does not pass). --comm names a process (its latest name) or
 * a thread (its latest name); a record without a thread (tid 0) passes on its process.
 */
bool filter__task(const struct filter *f, uint32_t pid, uint32_t tid);
/* A record of a whole process (GPU device or CUPTI state): passes --tid when its process does. */
bool filter__process(const struct filter *f, uint32_t pid);
/* A point event (sample, launch): the task, and ts inside --time-range. */
bool filter__at(const struct filter *f, uint32_t pid, uint32_t tid, uint64_t ts);
/* An interval (API call, GPU work, NVTX range): the task, and overlapping --time-range. */
bool filter__span(const struct filter *f, uint32_t pid, uint32_t tid, uint64_t start,
		  uint64_t end);
void filter__free(struct filter *f);

#endif
