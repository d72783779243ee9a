/* The nvfuser_like device runtime (plugins/nvfuser_like/nvf_rt.h) with
 * hand-written kernels, against the real host table:
 *
 *   - OpenCL on PoCL (skipped with "skipped: <reason>" where there is no
 *     OpenCL platform): a pointwise add with a tail, a work-group tree
 *     reduction in __local memory, a two-kernel reduction through a TEMP
 *     buffer, all checked against values computed here; the program cache
 *     hands back the same program; a failed build carries the build log; a
 *     bad launch names the launch, the entry, the call and the CL error;
 *     aligned host memory on the CPU device is wrapped without a copy and
 *     misaligned memory is copied, with the same results;
 *   - CUDA: without a driver or device the open is UNSUPPORTED with the
 *     reason; with one, the same kernels in CUDA C run and are checked; the
 *     CUDA C kernels compile to PTX with NVRTC (skipped without NVRTC);
 *     against a stand-in driver (nvf_fake_cuda.c, via FUSEBOX_NVF_LIBCUDA)
 *     the whole CUDA path runs on the CPU: results, grids, parameters,
 *     dynamic shared memory, context push/pop pairs, frees, and the
 *     UNSUPPORTED reasons for a failing cuInit and for zero devices.
 */
#include <check.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/hostimpl.h"
#include "testutil.h"

#include "../../plugins/nvfuser_like/nvf_rt.h"

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
  return "leak:libpocl\nleak:libOpenCL\nleak:libLLVM\nleak:libclang\nleak:libnvrtc\nleak:libhwloc\nleak:libcuda\n";
}

static const fbxp_host_api *H;

static void setup(void) { H = fbx_host_api_table(); }

/* The message of st (or ""), which is freed; the text is copied to buf. */
static fbxp_code take(fbxp_status *st, char *buf, size_t cap) {
  fbxp_code c = H->status_code(st);
  snprintf(buf, cap, "%s", H->status_message(st));
  if (st) H->status_free(st);
  return c;
}

#define OK(expr)                                                                                  \
  do {                                                                                            \
    char m_[4096];                                                                                \
    fbxp_code c_ = take((expr), m_, sizeof m_);                                                   \
    ck_assert_msg(c_ == FBXP_OK, "%s failed: %s", #expr, m_);                                     \
  } while (0)

/* ---- kernels ------------------------------------------------------------------------------------ */

static const char CL_ADD[] = "__kernel void padd(__global const float *a, __global const float *b,\n"
                             "                   __global float *c, long n) {\n"
                             "  long i = get_global_id(0);\n"
                             "  if (i < n) c[i] = a[i] + b[i];\n"
                             "}\n";

/* One work-group of 256 sums n floats: strided loads, then a tree in
 * __local memory with a barrier per level. */
static const char CL_WGSUM[] = "__kernel void wg_sum(__global const float *x, __global float *out, int n,\n"
                               "                     __local float *s) {\n"
                               "  int t = get_local_id(0), w = get_local_size(0);\n"
                               "  float acc = 0.0f;\n"
                               "  for (int i = t; i < n; i += w) acc += x[i];\n"
                               "  s[t] = acc;\n"
                               "  barrier(CLK_LOCAL_MEM_FENCE);\n"
                               "  for (int h = w / 2; h > 0; h /= 2) {\n"
                               "    if (t < h) s[t] += s[t + h];\n"
                               "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                               "  }\n"
                               "  if (t == 0) out[0] = s[0];\n"
                               "}\n";

/* Row sums of a rows x cols matrix in two kernels: each group sums a slice
 * of a row into partial[row * groups + g], then one work-item per row adds
 * the partials. */
static const char CL_TWO[] = "__kernel void part(__global const float *x, __global float *partial, int cols,\n"
                             "                   int groups, __local float *s) {\n"
                             "  int t = get_local_id(0), w = get_local_size(0);\n"
                             "  int g = get_group_id(0), row = get_global_id(1);\n"
                             "  float acc = 0.0f;\n"
                             "  for (int c = g * w + t; c < cols; c += groups * w) acc += x[(long)row * cols + c];\n"
                             "  s[t] = acc;\n"
                             "  barrier(CLK_LOCAL_MEM_FENCE);\n"
                             "  for (int h = w / 2; h > 0; h /= 2) {\n"
                             "    if (t < h) s[t] += s[t + h];\n"
                             "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                             "  }\n"
                             "  if (t == 0) partial[row * groups + g] = s[0];\n"
                             "}\n"
                             "__kernel void fin(__global const float *partial, __global float *out, int rows,\n"
                             "                  int groups) {\n"
                             "  int row = get_global_id(0);\n"
                             "  if (row >= rows) return;\n"
                             "  float acc = 0.0f;\n"
                             "  for (int g = 0; g < groups; g++) acc += partial[row * groups + g];\n"
                             "  out[row] = acc;\n"
                             "}\n";

/* The same three in CUDA C. */
static const char CU_ADD[] = "extern \"C\" __global__ void padd(const float *a, const float *b, float *c, long long n) {\n"
                             "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "  if (i < n) c[i] = a[i] + b[i];\n"
                             "}\n";
static const char CU_WGSUM[] = "extern \"C\" __global__ void wg_sum(const float *x, float *out, int n) {\n"
                               "  extern __shared__ float s[];\n"
                               "  int t = threadIdx.x, w = blockDim.x;\n"
                               "  float acc = 0.0f;\n"
                               "  for (int i = t; i < n; i += w) acc += x[i];\n"
                               "  s[t] = acc;\n"
                               "  __syncthreads();\n"
                               "  for (int h = w / 2; h > 0; h /= 2) {\n"
                               "    if (t < h) s[t] += s[t + h];\n"
                               "    __syncthreads();\n"
                               "  }\n"
                               "  if (t == 0) out[0] = s[0];\n"
                               "}\n";
