/* tensorexpr's loop-nest IR, lowering and schedule, tested inside the
 * plugin's own sources (plugins/CMakeLists.txt compiles them into this test;
 * te_host is the real host table).
 *
 *   - a hand-built IR printed before and after inline / linearize /
 *     flatten, against text written by hand, and run by the evaluator
 *     against libm;
 *   - the verifier rejects each kind of broken IR with its message;
 *   - a softmax lowered from a graph: three nests as lowered, one row loop
 *     after rowblock (four with rowblock off), and both schedules' results
 *     equal a softmax computed here in double;
 *   - FUSEBOX_TE_DISABLE names are the schedule's bits. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/hostimpl.h"
#include "ir/text.h"
#include "ops/optable.h"
#include "testutil.h"

#include "../../plugins/tensorexpr/te.h"

const fbxp_host_api *te_host;

static te_kernel_ir *new_ir(void) {
  te_host = fbx_host_api_table();
  fbxk_set_allocator(te_host->alloc, te_host->free);
  te_kernel_ir *k = calloc(1, sizeof *k);
  ck_assert_ptr_nonnull(k);
  k->arena = te_arena_create();
  ck_assert_ptr_nonnull(k->arena);
  k->root = te_block(k);
  return k;
}

static void free_ir(te_kernel_ir *k) {
  te_arena_destroy(k->arena);
  free(k);
}

static int add_buf(te_kernel_ir *k, const char *name, te_buf_kind kind, int slot, int dt, int r, const int64_t *sizes) {
  te_buf *b = &k->bufs[k->nbufs];
  memset(b, 0, sizeof *b);
  b->name = name;
  b->kind = kind;
  b->slot = slot;
  b->dtype = dt;
  b->ndim = r;
  int64_t s = 1;
  for (int d = r - 1; d >= 0; d--) {
    b->sizes[d] = sizes[d];
    b->strides[d] = s;
    s *= sizes[d];
  }
  b->numel = s;
  return k->nbufs++;
}

/* for a < s0 { for b < s1 { dst[a, b] = f(src[a, b]) } } */
static te_stmt *unary_nest(te_kernel_ir *k, int dst, int src, int op, const int64_t *sizes) {
  int v0 = te_new_var(k), v1 = te_new_var(k);
  te_expr *idx[2] = {te_var(k, v0), te_var(k, v1)};
  te_expr *a[1] = {te_load(k, src, 2, idx)};
  te_expr *val = te_op(k, op, FBXK_F32, FBXK_F32, 1, a);
  te_expr *sidx[2] = {te_var(k, v0), te_var(k, v1)};
  te_stmt *inner = te_block(k);
  te_append(inner, te_store(k, dst, 2, sidx, val));
  te_stmt *outer = te_block(k);
  te_append(outer, te_for(k, v1, sizes[1], inner));
  return te_for(k, v0, sizes[0], outer);
}

static int count_top_loops(const char *s) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, "\nfor ")); p++) n++;
  return n + !strncmp(s, "for ", 4);
}

static char *print(te_kernel_ir *k) {
  char *s = te_ir_print(k);
  ck_assert_ptr_nonnull(s);
  return s;
}

