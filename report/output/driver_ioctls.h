/* SPDX-License-Identifier: MIT */
/* The text report's driver sections (DRIVER_IOCTL records, xpu-record --driver). */
#ifndef XPU_REPORT_OUT_DRIVER_IOCTLS_H
#define XPU_REPORT_OUT_DRIVER_IOCTLS_H

#include <stdio.h>

#include "model/session.h"

/*
 * ioctls per request code (count, time in the syscall and inside the driver, errors), and per
 * CUDA API call that made them: the innermost API record of the same thread whose time
 * contains the ioctl's. Prints nothing for a trace without ioctl records. 0 or -ENOMEM.
 */
int driver_ioctls__print_text(struct session *s, FILE *out);

#endif
