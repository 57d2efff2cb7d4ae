// SPDX-License-Identifier: MIT
/*
 * The perfetto output's slices, and its thread tracks: CUDA API calls (cat cuda_api), NVTX
 * ranges and markers (cat nvtx), driver ioctls (cat driver) and --off-cpu blocks (cat
 * off_cpu, with the stack they blocked in as an interned call stack), the same events, names
 * and args as the chrome output (output/chrome/threads.c). A slice is a TYPE_SLICE_BEGIN and
 * a TYPE_SLICE_END packet: Perfetto has no complete events; the end needs only the track.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "output/ioctl_names.h"
#include "output/perfetto/perfetto.h"
#include "output/api_name.h"

static struct pf_arg *arg(struct pf_slice *s, enum pf_arg_name n)
{
	static struct pf_arg spare;	/* past PF_ARGS_MAX: dropped (a bug, not an input) */

	if (s->nargs >= PF_ARGS_MAX)
		return &spare;
	s->args[s->nargs].name = n;
	return &s->args[s->nargs++];
}

void pf__arg_u(struct pf_slice *s, enum pf_arg_name n, uint64_t v)
{
	struct pf_arg *a = arg(s, n);

	a->kind = PF_U;
	a->u = v;
}

void pf__arg_i(struct pf_slice *s, enum pf_arg_name n, int64_t v)
{
	struct pf_arg *a = arg(s, n);

	a->kind = PF_I;
	a->i = v;
}

void pf__arg_d(struct pf_slice *s, enum pf_arg_name n, double v)
{
	struct pf_arg *a = arg(s, n);

	a->kind = PF_D;
	a->d = v;
}

void pf__arg_s(struct pf_slice *s, enum pf_arg_name n, const char *v)
{
	struct pf_arg *a = arg(s, n);

	a->kind = PF_S;
	a->s = v;
}

static void put_args(struct perfetto *pf, const struct pf_slice *s)
{
	struct pb *p = &pf->pkt;
	unsigned i;

	for (i = 0; i < s->nargs; i++) {
		const struct pf_arg *a = &s->args[i];

		pb__begin(p, TE_DEBUG_ANNOTATIONS);
		pb__varint(p, DA_NAME_IID, pf__arg_iid(pf, a->name));
		if (a->kind == PF_U)
			pb__varint(p, DA_UINT, a->u);
		else if (a->kind == PF_I)
			pb__sint(p, DA_INT, a->i);
		else if (a->kind == PF_D)
			pb__double(p, DA_DOUBLE, a->d);
		else
			pf__str(p, DA_STRING, a->s, strlen(a->s));
		pb__end(p);
	}
}

int pf__slice(struct perfetto *pf, const struct pf_slice *s)
{
	struct pb *p = &pf->pkt;
	size_t len = s->name_len;
	uint64_t iid;
	int err;

	if (!s->track)
		return -ENOMEM;
	pf__use_machine(pf, pf__track_machine(pf, s->track));
	pf__packet_begin(pf, s->start);
	pb__begin(p, PKT_TRACK_EVENT);
	pb__varint(p, TE_TYPE, s->instant ? TE_TYPE_INSTANT : TE_TYPE_SLICE_BEGIN);
	pb__varint(p, TE_TRACK_UUID, s->track);
	pb__varint(p, TE_CATEGORY_IIDS, pf__cat_iid(pf, s->cat));
	iid = pf__name_iid(pf, s->name, len);
	if (iid)
		pb__varint(p, TE_NAME_IID, iid);
	else
		pf__str(p, TE_NAME, s->name, len);
	put_args(pf, s);
	if (s->flow)
		pb__fixed64(p, TE_FLOW_IDS, s->flow);
	if (s->nstack && (iid = pf__stack_iid(pf, s->stack, s->nstack)))
		pb__varint(p, TE_CALLSTACK_IID, iid);
	pb__end(p);
	err = pf__packet_end(pf, true);
	if (err || s->instant) {
		pf->n.instants += !err;
		return err;
	}
	pf__packet_begin(pf, s->end > s->start ? s->end : s->start);
	pb__begin(p, PKT_TRACK_EVENT);
	pb__varint(p, TE_TYPE, TE_TYPE_SLICE_END);
	pb__varint(p, TE_TRACK_UUID, s->track);
	pb__end(p);
	err = pf__packet_end(pf, true);
	pf->n.slices += !err;
	return err;
}


