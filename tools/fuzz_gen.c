/* The case generator of `fusebox fuzz`: see tools/fuzz.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "fuzz.h"
#include "tensor/half.h"

/* ---- the ops the generator draws from ------------------------------------------------- */

typedef enum fz_cls {
  C_UNARY_F,  /* float in, same float out */
  C_UNARY,    /* numeric in, same out */
  C_BIN,      /* two tensors, broadcast, promoted */
  C_BIN_F,    /* div, atan2: promoted to float */
  C_BIN_FO,   /* float operands only (fmod, remainder, floor_divide, hypot): no integer division by zero */
  C_CMP,      /* comparison: bool out */
  C_BIN_S,    /* tensor and Scalar */
  C_CMP_S,    /* comparison with a Scalar */
  C_POW_S,    /* pow(x, Scalar) */
  C_WHERE,
  C_CLAMP,
  C_ADDCMUL,
  C_LERP,
  C_RED,      /* sum/amax/amin over dims, keepdim */
  C_MEAN,
  C_SOFTMAX,
  C_LAYER_NORM,
  C_NORM,
  C_CHUNK,
  C_CAT,
  C_RESHAPE,
  C_PERMUTE,
  C_EXPAND,
  C_TO,
  C_INPLACE_U, /* relu_ on an intermediate */
  C_INPLACE_B, /* add_(other) on an intermediate */
  C_INPLACE_S, /* mul_(Scalar) on an intermediate */
} fz_cls;

typedef struct fz_opdef {
  const char *kind;
  fz_cls cls;
  bool trans; /* transcendental (tolerance) */
} fz_opdef;

static const fz_opdef OPS[] = {
    {"aten::exp", C_UNARY_F, true},      {"aten::log", C_UNARY_F, true},      {"aten::sqrt", C_UNARY_F, true},
    {"aten::sigmoid", C_UNARY_F, true},  {"aten::tanh", C_UNARY_F, true},     {"aten::sin", C_UNARY_F, true},
    {"aten::cos", C_UNARY_F, true},      {"aten::reciprocal", C_UNARY_F, false}, {"aten::rsqrt", C_UNARY_F, true},
    {"aten::erf", C_UNARY_F, true},      {"aten::log1p", C_UNARY_F, true},    {"aten::expm1", C_UNARY_F, true},
    {"aten::floor", C_UNARY_F, false},   {"aten::ceil", C_UNARY_F, false},    {"aten::round", C_UNARY_F, false},
    {"aten::trunc", C_UNARY_F, false},   {"aten::neg", C_UNARY, false},       {"aten::abs", C_UNARY, false},
    {"aten::relu", C_UNARY, false},      {"aten::add", C_BIN, false},         {"aten::sub", C_BIN, false},
    {"aten::mul", C_BIN, false},         {"aten::maximum", C_BIN, false},     {"aten::minimum", C_BIN, false},
    {"aten::div", C_BIN_F, false},       {"aten::eq", C_CMP, false},          {"aten::lt", C_CMP, false},
    {"aten::ge", C_CMP, false},          {"aten::ne", C_CMP, false},          {"aten::add", C_BIN_S, false},
    {"aten::mul", C_BIN_S, false},       {"aten::sub", C_BIN_S, false},       {"aten::div", C_BIN_S, false},
    {"aten::gt", C_CMP_S, false},        {"aten::le", C_CMP_S, false},        {"aten::pow", C_POW_S, true},
    {"aten::where", C_WHERE, false},     {"aten::clamp", C_CLAMP, false},     {"aten::addcmul", C_ADDCMUL, false},
    {"aten::lerp", C_LERP, false},       {"aten::sum", C_RED, false},         {"aten::amax", C_RED, false},
    {"aten::exp2", C_UNARY_F, true},     {"aten::log2", C_UNARY_F, true},     {"aten::log10", C_UNARY_F, true},
    {"aten::sinh", C_UNARY_F, true},     {"aten::cosh", C_UNARY_F, true},     {"aten::tan", C_UNARY_F, true},
    {"aten::atan", C_UNARY_F, true},     {"aten::asin", C_UNARY_F, true},     {"aten::acos", C_UNARY_F, true},
    {"aten::erfc", C_UNARY_F, true},     {"aten::mish", C_UNARY_F, true},     {"aten::atan2", C_BIN_F, true},
    {"aten::fmod", C_BIN_FO, false},     {"aten::remainder", C_BIN_FO, false}, {"aten::floor_divide", C_BIN_FO, false},
    {"aten::hypot", C_BIN_FO, false},
    {"aten::amin", C_RED, false},        {"aten::mean", C_MEAN, false},       {"aten::softmax", C_SOFTMAX, true},
    {"aten::log_softmax", C_SOFTMAX, true}, {"aten::layer_norm", C_LAYER_NORM, true}, {"aten::norm", C_NORM, true},
    {"aten::chunk", C_CHUNK, false},     {"aten::cat", C_CAT, false},         {"aten::reshape", C_RESHAPE, false},
    {"aten::permute", C_PERMUTE, false}, {"aten::expand", C_EXPAND, false},   {"aten::to", C_TO, false},
    {"aten::relu_", C_INPLACE_U, false}, {"aten::add_", C_INPLACE_B, false},  {"aten::mul_", C_INPLACE_S, false},
};
#define NOPS ((int)(sizeof OPS / sizeof OPS[0]))

/* ---- a private generator: the same stream on every libc ------------------------------- */

typedef struct rng {
  uint64_t s;
} rng;
static uint64_t rnext(rng *r) {
  uint64_t x = r->s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return r->s = x;
}
static int rint_(rng *r, int n) { return n <= 1 ? 0 : (int)(rnext(r) % (uint64_t)n); }
static bool rbool(rng *r, int pct) { return rint_(r, 100) < pct; }
static double runif(rng *r) { return (double)(rnext(r) >> 11) / 9007199254740992.0; }
static void rseed(rng *r, uint64_t seed) {
  r->s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  if (!r->s) r->s = 1;
  for (int i = 0; i < 4; i++) rnext(r);
}

