/* The profiling executor: equal to the interpreter without a fuser and with
 * the test plugins; profiling, specialization and respecialization counts;
 * failing/declining plugins; concurrent runs. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "exec/executor.h"
#include "exec/interp.h"
#include "host/host.h"
#include "ir/text.h"
#include "testutil.h"

#ifndef FBX_TEST_PLUGIN_DIR
#define FBX_TEST_PLUGIN_DIR FBX_BINARY_DIR "/tests/plugins"
#endif

/* ---- helpers ---------------------------------------------------------------------------------- */

static fbx_graph *parse(const char *text) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "test.ir");
  ck_assert_msg(!st, "parse: %s", fbx_status_message(st));
  return g;
}

static fbx_fuser *load_plugin(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/libfbxtest_%s.so", FBX_TEST_PLUGIN_DIR, name);
  fbx_fuser *f = NULL;
  fbx_status *st = fbx_fuser_load(&f, path);
  ck_assert_msg(!st, "load %s: %s", path, fbx_status_message(st));
  ck_assert_ptr_nonnull(f);
  return f;
}

static fbx_executor *make_ex(fbx_graph *g, fbx_fuser *f, const char *strategy, int profiling_runs) {
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = f ? NULL : "none", .fuser_handle = f,
                         .strategy = strategy, .profiling_runs = profiling_runs};
  fbx_executor *ex = NULL;
  fbx_status *st = fbx_executor_create(&ex, g, &o);
  ck_assert_msg(!st, "create: %s", fbx_status_message(st));
  return ex;
}

static fbx_tensor *tensor_f32(int ndim, const int64_t *sizes, float base) {
  fbx_tensor *t = NULL;
  ck_assert(!fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, ndim, sizes));
  for (int64_t i = 0; i < t->numel; i++) ((float *)t->data)[i] = base + (float)((i * 7) % 11) - 5.0f;
  return t;
}

/* Exact equality of two values (tensors elementwise through float64). */
static void assert_same(const fbx_ivalue *a, const fbx_ivalue *b) {
  ck_assert_int_eq(a->kind, b->kind);
  switch (a->kind) {
    case FBX_IV_TENSOR: {
      ck_assert_int_eq(a->u.t->dtype, b->u.t->dtype);
      ck_assert_msg(fbx_tensor_same_shape(a->u.t, b->u.t), "shapes differ");
      for (int64_t i = 0; i < a->u.t->numel; i++) {
        double x = fbx_tensor_get_f64(a->u.t, i), y = fbx_tensor_get_f64(b->u.t, i);
        ck_assert_msg(x == y || (x != x && y != y), "element %lld: %g vs %g", (long long)i, x, y);
      }
      break;
    }
    case FBX_IV_INT: ck_assert_int_eq(a->u.i, b->u.i); break;
    case FBX_IV_FLOAT: ck_assert_double_eq(a->u.f, b->u.f); break;
    case FBX_IV_BOOL: ck_assert_int_eq(a->u.b, b->u.b); break;
    case FBX_IV_TUPLE:
    case FBX_IV_LIST:
      ck_assert_int_eq(a->u.l->n, b->u.l->n);
      for (int i = 0; i < a->u.l->n; i++) assert_same(&a->u.l->items[i], &b->u.l->items[i]);
      break;
    default: break;
  }
}

/* Run ex and the interpreter on the same inputs; outputs must be identical. */
static void check_against_interp(fbx_executor *ex, const fbx_graph *g, const fbx_ivalue *in, int nin) {
  int nout = fbx_graph_noutputs(g);
  fbx_ivalue want[8], got[8];
  ck_assert_int_le(nout, 8);
  fbx_interp *it = NULL;
  ck_assert(!fbx_interp_create(&it, g));
  fbx_status *st = fbx_interp_run(it, in, nin, want, NULL);
  ck_assert_msg(!st, "interp: %s", fbx_status_message(st));
  st = fbx_executor_run_values(ex, in, nin, got, nout, 0);
  ck_assert_msg(!st, "executor: %s", fbx_status_message(st));
  for (int i = 0; i < nout; i++) {
    assert_same(&want[i], &got[i]);
    fbx_iv_release(&want[i]);
    fbx_iv_release(&got[i]);
  }
  fbx_interp_destroy(it);
}

static fbx_executor_stats stats_of(const fbx_executor *ex) {
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  return s;
}

