/* The allocation-failure sweep (issue 12): for N = 0, 1, 2, ... every
 * allocation after the first N fails (base/alloc.h's hook) while one stage
 * runs, until N is large enough that nothing fails. Each stage must end in a
 * clean status — FBX_ERR_NOMEM — or, where the design allows carrying on
 * (the executor runs a group unfused when optimizing it failed), in a
 * result equal to the one of a run without failures; and nothing may leak:
 * the hook's count of live blocks (fbx_alloc_outstanding) is the same
 * before and after every step, so the normal build checks leaks too, and the
 * ASan build checks them again byte by byte.
 *
 * Stages, on a few corpus graphs (tests/corpus/cases: ratio_iou, lstm_cell,
 * nested_if_in_loop):
 *   parse      fbx_graph_parse of graph.ir
 *   passes     fbx_pass_pipeline(clone, "default")
 *   forward    executor (fuser none) create + 2 runs (profiling, optimized)
 *   backward   executor create + 2 x (forward with tape, backward)
 *   partition  the legacy fuser's partition through the host
 *              (fbx_fuser_partition on the graph after the default passes)
 *   legacy     executor with the legacy fuser: create + 2 runs, which
 *              profiles, partitions, compiles (from the warm disk cache
 *              FUSEBOX_CACHE_DIR, filled by a run before the sweep, so that
 *              no compiler is forked per N) and runs the kernels
 *
 * N is swept exhaustively by default; under ASan (slower, and checking
 * leaks byte by byte) every 7th N; FBX_ALLOC_SWEEP_STEP=K tries every K-th
 * N (K = 1: all); FBX_ALLOC_SWEEP_STAGES=MASK runs only
 * some stages (1 parse, 2 passes, 4 forward, 8 backward, 16 partition,
 * 32 legacy). Each stage prints how many failure points
 * it exercised ("alloc sweep: ratio_iou backward: 4321 failure points").
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/strbuf.h"
#include "corpus_case.h"
#include "exec/executor.h"
#include "host/host.h"
#include "ir/graph.h"
#include "ir/text.h"
#include "ir/verify.h"
#include "ops/optable.h"
#include "passes/passes.h"
#include "testutil.h"

#define MAXV 32

static const char *const CASES[] = {"ratio_iou", "lstm_cell", "nested_if_in_loop"};
#define NCASES ((int)(sizeof CASES / sizeof CASES[0]))

/* Every N in a normal build; every 7th under AddressSanitizer, which is
 * several times slower and checks leaks byte by byte (CI runs both). */
#if defined(__SANITIZE_ADDRESS__)
static long step = 7;
#else
static long step = 1;
#endif
static int stage_mask = ~0; /* FBX_ALLOC_SWEEP_STAGES: a bit mask of run_case's stages, for debugging */
static long total_points;

/* ---- the sweep driver ------------------------------------------------------------------------------ */

/* One stage: run it with fault injection armed after `n` allocations
 * (arm(n) ... disarm()), clean up with faults off, and return its status
 * (NULL: it succeeded). *carried_on: it succeeded although an allocation
 * failed, and the stage checked that its result is still right. */
typedef fbx_status *(*stage_fn)(void *ctx, long n);

static long failed_allocs;
static bool once_mode; /* fail only the Nth allocation, not every one from the Nth on */
static void arm(long n) {
  if (once_mode) fbx_alloc_fail_once_after(n);
  else fbx_alloc_fail_after(n);
}
static void disarm(void) {
  if (fbx_alloc_faults_armed()) {
    failed_allocs = fbx_alloc_failures();
    fbx_alloc_fail_after(-1);
  }
}

/* Whether a stage may succeed although an allocation failed. */
typedef enum { MUST_FAIL, MAY_CARRY_ON } carry_mode;

