/* The tensorexpr loop-nest IR (plugin-private; nothing here crosses the ABI).
 *
 * A kernel is a list of buffers and a statement tree over them, NNC's model:
 *
 *   buffers   kernel inputs, outputs and temporaries; each has a dtype and
 *             concrete sizes and strides (kernels are specialized on the
 *             profiled specs; the host's guards check them before a run)
 *   For       a loop var over [0, extent); `parallel` and `vectorize` marks
 *             set by the schedule
 *   Store     buf[index] = value
 *   Let       local = value (a local is a register, declared by its Let)
 *   Reduce    local = init; for each point of its loops: local =
 *             combine(local, value) -- the combiner is a kit op row
 *             (ADD_T, MAX_OTHER, MIN_OTHER), so NaN propagation and integer
 *             wrap-around are the kit's
 *   Block     a sequence of statements
 *
 * Expressions: immediates, loop vars, locals, kernel scalar inputs, Load,
 * casts, kit op rows (fbxk_op_*: the only copy of op semantics), and index
 * arithmetic (add, mul) over int64.
 *
 * An access (Load or Store) names its buffer and an index in one of two
 * forms: a tuple (one index expression per buffer dim, 0 where a dim is
 * broadcast), what lowering and inlining work on; or, after te_linearize, a
 * linear form (offset + sum of coef * var, coefficients being the strides
 * in elements), what flattening, the code generators and the evaluator
 * work on.
 *
 * All nodes live in an arena freed with the kernel (te_arena). */
#ifndef TE_IR_H
#define TE_IR_H
#include <stdint.h>

#include <fusebox/fuser_abi.h>
#include <fusebox/kit/kit.h>

#define TE_MAX_DIMS FBXP_MAX_DIMS
#define TE_MAX_LIN 16 /* vars in one linear index */

typedef struct te_arena te_arena;
void *te_arena_alloc(te_arena *a, size_t n); /* zeroed; NULL when out of memory */
te_arena *te_arena_create(void);
void te_arena_destroy(te_arena *a);

typedef enum te_buf_kind { TE_BUF_INPUT, TE_BUF_OUTPUT, TE_BUF_TEMP } te_buf_kind;

typedef struct te_buf {
  const char *name;
  te_buf_kind kind;
  int slot;  /* input: kernel input index; output: output index; temp: temp index */
  int dtype;
  int ndim;
  int64_t sizes[TE_MAX_DIMS];
  int64_t strides[TE_MAX_DIMS]; /* elements */
  int64_t numel;                /* temps: elements to allocate */
  /* dynamic shapes (dynamic.c): size expression 1 + i of a field, 0: the literal */
  int sizes_sx[TE_MAX_DIMS], strides_sx[TE_MAX_DIMS], numel_sx;
  /* 1 + the buffer whose memory this one reads (a view: kind TEMP, numel 0,
   * never stored, its strides relative to that buffer's base); 0: none */
  int alias;
} te_buf;

typedef enum te_ekind {
  TE_E_IMM,    /* imm (dtype's compute representation) */
  TE_E_VAR,    /* loop var `id` (int64) */
  TE_E_LOCAL,  /* local `id` */
  TE_E_SCALAR, /* kernel scalar input `id` (an int64 or float64 argument) */
  TE_E_LOAD,   /* acc */
  TE_E_CAST,   /* a[0] as dtype */
  TE_E_OP,     /* kit row `op` computed in cdtype over a[0..nargs); result in dtype */
  TE_E_ADD,    /* index arithmetic: a[0] + a[1] (int64) */
  TE_E_MUL,    /* a[0] * a[1] */
} te_ekind;

typedef struct te_expr te_expr;

typedef struct te_access {
  int buf;
  int linear;                   /* 0: tuple form, 1: linear form */
  int nidx;                     /* tuple: one per buffer dim */
  te_expr *idx[TE_MAX_DIMS];
  int64_t offset;               /* linear: offset + sum coef[i] * var[i] */
  int nterms;
  int var[TE_MAX_LIN];
  int64_t coef[TE_MAX_LIN];
  int offset_sx, coef_sx[TE_MAX_LIN]; /* dynamic shapes: size expressions (0: the literal) */
} te_access;

struct te_expr {
  te_ekind kind;
  int dtype;
  fbxk_scalar imm;
  int id;
  te_access acc;
  int op, cdtype;
  int nargs;
  te_expr *a[FBXK_MAX_OP_ARGS];
  int imm_sx; /* dynamic shapes: an IMM that is a size expression (0: the literal) */
  unsigned facts; /* OP: FBXK_FACT_* the lowering proved of a[0] (softmax's exp: NONPOS) */
};

