/* SPDX-License-Identifier: MIT */
/*
 * Receiver for the injected CUPTI library: a unix socket in a private directory that accepts
 * connections only from processes of the traced tree (SO_PEERCRED), and hands their record
 * batches to the writer thread.
 */
#ifndef XPU_CUPTI_RX_H
#define XPU_CUPTI_RX_H

#include <stddef.h>
#include <sys/types.h>

struct writer_thread;
struct cupti_rx;

/* Returns nonzero when pid belongs to the traced tree. Called from the receiver's thread. */
typedef int (*cupti_rx_is_traced_fn)(void *ctx, pid_t pid);

/* Creates the socket and starts the receiver thread. NULL and one line in err on failure. */
struct cupti_rx *cupti_rx__start(struct writer_thread *wt, cupti_rx_is_traced_fn is_traced,
				 void *ctx, char *err, size_t errlen);
/* Path to export to the target as XPU_CUPTI_SOCKET. */
const char *cupti_rx__socket_path(const struct cupti_rx *rx);
/*
 * Stops accepting, waits up to timeout_ms for connected clients to finish their final flush,
 * drains what arrived, removes the socket and frees.
 */
void cupti_rx__stop(struct cupti_rx *rx, int timeout_ms);

#endif
