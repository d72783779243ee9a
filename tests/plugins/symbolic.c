/* `good` that accepts symbolic sizes (ABI 1.1, FBXP_ACCEPTS_SYMBOLIC): one
 * kernel per rank/equality pattern serves every shape under a dynamic
 * strategy level; its output specs carry the inputs' symbols. */
#include "pointwise.h"

static const fbxp_plugin_api API = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_1,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "symbolic",
    .version = "1.1",
    .vendor = "fusebox tests",
    .flags = FBXP_GUARDS_OUTSIDE | FBXP_RUN_THREAD_SAFE | FBXP_ACCEPTS_SYMBOLIC,
    .devices = FBXP_DEVICE_CPU,
    .partition = pw_partition,
    .compile = pw_compile,
    .run = pw_run,
    .release = pw_release,
    .kernel_source = pw_kernel_source,
};

PW_ENTRY(API)
