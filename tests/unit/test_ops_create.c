/* Creation ops (ops/list_create.h) against PyTorch 1.13: zeros, ones, full,
 * empty, *_like, new_*, arange (golden cases from gen_shape_golden.py, run
 * by the runner in test_ops_shape.c), and the seeded random ops, which are
 * not PyTorch's numbers and are tested for determinism and statistics. */
#define FBX_GOLDEN_RUNNER_ONLY
#include "test_ops_shape.c"

static const int create_ids[] = {FBX_OPS_CREATE(GR_ID_)};
#define NCREATE ((int)(sizeof create_ids / sizeof create_ids[0]))

static fbx_ivalue ilist(int n, const int64_t *v) {
  fbx_ivalue l;
  OK(fbx_iv_list_new(&l, n));
  for (int i = 0; i < n; i++) OK(fbx_iv_list_push(&l, fbx_iv_int(v[i])));
  return l;
}

/* rand/randn(size, dtype) with the given generator state. */
static fbx_tensor *make_random(gr_family *f, const char *kind, int64_t n, fbx_dtype d, uint64_t *rng) {
  const fbx_op *op;
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  fbx_ivalue args[5] = {ilist(1, &n), fbx_iv_int(d), fbx_iv_none(), fbx_iv_none(), fbx_iv_none()};
  OK(gr_run_op(f, &op, kind, args, 5, outs, rng));
  fbx_iv_release(&args[0]);
  ck_assert(outs[0].kind == FBX_IV_TENSOR);
  return outs[0].u.t;
}

static fbx_tensor *make_random_like(gr_family *f, const char *kind, fbx_tensor *self, const fbx_ivalue *dtype, uint64_t *rng) {
  const fbx_op *op;
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  fbx_ivalue args[6] = {fbx_iv_tensor(self), *dtype, fbx_iv_none(), fbx_iv_none(), fbx_iv_none(), fbx_iv_none()};
  OK(gr_run_op(f, &op, kind, args, 6, outs, rng));
  ck_assert(outs[0].kind == FBX_IV_TENSOR);
  return outs[0].u.t;
}

static void moments(const fbx_tensor *t, double *mean, double *sd, double *lo, double *hi) {
  double s = 0, s2 = 0;
  *lo = INFINITY, *hi = -INFINITY;
  for (int64_t i = 0; i < t->numel; i++) {
    double v = fbx_tensor_get_f64(t, i);
    s += v;
    s2 += v * v;
    if (v < *lo) *lo = v;
    if (v > *hi) *hi = v;
  }
  *mean = s / (double)t->numel;
  *sd = sqrt(s2 / (double)t->numel - *mean * *mean);
}

