/* A pointwise fuser with a planted bug, for `fusebox fuzz` (issue 21): the
 * `good` plugin (relu/neg/mul/add chains on float32 contiguous CPU tensors,
 * see pointwise.h) whose kernels, when the tensors have a size-1 dim and
 * more than one element, lose the last element of every output (it is
 * written as 0, as a kernel that mishandles the size-1 dim's stride and stops
 * one element short would). Everything else is right, so only a graph with
 * a fused chain over such a shape shows it; test_cli_fuzz checks that the
 * fuzzer finds it and minimizes it to at most 3 nodes. */
#include "pointwise.h"

static fbxp_status *planted_run(void *state, fbxp_kernel *kernel, const fbxp_arg *in, int32_t nin,
                                DLTensor *const *outs, int32_t nout) {
  fbxp_status *st = pw_run(state, kernel, in, nin, outs, nout);
  if (st) return st;
  for (int o = 0; o < nout; o++) {
    int64_t numel = 1;
    int ones = 0;
    for (int d = 0; d < outs[o]->ndim; d++) {
      numel *= outs[o]->shape[d];
      ones += outs[o]->shape[d] == 1;
    }
    if (ones && numel > 1) ((float *)((char *)outs[o]->data + outs[o]->byte_offset))[numel - 1] = 0.0f;
  }
  return NULL;
}

static const fbxp_plugin_api API = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "planted",
    .version = "1.0.0",
    .vendor = "fusebox tests",
    .description = "pointwise chains with a planted bug: the last element is lost when a dim is 1",
    .flags = FBXP_GUARDS_OUTSIDE | FBXP_RUN_THREAD_SAFE,
    .devices = FBXP_DEVICE_CPU,
    .partition = pw_partition,
    .compile = pw_compile,
    .run = planted_run,
    .release = pw_release,
    .kernel_source = pw_kernel_source,
};

PW_ENTRY(API)
