/* `fusebox explain`: the optimized graph of a relu/mul chain under the `good`
 * test plugin, with its group, guard, fallback, kernels, the reasons for the
 * nodes left outside, and the Graphviz file; with --backward, the kernels
 * (and source) of the forward and backward graphs. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fusebox/tensor.h>

#include "testutil.h"

#define GOOD FBX_TEST_PLUGIN_DIR "/libfbxtest_good.so"

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

/* relu -> mul -> relu fuse (the `good` plugin's chain); sigmoid does not, and
 * the add after it is not in a chain either. */
static const char *G_CHAIN =
    "graph(%x.1 : Float(5, 7),\n"
    "      %y.1 : Float(5, 7)):\n"
    "  %a : Tensor = aten::relu(%x.1)\n"
    "  %b : Tensor = aten::mul(%a, %y.1)\n"
    "  %c : Tensor = aten::relu(%b)\n"
    "  %s : Tensor = aten::sigmoid(%c)\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %t : Tensor = aten::add(%s, %c, %one)\n"
    "  return (%t)\n";

static const char *G_UNTYPED =
    "graph(%x.1 : Tensor):\n"
    "  %a : Tensor = aten::relu(%x.1)\n"
    "  return (%a)\n";

static const char *G_IF =
    "graph(%x.1 : Float(5, 7),\n"
    "      %flag.1 : bool):\n"
    "  %a : Tensor = aten::relu(%x.1)\n"
    "  %b : Tensor = aten::neg(%a)\n"
    "  %r : Tensor = prim::If(%flag.1)\n"
    "    block0():\n"
    "      %c : Tensor = aten::relu(%b)\n"
    "      -> (%c)\n"
    "    block1():\n"
    "      -> (%b)\n"
    "  return (%r)\n";

/* x * y, then tanh: one DifferentiableGraph; its backward (the gradient of
 * tanh is grad * (1 - tanh^2)) has the only `1 - ...` (aten::rsub). */
static const char *G_TANH =
    "graph(%x.1 : Float(4, 6),\n"
    "      %y.1 : Float(4, 6)):\n"
    "  %a : Tensor = aten::mul(%x.1, %y.1)\n"
    "  %b : Tensor = aten::tanh(%a)\n"
    "  return (%b)\n";

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/fbx_explain_XXXXXX");
  ck_assert(mkdtemp(dir));
  write_text("chain.ir", G_CHAIN);
  write_text("untyped.ir", G_UNTYPED);
  write_text("if.ir", G_IF);
  write_text("tanh.ir", G_TANH);
  fbx_tensor *t = NULL;
  int64_t sz[2] = {5, 7};
  ck_assert(!fbx_tensor_zeros(&t, FBX_DTYPE_FLOAT32, 2, sz));
  for (int i = 0; i < 35; i++) ((float *)t->data)[i] = (float)(i % 9) - 4.0f;
  ck_assert(!fbx_npy_write_file(path_in("x.npy"), t));
  for (int i = 0; i < 35; i++) ((float *)t->data)[i] = 0.25f * (float)(i % 5);
  ck_assert(!fbx_npy_write_file(path_in("y.npy"), t));
  fbx_tensor_release(t);
}

static void teardown(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert(system(cmd) == 0);
}

static int explain(const char *args, char **out) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cd %s && %s explain %s", dir, FBX_CLI, args);
  return tu_run(cmd, out);
}

static int count(const char *s, const char *sub) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, sub)); p += strlen(sub)) n++;
  return n;
}

#define HAS(out, s) ck_assert_msg(strstr(out, s), "no \"%s\" in:\n%s", s, out)

START_TEST(chain_with_good) {
  char *out = NULL;
  int rc = explain("chain.ir --fuser " GOOD " --input x.npy --input y=y.npy --source --dot g.dot", &out);
  ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
  /* one group node in the optimized graph (and its `with` section) */
  ck_assert_msg(count(out, "= fusebox::FusionGroup_0[fuser=\"good\"]") == 1, "%s", out);
  ck_assert_msg(!strstr(out, "FusionGroup_1"), "%s", out);
  HAS(out, "with fusebox::FusionGroup_0 = graph(");
  HAS(out, "optimized, 1 group");
  HAS(out, "# guard of group");
  HAS(out, "float32[5, 7]");
  HAS(out, "# fallbacks");
  HAS(out, "fallback of group");
  HAS(out, "on guard failure -> a new function at level 1 (static)");
  HAS(out, "# kernels");
  HAS(out, "1 launch per run");
  HAS(out, "/* pointwise: 3 instructions */"); /* --source */
  HAS(out, "aten::sigmoid");
  HAS(out, "-- not proposed by good");
  HAS(out, "1 prim::Constant node");
  HAS(out, "# wrote g.dot");
  free(out);
  char *dot = tu_read_file(path_in("g.dot"), NULL);
  ck_assert(dot);
  HAS(dot, "digraph fusebox {");
  HAS(dot, "subgraph cluster_0 {");
  HAS(dot, "label=\"fusebox::FusionGroup");
  ck_assert_msg(!strstr(dot, "cluster_1"), "%s", dot);
  HAS(dot, "aten::sigmoid");
  HAS(dot, "-> ret");
  ck_assert_int_eq(count(dot, "{"), count(dot, "}"));
  free(dot);
}
END_TEST

