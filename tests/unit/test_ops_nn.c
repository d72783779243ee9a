/* The nn ops of ops/list_nn.h (pooling, adaptive max pooling, upsampling,
 * pixel shuffle, recurrent cells, instance_norm, native_batch_norm_backward,
 * dropout's backward) and their gradients, against PyTorch 1.13.
 *
 * tests/data/nn/cases/NAME/ is written by tests/data/nn/gen_nn_cases.py
 * (functions in nn_fns.py) in the conformance corpus's case format
 * (tests/corpus/README.md), so the corpus helpers of corpus_case.h read it:
 * they take case names relative to tests/corpus/cases, hence the "../../"
 * prefix. Each case runs
 *   - forward through the profiling executor (fuser none), with one
 *     profiling run and with FUSEBOX_PROFILING_RUNS=0: outputs equal
 *     PyTorch's;
 *   - where PyTorch has gradients: forward + backward three times, with one
 *     profiling run and with none (profiling_runs 0: no IR types, so the
 *     gradient formulas see no dtypes): every input gradient equal to
 *     PyTorch's, dtype included (mixed_dtype: a float32 input of a float64
 *     result gets a float32 gradient);
 *   - under the legacy, tensorexpr and nvfuser_like fusers, forward and
 *     backward once more (they fuse what they can around the new ops and
 *     leave the ops themselves to the interpreter).
 * max_pool1d / avg_pool1d run as the 2-D ops on a size-1 height.
 * The kernels are also called directly: every allocation in turn made to
 * fail must give NOMEM with the outputs left None (and no leak under
 * ASan), and bad input (a 2-D pooling input, padding over half the kernel,
 * mismatched cell sizes, ...) an error saying what is wrong.
 * Cases whose `training` flag is a graph input (dropout_flag_*,
 * batch_norm_flag_*) check that such graphs get their gradients. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/strbuf.h"
#include "corpus_case.h"
#include "exec/executor.h"
#include "ir/text.h"
#include "ops/optable.h"
#include "tensor/half.h"
#include "testutil.h"

#define PREFIX "../../data/nn/cases/"
#define MAX_ARGS 32
#define MAX_OUTS 16

static const char *const CASES[] = {
    "max_pool2d", "max_pool2d_ceil_dilated", "max_pool2d_indices", "max_pool2d_indices_grad", "max_pool2d_3d",
    "max_pool1d", "avg_pool1d", "avg_pool2d", "avg_pool2d_int", "avg_pool2d_ceil_nopad", "avg_pool2d_divisor", "adaptive_avg_pool2d", "instance_norm",
    "instance_norm_plain", "instance_norm_running", "gru_cell", "gru_cell_nobias", "lstm_cell", "lstm_cell_h_only",
    "rnn_tanh_cell", "rnn_relu_cell", "native_batch_norm_backward", "native_batch_norm_backward_eval",
    "native_dropout_eval", "native_dropout_p0", "native_dropout_p1", "native_dropout_backward", "dropout_flag_eval",
    "dropout_flag_train_p0", "batch_norm_flag_train", "batch_norm_flag_eval", "mixed_dtype",
    "prelu_channels", "prelu_single", "prelu_1d", "prelu_2d", "conv_transpose2d_dcgan", "conv_transpose2d_dilated",
    "conv_transpose1d_groups", "conv_transpose3d", "conv_transpose2d_unbatched", "conv3d", "convolution_transposed",
    "convolution_conv", "underscore_convolution",
    /* upsampling: F.interpolate's scripted graphs (.vec overloads) and the plain overloads */
    "interp_nearest_scale", "interp_nearest_frac", "interp_nearest_size", "interp_nearest_recompute",
    "interp_nearest_1d", "interp_nearest_3d", "interp_nearest_same_size", "interp_linear_1d", "interp_linear_1d_align",
    "interp_bilinear_scale", "interp_bilinear_size_align", "interp_bilinear_down", "interp_bilinear_noncontig",
    "interp_trilinear", "interp_trilinear_align", "interp_bicubic_scale", "interp_bicubic_size_align",
    "interp_bicubic_down", "interp_bilinear_bf16", "interp_nearest_bf16", "interp_bicubic_bf16",
    "upsample_nearest2d_scales", "upsample_bilinear2d_scales", "upsample_linear1d_plain", "upsample_trilinear3d_plain",
    "upsample_bicubic2d_plain", "upsample_nearest1d_plain", "upsample_nearest3d_plain", "upsample_nearest_uint8",
    "upsample_nearest2d_backward_vec", "upsample_bilinear2d_backward_plain", "upsample_bicubic2d_backward_vec",
    /* nearest-exact */
    "interp_nearest_exact_frac", "interp_nearest_exact_size", "interp_nearest_exact_1d", "interp_nearest_exact_3d",
    "interp_nearest_exact_uint8", "upsample_nearest_exact2d_plain", "upsample_nearest_exact1d_backward_plain",
    "upsample_nearest_exact3d_backward_vec",
    /* pixel shuffle, adaptive max pooling */
    "pixel_shuffle", "pixel_unshuffle", "pixel_shuffle_roundtrip", "pixel_shuffle_int", "adaptive_max_pool2d",
    "adaptive_max_pool2d_grad", "adaptive_max_pool2d_up", "adaptive_max_pool1d", "adaptive_max_pool2d_backward",
    /* 3-D pooling, the adaptive average pools */
    "max_pool3d", "max_pool3d_ceil_dilated", "max_pool3d_indices", "max_pool3d_indices_grad", "max_pool3d_unbatched",
    "avg_pool3d", "avg_pool3d_ceil_nopad", "avg_pool3d_divisor", "avg_pool3d_int", "avg_pool3d_backward",
    "adaptive_avg_pool3d", "adaptive_avg_pool3d_unbatched", "underscore_adaptive_avg_pool", "adaptive_max_pool3d",
    "adaptive_max_pool3d_grad", "adaptive_max_pool3d_up", "adaptive_max_pool3d_backward",
    /* grid sampling, affine grids */
    "grid_sample_bilinear", "grid_sample_bilinear_border_align", "grid_sample_bilinear_reflection",
    "grid_sample_bilinear_reflection_align", "grid_sample_nearest", "grid_sample_bicubic",
    "grid_sample_bicubic_border_align", "grid_sample_bicubic_reflection", "grid_sample_3d",
    "grid_sample_3d_border_align", "grid_sample_3d_reflection", "affine_grid_2d", "affine_grid_3d_align",
    "spatial_transformer", "grid_sampler_2d_backward",
};
#define NCASES ((int)(sizeof CASES / sizeof CASES[0]))

static const char *case_name(int i) {
  static char buf[256];
  snprintf(buf, sizeof buf, PREFIX "%s", CASES[i]);
  return buf;
}

/* Forward + backward three times under `fuser`; NULL when every input
 * gradient equals PyTorch's, else why (free it). */
static char *backward_case(const char *name, const char *fuser, int profiling_runs) {
  fbx_strbuf why = {0};
  fbx_graph *g = NULL;
  fbx_executor *ex = NULL;
  fbx_ivalue in[MAX_ARGS] = {{0}}, out[MAX_OUTS] = {{0}}, gout[MAX_OUTS] = {{0}}, gin[MAX_ARGS] = {{0}};
  int nin = 0, nout = 0, nflat = 0;
  if (profiling_runs == 0) ck_assert(!setenv("FUSEBOX_PROFILING_RUNS", "0", 1));
  else ck_assert(!unsetenv("FUSEBOX_PROFILING_RUNS"));
  fbx_status *st = fbx_graph_parse_file(&g, cc_path(name, "graph.ir"));
  if (!st) {
    fbx_executor_opts o = {.struct_size = sizeof o, .fuser = fuser, .profiling_runs = profiling_runs};
    st = fbx_executor_create(&ex, g, &o);
  }
  if (st) goto done;
  if ((nin = cc_load_inputs(name, in, MAX_ARGS, &why)) < 0) goto done;
  nout = fbx_graph_noutputs(g);
  nflat = fbx_executor_num_outputs(ex);
  ck_assert_int_le(nflat, MAX_OUTS);
  bool defined[MAX_OUTS];
  if (cc_load_grad_outputs(name, gout, defined, nflat, &why) < 0) goto done;
  bool rg[MAX_ARGS] = {0};
  for (int i = 0; i < nin; i++) {
    const char *in_name = fbx_graph_input(g, i)->name;
    /* running statistics are buffers: PyTorch's cases did not ask for their gradients */
    bool stat = !strncmp(in_name, "rm", 2) || !strncmp(in_name, "rv", 2);
    rg[i] = !stat && in[i].kind == FBX_IV_TENSOR &&
            (in[i].u.t->dtype == FBX_DTYPE_FLOAT32 || in[i].u.t->dtype == FBX_DTYPE_FLOAT64);
  }
  for (int it = 0; it < 3; it++) {
    fbx_grad_handle *h = NULL;
    for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
    if ((st = fbx_executor_forward_values(ex, in, nin, rg, out, nout, 0, &h))) goto done;
    st = fbx_executor_backward_values(h, gout, nflat, gin, nin);
    fbx_grad_free(h);
    if (st) goto done;
    for (int i = 0; i < nin; i++) {
      if (!rg[i]) {
        fbx_iv_release(&gin[i]);
        continue;
      }
      bool compared;
      fbx_strbuf w = {0};
      bool ok = cc_check_input_grad(name, fbx_graph_input(g, i)->name, &gin[i], &compared, &w);
      if (!ok) fbx_strbuf_printf(&why, "run %d: %s", it + 1, w.data);
      fbx_strbuf_free(&w);
      if (!ok) goto done;
    }
    for (int i = 0; i < nin; i++) fbx_iv_release(&gin[i]);
  }
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  if (s.compile_failures > 0 || s.fallbacks_run > 0)
    fbx_strbuf_printf(&why, "%lld compile failures, %lld failed runs", (long long)s.compile_failures,
                      (long long)s.fallbacks_run);
done:
  if (st) {
    fbx_strbuf_puts(&why, fbx_status_message(st));
    fbx_status_free(st);
  }
  for (int i = 0; i < MAX_ARGS; i++) {
    fbx_iv_release(&in[i]);
    fbx_iv_release(&gin[i]);
  }
  for (int i = 0; i < MAX_OUTS; i++) {
    fbx_iv_release(&out[i]);
    fbx_iv_release(&gout[i]);
  }
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
  unsetenv("FUSEBOX_PROFILING_RUNS");
  if (!why.len) {
    fbx_strbuf_free(&why);
    return NULL;
  }
  return fbx_strbuf_take(&why);
}