static const char CU_TWO[] = "extern \"C\" __global__ void part(const float *x, float *partial, int cols, int groups) {\n"
                             "  extern __shared__ float s[];\n"
                             "  int t = threadIdx.x, w = blockDim.x, g = blockIdx.x, row = blockIdx.y;\n"
                             "  float acc = 0.0f;\n"
                             "  for (int c = g * w + t; c < cols; c += groups * w) acc += x[(long long)row * cols + c];\n"
                             "  s[t] = acc;\n"
                             "  __syncthreads();\n"
                             "  for (int h = w / 2; h > 0; h /= 2) {\n"
                             "    if (t < h) s[t] += s[t + h];\n"
                             "    __syncthreads();\n"
                             "  }\n"
                             "  if (t == 0) partial[row * groups + g] = s[0];\n"
                             "}\n"
                             "extern \"C\" __global__ void fin(const float *partial, float *out, int rows, int groups) {\n"
                             "  int row = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "  if (row >= rows) return;\n"
                             "  float acc = 0.0f;\n"
                             "  for (int g = 0; g < groups; g++) acc += partial[row * groups + g];\n"
                             "  out[row] = acc;\n"
                             "}\n";

/* ---- helpers ------------------------------------------------------------------------------------ */

static nvf_rt *open_or_skip(nvf_target t, const char *test) {
  nvf_rt *rt = NULL;
  char m[4096];
  fbxp_code c = take(nvf_rt_open(H, t, &rt), m, sizeof m);
  if (c == FBXP_ERR_UNSUPPORTED) {
    printf("%s: skipped: %s\n", test, m);
    ck_assert_msg(m[0] != '\0', "an unsupported target says why");
    return NULL;
  }
  ck_assert_msg(c == FBXP_OK, "open: %s", m);
  ck_assert_ptr_nonnull(rt);
  printf("%s: %s\n", test, nvf_rt_device(rt));
  return rt;
}

static uint32_t seed = 12345u;
static float rnd(void) { return (float)(tu_xs32(&seed) % 2001u) / 1000.0f - 1.0f; }

static float *aligned_floats(size_t n, size_t offset_bytes, void **base) {
  *base = aligned_alloc(4096, ((n * sizeof(float) + offset_bytes) + 4095) / 4096 * 4096);
  ck_assert_ptr_nonnull(*base);
  return (float *)((char *)*base + offset_bytes);
}

/* a pointwise add of n floats (a tail: n is not a multiple of the block) */
static void run_add(nvf_rt *rt, const char *src, size_t offset, size_t n) {
  void *ba, *bb, *bc;
  float *a = aligned_floats(n, offset, &ba), *b = aligned_floats(n, offset, &bb), *c = aligned_floats(n, offset, &bc);
  for (size_t i = 0; i < n; i++) {
    a[i] = rnd();
    b[i] = rnd();
    c[i] = -999.0f;
  }
  nvf_program *p = NULL;
  OK(nvf_rt_compile(rt, src, "padd", &p));
  nvf_buffer bufs[] = {{a, n * 4, NVF_BUF_IN}, {b, n * 4, NVF_BUF_IN}, {c, n * 4, NVF_BUF_OUT}};
  nvf_arg args[] = {{.kind = NVF_ARG_BUFFER, .buffer = 0},
                    {.kind = NVF_ARG_BUFFER, .buffer = 1},
                    {.kind = NVF_ARG_BUFFER, .buffer = 2},
                    {.kind = NVF_ARG_I64, .i = (int64_t)n}};
  nvf_launch l = {.program = p, .args = args, .nargs = 4, .dims = 1, .global = {(n + 63) / 64 * 64}, .local = {64}};
  OK(nvf_rt_run(rt, bufs, 3, &l, 1));
  for (size_t i = 0; i < n; i++) ck_assert_msg(c[i] == a[i] + b[i], "c[%zu] = %g, want %g", i, c[i], a[i] + b[i]);
  free(ba);
  free(bb);
  free(bc);
}

static void run_wgsum(nvf_rt *rt, const char *src, int n) {
  float *x = malloc((size_t)n * sizeof *x), out = -1.0f;
  ck_assert_ptr_nonnull(x);
  double want = 0;
  for (int i = 0; i < n; i++) want += x[i] = rnd();
  nvf_program *p = NULL;
  OK(nvf_rt_compile(rt, src, "wg_sum", &p));
  nvf_buffer bufs[] = {{x, (size_t)n * 4, NVF_BUF_IN}, {&out, 4, NVF_BUF_OUT}};
  nvf_arg args[] = {{.kind = NVF_ARG_BUFFER, .buffer = 0},
                    {.kind = NVF_ARG_BUFFER, .buffer = 1},
                    {.kind = NVF_ARG_I32, .i = n},
                    {.kind = NVF_ARG_LOCAL, .local_bytes = 256 * sizeof(float)}};
  nvf_launch l = {.program = p, .args = args, .nargs = 4, .dims = 1, .global = {256}, .local = {256}};
  OK(nvf_rt_run(rt, bufs, 2, &l, 1));
  ck_assert_msg(fabs(out - want) <= 1e-4 * n, "sum %g, want %g", out, want);
  free(x);
}

