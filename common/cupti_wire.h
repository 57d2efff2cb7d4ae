/* SPDX-License-Identifier: MIT */
/*
 * Wire protocol between the injected CUPTI library (libxpu-cupti.so, inside each target process)
 * and the recorder (record/cupti_rx.c). format-spec/cupti-wire.md is the prose for it.
 *
 * Transport: a SOCK_SEQPACKET unix socket at $XPU_CUPTI_SOCKET, so every send() is one message
 * and message boundaries survive without framing of our own. Both ends are the same build of
 * xpu-perf on the same host, so the byte order is the host's (little-endian everywhere we run).
 *
 * Every message: struct xpu_cupti_msg_header, then len payload bytes.
 *   HELLO  first message of a connection; payload struct xpu_cupti_hello
 *   BATCH  payload is records in file layout (struct xpu_record_header + body, size a multiple
 *          of 8), string ids local to this connection and defined (XPU_REC_STRING) earlier in
 *          the same connection than their first use
 *   DONE   last message; payload struct xpu_cupti_done. Anything after it is ignored.
 */
#ifndef XPU_CUPTI_WIRE_H
#define XPU_CUPTI_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "xpu_format.h"

#define XPU_CUPTI_WIRE_MAGIC 0x31574358u	/* "XCW1" read as little-endian bytes */
/* 2: PROCESS_ENV records; 3: the in-process walk; 4: GPU_GRAPH_NODE records (an older
 * recorder would drop each batch holding one); 5: WALK_STATS times one launch in 16; 6: it
 * counts the walks that took frames from the thread's last walk */
#define XPU_CUPTI_WIRE_VERSION 6
#define XPU_CUPTI_SOCKET_ENV "XPU_CUPTI_SOCKET"

/*
 * Largest message either side sends or accepts. A unix SEQPACKET send fails with EMSGSIZE when a
 * message exceeds the socket's send buffer (about 208 KiB by default, net.core.wmem_default), so
 * stay well below it rather than depend on raising SO_SNDBUF.
 */
#define XPU_CUPTI_MSG_MAX_BYTES (128u << 10)

enum xpu_cupti_msg_type {
	XPU_CUPTI_MSG_HELLO = 1,
	XPU_CUPTI_MSG_BATCH = 2,
	XPU_CUPTI_MSG_DONE = 3,
	/*
	 * Recorder to library, no payload: stop collecting (callbacks off, activity off, last
	 * flush, DONE) and leave the process running at its own speed: the recording ended
	 * before the process did (xpu-record -p, -d).
	 */
	XPU_CUPTI_MSG_STOP = 4,
	/* the in-process launch walk (common/walk_share.h has the payloads) */
	XPU_CUPTI_MSG_SHARE = 5,	/* recorder to library: the tables, two descriptors */
	XPU_CUPTI_MSG_EVENTS = 6,	/* library to recorder: launches walked in process */
	XPU_CUPTI_MSG_INPROC = 7,	/* library to recorder: where its autograd slots are */
	XPU_CUPTI_MSG_WALK_STATS = 8,	/* library to recorder: the walk's counters */
	/*
	 * Recorder to library, no payload, the answer to DONE: every EVENTS launch before the
	 * DONE has been taken. A library that walked in process waits for it (bounded) before
	 * it returns to its exit, so that the recorder reads the last launches' Python frames
	 * from a process that still lives.
	 */
	XPU_CUPTI_MSG_DONE_ACK = 9,
};

struct xpu_cupti_msg_header {
	uint32_t magic;			/* XPU_CUPTI_WIRE_MAGIC */
	uint16_t type;			/* enum xpu_cupti_msg_type */
	uint16_t version;		/* XPU_CUPTI_WIRE_VERSION */
	uint32_t len;			/* payload bytes after this header */
	uint32_t seq;			/* 0, 1, 2, ... per connection; a gap means a lost message */
};
_Static_assert(sizeof(struct xpu_cupti_msg_header) == 16, "cupti msg header size");

#define XPU_CUPTI_BATCH_MAX_BYTES (XPU_CUPTI_MSG_MAX_BYTES - sizeof(struct xpu_cupti_msg_header))

enum xpu_cupti_hello_flags {
	XPU_CUPTI_HELLO_CLOCK_MONOTONIC = 1u << 0,	/* timestamp callback accepted */
	XPU_CUPTI_HELLO_GRAPH_MODE = 1u << 1,	/* XPU_CUDA_GRAPHS=graph: one record per launch */
	XPU_CUPTI_HELLO_NO_CUPTI = 1u << 2,	/* no usable libcupti: no GPU data will follow */
	XPU_CUPTI_HELLO_ATTACHED = 1u << 3,	/* loaded into a running process (xpu-record -p) */
};

struct xpu_cupti_hello {
	uint32_t pid;			/* getpid() in the target (its own pid namespace) */
	uint32_t cupti_version;		/* cuptiGetVersion(), 0 if unknown */
	uint32_t flags;			/* enum xpu_cupti_hello_flags */
	uint32_t reserved;
	uint64_t mono_ns;		/* CLOCK_MONOTONIC at check-in */
};
_Static_assert(sizeof(struct xpu_cupti_hello) == 24, "cupti hello size");

struct xpu_cupti_done {
	uint64_t records_sent;		/* records in all BATCH messages that were sent */
	uint64_t records_dropped;	/* records the library could not send (transport) */
	uint64_t cupti_dropped;		/* CUPTI's own dropped-record count, total */
};
_Static_assert(sizeof(struct xpu_cupti_done) == 24, "cupti done size");

/*
 * Checks a BATCH payload and rewrites each record's pid field to pid. Returns the number of
 * records, or -1 if any record is malformed (bad size, alignment, a type not from_cupti in
 * common/record_fields.c, string length past its record); the caller then drops the whole
 * batch. The pid written is the peer's from SO_PEERCRED: the pid as the recorder (and BPF)
 * sees it, even when the target runs in another pid namespace, and a client cannot claim
 * another process's pid. In common/cupti_wire.c: libxpu-cupti.so never calls it.
 */
long xpu_cupti_wire_fix_batch(void *buf, size_t len, uint32_t pid);

#endif /* XPU_CUPTI_WIRE_H */
