// SPDX-License-Identifier: MIT
/*
 * The set of traced processes and whether each still runs. A lock guards it because the
 * drain thread writes it while the main thread signals and counts; the count is atomic so the
 * main loop's frequent "anything left?" costs no lock.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc_tree.h"

struct live_pid {
	pid_t pid;
	bool exited;
	int status;
};

struct proc_tree {
	pthread_mutex_t lock;
	struct live_pid *pids;
	size_t nr, cap;
	_Atomic unsigned int live;
};

static struct live_pid *pid_find(struct proc_tree *t, pid_t pid)
{
	size_t i;

	for (i = 0; i < t->nr; i++)
		if (t->pids[i].pid == pid)
			return &t->pids[i];
	return NULL;
}

struct proc_tree *proc_tree__new(pid_t seed)
{
	struct proc_tree *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	proc_tree__add(t, seed);
	if (!t->nr) {
		proc_tree__free(t);
		return NULL;
	}
	return t;
}

void proc_tree__free(struct proc_tree *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t->pids);
	free(t);
}

void proc_tree__add(struct proc_tree *t, pid_t pid)
{
	struct live_pid *p;

	pthread_mutex_lock(&t->lock);
	p = pid_find(t, pid);
	if (p) {
		/* pid reuse after an exit */
		if (p->exited) {
			p->exited = false;
			atomic_fetch_add(&t->live, 1);
		}
		goto out;
	}
	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct live_pid *n = realloc(t->pids, cap * sizeof(*n));

		if (!n)
			goto out;
		t->pids = n;
		t->cap = cap;
	}
	t->pids[t->nr++] = (struct live_pid){ .pid = pid };
	atomic_fetch_add(&t->live, 1);
out:
	pthread_mutex_unlock(&t->lock);
}

void proc_tree__exited(struct proc_tree *t, pid_t pid, int status)
{
	struct live_pid *p;

	pthread_mutex_lock(&t->lock);
	p = pid_find(t, pid);
	if (p && !p->exited) {
		p->exited = true;
		p->status = status;
		atomic_fetch_sub(&t->live, 1);
	}
	pthread_mutex_unlock(&t->lock);
}

static bool proc_alive(pid_t pid)
{
	char path[64], buf[512], *s;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	s = strrchr(buf, ')');
	/* A zombie has run its exit already: it is no longer part of the live tree. */
	return !(s && s[1] == ' ' && (s[2] == 'Z' || s[2] == 'X'));
}

size_t proc_tree__reap_gone(struct proc_tree *t, pid_t *gone, size_t max)
{
	size_t i, n = 0;

	pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->nr && n < max; i++)
		if (!t->pids[i].exited && !proc_alive(t->pids[i].pid))
			gone[n++] = t->pids[i].pid;
	pthread_mutex_unlock(&t->lock);
	for (i = 0; i < n; i++)
		proc_tree__exited(t, gone[i], -1);
	return n;
}

unsigned int proc_tree__live(struct proc_tree *t)
{
	return atomic_load(&t->live);
}

void proc_tree__signal(struct proc_tree *t, int sig)
{
	size_t i;

	pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->nr; i++)
		if (!t->pids[i].exited)
			kill(t->pids[i].pid, sig);
	pthread_mutex_unlock(&t->lock);
}

int proc_tree__exit_status(struct proc_tree *t, pid_t pid, int *status)
{
	struct live_pid *p;
	int ret = -ENOENT;

	pthread_mutex_lock(&t->lock);
	p = pid_find(t, pid);
	if (p && p->exited && p->status >= 0) {
		*status = p->status;
		ret = 0;
	}
	pthread_mutex_unlock(&t->lock);
	return ret;
}
