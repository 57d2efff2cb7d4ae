// SPDX-License-Identifier: MIT
/*
 * A command's executable, interpreter and DT_NEEDED closure, breadth first, as the dynamic
 * loader would find them. Everything read is bounds-checked by libelf: the files are the
 * user's, and a wrong guess costs only a table built for nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_deps.h"

#define DEPS_PATHS 16		/* search-path entries kept per list */

static const char *const sys_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib",
	"/usr/lib", "/usr/local/lib",
};

struct deps {
	void (*fn)(const char *path, int fd, void *arg);
	void *arg;
	struct { dev_t dev; ino_t ino; } seen[ELF_DEPS_MAX];
	char *queue[ELF_DEPS_MAX];	/* paths found, not yet read */
	int nseen, head;
	char exe_rpath[PATH_MAX];	/* DT_RPATH of the executable, $ORIGIN expanded */
	bool script_interp;		/* the command is a script: queue[1] is the executable */
};

/* Takes fd: 1 if the file is new and was queued (fn called), 0 if seen, full or failed. */
static int add_file(struct deps *d, const char *path, int fd)
{
	struct stat st;
	char *copy;
	int i;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || d->nseen == ELF_DEPS_MAX)
		goto skip;
	for (i = 0; i < d->nseen; i++)
		if (d->seen[i].dev == st.st_dev && d->seen[i].ino == st.st_ino)
			goto skip;
	copy = strdup(path);
	if (!copy)
		goto skip;
	d->seen[d->nseen].dev = st.st_dev;
	d->seen[d->nseen].ino = st.st_ino;
	d->queue[d->nseen++] = copy;
	d->fn(path, fd, d->arg);
	return 1;
skip:
	close(fd);
	return 0;
}

/* Expands $ORIGIN / ${ORIGIN} of one search-path list into out. */
static void expand_origin(const char *list, const char *origin, char *out, size_t size)
{
	size_t n = 0;

	while (*list && n + 1 < size) {
		size_t skip = !strncmp(list, "$ORIGIN", 7) ? 7 : !strncmp(list, "${ORIGIN}", 9) ? 9 : 0;

		if (skip) {
			n += (size_t)snprintf(out + n, size - n, "%s", origin);
			if (n >= size)
				n = size - 1;
			list += skip;
		} else {
			out[n++] = *list++;
		}
	}
	out[n] = '\0';
}

/* Opens name in the ':'-separated dirs; 1 when found there (and handed to add_file). */
static int search(struct deps *d, const char *dirs, const char *name)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int i = 0;

	while (dirs && *dirs && i++ < DEPS_PATHS) {
		size_t len = strcspn(dirs, ":");
		int fd;

		if (len && len < sizeof(dir)) {
			memcpy(dir, dirs, len);
			dir[len] = '\0';
			if (snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path) &&
			    (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
				add_file(d, path, fd);
				return 1;
			}
		}
		dirs += len;
		if (*dirs)
			dirs++;
	}
	return 0;
}

static void find_lib(struct deps *d, const char *name, const char *rpath, const char *runpath)
{
	size_t i;

	if (strchr(name, '/')) {
		add_file(d, name, open(name, O_RDONLY | O_CLOEXEC));
		return;
	}
	if (!*runpath && (search(d, rpath, name) || search(d, d->exe_rpath, name)))
		return;
	if (search(d, getenv("LD_LIBRARY_PATH"), name) || search(d, runpath, name))
		return;
	for (i = 0; i < sizeof(sys_dirs) / sizeof(sys_dirs[0]); i++)
		if (search(d, sys_dirs[i], name))
			return;
}

