/* Compiles like `good`; every run fails. */
#include "pointwise.h"

static fbxp_status *run_fail(void *state, fbxp_kernel *k, const fbxp_arg *in, int32_t nin, DLTensor *const *outs,
                             int32_t nout) {
  (void)state, (void)k, (void)in, (void)nin, (void)outs, (void)nout;
  return H->status_new(FBXP_ERR_RUN, "run_fails: kernel launch failed (test)");
}

static const fbxp_plugin_api API = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "run_fails",
    .version = "0.1",
    .vendor = "fusebox tests",
    .flags = FBXP_GUARDS_OUTSIDE,
    .devices = FBXP_DEVICE_CPU,
    .partition = pw_partition,
    .compile = pw_compile,
    .run = run_fail,
    .release = pw_release,
};

PW_ENTRY(API)