static void run_two(nvf_rt *rt, const char *src) {
  enum { ROWS = 7, COLS = 3001, GROUPS = 4, W = 64 };
  float *x = malloc((size_t)ROWS * COLS * sizeof *x), out[ROWS];
  ck_assert_ptr_nonnull(x);
  double want[ROWS];
  for (int r = 0; r < ROWS; r++) {
    want[r] = 0;
    out[r] = -1.0f;
    for (int c = 0; c < COLS; c++) want[r] += x[r * COLS + c] = rnd();
  }
  nvf_program *part = NULL, *fin = NULL;
  OK(nvf_rt_compile(rt, src, "part", &part));
  OK(nvf_rt_compile(rt, src, "fin", &fin));
  ck_assert_ptr_ne(part, fin);
  nvf_buffer bufs[] = {{x, sizeof(float) * ROWS * COLS, NVF_BUF_IN},
                       {NULL, sizeof(float) * ROWS * GROUPS, NVF_BUF_TEMP},
                       {out, sizeof out, NVF_BUF_OUT}};
  nvf_arg a1[] = {{.kind = NVF_ARG_BUFFER, .buffer = 0},
                  {.kind = NVF_ARG_BUFFER, .buffer = 1},
                  {.kind = NVF_ARG_I32, .i = COLS},
                  {.kind = NVF_ARG_I32, .i = GROUPS},
                  {.kind = NVF_ARG_LOCAL, .local_bytes = W * sizeof(float)}};
  nvf_arg a2[] = {{.kind = NVF_ARG_BUFFER, .buffer = 1},
                  {.kind = NVF_ARG_BUFFER, .buffer = 2},
                  {.kind = NVF_ARG_I32, .i = ROWS},
                  {.kind = NVF_ARG_I32, .i = GROUPS}};
  nvf_launch l[] = {
      {.program = part, .args = a1, .nargs = 5, .dims = 2, .global = {GROUPS * W, ROWS}, .local = {W, 1}},
      {.program = fin, .args = a2, .nargs = 4, .dims = 1, .global = {32}, .local = {32}},
  };
  OK(nvf_rt_run(rt, bufs, 3, l, 2));
  for (int r = 0; r < ROWS; r++)
    ck_assert_msg(fabs(out[r] - want[r]) <= 1e-4 * COLS, "row %d: %g, want %g", r, out[r], want[r]);
  free(x);
}

/* ---- OpenCL ------------------------------------------------------------------------------------- */

START_TEST(cl_pointwise_tail) {
  nvf_rt *rt = open_or_skip(NVF_TARGET_OPENCL, "cl_pointwise_tail");
  if (!rt) return;
  ck_assert_int_eq(nvf_rt_target(rt), NVF_TARGET_OPENCL);
  ck_assert(strncmp(nvf_rt_device(rt), "OpenCL: ", 8) == 0);
  run_add(rt, CL_ADD, 0, 1000);
  run_add(rt, CL_ADD, 0, 1);
  nvf_rt_close(rt);
}
END_TEST

START_TEST(cl_workgroup_reduction) {
  nvf_rt *rt = open_or_skip(NVF_TARGET_OPENCL, "cl_workgroup_reduction");
  if (!rt) return;
  run_wgsum(rt, CL_WGSUM, 10007);
  run_wgsum(rt, CL_WGSUM, 3); /* fewer elements than work-items */
  nvf_rt_close(rt);
}
END_TEST

START_TEST(cl_two_kernel_reduction) {
  nvf_rt *rt = open_or_skip(NVF_TARGET_OPENCL, "cl_two_kernel_reduction");
  if (!rt) return;
  run_two(rt, CL_TWO);
  nvf_rt_close(rt);
}
END_TEST

START_TEST(cl_program_cache) {
  nvf_rt *rt = open_or_skip(NVF_TARGET_OPENCL, "cl_program_cache");
  if (!rt) return;
  nvf_program *p1 = NULL, *p2 = NULL, *p3 = NULL;
  OK(nvf_rt_compile(rt, CL_TWO, "part", &p1));
  /* the same text in another buffer: the key is the text, not the pointer */
  char *copy = strdup(CL_TWO);
  OK(nvf_rt_compile(rt, copy, "part", &p2));
  OK(nvf_rt_compile(rt, copy, "fin", &p3));
  free(copy);
  ck_assert_ptr_eq(p1, p2);
  ck_assert_ptr_ne(p1, p3);
  nvf_rt_stats s;
  nvf_rt_get_stats(rt, &s);
  ck_assert_uint_eq(s.compiles, 3);
  ck_assert_uint_eq(s.cache_hits, 1);
  /* more programs than the table's 64 first buckets: it grows and still finds every one */
  nvf_program *ps[70];
  for (int i = 0; i < 70; i++) {
    char src[128];
    snprintf(src, sizeof src, "__kernel void k(__global int *o) { o[0] = %d; }\n", i);
    OK(nvf_rt_compile(rt, src, "k", &ps[i]));
  }
  for (int i = 0; i < 70; i++) {
    char src[128];
    nvf_program *again = NULL;
    snprintf(src, sizeof src, "__kernel void k(__global int *o) { o[0] = %d; }\n", i);
    OK(nvf_rt_compile(rt, src, "k", &again));
    ck_assert_ptr_eq(again, ps[i]);
  }
  int v = -1;
  nvf_buffer b = {&v, sizeof v, NVF_BUF_OUT};
  nvf_arg a = {.kind = NVF_ARG_BUFFER, .buffer = 0};
  nvf_launch l = {.program = ps[67], .args = &a, .nargs = 1, .dims = 1, .global = {1}, .local = {1}};
  OK(nvf_rt_run(rt, &b, 1, &l, 1));
  ck_assert_int_eq(v, 67);
  nvf_rt_close(rt);
}
END_TEST

