/* The embedding API's run on DLPack tensors (<fusebox/fusebox.h>): inputs
 * are wrapped without copying (borrowed for the call), outputs exported as
 * new DLManagedTensors. An output that would alias a borrowed input's memory
 * is copied, since the caller may free the input right after the run; so is
 * what a forward's tape saved of a borrowed input (import_forward). */
#include <string.h>

#include "base/alloc.h"
#include "base/strbuf.h"
#include "exec/executor.h"
#include "ir/text.h"
#include "ops/optable.h"

static const char *device_name(int32_t t) {
  switch (t) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLOpenCL: return "opencl";
    default: return "another device";
  }
}

/* One input: a tensor, or the scalar a 0-d tensor holds where the graph takes one. */
static fbx_status *import_input(const fbx_value *gin, int i, DLManagedTensor *m, fbx_ivalue *out) {
  if (!m) {
    *out = fbx_iv_none();
    return NULL;
  }
  const DLTensor *dl = &m->dl_tensor;
  if (dl->device.device_type != kDLCPU && dl->device.device_type != kDLCUDAHost)
    return fbx_status_new(FBX_ERR_UNSUPPORTED, "input %d (%%%s): a tensor on %s; fusebox takes cpu tensors", i,
                          gin->name, device_name(dl->device.device_type));
  if (dl->ndim > 0 && !dl->shape)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "input %d (%%%s): shape is NULL", i, gin->name);
  fbx_tensor *t = NULL;
  fbx_status *st = fbx_tensor_wrap_dltensor(&t, dl);
  if (st) return fbx_status_wrap(st, "input %d (%%%s)", i, gin->name);
  const fbx_type *ty = gin->type;
  if (ty->kind == FBX_TYPE_OPTIONAL) ty = ty->elems[0];
  fbx_type_kind k = ty->kind;
  if (k == FBX_TYPE_INT || k == FBX_TYPE_FLOAT || k == FBX_TYPE_BOOL || k == FBX_TYPE_NUMBER) {
    if (t->ndim != 0) {
      int ndim = t->ndim;
      fbx_tensor_release(t);
      return fbx_status_new(FBX_ERR_INVALID_ARG, "input %d (%%%s) is a scalar: pass a 0-d tensor, got %d dims", i,
                            gin->name, ndim);
    }
    bool floating = fbx_dtype_is_floating(t->dtype);
    if (k == FBX_TYPE_BOOL) *out = fbx_iv_bool(fbx_tensor_get_f64(t, 0) != 0);
    else if (k == FBX_TYPE_FLOAT || (k == FBX_TYPE_NUMBER && floating)) *out = fbx_iv_float(fbx_tensor_get_f64(t, 0));
    else if (floating) {
      fbx_dtype dt = t->dtype;
      fbx_tensor_release(t);
      return fbx_status_new(FBX_ERR_INVALID_ARG, "input %d (%%%s) is an int: got a %s tensor", i, gin->name,
                            fbx_dtype_name(dt));
    } else *out = fbx_iv_int(fbx_tensor_get_i64(t, 0));
    fbx_tensor_release(t);
    return NULL;
  }
  *out = fbx_iv_tensor(t);
  return NULL;
}

typedef struct flat_ctx {
  DLManagedTensor **out;
  int n, cap;
  fbx_tensor *const *borrowed;
  int nborrowed;
} flat_ctx;

