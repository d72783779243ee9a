/* Compiling and running fusion groups through plugins: results against the
 * reference interpreter on the same subgraph, the in-memory kernel cache,
 * every failure path of the test plugins (statuses, never a crash), the
 * counters, concurrent runs, and allocation failures. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fusebox/fuser_abi.h>

#include "base/alloc.h"
#include "exec/interp.h"
#include "host/host.h"
#include "ir/text.h"
#include "testutil.h"

#define ASSERT_HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "expected '%s' in:\n%s", (sub), (s))

static const char *plug(const char *name) {
  static char buf[4][512];
  static int next;
  char *p = buf[next++ & 3];
  snprintf(p, 512, "%s/libfbxtest_%s.so", FBX_TEST_PLUGIN_DIR, name);
  return p;
}

static fbx_fuser *load(const char *name) {
  fbx_fuser *f = NULL;
  fbx_status *st = fbx_fuser_load(&f, plug(name));
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  return f;
}

static const char *GRAPH =
    "graph(%x : Float(*, *, requires_grad=0, device=cpu),\n"
    "      %y : Float(*, *, requires_grad=0, device=cpu),\n"
    "      %k : float):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %two : float = prim::Constant[value=2.5]()\n"
    "  %a : Tensor = aten::mul(%x, %y)\n"
    "  %b : Tensor = aten::add(%a, %x, %two)\n"
    "  %c : Tensor = aten::relu(%b)\n"
    "  %d : Tensor = aten::mul(%c, %k)\n"
    "  %s : Tensor = aten::sigmoid(%d)\n"
    "  %e : Tensor = aten::neg(%s)\n"
    "  %f : Tensor = aten::add(%e, %c, %one)\n"
    "  return (%d, %f)\n";

/* The graph partitioned by f; *g0 / *g1 are its two groups. */
static fbx_graph *partitioned(fbx_fuser *f, fbx_node **g0, fbx_node **g1) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, GRAPH, strlen(GRAPH), "kernel.ir");
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  fbx_partition_report rep = {0};
  st = fbx_fuser_partition(f, g, &rep);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  ck_assert_int_eq(rep.accepted, 2);
  fbx_node *groups[2] = {NULL, NULL};
  int n = 0;
  for (fbx_node *x = fbx_block_first(g->block); x; x = x->next)
    if (x->kind == FBX_SYM_fusebox_FusionGroup) groups[n++] = x;
  ck_assert_int_eq(n, 2);
  *g0 = groups[0];
  if (g1) *g1 = groups[1];
  return g;
}

static _Thread_local uint64_t rng = 12345;
static fbx_tensor *randn(fbx_dtype dt, int64_t r, int64_t c) {
  int64_t sizes[2] = {r, c};
  fbx_tensor *t = NULL;
  ck_assert_ptr_null(fbx_tensor_empty(&t, dt, 2, sizes));
  for (int64_t i = 0; i < t->numel; i++) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    fbx_tensor_set_f64(t, i, (double)(int64_t)(rng >> 40) / (double)(1 << 22) - 2.0);
  }
  return t;
}

/* Group 0's inputs: x, y (float32 r x c) and k (float). */
typedef struct inputs {
  fbx_ivalue v[3];
} inputs;
static inputs make_inputs(fbx_dtype dt, int64_t r, int64_t c, double k) {
  inputs in = {{fbx_iv_tensor(randn(dt, r, c)), fbx_iv_tensor(randn(dt, r, c)), fbx_iv_float(k)}};
  return in;
}
static void free_inputs(inputs *in) {
  for (int i = 0; i < 3; i++) fbx_iv_release(&in->v[i]);
}

/* Compare a kernel's outputs with the interpreter's on the group's subgraph. */
static void check_against_interp(const fbx_node *group, const fbx_ivalue *in, int nin, const fbx_ivalue *out, int nout) {
  fbx_interp *it = NULL;
  fbx_status *st = fbx_interp_create(&it, fbx_node_subgraph(group));
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  ck_assert_int_eq(fbx_interp_noutputs(it), nout);
  fbx_ivalue ref[4];
  st = fbx_interp_run(it, in, nin, ref, NULL);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  for (int o = 0; o < nout; o++) {
    ck_assert_int_eq(out[o].kind, FBX_IV_TENSOR);
    const fbx_tensor *a = out[o].u.t, *b = ref[o].u.t;
    ck_assert_int_eq(a->dtype, b->dtype);
    ck_assert(fbx_tensor_same_shape(a, b));
    for (int64_t i = 0; i < a->numel; i++) {
      double x = fbx_tensor_get_f64(a, i), y = fbx_tensor_get_f64(b, i);
      ck_assert_msg(fabs(x - y) <= 1e-6 * (1 + fabs(y)), "output %d[%lld]: %g vs %g", o, (long long)i, x, y);
    }
    fbx_iv_release(&ref[o]);
  }
  fbx_interp_destroy(it);
}