START_TEST(random_inputs_and_no_fuser) {
  char *out = NULL;
  int rc = explain("chain.ir --fuser none --random", &out);
  ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
  HAS(out, "fuser none");
  HAS(out, "-- no fuser (--fuser none)");
  ck_assert_msg(!strstr(out, "FusionGroup"), "%s", out);
  free(out);
  /* --random needs complete types */
  rc = explain("untyped.ir --fuser " GOOD " --random", &out);
  ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
  HAS(out, "--random: input %x.1 : Tensor");
  HAS(out, "--input");
  free(out);
  /* ... or the sizes the message suggests, which explain takes */
  rc = explain("untyped.ir --fuser " GOOD " --random --shape 3,5", &out);
  ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
  HAS(out, "aten::relu");
  free(out);
  ck_assert_int_eq(explain("untyped.ir --shape 3,5", &out), 2);
  HAS(out, "add --random");
  free(out);
}
END_TEST

START_TEST(control_flow_reason) {
  char *out = NULL;
  int rc = explain("if.ir --fuser " GOOD " --input x.npy --input true", &out);
  ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
  HAS(out, "prim::If(%flag.1)  -- control flow");
  HAS(out, "fusebox::FusionGroup_0");
  free(out);
}
END_TEST

/* --backward lists the kernels of the forward and the backward graphs, and
 * prints their source with --source: the backward kernel's loop IR holds the
 * gradient of tanh (RSUB_S: 1 - tanh^2), which no forward kernel computes. */
START_TEST(backward_kernels_and_source) {
  char *out = NULL;
  int rc = explain("tanh.ir --fuser tensorexpr --random --backward --source", &out);
  ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
  HAS(out, "# kernels of the DifferentiableGraphs' forward and backward graphs");
  HAS(out, ", level 0, forward: group ");
  HAS(out, ", level 0, backward: group ");
  const char *bwd = strstr(out, ", level 0, backward: group ");
  const char *fwd = strstr(out, ", level 0, forward: group ");
  ck_assert(bwd && fwd && fwd < bwd);
  /* the forward kernel's source, then the backward's: tanh's gradient only after the backward's label */
  ck_assert_msg(strstr(fwd, "TANH<float32>(MUL_T<float32>(") < bwd, "%s", out);
  HAS(bwd, "RSUB_S<float32>(");
  ck_assert_msg(!strstr(fwd, "RSUB_S") || strstr(fwd, "RSUB_S") > bwd, "%s", out);
  ck_assert_msg(strstr(bwd, "launch per run"), "%s", out);
  free(out);
  /* without --source, the kernels without their source */
  rc = explain("tanh.ir --fuser tensorexpr --random --backward", &out);
  ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
  HAS(out, ", level 0, backward: group ");
  ck_assert_msg(!strstr(out, "RSUB_S"), "%s", out);
  free(out);
  /* no fuser, no kernels: said so */
  rc = explain("tanh.ir --fuser none --random --backward --source", &out);
  ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
  HAS(out, "# kernels of the DifferentiableGraphs' forward and backward graphs\n#   none: no fuser, so no kernels");
  free(out);
}
END_TEST

START_TEST(usage_errors) {
  char *out = NULL;
  ck_assert_int_eq(explain("", &out), 2);
  HAS(out, "no graph given");
  free(out);
  ck_assert_int_eq(explain("chain.ir --bogus", &out), 2);
  HAS(out, "unknown option '--bogus'");
  free(out);
  ck_assert_int_eq(explain("chain.ir --fuser no_such_fuser_xyz --random", &out), 2);
  HAS(out, "no_such_fuser_xyz");
  free(out);
  ck_assert_int_eq(explain("chain.ir --random --input x.npy", &out), 2);
  free(out);
  ck_assert_int_eq(explain("--help", &out), 0);
  HAS(out, "--dot FILE");
  free(out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cli_explain");
  TCase *tc = tcase_create("explain");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, chain_with_good);
  tcase_add_test(tc, random_inputs_and_no_fuser);
  tcase_add_test(tc, control_flow_reason);
  tcase_add_test(tc, backward_kernels_and_source);
  tcase_add_test(tc, usage_errors);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
