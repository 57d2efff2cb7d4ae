// SPDX-License-Identifier: MIT
/* /proc/PID/maps line by line, or one mapping by address (see maps_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "maps_file.h"

int maps_file__each(pid_t pid, int (*fn)(void *ctx, const struct maps_entry *e), void *ctx)
{
	char path[64], line[PATH_MAX + 256], range[40];
	int ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		struct maps_entry e = { .range = range };
		unsigned int maj, min;
		char perms[5];
		size_t len;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
			   &maj, &min, &ino, &pos) < 7)
			continue;
		len = strlen(line + pos);
		while (len && (line[pos + len - 1] == '\n' || line[pos + len - 1] == ' '))
			line[pos + --len] = '\0';
		snprintf(range, sizeof(range), "%llx-%llx", start, end);
		e.start = start;
		e.end = end;
		e.pgoff = pgoff;
		e.ino = ino;
		e.dev = (maj << 20) | min;
		e.read = perms[0] == 'r';
		e.write = perms[1] == 'w';
		e.exec = perms[2] == 'x';
		e.path = line + pos;
		ret = fn(ctx, &e);
	}
	fclose(f);
	return ret;
}

/* The kernel's ABI for one mapping by address (include/uapi/linux/fs.h since 6.11). */
struct pm_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start, vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};

#define PM_QUERY _IOWR('f', 17, struct pm_query)
#define PM_VMA_READABLE 1
#define PM_VMA_WRITABLE 2
#define PM_VMA_EXECUTABLE 4

int maps_file__at(pid_t pid, uint64_t addr, int (*fn)(void *ctx, const struct maps_entry *e),
		  void *ctx)
{
	char path[64], name[PATH_MAX], range[40];
	struct pm_query q = {
		.size = sizeof(q),
		.query_addr = addr,
		.vma_name_size = sizeof(name),
		.vma_name_addr = (uint64_t)(uintptr_t)name,
	};
	struct maps_entry e = { .range = range, .path = name };
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	name[0] = '\0';
	err = ioctl(fd, PM_QUERY, &q) ? -errno : 0;
	close(fd);
	/* ENOTTY: no such ioctl; EINVAL: one that does not know this struct */
	if (err == -ENOTTY || err == -EINVAL)
		return -EOPNOTSUPP;
	/* the process exits: its mm is gone before its /proc entry */
	if (err == -ESRCH || (err == -ENOENT && !q.vma_end && access(path, F_OK)))
		return -ESRCH;
	if (err)
		return err;
	snprintf(range, sizeof(range), "%llx-%llx", (unsigned long long)q.vma_start,
		 (unsigned long long)q.vma_end);
	e.start = q.vma_start;
	e.end = q.vma_end;
	e.pgoff = q.vma_offset;
	e.ino = q.inode;
	e.dev = (q.dev_major << 20) | q.dev_minor;
	e.read = q.vma_flags & PM_VMA_READABLE;
	e.write = q.vma_flags & PM_VMA_WRITABLE;
	e.exec = q.vma_flags & PM_VMA_EXECUTABLE;
	name[sizeof(name) - 1] = '\0';
	return fn(ctx, &e);
}
