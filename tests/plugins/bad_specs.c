/* Compiles like `good` but promises impossible outputs: ndim 99 when the
 * first input's first size is even, a negative size when it is odd. */
#include "pointwise.h"

static fbxp_status *compile_bad(void *state, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin,
                                fbxp_compile_result *res, fbxp_kernel **out) {
  fbxp_status *st = pw_compile(state, g, in, nin, res, out);
  if (st) return st;
  for (int o = 0; o < res->noutputs; o++) {
    if (in[0].ndim > 0 && in[0].sizes[0] % 2 == 0) res->outputs[o].ndim = 99;
    else if (res->outputs[o].ndim > 0) res->outputs[o].sizes[0] = -5;
    else res->outputs[o].dtype = 42;
  }
  return NULL;
}

static const fbxp_plugin_api API = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "bad_specs",
    .version = "0.1",
    .vendor = "fusebox tests",
    .flags = FBXP_GUARDS_OUTSIDE,
    .devices = FBXP_DEVICE_CPU,
    .partition = pw_partition,
    .compile = compile_bad,
    .run = pw_run,
    .release = pw_release,
};

PW_ENTRY(API)
