/* The embedding API (<fusebox/fusebox.h>) end to end, as an embedder uses
 * it: hand-made DLPack tensors in, DLManagedTensors out, stats, errors. Only
 * the public headers are included. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fusebox/fusebox.h>

#ifndef FBX_TEST_PLUGIN_DIR
#define FBX_TEST_PLUGIN_DIR FBX_BINARY_DIR "/tests/plugins"
#endif

/* ---- hand-made DLPack tensors --------------------------------------------------------------------- */

static int deleted; /* how many of our tensors' deleters ran */

typedef struct owned {
  DLManagedTensor m;
  int64_t shape[4];
  void *data;
} owned;

static void owned_delete(DLManagedTensor *m) {
  owned *o = m->manager_ctx;
  free(o->data);
  free(o);
  deleted++;
}

static DLManagedTensor *make_f32(int ndim, const int64_t *shape, float (*fill)(int64_t i)) {
  owned *o = calloc(1, sizeof *o);
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) {
    o->shape[d] = shape[d];
    n *= shape[d];
  }
  float *p = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) p[i] = fill(i);
  o->data = p;
  o->m.dl_tensor = (DLTensor){.data = p, .device = {kDLCPU, 0}, .ndim = ndim, .dtype = {kDLFloat, 32, 1},
                              .shape = o->shape, .strides = NULL, .byte_offset = 0};
  o->m.manager_ctx = o;
  o->m.deleter = owned_delete;
  return &o->m;
}

static DLManagedTensor *make_i64_scalar(int64_t v) {
  owned *o = calloc(1, sizeof *o);
  int64_t *p = malloc(sizeof *p);
  *p = v;
  o->data = p;
  o->m.dl_tensor = (DLTensor){.data = p, .device = {kDLCPU, 0}, .ndim = 0, .dtype = {kDLInt, 64, 1}, .shape = o->shape};
  o->m.manager_ctx = o;
  o->m.deleter = owned_delete;
  return &o->m;
}

static void drop(DLManagedTensor *m) {
  if (m && m->deleter) m->deleter(m);
}

static float fill_a(int64_t i) { return (float)(i % 7) + 1.0f; }
static float fill_b(int64_t i) { return (float)(i % 5) * 0.5f + 0.25f; }
static float fill_signed(int64_t i) { return (float)(i % 9) - 4.0f; }

static fbx_graph *parse(const char *text) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "api.ir");
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  return g;
}

static const float *f32(const DLManagedTensor *m) {
  ck_assert_int_eq(m->dl_tensor.dtype.code, kDLFloat);
  ck_assert_int_eq(m->dl_tensor.dtype.bits, 32);
  return (const float *)((const char *)m->dl_tensor.data + m->dl_tensor.byte_offset);
}

/* ---- ratio-IoU, no fuser -------------------------------------------------------------------------- */

START_TEST(ratio_iou_end_to_end) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse_file(&g, FBX_SOURCE_DIR "/examples/ratio_iou.ir");
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  fbx_executor *ex = NULL;
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "none"};
  st = fbx_executor_create(&ex, g, &o);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  fbx_graph_destroy(g); /* the executor has its own copy */
  ck_assert_int_eq(fbx_executor_num_inputs(ex), 8);
  ck_assert_int_eq(fbx_executor_num_outputs(ex), 1);

  int64_t n = 1000;
  DLManagedTensor *in[8];
  for (int i = 0; i < 8; i++) in[i] = make_f32(1, &n, i % 2 ? fill_b : fill_a);
  deleted = 0;
  for (int r = 0; r < 3; r++) {
    DLManagedTensor *out[1] = {NULL};
    st = fbx_executor_run(ex, in, 8, out, 1);
    ck_assert_msg(!st, "%s", fbx_status_message(st));
    ck_assert_int_eq(out[0]->dl_tensor.ndim, 1);
    ck_assert_int_eq(out[0]->dl_tensor.shape[0], n);
    const float *y = f32(out[0]);
    for (int64_t k = 0; k < n; k++) {
      float x1 = fill_a(k), y1 = fill_b(k), w1 = fill_a(k), h1 = fill_b(k);
      float x2 = fill_a(k), y2 = fill_b(k), w2 = fill_a(k), h2 = fill_b(k);
      float xi = fmaxf(x1, x2), yi = fmaxf(y1, y2);
      float wi = fmaxf(fminf(x1 + w1, x2 + w2) - xi, 0.0f), hi = fmaxf(fminf(y1 + h1, y2 + h2) - yi, 0.0f);
      float ai = wi * hi, au = fmaxf(w1 * h1 + w2 * h2 - wi * hi, 1e-5f);
      ck_assert_msg(fabsf(y[k] - ai / au) <= 1e-6f * fabsf(ai / au), "k=%lld: %g vs %g", (long long)k, y[k], ai / au);
    }
    drop(out[0]);
  }
  ck_assert_int_eq(deleted, 0); /* inputs are borrowed: their deleters are ours to call */
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  ck_assert_int_eq(s.runs, 3);
  char *rep = fbx_executor_report(ex);
  ck_assert_ptr_nonnull(strstr(rep, "runs                3"));
  fbx_free(rep);
  for (int i = 0; i < 8; i++) drop(in[i]);
  ck_assert_int_eq(deleted, 8);
  fbx_executor_destroy(ex);
}
END_TEST

