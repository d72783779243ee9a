/* The inline pass (issue 18, item 4): prim::CallFunction of a known
 * torch.nn.functional function runs as the aten op it calls. The call graph
 * is the text PyTorch 1.13 printed for
 *   F.layer_norm(x, [4], w, b, 1e-5) + F.gelu(x) + F.softmax(x, 1) + F.dropout(x, 0.1, False)
 * with inlining switched off; the expected values are the same function
 * written with aten ops by hand and run by the reference interpreter, and
 * PyTorch's own output for one input (printed by torch 1.13, copied here). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fusebox/tensor.h>

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

static int cli(const char *args, char **out) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "cd %s && %s %s", dir, FBX_CLI, args);
  return tu_run(cmd, out);
}

static const char *const G_CALLS =
    "graph(%x.1 : Tensor,\n"
    "      %w.1 : Tensor,\n"
    "      %b.1 : Tensor):\n"
    "  %28 : Function = prim::Constant[name=\"dropout\"]()\n"
    "  %26 : bool = prim::Constant[value=0]() # /tmp/cf.py:5:94\n"
    "  %20 : Function = prim::Constant[name=\"softmax\"]()\n"
    "  %19 : NoneType = prim::Constant()\n"
    "  %18 : int = prim::Constant[value=3]()\n"
    "  %12 : str = prim::Constant[value=\"none\"]()\n"
    "  %9 : Function = prim::Constant[name=\"layer_norm\"]()\n"
    "  %4 : int = prim::Constant[value=4]() # /tmp/cf.py:5:28\n"
    "  %8 : float = prim::Constant[value=1.0000000000000001e-05]() # /tmp/cf.py:5:38\n"
    "  %17 : int = prim::Constant[value=1]() # /tmp/cf.py:5:71\n"
    "  %25 : float = prim::Constant[value=0.10000000000000001]() # /tmp/cf.py:5:89\n"
    "  %5 : int[] = prim::ListConstruct(%4)\n"
    "  %10 : Tensor = prim::CallFunction(%9, %x.1, %5, %w.1, %b.1, %8) # /tmp/cf.py:5:11\n"
    "  %13 : Tensor = aten::gelu(%x.1, %12) # /tmp/cf.py:5:46\n"
    "  %15 : Tensor = aten::add(%10, %13, %17) # /tmp/cf.py:5:11\n"
    "  %21 : Tensor = prim::CallFunction(%20, %x.1, %17, %18, %19) # /tmp/cf.py:5:58\n"
    "  %23 : Tensor = aten::add(%15, %21, %17) # /tmp/cf.py:5:11\n"
    "  %29 : Tensor = prim::CallFunction(%28, %x.1, %25, %26, %26) # /tmp/cf.py:5:76\n"
    "  %31 : Tensor = aten::add(%23, %29, %17) # /tmp/cf.py:5:11\n"
    "  return (%31)\n";

static const char *const G_BY_HAND =
    "graph(%x : Tensor, %w : Tensor, %b : Tensor):\n"
    "  %f : bool = prim::Constant[value=0]()\n"
    "  %t : bool = prim::Constant[value=1]()\n"
    "  %none : NoneType = prim::Constant()\n"
    "  %s : str = prim::Constant[value=\"none\"]()\n"
    "  %four : int = prim::Constant[value=4]()\n"
    "  %eps : float = prim::Constant[value=1.0000000000000001e-05]()\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %p : float = prim::Constant[value=0.10000000000000001]()\n"
    "  %shape : int[] = prim::ListConstruct(%four)\n"
    "  %ln : Tensor = aten::layer_norm(%x, %shape, %w, %b, %eps, %t)\n"
    "  %g : Tensor = aten::gelu(%x, %s)\n"
    "  %a : Tensor = aten::add(%ln, %g, %one)\n"
    "  %sm : Tensor = aten::softmax(%x, %one, %none)\n"
    "  %a2 : Tensor = aten::add(%a, %sm, %one)\n"
    "  %d : Tensor = aten::dropout(%x, %p, %f)\n"
    "  %a3 : Tensor = aten::add(%a2, %d, %one)\n"
    "  return (%a3)\n";

/* relu with inplace from an input: the call cannot be decided here */
static const char *const G_RUNTIME_INPLACE =
    "graph(%x.1 : Tensor, %ip : bool):\n"
    "  %f : Function = prim::Constant[name=\"relu\"]()\n"
    "  %y : Tensor = prim::CallFunction(%f, %x.1, %ip)\n"
    "  return (%y)\n";
