/* The buffer, the printer and the dialect table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fusebox/kit/kit_print.h>

/* ---- allocation ------------------------------------------------------------------ */

static void *(*kit_alloc_fn)(size_t) = malloc;
static void (*kit_free_fn)(void *) = free;

void fbxk_set_allocator(void *(*alloc_fn)(size_t), void (*free_fn)(void *)) {
  kit_alloc_fn = alloc_fn ? alloc_fn : malloc;
  kit_free_fn = free_fn ? free_fn : free;
}
void *fbxk_alloc(size_t n) { return kit_alloc_fn(n); }
void fbxk_free(void *p) {
  if (p) kit_free_fn(p);
}

/* ---- buffer ---------------------------------------------------------------------- */

static void grow(fbxk_buf *b, size_t need) {
  if (b->oom || b->len + need + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + need + 1) cap *= 2;
  char *d = fbxk_alloc(cap);
  if (!d) {
    b->oom = 1;
    return;
  }
  if (b->data) memcpy(d, b->data, b->len + 1);
  fbxk_free(b->data);
  b->data = d;
  b->cap = cap;
}

void fbxk_putn(fbxk_buf *b, const char *s, size_t n) {
  grow(b, n);
  if (b->oom) return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

void fbxk_puts(fbxk_buf *b, const char *s) { fbxk_putn(b, s, strlen(s)); }

void fbxk_vprintf(fbxk_buf *b, const char *fmt, va_list ap) {
  char small[256];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  if (n < 0) {
    va_end(ap2);
    return;
  }
  if ((size_t)n < sizeof small) {
    fbxk_putn(b, small, (size_t)n);
  } else {
    grow(b, (size_t)n);
    if (!b->oom) {
      vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
      b->len += (size_t)n;
    }
  }
  va_end(ap2);
}

void fbxk_printf(fbxk_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fbxk_vprintf(b, fmt, ap);
  va_end(ap);
}

char *fbxk_take(fbxk_buf *b) {
  if (!b->oom && !b->data) grow(b, 0);
  if (b->oom) {
    fbxk_buf_free(b);
    return NULL;
  }
  b->data[b->len] = 0;
  char *d = b->data;
  *b = (fbxk_buf){0};
  return d;
}

void fbxk_buf_free(fbxk_buf *b) {
  fbxk_free(b->data);
  *b = (fbxk_buf){0};
}

/* ---- dialects -------------------------------------------------------------------- */

/* OpenCL C overloads the math functions: the C99 float names map to them;
 * sinf and cosf to the prelude's fbxk_vsinf and fbxk_vcosf (kit_prelude.inc). */
#define KIT_CL_MATH                                                                                          \
  "#define fabsf fabs\n#define sqrtf sqrt\n#define expf exp\n#define exp2f exp2\n#define expm1f expm1\n"    \
  "#define logf log\n#define log2f log2\n#define log10f log10\n#define log1pf log1p\n#define sinf fbxk_vsinf\n"     \
  "#define cosf fbxk_vcosf\n#define tanf tan\n#define asinf asin\n#define acosf acos\n#define atanf atan\n"         \
  "#define sinhf sinh\n#define coshf cosh\n#define tanhf tanh\n#define erff erf\n#define erfcf erfc\n"      \
  "#define floorf floor\n#define ceilf ceil\n#define truncf trunc\n#define rintf rint\n"                     \
  "#define nearbyintf rint\n#define nearbyint rint\n#define fmodf fmod\n#define powf pow\n"                 \
  "#define atan2f atan2\n#define hypotf hypot\n#define copysignf copysign\n#define fmaf fma\n"

static const fbxk_dialect_info dialects[FBXK_NDIALECTS] = {
    [FBXK_C] =
        {
            .name = "c",
            .head = "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n"
                    "#define FBXK_FN static inline __attribute__((unused))\n"
                    "#define FBXK_VM static inline __attribute__((always_inline, unused))\n"
                    "#define FBXK_HAS_F64 1\n"
                    "#define FBXK_INF __builtin_inf()\n#define FBXK_NAN __builtin_nan(\"\")\n"
                    "FBXK_FN uint32_t fbxk_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }\n"
                    "FBXK_FN float fbxk_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }\n",
            .fn = "static inline",
            .kernel = "",
            .global_ptr = "",
            .restrict_kw = "restrict",
            .simd_pragma = "#pragma omp simd",
            .parallel_pragma = "#pragma omp parallel for",
            .inf = "FBXK_INF",
            .nan = "FBXK_NAN",
            .float_suffix = "f",
            .has_f64 = 1,
        },
    [FBXK_CUDA] =
        {
            .name = "cuda",
            .head = "typedef signed char int8_t;\ntypedef unsigned char uint8_t;\ntypedef short int16_t;\n"
                    "typedef unsigned short uint16_t;\ntypedef int int32_t;\ntypedef unsigned int uint32_t;\n"
                    "typedef long long int64_t;\ntypedef unsigned long long uint64_t;\n"
                    "#define FBXK_FN static __device__ __forceinline__\n#define FBXK_VM FBXK_FN\n"
                    "#define FBXK_HAS_F64 1\n#define FBXK_VMATH_NATIVE 1\n"
                    "#define FBXK_INF __longlong_as_double(0x7ff0000000000000LL)\n"
                    "#define FBXK_NAN __longlong_as_double(0x7ff8000000000000LL)\n"
                    "FBXK_FN uint32_t fbxk_f2u(float f) { return __float_as_uint(f); }\n"
                    "FBXK_FN float fbxk_u2f(uint32_t u) { return __uint_as_float(u); }\n",
            .fn = "static __device__ __forceinline__",
            .kernel = "extern \"C\" __global__ ",
            .global_ptr = "",
            .restrict_kw = "__restrict__",
            .shared = "__shared__ ",
            .barrier = "__syncthreads();",
            .global_id = "((int64_t)blockIdx.%c * blockDim.%c + threadIdx.%c)",
            .local_id = "((int64_t)threadIdx.%c)",
            .group_id = "((int64_t)blockIdx.%c)",
            .local_size = "((int64_t)blockDim.%c)",
            .num_groups = "((int64_t)gridDim.%c)",
            .warp_shfl_down = "__shfl_down_sync(0xffffffffu, %s, %s)",
            .inf = "FBXK_INF",
            .nan = "FBXK_NAN",
            .float_suffix = "f",
            .has_f64 = 1,
        },
    [FBXK_OPENCL] =
        {
            .name = "opencl",
            /* FP_CONTRACT ON (OpenCL's default): a * b + c within one op's expression
             * becomes an FMA where the device has one, as the interpreter's FMA
             * clones and PyTorch's vector kernels compute it (GELU 1.54 -> 1.14 ms
             * on PoCL); each op is its own statement, so no product of one op is
             * fused with the next op's sum */
            .head = "#pragma OPENCL FP_CONTRACT ON\n#ifdef cl_khr_fp64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#define FBXK_HAS_F64 1\n"
                    "#else\n#define FBXK_HAS_F64 0\n#endif\n"
                    "typedef char int8_t;\ntypedef uchar uint8_t;\ntypedef short int16_t;\ntypedef ushort uint16_t;\n"
                    "typedef int int32_t;\ntypedef uint uint32_t;\ntypedef long int64_t;\ntypedef ulong uint64_t;\n"
                    "#define FBXK_FN static inline\n#define FBXK_VM static inline\n"
                    "#define FBXK_INF INFINITY\n#define FBXK_NAN NAN\n"
                    "#define fbxk_f2u(f) as_uint(f)\n#define fbxk_u2f(u) as_float(u)\n" KIT_CL_MATH,
            .fn = "static inline",
            .kernel = "__kernel ",
            .global_ptr = "__global ",
            .restrict_kw = "restrict",
            .shared = "__local ",
            .barrier = "barrier(CLK_LOCAL_MEM_FENCE);",
            .global_id = "((int64_t)get_global_id(%c))",
            .local_id = "((int64_t)get_local_id(%c))",
            .group_id = "((int64_t)get_group_id(%c))",
            .local_size = "((int64_t)get_local_size(%c))",
            .num_groups = "((int64_t)get_num_groups(%c))",
            .inf = "FBXK_INF",
            .nan = "FBXK_NAN",
            .float_suffix = "f",
            .has_f64 = 0, /* only where the device has cl_khr_fp64: FBXK_HAS_F64 in the head */
        },
};

const fbxk_dialect_info *fbxk_dialect_get(fbxk_dialect d) {
  return d >= 0 && d < FBXK_NDIALECTS ? &dialects[d] : &dialects[FBXK_C];
}

/* ---- literals and conversions ------------------------------------------------------ */

void fbxk_print_int(fbxk_buf *b, int64_t v) {
  if (v == INT64_MIN) fbxk_puts(b, "(-9223372036854775807LL - 1)");
  else fbxk_printf(b, "((int64_t)%lldLL)", (long long)v);
}

void fbxk_print_float(fbxk_buf *b, double v, int dt, fbxk_dialect d) {
  const fbxk_dialect_info *di = fbxk_dialect_get(d);
  const char *suffix = dt == FBXK_F64 ? "" : di->float_suffix;
  if (v != v) fbxk_puts(b, di->nan);
  else if (v == __builtin_inf()) fbxk_puts(b, di->inf);
  else if (v == -__builtin_inf()) fbxk_printf(b, "(-%s)", di->inf);
  else if (dt == FBXK_F64 || dt < 0) fbxk_printf(b, "%a", v);
  else fbxk_printf(b, "%a%s", (double)(float)v, suffix);
}

void fbxk_print_cast(fbxk_buf *b, int dt, const char *x, fbxk_dialect d) {
  const char *i64 = fbxk_compute_type(FBXK_I64, d);
  switch (dt) {
    case FBXK_F32: fbxk_printf(b, "(float)(%s)", x); break;
    case FBXK_F16: fbxk_printf(b, "fbxk_rh((float)(%s))", x); break;
    case FBXK_BF16: fbxk_printf(b, "fbxk_rb((float)(%s))", x); break;
    case FBXK_F64: fbxk_printf(b, "(double)(%s)", x); break;
    case FBXK_I64: fbxk_printf(b, "(%s)(%s)", i64, x); break;
    case FBXK_BOOL: fbxk_printf(b, "(%s)((%s) != 0)", i64, x); break;
    default: fbxk_printf(b, "(%s)(%s)(%s)", i64, fbxk_storage_type(dt, d), x); break;
  }
}

void fbxk_print_load(fbxk_buf *b, int dt, const char *a, fbxk_dialect d) {
  if (dt == FBXK_F16) fbxk_printf(b, "fbxk_h2f(%s)", a);
  else if (dt == FBXK_BF16) fbxk_printf(b, "fbxk_b2f(%s)", a);
  else if (fbxk_is_float(dt)) fbxk_puts(b, a);
  else fbxk_printf(b, "(%s)%s", fbxk_compute_type(FBXK_I64, d), a);
}

void fbxk_print_store(fbxk_buf *b, int dt, const char *lvalue, const char *x, fbxk_dialect d) {
  switch (dt) {
    case FBXK_F16: fbxk_printf(b, "%s = fbxk_f2h(%s);", lvalue, x); break;
    case FBXK_BF16: fbxk_printf(b, "%s = fbxk_f2b(%s);", lvalue, x); break;
    case FBXK_BOOL: fbxk_printf(b, "%s = (%s)(%s != 0);", lvalue, fbxk_storage_type(dt, d), x); break;
    default: fbxk_printf(b, "%s = (%s)%s;", lvalue, fbxk_storage_type(dt, d), x); break;
  }
}

/* ---- OpenCL vectors ------------------------------------------------------------------ */

const char *fbxk_vector_type(int dt, int w) {
  static const char *const f[] = {"float2", "float4", "float8", "float16"};
  static const char *const d[] = {"double2", "double4", "double8", "double16"};
  int i = w == 2 ? 0 : w == 4 ? 1 : w == 8 ? 2 : w == 16 ? 3 : -1;
  if (i < 0 || (dt != FBXK_F32 && dt != FBXK_F64)) return NULL;
  return dt == FBXK_F32 ? f[i] : d[i];
}

void fbxk_print_vcast(fbxk_buf *b, int dt, int w, const char *x) {
  const char *t = fbxk_vector_type(dt, w);
  fbxk_printf(b, "convert_%s(%s)", t ? t : "?", x);
}

void fbxk_print_vload(fbxk_buf *b, int w, const char *ptr) { fbxk_printf(b, "vload%d(0, %s)", w, ptr); }

void fbxk_print_vstore(fbxk_buf *b, int dt, int w, const char *ptr, const char *x) {
  const char *t = fbxk_vector_type(dt, w);
  fbxk_printf(b, "FBXK_VSTORE(%d, convert_%s(%s), %s);", w, t ? t : "?", x, ptr);
}

void fbxk_print_vstore_nt(fbxk_buf *b, int dt, int w, const char *ptr, const char *x) {
  const char *t = fbxk_vector_type(dt, w);
  fbxk_printf(b, "FBXK_VSTORE_NT(%d, convert_%s(%s), %s);", w, t ? t : "?", x, ptr);
}

/* ---- printer ------------------------------------------------------------------------- */

void fbxk_p_init(fbxk_printer *p, fbxk_dialect d) {
  memset(p, 0, sizeof *p);
  p->dialect = d;
  p->d = fbxk_dialect_get(d);
}

void fbxk_p_puts(fbxk_printer *p, const char *s) { fbxk_puts(&p->buf, s); }

void fbxk_p_printf(fbxk_printer *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fbxk_vprintf(&p->buf, fmt, ap);
  va_end(ap);
}

static void indent(fbxk_printer *p) {
  for (int i = 0; i < p->indent; i++) fbxk_putn(&p->buf, "  ", 2);
}

void fbxk_p_line(fbxk_printer *p, const char *fmt, ...) {
  indent(p);
  va_list ap;
  va_start(ap, fmt);
  fbxk_vprintf(&p->buf, fmt, ap);
  va_end(ap);
  fbxk_putn(&p->buf, "\n", 1);
}

void fbxk_p_open(fbxk_printer *p, const char *fmt, ...) {
  indent(p);
  va_list ap;
  va_start(ap, fmt);
  fbxk_vprintf(&p->buf, fmt, ap);
  va_end(ap);
  fbxk_puts(&p->buf, " {\n");
  p->indent++;
}

void fbxk_p_close(fbxk_printer *p) {
  if (p->indent > 0) p->indent--;
  indent(p);
  fbxk_puts(&p->buf, "}\n");
}

void fbxk_p_for(fbxk_printer *p, const char *pragma, const char *var, const char *begin, const char *end,
                const char *step) {
  if (pragma) fbxk_p_printf(p, "%s\n", pragma);
  if (!step || !strcmp(step, "1"))
    fbxk_p_open(p, "for (%s %s = %s; %s < %s; %s++)", fbxk_compute_type(FBXK_I64, p->dialect), var, begin, var, end,
                var);
  else
    fbxk_p_open(p, "for (%s %s = %s; %s < %s; %s += %s)", fbxk_compute_type(FBXK_I64, p->dialect), var, begin, var,
                end, var, step);
}

void fbxk_p_decl(fbxk_printer *p, int dt, const char *name, const char *expr) {
  fbxk_p_line(p, "const %s %s = %s;", fbxk_compute_type(dt, p->dialect), name, expr);
}

void fbxk_p_kernel_begin(fbxk_printer *p, const char *name, const fbxk_param *params, int n) {
  indent(p);
  fbxk_p_printf(p, "%svoid %s(", p->d->kernel, name);
  for (int i = 0; i < n; i++) {
    const fbxk_param *a = &params[i];
    if (i) fbxk_p_puts(p, ", ");
    if (a->kind == FBXK_PARAM_VALUE)
      fbxk_p_printf(p, "%s %s", fbxk_compute_type(a->dtype, p->dialect), a->name);
    else
      fbxk_p_printf(p, "%s%s%s *%s %s", p->d->global_ptr, a->kind == FBXK_PARAM_IN ? "const " : "",
                    fbxk_storage_type(a->dtype, p->dialect), p->d->restrict_kw, a->name);
  }
  fbxk_p_puts(p, ") {\n");
  p->indent++;
}

static const char *index_expr(fbxk_printer *p, const char *fmt, int axis) {
  if (!fmt || axis < 0 || axis > 2) return "0";
  char c = (char)((p->dialect == FBXK_CUDA ? 'x' : '0') + axis);
  snprintf(p->scratch, sizeof p->scratch, fmt, c, c, c);
  return p->scratch;
}

const char *fbxk_p_global_id(fbxk_printer *p, int axis) { return index_expr(p, p->d->global_id, axis); }
const char *fbxk_p_local_id(fbxk_printer *p, int axis) { return index_expr(p, p->d->local_id, axis); }
const char *fbxk_p_group_id(fbxk_printer *p, int axis) { return index_expr(p, p->d->group_id, axis); }
const char *fbxk_p_local_size(fbxk_printer *p, int axis) { return index_expr(p, p->d->local_size, axis); }

void fbxk_p_barrier(fbxk_printer *p) {
  if (p->d->barrier) fbxk_p_line(p, "%s", p->d->barrier);
}

void fbxk_p_shared(fbxk_printer *p, int dt, const char *name, int64_t n) {
  fbxk_p_line(p, "%s%s %s[%lld];", p->d->shared ? p->d->shared : "", fbxk_storage_type(dt, p->dialect), name,
              (long long)n);
}

char *fbxk_p_take(fbxk_printer *p) { return fbxk_take(&p->buf); }