static long sweep_mode(const char *cname, const char *stage, stage_fn fn, void *ctx, carry_mode mode) {
  long points = 0, carried = 0;
  for (long n = 0;; n += step) {
    long before = fbx_alloc_outstanding();
    failed_allocs = 0;
    fbx_status *st = fn(ctx, n);
    disarm();
    long failures = failed_allocs;
    if (st)
      ck_assert_msg(fbx_status_code(st) == FBX_ERR_NOMEM, "%s %s, failing after %ld allocations: %s", cname, stage,
                    n, fbx_status_message(st));
    if (failures == 0)
      ck_assert_msg(!st, "%s %s: no allocation failed, yet: %s", cname, stage, fbx_status_message(st));
    else if (!st) {
      ck_assert_msg(mode == MAY_CARRY_ON, "%s %s, failing after %ld allocations: succeeded anyway", cname, stage,
                    n);
      carried++;
    }
    fbx_status_free(st);
    long after = fbx_alloc_outstanding();
    ck_assert_msg(after == before, "%s %s, failing after %ld allocations: %ld blocks leaked", cname, stage, n,
                  after - before);
    if (failures == 0) break;
    points++;
  }
  printf("alloc sweep: %s %s, %s: %ld failure points%s", cname, stage,
         once_mode ? "only the Nth fails" : "all from the Nth fail", points, step > 1 ? " (sampled)" : "");
  if (carried) printf(", %ld carried on (result checked)", carried);
  printf("\n");
  fflush(stdout);
  total_points += points;
  return points;
}

/* Both ways of failing: every allocation from the Nth on (out of memory for
 * good), and only the Nth (a transient failure: what carries on after it
 * must still be right). */
static long sweep(const char *cname, const char *stage, stage_fn fn, void *ctx, carry_mode mode) {
  long points = 0;
  for (int m = 0; m < 2; m++) {
    once_mode = m == 1;
    points += sweep_mode(cname, stage, fn, ctx, mode);
  }
  once_mode = false;
  return points;
}

/* ---- values ---------------------------------------------------------------------------------------- */

static int flat(const fbx_ivalue *v, int n, fbx_ivalue *out) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (v[i].kind == FBX_IV_TUPLE || v[i].kind == FBX_IV_LIST) {
      k += flat(v[i].u.l->items, v[i].u.l->n, out + k);
    } else {
      ck_assert_int_lt(k, MAXV);
      out[k++] = v[i];
    }
  }
  return k;
}

/* The same within float rounding (NaN where NaN): a run that carried on
 * after a failure may have taken another path (a DifferentiableGraph that
 * could not be built runs on the eager tape, which sums in another order). */
static void expect_same(const fbx_ivalue *got, int ngot, const fbx_ivalue *want, int nwant, const char *what,
                        long n) {
  fbx_ivalue fg[MAXV], fw[MAXV];
  int a = flat(got, ngot, fg), b = flat(want, nwant, fw);
  ck_assert_int_eq(a, b);
  for (int i = 0; i < a; i++) {
    ck_assert_msg(fg[i].kind == fw[i].kind, "%s n=%ld: value %d is of kind %d, not %d", what, n, i, (int)fg[i].kind,
                  (int)fw[i].kind);
    if (fw[i].kind != FBX_IV_TENSOR) continue;
    const fbx_tensor *x = fg[i].u.t, *y = fw[i].u.t;
    ck_assert_msg(x->dtype == y->dtype && fbx_tensor_same_shape(x, y), "%s n=%ld: value %d: dtype or shape differ",
                  what, n, i);
    for (int64_t k = 0; k < y->numel; k++) {
      double p = fbx_tensor_get_f64(x, k), q = fbx_tensor_get_f64(y, k);
      double tol = y->dtype == FBX_DTYPE_FLOAT64 ? 1e-12 + 1e-12 * fabs(q)
                   : y->dtype == FBX_DTYPE_FLOAT32 ? 1e-6 + 1e-5 * fabs(q)
                   : fbx_dtype_is_floating(y->dtype) ? 1e-2 + 1e-2 * fabs(q)
                                                     : 0;
      ck_assert_msg(p == q || (isnan(p) && isnan(q)) || fabs(p - q) <= tol, "%s n=%ld: value %d[%lld]: %.9g vs %.9g",
                    what, n, i, (long long)k, p, q);
    }
  }
}

static void release(fbx_ivalue *v, int n) {
  for (int i = 0; i < n; i++) fbx_iv_release(&v[i]);
}

