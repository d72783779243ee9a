/* The op table: the single source of truth for every op fusebox knows.
 *
 * Each op overload is one row of an X-macro list:
 *
 *   X(id, schema, category, dtype rule, shape rule, flags, kernel)
 *
 *   id        C identifier: FBX_OP_<id> is its enum value  (add_Tensor)
 *   schema    PyTorch's schema string
 *             "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
 *   category  FBX_OPCAT_*: what kind of op it is (fusers group by this)
 *   dtype     FBX_DT_*: how the result dtype follows from the inputs
 *   shape     FBX_SH_*: how the result shape follows from the inputs
 *   flags     FBX_OPF_* bits (side effects, nondeterminism, views, in-place)
 *   kernel    the reference CPU kernel (fbx_kernel_fn), or NULL for the ops
 *             the interpreter runs itself (prim::If, prim::Loop, prim::Constant)
 *
 * The rows live in one list per family (ops/list_*.h) and are concatenated
 * here in a fixed order; overload resolution tries rows of the same name in
 * that order, so Tensor overloads come before Scalar ones. The enum, the
 * name table, schema matching, the verifier, the printer and the passes'
 * effect rules all come from this list.
 *
 *   const fbx_op *op;
 *   FBX_TRY(fbx_op_resolve(&op, kind_sym, args, nargs));   // by run-time values
 *   FBX_TRY(op->kernel(&ctx, normalized_args, outs));
 */
#ifndef FBX_OPS_OPTABLE_H
#define FBX_OPS_OPTABLE_H
#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "ir/graph.h"
#include "ops/ivalue.h"

typedef enum fbx_opcat {
  FBX_OPCAT_UNARY,      /* pointwise, one tensor in */
  FBX_OPCAT_BINARY,     /* pointwise, two tensors (or tensor and scalar) in */
  FBX_OPCAT_TERNARY,    /* pointwise, three in (where, lerp, addcmul, ...) */
  FBX_OPCAT_CONVERSION, /* pointwise dtype conversion (to, float, type_as) */
  FBX_OPCAT_REDUCTION,
  FBX_OPCAT_COMPOSITE,  /* normalization and composite ops (softmax, layer_norm) */
  FBX_OPCAT_LINALG,
  FBX_OPCAT_VIEW,       /* output aliases the input's storage */
  FBX_OPCAT_SHAPE,      /* shape queries and data movement (cat, stack, size) */
  FBX_OPCAT_CREATION,
  FBX_OPCAT_SCALAR,     /* script scalar code, lists, tuples, strings */
  FBX_OPCAT_CONTROL,    /* run by the interpreter itself */
  FBX_OPCAT_COUNT
} fbx_opcat;

typedef enum fbx_dtrule {
  FBX_DT_PROMOTE,       /* PyTorch type promotion over the tensor/scalar inputs */
  FBX_DT_PROMOTE_FLOAT, /* promotion, then integral/bool -> default float (div, sqrt, ...) */
  FBX_DT_BOOL,          /* comparisons, logical ops, isnan */
  FBX_DT_SAME,          /* the dtype of the first tensor input */
  FBX_DT_LONG,          /* argmax, indices */
  FBX_DT_ARG,           /* a dtype argument (ScalarType) decides, else a default */
  FBX_DT_CUSTOM,        /* the kernel decides (documented with the kernel) */
  FBX_DT_NONE           /* no tensor output */
} fbx_dtrule;

typedef enum fbx_shrule {
  FBX_SH_BROADCAST, /* broadcast of the tensor inputs */
  FBX_SH_SAME,      /* shape of the first tensor input */
  FBX_SH_REDUCE,    /* dims (dim list, keepdim) removed or kept as 1 */
  FBX_SH_CUSTOM,    /* the kernel decides */
  FBX_SH_NONE       /* no tensor output */
} fbx_shrule;

enum {
  FBX_OPF_SIDE_EFFECT = 1 << 0, /* must not be removed or reordered (raise, print) */
  FBX_OPF_NONDET = 1 << 1,      /* results differ between calls (rand) */
  FBX_OPF_INPLACE = 1 << 2,     /* mutates its first input */
  FBX_OPF_ALIAS = 1 << 3,       /* output may share storage with an input (views) */
  FBX_OPF_MUTABLE_OUT = 1 << 4, /* creates a mutable container (list) */
};

/* ---- schemas ------------------------------------------------------------------ */

typedef enum fbx_argtype {
  FBX_ARG_TENSOR,
  FBX_ARG_SCALAR,    /* int, float or bool */
  FBX_ARG_INT,
  FBX_ARG_FLOAT,
  FBX_ARG_BOOL,
  FBX_ARG_NUMBER,    /* int or float, result keeps the kind (script arithmetic) */
  FBX_ARG_STR,
  FBX_ARG_SCALARTYPE,
  FBX_ARG_LAYOUT,
  FBX_ARG_DEVICE,
  FBX_ARG_MEMFORMAT,
  FBX_ARG_GENERATOR,
  FBX_ARG_ANY,       /* t, Any */
  FBX_ARG_NONE,      /* NoneType */
  FBX_ARG_TUPLE,     /* a tuple of anything */
} fbx_argtype;

#define FBX_SCHEMA_MAX_ARGS 24 /* aten::_transformer_encoder_layer_fwd has 20 */
#define FBX_SCHEMA_MAX_RETS 4

typedef struct fbx_schema_arg {
  const char *name;
  fbx_argtype type;
  bool optional;     /* T? */
  bool list;         /* T[] (list_len > 0: T[N], which also accepts one T) */
  bool elem_optional; /* T?[] */
  int list_len;
  bool kwarg_only;   /* after `*` */
  bool has_default;
  fbx_ivalue def;    /* the default (owned by the table; never released) */
} fbx_schema_arg;