START_TEST(compile_and_run_matches_interpreter) {
  fbx_fuser *f = load("good");
  fbx_node *g0, *g1;
  fbx_graph *g = partitioned(f, &g0, &g1);
  ck_assert_int_eq(g0->ninputs, 3); /* x, y, k: the constants are inside */
  inputs in = make_inputs(FBX_DTYPE_FLOAT32, 4, 8, 0.75);
  fbx_fkernel *k = NULL;
  fbx_status *st = fbx_fuser_compile(f, g0, in.v, 3, &k);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  ck_assert_int_eq(fbx_fkernel_launches(k), 1);
  ASSERT_HAS(fbx_fkernel_source(k), "pointwise: 4 instructions");
  fbx_ivalue out[2];
  bool declined = true;
  st = fbx_fkernel_run(k, in.v, 3, out, 2, &declined);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  ck_assert(!declined);
  check_against_interp(g0, in.v, 3, out, 2);

  /* Group 1 takes group 0's outputs (s = sigmoid(d) computed by hand here is not
   * needed: any float32 tensors of one shape will do). */
  fbx_ivalue in1[2] = {out[0], out[1]};
  fbx_fkernel *k1 = NULL;
  st = fbx_fuser_compile(f, g1, in1, 2, &k1);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  ck_assert_ptr_ne(k1, k);
  fbx_ivalue out1;
  ck_assert_ptr_null(fbx_fkernel_run(k1, in1, 2, &out1, 1, NULL));
  check_against_interp(g1, in1, 2, &out1, 1);
  fbx_iv_release(&out1);
  fbx_iv_release(&out[0]);
  fbx_iv_release(&out[1]);

  fbx_fuser_stats s;
  fbx_fuser_get_stats(f, &s);
  ck_assert_int_eq(s.compiles, 2);
  ck_assert_int_eq(s.compile_failures, 0);
  ck_assert_int_eq(s.memory_cache_hits, 0);
  ck_assert_int_eq(s.runs, 2);
  ck_assert_int_eq(s.kernel_launches, 2);
  ck_assert_int_eq(s.run_failures + s.declines + s.disk_cache_hits, 0);
  ck_assert(s.compile_seconds >= 0);
  fbx_fkernel_release(k1);
  fbx_fkernel_release(k);
  free_inputs(&in);
  fbx_graph_destroy(g);
  fbx_fuser_release(f);
}
END_TEST

START_TEST(kernel_cache) {
  fbx_fuser *f = load("good");
  fbx_node *g0;
  fbx_graph *g = partitioned(f, &g0, NULL);
  inputs a = make_inputs(FBX_DTYPE_FLOAT32, 4, 8, 2.0), b = make_inputs(FBX_DTYPE_FLOAT32, 4, 8, -1.0),
         c = make_inputs(FBX_DTYPE_FLOAT32, 2, 3, 2.0);
  fbx_fkernel *k1 = NULL, *k2 = NULL, *k3 = NULL;
  ck_assert_ptr_null(fbx_fuser_compile(f, g0, a.v, 3, &k1));
  /* equal specs (scalar values do not matter): the same kernel */
  ck_assert_ptr_null(fbx_fuser_compile(f, g0, b.v, 3, &k2));
  ck_assert_ptr_eq(k1, k2);
  fbx_fuser_stats s;
  fbx_fuser_get_stats(f, &s);
  ck_assert_int_eq(s.compiles, 1);
  ck_assert_int_eq(s.memory_cache_hits, 1);
  /* other sizes: a new kernel */
  ck_assert_ptr_null(fbx_fuser_compile(f, g0, c.v, 3, &k3));
  ck_assert_ptr_ne(k3, k1);
  fbx_fuser_get_stats(f, &s);
  ck_assert_int_eq(s.compiles, 2);
  ck_assert_int_eq(s.memory_cache_hits, 1);
  /* both run right */
  fbx_ivalue out[2];
  ck_assert_ptr_null(fbx_fkernel_run(k2, b.v, 3, out, 2, NULL));
  check_against_interp(g0, b.v, 3, out, 2);
  fbx_iv_release(&out[0]);
  fbx_iv_release(&out[1]);
  ck_assert_ptr_null(fbx_fkernel_run(k3, c.v, 3, out, 2, NULL));
  check_against_interp(g0, c.v, 3, out, 2);
  fbx_iv_release(&out[0]);
  fbx_iv_release(&out[1]);
  /* a kernel run with inputs it was not compiled for: refused, no crash */
  fbx_status *st = fbx_fkernel_run(k1, c.v, 3, out, 2, NULL);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_INVALID_ARG);
  ASSERT_HAS(fbx_status_message(st), "input 0 of group %");
  ASSERT_HAS(fbx_status_message(st), "does not match the spec it was compiled for: expected float32[4, 8], got");
  ck_assert_int_eq(out[0].kind, FBX_IV_NONE);
  fbx_status_free(st);
  st = fbx_fkernel_run(k1, a.v, 2, out, 2, NULL);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_INVALID_ARG);
  fbx_status_free(st);
  /* a graph parsed again gives the same canonical text: a hit */
  fbx_node *h0;
  fbx_graph *g2 = partitioned(f, &h0, NULL);
  fbx_fkernel *k4 = NULL;
  ck_assert_ptr_null(fbx_fuser_compile(f, h0, a.v, 3, &k4));
  ck_assert_ptr_eq(k4, k1);
  fbx_fkernel_release(k4);
  fbx_graph_destroy(g2);
  fbx_fkernel_release(k1);
  fbx_fkernel_release(k2);
  fbx_fkernel_release(k3);
  free_inputs(&a);
  free_inputs(&b);
  free_inputs(&c);
  fbx_graph_destroy(g);
  fbx_fuser_release(f);
}
END_TEST

