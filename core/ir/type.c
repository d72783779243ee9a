#include "ir/type.h"

#include <string.h>

#define SIMPLE_(k) [k] = {.kind = k, .dtype = FBX_DTYPE_UNDEFINED, .rank = -1, .requires_grad = -1}
static fbx_type simple_types[FBX_TYPE_KIND_COUNT] = {
    SIMPLE_(FBX_TYPE_INT),    SIMPLE_(FBX_TYPE_FLOAT),  SIMPLE_(FBX_TYPE_BOOL),
    SIMPLE_(FBX_TYPE_STR),    SIMPLE_(FBX_TYPE_NONE),   SIMPLE_(FBX_TYPE_DEVICE),
    SIMPLE_(FBX_TYPE_NUMBER),
};
#undef SIMPLE_
static fbx_type tensor_any = {.kind = FBX_TYPE_TENSOR, .dtype = FBX_DTYPE_UNDEFINED, .rank = -1,
                              .requires_grad = -1};

fbx_type *fbx_type_simple(fbx_type_kind kind) { return &simple_types[kind]; }

fbx_type *fbx_type_tensor_any(void) { return &tensor_any; }

static bool is_singleton(const fbx_type *t) {
  return t == &tensor_any ||
         (t >= simple_types && t < simple_types + FBX_TYPE_KIND_COUNT);
}

fbx_type *fbx_type_new(fbx_arena *a, fbx_type_kind kind) {
  fbx_type *t = fbx_arena_alloc(a, sizeof *t);
  if (!t) return NULL;
  t->kind = kind;
  t->dtype = FBX_DTYPE_UNDEFINED;
  t->rank = -1;
  t->requires_grad = -1;
  return t;
}

fbx_type *fbx_type_container(fbx_arena *a, fbx_type_kind kind, int nelems, fbx_type *const *elems) {
  fbx_type *t = fbx_type_new(a, kind);
  if (!t) return NULL;
  t->nelems = nelems;
  if (nelems) {
    t->elems = fbx_arena_memdup(a, elems, sizeof(fbx_type *) * (size_t)nelems);
    if (!t->elems) return NULL;
  }
  return t;
}

fbx_type *fbx_type_tensor(fbx_arena *a, fbx_dtype dtype, int rank, const int64_t *sizes,
                          const int64_t *strides, int requires_grad, const char *device) {
  fbx_type *t = fbx_type_new(a, FBX_TYPE_TENSOR);
  if (!t) return NULL;
  t->dtype = dtype;
  t->rank = rank;
  t->requires_grad = (int8_t)requires_grad;
  if (rank > 0) {
    size_t bytes = sizeof(int64_t) * (size_t)rank;
    t->sizes = sizes ? fbx_arena_memdup(a, sizes, bytes) : fbx_arena_alloc(a, bytes);
    if (!t->sizes) return NULL;
    if (!sizes)
      for (int i = 0; i < rank; i++) t->sizes[i] = FBX_SIZE_UNKNOWN;
    if (strides) {
      t->strides = fbx_arena_memdup(a, strides, bytes);
      if (!t->strides) return NULL;
    }
  }
  if (device) {
    t->device = fbx_arena_strdup(a, device);
    if (!t->device) return NULL;
  }
  return t;
}

fbx_type *fbx_type_named(fbx_arena *a, const char *name) {
  fbx_type *t = fbx_type_new(a, FBX_TYPE_NAMED);
  if (!t) return NULL;
  t->name = fbx_arena_strdup(a, name);
  return t->name ? t : NULL;
}

fbx_type *fbx_type_clone(fbx_arena *a, const fbx_type *t) {
  if (is_singleton(t)) return (fbx_type *)t;
  fbx_type *c;
  if (t->kind == FBX_TYPE_TENSOR) {
    c = fbx_type_tensor(a, t->dtype, t->rank, t->sizes, t->strides, t->requires_grad, t->device);
    if (c) c->undefined = t->undefined;
    return c;
  }
  c = fbx_type_new(a, t->kind);
  if (!c) return NULL;
  c->parenthesized = t->parenthesized;
  if (t->name && !(c->name = fbx_arena_strdup(a, t->name))) return NULL;
  c->nelems = t->nelems;
  if (t->nelems) {
    c->elems = fbx_arena_alloc(a, sizeof(fbx_type *) * (size_t)t->nelems);
    if (!c->elems) return NULL;
    for (int i = 0; i < t->nelems; i++)
      if (!(c->elems[i] = fbx_type_clone(a, t->elems[i]))) return NULL;
  }
  return c;
}

