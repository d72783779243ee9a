/* The graph IR: graphs of nodes in blocks, values with use lists.
 *
 * Modelled on TorchScript's IR. A graph owns one top-level block. A block is
 * a list of nodes between two sentinels: its `param` node (prim::Param),
 * whose outputs are the block's parameters (the graph's inputs for the top
 * block), and its `ret` node (prim::Return), whose inputs are what the block
 * returns. Nodes may own blocks (prim::If has two, prim::Loop one). Every
 * value is defined by exactly one node output and records its uses.
 *
 * All IR memory (nodes, values, types, strings, attribute payloads) comes
 * from the graph's arena and is freed with fbx_graph_destroy; subgraphs held
 * in attributes (fusion groups, differentiable graphs) are graphs of their
 * own, owned by the attribute.
 *
 *   fbx_graph *g = fbx_graph_create();
 *   fbx_value *x = fbx_graph_add_input(g, fbx_type_tensor_any(), "x");
 *   fbx_node *n = fbx_node_create(g, kind_relu, 1);      // 1 output
 *   fbx_node_add_input(n, x);
 *   fbx_node_append(g->block, n);
 *   fbx_block_add_return(g->block, n->outputs[0]);
 *   ...
 *   fbx_graph_destroy(g);
 *
 * Functions returning int use 0 for success and -1 for out-of-memory; the
 * builders return NULL for out-of-memory. Misuse (a value of another graph,
 * an index out of range) is an invariant violation and asserts.
 */
#ifndef FBX_IR_GRAPH_H
#define FBX_IR_GRAPH_H
#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/status.h"
#include "ir/symbol.h"
#include "ir/type.h"

typedef struct fbx_graph fbx_graph;
typedef struct fbx_block fbx_block;
typedef struct fbx_node fbx_node;
typedef struct fbx_value fbx_value;

/* ---- attributes ---------------------------------------------------------- */

typedef enum fbx_attr_kind {
  FBX_ATTR_INT,    /* value=1 (also bools: value=0/1) */
  FBX_ATTR_FLOAT,  /* value=1. value=1.0000000000000001e-05 value=inf value=nan */
  FBX_ATTR_STR,    /* value="cpu" */
  FBX_ATTR_INTS,   /* value=[1, 2] */
  FBX_ATTR_FLOATS, /* value=[1., 2.5] */
  FBX_ATTR_STRS,   /* value=["a", "b"] */
  FBX_ATTR_TENSOR, /* value={2} value=<Tensor> or an inline small tensor */
  FBX_ATTR_GRAPH,  /* Subgraph=<Graph>, printed in a `with` section */
  FBX_ATTR_TYPE,   /* a type, printed as itself */
  FBX_ATTR_KIND_COUNT
} fbx_attr_kind;

/* A tensor constant. `data` holds numel elements of dtype in C order, or is
 * NULL when the text only said <Tensor> (the value is not known). */
typedef struct fbx_tensor_const {
  fbx_dtype dtype;
  int rank;
  int64_t *sizes;
  void *data;
  /* How it was spelled, so printing gives the same text back:
   * 0: `{v}` scalar form, 1: `<Tensor>`, 2: inline printout; 3: made by a
   * pass (printed with every digit, so that reading it back is exact). */
  int spelling;
  const char *text; /* the original spelling for form 2 */
} fbx_tensor_const;

typedef struct fbx_attr {
  fbx_sym name;
  fbx_attr_kind kind;
  int n; /* element count for list kinds */
  union {
    int64_t i;
    double f;
    const char *s;
    int64_t *is;
    double *fs;
    const char **ss;
    fbx_tensor_const *t;
    fbx_graph *g;
    fbx_type *ty;
  } u;
} fbx_attr;

/* ---- values -------------------------------------------------------------- */

/* One use of a value: input slot `offset` of node `user` reads it. A value's
 * uses are in no particular order: adding a use appends it, and dropping one
 * moves the value's last use into its place (O(1), see fbx_node.use_at).
 * Iterating a use list while rewiring its users works when the loop does not
 * advance past an index whose use was just dropped, or when it always takes
 * uses[0] or uses[nuses - 1]. */
