/* The legacy fuser's kernels against the reference interpreter, on what the
 * corpus does not cover: strided and non-contiguous inputs (transposed,
 * broadcast with stride 0), scalar inputs, int/bool/half/double dtypes, both
 * sides of the parallel size threshold in both parallel modes (OpenMP, the host's pool), aten::cat as a group exit, and the
 * decline paths (inputs that do not broadcast at run time, a chunk that does
 * not divide), where the plugin returns FBXP_DECLINE and the interpreter
 * runs the group. Expected values come from the same graph run unfused. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/executor.h"
#include "ir/text.h"
#include "ops/optable.h"
#include "testutil.h"

static fbx_tensor *make(fbx_dtype dt, int ndim, const int64_t *sizes, int seed) {
  fbx_tensor *t = NULL;
  ck_assert(!fbx_tensor_empty(&t, dt, ndim, sizes));
  for (int64_t i = 0; i < t->numel; i++) {
    double v = (double)((i * 7 + seed * 13) % 23) - 11.0;
    if (fbx_dtype_is_floating(dt)) v = v / 4.0 + 0.125;
    if (dt == FBX_DTYPE_BOOL) v = (i + seed) % 3 == 0;
    if (dt == FBX_DTYPE_UINT8) v = (double)((i * 5 + seed) % 200);
    fbx_tensor_set_f64(t, i, v);
  }
  return t;
}

/* a transposed view: sizes [b, a] over a contiguous [a, b] */
static fbx_tensor *transposed(fbx_dtype dt, int64_t a, int64_t b, int seed) {
  int64_t s[2] = {a, b}, vs[2] = {b, a}, st[2] = {1, b};
  fbx_tensor *base = make(dt, 2, s, seed), *v = NULL;
  ck_assert(!fbx_tensor_view(&v, base, 2, vs, st, base->offset));
  fbx_tensor_release(base);
  return v;
}

static void expect_close(const fbx_tensor *got, const fbx_tensor *want, const char *what) {
  ck_assert_msg(got->dtype == want->dtype, "%s: dtype %s vs %s", what, fbx_dtype_name(got->dtype),
                fbx_dtype_name(want->dtype));
  ck_assert_msg(fbx_tensor_same_shape(got, want), "%s: shapes differ", what);
  double rtol = want->dtype == FBX_DTYPE_FLOAT16 ? 1e-3 : want->dtype == FBX_DTYPE_FLOAT64 ? 1e-12 : 1e-5;
  double atol = want->dtype == FBX_DTYPE_FLOAT16 ? 1e-3 : want->dtype == FBX_DTYPE_FLOAT64 ? 1e-12 : 1e-6;
  for (int64_t i = 0; i < want->numel; i++) {
    double a = fbx_tensor_get_f64(got, i), e = fbx_tensor_get_f64(want, i);
    if (fbx_dtype_is_floating(want->dtype)) {
      if (isnan(e)) ck_assert_msg(isnan(a), "%s[%lld]: got %g, want NaN", what, (long long)i, a);
      else ck_assert_msg(fabs(a - e) <= atol + rtol * fabs(e), "%s[%lld]: got %.9g, want %.9g", what, (long long)i, a, e);
    } else {
      ck_assert_msg(fbx_tensor_get_i64(got, i) == fbx_tensor_get_i64(want, i), "%s[%lld]: got %lld, want %lld", what,
                    (long long)i, (long long)fbx_tensor_get_i64(got, i), (long long)fbx_tensor_get_i64(want, i));
    }
  }
}

typedef struct pair {
  fbx_graph *g;
  fbx_executor *legacy, *ref;
} pair;

static pair open_pair(const char *ir) {
  pair p = {0};
  ck_assert(!fbx_op_table_init());
  fbx_status *st = fbx_graph_parse(&p.g, ir, strlen(ir), "test.ir");
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "legacy", .profiling_runs = 1};
  st = fbx_executor_create(&p.legacy, p.g, &o);
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  fbx_executor_opts r = {.struct_size = sizeof r, .fuser = "none"};
  ck_assert(!fbx_executor_create(&p.ref, p.g, &r));
  return p;
}

