// SPDX-License-Identifier: MIT
/*
 * For test_pack_gone.sh: code the host cannot reach by its path once the process runs it. It
 * loads LIB, then replaces LIB's file (unlink, a new file at the path: an upgrade), loads
 * UPLIB (the test replaces that one itself, later), and loads MEMLIB's bytes from a memfd;
 * works in each (xpu_gone_spin, xpu_up_spin, xpu_memfd_spin); then waits for a line on FIFO,
 * so that it still lives when the recorder reads what it mapped, and works in UPLIB again.
 * Usage: gone_main LIB MEMLIB UPLIB FIFO
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

static void *load(const char *path, const char *fn)
{
	void *h = dlopen(path, RTLD_NOW), *f = h ? dlsym(h, fn) : NULL;

	if (!f)
		fprintf(stderr, "gone_main: %s in %s: %s\n", fn, path, dlerror());
	return f;
}

int main(int argc, char **argv)
{
	void (*gone)(double), (*mem)(double), (*up)(double);
	char path[64], c;
	struct stat st;
	int src, mfd, fd;

	if (argc < 5)
		return 2;
	gone = (void (*)(double))load(argv[1], "xpu_gone_spin");
	if (!gone || unlink(argv[1]))
		return 1;
	/* the upgrade: another file at the path */
	fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || write(fd, "not the library\n", 16) != 16)
		return 1;
	close(fd);
	up = (void (*)(double))load(argv[3], "xpu_up_spin");
	if (!up)
		return 1;
	src = open(argv[2], O_RDONLY);
	mfd = memfd_create("xpu-test-lib", 0);
	if (src < 0 || mfd < 0 || fstat(src, &st) ||
	    sendfile(mfd, src, NULL, (size_t)st.st_size) != st.st_size)
		return 1;
	close(src);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
	mem = (void (*)(double))load(path, "xpu_memfd_spin");
	if (!mem)
		return 1;
	gone(0.3);
	mem(0.3);
	up(0.2);
	fd = open(argv[4], O_RDONLY);
	if (fd < 0 || read(fd, &c, 1) != 1)
		return 1;
	/* UPLIB's file is another one now: its code still runs, from the mapping */
	up(0.2);
	return 0;
}