START_TEST(inline_and_flatten) {
  te_kernel_ir *k = new_ir();
  const int64_t sz[2] = {4, 8};
  int in = add_buf(k, "in0", TE_BUF_INPUT, 0, FBXK_F32, 2, sz);
  int out = add_buf(k, "out0", TE_BUF_OUTPUT, 0, FBXK_F32, 2, sz);
  int t = add_buf(k, "t0", TE_BUF_TEMP, 0, FBXK_F32, 2, sz);
  k->ninputs = 1;
  k->input_kind[0] = FBXP_ARG_TENSOR;
  k->input_buf[0] = in;
  k->noutputs = 1;
  k->output_buf[0] = out;
  te_append(k->root, unary_nest(k, t, in, FBXK_OP_NEG, sz));
  te_append(k->root, unary_nest(k, out, t, FBXK_OP_EXP, sz));
  char msg[128];
  ck_assert_int_eq(te_ir_verify(k, msg, sizeof msg), 0);
  char *s = print(k);
  ck_assert_str_eq(s, "buf in0 float32 [4, 8] strides [8, 1] (input 0)\n"
                      "buf out0 float32 [4, 8] strides [8, 1] (output 0)\n"
                      "buf t0 float32 [4, 8] strides [8, 1] (temp 0)\n"
                      "for v0 in 0..4 {\n"
                      "  for v1 in 0..8 {\n"
                      "    t0[v0, v1] = NEG<float32>(in0[v0, v1])\n"
                      "  }\n"
                      "}\n"
                      "for v2 in 0..4 {\n"
                      "  for v3 in 0..8 {\n"
                      "    out0[v2, v3] = EXP<float32>(t0[v2, v3])\n"
                      "  }\n"
                      "}\n");
  fbxk_free(s);
  te_inline(k);
  ck_assert_int_eq(te_ir_verify(k, msg, sizeof msg), 0);
  s = print(k);
  ck_assert_str_eq(s, "buf in0 float32 [4, 8] strides [8, 1] (input 0)\n"
                      "buf out0 float32 [4, 8] strides [8, 1] (output 0)\n"
                      "for v2 in 0..4 {\n"
                      "  for v3 in 0..8 {\n"
                      "    out0[v2, v3] = EXP<float32>(NEG<float32>(in0[v2, v3]))\n"
                      "  }\n"
                      "}\n");
  fbxk_free(s);
  te_linearize(k);
  te_flatten(k);
  te_vectorize(k);
  ck_assert_int_eq(te_ir_verify(k, msg, sizeof msg), 0);
  s = print(k);
  ck_assert_str_eq(s, "buf in0 float32 [4, 8] strides [8, 1] (input 0)\n"
                      "buf out0 float32 [4, 8] strides [8, 1] (output 0)\n"
                      "for v3 in 0..32 vectorize {\n"
                      "  out0[v3] = EXP<float32>(NEG<float32>(in0[v3]))\n"
                      "}\n");
  fbxk_free(s);
  /* the evaluator against libm */
  float x[32], y[32];
  for (int i = 0; i < 32; i++) x[i] = (float)(i - 16) * 0.37f;
  char *bufs[2] = {(char *)x, (char *)y};
  ck_assert_int_eq(te_eval(k, bufs, NULL, NULL), 0);
  for (int i = 0; i < 32; i++) ck_assert_float_eq_tol(y[i], exp(-(double)x[i]), 2e-6 * exp(-(double)x[i]));
  free_ir(k);
}
END_TEST

/* a buffer written twice (a softmax rewrites its output in place) is not
 * inlined: its loads after the second store mean the second value */
START_TEST(inline_keeps_rewritten_buffers) {
  te_kernel_ir *k = new_ir();
  const int64_t sz[2] = {2, 4};
  int in = add_buf(k, "in0", TE_BUF_INPUT, 0, FBXK_F32, 2, sz);
  int out = add_buf(k, "out0", TE_BUF_OUTPUT, 0, FBXK_F32, 2, sz);
  int t = add_buf(k, "t0", TE_BUF_TEMP, 0, FBXK_F32, 2, sz);
  te_append(k->root, unary_nest(k, t, in, FBXK_OP_NEG, sz)); /* t = -x */
  te_append(k->root, unary_nest(k, t, t, FBXK_OP_EXP, sz));  /* t = exp(t) */
  te_append(k->root, unary_nest(k, out, t, FBXK_OP_NEG, sz)); /* out = -t */
  te_inline(k);
  char *s = print(k);
  ck_assert_int_eq(count_top_loops(s), 3);
  fbxk_free(s);
  te_linearize(k);
  char msg[128];
  ck_assert_int_eq(te_ir_verify(k, msg, sizeof msg), 0);
  float x[8], y[8], tmp[8];
  for (int i = 0; i < 8; i++) x[i] = (float)i * 0.25f - 1.0f;
  char *bufs[3] = {(char *)x, (char *)y, (char *)tmp};
  ck_assert_int_eq(te_eval(k, bufs, NULL, NULL), 0);
  for (int i = 0; i < 8; i++) ck_assert_float_eq_tol(y[i], -exp(-(double)x[i]), 2e-6 * exp(-(double)x[i]));
  free_ir(k);
}
END_TEST

