// SPDX-License-Identifier: MIT
/*
 * Issues ioctls for tests/e2e/test_driver_ioctl.sh: on FILE, which the test names as a device
 * file (XPU_DRIVER_TEST_PATHS), COUNT with request 0xc0104629 from the main thread, COUNT with
 * 0xc030462b from a second thread, one with 0xc020462a; and COUNT on /dev/null, which must not
 * be recorded. A regular file answers them all with ENOTTY.
 *
 *   ioctl_app FILE COUNT
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int fd;
static unsigned long count;

static void *second_thread(void *arg)
{
	char buf[64];
	unsigned long i;

	for (i = 0; i < count; i++)
		ioctl(fd, 0xc030462bu, buf);
	return NULL;
}

int main(int argc, char **argv)
{
	char buf[64];
	unsigned long i;
	pthread_t t;
	int other;

	if (argc != 3) {
		fprintf(stderr, "usage: ioctl_app FILE COUNT\n");
		return 2;
	}
	count = strtoul(argv[2], NULL, 10);
	fd = open(argv[1], O_RDONLY);
	other = open("/dev/null", O_RDONLY);
	if (fd < 0 || other < 0) {
		perror("ioctl_app: open");
		return 1;
	}
	for (i = 0; i < count; i++) {
		ioctl(fd, 0xc0104629u, buf);
		ioctl(other, 0xc0104629u, buf);
	}
	if (pthread_create(&t, NULL, second_thread, NULL) || pthread_join(t, NULL))
		return 1;
	ioctl(fd, 0xc020462au, buf);
	printf("tid %d\n", (int)gettid());
	return 0;
}