int pf__emit_apis(struct perfetto *pf)
{
	const struct trace *t = pf->t;
	size_t i;
	int err;

	for (i = 0; i < t->napis; i++) {
		const struct xpu_rec_gpu_api *a = &t->apis[i];
		const char *n = trace__string(t, a->name_str);
		struct pf_slice s = { .cat = "cuda_api", .start = a->start_ns, .end = a->end_ns };
		const struct gpu_work *w;
		char buf[32];

		if (!filter__span(&pf->ses->filter, a->pid, a->tid, a->start_ns, a->end_ns))
			continue;
		if (!n || !*n) {
			snprintf(buf, sizeof(buf), "cbid %u", a->cbid);
			n = buf;
		}
		s.track = pf__thread_track(pf, a->pid, a->tid);
		s.name = n;
		s.name_len = api_name_len(n);
		pf__arg_u(&s, ARG_CORRELATION_ID, a->corr_id);
		pf__arg_u(&s, ARG_CBID, a->cbid);
		if (a->return_code)
			pf__arg_i(&s, ARG_RETURN_CODE, a->return_code);
		w = gpu_join__copy(pf->j, a->pid, a->corr_id);
		if (w)
			pf__arg_u(&s, ARG_BYTES, w->bytes);
		err = pf__slice(pf, &s);
		if (err)
			return err;
	}
	return 0;
}

int pf__emit_nvtx(struct perfetto *pf)
{
	const struct trace *t = pf->t;
	size_t i;
	int err;

	for (i = 0; i < t->nnvtxs; i++) {
		const struct xpu_rec_nvtx *r = &t->nvtxs[i];
		const char *n = trace__string(t, r->name_str), *dom = trace__string(t, r->domain_str);
		bool marker = r->kind == XPU_NVTX_MARKER || r->end_ns <= r->start_ns;
		struct pf_slice s = { .cat = "nvtx", .start = r->start_ns, .end = r->end_ns,
				      .instant = marker };
		char color[16];

		if (!filter__span(&pf->ses->filter, r->pid, r->tid, r->start_ns,
				  marker ? r->start_ns : r->end_ns))
			continue;
		s.track = pf__thread_track(pf, r->pid, r->tid);
		s.name = n && *n ? n : "[nvtx]";
		s.name_len = strlen(s.name);
		if (dom && *dom)
			pf__arg_s(&s, ARG_DOMAIN, dom);
		if (r->color_argb) {
			snprintf(color, sizeof(color), "#%06x", r->color_argb & 0xffffff);
			pf__arg_s(&s, ARG_COLOR, color);
		}
		err = pf__slice(pf, &s);
		if (err)
			return err;
	}
	return 0;
}

int pf__emit_off_cpu(struct perfetto *pf)
{
	const struct trace *t = pf->t;
	size_t i;
	int err;

	for (i = 0; i < t->noffcpus; i++) {
		const struct xpu_rec_off_cpu *o = &t->offcpus[i];
		struct pf_slice s = { .cat = "off_cpu", .start = o->ts_ns, .end = o->ts_ns + o->dur_ns };
		const uint32_t *f;
		char name[48];
		uint32_t nf;

		if (!filter__span(&pf->ses->filter, o->pid, o->tid, o->ts_ns, o->ts_ns + o->dur_ns))
			continue;
		snprintf(name, sizeof(name), "[off-cpu] %s", off_cpu_state_name(o->state));
		s.track = pf__thread_track(pf, o->pid, o->tid);
		s.name = name;
		s.name_len = strlen(name);
		pf__arg_s(&s, ARG_STATE, off_cpu_state_name(o->state));
		if (o->waker_tid)
			pf__arg_u(&s, ARG_WAKER_TID, o->waker_tid);
		err = session__stack(pf->ses, o->pid, o->ts_ns, session__offcpu_stack(pf->ses, i), false,
				     &f, &nf);
		if (err)
			return err;
		s.stack = f;
		s.nstack = nf;
		err = pf__slice(pf, &s);
		if (err)
			return err;
	}
	return 0;
}

int pf__emit_ioctls(struct perfetto *pf)
{
	const struct trace *t = pf->t;
	char hex[16];
	size_t i;
	int err;

	for (i = 0; i < t->nioctls; i++) {
		const struct xpu_rec_driver_ioctl *io = &t->ioctls[i];
		const char *file = io->file_str ? trace__string(t, io->file_str) : NULL;
		const char *name = ioctl_request_name(io->request, file);
		struct pf_slice s = { .cat = "driver", .start = io->start_ns, .end = io->end_ns };

		if (!filter__span(&pf->ses->filter, io->pid, io->tid, io->start_ns, io->end_ns))
			continue;
		snprintf(hex, sizeof(hex), "%#x", io->request);
		s.track = pf__thread_track(pf, io->pid, io->tid);
		s.name = name ? name : hex;
		s.name_len = strlen(s.name);
		pf__arg_s(&s, ARG_REQUEST, hex);
		pf__arg_s(&s, ARG_FILE, file ? file : "?");
		pf__arg_u(&s, ARG_FD, io->fd);
		pf__arg_i(&s, ARG_RET, io->ret);
		if (io->flags & XPU_IOCTL_DRIVER_TIMED)
			pf__arg_d(&s, ARG_DRIVER_US, io->driver_ns / 1e3);
		err = pf__slice(pf, &s);
		if (err)
			return err;
	}
	return 0;
}
