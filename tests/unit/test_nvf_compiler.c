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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/hostimpl.h"
#include "ir/text.h"
#include "ops/optable.h"
#include "testutil.h"

#include "../../plugins/nvfuser_like/nvf.h"
#include "../../plugins/nvfuser_like/nvf_rt.h"

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

/* set: the next build as under FUSEBOX_NVF_DISABLE=vload */
static int build_novload;
/* set: the next build's plan streams outputs of kernels moving this many bytes (the device's cache size) */
static int64_t build_stream_bytes;

/* cpu: the plan a CPU device gets (a row per work-item); novec: FUSEBOX_NVF_DISABLE=vectorize */
static void build_for(built *b, const char *ir, const fbxp_arg_spec *specs, int n, fbxk_dialect d, int cpu, int novec) {
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
  b->pl.cpu_rows = cpu;
  b->pl.disable_vec = novec;
  b->pl.disable_vload = build_novload;
  b->pl.stream_bytes = build_stream_bytes;
  for (int s = 0; s < b->pl.nsegs; s++) {
    ck_assert_ptr_null(nvf_schedule_segment(&b->pl, s, d));
    b->src[s] = nvf_print(&b->pl.seg[s].k);
    ck_assert_ptr_nonnull(b->src[s]);
  }
}

static void build(built *b, const char *ir, const fbxp_arg_spec *specs, int n, fbxk_dialect d) {
  build_for(b, ir, specs, n, d, 0, 0);
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

/* every segment's CUDA C compiles with NVRTC (nothing checked without libnvrtc) */
static void nvrtc_builds(const built *b) {
  for (int s = 0; s < b->pl.nsegs; s++) {
    char *ptx = NULL, *log = NULL;
    fbxp_status *st = nvf_host->nvrtc_compile(b->src[s], b->pl.seg[s].k.name, NULL, &ptx, &log);
    if (st && nvf_host->status_code(st) == FBXP_ERR_UNSUPPORTED) {
      printf("nvrtc_builds: %s; not checked\n", nvf_host->status_message(st));
      nvf_host->status_free(st);
      return;
    }
    ck_assert_msg(!st, "segment %d does not compile with NVRTC: %s\n%s\n%s", s, st ? nvf_host->status_message(st) : "",
                  log ? log : "", b->src[s]);
    ck_assert_ptr_nonnull(strstr(ptx, b->pl.seg[s].k.name));
    nvf_host->free(ptx);
    nvf_host->free(log);
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

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *q = s; (q = strstr(q, what)); q++) n++;
  return n;
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
  /* CUDA: a thread's share of the row (100 / 128: 1, predicated) in an
   * unrolled loop, the kept rows in registers, warp-shuffle block reductions */
  build(&b, softmax_ir, &s, 1, FBXK_CUDA);
  p = &b.pl.seg[0].p;
  ck_assert_int_eq(p->kind, NVF_SCHED_PERSISTENT);
  ck_assert_int_eq(p->regs, 1);
  const char *src = strstr(b.src[0], "__global__");
  ck_assert_ptr_nonnull(src);
  ck_assert_ptr_nonnull(strstr(src, "if (j < 100)"));
  ck_assert_int_eq(count(src, "T0["), 1);
  ck_assert_ptr_null(strstr(src, "__shared__ float p")); /* no kept row in shared memory */
  ck_assert_int_eq(count(src, "__shfl_xor_sync"), 2); /* max, sum */
  nvrtc_builds(&b);
  unbuild(&b);
  /* [8, 1024]: 4 per thread, exact (no predicate); [8, 8192]: 32 per
   * thread, past NVF_CUDA_ROW_REGS: the strided loop over a shared-memory row */
  s = f32(2, (int64_t[]){8, 1024});
  build(&b, softmax_ir, &s, 1, FBXK_CUDA);
  ck_assert_int_eq(b.pl.seg[0].p.regs, 4);
  src = strstr(b.src[0], "__global__");
  ck_assert_ptr_nonnull(strstr(src, "float p0[4];"));
  ck_assert_ptr_null(strstr(src, "if (j <"));
  nvrtc_builds(&b);
  unbuild(&b);
  s = f32(2, (int64_t[]){8, 8192});
  build(&b, softmax_ir, &s, 1, FBXK_CUDA);
  ck_assert_int_eq(b.pl.seg[0].p.regs, 0);
  ck_assert_ptr_nonnull(strstr(b.src[0], "for (int64_t j = tid; j < 8192; j += 256)"));
  nvrtc_builds(&b);
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
  /* CUDA, a row of 64: one warp-shuffle reduction per statistic in a block of 64 */
  build(&b, layer_norm_ir, s, 3, FBXK_CUDA);
  ck_assert_int_eq(b.pl.seg[0].p.block, 64);
  ck_assert_int_eq(b.pl.seg[0].p.regs, 1);
  ck_assert_int_ge(count(b.src[0], "__shfl_xor_sync"), 2);
  nvrtc_builds(&b);
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
  /* each input's 4 elements are loaded before the first is computed (4
   * loads in flight per thread on a GPU): one load of each, into a<t>[u],
   * ahead of the loop that computes and stores */
  const char *src = b.src[0], *first_load = strstr(src, "a0[u] = T0[lin];"), *store = strstr(src, "T4[lin] =");
  ck_assert_ptr_nonnull(first_load);
  ck_assert_ptr_nonnull(strstr(src, "a1[u] = T1[lin];"));
  ck_assert_ptr_nonnull(store);
  ck_assert(first_load < store);
  ck_assert_int_eq(count(src, "T0["), 1);
  ck_assert_int_eq(count(src, "T1["), 1);
  ck_assert_ptr_null(strstr(strstr(src, "a1[u] = T1[lin];"), "T0[")); /* no load after the loads */
  opencl_builds(&b);
  unbuild(&b);
  /* CUDA, all float32: each tensor moves in one 16-byte access per thread
   * (4 consecutive elements), computed one by one from registers */
  build(&b, pw_ir, s, 2, FBXK_CUDA);
  ck_assert(b.pl.seg[0].p.vload);
  src = b.src[0];
  ck_assert_ptr_nonnull(strstr(src, "const float4 w0 = *(const float4 *)(T0 + base);"));
  ck_assert_ptr_nonnull(strstr(src, "const float4 w1 = *(const float4 *)(T1 + base);"));
  ck_assert_ptr_nonnull(strstr(src, "*(float4 *)(T4 + base) = make_float4(o4[0], o4[1], o4[2], o4[3]);"));
  ck_assert_int_eq(count(src, "T0"), 2); /* the parameter and its one load */
  ck_assert_int_eq(count(src, "T4"), 2);
  ck_assert_ptr_null(strstr(src, "T4[")); /* no element store */
  nvrtc_builds(&b);
  unbuild(&b);
  /* FUSEBOX_NVF_DISABLE=vload: the 4 loads strided by the block, as on OpenCL */
  build_novload = 1;
  build(&b, pw_ir, s, 2, FBXK_CUDA);
  build_novload = 0;
  ck_assert(!b.pl.seg[0].p.vload);
  ck_assert_ptr_nonnull(strstr(b.src[0], "a0[u] = T0[lin];"));
  ck_assert_ptr_null(strstr(b.src[0], "(const float4 *)"));
  nvrtc_builds(&b);
  unbuild(&b);
  /* float64 tensors: no 16-byte form (4 doubles are 32 bytes) */
  fbxp_arg_spec d[2] = {s[0], s[1]};
  d[0].dtype = d[1].dtype = FBXK_F64;
  build(&b, pw_ir, d, 2, FBXK_CUDA);
  ck_assert_int_eq(b.pl.seg[0].p.vec, 4);
  ck_assert(!b.pl.seg[0].p.vload);
  ck_assert_ptr_null(strstr(b.src[0], "(const float4 *)"));
  nvrtc_builds(&b);
  unbuild(&b);
  /* the count not a multiple of 4: one element per thread */
  s[0] = s[1] = f32(2, (int64_t[]){3, 7});
  build(&b, pw_ir, s, 2, FBXK_CUDA);
  ck_assert_int_eq(b.pl.seg[0].p.vec, 1);
  ck_assert(!b.pl.seg[0].p.vload);
  nvrtc_builds(&b);
  unbuild(&b);
  s[0] = s[1] = f32(2, (int64_t[]){4, 8});
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

/* Segment 0 of b run through the runtime (PoCL) on buffers bufs[0..nbufs),
 * its parameters in order (what plugin.c launches). */
static size_t run_wrap_align; /* set: host pointers aligned so are wrapped (nvf_rt_set_wrap_align) */
static void run_seg0(const built *b, nvf_buffer *bufs, int nbufs) {
  nvf_rt *rt = NULL;
  fbxp_status *st = nvf_rt_open(nvf_host, NVF_TARGET_OPENCL, &rt);
  ck_assert_msg(!st, "%s", st ? nvf_host->status_message(st) : "");
  if (run_wrap_align) nvf_rt_set_wrap_align(rt, run_wrap_align);
  nvf_program *prog = NULL;
  st = nvf_rt_compile(rt, b->src[0], b->pl.seg[0].k.name, &prog);
  ck_assert_msg(!st, "%s", st ? nvf_host->status_message(st) : "");
  nvf_arg args[8];
  ck_assert_int_le(b->pl.seg[0].k.nparams, 8);
  ck_assert_int_eq(b->pl.seg[0].k.nparams, nbufs);
  for (int a = 0; a < nbufs; a++) args[a] = (nvf_arg){.kind = NVF_ARG_BUFFER, .buffer = a};
  const nvf_params *p = &b->pl.seg[0].p;
  nvf_launch l = {.program = prog, .args = args, .nargs = nbufs, .dims = 1};
  l.local[0] = (size_t)p->block;
  l.global[0] = (size_t)(p->groups * p->block);
  st = nvf_rt_run(rt, bufs, nbufs, &l, 1);
  ck_assert_msg(!st, "%s", st ? nvf_host->status_message(st) : "");
  nvf_rt_close(rt);
}

/* Six rows of n: ordinary; past exp's clamp at -104; holding -inf (exp
 * 0); holding +inf (a NaN row); holding NaN (a NaN row); a slow ramp. */
static void softmax_rows_fill(float *x, int rows, int n) {
  for (int i = 0; i < rows * n; i++) {
    int r = i / n % 6, j = i % n;
    x[i] = r == 0 ? (float)((j * 37) % 101) * 0.25f - 12.0f
           : r == 1 ? (float)((j * 53) % 211) * 1.5f - 200.0f
           : r == 2 ? (j == 700 % n ? -INFINITY : (float)(j % 17) - 8.0f)
           : r == 3 ? (j == 5 ? INFINITY : 1.0f)
           : r == 4 ? (j == 999 % n ? NAN : 0.5f)
                    : (float)j * 1e-3f;
  }
}

/* A CPU device's softmax row (issue 15): its loops on float16 vectors
 * (vload16, the prelude's 16-lane exp, FBXK_VSTORE) with 8 accumulator lanes,
 * and the very bits of the scalar-lane kernel (FUSEBOX_NVF_DISABLE=vectorize)
 * on rows that reach exp's clamps, hold -inf, +inf or NaN; within float32
 * rounding of a softmax computed here in double. */
START_TEST(softmax_cpu_vector_rows) {
  enum { R = 6, N = 1024 };
  fbxp_arg_spec s = f32(2, (int64_t[]){R, N});
  built v, sc;
  build_for(&v, softmax_ir, &s, 1, FBXK_OPENCL, 1, 0);
  build_for(&sc, softmax_ir, &s, 1, FBXK_OPENCL, 1, 1);
  const nvf_params *p = &v.pl.seg[0].p;
  ck_assert_int_eq(p->kind, NVF_SCHED_PERSISTENT);
  ck_assert(p->cpu_row);
  ck_assert_int_eq(p->lanes, 8);
  ck_assert_int_eq(p->vrow, 16);
  /* exp(x - max) is kept in the output's row, not in a private array: the
   * work-group keeps its default size */
  ck_assert_int_eq(p->out_rows, 1);
  ck_assert_int_eq(p->local_bytes, 0);
  ck_assert_int_eq(p->block, 64);
  ck_assert_int_eq(count(v.src[0], "vload16(0, T0 + ("), 2); /* the max's phase and the exp's */
  /* exp(x - max(x)): the operand is <= 0 or NaN, the exp without its upper clamp */
  ck_assert_int_eq(count(v.src[0], "fbxk_v16expf_np(("), 1);
  ck_assert_int_eq(count(v.src[0], "fbxk_v16expf(("), 0);
  ck_assert_int_eq(count(v.src[0], "FBXK_VSTORE(16, convert_float16(v4), T8 + ("), 1); /* the kept exp */
  ck_assert_int_eq(count(v.src[0], "vload16(0, T8 + ("), 1);                          /* read back */
  ck_assert_int_eq(count(v.src[0], "FBXK_VSTORE(16, "), 2);                           /* and the output */
  ck_assert_int_eq(count(v.src[0], "[1024]"), 0);                                     /* no private row */
  /* the exp's pass asks for the next row's lines, one per vector */
  ck_assert_int_eq(count(v.src[0], "FBXK_PREFETCH(T0, i0 * 1024 + i1 + 1024);"), 1);
  ck_assert_int_eq(count(v.src[0], "float8 accv"), 1);  /* the sum: the scalar kernel's 8 lanes */
  ck_assert_int_eq(count(v.src[0], "float16 accv"), 1); /* the max: 16 */
  /* the max's pass takes 4 vectors a step into 4 accumulators (4 chains of selects) */
  ck_assert_int_eq(count(v.src[0], "float16 accu0[4];"), 1);
  ck_assert_int_eq(count(v.src[0], "j0 += 64)"), 1);
  ck_assert_int_eq(count(v.src[0], "const long j = j0 + u * 16;"), 1);
  ck_assert_int_eq(count(v.src[0], "* (v7))"), 1);       /* times the sum's reciprocal */
  ck_assert_int_eq(sc.pl.seg[0].p.vrow, 0);
  ck_assert_int_eq(count(sc.src[0], "vload16"), 0);
  ck_assert_int_eq(count(sc.src[0], "fbxk_vexpf_np(("), 1);
  static float x[R * N], yv[R * N], ys[R * N];
  softmax_rows_fill(x, R, N);
  nvf_buffer bv[2] = {{x, sizeof x, NVF_BUF_IN}, {yv, sizeof yv, NVF_BUF_OUT}};
  nvf_buffer bs[2] = {{x, sizeof x, NVF_BUF_IN}, {ys, sizeof ys, NVF_BUF_OUT}};
  run_seg0(&v, bv, 2);
  run_seg0(&sc, bs, 2);
  ck_assert_int_eq(memcmp(yv, ys, sizeof yv), 0);
  for (int r = 0; r < R; r++) {
    if (r == 3 || r == 4) {
      for (int j = 0; j < N; j++) ck_assert_msg(yv[r * N + j] != yv[r * N + j], "row %d col %d: %g, not NaN", r, j, yv[r * N + j]);
      continue;
    }
    double m = -INFINITY, sum = 0;
    for (int j = 0; j < N; j++) m = x[r * N + j] > m ? x[r * N + j] : m;
    for (int j = 0; j < N; j++) sum += exp((double)x[r * N + j] - m);
    for (int j = 0; j < N; j++) {
      double want = exp((double)x[r * N + j] - m) / sum;
      ck_assert_msg(fabs(yv[r * N + j] - want) <= 1e-6 * want + 1e-30, "row %d col %d: %.9g, want %.9g", r, j, yv[r * N + j], want);
    }
  }
  unbuild(&v);
  unbuild(&sc);
}
END_TEST

/* FBXK_FACT_NONPOS: exp(x - amax(x)) prints the exp without its upper
 * clamp, over the last dim or the first (a max that holds the element);
 * not for the max of another tensor or the max minus x. A max over dim 1
 * of a square matrix broadcast along the other dim (x[r][c] - max(x[c]),
 * which may be positive) is refused by the fusion build already (two
 * domains on one axis); nvf_tv_nonpos checks the axes as well. */
START_TEST(exp_nonpos_fact) {
  static const struct {
    const char *ir;
    int np;
  } cases[] = {
      {"graph(%x : Tensor, %y : Tensor):\n  %d : int[] = prim::Constant[value=[-1]]()\n  %t : bool = prim::Constant[value=1]()\n"
       "  %m : Tensor = aten::amax(%x, %d, %t)\n  %one : int = prim::Constant[value=1]()\n"
       "  %s : Tensor = aten::sub(%x, %m, %one)\n  %e : Tensor = aten::exp(%s)\n  %r : Tensor = aten::mul(%e, %y)\n  return (%r)\n",
       1},
      {"graph(%x : Tensor, %y : Tensor):\n  %d : int[] = prim::Constant[value=[0]]()\n  %t : bool = prim::Constant[value=1]()\n"
       "  %m : Tensor = aten::amax(%x, %d, %t)\n  %one : int = prim::Constant[value=1]()\n"
       "  %s : Tensor = aten::sub(%x, %m, %one)\n  %e : Tensor = aten::exp(%s)\n  %r : Tensor = aten::mul(%e, %y)\n  return (%r)\n",
       1},
      {"graph(%x : Tensor, %y : Tensor):\n  %d : int[] = prim::Constant[value=[-1]]()\n  %t : bool = prim::Constant[value=1]()\n"
       "  %m : Tensor = aten::amax(%y, %d, %t)\n  %one : int = prim::Constant[value=1]()\n"
       "  %s : Tensor = aten::sub(%x, %m, %one)\n  %e : Tensor = aten::exp(%s)\n  %r : Tensor = aten::mul(%e, %y)\n  return (%r)\n",
       0},
      {"graph(%x : Tensor, %y : Tensor):\n  %d : int[] = prim::Constant[value=[-1]]()\n  %t : bool = prim::Constant[value=1]()\n"
       "  %m : Tensor = aten::amax(%x, %d, %t)\n  %one : int = prim::Constant[value=1]()\n"
       "  %s : Tensor = aten::sub(%m, %x, %one)\n  %e : Tensor = aten::exp(%s)\n  %r : Tensor = aten::mul(%e, %y)\n  return (%r)\n",
       0},
  };
  enum { N = 64 };
  fbxp_arg_spec s[2] = {f32(2, (int64_t[]){N, N}), f32(2, (int64_t[]){N, N})};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    built b;
    build_for(&b, cases[i].ir, s, 2, FBXK_OPENCL, 1, 0);
    int np = 0, plain = 0;
    for (int g = 0; g < b.pl.nsegs; g++) {
      const char *k = strstr(b.src[g], "__kernel");
      np += count(k, "expf_np((");
      plain += count(k, "expf((");
    }
    ck_assert_msg(np == cases[i].np && plain == !cases[i].np, "case %zu: %d np, %d plain", i, np, plain);
    unbuild(&b);
  }
  /* the transposed max: not a fusion */
  fbx_graph *g = NULL;
  static const char *tir = "graph(%x : Tensor, %y : Tensor):\n  %d : int[] = prim::Constant[value=[1]]()\n  %f : bool = prim::Constant[value=0]()\n"
       "  %m : Tensor = aten::amax(%x, %d, %f)\n  %one : int = prim::Constant[value=1]()\n"
       "  %s : Tensor = aten::sub(%x, %m, %one)\n  %e : Tensor = aten::exp(%s)\n  %r : Tensor = aten::mul(%e, %y)\n  return (%r)\n";
  fbx_status *st = fbx_graph_parse(&g, tir, strlen(tir), "t.ir");
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  nvf_fusion *f = calloc(1, sizeof *f);
  fbxp_status *ps = nvf_fusion_build(f, (const fbxp_graph *)g, s, 2);
  ck_assert_ptr_nonnull(ps);
  ck_assert_ptr_nonnull(strstr(nvf_host->status_message(ps), "two domains on one axis"));
  nvf_host->status_free(ps);
  free(f);
  fbx_graph_destroy(g);
}
END_TEST

/* layer norm on a CPU device: float16 loads of x, w and b, double16
 * statistics; nothing is kept in a private array: the float64 copy of x and
 * x - mean are recomputed from the row in the cache (the persistent
 * schedule still: the row comes from memory once). The variance's pass asks
 * for the next row of x and for this row's output lines. The output pass
 * of float32 data with float32 parameters stays in float32 vectors, with
 * the statistics rounded to float32 (the interpreter's float32 rows). */
START_TEST(layer_norm_cpu_vector_rows) {
  built b;
  fbxp_arg_spec s[3] = {f32(2, (int64_t[]){4, 64}), f32(1, (int64_t[]){64}), f32(1, (int64_t[]){64})};
  build_for(&b, layer_norm_ir, s, 3, FBXK_OPENCL, 1, 0);
  const nvf_params *p = &b.pl.seg[0].p;
  ck_assert_int_eq(p->kind, NVF_SCHED_PERSISTENT);
  ck_assert_int_eq(p->vrow, 16);
  ck_assert_int_eq(p->local_bytes, 0);
  ck_assert_int_eq(p->out_rows, 0);
  ck_assert_int_eq(p->block, 64);
  ck_assert_int_eq(count(strstr(b.src[0], "__kernel void"), "double p"), 0); /* the kernel's, not the prelude's pow */
  ck_assert_int_eq(count(b.src[0], "= convert_double16(v0);"), 2); /* x in the two statistics' phases */
  ck_assert_int_eq(count(b.src[0], "= ((v0) - (v"), 1);               /* the output's: float32 x - mean */
  ck_assert_int_eq(count(b.src[0], "convert_float16("), 1);           /* only the store converts */
  ck_assert_int_eq(count(b.src[0], "FBXK_PREFETCH(T0, i0 * 64 + i1 + 64);"), 1);
  ck_assert_int_eq(count(b.src[0], "FBXK_PREFETCH_W(T"), 1);
  ck_assert_int_eq(count(b.src[0], "double8 accv"), 2);
  ck_assert_int_eq(count(b.src[0], "vload16(0, T1 + ("), 1);
  opencl_builds(&b);
  unbuild(&b);
}
END_TEST

/* A CPU row's max without the NaN test (c->nan_blind): only where no output
 * can tell, i.e. a sum of values NaN wherever x is reaches every output the
 * max reaches. softmax written out (max, exp(x - max), sum, e / sum) and
 * log_softmax's (x - max) - log(sum): blind; the same with exp(x - max) also
 * returned, the max returned, or an output that no sum reaches (e * e next
 * to the sum): the test kept. Blind or not, a NaN
 * anywhere in a row makes every result of the row NaN (run on PoCL). */
START_TEST(nan_blind_max) {
#define NB_HEAD "graph(%x : Tensor):\n  %d : int[] = prim::Constant[value=[-1]]()\n  %t : bool = prim::Constant[value=1]()\n" \
                "  %m : Tensor = aten::amax(%x, %d, %t)\n  %one : int = prim::Constant[value=1]()\n"                      \
                "  %c : Tensor = aten::sub(%x, %m, %one)\n  %e : Tensor = aten::exp(%c)\n"                                 \
                "  %no : NoneType = prim::Constant()\n  %s : Tensor = aten::sum(%e, %d, %t, %no)\n"
  static const struct {
    const char *ir;
    int blind, nout;
  } cases[] = {
      {NB_HEAD "  %y : Tensor = aten::div(%e, %s)\n  return (%y)\n", 1, 1},
      {NB_HEAD "  %l : Tensor = aten::log(%s)\n  %y : Tensor = aten::sub(%c, %l, %one)\n  return (%y)\n", 1, 1},
      {NB_HEAD "  %y : Tensor = aten::div(%e, %s)\n  return (%y, %e)\n", 0, 2},
      {NB_HEAD "  %y : Tensor = aten::div(%e, %s)\n  return (%y, %m)\n", 0, 2},
      {NB_HEAD "  %y : Tensor = aten::mul(%e, %e)\n  return (%y, %s)\n", 0, 2},
  };
#undef NB_HEAD
  enum { R = 3, N = 64 };
  fbxp_arg_spec sp = f32(2, (int64_t[]){R, N});
  static float x[R * N], y[R * N], y2[R * N];
  for (int i = 0; i < R * N; i++) x[i] = (float)((i * 29) % 23) * 0.5f - 5.0f;
  x[1 * N + 0] = NAN;  /* row 1: NaN first */
  x[2 * N + 63] = NAN; /* row 2: NaN last */
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    built b;
    build_for(&b, cases[i].ir, &sp, 1, FBXK_OPENCL, 1, 0);
    ck_assert_int_eq(b.pl.nsegs, 1);
    const nvf_params *p = &b.pl.seg[0].p;
    ck_assert_msg(p->nan_blind == cases[i].blind, "case %zu: nan_blind %d", i, p->nan_blind);
    const char *k = strstr(b.src[0], "__kernel");
    /* the NaN test is the select's "x != x" on the accumulator */
    ck_assert_msg((count(k, "!= (accu0") == 0) == cases[i].blind, "case %zu:\n%s", i, k);
    if (cases[i].nout == 1) {
      nvf_buffer bf[2] = {{x, sizeof x, NVF_BUF_IN}, {y, sizeof y, NVF_BUF_OUT}};
      run_seg0(&b, bf, 2);
    } else {
      ck_assert_int_eq(b.pl.seg[0].k.nparams, 3);
      /* outputs in the order they are computed: %y last (y2: e, m or s, its first R or R * N values) */
      nvf_buffer bf[3] = {{x, sizeof x, NVF_BUF_IN}, {y2, sizeof y2, NVF_BUF_OUT}, {y, sizeof y, NVF_BUF_OUT}};
      run_seg0(&b, bf, 3);
    }
    for (int r = 1; r < R; r++)
      for (int j = 0; j < N; j++) ck_assert_msg(isnan(y[r * N + j]), "case %zu row %d [%d]: %g", i, r, j, y[r * N + j]);
    for (int j = 0; j < N; j++) ck_assert_msg(!isnan(y[j]), "case %zu row 0 [%d]: NaN", i, j);
    unbuild(&b);
  }
}
END_TEST