/* the verifier: each broken IR names its problem */
static void expect_bad(te_kernel_ir *k, const char *what) {
  char msg[128] = "";
  ck_assert_int_eq(te_ir_verify(k, msg, sizeof msg), -1);
  ck_assert_msg(strstr(msg, what) != NULL, "verifier said '%s', expected '%s'", msg, what);
}

START_TEST(verifier_rejects) {
  const int64_t sz[2] = {4, 8}, small[2] = {4, 4};
  /* a store to an input */
  te_kernel_ir *k = new_ir();
  int in = add_buf(k, "in0", TE_BUF_INPUT, 0, FBXK_F32, 2, sz);
  te_append(k->root, unary_nest(k, in, in, FBXK_OP_NEG, sz));
  expect_bad(k, "store to an input");
  free_ir(k);
  /* a loop running past its buffer */
  k = new_ir();
  in = add_buf(k, "in0", TE_BUF_INPUT, 0, FBXK_F32, 2, sz);
  int t = add_buf(k, "t0", TE_BUF_TEMP, 0, FBXK_F32, 2, small);
  te_append(k->root, unary_nest(k, t, in, FBXK_OP_NEG, sz));
  expect_bad(k, "loop runs past a dim");
  free_ir(k);
  /* the same after linearization: outside its buffer */
  k = new_ir();
  in = add_buf(k, "in0", TE_BUF_INPUT, 0, FBXK_F32, 2, sz);
  t = add_buf(k, "t0", TE_BUF_TEMP, 0, FBXK_F32, 2, small);
  te_append(k->root, unary_nest(k, t, in, FBXK_OP_NEG, sz));
  te_linearize(k);
  expect_bad(k, "access outside its buffer");
  free_ir(k);
  /* an unbound loop var, a local before its definition */
  k = new_ir();
  t = add_buf(k, "t0", TE_BUF_TEMP, 0, FBXK_F32, 2, sz);
  int v = te_new_var(k);
  te_expr *idx[2] = {te_var(k, v), te_imm_i(k, 0)};
  te_append(k->root, te_store(k, t, 2, idx, te_imm(k, FBXK_F32, (fbxk_scalar){1, 0})));
  expect_bad(k, "unbound loop var");
  free_ir(k);
  k = new_ir();
  t = add_buf(k, "t0", TE_BUF_TEMP, 0, FBXK_F32, 2, sz);
  int l = te_new_local(k, FBXK_F32);
  te_expr *zero[2] = {te_imm_i(k, 0), te_imm_i(k, 0)};
  te_append(k->root, te_store(k, t, 2, zero, te_local(k, l, FBXK_F32)));
  te_append(k->root, te_let(k, l, te_imm(k, FBXK_F32, (fbxk_scalar){1, 0})));
  expect_bad(k, "local used before its definition");
  free_ir(k);
  /* a loop var bound twice */
  k = new_ir();
  in = add_buf(k, "in0", TE_BUF_INPUT, 0, FBXK_F32, 2, sz);
  t = add_buf(k, "t0", TE_BUF_TEMP, 0, FBXK_F32, 2, sz);
  te_stmt *n1 = unary_nest(k, t, in, FBXK_OP_NEG, sz);
  te_append(k->root, n1);
  te_append(k->root->first->body, te_for(k, n1->var, 2, te_block(k)));
  expect_bad(k, "loop var bound twice");
  free_ir(k);
}
END_TEST