static void close_pair(pair *p) {
  fbx_executor_destroy(p->legacy);
  fbx_executor_destroy(p->ref);
  fbx_graph_destroy(p->g);
}

static fbx_executor_stats stats(const pair *p) {
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(p->legacy, &s);
  return s;
}

/* Run both `runs` times (legacy) / once (reference) and compare every output. */
static void run_both(pair *p, fbx_ivalue *in, int nin, int runs, const char *what) {
  int nout = fbx_graph_noutputs(p->g);
  fbx_ivalue got[8] = {0}, want[8] = {0};
  for (int r = 0; r < runs; r++) {
    for (int i = 0; i < nout; i++) fbx_iv_release(&got[i]);
    fbx_status *st = fbx_executor_run_values(p->legacy, in, nin, got, nout, 0);
    ck_assert_msg(!st, "%s: %s", what, st ? fbx_status_message(st) : "");
  }
  ck_assert(!fbx_executor_run_values(p->ref, in, nin, want, nout, 0));
  for (int i = 0; i < nout; i++) {
    ck_assert(got[i].kind == FBX_IV_TENSOR && want[i].kind == FBX_IV_TENSOR);
    expect_close(got[i].u.t, want[i].u.t, what);
    fbx_iv_release(&got[i]);
    fbx_iv_release(&want[i]);
  }
}

static void release_all(fbx_ivalue *v, int n) {
  for (int i = 0; i < n; i++) fbx_iv_release(&v[i]);
}

static const char *binary_ir =
    "graph(%x : Tensor, %y : Tensor):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %a : Tensor = aten::mul(%x, %y)\n"
    "  %s : Tensor = aten::sigmoid(%x)\n"
    "  %b : Tensor = aten::add(%a, %s, %one)\n"
    "  return (%b)\n";

START_TEST(strided_and_broadcast_inputs) {
  pair p = open_pair(binary_ir);
  /* x transposed (non-contiguous), y contiguous */
  int64_t s54[2] = {5, 4};
  fbx_ivalue in[2] = {fbx_iv_tensor(transposed(FBX_DTYPE_FLOAT32, 4, 5, 1)),
                      fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, s54, 2))};
  run_both(&p, in, 2, 3, "transposed x");
  release_all(in, 2);
  /* y a row broadcast over x's rows, and x expanded with a stride-0 dim */
  int64_t s4[1] = {4}, s14[2] = {1, 4}, exp_sizes[2] = {5, 4}, exp_strides[2] = {0, 1};
  fbx_tensor *row = make(FBX_DTYPE_FLOAT32, 2, s14, 3), *expanded = NULL;
  ck_assert(!fbx_tensor_view(&expanded, row, 2, exp_sizes, exp_strides, row->offset));
  fbx_tensor_release(row);
  fbx_ivalue in2[2] = {fbx_iv_tensor(expanded), fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 1, s4, 4))};
  run_both(&p, in2, 2, 3, "expanded x, broadcast y");
  release_all(in2, 2);
  fbx_executor_stats s = stats(&p);
  ck_assert_int_ge(s.groups, 1);
  ck_assert_int_ge(s.kernel_runs, 4);
  ck_assert_int_eq(s.fallbacks, 0);
  close_pair(&p);
}
END_TEST

START_TEST(scalar_inputs) {
  pair p = open_pair("graph(%x : Tensor, %a : float, %k : int):\n"
                     "  %one : int = prim::Constant[value=1]()\n"
                     "  %m : Tensor = aten::mul(%x, %a)\n"
                     "  %b : Tensor = aten::add(%m, %k, %one)\n"
                     "  %c : Tensor = aten::relu(%b)\n"
                     "  return (%c)\n");
  int64_t s[2] = {3, 7};
  fbx_ivalue in[3] = {fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, s, 1)), fbx_iv_float(0.75), fbx_iv_int(2)};
  run_both(&p, in, 3, 3, "scalars 0.75, 2");
  in[1] = fbx_iv_float(-1.5);
  in[2] = fbx_iv_int(-3);
  run_both(&p, in, 3, 1, "scalars -1.5, -3");
  fbx_executor_stats es = stats(&p);
  ck_assert_int_ge(es.kernel_runs, 3);
  ck_assert_int_eq(es.kernels_compiled, 1); /* scalars are run-time arguments */
  release_all(in, 3);
  close_pair(&p);
}
END_TEST

