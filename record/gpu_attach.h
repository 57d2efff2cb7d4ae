/* SPDX-License-Identifier: MIT */
/*
 * xpu-record -p on a process that already uses CUDA: loads libxpu-cupti.so into it and starts
 * CUPTI there mid-run (xpu_cupti_attach(), cupti/inject.c), through ptrace on one of its threads
 * stopped in a system call (record/remote_call.h). At the recording's end the library stops
 * itself when the recorder asks (STOP, record/cupti_rx.c): the process runs on at its own speed.
 */
#ifndef XPU_RECORD_GPU_ATTACH_H
#define XPU_RECORD_GPU_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Loads lib (absolute path) into pid and starts collection there, reporting to the recorder's
 * socket; a process that has it loaded from an earlier recording only starts collecting again.
 * 0, or a negative errno and one line in err: -ENOENT the process has not loaded CUDA (CPU
 * only), -EALREADY it already reports to a recorder, -EPERM ptrace refused, -EBUSY it is
 * under a debugger or another profiler owns CUPTI, others from the load or the call.
 */
int gpu_attach__inject(pid_t pid, const char *lib, const char *socket_path, char *err,
		       size_t errlen);

#endif
