// SPDX-License-Identifier: MIT
/*
 * record/elf_deps.c against the dynamic loader: every file this test program has mapped
 * executable (its own executable, ld.so and every library it was linked with) must be among
 * the files elf_deps__collect() finds for it, as must python3's and a "#!" script's; bad
 * commands get an error, not a crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "elf_deps.h"

struct found {
	dev_t dev[ELF_DEPS_MAX];
	ino_t ino[ELF_DEPS_MAX];
	int n;
};

static void add(const char *path, int fd, void *arg)
{
	struct found *f = arg;
	struct stat st;

	CHECK(fd >= 0 && !fstat(fd, &st), "%s: fd %d", path, fd);
	if (fd >= 0 && !fstat(fd, &st) && f->n < ELF_DEPS_MAX) {
		f->dev[f->n] = st.st_dev;
		f->ino[f->n++] = st.st_ino;
	}
	close(fd);
}

static int has(const struct found *f, const char *path)
{
	struct stat st;
	int i;

	if (stat(path, &st))
		return 0;
	for (i = 0; i < f->n; i++)
		if (f->dev[i] == st.st_dev && f->ino[i] == st.st_ino)
			return 1;
	return 0;
}

/* Every file-backed executable mapping of this process must have been found. */
static void check_self(const char *self)
{
	struct found f = { 0 };
	char line[4400];
	int n = 0, ret;
	FILE *maps;

	ret = elf_deps__collect(self, add, &f);
	CHECK(ret >= 3, "%s: %d files", self, ret);
	maps = fopen("/proc/self/maps", "r");
	CHECK(maps != NULL, "/proc/self/maps");
	if (!maps)
		return;
	while (fgets(line, sizeof(line), maps)) {
		char perms[8], *path = strchr(line, '/');

		if (sscanf(line, "%*x-%*x %7s", perms) != 1 || perms[2] != 'x' || !path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		CHECK(has(&f, path), "mapped %s not among the %d files found", path, f.n);
		n++;
	}
	fclose(maps);
	CHECK(n >= 3, "only %d executable file mappings", n);
}

int main(int argc, char **argv)
{
	char script[] = "/tmp/xpu-elf-deps-XXXXXX";
	struct found f = { 0 };
	int fd;

	(void)argc;
	check_self(argv[0]);

	/* a PATH lookup, as execvp does */
	if (!access("/usr/bin/env", X_OK)) {
		CHECK(elf_deps__collect("env", add, &f) >= 2, "env through PATH");
		CHECK(has(&f, "/usr/bin/env") || has(&f, "/bin/env"), "env not found");
	}

	/* a script: its interpreter and that interpreter's libraries */
	fd = mkstemp(script);
	CHECK(fd >= 0, "mkstemp");
	if (fd >= 0) {
		memset(&f, 0, sizeof(f));
		CHECK(write(fd, "#!/bin/sh\necho\n", 15) == 15, "write");
		close(fd);
		CHECK(elf_deps__collect(script, add, &f) >= 3, "script: %d files", f.n);
		CHECK(has(&f, "/bin/sh"), "script interpreter not found");
		/* a file that is neither ELF nor script is just itself */
		memset(&f, 0, sizeof(f));
		fd = open(script, O_WRONLY | O_TRUNC);
		CHECK(fd >= 0 && write(fd, "hello\n", 6) == 6, "rewrite");
		if (fd >= 0)
			close(fd);
		CHECK(elf_deps__collect(script, add, &f) == 1, "plain file: %d", f.n);
		unlink(script);
	}

	CHECK(elf_deps__collect("/nonexistent/xpu", add, &f) == -ENOENT, "missing file");
	CHECK(elf_deps__collect("xpu-no-such-command-here", add, &f) == -ENOENT, "not in PATH");
	memset(&f, 0, sizeof(f));
	CHECK(elf_deps__collect("/dev/null", add, &f) <= 0, "not a regular file");
	return unit_finish();
}
