// SPDX-License-Identifier: MIT
/*
 * NVIDIA ioctl request names. The numbers are the public interface of NVIDIA's open kernel
 * modules (github.com/NVIDIA/open-gpu-kernel-modules): the control device and each GPU take
 * _IOWR('F', nr, size) with nr an escape code (kernel-open/common/inc/nv-ioctl-numbers.h,
 * src/nvidia/arch/nvalloc/unix/include/nv_escape.h); nvidia-uvm takes bare numbers
 * (kernel-open/nvidia-uvm/uvm_ioctl.h, uvm_linux_ioctl.h). Only the Linux numbers are listed.
 */
#include <stddef.h>
#include <string.h>

#include "output/ioctl_names.h"

#define NV_IOCTL_MAGIC 'F'

static const char *const nv_esc[256] = {
	[0x27] = "NV_ESC_RM_ALLOC_MEMORY", [0x28] = "NV_ESC_RM_ALLOC_OBJECT",
	[0x29] = "NV_ESC_RM_FREE", [0x2a] = "NV_ESC_RM_CONTROL", [0x2b] = "NV_ESC_RM_ALLOC",
	[0x32] = "NV_ESC_RM_CONFIG_GET", [0x33] = "NV_ESC_RM_CONFIG_SET",
	[0x34] = "NV_ESC_RM_DUP_OBJECT", [0x35] = "NV_ESC_RM_SHARE",
	[0x37] = "NV_ESC_RM_CONFIG_GET_EX", [0x38] = "NV_ESC_RM_CONFIG_SET_EX",
	[0x39] = "NV_ESC_RM_I2C_ACCESS", [0x41] = "NV_ESC_RM_IDLE_CHANNELS",
	[0x4a] = "NV_ESC_RM_VID_HEAP_CONTROL", [0x4d] = "NV_ESC_RM_ACCESS_REGISTRY",
	[0x4e] = "NV_ESC_RM_MAP_MEMORY", [0x4f] = "NV_ESC_RM_UNMAP_MEMORY",
	[0x52] = "NV_ESC_RM_GET_EVENT_DATA", [0x54] = "NV_ESC_RM_ALLOC_CONTEXT_DMA2",
	[0x56] = "NV_ESC_RM_ADD_VBLANK_CALLBACK", [0x57] = "NV_ESC_RM_MAP_MEMORY_DMA",
	[0x58] = "NV_ESC_RM_UNMAP_MEMORY_DMA", [0x59] = "NV_ESC_RM_BIND_CONTEXT_DMA",
	[0x5c] = "NV_ESC_RM_EXPORT_OBJECT_TO_FD", [0x5d] = "NV_ESC_RM_IMPORT_OBJECT_FROM_FD",
	[0x5e] = "NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO",
	/* NV_IOCTL_BASE (200) + n */
	[200] = "NV_ESC_CARD_INFO", [201] = "NV_ESC_REGISTER_FD", [206] = "NV_ESC_ALLOC_OS_EVENT",
	[207] = "NV_ESC_FREE_OS_EVENT", [209] = "NV_ESC_STATUS_CODE",
	[210] = "NV_ESC_CHECK_VERSION_STR", [211] = "NV_ESC_IOCTL_XFER_CMD",
	[212] = "NV_ESC_ATTACH_GPUS_TO_FD", [213] = "NV_ESC_QUERY_DEVICE_INTR",
	[214] = "NV_ESC_SYS_PARAMS", [217] = "NV_ESC_EXPORT_TO_DMABUF_FD",
	[218] = "NV_ESC_WAIT_OPEN_COMPLETE",
};