START_TEST(cl_compile_error_has_log) {
  nvf_rt *rt = open_or_skip(NVF_TARGET_OPENCL, "cl_compile_error_has_log");
  if (!rt) return;
  static const char bad[] = "__kernel void broken(__global float *o) { o[0] = no_such_variable_here; }\n";
  nvf_program *p = (nvf_program *)1;
  char m[8192];
  fbxp_code c = take(nvf_rt_compile(rt, bad, "broken", &p), m, sizeof m);
  ck_assert_int_eq(c, FBXP_ERR_COMPILE);
  ck_assert_ptr_null(p);
  ck_assert_msg(strstr(m, "broken") && strstr(m, "no_such_variable_here"), "message: %s", m);
  /* a missing entry point is a compile error naming the entry and the call */
  c = take(nvf_rt_compile(rt, CL_ADD, "nope", &p), m, sizeof m);
  ck_assert_int_eq(c, FBXP_ERR_COMPILE);
  ck_assert_msg(strstr(m, "clCreateKernel('nope')") && strstr(m, "CL_INVALID_KERNEL_NAME"), "message: %s", m);
  /* nothing failed was cached: the good program still compiles */
  OK(nvf_rt_compile(rt, CL_ADD, "padd", &p));
  nvf_rt_close(rt);
}
END_TEST

START_TEST(cl_launch_errors_name_the_launch) {
  nvf_rt *rt = open_or_skip(NVF_TARGET_OPENCL, "cl_launch_errors_name_the_launch");
  if (!rt) return;
  nvf_program *add = NULL, *sum = NULL;
  OK(nvf_rt_compile(rt, CL_ADD, "padd", &add));
  OK(nvf_rt_compile(rt, CL_WGSUM, "wg_sum", &sum));
  float a[64] = {0}, out[64] = {0};
  nvf_buffer bufs[] = {{a, sizeof a, NVF_BUF_IN}, {out, sizeof out, NVF_BUF_OUT}};
  nvf_arg good[] = {{.kind = NVF_ARG_BUFFER, .buffer = 0},
                    {.kind = NVF_ARG_BUFFER, .buffer = 0},
                    {.kind = NVF_ARG_BUFFER, .buffer = 1},
                    {.kind = NVF_ARG_I64, .i = 64}};
  /* the second launch passes three arguments to a four-argument kernel */
  nvf_arg short_args[] = {{.kind = NVF_ARG_BUFFER, .buffer = 0}, {.kind = NVF_ARG_BUFFER, .buffer = 1},
                          {.kind = NVF_ARG_I32, .i = 64}};
  nvf_launch l[] = {{.program = add, .args = good, .nargs = 4, .dims = 1, .global = {64}, .local = {64}},
                    {.program = sum, .args = short_args, .nargs = 3, .dims = 1, .global = {64}, .local = {64}}};
  char m[4096];
  fbxp_code c = take(nvf_rt_run(rt, bufs, 2, l, 2), m, sizeof m);
  ck_assert_int_eq(c, FBXP_ERR_RUN);
  ck_assert_msg(strstr(m, "launch 1 (wg_sum)") && strstr(m, "clEnqueueNDRangeKernel") &&
                    strstr(m, "CL_INVALID_KERNEL_ARGS"),
                "message: %s", m);
  /* checked before any device call: a buffer index out of range, sizes that do not divide */
  nvf_arg oob[] = {{.kind = NVF_ARG_BUFFER, .buffer = 5}};
  nvf_launch l2 = {.program = add, .args = oob, .nargs = 1, .dims = 1, .global = {64}, .local = {64}};
  c = take(nvf_rt_run(rt, bufs, 2, &l2, 1), m, sizeof m);
  ck_assert_int_eq(c, FBXP_ERR_INVALID);
  ck_assert_msg(strstr(m, "launch 0 (padd)") && strstr(m, "buffer 5 of 2"), "message: %s", m);
  nvf_launch l3 = {.program = add, .args = good, .nargs = 4, .dims = 1, .global = {100}, .local = {64}};
  c = take(nvf_rt_run(rt, bufs, 2, &l3, 1), m, sizeof m);
  ck_assert_int_eq(c, FBXP_ERR_INVALID);
  ck_assert_msg(strstr(m, "launch 0 (padd)") && strstr(m, "global size 100"), "message: %s", m);
  /* the runtime still works after the errors */
  run_add(rt, CL_ADD, 0, 77);
  nvf_rt_close(rt);
}
END_TEST