static void run_random_checks(gr_family *f) {
  uint64_t a = 42, b = 42, c = 43;
  /* same seed, same numbers; a different seed, different numbers */
  fbx_tensor *r1 = make_random(f, "aten::rand", 1000, FBX_DTYPE_FLOAT32, &a);
  fbx_tensor *r2 = make_random(f, "aten::rand", 1000, FBX_DTYPE_FLOAT32, &b);
  fbx_tensor *r3 = make_random(f, "aten::rand", 1000, FBX_DTYPE_FLOAT32, &c);
  ck_assert(memcmp(r1->data, r2->data, 4000) == 0);
  ck_assert(memcmp(r1->data, r3->data, 4000) != 0);
  ck_assert(a == b && a != 42); /* the state advanced */
  /* the next call from the same state differs from the first */
  fbx_tensor *r4 = make_random(f, "aten::rand", 1000, FBX_DTYPE_FLOAT32, &a);
  ck_assert(memcmp(r1->data, r4->data, 4000) != 0);
  fbx_tensor_release(r1);
  fbx_tensor_release(r2);
  fbx_tensor_release(r3);
  fbx_tensor_release(r4);

  double mean, sd, lo, hi;
  static const fbx_dtype fl[] = {FBX_DTYPE_FLOAT32, FBX_DTYPE_FLOAT64, FBX_DTYPE_FLOAT16, FBX_DTYPE_BFLOAT16};
  for (int k = 0; k < 4; k++) {
    uint64_t s = 7 + (uint64_t)k;
    fbx_tensor *u = make_random(f, "aten::rand", 100000, fl[k], &s);
    ck_assert_int_eq(u->dtype, fl[k]);
    moments(u, &mean, &sd, &lo, &hi);
    ck_assert_msg(fabs(mean - 0.5) < 0.01 && fabs(sd - sqrt(1.0 / 12)) < 0.01, "rand %s mean %g sd %g",
                  fbx_dtype_name(fl[k]), mean, sd);
    ck_assert_msg(lo >= 0 && hi < 1, "rand %s range [%g, %g]", fbx_dtype_name(fl[k]), lo, hi);
    fbx_tensor_release(u);
    fbx_tensor *g = make_random(f, "aten::randn", 100001, fl[k], &s); /* odd count: last pair half used */
    moments(g, &mean, &sd, &lo, &hi);
    ck_assert_msg(fabs(mean) < 0.02 && fabs(sd - 1) < 0.02, "randn %s mean %g sd %g", fbx_dtype_name(fl[k]), mean, sd);
    ck_assert(lo < -3.5 && hi > 3.5 && isfinite(lo) && isfinite(hi));
    fbx_tensor_release(g);
  }

  /* *_like: dtype and layout of self (a transposed float64 tensor keeps its strides) */
  int64_t sz[2] = {300, 200};
  fbx_tensor *base = NULL, *tr = NULL;
  OK(fbx_tensor_zeros(&base, FBX_DTYPE_FLOAT64, 2, sz));
  int64_t tsz[2] = {200, 300}, tst[2] = {1, 200};
  OK(fbx_tensor_view(&tr, base, 2, tsz, tst, 0));
  fbx_ivalue none = fbx_iv_none(), f16 = fbx_iv_int(FBX_DTYPE_FLOAT16);
  uint64_t s = 99;
  fbx_tensor *u = make_random_like(f, "aten::rand_like", tr, &none, &s);
  ck_assert(u->dtype == FBX_DTYPE_FLOAT64 && u->strides[0] == 1 && u->strides[1] == 200);
  moments(u, &mean, &sd, &lo, &hi);
  ck_assert(fabs(mean - 0.5) < 0.01 && lo >= 0 && hi < 1);
  fbx_tensor_release(u);
  fbx_tensor *g = make_random_like(f, "aten::randn_like", tr, &f16, &s);
  ck_assert(g->dtype == FBX_DTYPE_FLOAT16);
  moments(g, &mean, &sd, &lo, &hi);
  ck_assert_msg(fabs(mean) < 0.02 && fabs(sd - 1) < 0.02, "randn_like mean %g sd %g", mean, sd);
  fbx_tensor_release(g);
  fbx_tensor_release(tr);
  fbx_tensor_release(base);

  /* integer dtypes are refused, as in PyTorch */
  const fbx_op *op;
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  int64_t two = 2;
  fbx_ivalue args[5] = {ilist(1, &two), fbx_iv_int(FBX_DTYPE_INT64), fbx_iv_none(), fbx_iv_none(), fbx_iv_none()};
  fbx_status *st = gr_run_op(f, &op, "aten::randn", args, 5, outs, &s);
  ck_assert(st && fbx_status_code(st) == FBX_ERR_RUNTIME && strstr(fbx_status_message(st), "aten::randn"));
  fbx_status_free(st);
  fbx_iv_release(&args[0]);
}

START_TEST(test_golden_and_random) {
  static gr_family f;
  f.name = "list_create.h";
  f.ids = create_ids;
  f.nids = NCREATE;
  gr_run_all(&f);
  ck_assert_int_gt(f.ran, 50);
  ck_assert_int_gt(f.errors, 3);
  run_random_checks(&f);
  gr_check_all_seen(&f);
}
END_TEST

/* torch.full((2,), True).dtype == torch.bool (eager 1.13; TorchScript can't pass a bool
 * Scalar, traced graphs can); torch.full((2,), 3).dtype == torch.int64. */
