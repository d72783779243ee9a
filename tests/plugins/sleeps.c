/* Like `good`, but every kernel run first sleeps FBX_TEST_SLEEP_US
 * microseconds (default 0): a planted, controllable slowdown for `fusebox ab
 * --compare` (tests/unit/test_cli_ab.c); and with FBX_TEST_WRONG=1 it adds
 * 0.5 to the first element of its first output (a fuser that is fast and
 * wrong). The variables are read at each run. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <time.h>

#include "pointwise.h"

static fbxp_status *run_sleep(void *state, fbxp_kernel *k, const fbxp_arg *in, int32_t nin, DLTensor *const *outs,
                              int32_t nout) {
  const char *e = getenv("FBX_TEST_SLEEP_US");
  long us = e ? strtol(e, NULL, 10) : 0;
  if (us > 0) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts)) {
    }
  }
  fbxp_status *st = pw_run(state, k, in, nin, outs, nout);
  const char *w = getenv("FBX_TEST_WRONG");
  if (!st && w && !strcmp(w, "1") && nout > 0 && outs[0]->dtype.code == kDLFloat && outs[0]->dtype.bits == 32)
    *(float *)(void *)((char *)outs[0]->data + outs[0]->byte_offset) += 0.5f;
  return st;
}

static const fbxp_plugin_api API = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "sleeps",
    .version = "1.0.0",
    .vendor = "fusebox tests",
    .description = "the good plugin, sleeping FBX_TEST_SLEEP_US microseconds per kernel run",
    .flags = FBXP_GUARDS_OUTSIDE | FBXP_RUN_THREAD_SAFE,
    .devices = FBXP_DEVICE_CPU,
    .partition = pw_partition,
    .compile = pw_compile,
    .run = run_sleep,
    .release = pw_release,
    .kernel_source = pw_kernel_source,
};

PW_ENTRY(API)
