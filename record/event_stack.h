/* SPDX-License-Identifier: MIT */
/*
 * A ring-buffer event's user stack into the record made from it, with what every such stack
 * gets: its process's mappings read first when its innermost IP falls in none known, and what
 * the process table's handlers join to it (Python frames). For the drain and for handlers
 * that turn events of their own into records with stacks.
 */
#ifndef XPU_RECORD_EVENT_STACK_H
#define XPU_RECORD_EVENT_STACK_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>

struct proc_table;
struct wt_rec;
struct xpu_ev_hdr;

/*
 * The stack of an event taken at a function's entry (bpf entry_stack(): uips[ustart..],
 * nr_user frames, or a negative errno) into r, which stores its id at stack_off; then the
 * joins. False when the event came without its stack (counted as a stack error).
 */
bool event_stack__entry(struct proc_table *pt, struct wt_rec *r, const struct xpu_ev_hdr *h,
			const __u64 *uips, uint32_t ustart, int32_t nr_user, uint32_t stack_off);

#endif
