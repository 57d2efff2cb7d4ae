// SPDX-License-Identifier: MIT
/*
 * Prints, as "name value" lines, where one CPython build keeps what the recorder's Python
 * walk reads: the truth that tests/unit/test_py_layout.sh holds record/python/py_layout.c to. Built
 * by that script once per installed CPython, against that version's own headers:
 *   cc -I include/python3.X -I include/python3.X/internal py_layout_dump.c
 * Names are those of struct xpu_py_layout and struct py_code_layout; a field that the
 * version lacks prints 0, as the recorder leaves it.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#if PY_VERSION_HEX < 0x030b0000
#include <frameobject.h>
#endif
#include <pycore_interp.h>
#include <pycore_runtime.h>
#if PY_VERSION_HEX >= 0x030b0000
#include <pycore_frame.h>
#endif
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030a0000 || PY_VERSION_HEX >= 0x030e0000
#error "py_layout_dump.c knows CPython 3.10 to 3.13"
#endif

#define SHOW(name, value) printf("%s %lu\n", name, (unsigned long)(value))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* The lowest bit a state bitfield occupies, found by setting it alone in a zeroed object. */
#define STATE_SHIFT(field, ones)                                                           \
	do {                                                                               \
		PyASCIIObject o;                                                           \
		uint32_t raw;                                                              \
		memset(&o, 0, sizeof(o));                                                  \
		o.state.field = ones;                                                      \
		memcpy(&raw, &o.state, sizeof(raw));                                       \
		SHOW("state_" #field "_shift", raw ? __builtin_ctz(raw) : 99);             \
		SHOW("state_" #field "_mask", raw ? raw >> __builtin_ctz(raw) : 0);        \
	} while (0)

int main(void)
{
	size_t need;

	printf("version %d.%d\n", PY_MAJOR_VERSION, PY_MINOR_VERSION);
	SHOW("rt_interp_head", offsetof(_PyRuntimeState, interpreters.head));
	SHOW("interp_next", offsetof(PyInterpreterState, next));
#if PY_VERSION_HEX < 0x030b0000
	SHOW("interp_threads_head", offsetof(PyInterpreterState, tstate_head));
	SHOW("ts_id", offsetof(PyThreadState, thread_id));
	SHOW("id_is_tid", 0);
	SHOW("ts_frame", offsetof(PyThreadState, frame));
	SHOW("cframe_frame", 0);
#else
	SHOW("interp_threads_head", offsetof(PyInterpreterState, threads.head));
	SHOW("ts_id", offsetof(PyThreadState, native_thread_id));
	SHOW("id_is_tid", 1);
#if PY_VERSION_HEX < 0x030d0000
	SHOW("ts_frame", offsetof(PyThreadState, cframe));
	SHOW("cframe_frame", offsetof(_PyCFrame, current_frame));
#else
	SHOW("ts_frame", offsetof(PyThreadState, current_frame));
	SHOW("cframe_frame", 0);
#endif
#endif
	SHOW("ts_next", offsetof(PyThreadState, next));
#if PY_VERSION_HEX < 0x030b0000
	SHOW("ts_id_size", sizeof(((PyThreadState *)0)->thread_id));
#else
	SHOW("ts_id_size", sizeof(((PyThreadState *)0)->native_thread_id));
#endif

	/* the frame, and the bytes of it that one read must cover */
#if PY_VERSION_HEX < 0x030b0000
	SHOW("fr_code", offsetof(PyFrameObject, f_code));
	SHOW("fr_previous", offsetof(PyFrameObject, f_back));
	SHOW("fr_instr", offsetof(PyFrameObject, f_lasti));
	SHOW("fr_marker", 0);
	need = MAX(offsetof(PyFrameObject, f_code) + sizeof(void *),
		   offsetof(PyFrameObject, f_back) + sizeof(void *));
	need = MAX(need, offsetof(PyFrameObject, f_lasti) + sizeof(((PyFrameObject *)0)->f_lasti));
	SHOW("fr_instr_size", sizeof(((PyFrameObject *)0)->f_lasti));
	SHOW("frame_size", sizeof(PyFrameObject));
#else
	typedef _PyInterpreterFrame frame_t;
#if PY_VERSION_HEX < 0x030d0000
	SHOW("fr_code", offsetof(frame_t, f_code));
	need = offsetof(frame_t, f_code) + sizeof(void *);
	SHOW("fr_instr", offsetof(frame_t, prev_instr));
	need = MAX(need, offsetof(frame_t, prev_instr) + sizeof(void *));
	SHOW("fr_instr_size", sizeof(((frame_t *)0)->prev_instr));
#else
	SHOW("fr_code", offsetof(frame_t, f_executable));
	need = offsetof(frame_t, f_executable) + sizeof(void *);
	SHOW("fr_instr", offsetof(frame_t, instr_ptr));
	need = MAX(need, offsetof(frame_t, instr_ptr) + sizeof(void *));
	SHOW("fr_instr_size", sizeof(((frame_t *)0)->instr_ptr));
#endif
	SHOW("fr_previous", offsetof(frame_t, previous));
	need = MAX(need, offsetof(frame_t, previous) + sizeof(void *));
#if PY_VERSION_HEX < 0x030c0000
	SHOW("fr_marker", offsetof(frame_t, is_entry));
	need = MAX(need, offsetof(frame_t, is_entry) + 1);
	SHOW("fr_marker_size", sizeof(((frame_t *)0)->is_entry));
#else
	SHOW("fr_marker", offsetof(frame_t, owner));
	need = MAX(need, offsetof(frame_t, owner) + 1);
	SHOW("fr_marker_size", sizeof(((frame_t *)0)->owner));
	SHOW("owned_by_cstack", FRAME_OWNED_BY_CSTACK);
#endif
	/* the walk reads the frame's fixed part; localsplus follows it in the same chunk */
	SHOW("frame_size", offsetof(frame_t, localsplus));
#endif
	SHOW("frame_need", need);

	SHOW("co_filename", offsetof(PyCodeObject, co_filename));
	SHOW("co_name", offsetof(PyCodeObject, co_name));
#if PY_VERSION_HEX < 0x030b0000
	SHOW("co_qualname", 0);
	SHOW("co_code_adaptive", 0);
	SHOW("linetable_kind", 1);	/* XPU_PY_LINETABLE_310 */
#else
	SHOW("co_qualname", offsetof(PyCodeObject, co_qualname));
	SHOW("co_code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
	SHOW("linetable_kind", 2);	/* XPU_PY_LINETABLE_311 */
#endif
	SHOW("co_linetable", offsetof(PyCodeObject, co_linetable));
	SHOW("co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	SHOW("co_firstlineno_size", sizeof(((PyCodeObject *)0)->co_firstlineno));

	SHOW("ascii_data", sizeof(PyASCIIObject));
	SHOW("compact_data", sizeof(PyCompactUnicodeObject));
	SHOW("str_length", offsetof(PyASCIIObject, length));
	SHOW("str_length_size", sizeof(((PyASCIIObject *)0)->length));
	SHOW("str_state", offsetof(PyASCIIObject, state));
	STATE_SHIFT(kind, 7);
	STATE_SHIFT(compact, 1);
	STATE_SHIFT(ascii, 1);
	SHOW("bytes_size", offsetof(PyVarObject, ob_size));
	SHOW("bytes_data", offsetof(PyBytesObject, ob_sval));
#if PY_VERSION_HEX >= 0x030d0000
	/* where in _Py_DebugOffsets (as u64 indexes) the probe finds each of the above */
#define DBG(name, field) SHOW("dbg_" name, offsetof(_Py_DebugOffsets, field) / 8)
	DBG("version", version);
	DBG("free_threaded", free_threaded);
	DBG("rt_interp_head", runtime_state.interpreters_head);
	DBG("interp_next", interpreter_state.next);
	DBG("interp_threads_head", interpreter_state.threads_head);
	DBG("ts_next", thread_state.next);
	DBG("ts_frame", thread_state.current_frame);
	DBG("ts_id", thread_state.native_thread_id);
	DBG("fr_previous", interpreter_frame.previous);
	DBG("fr_code", interpreter_frame.executable);
	DBG("fr_instr", interpreter_frame.instr_ptr);
	DBG("fr_marker", interpreter_frame.owner);
	DBG("co_filename", code_object.filename);
	DBG("co_name", code_object.name);
	DBG("co_qualname", code_object.qualname);
	DBG("co_linetable", code_object.linetable);
	DBG("co_firstlineno", code_object.firstlineno);
	DBG("co_code_adaptive", code_object.co_code_adaptive);
#endif
	return 0;
}