static fbx_status *export_one(flat_ctx *c, const fbx_ivalue *v) {
  if (v->kind == FBX_IV_TUPLE) {
    for (int i = 0; i < v->u.l->n; i++) FBX_TRY(export_one(c, &v->u.l->items[i]));
    return NULL;
  }
  if (c->n == c->cap) return fbx_status_new(FBX_ERR_INTERNAL, "more outputs than the graph's types say");
  fbx_tensor *t = NULL;
  switch (v->kind) {
    case FBX_IV_TENSOR: {
      bool alias = false;
      for (int i = 0; i < c->nborrowed; i++)
        alias |= c->borrowed[i] && c->borrowed[i]->storage == v->u.t->storage;
      if (alias) FBX_TRY(fbx_tensor_clone_as(&t, v->u.t, v->u.t->dtype));
      else t = fbx_tensor_retain(v->u.t);
      break;
    }
    case FBX_IV_INT: FBX_TRY(fbx_tensor_from_data(&t, FBX_DTYPE_INT64, 0, NULL, &v->u.i)); break;
    case FBX_IV_FLOAT: FBX_TRY(fbx_tensor_from_data(&t, FBX_DTYPE_FLOAT64, 0, NULL, &v->u.f)); break;
    case FBX_IV_BOOL: {
      uint8_t b = v->u.b;
      FBX_TRY(fbx_tensor_from_data(&t, FBX_DTYPE_BOOL, 0, NULL, &b));
      break;
    }
    default:
      return fbx_status_new(FBX_ERR_UNSUPPORTED, "output %d is a %s, which has no DLPack form", c->n,
                            fbx_iv_kind_name(v->kind));
  }
  fbx_status *st = fbx_tensor_to_dlpack(&c->out[c->n], t);
  fbx_tensor_release(t); /* the export holds its own reference */
  if (st) return st;
  c->n++;
  return NULL;
}

/* What fbx_executor_run and fbx_executor_forward (named fn in messages)
 * check before running: pointers given, and as many inputs and (flattened)
 * outputs as the graph has. Clears outputs[0..nout). */
static fbx_status *check_call(const char *fn, fbx_executor *ex, DLManagedTensor *const *inputs, int nin,
                              DLManagedTensor **outputs, int nout) {
  if (!ex) return fbx_status_new(FBX_ERR_INVALID_ARG, "%s: NULL executor", fn);
  if (nout > 0 && !outputs) return fbx_status_new(FBX_ERR_INVALID_ARG, "%s: NULL outputs", fn);
  if (nin > 0 && !inputs) return fbx_status_new(FBX_ERR_INVALID_ARG, "%s: NULL inputs", fn);
  for (int i = 0; i < nout; i++) outputs[i] = NULL;
  const fbx_graph *g = fbx_executor_graph(ex);
  int gin = fbx_graph_ninputs(g), flat = fbx_executor_num_outputs(ex);
  if (nin != gin)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "the graph takes %d input%s, %d given", gin, gin == 1 ? "" : "s", nin);
  if (nout != flat)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "the graph gives %d output%s, room for %d given", flat,
                          flat == 1 ? "" : "s", nout);
  return NULL;
}

/* Deletes the n outputs exported before a failure. */
static void drop_exported(DLManagedTensor **outputs, int n) {
  for (int i = 0; i < n; i++) {
    if (outputs[i] && outputs[i]->deleter) outputs[i]->deleter(outputs[i]);
    outputs[i] = NULL;
  }
}

fbx_status *fbx_executor_run(fbx_executor *ex, DLManagedTensor *const *inputs, int nin, DLManagedTensor **outputs,
                             int nout) {
  FBX_TRY(check_call("fbx_executor_run", ex, inputs, nin, outputs, nout));
  const fbx_graph *g = fbx_executor_graph(ex);
  int gin = fbx_graph_ninputs(g), gout = fbx_graph_noutputs(g);
  fbx_ivalue *in = fbx_calloc((size_t)gin + 1, sizeof *in);
  fbx_ivalue *out = fbx_calloc((size_t)gout + 1, sizeof *out);
  fbx_tensor **borrowed = fbx_calloc((size_t)gin + 1, sizeof *borrowed);
  fbx_status *st = in && out && borrowed ? NULL : fbx_status_nomem();
  for (int i = 0; i < gin && !st; i++) {
    st = import_input(fbx_graph_input(g, i), i, inputs[i], &in[i]);
    if (!st && in[i].kind == FBX_IV_TENSOR) borrowed[i] = in[i].u.t;
  }
  if (!st) st = fbx_executor_run_values(ex, in, gin, out, gout, 0);
  flat_ctx c = {.out = outputs, .cap = nout, .borrowed = borrowed, .nborrowed = gin};
  for (int i = 0; i < gout && !st; i++) st = export_one(&c, &out[i]);
  if (st) drop_exported(outputs, c.n);
  for (int i = 0; in && i < gin; i++) fbx_iv_release(&in[i]);
  for (int i = 0; out && i < gout; i++) fbx_iv_release(&out[i]);
  fbx_free(in);
  fbx_free(out);
  fbx_free(borrowed);
  return st;
}