static char *report(const fbx_executor *ex) {
  fbx_strbuf b = {0};
  fbx_executor_stats_print(ex, &b);
  return fbx_strbuf_take(&b);
}

/* relu -> mul by a constant -> add the input: one group for the test plugins. */
static const char *CHAIN =
    "graph(%x : Tensor):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %two : float = prim::Constant[value=2.]()\n"
    "  %a : Tensor = aten::relu(%x)\n"
    "  %b : Tensor = aten::mul(%a, %two)\n"
    "  %c : Tensor = aten::add(%b, %x, %one)\n"
    "  return (%c)\n";

static void run_chain(fbx_executor *ex, const fbx_graph *g, int ndim, const int64_t *sizes, float base) {
  fbx_ivalue in[1] = {fbx_iv_tensor(tensor_f32(ndim, sizes, base))};
  check_against_interp(ex, g, in, 1);
  fbx_iv_release(&in[0]);
}

/* ---- fuser none ------------------------------------------------------------------------------- */

START_TEST(none_equals_interpreter) {
  const char *graphs[] = {
      CHAIN,
      "graph(%x : Tensor, %n : int):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %t : bool = prim::Constant[value=1]()\n"
      "  %y : Tensor = prim::Loop(%n, %t, %x)\n"
      "    block0(%i : int, %acc : Tensor):\n"
      "      %r : Tensor = aten::relu(%acc)\n"
      "      %s : Tensor = aten::add(%r, %acc, %one)\n"
      "      -> (%t, %s)\n"
      "  %c : bool = aten::gt(%n, %one)\n"
      "  %z : Tensor = prim::If(%c)\n"
      "    block0():\n"
      "      %q : Tensor = aten::neg(%y)\n"
      "      -> (%q)\n"
      "    block1():\n"
      "      -> (%y)\n"
      "  %sz : int = aten::size(%z, %one)\n"
      "  return (%z, %sz)\n",
  };
  for (size_t k = 0; k < sizeof graphs / sizeof graphs[0]; k++) {
    fbx_graph *g = parse(graphs[k]);
    fbx_executor *ex = make_ex(g, NULL, NULL, 0);
    for (int r = 0; r < 4; r++) {
      int64_t sizes[2] = {2 + r, 3};
      fbx_ivalue in[2] = {fbx_iv_tensor(tensor_f32(2, sizes, (float)r)), fbx_iv_int(r)};
      check_against_interp(ex, g, in, fbx_graph_ninputs(g));
      fbx_iv_release(&in[0]);
    }
    fbx_executor_stats s = stats_of(ex);
    ck_assert_int_eq(s.runs, 4);
    ck_assert_int_eq(s.profiling_runs, 0); /* nothing to specialize without a fuser */
    ck_assert_int_eq(s.specializations, 0);
    ck_assert_int_eq(s.groups, 0);
    ck_assert_str_eq(fbx_executor_fuser_name(ex), "none");
    fbx_executor_destroy(ex);
    fbx_graph_destroy(g);
  }
}
END_TEST

START_TEST(ratio_iou_none) {
  fbx_graph *g = NULL;
  ck_assert(!fbx_graph_parse_file(&g, FBX_SOURCE_DIR "/examples/ratio_iou.ir"));
  fbx_executor *ex = make_ex(g, NULL, NULL, 0);
  fbx_ivalue in[8];
  int64_t sizes[1] = {100};
  for (int i = 0; i < 8; i++) in[i] = fbx_iv_tensor(tensor_f32(1, sizes, (float)i + 6.0f));
  for (int r = 0; r < 3; r++) check_against_interp(ex, g, in, 8);
  for (int i = 0; i < 8; i++) fbx_iv_release(&in[i]);
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
}
END_TEST

/* ---- the good plugin ---------------------------------------------------------------------------- */