static const char *const uvm[] = {
	[1] = "UVM_RESERVE_VA", [2] = "UVM_RELEASE_VA", [3] = "UVM_REGION_COMMIT",
	[4] = "UVM_REGION_DECOMMIT", [5] = "UVM_REGION_SET_STREAM",
	[6] = "UVM_SET_STREAM_RUNNING", [7] = "UVM_SET_STREAM_STOPPED", [9] = "UVM_RUN_TEST",
	[10] = "UVM_ADD_SESSION", [11] = "UVM_REMOVE_SESSION", [12] = "UVM_ENABLE_COUNTERS",
	[13] = "UVM_MAP_COUNTER", [14] = "UVM_CREATE_EVENT_QUEUE",
	[15] = "UVM_REMOVE_EVENT_QUEUE", [16] = "UVM_MAP_EVENT_QUEUE", [17] = "UVM_EVENT_CTRL",
	[18] = "UVM_REGISTER_MPS_SERVER", [19] = "UVM_REGISTER_MPS_CLIENT",
	[20] = "UVM_GET_GPU_UUID_TABLE", [23] = "UVM_CREATE_RANGE_GROUP",
	[24] = "UVM_DESTROY_RANGE_GROUP", [25] = "UVM_REGISTER_GPU_VASPACE",
	[26] = "UVM_UNREGISTER_GPU_VASPACE", [27] = "UVM_REGISTER_CHANNEL",
	[28] = "UVM_UNREGISTER_CHANNEL", [29] = "UVM_ENABLE_PEER_ACCESS",
	[30] = "UVM_DISABLE_PEER_ACCESS", [31] = "UVM_SET_RANGE_GROUP",
	[33] = "UVM_MAP_EXTERNAL_ALLOCATION", [34] = "UVM_FREE", [35] = "UVM_MEM_MAP",
	[36] = "UVM_DEBUG_ACCESS_MEMORY", [37] = "UVM_REGISTER_GPU", [38] = "UVM_UNREGISTER_GPU",
	[39] = "UVM_PAGEABLE_MEM_ACCESS", [40] = "UVM_PREVENT_MIGRATION_RANGE_GROUPS",
	[41] = "UVM_ALLOW_MIGRATION_RANGE_GROUPS", [42] = "UVM_SET_PREFERRED_LOCATION",
	[43] = "UVM_UNSET_PREFERRED_LOCATION", [44] = "UVM_ENABLE_READ_DUPLICATION",
	[45] = "UVM_DISABLE_READ_DUPLICATION", [46] = "UVM_SET_ACCESSED_BY",
	[47] = "UVM_UNSET_ACCESSED_BY", [51] = "UVM_MIGRATE", [53] = "UVM_MIGRATE_RANGE_GROUP",
	[54] = "UVM_ENABLE_SYSTEM_WIDE_ATOMICS", [55] = "UVM_DISABLE_SYSTEM_WIDE_ATOMICS",
	[56] = "UVM_TOOLS_INIT_EVENT_TRACKER", [57] = "UVM_TOOLS_SET_NOTIFICATION_THRESHOLD",
	[58] = "UVM_TOOLS_EVENT_QUEUE_ENABLE_EVENTS", [59] = "UVM_TOOLS_EVENT_QUEUE_DISABLE_EVENTS",
	[60] = "UVM_TOOLS_ENABLE_COUNTERS", [61] = "UVM_TOOLS_DISABLE_COUNTERS",
	[62] = "UVM_TOOLS_READ_PROCESS_MEMORY", [63] = "UVM_TOOLS_WRITE_PROCESS_MEMORY",
	[64] = "UVM_TOOLS_GET_PROCESSOR_UUID_TABLE", [65] = "UVM_MAP_DYNAMIC_PARALLELISM_REGION",
	[66] = "UVM_UNMAP_EXTERNAL", [67] = "UVM_TOOLS_FLUSH_EVENTS",
};

const char *ioctl_request_name(uint32_t request, const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	if (base && !strcmp(base, "nvidia-uvm")) {
		if (request == 0x30000001)
			return "UVM_INITIALIZE";
		if (request == 0x30000002)
			return "UVM_DEINITIALIZE";
		return request < sizeof(uvm) / sizeof(uvm[0]) ? uvm[request] : NULL;
	}
	/* _IOC: dir 31..30, size 29..16, type 15..8, nr 7..0 */
	if ((request >> 8 & 0xff) == NV_IOCTL_MAGIC)
		return nv_esc[request & 0xff];
	return NULL;
}