START_TEST(unsupported_inputs) {
  fbx_fuser *f = load("good");
  fbx_node *g0;
  fbx_graph *g = partitioned(f, &g0, NULL);
  /* the plugin refuses float64 */
  inputs d = make_inputs(FBX_DTYPE_FLOAT64, 4, 8, 2.0);
  fbx_fkernel *k = NULL;
  fbx_status *st = fbx_fuser_compile(f, g0, d.v, 3, &k);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_UNSUPPORTED); /* the plugin's normal answer, not a failure */
  ASSERT_HAS(fbx_status_message(st), "fuser 'good' does not support group %");
  ASSERT_HAS(fbx_status_message(st), "(aten::mul, aten::add, aten::relu, aten::mul): [unsupported] only float32 tensors");
  fbx_status_free(st);
  /* the host refuses a string input */
  fbx_ivalue s;
  ck_assert_ptr_null(fbx_iv_str_new(&s, "hi", 2));
  fbx_ivalue bad[3] = {d.v[0], d.v[1], s};
  st = fbx_fuser_compile(f, g0, bad, 3, &k);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_UNSUPPORTED);
  ASSERT_HAS(fbx_status_message(st), "input 2: a ");
  fbx_status_free(st);
  fbx_iv_release(&s);
  /* wrong count; not a group */
  st = fbx_fuser_compile(f, g0, d.v, 2, &k);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_INVALID_ARG);
  fbx_status_free(st);
  st = fbx_fuser_compile(f, g0->next, d.v, 3, &k);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_INVALID_ARG);
  fbx_status_free(st);
  fbx_fuser_stats stats;
  fbx_fuser_get_stats(f, &stats);
  ck_assert_int_eq(stats.compiles, 1);
  ck_assert_int_eq(stats.compile_failures, 0);
  ck_assert_int_eq(stats.compile_unsupported, 1);
  free_inputs(&d);
  fbx_graph_destroy(g);
  fbx_fuser_release(f);
}
END_TEST

START_TEST(compile_fails) {
  fbx_fuser *f = load("compile_fails");
  fbx_node *g0;
  fbx_graph *g = partitioned(f, &g0, NULL);
  inputs in = make_inputs(FBX_DTYPE_FLOAT32, 4, 8, 2.0);
  for (int i = 0; i < 2; i++) {
    fbx_fkernel *k = (fbx_fkernel *)0x1;
    fbx_status *st = fbx_fuser_compile(f, g0, in.v, 3, &k);
    ck_assert_int_eq(fbx_status_code(st), FBX_ERR_PLUGIN);
    ASSERT_HAS(fbx_status_message(st), "fuser 'compile_fails' failed to compile group %");
    ASSERT_HAS(fbx_status_message(st), "[compile error] compile_fails: this plugin never compiles (test)");
    ck_assert_ptr_eq(k, (fbx_fkernel *)0x1);
    fbx_status_free(st);
  }
  fbx_fuser_stats s;
  fbx_fuser_get_stats(f, &s);
  ck_assert_int_eq(s.compiles, 2);
  ck_assert_int_eq(s.compile_failures, 2);
  ck_assert_int_eq(s.memory_cache_hits, 0);
  free_inputs(&in);
  fbx_graph_destroy(g);
  fbx_fuser_release(f);
}
END_TEST

START_TEST(run_fails) {
  fbx_fuser *f = load("run_fails");
  fbx_node *g0;
  fbx_graph *g = partitioned(f, &g0, NULL);
  inputs in = make_inputs(FBX_DTYPE_FLOAT32, 4, 8, 2.0);
  fbx_fkernel *k = NULL;
  ck_assert_ptr_null(fbx_fuser_compile(f, g0, in.v, 3, &k));
  fbx_ivalue out[2] = {fbx_iv_int(7), fbx_iv_int(7)};
  bool declined = true;
  fbx_status *st = fbx_fkernel_run(k, in.v, 3, out, 2, &declined);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_PLUGIN);
  ASSERT_HAS(fbx_status_message(st), "fuser 'run_fails' failed to run group %");
  ASSERT_HAS(fbx_status_message(st), "[run error] run_fails: kernel launch failed (test)");
  fbx_status_free(st);
  ck_assert(!declined);
  ck_assert_int_eq(out[0].kind, FBX_IV_NONE);
  ck_assert_int_eq(out[1].kind, FBX_IV_NONE);
  fbx_fuser_stats s;
  fbx_fuser_get_stats(f, &s);
  ck_assert_int_eq(s.runs, 1);
  ck_assert_int_eq(s.run_failures, 1);
  ck_assert_int_eq(s.kernel_launches, 0);
  fbx_fkernel_release(k);
  free_inputs(&in);
  fbx_graph_destroy(g);
  fbx_fuser_release(f);
}
END_TEST