/* ---- dtypes ---------------------------------------------------------------------------- */

static bool is_f(fbx_dtype d) { return fbx_dtype_is_floating(d) != 0; }
static bool is_i(fbx_dtype d) { return fbx_dtype_is_integral(d) != 0; }
static int cat_of(fbx_dtype d) { return d == FBX_DTYPE_BOOL ? 0 : is_i(d) ? 1 : 2; }

/* PyTorch's promotion of two dimensioned tensors (the dtypes the generator uses). */
static fbx_dtype promote(fbx_dtype a, fbx_dtype b) {
  if (a == b) return a;
  if (cat_of(a) != cat_of(b)) return cat_of(a) > cat_of(b) ? a : b;
  if (is_f(a)) {
    if (a == FBX_DTYPE_FLOAT64 || b == FBX_DTYPE_FLOAT64) return FBX_DTYPE_FLOAT64;
    return FBX_DTYPE_FLOAT32; /* f16+bf16, f32+f16, f32+bf16 */
  }
  return a == FBX_DTYPE_INT64 || b == FBX_DTYPE_INT64 ? FBX_DTYPE_INT64 : FBX_DTYPE_INT32;
}

/* ---- shapes ---------------------------------------------------------------------------- */

static bool broadcast(const fz_vinfo *a, const fz_vinfo *b, fz_vinfo *out) {
  int r = a->rank > b->rank ? a->rank : b->rank;
  out->rank = r;
  for (int i = r; i < FZ_MAX_RANK; i++) out->sizes[i] = 0;
  for (int i = 0; i < r; i++) {
    int ia = a->rank - r + i, ib = b->rank - r + i;
    int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? b->sizes[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1) return false;
    out->sizes[i] = sa == 1 ? sb : sa;
  }
  return true;
}

static int64_t numel_of(const fz_vinfo *v) {
  int64_t n = 1;
  for (int i = 0; i < v->rank; i++) n *= v->sizes[i];
  return n;
}

static bool norm_dim(int dim, int rank, int *out) {
  int r = rank ? rank : 1;
  if (dim < -r || dim >= r) return false;
  *out = dim < 0 ? dim + r : dim;
  return true;
}

/* The 0-d rule of promotion is left out: a 0-d operand must have the other's dtype. */
static bool mixed_zero_dim(const fz_vinfo *a, const fz_vinfo *b) {
  return (a->rank == 0) != (b->rank == 0) && a->dt != b->dt;
}

static bool id_ok(const fz_case *c, int id, int before) {
  if (id >= 0 && id < c->nin) return true;
  return id >= FZ_NODE_ID && id - FZ_NODE_ID < before;
}

