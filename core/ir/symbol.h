/* Interned symbols: `aten::add`, `prim::Constant`, attribute names.
 *
 * A symbol is a small integer; equal strings intern to equal symbols, so
 * comparing kinds is an integer compare. The symbols the core refers to by
 * name are predeclared below (FBX_SYM_prim_Constant, ...); any other string
 * is interned on demand. The table is global, thread-safe and lives until
 * process exit.
 *
 *   fbx_sym add;
 *   if (fbx_sym_intern(&add, "aten::add", 9) == 0) ...;
 *   printf("%s\n", fbx_sym_str(FBX_SYM_prim_If));   // "prim::If"
 */
#ifndef FBX_IR_SYMBOL_H
#define FBX_IR_SYMBOL_H
#include <stddef.h>
#include <stdint.h>

typedef uint32_t fbx_sym;

/* X(namespace, name): the symbol `namespace::name`. Attribute names use the
 * `attr` namespace but print without it. */
#define FBX_SYM_LIST(X)                                                           \
  X(prim, Param) X(prim, Return) X(prim, Constant) X(prim, If) X(prim, Loop)      \
  X(prim, ListConstruct) X(prim, ListUnpack) X(prim, TupleConstruct)             \
  X(prim, TupleUnpack) X(prim, TupleIndex) X(prim, TupleSlice)                  \
  X(prim, DictConstruct) X(prim, RaiseException) X(prim, Print)                 \
  X(prim, Uninitialized) X(prim, unchecked_cast) X(prim, NumToTensor)           \
  X(prim, GetAttr) X(prim, SetAttr) X(prim, CallFunction) X(prim, CallMethod)   \
  X(prim, FusionGroup) X(prim, DifferentiableGraph) X(prim, TensorExprGroup)    \
  X(prim, CudaFusionGroup) X(prim, TypeCheck) X(prim, RequiresGradCheck)       \
  X(prim, FallbackGraph) X(prim, BailOut) X(prim, Guard) X(prim, profile)       \
  X(prim, device) X(prim, dtype) X(prim, shape) X(prim, layout)                \
  X(prim, requires_grad) X(prim, is_cuda) X(prim, AutogradZero)                 \
  X(prim, AutogradAdd) X(prim, Enter) X(prim, Exit) X(prim, rpc_async)          \
  X(prim, min) X(prim, max) X(prim, abs)                                        \
  X(fusebox, FusionGroup) X(fusebox, TypeGuard)                                 \
  X(aten, t) X(aten, contiguous) X(aten, size) X(aten, len) X(aten, __getitem__) \
  X(aten, __is__) X(aten, __isnot__) X(aten, __not__) X(aten, append)          \
  X(aten, format) X(aten, warn) X(aten, dropout) X(aten, rand) X(aten, randn)   \
  X(aten, rand_like) X(aten, randn_like) X(aten, randint) X(aten, bernoulli)    \
  X(aten, normal) X(aten, uniform_) X(aten, manual_seed) X(aten, _set_item)     \
  X(aten, copy_) X(aten, detach) X(aten, dim)

/* Attribute names, interned bare ("value", "Subgraph"): FBX_SYM_attr_value. */
#define FBX_SYM_ATTR_LIST(X) X(value) X(Subgraph)

typedef enum fbx_builtin_sym {
#define FBX_SYM_ENUM_(ns, name) FBX_SYM_##ns##_##name,
  FBX_SYM_LIST(FBX_SYM_ENUM_)
#undef FBX_SYM_ENUM_
#define FBX_SYM_ATTR_ENUM_(name) FBX_SYM_attr_##name,
  FBX_SYM_ATTR_LIST(FBX_SYM_ATTR_ENUM_)
#undef FBX_SYM_ATTR_ENUM_
  FBX_SYM_BUILTIN_COUNT
} fbx_builtin_sym;

/* Intern s[0..n). Returns 0 on success, -1 when out of memory. */
int fbx_sym_intern(fbx_sym *out, const char *s, size_t n);
/* The interned string (NUL-terminated, lives forever). */
const char *fbx_sym_str(fbx_sym s);
/* Returns 1 if `s` starts with namespace `ns` ("aten", "prim", ...). */
int fbx_sym_in_ns(fbx_sym s, const char *ns);
/* The part after "::" (the whole string if there is none). */
const char *fbx_sym_unqual(fbx_sym s);

#endif
