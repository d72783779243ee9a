/* Op table rows: run-time queries that scripted nn.Modules make about the
 * execution mode and their tensors (nn.MultiheadAttention and
 * nn.TransformerEncoderLayer ask them to choose PyTorch's fused "fast
 * path"), and the two fast-path ops they guard. (See ops/optable.h for the
 * columns; kernels in ops/k_runtime.c.) Schemas are PyTorch 1.13's.
 *
 * What fusebox answers, and why (every answer is also what the runtime
 * query fold, passes/rtquery.c, folds to when it can decide it):
 *
 *   aten::is_autocast_enabled()  false: fusebox has no autocast mode.
 *   aten::is_grad_enabled()      true: fusebox has no no_grad mode; like
 *                                PyTorch's default grad mode, a run may
 *                                always be differentiated.
 *   prim::requires_grad(x)       true for a floating tensor (float16,
 *                                bfloat16, float32, float64), false for
 *                                integer and bool tensors. fusebox treats
 *                                every floating graph input as a leaf that
 *                                may be differentiated — as PyTorch does for
 *                                an nn.Module's parameters in its default
 *                                grad mode — so a floating value answers
 *                                true whether or not this run computes a
 *                                backward. (PyTorch answers false for a
 *                                float tensor computed only from integer
 *                                inputs; fusebox answers true there.)
 *   prim::is_nested(x)           false: fusebox has no nested tensors.
 *   aten::is_floating_point(x)   from x's dtype.
 *   aten::find(str, str, ...)    Python's str.find with TorchScript's
 *                                start/end rules (end -1: the whole string).
 *   aten::all / aten::any of a bool, int or float list: Python's all() and
 *                                any() (the guards combine the answers
 *                                above with them).
 *
 * aten::cpu(x) is x (fusebox runs on the CPU); aten::as_tensor(x, dtype,
 * device) is x, or x converted to dtype (aten::to's rules); a device other
 * than the CPU is an error, as for aten::to.
 *
 * aten::_native_multi_head_attention and aten::_transformer_encoder_layer_fwd
 * are the fused paths the modules take only when no argument requires grad
 * (and autocast is off, and ...). With the answers above a module whose
 * parameters are floating never reaches them; their kernels report that
 * fusebox does not implement them rather than compute something else. */
#ifndef FBX_OPS_LIST_RUNTIME_H
#define FBX_OPS_LIST_RUNTIME_H

#define FBX_RT_Q_(X, id, schema, kernel) \
  X(id, schema, FBX_OPCAT_SCALAR, FBX_DT_NONE, FBX_SH_NONE, 0, kernel)

#define FBX_OPS_RUNTIME(X)                                                                                       \
  FBX_RT_Q_(X, is_autocast_enabled, "aten::is_autocast_enabled() -> bool", fbx_k_rt_mode)                         \
  FBX_RT_Q_(X, is_grad_enabled, "aten::is_grad_enabled() -> bool", fbx_k_rt_mode)                                 \
  FBX_RT_Q_(X, prim_requires_grad, "prim::requires_grad(Tensor a) -> bool", fbx_k_rt_tensor_query)               \
  FBX_RT_Q_(X, prim_is_nested, "prim::is_nested(Tensor a) -> bool", fbx_k_rt_tensor_query)                       \
  FBX_RT_Q_(X, is_floating_point, "aten::is_floating_point(Tensor self) -> bool", fbx_k_rt_tensor_query)         \
  FBX_RT_Q_(X, find_str, "aten::find(str self, str substr, int start=0, int end=-1) -> int", fbx_k_rt_find)      \
  FBX_RT_Q_(X, all_bool_list, "aten::all.bool(bool[] self) -> bool", fbx_k_rt_any_all)                           \
  FBX_RT_Q_(X, all_int_list, "aten::all.int(int[] self) -> bool", fbx_k_rt_any_all)                              \
  FBX_RT_Q_(X, all_float_list, "aten::all.float(float[] self) -> bool", fbx_k_rt_any_all)                        \
  FBX_RT_Q_(X, any_bool_list, "aten::any.bool(bool[] self) -> bool", fbx_k_rt_any_all)                           \
  FBX_RT_Q_(X, any_int_list, "aten::any.int(int[] self) -> bool", fbx_k_rt_any_all)                              \
  FBX_RT_Q_(X, any_float_list, "aten::any.float(float[] self) -> bool", fbx_k_rt_any_all)                        \
  X(cpu, "aten::cpu(Tensor(a) self) -> Tensor(a)", FBX_OPCAT_CONVERSION, FBX_DT_SAME, FBX_SH_SAME, FBX_OPF_ALIAS,  \
    fbx_k_rt_to_cpu)                                                                                             \
  X(as_tensor, "aten::as_tensor(Tensor(a) data, *, ScalarType? dtype=None, Device? device=None) -> Tensor(a)",    \
    FBX_OPCAT_CONVERSION, FBX_DT_ARG, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k_rt_to_cpu)                               \
  X(native_multi_head_attention,                                                                                 \
    "aten::_native_multi_head_attention(Tensor query, Tensor key, Tensor value, int embed_dim, int num_head, "   \
    "Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, Tensor? mask=None, "              \
    "bool need_weights=True, bool average_attn_weights=True, int? mask_type=None) -> (Tensor, Tensor)",          \
    FBX_OPCAT_COMPOSITE, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_rt_fast_path)                                    \
  X(transformer_encoder_layer_fwd,                                                                               \
    "aten::_transformer_encoder_layer_fwd(Tensor src, int embed_dim, int num_heads, Tensor qkv_weight, "         \
    "Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, bool use_gelu, bool norm_first, float eps, "         \
    "Tensor norm_weight_1, Tensor norm_bias_1, Tensor norm_weight_2, Tensor norm_bias_2, Tensor ffn_weight_1, "  \
    "Tensor ffn_bias_1, Tensor ffn_weight_2, Tensor ffn_bias_2, Tensor? mask=None, int? mask_type=None) -> Tensor", \
    FBX_OPCAT_COMPOSITE, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_rt_fast_path)

#endif