/* ---- softmax from a graph ---------------------------------------------------------------- */

static const char *softmax_ir = "graph(%x : Float(8, 16, strides=[16, 1], requires_grad=0, device=cpu)):\n"
                                "  %d : int = prim::Constant[value=-1]()\n"
                                "  %n : NoneType = prim::Constant()\n"
                                "  %y : Float(8, 16, strides=[16, 1], requires_grad=0, device=cpu) = aten::softmax(%x, %d, %n)\n"
                                "  return (%y)\n";

static int count(const char *s, const char *w) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, w)); p++) n++;
  return n;
}

static te_kernel_ir *lower_softmax(fbx_graph **g) {
  ck_assert(!fbx_op_table_init());
  fbx_status *st = fbx_graph_parse(g, softmax_ir, strlen(softmax_ir), "softmax.ir");
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  te_kernel_ir *k = new_ir();
  fbxp_arg_spec spec = {.struct_size = sizeof spec, .kind = FBXP_ARG_TENSOR, .dtype = FBXK_F32, .ndim = 2,
                        .sizes = {8, 16}, .strides = {16, 1}, .device_type = kDLCPU};
  fbxp_status *ps = te_lower(k, (const fbxp_graph *)*g, &spec, 1);
  ck_assert_ptr_null(ps);
  return k;
}

static void check_softmax_values(const te_kernel_ir *k) {
  float x[128], y[128];
  for (int i = 0; i < 128; i++) x[i] = sinf((float)i * 0.7f) * 3.0f;
  char *bufs[TE_MAX_BUFS] = {0};
  char *temps[TE_MAX_BUFS] = {0};
  for (int b = 0; b < k->nbufs; b++) {
    if (k->bufs[b].kind == TE_BUF_INPUT) bufs[b] = (char *)x;
    else if (k->bufs[b].kind == TE_BUF_OUTPUT) bufs[b] = (char *)y;
    else bufs[b] = temps[b] = calloc((size_t)(k->bufs[b].numel ? k->bufs[b].numel : 1), 8);
  }
  ck_assert_int_eq(te_eval(k, bufs, NULL, NULL), 0);
  for (int r = 0; r < 8; r++) {
    double m = -INFINITY, s = 0;
    for (int j = 0; j < 16; j++) m = fmax(m, x[r * 16 + j]);
    for (int j = 0; j < 16; j++) s += exp(x[r * 16 + j] - m);
    for (int j = 0; j < 16; j++) {
      double want = exp(x[r * 16 + j] - m) / s;
      ck_assert_float_eq_tol(y[r * 16 + j], want, 1e-6 * want + 1e-9);
    }
  }
  for (int b = 0; b < k->nbufs; b++) free(temps[b]);
}