static int run_all(const char *fuser, bool with_backward, bool both_profiling) {
  int failed = 0;
  for (int i = 0; i < NCASES; i++) {
    const char *name = case_name(i);
    for (int pr = both_profiling ? 0 : 1; pr <= 1; pr++) {
      int64_t kr = 0, groups = 0;
      char *why = cc_fused_forward(name, fuser, pr, &kr, &groups);
      if (why) {
        printf("FAIL %-32s %-12s forward  profiling_runs=%d: %s\n", CASES[i], fuser, pr, why);
        failed++;
        free(why);
      }
      if (!with_backward || !cc_has_input_grads(name)) continue;
      why = backward_case(name, fuser, pr);
      if (why) {
        printf("FAIL %-32s %-12s backward profiling_runs=%d: %s\n", CASES[i], fuser, pr, why);
        failed++;
        free(why);
      }
    }
  }
  fflush(stdout);
  return failed;
}


/* ---- the kernels called directly: allocation failures and bad input ---------------------------- */

static fbx_ivalue T5(fbx_dtype dt, int nd, int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) {
  int64_t sz[5] = {a, b, c, d, e};
  fbx_tensor *t = NULL;
  ck_assert(!fbx_tensor_empty(&t, dt, nd, sz));
  for (int64_t i = 0; i < t->numel; i++)
    fbx_tensor_set_f64(t, i, dt == FBX_DTYPE_BOOL ? (double)(i % 3 != 0) : (double)((i * 7) % 11) / 5.0 - 1.0);
  return fbx_iv_tensor(t);
}

#define T_(dt, nd, a, b, c, d, e, ...) T5(dt, nd, a, b, c, d, e)
/* T(dtype, ndim, sizes...): up to 5 sizes, the unused ones 0 */
#define T(...) T_(__VA_ARGS__, 0, 0)


/* A list of the first n of v, ints or floats. */
static fbx_ivalue list_of(int n, const double *v, bool ints) {
  fbx_ivalue l;
  ck_assert(!fbx_iv_list_new(&l, n));
  for (int i = 0; i < n; i++) ck_assert(!fbx_iv_list_push(&l, ints ? fbx_iv_int((int64_t)v[i]) : fbx_iv_float(v[i])));
  return l;
}

/* The params list of a whole-sequence layer: per layer and direction
 * w_ih [G * H, I_l], w_hh [G * H, H] and, with biases, b_ih and b_hh; extra
 * appends that many more [G * H] tensors (a malformed list). */
static fbx_ivalue P(int G, int64_t I, int64_t H, int layers, int dirs, bool bias, int extra) {
  fbx_ivalue l;
  ck_assert(!fbx_iv_list_new(&l, 0));
  for (int k = 0; k < layers * dirs; k++) {
    int64_t in = k / dirs ? dirs * H : I;
    ck_assert(!fbx_iv_list_push(&l, T(FBX_DTYPE_FLOAT32, 2, G * H, in, 0, 0)));
    ck_assert(!fbx_iv_list_push(&l, T(FBX_DTYPE_FLOAT32, 2, G * H, H, 0, 0)));
    for (int b = 0; bias && b < 2; b++) ck_assert(!fbx_iv_list_push(&l, T(FBX_DTYPE_FLOAT32, 1, G * H, 0, 0, 0)));
  }
  for (int e = 0; e < extra; e++) ck_assert(!fbx_iv_list_push(&l, T(FBX_DTYPE_FLOAT32, 1, G * H, 0, 0, 0)));
  return l;
}

/* An int64 vector of n values (lengths, batch_sizes). */
static fbx_ivalue V64(int n, int64_t a, int64_t b, int64_t c, int64_t d) {
  int64_t v[4] = {a, b, c, d}, sz = n;
  fbx_tensor *t = NULL;
  ck_assert(!fbx_tensor_from_data(&t, FBX_DTYPE_INT64, 1, &sz, v));
  return fbx_iv_tensor(t);
}

/* A list of n [a, b, c] tensors (states and their gradients). */
static fbx_ivalue S(int n, int64_t a, int64_t b, int64_t c) {
  fbx_ivalue l;
  ck_assert(!fbx_iv_list_new(&l, n));
  for (int i = 0; i < n; i++) ck_assert(!fbx_iv_list_push(&l, T(FBX_DTYPE_FLOAT32, 3, a, b, c, 0)));
  return l;
}
static fbx_ivalue L(int n, int64_t a, int64_t b, int64_t c) { return list_of(n, (double[]){a, b, c}, true); }
static fbx_ivalue L5(int n, int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) {
  return list_of(n, (double[]){a, b, c, d, e}, true);
}
static fbx_ivalue FL(int n, double a, double b, double c) { return list_of(n, (double[]){a, b, c}, false); }

typedef struct kcall {
  const char *what;
  fbx_op_id id;
  fbx_ivalue args[FBX_SCHEMA_MAX_ARGS];
  const char *err; /* NULL: must succeed; else a part of the error message */
} kcall;

static fbx_status *call(const kcall *k, fbx_ivalue *outs) {
  const fbx_op *op = fbx_op_get(k->id);
  uint64_t rng = 1;
  fbx_kctx ctx = {.op = op, .rng_state = &rng, .nargs = op->schema.nargs};
  fbx_ivalue a[FBX_SCHEMA_MAX_ARGS];
  fbx_status *st = fbx_op_normalize_args(op, k->args, op->schema.nargs, a);
  if (st) return st;
  for (int i = 0; i < FBX_SCHEMA_MAX_RETS; i++) outs[i] = fbx_iv_none();
  return op->kernel(&ctx, a, outs);
}

static void release_args(kcall *k) {
  for (int i = 0; i < FBX_SCHEMA_MAX_ARGS; i++) fbx_iv_release(&k->args[i]);
}

static fbx_ivalue STR(const char *s) {
  fbx_ivalue v;
  ck_assert(!fbx_iv_str_new(&v, s, strlen(s)));
  return v;
}

#define F32 FBX_DTYPE_FLOAT32
#define NONE_ fbx_iv_none()
#define B_(v) fbx_iv_bool(v)
#define F_(v) fbx_iv_float(v)
#define I_(v) fbx_iv_int(v)

