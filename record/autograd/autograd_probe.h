/* SPDX-License-Identifier: MIT */
/*
 * Backward attribution's recording side, a handler of the process table: finds PyTorch
 * libraries as they are mapped, attaches the autograd probes of bpf/autograd.bpf.h to them, and
 * turns their events into AUTOGRAD_* records (an evaluation's class named from the files'
 * vtables, its nesting depth from the stack pointers).
 */
#ifndef XPU_RECORD_AUTOGRAD_PROBE_H
#define XPU_RECORD_AUTOGRAD_PROBE_H

#include <stdbool.h>
#include <stdint.h>

struct autograd_probe;
struct bpf_state;
struct map_handler;
struct walk_share;
struct writer_thread;

struct autograd_probe_stats {
	uint64_t files;			/* files probed */
	uint64_t unavailable;		/* PyTorch files that could not be probed */
	uint64_t evals;			/* AUTOGRAD_EVAL records written */
	uint64_t too_deep;		/* evaluations nested too deep to be written */
	uint64_t counters_located;	/* processes whose node counter BPF reads */
	uint64_t counters_unlocated;	/* processes whose node counter could not be read */
	uint64_t nodes_from_launch;	/* nodes given their op's launch stack */
	uint64_t nodes_launch_lost;	/* ... whose launch was not kept: written without a stack */
};

struct autograd_probe *autograd_probe__new(struct bpf_state *bpf, struct writer_thread *wt);
/* After the process table that it was added to. */
void autograd_probe__free(struct autograd_probe *ap);
/*
 * The process table's handler: a PyTorch library holding the autograd engine gets the probes
 * when first mapped (one of node classes is read too), each process's load biases of them are
 * kept; XPU_EV_AG_NODE and XPU_EV_AG_EVAL events become AUTOGRAD_* records. A node made by an
 * op that launched GPU work takes that launch's stack (bpf/autograd.bpf.h), which this handler
 * keeps from each complete launch record once the process's node counter is located (read from
 * the process at its first node event, retried while the loader has not filled it yet).
 */
struct map_handler *autograd_probe__handler(struct autograd_probe *ap);
/*
 * Each node counter's place given to BPF (ag_tls) is given to ws too (record/inproc_share.h).
 * Before the table's first call.
 */
void autograd_probe__set_walk_share(struct autograd_probe *ap, struct walk_share *ws);
/* Whether path names one of PyTorch's libraries that the handler reads (by its base name). */
bool autograd_probe__torch_library(const char *path);
void autograd_probe__get_stats(const struct autograd_probe *ap, struct autograd_probe_stats *st);

#endif
