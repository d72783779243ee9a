/* The run-time queries of scripted nn.Modules (ops/list_runtime.h) and the
 * pass that folds them (passes/rtquery.c).
 *
 * aten::find's expected values are what PyTorch 1.13's TorchScript returns
 * for the same arguments (torch.jit.script of `s.find(sub, start, end)`,
 * run with /usr/bin/python3); note TorchScript's end=-1 means "to the end",
 * unlike Python's str.find. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/interp.h"
#include "ir/text.h"
#include "ir/type.h"
#include "passes/passes.h"
#include "base/alloc.h"
#include <fusebox/tensor.h>
#include "testutil.h"

static fbx_graph *parse(const char *text) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "test.ir");
  ck_assert_msg(!st, "parse: %s", fbx_status_message(st));
  return g;
}

static void run(fbx_graph *g, const fbx_ivalue *in, int n, fbx_ivalue *out) {
  fbx_interp *it = NULL;
  fbx_status *st = fbx_interp_create(&it, g);
  ck_assert_msg(!st, "create: %s", fbx_status_message(st));
  st = fbx_interp_run(it, in, n, out, NULL);
  ck_assert_msg(!st, "run: %s", fbx_status_message(st));
  fbx_interp_destroy(it);
}

START_TEST(find_matches_torchscript) {
  static const struct {
    const char *s, *sub;
    int64_t start, end, want;
  } cases[] = {
      {"cpu", "cpu", 0, -1, 0},  {"hello", "l", 0, -1, 2},  {"hello", "l", 3, -1, 3},   {"hello", "l", -2, -1, 3},
      {"hello", "o", 0, -1, 4},  {"hello", "o", 0, 4, -1},  {"hello", "", 2, -1, 2},    {"hello", "", 9, -1, 9},
      {"hello", "lo", 0, -2, -1}, {"cuda:0", "cpu", 0, -1, -1}, {"hello", "h", -100, -1, 0}, {"hello", "", 3, 1, 3},
  };
  fbx_graph *g = parse("graph(%s : str, %sub : str, %a : int, %b : int):\n"
                       "  %r : int = aten::find(%s, %sub, %a, %b)\n"
                       "  return (%r)\n");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    fbx_ivalue in[4] = {{0}}, out[1] = {{0}};
    ck_assert(!fbx_iv_str_new(&in[0], cases[i].s, strlen(cases[i].s)));
    ck_assert(!fbx_iv_str_new(&in[1], cases[i].sub, strlen(cases[i].sub)));
    in[2] = fbx_iv_int(cases[i].start);
    in[3] = fbx_iv_int(cases[i].end);
    run(g, in, 4, out);
    ck_assert_int_eq(out[0].kind, FBX_IV_INT);
    ck_assert_msg(out[0].u.i == cases[i].want, "'%s'.find('%s', %lld, %lld) = %lld, want %lld", cases[i].s,
                  cases[i].sub, (long long)cases[i].start, (long long)cases[i].end, (long long)out[0].u.i,
                  (long long)cases[i].want);
    fbx_iv_release(&in[0]);
    fbx_iv_release(&in[1]);

    /* the rtquery pass folds the same call on constants to the same index */
    char text[512];
    snprintf(text, sizeof text,
             "graph():\n  %%s : str = prim::Constant[value=\"%s\"]()\n  %%u : str = prim::Constant[value=\"%s\"]()\n"
             "  %%a : int = prim::Constant[value=%lld]()\n  %%b : int = prim::Constant[value=%lld]()\n"
             "  %%r : int = aten::find(%%s, %%u, %%a, %%b)\n  return (%%r)\n",
             cases[i].s, cases[i].sub, (long long)cases[i].start, (long long)cases[i].end);
    fbx_graph *c = parse(text);
    ck_assert(!fbx_pass_pipeline(c, "rtquery"));
    int64_t folded;
    ck_assert_msg(fbx_value_const_int(fbx_graph_output(c, 0), &folded) && folded == cases[i].want,
                  "rtquery: '%s'.find('%s', %lld, %lld) not folded to %lld", cases[i].s, cases[i].sub,
                  (long long)cases[i].start, (long long)cases[i].end, (long long)cases[i].want);
    fbx_graph_destroy(c);
  }
  fbx_graph_destroy(g);
}
END_TEST

