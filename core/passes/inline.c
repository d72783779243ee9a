/* inline: prim::CallFunction of a known torch.nn.functional function becomes
 * the aten op the function calls.
 *
 * TorchScript inlines calls while it compiles, unless inlining is switched
 * off; then a call prints as
 *
 *   %9 : Function = prim::Constant[name="layer_norm"]()
 *   %10 : Tensor = prim::CallFunction(%9, %x.1, %5, %w.1, %b.1, %8)
 *
 * with the Python function's parameters, defaults filled in, and the
 * function's body absent from the text. This pass knows what the common
 * functionals do (PyTorch 1.13's torch/nn/functional.py, read for their
 * semantics) and rewrites each call into that op, choosing the in-place
 * variant when `inplace` is a constant true. A call it does not know, or
 * whose arguments need a run-time decision it cannot make here (a
 * non-constant `inplace`, `size_average`/`reduce` given, `dim=None` for
 * softmax), is left alone and reported by the interpreter when reached. */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "ir/graph.h"
#include "ir/symbol.h"
#include "passes/passes.h"
#include "passes/passutil.h"

/* How an argument of the aten op is made: a parameter of the Python
 * function (A_PARAM, index), a constant (A_BOOL/A_INT/A_FLOAT, value), the
 * `reduction` string parameter turned into PyTorch's enum (A_REDUCTION,
 * index; size_average and reduce must be None), or `padding_idx` (A_PADIDX,
 * index: None becomes -1, a non-negative constant stays). */
typedef enum { A_PARAM, A_BOOL, A_INT, A_FLOAT, A_REDUCTION, A_PADIDX, A_NOTNONE_DIM } arg_kind;
typedef struct {
  arg_kind kind;
  double v;
} arg_spec;

#define P(i) {A_PARAM, i}
#define B(b) {A_BOOL, b}
#define I(i) {A_INT, i}
#define F(f) {A_FLOAT, f}
#define RED(i) {A_REDUCTION, i}
#define PAD(i) {A_PADIDX, i}
#define DIM(i) {A_NOTNONE_DIM, i}

enum { MAX_ARGS = 9 };
typedef struct {
  const char *name;  /* the Function constant's name */
  int nparams;       /* the Python function's parameters, as the call passes them */
  const char *op;    /* the aten op */
  int inplace;       /* index of the `inplace` parameter, or -1 */
  int none_params[3]; /* parameters that must be constant None (size_average, reduce, max_norm); -1 ends */
  int nargs;
  arg_spec args[MAX_ARGS];
} functional;

