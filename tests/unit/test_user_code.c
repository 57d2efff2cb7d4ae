// SPDX-License-Identifier: MIT
/*
 * Unit tests of what is the program's own code (report/model/user_code.c): Python files and
 * native files by path, the main binary and the interpreter, and nvcc's launch stubs.
 */
#include "model/user_code.h"
#include "unit.h"

static void python_files(void)
{
	CHECK(user_code__python_file_own("/work/main/samples/torch_train.py", "/usr"), "a script");
	CHECK(user_code__python_file_own("samples/train.py", "/usr"), "a relative script");
	CHECK(user_code__python_file_own("/usr/src/app/train.py", "/usr"),
	      "a script under /usr, outside the interpreter's lib");
	CHECK(user_code__python_file_own("/home/u/proj/model.py", ""), "without an interpreter");
	CHECK(!user_code__python_file_own("/usr/lib/python3.12/inspect.py", "/usr"), "stdlib");
	CHECK(!user_code__python_file_own("/opt/torch/.venv/lib/python3.12/site-packages/torch/"
					  "nn/modules/module.py", "/usr"), "a venv's site-packages");
	CHECK(!user_code__python_file_own("/usr/lib/python3/dist-packages/numpy/core.py", "/usr"),
	      "dist-packages");
	CHECK(!user_code__python_file_own("/opt/conda/lib/python3.11/random.py", "/opt/conda"),
	      "a conda stdlib");
	CHECK(!user_code__python_file_own("/opt/conda/lib/other/x.py", "/opt/conda"),
	      "the interpreter's installation");
	CHECK(!user_code__python_file_own("<frozen importlib._bootstrap>", "/usr"), "frozen");
	CHECK(!user_code__python_file_own("<string>", "/usr"), "generated code");
	CHECK(!user_code__python_file_own("/tmp/torchinductor_root/ab/cabcd.py", "/usr"),
	      "TorchInductor's output");
	CHECK(!user_code__python_file_own("", "/usr") && !user_code__python_file_own(NULL, "/usr"),
	      "no file");
}

static void native_files(void)
{
	CHECK(user_code__native_file_own("/work/build/samples/cuda_pipeline", true, false, ""),
	      "the main binary");
	CHECK(user_code__native_file_own("/usr/bin/ffmpeg", true, false, ""),
	      "the main binary in a system directory");
	CHECK(!user_code__native_file_own("/usr/bin/python3.12", true, true, "/usr"),
	      "the interpreter is no program's own");
	CHECK(user_code__native_file_own("/work/build/libcpu_plugin.so", false, false, ""),
	      "the program's library");
	CHECK(user_code__native_file_own("/usr/local/lib/libmine.so", false, false, ""),
	      "a local install");
	CHECK(!user_code__native_file_own("/usr/lib/x86_64-linux-gnu/libc.so.6", false, false, ""),
	      "libc");
	CHECK(!user_code__native_file_own("/lib64/ld-linux-x86-64.so.2", false, false, ""), "ld.so");
	CHECK(!user_code__native_file_own("/usr/local/cuda-13.0/targets/x86_64-linux/lib/"
					  "libcupti.so", false, false, ""), "CUDA");
	CHECK(!user_code__native_file_own("/usr/local/nvidia/lib64/libcuda.so.1", false, false, ""),
	      "the driver");
	CHECK(!user_code__native_file_own("/work/main/build/libxpu-cupti.so", false, false, ""),
	      "the profiler's library");
	CHECK(!user_code__native_file_own("/opt/torch/.venv/lib/python3.12/site-packages/torch/lib/"
					  "libtorch_cuda.so", false, false, "/usr"), "PyTorch");
	CHECK(!user_code__native_file_own("/usr/lib/python3.12/lib-dynload/_json.cpython-312.so",
					  false, false, "/usr"), "an extension of the stdlib");
	CHECK(!user_code__native_file_own("/opt/conda/lib/libstdc++.so.6", false, false,
					  "/opt/conda"), "the interpreter's installation");
	CHECK(user_code__native_file_own("/home/u/proj/build/myext.cpython-312.so", false, false,
					 "/usr"), "the program's own extension");
	CHECK(!user_code__native_file_own("/root/.triton/cache/ab/cuda_utils.so", false, false,
					  "/usr"), "Triton's launchers");
	CHECK(!user_code__native_file_own("[vdso]", false, false, ""), "no path");
}

static void stubs(void)
{
	CHECK(user_code__launch_stub("__device_stub__Z13matmul_kernelPKfS0_Pf", NULL), "stub");
	CHECK(user_code__launch_stub("cudaLaunchKernel<char>(char const*, dim3, dim3)", NULL),
	      "runtime template");
	CHECK(user_code__launch_stub("matmul_kernel(float const*, float const*, float*)",
				     "__device_stub__Z13matmul_kernelPKfS0_Pf"), "host stub");
	CHECK(!user_code__launch_stub("matmul_kernel_launcher(int)",
				      "__device_stub__Z13matmul_kernelPKfS0_Pf"),
	      "a longer name is the program's");
	CHECK(!user_code__launch_stub("launch_matmul(bufs&)", NULL), "the program's launcher");
}

int main(void)
{
	python_files();
	native_files();
	stubs();
	return unit_finish();
}
