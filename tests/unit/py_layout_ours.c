// SPDX-License-Identifier: MIT
/*
 * Prints what record/python/py_layout.c says about a CPython, in the "name value" lines of
 * py_layout_dump.c, for tests/unit/test_py_layout.sh to compare with the real headers:
 *   py_layout_ours version 3.X      py_layout__for_version() (the table)
 *   py_layout_ours probe FILE       py_layout__probe() on an interpreter file (3.13: its
 *                                   _Py_DebugOffsets)
 * Also prints frame_read and the status, which the script checks separately, and the
 * _Py_DebugOffsets indexes the 3.13 probe reads (dbg_*): py_layout.c is included, not linked,
 * so that its private enum can be printed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "python/py_layout.c"

#define SHOW(name, value) printf("%s %lu\n", name, (unsigned long)(value))

static void show(const struct py_elf_info *in)
{
	const struct xpu_py_layout *w = &in->walk;
	const struct py_code_layout *c = &in->code;

	printf("version %u.%u\n", in->version_hex >> 24, in->version_hex >> 16 & 0xff);
	SHOW("status", in->status);
	SHOW("model", w->model);
	SHOW("frame_read", w->frame_read);
	SHOW("rt_interp_head", w->rt_interp_head);
	SHOW("interp_next", w->interp_next);
	SHOW("interp_threads_head", w->interp_threads_head);
	SHOW("ts_id", w->ts_id);
	SHOW("id_is_tid", w->id_is_tid);
	SHOW("ts_frame", w->ts_frame);
	SHOW("cframe_frame", w->cframe_frame);
	SHOW("ts_next", w->ts_next);
	SHOW("fr_code", w->fr_code);
	SHOW("fr_previous", w->fr_previous);
	SHOW("fr_instr", w->fr_instr);
	SHOW("fr_marker", w->fr_marker);
	if (w->model >= XPU_PY_MODEL_312)
		SHOW("owned_by_cstack", XPU_PY_OWNED_BY_CSTACK);
	SHOW("co_filename", c->co_filename);
	SHOW("co_name", c->co_name);
	SHOW("co_qualname", c->co_qualname);
	SHOW("co_code_adaptive", w->co_code_adaptive);
	SHOW("linetable_kind", c->linetable_kind);
	SHOW("co_linetable", c->co_linetable);
	SHOW("co_firstlineno", c->co_firstlineno);
	if (c->co_firstlineno != w->co_firstlineno)
		SHOW("walk_co_firstlineno", w->co_firstlineno);
	SHOW("ascii_data", c->ascii_data);
	SHOW("compact_data", c->compact_data);
	SHOW("str_length", c->str_length);
	SHOW("str_state", c->str_state);
	SHOW("bytes_size", c->bytes_size);
	SHOW("bytes_data", c->bytes_data);
	SHOW("dbg_version", D_VERSION);
	SHOW("dbg_free_threaded", D_FREE_THREADED);
	SHOW("dbg_rt_interp_head", D_RT_INTERP_HEAD);
	SHOW("dbg_interp_next", D_IS_NEXT);
	SHOW("dbg_interp_threads_head", D_IS_THREADS_HEAD);
	SHOW("dbg_ts_next", D_TS_NEXT);
	SHOW("dbg_ts_frame", D_TS_CURRENT_FRAME);
	SHOW("dbg_ts_id", D_TS_NATIVE_TID);
	SHOW("dbg_fr_previous", D_FR_PREVIOUS);
	SHOW("dbg_fr_code", D_FR_EXECUTABLE);
	SHOW("dbg_fr_instr", D_FR_INSTR_PTR);
	SHOW("dbg_fr_marker", D_FR_OWNER);
	SHOW("dbg_co_filename", D_CO_FILENAME);
	SHOW("dbg_co_name", D_CO_NAME);
	SHOW("dbg_co_qualname", D_CO_QUALNAME);
	SHOW("dbg_co_linetable", D_CO_LINETABLE);
	SHOW("dbg_co_firstlineno", D_CO_FIRSTLINENO);
	SHOW("dbg_co_code_adaptive", D_CO_CODE_ADAPTIVE);
	SHOW("dbg_read", D_NR);		/* u64s read: must cover every index above */
}

int main(int argc, char **argv)
{
	struct py_elf_info info;
	unsigned int major, minor;
	int fd, err;

	memset(&info, 0, sizeof(info));
	if (argc == 3 && !strcmp(argv[1], "version")) {
		if (sscanf(argv[2], "%u.%u", &major, &minor) != 2 || major > 255 || minor > 255) {
			fprintf(stderr, "py_layout_ours: bad version '%s'\n", argv[2]);
			return 2;
		}
		err = py_layout__for_version(major << 24 | minor << 16, &info);
		if (err) {
			fprintf(stderr, "py_layout_ours: %s: %s\n", argv[2], strerror(-err));
			return 1;
		}
		info.version_hex = major << 24 | minor << 16;
		info.status = XPU_PY_SUPPORTED;
	} else if (argc == 3 && !strcmp(argv[1], "probe")) {
		fd = open(argv[2], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "py_layout_ours: %s: %s\n", argv[2], strerror(errno));
			return 1;
		}
		err = py_layout__probe(fd, argv[2], &info);
		close(fd);
		if (err <= 0) {
			fprintf(stderr, "py_layout_ours: %s: %s\n", argv[2],
				err ? strerror(-err) : "no CPython runtime found");
			return 1;
		}
	} else {
		fprintf(stderr, "usage: py_layout_ours version 3.X | probe FILE\n");
		return 2;
	}
	show(&info);
	return 0;
}