START_TEST(cl_zero_copy) {
  nvf_rt *rt = open_or_skip(NVF_TARGET_OPENCL, "cl_zero_copy");
  if (!rt) return;
  if (!strstr(nvf_rt_device(rt), "host memory shared")) {
    printf("cl_zero_copy: skipped: the device does not share host memory\n");
    nvf_rt_close(rt);
    return;
  }
  nvf_rt_stats s0, s1, s2;
  nvf_rt_get_stats(rt, &s0);
  run_add(rt, CL_ADD, 0, 1000); /* 4096-aligned: wrapped, nothing copied */
  nvf_rt_get_stats(rt, &s1);
  ck_assert_uint_eq(s1.zero_copy_buffers - s0.zero_copy_buffers, 3);
  ck_assert_uint_eq(s1.bytes_to_device - s0.bytes_to_device, 0);
  ck_assert_uint_eq(s1.bytes_from_device - s0.bytes_from_device, 0);
  run_add(rt, CL_ADD, 4, 1000); /* misaligned by 4 bytes: copied both ways, same results */
  nvf_rt_get_stats(rt, &s2);
  ck_assert_uint_eq(s2.zero_copy_buffers - s1.zero_copy_buffers, 0);
  ck_assert_uint_eq(s2.bytes_to_device - s1.bytes_to_device, 2 * 4000);
  ck_assert_uint_eq(s2.bytes_from_device - s1.bytes_from_device, 4000);
  ck_assert_uint_eq(s2.runs - s0.runs, 2);
  ck_assert_uint_eq(s2.launches - s0.launches, 2);
  /* 64-byte aligned (as fusebox's storage), not 128 (PoCL's base-address
   * alignment): copied by default, wrapped once the kernels' need (16) is said */
  int pocl = strstr(nvf_rt_device(rt), "PoCL") != NULL; /* whose alignment is known to be 128 */
  run_add(rt, CL_ADD, 64, 1000);
  nvf_rt_get_stats(rt, &s1);
  if (pocl) ck_assert_uint_eq(s1.zero_copy_buffers - s2.zero_copy_buffers, 0);
  nvf_rt_set_wrap_align(rt, 16);
  run_add(rt, CL_ADD, 64, 1000);
  run_add(rt, CL_ADD, 16, 1000);
  nvf_rt_get_stats(rt, &s2);
  ck_assert_uint_eq(s2.zero_copy_buffers - s1.zero_copy_buffers, 6);
  ck_assert_uint_eq(s2.bytes_to_device - s1.bytes_to_device, 0);
  nvf_rt_set_wrap_align(rt, 0); /* back to the device's */
  run_add(rt, CL_ADD, 64, 1000);
  nvf_rt_get_stats(rt, &s1);
  if (pocl) ck_assert_uint_eq(s1.zero_copy_buffers - s2.zero_copy_buffers, 0);
  nvf_rt_close(rt);
}
END_TEST

/* The same host memory in two buffers of one run (a tensor passed as two
 * inputs), and overlapping ranges: both wrapped, results as if the buffers
 * were distinct, run after run. */
START_TEST(cl_aliased_host_memory) {
  nvf_rt *rt = open_or_skip(NVF_TARGET_OPENCL, "cl_aliased_host_memory");
  if (!rt) return;
  enum { N = 1000 };
  void *ba, *bc;
  float *a = aligned_floats(N + 64, 0, &ba), *c = aligned_floats(N, 0, &bc);
  for (int i = 0; i < N + 64; i++) a[i] = rnd();
  nvf_program *p = NULL;
  OK(nvf_rt_compile(rt, CL_ADD, "padd", &p));
  nvf_arg args[] = {{.kind = NVF_ARG_BUFFER, .buffer = 0},
                    {.kind = NVF_ARG_BUFFER, .buffer = 1},
                    {.kind = NVF_ARG_BUFFER, .buffer = 2},
                    {.kind = NVF_ARG_I64, .i = N}};
  nvf_launch l = {.program = p, .args = args, .nargs = 4, .dims = 1, .global = {1024}, .local = {64}};
  /* the same pointer twice */
  nvf_buffer same[] = {{a, N * 4, NVF_BUF_IN}, {a, N * 4, NVF_BUF_IN}, {c, N * 4, NVF_BUF_OUT}};
  for (int rep = 0; rep < 20; rep++) OK(nvf_rt_run(rt, same, 3, &l, 1));
  for (int i = 0; i < N; i++) ck_assert_msg(c[i] == a[i] + a[i], "c[%d] = %g, want %g", i, c[i], a[i] + a[i]);
  /* overlapping ranges: a[0..N) and a[32..N+32) */
  nvf_buffer overlap[] = {{a, N * 4, NVF_BUF_IN}, {a + 32, N * 4, NVF_BUF_IN}, {c, N * 4, NVF_BUF_OUT}};
  OK(nvf_rt_run(rt, overlap, 3, &l, 1));
  for (int i = 0; i < N; i++) ck_assert_msg(c[i] == a[i] + a[i + 32], "c[%d] = %g, want %g", i, c[i], a[i] + a[i + 32]);
  free(ba);
  free(bc);
  nvf_rt_close(rt);
}
END_TEST

/* The host points PoCL's kernel cache into fusebox's cache directory
 * before the platform starts (services_opencl.c). Needs a process that has
 * not touched OpenCL yet: Check's forked child (skipped under CK_FORK=no). */
START_TEST(cl_pocl_cache_under_fusebox_cache) {
  const char *fork_mode = getenv("CK_FORK");
  if (fork_mode && !strcmp(fork_mode, "no")) {
    printf("cl_pocl_cache_under_fusebox_cache: skipped: CK_FORK=no (OpenCL may be initialized already)\n");
    return;
  }
  char tmpl[] = "/tmp/nvf_rt_cacheXXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(tmpl));
  char dir[600], want[700];
  snprintf(dir, sizeof dir, "%s/a/fusebox", tmpl); /* parents made too */
  snprintf(want, sizeof want, "%s/pocl", dir);
  setenv("FUSEBOX_CACHE_DIR", dir, 1);
  unsetenv("POCL_CACHE_DIR");
  nvf_rt *rt = open_or_skip(NVF_TARGET_OPENCL, "cl_pocl_cache_under_fusebox_cache");
  if (!rt) return;
  const char *got = getenv("POCL_CACHE_DIR");
  ck_assert_msg(got && !strcmp(got, want), "POCL_CACHE_DIR=%s, want %s", got ? got : "(unset)", want);
  run_add(rt, CL_ADD, 0, 10);
  nvf_rt_close(rt);
  /* PoCL wrote its kernels there */
  char cmd[800], *out = NULL;
  snprintf(cmd, sizeof cmd, "find '%s' -type f | wc -l", want);
  ck_assert_int_eq(tu_run(cmd, &out), 0);
  ck_assert_msg(out && atoi(out) > 0, "no files under %s", want);
  free(out);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
  ck_assert_int_eq(tu_run(cmd, NULL), 0);
}
END_TEST