/* The output of node k from its operands' infos; false when invalid. */
static bool infer_node(const fz_case *c, int k, fz_vinfo *info) {
  const fz_node *n = &c->node[k];
  const fz_opdef *d = &OPS[n->op];
  for (int i = 0; i < n->nargs; i++)
    if (!id_ok(c, n->arg[i], k)) return false;
  const fz_vinfo *a = &info[n->arg[0]];
  const fz_vinfo *b = n->nargs > 1 ? &info[n->arg[1]] : NULL;
  const fz_vinfo *t3 = n->nargs > 2 ? &info[n->arg[2]] : NULL;
  fz_vinfo o = *a;
  o.alias_in = false;
  o.noalloc = false;
  switch (d->cls) {
  case C_UNARY_F:
    if (!is_f(a->dt)) return false;
    break;
  case C_UNARY:
    if (a->dt == FBX_DTYPE_BOOL) return false;
    break;
  case C_BIN:
  case C_BIN_F:
  case C_BIN_FO:
  case C_CMP:
    if (d->cls == C_BIN_FO && (!is_f(a->dt) || !is_f(b->dt))) return false;
    if (!broadcast(a, b, &o) || mixed_zero_dim(a, b)) return false;
    o.dt = promote(a->dt, b->dt);
    if (o.dt == FBX_DTYPE_BOOL && d->cls == C_BIN) return false; /* keep bool out of arithmetic */
    if (!strcmp(d->kind, "aten::sub") && (a->dt == FBX_DTYPE_BOOL || b->dt == FBX_DTYPE_BOOL)) return false;
    if (d->cls == C_BIN_F && !is_f(o.dt)) o.dt = FBX_DTYPE_FLOAT32;
    if (d->cls == C_CMP) o.dt = FBX_DTYPE_BOOL;
    break;
  case C_BIN_S:
  case C_CMP_S:
    if (a->dt == FBX_DTYPE_BOOL) return false;
    if (!n->int_scalar && !is_f(a->dt)) o.dt = FBX_DTYPE_FLOAT32;
    if (!strcmp(d->kind, "aten::div") && !is_f(o.dt)) o.dt = FBX_DTYPE_FLOAT32;
    if (d->cls == C_CMP_S) o.dt = FBX_DTYPE_BOOL;
    break;
  case C_POW_S:
    if (!is_f(a->dt)) return false;
    break;
  case C_WHERE: {
    fz_vinfo ab;
    if (a->dt != FBX_DTYPE_BOOL || !broadcast(b, t3, &ab) || !broadcast(a, &ab, &o)) return false;
    if (mixed_zero_dim(b, t3)) return false;
    o.dt = promote(b->dt, t3->dt);
    break;
  }
  case C_CLAMP:
    if (a->dt == FBX_DTYPE_BOOL || (!n->int_scalar && !is_f(a->dt))) return false;
    break;
  case C_ADDCMUL:
  case C_LERP: {
    fz_vinfo ab;
    if (!broadcast(a, b, &ab)) return false;
    if (t3 && !broadcast(&ab, t3, &o)) return false;
    if (!t3) o = ab;
    if (!is_f(a->dt) || b->dt != a->dt || (t3 && t3->dt != a->dt)) return false;
    o.dt = a->dt;
    o.alias_in = o.noalloc = false;
    break;
  }
  case C_RED:
  case C_MEAN:
  case C_NORM: {
    if (a->rank == 0) return false;
    if (d->cls != C_RED && !is_f(a->dt)) return false;
    if (d->cls == C_RED && a->dt == FBX_DTYPE_BOOL && strcmp(d->kind, "aten::sum")) return false;
    int d0, d1 = -1;
    if (!norm_dim(n->dim, a->rank, &d0)) return false;
    if (n->dim2 != 99 && (!norm_dim(n->dim2, a->rank, &d1) || d1 == d0)) return false;
    bool empty_ok = !strcmp(d->kind, "aten::sum") || d->cls == C_MEAN || d->cls == C_NORM;
    if (!empty_ok && (a->sizes[d0] == 0 || (d1 >= 0 && a->sizes[d1] == 0))) return false;
    o.rank = 0;
    for (int i = 0; i < a->rank; i++) {
      if (i == d0 || i == d1) {
        if (n->keepdim) o.sizes[o.rank++] = 1;
      } else {
        o.sizes[o.rank++] = a->sizes[i];
      }
    }
    if (!strcmp(d->kind, "aten::sum") && !is_f(a->dt)) o.dt = FBX_DTYPE_INT64;
    break;
  }
  case C_SOFTMAX: {
    int d0;
    if (!is_f(a->dt) || !norm_dim(n->dim, a->rank, &d0)) return false;
    break;
  }
  case C_LAYER_NORM:
    if (!is_f(a->dt) || a->rank == 0) return false;
    break;
  case C_CHUNK: {
    int d0;
    if (a->rank == 0 || !norm_dim(n->dim, a->rank, &d0) || n->chunks < 1 || a->sizes[d0] == 0) return false;
    int64_t s = a->sizes[d0], per = (s + n->chunks - 1) / n->chunks;
    int64_t pieces = per ? (s + per - 1) / per : (n->chunks); /* size 0: chunks pieces of 0 */
    if (s == 0) pieces = n->chunks, per = 0;
    if (n->pick >= pieces) return false;
    int64_t mine = per;
    if (s && (n->pick + 1) * per > s) mine = s - n->pick * per;
    o.sizes[d0] = mine;
    o.alias_in = a->alias_in;
    o.noalloc = true;
    /* the IR unpacks exactly `pieces` values: the case must know how many */
    if (pieces != n->chunks) return false;
    break;
  }
  case C_CAT: {
    int d0;
    if (a->rank == 0 || a->rank != b->rank || !norm_dim(n->dim, a->rank, &d0)) return false;
    for (int i = 0; i < a->rank; i++)
      if (i != d0 && a->sizes[i] != b->sizes[i]) return false;
    o.sizes[d0] = a->sizes[d0] + b->sizes[d0];
    o.dt = promote(a->dt, b->dt);
    break;
  }
  case C_RESHAPE: {
    fz_vinfo t = {.rank = n->trank};
    memcpy(t.sizes, n->target, sizeof t.sizes);
    if (numel_of(&t) != numel_of(a)) return false;
    o.rank = t.rank;
    memcpy(o.sizes, t.sizes, sizeof o.sizes);
    o.alias_in = a->alias_in;
    o.noalloc = true;
    break;
  }
  case C_PERMUTE: {
    if (n->trank != a->rank) return false;
    bool seen[FZ_MAX_RANK] = {0};
    for (int i = 0; i < a->rank; i++) {
      int p = (int)n->target[i];
      if (p < 0 || p >= a->rank || seen[p]) return false;
      seen[p] = true;
      o.sizes[i] = a->sizes[p];
    }
    o.alias_in = a->alias_in;
    o.noalloc = true;
    break;
  }
  case C_EXPAND: {
    if (n->trank < a->rank) return false;
    o.rank = n->trank;
    for (int i = 0; i < n->trank; i++) {
      int ia = a->rank - n->trank + i;
      int64_t s = ia >= 0 ? a->sizes[ia] : 1;
      if (s != 1 && n->target[i] != s) return false;
      if (n->target[i] < 0) return false;
      o.sizes[i] = n->target[i];
    }
    o.alias_in = a->alias_in;
    o.noalloc = true;
    break;
  }
  case C_TO:
    /* float -> int of NaN/inf is undefined in C and differs in PyTorch by CPU */
    if (is_f(a->dt) && is_i(n->to)) return false;
    o.dt = n->to;
    o.alias_in = a->alias_in; /* to() to the same dtype returns self */
    o.noalloc = a->noalloc;
    break;
  case C_INPLACE_U:
  case C_INPLACE_B:
  case C_INPLACE_S:
    if (a->alias_in || a->noalloc || a->dt == FBX_DTYPE_BOOL) return false;
    if (b) {
      fz_vinfo bb;
      memset(&bb, 0, sizeof bb);
      if (!broadcast(a, b, &bb) || bb.rank != a->rank || memcmp(bb.sizes, a->sizes, sizeof bb.sizes[0] * (size_t)a->rank) ||
          b->dt != a->dt)
        return false;
    }
    if (d->cls == C_INPLACE_S && !n->int_scalar && !is_f(a->dt)) return false;
    o = *a;
    break;
  }
  for (int i = 0; i < o.rank; i++)
    if (o.sizes[i] < 0 || o.sizes[i] > 4096) return false;
  if (numel_of(&o) > 65536) return false;
  info[FZ_NODE_ID + k] = o;
  return true;
}

bool fz_case_infer(const fz_case *c, fz_vinfo *info) {
  if (c->nin < 0 || c->nin > FZ_MAX_IN || c->nnodes < 0 || c->nnodes > FZ_MAX_NODES) return false;
  for (int i = 0; i < c->nin; i++) {
    const fz_input *in = &c->in[i];
    fz_vinfo *v = &info[i];
    memset(v, 0, sizeof *v);
    v->dt = in->dt;
    v->rank = in->rank;
    memcpy(v->sizes, in->sizes, sizeof v->sizes);
    v->alias_in = true;
    v->noalloc = true;
  }
  for (int k = 0; k < c->nnodes; k++)
    if (!infer_node(c, k, info)) return false;
  for (int o = 0; o < c->nout; o++)
    if (!id_ok(c, c->out[o], c->nnodes)) return false;
  return c->nout >= 1;
}

