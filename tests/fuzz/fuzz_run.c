/* libFuzzer target for parse -> run -> backward.
 *
 * An input is an 8-byte header followed by TorchScript-IR text:
 *
 *   byte 0  flags: bit 0 forward+backward, bits 1-2 extra runs after the
 *           profiling one (so the optimized graph runs too), bit 3 gives
 *           Optional inputs None
 *   byte 1  rank (% 4) of tensor inputs whose type does not give one
 *   byte 2-4  their sizes (each % 5, so 0 .. 4)
 *   byte 5  value pattern of tensor inputs (start in a table of interesting
 *           values: 0, -0, 1, -1, 0.5, 2.5, -3, 1e-3, 100, NaN, inf, -inf)
 *   byte 6  int inputs (% 9 - 2), bool inputs (bit 7)
 *   byte 7  float inputs (an entry of the same table) and the dtype of tensor
 *           inputs whose type has none (bits 4-6: float32, float64, int64,
 *           int32, bool, float16, bfloat16, uint8)
 *
 * The graph's inputs are made from their IR types (a complete tensor type
 * gives dtype and sizes), the executor runs it with the `none` fuser (or the
 * fuser FBX_FUZZ_RUN_FUSER names: `legacy` compiles C per new kernel, slow,
 * so it is not the default; build it first with `cmake --build build-fuzz
 * --target fbx_legacy`), then forward with a tape and backward with
 * output gradients of ones. Any status is fine; a crash, a leak or a
 * sanitizer report is a bug. Graphs with int constants beyond +-64 or over
 * 256 nodes are skipped, so that loops and made-up sizes stay small and the
 * fuzzer spends its time on semantics rather than on huge allocations.
 * Run with tests/fuzz/run_fuzz.sh SECONDS.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status.h"
#include "exec/executor.h"
#include "ir/graph.h"
#include "ir/text.h"
#include "ir/type.h"
#include "ops/ivalue.h"
#include <fusebox/fusebox.h>
#include <fusebox/tensor.h>

#define HEADER 8
#define MAX_NODES 256
#define MAX_INT_CONST 64
#define MAX_NUMEL 4096

/* A request for 2^40 bytes is a clean out-of-memory error, not a crash. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1:max_allocation_size_mb=512"; }

static const double VALUES[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.0, 1e-3, 100.0, NAN, INFINITY, -INFINITY};
#define NVALUES ((int)(sizeof VALUES / sizeof VALUES[0]))
static const fbx_dtype DTYPES[8] = {FBX_DTYPE_FLOAT32, FBX_DTYPE_FLOAT64, FBX_DTYPE_INT64, FBX_DTYPE_INT32,
                                    FBX_DTYPE_BOOL,    FBX_DTYPE_FLOAT16, FBX_DTYPE_BFLOAT16, FBX_DTYPE_UINT8};

typedef struct {
  uint8_t h[HEADER];
} header;

/* Count nodes and check constants, through every block; false to skip. */
static bool small_block(const fbx_block *b, int *nodes) {
  for (fbx_node *n = fbx_block_first(b); n; n = n->next) {
    if (++*nodes > MAX_NODES) return false;
    for (int a = 0; a < n->nattrs; a++) {
      const fbx_attr *at = &n->attrs[a];
      if (at->kind == FBX_ATTR_INT && (at->u.i > MAX_INT_CONST || at->u.i < -MAX_INT_CONST)) return false;
      if (at->kind == FBX_ATTR_INTS) {
        if (at->n > 16) return false;
        for (int k = 0; k < at->n; k++)
          if (at->u.is[k] > MAX_INT_CONST || at->u.is[k] < -MAX_INT_CONST) return false;
      }
      if (at->kind == FBX_ATTR_GRAPH && !small_block(at->u.g->block, nodes)) return false;
    }
    for (int k = 0; k < n->nblocks; k++)
      if (!small_block(n->blocks[k], nodes)) return false;
  }
  return true;
}

