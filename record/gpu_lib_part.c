// SPDX-License-Identifier: MIT
/*
 * The GPU library as a part of the recorder (part.h): where this xpu-record's libxpu-cupti.so
 * is (c->gpu_lib), which BPF uprobes, the walk share serves and the CUPTI receiver injects.
 * None found, or --no-gpu: the recording is of the CPU only.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gpu_lib.h"
#include "part.h"

static bool gpu_lib_part__wanted(const struct rec_ctx *c)
{
	return !c->cfg->no_gpu;
}

static int gpu_lib_part__setup(struct rec_ctx *c, void **state)
{
	char *lib = gpu_lib__find();

	log_info("GPU: %s", lib ? lib : "no " GPU_LIB_NAME " found, CPU only");
	c->gpu_lib = lib;
	*state = lib;
	return 0;
}

const struct rec_part gpu_lib_part = {
	.name = "gpu_lib",
	.wanted = gpu_lib_part__wanted,
	.setup = gpu_lib_part__setup,
	.free = free,
};