START_TEST(softmax_rowblock) {
  fbx_graph *g = NULL;
  te_kernel_ir *k = lower_softmax(&g);
  char msg[128];
  ck_assert_int_eq(te_ir_verify(k, msg, sizeof msg), 0);
  char *before = print(k);
  /* max, exp(x - max) into the output, its sum, the division: four nests, two reductions */
  ck_assert_int_eq(count_top_loops(before), 4);
  ck_assert_int_eq(count(before, "reduce "), 2);
  ck_assert_ptr_nonnull(strstr(before, "MAX_OTHER"));
  fbxk_free(before);
  ck_assert_ptr_null(te_schedule(k, TE_T_ALL, 1));
  char *after = print(k);
  /* one parallel loop over the 8 rows holds all three passes */
  ck_assert_int_eq(count_top_loops(after), 1);
  ck_assert_ptr_nonnull(strstr(after, "for v0 in 0..8 parallel {\n"));
  ck_assert_int_eq(count(after, "reduce "), 2);
  ck_assert_int_eq(count(after, "vectorize"), 4); /* the max, the exp loop, the sum, the division */
  ck_assert_int_eq(count(after, "EXP<"), 1);       /* exp once per element */
  ck_assert_ptr_nonnull(strstr(after, "let "));      /* the row statistics in registers */
  ck_assert_ptr_null(strstr(after, "buf t"));        /* and no temporaries left */
  check_softmax_values(k);
  fbxk_free(after);
  free_ir(k);
  fbx_graph_destroy(g);
  /* rowblock off: four loops over the rows again */
  k = lower_softmax(&g);
  ck_assert_ptr_null(te_schedule(k, TE_T_ALL & ~TE_T_ROWBLOCK, 1 << 30));
  after = print(k);
  ck_assert_int_eq(count_top_loops(after), 4);
  ck_assert_ptr_null(strstr(after, "parallel")); /* below FUSEBOX_TE_PARALLEL_MIN */
  check_softmax_values(k);
  fbxk_free(after);
  free_ir(k);
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(c_source_of_softmax) {
  fbx_graph *g = NULL;
  te_kernel_ir *k = lower_softmax(&g);
  ck_assert_ptr_null(te_schedule(k, TE_T_ALL, 1));
  char *c = te_codegen_c(k, "te_kernel", NULL);
  ck_assert_ptr_nonnull(c);
  ck_assert_ptr_nonnull(strstr(c, "void te_kernel(char *const *bufs, const double *fs, const int64_t *is, int nt)"));
  ck_assert_ptr_nonnull(strstr(c, "#pragma omp parallel for num_threads(nt)"));
  ck_assert_ptr_nonnull(strstr(c, "float l1_v[32] = {0};")); /* the sum in 32 float32 lanes */
  ck_assert_ptr_nonnull(strstr(c, "reduction(max:"));         /* the max as an OpenMP reduction */
  ck_assert_ptr_nonnull(strstr(c, "fbxk_vexpf"));
  /* it compiles with the host's compiler service and computes the same as the evaluator */
  fbxp_shlib *lib = NULL;
  fbxp_status *ps = te_host->cc_compile(c, "-fopenmp -lm", &lib);
  if (ps) {
    printf("SKIPPED the compile: %s\n", fbx_host_drop_status(ps) ? "the C compiler failed" : "");
  } else {
    void *sym = te_host->shlib_symbol(lib, "te_kernel");
    ck_assert_ptr_nonnull(sym);
    void (*fn)(char *const *, const double *, const int64_t *, int);
    memcpy(&fn, &sym, sizeof sym);
    float x[128], y1[128], y2[128], t[2][8] = {{0}};
    for (int i = 0; i < 128; i++) x[i] = cosf((float)i) * 5.0f;
    char *bufs[TE_MAX_BUFS] = {0};
    int nt = 0;
    for (int b = 0; b < k->nbufs; b++)
      bufs[b] = k->bufs[b].kind == TE_BUF_INPUT ? (char *)x : k->bufs[b].kind == TE_BUF_OUTPUT ? (char *)y1 : (char *)t[nt++ % 2];
    fn(bufs, NULL, NULL, 2);
    for (int b = 0; b < k->nbufs; b++)
      if (k->bufs[b].kind == TE_BUF_OUTPUT) bufs[b] = (char *)y2;
    ck_assert_int_eq(te_eval(k, bufs, NULL, NULL), 0);
    for (int i = 0; i < 128; i++) ck_assert_float_eq_tol(y1[i], y2[i], 1e-6f * y2[i] + 1e-12f);
    te_host->shlib_release(lib);
  }
  fbxk_free(c);
  free_ir(k);
  fbx_graph_destroy(g);
}
END_TEST

/* A float32 row sum: accumulated in float32 (not float64), in the C
 * backend as 32 lanes summed pairwise per block of 4096, the blocks added
 * in float64. Rows of 10007 (three blocks, the last with a tail of 23 that
 * no full set of lanes covers) against a sum in double. */
static const char sum_ir[] = "graph(%x : Float(3, 10007, strides=[10007, 1], requires_grad=0, device=cpu)):\n"
                             "  %d : int = prim::Constant[value=1]()\n"
                             "  %f : bool = prim::Constant[value=0]()\n"
                             "  %n : NoneType = prim::Constant()\n"
                             "  %l : int[] = prim::ListConstruct(%d)\n"
                             "  %s : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::sum(%x, %l, %f, %n)\n"
                             "  %y : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::mul(%s, %s)\n"
                             "  return (%y)\n";

START_TEST(c_sum_lanes) {
  ck_assert(!fbx_op_table_init());
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, sum_ir, strlen(sum_ir), "sum.ir");
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  te_kernel_ir *k = new_ir();
  fbxp_arg_spec spec = {.struct_size = sizeof spec, .kind = FBXP_ARG_TENSOR, .dtype = FBXK_F32, .ndim = 2,
                        .sizes = {3, 10007}, .strides = {10007, 1}, .device_type = kDLCPU};
  ck_assert_ptr_null(te_lower(k, (const fbxp_graph *)g, &spec, 1));
  ck_assert_ptr_null(te_schedule(k, TE_T_ALL, 1));
  char *ir = print(k);
  ck_assert_msg(strstr(ir, "reduce l0 float32 = 0 ADD_T vectorize over") != NULL, "%s", ir);
  fbxk_free(ir);
  char *c = te_codegen_c(k, "te_kernel", NULL);
  ck_assert_ptr_nonnull(c);
  ck_assert_ptr_nonnull(strstr(c, "float l0_v[32] = {0};"));
  ck_assert_ptr_nonnull(strstr(c, "l0_b += 4096")); /* blocks */
  ck_assert_ptr_nonnull(strstr(c, "l0_v[0] = "));   /* the tail */
  static float x[3 * 10007];
  float y1[3] = {0}, y2[3] = {0};
  double want[3] = {0};
  for (int r = 0; r < 3; r++)
    for (int j = 0; j < 10007; j++) {
      x[r * 10007 + j] = (float)(r + 1) + sinf((float)j * 0.37f) * 0.5f; /* each row sums far from 0 */
      want[r] += x[r * 10007 + j];
    }
  char *bufs[TE_MAX_BUFS] = {0};
  for (int b = 0; b < k->nbufs; b++)
    bufs[b] = k->bufs[b].kind == TE_BUF_INPUT ? (char *)x : k->bufs[b].kind == TE_BUF_OUTPUT ? (char *)y2 : NULL;
  ck_assert_int_eq(te_eval(k, bufs, NULL, NULL), 0); /* the interpreter: a float32 sum in order */
  for (int r = 0; r < 3; r++) ck_assert_double_eq_tol(y2[r], want[r] * want[r], 1e-4 * want[r] * want[r]);
  fbxp_shlib *lib = NULL;
  fbxp_status *ps = te_host->cc_compile(c, "-fopenmp -lm", &lib);
  if (ps) {
    printf("SKIPPED the compile: %s\n", fbx_host_drop_status(ps) ? "the C compiler failed" : "");
  } else {
    void *sym = te_host->shlib_symbol(lib, "te_kernel");
    ck_assert_ptr_nonnull(sym);
    void (*fn)(char *const *, const double *, const int64_t *, int);
    memcpy(&fn, &sym, sizeof sym);
    for (int b = 0; b < k->nbufs; b++)
      if (k->bufs[b].kind == TE_BUF_OUTPUT) bufs[b] = (char *)y1;
    fn(bufs, NULL, NULL, 2);
    /* the lanes' error is far below a sequential float32 sum's: 2 ulps of the square */
    for (int r = 0; r < 3; r++) ck_assert_double_eq_tol(y1[r], want[r] * want[r], 2.5e-7 * want[r] * want[r]);
    te_host->shlib_release(lib);
  }
  fbxk_free(c);
  free_ir(k);
  fbx_graph_destroy(g);
}
END_TEST

