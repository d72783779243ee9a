/* A working pointwise fuser (relu/neg/mul/add chains on float32 contiguous
 * CPU tensors), host guards, thread-safe run. See pointwise.h. */
#include "pointwise.h"

static const fbxp_plugin_api API = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "good",
    .version = "1.0.0",
    .vendor = "fusebox tests",
    .description = "pointwise relu/neg/mul/add chains, plain C loops",
    .flags = FBXP_GUARDS_OUTSIDE | FBXP_RUN_THREAD_SAFE,
    .devices = FBXP_DEVICE_CPU,
    .partition = pw_partition,
    .compile = pw_compile,
    .run = pw_run,
    .release = pw_release,
    .kernel_source = pw_kernel_source,
};

PW_ENTRY(API)
