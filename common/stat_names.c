// SPDX-License-Identifier: MIT
#include "stat_names.h"

const char *xpu_stat_name(uint32_t id)
{
	static const char *const names[] = {
#define XPU_STAT(name, id, info_name, part) [id] = info_name,
#include "xpu_stats.def"
#undef XPU_STAT
	};

	return id < sizeof(names) / sizeof(names[0]) && names[id] ? names[id] : "unknown";
}