START_TEST(test_full_bool) {
  OK(fbx_op_table_init());
  const fbx_op *op;
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  int64_t two = 2;
  fbx_ivalue args[6] = {ilist(1, &two), fbx_iv_bool(true), fbx_iv_none(), fbx_iv_none(), fbx_iv_none(), fbx_iv_none()};
  OK(gr_run_op(NULL, &op, "aten::full", args, 6, outs, NULL));
  ck_assert_int_eq(outs[0].u.t->dtype, FBX_DTYPE_BOOL);
  ck_assert_int_eq(fbx_tensor_get_i64(outs[0].u.t, 1), 1);
  fbx_iv_release(&outs[0]);
  args[1] = fbx_iv_int(3);
  OK(gr_run_op(NULL, &op, "aten::full", args, 6, outs, NULL));
  ck_assert_int_eq(outs[0].u.t->dtype, FBX_DTYPE_INT64);
  fbx_iv_release(&outs[0]);
  fbx_iv_release(&args[0]);
}
END_TEST

START_TEST(test_rows) {
  OK(fbx_op_table_init());
  for (int i = 0; i < NCREATE; i++) {
    const fbx_op *op = fbx_op_get((fbx_op_id)create_ids[i]);
    ck_assert(op && op->kernel);
    ck_assert_msg(op->category == FBX_OPCAT_CREATION, "%s", op->id_name);
    bool random = strstr(op->id_name, "rand") != NULL;
    ck_assert_msg(!!(op->flags & FBX_OPF_NONDET) == random, "%s: NONDET exactly on the random rows", op->id_name);
    ck_assert(!(op->flags & (FBX_OPF_ALIAS | FBX_OPF_SIDE_EFFECT | FBX_OPF_INPLACE)));
  }
}
END_TEST

/* Larger arange runs in parallel chunks; values must not depend on them:
 * torch.arange(0, 10, 1e-4) (100000 elements; PyTorch itself splits this
 * across threads, so only the scalar formula start + i * step is checked
 * here, with a 1-ulp allowance inside the vectorized blocks). */
START_TEST(test_arange_large) {
  OK(fbx_op_table_init());
  const fbx_op *op;
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  fbx_ivalue args[7] = {fbx_iv_float(0), fbx_iv_float(10), fbx_iv_float(1e-4), fbx_iv_int(FBX_DTYPE_FLOAT64),
                        fbx_iv_none(), fbx_iv_none(), fbx_iv_none()};
  OK(gr_run_op(NULL, &op, "aten::arange", args, 7, outs, NULL));
  fbx_tensor *t = outs[0].u.t;
  ck_assert_int_eq(t->numel, 100000);
  for (int64_t i = 0; i < t->numel; i++) {
    double want = fma(1e-4, (double)i, 0.0), got = fbx_tensor_get_f64(t, i);
    ck_assert_msg(fabs(got - want) <= 4.5e-16 * fabs(want), "i=%" PRId64 " %.17g vs %.17g", i, got, want);
  }
  fbx_iv_release(&outs[0]);
}
END_TEST

START_TEST(test_alloc_failures) {
  OK(fbx_op_table_init());
  int64_t sz[2] = {3, 5};
  fbx_ivalue l = ilist(2, sz);
  fbx_ivalue z[5] = {l, fbx_iv_none(), fbx_iv_none(), fbx_iv_none(), fbx_iv_none()};
  fail_sweep("aten::zeros", z, 5);
  fail_sweep("aten::randn", z, 5);
  fbx_ivalue ar[5] = {fbx_iv_int(100), fbx_iv_none(), fbx_iv_none(), fbx_iv_none(), fbx_iv_none()};
  fail_sweep("aten::arange", ar, 5);
  fbx_tensor *t = NULL;
  OK(fbx_tensor_zeros(&t, FBX_DTYPE_FLOAT32, 2, sz));
  fbx_ivalue fl[7] = {fbx_iv_tensor(t), fbx_iv_float(2.5), fbx_iv_none(), fbx_iv_none(), fbx_iv_none(), fbx_iv_none(), fbx_iv_none()};
  fail_sweep("aten::full_like", fl, 7);
  fbx_ivalue cl[2] = {fbx_iv_tensor(t), fbx_iv_none()};
  fail_sweep("aten::clone", cl, 2);
  fbx_tensor_release(t);
  fbx_iv_release(&l);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_create");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_golden_and_random);
  tcase_add_test(tc, test_rows);
  tcase_add_test(tc, test_full_bool);
  tcase_add_test(tc, test_arange_large);
  tcase_add_test(tc, test_alloc_failures);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