/* Unless the user set POCL_AFFINITY, the host sets it to 1 before the
 * platform starts, when the process may use every online CPU (PoCL's
 * workers are then spread over the CPUs from the start); a value the user
 * gave is kept. Needs a fresh process, as above. */
static void check_pocl_affinity(const char *given, const char *want) {
  const char *fork_mode = getenv("CK_FORK");
  if (fork_mode && !strcmp(fork_mode, "no")) {
    printf("pocl_affinity: skipped: CK_FORK=no (OpenCL may be initialized already)\n");
    return;
  }
  char *n = NULL; /* nproc counts the CPUs this process may use (<sched.h> is the scheduler's here) */
  ck_assert_int_eq(tu_run("nproc", &n), 0);
  long usable = n ? atol(n) : 0;
  free(n);
  if (!given && usable != sysconf(_SC_NPROCESSORS_ONLN)) {
    printf("pocl_affinity: skipped: this process may not run on every CPU\n");
    return;
  }
  if (given) setenv("POCL_AFFINITY", given, 1);
  else unsetenv("POCL_AFFINITY");
  nvf_rt *rt = open_or_skip(NVF_TARGET_OPENCL, "pocl_affinity");
  if (!rt) return;
  const char *got = getenv("POCL_AFFINITY");
  ck_assert_msg(got && !strcmp(got, want), "POCL_AFFINITY=%s, want %s", got ? got : "(unset)", want);
  run_add(rt, CL_ADD, 0, 10);
  nvf_rt_close(rt);
}

START_TEST(cl_pocl_affinity_set_when_unset) { check_pocl_affinity(NULL, "1"); }
END_TEST

START_TEST(cl_pocl_affinity_user_value_kept) { check_pocl_affinity("0", "0"); }
END_TEST

/* ---- CUDA --------------------------------------------------------------------------------------- */

START_TEST(cuda_open_or_run) {
  nvf_rt *rt = NULL;
  char m[4096];
  fbxp_code c = take(nvf_rt_open(H, NVF_TARGET_CUDA, &rt), m, sizeof m);
  if (c == FBXP_ERR_UNSUPPORTED) {
    /* the machine without a GPU: the reason is named */
    printf("cuda_open_or_run: unsupported: %s\n", m);
    ck_assert_ptr_null(rt);
    ck_assert_msg(strstr(m, "CUDA") && strlen(m) > 20, "message: %s", m);
    return;
  }
  ck_assert_msg(c == FBXP_OK, "open: %s", m);
  printf("cuda_open_or_run: %s\n", nvf_rt_device(rt));
  ck_assert(strncmp(nvf_rt_device(rt), "CUDA: ", 6) == 0);
  run_add(rt, CU_ADD, 0, 1000);
  run_add(rt, CU_ADD, 4, 1);
  run_wgsum(rt, CU_WGSUM, 10007);
  run_two(rt, CU_TWO);
  nvf_program *p1 = NULL, *p2 = NULL;
  OK(nvf_rt_compile(rt, CU_ADD, "padd", &p1));
  OK(nvf_rt_compile(rt, CU_ADD, "padd", &p2));
  ck_assert_ptr_eq(p1, p2);
  nvf_rt_close(rt);
}
END_TEST

/* The CUDA path against the stand-in driver (tests/unit/nvf_fake_cuda.c):
 * NVRTC's PTX loaded, entries found, buffers copied, grids and parameters
 * as the CUDA C declares them, contexts pushed and popped in pairs,
 * everything freed. Needs NVRTC (the open probes it). */
typedef struct {
  long live_allocs, ctx_depth, ctx_retained, modules, launches, last_shared, max_dyn_shared_set, total_allocs;
} fake_counters;

static fake_counters *fake(void) {
  void *lib = dlopen(FBX_FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL); /* the handle the runtime has */
  ck_assert_ptr_nonnull(lib);
  fake_counters *(*get)(void);
  *(void **)&get = dlsym(lib, "fake_cuda_counters");
  ck_assert_ptr_nonnull(get);
  dlclose(lib);
  return get();
}

static nvf_rt *open_fake(const char *mode, const char *test, char *msg, size_t cap, fbxp_code *code) {
  setenv("FUSEBOX_NVF_LIBCUDA", FBX_FAKE_LIBCUDA, 1);
  if (mode) setenv("FAKE_CUDA_MODE", mode, 1);
  else unsetenv("FAKE_CUDA_MODE");
  nvf_rt *rt = NULL;
  *code = take(nvf_rt_open(H, NVF_TARGET_CUDA, &rt), msg, cap);
  printf("%s: %s\n", test, rt ? nvf_rt_device(rt) : msg);
  return rt;
}

static int no_nvrtc(const char *test, fbxp_code c, const char *m) {
  if (c == FBXP_ERR_UNSUPPORTED && strstr(m, "NVRTC")) {
    printf("%s: skipped: %s\n", test, m);
    return 1;
  }
  return 0;
}

/* FUSEBOX_CUDA_KERNEL_TIMING=1: each run's launches timed by events (the
 * stand-in's clock: 0.25 ms per launch), and the copy bandwidth (its clock:
 * 2 GB/s read + written) */
