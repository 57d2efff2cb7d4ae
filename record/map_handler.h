/* SPDX-License-Identifier: MIT */
/*
 * A module that keeps state about the traced processes or the files they map (CFI tables,
 * Python interpreters, JIT symbol files, PyTorch's autograd probes), or that turns events of
 * its own into records. It embeds a struct map_handler, fills the calls it needs (any may be
 * NULL) and is added to the process table (proc_table.h), which calls it; ring-buffer events
 * of the types it names reach it through the drain (rb_drain.h). Every call comes from the
 * drain thread, or from the main thread before that thread starts or after it stops.
 */
#ifndef XPU_RECORD_MAP_HANDLER_H
#define XPU_RECORD_MAP_HANDLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct proc;
struct proc_file;
struct proc_file_open;
struct proc_map;
struct proc_table;
struct wt_rec;
struct xpu_ev_hdr;

#define MAP_HANDLER_EVENTS 4

struct map_handler {
	const char *name;
	/* set by proc_table__add_handler() */
	struct proc_table *pt;
	unsigned int slot;

	/* A file mapped for the first time by any process (once per file per recording). */
	void (*on_file)(struct map_handler *h, struct proc_file *f, const struct proc_file_open *o);
	/* A new executable mapping of p, just written as a MAPPING record. */
	void (*on_mapping)(struct map_handler *h, struct proc *p, const struct proc_map *m,
			   uint64_t ts_ns);
	/*
	 * p's mappings were read (p->maps): changed when some are new or its image is, false
	 * also when they could not be read.
	 */
	void (*on_maps)(struct map_handler *h, struct proc *p, bool changed);
	/* p's image ended: it exec'd (a new image's mappings follow) or exited. */
	void (*on_end)(struct map_handler *h, struct proc *p, bool exec);
	/* A thread ended. */
	void (*on_thread_end)(struct map_handler *h, uint32_t tid);
	/*
	 * A record made from event ev (of ev->pid, ev->tid, ev->ts_ns) is about to be written:
	 * add to r what this handler joins to such events. r->py_off is already set.
	 */
	void (*on_record)(struct map_handler *h, const struct xpu_ev_hdr *ev, struct wt_rec *r);
	/* Ring-buffer events of the types in events[] (0 ends the list), size bytes each. */
	void (*on_event)(struct map_handler *h, const void *data, size_t size);
	uint32_t events[MAP_HANDLER_EVENTS];
	/* The table is freed: a slot still set in a process, or in a file. */
	void (*free_proc)(struct map_handler *h, void *slot);
	void (*free_file)(struct map_handler *h, void *slot);
};

#endif
