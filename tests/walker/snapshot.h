/* SPDX-License-Identifier: MIT */
/*
 * A stopped thread as the BPF walkers see it at a sample: its registers, its process's
 * mappings with the memory that differs from the mapped files (stack, heap, anonymous and
 * written pages: where the Python frames live), and what an independent unwinder and the
 * program itself said its stacks were at that moment. Read-only file-backed pages are not
 * copied but read from the files at walk time, as the CFI tables are built from them, so a
 * snapshot stays valid only while those files are unchanged (each map keeps their size and
 * mtime to tell).
 *
 * Written by capture.c (ptrace of one's own child: no privilege), read by test_walker.c.
 */
#ifndef XPU_WALKER_SNAPSHOT_H
#define XPU_WALKER_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#define SNAP_PROT_R 1u
#define SNAP_PROT_W 2u
#define SNAP_PROT_X 4u

struct snap_map {
	uint64_t start, end, pgoff;
	uint32_t prot;			/* SNAP_PROT_* */
	char *path;			/* "" for anonymous memory, "[stack]", "[vdso]"... */
	uint64_t file_size, file_mtime_ns;	/* of path, for a regular file */
	uint8_t *data;			/* end - start bytes as they were; NULL: read path */
	int fd;				/* path opened by snapshot__read; -1 */
};

/* One Python frame as the program listed it (sys._getframe), innermost first. */
struct snap_py_frame {
	char name[64];
	uint32_t firstlineno;
};

struct snapshot {
	char label[64];
	uint32_t pid, tid;
	uint64_t ip, sp, bp, fsbase;
	struct snap_map *maps;		/* sorted by start */
	size_t nmaps;
	/* libdw's unwind of the thread (dwfl_getthread_frames): the pcs the walk must give */
	uint64_t *expect_pcs;
	size_t nexpect;
	int expect_outermost;		/* libdw reached a frame without a caller */
	struct snap_py_frame *py;	/* 0 frames: the program listed none */
	size_t npy;
};

int snapshot__write(const struct snapshot *s, const char *path);
/* Also opens the files of file-backed maps; -ESTALE when one changed since the capture. */
int snapshot__read(struct snapshot *s, const char *path);
void snapshot__free(struct snapshot *s);

/*
 * Copies len bytes at addr as the process had them. 0; -EFAULT where the process had no
 * readable memory (the kernel's bpf_probe_read_user fails there too); -ENODATA where it had
 * some that the snapshot did not keep.
 */
int snapshot__mem(const struct snapshot *s, uint64_t addr, void *dst, size_t len);

/* The map holding addr, or NULL. */
const struct snap_map *snapshot__map(const struct snapshot *s, uint64_t addr);

struct capture_opts {
	unsigned int stops;
	unsigned int delay_ms;		/* 0: the program's own SIGSTOPs; else one every delay_ms */
	/*
	 * Not 0: only the first stop is as above; the program then runs to that stop's return
	 * address (the caller's instruction after the call) and the other stops are there and
	 * every stride instructions after, single-stepped: epilogues, calls, PLT stubs and
	 * prologues, wherever the program goes.
	 */
	unsigned int stride;
	/* a timed stop whose stack has fewer frames (the program starting) is taken again */
	unsigned int min_depth;
	/* a file the program writes its Python frames to ("name firstlineno" lines) before it
	 * stops itself, or NULL */
	const char *py_expect;
};

/*
 * Runs argv under ptrace and snapshots its main thread at each of o->stops stops. Fills
 * out[0 .. *nout). 0, or negative errno (-EPERM: ptrace refused).
 */
int capture__run(char *const argv[], const struct capture_opts *o, const char *label,
		 struct snapshot *out, size_t *nout);

#endif
