/* `fusebox run` end to end: inputs by position and name, scalars, --out files,
 * error messages and exit codes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Run `fusebox run <args>` in the temp dir; returns the exit code, output in *out (free it). */
static int run_cli(const char *args, char **out) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cd %s && %s run %s", dir, FBX_CLI, args);
  return tu_run(cmd, out);
}

#define EXPECT(rc_, args_, ...)                                                              \
  do {                                                                                       \
    char *out_ = NULL;                                                                       \
    int rc = run_cli(args_, &out_);                                                          \
    ck_assert_msg(rc == (rc_), "`run %s` exited %d, wanted %d:\n%s", args_, rc, (rc_), out_); \
    const char *subs_[] = {__VA_ARGS__, NULL};                                               \
    for (int i_ = 0; subs_[i_]; i_++)                                                        \
      ck_assert_msg(strstr(out_, subs_[i_]), "`run %s`: no \"%s\" in:\n%s", args_, subs_[i_], out_); \
    free(out_);                                                                              \
  } while (0)

/* n.1 and x.1 by name; len(x) + n, a float, a bool, and x itself (a tuple flattened) */
static const char *G_MAIN =
    "graph(%x.1 : Float(*, *),\n"
    "      %n.1 : int,\n"
    "      %s.1 : float,\n"
    "      %flag.1 : bool,\n"
    "      %b.1 : Tensor?):\n"
    "  %l : int = aten::len(%x.1)\n"
    "  %m : int = aten::add(%l, %n.1)\n"
    "  %f : float = aten::mul(%s.1, %n.1)\n"
    "  %none : NoneType = prim::Constant()\n"
    "  %isnone : bool = aten::__is__(%b.1, %none)\n"
    "  %c : bool = aten::__and__(%flag.1, %isnone)\n"
    "  %inner : (float, Tensor) = prim::TupleConstruct(%f, %x.1)\n"
    "  %t2 : (int, (float, Tensor)) = prim::TupleConstruct(%m, %inner)\n"
    "  return (%t2, %c)\n";

static const char *G_AMBIG =
    "graph(%x.1 : int,\n"
    "      %x.2 : int):\n"
    "  %y : int = aten::sub(%x.1, %x.2)\n"
    "  return (%y)\n";

static const char *G_RAISE =
    "graph(%n.1 : int):\n"
    "  %m : str = prim::Constant[value=\"n must be positive\"]()\n"
    "  %c : str = prim::Constant[value=\"builtins.ValueError\"]()\n"
    "  %z : int = prim::Constant[value=0]()\n"
    "  %bad : bool = aten::le(%n.1, %z) # r.py:2:7\n"
    "   = prim::If(%bad) # r.py:2:4\n"
    "    block0():\n"
    "       = prim::RaiseException(%m, %c) # r.py:3:8\n"
    "      -> ()\n"
    "    block1():\n"
    "      -> ()\n"
    "  return (%n.1)\n";

/* z = x * w + x, y = x * w; u unused, xi an int tensor */
static const char *G_GRAD =
    "graph(%x.1 : Tensor, %w.1 : Tensor, %u.1 : Tensor, %xi.1 : Tensor):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %y : Tensor = aten::mul(%x.1, %w.1)\n"
    "  %z : Tensor = aten::add(%y, %x.1, %one)\n"
    "  return (%z, %y, %xi.1)\n";

/* exp(w) alone and an integer product stay outside the DifferentiableGraph */
static const char *G_GRAD_OUTSIDE =
    "graph(%x.1 : Tensor, %w.1 : Tensor, %xi.1 : Tensor):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %y : Tensor = aten::mul(%x.1, %w.1)\n"
    "  %z : Tensor = aten::add(%y, %x.1, %one)\n"
    "  %e : Tensor = aten::exp(%w.1)\n"
    "  %q : Tensor = aten::mul(%xi.1, %xi.1)\n"
    "  return (%z, %e, %q)\n";

/* a str input steering a branch, a float scalar, and a Tensor[] input */
static const char *const G_STR =
    "graph(%x.1 : Tensor, %mode : str, %s : float):\n"
    "  %t : str = prim::Constant[value=\"tanh\"]()\n"
    "  %c : bool = aten::eq(%mode, %t)\n"
    "  %y : Tensor = prim::If(%c)\n"
    "    block0():\n"
    "      %a : Tensor = aten::neg(%x.1)\n"
    "      -> (%a)\n"
    "    block1():\n"
    "      %b : Tensor = aten::mul(%x.1, %s)\n"
    "      -> (%b)\n"
    "  return (%y, %mode)\n";