/* ---- one corpus case ------------------------------------------------------------------------------- */

typedef struct kase {
  const char *name;
  char *text;
  size_t len;
  fbx_graph *g;
  fbx_ivalue in[MAXV];
  int nin, nout;
  const char *fuser;
  fbx_fuser *legacy;
  /* reference results, from a run without failures */
  fbx_ivalue out[MAXV];
  fbx_ivalue fout[MAXV], gin[MAXV];
  fbx_ivalue lout[MAXV];
} kase;

static fbx_status *st_parse(void *ctx, long n) {
  kase *c = ctx;
  fbx_graph *g = NULL;
  arm(n);
  fbx_status *st = fbx_graph_parse(&g, c->text, c->len, "graph.ir");
  disarm();
  if (!st) ck_assert_ptr_nonnull(g);
  else ck_assert_ptr_null(g);
  fbx_graph_destroy(g);
  return st;
}

static fbx_status *st_passes(void *ctx, long n) {
  kase *c = ctx;
  fbx_graph *g = fbx_graph_clone(c->g);
  ck_assert_ptr_nonnull(g);
  arm(n);
  fbx_status *st = fbx_pass_pipeline(g, "default");
  disarm();
  /* half optimized is fine, invalid is not */
  fbx_status *vs = fbx_graph_verify(g);
  ck_assert_msg(!vs, "%s passes, failing after %ld allocations: %s", c->name, n, fbx_status_message(vs));
  fbx_graph_destroy(g);
  return st;
}

/* create + runs; outputs into out (NULL: compare with want). */
static fbx_status *exec_runs(kase *c, const char *fuser, long n, fbx_ivalue *want) {
  fbx_executor *ex = NULL;
  fbx_ivalue out[MAXV];
  for (int i = 0; i < MAXV; i++) out[i] = fbx_iv_none();
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = fuser, .profiling_runs = 1};
  /* A fresh fuser each time: its in-memory kernel cache is empty, so the
   * kernels are compiled (from the warm disk cache). */
  fbx_fuser *fz = NULL;
  if (!strcmp(fuser, "legacy")) {
    ck_assert(!fbx_fuser_load(&fz, "legacy"));
    o.fuser_handle = fz;
  }
  arm(n);
  fbx_status *st = fbx_executor_create(&ex, c->g, &o);
  for (int r = 0; r < 2 && !st; r++) {
    release(out, c->nout);
    st = fbx_executor_run_values(ex, c->in, c->nin, out, c->nout, 7);
  }
  disarm();
  if (!st && want) expect_same(out, c->nout, want, c->nout, fuser, n);
  release(out, c->nout);
  fbx_executor_destroy(ex);
  fbx_fuser_release(fz);
  return st;
}

static fbx_status *st_forward(void *ctx, long n) {
  kase *c = ctx;
  return exec_runs(c, "none", n, c->out);
}

static fbx_status *st_legacy(void *ctx, long n) {
  kase *c = ctx;
  return exec_runs(c, "legacy", n, c->lout);
}