static const char queries[] =
    "graph(%x : Tensor, %i : Tensor):\n"
    "  %a : bool = aten::is_autocast_enabled()\n"
    "  %b : bool = aten::is_grad_enabled()\n"
    "  %c : bool = prim::requires_grad(%x)\n"
    "  %d : bool = prim::requires_grad(%i)\n"
    "  %e : bool = prim::is_nested(%x)\n"
    "  %f : bool = aten::is_floating_point(%x)\n"
    "  %h : bool = aten::is_floating_point(%i)\n"
    "  return (%a, %b, %c, %d, %e, %f, %h)\n";
static const bool queries_want[7] = {false, true, true, false, false, true, false};

START_TEST(queries_answer) {
  fbx_graph *g = parse(queries);
  fbx_tensor *x = NULL, *i = NULL;
  int64_t sz[1] = {3};
  ck_assert(!fbx_tensor_zeros(&x, FBX_DTYPE_FLOAT32, 1, sz));
  ck_assert(!fbx_tensor_zeros(&i, FBX_DTYPE_INT64, 1, sz));
  fbx_ivalue in[2] = {fbx_iv_tensor(x), fbx_iv_tensor(i)}, out[7] = {{0}};
  run(g, in, 2, out);
  for (int k = 0; k < 7; k++) {
    ck_assert_int_eq(out[k].kind, FBX_IV_BOOL);
    ck_assert_msg(out[k].u.b == queries_want[k], "output %d is %d", k, out[k].u.b);
  }
  fbx_iv_release(&in[0]);
  fbx_iv_release(&in[1]);
  fbx_graph_destroy(g);
}
END_TEST

/* With float32 and int64 input types the pass folds every query to what the
 * kernels answered above; without dtypes it folds only the mode queries. */
START_TEST(fold_gives_the_kernels_answers) {
  fbx_graph *g = parse(queries);
  ck_assert(!fbx_pass_pipeline(g, "rtquery"));
  char *text = fbx_graph_print(g);
  ck_assert_ptr_null(strstr(text, "is_autocast_enabled"));
  ck_assert_ptr_null(strstr(text, "is_grad_enabled"));
  ck_assert_ptr_null(strstr(text, "is_nested"));
  ck_assert_ptr_nonnull(strstr(text, "prim::requires_grad(%x)"));
  ck_assert_ptr_nonnull(strstr(text, "aten::is_floating_point(%i)"));
  fbx_free(text);
  fbx_graph_destroy(g);

  g = parse(queries);
  fbx_graph_input(g, 0)->type = fbx_type_tensor(g->arena, FBX_DTYPE_FLOAT32, -1, NULL, NULL, -1, NULL);
  fbx_graph_input(g, 1)->type = fbx_type_tensor(g->arena, FBX_DTYPE_INT64, -1, NULL, NULL, -1, NULL);
  ck_assert(!fbx_pass_pipeline(g, "rtquery,dce"));
  ck_assert_int_eq(fbx_graph_noutputs(g), 7);
  for (int k = 0; k < 7; k++) {
    const fbx_value *v = fbx_graph_output(g, k);
    int64_t b;
    ck_assert_msg(fbx_value_const_int(v, &b), "output %d not folded", k);
    ck_assert_msg((b != 0) == queries_want[k], "output %d folded to %lld", k, (long long)b);
  }
  fbx_graph_destroy(g);
}
END_TEST

/* aten::any / aten::all of lists built by appends: folded only when the known
 * elements decide. */
START_TEST(fold_any_all) {
  fbx_graph *g = parse("graph(%u : bool):\n"
                       "  %t : bool = prim::Constant[value=1]()\n"
                       "  %f : bool = prim::Constant[value=0]()\n"
                       "  %l : bool[] = prim::ListConstruct(%f)\n"
                       "  %1 : bool[] = aten::append(%l, %u)\n"
                       "  %a0 : bool = aten::any(%l)\n"
                       "  %a1 : bool = aten::all(%l)\n"
                       "  %2 : bool[] = aten::append(%l, %t)\n"
                       "  %a2 : bool = aten::any(%l)\n"
                       "  %m : bool[] = prim::ListConstruct(%t, %t)\n"
                       "  %a3 : bool = aten::all(%m)\n"
                       "  %a4 : bool = aten::any(%m)\n"
                       "  return (%a0, %a1, %a2, %a3, %a4)\n");
  ck_assert(!fbx_pass_pipeline(g, "rtquery"));
  int64_t b;
  ck_assert(!fbx_value_const_int(fbx_graph_output(g, 0), &b)); /* any([False, u]): u decides */
  ck_assert(fbx_value_const_int(fbx_graph_output(g, 1), &b) && b == 0); /* all([False, u]) */
  ck_assert(fbx_value_const_int(fbx_graph_output(g, 2), &b) && b == 1); /* any([False, u, True]) */
  ck_assert(fbx_value_const_int(fbx_graph_output(g, 3), &b) && b == 1);
  ck_assert(fbx_value_const_int(fbx_graph_output(g, 4), &b) && b == 1);
  fbx_graph_destroy(g);
}
END_TEST