static const char *const G_LIST =
    "graph(%xs : Tensor[]):\n"
    "  %d : int = prim::Constant[value=0]()\n"
    "  %y : Tensor = aten::cat(%xs, %d)\n"
    "  return (%y)\n";

/* outputs (Tensor, Tensor[]): every floating element of the list gets a gradient of ones */
static const char *const G_LIST_OUT =
    "graph(%x.1 : Tensor):\n"
    "  %c : float = prim::Constant[value=2.]()\n"
    "  %y : Tensor = aten::mul(%x.1, %c)\n"
    "  %z : Tensor = aten::mul(%x.1, %x.1)\n"
    "  %l : Tensor[] = prim::ListConstruct(%y, %z)\n"
    "  %t : (Tensor, Tensor[]) = prim::TupleConstruct(%y, %l)\n"
    "  return (%t)\n";

/* what PyTorch 1.13 prints for torch.jit.script(M()) of a Linear + LayerNorm module */
static const char *const G_SCRIPTED_MODULE =
    "graph(%s : __torch__.M,\n"
    "      %x.1 : Tensor):\n"
    "  %n : __torch__.torch.nn.modules.normalization.LayerNorm = prim::GetAttr[name=\"n\"](%s)\n"
    "  %l : __torch__.torch.nn.modules.linear.Linear = prim::GetAttr[name=\"l\"](%s)\n"
    "  %5 : Tensor = prim::CallMethod[name=\"forward\"](%l, %x.1) # /tmp/fr.py:6:30\n"
    "  %6 : Tensor = aten::relu(%5) # /tmp/fr.py:6:19\n"
    "  %7 : Tensor = prim::CallMethod[name=\"forward\"](%n, %6) # /tmp/fr.py:6:15\n"
    "  return (%7)\n";

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/fbx_run_cli_XXXXXX");
  ck_assert(mkdtemp(dir));
  write_text("main.ir", G_MAIN);
  write_text("ambig.ir", G_AMBIG);
  write_text("raise.ir", G_RAISE);
  write_text("grad.ir", G_GRAD);
  write_text("outside.ir", G_GRAD_OUTSIDE);
  write_text("str.ir", G_STR);
  write_text("list.ir", G_LIST);
  write_text("listout.ir", G_LIST_OUT);
  write_text("module.ir", G_SCRIPTED_MODULE);
  write_text("bad.npy", "\x93NUMPY\x01\x00garbage");
  fbx_tensor *t = NULL;
  int64_t sz[2] = {4, 3};
  ck_assert(!fbx_tensor_zeros(&t, FBX_DTYPE_FLOAT32, 2, sz));
  for (int i = 0; i < 12; i++) ((float *)t->data)[i] = (float)i * 0.5f;
  ck_assert(!fbx_npy_write_file(path_in("x.npy"), t));
  fbx_tensor_release(t);
  ck_assert(!fbx_tensor_zeros(&t, FBX_DTYPE_INT64, 2, sz));
  ck_assert(!fbx_npy_write_file(path_in("xi.npy"), t));
  fbx_tensor_release(t);
  ck_assert(!fbx_tensor_zeros(&t, FBX_DTYPE_FLOAT32, 1, sz));
  ck_assert(!fbx_npy_write_file(path_in("x1d.npy"), t));
  fbx_tensor_release(t);
}

static void teardown(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}

START_TEST(positional_and_summary) {
  EXPECT(0, "main.ir --input x.npy --input 3 --input 0.5 --input true --input None", "out0: int 7",
         "out1: float 1.5", "out2: float32[4, 3]", "out3: bool True", "time: ", "median of 1");
}
END_TEST

