/* fusebox kit: a C-family source printer.
 *
 * A growable buffer that remembers an allocation failure (every later call
 * is a no-op and fbxk_take returns NULL), an indenting printer over it, and
 * the dialect table: what C (OpenMP), CUDA C (NVRTC) and OpenCL C differ in
 * is data (qualifiers, index expressions, barriers, type names, literal
 * spelling, math names), so one kernel printer serves all three.
 *
 *   fbxk_printer p;
 *   fbxk_p_init(&p, FBXK_CUDA);
 *   fbxk_p_puts(&p, fbxk_prelude(FBXK_CUDA));
 *   const fbxk_param ps[] = {{"x", FBXK_F32, FBXK_PARAM_IN}, {"y", FBXK_F32, FBXK_PARAM_OUT},
 *                            {"n", FBXK_I64, FBXK_PARAM_VALUE}};
 *   fbxk_p_kernel_begin(&p, "k", ps, 3);
 *   fbxk_p_line(&p, "const int64_t i = %s;", fbxk_p_global_id(&p, 0));
 *   fbxk_p_open(&p, "if (i < n)");
 *   ...
 *   fbxk_p_close(&p);                  // the if
 *   fbxk_p_close(&p);                  // the kernel
 *   char *src = fbxk_p_take(&p);       // fbxk_free when done; NULL: out of memory
 */
#ifndef FUSEBOX_KIT_PRINT_H
#define FUSEBOX_KIT_PRINT_H
#include <stdarg.h>
#include <stddef.h>

#include <fusebox/kit/kit_dtype.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where the kit allocates (default malloc/free). A plugin passes the host's
 * (host->alloc, host->free) once in its entry point, so that strings the kit
 * returns can be handed to the host. Not thread-safe: call before use. */
FBXK_API void fbxk_set_allocator(void *(*alloc_fn)(size_t), void (*free_fn)(void *));
FBXK_API void *fbxk_alloc(size_t n);
FBXK_API void fbxk_free(void *p);

/* ---- buffer -------------------------------------------------------------------- */

typedef struct fbxk_buf {
  char *data;
  size_t len, cap;
  int oom; /* an allocation failed: the text is incomplete */
} fbxk_buf;