/* A run-time `Scalar` (a backward graph's prim::unchecked_cast of a saved
 * number) as a kernel argument: the overloads resolve (ge.Scalar, mul.Scalar)
 * and the comparisons and arithmetic with it are fused, an int and a float
 * Scalar each in their own kernel (their promotion differs). */
START_TEST(scalar_typed_inputs) {
  pair p = open_pair("graph(%x : Tensor, %a : float, %k : int):\n"
                     "  %s : Scalar = prim::unchecked_cast(%a)\n"
                     "  %t : Scalar = prim::unchecked_cast(%k)\n"
                     "  %m : Tensor = aten::mul(%x, %s)\n"
                     "  %g : Tensor = aten::ge(%m, %t)\n"
                     "  %w : Tensor = aten::where(%g, %m, %x)\n"
                     "  return (%w, %g)\n");
  int64_t s[2] = {3, 7};
  fbx_ivalue in[3] = {fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, s, 1)), fbx_iv_float(0.75), fbx_iv_int(1)};
  run_both(&p, in, 3, 3, "Scalar 0.75, 1");
  in[1] = fbx_iv_float(-1.5);
  in[2] = fbx_iv_int(-2);
  run_both(&p, in, 3, 1, "Scalar -1.5, -2");
  fbx_executor_stats es = stats(&p);
  ck_assert_int_ge(es.kernel_runs, 3);
  ck_assert_int_eq(es.fallbacks, 0);
  char *text = fbx_executor_explain_text(p.legacy);
  char *with = text ? strstr(text, "with fusebox::FusionGroup_0") : NULL;
  ck_assert_msg(with && strstr(with, "aten::ge") && strstr(with, "aten::mul") && strstr(with, "aten::where"),
                "mul, ge and where are not one group:\n%s", text ? text : "");
  fbx_free(text);
  release_all(in, 3);
  close_pair(&p);
}
END_TEST

static void dtype_case(const char *ir, fbx_dtype a, fbx_dtype b, const char *what) {
  pair p = open_pair(ir);
  int64_t s[2] = {6, 5};
  fbx_ivalue in[2] = {fbx_iv_tensor(make(a, 2, s, 1)), fbx_iv_tensor(make(b, 2, s, 2))};
  run_both(&p, in, 2, 3, what);
  fbx_executor_stats st = stats(&p);
  ck_assert_msg(st.kernel_runs >= 2, "%s: no kernel ran", what);
  ck_assert_int_eq(st.fallbacks, 0);
  release_all(in, 2);
  close_pair(&p);
}

START_TEST(int_bool_half_dtypes) {
  const char *arith = "graph(%x : Tensor, %y : Tensor):\n"
                      "  %one : int = prim::Constant[value=1]()\n"
                      "  %three : int = prim::Constant[value=3]()\n"
                      "  %a : Tensor = aten::mul(%y, %three)\n"
                      "  %b : Tensor = aten::add(%x, %a, %one)\n"
                      "  %n : Tensor = aten::neg(%b)\n"
                      "  %c : Tensor = aten::gt(%x, %y)\n"
                      "  %d : Tensor = aten::where(%c, %n, %b)\n"
                      "  return (%d, %c)\n";
  dtype_case(arith, FBX_DTYPE_INT32, FBX_DTYPE_INT32, "int32");
  dtype_case(arith, FBX_DTYPE_INT64, FBX_DTYPE_INT32, "int64 with int32");
  dtype_case(arith, FBX_DTYPE_UINT8, FBX_DTYPE_INT8, "uint8 with int8 (int16)");
  dtype_case(arith, FBX_DTYPE_FLOAT16, FBX_DTYPE_FLOAT16, "float16");
  dtype_case(arith, FBX_DTYPE_FLOAT64, FBX_DTYPE_FLOAT32, "float64 with float32");
  dtype_case(arith, FBX_DTYPE_INT32, FBX_DTYPE_FLOAT32, "int32 with float32");
  dtype_case("graph(%x : Tensor, %y : Tensor):\n"
             "  %a : Tensor = aten::logical_and(%x, %y)\n"
             "  %b : Tensor = aten::logical_not(%a)\n"
             "  %c : Tensor = aten::logical_xor(%b, %y)\n"
             "  return (%c)\n",
             FBX_DTYPE_BOOL, FBX_DTYPE_BOOL, "bool");
  dtype_case("graph(%x : Tensor, %y : Tensor):\n"
             "  %a : Tensor = aten::mul(%x, %y)\n"
             "  %b : Tensor = aten::tanh(%a)\n"
             "  %c : Tensor = aten::div(%b, %y)\n"
             "  return (%c)\n",
             FBX_DTYPE_FLOAT16, FBX_DTYPE_FLOAT16, "float16 math");
}
END_TEST