static const functional table[] = {
    {"relu", 2, "aten::relu", 1, {-1}, 1, {P(0)}},
    {"relu6", 2, "aten::hardtanh", 1, {-1}, 3, {P(0), F(0), F(6)}},
    {"leaky_relu", 3, "aten::leaky_relu", 2, {-1}, 2, {P(0), P(1)}},
    {"elu", 3, "aten::elu", 2, {-1}, 4, {P(0), P(1), I(1), I(1)}},
    {"celu", 3, "aten::celu", 2, {-1}, 2, {P(0), P(1)}},
    {"selu", 2, "aten::selu", 1, {-1}, 1, {P(0)}},
    {"hardtanh", 4, "aten::hardtanh", 3, {-1}, 3, {P(0), P(1), P(2)}},
    {"hardswish", 2, "aten::hardswish", 1, {-1}, 1, {P(0)}},
    {"hardsigmoid", 2, "aten::hardsigmoid", 1, {-1}, 1, {P(0)}},
    {"silu", 2, "aten::silu", 1, {-1}, 1, {P(0)}},
    {"mish", 2, "aten::mish", 1, {-1}, 1, {P(0)}},
    {"glu", 2, "aten::glu", -1, {-1}, 2, {P(0), P(1)}},
    {"dropout", 4, "aten::dropout", 3, {-1}, 3, {P(0), P(1), P(2)}},
    {"softmax", 4, "aten::softmax", -1, {-1}, 3, {P(0), DIM(1), P(3)}},
    {"log_softmax", 4, "aten::log_softmax", -1, {-1}, 3, {P(0), DIM(1), P(3)}},
    {"layer_norm", 5, "aten::layer_norm", -1, {-1}, 6, {P(0), P(1), P(2), P(3), P(4), B(1)}},
    {"group_norm", 5, "aten::group_norm", -1, {-1}, 6, {P(0), P(1), P(2), P(3), P(4), B(1)}},
    /* batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps) */
    {"batch_norm", 8, "aten::batch_norm", -1, {-1}, 9, {P(0), P(3), P(4), P(1), P(2), P(5), P(6), P(7), B(1)}},
    /* embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse) */
    {"embedding", 7, "aten::embedding", -1, {3, -1}, 5, {P(1), P(0), PAD(2), P(5), P(6)}},
    /* losses: (input, target, size_average, reduce, reduction[, beta]) */
    {"mse_loss", 5, "aten::mse_loss", -1, {2, 3, -1}, 3, {P(0), P(1), RED(4)}},
    {"l1_loss", 5, "aten::l1_loss", -1, {2, 3, -1}, 3, {P(0), P(1), RED(4)}},
    {"smooth_l1_loss", 6, "aten::smooth_l1_loss", -1, {2, 3, -1}, 4, {P(0), P(1), RED(4), P(5)}},
    /* binary_cross_entropy(input, target, weight, size_average, reduce, reduction) */
    {"binary_cross_entropy", 6, "aten::binary_cross_entropy", -1, {3, 4, -1}, 4, {P(0), P(1), P(2), RED(5)}},
    /* nll_loss(input, target, weight, size_average, ignore_index, reduce, reduction) */
    {"nll_loss", 7, "aten::nll_loss", -1, {3, 5, -1}, 5, {P(0), P(1), P(2), RED(6), P(4)}},
    /* cross_entropy(input, target, weight, size_average, ignore_index, reduce, reduction, label_smoothing) */
    {"cross_entropy", 8, "aten::cross_entropy_loss", -1, {3, 5, -1}, 6, {P(0), P(1), P(2), RED(6), P(4), P(7)}},
    /* triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, size_average, reduce, reduction) */
    {"triplet_margin_loss", 10, "aten::triplet_margin_loss", -1, {7, 8, -1}, 8,
     {P(0), P(1), P(2), P(3), P(4), P(5), P(6), RED(9)}},
    /* hinge_embedding_loss(input, target, margin, size_average, reduce, reduction) */
    {"hinge_embedding_loss", 6, "aten::hinge_embedding_loss", -1, {3, 4, -1}, 4, {P(0), P(1), P(2), RED(5)}},
    {"soft_margin_loss", 5, "aten::soft_margin_loss", -1, {2, 3, -1}, 3, {P(0), P(1), RED(4)}},
    /* cosine_embedding_loss(input1, input2, target, margin, size_average, reduce, reduction) */
    {"cosine_embedding_loss", 7, "aten::cosine_embedding_loss", -1, {4, 5, -1}, 5, {P(0), P(1), P(2), P(3), RED(6)}},
    /* poisson_nll_loss(input, target, log_input, full, size_average, eps, reduce, reduction) */
    {"poisson_nll_loss", 8, "aten::poisson_nll_loss", -1, {4, 6, -1}, 6, {P(0), P(1), P(2), P(3), P(5), RED(7)}},
    /* multi_margin_loss(input, target, p, margin, weight, size_average, reduce, reduction) */
    {"multi_margin_loss", 8, "aten::multi_margin_loss", -1, {5, 6, -1}, 6, {P(0), P(1), P(2), P(3), P(4), RED(7)}},
    {"multilabel_margin_loss", 5, "aten::multilabel_margin_loss", -1, {2, 3, -1}, 3, {P(0), P(1), RED(4)}},
    /* ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity) */
    {"ctc_loss", 7, "aten::ctc_loss", -1, {-1}, 7, {P(0), P(1), P(2), P(3), P(4), RED(5), P(6)}},
    /* unfold(input, kernel_size, dilation, padding, stride), fold(input, output_size, kernel_size, ...):
     * int[2] arguments take one int as _pair does */
    {"unfold", 5, "aten::im2col", -1, {-1}, 5, {P(0), P(1), P(2), P(3), P(4)}},
    {"fold", 6, "aten::col2im", -1, {-1}, 6, {P(0), P(1), P(2), P(3), P(4), P(5)}},
};

