// SPDX-License-Identifier: MIT
/*
 * For test_many_maps.sh: a process that makes N executable mappings, of N files of its own
 * (DIR/0 ...), one mmap each, as a program that dlopens N libraries does. After each it waits
 * until the recorder has opened that file (inotify): the recorder then has read that mmap,
 * while the process ran with all the mappings made so far, however loaded the machine. The
 * wait fails (exit 1, saying which file) after 60 s: a recorder that never opens a file is
 * broken. With "fork", a child then works in many_maps_child_work without exec'ing; with
 * SRC, each file is a copy of SRC (an ELF library, say) rather than a page of zeros.
 * Usage: many_maps DIR N [fork|SRC]
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void many_maps_child_work(void)
{
	for (unsigned long i = 0; i < 300000000ul; i++)
		sink += i;
}

static int make_file(const char *path, const char *src)
{
	static const char page[4096];
	char buf[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int in = src ? open(src, O_RDONLY | O_CLOEXEC) : -1;
	int ok = fd >= 0 && (src ? in >= 0 : write(fd, page, sizeof(page)) == (ssize_t)sizeof(page));
	ssize_t n;

	while (ok && in >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(fd, buf, (size_t)n) == n;
	if (in >= 0)
		close(in);
	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* Reads inotify events until one more IN_OPEN of wd; 60 s at most. */
static int wait_open(int in, int wd, const char *path)
{
	struct pollfd pfd = { .fd = in, .events = POLLIN };
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	for (;;) {
		ssize_t n;

		if (poll(&pfd, 1, 60000) != 1) {
			fprintf(stderr, "many_maps: nobody opened %s within 60 s of its mmap\n",
				path);
			return -1;
		}
		n = read(in, buf, sizeof(buf));
		for (char *q = buf; n > 0 && q < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)q;

			if (ev->wd == wd && (ev->mask & IN_OPEN))
				return 0;
			q += sizeof(*ev) + ev->len;
		}
	}
}

/*
 * Maps path executable, then waits for an open of it that is not ours. Ours is read first:
 * inotify folds an event into the one before it when that is the same and still unread.
 */
static int map_and_wait(int in, const char *path)
{
	int wd, fd;
	void *p;

	wd = inotify_add_watch(in, path, IN_OPEN);
	fd = wd < 0 ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || wait_open(in, wd, path))
		return -1;
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED || wait_open(in, wd, path))
		return -1;
	inotify_rm_watch(in, wd);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;
	char path[PATH_MAX];
	int in = inotify_init1(IN_CLOEXEC);
	bool fork_child = argc > 3 && !strcmp(argv[3], "fork");
	const char *src = argc > 3 && !fork_child ? argv[3] : NULL;
	pid_t pid;

	if (argc < 3 || in < 0) {
		fprintf(stderr, "usage: many_maps DIR N [fork|SRC]\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%ld", argv[1], i);
		if (make_file(path, src) || map_and_wait(in, path)) {
			perror(path);
			return 1;
		}
	}
	if (fork_child) {
		pid = fork();
		if (pid == 0) {
			many_maps_child_work();
			_exit(0);
		}
		waitpid(pid, NULL, 0);
	}
	return 0;
}
