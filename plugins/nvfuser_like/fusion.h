/* The nvfuser_like fusion IR: tensor views and their iteration domains.
 *
 * A fusion is built from a group's subgraph and its input specs
 * (nvf_fusion_build): every tensor value becomes a TensorView (TV) whose
 * root domain is a list of IterDomains, each an iteration (iS, extent > 1),
 * a broadcast (bS, extent 1) or a reduction (rS: the TV is the result of
 * reducing that domain away) domain; scalars (kernel arguments and
 * constants) are TVs without a domain. Expressions are
 *   - pointwise: one row of the kit (unary/binary/ternary, casts, where),
 *     operands promoted to the row's compute dtype;
 *   - reduce: sum/max/min over some iteration domains of one TV; the output
 *     holds rS domains there (sum accumulates floats in float64);
 *   - broadcast: inserts bS domains (leading ones to match a rank, or where
 *     a keepdim reduction removed one).
 * Composite ops are lowered into these at build time: mean (sum, divide,
 * cast), softmax/log_softmax (amax, subtract, exp, sum, divide or log),
 * layer_norm (two sums: mean, then the centered variance; rsqrt; affine).
 *
 * Building also gives every iS/rS domain a root axis: the domains that
 * broadcasting and reductions say are the same dimension share one axis
 * (a union-find over domains), and axes are ordered as the widest TV
 * orders them. Schedulers (sched.h) work on axes.
 */
#ifndef NVF_FUSION_H
#define NVF_FUSION_H
#include <stdint.h>

#include <fusebox/fuser_abi.h>
#include <fusebox/kit/kit.h>

#define NVF_MAX_DIMS 8
#define NVF_MAX_TVS 512
#define NVF_MAX_EXPRS 512
#define NVF_MAX_IO 64

typedef enum nvf_id_type { NVF_ID_ITER, NVF_ID_REDUCTION, NVF_ID_BROADCAST } nvf_id_type;

typedef struct nvf_id {
  nvf_id_type type;
  int64_t extent;
  int axis; /* root axis; -1 for broadcast domains and extent-1 reductions */
} nvf_id;

typedef struct nvf_tv {
  int dtype;  /* storage dtype of its elements (a reduction's: its accumulator) */
  int scalar; /* 1: a scalar (no domain) */
  int is_const;
  fbxk_scalar cval; /* is_const: the value, dtype F64, I64 or BOOL */
  int prio;         /* FBXK_PRIO_* for promotion */
  int nd;           /* root domain, reduction domains included */
  nvf_id dom[NVF_MAX_DIMS];
  int64_t stride[NVF_MAX_DIMS]; /* graph inputs: element strides per domain */
  int def;                      /* defining expression, -1: a fusion input or constant */
  int input;                    /* graph input index, -1 */
  int output;                   /* 1: a graph output */
} nvf_tv;

typedef enum nvf_expr_kind { NVF_E_PW, NVF_E_REDUCE, NVF_E_BCAST } nvf_expr_kind;
typedef enum nvf_red { NVF_RED_SUM, NVF_RED_MAX, NVF_RED_MIN } nvf_red;

typedef struct nvf_expr {
  nvf_expr_kind kind;
  int op;        /* PW: kit row, -1: a cast to the output's dtype */
  nvf_red red;   /* REDUCE */
  int cdtype;    /* PW: compute dtype; REDUCE: accumulator (= the output's dtype) */
  int out;
  int nin;       /* PW: operands then params (kit order); REDUCE, BCAST: 1 */
  int in[2 * FBXK_MAX_OP_ARGS];
  int noperands; /* PW */
} nvf_expr;

typedef struct nvf_fusion {
  int ntv, nexpr;
  nvf_tv tv[NVF_MAX_TVS];
  nvf_expr ex[NVF_MAX_EXPRS];
  int ninputs, noutputs;
  int input_tv[NVF_MAX_IO];  /* graph input i (a tensor or scalar TV) */
  int input_kind[NVF_MAX_IO];
  int output_tv[NVF_MAX_IO]; /* graph output o */
  int naxes;
  int64_t axis_extent[NVF_MAX_DIMS];
} nvf_fusion;

/* ---- what the fuser takes (partition.c asks the same question as build) ---- */

typedef enum nvf_nclass {
  NVF_N_NO = -1, NVF_N_CONST, NVF_N_LIST, NVF_N_PW, NVF_N_RED, NVF_N_SOFTMAX, NVF_N_LAYER_NORM
} nvf_nclass;

/* A value as the classifier sees it: tensor (dtype/ndim -1 when unprofiled)
 * or scalar (F64/I64/BOOL); known 0: cannot be a kernel operand. */
typedef struct nvf_vtype {
  int known, tensor, dtype, ndim, prio;
} nvf_vtype;
typedef nvf_vtype (*nvf_typeof_fn)(void *ctx, const fbxp_value *v);

typedef struct nvf_ninfo {
  nvf_nclass cls;
  fbxk_match m;       /* PW */
  int cdtype, rdtype; /* PW */
  int mean;           /* RED: mean (sum then divide) */
  nvf_red red;        /* RED */
  int nd;             /* RED, SOFTMAX, LAYER_NORM: dims (normalized, sorted); -1: rank unknown yet */
  int dims[NVF_MAX_DIMS];
  int keepdim;
  unsigned keep_mask; /* RED: reduced dims kept as size 1 (keepdim: all; sum_to_size: the 1s) */
  int log;            /* SOFTMAX: log_softmax */
  int out_dtype;      /* RED, SOFTMAX: result dtype (-1: unknown yet) */
} nvf_ninfo;

nvf_vtype nvf_typeof_profiled(void *ctx, const fbxp_value *v);
nvf_nclass nvf_classify(const fbxp_node *n, nvf_typeof_fn tf, void *ctx, nvf_ninfo *out);

/* Builds f (zeroed by the caller) from subgraph g and its input specs.
 * FBXP_ERR_UNSUPPORTED says what cannot be fused. */
fbxp_status *nvf_fusion_build(nvf_fusion *f, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin);
/* The logical shape of a TV (its non-reduction domains). */
int nvf_tv_logical(const nvf_tv *t, int64_t *sizes);
/* Does t vary along axis a (an iteration domain bound to it)? */
int nvf_tv_has_axis(const nvf_tv *t, int a);
/* Is every element of t <= 0 or NaN? t = a - b where b is a broadcast of
 * the max of a over some of its dimensions (softmax's shifted row): each
 * element is an element of a minus a max over values that include it.
 * The printer then takes exp's cheaper form (FBXK_FACT_NONPOS). */
int nvf_tv_nonpos(const nvf_fusion *f, int t);
/* The fusion IR as text (nvFuser's notation: T3_l[iS0{4}, rS1{16}] = sum(T2_l[...])). */
void nvf_fusion_print(const nvf_fusion *f, fbxk_buf *b);

#endif