static fbx_status *make_tensor(const header *hd, const fbx_type *t, int which, fbx_ivalue *out) {
  fbx_dtype dt = t->dtype != FBX_DTYPE_UNDEFINED ? t->dtype : DTYPES[(hd->h[7] >> 4) & 7];
  int rank = t->rank >= 0 ? t->rank : hd->h[1] % 4;
  int64_t sizes[FBX_MAX_DIMS];
  int64_t numel = 1;
  for (int d = 0; d < rank; d++) {
    int64_t s = t->rank >= 0 && t->sizes && t->sizes[d] >= 0 ? t->sizes[d] : hd->h[2 + d % 3] % 5;
    if (s > MAX_NUMEL) s = hd->h[2 + d % 3] % 5;
    sizes[d] = s;
    numel *= s;
    if (numel > MAX_NUMEL) return fbx_status_new(FBX_ERR_INVALID_ARG, "input too large for the fuzzer");
  }
  fbx_tensor *x = NULL;
  FBX_TRY(fbx_tensor_empty(&x, dt, rank, sizes));
  for (int64_t k = 0; k < x->numel; k++) {
    double v = VALUES[(hd->h[5] + which * 5 + k * 7) % NVALUES];
    if (fbx_dtype_is_floating(dt)) fbx_tensor_set_f64(x, k, v);
    else if (dt == FBX_DTYPE_BOOL) fbx_tensor_set_i64(x, k, (hd->h[5] + k) & 1);
    else fbx_tensor_set_i64(x, k, (int64_t)((hd->h[5] + which + k * 3) % 9) - 2);
  }
  *out = fbx_iv_tensor(x);
  return NULL;
}

/* A value for an input of type t; FBX_ERR_UNSUPPORTED for types not made. */
static fbx_status *make_value(const header *hd, const fbx_type *t, int which, fbx_ivalue *out) {
  if (!t) return fbx_status_new(FBX_ERR_UNSUPPORTED, "untyped");
  switch (t->kind) {
    case FBX_TYPE_TENSOR: return make_tensor(hd, t, which, out);
    case FBX_TYPE_INT:
    case FBX_TYPE_NUMBER: *out = fbx_iv_int((int64_t)(hd->h[6] % 9) - 2); return NULL;
    case FBX_TYPE_FLOAT: *out = fbx_iv_float(VALUES[hd->h[7] % NVALUES]); return NULL;
    case FBX_TYPE_BOOL: *out = fbx_iv_bool(hd->h[6] >> 7); return NULL;
    case FBX_TYPE_NONE: *out = fbx_iv_none(); return NULL;
    case FBX_TYPE_OPTIONAL:
      if (hd->h[0] & 8) {
        *out = fbx_iv_none();
        return NULL;
      }
      return make_value(hd, t->elems[0], which, out);
    case FBX_TYPE_LIST: {
      const fbx_type *e = t->elems[0];
      if (e->kind != FBX_TYPE_INT && e->kind != FBX_TYPE_FLOAT && e->kind != FBX_TYPE_TENSOR)
        return fbx_status_new(FBX_ERR_UNSUPPORTED, "list type");
      int n = 1 + hd->h[1] % 3;
      FBX_TRY(fbx_iv_list_new(out, n));
      for (int i = 0; i < n; i++) {
        fbx_ivalue item = fbx_iv_none();
        fbx_status *st = NULL;
        if (e->kind == FBX_TYPE_INT) item = fbx_iv_int(1 + hd->h[2 + i] % 4);
        else st = make_value(hd, e, which + i + 1, &item);
        if (!st) st = fbx_iv_list_push(out, item);
        if (st) {
          fbx_iv_release(out);
          return st;
        }
      }
      return NULL;
    }
    default: return fbx_status_new(FBX_ERR_UNSUPPORTED, "input type");
  }
}

/* Ones shaped like each floating tensor output (flattened), None elsewhere. */
static void flatten(const fbx_ivalue *v, fbx_ivalue *out, int *n, int cap) {
  if (v->kind == FBX_IV_TUPLE || v->kind == FBX_IV_LIST) {
    for (int i = 0; i < v->u.l->n; i++) flatten(&v->u.l->items[i], out, n, cap);
    return;
  }
  if (*n < cap) out[*n] = *v;
  (*n)++;
}