START_TEST(kernels_under_allocation_failures) {
  ck_assert(!fbx_op_table_init());
  fbx_ivalue hc;
  ck_assert(!fbx_iv_list_new(&hc, 2));
  ck_assert(!fbx_iv_list_push(&hc, T(F32, 2, 2, 3, 0, 0)));
  ck_assert(!fbx_iv_list_push(&hc, T(F32, 2, 2, 3, 0, 0)));
  kcall calls[] = {
      {"max_pool2d", FBX_OP_max_pool2d,
       {T(F32, 4, 1, 2, 5, 5), L(1, 3, 0, 0), L(1, 2, 0, 0), L(1, 1, 0, 0), L(1, 1, 0, 0), B_(true)}, NULL},
      {"max_pool2d_with_indices", FBX_OP_max_pool2d_with_indices,
       {T(F32, 3, 2, 4, 4, 0), L(2, 2, 2, 0), L(0, 0, 0, 0), L(1, 0, 0, 0), L(1, 1, 0, 0), B_(false)}, NULL},
      {"avg_pool2d", FBX_OP_avg_pool2d,
       {T(F32, 4, 1, 2, 5, 4), L(1, 3, 0, 0), L(1, 2, 0, 0), L(1, 1, 0, 0), B_(true), B_(false), NONE_}, NULL},
      {"max_pool2d_with_indices_backward", FBX_OP_max_pool2d_with_indices_backward,
       {T(F32, 3, 1, 2, 2, 0), T(F32, 3, 1, 4, 4, 0), L(1, 2, 0, 0), L(1, 2, 0, 0), L(1, 0, 0, 0), L(1, 1, 0, 0),
       B_(false), T(FBX_DTYPE_INT64, 3, 1, 2, 2, 0)}, NULL},
      {"avg_pool2d_backward", FBX_OP_avg_pool2d_backward,
       {T(F32, 3, 1, 2, 2, 0), T(F32, 3, 1, 4, 4, 0), L(1, 2, 0, 0), L(1, 2, 0, 0), L(1, 0, 0, 0), B_(false),
       B_(true), I_(3)}, NULL},
      {"_adaptive_avg_pool2d_backward", FBX_OP_adaptive_avg_pool2d_backward,
       {T(F32, 3, 2, 2, 3, 0), T(F32, 3, 2, 5, 7, 0)}, NULL},
      {"rnn_tanh_cell", FBX_OP_rnn_tanh_cell,
       {T(F32, 2, 2, 4, 0, 0), T(F32, 2, 2, 3, 0, 0), T(F32, 2, 3, 4, 0, 0), T(F32, 2, 3, 3, 0, 0),
       T(F32, 1, 3, 0, 0, 0), NONE_}, NULL},
      {"gru_cell", FBX_OP_gru_cell,
       {T(F32, 2, 2, 4, 0, 0), T(F32, 2, 2, 3, 0, 0), T(F32, 2, 9, 4, 0, 0), T(F32, 2, 9, 3, 0, 0), NONE_,
       T(F32, 1, 9, 0, 0, 0)}, NULL},
      {"lstm_cell", FBX_OP_lstm_cell,
       {T(F32, 2, 2, 4, 0, 0), hc, T(F32, 2, 12, 4, 0, 0), T(F32, 2, 12, 3, 0, 0), T(F32, 1, 12, 0, 0, 0),
       T(F32, 1, 12, 0, 0, 0)}, NULL},
      {"instance_norm", FBX_OP_instance_norm,
       {T(F32, 3, 2, 3, 4, 0), T(F32, 1, 3, 0, 0, 0), T(F32, 1, 3, 0, 0, 0), NONE_, NONE_, B_(true), F_(0.1),
       F_(1e-5), B_(false)}, NULL},
      {"native_batch_norm_backward", FBX_OP_native_batch_norm_backward,
       {T(F32, 3, 2, 3, 4, 0), T(F32, 3, 2, 3, 4, 0), T(F32, 1, 3, 0, 0, 0), NONE_, NONE_, T(F32, 1, 3, 0, 0, 0),
       T(F32, 1, 3, 0, 0, 0), B_(true), F_(1e-5), NONE_}, NULL},
      {"fusebox::instance_norm_backward", FBX_OP_fbx_instance_norm_backward,
       {T(F32, 3, 2, 3, 4, 0), T(F32, 3, 2, 3, 4, 0), T(F32, 1, 3, 0, 0, 0), NONE_, NONE_, B_(true),
       F_(1e-5)}, NULL},
      {"fusebox::dropout_backward", FBX_OP_fbx_dropout_backward,
       {T(F32, 2, 3, 4, 0, 0), T(F32, 2, 3, 4, 0, 0), F_(0.25), B_(true)}, NULL},
      {"native_dropout_backward", FBX_OP_native_dropout_backward,
       {T(F32, 2, 3, 4, 0, 0), T(FBX_DTYPE_BOOL, 2, 3, 4, 0, 0), F_(2.0)}, NULL},
      {"max_pool1d", FBX_OP_max_pool1d,
       {T(F32, 3, 2, 3, 7, 0), L(1, 3, 0, 0), L(1, 2, 0, 0), L(1, 1, 0, 0), L(1, 1, 0, 0), B_(false)}, NULL},
      {"fusebox::max_pool1d_backward", FBX_OP_fbx_max_pool1d_backward,
       {T(F32, 2, 3, 4, 0, 0), T(F32, 2, 3, 7, 0, 0), L(1, 3, 0, 0), L(1, 2, 0, 0), L(1, 1, 0, 0), L(1, 1, 0, 0),
        B_(false)}, NULL},
      {"fusebox::avg_pool1d_backward", FBX_OP_fbx_avg_pool1d_backward,
       {T(F32, 2, 3, 3, 0, 0), T(F32, 2, 3, 7, 0, 0), L(1, 3, 0, 0), L(0, 0, 0, 0), L(1, 1, 0, 0), B_(true),
        B_(false)}, NULL},
      /* whole-sequence layers: input [T, B, I] ([B, T, I] batch_first), states [L * D, B, H] */
      {"lstm, 2 layers, bidirectional", FBX_OP_lstm_input,
       {T(F32, 3, 3, 2, 4, 0), S(2, 4, 2, 3), P(4, 4, 3, 2, 2, true, 0), B_(true), I_(2), F_(0.0), B_(false),
        B_(true), B_(false)}, NULL},
      {"gru, batch_first, no biases", FBX_OP_gru_input,
       {T(F32, 3, 2, 3, 4, 0), T(F32, 3, 1, 2, 3, 0), P(3, 4, 3, 1, 1, false, 0), B_(false), I_(1), F_(0.0),
        B_(false), B_(false), B_(true)}, NULL},
      {"rnn_relu, 2 layers", FBX_OP_rnn_relu_input,
       {T(F32, 3, 3, 2, 4, 0), T(F32, 3, 2, 2, 3, 0), P(1, 4, 3, 2, 1, true, 0), B_(true), I_(2), F_(0.0),
        B_(false), B_(false), B_(false)}, NULL},
      {"fusebox::rnn_seq_backward of lstm, bidirectional", FBX_OP_fbx_rnn_seq_backward,
       {T(F32, 3, 3, 2, 6, 0), S(2, 2, 2, 3), T(F32, 3, 3, 2, 4, 0), NONE_, S(2, 2, 2, 3), P(4, 4, 3, 1, 2, true, 0),
        I_(3), B_(true), I_(1), F_(0.0), B_(false), B_(true), B_(false)}, NULL},
      {"fusebox::rnn_seq_backward of gru, 2 layers, batch_first", FBX_OP_fbx_rnn_seq_backward,
       {T(F32, 3, 2, 3, 3, 0), S(1, 2, 2, 3), T(F32, 3, 2, 3, 4, 0), NONE_, S(1, 2, 2, 3), P(3, 4, 3, 2, 1, true, 0),
        I_(2), B_(true), I_(2), F_(0.0), B_(false), B_(false), B_(true)}, NULL},
      {"gru over an empty batch", FBX_OP_gru_input,
       {T(F32, 3, 3, 0, 4, 0), T(F32, 3, 1, 0, 3, 0), P(3, 4, 3, 1, 1, true, 0), B_(true), I_(1), F_(0.0),
        B_(false), B_(false), B_(false)}, NULL},
      /* packed sequences: lengths 3, 2, 2 (batch_sizes 3, 3, 1), N = 7 */
      {"_pack_padded_sequence, batch_first", FBX_OP__pack_padded_sequence,
       {T(F32, 3, 3, 4, 2, 0), V64(3, 3, 2, 2, 0), B_(true)}, NULL},
      {"_pad_packed_sequence, total_length 5", FBX_OP__pad_packed_sequence,
       {T(F32, 2, 7, 2, 0, 0), V64(3, 3, 3, 1, 0), B_(false), F_(-1.0), I_(5)}, NULL},
      {"_pack_padded_sequence_backward", FBX_OP__pack_padded_sequence_backward,
       {T(F32, 2, 7, 2, 0, 0), L(3, 4, 3, 2), V64(3, 3, 3, 1, 0), B_(false)}, NULL},
      {"fusebox::pad_packed_backward", FBX_OP_fbx_pad_packed_backward,
       {T(F32, 3, 3, 4, 2, 0), V64(3, 3, 3, 1, 0), B_(true)}, NULL},
      {"lstm.data, bidirectional", FBX_OP_lstm_data,
       {T(F32, 2, 7, 4, 0, 0), V64(3, 3, 3, 1, 0), S(2, 2, 3, 3), P(4, 4, 3, 1, 2, true, 0), B_(true), I_(1),
        F_(0.0), B_(false), B_(true)}, NULL},
      {"fusebox::rnn_seq_backward of gru.data", FBX_OP_fbx_rnn_seq_backward,
       {T(F32, 2, 7, 3, 0, 0), S(1, 1, 3, 3), T(F32, 2, 7, 4, 0, 0), V64(3, 3, 3, 1, 0), S(1, 1, 3, 3),
        P(3, 4, 3, 1, 1, true, 0), I_(2), B_(true), I_(1), F_(0.0), B_(false), B_(false), B_(false)}, NULL},
      {"prelu", FBX_OP_prelu, {T(F32, 3, 2, 3, 4, 0), T(F32, 1, 3, 0, 0, 0)}, NULL},
      {"prelu_backward", FBX_OP_prelu_backward, {T(F32, 3, 2, 3, 4, 0), T(F32, 3, 2, 3, 4, 0), T(F32, 1, 1, 0, 0, 0)},
       NULL},
      {"conv_transpose2d", FBX_OP_conv_transpose2d_input,
       {T(F32, 4, 1, 4, 3, 3), T(F32, 4, 4, 2, 3, 3), T(F32, 1, 4, 0, 0, 0), L(1, 2, 0, 0), L(1, 1, 0, 0),
        L(1, 1, 0, 0), I_(2), L(1, 1, 0, 0)}, NULL},
      {"conv_transpose1d, as a forward convolution", FBX_OP_conv_transpose1d,
       {T(F32, 3, 1, 4, 5, 0), T(F32, 3, 4, 2, 3, 0), NONE_, L(1, 1, 0, 0), L(1, 1, 0, 0), L(1, 0, 0, 0), I_(1),
        L(1, 1, 0, 0)}, NULL},
      {"conv3d", FBX_OP_conv3d,
       {T(F32, 5, 1, 2, 3, 3, 3), T(F32, 5, 2, 2, 2, 2, 2), T(F32, 1, 2, 0, 0, 0), L(1, 1, 0, 0), L(1, 0, 0, 0),
        L(1, 1, 0, 0), I_(1)}, NULL},
      {"fusebox::convolution_backward, transposed", FBX_OP_fbx_convolution_backward,
       {T(F32, 4, 1, 2, 7, 7), T(F32, 4, 1, 4, 3, 3), T(F32, 4, 4, 1, 3, 3), T(F32, 1, 2, 0, 0, 0), L(1, 2, 0, 0),
        L(1, 0, 0, 0), L(1, 1, 0, 0), B_(true), L(1, 0, 0, 0), I_(2)}, NULL},
      {"fusebox::conv_backward, 3-D", FBX_OP_fbx_conv_backward,
       {T(F32, 5, 1, 2, 2, 2, 2), T(F32, 5, 1, 2, 3, 3, 3), T(F32, 5, 2, 2, 2, 2, 2), T(F32, 1, 2, 0, 0, 0),
        L(1, 1, 0, 0), L(1, 0, 0, 0), L(1, 1, 0, 0), I_(1)}, NULL},
      /* bad input: an error naming the problem, no crash */
      {"_pack_padded_sequence of unsorted lengths", FBX_OP__pack_padded_sequence,
       {T(F32, 3, 3, 4, 2, 0), V64(3, 2, 3, 2, 0), B_(true)}, "sorted in decreasing order"},
      {"_pack_padded_sequence of a zero length", FBX_OP__pack_padded_sequence,
       {T(F32, 3, 3, 4, 2, 0), V64(4, 3, 2, 1, 0), B_(false)}, "must be greater than 0"},
      {"_pad_packed_sequence total_length below the longest", FBX_OP__pad_packed_sequence,
       {T(F32, 2, 7, 2, 0, 0), V64(3, 3, 3, 1, 0), B_(false), F_(0.0), I_(2)}, "total_length 2 is shorter"},
      {"gru.data with growing batch_sizes", FBX_OP_gru_data,
       {T(F32, 2, 7, 4, 0, 0), V64(3, 1, 3, 3, 0), T(F32, 3, 1, 1, 3, 0), P(3, 4, 3, 1, 1, true, 0), B_(true),
        I_(1), F_(0.0), B_(false), B_(false)}, "non-increasing"},
      {"lstm.data whose batch_sizes miss rows", FBX_OP_lstm_data,
       {T(F32, 2, 8, 4, 0, 0), V64(3, 3, 3, 1, 0), S(2, 1, 3, 3), P(4, 4, 3, 1, 1, true, 0), B_(true), I_(1),
        F_(0.0), B_(false), B_(false)}, "sum to 7"},
      {"rnn_seq_backward with an output gradient of another shape", FBX_OP_fbx_rnn_seq_backward,
       {T(F32, 3, 3, 2, 5, 0), S(1, 1, 2, 3), T(F32, 3, 3, 2, 4, 0), NONE_, S(1, 1, 2, 3), P(1, 4, 3, 1, 1, true, 0),
        I_(0), B_(true), I_(1), F_(0.0), B_(false), B_(false), B_(false)}, "the gradient of the output is not [3, 2, 3]"},
      {"lstm of a 2-D input", FBX_OP_lstm_input,
       {T(F32, 2, 3, 4, 0, 0), S(2, 1, 3, 3), P(4, 4, 3, 1, 1, true, 0), B_(true), I_(1), F_(0.0), B_(false),
        B_(false), B_(false)}, "input must have 3 dimensions"},
      {"lstm over an empty sequence", FBX_OP_lstm_input,
       {T(F32, 3, 0, 2, 4, 0), S(2, 1, 2, 3), P(4, 4, 3, 1, 1, true, 0), B_(true), I_(1), F_(0.0), B_(false),
        B_(false), B_(false)}, "sequence length to be larger than 0"},
      {"lstm with projections", FBX_OP_lstm_input,
       {T(F32, 3, 3, 2, 4, 0), S(2, 1, 2, 3), P(4, 4, 3, 1, 1, true, 1), B_(true), I_(1), F_(0.0), B_(false),
        B_(false), B_(false)}, "projections"},
      {"gru dropout between layers in training", FBX_OP_gru_input,
       {T(F32, 3, 3, 2, 4, 0), T(F32, 3, 2, 2, 3, 0), P(3, 4, 3, 2, 1, true, 0), B_(true), I_(2), F_(0.5),
        B_(true), B_(false), B_(false)}, "dropout between layers"},
      {"rnn_tanh hidden of another batch", FBX_OP_rnn_tanh_input,
       {T(F32, 3, 3, 2, 4, 0), T(F32, 3, 1, 5, 3, 0), P(1, 4, 3, 1, 1, true, 0), B_(true), I_(1), F_(0.0),
        B_(false), B_(false), B_(false)}, "Expected hidden size (1, 2, 3)"},
      {"rnn_tanh params of 2 layers for 1", FBX_OP_rnn_tanh_input,
       {T(F32, 3, 3, 2, 4, 0), T(F32, 3, 1, 2, 3, 0), P(1, 4, 3, 1, 1, true, 2), B_(true), I_(1), F_(0.0),
        B_(false), B_(false), B_(false)}, "expected 4 parameter tensors"},
      {"gru weight_ih of another input size", FBX_OP_gru_input,
       {T(F32, 3, 3, 2, 5, 0), T(F32, 3, 1, 2, 3, 0), P(3, 4, 3, 1, 1, true, 0), B_(true), I_(1), F_(0.0),
        B_(false), B_(false), B_(false)}, "weight_ih of layer 0 must be a 2-D [9, 5]"},
      {"upsample_nearest2d.vec", FBX_OP_upsample_nearest2d_vec, {T(F32, 4, 2, 3, 4, 5), NONE_, FL(2, 1.7, 2.0, 0)},
       NULL},
      {"upsample_nearest2d.vec of uint8", FBX_OP_upsample_nearest2d_vec,
       {T(FBX_DTYPE_UINT8, 4, 1, 2, 3, 3), L(2, 5, 4, 0), NONE_}, NULL},
      {"upsample_bilinear2d.vec", FBX_OP_upsample_bilinear2d_vec, {T(F32, 4, 2, 3, 4, 5), L(2, 7, 9, 0), B_(true),
       NONE_}, NULL},
      {"upsample_bicubic2d", FBX_OP_upsample_bicubic2d, {T(F32, 4, 1, 2, 4, 5), L(2, 8, 7, 0), B_(false), F_(2.0),
       NONE_}, NULL},
      {"upsample_linear1d", FBX_OP_upsample_linear1d, {T(F32, 3, 2, 3, 5, 0), L(1, 9, 0, 0), B_(false), NONE_}, NULL},
      {"upsample_nearest3d", FBX_OP_upsample_nearest3d, {T5(F32, 5, 1, 2, 2, 3, 3), L(3, 3, 4, 5), NONE_, F_(1.5),
       NONE_}, NULL},
      {"upsample_trilinear3d_backward.vec", FBX_OP_upsample_trilinear3d_backward_vec,
       {T5(F32, 5, 1, 2, 4, 6, 3), NONE_, L5(5, 1, 2, 2, 3, 3), B_(false), FL(3, 2.0, 2.0, 1.0)}, NULL},
      {"upsample_nearest1d_backward", FBX_OP_upsample_nearest1d_backward,
       {T(F32, 3, 2, 3, 7, 0), L(1, 7, 0, 0), L(3, 2, 3, 4), NONE_}, NULL},
      {"upsample_bicubic2d_backward", FBX_OP_upsample_bicubic2d_backward,
       {T(F32, 4, 1, 2, 6, 5), L(2, 6, 5, 0), L5(4, 1, 2, 3, 4, 0), B_(true), NONE_, NONE_}, NULL},
      {"pixel_shuffle", FBX_OP_pixel_shuffle, {T(F32, 4, 2, 8, 3, 2), I_(2)}, NULL},
      {"pixel_unshuffle", FBX_OP_pixel_unshuffle, {T(F32, 3, 2, 6, 4, 0), I_(2)}, NULL},
      {"adaptive_max_pool2d", FBX_OP_adaptive_max_pool2d, {T(F32, 4, 2, 3, 7, 5), L(2, 3, 2, 0)}, NULL},
      {"adaptive_max_pool1d", FBX_OP_adaptive_max_pool1d, {T(F32, 3, 2, 3, 8, 0), L(1, 3, 0, 0)}, NULL},
      {"adaptive_max_pool2d_backward", FBX_OP_adaptive_max_pool2d_backward,
       {T(F32, 3, 2, 2, 2, 0), T(F32, 3, 2, 5, 4, 0), T(FBX_DTYPE_INT64, 3, 2, 2, 2, 0)}, NULL},
      {"max_pool3d_with_indices", FBX_OP_max_pool3d_with_indices,
       {T(F32, 5, 1, 2, 4, 5, 4), L(1, 2, 0, 0), L(0, 0, 0, 0), L(1, 1, 0, 0), L(1, 1, 0, 0), B_(true)}, NULL},
      {"avg_pool3d", FBX_OP_avg_pool3d,
       {T(F32, 4, 2, 4, 5, 4), L(3, 3, 2, 2), L(1, 2, 0, 0), L(3, 1, 1, 0), B_(false), B_(false), NONE_}, NULL},
      {"adaptive_avg_pool3d", FBX_OP_adaptive_avg_pool3d, {T(F32, 5, 1, 2, 5, 4, 3), L(3, 2, 3, 4)}, NULL},
      {"adaptive_max_pool3d", FBX_OP_adaptive_max_pool3d, {T(F32, 4, 2, 5, 4, 3), L(3, 2, 3, 4)}, NULL},
      /* bad input: an error naming the problem, no crash */
      {"max_pool3d of a 3-D input", FBX_OP_max_pool3d,
       {T(F32, 3, 2, 4, 4, 0), L(1, 2, 0, 0), L(0, 0, 0, 0), L(1, 0, 0, 0), L(1, 1, 0, 0), B_(false)}, "4D or 5D"},
      {"max_pool3d: two kernel sizes", FBX_OP_max_pool3d,
       {T(F32, 4, 2, 4, 4, 4), L(2, 2, 2, 0), L(0, 0, 0, 0), L(1, 0, 0, 0), L(1, 1, 0, 0), B_(false)},
       "a tuple of three ints"},
      {"max_pool3d of bfloat16", FBX_OP_max_pool3d,
       {T(FBX_DTYPE_BFLOAT16, 4, 2, 4, 4, 4), L(1, 2, 0, 0), L(0, 0, 0, 0), L(1, 0, 0, 0), L(1, 1, 0, 0), B_(false)},
       "not implemented"},
      {"avg_pool3d: a window past the depth", FBX_OP_avg_pool3d,
       {T(F32, 4, 2, 2, 5, 5), L(3, 3, 2, 2), L(0, 0, 0, 0), L(1, 0, 0, 0), B_(false), B_(true), NONE_},
       "Output size is too small"},
      {"avg_pool3d: pad over half the kernel", FBX_OP_avg_pool3d,
       {T(F32, 4, 2, 4, 5, 5), L(3, 2, 2, 2), L(0, 0, 0, 0), L(3, 0, 2, 0), B_(false), B_(true), NONE_},
       "half of kernel size"},
      {"max_pool3d_with_indices_backward: grad shape", FBX_OP_max_pool3d_with_indices_backward,
       {T(F32, 4, 1, 2, 2, 2), T(F32, 4, 1, 4, 4, 4), L(1, 2, 0, 0), L(1, 2, 0, 0), L(1, 0, 0, 0), L(1, 1, 0, 0),
        B_(false), T(FBX_DTYPE_INT64, 4, 1, 2, 2, 1)}, "indices must be int64"},
      {"adaptive_avg_pool3d of a 3-D input", FBX_OP_adaptive_avg_pool3d, {T(F32, 3, 2, 4, 4, 0), L(3, 2, 2, 2)},
       "Expected 4D or 5D"},
      {"adaptive_avg_pool3d with two sizes", FBX_OP_adaptive_avg_pool3d, {T(F32, 4, 2, 4, 4, 4), L(2, 2, 2, 0)},
       "should contain three ints"},
      {"adaptive_avg_pool2d of int64", FBX_OP_adaptive_avg_pool2d,
       {T(FBX_DTYPE_INT64, 3, 2, 4, 4, 0), L(2, 2, 2, 0)}, "not implemented"},
      {"adaptive_max_pool3d of an empty depth", FBX_OP_adaptive_max_pool3d, {T(F32, 5, 1, 2, 0, 4, 4), L(3, 2, 2, 2)},
       "non-zero size for non-batch dimensions"},
      {"adaptive_max_pool3d_backward: indices shape", FBX_OP_adaptive_max_pool3d_backward,
       {T(F32, 4, 2, 2, 2, 1), T(F32, 4, 2, 5, 4, 3), T(FBX_DTYPE_INT64, 4, 2, 2, 2, 2)}, "grad_output's shape"},
      {"grid_sampler, bicubic reflection", FBX_OP_grid_sampler,
       {T(F32, 4, 1, 2, 4, 5), T(F32, 4, 1, 3, 2, 2), I_(2), I_(2), B_(false)}, NULL},
      {"grid_sampler_3d_backward", FBX_OP_grid_sampler_3d_backward,
       {T5(F32, 5, 1, 2, 2, 3, 1), T5(F32, 5, 1, 2, 3, 4, 2), T5(F32, 5, 1, 2, 3, 1, 3), I_(0), I_(1), B_(true),
        NONE_}, NULL},
      {"affine_grid_generator", FBX_OP_affine_grid_generator, {T(F32, 3, 2, 2, 3, 0), L5(4, 2, 3, 5, 4, 0), B_(false)},
       NULL},
      {"grid_sampler: dtypes differ", FBX_OP_grid_sampler,
       {T(F32, 4, 1, 2, 4, 5), T(FBX_DTYPE_FLOAT64, 4, 1, 3, 2, 2), I_(0), I_(0), B_(false)}, "same dtype"},
      {"grid_sampler: grid's last dim", FBX_OP_grid_sampler,
       {T(F32, 4, 1, 2, 4, 5), T(F32, 4, 1, 3, 2, 3), I_(0), I_(0), B_(false)}, "size 2 in last dimension"},
      {"grid_sampler: batch sizes", FBX_OP_grid_sampler,
       {T(F32, 4, 2, 2, 4, 5), T(F32, 4, 1, 3, 2, 2), I_(0), I_(0), B_(false)}, "same batch size"},
      {"grid_sampler: bicubic in 3-D", FBX_OP_grid_sampler,
       {T5(F32, 5, 1, 2, 3, 4, 5), T5(F32, 5, 1, 2, 2, 2, 3), I_(2), I_(0), B_(false)}, "only supports 4D"},
      {"grid_sampler: unknown mode", FBX_OP_grid_sampler,
       {T(F32, 4, 1, 2, 4, 5), T(F32, 4, 1, 3, 2, 2), I_(3), I_(0), B_(false)}, "unknown interpolation_mode 3"},
      {"grid_sampler of int64", FBX_OP_grid_sampler,
       {T(FBX_DTYPE_INT64, 4, 1, 2, 4, 5), T(FBX_DTYPE_INT64, 4, 1, 3, 2, 2), I_(0), I_(0), B_(false)},
       "not implemented"},
      {"grid_sampler_2d of a 5-D input", FBX_OP_grid_sampler_2d,
       {T5(F32, 5, 1, 2, 3, 4, 5), T5(F32, 5, 1, 2, 2, 2, 3), I_(0), I_(0), B_(false)}, "expected 4D input"},
      {"grid_sampler_2d_backward: grad shape", FBX_OP_grid_sampler_2d_backward,
       {T(F32, 4, 1, 2, 3, 3), T(F32, 4, 1, 2, 4, 5), T(F32, 4, 1, 3, 2, 2), I_(0), I_(0), B_(false), NONE_},
       "grad_output has shape [1, 2, 3, 3], expected [1, 2, 3, 2]"},
      {"affine_grid: theta's shape", FBX_OP_affine_grid_generator,
       {T(F32, 3, 2, 3, 3, 0), L5(4, 2, 3, 5, 4, 0), B_(false)}, "shape Nx2x3"},
      {"affine_grid: a size of 3", FBX_OP_affine_grid_generator, {T(F32, 3, 2, 2, 3, 0), L(3, 2, 3, 5), B_(false)},
       "4 (2-D) or 5 (3-D) elements"},
      {"upsample_bilinear2d of a 3-D input", FBX_OP_upsample_bilinear2d_vec,
       {T(F32, 3, 2, 4, 5, 0), L(2, 7, 9, 0), B_(false), NONE_}, "input_size equals to 4"},
      {"both output_size and scale_factors", FBX_OP_upsample_nearest2d_vec,
       {T(F32, 4, 1, 2, 4, 5), L(2, 7, 9, 0), FL(2, 2.0, 2.0, 0)}, "exactly one of output_size and scale_factors"},
      {"neither output_size nor scale_factors", FBX_OP_upsample_nearest2d_vec,
       {T(F32, 4, 1, 2, 4, 5), NONE_, NONE_}, "exactly one of output_size and scale_factors"},
      {"scale_factors of the wrong length", FBX_OP_upsample_nearest2d_vec,
       {T(F32, 4, 1, 2, 4, 5), NONE_, FL(3, 2.0, 2.0, 2.0)}, "3 values for 2 spatial dims"},
      {"an output size of 0", FBX_OP_upsample_bilinear2d,
       {T(F32, 4, 1, 2, 4, 5), L(2, 0, 3, 0), B_(false), NONE_, NONE_}, "should be greater than 0"},
      {"a scale that gives 0 rows", FBX_OP_upsample_nearest2d_vec,
       {T(F32, 4, 1, 2, 4, 5), NONE_, FL(2, 0.2, 1.0, 0)}, "should be greater than 0"},
      {"bilinear of int64", FBX_OP_upsample_bilinear2d_vec,
       {T(FBX_DTYPE_INT64, 4, 1, 2, 4, 5), L(2, 7, 9, 0), B_(false), NONE_}, "not implemented"},
      {"upsample backward with a wrong grad_output", FBX_OP_upsample_nearest1d_backward,
       {T(F32, 3, 2, 3, 6, 0), L(1, 7, 0, 0), L(3, 2, 3, 4), NONE_}, "grad_output has shape [2, 3, 6], expected [2, 3, 7]"},
      {"upsample backward with a short input_size", FBX_OP_upsample_nearest1d_backward_vec,
       {T(F32, 3, 2, 3, 7, 0), L(1, 7, 0, 0), L(2, 2, 3, 0), NONE_}, "input_size equals to 3"},
      {"pixel_shuffle channels", FBX_OP_pixel_shuffle, {T(F32, 3, 6, 2, 2, 0), I_(2)}, "divisible by the square"},
      {"pixel_shuffle of a 2-D input", FBX_OP_pixel_shuffle, {T(F32, 2, 4, 4, 0, 0), I_(2)}, "at least 3 dimensions"},
      {"pixel_shuffle factor 0", FBX_OP_pixel_shuffle, {T(F32, 3, 4, 2, 2, 0), I_(0)}, "positive upscale_factor"},
      {"pixel_unshuffle height", FBX_OP_pixel_unshuffle, {T(F32, 3, 1, 5, 4, 0), I_(2)}, "height to be divisible"},
      {"adaptive_max_pool2d of a 2-D input", FBX_OP_adaptive_max_pool2d, {T(F32, 2, 4, 4, 0, 0), L(2, 2, 2, 0)},
       "Expected 3D or 4D"},
      {"adaptive_max_pool2d of float16", FBX_OP_adaptive_max_pool2d,
       {T(FBX_DTYPE_FLOAT16, 3, 1, 4, 4, 0), L(2, 2, 2, 0)}, "not implemented"},
      {"adaptive_max_pool2d of an empty plane", FBX_OP_adaptive_max_pool2d, {T(F32, 4, 1, 2, 0, 4), L(2, 2, 2, 0)},
       "non-zero size for non-batch dimensions"},
      {"adaptive_max_pool1d with two sizes", FBX_OP_adaptive_max_pool1d, {T(F32, 3, 1, 2, 6, 0), L(2, 2, 2, 0)},
       "should contain one int"},

      {"pool of a 2-D input", FBX_OP_max_pool2d,
       {T(F32, 2, 4, 4, 0, 0), L(1, 2, 0, 0), L(0, 0, 0, 0), L(1, 0, 0, 0), L(1, 1, 0, 0), B_(false)}, "3D or 4D"},
      {"pad over half the kernel", FBX_OP_avg_pool2d,
       {T(F32, 3, 1, 4, 4, 0), L(1, 2, 0, 0), L(1, 1, 0, 0), L(1, 2, 0, 0), B_(false), B_(true),
       NONE_}, "half of kernel size"},
      {"window larger than the input", FBX_OP_max_pool2d,
       {T(F32, 3, 1, 2, 2, 0), L(1, 3, 0, 0), L(1, 1, 0, 0), L(1, 0, 0, 0), L(1, 1, 0, 0),
       B_(false)}, "Output size is too small"},
      {"max_pool2d of float16 (none on PyTorch's CPU)", FBX_OP_max_pool2d,
       {T(FBX_DTYPE_FLOAT16, 3, 1, 4, 4, 0), L(1, 2, 0, 0), L(0, 0, 0, 0), L(1, 0, 0, 0), L(1, 1, 0, 0), B_(false)},
       "not implemented"},
      {"max_pool2d of int64", FBX_OP_max_pool2d,
       {T(FBX_DTYPE_INT64, 3, 1, 4, 4, 0), L(1, 2, 0, 0), L(0, 0, 0, 0), L(1, 0, 0, 0), L(1, 1, 0, 0), B_(false)},
       "not implemented"},
      {"divisor_override 0", FBX_OP_avg_pool2d,
       {T(F32, 3, 1, 4, 4, 0), L(1, 2, 0, 0), L(0, 0, 0, 0), L(1, 0, 0, 0), B_(false), B_(true),
       I_(0)}, "divisor must be not zero"},
      {"gru hidden size", FBX_OP_gru_cell,
       {T(F32, 2, 2, 4, 0, 0), T(F32, 2, 2, 2, 0, 0), T(F32, 2, 9, 4, 0, 0), T(F32, 2, 9, 3, 0, 0), NONE_,
       NONE_}, "inconsistent hidden_size"},
      {"rnn input size", FBX_OP_rnn_relu_cell,
       {T(F32, 2, 2, 5, 0, 0), T(F32, 2, 2, 3, 0, 0), T(F32, 2, 3, 4, 0, 0), T(F32, 2, 3, 3, 0, 0), NONE_,
       NONE_}, "inconsistent input_size"},
      {"instance_norm eval without stats", FBX_OP_instance_norm,
       {T(F32, 3, 2, 3, 4, 0), NONE_, NONE_, NONE_, NONE_, B_(false), F_(0.1), F_(1e-5),
       B_(false)}, "running_mean and running_var"},
      {"prelu: C weights for a 1-D input", FBX_OP_prelu, {T(F32, 1, 3, 0, 0, 0), T(F32, 1, 3, 0, 0, 0)},
       "3 weights for an input of 1 channels"},
      {"prelu: a 2-D weight", FBX_OP_prelu, {T(F32, 2, 2, 3, 0, 0), T(F32, 2, 1, 3, 0, 0)}, "scalar or a 1-D tensor"},
      {"prelu of float16", FBX_OP_prelu, {T(FBX_DTYPE_FLOAT16, 2, 2, 3, 0, 0), T(FBX_DTYPE_FLOAT16, 1, 1, 0, 0, 0)},
       "not implemented"},
      {"prelu: dtypes differ", FBX_OP_prelu, {T(F32, 2, 2, 3, 0, 0), T(FBX_DTYPE_FLOAT64, 1, 3, 0, 0, 0)},
       "of one dtype"},
      {"conv_transpose2d: output_padding", FBX_OP_conv_transpose2d_input,
       {T(F32, 4, 1, 4, 3, 3), T(F32, 4, 4, 2, 3, 3), NONE_, L(1, 1, 0, 0), L(1, 0, 0, 0), L(1, 1, 0, 0), I_(1),
        L(1, 1, 0, 0)}, "smaller than either stride or dilation"},
      {"conv2d.padding 'same', uneven", FBX_OP_conv2d_padding,
       {T(F32, 4, 1, 2, 5, 4), T(F32, 4, 3, 2, 4, 2), T(F32, 1, 3, 0, 0, 0), L(1, 1, 0, 0), STR("same"),
        L(1, 1, 0, 0), I_(1)}, NULL},
      {"conv_padding_backward, uneven", FBX_OP_fbx_conv_padding_backward,
       {T(F32, 4, 1, 3, 5, 4), T(F32, 4, 1, 2, 5, 4), T(F32, 4, 3, 2, 4, 2), T(F32, 1, 3, 0, 0, 0), L(1, 1, 0, 0),
        STR("same"), L(1, 1, 0, 0), I_(1)}, NULL},
      {"conv1d.padding: an unknown string", FBX_OP_conv1d_padding,
       {T(F32, 3, 1, 2, 5, 0), T(F32, 3, 3, 2, 3, 0), NONE_, L(1, 1, 0, 0), STR("full"), L(1, 1, 0, 0), I_(1)},
       "invalid padding string 'full'"},
      {"conv2d.padding 'same' with a stride", FBX_OP_conv2d_padding,
       {T(F32, 4, 1, 2, 5, 4), T(F32, 4, 3, 2, 3, 3), NONE_, L(1, 2, 0, 0), STR("same"), L(1, 1, 0, 0), I_(1)},
       "not supported for strided convolutions"},
      {"conv_padding_backward: grad shape", FBX_OP_fbx_conv_padding_backward,
       {T(F32, 4, 1, 3, 4, 4), T(F32, 4, 1, 2, 5, 4), T(F32, 4, 3, 2, 4, 2), NONE_, L(1, 1, 0, 0), STR("same"),
        L(1, 1, 0, 0), I_(1)}, "does not match the convolution's output"},
      {"scaled_dot_product_attention, causal, gqa", FBX_OP_sdpa,
       {T(F32, 4, 1, 4, 3, 5), T(F32, 4, 1, 2, 4, 5), T(F32, 4, 1, 2, 4, 2), NONE_, F_(0.0), B_(true), NONE_,
        B_(true)}, NULL},
      {"scaled_dot_product_attention, bool mask", FBX_OP_sdpa,
       {T(F32, 3, 2, 3, 5), T(F32, 3, 2, 4, 5), T(F32, 3, 2, 4, 2), T(FBX_DTYPE_BOOL, 2, 3, 4, 0), F_(0.0), B_(false),
        F_(0.5), B_(false)}, NULL},
      {"sdpa_backward, gqa", FBX_OP_fbx_sdpa_backward,
       {T(F32, 4, 1, 4, 3, 2), T(F32, 4, 1, 4, 3, 5), T(F32, 4, 1, 2, 4, 5), T(F32, 4, 1, 2, 4, 2), NONE_, F_(0.0),
        B_(false), NONE_, B_(true)}, NULL},
      {"scaled_dot_product_attention: dropout", FBX_OP_sdpa,
       {T(F32, 3, 2, 3, 5), T(F32, 3, 2, 4, 5), T(F32, 3, 2, 4, 2), NONE_, F_(0.1), B_(false), NONE_, B_(false)},
       "random dropout of the attention weights is not implemented"},
      {"scaled_dot_product_attention: causal with a mask", FBX_OP_sdpa,
       {T(F32, 3, 2, 3, 5), T(F32, 3, 2, 4, 5), T(F32, 3, 2, 4, 2), T(FBX_DTYPE_BOOL, 2, 3, 4, 0), F_(0.0), B_(true),
        NONE_, B_(false)}, "should not be set when is_causal=True"},
      {"scaled_dot_product_attention: gqa heads", FBX_OP_sdpa,
       {T(F32, 4, 1, 3, 3, 5), T(F32, 4, 1, 2, 4, 5), T(F32, 4, 1, 2, 4, 2), NONE_, F_(0.0), B_(false), NONE_,
        B_(true)}, "not a multiple"},
      {"scaled_dot_product_attention: embedding sizes", FBX_OP_sdpa,
       {T(F32, 3, 2, 3, 5), T(F32, 3, 2, 4, 6), T(F32, 3, 2, 4, 2), NONE_, F_(0.0), B_(false), NONE_, B_(false)},
       "embedding sizes 5 and 6"},
      {"convolution_backward: grad shape", FBX_OP_fbx_convolution_backward,
       {T(F32, 4, 1, 2, 6, 7), T(F32, 4, 1, 4, 3, 3), T(F32, 4, 4, 1, 3, 3), NONE_, L(1, 2, 0, 0),
        L(1, 0, 0, 0), L(1, 1, 0, 0), B_(true), L(1, 0, 0, 0), I_(2)}, "does not match the convolution's output"},
  };
  /* native_batch_norm_backward's output_mask */
  fbx_ivalue mask;
  ck_assert(!fbx_iv_list_new(&mask, 3));
  for (int i = 0; i < 3; i++) ck_assert(!fbx_iv_list_push(&mask, fbx_iv_bool(i != 1)));
  calls[10].args[9] = mask;
  for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
    kcall *k = &calls[c];
    fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
    if (k->err) {
      fbx_status *st = call(k, outs);
      ck_assert_msg(st != NULL, "%s: no error", k->what);
      ck_assert_msg(strstr(fbx_status_message(st), k->err), "%s: %s", k->what, fbx_status_message(st));
      for (int i = 0; i < FBX_SCHEMA_MAX_RETS; i++) ck_assert(outs[i].kind == FBX_IV_NONE);
      fbx_status_free(st);
      release_args(k);
      continue;
    }
    bool done = false;
    for (long f = 0; f < 200 && !done; f++) {
      fbx_alloc_fail_after(f);
      fbx_status *st = call(k, outs);
      fbx_alloc_fail_after(-1);
      if (st) {
        ck_assert_msg(fbx_status_code(st) == FBX_ERR_NOMEM, "%s, allocation %ld failed: %s", k->what, f,
                      fbx_status_message(st));
        for (int i = 0; i < FBX_SCHEMA_MAX_RETS; i++) ck_assert(outs[i].kind == FBX_IV_NONE);
        fbx_status_free(st);
      } else {
        done = true;
        for (int i = 0; i < FBX_SCHEMA_MAX_RETS; i++) fbx_iv_release(&outs[i]);
      }
    }
    ck_assert_msg(done, "%s never succeeded under allocation failures", k->what);
    release_args(k);
  }
}
END_TEST