/* 2 x (forward with a tape, backward with gradients of ones). */
static fbx_status *grad_runs(kase *c, long n, fbx_ivalue *fwant, fbx_ivalue *gwant) {
  fbx_executor *ex = NULL;
  fbx_ivalue out[MAXV], gout[MAXV], gin[MAXV];
  for (int i = 0; i < MAXV; i++) out[i] = gout[i] = gin[i] = fbx_iv_none();
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "none", .profiling_runs = 1};
  /* gradients of ones, shaped like the outputs of the forward reference */
  fbx_ivalue fl[MAXV];
  int nflat = flat(c->out, c->nout, fl);
  for (int i = 0; i < nflat; i++) {
    if (fl[i].kind != FBX_IV_TENSOR || !fbx_dtype_is_floating(fl[i].u.t->dtype)) continue;
    fbx_tensor *t = NULL;
    ck_assert(!fbx_tensor_empty(&t, fl[i].u.t->dtype, fl[i].u.t->ndim, fl[i].u.t->sizes));
    for (int64_t k = 0; k < t->numel; k++) fbx_tensor_set_f64(t, k, 1.0);
    gout[i] = fbx_iv_tensor(t);
  }
  arm(n);
  fbx_status *st = fbx_executor_create(&ex, c->g, &o);
  for (int r = 0; r < 2 && !st; r++) {
    fbx_grad_handle *h = NULL;
    release(out, c->nout);
    release(gin, c->nin);
    st = fbx_executor_forward_values(ex, c->in, c->nin, NULL, out, c->nout, 7, &h);
    if (!st) st = fbx_executor_backward_values(h, gout, nflat, gin, c->nin);
    fbx_grad_free(h);
  }
  disarm();
  if (!st && fwant) {
    expect_same(out, c->nout, fwant, c->nout, "backward: outputs", n);
    expect_same(gin, c->nin, gwant, c->nin, "backward: input gradients", n);
  }
  if (!st && !fwant) {
    for (int i = 0; i < c->nout; i++) c->fout[i] = out[i], out[i] = fbx_iv_none();
    for (int i = 0; i < c->nin; i++) c->gin[i] = gin[i], gin[i] = fbx_iv_none();
  }
  release(out, MAXV);
  release(gout, MAXV);
  release(gin, MAXV);
  fbx_executor_destroy(ex);
  return st;
}

static fbx_status *st_backward(void *ctx, long n) {
  kase *c = ctx;
  return grad_runs(c, n, c->fout, c->gin);
}

static fbx_status *st_partition(void *ctx, long n) {
  kase *c = ctx;
  fbx_graph *g = fbx_graph_clone(c->g);
  ck_assert_ptr_nonnull(g);
  fbx_status *st = fbx_pass_pipeline(g, "default");
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  fbx_partition_report rep = {0};
  arm(n);
  st = fbx_fuser_partition(c->legacy, g, &rep);
  disarm();
  /* half-partitioned is fine, invalid is not */
  fbx_status *vs = fbx_graph_verify(g);
  ck_assert_msg(!vs, "%s partition, failing after %ld allocations: %s", c->name, n, fbx_status_message(vs));
  fbx_graph_destroy(g);
  return st;
}

static void load_case(kase *c, const char *name) {
  memset(c, 0, sizeof *c);
  c->name = name;
  c->text = tu_read_file(cc_path(name, "graph.ir"), &c->len);
  ck_assert_ptr_nonnull(c->text);
  fbx_status *st = fbx_graph_parse(&c->g, c->text, c->len, "graph.ir");
  ck_assert_msg(!st, "%s: %s", name, fbx_status_message(st));
  fbx_strbuf why = {0};
  c->nin = cc_load_inputs(name, c->in, MAXV, &why);
  ck_assert_msg(c->nin >= 0, "%s: %s", name, why.data);
  fbx_strbuf_free(&why);
  c->nout = fbx_graph_noutputs(c->g);
  ck_assert_int_le(c->nout, MAXV);
  for (int i = 0; i < MAXV; i++) c->out[i] = c->fout[i] = c->gin[i] = c->lout[i] = fbx_iv_none();
}

static void free_case(kase *c) {
  release(c->in, MAXV);
  release(c->out, MAXV);
  release(c->fout, MAXV);
  release(c->gin, MAXV);
  release(c->lout, MAXV);
  fbx_graph_destroy(c->g);
  free(c->text);
}

/* Reference results: the same stage with no failure (n = -1 never arms;
 * arm(-1) is "off"). Run twice so that every lazily built global (op table,
 * symbols, the loaded plugin, the kernel disk cache) exists before the
 * sweep counts blocks. */
static void reference(kase *c, const char *fuser, fbx_ivalue *out) {
  for (int k = 0; k < 2; k++) {
    fbx_executor *ex = NULL;
    fbx_executor_opts o = {.struct_size = sizeof o, .fuser = fuser, .profiling_runs = 1};
    if (!strcmp(fuser, "legacy")) o.fuser_handle = c->legacy;
    fbx_status *st = fbx_executor_create(&ex, c->g, &o);
    for (int r = 0; r < 2 && !st; r++) {
      release(out, c->nout);
      st = fbx_executor_run_values(ex, c->in, c->nin, out, c->nout, 7);
    }
    ck_assert_msg(!st, "%s %s: %s", c->name, fuser, fbx_status_message(st));
    fbx_executor_destroy(ex);
  }
}