/* ---- generating ------------------------------------------------------------------------ */

static const int64_t DIMS[] = {1, 2, 3, 4, 5, 7, 8, 16, 17, 33};

static fbx_dtype pick_dtype(rng *r, fbx_dtype main) {
  int x = rint_(r, 100);
  if (x < 65) return main;
  if (x < 72) return FBX_DTYPE_FLOAT32;
  if (x < 78) return FBX_DTYPE_FLOAT64;
  if (x < 85) return FBX_DTYPE_INT64;
  if (x < 89) return FBX_DTYPE_INT32;
  if (x < 93) return FBX_DTYPE_BOOL;
  if (x < 97) return FBX_DTYPE_FLOAT16;
  return FBX_DTYPE_BFLOAT16;
}

static int pick_value(rng *r, const fz_case *c, int nnodes) {
  /* recent values more often: a chain rather than a fan */
  int n = c->nin + nnodes;
  int i = rbool(r, 60) && nnodes ? n - 1 - rint_(r, nnodes < 3 ? nnodes : 3) : rint_(r, n);
  return i < c->nin ? i : FZ_NODE_ID + (i - c->nin);
}

static double pick_scalar(rng *r, bool as_int) {
  static const double F[] = {0.5, 2.0, -1.5, 3.0, 1e-3, -0.0, 0.0, 1.0, 100.0, -7.25};
  if (as_int) return (double)(rint_(r, 9) - 4);
  return F[rint_(r, 10)];
}

static void fill_params(rng *r, fz_node *n, const fz_vinfo *a) {
  n->dim = a->rank ? rint_(r, a->rank) - (rbool(r, 40) ? a->rank : 0) : 0;
  n->dim2 = 99;
  n->int_scalar = is_i(a->dt) || rbool(r, 20);
  n->scalar = pick_scalar(r, n->int_scalar);
  n->scalar2 = n->scalar + (n->int_scalar ? 3 : 2.5);
  n->keepdim = rbool(r, 50);
  const fz_opdef *d = &OPS[n->op];
  switch (d->cls) {
  case C_POW_S: {
    static const double E[] = {2.0, 3.0, 0.5, -1.0, -2.0, 1.5, -0.5, 2.5, -0.7}; /* 1.5, 2.5, -0.7: pow's general path */
    n->scalar = E[rint_(r, 9)];
    n->int_scalar = false;
    break;
  }
  case C_RED:
  case C_MEAN:
    if (a->rank >= 2 && rbool(r, 35)) {
      n->dim2 = rint_(r, a->rank) - (rbool(r, 50) ? a->rank : 0);
    }
    break;
  case C_NORM:
    break;
  case C_CHUNK:
    n->chunks = 1 + rint_(r, 3);
    n->pick = rint_(r, n->chunks);
    break;
  case C_RESHAPE: {
    int64_t total = numel_of(a);
    int m = rint_(r, 3);
    if (m == 0 || a->rank == 0) { /* flatten */
      n->trank = 1;
      n->target[0] = total;
    } else if (m == 1 && a->rank < FZ_MAX_RANK) { /* insert a 1 */
      int at = rint_(r, a->rank + 1);
      n->trank = a->rank + 1;
      for (int i = 0, j = 0; i < n->trank; i++) n->target[i] = i == at ? 1 : a->sizes[j++];
    } else if (a->rank >= 2) { /* merge the last two */
      n->trank = a->rank - 1;
      for (int i = 0; i < a->rank - 2; i++) n->target[i] = a->sizes[i];
      n->target[a->rank - 2] = a->sizes[a->rank - 2] * a->sizes[a->rank - 1];
    } else {
      n->trank = 1;
      n->target[0] = total;
    }
    break;
  }
  case C_PERMUTE:
    n->trank = a->rank;
    for (int i = 0; i < a->rank; i++) n->target[i] = i;
    for (int i = a->rank - 1; i > 0; i--) {
      int j = rint_(r, i + 1);
      int64_t t = n->target[i];
      n->target[i] = n->target[j];
      n->target[j] = t;
    }
    break;
  case C_EXPAND: {
    int extra = a->rank < FZ_MAX_RANK && rbool(r, 30) ? 1 : 0;
    n->trank = a->rank + extra;
    for (int i = 0; i < n->trank; i++) {
      int ia = i - extra;
      int64_t s = ia >= 0 ? a->sizes[ia] : 1;
      n->target[i] = s == 1 ? (rbool(r, 70) ? 1 + rint_(r, 5) : 1) : s;
    }
    break;
  }
  case C_TO: {
    static const fbx_dtype T[] = {FBX_DTYPE_FLOAT32, FBX_DTYPE_FLOAT64, FBX_DTYPE_FLOAT16, FBX_DTYPE_BFLOAT16,
                                  FBX_DTYPE_INT64,   FBX_DTYPE_INT32,   FBX_DTYPE_BOOL};
    n->to = T[rint_(r, 7)];
    break;
  }
  default:
    break;
  }
}

/* Choose operands for n (nargs set by class) among the values so far. */
static void pick_args(rng *r, const fz_case *c, int k, fz_node *n, const fz_vinfo *info) {
  const fz_opdef *d = &OPS[n->op];
  switch (d->cls) {
  case C_BIN:
  case C_BIN_F:
  case C_BIN_FO:
  case C_CMP:
  case C_CAT:
  case C_INPLACE_B:
  case C_LERP:
    n->nargs = 2;
    break;
  case C_WHERE:
  case C_ADDCMUL:
    n->nargs = 3;
    break;
  default:
    n->nargs = 1;
  }
  for (int i = 0; i < n->nargs; i++) n->arg[i] = pick_value(r, c, k);
  if (d->cls == C_WHERE) {
    /* a bool condition: any bool value there is */
    for (int t = 0; t < 8 && info[n->arg[0]].dt != FBX_DTYPE_BOOL; t++) n->arg[0] = pick_value(r, c, k);
  }
  if (n->nargs >= 2 && d->cls != C_WHERE) {
    /* same dtype as the first more often than not (fewer rejections) */
    for (int t = 0; t < 4 && info[n->arg[1]].dt != info[n->arg[0]].dt && rbool(r, 70); t++)
      n->arg[1] = pick_value(r, c, k);
  }
  if (d->cls == C_LERP) {
    n->nargs = 2;
    n->scalar = 0.25 + 0.5 * runif(r);
    n->int_scalar = false;
  }
}

