/* fusebox kit: op semantics for generated code.
 *
 * The rows are in kit_oplist.h (one per op and overload). This header
 * matches a graph node to a row (through the host's node_schema), applies
 * the row's dtype rule (PyTorch's promotion, kit_dtype.h), prints the C
 * expression of the op in any dialect, and evaluates it on scalars with the
 * very code a kernel runs (fbxk_op_eval: generated at build time from the
 * same templates, over the compiled prelude). */
#ifndef FUSEBOX_KIT_OPS_H
#define FUSEBOX_KIT_OPS_H
#include <fusebox/fuser_abi.h>
#include <fusebox/kit/kit_dtype.h>
#include <fusebox/kit/kit_oplist.h>
#include <fusebox/kit/kit_print.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dtype rules */
enum {
  FBXK_R_SAME,     /* compute and result: operand 0's dtype */
  FBXK_R_UFLOAT,   /* operand 0's dtype, integral/bool -> float32 */
  FBXK_R_PROMOTE,  /* result_type of the operands */
  FBXK_R_FLOAT,    /* result_type, integral/bool -> float32 */
  FBXK_R_BOOL,     /* computed in result_type, bool result */
  FBXK_R_BOOLSELF, /* computed in operand 0's dtype, bool result */
  FBXK_R_SQUARE,   /* operand 0's dtype, bool -> int64 */
  FBXK_R_WHERE,    /* operand 0 is a bool selector; result_type of operands 1.. */
  FBXK_R_MASKED,   /* operand 1 is a bool selector; operand 0's dtype */
  FBXK_R_TO,       /* the dtype constant (node input 1) */
};

/* op ids: FBXK_OP_ADD_T, ... */
enum {
#define FBXK_OP_ID_(id, ...) FBXK_OP_##id,
  FBXK_OPS(FBXK_OP_ID_)
#undef FBXK_OP_ID_
  FBXK_NOPS
};

#define FBXK_MAX_OP_ARGS 4

/* A node resolved to a row: which node inputs are operands (promoted) and
 * which are scalar parameters, in the order of the template's $0.. */
typedef struct fbxk_match {
  int op;
  int noperands;
  int operand_input[FBXK_MAX_OP_ARGS];
  int nparams;
  int param_input[FBXK_MAX_OP_ARGS];
} fbxk_match;

/* The row of node n, or -1: not a fusable pointwise op (unknown schema, a
 * string argument that is not a constant, a variant the table has not,
 * an argument that is neither a tensor nor a scalar, more than one output).
 * Tensor operands may also be scalars (kernel scalar inputs); a value typed
 * `Scalar` is accepted where the overload declares a Scalar argument. */
FBXK_API int fbxk_op_match(const fbxp_host_api *host, const fbxp_node *n, fbxk_match *m);

FBXK_API const char *fbxk_op_name(int op); /* the overload: "aten::add.Tensor"; "?" */
FBXK_API const char *fbxk_op_id(int op);   /* the row id: "ADD_T" */
FBXK_API int fbxk_op_rule(int op);         /* FBXK_R_* */
FBXK_API int fbxk_op_noperands(int op);
FBXK_API int fbxk_op_nparams(int op);
/* The compute and result dtypes from the operands' (fbxk_typed: dtype and
 * wrapped-number priority). -1: FBXK_R_TO (the dtype is the node's
 * constant) or no operand gives a dtype. */
FBXK_API int fbxk_op_dtypes(int op, const fbxk_typed *operands, int n, int *cdtype, int *rdtype);
/* The template for compute dtype cdtype; NULL: not fused for its class. */
FBXK_API const char *fbxk_op_template(int op, int cdtype);
FBXK_API int fbxk_op_is_bool_valued(int op); /* the template is a truth value (comparisons) */
FBXK_API int fbxk_op_selector(int op);       /* the argument used as a bool selector as it is, or -1 */

/* Print op's expression for compute dtype cdtype in dialect d with
 * args[i] the C expressions of its arguments (already in the compute type;
 * each is parenthesized). The value is in cdtype's compute representation,
 * or a truth value for fbxk_op_is_bool_valued ops: round it with
 * fbxk_print_cast. -1 (nothing printed) when there is no template. */
FBXK_API int fbxk_op_print(fbxk_buf *b, int op, int cdtype, fbxk_dialect d, const char *const *args);

/* OpenCL vector values (a CPU device's row loops, plugins/nvfuser_like):
 * 1 when op's template for cdtype (float32 or float64) computes lane-wise on
 * OpenCL C vectors exactly what it computes on scalars (arithmetic, selects,
 * sqrt, fabs, the prelude's float32 exp as fbxk_v16expf); an operand may be
 * a scalar (widened). fbxk_op_print_vec prints it with w lanes ($T is
 * fbxk_vector_type(cdtype, w)); -1 when op, cdtype, w or d (OpenCL only)
 * does not allow it. The prelude has the vector exp for w = 16 only. */
FBXK_API int fbxk_op_vectorizable(int op, int cdtype);
FBXK_API int fbxk_op_print_vec(fbxk_buf *b, int op, int cdtype, int w, fbxk_dialect d, const char *const *args);

/* What a fuser has proved about an op's first operand, which lets the
 * printer pick a cheaper form that gives the same value for every operand
 * the fact allows. */
enum {
  /* <= 0 or NaN: x - m where m is the max of a set of values holding x
   * (softmax's shifted row). float32 exp then prints fbxk_vexpf_np /
   * fbxk_v16expf_np: fbxk_vexpf without its upper clamp, the same bits. */
  FBXK_FACT_NONPOS = 1u << 0,
};
/* fbxk_op_print (w = 1) or fbxk_op_print_vec (w > 1) under facts; rows and
 * dtypes without a cheaper form print as those do. */
FBXK_API int fbxk_op_print_facts(fbxk_buf *b, int op, int cdtype, int w, fbxk_dialect d, const char *const *args,
                                 unsigned facts);

/* A scalar in compute representation: .f for float dtypes, .i otherwise. */
typedef struct fbxk_scalar {
  double f;
  int64_t i;
} fbxk_scalar;

/* x (of dtype from, compute representation) as a value of dtype to, as
 * fbxk_print_cast prints it. */
FBXK_API fbxk_scalar fbxk_scalar_cast(int from, int to, fbxk_scalar x);
/* Evaluate op as a C kernel does: args in cdtype (a selector: .i, 0 or 1),
 * the template's value cast to rdtype. -1: no template for cdtype. */
FBXK_API int fbxk_op_eval(int op, int cdtype, int rdtype, const fbxk_scalar *args, fbxk_scalar *result);

#ifdef __cplusplus
}
#endif
#endif
