// SPDX-License-Identifier: MIT
/*
 * Python frames as a part of the recorder (part.h): the frame reader is always in the process
 * table (with --no-python it only counts), and writes its rows once an interpreter was found.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bpf_setup.h"
#include "part.h"
#include "py_procs.h"
#include "stat_sink.h"

static int py_part__setup(struct rec_ctx *c, void **state)
{
	int layout_fd = bpf_state__py_map_fd(c->bpf);
	struct py_procs *py = py_procs__new(c->wt, layout_fd, !c->cfg->no_python);

	if (!py) {
		log_err("cannot start the Python frame reader");
		return -1;
	}
	if (c->ws)
		py_procs__set_walk_share(py, c->ws);
	*state = py;
	return 0;
}

static struct map_handler *py_part__handler(void *state)
{
	return py_procs__handler(state);
}

static void py_part__stats(void *state, const struct rec_ctx *c, struct stat_sink *sink)
{
	struct py_procs_stats st = { 0 };

	py_procs__get_stats(state, &st);
	if (!st.runtimes)
		return;
	stat_sink__put(sink, XPU_STAT_PY_STACKS, st.stacks);
	stat_sink__put(sink, XPU_STAT_PY_FRAMES, st.frames);
	stat_sink__put(sink, XPU_STAT_PY_TRUNCATED, c->cnt[XPU_CNT_PY_TRUNCATED]);
	stat_sink__put(sink, XPU_STAT_PY_READ_ERRORS, c->cnt[XPU_CNT_PY_READ_ERR]);
	stat_sink__put(sink, XPU_STAT_PY_CODES, st.codes);
	stat_sink__put(sink, XPU_STAT_PY_CODE_ERRORS, st.code_errors);
	stat_sink__put(sink, XPU_STAT_PY_NO_THREAD, c->cnt[XPU_CNT_PY_NO_THREAD]);
	stat_sink__put(sink, XPU_STAT_PY_FRAME_READS, c->cnt[XPU_CNT_PY_FRAME_READS]);
	stat_sink__put(sink, XPU_STAT_PY_CODE_CACHE_HITS, c->cnt[XPU_CNT_PY_CODE_CACHE_HITS]);
}

static void py_part__free(void *state)
{
	py_procs__free(state);
}

const struct rec_part python_part = {
	.name = "python",
	.required = true,
	.setup = py_part__setup,
	.handler = py_part__handler,
	.stats = py_part__stats,
	.free = py_part__free,
};