/* The real nn.TransformerEncoderLayer graph (tests/corpus/modules): once the
 * inputs are known to be float32 the default pipeline proves the fused fast
 * path dead and removes it with every query; with untyped inputs the
 * requires_grad queries stay (the path is then skipped at run time). */
START_TEST(fold_drops_transformer_fast_path) {
  char *src = tu_read_file(tu_src_path("tests/corpus/modules/mod_transformer_encoder/graph.ir"), NULL);
  ck_assert_ptr_nonnull(src);
  fbx_graph *g = parse(src);
  ck_assert(!fbx_pass_pipeline(g, "default"));
  char *text = fbx_graph_print(g);
  ck_assert_ptr_nonnull(strstr(text, "aten::_transformer_encoder_layer_fwd"));
  ck_assert_ptr_nonnull(strstr(text, "prim::requires_grad"));
  ck_assert_ptr_null(strstr(text, "aten::is_grad_enabled"));
  ck_assert_ptr_null(strstr(text, "aten::is_autocast_enabled"));
  fbx_free(text);
  fbx_graph_destroy(g);

  g = parse(src);
  for (int i = 0; i < fbx_graph_ninputs(g); i++)
    if (fbx_graph_input(g, i)->type->kind == FBX_TYPE_TENSOR)
      fbx_graph_input(g, i)->type = fbx_type_tensor(g->arena, FBX_DTYPE_FLOAT32, -1, NULL, NULL, -1, NULL);
  ck_assert(!fbx_pass_pipeline(g, "default"));
  text = fbx_graph_print(g);
  if (strstr(text, "_transformer_encoder_layer_fwd")) {
    FILE *f = fopen("rtquery_kept.ir", "w");
    if (f) fputs(text, f), fclose(f);
  }
  ck_assert_msg(!strstr(text, "_transformer_encoder_layer_fwd"), "fast path kept (the graph is in rtquery_kept.ir)");
  ck_assert_ptr_null(strstr(text, "_native_multi_head_attention"));
  ck_assert_ptr_null(strstr(text, "prim::requires_grad"));
  ck_assert_ptr_null(strstr(text, "prim::is_nested"));
  ck_assert_ptr_nonnull(strstr(text, "aten::layer_norm")); /* the composite path stays */
  fbx_free(text);
  fbx_graph_destroy(g);
  free(src);
}
END_TEST

/* The fast-path ops say what they are instead of computing something else. */
START_TEST(fast_path_op_reports) {
  fbx_graph *g = parse("graph(%x : Tensor, %w : Tensor, %b : Tensor):\n"
                       "  %e : int = prim::Constant[value=4]()\n"
                       "  %h : int = prim::Constant[value=2]()\n"
                       "  %o : Tensor, %p : Tensor = aten::_native_multi_head_attention(%x, %x, %x, %e, %h, %w, %b, %w, %b)\n"
                       "  return (%o)\n");
  fbx_interp *it = NULL;
  ck_assert(!fbx_interp_create(&it, g));
  fbx_tensor *x = NULL;
  int64_t sz[3] = {1, 2, 4};
  ck_assert(!fbx_tensor_zeros(&x, FBX_DTYPE_FLOAT32, 3, sz));
  fbx_ivalue in[3] = {fbx_iv_tensor(x), fbx_iv_tensor(x), fbx_iv_tensor(x)}, out[1] = {{0}};
  fbx_status *st = fbx_interp_run(it, in, 3, out, NULL);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(fbx_status_message(st), "fast path is not implemented"));
  fbx_status_free(st);
  fbx_iv_release(&in[0]);
  fbx_interp_destroy(it);
  fbx_graph_destroy(g);
}
END_TEST

static Suite *runtime_suite(void) {
  Suite *s = suite_create("runtime_ops");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, find_matches_torchscript);
  tcase_add_test(tc, queries_answer);
  tcase_add_test(tc, fold_gives_the_kernels_answers);
  tcase_add_test(tc, fold_any_all);
  tcase_add_test(tc, fold_drops_transformer_fast_path);
  tcase_add_test(tc, fast_path_op_reports);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(runtime_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