static void gen_input(rng *r, fz_input *in, fbx_dtype dt, const int64_t *base, int brank) {
  in->dt = dt;
  int drop = brank && rbool(r, 20) ? 1 + rint_(r, brank) : 0;
  in->rank = brank - drop;
  for (int i = 0; i < in->rank; i++) {
    int64_t s = base[drop + i];
    in->sizes[i] = rbool(r, 20) ? 1 : s;
  }
  in->layout = FZ_CONTIG;
  if (in->rank >= 2 && rbool(r, 20)) in->layout = FZ_TRANSPOSED;
  else if (in->rank >= 1 && rbool(r, 12)) {
    in->layout = FZ_EXPANDED;
    in->xdim = rint_(r, in->rank);
  }
  in->values = rbool(r, 35) ? FZ_VAL_SPECIAL : FZ_VAL_RANDOM;
  in->vseed = rnext(r);
}

void fz_generate(fz_case *c, uint64_t seed, int max_nodes) {
  rng r;
  rseed(&r, seed);
  memset(c, 0, sizeof *c);
  c->seed = seed;
  if (max_nodes < 1) max_nodes = 1;
  if (max_nodes > FZ_MAX_NODES) max_nodes = FZ_MAX_NODES;
  int64_t base[FZ_MAX_RANK];
  int brank = rint_(&r, 5);
  if (brank == 0 && rbool(&r, 70)) brank = 2;
  for (int i = 0; i < brank; i++) base[i] = rbool(&r, 4) ? 0 : DIMS[rint_(&r, 10)];
  fbx_dtype main = rbool(&r, 80) ? FBX_DTYPE_FLOAT32 : rbool(&r, 50) ? FBX_DTYPE_FLOAT64 : FBX_DTYPE_INT64;
  c->nin = 1 + rint_(&r, 4);
  for (int i = 0; i < c->nin; i++) gen_input(&r, &c->in[i], pick_dtype(&r, main), base, brank);
  int want = 1 + rint_(&r, max_nodes);
  fz_vinfo info[FZ_NODE_ID + FZ_MAX_NODES];
  fz_case_infer(c, info); /* the inputs' infos (no output yet: false) */
  for (int k = 0; k < want; k++) {
    bool ok = false;
    for (int t = 0; t < 40 && !ok; t++) {
      fz_node n;
      memset(&n, 0, sizeof n);
      n.op = rint_(&r, NOPS);
      pick_args(&r, c, k, &n, info);
      fill_params(&r, &n, &info[n.arg[0]]);
      c->node[k] = n;
      c->nnodes = k + 1;
      ok = infer_node(c, k, info);
    }
    if (!ok) {
      c->nnodes = k;
      break;
    }
  }
  /* outputs: every node output nobody uses, and the last one */
  bool used[FZ_MAX_NODES] = {0};
  for (int k = 0; k < c->nnodes; k++)
    for (int i = 0; i < c->node[k].nargs; i++)
      if (c->node[k].arg[i] >= FZ_NODE_ID) used[c->node[k].arg[i] - FZ_NODE_ID] = true;
  c->nout = 0;
  for (int k = 0; k < c->nnodes; k++) {
    const fz_opdef *d = &OPS[c->node[k].op];
    /* an in-place node's output is its target: output the target instead */
    bool inplace = d->cls == C_INPLACE_U || d->cls == C_INPLACE_B || d->cls == C_INPLACE_S;
    if ((!used[k] || k == c->nnodes - 1) && !inplace) c->out[c->nout++] = FZ_NODE_ID + k;
    else if (inplace && !used[k]) c->out[c->nout++] = FZ_NODE_ID + k;
  }
  if (!c->nnodes) { /* nothing was accepted: an identity relu */
    c->node[0] = (fz_node){.op = 18, .nargs = 1, .arg = {0}, .dim2 = 99};
    if (c->in[0].dt == FBX_DTYPE_BOOL) c->in[0].dt = FBX_DTYPE_FLOAT32;
    c->nnodes = 1;
    c->out[c->nout++] = FZ_NODE_ID;
  }
}

/* ---- pruning (used by the minimizer) ----------------------------------------------------- */

static void rename_id(fz_case *c, int from, int to) {
  for (int k = 0; k < c->nnodes; k++)
    for (int i = 0; i < c->node[k].nargs; i++)
      if (c->node[k].arg[i] == from) c->node[k].arg[i] = to;
  for (int o = 0; o < c->nout; o++)
    if (c->out[o] == from) c->out[o] = to;
}