/* Virtual address to file offset through the PT_LOADs; false if in none. */
static bool vaddr_off(Elf *elf, size_t nph, uint64_t va, uint64_t *off)
{
	GElf_Phdr ph;
	size_t i;

	for (i = 0; i < nph; i++) {
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && va >= ph.p_vaddr &&
		    va - ph.p_vaddr < ph.p_filesz) {
			*off = va - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

/* A "#!" script: its interpreter is what runs (then read as the executable). */
static bool shebang(struct deps *d, int fd)
{
	char line[256], *p, *end;
	ssize_t n = pread(fd, line, sizeof(line) - 1, 0);

	if (n < 3 || line[0] != '#' || line[1] != '!')
		return false;
	line[n] = '\0';
	for (p = line + 2; *p == ' ' || *p == '\t'; p++)
		;
	end = p + strcspn(p, " \t\n");
	*end = '\0';
	if (*p == '/' && add_file(d, p, open(p, O_RDONLY | O_CLOEXEC)))
		d->script_interp = true;
	return true;
}

/* Queues the interpreter and the DT_NEEDED libraries of the file at path. */
static void read_deps(struct deps *d, const char *path, bool is_exe)
{
	char origin[PATH_MAX], rpath[PATH_MAX] = "", runpath[PATH_MAX] = "";
	const char *needed[64], *slash;
	uint64_t strtab = 0, strsz = 0, stroff, rp = UINT64_MAX, rup = UINT64_MAX;
	size_t nph, i, nneeded = 0;
	GElf_Dyn *dyn = NULL;
	size_t ndyn = 0;
	const char *strs = NULL;
	Elf *elf = NULL;
	GElf_Phdr ph;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (is_exe && shebang(d, fd))
		goto cleanup;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64 ||
	    elf_getphdrnum(elf, &nph))
		goto cleanup;
	slash = strrchr(path, '/');
	snprintf(origin, sizeof(origin), "%.*s", slash ? (int)(slash - path) : 1,
		 slash ? path : ".");
	for (i = 0; i < nph; i++) {
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_INTERP && ph.p_filesz > 1 && ph.p_filesz < PATH_MAX) {
			data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						    ELF_T_BYTE);
			if (data && memchr(data->d_buf, 0, data->d_size))
				add_file(d, data->d_buf, open(data->d_buf, O_RDONLY | O_CLOEXEC));
		} else if (ph.p_type == PT_DYNAMIC && ph.p_filesz >= sizeof(GElf_Dyn)) {
			data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						    ELF_T_DYN);
			if (data) {
				dyn = data->d_buf;
				ndyn = data->d_size / sizeof(GElf_Dyn);
			}
		}
	}
	for (i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag == DT_STRTAB)
			strtab = dyn[i].d_un.d_ptr;
		else if (dyn[i].d_tag == DT_STRSZ)
			strsz = dyn[i].d_un.d_val;
	}
	if (!strtab || !strsz || strsz > (64u << 20) || !vaddr_off(elf, nph, strtab, &stroff))
		goto cleanup;
	{
		Elf_Data *data = elf_getdata_rawchunk(elf, (int64_t)stroff, strsz, ELF_T_BYTE);

		if (!data || !data->d_size || ((const char *)data->d_buf)[data->d_size - 1])
			goto cleanup;
		strs = data->d_buf;
	}
	for (i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		uint64_t v = dyn[i].d_un.d_val;

		if (v >= strsz)
			continue;
		if (dyn[i].d_tag == DT_NEEDED && nneeded < 64)
			needed[nneeded++] = strs + v;
		else if (dyn[i].d_tag == DT_RPATH)
			rp = v;
		else if (dyn[i].d_tag == DT_RUNPATH)
			rup = v;
	}
	if (rp != UINT64_MAX)
		expand_origin(strs + rp, origin, rpath, sizeof(rpath));
	if (rup != UINT64_MAX)
		expand_origin(strs + rup, origin, runpath, sizeof(runpath));
	if (is_exe && rup == UINT64_MAX)
		snprintf(d->exe_rpath, sizeof(d->exe_rpath), "%s", rpath);
	for (i = 0; i < nneeded; i++)
		find_lib(d, needed[i], rpath, runpath);
cleanup:
	elf_end(elf);
	close(fd);
}

/* execvp()'s lookup of cmd; the path found goes to add_file. */
static int open_command(struct deps *d, const char *cmd)
{
	const char *p = getenv("PATH");
	char path[PATH_MAX];

	if (strchr(cmd, '/'))
		return add_file(d, cmd, open(cmd, O_RDONLY | O_CLOEXEC)) ? 0 : -ENOENT;
	for (p = p ? p : "/usr/local/bin:/usr/bin:/bin"; *p;) {
		size_t len = strcspn(p, ":");
		int fd;

		if (snprintf(path, sizeof(path), "%.*s/%s", (int)len, len ? p : ".", cmd) <
			    (int)sizeof(path) &&
		    !access(path, X_OK) && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0)
			return add_file(d, path, fd) ? 0 : -ENOENT;
		p += len;
		if (*p)
			p++;
	}
	return -ENOENT;
}

int elf_deps__collect(const char *cmd, void (*fn)(const char *path, int fd, void *arg),
		      void *arg)
{
	struct deps *d = calloc(1, sizeof(*d));
	int err, i;

	if (!d)
		return -ENOMEM;
	d->fn = fn;
	d->arg = arg;
	elf_version(EV_CURRENT);
	err = open_command(d, cmd);
	for (; !err && d->head < d->nseen; d->head++)
		read_deps(d, d->queue[d->head], d->head == (d->script_interp ? 1 : 0));
	for (i = 0; i < d->nseen; i++)
		free(d->queue[i]);
	err = err ? err : d->nseen;
	free(d);
	return err;
}
