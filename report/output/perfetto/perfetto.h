/* SPDX-License-Identifier: MIT */
/*
 * The perfetto output's parts (--format=perfetto, output/out.h's out_perfetto): a native
 * Perfetto trace, perfetto.protos.Trace, a stream of TracePackets on one packet sequence.
 * It draws what the chrome output draws (output/chrome/), so the two show the same view:
 *   pb.c        the protobuf wire format
 *   packet.c    one packet: its sequence fields, its interned data, written to the file
 *   intern.c    the interning tables (names, annotation names, frames, call stacks), reset
 *               when they grow past PF_INTERN_MAX so memory stays bounded
 *   tracks.c    the track descriptors: processes, threads, GPU devices and streams, counters
 *   threads.c   per traced thread: CUDA API calls, NVTX ranges, driver ioctls, off-CPU blocks
 *   gpu.c       per GPU stream: kernels, copies, memsets, and the flows from their launches
 *   samples.c   CPU samples as PerfSample packets with interned call stacks
 *   utf8.c      strings as UTF-8, cut at OUT_NAME_MAX_BYTES
 *   counters.c  per GPU: busy % of kernels and of copies (model/gpu_busy.h), counter tracks
 *   memory.c    per GPU: bytes allocated and not yet freed, a counter track
 *   perfetto.c  the file: clock snapshots, the tracks in order
 * The field numbers are Perfetto's (checked against its public protos); the subset written
 * is format-spec/perfetto_subset.proto, which the tests decode every output with.
 */
#ifndef XPU_REPORT_OUTPUT_PERFETTO_H
#define XPU_REPORT_OUTPUT_PERFETTO_H

#include "model/gpu_interval.h"
#include "model/profile.h"
#include "output/out.h"
#include "output/perfetto/pb.h"

/* ---- Perfetto's field numbers (perfetto.protos.*) ------------------------------------------ */

enum {
	TRACE_PACKET = 1,			/* Trace.packet */

	PKT_TIMESTAMP = 8,
	PKT_SEQUENCE_ID = 10,			/* trusted_packet_sequence_id */
	PKT_TRACK_EVENT = 11,
	PKT_INTERNED_DATA = 12,
	PKT_SEQUENCE_FLAGS = 13,
	PKT_CLOCK_SNAPSHOT = 6,
	PKT_TRACE_DEFAULTS = 59,		/* trace_packet_defaults */
	PKT_TRACK_DESCRIPTOR = 60,
	PKT_PERF_SAMPLE = 66,
	PKT_MACHINE_ID = 98,			/* machine_id: 0 (left out) the first host */
	PKT_COMPRESSED_PACKETS = 50,		/* compressed_packets: a zlib stream of Trace */

	SEQ_INCREMENTAL_STATE_CLEARED = 1,
	SEQ_NEEDS_INCREMENTAL_STATE = 2,

	DEFAULTS_TIMESTAMP_CLOCK_ID = 58,	/* TracePacketDefaults */

	CLOCK_SNAPSHOT_CLOCKS = 1,		/* ClockSnapshot */
	CLOCK_SNAPSHOT_PRIMARY = 2,
	CLOCK_ID = 1,				/* ClockSnapshot.Clock */
	CLOCK_TIMESTAMP = 2,
	BUILTIN_CLOCK_REALTIME = 1,
	BUILTIN_CLOCK_MONOTONIC = 3,

	TD_UUID = 1,				/* TrackDescriptor */
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_THREAD = 4,
	TD_PARENT_UUID = 5,
	TD_COUNTER = 8,
	PD_PID = 1,				/* ProcessDescriptor */
	PD_PROCESS_NAME = 6,
	THD_PID = 1,				/* ThreadDescriptor */
	THD_TID = 2,
	THD_THREAD_NAME = 5,
	CD_UNIT = 3,				/* CounterDescriptor */
	CD_UNIT_SIZE_BYTES = 3,

