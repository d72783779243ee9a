/* Refuses to load and says why. */
#include <fusebox/fuser_abi.h>

FBXP_EXPORT const fbxp_plugin_api *fbxp_plugin_entry(const fbxp_host_api *host, uint32_t major, uint32_t minor,
                                                     const char **reason) {
  (void)host;
  (void)major;
  (void)minor;
  *reason = "null_table refuses every host (test plugin)";
  return NULL;
}
