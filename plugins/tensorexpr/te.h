/* The tensorexpr fuser's internal interface (plugin-private).
 *
 *   partition.c   fusion groups (NNC's policy)
 *   lower.c       a group's subgraph + input specs -> loop-nest IR (ir.h)
 *   ir.c, ir_print.c, ir_verify.c   the IR: construction, text, checks
 *   schedule.c    IR -> IR transformations, each with an off switch
 *   codegen_c.c   IR -> C through the kit printer (host->cc_compile)
 *   codegen_cuda.c  IR -> CUDA C through the kit printer (host->nvrtc_compile)
 *   eval.c        an interpreter of the IR (NNC's SimpleIREval)
 *   dynamic.c     one kernel for every size of symbolic specs
 *   plugin.c      the ABI table, environment, kernels
 */
#ifndef TE_H
#define TE_H
#include "ir.h"

extern const fbxp_host_api *te_host;

/* partition.c */
fbxp_status *te_partition(void *state, const fbxp_graph *g, fbxp_proposals *p);

/* lower.c: NULL or a status (FBXP_ERR_UNSUPPORTED says what). */
fbxp_status *te_lower(te_kernel_ir *k, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin);

/* schedule.c */
enum {
  TE_T_INLINE = 1 << 0,    /* inline pointwise temporaries into their consumers */
  TE_T_ROWBLOCK = 1 << 1,  /* fuse nests that share their outer loop (row reductions) */
  TE_T_FLATTEN = 1 << 2,   /* merge loops that are contiguous for every access */
  TE_T_PARALLEL = 1 << 3,  /* outer loop of each nest in parallel */
  TE_T_VECTORIZE = 1 << 4, /* inner loop marked for SIMD */
  TE_T_REGISTERS = 1 << 5, /* a stored row statistic read back in its row: a local */
  TE_T_ALL = 63,
};
/* Names of the switches for FUSEBOX_TE_DISABLE, in bit order. */
extern const char *const te_transform_names[6];
/* Apply the default schedule with the transformations in `enabled`;
 * parallel marks only loops whose nest moves at least par_min elements. */
fbxp_status *te_schedule(te_kernel_ir *k, unsigned enabled, int64_t par_min);
/* The pieces (tests call them one by one). */
void te_inline(te_kernel_ir *k);
void te_drop_unit_loops(te_kernel_ir *k);
void te_rowblock(te_kernel_ir *k);
int te_linearize(te_kernel_ir *k); /* 1: an index is not linear */
void te_flatten(te_kernel_ir *k);
void te_registers(te_kernel_ir *k);
void te_parallelize(te_kernel_ir *k, int64_t par_min);
void te_vectorize(te_kernel_ir *k);

/* codegen_c.c: the C source (host->alloc'd, NULL: out of memory) of kernel
 * `name`: void name(char *const *bufs, const double *fs, const int64_t *is, int nt),
 * bufs in buffer order. */
char *te_codegen_c(const te_kernel_ir *k, const char *name, const char *first_line);

/* codegen_cuda.c: the CUDA C source (fbxk_alloc'd) of kernels NAME_0 ..
 * NAME_<*nkernels - 1>, launched in that order with TE_CUDA_BLOCK threads
 * per block; NULL when out of memory or when the IR has a construct the
 * backend does not print (*unsupported says which; NULL: out of memory).
 * grids (may be NULL): each kernel's grid, an fbxk_alloc'd array of
 * *nkernels (te_cuda_blocks gives a run's blocks). */
#define TE_CUDA_BLOCK 256
#define TE_CUDA_MAX_GRID 65535
typedef struct te_cuda_grid {
  int64_t blocks; /* the blocks, when not dynamic */
  int single, row;
  int dynamic;    /* dynamic shapes: the iteration count is `total` at run time */
  te_sizex total; /* rows (row kernels) or points (grid-stride kernels) */
} te_cuda_grid;
char *te_codegen_cuda(const te_kernel_ir *k, const char *name, const char *first_line, int *nkernels,
                      const char **unsupported, te_cuda_grid **grids);
/* The blocks of one launch (sym: the run's symbol values, dynamic kernels). */
int64_t te_cuda_blocks(const te_cuda_grid *g, const int64_t *sym);

/* dynamic.c: kernels over symbolic sizes (ABI 1.1, FBXP_ACCEPTS_SYMBOLIC).
 * te_specs_symbolic: do the specs hold a symbol? te_dyn_specs: the specs
 * at representative binding `which` (0 or 1; contiguous strides for the
 * symbolic inputs), or why not. te_dyn_match: a (lowered and scheduled at
 * binding 0) against b (binding 1): NULL, with a's size-dependent fields
 * marked with size expressions and its symbols bound to input dims, or why
 * the kernel cannot serve every size. te_dyn_bind: the size expressions'
 * values for a run's inputs (sxv[k->nsx]) and the symbols' (sym[TE_MAX_SYMS]); te_dyn_buf: a buffer's sizes,
 * strides and element count for them. */
