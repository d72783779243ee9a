/* IR types, as TorchScript prints them.
 *
 *   Tensor                                   dtype/rank unknown
 *   Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)
 *   Long(*, 4)                               rank 2, first size unknown
 *   FloatTensor(requires_grad=0)             dtype known, rank unknown
 *   int  float  bool  str  NoneType  Device  Scalar  number ...
 *   int[]  Tensor?  (Tensor, int)  Dict(str, Tensor)  __torch__.Foo
 *
 * Types live in a graph's arena and are immutable once built; share them
 * freely inside one graph and clone them (fbx_type_clone) into another.
 */
#ifndef FBX_IR_TYPE_H
#define FBX_IR_TYPE_H
#include <stdbool.h>
#include <stdint.h>

#include <fusebox/dtype.h>

#include "base/arena.h"
#include "base/strbuf.h"

typedef enum fbx_type_kind {
  FBX_TYPE_TENSOR,
  FBX_TYPE_INT,
  FBX_TYPE_FLOAT,
  FBX_TYPE_BOOL,
  FBX_TYPE_STR,
  FBX_TYPE_NONE,     /* NoneType */
  FBX_TYPE_DEVICE,
  FBX_TYPE_NUMBER,   /* number: int or float */
  FBX_TYPE_OPTIONAL, /* elems[0]? */
  FBX_TYPE_LIST,     /* elems[0][] */
  FBX_TYPE_TUPLE,    /* (elems...) */
  FBX_TYPE_DICT,     /* Dict(elems[0], elems[1]) */
  FBX_TYPE_NAMED,    /* any other named type: Scalar, Layout, Any, __torch__.X,
                        Future(int) — name, plus elems when parenthesized */
  FBX_TYPE_KIND_COUNT
} fbx_type_kind;

/* Unknown size in a tensor type ("*"). Values below it are symbolic sizes,
 * printed SS(value). */
#define FBX_SIZE_UNKNOWN (-1)

typedef struct fbx_type fbx_type;
struct fbx_type {
  fbx_type_kind kind;
  /* FBX_TYPE_TENSOR */
  fbx_dtype dtype;     /* FBX_DTYPE_UNDEFINED when unknown */
  int rank;            /* -1 when unknown */
  int64_t *sizes;      /* rank entries; FBX_SIZE_UNKNOWN or symbolic when unknown */
  int64_t *strides;    /* rank entries, or NULL when not known completely */
  int8_t requires_grad; /* -1 unknown, 0, 1 */
  int8_t undefined;    /* 1: printed with "[Undefined]" */
  const char *device;  /* "cpu", "cuda:0"; NULL when unknown */
  /* containers and FBX_TYPE_NAMED */
  int nelems;
  fbx_type **elems;
  const char *name;    /* FBX_TYPE_NAMED; also optional field names are not kept */
  bool parenthesized;  /* FBX_TYPE_NAMED printed as name(elems...) */
};

/* Shared immutable singletons for the simple kinds (never freed). */
fbx_type *fbx_type_simple(fbx_type_kind kind); /* INT FLOAT BOOL STR NONE DEVICE NUMBER */
fbx_type *fbx_type_tensor_any(void);           /* plain `Tensor` */

/* Builders (arena-allocated; NULL when out of memory). */
fbx_type *fbx_type_new(fbx_arena *a, fbx_type_kind kind);
fbx_type *fbx_type_container(fbx_arena *a, fbx_type_kind kind, int nelems, fbx_type *const *elems);
fbx_type *fbx_type_tensor(fbx_arena *a, fbx_dtype dtype, int rank, const int64_t *sizes,
                          const int64_t *strides, int requires_grad, const char *device);
fbx_type *fbx_type_named(fbx_arena *a, const char *name);
/* Deep copy into another arena. Singletons are returned as they are. */
fbx_type *fbx_type_clone(fbx_arena *a, const fbx_type *t);

bool fbx_type_equal(const fbx_type *a, const fbx_type *b);
/* Could one run-time value have both types? False only for a definite
 * contradiction: a Tensor declared where a 3-tuple is produced, tuples of
 * different lengths, a list where a tensor is. Tensor refinements (dtype,
 * sizes), int/float/bool/number, str/Device, None against an Optional, and
 * named types (Any, Scalar, classes) all agree. The verifier uses it to
 * check a declared type against what produces the value. */
bool fbx_type_may_agree(const fbx_type *a, const fbx_type *b);
/* True for Tensor types and for containers/optionals that contain one. */
bool fbx_type_contains_tensor(const fbx_type *t);
/* True when all of dtype, rank, sizes, strides and device are known. */
bool fbx_type_tensor_complete(const fbx_type *t);
/* Append the TorchScript spelling of t. */
void fbx_type_print(fbx_strbuf *b, const fbx_type *t);

#endif
