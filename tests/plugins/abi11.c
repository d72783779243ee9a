/* A 1.1 plugin: it uses the two-way statuses and the host queries when the
 * host has them and does without on a 1.0 host (whose table ends at
 * FBXP_HOST_API_SIZE_V1_0), as the ABI rules ask. What it found goes into
 * its description, which the tests read. */
#include "pointwise.h"

static char desc[512];

static fbxp_plugin_api api = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_1,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "abi11",
    .version = "1.1",
    .vendor = "fusebox tests",
    .description = desc,
    .flags = FBXP_GUARDS_OUTSIDE | FBXP_RUN_THREAD_SAFE,
    .devices = FBXP_DEVICE_CPU,
    .partition = pw_partition,
    .compile = pw_compile,
    .run = pw_run,
    .release = pw_release,
    .kernel_source = pw_kernel_source,
};

FBXP_EXPORT const fbxp_plugin_api *fbxp_plugin_entry(const fbxp_host_api *host, uint32_t major, uint32_t minor,
                                                     const char **reason) {
  if (major != FBXP_ABI_MAJOR) {
    *reason = "abi11 was built for fusebox ABI 1.x";
    return NULL;
  }
  H = host;
  if (minor >= 1 && host->struct_size >= FBXP_HOST_API_SIZE_V1_1) {
    fbxp_status *s = host->status_new(FBXP_ERR_COMPILE, "probe");
    char dir[256];
    int32_t n = host->cache_dir(dir, (int32_t)sizeof dir);
    snprintf(desc, sizeof desc, "1.1 host: threads %d; status %d '%s'; cache %s; cpu %s", (int)host->num_threads(),
             (int)host->status_code(s), host->status_message(s), n >= 0 ? dir : "(none)", host->cpu_features());
    host->status_free(s);
  } else {
    snprintf(desc, sizeof desc, "1.0 host (table of %zu bytes): no queries, assumes 1 thread",
             host->struct_size);
  }
  return &api;
}