int te_specs_symbolic(const fbxp_arg_spec *in, int32_t nin);
const char *te_dyn_specs(const fbxp_arg_spec *in, int32_t nin, int which, fbxp_arg_spec *out);
const char *te_dyn_match(te_kernel_ir *a, const te_kernel_ir *b, const fbxp_arg_spec *in, int32_t nin);
int te_dyn_bind(const te_kernel_ir *k, const fbxp_arg *in, int32_t nin, int64_t *sxv, int64_t *sym);
void te_dyn_buf(const te_buf *b, const int64_t *sxv, int64_t *sizes, int64_t *strides, int64_t *numel);
/* A line for explain --source: the symbols' representative sizes and the size arguments. */
void te_dyn_describe(const te_kernel_ir *k, fbxk_buf *b);

/* eval.c: run the IR on buffers (bufs[i]: buffer i's base). */
int te_eval(const te_kernel_ir *k, char *const *bufs, const double *fs, const int64_t *is); /* -1: out of memory */

#endif

/* ---- what the fuser takes (lower.c; partition.c asks the same question) ---- */

/* TE_N_PW and above are ops a group computes; TE_N_SHAPE (a shape-only op:
 * an index remap inside the group) weighs nothing in a group's size. */
typedef enum te_nclass {
  TE_N_NO = -1, TE_N_CONST, TE_N_LIST, TE_N_PW, TE_N_RED, TE_N_SOFTMAX, TE_N_NORM, TE_N_SHAPE
} te_nclass;
/* VAR/STD: the sum of squared deviations from the mean divided by
 * max(count - corr, 0) (STD: its sqrt); PROD: a product */
typedef enum te_red {
  TE_RED_SUM, TE_RED_MEAN, TE_RED_AMAX, TE_RED_AMIN, TE_RED_PROD, TE_RED_VAR, TE_RED_STD,
  TE_RED_RSTD /* lowering only (layer_norm): rsqrt(biased var + eps), a row statistic */
} te_red;
/* shape-only ops (TE_N_SHAPE) */
typedef enum te_shape_op {
  TE_SH_PERMUTE, TE_SH_T, TE_SH_TRANSPOSE, TE_SH_UNSQUEEZE, TE_SH_SQUEEZE, TE_SH_SQUEEZE_DIM, TE_SH_EXPAND,
  TE_SH_EXPAND_AS,
  TE_SH_VIEW,    /* view/reshape (a constant size list, -1 allowed), flatten.using_ints, view_as/reshape_as */
  TE_SH_CHUNK,   /* aten::chunk whose list goes to one prim::ListUnpack */
  TE_SH_UNPACK,  /* that prim::ListUnpack: one slice per output */
  TE_SH_TLIST,   /* a prim::ListConstruct of tensors whose one user is aten::cat */
  TE_SH_CAT,     /* aten::cat of such a list */
  TE_SH_TYPE_AS  /* aten::type_as: a conversion to the other tensor's dtype */
} te_shape_op;

/* A value's type as the classifier sees it: a tensor (dtype, ndim, prio;
 * dtype and ndim -1 for an unprofiled tensor, taken optimistically) or a
 * scalar (dtype F64/I64/BOOL, FBXK_PRIO_SCALAR); known = 0 when the value
 * cannot be a kernel operand (the node is then not fused). */
typedef struct te_vtype {
  int known, tensor, dtype, ndim, prio;
} te_vtype;
typedef te_vtype (*te_typeof_fn)(void *ctx, const fbxp_value *v);

typedef struct te_ninfo {
  te_nclass cls;
  fbxk_match m;          /* TE_N_PW */
  int cdtype, rdtype;    /* PW: compute/result; RED, SOFTMAX, NORM: accumulate/result */
  te_red red;            /* TE_N_RED */
  double corr;           /* TE_RED_VAR/STD: the correction (1: unbiased) */
  te_shape_op sop;       /* TE_N_SHAPE */
  int ndims;             /* RED: reduced dims (normalized, sorted), SOFTMAX: 1; NORM: the last ndims
                            (-1 in RED: all dims, the rank not known yet) */
  int dims[TE_MAX_DIMS];
  int keepdim;
  int indices;           /* RED from max.dim/min.dim whose indices are used: they are a second output */
  int lead;              /* RED from _grad_sum_to_size: dims before it dropped, the reduced ones after kept (else -1);
                            lead == -2 with ndims 0: the identity (size None, or nothing to sum) */
  int log;               /* SOFTMAX: log_softmax */
} te_ninfo;

/* A value's type from its IR type (tensors: dtype and rank, -1 both when
 * not profiled; not on the CPU: unknown) or its scalar kind. */
te_vtype te_typeof_profiled(void *ctx, const fbxp_value *v);
te_nclass te_classify(const fbxp_node *n, te_typeof_fn tf, void *ctx, te_ninfo *out);
