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
};

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