static const char *const G_UNKNOWN =
    "graph(%x.1 : Tensor):\n"
    "  %f : Function = prim::Constant[name=\"my_helper\"]()\n"
    "  %y : Tensor = prim::CallFunction(%f, %x.1)\n"
    "  return (%y)\n";
/* mse_loss with reduction 'sum', relu6 in place, embedding with padding_idx None */
static const char *const G_MORE =
    "graph(%x.1 : Tensor, %y.1 : Tensor, %wt : Tensor, %idx : Tensor):\n"
    "  %mse : Function = prim::Constant[name=\"mse_loss\"]()\n"
    "  %r6 : Function = prim::Constant[name=\"relu6\"]()\n"
    "  %emb : Function = prim::Constant[name=\"embedding\"]()\n"
    "  %none : NoneType = prim::Constant()\n"
    "  %sum : str = prim::Constant[value=\"sum\"]()\n"
    "  %t : bool = prim::Constant[value=1]()\n"
    "  %f : bool = prim::Constant[value=0]()\n"
    "  %two : float = prim::Constant[value=2.]()\n"
    "  %l : Tensor = prim::CallFunction(%mse, %x.1, %y.1, %none, %none, %sum)\n"
    "  %c : Tensor = aten::clone(%x.1, %none)\n"
    "  %r : Tensor = prim::CallFunction(%r6, %c, %t)\n"
    "  %e : Tensor = prim::CallFunction(%emb, %idx, %wt, %none, %none, %two, %f, %f)\n"
    "  return (%l, %r, %e)\n";

/* triplet_margin_loss, unfold and fold as PyTorch prints their calls (defaults filled in) */
static const char *const G_LOSS_FOLD =
    "graph(%a.1 : Tensor, %img.1 : Tensor):\n"
    "  %tml : Function = prim::Constant[name=\"triplet_margin_loss\"]()\n"
    "  %unf : Function = prim::Constant[name=\"unfold\"]()\n"
    "  %fld : Function = prim::Constant[name=\"fold\"]()\n"
    "  %none : NoneType = prim::Constant()\n"
    "  %mean : str = prim::Constant[value=\"mean\"]()\n"
    "  %m : float = prim::Constant[value=1.]()\n"
    "  %p : float = prim::Constant[value=2.]()\n"
    "  %eps : float = prim::Constant[value=9.9999999999999995e-07]()\n"
    "  %f : bool = prim::Constant[value=0]()\n"
    "  %zero : int = prim::Constant[value=0]()\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %two : int = prim::Constant[value=2]()\n"
    "  %four : int = prim::Constant[value=4]()\n"
    "  %os : int[] = prim::ListConstruct(%four, %four)\n"
    "  %l : Tensor = prim::CallFunction(%tml, %a.1, %a.1, %a.1, %m, %p, %eps, %f, %none, %none, %mean)\n"
    "  %u : Tensor = prim::CallFunction(%unf, %img.1, %two, %one, %zero, %two)\n"
    "  %y : Tensor = prim::CallFunction(%fld, %u, %os, %two, %one, %zero, %two)\n"
    "  return (%l, %y)\n";

