/* Op table rows: control and structure, run by the interpreter itself.
 * (See ops/optable.h for the columns.) Their kernel, fbx_k_interp, only
 * reports that the interpreter should have handled the node. */
#ifndef FBX_OPS_LIST_CONTROL_H
#define FBX_OPS_LIST_CONTROL_H

#define FBX_OPS_CONTROL(X)                                                                        \
  X(prim_Constant, "prim::Constant() -> Any", FBX_OPCAT_CONTROL, FBX_DT_NONE, FBX_SH_NONE, 0,     \
    fbx_k_interp)                                                                                 \
  X(prim_If, "prim::If(bool cond, ...) -> Any", FBX_OPCAT_CONTROL, FBX_DT_NONE, FBX_SH_NONE, 0,   \
    fbx_k_interp)                                                                                 \
  X(prim_Loop, "prim::Loop(int max_trip_count, bool cond, ...) -> Any", FBX_OPCAT_CONTROL,        \
    FBX_DT_NONE, FBX_SH_NONE, 0, fbx_k_interp)                                                    \
  X(prim_RaiseException, "prim::RaiseException(str msg, ...) -> ()", FBX_OPCAT_CONTROL,          \
    FBX_DT_NONE, FBX_SH_NONE, FBX_OPF_SIDE_EFFECT, fbx_k_raise)                                    \
  X(prim_Uninitialized, "prim::Uninitialized() -> Any", FBX_OPCAT_CONTROL, FBX_DT_NONE,           \
    FBX_SH_NONE, 0, fbx_k_interp)

#endif
