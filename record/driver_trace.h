/* SPDX-License-Identifier: MIT */
/*
 * xpu-record --driver: loads bpf/driver.bpf.c next to xpu.bpf.c (sharing its traced-process
 * map and ring buffer), turns its ioctl events into DRIVER_IOCTL records and reports its
 * counts. Every failure to trace is one line on stderr; recording goes on without it.
 */
#ifndef XPU_RECORD_DRIVER_TRACE_H
#define XPU_RECORD_DRIVER_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "xpu_format.h"

struct driver_trace;
struct map_handler;
struct writer_thread;

/*
 * Finds the NVIDIA device majors (/proc/devices) and files (/dev/nvidia*), the driver's ioctl
 * entry points in the modules' BTF, then opens and loads the BPF object with xpu.bpf.c's maps
 * (traced_fd, events_fd). Test hooks, read from the environment: XPU_DRIVER_TEST_PATHS
 * (files treated as device files) and XPU_DRIVER_TEST_ENTRY (a vmlinux function timed as if it
 * were the driver's entry point). NULL with a line in err when ioctls cannot be traced.
 */
struct driver_trace *driver_trace__load(int traced_fd, int events_fd, char *err, size_t errlen);
/* Attaches the tracepoints (required) and entry-point probes (optional). 0 or negative errno. */
int driver_trace__attach(struct driver_trace *dt, char *err, size_t errlen);
/*
 * The handler that turns its XPU_EV_DRIVER_IOCTL events into DRIVER_IOCTL records for wt, to
 * route them to (rb_drain__route) before the programs attach.
 */
struct map_handler *driver_trace__handler(struct driver_trace *dt, struct writer_thread *wt);
/*
 * After the drain: writes ring-buffer losses as LOST records and appends the STATS entries
 * (ids 50-52) to stats, at most room of them. Returns how many were appended.
 */
unsigned int driver_trace__finish(struct driver_trace *dt, struct writer_thread *wt,
				  struct xpu_stat_entry *stats, unsigned int room);
void driver_trace__destroy(struct driver_trace *dt);

#endif
