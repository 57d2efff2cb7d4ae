// SPDX-License-Identifier: MIT
/* Opening files named by untrusted input (see safe_open.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safe_open.h"

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* Whether the file path resolves to lies in a pseudo-filesystem; decided with lstat only. */
static int pseudo_fs(const char *path)
{
	char *real = realpath(path, NULL);
	bool bad;

	if (!real)
		return -errno;
	bad = under(real, "/proc") || under(real, "/sys") || under(real, "/dev");
	free(real);
	return bad ? -EPERM : 0;
}

int safe_open__ro(const char *path, uint64_t *size)
{
	struct stat before, after;
	int fd, err;

	if (stat(path, &before))
		return -errno;
	if (!S_ISREG(before.st_mode) || !before.st_size)
		return -EINVAL;
	err = pseudo_fs(path);
	if (err)
		return err;
	/* O_NONBLOCK: should the name now be a FIFO, open must not wait for a writer */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	/* the same regular file that was checked, not one swapped in since */
	if (fstat(fd, &after) || !S_ISREG(after.st_mode) || after.st_dev != before.st_dev ||
	    after.st_ino != before.st_ino || !after.st_size) {
		close(fd);
		return -EINVAL;
	}
	if (size)
		*size = (uint64_t)after.st_size;
	return fd;
}
