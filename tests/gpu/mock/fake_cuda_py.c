// SPDX-License-Identifier: MIT
/*
 * fake_cuda_app.c's launches as a library for Python's ctypes (tests/e2e/test_inproc_python.sh):
 *
 *   lib = ctypes.CDLL("libfake_cuda_py.so"); lib.fake_cuda_py_launch()
 *
 * The first call does what the CUDA driver does at cuInit(): loads the library named by
 * CUDA_INJECTION64_PATH (xpu-record sets it) over the fake libcupti named by XPU_CUPTI_LIB
 * (tests/gpu/mock/mock_cupti.c), and calls its InitializeInjection(). Each call then launches
 * one fake kernel exactly as fake_cuda_app does (launch_fake_kernel: API enter, the kernel's
 * activity record, API exit) and returns its launch id (1, 2, ...), or -1 when the injection
 * could not be set up (with a message on stderr). ctypes lets the GIL go for the call: several
 * threads may launch at once (the first call of all should come from one thread alone).
 */
#define FAKE_CUDA_NO_MAIN
#include "fake_cuda_app.c"

static uint32_t py_launches;
static int py_state;		/* 0: not set up, 1: ready, -1: failed */

__attribute__((visibility("default"), noinline)) int fake_cuda_py_launch(void)
{
	uint32_t corr;

	if (!py_state) {
		const char *xpu = getenv("CUDA_INJECTION64_PATH"), *mock = getenv("XPU_CUPTI_LIB");

		if (!xpu || !*xpu || !mock || !*mock) {
			fprintf(stderr, "fake_cuda_py: CUDA_INJECTION64_PATH and XPU_CUPTI_LIB must be set\n");
			py_state = -1;
		} else {
			py_state = fake_inject(xpu, mock) ? -1 : 1;
		}
	}
	if (py_state < 0)
		return -1;
	corr = __atomic_add_fetch(&py_launches, 1, __ATOMIC_RELAXED);
	launch_fake_kernel(corr);
	__asm__ volatile("" ::: "memory");
	return (int)corr;
}
