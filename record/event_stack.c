// SPDX-License-Identifier: MIT
/* An event's user stack into its record (see event_stack.h). */
#include "event_stack.h"
#include "proc_table.h"
#include "writer_thread.h"
#include "xpu_bpf_abi.h"

bool event_stack__entry(struct proc_table *pt, struct wt_rec *r, const struct xpu_ev_hdr *h,
			const __u64 *uips, uint32_t ustart, int32_t nr_user, uint32_t stack_off)
{
	uint32_t nu = nr_user > 0 ? (uint32_t)nr_user : 0;

	if (ustart > 1 || nu > XPU_BPF_MAX_UFRAMES + 1 - ustart)
		nu = 0;
	if (nu) {
		proc_table__check_ip(pt, h->pid, uips[ustart], h->ts_ns);
		r->has_stack = true;
		r->stack_off = stack_off;
		r->ips = (const uint64_t *)&uips[ustart];
		r->nr_user = (uint16_t)nu;
	}
	proc_table__join(pt, h, r);
	return nr_user >= 0;
}