/* ---- whole-sequence layers: the backward op against finite differences ------------------------- */

static uint64_t fd_rng = 88172645463325252ull;
static double fd_uniform(void) {
  fd_rng ^= fd_rng << 13, fd_rng ^= fd_rng >> 7, fd_rng ^= fd_rng << 17;
  return (double)(fd_rng >> 11) / 9007199254740992.0 * 2 - 1;
}
static fbx_tensor *fd_tensor(int nd, int64_t a, int64_t b, int64_t c) {
  int64_t sz[3] = {a, b, c};
  fbx_tensor *t = NULL;
  ck_assert(!fbx_tensor_empty(&t, FBX_DTYPE_FLOAT64, nd, sz));
  for (int64_t i = 0; i < t->numel; i++) fbx_tensor_set_f64(t, i, fd_uniform());
  return t;
}
static fbx_ivalue fd_list(fbx_tensor **ts, int n) {
  fbx_ivalue l;
  ck_assert(!fbx_iv_list_new(&l, n));
  for (int i = 0; i < n; i++) ck_assert(!fbx_iv_list_push(&l, fbx_iv_tensor(fbx_tensor_retain(ts[i]))));
  return l;
}

/* sum over the outputs of G_k * output_k, the forward run in float64 */
static double fd_objective(fbx_op_id id, int mode, fbx_tensor *x, fbx_tensor **st, int nst, fbx_tensor **ps, int np,
                           bool bias, int layers, bool bidir, bool bf, fbx_tensor **G) {
  kcall k = {"forward", id, {fbx_iv_tensor(fbx_tensor_retain(x)),
                             mode == 3 ? fd_list(st, nst) : fbx_iv_tensor(fbx_tensor_retain(st[0])), fd_list(ps, np),
                             B_(bias), I_(layers), F_(0.0), B_(false), B_(bidir), B_(bf)}, NULL};
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  fbx_status *err = call(&k, outs);
  ck_assert_msg(!err, "%s", err ? fbx_status_message(err) : "");
  double v = 0;
  for (int o = 0; o < 1 + nst; o++) {
    ck_assert_int_eq(outs[o].u.t->numel, G[o]->numel);
    for (int64_t i = 0; i < G[o]->numel; i++) v += fbx_tensor_get_f64(G[o], i) * fbx_tensor_get_f64(outs[o].u.t, i);
    fbx_iv_release(&outs[o]);
  }
  release_args(&k);
  return v;
}