/* ---- gradients ------------------------------------------------------------------------------ */

/* Does a node of blk (or of its nested blocks and subgraphs) write into its
 * first input? */
static bool writes_in_place(const fbx_block *blk) {
  for (const fbx_node *n = fbx_block_first(blk); n; n = n->next) {
    if (fbx_op_kind_has_flag(n->kind, FBX_OPF_INPLACE)) return true;
    for (int k = 0; k < n->nblocks; k++)
      if (writes_in_place(n->blocks[k])) return true;
    const fbx_graph *sub = fbx_node_subgraph(n);
    if (sub && writes_in_place(sub->block)) return true;
  }
  return false;
}

/* The tape may keep an input past the call (as a value saved for the
 * backward), so fbx_executor_forward borrows each tensor input for the
 * call, like fbx_executor_run, and afterwards copies what the tape saved of
 * its memory (fbx_grad_unborrow): only inputs the backward reads are
 * copied. A graph that writes in place gets copies of all its tensor inputs
 * up front instead: the write must not reach the caller's tensor, and the
 * tape's bookkeeping of in-place writes into inputs is not worth
 * reasoning about for that rare case. */
static fbx_status *import_forward(const fbx_graph *g, DLManagedTensor *const *inputs, int nin, bool copy,
                                  fbx_ivalue *in) {
  for (int i = 0; i < nin; i++) {
    FBX_TRY(import_input(fbx_graph_input(g, i), i, inputs[i], &in[i]));
    if (!copy || in[i].kind != FBX_IV_TENSOR) continue;
    fbx_tensor *c = NULL;
    FBX_TRY(fbx_tensor_clone_as(&c, in[i].u.t, in[i].u.t->dtype));
    fbx_iv_release(&in[i]);
    in[i] = fbx_iv_tensor(c);
  }
  return NULL;
}

fbx_status *fbx_executor_forward(fbx_executor *ex, DLManagedTensor *const *inputs, int nin, const int *requires_grad,
                                 DLManagedTensor **outputs, int nout, fbx_grad_handle **handle) {
  if (handle) *handle = NULL;
  if (ex && !handle) return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_executor_forward: NULL handle");
  FBX_TRY(check_call("fbx_executor_forward", ex, inputs, nin, outputs, nout));
  const fbx_graph *g = fbx_executor_graph(ex);
  int gin = fbx_graph_ninputs(g), gout = fbx_graph_noutputs(g);
  fbx_ivalue *in = fbx_calloc((size_t)gin + 1, sizeof *in);
  fbx_ivalue *out = fbx_calloc((size_t)gout + 1, sizeof *out);
  bool *rg = fbx_calloc((size_t)gin + 1, sizeof *rg);
  fbx_tensor **borrowed = fbx_calloc((size_t)gin + 1, sizeof *borrowed);
  fbx_status *st = in && out && rg && borrowed ? NULL : fbx_status_nomem();
  bool copy = !st && writes_in_place(g->block);
  if (!st) st = import_forward(g, inputs, nin, copy, in);
  for (int i = 0; i < gin && !st && !copy; i++) borrowed[i] = in[i].kind == FBX_IV_TENSOR ? in[i].u.t : NULL;
  for (int i = 0; i < gin && requires_grad; i++) rg[i] = requires_grad[i] != 0;
  fbx_grad_handle *h = NULL;
  if (!st) st = fbx_executor_forward_values(ex, in, gin, requires_grad ? rg : NULL, out, gout, 0, &h);
  for (int i = 0; i < gin && !st; i++)
    if (borrowed[i]) st = fbx_grad_unborrow(h, borrowed[i], NULL);
  flat_ctx c = {.out = outputs, .cap = nout, .borrowed = borrowed, .nborrowed = gin};
  for (int i = 0; i < gout && !st; i++) st = export_one(&c, &out[i]);
  if (st) {
    drop_exported(outputs, c.n);
    fbx_grad_free(h);
  } else {
    *handle = h;
  }
  for (int i = 0; in && i < gin; i++) fbx_iv_release(&in[i]);
  for (int i = 0; out && i < gout; i++) fbx_iv_release(&out[i]);
  fbx_free(in);
  fbx_free(out);
  fbx_free(rg);
  fbx_free(borrowed);
  return st;
}