typedef struct fbx_use {
  fbx_node *user;
  int offset; /* which input of user */
} fbx_use;

struct fbx_value {
  fbx_node *node;    /* defining node (prim::Param for inputs and block params) */
  int offset;        /* which output of node */
  fbx_type *type;
  const char *name;  /* debug name without '%': "x.1", "5"; unique in the graph */
  fbx_use *uses;
  int nuses, cap_uses;
  uint32_t id;       /* unique in the graph, stable, dense-ish (for side tables) */
};

/* ---- nodes ---------------------------------------------------------------- */

struct fbx_node {
  fbx_sym kind;
  fbx_block *owner;           /* NULL while not inserted */
  fbx_node *prev, *next;      /* within owner; NULL before the first / after the last */
  fbx_value **inputs;
  int *use_at;                /* use_at[i]: where input i's use is in inputs[i]->uses */
  int ninputs, cap_inputs;
  fbx_value **outputs;
  int noutputs, cap_outputs;
  fbx_block **blocks;
  int nblocks, cap_blocks;
  fbx_attr *attrs;
  int nattrs, cap_attrs;
  const char *srcloc;         /* trailing comment text after "# ", or NULL */
  uint32_t line, col;         /* where the parser read the node in its graph's source
                                 (fbx_graph.source); 0 for nodes a pass made */
  int64_t topo;               /* position in owner for fbx_node_is_before */
  uint32_t id;                /* unique in the graph */
  fbx_graph *graph;
};

struct fbx_block {
  fbx_node *param;   /* prim::Param: outputs are the block's parameters */
  fbx_node *ret;     /* prim::Return: inputs are the block's results */
  fbx_node *first, *last; /* the nodes in order; NULL when empty. The
                             sentinels are not linked into the list. */
  fbx_node *owning;  /* the node holding this block; NULL for the top block */
  fbx_graph *graph;
};

struct fbx_graph {
  fbx_arena *arena;
  fbx_block *block;       /* top-level block */
  uint32_t next_value_id, next_node_id;
  uint64_t next_name;     /* fresh numeric names start here */
  fbx_graph *parent;      /* for subgraphs held in attributes */
  const char *source;     /* the file name the parser read the graph from, or NULL */
};

/* Iterate over the nodes of a block: for (n = fbx_block_first(b); n; n = n->next).
 * The param and ret sentinels are not part of that list. */
