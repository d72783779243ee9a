/* nvfuser_like's compiler from inside (plugins/CMakeLists.txt compiles its
 * sources into this test; nvf_host is the real host table):
 *   - softmax, layer norm, a row sum, an outer (dim 0) sum and a pointwise
 *     chain built into fusion IR from graphs, segmented, scheduled: the
 *     scheduler each one gets (persistent for softmax and layer norm, with
 *     the row in local memory, one segment), the IR's domains;
 *   - two reductions over different axes are two segments; sum_to_size
 *     is one reduction with mixed kept/dropped dims;
 *   - every printed OpenCL C kernel builds with the host's opencl_build
 *     (PoCL here) and every CUDA C kernel with NVRTC when it is installed. */
#include <check.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/hostimpl.h"
#include "ir/text.h"
#include "ops/optable.h"
#include "testutil.h"

#include "../../plugins/nvfuser_like/nvf.h"

const fbxp_host_api *nvf_host;

/* PoCL, LLVM and NVRTC keep process-lifetime allocations that LeakSanitizer
 * would report at exit; they are not ours. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
  return "leak:libpocl\nleak:libOpenCL\nleak:libLLVM\nleak:libclang\nleak:libnvrtc\nleak:libhwloc\n";
}

/* the built program is the caller's: released through the ICD loader */
static void release_program(void *prog) {
  static void *lib;
  if (!lib) lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  int (*rel)(void *) = NULL;
  if (lib) *(void **)&rel = dlsym(lib, "clReleaseProgram");
  if (rel && prog) rel(prog);
}

typedef struct built {
  fbx_graph *g;
  nvf_fusion *f;
  nvf_plan pl;
  char *src[NVF_MAX_SEGS];
} built;

static void build(built *b, const char *ir, const fbxp_arg_spec *specs, int n, fbxk_dialect d) {
  nvf_host = fbx_host_api_table();
  fbxk_set_allocator(nvf_host->alloc, nvf_host->free);
  ck_assert(!fbx_op_table_init());
  memset(b, 0, sizeof *b);
  fbx_status *st = fbx_graph_parse(&b->g, ir, strlen(ir), "t.ir");
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  b->f = calloc(1, sizeof *b->f);
  fbxp_status *ps = nvf_fusion_build(b->f, (const fbxp_graph *)b->g, specs, n);
  ck_assert_msg(!ps, "%s", ps ? nvf_host->status_message(ps) : "");
  ck_assert_ptr_null(nvf_segment_fusion(&b->pl, b->f));
  b->pl.persist_limit = 32 * 1024;
  for (int s = 0; s < b->pl.nsegs; s++) {
    ck_assert_ptr_null(nvf_schedule_segment(&b->pl, s, d));
    b->src[s] = nvf_print(&b->pl.seg[s].k);
    ck_assert_ptr_nonnull(b->src[s]);
  }
}

static void unbuild(built *b) {
  for (int s = 0; s < b->pl.nsegs; s++) fbxk_free(b->src[s]);
  nvf_plan_free(&b->pl);
  free(b->f);
  fbx_graph_destroy(b->g);
}

static void opencl_builds(const built *b) {
  for (int s = 0; s < b->pl.nsegs; s++) {
    if (getenv("NVF_TEST_DUMP")) printf("%s\n", strstr(b->src[s], "__kernel") ? strstr(b->src[s], "__kernel") : b->src[s]);
    void *prog = NULL, *ctx = NULL, *dev = NULL, *q = NULL;
    char *log = NULL;
    fbxp_status *st = nvf_host->opencl_build(b->src[s], "", &prog, &ctx, &dev, &q, &log);
    ck_assert_msg(!st, "segment %d does not build: %s\n%s\n%s", s, nvf_host->status_message(st), log ? log : "", b->src[s]);
    nvf_host->free(log);
    release_program(prog);
  }
}

static fbxp_arg_spec f32(int n, const int64_t *sizes) {
  fbxp_arg_spec s = {.struct_size = sizeof s, .kind = FBXP_ARG_TENSOR, .dtype = FBXK_F32, .ndim = n, .device_type = kDLCPU};
  int64_t acc = 1;
  for (int d = n - 1; d >= 0; d--) {
    s.sizes[d] = sizes[d];
    s.strides[d] = acc;
    acc *= sizes[d];
  }
  return s;
}

