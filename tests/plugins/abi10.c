/* Built against the 1.0 header exactly as it shipped (a kept copy in
 * abi_1_0/): a 1.0 plugin must load and run unchanged with any 1.x host.
 * The copy comes first, so pointwise.h's own include of the current header
 * is skipped by the shared include guard. */
#include "abi_1_0/fuser_abi.h"
#include "pointwise.h"

#if FBXP_ABI_MINOR != 0
#error "abi10 must be built against the 1.0 header"
#endif

static const fbxp_plugin_api API = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "abi10",
    .version = "1.0",
    .vendor = "fusebox tests",
    .flags = FBXP_GUARDS_OUTSIDE | FBXP_RUN_THREAD_SAFE,
    .devices = FBXP_DEVICE_CPU,
    .partition = pw_partition,
    .compile = pw_compile,
    .run = pw_run,
    .release = pw_release,
    .kernel_source = pw_kernel_source,
};

PW_ENTRY(API)