static void write_f32(const char *name, int rank, const int64_t *sizes, const float *v) {
  fbx_tensor *t = NULL;
  ck_assert(!fbx_tensor_zeros(&t, FBX_DTYPE_FLOAT32, rank, sizes));
  memcpy(t->data, v, (size_t)t->numel * sizeof(float));
  ck_assert(!fbx_npy_write_file(path_in(name), t));
  fbx_tensor_release(t);
}

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/fbx_inline_XXXXXX");
  ck_assert(mkdtemp(dir));
  write_text("calls.ir", G_CALLS);
  write_text("hand.ir", G_BY_HAND);
  write_text("rtinplace.ir", G_RUNTIME_INPLACE);
  write_text("unknown.ir", G_UNKNOWN);
  write_text("more.ir", G_MORE);
  write_text("lossfold.ir", G_LOSS_FOLD);
  /* torch.manual_seed(0); x = torch.randn(3, 4); w = torch.randn(4); b = torch.randn(4) */
  const float x[12] = {1.5409961f,   -0.2934289f,  -2.1787894f,  0.56843126f, -1.0845224f,  -1.3985955f,
                       0.40334684f,  0.83802634f, -0.71925759f, -0.40334353f, -0.59663534f, 0.18203649f};
  const float w[4] = {-0.85667461f, 1.1006042f, -1.0711874f, 0.12270124f};
  const float b[4] = {-0.5663175f, 0.37311465f, -0.89199531f, -1.5091077f};
  int64_t s34[2] = {3, 4}, s4[1] = {4};
  write_f32("x.npy", 2, s34, x);
  write_f32("w.npy", 1, s4, w);
  write_f32("b.npy", 1, s4, b);
  fbx_tensor *t = NULL;
  int64_t s2[1] = {2};
  ck_assert(!fbx_tensor_zeros(&t, FBX_DTYPE_INT64, 1, s2));
  ((int64_t *)t->data)[0] = 2;
  ((int64_t *)t->data)[1] = 0;
  ck_assert(!fbx_npy_write_file(path_in("idx.npy"), t));
  fbx_tensor_release(t);
}

static void teardown(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}

static fbx_tensor *read_npy(const char *name) {
  fbx_tensor *t = NULL;
  ck_assert_msg(!fbx_npy_read_file(&t, path_in(name)), "%s", name);
  return t;
}

START_TEST(calls_become_ops) {
  char *out = NULL;
  ck_assert_int_eq(cli("print calls.ir --passes default --verify", &out), 0);
  ck_assert_msg(!strstr(out, "prim::CallFunction") && !strstr(out, "Function ="), "%s", out);
  ck_assert_msg(strstr(out, "aten::layer_norm(%x.1, %5, %w.1, %b.1, %8, %"), "%s", out);
  ck_assert_msg(strstr(out, "= aten::softmax(%x.1, %17, %19) # /tmp/cf.py:5:58"), "%s", out);
  ck_assert_msg(strstr(out, "= aten::dropout(%x.1, %25, %26) # /tmp/cf.py:5:76"), "%s", out);
  free(out);
}
END_TEST

START_TEST(same_values_as_by_hand_and_pytorch) {
  char *out = NULL;
  int rc = cli("run calls.ir --input x.npy --input w.npy --input b.npy --out c", &out);
  ck_assert_msg(rc == 0, "%s", out);
  free(out);
  rc = cli("run hand.ir --input x.npy --input w.npy --input b.npy --out h", &out);
  ck_assert_msg(rc == 0, "%s", out);
  free(out);
  fbx_tensor *c = read_npy("c/out0.npy"), *h = read_npy("h/out0.npy");
  ck_assert_int_eq(c->numel, 12);
  /* torch 1.13's g3(x, w, b), first row */
  const float torch_row0[4] = {2.0399e+00f, -9.3895e-02f, -1.4536e+00f, -2.3304e-01f};
  for (int i = 0; i < 12; i++) {
    float a = ((float *)c->data)[i], e = ((float *)h->data)[i];
    ck_assert_msg(a == e, "element %d: %.9g by call, %.9g by hand", i, a, e);
    if (i < 4) ck_assert_msg(fabsf(a - torch_row0[i]) <= 1e-4f * (1 + fabsf(a)), "element %d: %g vs torch %g", i, a,
                             torch_row0[i]);
  }
  fbx_tensor_release(c);
  fbx_tensor_release(h);
}
END_TEST