START_TEST(bad_specs) {
  fbx_fuser *f = load("bad_specs");
  fbx_node *g0;
  fbx_graph *g = partitioned(f, &g0, NULL);
  inputs even = make_inputs(FBX_DTYPE_FLOAT32, 4, 8, 2.0), odd = make_inputs(FBX_DTYPE_FLOAT32, 5, 8, 2.0);
  fbx_fkernel *k = NULL;
  fbx_status *st = fbx_fuser_compile(f, g0, even.v, 3, &k);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_PLUGIN);
  ASSERT_HAS(fbx_status_message(st), "fuser 'bad_specs' gave an invalid spec for output 0 of group %");
  ASSERT_HAS(fbx_status_message(st), ": ndim 99 (must be 0..16)");
  fbx_status_free(st);
  st = fbx_fuser_compile(f, g0, odd.v, 3, &k);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_PLUGIN);
  ASSERT_HAS(fbx_status_message(st), "negative size -5 in dim 0");
  fbx_status_free(st);
  fbx_fuser_stats s;
  fbx_fuser_get_stats(f, &s);
  ck_assert_int_eq(s.compiles, 2);
  ck_assert_int_eq(s.compile_failures, 2);
  free_inputs(&even);
  free_inputs(&odd);
  fbx_graph_destroy(g);
  fbx_fuser_release(f);
}
END_TEST


/* Plugins whose output specs disagree with the profiled types (issue 17.1):
 * each group compiles to a refusal naming the plugin, the group and both
 * specs, runs in the interpreter, and the answer is the unfused one. */
START_TEST(lying_specs_run_interpreted) {
  char dir[] = "/tmp/fbx-lying-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char ir[600], x[600], cmd[4096], ref[600];
  snprintf(ir, sizeof ir, "%s/g.ir", dir);
  snprintf(x, sizeof x, "%s/x.npy", dir);
  FILE *fp = fopen(ir, "w");
  ck_assert_ptr_nonnull(fp);
  fputs("graph(%x : Tensor):\n  %a : Tensor = aten::relu(%x)\n  %b : Tensor = aten::neg(%a)\n"
        "  %c : Tensor = aten::mul(%b, %x)\n  return (%c)\n", fp);
  fclose(fp);
  fbx_tensor *t = randn(FBX_DTYPE_FLOAT32, 4, 32);
  ck_assert_ptr_null(fbx_npy_write_file(x, t));
  fbx_tensor_release(t);
  snprintf(ref, sizeof ref, "%s/ref", dir);
  snprintf(cmd, sizeof cmd, "%s run %s --input %s --fuser none --out %s", FBX_CLI, ir, x, ref);
  char *out = NULL;
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "rc %d:\n%s", rc, out);
  free(out);
  const char *names[3] = {"wrong_dtype_spec", "short_shape_spec", "zeroed_spec"};
  const char *specs[3] = {"spec float64[4, 32], but the profiled type is float32[4, 32]",
                          "spec float32[4, 3], but the profiled type is float32[4, 32]",
                          "spec uint8[], but the profiled type is float32[4, 32]"};
  const char *what[3] = {"dtype", "sizes", "dtype"};
  for (int i = 0; i < 3; i++) {
    char od[700];
    snprintf(od, sizeof od, "%s/%s", dir, names[i]);
    snprintf(cmd, sizeof cmd, "%s run %s --input %s --fuser %s --out %s --stats --iters 3", FBX_CLI, ir,
             x, plug(names[i]), od);
    rc = tu_run(cmd, &out);
    ck_assert_msg(rc == 0, "%s: rc %d:\n%s", names[i], rc, out);
    char want[256];
    snprintf(want, sizeof want, "fuser '%s' promised a wrong %s for output 0 of group %%", names[i], what[i]);
    ASSERT_HAS(out, want);
    ASSERT_HAS(out, specs[i]);
    ASSERT_HAS(out, "runs in the interpreter");
    free(out);
    /* the same bytes as the interpreter's answer */
    char a[800], b[800];
    snprintf(a, sizeof a, "%s/out0.npy", ref);
    snprintf(b, sizeof b, "%s/out0.npy", od);
    size_t na = 0, nb = 0;
    char *da = tu_read_file(a, &na), *db = tu_read_file(b, &nb);
    ck_assert_ptr_nonnull(da);
    ck_assert_ptr_nonnull(db);
    ck_assert_msg(na == nb && !memcmp(da, db, na), "%s: output differs from the interpreter's", names[i]);
    free(da);
    free(db);
  }
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(tu_run(cmd, NULL), 0);
}
END_TEST


/* Issue 17.9/17.10: an FBXP_ERR_UNSUPPORTED compile is quiet (a fusion log
 * line and a counter); a real compile failure warns; FBXP_DECLINE from a
 * guards-outside plugin is a run failure that warns. Answers stay right. */
