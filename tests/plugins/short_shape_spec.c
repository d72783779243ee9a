/* Compiles and runs like `good` but promises a last dimension of 3 for results it writes in full: the host must
 * refuse the spec at compile (it disagrees with the profiled output type),
 * run the group in the interpreter and say why. */
#include "pointwise.h"

static fbxp_status *compile_lying(void *state, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin,
                                  fbxp_compile_result *res, fbxp_kernel **out) {
  fbxp_status *st = pw_compile(state, g, in, nin, res, out);
  if (st) return st;
  for (int o = 0; o < res->noutputs; o++) {
    fbxp_arg_spec *s = &res->outputs[o];
    if (s->ndim > 0 && s->sizes[s->ndim - 1] > 3) s->sizes[s->ndim - 1] = 3;
  }
  return NULL;
}

static const fbxp_plugin_api API = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "short_shape_spec",
    .version = "0.1",
    .vendor = "fusebox tests",
    .flags = FBXP_GUARDS_OUTSIDE,
    .devices = FBXP_DEVICE_CPU,
    .partition = pw_partition,
    .compile = compile_lying,
    .run = pw_run,
    .release = pw_release,
};

PW_ENTRY(API)