/* A softmax written by hand: exp(x - max) is read by the row sum and by
 * the division that writes the output. It is stored in the output (exp once
 * per element, the division in place), not inlined into both readers. */
static const char softmax_manual_ir[] =
    "graph(%x : Float(8, 16, strides=[16, 1], requires_grad=0, device=cpu)):\n"
    "  %d : int = prim::Constant[value=-1]()\n"
    "  %t : bool = prim::Constant[value=1]()\n"
    "  %n : NoneType = prim::Constant()\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %l : int[] = prim::ListConstruct(%d)\n"
    "  %m : Float(8, 1, strides=[1, 1], requires_grad=0, device=cpu) = aten::amax(%x, %l, %t)\n"
    "  %s : Float(8, 16, strides=[16, 1], requires_grad=0, device=cpu) = aten::sub(%x, %m, %one)\n"
    "  %e : Float(8, 16, strides=[16, 1], requires_grad=0, device=cpu) = aten::exp(%s)\n"
    "  %z : Float(8, 1, strides=[1, 1], requires_grad=0, device=cpu) = aten::sum(%e, %l, %t, %n)\n"
    "  %y : Float(8, 16, strides=[16, 1], requires_grad=0, device=cpu) = aten::div(%e, %z)\n"
    "  return (%y)\n";

