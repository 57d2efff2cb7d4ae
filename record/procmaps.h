/* SPDX-License-Identifier: MIT */
/*
 * Executable mappings of traced processes, from /proc/PID/maps: writes a DSO record once per
 * file (with its build-id) and a MAPPING record per new mapping. Owned by the drain thread.
 */
#ifndef XPU_RECORD_PROCMAPS_H
#define XPU_RECORD_PROCMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct writer_thread;
struct procmaps;
struct py_procs;
struct cfi_loader;
struct jit_maps;
struct autograd_probe;

struct procmaps_stats {
	uint64_t scans;
	uint64_t scan_failures;		/* process gone before its maps were read */
	uint64_t dsos;
	uint64_t mappings;
};

struct procmaps *procmaps__new(struct writer_thread *wt);
void procmaps__free(struct procmaps *pm);

/*
 * Reads pid's maps and writes what is new, stamped ts_ns (the event that made us look).
 * reset: forget what was known first (exec), so every mapping of the new image is written
 * with a time after the exec. Returns the number of new mappings or negative errno.
 */
int procmaps__scan(struct procmaps *pm, pid_t pid, uint64_t ts_ns, bool reset);
/* A sample's user IP: scans on first sight of pid, or (rate-limited) when ip is unknown. */
void procmaps__check_ip(struct procmaps *pm, pid_t pid, uint64_t ip, uint64_t ts_ns);
void procmaps__forget(struct procmaps *pm, pid_t pid);
/* The known mapping of pid's that holds ip: false (and nothing set) when none does. */
bool procmaps__mapping_of(const struct procmaps *pm, pid_t pid, uint64_t ip, uint64_t *start,
			  uint64_t *end);
/* Files mapped from now on are probed for a CPython runtime, reported to py. */
void procmaps__set_python(struct procmaps *pm, struct py_procs *py);
/* -g cfi: every executable file mapped from now on gets a table; mappings are published. */
void procmaps__set_cfi(struct procmaps *pm, struct cfi_loader *cl);

/* Files mapped from now on are offered to ap (PyTorch libraries get the autograd probes). */
void procmaps__set_autograd(struct procmaps *pm, struct autograd_probe *ap);

/* Every pid scanned and every jitdump mapped from now on are noted in jit. */
void procmaps__set_jit(struct procmaps *pm, struct jit_maps *jit);
void procmaps__get_stats(const struct procmaps *pm, struct procmaps_stats *st);

#endif