typedef enum te_skind { TE_S_BLOCK, TE_S_FOR, TE_S_STORE, TE_S_LET, TE_S_REDUCE } te_skind;

typedef struct te_stmt te_stmt;
struct te_stmt {
  te_skind kind;
  te_stmt *next;     /* in its block */
  /* block */
  te_stmt *first;
  /* for */
  int var;
  int64_t extent;
  int parallel, vectorize;
  te_stmt *body;     /* a block */
  /* store */
  te_access acc;
  te_expr *value;    /* store, let, reduce (the reduced expression) */
  /* let, reduce */
  int local;
  int dtype;         /* the local's dtype */
  /* reduce */
  int combiner;      /* kit op row: FBXK_OP_ADD_T, FBXK_OP_MAX_OTHER, FBXK_OP_MIN_OTHER */
  fbxk_scalar init;
  int nloops;
  int rvar[TE_MAX_DIMS];
  int64_t rextent[TE_MAX_DIMS];
  int extent_sx, rextent_sx[TE_MAX_DIMS]; /* dynamic shapes: size expressions (0: the literal) */
};

#define TE_MAX_BUFS 128
#define TE_MAX_SYMS 16 /* symbols of one kernel (dynamic shapes) */
#define TE_MAX_SX 64   /* size expressions of one kernel */

/* A size expression (dynamic shapes): c * prod over symbols j of sym_j^e[j],
 * sym_j the run-time size the host bound to symbol j. */
typedef struct te_sizex {
  int64_t c;
  unsigned char e[TE_MAX_SYMS];
} te_sizex;

typedef struct te_kernel_ir {
  te_arena *arena;
  int nbufs;
  te_buf bufs[TE_MAX_BUFS];
  int ninputs, noutputs, ntemps;
  int input_kind[TE_MAX_BUFS];   /* fbxp_arg_kind of each kernel input */
  int input_buf[TE_MAX_BUFS];    /* tensor inputs: their buffer, else -1 */
  int output_buf[TE_MAX_BUFS];
  int nvars, nlocals;
  int local_dtype[1024];
  te_stmt *root;                 /* a block */
  /* dynamic shapes (dynamic.c): the kernel serves every binding of its
   * symbols; symbol j is the size of dim sym_dim[j] of input sym_input[j].
   * Size expression i's value is passed to the kernel as is[ninputs + i]. */
  int nsyms, nsx;
  int sym_input[TE_MAX_SYMS], sym_dim[TE_MAX_SYMS];
  te_sizex sx[TE_MAX_SX];
} te_kernel_ir;

/* construction (ir.c) */
te_expr *te_imm(te_kernel_ir *k, int dtype, fbxk_scalar v);
te_expr *te_imm_i(te_kernel_ir *k, int64_t v);
te_expr *te_var(te_kernel_ir *k, int id);
te_expr *te_local(te_kernel_ir *k, int id, int dtype);
te_expr *te_scalar_arg(te_kernel_ir *k, int slot, int dtype);
te_expr *te_load(te_kernel_ir *k, int buf, int nidx, te_expr *const *idx);
te_expr *te_cast(te_kernel_ir *k, te_expr *e, int dtype);
te_expr *te_op(te_kernel_ir *k, int op, int cdtype, int rdtype, int nargs, te_expr *const *args);
te_expr *te_idx(te_kernel_ir *k, te_ekind add_or_mul, te_expr *x, te_expr *y);
te_stmt *te_block(te_kernel_ir *k);
void te_append(te_stmt *block, te_stmt *s);
te_stmt *te_for(te_kernel_ir *k, int var, int64_t extent, te_stmt *body);
te_stmt *te_store(te_kernel_ir *k, int buf, int nidx, te_expr *const *idx, te_expr *value);
te_stmt *te_let(te_kernel_ir *k, int local, te_expr *value);
int te_new_var(te_kernel_ir *k);
int te_new_local(te_kernel_ir *k, int dtype);
te_expr *te_expr_copy(te_kernel_ir *k, const te_expr *e);
/* Replace loop var `var` by the expression `by` everywhere in e (tuple
 * accesses); returns the new tree (nodes are shared where nothing changes). */
te_expr *te_subst(te_kernel_ir *k, te_expr *e, const int *vars, te_expr *const *by, int n);

/* printing (ir_print.c): the IR as text, host->alloc'd (NULL: out of memory) */
char *te_ir_print(const te_kernel_ir *k);

/* verification (ir_verify.c): NULL, or what is wrong (a static string in msg) */
int te_ir_verify(const te_kernel_ir *k, char *msg, size_t cap);

#endif