void fz_case_prune(fz_case *c) {
  bool live[FZ_MAX_NODES] = {0}, inlive[FZ_MAX_IN] = {0};
  for (int o = 0; o < c->nout; o++)
    if (c->out[o] >= FZ_NODE_ID) live[c->out[o] - FZ_NODE_ID] = true;
  /* an in-place node on a live value's target keeps it live as well */
  for (int k = c->nnodes - 1; k >= 0; k--) {
    const fz_opdef *d = &OPS[c->node[k].op];
    bool inplace = d->cls == C_INPLACE_U || d->cls == C_INPLACE_B || d->cls == C_INPLACE_S;
    (void)inplace;
    if (!live[k]) continue;
    for (int i = 0; i < c->node[k].nargs; i++) {
      int a = c->node[k].arg[i];
      if (a >= FZ_NODE_ID) live[a - FZ_NODE_ID] = true;
    }
  }
  for (int k = 0; k < c->nnodes; k++) {
    const fz_opdef *d = &OPS[c->node[k].op];
    bool inplace = d->cls == C_INPLACE_U || d->cls == C_INPLACE_B || d->cls == C_INPLACE_S;
    /* writes a live value: it changes what the outputs see */
    if (inplace && c->node[k].arg[0] >= FZ_NODE_ID && live[c->node[k].arg[0] - FZ_NODE_ID] && !live[k]) {
      live[k] = true;
      for (int i = 0; i < c->node[k].nargs; i++)
        if (c->node[k].arg[i] >= FZ_NODE_ID) live[c->node[k].arg[i] - FZ_NODE_ID] = true;
      k = -1; /* again: what it reads is now live */
    }
  }
  for (int k = c->nnodes - 1; k >= 0; k--) {
    if (live[k]) continue;
    for (int j = k + 1; j < c->nnodes; j++) {
      c->node[j - 1] = c->node[j];
      live[j - 1] = live[j];
    }
    c->nnodes--;
    for (int j = k + 1; j <= c->nnodes; j++) rename_id(c, FZ_NODE_ID + j, FZ_NODE_ID + j - 1);
  }
  for (int k = 0; k < c->nnodes; k++)
    for (int i = 0; i < c->node[k].nargs; i++)
      if (c->node[k].arg[i] < FZ_NODE_ID) inlive[c->node[k].arg[i]] = true;
  for (int o = 0; o < c->nout; o++)
    if (c->out[o] < FZ_NODE_ID) inlive[c->out[o]] = true;
  for (int i = c->nin - 1; i >= 0; i--) {
    if (inlive[i]) continue;
    for (int j = i + 1; j < c->nin; j++) {
      c->in[j - 1] = c->in[j];
      inlive[j - 1] = inlive[j];
    }
    c->nin--;
    for (int j = i + 1; j <= c->nin; j++) rename_id(c, j, j - 1);
  }
}

/* ---- printing ---------------------------------------------------------------------------- */

static void put_name(fbx_strbuf *b, int id) {
  if (id < FZ_NODE_ID) fbx_strbuf_printf(b, "%%x%d", id);
  else fbx_strbuf_printf(b, "%%v%d", id - FZ_NODE_ID);
}

static void put_float(fbx_strbuf *b, double v) {
  char s[64];
  snprintf(s, sizeof s, "%.17g", v);
  if (!strpbrk(s, ".eni")) strcat(s, ".");
  if (s[strlen(s) - 1] == '.') strcat(s, "0");
  fbx_strbuf_puts(b, s);
}

/* Constants of node k are %c<k>_<j>. */
static void c_int(fbx_strbuf *b, int k, int j, int64_t v) {
  fbx_strbuf_printf(b, "  %%c%d_%d : int = prim::Constant[value=%lld]()\n", k, j, (long long)v);
}
static void c_scalar(fbx_strbuf *b, int k, int j, double v, bool as_int) {
  if (as_int) {
    c_int(b, k, j, (int64_t)v);
    return;
  }
  fbx_strbuf_printf(b, "  %%c%d_%d : float = prim::Constant[value=", k, j);
  put_float(b, v);
  fbx_strbuf_puts(b, "]()\n");
}
static void c_bool(fbx_strbuf *b, int k, int j, bool v) {
  fbx_strbuf_printf(b, "  %%c%d_%d : bool = prim::Constant[value=%d]()\n", k, j, v ? 1 : 0);
}
static void c_none(fbx_strbuf *b, int k, int j) {
  fbx_strbuf_printf(b, "  %%c%d_%d : NoneType = prim::Constant()\n", k, j);
}
/* int list %l<k> from constants %c<k>_<j0..j0+n) */
static void c_list(fbx_strbuf *b, int k, int j0, const int64_t *v, int n) {
  for (int i = 0; i < n; i++) c_int(b, k, j0 + i, v[i]);
  fbx_strbuf_printf(b, "  %%l%d : int[] = prim::ListConstruct(", k);
  for (int i = 0; i < n; i++) fbx_strbuf_printf(b, "%s%%c%d_%d", i ? ", " : "", k, j0 + i);
  fbx_strbuf_puts(b, ")\n");
}

static void node_head(fbx_strbuf *b, int k, const char *kind) {
  fbx_strbuf_printf(b, "  %%v%d : Tensor = %s(", k, kind);
}
static void args(fbx_strbuf *b, const fz_node *n, int from, int to) {
  for (int i = from; i < to; i++) {
    if (i > from) fbx_strbuf_puts(b, ", ");
    put_name(b, n->arg[i]);
  }
}

