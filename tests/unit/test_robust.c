/* Issue #12 (crashes, wrong results, messages): a declared type that
 * contradicts its producer, inputs a graph writes, dead code under every
 * fuser, size overflow, out-of-memory messages, absurd options and bad
 * environment variables. Each test failed before its fix. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fusebox/tensor.h>

#include "base/env.h"
#include "exec/executor.h"
#include "ir/graph.h"
#include "ir/text.h"
#include "ir/verify.h"
#include "testutil.h"

static char dir[256];

static const char *path_in(const char *name) {
  static char buf[4][512];
  static int next;
  char *p = buf[next++ & 3];
  snprintf(p, 512, "%s/%s", dir, name);
  return p;
}

static void write_text(const char *name, const char *text) {
  FILE *f = fopen(path_in(name), "w");
  ck_assert(f);
  fputs(text, f);
  fclose(f);
}

/* `[ENV] fusebox <args>` in the temp dir: the exit code, output in *out (free it). */
static int cli(const char *env, const char *args, char **out) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cd %s && %s %s %s", dir, env ? env : "", FBX_CLI, args);
  return tu_run(cmd, out);
}

#define EXPECT(rc_, env_, args_, ...)                                                                   \
  do {                                                                                                  \
    char *out_ = NULL;                                                                                  \
    int rc = cli(env_, args_, &out_);                                                                   \
    ck_assert_msg(rc == (rc_), "`%s fusebox %s` exited %d, wanted %d:\n%s", (env_) ? (env_) : "", args_, \
                  rc, (rc_), out_);                                                                     \
    const char *subs_[] = {__VA_ARGS__, NULL};                                                          \
    for (int i_ = 0; subs_[i_]; i_++)                                                                   \
      ck_assert_msg(strstr(out_, subs_[i_]), "`fusebox %s`: no \"%s\" in:\n%s", args_, subs_[i_], out_); \
    free(out_);                                                                                         \
  } while (0)

/* The repro: a 3-tuple declared `Tensor`. */
static const char *G_TUPLE_AS_TENSOR =
    "graph(%x.1 : Tensor):\n"
    "  %t : Tensor = prim::TupleConstruct(%x.1, %x.1, %x.1)\n"
    "  return (%t)\n";

/* relu_ writes its input x in place; the output depends on what x held. */
static const char *G_WRITES_INPUT =
    "graph(%x.1 : Tensor):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %y : Tensor = aten::sub(%x.1, %one, %one)\n"
    "  %z : Tensor = aten::relu_(%x.1)\n"
    "  %o : Tensor = aten::add(%z, %y, %one)\n"
    "  return (%o)\n";

/* A dead aten::where with a float condition: it would fail if it ran. */
static const char *G_DEAD_WHERE =
    "graph(%x.1 : Tensor):\n"
    "  %d : Tensor = aten::where(%x.1, %x.1, %x.1)\n"
    "  %y : Tensor = aten::relu(%x.1)\n"
    "  return (%y)\n";

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/fbx_robust_XXXXXX");
  ck_assert(mkdtemp(dir));
  write_text("tuple.ir", G_TUPLE_AS_TENSOR);
  write_text("writes.ir", G_WRITES_INPUT);
  write_text("dead.ir", G_DEAD_WHERE);
  write_text("twoout.ir", "graph(%x.1 : Tensor):\n"
                          "  %y : Tensor = aten::neg(%x.1)\n"
                          "    %a : Tensor, %b : Tensor = aten::relu(%y)\n"
                          "  return (%a)\n");
  /* x = [-1, 0.5, 2, -3] */
  fbx_tensor *t = NULL;
  const float x[] = {-1.0f, 0.5f, 2.0f, -3.0f};
  int64_t n = 4;
  ck_assert(!fbx_tensor_from_data(&t, FBX_DTYPE_FLOAT32, 1, &n, x));
  ck_assert(!fbx_npy_write_file(path_in("x.npy"), t));
  fbx_tensor_release(t);
}

static void teardown(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}

static fbx_graph *parse(const char *text) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "test");
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  return g;
}