static char *run_cli(const char *dir, const char *env, const char *plugin, const char *x, const char *od) {
  char cmd[4096], *out = NULL;
  snprintf(cmd, sizeof cmd, "%s %s run %s/g.ir --input %s --fuser %s --out %s --stats --iters 3", env, FBX_CLI, dir, x,
           plugin, od);
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "%s: rc %d:\n%s", cmd, rc, out);
  return out;
}

static void same_file(const char *a, const char *b) {
  size_t na = 0, nb = 0;
  char *da = tu_read_file(a, &na), *db = tu_read_file(b, &nb);
  ck_assert_ptr_nonnull(da);
  ck_assert_ptr_nonnull(db);
  ck_assert_msg(na == nb && !memcmp(da, db, na), "%s differs from %s", b, a);
  free(da);
  free(db);
}

START_TEST(unsupported_quiet_failures_loud) {
  char dir[] = "/tmp/fbx-quiet-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char ir[600], x32[600], x64[600], o[700], r[700];
  snprintf(ir, sizeof ir, "%s/g.ir", dir);
  FILE *fp = fopen(ir, "w");
  ck_assert_ptr_nonnull(fp);
  fputs("graph(%x : Tensor):\n  %a : Tensor = aten::relu(%x)\n  %b : Tensor = aten::neg(%a)\n"
        "  %c : Tensor = aten::mul(%b, %x)\n  return (%c)\n", fp);
  fclose(fp);
  snprintf(x32, sizeof x32, "%s/x32.npy", dir);
  snprintf(x64, sizeof x64, "%s/x64.npy", dir);
  fbx_tensor *t = randn(FBX_DTYPE_FLOAT32, 3, 5);
  ck_assert_ptr_null(fbx_npy_write_file(x32, t));
  fbx_tensor_release(t);
  t = randn(FBX_DTYPE_FLOAT64, 3, 5);
  ck_assert_ptr_null(fbx_npy_write_file(x64, t));
  fbx_tensor_release(t);

  /* good refuses float64 with FBXP_ERR_UNSUPPORTED: no warning */
  snprintf(r, sizeof r, "%s/ref64", dir);
  free(run_cli(dir, "", "none", x64, r));
  snprintf(o, sizeof o, "%s/good64", dir);
  char *out = run_cli(dir, "", plug("good"), x64, o);
  ck_assert_msg(!strstr(out, "warning"), "unsupported warned:\n%s", out);
  ASSERT_HAS(out, "kernels compiled    0 (0 failed, 1 unsupported)");
  free(out);
  strcat(r, "/out0.npy");
  strcat(o, "/out0.npy");
  same_file(r, o);
  snprintf(o, sizeof o, "%s/good64log", dir);
  out = run_cli(dir, "FUSEBOX_LOG=fusion", plug("good"), x64, o);
  ASSERT_HAS(out, "[fusebox:fusion]");
  ASSERT_HAS(out, "fuser 'good' does not support group %");
  ck_assert_msg(!strstr(out, "warning"), "unsupported warned:\n%s", out);
  free(out);
  /* in gradient mode the DifferentiableGraph's sub-executors count theirs too
   * (every value saved: recomputing relu and neg in the backward would make
   * it a group of its own, a second unsupported one) */
  char gb[600];
  snprintf(gb, sizeof gb, "%s --backward", plug("good"));
  snprintf(o, sizeof o, "%s/good64bwd", dir);
  out = run_cli(dir, "FUSEBOX_AUTODIFF_RECOMPUTE=0", gb, x64, o);
  ck_assert_msg(!strstr(out, "warning"), "unsupported warned:\n%s", out);
  ASSERT_HAS(out, "kernels compiled    0 (0 failed, 1 unsupported)");
  free(out);

  /* a real compile failure warns */
  snprintf(o, sizeof o, "%s/cf", dir);
  out = run_cli(dir, "", plug("compile_fails"), x32, o);
  ASSERT_HAS(out, "warning: group %");
  ASSERT_HAS(out, "failed to compile");
  ASSERT_HAS(out, "kernels compiled    0 (1 failed, 0 unsupported)");
  free(out);

  /* FBXP_DECLINE from a guards-outside plugin: a run failure, warned */
  snprintf(r, sizeof r, "%s/ref32", dir);
  free(run_cli(dir, "", "none", x32, r));
  snprintf(o, sizeof o, "%s/dg", dir);
  out = run_cli(dir, "", plug("declines_guarded"), x32, o);
  ASSERT_HAS(out, "warning: group %");
  ASSERT_HAS(out, "fuser 'declines_guarded' declined to run group %");
  ASSERT_HAS(out, "only FBXP_SELF_FALLBACK plugins may decline");
  ASSERT_HAS(out, "run failed: 2; declined: 0");
  free(out);
  strcat(r, "/out0.npy");
  strcat(o, "/out0.npy");
  same_file(r, o);

  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(tu_run(cmd, NULL), 0);
}
END_TEST

