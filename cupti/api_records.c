// SPDX-License-Identifier: MIT
/*
 * API records made from the launch callbacks (XPU_CUPTI_API=callbacks) instead of CUPTI's
 * API activity: the callbacks of the calls the report uses (launches, copies, memsets,
 * synchronizations, allocations) already run at each call's enter and exit, so the record is
 * two clock reads and a store, where CUPTI's own API record is made by CUPTI at every call
 * (issue 38: what a launch costs past its stack). The records are the same GPU_API records
 * (format-spec/FORMAT.md), with the tid and the monotonic clock the rest of the trace uses.
 *
 * A call opens its record on its thread at ENTER and queues it at EXIT. The queue is bounded
 * and shared by the launching threads: a slot is claimed with one atomic add, never a lock or
 * a system call, and the flusher (under the transport's lock) takes the filled slots in order.
 * Only when the flusher is so far behind that the queue is full does a launching thread send
 * its record itself, under the transport's lock, as the synchronization records do.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xpu_cupti.h"

#define API_QUEUE (1u << 14)

struct api_slot {
	uint64_t seq;			/* the slot's turn: pos + 1 once filled for position pos */
	struct xpu_rec_gpu_api rec;	/* name_str holds the domain's cbid until the drain names it */
};

static struct api_slot *queue;
static uint64_t enqueue_pos, dequeue_pos;	/* dequeue_pos: the flusher's alone */
static int mode = -1;				/* -1: not read yet; 0 off; 1 on */

static __thread struct xpu_rec_gpu_api open_rec;	/* start_ns 0: none open */
static __thread uint32_t my_tid;

bool api_records__from_callbacks(void)
{
	if (mode < 0) {
		const char *env = getenv("XPU_CUPTI_API");

		mode = env && !strcmp(env, "callbacks");
	}
	return mode == 1;
}

int api_records__init(void)
{
	uint64_t i;

	if (!api_records__from_callbacks() || queue)
		return 0;
	queue = calloc(API_QUEUE, sizeof(*queue));
	if (!queue) {
		mode = 0;
		return -1;
	}
	for (i = 0; i < API_QUEUE; i++)
		queue[i].seq = i;
	return 0;
}

void api_records__begin(uint32_t corr_id, uint32_t cbid, uint32_t domain)
{
	if (!my_tid)
		my_tid = (uint32_t)gettid();
	open_rec = (struct xpu_rec_gpu_api){
		.start_ns = xc_mono_ns(),
		.pid = xc_pid,
		.tid = my_tid,
		.corr_id = corr_id,
		.cbid = cbid,
		.domain = domain,
	};
}

/* With the transport's lock held: one record, named. */
static void send(struct xpu_rec_gpu_api *r)
{
	const char *name = NULL;

	r->name_str = 0;
	if (cupti.cuptiGetCallbackName(r->domain == XPU_API_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API
								   : CUPTI_CB_DOMAIN_DRIVER_API,
				       r->cbid, &name) == CUPTI_SUCCESS && name)
		r->name_str = transport__string(name);
	transport__append(XPU_REC_GPU_API, r, sizeof(*r));
}

void api_records__end(uint32_t corr_id, int32_t return_code)
{
	struct xpu_rec_gpu_api r = open_rec;
	uint64_t pos = __atomic_load_n(&enqueue_pos, __ATOMIC_RELAXED);
	struct api_slot *s;

	if (!r.start_ns || r.corr_id != corr_id || !queue)
		return;
	open_rec.start_ns = 0;
	r.end_ns = xc_mono_ns();
	r.return_code = return_code;
	for (;;) {
		int64_t d;

		s = &queue[pos & (API_QUEUE - 1)];
		d = (int64_t)(__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) - pos);
		if (d == 0) {
			if (__atomic_compare_exchange_n(&enqueue_pos, &pos, pos + 1, true,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
				break;
		} else if (d < 0) {
			/* full: the flusher is far behind; this one record goes out from here */
			transport__lock();
			api_records__drain();
			send(&r);
			transport__unlock();
			return;
		} else {
			pos = __atomic_load_n(&enqueue_pos, __ATOMIC_RELAXED);
		}
	}
	s->rec = r;
	__atomic_store_n(&s->seq, pos + 1, __ATOMIC_RELEASE);
}

void api_records__drain(void)
{
	if (!queue)
		return;
	for (;;) {
		struct api_slot *s = &queue[dequeue_pos & (API_QUEUE - 1)];
		struct xpu_rec_gpu_api r;

		if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != dequeue_pos + 1)
			return;
		r = s->rec;
		__atomic_store_n(&s->seq, dequeue_pos + API_QUEUE, __ATOMIC_RELEASE);
		dequeue_pos++;
		send(&r);
	}
}

void api_records__atfork_child(void)
{
	uint64_t i;

	open_rec.start_ns = 0;
	my_tid = 0;
	if (!queue)
		return;
	enqueue_pos = dequeue_pos = 0;
	for (i = 0; i < API_QUEUE; i++)
		queue[i].seq = i;
}