/* Expect st to be an error whose message holds every substring; frees it. */
#define EXPECT_ERR(st_, ...)                                                                       \
  do {                                                                                             \
    fbx_status *s_ = (st_);                                                                        \
    ck_assert_msg(s_, "expected an error");                                                        \
    const char *subs_[] = {__VA_ARGS__, NULL};                                                     \
    for (int i_ = 0; subs_[i_]; i_++)                                                              \
      ck_assert_msg(strstr(fbx_status_message(s_), subs_[i_]), "no \"%s\" in: %s", subs_[i_],     \
                    fbx_status_message(s_));                                                       \
    fbx_status_free(s_);                                                                           \
  } while (0)

/* ---- item 1: declared types against their producers ----------------------------------- */

START_TEST(verifier_rejects_contradicting_types) {
  fbx_graph *g = parse(G_TUPLE_AS_TENSOR);
  EXPECT_ERR(fbx_graph_verify(g), "prim::TupleConstruct of 3 values", "%t is declared Tensor");
  fbx_graph_destroy(g);

  /* the same class of mismatch elsewhere */
  static const char *const bad[][2] = {
      {"graph(%x.1 : Tensor):\n"
       "  %t : (Tensor, Tensor) = prim::TupleConstruct(%x.1, %x.1, %x.1)\n"
       "  return (%t)\n",
       "not a tuple of 3"},
      {"graph(%t.1 : (Tensor, Tensor)):\n"
       "  %a : Tensor, %b : Tensor, %c : Tensor = prim::TupleUnpack(%t.1)\n"
       "  return (%a)\n",
       "prim::TupleUnpack into 3 values"},
      {"graph(%x.1 : Tensor):\n"
       "  %l : Tensor = prim::ListConstruct(%x.1, %x.1)\n"
       "  return (%l)\n",
       "not a list"},
      {"graph(%c.1 : bool, %x.1 : Tensor):\n"
       "  %r : Tensor = prim::If(%c.1)\n"
       "    block0():\n"
       "      %t : (Tensor, Tensor) = prim::TupleConstruct(%x.1, %x.1)\n"
       "      -> (%t)\n"
       "    block1():\n"
       "      -> (%x.1)\n"
       "  return (%r)\n",
       "the true block returns (Tensor, Tensor)"},
      {"graph(%n.1 : int, %x.1 : Tensor):\n"
       "  %t : bool = prim::Constant[value=1]()\n"
       "  %r : int = prim::Loop(%n.1, %t, %x.1)\n"
       "    block0(%i : int, %y : Tensor):\n"
       "      -> (%t, %y)\n"
       "  return (%r)\n",
       "prim::Loop"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    g = parse(bad[k][0]);
    EXPECT_ERR(fbx_graph_verify(g), "invalid graph", bad[k][1]);
    fbx_graph_destroy(g);
  }
  /* agreeing types (and refinements of them) still verify */
  g = parse("graph(%x.1 : Float(2, 3), %n.1 : int):\n"
            "  %f : float = prim::Constant[value=0.5]()\n"
            "  %t : (Tensor, float) = prim::TupleConstruct(%x.1, %n.1)\n"
            "  %a : Tensor, %b : float = prim::TupleUnpack(%t)\n"
            "  %l : Tensor[] = prim::ListConstruct(%a, %x.1)\n"
            "  %o : Tensor? = prim::Constant()\n"
            "  return (%l, %b, %o, %f)\n");
  fbx_status *st = fbx_graph_verify(g);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(op_outputs_against_schema) {
  /* aten::relu returns one Tensor: two outputs, or an int output, contradict it */
  fbx_graph *g = parse("graph(%x.1 : Tensor):\n"
                       "  %a : Tensor, %b : Tensor = aten::relu(%x.1)\n"
                       "  return (%a)\n");
  fbx_executor *ex = NULL;
  EXPECT_ERR(fbx_executor_create(&ex, g, NULL), "aten::relu returns 1 value but the node has 2 outputs");
  fbx_graph_destroy(g);
  g = parse("graph(%x.1 : Tensor):\n"
            "  %a : (Tensor, Tensor) = aten::relu(%x.1)\n"
            "  return (%a)\n");
  EXPECT_ERR(fbx_executor_create(&ex, g, NULL), "%a is declared (Tensor, Tensor)", "aten::relu");
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(backward_on_tuple_declared_tensor) {
  /* was: heap overflow in fbx_executor_forward_values (134 or SIGSEGV) */
  EXPECT(1, NULL, "run tuple.ir --input x.npy --backward", "invalid graph", "%t is declared Tensor");
  EXPECT(1, NULL, "run tuple.ir --input x.npy", "invalid graph");
  EXPECT(1, NULL, "print tuple.ir --verify", "invalid graph");
}
END_TEST

START_TEST(schema_output_count_with_position) {
  /* issue 18 item 7: print --verify accepted a node with more outputs than
   * its op returns, and the errors named no position in the file */
  EXPECT(1, NULL, "print twoout.ir --verify", "twoout.ir:3:5: invalid graph: aten::relu returns 1 value");
  EXPECT(1, NULL, "run twoout.ir --input x.npy", "twoout.ir:3:5: invalid graph");
  EXPECT(0, NULL, "print twoout.ir", "aten::relu"); /* printing alone does not judge it */
}
END_TEST

/* ---- item 3: inputs a graph writes are fresh for every run ----------------------------- */

START_TEST(iters_do_not_reuse_written_inputs) {
  /* o = relu(x) + (x - 1): [-2, 0, 3, -4]; a second run on the written x
   * would give relu(x) + relu(x) - 1 = [-1, 0, 3, -1]. */
  EXPECT(0, NULL, "run writes.ir --input x.npy --iters 3 --out o", "wrote 1 output");
  /* an empty --out: an error, where the directory walk read past the name */
  EXPECT(1, NULL, "run writes.ir --input x.npy --out ''", "the output directory name is empty");
  fbx_tensor *t = NULL;
  ck_assert(!fbx_npy_read_file(&t, path_in("o/out0.npy")));
  const float want[] = {-2.0f, 0.0f, 3.0f, -4.0f};
  ck_assert_int_eq(t->numel, 4);
  for (int i = 0; i < 4; i++) ck_assert_msg(((float *)t->data)[i] == want[i], "out[%d] = %g", i, ((float *)t->data)[i]);
  fbx_tensor_release(t);
  /* and the input file is what it was */
  ck_assert(!fbx_npy_read_file(&t, path_in("x.npy")));
  ck_assert(((float *)t->data)[0] == -1.0f);
  fbx_tensor_release(t);
}
END_TEST

START_TEST(bench_none_exact_on_written_inputs) {
  /* was: none reported max_rel 1 against its own reference */
  char *out = NULL;
  int rc = cli(NULL, "bench writes.ir --input x.npy --fusers none --iters 3 --json b.json", &out);
  ck_assert_msg(rc == 0, "%s", out);
  free(out);
  char *json = tu_read_file(path_in("b.json"), NULL);
  ck_assert(json);
  ck_assert_msg(strstr(json, "\"max_abs_error\": 0,") && strstr(json, "\"max_rel_error\": 0,"), "%s", json);
  free(json);
}
END_TEST

/* ---- item 4: dead code is dead under every fuser ---------------------------------------- */

START_TEST(dead_where_same_under_every_fuser) {
  EXPECT(0, NULL, "run dead.ir --input x.npy --fuser none", "out0: float32[4]");
  EXPECT(0, NULL, "run dead.ir --input x.npy --fuser legacy", "out0: float32[4]");
  EXPECT(0, "FUSEBOX_PROFILING_RUNS=2", "run dead.ir --input x.npy --fuser legacy --iters 3", "out0: float32[4]");
  EXPECT(0, NULL, "run dead.ir --input x.npy --fuser legacy --backward", "out0: float32[4]");
  /* with dce switched off the node runs, and fails, under both */
  EXPECT(1, "FUSEBOX_DISABLE_PASSES=dce", "run dead.ir --input x.npy --fuser none", "boolean tensor");
  EXPECT(1, "FUSEBOX_DISABLE_PASSES=dce", "run dead.ir --input x.npy --fuser legacy", "boolean tensor");
}
END_TEST

/* ---- item 5: size arithmetic is checked ---------------------------------------------------- */

START_TEST(size_overflow_is_an_error) {
  static const char *const graphs[][2] = {
      /* view: the product of the given sizes overflows */
      {"graph(%x.1 : Tensor):\n"
       "  %a : int = prim::Constant[value=4611686018427387904]()\n"
       "  %m : int = prim::Constant[value=-1]()\n"
       "  %s : int[] = prim::ListConstruct(%a, %a, %m)\n"
       "  %y : Tensor = aten::view(%x.1, %s) # v.py:1:2\n"
       "  return (%y)\n",
       "overflows"},
      /* repeat: repeats * size overflows */
      {"graph(%x.1 : Tensor):\n"
       "  %a : int = prim::Constant[value=4611686018427387904]()\n"
       "  %s : int[] = prim::ListConstruct(%a)\n"
       "  %y : Tensor = aten::repeat(%x.1, %s) # v.py:1:2\n"
       "  return (%y)\n",
       "size overflow"},
      /* slice: a huge step times the stride (2): one row, no overflow */
      {"graph(%x.1 : Tensor):\n"
       "  %z : int = prim::Constant[value=0]()\n"
       "  %two : int = prim::Constant[value=2]()\n"
       "  %e : int = prim::Constant[value=4]()\n"
       "  %a : int = prim::Constant[value=9223372036854775807]()\n"
       "  %s : int[] = prim::ListConstruct(%two, %two)\n"
       "  %v : Tensor = aten::view(%x.1, %s)\n"
       "  %y : Tensor = aten::slice(%v, %z, %z, %e, %a) # v.py:1:2\n"
       "  %f : Tensor = aten::mul(%y, %e)\n"
       "  return (%f)\n",
       NULL},
      /* arange: end - start overflows */
      {"graph(%x.1 : Tensor):\n"
       "  %lo : int = prim::Constant[value=-9223372036854775807]()\n"
       "  %hi : int = prim::Constant[value=9223372036854775807]()\n"
       "  %n : NoneType = prim::Constant()\n"
       "  %y : Tensor = aten::arange(%lo, %hi, %n, %n, %n, %n) # v.py:1:2\n"
       "  return (%y)\n",
       "overflow"},
  };
  for (size_t k = 0; k < sizeof graphs / sizeof graphs[0]; k++) {
    write_text("ovf.ir", graphs[k][0]);
    if (graphs[k][1])
      EXPECT(1, NULL, "run ovf.ir --input x.npy", graphs[k][1], "v.py:1:2", "in node:");
    else
      EXPECT(0, NULL, "run ovf.ir --input x.npy", "out0: float32[1, 2] min=-4 max=2"); /* [-1, 0.5] * 4 */
  }
}
END_TEST

/* ---- item 12: messages ------------------------------------------------------------------------ */

START_TEST(out_of_memory_names_node_and_size) {
  write_text("big.ir",
             "graph(%x.1 : Tensor):\n"
             "  %e : float = prim::Constant[value=1e15]()\n"
             "  %n : NoneType = prim::Constant()\n"
             "  %y : Tensor = aten::arange(%e, %n, %n, %n, %n) # big.py:7:4\n"
             "  return (%y)\n");
  /* (under AddressSanitizer the failed malloc must return NULL, as it does without) */
  EXPECT(1, "ASAN_OPTIONS=$ASAN_OPTIONS:allocator_may_return_null=1", "run big.ir --input x.npy", "out of memory",
         "4000000000000000 bytes", "big.py:7:4", "aten::arange");
  /* constprop's folding leaves the node to fail when it runs, not the optimizer */
  char *out = NULL;
  ck_assert_int_eq(cli("ASAN_OPTIONS=$ASAN_OPTIONS:allocator_may_return_null=1", "run big.ir --input x.npy", &out), 1);
  ck_assert_msg(!strstr(out, "optimizing the graph failed"), "%s", out);
  free(out);
  EXPECT(2, NULL, "run dead.ir --input x.npy --iters 1000000000000", "--iters 1000000000000: at most");
}
END_TEST

START_TEST(environment_variables_are_checked) {
  static const char *const bad[][2] = {
      {"FUSEBOX_NUM_THREADS=abc", "FUSEBOX_NUM_THREADS='abc'"},
      {"FUSEBOX_NUM_THREADS=-1", "FUSEBOX_NUM_THREADS='-1'"},
      {"FUSEBOX_NUM_THREADS=0", "FUSEBOX_NUM_THREADS='0'"},
      {"FUSEBOX_PW_GRAIN=lots", "FUSEBOX_PW_GRAIN='lots'"},
      {"FUSEBOX_LOG=pases", "unknown item 'pases'"},
      {"FUSEBOX_DISABLE_PASSES=cse,nope", "FUSEBOX_DISABLE_PASSES='cse,nope': unknown item 'nope'"},
      {"FUSEBOX_STORAGE_CACHE_MB=1G", "FUSEBOX_STORAGE_CACHE_MB='1G'"},
      {"FUSEBOX_HUGE_PAGES=2", "FUSEBOX_HUGE_PAGES='2'"},
      {"FUSEBOX_PROFILING_RUNS=x", "FUSEBOX_PROFILING_RUNS='x'"},
      {"FUSEBOX_FUSION_STRATEGY=fast", "FUSEBOX_FUSION_STRATEGY"},
      {"FUSEBOX_VERIFY=maybe", "FUSEBOX_VERIFY='maybe'"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) EXPECT(2, bad[k][0], "run dead.ir --input x.npy", bad[k][1]);
  EXPECT(0, "FUSEBOX_NUM_THREADS=3 FUSEBOX_PW_GRAIN=0 FUSEBOX_LOG=0 FUSEBOX_DISABLE_PASSES=cse,peephole "
            "FUSEBOX_STORAGE_CACHE_MB=0 FUSEBOX_VERIFY=1 FUSEBOX_HUGE_PAGES=0",
         "run dead.ir --input x.npy", "out0: float32[4]");
  /* the embedding API returns the same status */
  ck_assert(!setenv("FUSEBOX_NUM_THREADS", "junk", 1));
  fbx_graph *g = parse(G_DEAD_WHERE);
  fbx_executor *ex = NULL;
  EXPECT_ERR(fbx_executor_create(&ex, g, NULL), "FUSEBOX_NUM_THREADS='junk'");
  ck_assert(!unsetenv("FUSEBOX_NUM_THREADS"));
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(env_parsers) {
  int64_t v = 0;
  bool b = false;
  ck_assert(!fbx_env_parse_int("V", "42", 0, 100, &v));
  ck_assert_int_eq(v, 42);
  EXPECT_ERR(fbx_env_parse_int("V", "42x", 0, 100, &v), "V='42x': expected an integer from 0 to 100");
  EXPECT_ERR(fbx_env_parse_int("V", " 4", 0, 100, &v), "V=' 4'");
  EXPECT_ERR(fbx_env_parse_int("V", "101", 0, 100, &v), "V='101'");
  EXPECT_ERR(fbx_env_parse_int("V", "99999999999999999999", 0, 100, &v), "V='99999999999999999999'");
  ck_assert(!fbx_env_parse_bool("B", "1", &b) && b);
  ck_assert(!fbx_env_parse_bool("B", "0", &b) && !b);
  EXPECT_ERR(fbx_env_parse_bool("B", "2", &b), "B='2': expected 0 or 1");
  static const char *const valid[] = {"a", "bb", NULL};
  ck_assert(!fbx_env_parse_list("L", "a,bb", valid, "all"));
  ck_assert(!fbx_env_parse_list("L", "all", valid, "all"));
  EXPECT_ERR(fbx_env_parse_list("L", "a,,bb", valid, "all"), "empty item");
  EXPECT_ERR(fbx_env_parse_list("L", "a,b", valid, NULL), "unknown item 'b' (valid: a, bb)");
}
END_TEST

int main(void) {
  Suite *s = suite_create("robust");
  TCase *tc = tcase_create("issue12");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, verifier_rejects_contradicting_types);
  tcase_add_test(tc, op_outputs_against_schema);
  tcase_add_test(tc, backward_on_tuple_declared_tensor);
  tcase_add_test(tc, schema_output_count_with_position);
  tcase_add_test(tc, iters_do_not_reuse_written_inputs);
  tcase_add_test(tc, bench_none_exact_on_written_inputs);
  tcase_add_test(tc, dead_where_same_under_every_fuser);
  tcase_add_test(tc, size_overflow_is_an_error);
  tcase_add_test(tc, out_of_memory_names_node_and_size);
  tcase_add_test(tc, environment_variables_are_checked);
  tcase_add_test(tc, env_parsers);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
