// SPDX-License-Identifier: MIT
/*
 * The trace's processes and threads: names, exec generations and sample counts, built from
 * the TASK records once every record is in, and each process's PROCESS_ENV (its rank).
 */
#include <errno.h>
#include <stdio.h>

#include "base/sort.h"
#include "trace/load.h"
#include "trace/trace.h"

const struct tr_proc *trace__proc(const struct trace *t, uint32_t pid)
{
	uint32_t *v = kmap__get(&t->proc_ids, pid, 0);

	return v ? &t->procs[*v] : NULL;
}

const struct tr_thread *trace__thread(const struct trace *t, uint32_t tid)
{
	uint32_t *v = kmap__get(&t->thread_ids, tid, 0);

	return v ? &t->threads[*v] : NULL;
}

static struct tr_proc *proc_get(struct trace *t, uint32_t pid)
{
	struct tr_proc p = { .pid = pid };
	uint32_t *v;
	bool ins;

	v = kmap__put(&t->proc_ids, pid, 0, t->nprocs, &ins);
	if (!v)
		return NULL;
	if (ins && PUSH(t, procs, p)) {
		/* leave the map consistent: point at nothing valid is worse than no entry */
		*v = 0;
		return NULL;
	}
	return &t->procs[*v];
}

static struct tr_thread *thread_get(struct trace *t, uint32_t pid, uint32_t tid)
{
	struct tr_thread th = { .pid = pid, .tid = tid };
	uint32_t *v;
	bool ins;

	v = kmap__put(&t->thread_ids, tid, 0, t->nthreads, &ins);
	if (!v)
		return NULL;
	if (ins && PUSH(t, threads, th)) {
		*v = 0;
		return NULL;
	}
	return &t->threads[*v];
}

/* Per-process names and exec generations from TASK records (sorted by ts). */
static int build_tasks(struct trace *t)
{
	size_t i;

	for (i = 0; i < t->ntasks; i++) {
		const struct xpu_rec_task *k = &t->tasks[i];
		struct tr_proc *p = proc_get(t, k->pid);
		struct tr_thread *th = thread_get(t, k->pid, k->tid ? k->tid : k->pid);

		if (!p || !th)
			return -ENOMEM;
		bool comm_ok = k->comm_str && trace__string(t, k->comm_str);

		if (k->kind == XPU_TASK_FORK && k->parent_pid != k->pid && !p->parent_pid)
			p->parent_pid = k->parent_pid;
		switch (k->kind) {
		case XPU_TASK_EXEC:
			if (VEC_PUSH(p->exec_ts, p->nexec, p->exec_cap, k->ts_ns))
				return -ENOMEM;
			/* fallthrough */
		case XPU_TASK_COMM:
			if (comm_ok && (k->kind == XPU_TASK_EXEC || !k->tid || k->tid == k->pid)) {
				p->comm_str = k->comm_str;
				p->comm_ts = k->ts_ns;
			}
			/* fallthrough */
		case XPU_TASK_THREAD:
		case XPU_TASK_FORK:
			if (comm_ok) {
				th->comm_str = k->comm_str;
				th->comm_ts = k->ts_ns;
				/* a forked child carries its parent's name until it execs */
				if (k->kind == XPU_TASK_FORK && !p->comm_str)
					p->comm_str = k->comm_str;
			}
			break;
		default:
			break;
		}
	}
	for (i = 0; i < t->nsamples; i++) {
		struct tr_proc *p = proc_get(t, t->samples[i].pid);
		struct tr_thread *th = thread_get(t, t->samples[i].pid, t->samples[i].tid);

		if (!p || !th)
			return -ENOMEM;
		p->samples++;
		th->samples++;
	}
	/* a thread that only ever blocked still has a name and a track */
	for (i = 0; i < t->noffcpus; i++) {
		if (!proc_get(t, t->offcpus[i].pid) ||
		    !thread_get(t, t->offcpus[i].pid, t->offcpus[i].tid))
			return -ENOMEM;
	}
	return 0;
}

struct exec_at {
	const struct tr_proc *p;
	uint64_t ts;
};

static bool exec_at_most(size_t i, const void *arg)
{
	const struct exec_at *at = arg;

	return at->p->exec_ts[i] <= at->ts;
}

uint32_t trace__generation(const struct trace *t, uint32_t pid, uint64_t ts)
{
	const struct tr_proc *p = trace__proc(t, pid);

	if (!p || !p->nexec)
		return 0;
	return upper_bound(p->nexec, exec_at_most, &(struct exec_at){ p, ts });
}

const char *trace__comm(const struct trace *t, uint32_t pid, char *buf, size_t len)
{
	const struct tr_proc *p = trace__proc(t, pid);
	const char *s = p ? trace__string(t, p->comm_str) : NULL;

	if (s && *s)
		return s;
	snprintf(buf, len, "[pid %u]", pid);
	return buf;
}

int load__tasks(struct trace *t)
{
	int ret = build_tasks(t);
	bool ins;
	size_t i;

	/* a process's last PROCESS_ENV says its rank */
	for (i = 0; !ret && i < t->npenvs; i++) {
		uint32_t *v = kmap__put(&t->penv_ids, t->penvs[i].pid, 0, (uint32_t)i, &ins);

		if (!v)
			ret = -ENOMEM;
		else
			*v = (uint32_t)i;
	}
	return ret;
}

const struct xpu_rec_process_env *trace__process_env(const struct trace *t, uint32_t pid)
{
	const struct tr_proc *p;
	uint32_t *v;
	int depth;

	/* its own record, else its parent's (a DataLoader worker runs no CUDA, has the rank) */
	for (depth = 0; t->npenvs && depth < 64 && pid; depth++) {
		v = kmap__get(&t->penv_ids, pid, 0);
		if (v)
			return &t->penvs[*v];
		p = trace__proc(t, pid);
		if (!p || p->parent_pid == pid)
			break;
		pid = p->parent_pid;
	}
	return NULL;
}