/* mode: 0 rnn_tanh, 1 rnn_relu, 2 gru, 3 lstm; every input, state and
 * parameter element checked (the sizes are small). */
static void fd_check(int mode, int layers, bool bidir, bool bias, bool bf) {
  static const fbx_op_id ids[4] = {FBX_OP_rnn_tanh_input, FBX_OP_rnn_relu_input, FBX_OP_gru_input, FBX_OP_lstm_input};
  const int64_t T = 3, B = 2, I = 3, H = 2, D = bidir ? 2 : 1, G = mode == 3 ? 4 : mode == 2 ? 3 : 1;
  const int nst = mode == 3 ? 2 : 1, per = bias ? 4 : 2, np = per * layers * (int)D;
  fbx_tensor *x = fd_tensor(3, bf ? B : T, bf ? T : B, I), *st[2], *ps[32], *gr[3];
  for (int k = 0; k < nst; k++) st[k] = fd_tensor(3, layers * D, B, H);
  for (int q = 0; q < layers * D; q++) {
    int64_t in = q / D ? D * H : I;
    ps[q * per] = fd_tensor(2, G * H, in, 0), ps[q * per + 1] = fd_tensor(2, G * H, H, 0);
    if (bias) ps[q * per + 2] = fd_tensor(1, G * H, 0, 0), ps[q * per + 3] = fd_tensor(1, G * H, 0, 0);
  }
  gr[0] = fd_tensor(3, bf ? B : T, bf ? T : B, D * H);
  for (int k = 0; k < nst; k++) gr[1 + k] = fd_tensor(3, layers * D, B, H);
  kcall k = {"backward", FBX_OP_fbx_rnn_seq_backward,
             {fbx_iv_tensor(fbx_tensor_retain(gr[0])), fd_list(gr + 1, nst), fbx_iv_tensor(fbx_tensor_retain(x)),
              NONE_, fd_list(st, nst), fd_list(ps, np), I_(mode), B_(bias), I_(layers), F_(0.0), B_(false), B_(bidir),
              B_(bf)}, NULL};
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  fbx_status *err = call(&k, outs);
  ck_assert_msg(!err, "%s", err ? fbx_status_message(err) : "");
  release_args(&k);
  /* the tensors to perturb and their analytic gradients */
  fbx_tensor *wrt[40], *an[40];
  int n = 0;
  wrt[n] = x, an[n++] = outs[0].u.t;
  for (int s = 0; s < nst; s++) wrt[n] = st[s], an[n++] = fbx_iv_list_at(&outs[1], s)->u.t;
  for (int q = 0; q < np; q++) wrt[n] = ps[q], an[n++] = fbx_iv_list_at(&outs[2], q)->u.t;
  for (int w = 0; w < n; w++) {
    ck_assert_int_eq(an[w]->numel, wrt[w]->numel);
    ck_assert_int_eq(an[w]->ndim, wrt[w]->ndim);
    for (int64_t i = 0; i < wrt[w]->numel; i++) {
      double v0 = fbx_tensor_get_f64(wrt[w], i), e = 1e-6;
      fbx_tensor_set_f64(wrt[w], i, v0 + e);
      double fp = fd_objective(ids[mode], mode, x, st, nst, ps, np, bias, layers, bidir, bf, gr);
      fbx_tensor_set_f64(wrt[w], i, v0 - e);
      double fm = fd_objective(ids[mode], mode, x, st, nst, ps, np, bias, layers, bidir, bf, gr);
      fbx_tensor_set_f64(wrt[w], i, v0);
      double num = (fp - fm) / (2 * e), a = fbx_tensor_get_f64(an[w], i);
      ck_assert_msg(fabs(num - a) <= 1e-7 + 1e-5 * fabs(num),
                    "mode %d layers %d bidir %d bias %d batch_first %d: operand %d element %lld: analytic %.10g, "
                    "numeric %.10g", mode, layers, bidir, bias, bf, w, (long long)i, a, num);
    }
  }
  for (int o = 0; o < 3; o++) fbx_iv_release(&outs[o]);
  fbx_tensor_release(x);
  for (int s = 0; s < nst; s++) fbx_tensor_release(st[s]), fbx_tensor_release(gr[1 + s]);
  fbx_tensor_release(gr[0]);
  for (int q = 0; q < np; q++) fbx_tensor_release(ps[q]);
}