START_TEST(good_plugin_chain) {
  fbx_graph *g = parse(CHAIN);
  fbx_fuser *f = load_plugin("good");
  fbx_executor *ex = make_ex(g, f, "static:2,dynamic:10", 1);
  int64_t sizes[2] = {3, 5};
  for (int r = 0; r < 5; r++) run_chain(ex, g, 2, sizes, (float)r);
  fbx_executor_stats s = stats_of(ex);
  ck_assert_int_eq(s.runs, 5);
  ck_assert_int_eq(s.profiling_runs, 1);
  ck_assert_int_eq(s.specializations, 1);
  ck_assert_int_eq(s.static_specializations, 1);
  ck_assert_int_eq(s.groups, 1);
  ck_assert_int_eq(s.guard_failures, 0);
  ck_assert_int_eq(s.fallbacks, 0);
  ck_assert_int_eq(s.kernels_compiled + s.memory_cache_hits, 1);
  ck_assert_int_eq(s.kernel_runs, 4);
  ck_assert_int_eq(s.kernel_launches, 4);

  fbx_strbuf b = {0};
  fbx_executor_explain(ex, &b);
  ck_assert_ptr_nonnull(strstr(b.data, "fusebox::FusionGroup"));
  ck_assert_ptr_nonnull(strstr(b.data, "# guard of group"));
  ck_assert_ptr_nonnull(strstr(b.data, "float32[3, 5] strides=[5, 1]"));
  fbx_strbuf_free(&b);
  fbx_executor_destroy(ex);
  fbx_fuser_release(f);
  fbx_graph_destroy(g);
}
END_TEST

/* Groups inside blocks, a group input that is a graph input and one that is not. */
START_TEST(good_plugin_control_flow) {
  const char *text =
      "graph(%x : Tensor, %y : Tensor, %n : int):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %t : bool = prim::Constant[value=1]()\n"
      "  %s0 : Tensor = aten::sub(%x, %y, %one)\n"
      "  %z : Tensor = prim::Loop(%n, %t, %s0)\n"
      "    block0(%i : int, %acc : Tensor):\n"
      "      %r : Tensor = aten::relu(%acc)\n"
      "      %m : Tensor = aten::mul(%r, %y)\n"
      "      %s : Tensor = aten::add(%m, %acc, %one)\n"
      "      -> (%t, %s)\n"
      "  %w : Tensor = aten::neg(%z)\n"
      "  %v : Tensor = aten::relu(%w)\n"
      "  return (%v, %z)\n";
  fbx_graph *g = parse(text);
  fbx_fuser *f = load_plugin("good");
  fbx_executor *ex = make_ex(g, f, NULL, 1);
  for (int r = 0; r < 6; r++) {
    int64_t sizes[2] = {4, 6};
    fbx_ivalue in[3] = {fbx_iv_tensor(tensor_f32(2, sizes, 1.0f)), fbx_iv_tensor(tensor_f32(2, sizes, 0.5f)),
                        fbx_iv_int(r % 3)};
    check_against_interp(ex, g, in, 3);
    fbx_iv_release(&in[0]);
    fbx_iv_release(&in[1]);
  }
  fbx_executor_stats s = stats_of(ex);
  ck_assert_int_eq(s.groups, 2);
  ck_assert_int_gt(s.kernel_runs, 0);
  ck_assert_int_eq(s.fallbacks, 0);
  fbx_executor_destroy(ex);
  fbx_fuser_release(f);
  fbx_graph_destroy(g);
}
END_TEST

/* One executor fed 4 shapes in turn, 20 runs, static:2,dynamic:1. Level 0
 * (the graph) is specialized for A; B fails its guard and specializes level 1
 * (static) for B; C fails both and specializes level 2 (dynamic: rank 1, any
 * size); D (rank 3) fails all three and, the budget spent, runs unfused.
 * Then every cycle costs 1 (B) + 2 (C) + 3 (D) guard failures. */
START_TEST(respecialization_is_bounded) {
  fbx_graph *g = parse(CHAIN);
  fbx_fuser *f = load_plugin("good");
  fbx_executor *ex = make_ex(g, f, "static:2,dynamic:1", 1);
  const int64_t A[2] = {2, 3}, B[2] = {4, 5}, C[1] = {6}, D[3] = {3, 2, 2};
  for (int r = 0; r < 20; r++) {
    switch (r % 4) {
      case 0: run_chain(ex, g, 2, A, (float)r); break;
      case 1: run_chain(ex, g, 2, B, (float)r); break;
      case 2: run_chain(ex, g, 1, C, (float)r); break;
      default: run_chain(ex, g, 3, D, (float)r); break;
    }
  }
  fbx_executor_stats s = stats_of(ex);
  char *text = report(ex);
  ck_assert_msg(s.specializations == 3, "%s", text);
  ck_assert_int_eq(s.static_specializations, 2);
  ck_assert_int_eq(s.dynamic_specializations, 1);
  ck_assert_int_eq(s.profiling_runs, 3);
  ck_assert_int_eq(s.groups, 3);
  ck_assert_msg(s.guard_failures == 6 + 4 * 6, "%s", text);
  ck_assert_int_eq(s.fallbacks_unfused, 5);
  ck_assert_int_eq(s.fallbacks, 5);
  ck_assert_int_eq(s.kernel_runs, 12); /* A, B, C in cycles 2..5 */
  ck_assert_int_eq(s.kernels_compiled + s.memory_cache_hits, 3);
  ck_assert_ptr_nonnull(strstr(text, "input 0: sizes [4, 5] vs guard [2, 3]"));
  ck_assert_ptr_nonnull(strstr(text, "specialization budget spent"));
  ck_assert_ptr_nonnull(strstr(text, "(level 2, dynamic)"));
  fbx_free(text);
  fbx_executor_destroy(ex);
  fbx_fuser_release(f);
  fbx_graph_destroy(g);
}
END_TEST