START_TEST(str_and_tensor_list_inputs) {
  /* issue 18 item 8: a str input was refused in every spelling, Tensor[] too.
   * x = 0, 0.5, ..., 5.5: neg gives max 0, mul by 2 gives max 11. */
  EXPECT(0, "str.ir --input x.npy --input mode=tanh --input s=2", "out0: float32[4, 3] min=-5.5 max=-0 ", "out1: str \"tanh\"");
  EXPECT(0, "str.ir --input x.npy --input \"mode='relu'\" --input s=2", "max=11", "out1: str \"relu\"");
  EXPECT(0, "str.ir --input x.npy --input \"'tanh'\" --input 2", "max=-0 ");
  EXPECT(0, "list.ir --input \"xs=[x.npy, x.npy]\"", "out0: float32[8, 3]");
  EXPECT(1, "list.ir --input \"xs=[x.npy, nope.npy]\"", "nope.npy");
}
END_TEST

START_TEST(scripted_module_says_what_to_do) {
  /* issue 18 item 3: was "prim::GetAttr is not in fusebox's op table" */
  EXPECT(1, "module.ir --input None --input x.npy", "module.ir:3:3: prim::GetAttr reads a module's attribute",
         "takes the weights as inputs");
}
END_TEST

START_TEST(int_shifts) {
  /* issue 18 item 1: aten::__lshift__.int / __rshift__.int were not in the
   * op table. Python's values: 5 << 3 = 40, -5 >> 1 = -3. */
  write_text("shift.ir", "graph(%a : int, %b : int):\n"
                         "  %l : int = aten::__lshift__(%a, %b)\n"
                         "  %r : int = aten::__rshift__(%a, %b)\n"
                         "  return (%l, %r)\n");
  EXPECT(0, "shift.ir --input 5 --input 3", "out0: int 40", "out1: int 0");
  EXPECT(0, "shift.ir --input -5 --input 1", "out0: int -10", "out1: int -3");
  EXPECT(0, "shift.ir --input -5 --input 70", "out0: int 0", "out1: int -1");
  EXPECT(1, "shift.ir --input 5 --input -1", "negative shift count");
}
END_TEST

START_TEST(underscore_ops_differentiate_like_theirs) {
  /* issue 18 item 1: _log_softmax, _softmax and _cast_Double have the
   * gradients of log_softmax, softmax and to (the graph written with the
   * public ops, run by the same interpreter, is the reference) */
  write_text("us.ir", "graph(%x.1 : Tensor, %w : Tensor):\n"
                      "  %d : int = prim::Constant[value=1]()\n"
                      "  %f : bool = prim::Constant[value=0]()\n"
                      "  %s : Tensor = aten::_log_softmax(%x.1, %d, %f)\n"
                      "  %t : Tensor = aten::_softmax(%s, %d, %f)\n"
                      "  %c : Tensor = aten::_cast_Double(%t, %f)\n"
                      "  %y : Tensor = aten::mul(%c, %w)\n"
                      "  return (%y)\n");
  write_text("pub.ir", "graph(%x.1 : Tensor, %w : Tensor):\n"
                       "  %d : int = prim::Constant[value=1]()\n"
                       "  %n : NoneType = prim::Constant()\n"
                       "  %s : Tensor = aten::log_softmax(%x.1, %d, %n)\n"
                       "  %t : Tensor = aten::softmax(%s, %d, %n)\n"
                       "  %dt : int = prim::Constant[value=7]()\n"
                       "  %f : bool = prim::Constant[value=0]()\n"
                       "  %c : Tensor = aten::to(%t, %dt, %f, %f, %n)\n"
                       "  %y : Tensor = aten::mul(%c, %w)\n"
                       "  return (%y)\n");
  EXPECT(0, "us.ir --input x.npy --input w=x.npy --backward --out ua", "wrote 2 gradients");
  EXPECT(0, "pub.ir --input x.npy --input w=x.npy --backward --out ub", "wrote 2 gradients");
  fbx_tensor *a = NULL, *b = NULL;
  ck_assert(!fbx_npy_read_file(&a, path_in("ua/grad_x.1.npy")));
  ck_assert(!fbx_npy_read_file(&b, path_in("ub/grad_x.1.npy")));
  ck_assert_int_eq(a->dtype, FBX_DTYPE_FLOAT32);
  ck_assert_int_eq(a->numel, b->numel);
  for (int64_t i = 0; i < a->numel; i++) ck_assert(((float *)a->data)[i] == ((float *)b->data)[i]);
  fbx_tensor_release(a);
  fbx_tensor_release(b);
  /* native_layer_norm's y has aten::layer_norm's gradient (x is [4, 3]) */
  write_text("nln.ir", "graph(%x.1 : Tensor, %w : Tensor):\n"
                       "  %three : int = prim::Constant[value=3]()\n"
                       "  %eps : float = prim::Constant[value=1.0000000000000001e-05]()\n"
                       "  %n : NoneType = prim::Constant()\n"
                       "  %s : int[] = prim::ListConstruct(%three)\n"
                       "  %y : Tensor, %m : Tensor, %r : Tensor = aten::native_layer_norm(%x.1, %s, %n, %n, %eps)\n"
                       "  %o : Tensor = aten::mul(%y, %w)\n"
                       "  return (%o)\n");
  write_text("ln.ir", "graph(%x.1 : Tensor, %w : Tensor):\n"
                      "  %three : int = prim::Constant[value=3]()\n"
                      "  %eps : float = prim::Constant[value=1.0000000000000001e-05]()\n"
                      "  %n : NoneType = prim::Constant()\n"
                      "  %t : bool = prim::Constant[value=1]()\n"
                      "  %s : int[] = prim::ListConstruct(%three)\n"
                      "  %y : Tensor = aten::layer_norm(%x.1, %s, %n, %n, %eps, %t)\n"
                      "  %o : Tensor = aten::mul(%y, %w)\n"
                      "  return (%o)\n");
  EXPECT(0, "nln.ir --input x.npy --input w=x.npy --backward --out na", "wrote 2 gradients");
  EXPECT(0, "ln.ir --input x.npy --input w=x.npy --backward --out nb", "wrote 2 gradients");
  ck_assert(!fbx_npy_read_file(&a, path_in("na/grad_x.1.npy")));
  ck_assert(!fbx_npy_read_file(&b, path_in("nb/grad_x.1.npy")));
  ck_assert_int_eq(a->numel, b->numel);
  for (int64_t i = 0; i < a->numel; i++) ck_assert(((float *)a->data)[i] == ((float *)b->data)[i]);
  fbx_tensor_release(a);
  fbx_tensor_release(b);
}
END_TEST

