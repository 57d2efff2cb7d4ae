/* SPDX-License-Identifier: MIT */
/* Names of NVIDIA driver ioctl request codes, where the open-source driver headers give them. */
#ifndef XPU_REPORT_OUT_IOCTL_NAMES_H
#define XPU_REPORT_OUT_IOCTL_NAMES_H

#include <stdint.h>

/*
 * The name of request on the device file path (the DRIVER_IOCTL record's file): an escape of
 * /dev/nvidiactl or /dev/nvidiaN ('F' ioctls, "NV_ESC_RM_CONTROL"), or a UVM call on
 * /dev/nvidia-uvm ("UVM_REGISTER_GPU"); NULL when not known (callers print the code in hex).
 */
const char *ioctl_request_name(uint32_t request, const char *path);

#endif