/* A dynamic level takes every shape of its rank (one kernel per shape), but
 * keeps size-1 dims. */
START_TEST(dynamic_generalizes_sizes) {
  fbx_graph *g = parse(CHAIN);
  fbx_fuser *f = load_plugin("good");
  fbx_executor *ex = make_ex(g, f, "static:1,dynamic:1", 1);
  const int64_t shapes[4][2] = {{2, 3}, {4, 1}, {6, 1}, {8, 1}};
  for (int r = 0; r < 8; r++) run_chain(ex, g, 2, shapes[r % 4], (float)r);
  fbx_executor_stats s = stats_of(ex);
  char *text = report(ex);
  /* level 0 static [2, 3]; level 1 dynamic [*, 1] from {4, 1}: takes {6, 1} and {8, 1} */
  ck_assert_msg(s.specializations == 2 && s.dynamic_specializations == 1, "%s", text);
  ck_assert_int_eq(s.guard_failures, 6); /* runs 2, 3, 4, 6, 7, 8 fail level 0 */
  ck_assert_int_eq(s.fallbacks, 0);
  ck_assert_int_eq(s.kernel_runs, 6);
  ck_assert_int_eq(s.kernels_compiled + s.memory_cache_hits, 4);
  fbx_free(text);
  /* a {5, 2} fails [*, 1]: the budget is spent, it runs unfused */
  const int64_t E[2] = {5, 2};
  run_chain(ex, g, 2, E, 1.0f);
  s = stats_of(ex);
  ck_assert_int_eq(s.fallbacks_unfused, 1);
  fbx_executor_destroy(ex);
  fbx_fuser_release(f);
  fbx_graph_destroy(g);
}
END_TEST

/* Sizes that differ between profiling runs become `*` in the guard. */
START_TEST(profiling_runs_merge) {
  fbx_graph *g = parse(CHAIN);
  fbx_fuser *f = load_plugin("good");
  ck_assert_int_eq(setenv("FUSEBOX_PROFILING_RUNS", "3", 1), 0);
  fbx_executor *ex = make_ex(g, f, NULL, 0);
  const int64_t shapes[3][2] = {{2, 3}, {4, 3}, {5, 3}};
  for (int r = 0; r < 3; r++) run_chain(ex, g, 2, shapes[r], (float)r);
  fbx_executor_stats s = stats_of(ex);
  ck_assert_int_eq(s.profiling_runs, 3);
  ck_assert_int_eq(s.specializations, 1);
  ck_assert_int_eq(s.kernel_runs, 0);
  const int64_t other[2] = {7, 3};
  run_chain(ex, g, 2, other, 1.0f);
  run_chain(ex, g, 2, shapes[0], 1.0f);
  s = stats_of(ex);
  ck_assert_int_eq(s.profiling_runs, 3);
  ck_assert_int_eq(s.guard_failures, 0);
  ck_assert_int_eq(s.kernel_runs, 2);
  fbx_strbuf b = {0};
  fbx_executor_explain(ex, &b);
  ck_assert_msg(strstr(b.data, "float32[*, 3] strides=[3, 1]") != NULL, "%s", b.data);
  fbx_strbuf_free(&b);
  fbx_executor_destroy(ex);
  fbx_fuser_release(f);
  fbx_graph_destroy(g);
  unsetenv("FUSEBOX_PROFILING_RUNS");
}
END_TEST

/* ---- failing plugins ------------------------------------------------------------------------------ */

typedef struct expect {
  const char *plugin;
  int64_t compile, run, declined, guards;
  const char *event;
} expect;

