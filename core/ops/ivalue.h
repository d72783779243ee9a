/* Interpreter values: what flows along graph edges at run time.
 *
 * An fbx_ivalue is a small tagged value: None, a tensor, an int, a float, a
 * bool, a string, a device, a list or a tuple. Tensors, strings, lists and
 * tuples are reference counted; copying an ivalue struct does not retain, so
 * use fbx_iv_retain/fbx_iv_release (or the constructors, which hand over a
 * reference).
 *
 *   fbx_ivalue a = fbx_iv_int(3), t = fbx_iv_tensor(tensor);  // t takes the reference
 *   fbx_ivalue l;
 *   FBX_TRY(fbx_iv_list_new(&l, 0));
 *   FBX_TRY(fbx_iv_list_push(&l, a));                          // list takes a's reference
 *   fbx_iv_release(&l); fbx_iv_release(&t);
 *
 * Lists are mutable (aten::append); tuples are not. A device is stored as a
 * string ("cpu", "cuda:0").
 */
#ifndef FBX_OPS_IVALUE_H
#define FBX_OPS_IVALUE_H
#include <stdbool.h>
#include <stdint.h>

#include <fusebox/tensor.h>

#include "base/status.h"
#include "base/strbuf.h"

typedef enum fbx_iv_kind {
  FBX_IV_NONE,
  FBX_IV_TENSOR,
  FBX_IV_INT,
  FBX_IV_FLOAT,
  FBX_IV_BOOL,
  FBX_IV_STR,
  FBX_IV_DEVICE,
  FBX_IV_LIST,
  FBX_IV_TUPLE,
  FBX_IV_UNINIT, /* prim::Uninitialized; never read */
  FBX_IV_KIND_COUNT
} fbx_iv_kind;

typedef struct fbx_iv_str fbx_iv_str;   /* refcounted string */
typedef struct fbx_iv_list fbx_iv_list; /* refcounted list or tuple */

typedef struct fbx_ivalue {
  fbx_iv_kind kind;
  union {
    fbx_tensor *t;
    int64_t i;
    double f;
    bool b;
    fbx_iv_str *s;     /* STR and DEVICE */
    fbx_iv_list *l;    /* LIST and TUPLE */
  } u;
} fbx_ivalue;

struct fbx_iv_list {
  _Atomic long refcount;
  int n, cap;
  fbx_ivalue *items;
};

static inline fbx_ivalue fbx_iv_none(void) { fbx_ivalue v = {.kind = FBX_IV_NONE}; return v; }
static inline fbx_ivalue fbx_iv_int(int64_t i) { fbx_ivalue v = {.kind = FBX_IV_INT, .u.i = i}; return v; }
static inline fbx_ivalue fbx_iv_float(double f) { fbx_ivalue v = {.kind = FBX_IV_FLOAT, .u.f = f}; return v; }
static inline fbx_ivalue fbx_iv_bool(bool b) { fbx_ivalue v = {.kind = FBX_IV_BOOL, .u.b = b}; return v; }
/* Takes over the caller's reference to t. */
static inline fbx_ivalue fbx_iv_tensor(fbx_tensor *t) { fbx_ivalue v = {.kind = FBX_IV_TENSOR, .u.t = t}; return v; }

fbx_status *fbx_iv_str_new(fbx_ivalue *out, const char *s, size_t n);
fbx_status *fbx_iv_device_new(fbx_ivalue *out, const char *s);
const char *fbx_iv_str_data(const fbx_ivalue *v); /* STR or DEVICE */
size_t fbx_iv_str_len(const fbx_ivalue *v);

/* New empty list/tuple with room for cap items. */
fbx_status *fbx_iv_list_new(fbx_ivalue *out, int cap);
fbx_status *fbx_iv_tuple_new(fbx_ivalue *out, int n); /* n items, all None; fill with ->items[i] */
/* Appends, taking over item's reference (released on failure). */
fbx_status *fbx_iv_list_push(fbx_ivalue *list, fbx_ivalue item);
static inline int fbx_iv_list_len(const fbx_ivalue *v) { return v->u.l->n; }
static inline fbx_ivalue *fbx_iv_list_at(const fbx_ivalue *v, int i) { return &v->u.l->items[i]; }

void fbx_iv_retain(const fbx_ivalue *v);
void fbx_iv_release(fbx_ivalue *v); /* sets *v to None */

/* Read a scalar out of an int/float/bool ivalue (or a 1-element tensor for
 * the numeric readers); FBX_ERR_RUNTIME with a message otherwise. */
bool fbx_iv_is_scalar(const fbx_ivalue *v); /* INT FLOAT BOOL */
double fbx_iv_to_double(const fbx_ivalue *v); /* INT FLOAT BOOL */
int64_t fbx_iv_to_int(const fbx_ivalue *v);   /* INT BOOL (FLOAT truncates) */

const char *fbx_iv_kind_name(fbx_iv_kind k);
/* A short description for messages and the CLI: "int 3", "float32[2, 3] ...". */
void fbx_iv_describe(fbx_strbuf *b, const fbx_ivalue *v);

#endif