static void print_node(fbx_strbuf *b, const fz_case *c, int k, const fz_vinfo *info) {
  const fz_node *n = &c->node[k];
  const fz_opdef *d = &OPS[n->op];
  const fz_vinfo *a = &info[n->arg[0]];
  switch (d->cls) {
  case C_UNARY_F:
  case C_UNARY:
  case C_INPLACE_U:
    node_head(b, k, d->kind);
    args(b, n, 0, 1);
    break;
  case C_BIN:
  case C_INPLACE_B:
    if (!strcmp(d->kind, "aten::add") || !strcmp(d->kind, "aten::sub") || d->cls == C_INPLACE_B) {
      c_int(b, k, 0, 1);
      node_head(b, k, d->kind);
      args(b, n, 0, 2);
      fbx_strbuf_printf(b, ", %%c%d_0", k);
    } else {
      node_head(b, k, d->kind);
      args(b, n, 0, 2);
    }
    break;
  case C_BIN_F:
  case C_BIN_FO:
  case C_CMP:
    node_head(b, k, d->kind);
    args(b, n, 0, 2);
    break;
  case C_BIN_S:
  case C_CMP_S:
  case C_POW_S:
  case C_INPLACE_S:
    c_scalar(b, k, 0, n->scalar, n->int_scalar);
    if (!strcmp(d->kind, "aten::add") || !strcmp(d->kind, "aten::sub")) c_int(b, k, 1, 1);
    node_head(b, k, d->kind);
    args(b, n, 0, 1);
    fbx_strbuf_printf(b, ", %%c%d_0", k);
    if (!strcmp(d->kind, "aten::add") || !strcmp(d->kind, "aten::sub")) fbx_strbuf_printf(b, ", %%c%d_1", k);
    break;
  case C_WHERE:
  case C_ADDCMUL:
    node_head(b, k, d->kind);
    args(b, n, 0, 3);
    break;
  case C_LERP:
    c_scalar(b, k, 0, n->scalar, false);
    node_head(b, k, d->kind);
    args(b, n, 0, 2);
    fbx_strbuf_printf(b, ", %%c%d_0", k);
    break;
  case C_CLAMP:
    c_scalar(b, k, 0, n->scalar, n->int_scalar);
    c_scalar(b, k, 1, n->scalar2, n->int_scalar);
    node_head(b, k, d->kind);
    args(b, n, 0, 1);
    fbx_strbuf_printf(b, ", %%c%d_0, %%c%d_1", k, k);
    break;
  case C_RED:
  case C_MEAN:
  case C_NORM: {
    int64_t dims[2] = {n->dim, n->dim2};
    int nd = n->dim2 == 99 ? 1 : 2;
    c_list(b, k, 0, dims, nd);
    c_bool(b, k, 2, n->keepdim);
    if (d->cls == C_NORM) c_int(b, k, 3, 2);
    else if (strcmp(d->kind, "aten::amax") && strcmp(d->kind, "aten::amin")) c_none(b, k, 3);
    node_head(b, k, d->kind);
    args(b, n, 0, 1);
    if (d->cls == C_NORM) fbx_strbuf_printf(b, ", %%c%d_3, %%l%d, %%c%d_2", k, k, k);
    else if (!strcmp(d->kind, "aten::amax") || !strcmp(d->kind, "aten::amin"))
      fbx_strbuf_printf(b, ", %%l%d, %%c%d_2", k, k);
    else fbx_strbuf_printf(b, ", %%l%d, %%c%d_2, %%c%d_3", k, k, k);
    break;
  }
  case C_SOFTMAX:
    c_int(b, k, 0, n->dim);
    c_none(b, k, 1);
    node_head(b, k, d->kind);
    args(b, n, 0, 1);
    fbx_strbuf_printf(b, ", %%c%d_0, %%c%d_1", k, k);
    break;
  case C_LAYER_NORM: {
    int64_t last = a->sizes[a->rank - 1];
    c_list(b, k, 0, &last, 1);
    c_none(b, k, 1);
    c_scalar(b, k, 2, 1e-5, false);
    c_bool(b, k, 3, true);
    node_head(b, k, d->kind);
    args(b, n, 0, 1);
    fbx_strbuf_printf(b, ", %%l%d, %%c%d_1, %%c%d_1, %%c%d_2, %%c%d_3", k, k, k, k, k);
    break;
  }
  case C_CHUNK:
    c_int(b, k, 0, n->chunks);
    c_int(b, k, 1, n->dim);
    fbx_strbuf_printf(b, "  %%p%d : Tensor[] = aten::chunk(", k);
    args(b, n, 0, 1);
    fbx_strbuf_printf(b, ", %%c%d_0, %%c%d_1)\n  ", k, k);
    for (int i = 0; i < n->chunks; i++) {
      if (i == n->pick) fbx_strbuf_printf(b, "%s%%v%d : Tensor", i ? ", " : "", k);
      else fbx_strbuf_printf(b, "%s%%v%d_%d : Tensor", i ? ", " : "", k, i);
    }
    fbx_strbuf_printf(b, " = prim::ListUnpack(%%p%d", k);
    break;
  case C_CAT:
    c_int(b, k, 0, n->dim);
    fbx_strbuf_printf(b, "  %%p%d : Tensor[] = prim::ListConstruct(", k);
    args(b, n, 0, 2);
    fbx_strbuf_puts(b, ")\n");
    fbx_strbuf_printf(b, "  %%v%d : Tensor = aten::cat(%%p%d, %%c%d_0", k, k, k);
    break;
  case C_RESHAPE:
  case C_PERMUTE:
    c_list(b, k, 0, n->target, n->trank);
    node_head(b, k, d->kind);
    args(b, n, 0, 1);
    fbx_strbuf_printf(b, ", %%l%d", k);
    break;
  case C_EXPAND:
    c_list(b, k, 0, n->target, n->trank);
    c_bool(b, k, FZ_MAX_RANK, false);
    node_head(b, k, d->kind);
    args(b, n, 0, 1);
    fbx_strbuf_printf(b, ", %%l%d, %%c%d_%d", k, k, FZ_MAX_RANK);
    break;
  case C_TO:
    c_int(b, k, 0, (int64_t)n->to);
    c_bool(b, k, 1, false);
    c_none(b, k, 2);
    node_head(b, k, d->kind);
    args(b, n, 0, 1);
    fbx_strbuf_printf(b, ", %%c%d_0, %%c%d_1, %%c%d_1, %%c%d_2", k, k, k, k);
    break;
  }
  fbx_strbuf_puts(b, ")\n");
}

/* The case as IR; inputs whose bit is set in `widened` are float32 graph
 * inputs %xI_f32, converted by an aten::to at the top to %xI of their dtype. */
