// SPDX-License-Identifier: MIT
/*
 * Fallbacks for the CUPTI receiver (record/cupti_rx.c). Weak, so a build that has the real
 * receiver links it and a build without it still records CPU profiles.
 */
#include <stdio.h>

#include "cupti_rx.h"

__attribute__((weak)) struct cupti_rx *cupti_rx__start(struct writer_thread *wt,
						       cupti_rx_is_traced_fn is_traced,
						       void *ctx, char *err, size_t errlen)
{
	snprintf(err, errlen, "built without CUPTI receiver");
	return NULL;
}

__attribute__((weak)) const char *cupti_rx__socket_path(const struct cupti_rx *rx)
{
	return NULL;
}

__attribute__((weak)) void cupti_rx__stop(struct cupti_rx *rx, int timeout_ms)
{
}
