/* Partitions like `good`, but compile answers FBXP_ERR_UNSUPPORTED for every
 * group: it passes every lifecycle test by fusing nothing, which plugin-check
 * coverage must catch. */
#include "pointwise.h"

static fbxp_status *compile_nothing(void *state, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin,
                                 fbxp_compile_result *res, fbxp_kernel **out) {
  (void)state, (void)g, (void)in, (void)nin, (void)res, (void)out;
  return H->status_new(FBXP_ERR_UNSUPPORTED, "compiles_nothing: not this group (nor any other)");
}

static const fbxp_plugin_api API = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "compiles_nothing",
    .version = "0.1",
    .vendor = "fusebox tests",
    .flags = FBXP_GUARDS_OUTSIDE,
    .devices = FBXP_DEVICE_CPU,
    .partition = pw_partition,
    .compile = compile_nothing,
    .run = pw_run,
    .release = pw_release,
};

PW_ENTRY(API)
