/* A guards-outside fuser whose run always declines (FBXP_DECLINE is only for
 * self-fallback plugins: the host treats it as a run failure). */
#include "pointwise.h"

static fbxp_status *run_decline(void *state, fbxp_kernel *k, const fbxp_arg *in, int32_t nin,
                                DLTensor *const *outs, int32_t nout) {
  (void)state, (void)k, (void)in, (void)nin, (void)outs, (void)nout;
  return H->status_new(FBXP_DECLINE, "declines_guarded: not these inputs");
}

static const fbxp_plugin_api API = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "declines_guarded",
    .version = "0.1",
    .vendor = "fusebox tests",
    .flags = FBXP_GUARDS_OUTSIDE,
    .devices = FBXP_DEVICE_CPU,
    .partition = pw_partition,
    .compile = pw_compile,
    .run = run_decline,
    .release = pw_release,
};

PW_ENTRY(API)
