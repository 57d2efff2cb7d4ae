/* SPDX-License-Identifier: MIT */
/*
 * Receiver for the injected CUPTI library: a unix socket in a private directory that accepts
 * connections only from processes of the traced tree (SO_PEERCRED), and hands their record
 * batches to the writer thread.
 */
#ifndef XPU_CUPTI_RX_H
#define XPU_CUPTI_RX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "inproc_share.h"

struct walk_share;
struct writer_thread;
struct cupti_rx;

/* Returns nonzero when pid belongs to the traced tree. Called from the receiver's thread. */
typedef int (*cupti_rx_is_traced_fn)(void *ctx, pid_t pid);

/* Creates the socket and starts the receiver thread. NULL and one line in err on failure. */
struct cupti_rx *cupti_rx__start(struct writer_thread *wt, cupti_rx_is_traced_fn is_traced,
				 void *ctx, char *err, size_t errlen);
/* Counters for the session's STATS record; cupti_rx__stop() returns the final ones. */
struct cupti_rx_stats {
	uint64_t clients;		/* XPU_STAT_CUPTI_CLIENTS */
	uint64_t rejected;		/* XPU_STAT_CUPTI_REJECTED */
	uint64_t batches;
	uint64_t records;
	uint64_t bad_messages;		/* malformed or out-of-protocol, dropped */
	uint64_t lost_messages;		/* sequence gaps: batches a client could not send */
	uint64_t clean_exits;		/* clients that sent DONE */
	uint64_t inproc_messages;	/* EVENTS messages with launches handed over */
	uint64_t inproc_launches;	/* launches walked in process, handed over */
	uint64_t inproc_dropped;	/* events of EVENTS messages dropped as malformed */
	uint64_t inproc_refused;	/* launches the sink had no room for (it counts them lost) */
	uint64_t shares;		/* clients given the in-process walk's tables (SHARE) */
	uint64_t shares_other_ns;	/* ... not: in another pid namespace */
	uint64_t share_errors;		/* ... not: the share could not be made or sent */
	/*
	 * GPU_GRAPH_NODE records passed on (issue 39): nodes made, of them those made outside a
	 * traced call (no capture stack: their work stays under the replay's), nodes copied
	 * (instantiation), nodes and exec graphs whose parameters changed (cudaGraphExecUpdate)
	 */
	uint64_t graph_nodes, graph_nodes_no_call, graph_clones, graph_updates;
	/*
	 * The sum of every client's last WALK_STATS, those that left too: the in-process walk's
	 * counters (cnt[] as the BPF counters) since the recording started.
	 */
	struct xpu_cupti_walk_stats walk;
};

/*
 * Where the in-process walk's messages go (common/walk_share.h), called from the receiver's
 * thread, pid the peer's own (SO_PEERCRED):
 *  - on_events: one EVENTS message's checked entries (record/inproc_events.h), launches of
 *    them GPU_LAUNCH; 0, or a negative errno when they were not taken (counted lost there);
 *  - on_inproc: where pid's library keeps its threads' autograd slots, nslots a power of two
 *    up to XPU_AG_INPROC_MAX_SLOTS; addr 0 when they are gone (the client left);
 *  - on_sync: at pid's DONE, before its DONE_ACK: returns once every EVENTS entry handed to
 *    on_events so far has been processed, at most timeout_ms (0 or a negative errno); NULL:
 *    the ack goes at once.
 */
struct cupti_rx_sink {
	int (*on_events)(void *ctx, uint32_t pid, const void *entries, size_t len,
			 uint32_t launches);
	void (*on_inproc)(void *ctx, uint32_t pid, uint64_t addr, uint32_t nslots);
	int (*on_sync)(void *ctx, uint32_t pid, int timeout_ms);
	void *ctx;
};

/*
 * Sets the sink (NULL: none; EVENTS then count as refused), from any thread: set it once the
 * drain thread runs, and stop the receiver before the drain.
 */
void cupti_rx__set_sink(struct cupti_rx *rx, const struct cupti_rx_sink *sink);

/*
 * Each client that checks in from then on gets ws's tables and its process's share
 * (XPU_CUPTI_MSG_SHARE), and walks its launches itself; NULL or never set: none does. ws
 * must outlive the receiver.
 */
void cupti_rx__set_walk_share(struct cupti_rx *rx, struct walk_share *ws);

/*
 * Asks every client (and any that checks in later) to stop collecting (STOP: its process may
 * run on) and waits up to timeout_ms for their DONE, while the recording still takes their
 * launches: called before the probes stop, so every kernel keeps its launch stack. Returns
 * the clients still open.
 */
int cupti_rx__stop_clients(struct cupti_rx *rx, int timeout_ms);
/* Path to export to the target as XPU_CUPTI_SOCKET. */
const char *cupti_rx__socket_path(const struct cupti_rx *rx);
/* A snapshot of the counters, from any thread. */
void cupti_rx__get_stats(struct cupti_rx *rx, struct cupti_rx_stats *st);
/*
 * Stops accepting, waits up to timeout_ms for connected clients to finish their final flush,
 * drains what arrived, stores the final counters (if final_stats), removes the socket, frees.
 */
void cupti_rx__stop(struct cupti_rx *rx, int timeout_ms, struct cupti_rx_stats *final_stats);

#endif