/* The kernels run on the calling thread below FUSEBOX_LEGACY_OMP_MIN
 * elements (default 32768) and in parallel above, in the mode `mode`
 * (FUSEBOX_LEGACY_PARALLEL, read when the plugin loads: each Check test is
 * a fresh process): flat (both inputs contiguous) and strided (rows, the
 * second input transposed) above, both give the reference. */
static void threshold_both_sides(const char *mode) {
  ck_assert(!setenv("FUSEBOX_LEGACY_PARALLEL", mode, 1));
  ck_assert(!setenv("FUSEBOX_NUM_THREADS", "4", 1));
  pair p = open_pair(binary_ir);
  int64_t small[2] = {8, 8}, big[2] = {300, 400};
  fbx_ivalue in[2] = {fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, small, 1)),
                      fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, small, 2))};
  run_both(&p, in, 2, 3, "64 elements");
  release_all(in, 2);
  fbx_ivalue in2[2] = {fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, big, 1)),
                       fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, big, 2))};
  run_both(&p, in2, 2, 2, "120000 elements, flat");
  release_all(in2, 2);
  fbx_ivalue in3[2] = {fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, big, 1)),
                       fbx_iv_tensor(transposed(FBX_DTYPE_FLOAT32, 400, 300, 2))};
  run_both(&p, in3, 2, 2, "120000 elements, strided");
  release_all(in3, 2);
  fbx_executor_stats s = stats(&p);
  ck_assert_int_ge(s.kernel_runs, 6);
  ck_assert_int_eq(s.fallbacks, 0);
  close_pair(&p);
}

START_TEST(parallel_threshold_omp) { threshold_both_sides("omp"); }
END_TEST

START_TEST(parallel_threshold_pool) { threshold_both_sides("pool"); }
END_TEST

START_TEST(cat_is_a_group_exit) {
  pair p = open_pair("graph(%x : Tensor, %y : Tensor):\n"
                     "  %dim : int = prim::Constant[value=1]()\n"
                     "  %a : Tensor = aten::sigmoid(%x)\n"
                     "  %b : Tensor = aten::mul(%x, %y)\n"
                     "  %l : Tensor[] = prim::ListConstruct(%a, %b)\n"
                     "  %c : Tensor = aten::cat(%l, %dim)\n"
                     "  return (%c)\n");
  int64_t s[2] = {4, 6};
  fbx_ivalue in[2] = {fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, s, 1)), fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, s, 2))};
  run_both(&p, in, 2, 3, "cat along dim 1");
  char *text = fbx_executor_explain_text(p.legacy);
  ck_assert_msg(text && strstr(text, "with fusebox::FusionGroup"), "nothing fused");
  /* the cat is inside the group: the outer graph has no aten::cat before the subgraph section */
  char *with = strstr(text, "with fusebox::FusionGroup");
  char *cat = strstr(text, "aten::cat");
  ck_assert_msg(cat > with, "aten::cat stayed outside the group:\n%s", text);
  fbx_free(text);
  ck_assert_int_ge(stats(&p).kernel_runs, 2);
  release_all(in, 2);
  close_pair(&p);
}
END_TEST