START_TEST(more_functions) {
  char *out = NULL;
  int rc = cli("run more.ir --input x.npy --input y=x.npy --input wt=x.npy --input idx=idx.npy --out m", &out);
  ck_assert_msg(rc == 0, "%s", out);
  free(out);
  ck_assert_int_eq(cli("print more.ir --passes default", &out), 0);
  ck_assert_msg(strstr(out, "aten::mse_loss(") && strstr(out, "aten::hardtanh_(") && strstr(out, "aten::embedding("),
                "%s", out);
  free(out);
  fbx_tensor *l = read_npy("m/out0.npy"), *r = read_npy("m/out1.npy"), *e = read_npy("m/out2.npy"),
             *x = read_npy("x.npy");
  ck_assert_int_eq(l->numel, 1);
  ck_assert(((float *)l->data)[0] == 0.0f); /* sum of (x - x)^2 */
  for (int i = 0; i < 12; i++) {
    float xv = ((float *)x->data)[i], want = xv < 0 ? 0 : xv > 6 ? 6 : xv;
    ck_assert(((float *)r->data)[i] == want);
  }
  /* rows 2 and 0 of the weight */
  ck_assert_int_eq(e->numel, 8);
  for (int j = 0; j < 4; j++) {
    ck_assert(((float *)e->data)[j] == ((float *)x->data)[8 + j]);
    ck_assert(((float *)e->data)[4 + j] == ((float *)x->data)[j]);
  }
  fbx_tensor_release(l), fbx_tensor_release(r), fbx_tensor_release(e), fbx_tensor_release(x);
}
END_TEST

/* fold(unfold(img)) with 2x2 blocks at stride 2 is img; the triplet loss of
 * equal anchor, positive and negative is the margin. */
START_TEST(loss_and_fold_functions) {
  char *out = NULL;
  ck_assert_int_eq(cli("print lossfold.ir --passes default", &out), 0);
  ck_assert_msg(strstr(out, "aten::triplet_margin_loss(") && strstr(out, "aten::im2col(") && strstr(out, "aten::col2im(") &&
                    !strstr(out, "prim::CallFunction"),
                "%s", out);
  free(out);
  float img[16];
  for (int i = 0; i < 16; i++) img[i] = (float)i * 0.25f - 1.5f;
  write_f32("img.npy", 4, (int64_t[]){1, 1, 4, 4}, img);
  int rc = cli("run lossfold.ir --input x.npy --input img.npy --out lf", &out);
  ck_assert_msg(rc == 0, "%s", out);
  free(out);
  fbx_tensor *l = read_npy("lf/out0.npy"), *y = read_npy("lf/out1.npy");
  ck_assert_int_eq(l->numel, 1);
  ck_assert(((float *)l->data)[0] == 1.0f);
  ck_assert_int_eq(y->numel, 16);
  for (int i = 0; i < 16; i++) ck_assert(((float *)y->data)[i] == img[i]);
  fbx_tensor_release(l), fbx_tensor_release(y);
}
END_TEST

START_TEST(calls_that_stay_calls) {
  char *out = NULL;
  ck_assert_int_eq(cli("run rtinplace.ir --input x.npy --input true", &out), 1);
  ck_assert_msg(strstr(out, "prim::CallFunction of 'relu' is not run") && strstr(out, "FUSEBOX_LOG=passes"), "%s", out);
  free(out);
  ck_assert_int_eq(cli("run unknown.ir --input x.npy", &out), 1);
  ck_assert_msg(strstr(out, "prim::CallFunction of 'my_helper'") && strstr(out, "does not know") &&
                    strstr(out, "inlined_graph"),
                "%s", out);
  free(out);
  /* the inline pass can be switched off like the others */
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cd %s && FUSEBOX_DISABLE_PASSES=inline %s run calls.ir --input x.npy --input w.npy "
           "--input b.npy", dir, FBX_CLI);
  ck_assert_int_eq(tu_run(cmd, &out), 1);
  ck_assert_msg(strstr(out, "prim::CallFunction of 'layer_norm'") && strstr(out, "pass is disabled"), "%s", out);
  free(out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("pass_inline");
  TCase *tc = tcase_create("inline");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, calls_become_ops);
  tcase_add_test(tc, same_values_as_by_hand_and_pytorch);
  tcase_add_test(tc, more_functions);
  tcase_add_test(tc, loss_and_fold_functions);
  tcase_add_test(tc, calls_that_stay_calls);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