START_TEST(declines) {
  fbx_fuser *f = load("declines");
  ck_assert_uint_eq(fbx_fuser_flags(f), FBXP_SELF_FALLBACK);
  fbx_node *g0;
  fbx_graph *g = partitioned(f, &g0, NULL);
  inputs in = make_inputs(FBX_DTYPE_FLOAT32, 4, 8, 2.0), other = make_inputs(FBX_DTYPE_FLOAT32, 3, 3, 2.0);
  fbx_fkernel *k = NULL;
  ck_assert_ptr_null(fbx_fuser_compile(f, g0, in.v, 3, &k));
  fbx_ivalue out[2];
  bool declined = false;
  ck_assert_ptr_null(fbx_fkernel_run(k, in.v, 3, out, 2, &declined));
  ck_assert(declined);
  ck_assert_int_eq(out[0].kind, FBX_IV_NONE);
  /* a self-fallback kernel is offered other shapes (it checks them itself) */
  declined = false;
  ck_assert_ptr_null(fbx_fkernel_run(k, other.v, 3, out, 2, &declined));
  ck_assert(declined);
  /* without a way to say "declined" the caller gets a status */
  fbx_status *st = fbx_fkernel_run(k, in.v, 3, out, 2, NULL);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_UNSUPPORTED);
  ASSERT_HAS(fbx_status_message(st), "fuser 'declines' declined to run group %");
  fbx_status_free(st);
  fbx_fuser_stats s;
  fbx_fuser_get_stats(f, &s);
  ck_assert_int_eq(s.runs, 3);
  ck_assert_int_eq(s.declines, 3);
  ck_assert_int_eq(s.run_failures, 0);
  ck_assert_int_eq(s.kernel_launches, 0);
  fbx_fkernel_release(k);
  free_inputs(&in);
  free_inputs(&other);
  fbx_graph_destroy(g);
  fbx_fuser_release(f);
}
END_TEST

/* ---- threads ------------------------------------------------------------------------------ */

typedef struct thread_ctx {
  fbx_fuser *f;
  const fbx_node *group;
  int rows, failures;
} thread_ctx;

static void *worker(void *vctx) {
  thread_ctx *c = vctx;
  inputs in = make_inputs(FBX_DTYPE_FLOAT32, c->rows, 16, 1.5);
  /* Reference values once, outside the measured part. */
  fbx_interp *it = NULL;
  if (fbx_interp_create(&it, fbx_node_subgraph(c->group))) {
    c->failures++;
    return NULL;
  }
  fbx_ivalue ref[2];
  if (fbx_interp_run(it, in.v, 3, ref, NULL)) c->failures++;
  for (int iter = 0; iter < 50 && !c->failures; iter++) {
    fbx_fkernel *k = NULL;
    fbx_status *st = fbx_fuser_compile(c->f, c->group, in.v, 3, &k);
    if (st) {
      fbx_status_free(st);
      c->failures++;
      break;
    }
    fbx_ivalue out[2];
    st = fbx_fkernel_run(k, in.v, 3, out, 2, NULL);
    if (st) {
      fbx_status_free(st);
      c->failures++;
    } else {
      for (int o = 0; o < 2; o++) {
        for (int64_t i = 0; i < out[o].u.t->numel; i++)
          if (fabs(fbx_tensor_get_f64(out[o].u.t, i) - fbx_tensor_get_f64(ref[o].u.t, i)) >
              1e-6 * (1 + fabs(fbx_tensor_get_f64(ref[o].u.t, i))))
            c->failures++;
        fbx_iv_release(&out[o]);
      }
    }
    fbx_fkernel_release(k);
  }
  fbx_iv_release(&ref[0]);
  fbx_iv_release(&ref[1]);
  fbx_interp_destroy(it);
  free_inputs(&in);
  return NULL;
}