/* ---- with a fuser plugin ---------------------------------------------------------------------------- */

static const char *CHAIN =
    "graph(%x : Tensor):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %two : float = prim::Constant[value=2.]()\n"
    "  %a : Tensor = aten::relu(%x)\n"
    "  %b : Tensor = aten::mul(%a, %two)\n"
    "  %c : Tensor = aten::add(%b, %x, %one)\n"
    "  return (%c)\n";

START_TEST(fused_end_to_end) {
  fbx_graph *g = parse(CHAIN);
  fbx_executor *ex = NULL;
  /* an old caller's smaller options struct: only `fuser` is read */
  fbx_executor_opts o = {.struct_size = offsetof(fbx_executor_opts, fuser_handle),
                         .fuser = FBX_TEST_PLUGIN_DIR "/libfbxtest_good.so", .strategy = "nonsense"};
  fbx_status *st = fbx_executor_create(&ex, g, &o);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  fbx_graph_destroy(g);
  int64_t shape[2] = {16, 9};
  DLManagedTensor *x = make_f32(2, shape, fill_signed);
  for (int r = 0; r < 4; r++) {
    DLManagedTensor *out[1];
    st = fbx_executor_run(ex, &x, 1, out, 1);
    ck_assert_msg(!st, "%s", fbx_status_message(st));
    const float *y = f32(out[0]);
    for (int64_t k = 0; k < 16 * 9; k++) {
      float v = fill_signed(k);
      ck_assert_float_eq(y[k], (v > 0 ? v : 0) * 2.0f + v);
    }
    drop(out[0]);
  }
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  ck_assert_int_eq(s.profiling_runs, 1);
  ck_assert_int_eq(s.specializations, 1);
  ck_assert_int_eq(s.groups, 1);
  ck_assert_int_eq(s.kernel_launches, 3);
  char *text = fbx_executor_explain_text(ex);
  ck_assert_ptr_nonnull(strstr(text, "fusebox::FusionGroup"));
  fbx_free(text);
  drop(x);
  fbx_executor_destroy(ex);
}
END_TEST

/* ---- scalars, tuples, aliasing --------------------------------------------------------------------- */

START_TEST(scalars_tuples_and_aliases) {
  fbx_graph *g = parse("graph(%x : Tensor, %n : int):\n"
                       "  %one : int = prim::Constant[value=1]()\n"
                       "  %m : int = aten::add(%n, %one)\n"
                       "  %t : (Tensor, int) = prim::TupleConstruct(%x, %m)\n"
                       "  return (%t)\n");
  fbx_executor *ex = NULL;
  ck_assert(!fbx_executor_create(&ex, g, NULL));
  fbx_graph_destroy(g);
  ck_assert_int_eq(fbx_executor_num_outputs(ex), 2);
  int64_t shape[1] = {5};
  DLManagedTensor *in[2] = {make_f32(1, shape, fill_a), make_i64_scalar(41)};
  DLManagedTensor *out[2];
  fbx_status *st = fbx_executor_run(ex, in, 2, out, 2);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  /* the graph returns its input: the output is a copy, not the caller's memory */
  ck_assert_ptr_ne(out[0]->dl_tensor.data, in[0]->dl_tensor.data);
  ck_assert_float_eq(f32(out[0])[3], fill_a(3));
  ck_assert_int_eq(out[1]->dl_tensor.ndim, 0);
  ck_assert_int_eq(out[1]->dl_tensor.dtype.code, kDLInt);
  ck_assert_int_eq(*(const int64_t *)out[1]->dl_tensor.data, 42);
  drop(out[0]);
  drop(out[1]);
  drop(in[0]);
  drop(in[1]);
  fbx_executor_destroy(ex);
}
END_TEST

/* ---- errors ---------------------------------------------------------------------------------------- */

static void expect_error(fbx_status *st, fbx_code code, const char *text) {
  ck_assert_msg(st != NULL, "expected an error containing '%s'", text);
  ck_assert_msg(fbx_status_code(st) == code && strstr(fbx_status_message(st), text), "got %s: %s",
                fbx_code_name(fbx_status_code(st)), fbx_status_message(st));
  fbx_status_free(st);
}