	TE_DEBUG_ANNOTATIONS = 4,		/* TrackEvent */
	TE_CATEGORY_IIDS = 3,
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_TRACK_UUID = 11,
	TE_NAME = 23,
	TE_COUNTER_VALUE = 30,
	TE_DOUBLE_COUNTER_VALUE = 44,
	TE_FLOW_IDS = 47,
	TE_CALLSTACK_IID = 56,
	TE_TYPE_SLICE_BEGIN = 1,
	TE_TYPE_SLICE_END = 2,
	TE_TYPE_INSTANT = 3,
	TE_TYPE_COUNTER = 4,

	DA_NAME_IID = 1,			/* DebugAnnotation */
	DA_UINT = 3,
	DA_INT = 4,
	DA_DOUBLE = 5,
	DA_STRING = 6,

	ID_EVENT_CATEGORIES = 1,		/* InternedData */
	ID_EVENT_NAMES = 2,
	ID_ANNOTATION_NAMES = 3,
	ID_FUNCTION_NAMES = 5,
	ID_FRAMES = 6,
	ID_CALLSTACKS = 7,
	ID_MAPPING_PATHS = 17,
	ID_MAPPINGS = 19,
	INTERNED_IID = 1,			/* EventName, EventCategory, DebugAnnotationName, */
	INTERNED_NAME = 2,			/* InternedString: iid 1, name/str 2 */
	MAPPING_PATH_IDS = 7,			/* Mapping */
	FRAME_FUNCTION_NAME = 2,		/* Frame */
	FRAME_MAPPING = 3,
	FRAME_REL_PC = 4,
	CALLSTACK_FRAME_IDS = 2,		/* Callstack */

	PS_CPU = 1,				/* PerfSample */
	PS_PID = 2,
	PS_TID = 3,
	PS_CALLSTACK_IID = 4,
};

/* The one packet sequence of the file, and the one mapping every frame is placed in. */
#define PF_SEQUENCE_ID 1
#define PF_MAPPING_IID 1
/* Interned entries past which the tables are cleared (a sequence reset): bounds memory. */
#define PF_INTERN_MAX (1u << 18)
/* ... or past this many bytes of interned names (each at most OUT_NAME_MAX_BYTES + 1). */
#define PF_ARENA_MAX (64u << 20)

/* The names of the debug annotations (args) written, interned once per reset. */
enum pf_arg_name {
	ARG_CORRELATION_ID,
	ARG_CBID,
	ARG_RETURN_CODE,
	ARG_BYTES,
	ARG_DOMAIN,
	ARG_STATE,
	ARG_WAKER_TID,
	ARG_REQUEST,
	ARG_FD,
	ARG_RET,
	ARG_GRID,
	ARG_BLOCK,
	ARG_REGISTERS,
	ARG_STREAM,
	ARG_SRC,
	ARG_DST,
	ARG_GBPS,
	ARG_VALUE,
	ARG_MEMORY,
	ARG_GRAPH_ID,
	ARG_BACKWARD_NODE,
	ARG_FORWARD_SITE,
	ARG_GRAPH_NODE_ID,
	ARG_SRC_DEVICE,
	ARG_DST_DEVICE,
	ARG_FILE,
	ARG_DRIVER_US,
	ARG_COLOR,
	ARG_NAMES
};

struct pf_arg {
	enum pf_arg_name name;
	enum { PF_U, PF_I, PF_D, PF_S } kind;
	uint64_t u;
	int64_t i;
	double d;
	const char *s;
};

#define PF_ARGS_MAX 12

struct pf_slice {
	uint64_t track;
	uint64_t start, end;		/* CLOCK_MONOTONIC ns; end unused for instants */
	const char *cat;
	const char *name;
	size_t name_len;
	struct pf_arg args[PF_ARGS_MAX];
	unsigned nargs;
	uint64_t flow;			/* 0: none */
	const uint32_t *stack;		/* the session's frame ids, root first; NULL: none */
	uint32_t nstack;
	bool instant;
};

