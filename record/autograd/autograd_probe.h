/* SPDX-License-Identifier: MIT */
/*
 * Backward attribution's recording side: finds PyTorch libraries as they are mapped, attaches
 * the autograd probes of bpf/autograd.bpf.h to them, and turns their events into AUTOGRAD_*
 * records (an evaluation's class named from the files' vtables, its nesting depth from the
 * stack pointers). Owned by the drain thread.
 */
#ifndef XPU_RECORD_AUTOGRAD_PROBE_H
#define XPU_RECORD_AUTOGRAD_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "xpu_bpf_abi.h"

struct autograd_probe;
struct bpf_state;
struct writer_thread;

struct autograd_probe_stats {
	uint64_t files;			/* files probed */
	uint64_t unavailable;		/* PyTorch files that could not be probed */
	uint64_t evals;			/* AUTOGRAD_EVAL records written */
	uint64_t too_deep;		/* evaluations nested too deep to be written */
	uint64_t counters_located;	/* processes whose node counter BPF reads */
	uint64_t counters_unlocated;	/* processes whose node counter could not be read */
};

struct autograd_probe *autograd_probe__new(struct bpf_state *bpf, struct writer_thread *wt);
/*
 * A file newly mapped by pid (dso_id its DSO record; fd readable; map_path a path the kernel
 * resolves to it, such as /proc/PID/map_files/RANGE): probed when it is a PyTorch library
 * holding the autograd engine. Does not take fd.
 */
void autograd_probe__file(struct autograd_probe *ap, pid_t pid, uint32_t dso_id, int fd,
			  const char *path, const char *map_path, uint64_t ts_ns);
/* A mapping of pid's: where a file of node classes (libtorch_python) is loaded in it. */
void autograd_probe__mapping(struct autograd_probe *ap, pid_t pid, uint32_t dso_id,
			     uint64_t start, uint64_t pgoff);
/*
 * A node event of pid's: once its PyTorch is loaded and relocated, tells BPF where pid's node
 * counter is, so that nodes made by an op that launched GPU work take their stack from its
 * launch (bpf/autograd.bpf.h). Cheap when already done.
 */
void autograd_probe__locate_counter(struct autograd_probe *ap, pid_t pid, uint64_t ts_ns);
/* Whether pid's node counter is located (its launches are worth keeping for nodes). */
bool autograd_probe__counter_located(const struct autograd_probe *ap, pid_t pid);
/* pid exec'd or exited. */
void autograd_probe__forget(struct autograd_probe *ap, pid_t pid);
void autograd_probe__on_eval(struct autograd_probe *ap, const struct xpu_ev_ag_eval *ev);
/* A thread ended: forgets its evaluations. */
void autograd_probe__thread_exit(struct autograd_probe *ap, uint32_t tid);
void autograd_probe__get_stats(const struct autograd_probe *ap, struct autograd_probe_stats *st);
void autograd_probe__free(struct autograd_probe *ap);

#endif