static void check_failing(const expect *e) {
  fbx_graph *g = parse(CHAIN);
  fbx_fuser *f = load_plugin(e->plugin);
  fbx_executor *ex = make_ex(g, f, NULL, 1);
  int64_t sizes[2] = {3, 4};
  for (int r = 0; r < 6; r++) run_chain(ex, g, 2, sizes, (float)r);
  fbx_executor_stats s = stats_of(ex);
  char *text = report(ex);
  ck_assert_msg(s.fallbacks_compile == e->compile && s.fallbacks_run == e->run && s.fallbacks_declined == e->declined,
                "%s", text);
  ck_assert_int_eq(s.fallbacks, e->compile + e->run + e->declined);
  ck_assert_int_eq(s.guard_failures, 0);
  ck_assert_int_eq(s.kernel_runs, 0);
  ck_assert_int_eq(s.groups, 1);
  if (e->event) ck_assert_msg(strstr(text, e->event) != NULL, "no '%s' in\n%s", e->event, text);
  if (e->compile) ck_assert_int_eq(s.compile_failures, 1); /* not retried for the same specs */
  fbx_free(text);
  fbx_executor_destroy(ex);
  fbx_fuser_release(f);
  fbx_graph_destroy(g);
}

START_TEST(compile_fails_falls_back) {
  expect e = {.plugin = "compile_fails", .compile = 5, .event = "compile failed"};
  check_failing(&e);
}
END_TEST

START_TEST(run_fails_falls_back) {
  expect e = {.plugin = "run_fails", .run = 5, .event = "(aten::relu, aten::mul, aten::add): kernel failed"};
  check_failing(&e);
}
END_TEST

START_TEST(declines_fall_back) {
  expect e = {.plugin = "declines", .declined = 5};
  check_failing(&e);
}
END_TEST

/* ---- options and environment ---------------------------------------------------------------------- */

START_TEST(strategy_errors) {
  fbx_graph *g = parse(CHAIN);
  fbx_executor *ex = NULL;
  ck_assert_int_eq(setenv("FUSEBOX_FUSION_STRATEGY", "static=2", 1), 0);
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "none"};
  fbx_status *st = fbx_executor_create(&ex, g, &o);
  ck_assert_ptr_nonnull(st);
  ck_assert_str_eq(fbx_status_message(st), "FUSEBOX_FUSION_STRATEGY: expected static:N,dynamic:M, got 'static=2'");
  fbx_status_free(st);
  unsetenv("FUSEBOX_FUSION_STRATEGY");
  const char *bad[] = {"", "static:", "static:-1", "dynamic:2,", "static:2;dynamic:3", "fast:1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    o.strategy = bad[i];
    st = fbx_executor_create(&ex, g, &o);
    ck_assert_msg(st && fbx_status_code(st) == FBX_ERR_INVALID_ARG, "'%s' accepted", bad[i]);
    fbx_status_free(st);
  }
  fbx_strategy s;
  ck_assert(!fbx_strategy_parse(&s, " dynamic:3 , static:1", "x"));
  ck_assert_int_eq(fbx_strategy_kind_at(&s, 0), FBX_SPEC_DYNAMIC);
  ck_assert_int_eq(fbx_strategy_kind_at(&s, 2), FBX_SPEC_DYNAMIC);
  ck_assert_int_eq(fbx_strategy_kind_at(&s, 3), FBX_SPEC_STATIC);
  ck_assert_int_eq(fbx_strategy_kind_at(&s, 4), FBX_SPEC_NONE);
  ck_assert_int_eq(fbx_strategy_depth(&s), 4);

  ck_assert_int_eq(setenv("FUSEBOX_PROFILING_RUNS", "two", 1), 0);
  o.strategy = NULL;
  st = fbx_executor_create(&ex, g, &o);
  ck_assert_ptr_nonnull(st);
  ck_assert_ptr_nonnull(strstr(fbx_status_message(st), "FUSEBOX_PROFILING_RUNS"));
  fbx_status_free(st);
  unsetenv("FUSEBOX_PROFILING_RUNS");

  o.fuser = "no_such_fuser_anywhere";
  st = fbx_executor_create(&ex, g, &o);
  ck_assert_ptr_nonnull(st);
  fbx_status_free(st);
  o.fuser = "none";
  o.device = "cuda";
  st = fbx_executor_create(&ex, g, &o);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_UNSUPPORTED);
  fbx_status_free(st);
  ck_assert_ptr_null(ex);
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(env_selects_fuser) {
  fbx_graph *g = parse(CHAIN);
  ck_assert_int_eq(setenv("FUSEBOX_FUSER", FBX_TEST_PLUGIN_DIR "/libfbxtest_good.so", 1), 0);
  fbx_executor *ex = NULL;
  ck_assert(!fbx_executor_create(&ex, g, NULL));
  ck_assert_str_eq(fbx_executor_fuser_name(ex), "good");
  int64_t sizes[1] = {9};
  for (int r = 0; r < 3; r++) run_chain(ex, g, 1, sizes, (float)r);
  ck_assert_int_eq(stats_of(ex).kernel_runs, 2);
  fbx_executor_destroy(ex);
  unsetenv("FUSEBOX_FUSER");
  fbx_graph_destroy(g);
}
END_TEST