fbx_node *fbx_block_first(const fbx_block *b); /* NULL when empty */
fbx_node *fbx_block_last(const fbx_block *b);
#define FBX_BLOCK_FOR_EACH(n, b) \
  for (fbx_node *n = fbx_block_first(b), *n##_next_ = n ? n->next : NULL; n; \
       n = n##_next_, n##_next_ = n ? n->next : NULL)
/* The block's parameters and results. */
static inline int fbx_block_nparams(const fbx_block *b) { return b->param->noutputs; }
static inline fbx_value *fbx_block_param(const fbx_block *b, int i) { return b->param->outputs[i]; }
static inline int fbx_block_nreturns(const fbx_block *b) { return b->ret->ninputs; }
static inline fbx_value *fbx_block_return(const fbx_block *b, int i) { return b->ret->inputs[i]; }

/* ---- graph ------------------------------------------------------------------ */

fbx_graph *fbx_graph_create(void);
void fbx_graph_destroy(fbx_graph *g);
static inline int fbx_graph_ninputs(const fbx_graph *g) { return g->block->param->noutputs; }
static inline fbx_value *fbx_graph_input(const fbx_graph *g, int i) { return g->block->param->outputs[i]; }
static inline int fbx_graph_noutputs(const fbx_graph *g) { return g->block->ret->ninputs; }
static inline fbx_value *fbx_graph_output(const fbx_graph *g, int i) { return g->block->ret->inputs[i]; }
/* Adds a graph input; name may be NULL for a fresh numeric one. */
fbx_value *fbx_graph_add_input(fbx_graph *g, fbx_type *type, const char *name);
/* Deep copy of the whole graph (names, types, attributes, subgraphs). */
fbx_graph *fbx_graph_clone(const fbx_graph *g);
/* Number of nodes in all blocks, recursively (not counting sentinels). */
int fbx_graph_count_nodes(const fbx_graph *g);

/* ---- blocks ------------------------------------------------------------------ */

fbx_block *fbx_node_add_block(fbx_node *n);
fbx_value *fbx_block_add_param(fbx_block *b, fbx_type *type, const char *name);
int fbx_block_add_return(fbx_block *b, fbx_value *v);
void fbx_block_erase_param(fbx_block *b, int i);   /* param must be unused */
void fbx_block_erase_return(fbx_block *b, int i);

/* ---- nodes ------------------------------------------------------------------ */

/* A detached node with `noutputs` outputs of plain Tensor type and fresh
 * names. Insert it with one of the insert functions below. */
fbx_node *fbx_node_create(fbx_graph *g, fbx_sym kind, int noutputs);
int fbx_node_add_input(fbx_node *n, fbx_value *v);
int fbx_node_insert_input(fbx_node *n, int i, fbx_value *v);
int fbx_node_set_input(fbx_node *n, int i, fbx_value *v); /* -1: out of memory, unchanged */
void fbx_node_remove_input(fbx_node *n, int i);
/* Removes the inputs marked in drop[0 .. ninputs) in one pass (removing k
 * inputs one by one from a node with n of them costs O(k * n)). */
void fbx_node_remove_inputs(fbx_node *n, const unsigned char *drop);
void fbx_node_remove_all_inputs(fbx_node *n);
fbx_value *fbx_node_add_output(fbx_node *n, fbx_type *type);
void fbx_node_erase_output(fbx_node *n, int i);   /* output must be unused */
/* Erases the outputs marked in drop[0 .. noutputs) (each unused) in one pass. */
void fbx_node_erase_outputs(fbx_node *n, const unsigned char *drop);

void fbx_node_append(fbx_block *b, fbx_node *n);  /* at the end, before ret */
void fbx_node_prepend(fbx_block *b, fbx_node *n); /* at the start */
void fbx_node_insert_before(fbx_node *n, fbx_node *pos);
void fbx_node_insert_after(fbx_node *n, fbx_node *pos);
/* Unlink from the block (keeps inputs/outputs/uses). */
void fbx_node_detach(fbx_node *n);
/* Remove a node: it must have no used outputs. Drops its input uses, its
 * blocks (recursively) and any subgraph attributes. */
void fbx_node_destroy(fbx_node *n);

/* Moves that keep the graph valid: fail (return false, nothing changed) if
 * moving n would place it before one of its inputs' definitions or after
 * one of its users. pos must be in the same block as n. */
bool fbx_node_move_before_checked(fbx_node *n, fbx_node *pos);
bool fbx_node_move_after_checked(fbx_node *n, fbx_node *pos);
/* Unchecked moves, for passes that know better. */
void fbx_node_move_before(fbx_node *n, fbx_node *pos);
void fbx_node_move_after(fbx_node *n, fbx_node *pos);

/* Is a before b in program order? Works across nested blocks (an outer node
 * precedes everything in blocks of later-or-same... nodes; see graph.c). */
bool fbx_node_is_before(const fbx_node *a, const fbx_node *b);
/* Is `inner` nested (at any depth) inside `outer`'s blocks? */
bool fbx_node_is_within(const fbx_node *inner, const fbx_node *outer);

/* ---- values ------------------------------------------------------------------ */

/* Replace every use of `from` with `to`. -1 when out of memory (some uses
 * may have moved already; the graph stays consistent). */
int fbx_value_replace_all_uses(fbx_value *from, fbx_value *to);
/* Replace uses of `from` that come after node `after` (program order). */
int fbx_value_replace_uses_after(fbx_value *from, fbx_value *to, const fbx_node *after);
/* Set the debug name (copied). The caller keeps names unique in the graph
 * (the parser rejects duplicates; the verifier checks). A numeric name moves
 * the fresh-name counter past it. */
int fbx_value_set_name(fbx_value *v, const char *name);
void fbx_value_set_type(fbx_value *v, fbx_type *t); /* t must be in v's graph arena or a singleton */
fbx_value *fbx_graph_find_value(const fbx_graph *g, const char *name);

/* ---- attributes ----------------------------------------------------------- */

fbx_attr *fbx_node_attr(const fbx_node *n, fbx_sym name); /* NULL if absent */
/* Set (replacing any existing attribute of the same name). Payloads are
 * copied into the graph's arena; a graph attribute takes ownership of g. */
int fbx_node_set_i(fbx_node *n, fbx_sym name, int64_t v);
int fbx_node_set_f(fbx_node *n, fbx_sym name, double v);
int fbx_node_set_s(fbx_node *n, fbx_sym name, const char *v);
int fbx_node_set_is(fbx_node *n, fbx_sym name, const int64_t *v, int count);
int fbx_node_set_fs(fbx_node *n, fbx_sym name, const double *v, int count);
int fbx_node_set_ss(fbx_node *n, fbx_sym name, const char *const *v, int count);
int fbx_node_set_t(fbx_node *n, fbx_sym name, const fbx_tensor_const *t);
int fbx_node_set_g(fbx_node *n, fbx_sym name, fbx_graph *sub);
int fbx_node_set_ty(fbx_node *n, fbx_sym name, const fbx_type *t);
void fbx_node_remove_attr(fbx_node *n, fbx_sym name);
int fbx_node_copy_attrs(fbx_node *dst, const fbx_node *src);
/* The subgraph of a fusion/differentiable group (Subgraph attribute), or NULL. */
fbx_graph *fbx_node_subgraph(const fbx_node *n);

/* ---- subgraphs ------------------------------------------------------------- */

/* Clone node n (in any graph) into block b's graph at the end of b, mapping
 * its inputs through `map(ctx, input)`. Blocks and attributes are cloned.
 * Returns the clone (inserted) or NULL on out-of-memory. */
typedef fbx_value *(*fbx_value_map_fn)(void *ctx, fbx_value *v);
fbx_node *fbx_node_clone_into(fbx_block *b, const fbx_node *n, fbx_value_map_fn map, void *ctx);

/* Move `nodes` (all in one block, given in program order) into a new group
 * node of kind `kind` holding them as a Subgraph attribute. The group's
 * inputs are the values used by `nodes` but defined outside; its outputs are
 * those of `nodes` used outside (in order of first appearance). The group is
 * placed where the last of `nodes` was. Returns the group node. */
fbx_node *fbx_graph_create_group(fbx_graph *g, fbx_sym kind, fbx_node *const *nodes, int count);
/* Replace a group node by the nodes of its subgraph (inverse of the above). */
int fbx_node_inline_group(fbx_node *group);

/* ---- constants --------------------------------------------------------------- */

/* Convenience: insert a prim::Constant before `pos` (or append to b when pos is NULL). */
fbx_value *fbx_insert_const_int(fbx_block *b, fbx_node *pos, int64_t v);
fbx_value *fbx_insert_const_float(fbx_block *b, fbx_node *pos, double v);
fbx_value *fbx_insert_const_bool(fbx_block *b, fbx_node *pos, bool v);
fbx_value *fbx_insert_const_none(fbx_block *b, fbx_node *pos);
/* If v is defined by a prim::Constant of a scalar kind, read it. */
bool fbx_value_const_int(const fbx_value *v, int64_t *out);  /* int and bool */
bool fbx_value_const_float(const fbx_value *v, double *out); /* float, or int widened */
bool fbx_value_is_const(const fbx_value *v);
bool fbx_value_is_none(const fbx_value *v);

#endif