START_TEST(cuda_fake_driver_times_kernels) {
  char m[4096];
  fbxp_code c;
  setenv("FUSEBOX_CUDA_KERNEL_TIMING", "1", 1);
  nvf_rt *rt = open_fake(NULL, "cuda_fake_driver_times_kernels", m, sizeof m, &c);
  unsetenv("FUSEBOX_CUDA_KERNEL_TIMING");
  if (no_nvrtc("cuda_fake_driver_times_kernels", c, m)) return;
  ck_assert_msg(c == FBXP_OK, "open: %s", m);
  run_add(rt, CU_ADD, 0, 1000);
  run_add(rt, CU_ADD, 4, 1);
  run_two(rt, CU_TWO); /* two launches in one run */
  nvf_rt_stats s;
  nvf_rt_get_stats(rt, &s);
  ck_assert_uint_eq(s.timed_runs, 3);
  ck_assert_double_eq_tol(s.kernel_ms, 0.25 * 4, 1e-9);
  double gbps = 0;
  OK(nvf_rt_copy_bandwidth(rt, 1 << 20, 5, &gbps));
  ck_assert_double_eq_tol(gbps, 2.0, 1e-6);
  nvf_rt_close(rt);
  ck_assert_int_eq(fake()->live_allocs, 0); /* the kept device blocks freed at close */
}
END_TEST

START_TEST(cuda_fake_driver_runs_kernels) {
  char m[4096];
  fbxp_code c;
  nvf_rt *rt = open_fake(NULL, "cuda_fake_driver_runs_kernels", m, sizeof m, &c);
  if (no_nvrtc("cuda_fake_driver_runs_kernels", c, m)) return;
  ck_assert_msg(c == FBXP_OK, "open: %s", m);
  ck_assert_str_eq(nvf_rt_device(rt), "CUDA: Fake GPU (sm_80), 2 SMs");
  fake_counters *k = fake();
  ck_assert_int_eq(k->ctx_retained, 1);
  run_add(rt, CU_ADD, 0, 1000);
  run_add(rt, CU_ADD, 4, 1);
  run_wgsum(rt, CU_WGSUM, 10007);
  ck_assert_int_eq(k->last_shared, 256 * sizeof(float));
  run_two(rt, CU_TWO);
  ck_assert_int_eq(k->launches, 5);
  ck_assert_int_eq(k->modules, 4); /* padd, wg_sum, part, fin: one module each */
  ck_assert_int_eq(k->ctx_depth, 0);
  /* device blocks are kept between runs: the first run again allocates
   * nothing, and nothing is left in use beyond the kept blocks */
  long allocs = k->total_allocs, live = k->live_allocs;
  ck_assert_int_gt(live, 0);
  run_add(rt, CU_ADD, 0, 1000);
  ck_assert_int_eq(k->total_allocs, allocs);
  ck_assert_int_eq(k->live_allocs, live);
  ck_assert_int_eq(k->launches, 6);
  nvf_rt_stats s;
  nvf_rt_get_stats(rt, &s);
  ck_assert_uint_eq(s.launches, 6);
  ck_assert_uint_eq(s.zero_copy_buffers, 0);
  ck_assert_uint_eq(s.bytes_from_device, 4 * (1000 + 1 + 1 + 7 + 1000));
  ck_assert_uint_eq(s.timed_runs, 0); /* FUSEBOX_CUDA_KERNEL_TIMING unset */
  /* more than 48 KiB of dynamic shared memory: the function is opted in; past the device's limit: an error */
  nvf_program *p = NULL;
  OK(nvf_rt_compile(rt, CU_WGSUM, "wg_sum", &p));
  float x[4] = {1, 2, 3, 4}, out = 0;
  nvf_buffer bufs[] = {{x, sizeof x, NVF_BUF_IN}, {&out, sizeof out, NVF_BUF_OUT}};
  nvf_arg args[] = {{.kind = NVF_ARG_BUFFER, .buffer = 0},
                    {.kind = NVF_ARG_BUFFER, .buffer = 1},
                    {.kind = NVF_ARG_I32, .i = 4},
                    {.kind = NVF_ARG_LOCAL, .local_bytes = 64 * 1024}};
  nvf_launch l = {.program = p, .args = args, .nargs = 4, .dims = 1, .global = {256}, .local = {256}};
  OK(nvf_rt_run(rt, bufs, 2, &l, 1));
  ck_assert_int_eq(k->max_dyn_shared_set, 64 * 1024);
  ck_assert(out == 10.0f);
  args[3].local_bytes = 200 * 1024;
  c = take(nvf_rt_run(rt, bufs, 2, &l, 1), m, sizeof m);
  ck_assert_int_eq(c, FBXP_ERR_RUN);
  ck_assert_msg(strstr(m, "launch 0 (wg_sum)") && strstr(m, "204800 bytes of dynamic shared memory"), "message: %s", m);
  /* a missing entry names the call and the driver's error */
  c = take(nvf_rt_compile(rt, CU_ADD, "nope", &p), m, sizeof m);
  ck_assert_int_eq(c, FBXP_ERR_COMPILE);
  ck_assert_msg(strstr(m, "CUDA_ERROR_NOT_FOUND") || strstr(m, "NVRTC"), "message: %s", m);
  ck_assert_int_eq(k->ctx_depth, 0);
  nvf_rt_close(rt);
  ck_assert_int_eq(k->live_allocs, 0); /* the kept blocks freed at close */
  ck_assert_int_eq(k->modules, 0);
  ck_assert_int_eq(k->ctx_retained, 0);
  ck_assert_int_eq(k->ctx_depth, 0);
}
END_TEST

