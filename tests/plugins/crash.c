/* Loads and compiles fine; run dereferences NULL. For plugin isolation
 * tests (plugin-check) and the host's crash note. FBXTEST_CRASH_STAGE=compile
 * crashes in compile instead; FBXTEST_CRASH_HOW=abort calls abort() instead
 * of dereferencing NULL. */
#include <stdlib.h>

#include "pointwise.h"

static void crash_now(void) {
  const char *how = getenv("FBXTEST_CRASH_HOW");
  if (how && !strcmp(how, "abort")) abort();
  volatile int *volatile p = NULL;
  *p = 1;
}

static int crash_in(const char *stage) {
  const char *s = getenv("FBXTEST_CRASH_STAGE");
  return !strcmp(s && *s ? s : "run", stage);
}

static fbxp_status *compile_crash(void *state, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin,
                                  fbxp_compile_result *res, fbxp_kernel **out) {
  if (crash_in("compile")) crash_now();
  return pw_compile(state, g, in, nin, res, out);
}

static fbxp_status *run_crash(void *state, fbxp_kernel *k, const fbxp_arg *in, int32_t nin, DLTensor *const *outs,
                              int32_t nout) {
  (void)state, (void)k, (void)in, (void)nin, (void)outs, (void)nout;
  if (crash_in("run")) crash_now();
  return pw_run(state, k, in, nin, outs, nout);
}

static const fbxp_plugin_api API = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "crash",
    .version = "0.1",
    .vendor = "fusebox tests",
    .flags = FBXP_GUARDS_OUTSIDE,
    .devices = FBXP_DEVICE_CPU,
    .partition = pw_partition,
    .compile = compile_crash,
    .run = run_crash,
    .release = pw_release,
};

PW_ENTRY(API)