struct pf_thread {
	uint32_t pid, tid;
	uint64_t uuid;
};

struct pf_counts {
	uint64_t slices, instants, flows, samples, counters, kernels, copies, memsets;
};

struct perfetto {
	const struct session *ses;
	const struct trace *t;
	FILE *out;
	uint64_t bytes, packets;
	struct pf_counts n;
	/*
	 * compress.c: the packets of a chunk, written as one compressed_packets packet once it
	 * holds PF_CHUNK_BYTES (NULL: each packet written as it is made)
	 */
	uint8_t *chunk;
	size_t chunk_n;

	struct pb pkt;			/* the packet being built */
	struct pb interned;		/* its InternedData's fields */
	struct pb desc;			/* a track descriptor, written before the packet using it */
	bool cleared;			/* the next packet starts the sequence's incremental state */
	/*
	 * Merged traces of several hosts: each host's packets carry its machine_id (its rank
	 * among the traces' distinct hosts; the first's is 0, left out). Perfetto's trace
	 * processor reads each machine's packets apart, with its own sequence state and clocks:
	 * the interning is reset at every change of machine, and the clock snapshots repeated.
	 */
	const char **hosts;		/* distinct hosts in the traces' order; NULL: one host */
	size_t nhosts;
	uint32_t machine;		/* of the packets being written */
	uint32_t *track_machine;	/* by track uuid */
	size_t ntrack_machine, track_machine_cap;

	/* interning (intern.c): iids count up for the whole file, never reused after a reset */
	uint64_t next_iid;		/* names, categories, annotation names */
	uint64_t next_frame_iid, next_stack_iid;	/* their own tables: small varints */
	size_t ninterned, intern_max;	/* intern_max: PF_INTERN_MAX, lowered by the tests */
	struct kmap strs;		/* {hash, kind << 32 | len} -> strs_at index */
	char *arena;			/* the interned strings' bytes, to tell colliding hashes apart */
	size_t arena_n, arena_cap;
	struct { size_t off, len; uint64_t iid; } *strs_at;
	size_t nstrs, strs_cap;
	struct kmap frames;		/* {frame id, 0} -> iid */
	struct kmap stacks;		/* {hash of the frame ids, n} -> iid */
	uint64_t arg_iid[ARG_NAMES];
	bool mapping_sent;		/* the one mapping, since the last reset */

	/* tracks (tracks.c): uuids count up from 1 */
	uint64_t next_uuid;
	struct kmap tracks;		/* {kind << 32 | a, b} -> uuid */
	struct kmap streams;		/* {device << 32 | pid, context << 32 | stream} -> uuid */
	const struct clock_map *clk;	/* the session's */
	bool gpu_pids_many;		/* GPU work of several processes: streams say whose */

	const struct gpu_join *j;
	uint8_t *launch_marked;
	uint64_t next_flow;
	/* each drawn kernel (key GPU << 1), copy or memset (GPU << 1 | 1), for counters.c */
	struct gpu_interval *iv;
	size_t niv, iv_cap;
	uint32_t *devs;			/* device numbers by dense index, the intervals' GPU */
	size_t ndevs, devs_cap;
	struct kmap dev_idx;
};

/* ---- packet.c ------------------------------------------------------------------------------- */

/* Starts a packet (ts 0: none); pf__packet_end() writes it. */
void pf__packet_begin(struct perfetto *pf, uint64_t ts);
/* Writes the packet: 0, -ENOMEM, or -EIO when the output failed. */
int pf__packet_end(struct perfetto *pf, bool needs_state);
/* Writes a complete message of pb as one packet of the trace (descriptors). */
int pf__write_packet(struct perfetto *pf, const struct pb *p);
/*
 * compress.c: packets go out in zlib-compressed chunks where the report was built with zlib,
 * unless XPU_REPORT_PERFETTO_COMPRESS=0. pf__write_bytes takes a whole Trace.packet field (its header, its bytes);
 * pf__chunk_flush writes what the chunk holds (at the end, and when it is full).
 */