static const char *softmax_ir = "graph(%x : Tensor):\n"
                                "  %d : int = prim::Constant[value=-1]()\n"
                                "  %n : NoneType = prim::Constant()\n"
                                "  %y : Tensor = aten::softmax(%x, %d, %n)\n"
                                "  return (%y)\n";

START_TEST(softmax_persistent) {
  built b;
  fbxp_arg_spec s = f32(2, (int64_t[]){8, 100});
  build(&b, softmax_ir, &s, 1, FBXK_OPENCL);
  ck_assert_int_eq(b.pl.nsegs, 1);
  const nvf_params *p = &b.pl.seg[0].p;
  ck_assert_int_eq(p->kind, NVF_SCHED_PERSISTENT);
  ck_assert(p->inner);
  ck_assert_int_eq(p->rows, 8);
  ck_assert_int_eq(p->row_len, 100);
  ck_assert_int_eq(p->block, 128);
  ck_assert_int_eq(p->nphases, 3); /* max; sum of exp; the division */
  /* the input row is loaded once: one global load of the input */
  int loads = 0;
  for (const char *q = b.src[0]; (q = strstr(q, "T0[")); q++) loads++;
  ck_assert_int_eq(loads, 1);
  fbxk_buf t = {0};
  nvf_fusion_print(b.f, &t);
  char *txt = fbxk_take(&t);
  ck_assert_ptr_nonnull(strstr(txt, "reduce_max(T"));
  ck_assert_ptr_nonnull(strstr(txt, "rS1{100}"));
  ck_assert_ptr_nonnull(strstr(txt, "bS-1{1}"));
  fbxk_free(txt);
  opencl_builds(&b);
  unbuild(&b);
}
END_TEST

static const char *layer_norm_ir = "graph(%x : Tensor, %w : Tensor, %b : Tensor):\n"
                                   "  %n : int = prim::Constant[value=64]()\n"
                                   "  %eps : float = prim::Constant[value=1.0000000000000001e-05]()\n"
                                   "  %t : bool = prim::Constant[value=1]()\n"
                                   "  %s : int[] = prim::ListConstruct(%n)\n"
                                   "  %y : Tensor = aten::layer_norm(%x, %s, %w, %b, %eps, %t)\n"
                                   "  return (%y)\n";

START_TEST(layer_norm_persistent) {
  built b;
  fbxp_arg_spec s[3] = {f32(2, (int64_t[]){4, 64}), f32(1, (int64_t[]){64}), f32(1, (int64_t[]){64})};
  build(&b, layer_norm_ir, s, 3, FBXK_OPENCL);
  ck_assert_int_eq(b.pl.nsegs, 1);
  ck_assert_int_eq(b.pl.seg[0].p.kind, NVF_SCHED_PERSISTENT);
  ck_assert_int_eq(b.pl.seg[0].p.nphases, 3); /* mean; variance; the affine epilogue */
  ck_assert_int_eq(b.f->naxes, 2);
  opencl_builds(&b);
  unbuild(&b);
}
END_TEST

static const char *sums_ir = "graph(%x : Tensor):\n"
                             "  %z : int = prim::Constant[value=0]()\n"
                             "  %o : int = prim::Constant[value=1]()\n"
                             "  %f : bool = prim::Constant[value=0]()\n"
                             "  %n : NoneType = prim::Constant()\n"
                             "  %l0 : int[] = prim::ListConstruct(%z)\n"
                             "  %l1 : int[] = prim::ListConstruct(%o)\n"
                             "  %e : Tensor = aten::exp(%x)\n"
                             "  %a : Tensor = aten::sum(%e, %l1, %f, %n)\n"
                             "  %c : Tensor = aten::sum(%e, %l0, %f, %n)\n"
                             "  return (%a, %c)\n";