START_TEST(rnn_seq_backward_float64) {
  ck_assert(!fbx_op_table_init());
  for (int mode = 0; mode < 4; mode++) {
    fd_check(mode, 2, true, true, mode % 2 == 0);
    fd_check(mode, 1, false, false, mode % 2 == 1);
  }
}
END_TEST

/* float16 upsampling (PyTorch 1.13's CPU refuses it; fusebox computes it in
 * float32, as PyTorch's CUDA kernels do): each result is the float32
 * kernel's on the same values, rounded to float16. */
START_TEST(upsample_float16_is_float32_rounded) {
  ck_assert(!fbx_op_table_init());
  kcall calls[] = {
      {"nearest", FBX_OP_upsample_nearest2d_vec, {T(FBX_DTYPE_FLOAT16, 4, 2, 3, 4, 5), NONE_, FL(2, 1.7, 2.3, 0)}, NULL},
      {"bilinear", FBX_OP_upsample_bilinear2d_vec,
       {T(FBX_DTYPE_FLOAT16, 4, 2, 3, 4, 5), NONE_, B_(false), FL(2, 1.5, 2.5, 0)}, NULL},
      {"bicubic", FBX_OP_upsample_bicubic2d, {T(FBX_DTYPE_FLOAT16, 4, 1, 2, 4, 5), L(2, 7, 6, 0), B_(true), NONE_,
       NONE_}, NULL},
      {"bicubic backward", FBX_OP_upsample_bicubic2d_backward_vec,
       {T(FBX_DTYPE_FLOAT16, 4, 1, 2, 8, 10), NONE_, L5(4, 1, 2, 4, 5, 0), B_(false), FL(2, 2.0, 2.0, 0)}, NULL},
  };
  for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
    kcall *k = &calls[c];
    fbx_ivalue o16[FBX_SCHEMA_MAX_RETS], o32[FBX_SCHEMA_MAX_RETS];
    fbx_status *st = call(k, o16);
    ck_assert_msg(!st, "%s: %s", k->what, fbx_status_message(st));
    fbx_tensor *x16 = k->args[0].u.t, *x32 = NULL;
    ck_assert(!fbx_tensor_clone_as(&x32, x16, FBX_DTYPE_FLOAT32));
    k->args[0] = fbx_iv_tensor(x32);
    st = call(k, o32);
    ck_assert_msg(!st, "%s: %s", k->what, fbx_status_message(st));
    fbx_tensor *a = o16[0].u.t, *b = o32[0].u.t;
    ck_assert(a->dtype == FBX_DTYPE_FLOAT16 && fbx_tensor_same_shape(a, b));
    for (int64_t i = 0; i < a->numel; i++) {
      float want = fbx_half_to_float(fbx_float_to_half((float)fbx_tensor_get_f64(b, i)));
      ck_assert_msg(fbx_tensor_get_f64(a, i) == (double)want, "%s: element %lld is %g, want %g", k->what, (long long)i,
                    fbx_tensor_get_f64(a, i), (double)want);
    }
    fbx_iv_release(&o16[0]);
    fbx_iv_release(&o32[0]);
    fbx_tensor_release(x16);
    release_args(k);
  }
}
END_TEST