/* Outputs larger than the device's cache (the plan's stream_bytes; PoCL
 * reports its CPU's last level): softmax and layer norm write their
 * output in the last phase with FBXK_VSTORE_NT, the work-group's last
 * work-item then FBXK_STREAM_FENCE (R = 13: the last group's last work-item
 * has no row); softmax keeps exp(x - max) in a private array instead
 * of the output row (which is then written once), in work-groups of 32
 * rows (128 KiB of private arrays: fewer fences than the 4 rows that fit
 * 16 KiB); no line of the output is asked for. The
 * values are the ordinary kernel's, bit for bit, with the output 64-byte
 * aligned (non-temporal stores) and 4 bytes off (ordinary stores). */
START_TEST(streamed_outputs) {
  enum { R = 13, N = 1024 };
  fbxp_arg_spec s = f32(2, (int64_t[]){R, N});
  built plain, st;
  build_stream_bytes = 2 * R * N * (int64_t)sizeof(float) + 1; /* one byte more than the kernel moves */
  build_for(&plain, softmax_ir, &s, 1, FBXK_OPENCL, 1, 0);
  build_stream_bytes = 2 * R * N * (int64_t)sizeof(float);
  build_for(&st, softmax_ir, &s, 1, FBXK_OPENCL, 1, 0);
  build_stream_bytes = 0;
  ck_assert_int_eq(plain.pl.seg[0].p.stream, 0);
  ck_assert_int_eq(plain.pl.seg[0].p.out_rows, 1);
  const nvf_params *p = &st.pl.seg[0].p;
  ck_assert_int_eq(p->kind, NVF_SCHED_PERSISTENT);
  ck_assert_int_eq(p->stream, 1);
  ck_assert_int_eq(p->out_rows, 0);
  ck_assert_int_eq(p->local_bytes, N * 4);
  ck_assert_int_eq(p->block, 32);
  ck_assert_int_eq(count(st.src[0], "FBXK_VSTORE_NT(16, "), 1);
  ck_assert_int_eq(count(st.src[0], "FBXK_VSTORE(16, "), 1); /* exp(x - max) into the private row */
  ck_assert_int_eq(count(st.src[0], "FBXK_STREAM_FENCE();"), 1);
  ck_assert_int_eq(count(st.src[0], "FBXK_PREFETCH_W(T"), 0);
  ck_assert_int_eq(count(plain.src[0], "FBXK_VSTORE_NT(16, "), 0);
  ck_assert_int_eq(count(plain.src[0], "FBXK_STREAM_FENCE();"), 0);
  fbxk_buf pb = {0};
  nvf_params_print(p, &pb);
  char *ps = fbxk_take(&pb);
  ck_assert_ptr_nonnull(strstr(ps, "outputs streamed past the cache"));
  fbxk_free(ps);
  static float x[R * N], y0[R * N + 16] __attribute__((aligned(128))), y1[R * N + 16] __attribute__((aligned(128)));
  softmax_rows_fill(x, R, N);
  nvf_buffer b0[2] = {{x, sizeof x, NVF_BUF_IN}, {y0, sizeof x, NVF_BUF_OUT}};
  run_seg0(&plain, b0, 2);
  for (int off = 0; off < 2; off++) { /* y1 itself, then 4 bytes on: both wrapped as they are */
    memset(y1, 0, sizeof y1);
    nvf_buffer b1[2] = {{x, sizeof x, NVF_BUF_IN}, {y1 + off, sizeof x, NVF_BUF_OUT}};
    run_wrap_align = 4;
    run_seg0(&st, b1, 2);
    run_wrap_align = 0;
    ck_assert_msg(memcmp(y0, y1 + off, sizeof x) == 0, "softmax streamed, output %d floats past 128 bytes", off);
  }
  /* the same segment scheduled again as for a GPU (FUSEBOX_NVF_NVRTC_CHECK):
   * nothing of the CPU schedule's streaming is left, and the CUDA C compiles */
  st.pl.cpu_rows = 0;
  ck_assert_ptr_null(nvf_schedule_segment(&st.pl, 0, FBXK_CUDA));
  ck_assert_int_eq(st.pl.seg[0].p.stream, 0);
  ck_assert_int_eq(st.pl.seg[0].p.nan_blind, 0);
  ck_assert_int_eq(st.pl.seg[0].p.out_rows, 0);
  fbxk_free(st.src[0]);
  st.src[0] = nvf_print(&st.pl.seg[0].k);
  ck_assert_ptr_nonnull(st.src[0]);
  const char *cu = strstr(st.src[0], "__global__");
  ck_assert_ptr_nonnull(cu);
  ck_assert_int_eq(count(cu, "FBXK_STREAM_FENCE"), 0);
  ck_assert_int_eq(count(cu, "get_local_id"), 0);
  nvrtc_builds(&st);
  unbuild(&plain);
  unbuild(&st);

  /* layer norm: the output pass streams; nothing else changes */
  fbxp_arg_spec ls[3] = {f32(2, (int64_t[]){R, N}), f32(1, (int64_t[]){N}), f32(1, (int64_t[]){N})};
  build_for(&plain, layer_norm_ir, ls, 3, FBXK_OPENCL, 1, 0);
  build_stream_bytes = 1;
  build_for(&st, layer_norm_ir, ls, 3, FBXK_OPENCL, 1, 0);
  build_stream_bytes = 0;
  ck_assert_int_eq(st.pl.seg[0].p.stream, 1);
  ck_assert_int_eq(st.pl.seg[0].p.local_bytes, 0);
  ck_assert_int_eq(count(st.src[0], "FBXK_VSTORE_NT(16, "), 1);
  ck_assert_int_eq(count(st.src[0], "FBXK_PREFETCH_W(T"), 0);
  ck_assert_int_eq(count(plain.src[0], "FBXK_PREFETCH_W(T"), 1);
  static float w[N], bias[N];
  for (int j = 0; j < N; j++) w[j] = 0.5f + (float)(j % 7) * 0.1f, bias[j] = (float)(j % 5) * 0.01f - 0.02f;
  ck_assert_int_eq(plain.pl.seg[0].k.nparams, 4);
  nvf_buffer l0[4] = {{x, sizeof x, NVF_BUF_IN}, {w, sizeof w, NVF_BUF_IN}, {bias, sizeof bias, NVF_BUF_IN},
                      {y0, sizeof x, NVF_BUF_OUT}};
  nvf_buffer l1[4] = {{x, sizeof x, NVF_BUF_IN}, {w, sizeof w, NVF_BUF_IN}, {bias, sizeof bias, NVF_BUF_IN},
                      {y1, sizeof x, NVF_BUF_OUT}};
  run_seg0(&plain, l0, 4);
  run_seg0(&st, l1, 4);
  ck_assert(memcmp(y0, y1, sizeof x) == 0);
  unbuild(&plain);
  unbuild(&st);
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
  tcase_add_test(tc, softmax_cpu_vector_rows);
  tcase_add_test(tc, exp_nonpos_fact);
  tcase_add_test(tc, layer_norm_cpu_vector_rows);
  tcase_add_test(tc, streamed_outputs);
  tcase_add_test(tc, nan_blind_max);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