static bool str_eq(const char *a, const char *b) {
  if (!a || !b) return a == b;
  return !strcmp(a, b);
}

bool fbx_type_equal(const fbx_type *a, const fbx_type *b) {
  if (a == b) return true;
  if (a->kind != b->kind) return false;
  if (a->kind == FBX_TYPE_TENSOR) {
    if (a->dtype != b->dtype || a->rank != b->rank || a->requires_grad != b->requires_grad ||
        a->undefined != b->undefined || !str_eq(a->device, b->device))
      return false;
    if ((a->strides == NULL) != (b->strides == NULL)) return false;
    for (int i = 0; i < a->rank; i++) {
      if (a->sizes[i] != b->sizes[i]) return false;
      if (a->strides && a->strides[i] != b->strides[i]) return false;
    }
    return true;
  }
  if (a->nelems != b->nelems || !str_eq(a->name, b->name) || a->parenthesized != b->parenthesized)
    return false;
  for (int i = 0; i < a->nelems; i++)
    if (!fbx_type_equal(a->elems[i], b->elems[i])) return false;
  return true;
}

bool fbx_type_contains_tensor(const fbx_type *t) {
  if (t->kind == FBX_TYPE_TENSOR) return true;
  for (int i = 0; i < t->nelems; i++)
    if (fbx_type_contains_tensor(t->elems[i])) return true;
  return false;
}

bool fbx_type_tensor_complete(const fbx_type *t) {
  if (t->kind != FBX_TYPE_TENSOR || t->dtype == FBX_DTYPE_UNDEFINED || t->rank < 0 || !t->device)
    return false;
  if (t->rank > 0 && !t->strides) return false;
  for (int i = 0; i < t->rank; i++)
    if (t->sizes[i] < 0) return false;
  return true;
}

static void print_tensor(fbx_strbuf *b, const fbx_type *t) {
  /* Mirrors TorchScript's printing: the dtype name ("Float") when known,
   * "Tensor" otherwise, and "FloatTensor" when the dtype is known but the
   * rank is not. */
  const char *dname = fbx_dtype_torch_name(t->dtype);
  if (dname) {
    fbx_strbuf_puts(b, dname);
    if (t->rank < 0) fbx_strbuf_puts(b, "Tensor");
  } else {
    fbx_strbuf_puts(b, "Tensor");
  }
  int items = 0;
  if (t->rank >= 0) {
    fbx_strbuf_putc(b, '(');
    for (int i = 0; i < t->rank; i++, items++) {
      if (i) fbx_strbuf_puts(b, ", ");
      int64_t s = t->sizes[i];
      if (s >= 0)
        fbx_strbuf_printf(b, "%lld", (long long)s);
      else if (s == FBX_SIZE_UNKNOWN)
        fbx_strbuf_putc(b, '*');
      else
        fbx_strbuf_printf(b, "SS(%lld)", (long long)s);
    }
    if (t->strides && t->rank > 0) {
      fbx_strbuf_puts(b, ", strides=[");
      for (int i = 0; i < t->rank; i++)
        fbx_strbuf_printf(b, "%s%lld", i ? ", " : "", (long long)t->strides[i]);
      fbx_strbuf_putc(b, ']');
    }
    if (t->requires_grad >= 0)
      fbx_strbuf_printf(b, "%srequires_grad=%d", items++ ? ", " : "", t->requires_grad);
    if (t->device) fbx_strbuf_printf(b, "%sdevice=%s", items++ ? ", " : "", t->device);
    fbx_strbuf_putc(b, ')');
  } else {
    if (t->requires_grad >= 0)
      fbx_strbuf_printf(b, "(requires_grad=%d", t->requires_grad), items++;
    if (t->device) fbx_strbuf_printf(b, "%sdevice=%s", items++ ? ", " : "(", t->device);
    if (items) fbx_strbuf_putc(b, ')');
  }
  if (t->undefined) fbx_strbuf_puts(b, "[Undefined]");
}