START_TEST(two_reductions_two_segments) {
  built b;
  fbxp_arg_spec s = f32(2, (int64_t[]){6, 10});
  build(&b, sums_ir, &s, 1, FBXK_OPENCL);
  ck_assert_int_eq(b.pl.nsegs, 2);
  ck_assert_int_eq(b.pl.seg[0].p.kind, NVF_SCHED_REDUCTION);
  ck_assert(b.pl.seg[0].p.inner);
  ck_assert_int_eq(b.pl.seg[1].p.kind, NVF_SCHED_REDUCTION);
  ck_assert(!b.pl.seg[1].p.inner);
  ck_assert_int_eq(b.pl.seg[1].p.rows, 10);
  opencl_builds(&b);
  unbuild(&b);
}
END_TEST

static const char *pw_ir = "graph(%x : Tensor, %y : Tensor):\n"
                           "  %o : int = prim::Constant[value=1]()\n"
                           "  %a : Tensor = aten::add(%x, %y, %o)\n"
                           "  %b : Tensor = aten::sigmoid(%a)\n"
                           "  %c : Tensor = aten::mul(%b, %x)\n"
                           "  return (%c)\n";

START_TEST(pointwise_vec_and_broadcast) {
  built b;
  fbxp_arg_spec s[2] = {f32(2, (int64_t[]){4, 8}), f32(2, (int64_t[]){4, 8})};
  build(&b, pw_ir, s, 2, FBXK_OPENCL);
  ck_assert_int_eq(b.pl.nsegs, 1);
  ck_assert_int_eq(b.pl.seg[0].p.kind, NVF_SCHED_POINTWISE);
  ck_assert_int_eq(b.pl.seg[0].p.vec, 4);
  ck_assert(b.pl.seg[0].p.dense);
  opencl_builds(&b);
  unbuild(&b);
  /* y broadcast along rows: indexed per axis, one element per thread */
  s[1] = f32(1, (int64_t[]){8});
  s[0] = f32(2, (int64_t[]){3, 8});
  build(&b, pw_ir, s, 2, FBXK_OPENCL);
  ck_assert_int_eq(b.pl.seg[0].p.vec, 1);
  ck_assert(!b.pl.seg[0].p.dense);
  ck_assert_int_eq(b.f->naxes, 2);
  opencl_builds(&b);
  unbuild(&b);
}
END_TEST

/* sum_to_size to [1, 8] of x[5, 3, 8]: the leading dim dropped, dim 1 kept
 * as size 1: one reduction over axes 0 and 1 (one segment, outer) */
static const char *sum_to_ir = "graph(%x : Tensor):\n"
                               "  %a : int = prim::Constant[value=1]()\n"
                               "  %b : int = prim::Constant[value=8]()\n"
                               "  %s : int[] = prim::ListConstruct(%a, %b)\n"
                               "  %y : Tensor = aten::sum_to_size(%x, %s)\n"
                               "  return (%y)\n";

START_TEST(sum_to_size_one_reduction) {
  built b;
  fbxp_arg_spec s = f32(3, (int64_t[]){5, 3, 8});
  build(&b, sum_to_ir, &s, 1, FBXK_OPENCL);
  ck_assert_int_eq(b.pl.nsegs, 1);
  ck_assert_int_eq(b.pl.seg[0].p.kind, NVF_SCHED_REDUCTION);
  ck_assert_int_eq(b.pl.seg[0].p.rmask, 3u);
  ck_assert(!b.pl.seg[0].p.inner);
  ck_assert_int_eq(b.pl.seg[0].p.rows, 8);
  ck_assert_int_eq(b.pl.seg[0].p.row_len, 15);
  /* the output: [1, 8] */
  const nvf_tv *o = &b.f->tv[b.f->output_tv[0]];
  int64_t sizes[NVF_MAX_DIMS];
  ck_assert_int_eq(nvf_tv_logical(o, sizes), 2);
  ck_assert_int_eq(sizes[0], 1);
  ck_assert_int_eq(sizes[1], 8);
  opencl_builds(&b);
  unbuild(&b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("nvf_compiler");
  TCase *tc = tcase_create("compiler");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, softmax_persistent);
  tcase_add_test(tc, layer_norm_persistent);
  tcase_add_test(tc, two_reductions_two_segments);
  tcase_add_test(tc, pointwise_vec_and_broadcast);
  tcase_add_test(tc, sum_to_size_one_reduction);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