START_TEST(by_name) {
  /* full names, base names and a positional one filling the rest in graph order */
  EXPECT(0, "main.ir --input flag=false --input n.1=-2 --input x=x.npy --input s=2 --input b=None",
         "out0: int 2", "out1: float -4", "out3: bool False");
  EXPECT(0, "main.ir --input n=1 --input x.npy --input 2.5 --input true --input b.1=x.npy", "out0: int 5", "out3: bool False");
  EXPECT(1, "main.ir --input y=3 --input x.npy", "no input named 'y'", "x.1 : Float(*, *)");
  EXPECT(1, "main.ir --input n=3 --input n.1=4", "input n.1 is given twice");
}
END_TEST

START_TEST(ambiguous_base_name) {
  EXPECT(1, "ambig.ir --input x=3 --input x.2=1", "input name 'x' is ambiguous", "x.1", "x.2", "full name");
  EXPECT(0, "ambig.ir --input x.2=1 --input x.1=3", "out0: int 2");
}
END_TEST

START_TEST(out_files) {
  EXPECT(0, "main.ir --input x.npy --input 3 --input 0.25 --input true --input None --out res/sub",
         "wrote 4 outputs to res/sub");
  fbx_tensor *t = NULL;
  ck_assert(!fbx_npy_read_file(&t, path_in("res/sub/out0.npy")));
  ck_assert_int_eq(t->dtype, FBX_DTYPE_INT64);
  ck_assert_int_eq(t->ndim, 0);
  ck_assert_int_eq(fbx_tensor_get_i64(t, 0), 7);
  fbx_tensor_release(t);
  ck_assert(!fbx_npy_read_file(&t, path_in("res/sub/out1.npy")));
  ck_assert_int_eq(t->dtype, FBX_DTYPE_FLOAT64);
  ck_assert_int_eq(t->ndim, 0);
  ck_assert(fbx_tensor_get_f64(t, 0) == 0.75);
  fbx_tensor_release(t);
  ck_assert(!fbx_npy_read_file(&t, path_in("res/sub/out2.npy")));
  ck_assert_int_eq(t->dtype, FBX_DTYPE_FLOAT32);
  ck_assert_int_eq(t->ndim, 2);
  ck_assert(fbx_tensor_get_f64(t, 11) == 5.5);
  fbx_tensor_release(t);
  ck_assert(!fbx_npy_read_file(&t, path_in("res/sub/out3.npy")));
  ck_assert_int_eq(t->dtype, FBX_DTYPE_BOOL);
  ck_assert_int_eq(t->ndim, 0);
  ck_assert_int_eq(fbx_tensor_get_i64(t, 0), 1);
  fbx_tensor_release(t);
  ck_assert(access(path_in("res/sub/out4.npy"), F_OK) != 0);
}
END_TEST

