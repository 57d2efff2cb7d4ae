/* SPDX-License-Identifier: MIT */
/*
 * The weighted stacks the folded, svg and text outputs are built from: CPU samples and GPU
 * work under the stack that launched it, aggregated per (pid, exec generation, stack id, GPU
 * leaf) before any symbolization, so each distinct stack is symbolized once however many
 * samples hit it.
 */
#ifndef XPU_REPORT_MODEL_PROFILE_H
#define XPU_REPORT_MODEL_PROFILE_H

#include "model/session.h"

struct prof_entry {
	uint32_t pid;
	uint32_t stack_id;
	uint32_t leaf;		/* frame id of a GPU leaf ("[gpu] kernel"), 0 for CPU samples */
	uint32_t comm;		/* frame id of the process name, set by the naming pass */
	uint32_t nframes;	/* of frames */
	bool trim;		/* launch stack: CUDA/CUPTI frames are dropped */
	uint64_t ts;		/* first time seen: picks the mappings used to symbolize */
	uint64_t samples;
	/*
	 * What it weighs besides its samples, by kind: an entry holds one of the three, which its
	 * leaf says (prof_entry__measured sums them)
	 */
	uint64_t gpu_ns;	/* GPU work's time, under a [gpu] leaf */
	uint64_t off_ns;	/* off-CPU blocks' time, under an [off-cpu] leaf */
	uint64_t bytes;		/* the memory view: GPU memory held at the peak */
	uint64_t gpu_n;		/* GPU records (allocations in the memory view) */
	/* with per_thread only (else 0): the sampled or launching thread, the GPU device + 1 */
	uint32_t tid, device;
	uint64_t off_n;		/* off-CPU blocks */
	/*
	 * GPU work replayed from a CUDA graph (model/gpu_graph.h): the capture stack, of the
	 * call that made the node, joined to the replay's stack (stack_id) by the frame mid
	 * ("[graph] captured", or "[graph] replayed" with capture first); 0: not such work
	 */
	uint32_t cap_stack, mid;
	uint64_t cap_ts;
	uint32_t cap_nframes;
	const uint32_t *cap_frames, *cap_files;
	const struct frame_site *cap_sites;
	/*
	 * The stack's frames as the naming pass named them, root first, with their files and
	 * (pprof) sites; NULL before it. They stay where they are once the naming is over.
	 */
	const uint32_t *frames, *files;
	const struct frame_site *sites;
};

struct profile {
	const struct session *s;	/* read-only: the aggregation takes what it adds to */
	struct prof_entry *e;
	size_t n, cap;
	struct kmap idx;
	/* entries also per thread and GPU device, for outputs that label them (pprof) */
	bool per_thread;
	struct kmap ctx_idx;	/* with per_thread: {pid, tid, device} -> key id */
	uint32_t nctx;
	uint64_t cpu_samples, gpu_records, gpu_unmatched, filtered_out;
	uint64_t off_blocks, off_ns;	/* --view=off-cpu and wall */
	/* {stack, capture stack} -> pair number, the key of graph work's entries (gpu_graph.h) */
	struct kmap cap_pairs, cap_idx;	/* cap_idx: those entries, as idx the others */
	uint32_t ncap_pairs;
	char *dso_buf;		/* --dso, split at the commas */
	const char *dsos[FILTER_MAX_COMMS];
	int ndsos;
};

/*
 * Aggregates the CPU samples and/or GPU work (or off-CPU blocks) the view asks for. A block
 * weighs its time inside --time-range, under its stack and a leaf naming its state
 * ("[off-cpu] sleeping"). GPU work without a launch
 * record (probe lost, injection without uprobe) is kept under "[no stack]". Nothing is named
 * yet: the naming pass (naming.h) names every entry, then applies --dso.
 * 0 or -ENOMEM; profile__free either way.
 */
int profile__build(struct profile *p, struct session *s);
/*
 * --dso: keeps the entries with a frame in one of its files, in order (the others count as
 * filtered out). Run by the naming pass, once the entries are named. 0 or -ENOMEM.
 */
int profile__filter_dsos(struct profile *p);
/*
 * Frames of an entry, root first: comm, stack frames, GPU leaf, as the naming pass named
 * them (-ENOENT for an entry it did not name). Valid until the next call.
 */
int profile__frames(const struct profile *p, const struct prof_entry *e, const uint32_t **frames,
		    uint32_t *n);
/*
 * The same, with the site of each frame (symbolize.h; zero for the comm, the GPU leaf and
 * frames outside ELF files) when the session keeps sites (pprof), else *sites NULL.
 */
int profile__frames_sites(const struct profile *p, const struct prof_entry *e,
			  const uint32_t **frames, const struct frame_site **sites, uint32_t *n);
/*
 * The frames with the file of each (symbolizer__files(): the file this frame is in, where one
 * name is in several; 0 for the comm and the GPU or off-CPU leaf).
 */
int profile__frames_files(const struct profile *p, const struct prof_entry *e,
			  const uint32_t **frames, const uint32_t **files, uint32_t *n);
/* An entry's weight besides its samples: time measured (GPU work, blocks) or bytes held. */
static inline uint64_t prof_entry__measured(const struct prof_entry *e)
{
	return e->gpu_ns + e->off_ns + e->bytes;
}
/* Whether a frame in file (profile__frames_files) passes --dso (every frame does without it). */
bool profile__dso_match(const struct profile *p, uint32_t file);
/*
 * The weight of samples and measured (prof_entry__measured) in the session's unit (samples,
 * or microseconds), not rounded; in the memory view, bytes, whatever --weight says.
 */
double profile__weight(const struct profile *p, uint64_t samples, uint64_t measured);
/* The sum of every entry's weight: what the shares of the text tables and diff divide by. */
double profile__total_weight(const struct profile *p);
void profile__free(struct profile *p);
/* An OFF_CPU state in words: "sleeping", "preempted", "blocked (D)", "other". */
const char *off_cpu_state_name(uint16_t state);

#endif
