// SPDX-License-Identifier: MIT
/*
 * CPython's own main(), for tests/e2e/test_inproc_python.sh: built against a pyenv
 * interpreter's libpython3.N.so and linked (DT_NEEDED) with the files a ctypes launch's stack
 * goes through that Python would otherwise dlopen() late (_ctypes, libfake_cuda_py.so, the
 * fake libcupti, libxpu-cupti.so), so that xpu-record's start waits for their unwind tables
 * too and no launch depends on when a table gets built. Runs exactly as pythonN.M does.
 */
#include <Python.h>

int main(int argc, char **argv)
{
	return Py_BytesMain(argc, argv);
}