static void expect_grad(const char *file, int i, double want) {
  fbx_tensor *t = NULL;
  fbx_status *st = fbx_npy_read_file(&t, path_in(file));
  ck_assert_msg(!st, "%s: %s", file, fbx_status_message(st));
  ck_assert_int_eq(t->dtype, FBX_DTYPE_FLOAT32);
  ck_assert_int_eq(t->ndim, 2);
  double got = fbx_tensor_get_f64(t, i);
  fbx_tensor_release(t);
  ck_assert_msg(got == want, "%s[%d]: %g, expected %g", file, i, got, want);
}

START_TEST(backward_files) {
  const char *in = "grad.ir --input x.npy --input w.1=x.npy --input u.1=x.npy --input xi.npy --backward";
  char args[1024];
  snprintf(args, sizeof args, "%s --out g1", in);
  EXPECT(0, args, "wrote 3 outputs to g1", "wrote 3 gradients to g1");
  for (int i = 0; i < 12; i++) { /* ones for z and y: 2w + 1 and 2x */
    double x = i * 0.5;
    expect_grad("g1/grad_x.1.npy", i, 2 * x + 1);
    expect_grad("g1/grad_w.1.npy", i, 2 * x);
    expect_grad("g1/grad_u.1.npy", i, 0); /* no gradient reaches it: zeros */
  }
  ck_assert(access(path_in("g1/grad_xi.1.npy"), F_OK) != 0);
  /* y's gradient from a file: zeros */
  fbx_tensor *t = NULL;
  int64_t sz[2] = {4, 3};
  ck_assert(!fbx_tensor_zeros(&t, FBX_DTYPE_FLOAT32, 2, sz));
  ck_assert(!fbx_npy_write_file(path_in("zeros.npy"), t));
  fbx_tensor_release(t);
  snprintf(args, sizeof args, "%s --grad-output 1=zeros.npy --out g2", in);
  EXPECT(0, args, "wrote 3 gradients to g2");
  for (int i = 0; i < 12; i++) {
    expect_grad("g2/grad_x.1.npy", i, i * 0.5 + 1);
    expect_grad("g2/grad_w.1.npy", i, i * 0.5);
  }
  /* without I= the first output without a gradient; summary lines without --out */
  snprintf(args, sizeof args, "%s --grad-output zeros.npy", in);
  EXPECT(0, args, "grad_x.1: float32[4, 3]", "grad_u.1: float32[4, 3]", "(no gradient reaches it: zeros)",
         "per forward+backward");
}
END_TEST

/* A Tensor[] output's elements get gradients of ones too (they were
 * dropped: a list was no floating tensor). d/dx of 2x (twice: the tuple's
 * first element and the list's) + x^2 = 4 + 2x. */
START_TEST(backward_list_outputs) {
  EXPECT(0, "listout.ir --input x.npy --backward --out gl", "wrote 1 gradient to gl");
  for (int i = 0; i < 12; i++) expect_grad("gl/grad_x.1.npy", i, 4 + 2 * (i * 0.5));
}
END_TEST

/* An import directory's weights and graph must stay inside it: a '..' path
 * and a symbolic link that resolves outside are refused (the same weight
 * file, copied in, runs). */