static char *print_case(const fz_case *c, unsigned widened) {
  fz_vinfo info[FZ_NODE_ID + FZ_MAX_NODES];
  if (!fz_case_infer(c, info)) return NULL;
  fbx_strbuf b = {0};
  fbx_strbuf_puts(&b, "graph(");
  for (int i = 0; i < c->nin; i++)
    fbx_strbuf_printf(&b, "%s%%x%d%s : Tensor", i ? ",\n      " : "", i, widened >> i & 1 ? "_f32" : "");
  fbx_strbuf_puts(&b, "):\n");
  for (int i = 0; i < c->nin; i++) {
    if (!(widened >> i & 1)) continue;
    fbx_strbuf_printf(&b,
                      "  %%x%d_dt : int = prim::Constant[value=%d]()\n"
                      "  %%x%d_nb : bool = prim::Constant[value=0]()\n"
                      "  %%x%d_mf : NoneType = prim::Constant()\n"
                      "  %%x%d : Tensor = aten::to(%%x%d_f32, %%x%d_dt, %%x%d_nb, %%x%d_nb, %%x%d_mf)\n",
                      i, (int)c->in[i].dt, i, i, i, i, i, i, i, i);
  }
  for (int k = 0; k < c->nnodes; k++) print_node(&b, c, k, info);
  if (c->nout == 1) {
    fbx_strbuf_puts(&b, "  return (");
    put_name(&b, c->out[0]);
    fbx_strbuf_puts(&b, ")\n");
  } else {
    fbx_strbuf_puts(&b, "  %out : (");
    for (int o = 0; o < c->nout; o++) fbx_strbuf_printf(&b, "%sTensor", o ? ", " : "");
    fbx_strbuf_puts(&b, ") = prim::TupleConstruct(");
    for (int o = 0; o < c->nout; o++) {
      if (o) fbx_strbuf_puts(&b, ", ");
      put_name(&b, c->out[o]);
    }
    fbx_strbuf_puts(&b, ")\n  return (%out)\n");
  }
  return fbx_strbuf_take(&b);
}

char *fz_case_print(const fz_case *c) { return print_case(c, 0); }

unsigned fz_repro_widened(const fz_case *c) {
  unsigned m = 0;
  for (int i = 0; i < c->nin; i++)
    if (c->in[i].dt == FBX_DTYPE_BFLOAT16) m |= 1u << i;
  return m;
}

char *fz_case_print_repro(const fz_case *c) { return print_case(c, fz_repro_widened(c)); }

double fz_text_tolerance_factor(const char *text) {
  double f = 1.0;
  for (const char *p = strstr(text, "aten::"); p; p = strstr(p + 1, "aten::")) {
    size_t len = strcspn(p, "(");
    for (int i = 0; i < NOPS; i++) {
      if (strlen(OPS[i].kind) != len || strncmp(OPS[i].kind, p, len)) continue;
      fz_cls c = OPS[i].cls;
      f += c == C_RED || c == C_MEAN ? 4 : c == C_SOFTMAX || c == C_LAYER_NORM || c == C_NORM ? 6 : OPS[i].trans ? 2 : 0;
      break;
    }
  }
  return f;
}

/* ---- input values ------------------------------------------------------------------------ */

static double special_f(rng *r, fbx_dtype dt) {
  static const double S[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1e-40, -3e-42, 1e-310, 65504.0, 3e38,
                             -1e30, 1.0, -1.0, 0.5, 88.0, -104.0};
  double v = S[rint_(r, 16)];
  if (dt == FBX_DTYPE_FLOAT64 && rbool(r, 30)) v = 1e300;
  return v;
}

static int64_t special_i(rng *r, fbx_dtype dt) {
  int x = rint_(r, 6);
  bool i64 = dt == FBX_DTYPE_INT64;
  switch (x) {
  case 0: return i64 ? INT64_MAX : INT32_MAX;
  case 1: return i64 ? INT64_MIN : INT32_MIN;
  case 2: return 0;
  case 3: return -1;
  default: return rint_(r, 41) - 20;
  }
}

static void store(fbx_tensor *t, int64_t i, double f, int64_t iv) {
  void *p = t->data;
  switch (t->dtype) {
  case FBX_DTYPE_FLOAT32: ((float *)p)[i] = (float)f; break;
  case FBX_DTYPE_FLOAT64: ((double *)p)[i] = f; break;
  case FBX_DTYPE_FLOAT16: ((uint16_t *)p)[i] = fbx_float_to_half((float)f); break;
  case FBX_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = fbx_float_to_bf16((float)f); break;
  case FBX_DTYPE_INT64: ((int64_t *)p)[i] = iv; break;
  case FBX_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)iv; break;
  case FBX_DTYPE_BOOL: ((uint8_t *)p)[i] = iv != 0; break;
  default: break;
  }
}

fbx_status *fz_case_inputs(const fz_case *c, fbx_ivalue *vals) {
  for (int i = 0; i < c->nin; i++) {
    const fz_input *in = &c->in[i];
    /* the base tensor the input is a view of */
    int64_t bsizes[FZ_MAX_RANK];
    memcpy(bsizes, in->sizes, sizeof bsizes);
    if (in->layout == FZ_TRANSPOSED)
      for (int d = 0; d < in->rank; d++) bsizes[d] = in->sizes[in->rank - 1 - d];
    if (in->layout == FZ_EXPANDED) bsizes[in->xdim] = 1;
    fbx_tensor *base = NULL, *v = NULL;
    fbx_status *st = fbx_tensor_empty(&base, in->dt, in->rank, bsizes);
    if (st) return st;
    rng r;
    rseed(&r, in->vseed);
    for (int64_t e = 0; e < base->numel; e++) {
      double f = 1.0;
      int64_t iv = 1;
      if (in->values == FZ_VAL_RANDOM || (in->values == FZ_VAL_SPECIAL && !rbool(&r, 30))) {
        f = runif(&r) * 6.0 - 3.0;
        iv = rint_(&r, 21) - 10;
        if (in->dt == FBX_DTYPE_BOOL) iv = rbool(&r, 50);
      } else if (in->values == FZ_VAL_SPECIAL) {
        f = special_f(&r, in->dt);
        iv = in->dt == FBX_DTYPE_BOOL ? rbool(&r, 50) : special_i(&r, in->dt);
      }
      store(base, e, f, iv);
    }
    if (in->layout == FZ_CONTIG) {
      vals[i] = fbx_iv_tensor(base);
      continue;
    }
    int64_t strides[FZ_MAX_RANK];
    memcpy(strides, base->strides, sizeof strides);
    if (in->layout == FZ_TRANSPOSED)
      for (int d = 0; d < in->rank; d++) strides[d] = base->strides[in->rank - 1 - d];
    else strides[in->xdim] = 0;
    st = fbx_tensor_view(&v, base, in->rank, in->sizes, strides, base->offset);
    fbx_tensor_release(base);
    if (st) return st;
    vals[i] = fbx_iv_tensor(v);
  }
  return NULL;
}