void fbx_type_print(fbx_strbuf *b, const fbx_type *t) {
  switch (t->kind) {
    case FBX_TYPE_TENSOR: print_tensor(b, t); return;
    case FBX_TYPE_INT: fbx_strbuf_puts(b, "int"); return;
    case FBX_TYPE_FLOAT: fbx_strbuf_puts(b, "float"); return;
    case FBX_TYPE_BOOL: fbx_strbuf_puts(b, "bool"); return;
    case FBX_TYPE_STR: fbx_strbuf_puts(b, "str"); return;
    case FBX_TYPE_NONE: fbx_strbuf_puts(b, "NoneType"); return;
    case FBX_TYPE_DEVICE: fbx_strbuf_puts(b, "Device"); return;
    case FBX_TYPE_NUMBER: fbx_strbuf_puts(b, "number"); return;
    case FBX_TYPE_OPTIONAL:
      fbx_type_print(b, t->elems[0]);
      fbx_strbuf_putc(b, '?');
      return;
    case FBX_TYPE_LIST:
      fbx_type_print(b, t->elems[0]);
      fbx_strbuf_puts(b, "[]");
      return;
    case FBX_TYPE_TUPLE:
    case FBX_TYPE_DICT:
    case FBX_TYPE_NAMED:
      if (t->kind == FBX_TYPE_DICT) fbx_strbuf_puts(b, "Dict");
      if (t->kind == FBX_TYPE_NAMED) fbx_strbuf_puts(b, t->name);
      if (t->kind != FBX_TYPE_NAMED || t->parenthesized) {
        fbx_strbuf_putc(b, '(');
        for (int i = 0; i < t->nelems; i++) {
          if (i) fbx_strbuf_puts(b, ", ");
          fbx_type_print(b, t->elems[i]);
        }
        fbx_strbuf_putc(b, ')');
      }
      return;
    case FBX_TYPE_KIND_COUNT: break;
  }
  fbx_strbuf_puts(b, "<?>");
}

/* Kinds that one run-time scalar may be declared as: TorchScript passes an
 * int where a float or number is expected, and a bool where an int is. */
static bool scalar_kind(fbx_type_kind k) {
  return k == FBX_TYPE_INT || k == FBX_TYPE_FLOAT || k == FBX_TYPE_BOOL || k == FBX_TYPE_NUMBER;
}

bool fbx_type_may_agree(const fbx_type *a, const fbx_type *b) {
  if (!a || !b) return true;
  /* Named types (Any, Scalar, t, classes, futures) are opaque: anything may agree. */
  if (a->kind == FBX_TYPE_NAMED || b->kind == FBX_TYPE_NAMED) return true;
  if (a->kind == FBX_TYPE_OPTIONAL || b->kind == FBX_TYPE_OPTIONAL) {
    const fbx_type *x = a->kind == FBX_TYPE_OPTIONAL ? a->elems[0] : a;
    const fbx_type *y = b->kind == FBX_TYPE_OPTIONAL ? b->elems[0] : b;
    /* None, or what the optional refines to. */
    return x->kind == FBX_TYPE_NONE || y->kind == FBX_TYPE_NONE || fbx_type_may_agree(x, y);
  }
  if (scalar_kind(a->kind) && scalar_kind(b->kind)) return true;
  if ((a->kind == FBX_TYPE_STR || a->kind == FBX_TYPE_DEVICE) && (b->kind == FBX_TYPE_STR || b->kind == FBX_TYPE_DEVICE))
    return true;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case FBX_TYPE_TUPLE:
    case FBX_TYPE_DICT:
      if (a->nelems != b->nelems) return false;
      /* fallthrough */
    case FBX_TYPE_LIST:
      for (int i = 0; i < a->nelems && i < b->nelems; i++)
        if (!fbx_type_may_agree(a->elems[i], b->elems[i])) return false;
      return true;
    default: return true; /* tensors: dtype and shape are refinements the profiler may change */
  }
}
