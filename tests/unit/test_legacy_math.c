/* The legacy fuser's vectorizable float math (the kit's prelude,
 * sdk/kit/kit_prelude.inc: fbxk_vexpf, fbxk_vexpm1f, fbxk_vtanhf, fbxk_vlogf,
 * fbxk_vlog1pf, fbxk_verff) against the
 * reference interpreter, through the ops that use them: exp, expm1, tanh,
 * log, erf, sigmoid, silu, elu, log1p, mish, softplus, and gelu in both forms. Each op is followed by a neg
 * (exact) so that it forms a group. Inputs: float32 bit patterns spread
 * over every float (NaNs, infinities, subnormals, both zeros included) and
 * a dense grid over [-12, 12], where the activations do their work. Both
 * sides are a few ulps from the exact result, so they must agree within
 * 8 ulps (NaN with NaN, infinities and zeros with their sign); gelu's
 * 1 + tanh (or erf) cancels for negative x, so there the bound is absolute,
 * 5e-7 |x| (the corpus's float32 tolerance is 1e-5 relative + 1e-6), and
 * results that differ by less than the smallest normal float pass (sigmoid
 * at -88.8 is 1 / (1 + inf) = 0 here, a subnormal in the reference). */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/executor.h"
#include "ir/text.h"
#include "ops/optable.h"

/* A quarter of the values under the sanitizers (CI runs this suite in both
 * builds; the spread over every float and the grid keep their shape): the
 * math is checked in the normal build, the memory use in both. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
#define N_BITS (1 << 17)
#define N_GRID (1 << 17)
#else
#define N_BITS (1 << 19)
#define N_GRID (1 << 19)
#endif

static const char *ops[] = {"aten::exp(%x)", "aten::expm1(%x)", "aten::tanh(%x)", "aten::log(%x)",
                            "aten::erf(%x)", "aten::sigmoid(%x)", "aten::silu(%x)", "aten::elu(%x, %one, %one, %one)",
                            "aten::log1p(%x)", "aten::mish(%x)", "aten::softplus(%x, %one, %twenty)",
                            "aten::gelu(%x, %none_s)", "aten::gelu(%x, %tanh_s)"};
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

/* distance in representable floats (monotone integer order) */
static int64_t ord(float f) {
  int32_t i;
  memcpy(&i, &f, 4);
  return i < 0 ? (int64_t)INT32_MIN - i : i;
}

START_TEST(vector_math_matches_reference) {
  ck_assert(!fbx_op_table_init());
  char ir[4096];
  int len = snprintf(ir, sizeof ir,
                     "graph(%%x : Tensor):\n"
                     "  %%one : int = prim::Constant[value=1]()\n"
                     "  %%twenty : int = prim::Constant[value=20]()\n"
                     "  %%none_s : str = prim::Constant[value=\"none\"]()\n"
                     "  %%tanh_s : str = prim::Constant[value=\"tanh\"]()\n");
  for (int k = 0; k < NOPS; k++)
    len += snprintf(ir + len, sizeof ir - (size_t)len, "  %%y%d : Tensor = %s\n  %%z%d : Tensor = aten::neg(%%y%d)\n", k,
                    ops[k], k, k);
  len += snprintf(ir + len, sizeof ir - (size_t)len, "  return (");
  for (int k = 0; k < NOPS; k++) len += snprintf(ir + len, sizeof ir - (size_t)len, "%s%%z%d", k ? ", " : "", k);
  len += snprintf(ir + len, sizeof ir - (size_t)len, ")\n");
  ck_assert_int_lt(len, (int)sizeof ir);

  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, ir, strlen(ir), "math.ir");
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  fbx_executor *legacy = NULL, *ref = NULL;
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "legacy", .profiling_runs = 1};
  st = fbx_executor_create(&legacy, g, &o);
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  fbx_executor_opts r = {.struct_size = sizeof r, .fuser = "none"};
  ck_assert(!fbx_executor_create(&ref, g, &r));

  int64_t n = N_BITS + N_GRID;
  fbx_tensor *x = NULL;
  ck_assert(!fbx_tensor_empty(&x, FBX_DTYPE_FLOAT32, 1, &n));
  float *xd = (float *)x->data;
  for (int64_t i = 0; i < N_BITS; i++) {
    uint32_t b = (uint32_t)(i * (0x100000000LL / N_BITS)) + (uint32_t)(i * 2654435761u % 8191u);
    memcpy(&xd[i], &b, 4);
  }
  for (int64_t i = 0; i < N_GRID; i++) xd[N_BITS + i] = -12.0f + 24.0f * (float)i / N_GRID;
  xd[0] = 0.0f, xd[1] = -0.0f, xd[2] = INFINITY, xd[3] = -INFINITY, xd[4] = NAN, xd[5] = 1e-40f, xd[6] = -1e-40f;

  fbx_ivalue in = fbx_iv_tensor(x), got[NOPS] = {0}, want[NOPS] = {0};
  for (int run = 0; run < 2; run++) { /* the first run profiles, the second runs the kernels */
    for (int k = 0; k < NOPS; k++) fbx_iv_release(&got[k]);
    st = fbx_executor_run_values(legacy, &in, 1, got, NOPS, 0);
    ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  }
  ck_assert(!fbx_executor_run_values(ref, &in, 1, want, NOPS, 0));
  fbx_executor_stats es = {.struct_size = sizeof es};
  fbx_executor_stats_get(legacy, &es);
  ck_assert_int_ge(es.kernel_runs, NOPS);
  ck_assert_int_eq(es.fallbacks, 0);

  for (int k = 0; k < NOPS; k++) {
    const float *a = (const float *)got[k].u.t->data, *e = (const float *)want[k].u.t->data;
    int64_t worst = 0, at = 0, bad = 0;
    char first[192] = "";
    for (int64_t i = 0; i < n; i++) {
      if (isnan(e[i])) {
        if (!isnan(a[i]) && !bad++) snprintf(first, sizeof first, "%s at %a: got %a, want NaN", ops[k], xd[i], a[i]);
        continue;
      }
      if (isnan(a[i])) {
        if (!bad++) snprintf(first, sizeof first, "%s at %a: got NaN, want %a", ops[k], xd[i], e[i]);
        continue;
      }
      if (k >= NOPS - 2 && fabs((double)a[i] - e[i]) <= 5e-7 * fabs(xd[i])) continue; /* gelu */
      if (isinf(e[i]) || e[i] == 0) {
        if (!(a[i] == e[i] && signbit(a[i]) == signbit(e[i])) && !bad++)
          snprintf(first, sizeof first, "%s at %a: got %a, want %a", ops[k], xd[i], a[i], e[i]);
        continue;
      }
      int64_t d = llabs(ord(a[i]) - ord(e[i]));
      if (fabs((double)a[i] - e[i]) < FLT_MIN) continue; /* subnormal results: 1 / (1 + inf) is 0 */
      if (d > worst) worst = d, at = i;
    }
    /* one assert per op: Check writes a record of every assert it passes */
    ck_assert_msg(bad == 0, "%lld elements wrong, the first: %s", (long long)bad, first);
    ck_assert_msg(worst <= 8, "%s: %lld ulps from the reference at x = %a (got %a, want %a)", ops[k], (long long)worst,
                  xd[at], a[at], e[at]);
    fbx_iv_release(&got[k]);
    fbx_iv_release(&want[k]);
  }
  fbx_iv_release(&in);
  fbx_executor_destroy(legacy);
  fbx_executor_destroy(ref);
  fbx_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("legacy_math");
  TCase *tc = tcase_create("math");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, vector_math_matches_reference);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
