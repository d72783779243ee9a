/* Differential fuzzing of fusers (`fusebox fuzz`, issue 21): the generator
 * (tools/fuzz_gen.c), the oracle (tools/fuzz_oracle.c) and the minimizer
 * (tools/fuzz_min.c).
 *
 * A case is a small straight-line graph held as data (inputs with dtype,
 * shape, layout and a value recipe; nodes with an op, operand ids and
 * parameters; outputs), not as IR text: the generator draws it from a seed,
 * fz_case_infer gives every value its dtype and shape (false when the case
 * is not valid, so the minimizer can try edits and keep the valid ones),
 * fz_case_print writes the TorchScript IR, fz_case_inputs makes the input
 * tensors. The same seed makes the same case on every machine (a private
 * xorshift generator; no libc rand). */
#ifndef FBX_TOOLS_FUZZ_H
#define FBX_TOOLS_FUZZ_H
#include <stdbool.h>
#include <stdint.h>

#include <fusebox/tensor.h>

#include "base/status.h"
#include "base/strbuf.h"
#include "host/host.h"
#include "ops/ivalue.h"

#define FZ_MAX_IN 8
#define FZ_MAX_NODES 16
#define FZ_MAX_RANK 4
#define FZ_NODE_ID 100 /* value id of node k's output: FZ_NODE_ID + k; inputs are 0..nin-1 */

typedef enum fz_layout { FZ_CONTIG, FZ_TRANSPOSED, FZ_EXPANDED } fz_layout;
/* How an input's values are made, from the least to the most interesting;
 * the minimizer lowers it. */
typedef enum fz_values { FZ_VAL_ONES, FZ_VAL_RANDOM, FZ_VAL_SPECIAL } fz_values;

typedef struct fz_input {
  fbx_dtype dt;
  int rank;
  int64_t sizes[FZ_MAX_RANK];
  fz_layout layout; /* TRANSPOSED: rank >= 2, column-major; EXPANDED: stride 0 in dim `xdim` */
  int xdim;
  fz_values values;
  uint64_t vseed;
} fz_input;

typedef struct fz_node {
  int op; /* fz_op (fuzz_gen.c) */
  int nargs;
  int arg[3];        /* value ids */
  int dim, dim2;     /* reductions, softmax, chunk, cat: may be negative */
  bool keepdim;
  double scalar, scalar2; /* Scalar operands (clamp min/max, alpha, pow exponent) */
  bool int_scalar;   /* the Scalar operands are ints */
  int chunks, pick;  /* chunk */
  fbx_dtype to;      /* aten::to */
  int trank;         /* reshape/permute/expand target */
  int64_t target[FZ_MAX_RANK];
} fz_node;

typedef struct fz_case {
  uint64_t seed;
  int nin, nnodes, nout;
  fz_input in[FZ_MAX_IN];
  fz_node node[FZ_MAX_NODES];
  int out[FZ_MAX_NODES]; /* value ids */
} fz_case;

/* What fz_case_infer computes for each value. */
typedef struct fz_vinfo {
  fbx_dtype dt;
  int rank;
  int64_t sizes[FZ_MAX_RANK];
  bool alias_in;  /* may share storage with a graph input (views of inputs) */
  bool noalloc;   /* not writable in place (expanded, or a view) */
} fz_vinfo;

/* Draw a case from seed. max_nodes 1..FZ_MAX_NODES. */
void fz_generate(fz_case *c, uint64_t seed, int max_nodes);
/* Types and shapes of every value (info indexed by id: inputs 0..nin-1,
 * nodes FZ_NODE_ID + k); false when an op does not accept its operands. */
bool fz_case_infer(const fz_case *c, fz_vinfo *info /* FZ_NODE_ID + FZ_MAX_NODES */);
/* The graph as TorchScript IR. */
char *fz_case_print(const fz_case *c);
/* The inputs a written repro holds as float32 (bit i: input i): the
 * bfloat16 ones, since NumPy has no bfloat16 to save them as. */
unsigned fz_repro_widened(const fz_case *c);
/* The graph as a repro runs it: each fz_repro_widened input is a float32
 * graph input %xI_f32 that an aten::to at the top converts to bfloat16
 * (exactly: the .npy holds the bfloat16 values). */
char *fz_case_print_repro(const fz_case *c);
/* The input tensors (vals[0..nin)); release them. */
fbx_status *fz_case_inputs(const fz_case *c, fbx_ivalue *vals);
/* Remove nodes no output needs and inputs no node uses (ids renumbered). */
void fz_case_prune(fz_case *c);

/* ---- the oracle ---- */
typedef enum fz_kind {
  FZ_OK,        /* the fuser's outputs match none's */
  FZ_INVALID,   /* none itself refused the case (an input the ops reject) */
  FZ_MISMATCH,  /* the outputs differ (forward) */
  FZ_GRAD_MISMATCH, /* the gradients differ */
  FZ_ERROR,     /* none ran it, the fuser returned an error */
  FZ_CRASH,     /* the child died (signal, exit without a result) */
  FZ_TIMEOUT,
  FZ_KIND_COUNT
} fz_kind;
const char *fz_kind_name(fz_kind k);

typedef struct fz_oracle_opts {
  const char *fuser;   /* name or path; "none" allowed (none against none) */
  fbx_fuser *handle;   /* a loaded fuser to use, or NULL: each child loads `fuser` by
                          name (what fusebox fuzz does: see cmd_fuzz.c) */
  bool backward;
  int timeout_s;
} fz_oracle_opts;

typedef struct fz_result {
  fz_kind kind;
  int64_t launches; /* kernel launches in the fuser's runs */
  char why[512];
} fz_result;

/* Run a case in a forked child: none, then the fuser after profiling and
 * with FUSEBOX_PROFILING_RUNS=0, forward (and backward when asked). A float
 * beyond the tolerance is held to the reference's spread on perturbed
 * inputs instead (tools/fuzz_oracle.c, "Conditioning"). */
void fz_oracle_run(const fz_case *c, const fz_oracle_opts *o, fz_result *r);
/* The same for a graph given as text and its inputs (borrowed): --replay.
 * floor_tol: the least relative tolerance (the loosest dtype's among the
 * graph's values, fz_dtype_tolerance). */
void fz_oracle_run_graph(const char *text, const fbx_ivalue *in, int nin, double floor_tol, const fz_oracle_opts *o,
                         fz_result *r);
/* PyTorch's test tolerance for a dtype: float32 1e-5, float16 1e-3, bfloat16 1e-2, float64 1e-12. */
double fz_dtype_tolerance(fbx_dtype dt);
/* The tolerance scale of a graph: 1 + 2 per transcendental op + 4 per
 * reduction + 6 per composite op (softmax, layer_norm, norm) in its text. */
double fz_text_tolerance_factor(const char *text);

/* ---- the minimizer ---- */
/* Shrink c while it fails as `want` does (same kind); returns the number of
 * oracle runs spent. */
int fz_minimize(fz_case *c, const fz_oracle_opts *o, const fz_result *want, int max_runs);
/* Write DIR/NAME.ir, DIR/NAME_in<i>.npy and DIR/NAME.sh (the one-line repro). */
fbx_status *fz_write_repro(const fz_case *c, const fz_oracle_opts *o, const char *dir, const char *name,
                           const fz_result *r, char **repro_line);

#endif
