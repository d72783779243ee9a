/* Op table rows: control and structure, run by the interpreter itself.
 * (See ops/optable.h for the columns.)
 *
 * prim::Constant is materialized once when the interpreter prepares a graph;
 * prim::If and prim::Loop run blocks; the list/tuple constructors and
 * unpackers have a variable number of inputs or outputs, which a kernel's
 * fixed signature cannot express, so the interpreter builds and splits those
 * containers itself (their schemas describe the inputs only: one output per
 * element for the unpackers). Their kernel, fbx_k_interp, only reports that
 * the interpreter should have handled the node. prim::RaiseException is a
 * real kernel: it returns the error the graph raises. */
#ifndef FBX_OPS_LIST_CONTROL_H
#define FBX_OPS_LIST_CONTROL_H

#define FBX_OPS_CONTROL(X)                                                                        \
  X(prim_Constant, "prim::Constant() -> Any", FBX_OPCAT_CONTROL, FBX_DT_NONE, FBX_SH_NONE, 0,     \
    fbx_k_interp)                                                                                 \
  X(prim_If, "prim::If(bool cond, ...) -> Any", FBX_OPCAT_CONTROL, FBX_DT_NONE, FBX_SH_NONE, 0,   \
    fbx_k_interp)                                                                                 \
  X(prim_Loop, "prim::Loop(int max_trip_count, bool cond, ...) -> Any", FBX_OPCAT_CONTROL,        \
    FBX_DT_NONE, FBX_SH_NONE, 0, fbx_k_interp)                                                    \
  X(prim_RaiseException, "prim::RaiseException(str msg, str? cls=None) -> ()", FBX_OPCAT_CONTROL, \
    FBX_DT_NONE, FBX_SH_NONE, FBX_OPF_SIDE_EFFECT, fbx_k_raise)                                    \
  X(prim_Uninitialized, "prim::Uninitialized() -> Any", FBX_OPCAT_CONTROL, FBX_DT_NONE,           \
    FBX_SH_NONE, 0, fbx_k_interp)                                                                 \
  X(prim_ListConstruct, "prim::ListConstruct(...) -> Any", FBX_OPCAT_CONTROL, FBX_DT_NONE,        \
    FBX_SH_NONE, FBX_OPF_MUTABLE_OUT, fbx_k_interp)                                               \
  X(prim_ListUnpack, "prim::ListUnpack(Any[] l) -> Any", FBX_OPCAT_CONTROL, FBX_DT_NONE,          \
    FBX_SH_NONE, 0, fbx_k_interp)                                                                 \
  X(prim_TupleConstruct, "prim::TupleConstruct(...) -> Any", FBX_OPCAT_CONTROL, FBX_DT_NONE,      \
    FBX_SH_NONE, 0, fbx_k_interp)                                                                 \
  X(prim_TupleUnpack, "prim::TupleUnpack(Any tup) -> Any", FBX_OPCAT_CONTROL, FBX_DT_NONE,        \
    FBX_SH_NONE, 0, fbx_k_interp)

#endif