START_TEST(cat_pieces_of_other_sizes) {
  /* issue 18 item 6 (PyTorch's test_checks_cat_inputs): pieces (2, 4) and
   * (1, 4) cat to (3, 4); the kernel broadcast the smaller piece and
   * returned (4, 4) */
  pair p = open_pair("graph(%x : Tensor, %y : Tensor):\n"
                     "  %dim : int = prim::Constant[value=0]()\n"
                     "  %a : Tensor = aten::relu(%x)\n"
                     "  %b : Tensor = aten::sigmoid(%y)\n"
                     "  %l : Tensor[] = prim::ListConstruct(%a, %b)\n"
                     "  %c : Tensor = aten::cat(%l, %dim)\n"
                     "  return (%c)\n");
  int64_t s24[2] = {2, 4}, s14[2] = {1, 4}, s04[2] = {0, 4};
  fbx_ivalue in[2] = {fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, s24, 1)),
                      fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, s24, 2))};
  run_both(&p, in, 2, 3, "equal pieces");
  fbx_iv_release(&in[1]);
  in[1] = fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, s14, 2));
  run_both(&p, in, 2, 2, "pieces (2, 4) and (1, 4)");
  fbx_iv_release(&in[1]);
  in[1] = fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, s04, 2));
  run_both(&p, in, 2, 2, "pieces (2, 4) and (0, 4)");
  release_all(in, 2);
  close_pair(&p);
}
END_TEST

START_TEST(decline_when_inputs_do_not_broadcast) {
  pair p = open_pair(binary_ir);
  int64_t s45[2] = {4, 5}, s35[2] = {3, 5};
  fbx_ivalue in[2] = {fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, s45, 1)),
                      fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, s45, 2))};
  run_both(&p, in, 2, 3, "same shapes");
  fbx_iv_release(&in[1]);
  in[1] = fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, s35, 2));
  fbx_ivalue out = fbx_iv_none();
  fbx_status *st = fbx_executor_run_values(p.legacy, in, 2, &out, 1, 0);
  /* the plugin declined; the interpreter then reports PyTorch's error */
  ck_assert_msg(st != NULL, "[4, 5] * [3, 5] ran");
  ck_assert_msg(strstr(fbx_status_message(st), "size") || strstr(fbx_status_message(st), "broadcast"), "%s",
                fbx_status_message(st));
  fbx_status_free(st);
  fbx_executor_stats s = stats(&p);
  ck_assert_int_ge(s.fallbacks_declined, 1);
  ck_assert_int_eq(s.fallbacks_run, 0);
  release_all(in, 2);
  close_pair(&p);
}
END_TEST

START_TEST(decline_when_chunk_does_not_divide) {
  pair p = open_pair("graph(%x : Tensor):\n"
                     "  %two : int = prim::Constant[value=2]()\n"
                     "  %dim : int = prim::Constant[value=1]()\n"
                     "  %one : int = prim::Constant[value=1]()\n"
                     "  %e : Tensor = aten::exp(%x)\n"
                     "  %l : Tensor[] = aten::chunk(%e, %two, %dim)\n"
                     "  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)\n"
                     "  %sa : Tensor = aten::sigmoid(%a)\n"
                     "  %ta : Tensor = aten::tanh(%b)\n"
                     "  %r : Tensor = aten::mul(%sa, %two)\n"
                     "  %q : Tensor = aten::add(%ta, %one, %one)\n"
                     "  %lc : Tensor[] = prim::ListConstruct(%r, %q)\n"
                     "  %c : Tensor = aten::cat(%lc, %dim)\n"
                     "  return (%c)\n");
  int64_t even[2] = {3, 8}, odd[2] = {3, 7};
  fbx_ivalue in[1] = {fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, even, 1))};
  run_both(&p, in, 1, 3, "chunk of 8 in 2");
  fbx_executor_stats s = stats(&p);
  ck_assert_int_ge(s.kernel_runs, 2);
  ck_assert_int_eq(s.fallbacks_declined, 0);
  char *text = fbx_executor_explain_text(p.legacy);
  ck_assert_msg(text && strstr(text, "aten::chunk") > strstr(text, "with fusebox::FusionGroup"), "chunk not fused");
  fbx_free(text);
  release_all(in, 1);
  in[0] = fbx_iv_tensor(make(FBX_DTYPE_FLOAT32, 2, odd, 1));
  run_both(&p, in, 1, 1, "chunk of 7 in 2 (pieces 4 and 3, the cat takes both)");
  s = stats(&p);
  ck_assert_int_ge(s.fallbacks_declined, 1);
  ck_assert_int_eq(s.fallbacks_run, 0);
  release_all(in, 1);
  close_pair(&p);
}
END_TEST

