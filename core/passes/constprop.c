/* Constant propagation: fold scalar operations on constants, with
 * TorchScript's (that is, Python's) semantics, and read what tensor types
 * already know (rank, sizes, dtype, device). Tensor computations on constants
 * go to the registered folder (the reference interpreter).
 *
 * A fold never hides a run-time error: division by zero, an overflowing
 * floor division, an out-of-range index all stay in the graph. A fold whose
 * result kind does not fit the node's declared output type is not done (the
 * schema is not what this file assumes). */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "passes/passes.h"
#include "passes/passutil.h"

static _Atomic(fbx_fold_fn) tensor_folder;

void fbx_pass_set_tensor_folder(fbx_fold_fn fn) { atomic_store(&tensor_folder, fn); }

/* ---- scalars ------------------------------------------------------------------ */

typedef enum scalar_kind { SK_INT, SK_FLOAT, SK_BOOL, SK_STR, SK_NONE } scalar_kind;

typedef struct scalar {
  scalar_kind k;
  int64_t i;     /* SK_INT, SK_BOOL (0/1) */
  double f;      /* SK_FLOAT */
  const char *s; /* SK_STR */
} scalar;

static bool get_scalar(const fbx_value *v, scalar *out) {
  if (!fbx_value_is_const(v)) return false;
  const fbx_attr *a = fbx_node_attr(v->node, FBX_SYM_attr_value);
  switch (v->type->kind) {
    case FBX_TYPE_INT:
    case FBX_TYPE_BOOL:
      if (!a || a->kind != FBX_ATTR_INT) return false;
      *out = (scalar){.k = v->type->kind == FBX_TYPE_INT ? SK_INT : SK_BOOL, .i = a->u.i};
      if (out->k == SK_BOOL) out->i = out->i != 0;
      return true;
    case FBX_TYPE_FLOAT:
      if (!a || a->kind != FBX_ATTR_FLOAT) return false;
      *out = (scalar){.k = SK_FLOAT, .f = a->u.f};
      return true;
    case FBX_TYPE_STR:
      if (!a || a->kind != FBX_ATTR_STR) return false;
      *out = (scalar){.k = SK_STR, .s = a->u.s};
      return true;
    case FBX_TYPE_NONE: *out = (scalar){.k = SK_NONE}; return true;
    default: return false;
  }
}

static scalar mk_int(int64_t v) { return (scalar){.k = SK_INT, .i = v}; }
static scalar mk_float(double v) { return (scalar){.k = SK_FLOAT, .f = v}; }
static scalar mk_bool(bool v) { return (scalar){.k = SK_BOOL, .i = v}; }

static bool is_num(const scalar *a) { return a->k == SK_INT || a->k == SK_FLOAT; }

/* int -> double only when exact, so that mixed comparisons stay exact. */
static bool as_double(const scalar *a, double *out) {
  if (a->k == SK_FLOAT) {
    *out = a->f;
    return true;
  }
  if (a->k != SK_INT) return false;
  if (a->i > (INT64_C(1) << 53) || a->i < -(INT64_C(1) << 53)) return false;
  *out = (double)a->i;
  return true;
}

/* Wrapping int64 arithmetic, as TorchScript's int64 does in practice,
 * without C's undefined behaviour. */
static int64_t wrap(uint64_t v) {
  int64_t r;
  memcpy(&r, &v, sizeof r);
  return r;
}

/* Python's floor division and modulo (CPython's float_floor_div/float_mod). */
static double py_float_mod(double a, double b) {
  double mod = fmod(a, b);
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = copysign(0.0, b);
  }
  return mod;
}

static double py_float_floordiv(double a, double b) {
  double mod = fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0 && (b < 0) != (mod < 0)) div -= 1.0;
  if (div != 0.0) {
    double fl = floor(div);
    if (div - fl > 0.5) fl += 1.0;
    return fl;
  }
  return copysign(0.0, a / b);
}