START_TEST(cuda_fake_driver_errors) {
  char m[4096];
  fbxp_code c;
  /* cuInit fails: unsupported, with the driver's error name */
  nvf_rt *rt = open_fake("init_fail", "cuda_fake_driver_errors", m, sizeof m, &c);
  ck_assert_ptr_null(rt);
  ck_assert_int_eq(c, FBXP_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(m, "cuInit: CUDA_ERROR_NO_DEVICE (100)"), "message: %s", m);
  /* no devices */
  rt = open_fake("zero", "cuda_fake_driver_errors", m, sizeof m, &c);
  ck_assert_ptr_null(rt);
  ck_assert_int_eq(c, FBXP_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(m, "no CUDA device (0 devices)"), "message: %s", m);
  /* a fault found by the one wait names the launches and the error */
  rt = open_fake("sync_fail", "cuda_fake_driver_errors", m, sizeof m, &c);
  if (no_nvrtc("cuda_fake_driver_errors", c, m)) return;
  ck_assert_msg(c == FBXP_OK, "open: %s", m);
  nvf_program *part = NULL, *fin = NULL;
  OK(nvf_rt_compile(rt, CU_TWO, "part", &part));
  OK(nvf_rt_compile(rt, CU_TWO, "fin", &fin));
  float x[8] = {0}, out[2];
  nvf_buffer bufs[] = {{x, sizeof x, NVF_BUF_IN}, {NULL, 8, NVF_BUF_TEMP}, {out, sizeof out, NVF_BUF_OUT}};
  nvf_arg a1[] = {{.kind = NVF_ARG_BUFFER, .buffer = 0}, {.kind = NVF_ARG_BUFFER, .buffer = 1},
                  {.kind = NVF_ARG_I32, .i = 4}, {.kind = NVF_ARG_I32, .i = 1},
                  {.kind = NVF_ARG_LOCAL, .local_bytes = 4 * sizeof(float)}};
  nvf_arg a2[] = {{.kind = NVF_ARG_BUFFER, .buffer = 1}, {.kind = NVF_ARG_BUFFER, .buffer = 2},
                  {.kind = NVF_ARG_I32, .i = 2}, {.kind = NVF_ARG_I32, .i = 1}};
  nvf_launch l[] = {{.program = part, .args = a1, .nargs = 5, .dims = 2, .global = {4, 2}, .local = {4, 1}},
                    {.program = fin, .args = a2, .nargs = 4, .dims = 1, .global = {2}, .local = {2}}};
  c = take(nvf_rt_run(rt, bufs, 3, l, 2), m, sizeof m);
  ck_assert_int_eq(c, FBXP_ERR_RUN);
  ck_assert_msg(strstr(m, "cuCtxSynchronize after launches 0..1 (part .. fin): CUDA_ERROR_LAUNCH_FAILED (719)"),
                "message: %s", m);
  /* a LOCAL argument that is not the last is refused before the driver sees it */
  nvf_arg bad[] = {{.kind = NVF_ARG_LOCAL, .local_bytes = 16}, {.kind = NVF_ARG_BUFFER, .buffer = 0}};
  nvf_launch lb = {.program = part, .args = bad, .nargs = 2, .dims = 1, .global = {4}, .local = {4}};
  c = take(nvf_rt_run(rt, bufs, 3, &lb, 1), m, sizeof m);
  ck_assert_int_eq(c, FBXP_ERR_INVALID);
  ck_assert_msg(strstr(m, "launch 0 (part)") && strstr(m, "the last"), "message: %s", m);
  fake_counters *k = fake();
  ck_assert_int_eq(k->live_allocs, 0);
  ck_assert_int_eq(k->ctx_depth, 0);
  nvf_rt_close(rt);
}
END_TEST

START_TEST(cuda_kernels_compile_with_nvrtc) {
  const char *srcs[] = {CU_ADD, CU_WGSUM, CU_TWO};
  const char *entries[] = {"padd", "wg_sum", "fin"};
  for (int i = 0; i < 3; i++) {
    char *ptx = NULL, *log = NULL, m[4096];
    fbxp_code c = take(H->nvrtc_compile(srcs[i], "nvf_test.cu", NULL, &ptx, &log), m, sizeof m);
    if (c == FBXP_ERR_UNSUPPORTED) {
      printf("cuda_kernels_compile_with_nvrtc: skipped: %s\n", m);
      return;
    }
    ck_assert_msg(c == FBXP_OK, "nvrtc: %s\n%s", m, log ? log : "");
    char want[64];
    snprintf(want, sizeof want, ".entry %s(", entries[i]);
    ck_assert_msg(ptx && strstr(ptx, want), "no '%s' in the PTX", want);
    H->free(ptx);
    H->free(log);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("nvf_rt");
  TCase *tc = tcase_create("opencl");
  tcase_add_checked_fixture(tc, setup, NULL);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, cl_pointwise_tail);
  tcase_add_test(tc, cl_workgroup_reduction);
  tcase_add_test(tc, cl_two_kernel_reduction);
  tcase_add_test(tc, cl_program_cache);
  tcase_add_test(tc, cl_compile_error_has_log);
  tcase_add_test(tc, cl_launch_errors_name_the_launch);
  tcase_add_test(tc, cl_zero_copy);
  tcase_add_test(tc, cl_pocl_cache_under_fusebox_cache);
  tcase_add_test(tc, cl_pocl_affinity_set_when_unset);
  tcase_add_test(tc, cl_pocl_affinity_user_value_kept);
  tcase_add_test(tc, cl_aliased_host_memory);
  suite_add_tcase(s, tc);
  TCase *tcu = tcase_create("cuda");
  tcase_add_checked_fixture(tcu, setup, NULL);
  tcase_set_timeout(tcu, 120);
  tcase_add_test(tcu, cuda_open_or_run);
  tcase_add_test(tcu, cuda_kernels_compile_with_nvrtc);
  tcase_add_test(tcu, cuda_fake_driver_runs_kernels);
  tcase_add_test(tcu, cuda_fake_driver_times_kernels);
  tcase_add_test(tcu, cuda_fake_driver_errors);
  suite_add_tcase(s, tcu);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
