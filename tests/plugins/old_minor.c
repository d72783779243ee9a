/* Built as if against an older 1.x header whose table ended at `release`
 * (no kernel_source yet): struct_size covers the required functions only.
 * The kernel_source slot holds garbage that a host reading beyond
 * struct_size would call and crash on. Also checks that it works with a
 * host newer in minor (it ignores the host's minor). */
#include "pointwise.h"

static const fbxp_plugin_api API = {
    .struct_size = FBXP_SIZE_UPTO(fbxp_plugin_api, release),
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = 0,
    .name = "old_minor",
    .version = "0.9",
    .vendor = "fusebox tests",
    .flags = FBXP_GUARDS_OUTSIDE,
    .devices = FBXP_DEVICE_CPU,
    .partition = pw_partition,
    .compile = pw_compile,
    .run = pw_run,
    .release = pw_release,
    .kernel_source = (const char *(*)(void *, fbxp_kernel *))(uintptr_t)0x10,
};

PW_ENTRY(API)
