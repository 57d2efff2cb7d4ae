// SPDX-License-Identifier: MIT
/*
 * The chrome output's thread tracks: CUDA API calls (cat cuda_api) and NVTX ranges and markers
 * (cat nvtx), which nest because NVTX push/pop brackets the calls made inside it; the driver
 * ioctls (cat driver) each call made, inside it; and the blocks of --off-cpu traces
 * (cat off_cpu), which nest in both: a thread opens and closes calls and ranges only while it
 * runs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "output/chrome/chrome.h"
#include "output/ioctl_names.h"
#include "output/api_name.h"

/* The thread's track, marked as holding events (not only samples): 0 or -ENOMEM. */
static int thread_event(struct chrome *c, uint32_t pid, uint32_t tid)
{
	struct thread_track *th = chrome__thread(c, pid, tid);

	if (!th)
		return -ENOMEM;
	th->has_events = true;
	return 0;
}



int chrome__emit_apis(struct chrome *c)
{
	const struct trace *t = c->t;
	size_t i;

	for (i = 0; i < t->napis; i++) {
		const struct xpu_rec_gpu_api *a = &t->apis[i];
		const char *n = trace__string(t, a->name_str);
		const struct gpu_work *w;
		char buf[32];

		if (out__failed(c->out))
			return -EIO;
		if (!filter__span(&c->ses->filter, a->pid, a->tid, a->start_ns, a->end_ns))
			continue;
		if (thread_event(c, a->pid, a->tid))
			return -ENOMEM;
		if (!n || !*n) {
			snprintf(buf, sizeof(buf), "cbid %u", a->cbid);
			n = buf;
		}
		chrome__begin(c, 'X', a->pid, a->tid, a->start_ns);
		chrome__dur(c, a->start_ns, a->end_ns);
		chrome__put(c, ",\"cat\":\"cuda_api\",\"name\":");
		chrome__str(c, n, api_name_len(n));
		chrome__put(c, ",\"args\":{\"correlation_id\":%u,\"cbid\":%u,\"api\":\"%s\"", a->corr_id,
			    a->cbid, a->domain == XPU_API_DRIVER ? "driver" : "runtime");
		if (a->return_code)
			chrome__put(c, ",\"return_code\":%d", a->return_code);
		w = gpu_join__copy(c->j, a->pid, a->corr_id);
		if (w)
			chrome__put(c, ",\"bytes\":%llu", (unsigned long long)w->bytes);
		chrome__put(c, "}");
		chrome__end(c);
	}
	return 0;
}

int chrome__emit_nvtx(struct chrome *c)
{
	const struct trace *t = c->t;
	size_t i;

	for (i = 0; i < t->nnvtxs; i++) {
		const struct xpu_rec_nvtx *r = &t->nvtxs[i];
		const char *n = trace__string(t, r->name_str), *dom = trace__string(t, r->domain_str);
		bool marker = r->kind == XPU_NVTX_MARKER || r->end_ns <= r->start_ns;

		if (out__failed(c->out))
			return -EIO;
		if (!filter__span(&c->ses->filter, r->pid, r->tid, r->start_ns,
				  marker ? r->start_ns : r->end_ns))
			continue;
		if (thread_event(c, r->pid, r->tid))
			return -ENOMEM;
		chrome__begin(c, marker ? 'i' : 'X', r->pid, r->tid, r->start_ns);
		if (marker)
			chrome__put(c, ",\"s\":\"t\"");
		else
			chrome__dur(c, r->start_ns, r->end_ns);
		chrome__put(c, ",\"cat\":\"nvtx\",\"name\":");
		chrome__cstr(c, n && *n ? n : "[nvtx]");
		chrome__put(c, ",\"args\":{");
		if (dom && *dom) {
			chrome__put(c, "\"domain\":");
			chrome__cstr(c, dom);
		}
		if (r->color_argb)
			chrome__put(c, "%s\"color\":\"#%06x\"", dom && *dom ? "," : "", r->color_argb & 0xffffff);
		chrome__put(c, "}");
		chrome__end(c);
	}
	return 0;
}

/* args.stack of a block: its innermost frames, leaf first, "a <- b <- c" */
#define OFF_STACK_FRAMES 16