START_TEST(import_dir_stays_inside) {
  ck_assert_int_eq(mkdir(path_in("imp"), 0777), 0);
  ck_assert_int_eq(mkdir(path_in("imp/weights"), 0777), 0);
  write_text("imp/g.ir", "graph(%x : Tensor, %w : Tensor):\n  %y : Tensor = aten::mul(%x, %w)\n  return (%y)\n");
  write_text("imp/manifest.txt", "fusebox-import 1\ngraph g.ir\ninput x\nweight w weights/w.npy Float [4, 3]\n");
  ck_assert_int_eq(symlink(path_in("x.npy"), path_in("imp/weights/w.npy")), 0);
  EXPECT(1, "imp --input x.npy", "manifest.txt:4: weight file weights/w.npy resolves outside the directory");
  ck_assert_int_eq(unlink(path_in("imp/weights/w.npy")), 0);
  fbx_tensor *t = NULL;
  ck_assert(!fbx_npy_read_file(&t, path_in("x.npy")));
  ck_assert(!fbx_npy_write_file(path_in("imp/weights/w.npy"), t));
  fbx_tensor_release(t);
  EXPECT(0, "imp --input x.npy", "out0: float32[4, 3]");
  write_text("g.ir", "graph(%x : Tensor, %w : Tensor):\n  %y : Tensor = aten::mul(%x, %w)\n  return (%y)\n");
  ck_assert_int_eq(symlink(path_in("g.ir"), path_in("imp/g2.ir")), 0);
  write_text("imp/manifest.txt", "fusebox-import 1\ngraph g2.ir\nweight w weights/w.npy Float [4, 3]\n");
  EXPECT(1, "imp --input x.npy", "manifest.txt:2: graph file g2.ir resolves outside the directory");
  write_text("imp/manifest.txt", "fusebox-import 1\ngraph g.ir\nweight w weights/../../x.npy Float [4, 3]\n");
  EXPECT(1, "imp --input x.npy", "manifest.txt:3: expected 'weight NAME FILE ...' with FILE inside the directory");
}
END_TEST

/* explain --backward shows the gradient plan only, and why nodes stay out. */
START_TEST(explain_backward) {
  char cmd[4096], *out = NULL;
  snprintf(cmd, sizeof cmd, "cd %s && %s explain outside.ir --input x.npy --input x.npy --input xi.npy --backward",
           dir, FBX_CLI);
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
  const char *want[] = {"# gradient mode only: the plain (no-grad) path was not used",
                        ": 1 DifferentiableGraph (",
                        "# nodes outside DifferentiableGraphs (run on the eager tape), and why:",
                        "%e = aten::exp: its region is below the minimum size",
                        "%q = aten::mul: needs no gradient",
                        "## backward (executor with fuser none)",
                        NULL};
  for (int i = 0; want[i]; i++) ck_assert_msg(strstr(out, want[i]), "no \"%s\" in:\n%s", want[i], out);
  ck_assert_msg(!strstr(out, "profiling (not optimized yet)") && !strstr(out, "no fuser (--fuser none)"), "%s", out);
  ck_assert_msg(!strstr(out, "%z = aten::add:") && !strstr(out, "%y = aten::mul:"), "%s", out);
  free(out);
  snprintf(cmd, sizeof cmd, "cd %s && %s explain outside.ir --random --backward --dot g.dot", dir, FBX_CLI);
  rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 2 && strstr(out, "--dot draws the plain function"), "exit %d:\n%s", rc, out);
  free(out);
}
END_TEST

START_TEST(backward_errors) {
  const char *in = "grad.ir --input x.npy --input w.1=x.npy --input u.1=x.npy --input xi.npy";
  char args[1024];
  snprintf(args, sizeof args, "%s --grad-output x.npy", in);
  EXPECT(2, args, "--grad-output needs --backward");
  snprintf(args, sizeof args, "%s --backward --grad-output 5=x.npy", in);
  EXPECT(2, args, "--grad-output 5=x.npy: the graph has 3 outputs (flat indices 0..2)");
  snprintf(args, sizeof args, "%s --backward --grad-output 2=x.npy", in);
  EXPECT(2, args, "--grad-output x.npy: output 2 is", "not a floating-point tensor");
  snprintf(args, sizeof args, "%s --backward --grad-output 0=x1d.npy", in);
  EXPECT(2, args, "--grad-output x1d.npy: float32[4] where output 0 is float32[4, 3]");
  snprintf(args, sizeof args, "%s --backward --grad-output 0=xi.npy", in);
  EXPECT(2, args, "--grad-output xi.npy: int64[4, 3] where output 0 is float32[4, 3]");
  snprintf(args, sizeof args, "%s --backward --grad-output 0=missing.npy", in);
  EXPECT(2, args, "--grad-output missing.npy");
  snprintf(args, sizeof args, "%s --backward --grad-output 0=x.npy --grad-output 0=x.npy", in);
  EXPECT(2, args, "output 0 already has a gradient");
}
END_TEST

