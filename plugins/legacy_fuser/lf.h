/* The legacy fuser's internal interface (plugin-private; nothing here
 * crosses the ABI).
 *
 *   partition.c  fusion groups: greedy producer-into-consumer merging
 *   ops.c        which nodes are fusable at partition time (the op table,
 *                dtype rules and templates are the kit's: <fusebox/kit/kit.h>)
 *   kir.c        a group's subgraph -> kernel IR (values, operands, stores),
 *                with dtypes inferred from the input specs
 *   codegen.c    kernel IR -> C (CPU) or CUDA C (NVRTC) with the kit's printer pieces
 *   plugin.c     the ABI table: compile, output_specs, run, release
 *
 * The kernel IR is what a kernel is keyed by: dtypes and ranks, never sizes.
 * Sizes and strides come at run time (plugin.c lays out the operands' views,
 * checks the broadcast and the chunks, and declines what it cannot run).
 */
#ifndef LF_H
#define LF_H
#include <stdint.h>

#include <fusebox/fuser_abi.h>
#include <fusebox/kit/kit.h>

extern const fbxp_host_api *lf_host;

/* The argument limit: tensor operands plus stores of one kernel (PyTorch's
 * fuser had one too: kernels with too many arguments do not compile or
 * launch well). */
#define LF_MAX_ARGS 64
#define LF_MAX_VALUES 512
#define LF_MAX_CHUNKS 16

/* ---- kernel IR ------------------------------------------------------------------ */

typedef enum lf_vkind {
  LF_LOAD,    /* operand `slot` */
  LF_SCALAR,  /* kernel scalar input `slot` (wrapped number) */
  LF_CONST,   /* literal (ci or cf, by dtype) */
  LF_OP,      /* op `op` over args */
} lf_vkind;

typedef struct lf_value {
  lf_vkind kind;
  int dtype;    /* the value's dtype (FBXK_*; scalars: int64, float64 or bool) */
  int prio;     /* FBXK_PRIO_* */
  int op;       /* FBXK_OP_* (the kit's op table) */
  int cdtype;   /* the dtype the op computes in */
  int nargs;
  int args[4];  /* value ids */
  int slot;
  int64_t ci;
  double cf;
} lf_value;

/* A tensor operand as the kernel reads it: input `input`, possibly one chunk
 * (`chunk` >= 0: index into chunks, piece `piece`). */
typedef struct lf_operand {
  int input;
  int dtype;
  int chunk;
  int piece;
} lf_operand;

/* aten::chunk(x, n, dim) pushed to the kernel's inputs: the pieces of x are
 * read as views of the inputs in its cone. */
typedef struct lf_chunk {
  int nchunks;
  int dim;        /* normalized to the chunked value's rank */
  int rank;       /* rank of the chunked value */
  int ncone;
  int cone[LF_MAX_ARGS]; /* kernel inputs feeding the chunked value */
} lf_chunk;

/* Where a value goes: group output `output`, or piece `piece` of `npieces`
 * along `cat_dim` of it when the output is an aten::cat. */
typedef struct lf_store {
  int value;
  int output;
  int dtype;
  int npieces; /* 0: a plain output */
  int piece;
  int cat_dim;
  uint64_t cone; /* the operands (bit j: operand j) this store reads */
} lf_store;

typedef struct lf_kir {
  int rank;   /* rank of the iteration space */
  int nvalues;
  lf_value values[LF_MAX_VALUES];
  int noperands;
  lf_operand operands[LF_MAX_ARGS];
  int nchunks;
  lf_chunk chunks[LF_MAX_CHUNKS];
  int nstores;
  lf_store stores[LF_MAX_ARGS];
  int ninputs;
  int input_kind[LF_MAX_ARGS * 2];  /* fbxp_arg_kind */
  int input_dtype[LF_MAX_ARGS * 2];
  int input_ndim[LF_MAX_ARGS * 2];
  int noutputs;
  int out_npieces[LF_MAX_ARGS]; /* cat outputs: pieces; 0 plain */
  int out_cat_dim[LF_MAX_ARGS];
  int out_dtype[LF_MAX_ARGS];
  /* operands each output's value depends on (a bitmask over operands), so
   * run can check that every output has the iteration shape */
  uint64_t out_cone[LF_MAX_ARGS];
} lf_kir;

/* Build the kernel IR of a group subgraph for these input specs. Returns
 * NULL or an FBXP_ERR_UNSUPPORTED status saying what is not supported. */
fbxp_status *lf_kir_build(lf_kir *k, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin);

/* ---- codegen (codegen.c) ----------------------------------------------------------------- */

/* How the C kernel's range is run in parallel (FUSEBOX_LEGACY_PARALLEL):
 * an OpenMP pragma on its loop, or ranges on the host's pool. */
typedef enum lf_parallel { LF_PAR_OMP = 0, LF_PAR_POOL = 1 } lf_parallel;

/* The generated source (host->alloc'd) of the kernel `name` in dialect d
 * (FBXK_C or FBXK_CUDA); `par` matters for the C dialect only. */
char *lf_codegen(const lf_kir *k, fbxk_dialect d, lf_parallel par, const char *name, const char *first_line);

/* ---- partition (partition.c) ---------------------------------------------------------------- */

fbxp_status *lf_partition(void *state, const fbxp_graph *g, fbxp_proposals *p);
/* Is this node a pointwise op the fuser takes (given its profiled types)? (ops.c) */
int lf_node_fusable(const fbxp_node *n);

#endif
