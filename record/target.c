// SPDX-License-Identifier: MIT
/*
 * Target lifecycle. The launched child waits on a pipe: exec'ing before the BPF side traces
 * its pid would lose the exec event, the first mappings and the first samples.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fd_limit.h"
#include "target.h"
#include "user_creds.h"
#include "writer_thread.h"

static void report_exec_failure(int fd, int err)
{
	ssize_t n = write(fd, &err, sizeof(err));

	(void)n;	/* the exit status says it anyway */
}

int target__launch(struct target *t, char *const *cmd, char **env_extra)
{
	struct user_creds creds = { 0 };
	int fds[2], efds[2];
	pid_t pid;
	char go;

	if (t->drop_root)
		user_creds__load(&creds, t->uid, t->gid, t->user);
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	/* the child reports a failed exec here; a successful one closes it (O_CLOEXEC) */
	if (pipe2(efds, O_CLOEXEC)) {
		int err = -errno;

		close(fds[0]);
		close(fds[1]);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(fds[0]);
		close(fds[1]);
		close(efds[0]);
		close(efds[1]);
		return err;
	}
	if (pid == 0) {
		sigset_t none;
		char **e;
		int err;

		close(fds[1]);
		close(efds[0]);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (read(fds[0], &go, 1) != 1 || go != 1)
			_exit(127);
		close(fds[0]);
		if (t->drop_root && (err = -user_creds__become(&creds))) {
			fprintf(stderr, "xpu-record: cannot run %s as uid %u: %s\n", cmd[0],
				(unsigned int)t->uid, strerror(err));
			report_exec_failure(efds[1], err);
			_exit(127);
		}
		for (e = env_extra; e && *e; e++)
			putenv(*e);
		fd_limit__restore(&t->nofile);
		execvp(cmd[0], cmd);
		err = errno;
		fprintf(stderr, "xpu-record: cannot run %s: %s\n", cmd[0], strerror(err));
		report_exec_failure(efds[1], err);
		/* as a shell does: 127 not found, 126 found but not runnable */
		_exit(err == ENOENT ? 127 : 126);
	}
	close(fds[0]);
	close(efds[1]);
	t->pid = pid;
	t->gate_fd = fds[1];
	t->exec_fd = efds[0];
	fcntl(t->exec_fd, F_SETFL, O_NONBLOCK);
	t->env_extra = env_extra;
	return 0;
}

int target__release(struct target *t, int go)
{
	char c = go ? 1 : 0;
	int ret = 0;

	if (t->gate_fd < 0)
		return 0;
	if (write(t->gate_fd, &c, 1) != 1)
		ret = -errno;
	close(t->gate_fd);
	t->gate_fd = -1;
	return ret;
}

bool target__exec_failed(struct target *t)
{
	ssize_t n;
	int err;

	if (t->exec_fd < 0)
		return false;
	do {
		n = read(t->exec_fd, &err, sizeof(err));
	} while (n < 0 && errno == EINTR);
	close(t->exec_fd);
	t->exec_fd = -1;
	return n == sizeof(err);
}

static size_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, size);
	close(fd);
	return n > 0 ? (size_t)n : 0;
}

int target__describe_threads(pid_t pid, struct writer_thread *wt, uint64_t ts_ns)
{
	char path[64], comm[64];
	struct dirent *de;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		struct xpu_rec_task rec = { .ts_ns = ts_ns, .pid = (uint32_t)pid };
		struct wt_rec r = {
			.type = XPU_REC_TASK, .ts_ns = ts_ns,
			.body = &rec, .body_size = sizeof(rec), .nr_str = 1, .must_keep = true,
		};
		size_t len;
		pid_t tid = atoi(de->d_name);

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
		len = read_small(path, comm, sizeof(comm) - 1);
		while (len && comm[len - 1] == '\n')
			len--;
		rec.tid = (uint32_t)tid;
		rec.kind = tid == pid ? XPU_TASK_COMM : XPU_TASK_THREAD;
		r.str[0].off = offsetof(struct xpu_rec_task, comm_str);
		r.str[0].s = comm;
		r.str[0].len = (uint32_t)len;
		writer_thread__submit(wt, &r);
		n++;
	}
	closedir(dir);
	return n;
}

size_t target__cmdline(pid_t pid, char *buf, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	return read_small(path, buf, size);
}