START_TEST(runs_from_four_threads) {
  fbx_fuser *f = load("good");
  fbx_node *g0;
  fbx_graph *g = partitioned(f, &g0, NULL);
  pthread_t th[4];
  thread_ctx ctx[4];
  for (int i = 0; i < 4; i++) {
    /* two threads share a spec (cache hits while others compile), sizes big enough to go parallel */
    ctx[i] = (thread_ctx){.f = f, .group = g0, .rows = i < 2 ? 4096 : 7 + i};
    ck_assert_int_eq(pthread_create(&th[i], NULL, worker, &ctx[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(ctx[i].failures, 0);
  }
  fbx_fuser_stats s;
  fbx_fuser_get_stats(f, &s);
  ck_assert_int_eq(s.compiles, 3); /* three distinct specs */
  ck_assert_int_eq(s.memory_cache_hits, 200 - 3);
  ck_assert_int_eq(s.runs, 200);
  ck_assert_int_eq(s.kernel_launches, 200);
  ck_assert_int_eq(s.run_failures, 0);
  fbx_graph_destroy(g);
  fbx_fuser_release(f);
}
END_TEST

START_TEST(serialized_plugin_from_four_threads) {
  /* old_minor has no FBXP_RUN_THREAD_SAFE: the host serializes its runs. */
  fbx_fuser *f = load("old_minor");
  ck_assert_uint_eq(fbx_fuser_flags(f) & FBXP_RUN_THREAD_SAFE, 0);
  fbx_node *g0;
  fbx_graph *g = partitioned(f, &g0, NULL);
  pthread_t th[4];
  thread_ctx ctx[4];
  for (int i = 0; i < 4; i++) {
    ctx[i] = (thread_ctx){.f = f, .group = g0, .rows = 64 + i};
    ck_assert_int_eq(pthread_create(&th[i], NULL, worker, &ctx[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(ctx[i].failures, 0);
  }
  fbx_fuser_stats s;
  fbx_fuser_get_stats(f, &s);
  ck_assert_int_eq(s.runs, 200);
  fbx_graph_destroy(g);
  fbx_fuser_release(f);
}
END_TEST

/* ---- dynamic output specs and scalar outputs (an in-process plugin) ----------------------- */

static const fbxp_host_api *DH;
static fbxp_status *dyn_partition(void *s, const fbxp_graph *g, fbxp_proposals *p) {
  (void)s, (void)g, (void)p;
  return NULL;
}
static int dyn_has_output_specs = 1;
static fbxp_status *dyn_compile(void *s, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t n,
                                fbxp_compile_result *r, fbxp_kernel **k) {
  (void)s, (void)g, (void)in, (void)n;
  r->dynamic_outputs = 1; /* sizes come from output_specs at each run */
  r->nkernels = 3;
  *k = (fbxp_kernel *)DH->alloc(8);
  return NULL;
}
/* output 0: neg(x), same shape; output 1: an int (x's ndim). x dims of 7 give a
 * bad spec, 9 a decline. */
static fbxp_status *dyn_output_specs(void *s, fbxp_kernel *k, const fbxp_arg *in, int32_t n, fbxp_arg_spec *out,
                                     int32_t nout) {
  (void)s, (void)k, (void)n, (void)nout;
  const DLTensor *x = in[0].u.tensor;
  if (x->shape[0] == 9) return DH->status_new(FBXP_DECLINE, "not 9");
  out[0].kind = FBXP_ARG_TENSOR;
  out[0].dtype = 6;
  out[0].ndim = x->ndim;
  for (int d = 0; d < x->ndim; d++) out[0].sizes[d] = x->shape[d];
  if (x->shape[0] == 7) out[0].ndim = -1;
  out[1].kind = FBXP_ARG_INT;
  return NULL;
}
static fbxp_status *dyn_run(void *s, fbxp_kernel *k, const fbxp_arg *in, int32_t n, DLTensor *const *o, int32_t no) {
  (void)s, (void)k, (void)n, (void)no;
  const DLTensor *x = in[0].u.tensor;
  int64_t numel = 1;
  for (int d = 0; d < x->ndim; d++) numel *= x->shape[d];
  for (int64_t i = 0; i < numel; i++) ((float *)o[0]->data)[i] = -((const float *)x->data)[i];
  ck_assert_int_eq(o[1]->ndim, 0);
  ck_assert_int_eq(o[1]->dtype.code, kDLInt);
  *(int64_t *)o[1]->data = x->ndim;
  return NULL;
}
static void dyn_release(void *s, fbxp_kernel *k) {
  (void)s;
  DH->free(k);
}
static fbxp_plugin_api dyn_api = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0, .abi_major = FBXP_ABI_MAJOR, .abi_minor = FBXP_ABI_MINOR,
    .name = "dyn", .flags = FBXP_SELF_FALLBACK, .partition = dyn_partition, .compile = dyn_compile,
    .output_specs = dyn_output_specs, .run = dyn_run, .release = dyn_release,
};
static const fbxp_plugin_api *dyn_entry(const fbxp_host_api *h, uint32_t major, uint32_t minor, const char **why) {
  (void)major, (void)minor, (void)why;
  DH = h;
  if (!dyn_has_output_specs) dyn_api.output_specs = NULL;
  return &dyn_api;
}

START_TEST(dynamic_outputs_and_scalar_outputs) {
  const char *text =
      "graph(%x : Tensor):\n"
      "  %a : Tensor = aten::neg(%x)\n"
      "  %n : int = aten::dim(%a)\n"
      "  return (%a, %n)\n";
  fbx_graph *g = NULL;
  ck_assert_ptr_null(fbx_graph_parse(&g, text, strlen(text), "dyn.ir"));
  fbx_node *nodes[2] = {fbx_block_first(g->block), fbx_block_first(g->block)->next};
  fbx_node *grp = fbx_graph_create_group(g, FBX_SYM_fusebox_FusionGroup, nodes, 2);
  ck_assert_ptr_nonnull(grp);
  fbx_fuser *f = NULL;
  ck_assert_ptr_null(fbx_fuser_from_entry(&f, dyn_entry, "dyn"));
  fbx_ivalue in = fbx_iv_tensor(randn(FBX_DTYPE_FLOAT32, 2, 5));
  fbx_fkernel *k = NULL;
  ck_assert_ptr_null(fbx_fuser_compile(f, grp, &in, 1, &k));
  ck_assert_int_eq(fbx_fkernel_launches(k), 3);
  ck_assert_ptr_null(fbx_fkernel_source(k));
  /* other shapes go to output_specs (a self-fallback kernel is not size-guarded) */
  for (int64_t rows = 2; rows <= 4; rows++) {
    fbx_ivalue x = fbx_iv_tensor(randn(FBX_DTYPE_FLOAT32, rows, 5)), out[2];
    bool declined = true;
    ck_assert_ptr_null(fbx_fkernel_run(k, &x, 1, out, 2, &declined));
    ck_assert(!declined);
    ck_assert_int_eq(out[0].kind, FBX_IV_TENSOR);
    ck_assert_int_eq(out[0].u.t->sizes[0], rows);
    for (int64_t i = 0; i < out[0].u.t->numel; i++)
      ck_assert(fbx_tensor_get_f64(out[0].u.t, i) == -fbx_tensor_get_f64(x.u.t, i));
    ck_assert_int_eq(out[1].kind, FBX_IV_INT);
    ck_assert_int_eq(out[1].u.i, 2);
    fbx_iv_release(&out[0]);
    fbx_iv_release(&x);
  }
  fbx_ivalue seven = fbx_iv_tensor(randn(FBX_DTYPE_FLOAT32, 7, 5)), nine = fbx_iv_tensor(randn(FBX_DTYPE_FLOAT32, 9, 5)),
             out[2];
  fbx_status *st = fbx_fkernel_run(k, &seven, 1, out, 2, NULL);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_PLUGIN);
  ASSERT_HAS(fbx_status_message(st), "fuser 'dyn' gave an invalid spec for output 0 of group %");
  ASSERT_HAS(fbx_status_message(st), "ndim -1");
  fbx_status_free(st);
  bool declined = false;
  ck_assert_ptr_null(fbx_fkernel_run(k, &nine, 1, out, 2, &declined));
  ck_assert(declined);
  /* dtype is still checked for self-fallback kernels */
  fbx_ivalue dbl = fbx_iv_tensor(randn(FBX_DTYPE_FLOAT64, 2, 5));
  st = fbx_fkernel_run(k, &dbl, 1, out, 2, NULL);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_INVALID_ARG);
  fbx_status_free(st);
  fbx_fuser_stats s;
  fbx_fuser_get_stats(f, &s);
  ck_assert_int_eq(s.runs, 3);
  ck_assert_int_eq(s.kernel_launches, 9);
  ck_assert_int_eq(s.run_failures, 1);
  ck_assert_int_eq(s.declines, 1);
  fbx_iv_release(&dbl);
  fbx_iv_release(&seven);
  fbx_iv_release(&nine);
  fbx_fkernel_release(k);
  fbx_fuser_release(f);

  /* dynamic outputs without output_specs: a compile error */
  dyn_has_output_specs = 0;
  ck_assert_ptr_null(fbx_fuser_from_entry(&f, dyn_entry, "dyn"));
  st = fbx_fuser_compile(f, grp, &in, 1, &k);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_PLUGIN);
  ASSERT_HAS(fbx_status_message(st), "with dynamic outputs but has no output_specs");
  fbx_status_free(st);
  fbx_fuser_release(f);
  dyn_has_output_specs = 1;
  fbx_iv_release(&in);
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(survives_allocation_failures) {
  fbx_fuser *f = load("good");
  fbx_node *g0;
  fbx_graph *g = partitioned(f, &g0, NULL);
  inputs in = make_inputs(FBX_DTYPE_FLOAT32, 4, 8, 2.0);
  for (long n = 0; n < 200; n++) {
    /* a fresh fuser each time so that compile really runs */
    fbx_fuser *h = load("good");
    fbx_fkernel *k = NULL;
    fbx_ivalue out[2];
    fbx_alloc_fail_after(n);
    fbx_status *st = fbx_fuser_compile(h, g0, in.v, 3, &k);
    if (!st) st = fbx_fkernel_run(k, in.v, 3, out, 2, NULL);
    long failures = fbx_alloc_failures();
    fbx_alloc_fail_after(-1);
    if (st) {
      ck_assert_msg(fbx_status_code(st) == FBX_ERR_NOMEM || strstr(fbx_status_message(st), "out of memory"), "%s",
                    fbx_status_message(st));
      fbx_status_free(st);
    } else {
      fbx_iv_release(&out[0]);
      fbx_iv_release(&out[1]);
    }
    fbx_fkernel_release(k);
    fbx_fuser_release(h);
    if (!failures) {
      ck_assert_ptr_null(st);
      break;
    }
  }
  free_inputs(&in);
  fbx_graph_destroy(g);
  fbx_fuser_release(f);
}
END_TEST

int main(void) {
  Suite *s = suite_create("host_kernel");
  TCase *tc = tcase_create("kernel");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, compile_and_run_matches_interpreter);
  tcase_add_test(tc, kernel_cache);
  tcase_add_test(tc, unsupported_inputs);
  tcase_add_test(tc, compile_fails);
  tcase_add_test(tc, run_fails);
  tcase_add_test(tc, bad_specs);
  tcase_add_test(tc, lying_specs_run_interpreted);
  tcase_add_test(tc, unsupported_quiet_failures_loud);
  tcase_add_test(tc, declines);
  tcase_add_test(tc, runs_from_four_threads);
  tcase_add_test(tc, serialized_plugin_from_four_threads);
  tcase_add_test(tc, dynamic_outputs_and_scalar_outputs);
  tcase_add_test(tc, survives_allocation_failures);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