FBXK_API void fbxk_puts(fbxk_buf *b, const char *s);
FBXK_API void fbxk_putn(fbxk_buf *b, const char *s, size_t n);
FBXK_API void fbxk_printf(fbxk_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
FBXK_API void fbxk_vprintf(fbxk_buf *b, const char *fmt, va_list ap);
/* The text (fbxk_alloc'd, the caller frees it with fbxk_free) and an empty
 * buffer; NULL after an allocation failure. */
FBXK_API char *fbxk_take(fbxk_buf *b);
FBXK_API void fbxk_buf_free(fbxk_buf *b);

/* ---- dialects ------------------------------------------------------------------ */

/* Floating-point contraction. C: compile with -ffp-contract=off, and a
 * kernel's results are fbxk_op_eval's bit for bit (a * b + c rounded twice,
 * as the baseline x86-64 interpreter rounds it). OpenCL: the head says
 * `#pragma OPENCL FP_CONTRACT ON` (OpenCL's default): a * b + c within one
 * expression may become one FMA, as the interpreter's AVX2/AVX-512 clones
 * and PyTorch's vector kernels contract it; results then differ from
 * fbxk_op_eval by rounding (test_kit_dialects bounds it at 4 ulps, 16 where
 * the platform's libm is called). Every printed op is its own statement, so
 * contraction stays inside one op. CUDA C: NVRTC contracts by default
 * (--fmad=true; the host's nvrtc_compile service does not change it). */

typedef struct fbxk_dialect_info {
  const char *name;          /* "c", "cuda", "opencl" */
  const char *head;          /* includes, typedefs, macros before the prelude */
  const char *fn;            /* a helper function's qualifiers */
  const char *kernel;        /* before a kernel's `void` */
  const char *global_ptr;    /* on a kernel's pointer parameters ("", "__global ") */
  const char *restrict_kw;   /* "restrict", "__restrict__" */
  const char *shared;        /* block-local memory ("__shared__ ", "__local "; C: NULL) */
  const char *barrier;       /* block barrier statement (C: NULL) */
  const char *global_id;     /* printf format of axis %d's global index (C: NULL) */
  const char *local_id;      /* thread in block (C: NULL) */
  const char *group_id;      /* block in grid (C: NULL) */
  const char *local_size;    /* threads per block (C: NULL) */
  const char *num_groups;    /* blocks in the grid (C: NULL) */
  const char *warp_shfl_down;/* printf format (value, offset) of a warp shuffle; NULL: none */
  const char *simd_pragma;   /* a loop without dependences ("#pragma omp simd"; NULL: none) */
  const char *parallel_pragma; /* a parallel loop: "#pragma omp parallel for" (C only) */
  const char *inf, *nan;     /* spelling of infinity and NaN in double (macros of the head) */
  const char *float_suffix;  /* float literal suffix: "f" */
  int has_f64;               /* double available (OpenCL: only with cl_khr_fp64, tested at build) */
} fbxk_dialect_info;

FBXK_API const fbxk_dialect_info *fbxk_dialect_get(fbxk_dialect d);

/* A literal of dtype dt (compute representation) in dialect d: hex floats,
 * FBXK_NAN/FBXK_INF, INT64_MIN spelled as an expression. */
FBXK_API void fbxk_print_float(fbxk_buf *b, double v, int dt, fbxk_dialect d);
FBXK_API void fbxk_print_int(fbxk_buf *b, int64_t v);
/* `x` (an expression in any compute representation) as a value of dtype dt,
 * in compute representation: rounded (float32, half and bfloat16 through
 * fbxk_rh/fbxk_rb), narrowed (integers) or tested (bool: 0 or 1). */
FBXK_API void fbxk_print_cast(fbxk_buf *b, int dt, const char *x, fbxk_dialect d);
/* An element of storage dtype dt read from lvalue `a` into its compute representation. */
FBXK_API void fbxk_print_load(fbxk_buf *b, int dt, const char *a, fbxk_dialect d);
/* `lvalue = x` for a storage element of dtype dt (x: compute representation). */
FBXK_API void fbxk_print_store(fbxk_buf *b, int dt, const char *lvalue, const char *x, fbxk_dialect d);

/* OpenCL C vectors of w lanes (2, 4, 8, 16) of float32 or float64, whose
 * compute and storage types are the same: the type name ("float16"; NULL
 * for other dtypes or widths), `x` converted lane-wise to dtype dt, a load
 * of w consecutive elements from pointer expression `ptr` and the store of
 * x's w lanes there (the prelude's FBXK_VSTORE: one unaligned vector store
 * under clang, vstoreN elsewhere; ptr points to global or private memory). */
FBXK_API const char *fbxk_vector_type(int dt, int w);
FBXK_API void fbxk_print_vcast(fbxk_buf *b, int dt, int w, const char *x);
FBXK_API void fbxk_print_vload(fbxk_buf *b, int w, const char *ptr);
FBXK_API void fbxk_print_vstore(fbxk_buf *b, int dt, int w, const char *ptr, const char *x);
/* The same store written past the cache (the prelude's FBXK_VSTORE_NT):
 * under clang (PoCL), a 64-byte vector whose address is 64-byte aligned
 * goes out as a non-temporal store (x86 vmovntps: the line is not read
 * first and does not stay in the cache), any other as FBXK_VSTORE; the
 * alignment is checked where the store runs. For an output too large to
 * stay in the cache. FBXK_STREAM_FENCE() orders a thread's streamed stores
 * before what it does next: a CPU kernel calls it once a work-group. */
FBXK_API void fbxk_print_vstore_nt(fbxk_buf *b, int dt, int w, const char *ptr, const char *x);

/* ---- printer ------------------------------------------------------------------ */

typedef struct fbxk_printer {
  fbxk_buf buf;
  fbxk_dialect dialect;
  const fbxk_dialect_info *d;
  int indent; /* levels of two spaces */
  char scratch[128]; /* fbxk_p_global_id & co. return text here */
} fbxk_printer;

typedef enum fbxk_param_kind { FBXK_PARAM_IN, FBXK_PARAM_OUT, FBXK_PARAM_VALUE } fbxk_param_kind;
typedef struct fbxk_param {
  const char *name;
  int dtype; /* element dtype of a pointer, the value's dtype otherwise */
  fbxk_param_kind kind;
} fbxk_param;

FBXK_API void fbxk_p_init(fbxk_printer *p, fbxk_dialect d);
FBXK_API void fbxk_p_puts(fbxk_printer *p, const char *s); /* raw text */
FBXK_API void fbxk_p_printf(fbxk_printer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One indented line (a newline is added). */
FBXK_API void fbxk_p_line(fbxk_printer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* `<head> {` and one more indentation level; fbxk_p_close prints `}`. */
FBXK_API void fbxk_p_open(fbxk_printer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
FBXK_API void fbxk_p_close(fbxk_printer *p);
/* `for (int64_t var = begin; var < end; var += step) {` (step "1": var++);
 * pragma: a line printed before it (NULL: none). Close with fbxk_p_close. */
FBXK_API void fbxk_p_for(fbxk_printer *p, const char *pragma, const char *var, const char *begin, const char *end,
                         const char *step);
/* `const <compute type of dt> name = <expr>;` */
FBXK_API void fbxk_p_decl(fbxk_printer *p, int dt, const char *name, const char *expr);
/* The kernel's signature and `{`: pointers to storage types (inputs const,
 * restrict, global qualifier), values in their compute type. */
FBXK_API void fbxk_p_kernel_begin(fbxk_printer *p, const char *name, const fbxk_param *params, int n);
/* Index expressions of axis 0..2 (GPU dialects; C: "0"). The text lives in
 * p->scratch until the next call. */
FBXK_API const char *fbxk_p_global_id(fbxk_printer *p, int axis);
FBXK_API const char *fbxk_p_local_id(fbxk_printer *p, int axis);
FBXK_API const char *fbxk_p_group_id(fbxk_printer *p, int axis);
FBXK_API const char *fbxk_p_local_size(fbxk_printer *p, int axis);
/* `barrier;` (nothing in C) and `__shared__ float name[n];` */
FBXK_API void fbxk_p_barrier(fbxk_printer *p);
FBXK_API void fbxk_p_shared(fbxk_printer *p, int dt, const char *name, int64_t n);
FBXK_API char *fbxk_p_take(fbxk_printer *p);

#ifdef __cplusplus
}
#endif
#endif