static int64_t py_int_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t py_int_mod(int64_t a, int64_t b) {
  if (b == -1) return 0; /* also avoids INT64_MIN % -1 */
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* a**b for b >= 0, false on overflow. */
static bool int_pow(int64_t a, int64_t b, int64_t *out) {
  int64_t r = 1;
  for (int64_t i = 0; i < b; i++) {
    if (__builtin_mul_overflow(r, a, &r)) return false;
    if (r == 0 || r == 1) break; /* stays put */
    if (r == -1 && i + 1 < b) {
      r = ((b - i - 1) % 2) ? 1 : -1;
      break;
    }
  }
  *out = r;
  return true;
}

static bool cmp(const char *op, int c, bool *out) {
  if (!strcmp(op, "eq")) *out = c == 0;
  else if (!strcmp(op, "ne")) *out = c != 0;
  else if (!strcmp(op, "lt")) *out = c < 0;
  else if (!strcmp(op, "le")) *out = c <= 0;
  else if (!strcmp(op, "gt")) *out = c > 0;
  else if (!strcmp(op, "ge")) *out = c >= 0;
  else return false;
  return true;
}

static bool is_cmp(const char *op) {
  return !strcmp(op, "eq") || !strcmp(op, "ne") || !strcmp(op, "lt") || !strcmp(op, "le") ||
         !strcmp(op, "gt") || !strcmp(op, "ge");
}

/* Comparisons with IEEE semantics for floats (NaN compares unequal). */
static bool fold_compare(const char *op, const scalar *a, const scalar *b, scalar *r) {
  bool v;
  if (a->k == SK_STR && b->k == SK_STR) {
    int c = strcmp(a->s, b->s); /* UTF-8 byte order is code point order */
    if (!cmp(op, c, &v)) return false;
  } else if (a->k == SK_BOOL && b->k == SK_BOOL) {
    if (!cmp(op, (int)(a->i - b->i), &v)) return false;
  } else if (a->k == SK_INT && b->k == SK_INT) {
    if (!cmp(op, (a->i > b->i) - (a->i < b->i), &v)) return false;
  } else if (is_num(a) && is_num(b)) {
    double x, y;
    if (!as_double(a, &x) || !as_double(b, &y)) return false;
    if (isnan(x) || isnan(y)) {
      if (!strcmp(op, "ne")) v = true;
      else if (is_cmp(op)) v = false;
      else return false;
    } else if (!cmp(op, (x > y) - (x < y), &v)) {
      return false;
    }
  } else {
    return false;
  }
  *r = mk_bool(v);
  return true;
}

/* Result of a binary op on scalars; `out_int` says the node declares an int
 * result (used by pow). Returns false when the op is not folded. */
static bool fold_binary(const char *op, const scalar *a, const scalar *b, bool out_int, char **str,
                        scalar *r) {
  if (is_cmp(op)) return fold_compare(op, a, b, r);
  if (!strcmp(op, "__is__") || !strcmp(op, "__isnot__")) {
    /* Only None is decided here: identity of other constants is not. */
    if (a->k != SK_NONE && b->k != SK_NONE) return false;
    bool same = a->k == SK_NONE && b->k == SK_NONE;
    *r = mk_bool(!strcmp(op, "__is__") ? same : !same);
    return true;
  }
  if (!strcmp(op, "__and__") || !strcmp(op, "__or__") || !strcmp(op, "__xor__")) {
    if (a->k != b->k || (a->k != SK_INT && a->k != SK_BOOL)) return false;
    int64_t v = op[2] == 'a' ? (a->i & b->i) : op[2] == 'o' ? (a->i | b->i) : (a->i ^ b->i);
    *r = a->k == SK_BOOL ? mk_bool(v != 0) : mk_int(v);
    return true;
  }
  if (!strcmp(op, "add") && a->k == SK_STR && b->k == SK_STR) {
    size_t la = strlen(a->s), lb = strlen(b->s);
    if (!(*str = fbx_malloc(la + lb + 1))) return false;
    memcpy(*str, a->s, la);
    memcpy(*str + la, b->s, lb + 1);
    *r = (scalar){.k = SK_STR, .s = *str};
    return true;
  }
  if (!is_num(a) || !is_num(b)) return false;
  bool ints = a->k == SK_INT && b->k == SK_INT;
  double x = a->k == SK_FLOAT ? a->f : (double)a->i;
  double y = b->k == SK_FLOAT ? b->f : (double)b->i;
  if (!strcmp(op, "add") || !strcmp(op, "sub") || !strcmp(op, "mul")) {
    if (ints) {
      uint64_t ua = (uint64_t)a->i, ub = (uint64_t)b->i;
      *r = mk_int(wrap(op[0] == 'a' ? ua + ub : op[0] == 's' ? ua - ub : ua * ub));
    } else {
      *r = mk_float(op[0] == 'a' ? x + y : op[0] == 's' ? x - y : x * y);
    }
    return true;
  }
  if (!strcmp(op, "div")) { /* true division, float result */
    if (y == 0.0) return false;
    *r = mk_float(x / y);
    return true;
  }
  if (!strcmp(op, "floordiv")) {
    if (ints) {
      if (b->i == 0 || (a->i == INT64_MIN && b->i == -1)) return false;
      *r = mk_int(py_int_floordiv(a->i, b->i));
    } else {
      if (y == 0.0) return false;
      *r = mk_float(py_float_floordiv(x, y));
    }
    return true;
  }
  if (!strcmp(op, "remainder")) {
    if (ints) {
      if (b->i == 0) return false;
      *r = mk_int(py_int_mod(a->i, b->i));
    } else {
      if (y == 0.0) return false;
      *r = mk_float(py_float_mod(x, y));
    }
    return true;
  }
  if (!strcmp(op, "pow")) {
    if (ints && out_int) {
      int64_t v;
      if (b->i < 0 || !int_pow(a->i, b->i, &v)) return false;
      *r = mk_int(v);
      return true;
    }
    /* 0 ** negative raises; a negative base with a fractional exponent has
     * no real result. */
    if (x == 0.0 && y < 0) return false;
    if (x < 0 && y != floor(y)) return false;
    *r = mk_float(pow(x, y));
    return true;
  }
  if (!strcmp(op, "min") || !strcmp(op, "max")) {
    if (isnan(x) || isnan(y)) return false;
    bool mn = op[1] == 'i';
    if (ints) {
      bool take_a = mn ? !(b->i < a->i) : !(b->i > a->i);
      *r = take_a ? *a : *b;
    } else {
      *r = mk_float((mn ? !(y < x) : !(y > x)) ? x : y);
    }
    return true;
  }
  return false;
}

static bool fold_unary(const char *op, const scalar *a, scalar *r) {
  if (!strcmp(op, "neg")) {
    if (a->k == SK_INT && a->i != INT64_MIN) *r = mk_int(-a->i);
    else if (a->k == SK_FLOAT) *r = mk_float(-a->f);
    else return false;
    return true;
  }
  if (!strcmp(op, "abs")) {
    if (a->k == SK_INT && a->i != INT64_MIN) *r = mk_int(a->i < 0 ? -a->i : a->i);
    else if (a->k == SK_FLOAT) *r = mk_float(fabs(a->f));
    else return false;
    return true;
  }
  if (!strcmp(op, "__not__")) {
    if (a->k != SK_BOOL) return false;
    *r = mk_bool(!a->i);
    return true;
  }
  if (!strcmp(op, "Int") || !strcmp(op, "floor") || !strcmp(op, "ceil")) {
    if (a->k == SK_INT || (a->k == SK_BOOL && op[0] == 'I')) {
      *r = mk_int(a->i);
      return true;
    }
    if (a->k != SK_FLOAT || !isfinite(a->f)) return false; /* int(nan) raises */
    double v = op[0] == 'I' ? trunc(a->f) : op[0] == 'f' ? floor(a->f) : ceil(a->f);
    if (v < -9223372036854775808.0 || v >= 9223372036854775808.0) return false;
    *r = mk_int((int64_t)v);
    return true;
  }
  if (!strcmp(op, "Float")) {
    if (a->k == SK_FLOAT) *r = *a;
    else if (a->k == SK_INT || a->k == SK_BOOL) *r = mk_float((double)a->i);
    else return false;
    return true;
  }
  if (!strcmp(op, "Bool")) {
    if (a->k == SK_INT || a->k == SK_BOOL) *r = mk_bool(a->i != 0);
    else if (a->k == SK_FLOAT) *r = mk_bool(a->f != 0.0);
    else return false;
    return true;
  }
  if (!strcmp(op, "len")) {
    if (a->k != SK_STR) return false;
    int64_t count = 0; /* code points: count the bytes that start one */
    for (const unsigned char *p = (const unsigned char *)a->s; *p; p++) count += (*p & 0xC0) != 0x80;
    *r = mk_int(count);
    return true;
  }
  return false;
}

static const char *const binary_aten[] = {
    "add", "sub", "mul", "div", "floordiv", "remainder", "pow", "eq", "ne", "lt", "le", "gt", "ge",
    "__and__", "__or__", "__xor__", "__is__", "__isnot__", NULL};
static const char *const unary_aten[] = {"neg", "abs", "__not__", "Int", "Float", "Bool",
                                         "floor", "ceil", "len", NULL};

static bool listed(const char *u, const char *const *list) {
  for (; *list; list++)
    if (!strcmp(u, *list)) return true;
  return false;
}

/* Does a result of kind k fit a value declared with type t? */
static bool fits(const fbx_type *t, scalar_kind k) {
  switch (t->kind) {
    case FBX_TYPE_INT: return k == SK_INT;
    case FBX_TYPE_FLOAT: return k == SK_FLOAT;
    case FBX_TYPE_BOOL: return k == SK_BOOL;
    case FBX_TYPE_STR: return k == SK_STR;
    case FBX_TYPE_NONE: return k == SK_NONE;
    case FBX_TYPE_NUMBER: return k == SK_INT || k == SK_FLOAT;
    case FBX_TYPE_OPTIONAL: return k == SK_NONE || fits(t->elems[0], k);
    case FBX_TYPE_NAMED: /* Scalar, Any */
      return t->name && (!strcmp(t->name, "Any") || (!strcmp(t->name, "Scalar") && k != SK_STR && k != SK_NONE));
    default: return false;
  }
}

/* ---- folding one node ------------------------------------------------------------ */

typedef struct cp_ctx {
  int folded;
} cp_ctx;

static fbx_status *replace_and_destroy(fbx_node *n, fbx_value *v) {
  FBX_TRY(fbx_passutil_replace_uses(n->outputs[0], v));
  fbx_node_destroy(n);
  return NULL;
}

/* Replace n by the new constant c, which inherits n's debug name (a name
 * from the source, not a numeric one) so traces stay readable. The name
 * stays unique: its old holder leaves the graph. */
static fbx_status *replace_by_const(fbx_node *n, fbx_value *c) {
  if (!c) return fbx_status_nomem();
  const char *name = n->outputs[0]->name;
  FBX_TRY(replace_and_destroy(n, c));
  if (!fbx_passutil_is_numeric_name(name)) c->name = name;
  return NULL;
}

static fbx_value *emit_scalar(fbx_node *n, const scalar *r) {
  switch (r->k) {
    case SK_INT: return fbx_insert_const_int(n->owner, n, r->i);
    case SK_FLOAT: return fbx_insert_const_float(n->owner, n, r->f);
    case SK_BOOL: return fbx_insert_const_bool(n->owner, n, r->i != 0);
    case SK_STR: return fbx_passutil_const_str(n, r->s, false);
    case SK_NONE: return fbx_insert_const_none(n->owner, n);
  }
  return NULL;
}

/* Scalar ops on constants. Sets *done when n was replaced. */
static fbx_status *fold_scalar_op(fbx_node *n, bool *done) {
  *done = false;
  bool aten = fbx_sym_in_ns(n->kind, "aten"), prim = fbx_sym_in_ns(n->kind, "prim");
  if ((!aten && !prim) || n->noutputs != 1 || n->ninputs < 1 || n->ninputs > 2) return NULL;
  const char *u = fbx_sym_unqual(n->kind);
  scalar a, b, r;
  char *str = NULL;
  bool ok;
  if (n->ninputs == 2) {
    bool known = aten ? listed(u, binary_aten) : (!strcmp(u, "min") || !strcmp(u, "max"));
    if (!known || !get_scalar(n->inputs[0], &a) || !get_scalar(n->inputs[1], &b)) return NULL;
    ok = fold_binary(u, &a, &b, n->outputs[0]->type->kind == FBX_TYPE_INT, &str, &r);
  } else {
    bool known = aten ? listed(u, unary_aten) : !strcmp(u, "abs");
    if (!known || !get_scalar(n->inputs[0], &a)) return NULL;
    ok = fold_unary(u, &a, &r);
  }
  if (!ok || !fits(n->outputs[0]->type, r.k)) {
    fbx_free(str);
    return NULL;
  }
  fbx_value *c = emit_scalar(n, &r);
  fbx_free(str);
  *done = c != NULL;
  return replace_by_const(n, c);
}

static const fbx_type *tensor_type(const fbx_value *v) {
  return v->type->kind == FBX_TYPE_TENSOR ? v->type : NULL;
}

/* Folds that need no constant inputs: what types and constructs already say. */
static fbx_status *fold_structural(fbx_node *n, bool *done) {
  *done = false;
  if (n->noutputs != 1) return NULL;
  fbx_value *elem = fbx_passutil_fold_index(n);
  if (elem) {
    *done = true;
    return replace_and_destroy(n, elem);
  }
  fbx_value *c = NULL;
  const fbx_type *t = n->ninputs >= 1 ? tensor_type(n->inputs[0]) : NULL;
  int out = n->outputs[0]->type->kind;
  if (n->kind == FBX_SYM_aten_len && n->ninputs == 1 && out == FBX_TYPE_INT) {
    const fbx_node *list = n->inputs[0]->node;
    if (list->kind != FBX_SYM_prim_ListConstruct || fbx_value_may_be_mutated(n->inputs[0])) return NULL;
    c = fbx_insert_const_int(n->owner, n, list->ninputs);
  } else if (n->kind == FBX_SYM_aten_dim && n->ninputs == 1 && t && out == FBX_TYPE_INT) {
    if (t->rank < 0) return NULL;
    c = fbx_insert_const_int(n->owner, n, t->rank);
  } else if (n->kind == FBX_SYM_aten_size && n->ninputs == 2 && t && out == FBX_TYPE_INT) {
    int64_t d;
    if (t->rank < 0 || n->inputs[1]->type->kind != FBX_TYPE_INT || !fbx_value_const_int(n->inputs[1], &d))
      return NULL;
    if (d < 0) d += t->rank;
    if (d < 0 || d >= t->rank || t->sizes[d] < 0) return NULL; /* bad dim: the error stays */
    c = fbx_insert_const_int(n->owner, n, t->sizes[d]);
  } else if (n->kind == FBX_SYM_aten_size && n->ninputs == 1 && t && out == FBX_TYPE_LIST) {
    if (t->rank < 0 || fbx_value_may_be_mutated(n->outputs[0])) return NULL;
    for (int i = 0; i < t->rank; i++)
      if (t->sizes[i] < 0) return NULL;
    c = fbx_passutil_const_ints(n, t->sizes, t->rank);
  } else if (n->kind == FBX_SYM_prim_dtype && n->ninputs == 1 && t && out == FBX_TYPE_INT) {
    if (t->dtype == FBX_DTYPE_UNDEFINED) return NULL;
    c = fbx_insert_const_int(n->owner, n, (int64_t)t->dtype);
  } else if (n->kind == FBX_SYM_prim_device && n->ninputs == 1 && t && out == FBX_TYPE_DEVICE) {
    if (!t->device) return NULL;
    c = fbx_passutil_const_str(n, t->device, true);
  } else {
    return NULL;
  }
  *done = c != NULL;
  return replace_by_const(n, c);
}

static bool all_inputs_const(const fbx_node *n) {
  for (int i = 0; i < n->ninputs; i++)
    if (!fbx_value_is_const(n->inputs[i])) return false;
  return n->ninputs > 0;
}

static fbx_status *fold_tensor(fbx_node *n, bool *done) {
  *done = false;
  fbx_fold_fn fn = atomic_load(&tensor_folder);
  if (!fn || !all_inputs_const(n) || n->nblocks || n->noutputs == 0 || fbx_node_subgraph(n) ||
      n->kind == FBX_SYM_prim_Constant || fbx_node_has_side_effects(n) || fbx_node_is_nondeterministic(n))
    return NULL;
  for (int i = 0; i < n->noutputs; i++)
    if (fbx_value_may_be_mutated(n->outputs[i])) return NULL;
  bool folded = false;
  FBX_TRY(fn(n, &folded));
  if (!folded) return NULL;
  if (fbx_passutil_has_uses(n))
    return fbx_status_new(FBX_ERR_INTERNAL, "tensor folder left uses of %s", fbx_sym_str(n->kind));
  fbx_node_destroy(n);
  *done = true;
  return NULL;
}

static fbx_status *cp_block(cp_ctx *c, fbx_block *b) {
  FBX_BLOCK_FOR_EACH(n, b) {
    for (int i = 0; i < n->nblocks; i++) FBX_TRY(cp_block(c, n->blocks[i]));
    bool done = false;
    FBX_TRY(fold_structural(n, &done));
    if (!done && all_inputs_const(n)) {
      FBX_TRY(fold_scalar_op(n, &done));
      if (!done) FBX_TRY(fold_tensor(n, &done));
    }
    if (done) c->folded++;
  }
  return NULL;
}

fbx_status *fbx_pass_constprop(fbx_graph *g, bool *changed) {
  if (!fbx_passutil_enter("constprop", changed)) return NULL;
  cp_ctx c = {0};
  fbx_status *err = cp_block(&c, g->block);
  if (changed) *changed = c.folded > 0;
  if (c.folded) fbx_log(FBX_LOG_PASSES, "constprop: folded %d nodes", c.folded);
  return err;
}