#define PF_CHUNK_BYTES (1u << 20)
void pf__chunk_init(struct perfetto *pf);
int pf__write_bytes(struct perfetto *pf, const uint8_t *hdr, size_t hn, const uint8_t *b, size_t n);
int pf__chunk_flush(struct perfetto *pf);
void pf__chunk_free(struct perfetto *pf);
/* v as a varint into p (at most 10 bytes); returns its length */
size_t pf__varint(uint8_t *p, uint64_t v);
/* The packets after are machine m's: a change resets the interning (one sequence each). */
void pf__use_machine(struct perfetto *pf, uint32_t m);
/* The machine of a host (0 with one host), and of a track's packets. */
uint32_t pf__host_machine(const struct perfetto *pf, const char *host);
uint32_t pf__track_machine(const struct perfetto *pf, uint64_t uuid);

/* ---- utf8.c --------------------------------------------------------------------------------- */

/* A string field of s's len bytes: invalid UTF-8 as U+FFFD, cut at OUT_NAME_MAX_BYTES. */
void pf__str(struct pb *p, uint32_t field, const char *s, size_t len);

/* ---- intern.c ------------------------------------------------------------------------------- */

/* Clears the tables when they are full; at a packet's start only. */
void pf__intern_maybe_reset(struct perfetto *pf);
/* Clears the tables now (a new machine's packets follow). */
void pf__intern_reset(struct perfetto *pf);
/* iids of an event name, a category, an annotation name: 0 on allocation failure. */
uint64_t pf__name_iid(struct perfetto *pf, const char *s, size_t len);
uint64_t pf__cat_iid(struct perfetto *pf, const char *s);
uint64_t pf__arg_iid(struct perfetto *pf, enum pf_arg_name a);
/* The iid of a stack of the session's frame ids (root first); 0 for none or on failure. */
uint64_t pf__stack_iid(struct perfetto *pf, const uint32_t *frames, uint32_t n);
void pf__intern_free(struct perfetto *pf);

/* ---- tracks.c ------------------------------------------------------------------------------- */

/* The uuid of a track, its descriptor written when first asked for; 0 on failure. */
uint64_t pf__thread_track(struct perfetto *pf, uint32_t pid, uint32_t tid);
uint64_t pf__device_track(struct perfetto *pf, uint32_t device);
uint64_t pf__stream_track(struct perfetto *pf, uint32_t device, uint32_t pid, uint32_t context,
			  uint32_t stream);
uint64_t pf__memory_track(struct perfetto *pf, uint32_t device);
/* The device's busy % counter of kernels (copies false) or of copies and memsets. */
uint64_t pf__busy_track(struct perfetto *pf, uint32_t device, bool copies);

/* ---- events (threads.c) --------------------------------------------------------------------- */

void pf__arg_u(struct pf_slice *s, enum pf_arg_name n, uint64_t v);
void pf__arg_i(struct pf_slice *s, enum pf_arg_name n, int64_t v);
void pf__arg_d(struct pf_slice *s, enum pf_arg_name n, double v);
void pf__arg_s(struct pf_slice *s, enum pf_arg_name n, const char *v);
/* A slice (begin and end packets) or an instant: 0, -ENOMEM or -EIO. */
int pf__slice(struct perfetto *pf, const struct pf_slice *s);

int pf__emit_apis(struct perfetto *pf);
int pf__emit_nvtx(struct perfetto *pf);
int pf__emit_ioctls(struct perfetto *pf);
int pf__emit_off_cpu(struct perfetto *pf);
int pf__emit_gpu(struct perfetto *pf);
int pf__emit_samples(struct perfetto *pf);
int pf__emit_counters(struct perfetto *pf);
int pf__emit_memory(struct perfetto *pf);

#endif
