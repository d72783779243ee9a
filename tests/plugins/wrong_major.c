/* Built "for ABI 2.0": the host must refuse it, naming both versions. */
#include "pointwise.h"

static const fbxp_plugin_api API = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = 2,
    .abi_minor = 0,
    .name = "wrong_major",
    .version = "2.0",
    .vendor = "fusebox tests",
    .flags = FBXP_GUARDS_OUTSIDE,
    .devices = FBXP_DEVICE_CPU,
    .partition = pw_partition,
    .compile = pw_compile,
    .run = pw_run,
    .release = pw_release,
};

/* A 2.x plugin that (wrongly) does not check the host's major itself. */
FBXP_EXPORT const fbxp_plugin_api *fbxp_plugin_entry(const fbxp_host_api *host, uint32_t major, uint32_t minor,
                                                     const char **reason) {
  (void)major;
  (void)minor;
  (void)reason;
  H = host;
  return &API;
}