START_TEST(softmax_by_hand_exp_once) {
  ck_assert(!fbx_op_table_init());
  for (int pass = 0; pass < 2; pass++) {
    fbx_graph *g = NULL;
    fbx_status *st = fbx_graph_parse(&g, softmax_manual_ir, strlen(softmax_manual_ir), "softmax_manual.ir");
    ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
    te_kernel_ir *k = new_ir();
    fbxp_arg_spec spec = {.struct_size = sizeof spec, .kind = FBXP_ARG_TENSOR, .dtype = FBXK_F32, .ndim = 2,
                          .sizes = {8, 16}, .strides = {16, 1}, .device_type = kDLCPU};
    ck_assert_ptr_null(te_lower(k, (const fbxp_graph *)g, &spec, 1));
    /* pass 1: inline off, the temporaries stay: exp once either way */
    ck_assert_ptr_null(te_schedule(k, pass ? TE_T_ALL & ~TE_T_INLINE : TE_T_ALL, 1));
    char *after = print(k);
    ck_assert_msg(count(after, "EXP<") == 1, "%s", after);
    if (!pass) {
      ck_assert_int_eq(count_top_loops(after), 1);
      ck_assert_msg(strstr(after, "of out0[") != NULL, "%s", after); /* the sum reads the output */
      ck_assert_ptr_null(strstr(after, "buf t"));
    }
    fbxk_free(after);
    check_softmax_values(k);
    free_ir(k);
    fbx_graph_destroy(g);
  }
}
END_TEST

START_TEST(disable_names) {
  ck_assert_str_eq(te_transform_names[0], "inline");
  ck_assert_int_eq(TE_T_INLINE, 1 << 0);
  ck_assert_str_eq(te_transform_names[1], "rowblock");
  ck_assert_int_eq(TE_T_ROWBLOCK, 1 << 1);
  ck_assert_str_eq(te_transform_names[4], "vectorize");
  ck_assert_int_eq(TE_T_VECTORIZE, 1 << 4);
}
END_TEST

int main(void) {
  Suite *s = suite_create("te_ir");
  TCase *tc = tcase_create("ir");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, inline_and_flatten);
  tcase_add_test(tc, inline_keeps_rewritten_buffers);
  tcase_add_test(tc, verifier_rejects);
  tcase_add_test(tc, softmax_rowblock);
  tcase_add_test(tc, c_source_of_softmax);
  tcase_add_test(tc, c_sum_lanes);
  tcase_add_test(tc, softmax_by_hand_exp_once);
  tcase_add_test(tc, disable_names);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