/* Old callers pass a smaller stats struct: only what it covers is written. */
START_TEST(stats_struct_size) {
  fbx_graph *g = parse(CHAIN);
  fbx_executor *ex = make_ex(g, NULL, NULL, 0);
  int64_t sizes[1] = {4};
  run_chain(ex, g, 1, sizes, 0.0f);
  struct {
    fbx_executor_stats s;
    char canary[16];
  } box;
  memset(&box, 0x5a, sizeof box);
  box.s.struct_size = offsetof(fbx_executor_stats, profiling_runs);
  fbx_executor_stats_get(ex, &box.s);
  ck_assert_int_eq(box.s.runs, 1);
  ck_assert_int_eq(((unsigned char *)&box.s.profiling_runs)[0], 0x5a);
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
}
END_TEST


/* ---- the conformance corpus through the executor --------------------------------------------------- */

#include <dirent.h>
#include <math.h>

/* One `args` line: a .npy file of the case or a scalar literal. */
static fbx_status *read_arg(const char *dir, const char *line, fbx_ivalue *out) {
  size_t n = strlen(line);
  if (n > 4 && !strcmp(line + n - 4, ".npy")) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, line);
    fbx_tensor *t = NULL;
    FBX_TRY(fbx_npy_read_file(&t, path));
    *out = fbx_iv_tensor(t);
    return NULL;
  }
  if (!strcmp(line, "None")) *out = fbx_iv_none();
  else if (!strcmp(line, "true")) *out = fbx_iv_bool(true);
  else if (!strcmp(line, "false")) *out = fbx_iv_bool(false);
  else if (strpbrk(line, ".eEn")) *out = fbx_iv_float(strtod(line, NULL));
  else *out = fbx_iv_int(strtoll(line, NULL, 10));
  return NULL;
}

static bool close_values(const fbx_ivalue *a, const fbx_ivalue *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == FBX_IV_TUPLE || a->kind == FBX_IV_LIST) {
    if (a->u.l->n != b->u.l->n) return false;
    for (int i = 0; i < a->u.l->n; i++)
      if (!close_values(&a->u.l->items[i], &b->u.l->items[i])) return false;
    return true;
  }
  if (a->kind == FBX_IV_FLOAT) return a->u.f == b->u.f || (a->u.f != a->u.f && b->u.f != b->u.f);
  if (a->kind == FBX_IV_INT) return a->u.i == b->u.i;
  if (a->kind == FBX_IV_BOOL) return a->u.b == b->u.b;
  if (a->kind != FBX_IV_TENSOR) return true;
  if (a->u.t->dtype != b->u.t->dtype || !fbx_tensor_same_shape(a->u.t, b->u.t)) return false;
  for (int64_t i = 0; i < a->u.t->numel; i++) {
    double x = fbx_tensor_get_f64(a->u.t, i), y = fbx_tensor_get_f64(b->u.t, i);
    if (x == y || (x != x && y != y)) continue;
    if (fabs(x - y) > 1e-6 + 1e-5 * fabs(y)) return false;
  }
  return true;
}

/* Every conformance case, three runs each (profiling, then optimized): the
 * executor with the `good` plugin gives what the interpreter gives, or the
 * same error. */