typedef struct fbx_schema {
  fbx_sym name;         /* aten::add */
  const char *overload; /* "Tensor", "" when none */
  int nargs;
  fbx_schema_arg args[FBX_SCHEMA_MAX_ARGS];
  bool varargs;         /* trailing `...` */
  int nrets;
  fbx_schema_arg rets[FBX_SCHEMA_MAX_RETS];
  bool ret_list;        /* returns one Tensor[] / t[] (nrets == 1) */
} fbx_schema;

/* ---- kernels ---------------------------------------------------------------------- */

typedef struct fbx_op fbx_op;

/* What a kernel gets besides its arguments. */
typedef struct fbx_kctx {
  const fbx_op *op;
  const fbx_node *node; /* the node being run, for messages; may be NULL */
  uint64_t *rng_state;  /* the run's random generator state (seeded by --seed) */
  int nargs;            /* arguments given: schema.nargs, or more for varargs ops */
} fbx_kctx;

/* args: op->schema.nargs values in schema order, defaults filled in,
 * borrowed. outs: op->schema.nrets slots the kernel fills with new
 * references. On error the kernel returns a status and leaves outs None. */
typedef fbx_status *(*fbx_kernel_fn)(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs);

struct fbx_op {
  int id;               /* FBX_OP_* */
  const char *id_name;  /* "add_Tensor" */
  const char *schema_text;
  fbx_opcat category;
  fbx_dtrule dtype_rule;
  fbx_shrule shape_rule;
  unsigned flags;
  fbx_kernel_fn kernel;
  fbx_schema schema;    /* parsed from schema_text at first use */
};

/* ---- the table --------------------------------------------------------------------- */

#include "ops/list_backward.h"
#include "ops/list_control.h"
#include "ops/list_create.h"
#include "ops/list_extra.h"
#include "ops/list_grad.h"
#include "ops/list_linalg.h"
#include "ops/list_nn.h"
#include "ops/list_pointwise.h"
#include "ops/list_reduce.h"
#include "ops/list_runtime.h"
#include "ops/list_scalar.h"
#include "ops/list_shape.h"

#define FBX_OP_LIST(X) \
  FBX_OPS_CONTROL(X)   \
  FBX_OPS_POINTWISE(X) \
  FBX_OPS_REDUCE(X)    \
  FBX_OPS_LINALG(X)    \
  FBX_OPS_SHAPE(X)     \
  FBX_OPS_CREATE(X)    \
  FBX_OPS_EXTRA(X)     \
  FBX_OPS_NN(X)        \
  FBX_OPS_SCALAR(X)    \
  FBX_OPS_RUNTIME(X)   \
  FBX_OPS_GRAD(X)      \
  FBX_OPS_BACKWARD(X)

typedef enum fbx_op_id {
#define FBX_OP_ENUM_(id, schema, cat, dt, sh, flags, kernel) FBX_OP_##id,
  FBX_OP_LIST(FBX_OP_ENUM_)
#undef FBX_OP_ENUM_
  FBX_OP_COUNT
} fbx_op_id;

#define FBX_OP_DECL_(id, schema, cat, dt, sh, flags, kernel) fbx_status *kernel(fbx_kctx *, fbx_ivalue *, fbx_ivalue *);
FBX_OP_LIST(FBX_OP_DECL_)
#undef FBX_OP_DECL_

/* The row for an id (schemas parsed). NULL only when out of memory at first use. */
const fbx_op *fbx_op_get(fbx_op_id id);
/* Parse every schema once (thread-safe); a malformed schema in the table is
 * reported here (the table's own test calls this). */
fbx_status *fbx_op_table_init(void);
/* Rows named `kind` (e.g. aten::add), in table order. Returns the count and
 * sets *first to an internal array of pointers. */
int fbx_op_overloads(fbx_sym kind, const fbx_op *const **first);

/* Choose the overload of `kind` that accepts these run-time arguments
 * (given positionally, as TorchScript IR passes them; trailing defaulted
 * arguments may be missing). FBX_ERR_UNSUPPORTED names the op and lists its
 * schemas when none fits. */
fbx_status *fbx_op_resolve(const fbx_op **out, fbx_sym kind, const fbx_ivalue *args, int nargs);
/* The same from IR types (NULL when no overload fits or types are too vague
 * to decide: then resolve at run time). */
const fbx_op *fbx_op_resolve_types(fbx_sym kind, fbx_type *const *types, int ntypes);
/* Fill `out` (op->schema.nargs slots) from the given args, adding defaults;
 * borrowed references (defaults are static). int[N] arguments given as one
 * int stay as they are: kernels read them with fbx_arg_int_list. */
fbx_status *fbx_op_normalize_args(const fbx_op *op, const fbx_ivalue *args, int nargs, fbx_ivalue *out);

/* Does any row for `kind` carry flag f (e.g. FBX_OPF_SIDE_EFFECT)? */
bool fbx_op_kind_has_flag(fbx_sym kind, unsigned f);
/* Is `kind` known to the table at all? */
bool fbx_op_kind_known(fbx_sym kind);

/* ---- helpers for kernels ------------------------------------------------------------ */

/* Read an int list argument (int[] or int[N] given as one int, which is
 * repeated N times). At most `cap` entries; returns the count or -1 with *st
 * set when it is not an int list. */
int fbx_arg_int_list(const fbx_op *op, int argi, const fbx_ivalue *arg, int64_t *out, int cap, fbx_status **st);
/* A status "<op schema name>: <message>" with FBX_ERR_RUNTIME. */
fbx_status *fbx_kernel_error(const fbx_kctx *ctx, const char *fmt, ...) FBX_PRINTF(2, 3);

#endif