/* ---- constants -------------------------------------------------------------------- */

static const fbx_node *const_node(const fbx_value *v) {
  return v->node->kind == FBX_SYM_prim_Constant ? v->node : NULL;
}
static bool is_none(const fbx_value *v) { return const_node(v) && v->type->kind == FBX_TYPE_NONE; }
static bool const_int(const fbx_value *v, int64_t *out) {
  const fbx_node *c = const_node(v);
  const fbx_attr *a = c ? fbx_node_attr(c, FBX_SYM_attr_value) : NULL;
  if (!a || a->kind != FBX_ATTR_INT) return false;
  *out = a->u.i;
  return true;
}
static const char *const_str(const fbx_value *v) {
  const fbx_node *c = const_node(v);
  const fbx_attr *a = c ? fbx_node_attr(c, FBX_SYM_attr_value) : NULL;
  return a && a->kind == FBX_ATTR_STR ? a->u.s : NULL;
}

static fbx_value *new_const(fbx_node *pos, fbx_type_kind kind, int64_t i, double f) {
  fbx_node *n = fbx_node_create(pos->graph, FBX_SYM_prim_Constant, 1);
  if (!n) return NULL;
  int rc = kind == FBX_TYPE_FLOAT ? fbx_node_set_f(n, FBX_SYM_attr_value, f)
           : kind == FBX_TYPE_NONE ? 0
                                   : fbx_node_set_i(n, FBX_SYM_attr_value, i);
  if (rc) {
    fbx_node_destroy(n);
    return NULL;
  }
  n->outputs[0]->type = fbx_type_simple(kind);
  fbx_node_insert_before(n, pos);
  return n->outputs[0];
}

/* ---- one call --------------------------------------------------------------------- */

/* Why a known call stays a call (logged), or NULL when it can be rewritten. */
static const char *blocker(const functional *f, const fbx_node *call, bool *inplace) {
  const fbx_value *const *par = (const fbx_value *const *)call->inputs + 1;
  *inplace = false;
  if (call->ninputs - 1 != f->nparams || call->noutputs != 1) return "an unexpected number of arguments";
  for (int k = 0; k < 3 && f->none_params[k] >= 0; k++)
    if (!is_none(par[f->none_params[k]])) return "a deprecated or unsupported argument that is not None";
  if (f->inplace >= 0) {
    int64_t b;
    if (!const_int(par[f->inplace], &b)) return "`inplace` that is not a constant";
    *inplace = b != 0;
  }
  for (int a = 0; a < f->nargs; a++) {
    const arg_spec *s = &f->args[a];
    const fbx_value *p = s->kind == A_PARAM || s->kind == A_REDUCTION || s->kind == A_PADIDX || s->kind == A_NOTNONE_DIM
                             ? par[(int)s->v]
                             : NULL;
    int64_t i;
    const char *r;
    if (s->kind == A_REDUCTION &&
        (!(r = const_str(p)) || (strcmp(r, "none") && strcmp(r, "mean") && strcmp(r, "sum"))))
      return "a `reduction` that is not the constant 'none', 'mean' or 'sum'";
    if (s->kind == A_PADIDX && !is_none(p) && !(const_int(p, &i) && i >= 0))
      return "a `padding_idx` that is not None or a non-negative constant";
    if (s->kind == A_NOTNONE_DIM && is_none(p)) return "dim=None (PyTorch's implicit dim is deprecated)";
  }
  return NULL;
}