START_TEST(corpus_with_good_plugin) {
  const char *root = FBX_SOURCE_DIR "/tests/corpus/cases";
  DIR *d = opendir(root);
  ck_assert_ptr_nonnull(d);
  fbx_fuser *f = load_plugin("good");
  int ncases = 0, fused = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char dir[1024], path[1200];
    snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
    snprintf(path, sizeof path, "%s/graph.ir", dir);
    fbx_graph *g = NULL;
    if (fbx_graph_parse_file(&g, path)) continue; /* not a case directory */
    snprintf(path, sizeof path, "%s/args", dir);
    size_t len;
    char *args = tu_read_file(path, &len);
    ck_assert_ptr_nonnull(args);
    fbx_ivalue in[32];
    int nin = 0;
    for (char *save = NULL, *line = strtok_r(args, "\n", &save); line && nin < 32; line = strtok_r(NULL, "\n", &save)) {
      fbx_status *st = read_arg(dir, line, &in[nin]);
      ck_assert_msg(!st, "%s: %s", e->d_name, fbx_status_message(st));
      nin++;
    }
    free(args);
    fbx_executor *ex = make_ex(g, f, "static:2,dynamic:2", 1);
    fbx_interp *it = NULL;
    ck_assert(!fbx_interp_create(&it, g));
    int nout = fbx_graph_noutputs(g);
    for (int r = 0; r < 3; r++) {
      fbx_ivalue want[16], got[16];
      ck_assert_int_le(nout, 16);
      fbx_run_opts ro = {.seed = 7};
      fbx_status *a = fbx_interp_run(it, in, nin, want, &ro);
      fbx_status *b = fbx_executor_run_values(ex, in, nin, got, nout, 7);
      ck_assert_msg(!a == !b, "%s run %d: interpreter '%s', executor '%s'", e->d_name, r, fbx_status_message(a),
                    fbx_status_message(b));
      for (int i = 0; !a && i < nout; i++) {
        ck_assert_msg(close_values(&want[i], &got[i]), "%s run %d: output %d differs", e->d_name, r, i);
        fbx_iv_release(&want[i]);
        fbx_iv_release(&got[i]);
      }
      fbx_status_free(a);
      fbx_status_free(b);
    }
    fused += stats_of(ex).kernel_runs > 0;
    ncases++;
    fbx_interp_destroy(it);
    fbx_executor_destroy(ex);
    for (int i = 0; i < nin; i++) fbx_iv_release(&in[i]);
    fbx_graph_destroy(g);
  }
  closedir(d);
  ck_assert_int_gt(ncases, 50);
  ck_assert_int_gt(fused, 0);
  fbx_fuser_release(f);
}
END_TEST

/* ---- threads ---------------------------------------------------------------------------------- */

typedef struct worker {
  fbx_executor *ex;
  const fbx_graph *g;
  int id;
  int failures;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  fbx_interp *it = NULL;
  if (fbx_interp_create(&it, w->g)) {
    w->failures++;
    return NULL;
  }
  for (int r = 0; r < 200; r++) {
    /* threads share shapes in turn, so guards fail and levels are built while others run */
    int64_t sizes[2] = {2 + (r + w->id) % 3, 33};
    fbx_tensor *t = NULL;
    if (fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, 2, sizes)) {
      w->failures++;
      continue;
    }
    for (int64_t i = 0; i < t->numel; i++) ((float *)t->data)[i] = (float)((i + r + w->id) % 13) - 6.0f;
    fbx_ivalue in[1] = {fbx_iv_tensor(t)}, want[1], got[1];
    fbx_status *a = fbx_interp_run(it, in, 1, want, NULL);
    fbx_status *b = fbx_executor_run_values(w->ex, in, 1, got, 1, 0);
    if (a || b || !fbx_tensor_same_shape(want[0].u.t, got[0].u.t)) {
      w->failures++;
    } else {
      for (int64_t i = 0; i < t->numel; i++)
        if (fbx_tensor_get_f64(want[0].u.t, i) != fbx_tensor_get_f64(got[0].u.t, i)) {
          w->failures++;
          break;
        }
    }
    fbx_status_free(a);
    fbx_status_free(b);
    fbx_iv_release(&want[0]);
    fbx_iv_release(&got[0]);
    fbx_iv_release(&in[0]);
  }
  fbx_interp_destroy(it);
  return NULL;
}

START_TEST(concurrent_runs) {
  fbx_graph *g = parse(CHAIN);
  fbx_fuser *f = load_plugin("good");
  fbx_executor *ex = make_ex(g, f, "static:2,dynamic:1", 1);
  pthread_t th[4];
  worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker){.ex = ex, .g = g, .id = i};
    ck_assert_int_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(w[i].failures, 0);
  fbx_executor_stats s = stats_of(ex);
  char *text = report(ex);
  ck_assert_int_eq(s.runs, 800);
  ck_assert_msg(s.specializations >= 1 && s.specializations <= 3, "%s", text);
  ck_assert_int_gt(s.kernel_runs, 0);
  ck_assert_int_eq(s.fallbacks_compile + s.fallbacks_run, 0);
  fbx_free(text);
  fbx_executor_destroy(ex);
  fbx_fuser_release(f);
  fbx_graph_destroy(g);
}
END_TEST

