/* Built against a future 1.x header (minor 3) whose table has fields
 * appended after kernel_source; this host must ignore them. */
#include "pointwise.h"

typedef struct future_api {
  fbxp_plugin_api v1_0;
  void (*future_fn)(void);      /* garbage: must never be called */
  const char *future_string;
} future_api;

static const future_api API = {
    .v1_0 = {
        .struct_size = sizeof(future_api),
        .abi_major = FBXP_ABI_MAJOR,
        .abi_minor = FBXP_ABI_MINOR + 3,
        .name = "new_minor",
        .version = "1.3",
        .vendor = "fusebox tests",
        .flags = FBXP_GUARDS_OUTSIDE | FBXP_RUN_THREAD_SAFE,
        .devices = FBXP_DEVICE_CPU,
        .partition = pw_partition,
        .compile = pw_compile,
        .run = pw_run,
        .release = pw_release,
        .kernel_source = pw_kernel_source,
    },
    .future_fn = (void (*)(void))(uintptr_t)0x20,
    .future_string = "from the future",
};

PW_ENTRY(API.v1_0)