fbx_status *fbx_executor_backward(fbx_grad_handle *h, DLManagedTensor *const *grad_outputs, int n,
                                  DLManagedTensor **grad_inputs, int nin) {
  if (!h) return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_executor_backward: NULL handle");
  if ((n > 0 && !grad_outputs) || (nin > 0 && !grad_inputs))
    return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_executor_backward: NULL %s", grad_inputs ? "grad_outputs" : "grad_inputs");
  for (int i = 0; i < nin; i++) grad_inputs[i] = NULL;
  fbx_ivalue *gout = fbx_calloc((size_t)(n > 0 ? n : 1), sizeof *gout);
  fbx_ivalue *gin = fbx_calloc((size_t)(nin > 0 ? nin : 1), sizeof *gin);
  fbx_status *st = gout && gin ? NULL : fbx_status_nomem();
  for (int k = 0; k < n && !st; k++) {
    if (!grad_outputs[k]) continue;
    const DLTensor *dl = &grad_outputs[k]->dl_tensor;
    if (dl->device.device_type != kDLCPU && dl->device.device_type != kDLCUDAHost) {
      st = fbx_status_new(FBX_ERR_UNSUPPORTED, "grad_outputs[%d]: a tensor on %s; fusebox takes cpu tensors", k,
                          device_name(dl->device.device_type));
      break;
    }
    fbx_tensor *t = NULL;
    st = fbx_tensor_wrap_dltensor(&t, dl); /* borrowed for the call: backward keeps nothing of it */
    if (st) st = fbx_status_wrap(st, "grad_outputs[%d]", k);
    else gout[k] = fbx_iv_tensor(t);
  }
  if (!st) st = fbx_executor_backward_values(h, gout, n, gin, nin);
  /* A gradient may be a grad output itself (the gradient of x + y is passed through). */
  fbx_tensor **borrowed = fbx_calloc((size_t)(n > 0 ? n : 1), sizeof *borrowed);
  if (!st && !borrowed) st = fbx_status_nomem();
  for (int k = 0; k < n && borrowed; k++) borrowed[k] = gout[k].kind == FBX_IV_TENSOR ? gout[k].u.t : NULL;
  int done = 0;
  for (int i = 0; i < nin && !st; i++, done++) {
    if (gin[i].kind != FBX_IV_TENSOR) continue;
    flat_ctx c = {.out = &grad_inputs[i], .cap = 1, .borrowed = borrowed, .nborrowed = n};
    st = export_one(&c, &gin[i]);
  }
  if (st) drop_exported(grad_inputs, done);
  for (int k = 0; gout && k < n; k++) fbx_iv_release(&gout[k]);
  for (int i = 0; gin && i < nin; i++) fbx_iv_release(&gin[i]);
  fbx_free(gout);
  fbx_free(gin);
  fbx_free(borrowed);
  return st;
}
