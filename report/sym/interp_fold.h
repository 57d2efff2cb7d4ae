/* SPDX-License-Identifier: MIT */
/*
 * The interpreter's own frames between two Python frames. Once pyframes.h has put each
 * evaluator activation's Python frames in its place, what is left of CPython between one
 * Python frame and the next (PyObject_Call, vectorcall shims, import machinery, and in a
 * stripped python3.12 hundreds of thousands of "python3.12+0x..." frames) is the call
 * machinery of the Python frames around it: it says nothing a reader can act on and doubles
 * the height of a flame graph. By default those frames go, as py-spy --native drops them;
 * extension and framework frames (libtorch, numpy) stay wherever they are, and so do the
 * interpreter's frames under the first Python frame (Py_RunMain...) and past the last one
 * (the interpreter's own work: a leaf there is time spent in CPython). --python-interp keeps
 * them all.
 */
#ifndef XPU_REPORT_SYM_INTERP_FOLD_H
#define XPU_REPORT_SYM_INTERP_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum interp_kind {
	IK_OTHER = 0,		/* native code outside the interpreter, kernel, GPU, autograd */
	IK_PYTHON,		/* a Python frame (pyframes.h) */
	IK_INTERP,		/* native code in the file a PY_RUNTIME record names */
};

/*
 * Of the n frames of one stack, root first, of the kinds kind[i], marks drop[i] for every
 * interpreter frame with a Python frame both nearer the root and nearer the leaf; returns
 * how many it marked.
 */
size_t interp_fold__mark(const uint8_t *kind, size_t n, bool *drop);

#endif