static void ignore(fbx_status *st) { fbx_status_free(st); }

static void run_backward(fbx_executor *ex, const fbx_ivalue *in, int nin, uint64_t seed) {
  int nout = fbx_graph_noutputs(fbx_executor_graph(ex));
  int nflat = fbx_executor_num_outputs(ex);
  if (nout > 64 || nflat > 64) return;
  fbx_ivalue out[64], flat[64], gout[64], gin[64];
  for (int i = 0; i < 64; i++) out[i] = gout[i] = gin[i] = fbx_iv_none();
  fbx_grad_handle *h = NULL;
  fbx_status *st = fbx_executor_forward_values(ex, in, nin, NULL, out, nout, seed, &h);
  if (!st) {
    int n = 0;
    for (int i = 0; i < nout; i++) flatten(&out[i], flat, &n, 64);
    for (int i = 0; i < n && i < nflat; i++) {
      if (flat[i].kind != FBX_IV_TENSOR || !fbx_dtype_is_floating(flat[i].u.t->dtype)) continue;
      fbx_tensor *g = NULL;
      if (fbx_tensor_empty(&g, flat[i].u.t->dtype, flat[i].u.t->ndim, flat[i].u.t->sizes)) break;
      for (int64_t k = 0; k < g->numel; k++) fbx_tensor_set_f64(g, k, 1.0);
      gout[i] = fbx_iv_tensor(g);
    }
    st = fbx_executor_backward_values(h, gout, nflat, gin, nin);
  }
  ignore(st);
  fbx_grad_free(h);
  for (int i = 0; i < 64; i++) {
    fbx_iv_release(&out[i]);
    fbx_iv_release(&gout[i]);
    fbx_iv_release(&gin[i]);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < HEADER) return 0;
  header hd;
  memcpy(hd.h, data, HEADER);
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, (const char *)data + HEADER, size - HEADER, "fuzz.ir");
  if (st) {
    fbx_status_free(st);
    return 0;
  }
  int nodes = 0, nin = fbx_graph_ninputs(g);
  if (!small_block(g->block, &nodes) || nin > 16) {
    fbx_graph_destroy(g);
    return 0;
  }
  fbx_ivalue in[16];
  for (int i = 0; i < 16; i++) in[i] = fbx_iv_none();
  bool ok = true;
  for (int i = 0; i < nin && ok; i++) {
    st = make_value(&hd, fbx_graph_input(g, i)->type, i, &in[i]);
    if (st) ok = false;
    ignore(st);
  }
  fbx_executor *ex = NULL;
  if (ok) {
    const char *fuser = getenv("FBX_FUZZ_RUN_FUSER");
    fbx_executor_opts opts = {.struct_size = sizeof opts, .fuser = fuser ? fuser : "none", .profiling_runs = 1};
    st = fbx_executor_create(&ex, g, &opts);
    if (st) ok = false;
    ignore(st);
  }
  fbx_graph_destroy(g);
  if (ok) {
    int nout = fbx_graph_noutputs(fbx_executor_graph(ex));
    int runs = 1 + ((hd.h[0] >> 1) & 3);
    for (int r = 0; r < runs && nout <= 64; r++) {
      fbx_ivalue out[64];
      for (int i = 0; i < nout; i++) out[i] = fbx_iv_none();
      st = fbx_executor_run_values(ex, in, nin, out, nout, (uint64_t)r);
      for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
      if (st) r = runs;
      ignore(st);
    }
    if (hd.h[0] & 1) {
      run_backward(ex, in, nin, 1);
      run_backward(ex, in, nin, 2); /* the second one runs the gradient plan */
    }
  }
  fbx_executor_destroy(ex);
  for (int i = 0; i < 16; i++) fbx_iv_release(&in[i]);
  return 0;
}