static int put_off_stack(struct chrome *c, const struct xpu_rec_off_cpu *o, uint32_t stack_id)
{
	char buf[OUT_NAME_MAX_BYTES + 1];
	const uint32_t *f;
	uint32_t n, i, k = 0;
	size_t len = 0;
	int err = session__stack(c->ses, o->pid, o->ts_ns, stack_id, false, &f, &n);

	if (err)
		return err;
	buf[0] = '\0';
	for (i = n; i-- > 0 && k < OFF_STACK_FRAMES && len < sizeof(buf) - 1; k++) {
		int w = snprintf(buf + len, sizeof(buf) - len, "%s%s", k ? " <- " : "",
				 strpool__str(&c->ses->pool, f[i]));

		if (w < 0)
			break;
		len += (size_t)w < sizeof(buf) - len ? (size_t)w : sizeof(buf) - 1 - len;
	}
	chrome__put(c, ",\"stack\":");
	chrome__str(c, buf, len);
	return 0;
}

/* --off-cpu: each block as a slice on its thread's track, named by its state. */
int chrome__emit_off_cpu(struct chrome *c)
{
	const struct trace *t = c->t;
	size_t i;
	int err;

	for (i = 0; i < t->noffcpus; i++) {
		const struct xpu_rec_off_cpu *o = &t->offcpus[i];
		char name[48];

		if (out__failed(c->out))
			return -EIO;
		if (!filter__span(&c->ses->filter, o->pid, o->tid, o->ts_ns, o->ts_ns + o->dur_ns))
			continue;
		if (thread_event(c, o->pid, o->tid))
			return -ENOMEM;
		snprintf(name, sizeof(name), "[off-cpu] %s", off_cpu_state_name(o->state));
		chrome__begin(c, 'X', o->pid, o->tid, o->ts_ns);
		chrome__dur(c, o->ts_ns, o->ts_ns + o->dur_ns);
		chrome__put(c, ",\"cat\":\"off_cpu\",\"name\":");
		chrome__cstr(c, name);
		chrome__put(c, ",\"args\":{\"state\":\"%s\"", off_cpu_state_name(o->state));
		if (o->waker_tid)
			chrome__put(c, ",\"waker_tid\":%u", o->waker_tid);
		err = put_off_stack(c, o, session__offcpu_stack(c->ses, i));
		if (err)
			return err;
		chrome__put(c, "}");
		chrome__end(c);
	}
	return 0;
}


/*
 * Each ioctl on an NVIDIA device file is a slice on its thread's track; its time lies within
 * the CUDA call that made it, so it nests under that call's slice (same monotonic rounding).
 */
int chrome__emit_ioctls(struct chrome *c)
{
	const struct trace *t = c->t;
	char hex[16];
	size_t i;

	for (i = 0; i < t->nioctls; i++) {
		const struct xpu_rec_driver_ioctl *io = &t->ioctls[i];
		const char *file = io->file_str ? trace__string(t, io->file_str) : NULL;
		const char *name = ioctl_request_name(io->request, file);

		if (out__failed(c->out))
			return -EIO;
		if (!filter__span(&c->ses->filter, io->pid, io->tid, io->start_ns, io->end_ns))
			continue;
		if (thread_event(c, io->pid, io->tid))
			return -ENOMEM;
		snprintf(hex, sizeof(hex), "%#x", io->request);
		chrome__begin(c, 'X', io->pid, io->tid, io->start_ns);
		chrome__dur(c, io->start_ns, io->end_ns);
		chrome__put(c, ",\"cat\":\"driver\",\"name\":");
		chrome__cstr(c, name ? name : hex);
		chrome__put(c, ",\"args\":{\"request\":\"%s\",\"file\":", hex);
		chrome__cstr(c, file ? file : "?");
		chrome__put(c, ",\"fd\":%u,\"ret\":%lld", io->fd, (long long)io->ret);
		if (io->flags & XPU_IOCTL_DRIVER_TIMED)
			chrome__put(c, ",\"driver_us\":%.3f", io->driver_ns / 1e3);
		chrome__put(c, "}");
		chrome__end(c);
	}
	return 0;
}