static fbx_status *rewrite(fbx_node *call, const functional *f, bool inplace) {
  fbx_value **par = call->inputs + 1;
  char kind[64];
  snprintf(kind, sizeof kind, "%s%s", f->op, inplace ? "_" : "");
  fbx_sym sym;
  if (fbx_sym_intern(&sym, kind, strlen(kind))) return fbx_status_nomem();
  fbx_node *n = fbx_node_create(call->graph, sym, 0);
  if (!n) return fbx_status_nomem();
  for (int a = 0; a < f->nargs; a++) {
    const arg_spec *s = &f->args[a];
    fbx_value *v = NULL;
    int64_t i = 0;
    const char *r;
    switch (s->kind) {
      case A_PARAM:
      case A_NOTNONE_DIM: v = par[(int)s->v]; break;
      case A_BOOL: v = new_const(call, FBX_TYPE_BOOL, (int64_t)s->v, 0); break;
      case A_INT: v = new_const(call, FBX_TYPE_INT, (int64_t)s->v, 0); break;
      case A_FLOAT: v = new_const(call, FBX_TYPE_FLOAT, 0, s->v); break;
      case A_REDUCTION:
        r = const_str(par[(int)s->v]);
        v = new_const(call, FBX_TYPE_INT, !strcmp(r, "none") ? 0 : !strcmp(r, "mean") ? 1 : 2, 0);
        break;
      case A_PADIDX:
        if (!const_int(par[(int)s->v], &i)) i = -1; /* None */
        v = new_const(call, FBX_TYPE_INT, i, 0);
        break;
    }
    if (!v || fbx_node_add_input(n, v)) {
      fbx_node_destroy(n);
      return fbx_status_nomem();
    }
  }
  if (!fbx_node_add_output(n, call->outputs[0]->type)) {
    fbx_node_destroy(n);
    return fbx_status_nomem();
  }
  n->srcloc = call->srcloc;
  n->line = call->line;
  n->col = call->col;
  fbx_node_insert_before(n, call);
  FBX_TRY(fbx_passutil_replace_uses(call->outputs[0], n->outputs[0]));
  fbx_node_destroy(call);
  return NULL;
}

static fbx_status *inline_block(fbx_block *b, int *count) {
  for (fbx_node *n = fbx_block_first(b); n;) {
    fbx_node *next = n->next;
    for (int i = 0; i < n->nblocks; i++) FBX_TRY(inline_block(n->blocks[i], count));
    const fbx_node *fn = n->kind == FBX_SYM_prim_CallFunction && n->ninputs >= 1 ? const_node(n->inputs[0]) : NULL;
    fbx_sym name_sym;
    const fbx_attr *name = NULL;
    if (fn && !fbx_sym_intern(&name_sym, "name", 4)) name = fbx_node_attr(fn, name_sym);
    if (name && name->kind == FBX_ATTR_STR) {
      for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        if (strcmp(table[k].name, name->u.s)) continue;
        bool inplace;
        const char *why = blocker(&table[k], n, &inplace);
        if (why) {
          fbx_log(FBX_LOG_PASSES, "inline: call of %s kept: %s", name->u.s, why);
          break;
        }
        FBX_TRY(rewrite(n, &table[k], inplace));
        (*count)++;
        break;
      }
    }
    n = next;
  }
  return NULL;
}

fbx_status *fbx_pass_inline(fbx_graph *g, bool *changed) {
  if (!fbx_passutil_enter("inline", changed)) return NULL;
  int count = 0;
  fbx_status *st = inline_block(g->block, &count);
  if (count) fbx_log(FBX_LOG_PASSES, "inline: %d call%s of known functions inlined", count, count == 1 ? "" : "s");
  if (changed) *changed = count > 0;
  return st;
}

bool fbx_pass_inline_knows(const char *name) {
  for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
    if (!strcmp(table[k].name, name)) return true;
  return false;
}