START_TEST(errors) {
  fbx_graph *g = NULL;
  const char *bad = "graph(%x : Tensor):\n  return (%y)\n";
  fbx_status *st = fbx_graph_parse(&g, bad, strlen(bad), "bad.ir");
  ck_assert_ptr_nonnull(st);
  ck_assert_ptr_nonnull(strstr(fbx_status_message(st), "bad.ir:"));
  fbx_status_free(st);
  expect_error(fbx_graph_parse_file(&g, "/nonexistent/model.ir"), FBX_ERR_IO, "/nonexistent/model.ir");

  g = parse("graph(%x : Tensor, %n : int):\n  %y : Tensor = aten::mul(%x, %n)\n  return (%y)\n");
  fbx_executor *ex = NULL;
  expect_error(fbx_executor_create(NULL, g, NULL), FBX_ERR_INVALID_ARG, "NULL");
  expect_error(fbx_executor_create(&ex, NULL, NULL), FBX_ERR_INVALID_ARG, "NULL graph");
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "none", .strategy = "static:x"};
  expect_error(fbx_executor_create(&ex, g, &o), FBX_ERR_INVALID_ARG, "expected static:N,dynamic:M, got 'static:x'");
  o.strategy = NULL;
  o.profiling_runs = -2;
  expect_error(fbx_executor_create(&ex, g, &o), FBX_ERR_INVALID_ARG, "profiling_runs");
  o.profiling_runs = 0;
  o.device = "cuda:0";
  expect_error(fbx_executor_create(&ex, g, &o), FBX_ERR_UNSUPPORTED, "device 'cuda:0'");
  o.device = NULL;
  o.fuser = "/nonexistent/libfuser.so";
  st = fbx_executor_create(&ex, g, &o);
  ck_assert_ptr_nonnull(st);
  fbx_status_free(st);
  ck_assert_ptr_null(ex);

  o.fuser = "none";
  ck_assert(!fbx_executor_create(&ex, g, &o));
  int64_t shape[2] = {2, 2};
  DLManagedTensor *x = make_f32(2, shape, fill_a), *n = make_i64_scalar(3), *vec = make_f32(1, shape, fill_a);
  DLManagedTensor *out[1] = {NULL};
  DLManagedTensor *in[2] = {x, n};
  expect_error(fbx_executor_run(NULL, in, 2, out, 1), FBX_ERR_INVALID_ARG, "NULL executor");
  expect_error(fbx_executor_run(ex, in, 1, out, 1), FBX_ERR_INVALID_ARG, "takes 2 inputs, 1 given");
  DLManagedTensor *out2[2];
  expect_error(fbx_executor_run(ex, in, 2, out2, 2), FBX_ERR_INVALID_ARG, "gives 1 output, room for 2");
  expect_error(fbx_executor_run(ex, in, 2, NULL, 1), FBX_ERR_INVALID_ARG, "NULL outputs");
  DLManagedTensor *bad_scalar[2] = {x, vec};
  expect_error(fbx_executor_run(ex, bad_scalar, 2, out, 1), FBX_ERR_INVALID_ARG, "pass a 0-d tensor");
  x->dl_tensor.device.device_type = kDLCUDA;
  expect_error(fbx_executor_run(ex, in, 2, out, 1), FBX_ERR_UNSUPPORTED, "a tensor on cuda");
  x->dl_tensor.device.device_type = kDLCPU;
  x->dl_tensor.dtype = (DLDataType){kDLFloat, 32, 4};
  st = fbx_executor_run(ex, in, 2, out, 1);
  ck_assert_ptr_nonnull(st);
  fbx_status_free(st);
  ck_assert_ptr_null(out[0]);
  x->dl_tensor.dtype = (DLDataType){kDLFloat, 32, 1};
  st = fbx_executor_run(ex, in, 2, out, 1); /* and it still works */
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  ck_assert_float_eq(f32(out[0])[1], fill_a(1) * 3);
  drop(out[0]);
  drop(x);
  drop(n);
  drop(vec);

  fbx_executor_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  fbx_executor_stats_get(NULL, &s); /* NULL-safe: zeros */
  ck_assert_int_eq(s.runs, 0);
  ck_assert_ptr_null(fbx_executor_report(NULL));
  fbx_executor_destroy(ex);
  fbx_executor_destroy(NULL);
  fbx_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("api");
  TCase *tc = tcase_create("api");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, ratio_iou_end_to_end);
  tcase_add_test(tc, fused_end_to_end);
  tcase_add_test(tc, scalars_tuples_and_aliases);
  tcase_add_test(tc, errors);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
