// SPDX-License-Identifier: MIT
/* /proc/PID/maps line by line (see maps_file.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

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