/* clamp with tensor bounds (aten::clamp.Tensor with both or one bound,
 * clamp_min.Tensor, clamp_max.Tensor): min(max(x, lo), hi) where a NaN in
 * x or in a bound gives NaN, as the reference (and PyTorch) do; a bound
 * broadcast along rows; float32 and int32. */
static const char *clamp_tensor_ir =
    "graph(%x : Tensor, %lo : Tensor, %hi : Tensor):\n"
    "  %none : NoneType = prim::Constant()\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %a : Tensor = aten::clamp(%x, %lo, %hi)\n"
    "  %b : Tensor = aten::clamp(%x, %lo, %none)\n"
    "  %c : Tensor = aten::clamp(%x, %none, %hi)\n"
    "  %d : Tensor = aten::clamp_min(%x, %lo)\n"
    "  %e : Tensor = aten::clamp_max(%x, %hi)\n"
    "  %ab : Tensor = aten::add(%a, %b, %one)\n"
    "  %abc : Tensor = aten::add(%ab, %c, %one)\n"
    "  %de : Tensor = aten::mul(%d, %e)\n"
    "  %r : Tensor = aten::sub(%abc, %de, %one)\n"
    "  return (%r, %a, %c)\n";

START_TEST(clamp_with_tensor_bounds) {
  fbx_dtype dts[2] = {FBX_DTYPE_FLOAT32, FBX_DTYPE_INT32};
  for (int k = 0; k < 2; k++) {
    pair p = open_pair(clamp_tensor_ir);
    int64_t s[2] = {4, 5}, row[1] = {5};
    fbx_tensor *x = make(dts[k], 2, s, 1), *lo = make(dts[k], 1, row, 2), *hi = make(dts[k], 2, s, 3);
    for (int64_t i = 0; i < hi->numel; i++) /* hi >= lo mostly, not always */
      fbx_tensor_set_f64(hi, i, fbx_tensor_get_f64(hi, i) + (i % 4 ? 6 : -2));
    if (k == 0) {
      fbx_tensor_set_f64(x, 3, NAN);
      fbx_tensor_set_f64(lo, 1, NAN);
      fbx_tensor_set_f64(hi, 12, NAN);
    }
    fbx_ivalue in[3] = {fbx_iv_tensor(x), fbx_iv_tensor(lo), fbx_iv_tensor(hi)};
    run_both(&p, in, 3, 3, k ? "clamp.Tensor int32" : "clamp.Tensor float32 with NaN");
    fbx_executor_stats st = stats(&p);
    ck_assert_int_ge(st.kernel_runs, 2);
    ck_assert_int_eq(st.fallbacks, 0);
    char *text = fbx_executor_explain_text(p.legacy);
    char *with = text ? strstr(text, "with fusebox::FusionGroup_0") : NULL;
    ck_assert_msg(with && !strstr(with, "FusionGroup_1") && strstr(with, "aten::clamp_max") && strstr(with, "aten::sub"),
                  "the clamps are not one group:\n%s", text ? text : "");
    fbx_free(text);
    release_all(in, 3);
    close_pair(&p);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("legacy_run");
  TCase *tc = tcase_create("run");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, strided_and_broadcast_inputs);
  tcase_add_test(tc, scalar_inputs);
  tcase_add_test(tc, scalar_typed_inputs);
  tcase_add_test(tc, int_bool_half_dtypes);
  tcase_add_test(tc, parallel_threshold_omp);
  tcase_add_test(tc, parallel_threshold_pool);
  tcase_add_test(tc, cat_is_a_group_exit);
  tcase_add_test(tc, cat_pieces_of_other_sizes);
  tcase_add_test(tc, decline_when_inputs_do_not_broadcast);
  tcase_add_test(tc, decline_when_chunk_does_not_divide);
  tcase_add_test(tc, clamp_with_tensor_bounds);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