/* ---- suite -------------------------------------------------------------------------------------- */

/* Issue 17.5: under a dynamic strategy level a plugin that accepts symbolic
 * sizes compiles once for 100 shapes; one that does not compiles per shape,
 * but the host's kernel cache stays bounded (LRU, evictions counted). */
START_TEST(symbolic_sizes_serve_100_shapes_with_one_compile) {
  fbx_graph *g = parse(CHAIN);
  fbx_fuser *f = load_plugin("symbolic");
  fbx_executor *ex = make_ex(g, f, "dynamic:1", 1);
  for (int r = 0; r < 101; r++) {
    int64_t sizes[2] = {3 + r % 7, 5 + r};
    run_chain(ex, g, 2, sizes, (float)r);
  }
  fbx_fuser_stats fs;
  fbx_fuser_get_stats(f, &fs);
  fbx_executor_stats s = stats_of(ex);
  char *text = report(ex);
  ck_assert_msg(fs.compiles == 1 && s.kernels_compiled == 1, "%lld compiles:\n%s", (long long)fs.compiles, text);
  ck_assert_msg(s.kernel_runs == 100 && s.fallbacks == 0 && s.guard_failures == 0, "%s", text);
  fbx_free(text);
  /* a size-1 dim is concrete: [1, n] is another kernel, and so is a
   * pattern of equal sizes */
  int64_t one[2] = {1, 9}, eq[2] = {6, 6};
  run_chain(ex, g, 2, one, 1.0f);
  run_chain(ex, g, 2, eq, 2.0f);
  fbx_fuser_get_stats(f, &fs);
  ck_assert_int_eq(fs.compiles, 3);
  fbx_executor_destroy(ex);
  fbx_fuser_release(f);

  /* the same plugin without FBXP_ACCEPTS_SYMBOLIC, cache bounded at 16 */
  setenv("FUSEBOX_KERNEL_CACHE_MAX", "16", 1);
  f = load_plugin("good");
  unsetenv("FUSEBOX_KERNEL_CACHE_MAX");
  ex = make_ex(g, f, "dynamic:1", 1);
  for (int r = 0; r < 101; r++) {
    int64_t sizes[2] = {3 + r % 7, 5 + r};
    run_chain(ex, g, 2, sizes, (float)r);
  }
  fbx_fuser_get_stats(f, &fs);
  s = stats_of(ex);
  ck_assert_int_eq(fs.compiles, 100); /* one per shape */
  ck_assert_int_le(fs.cached_kernels, 16);
  ck_assert_int_eq(fs.cache_evictions, 100 - fs.cached_kernels);
  ck_assert_int_eq(s.kernel_runs, 100);
  text = report(ex);
  ck_assert_msg(strstr(text, "kernel cache        16 kernels, 84 evicted"), "%s", text);
  fbx_free(text);
  fbx_executor_destroy(ex);
  fbx_fuser_release(f);
  fbx_graph_destroy(g);
}
END_TEST

static Suite *executor_suite(void) {
  Suite *s = suite_create("executor");
  TCase *tc = tcase_create("executor");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, none_equals_interpreter);
  tcase_add_test(tc, ratio_iou_none);
  tcase_add_test(tc, good_plugin_chain);
  tcase_add_test(tc, good_plugin_control_flow);
  tcase_add_test(tc, respecialization_is_bounded);
  tcase_add_test(tc, dynamic_generalizes_sizes);
  tcase_add_test(tc, profiling_runs_merge);
  tcase_add_test(tc, compile_fails_falls_back);
  tcase_add_test(tc, run_fails_falls_back);
  tcase_add_test(tc, declines_fall_back);
  tcase_add_test(tc, strategy_errors);
  tcase_add_test(tc, env_selects_fuser);
  tcase_add_test(tc, stats_struct_size);
  tcase_add_test(tc, concurrent_runs);
  tcase_add_test(tc, corpus_with_good_plugin);
  tcase_add_test(tc, symbolic_sizes_serve_100_shapes_with_one_compile);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(executor_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