START_TEST(input_errors) {
  EXPECT(1, "main.ir --input bad.npy --input 3 --input 0.5 --input true --input None", "bad.npy");
  EXPECT(1, "main.ir --input missing.npy --input 3 --input 0.5 --input true --input None", "missing.npy");
  EXPECT(1, "main.ir --input x.npy --input 3", "the graph takes 5 inputs", "2 given", "missing: s.1 flag.1 b.1");
  EXPECT(1, "main.ir -i x.npy -i 3 -i 0.5 -i true -i None -i 7", "the graph takes 5 inputs", "6 given");
  EXPECT(1, "main.ir --input xi.npy --input 3 --input 0.5 --input true --input None", "input 0 (%x.1",
         "dtype int64", "float32");
  EXPECT(1, "main.ir --input x1d.npy --input 3 --input 0.5 --input true --input None", "input 0",
         "1 dims where the graph says 2");
  EXPECT(1, "main.ir --input x.npy --input 3.5 --input 0.5 --input true --input None", "input 1 (%n.1 : int)");
  EXPECT(1, "main.ir --input x.npy --input hello --input 0.5 --input true --input None", "input n.1", "'hello'");
}
END_TEST

START_TEST(exit_codes) {
  EXPECT(0, "--help", "usage: fusebox run");
  EXPECT(2, "", "no graph given");
  EXPECT(2, "main.ir --frobnicate", "unknown option '--frobnicate'");
  EXPECT(2, "main.ir --iters 0", "--iters");
  EXPECT(2, "main.ir --input", "--input needs a value");
  EXPECT(2, "main.ir --fuser frobnicate", "cannot be used", "unknown fuser 'frobnicate'");
  EXPECT(0, "main.ir --fuser none --iters 5 --seed 7 -i x.npy -i 3 -i 0.5 -i true -i None", "median of 5");
  EXPECT(1, "nope.ir", "nope.ir");
  EXPECT(1, "raise.ir --input 0", "r.py:3:8: the graph raised builtins.ValueError: n must be positive",
         "in node:");
  EXPECT(0, "raise.ir --input 4", "out0: int 4");
}
END_TEST

START_TEST(fuser_from_environment) {
  char *out = NULL;
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cd %s && FUSEBOX_FUSER=no_such_fuser %s run raise.ir --input 4", dir, FBX_CLI);
  ck_assert_int_eq(tu_run(cmd, &out), 2);
  ck_assert_msg(strstr(out, "'no_such_fuser'") && strstr(out, "FUSEBOX_FUSER"), "%s", out);
  free(out);
  snprintf(cmd, sizeof cmd, "cd %s && FUSEBOX_FUSER=legacy %s run raise.ir --input 4", dir, FBX_CLI);
  ck_assert_int_eq(tu_run(cmd, &out), 0);
  ck_assert_msg(strstr(out, "legacy"), "%s", out);
  free(out);
  snprintf(cmd, sizeof cmd, "cd %s && FUSEBOX_FUSER=none %s run raise.ir --input 4", dir, FBX_CLI);
  ck_assert_int_eq(tu_run(cmd, &out), 0);
  free(out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("run_cli");
  TCase *tc = tcase_create("cli");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, positional_and_summary);
  tcase_add_test(tc, by_name);
  tcase_add_test(tc, ambiguous_base_name);
  tcase_add_test(tc, out_files);
  tcase_add_test(tc, input_errors);
  tcase_add_test(tc, backward_files);
  tcase_add_test(tc, backward_list_outputs);
  tcase_add_test(tc, import_dir_stays_inside);
  tcase_add_test(tc, backward_errors);
  tcase_add_test(tc, explain_backward);
  tcase_add_test(tc, exit_codes);
  tcase_add_test(tc, fuser_from_environment);
  tcase_add_test(tc, str_and_tensor_list_inputs);
  tcase_add_test(tc, scripted_module_says_what_to_do);
  tcase_add_test(tc, int_shifts);
  tcase_add_test(tc, underscore_ops_differentiate_like_theirs);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
