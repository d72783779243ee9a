#include "ops/ivalue.h"

#include <stdatomic.h>
#include <string.h>

#include "base/alloc.h"

struct fbx_iv_str {
  _Atomic long refcount;
  size_t n;
  char data[];
};

static const char *const kind_names[FBX_IV_KIND_COUNT] = {
    "None", "Tensor", "int", "float", "bool", "str", "Device", "list", "tuple", "uninitialized",
};

const char *fbx_iv_kind_name(fbx_iv_kind k) { return (unsigned)k < FBX_IV_KIND_COUNT ? kind_names[k] : "?"; }

static fbx_status *str_new(fbx_ivalue *out, fbx_iv_kind kind, const char *s, size_t n) {
  fbx_iv_str *p = fbx_malloc(sizeof *p + n + 1);
  if (!p) return fbx_status_nomem();
  atomic_init(&p->refcount, 1);
  p->n = n;
  memcpy(p->data, s, n);
  p->data[n] = '\0';
  out->kind = kind;
  out->u.s = p;
  return NULL;
}

fbx_status *fbx_iv_str_new(fbx_ivalue *out, const char *s, size_t n) { return str_new(out, FBX_IV_STR, s, n); }

fbx_status *fbx_iv_device_new(fbx_ivalue *out, const char *s) {
  return str_new(out, FBX_IV_DEVICE, s, strlen(s));
}

const char *fbx_iv_str_data(const fbx_ivalue *v) { return v->u.s->data; }
size_t fbx_iv_str_len(const fbx_ivalue *v) { return v->u.s->n; }

static fbx_status *list_new(fbx_ivalue *out, fbx_iv_kind kind, int cap) {
  fbx_iv_list *l = fbx_calloc(1, sizeof *l);
  if (!l) return fbx_status_nomem();
  if (cap > 0 && !(l->items = fbx_calloc((size_t)cap, sizeof *l->items))) {
    fbx_free(l);
    return fbx_status_nomem();
  }
  atomic_init(&l->refcount, 1);
  l->cap = cap > 0 ? cap : 0;
  out->kind = kind;
  out->u.l = l;
  return NULL;
}

fbx_status *fbx_iv_list_new(fbx_ivalue *out, int cap) { return list_new(out, FBX_IV_LIST, cap); }

fbx_status *fbx_iv_tuple_new(fbx_ivalue *out, int n) {
  FBX_TRY(list_new(out, FBX_IV_TUPLE, n));
  out->u.l->n = n; /* calloc'd items are FBX_IV_NONE (0) */
  return NULL;
}

fbx_status *fbx_iv_list_push(fbx_ivalue *list, fbx_ivalue item) {
  fbx_iv_list *l = list->u.l;
  if (l->n == l->cap) {
    int ncap = l->cap ? l->cap * 2 : 4;
    fbx_ivalue *ni = fbx_realloc(l->items, sizeof *ni * (size_t)ncap);
    if (!ni) {
      fbx_iv_release(&item);
      return fbx_status_nomem();
    }
    l->items = ni;
    l->cap = ncap;
  }
  l->items[l->n++] = item;
  return NULL;
}

void fbx_iv_retain(const fbx_ivalue *v) {
  switch (v->kind) {
    case FBX_IV_TENSOR: fbx_tensor_retain(v->u.t); break;
    case FBX_IV_STR:
    case FBX_IV_DEVICE: atomic_fetch_add(&v->u.s->refcount, 1); break;
    case FBX_IV_LIST:
    case FBX_IV_TUPLE: atomic_fetch_add(&v->u.l->refcount, 1); break;
    default: break;
  }
}

void fbx_iv_release(fbx_ivalue *v) {
  switch (v->kind) {
    case FBX_IV_TENSOR: fbx_tensor_release(v->u.t); break;
    case FBX_IV_STR:
    case FBX_IV_DEVICE:
      if (atomic_fetch_sub(&v->u.s->refcount, 1) == 1) fbx_free(v->u.s);
      break;
    case FBX_IV_LIST:
    case FBX_IV_TUPLE:
      if (atomic_fetch_sub(&v->u.l->refcount, 1) == 1) {
        for (int i = 0; i < v->u.l->n; i++) fbx_iv_release(&v->u.l->items[i]);
        fbx_free(v->u.l->items);
        fbx_free(v->u.l);
      }
      break;
    default: break;
  }
  v->kind = FBX_IV_NONE;
}

bool fbx_iv_is_scalar(const fbx_ivalue *v) {
  return v->kind == FBX_IV_INT || v->kind == FBX_IV_FLOAT || v->kind == FBX_IV_BOOL;
}

double fbx_iv_to_double(const fbx_ivalue *v) {
  switch (v->kind) {
    case FBX_IV_INT: return (double)v->u.i;
    case FBX_IV_FLOAT: return v->u.f;
    case FBX_IV_BOOL: return v->u.b;
    default: return 0;
  }
}

int64_t fbx_iv_to_int(const fbx_ivalue *v) {
  switch (v->kind) {
    case FBX_IV_INT: return v->u.i;
    case FBX_IV_FLOAT: return (int64_t)v->u.f;
    case FBX_IV_BOOL: return v->u.b;
    default: return 0;
  }
}

void fbx_iv_describe(fbx_strbuf *b, const fbx_ivalue *v) {
  switch (v->kind) {
    case FBX_IV_TENSOR: {
      char line[512];
      fbx_tensor_summary(line, sizeof line, v->u.t);
      fbx_strbuf_puts(b, line);
      return;
    }
    case FBX_IV_INT: fbx_strbuf_printf(b, "int %lld", (long long)v->u.i); return;
    case FBX_IV_FLOAT: fbx_strbuf_printf(b, "float %.17g", v->u.f); return;
    case FBX_IV_BOOL: fbx_strbuf_printf(b, "bool %s", v->u.b ? "True" : "False"); return;
    case FBX_IV_STR: fbx_strbuf_printf(b, "str \"%s\"", v->u.s->data); return;
    case FBX_IV_DEVICE: fbx_strbuf_printf(b, "Device %s", v->u.s->data); return;
    case FBX_IV_LIST:
    case FBX_IV_TUPLE:
      fbx_strbuf_puts(b, v->kind == FBX_IV_LIST ? "[" : "(");
      for (int i = 0; i < v->u.l->n; i++) {
        if (i) fbx_strbuf_puts(b, ", ");
        fbx_iv_describe(b, &v->u.l->items[i]);
      }
      fbx_strbuf_puts(b, v->kind == FBX_IV_LIST ? "]" : ")");
      return;
    default: fbx_strbuf_puts(b, fbx_iv_kind_name(v->kind)); return;
  }
}