START_TEST(cases_listed) {
  /* every generated case is run here */
  char **names;
  int n = cc_list(&names);
  cc_free_names(names, n);
  int have = 0;
  for (int i = 0; i < NCASES; i++) {
    ck_assert_msg(cc_has_file(case_name(i), "graph.ir"), "missing case %s", CASES[i]);
    have++;
  }
  ck_assert_int_eq(have, NCASES);
}
END_TEST

START_TEST(interpreter_matches_pytorch) { ck_assert_int_eq(run_all("none", true, true), 0); }
END_TEST

START_TEST(legacy_fuser) { ck_assert_int_eq(run_all("legacy", true, false), 0); }
END_TEST

START_TEST(tensorexpr_fuser) { ck_assert_int_eq(run_all("tensorexpr", true, false), 0); }
END_TEST

START_TEST(nvfuser_like_fuser) { ck_assert_int_eq(run_all("nvfuser_like", true, false), 0); }
END_TEST

int main(void) {
  Suite *s = suite_create("ops_nn");
  TCase *tc = tcase_create("nn");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, cases_listed);
  tcase_add_test(tc, kernels_under_allocation_failures);
  tcase_add_test(tc, rnn_seq_backward_float64);
  tcase_add_test(tc, upsample_float16_is_float32_rounded);
  tcase_add_test(tc, interpreter_matches_pytorch);
  tcase_add_test(tc, legacy_fuser);
  tcase_add_test(tc, tensorexpr_fuser);
  tcase_add_test(tc, nvfuser_like_fuser);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