static void run_case(const char *name, int stages) {
  stages &= stage_mask;
  if (!stages) return;
  kase c;
  load_case(&c, name);
  if (stages & 1) sweep(name, "parse", st_parse, &c, MUST_FAIL);
  /* MAY_CARRY_ON: in a Debug build (verifier on after every pass), the
   * verifier's leave_block (core/ir/verify.c) ignores a failed
   * fbx_ptrmap_put, so failing only that allocation (ratio_iou: N = 12)
   * lets the pipeline succeed; the graph stays valid. */
  if (stages & 2) sweep(name, "passes", st_passes, &c, MAY_CARRY_ON);
  if (stages & 4) {
    reference(&c, "none", c.out);
    sweep(name, "forward", st_forward, &c, MAY_CARRY_ON);
  }
  if (stages & 8) {
    if (!(stages & 4)) reference(&c, "none", c.out); /* the outputs' shapes */
    ck_assert(!grad_runs(&c, -1, NULL, NULL)); /* warm-up, then the reference */
    release(c.fout, MAXV);
    release(c.gin, MAXV);
    ck_assert(!grad_runs(&c, -1, NULL, NULL));
    sweep(name, "backward", st_backward, &c, MAY_CARRY_ON);
  }
  /* The fuser is loaded before the sweep: with a transient failure the
   * loader reports "not built in this tree" instead of out of memory
   * (find_in_dirs in core/host/loader.c takes a failed path allocation for
   * a missing file), which is not what this sweep is about. */
  if (stages & 48) ck_assert(!fbx_fuser_load(&c.legacy, "legacy"));
  if (stages & 16) {
    ck_assert(!st_partition(&c, -1));
    /* MAY_CARRY_ON: the legacy plugin proposes nothing for a block when its
     * own allocations (host->alloc) fail, and the host cannot tell that
     * from "nothing to fuse"; the graph then stays valid and runs unfused. */
    sweep(name, "partition", st_partition, &c, MAY_CARRY_ON);
  }
  if (stages & 32) {
    reference(&c, "legacy", c.lout);
    sweep(name, "legacy", st_legacy, &c, MAY_CARRY_ON);
  }
  fbx_fuser_release(c.legacy);
  free_case(&c);
}

START_TEST(parse_and_passes) {
  for (int i = 0; i < NCASES; i++) run_case(CASES[i], 1 | 2);
}
END_TEST

START_TEST(forward) {
  for (int i = 0; i < NCASES; i++) run_case(CASES[i], 4);
}
END_TEST

START_TEST(backward) {
  for (int i = 0; i < NCASES; i++) run_case(CASES[i], 8);
}
END_TEST

START_TEST(legacy_host_side) {
  for (int i = 0; i < NCASES; i++) run_case(CASES[i], 16 | 32);
}
END_TEST

int main(void) {
  const char *s = getenv("FBX_ALLOC_SWEEP_STEP");
  if (s && atol(s) > 0) step = atol(s);
  s = getenv("FBX_ALLOC_SWEEP_STAGES");
  if (s) stage_mask = atoi(s);
  /* No storage block cache: blocks it keeps would look like leaks. */
  setenv("FUSEBOX_STORAGE_CACHE_MB", "0", 1);
  /* A disk cache of our own, warmed by the reference runs. */
  char dir[] = "/tmp/fbx-alloc-sweep-XXXXXX";
  if (!mkdtemp(dir)) return EXIT_FAILURE;
  setenv("FUSEBOX_CACHE_DIR", dir, 1);
  if (fbx_op_table_init()) return EXIT_FAILURE;
  Suite *su = suite_create("alloc_sweep");
  TCase *tc = tcase_create("sweep");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, parse_and_passes);
  tcase_add_test(tc, forward);
  tcase_add_test(tc, backward);
  tcase_add_test(tc, legacy_host_side);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  printf("alloc sweep: %ld failure points in all\n", total_points);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
