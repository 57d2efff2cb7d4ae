/* SPDX-License-Identifier: MIT */
#ifndef XPU_RECORD_RECORDING_H
#define XPU_RECORD_RECORDING_H

#include "config.h"

/*
 * Records until the traced tree has no live process or a stop signal arrives. Returns the
 * exit status for xpu-record: the target's (128+signal if killed), or 1 on a setup error.
 */
int recording__run(const struct record_config *cfg);

#endif
