/* Op table rows: TorchScript scalar code — int/float/bool/str arithmetic and
 * comparisons, tensor <-> number conversions, lists, tuples, strings.
 * (See ops/optable.h for the columns; kernels in ops/k_scalar.c.)
 *
 * Schemas are PyTorch 1.13's (torch._C._jit_get_schemas_for_operator), with
 * two deliberate differences: alias annotations after a list type
 * (`t[](a!) self`) are dropped because the schema parser does not read them,
 * and complex/Dict/enum overloads are left out (fusebox has no such values).
 *
 * Varargs kernels (prim::Print, aten::format) take their argument count from
 * ctx->node, which the interpreter always sets.
 *
 * These rows come last in the table: the Tensor overloads of the same names
 * (aten::add.Tensor, aten::eq.Scalar, aten::__and__.Tensor, ...) live in
 * list_pointwise.h and are tried first; the rows here are only reached when
 * no argument is a Tensor. Within a name, the order is PyTorch's: int, float,
 * int_float, float_int, then the untyped (Scalar a, Scalar b) form, which
 * overload resolution reaches for bools and mixed run-time values; the list
 * and str forms of aten::add come after the numbers, str before list
 * (resolution by IR types treats a `t[]` argument as matching anything, so
 * it must come last; the kernels of the other `t[]` rows here accept what
 * the rows after them would).
 *
 * The numeric kernels read the result kind from the row's return type: int
 * rows compute in int64 (wrapping on overflow), float rows in double, and
 * Scalar rows give an int when both operands are int or bool, else a float.
 * Semantics are TorchScript's, which are Python's except where TorchScript
 * differs (float // is floor(a / b); float % is fmod(b + fmod(a, b), b);
 * dividing floats by zero gives inf/nan, not an exception).
 */
#ifndef FBX_OPS_LIST_SCALAR_H
#define FBX_OPS_LIST_SCALAR_H

/* X(id, schema, kernel) for the common shape: a scalar op with no tensor output. */
#define FBX_SC_(X, id, schema, kernel) \
  X(id, schema, FBX_OPCAT_SCALAR, FBX_DT_NONE, FBX_SH_NONE, 0, kernel)
/* math.* on numbers (exp, log, sin, ..., round: half to even, as
 * TorchScript's round): .int and .float return float, .Scalar keeps float.
 * Kernel fbx_k_sc_math; the function comes from the row's name. */
#define FBX_SC_MATH_LIST_(M, X) \
  M(X, exp) M(X, log) M(X, log10) M(X, log1p) M(X, expm1) M(X, sin) M(X, cos) M(X, tan) M(X, asin) \
  M(X, acos) M(X, atan) M(X, sinh) M(X, cosh) M(X, tanh) M(X, asinh) M(X, acosh) M(X, atanh)        \
  M(X, erf) M(X, erfc) M(X, fabs) M(X, round) M(X, lgamma) M(X, gamma)
#define FBX_SC_MATH_(X, name)                                                                       \
  FBX_SC_(X, name##_int, "aten::" #name ".int(int a) -> float", fbx_k_sc_math)                      \
  FBX_SC_(X, name##_float, "aten::" #name ".float(float a) -> float", fbx_k_sc_math)                \
  FBX_SC_(X, name##_num, "aten::" #name ".Scalar(Scalar a) -> Scalar", fbx_k_sc_math)
/* The five numeric overloads every binary arithmetic op has. */
#define FBX_SC_ARITH_(X, name, ret_int, kernel)                                         \
  FBX_SC_(X, name##_int, "aten::" #name ".int(int a, int b) -> " ret_int, kernel)                \
  FBX_SC_(X, name##_float, "aten::" #name ".float(float a, float b) -> float", kernel)           \
  FBX_SC_(X, name##_int_float, "aten::" #name ".int_float(int a, float b) -> float", kernel)     \
  FBX_SC_(X, name##_float_int, "aten::" #name ".float_int(float a, int b) -> float", kernel)
/* Comparisons: bool, int, float, the mixed forms, untyped Scalar, str. */
#define FBX_SC_CMP_(X, name)                                                                     \
  FBX_SC_(X, name##_int, "aten::" #name ".int(int a, int b) -> bool", fbx_k_sc_compare)          \
  FBX_SC_(X, name##_float, "aten::" #name ".float(float a, float b) -> bool", fbx_k_sc_compare)  \
  FBX_SC_(X, name##_int_float, "aten::" #name ".int_float(int a, float b) -> bool",              \
          fbx_k_sc_compare)                                                                      \
  FBX_SC_(X, name##_float_int, "aten::" #name ".float_int(float a, int b) -> bool",              \
          fbx_k_sc_compare)                                                                      \
  FBX_SC_(X, name##_num, "aten::" #name "(Scalar a, Scalar b) -> bool", fbx_k_sc_compare)        \
  FBX_SC_(X, name##_str, "aten::" #name ".str(str a, str b) -> bool", fbx_k_sc_compare)
/* eq/ne also compare lists, bools and devices. */
#define FBX_SC_EQ_(X, name)                                                                      \
  FBX_SC_(X, name##_int_list, "aten::" #name ".int_list(int[] a, int[] b) -> bool",              \
          fbx_k_sc_compare)                                                                      \
  FBX_SC_(X, name##_device, "aten::" #name ".device(Device a, Device b) -> bool",                \
          fbx_k_sc_compare)                                                                      \
  FBX_SC_(X, name##_bool, "aten::" #name ".bool(bool a, bool b) -> bool", fbx_k_sc_compare)      \
  FBX_SC_CMP_(X, name)                                                                           \
  FBX_SC_(X, name##_float_list, "aten::" #name ".float_list(float[] a, float[] b) -> bool",      \
          fbx_k_sc_compare)                                                                      \
  FBX_SC_(X, name##_bool_list, "aten::" #name ".bool_list(bool[] a, bool[] b) -> bool",          \
          fbx_k_sc_compare)                                                                      \
  FBX_SC_(X, name##_str_list, "aten::" #name ".str_list(str[] a, str[] b) -> bool",              \
          fbx_k_sc_compare)

#define FBX_OPS_SCALAR(X)                                                                         \
  /* ---- arithmetic ------------------------------------------------------------------------ */ \
  FBX_SC_ARITH_(X, add, "int", fbx_k_sc_arith)                                                   \
  FBX_SC_(X, add_num, "aten::add(Scalar a, Scalar b) -> Scalar", fbx_k_sc_arith)                 \
  FBX_SC_(X, add_str, "aten::add.str(str a, str b) -> str", fbx_k_sc_str_concat)                 \
  FBX_SC_(X, add_list, "aten::add.t(t[] a, t[] b) -> t[]", fbx_k_sc_list_concat)                 \
  FBX_SC_ARITH_(X, sub, "int", fbx_k_sc_arith)                                          \
  FBX_SC_(X, sub_num, "aten::sub(Scalar a, Scalar b) -> Scalar", fbx_k_sc_arith)                 \
  FBX_SC_ARITH_(X, mul, "int", fbx_k_sc_arith)                                          \
  FBX_SC_(X, mul_num, "aten::mul(Scalar a, Scalar b) -> Scalar", fbx_k_sc_arith)                 \
  FBX_SC_(X, div_int, "aten::div.int(int a, int b) -> float", fbx_k_sc_arith)                    \
  FBX_SC_(X, div_float, "aten::div.float(float a, float b) -> float", fbx_k_sc_arith)            \
  FBX_SC_(X, div_num, "aten::div(Scalar a, Scalar b) -> float", fbx_k_sc_arith)                  \
  FBX_SC_ARITH_(X, floordiv, "int", fbx_k_sc_arith)                                     \
  FBX_SC_(X, floordiv_num, "aten::floordiv(Scalar a, Scalar b) -> Scalar", fbx_k_sc_arith)       \
  FBX_SC_ARITH_(X, remainder, "int", fbx_k_sc_arith)                                    \
  FBX_SC_(X, remainder_num, "aten::remainder(Scalar a, Scalar b) -> Scalar", fbx_k_sc_arith)     \
  FBX_SC_ARITH_(X, pow, "float", fbx_k_sc_arith)                                         \
  FBX_SC_(X, pow_Scalar_Scalar, "aten::pow.Scalar_Scalar(Scalar a, Scalar b) -> float",          \
          fbx_k_sc_arith)                                                                         \
  FBX_SC_(X, pow_int_to_int, "aten::pow.int_to_int(int a, int b) -> int", fbx_k_sc_arith)        \
  FBX_SC_ARITH_(X, fmod, "float", fbx_k_sc_arith)                                        \
  FBX_SC_(X, fmod_num, "aten::fmod(Scalar a, Scalar b) -> float", fbx_k_sc_arith)                \
  FBX_SC_(X, prim_min_int, "prim::min.int(int a, int b) -> int", fbx_k_sc_arith)                 \
  FBX_SC_(X, prim_min_float, "prim::min.float(float a, float b) -> float", fbx_k_sc_arith)       \
  FBX_SC_(X, prim_min_int_float, "prim::min.int_float(int a, float b) -> float", fbx_k_sc_arith) \
  FBX_SC_(X, prim_min_float_int, "prim::min.float_int(float a, int b) -> float", fbx_k_sc_arith) \
  FBX_SC_(X, prim_min_num, "prim::min(Scalar a, Scalar b) -> Scalar", fbx_k_sc_arith)            \
  FBX_SC_(X, prim_min_int_list, "prim::min.int_list(int[] l, int[] r) -> int[]",                 \
          fbx_k_sc_list_minmax)                                                                   \
  FBX_SC_(X, prim_min_self_int, "prim::min.self_int(int[] self) -> int", fbx_k_sc_list_reduce)   \
  FBX_SC_(X, prim_min_float_list, "prim::min.float_list(float[] l, float[] r) -> float[]",       \
          fbx_k_sc_list_minmax)                                                                   \
  FBX_SC_(X, prim_min_self_float, "prim::min.self_float(float[] self) -> float",                 \
          fbx_k_sc_list_reduce)                                                                   \
  FBX_SC_(X, prim_max_int, "prim::max.int(int a, int b) -> int", fbx_k_sc_arith)                 \
  FBX_SC_(X, prim_max_float, "prim::max.float(float a, float b) -> float", fbx_k_sc_arith)       \
  FBX_SC_(X, prim_max_int_float, "prim::max.int_float(int a, float b) -> float", fbx_k_sc_arith) \
  FBX_SC_(X, prim_max_float_int, "prim::max.float_int(float a, int b) -> float", fbx_k_sc_arith) \
  FBX_SC_(X, prim_max_num, "prim::max(Scalar a, Scalar b) -> Scalar", fbx_k_sc_arith)            \
  FBX_SC_(X, prim_max_int_list, "prim::max.int_list(int[] l, int[] r) -> int[]",                 \
          fbx_k_sc_list_minmax)                                                                   \
  FBX_SC_(X, prim_max_self_int, "prim::max.self_int(int[] self) -> int", fbx_k_sc_list_reduce)   \
  FBX_SC_(X, prim_max_float_list, "prim::max.float_list(float[] l, float[] r) -> float[]",       \
          fbx_k_sc_list_minmax)                                                                   \
  FBX_SC_(X, prim_max_self_float, "prim::max.self_float(float[] self) -> float",                 \
          fbx_k_sc_list_reduce)                                                                   \
  FBX_SC_(X, neg_int, "aten::neg.int(int a) -> int", fbx_k_sc_unary)                             \
  FBX_SC_(X, neg_float, "aten::neg.float(float a) -> float", fbx_k_sc_unary)                     \
  FBX_SC_(X, neg_num, "aten::neg.Scalar(Scalar a) -> Scalar", fbx_k_sc_unary)                    \
  FBX_SC_(X, prim_abs_int, "prim::abs.int(int a) -> int", fbx_k_sc_unary)                        \
  FBX_SC_(X, prim_abs_float, "prim::abs.float(float a) -> float", fbx_k_sc_unary)                \
  FBX_SC_(X, prim_abs_num, "prim::abs.Scalar(Scalar a) -> Scalar", fbx_k_sc_unary)               \
  FBX_SC_(X, floor_int, "aten::floor.int(int a) -> int", fbx_k_sc_unary)                         \
  FBX_SC_(X, floor_float, "aten::floor.float(float a) -> int", fbx_k_sc_unary)                   \
  FBX_SC_(X, floor_num, "aten::floor.Scalar(Scalar a) -> Scalar", fbx_k_sc_unary)                \
  FBX_SC_(X, ceil_int, "aten::ceil.int(int a) -> int", fbx_k_sc_unary)                           \
  FBX_SC_(X, ceil_float, "aten::ceil.float(float a) -> int", fbx_k_sc_unary)                     \
  FBX_SC_(X, ceil_num, "aten::ceil.Scalar(Scalar a) -> Scalar", fbx_k_sc_unary)                  \
  FBX_SC_(X, sqrt_int, "aten::sqrt.int(int a) -> float", fbx_k_sc_unary)                         \
  FBX_SC_(X, sqrt_float, "aten::sqrt.float(float a) -> float", fbx_k_sc_unary)                   \
  FBX_SC_(X, sqrt_num, "aten::sqrt.Scalar(Scalar a) -> Scalar", fbx_k_sc_unary)                  \
  FBX_SC_(X, isnan_float, "aten::isnan.float(float a) -> bool", fbx_k_sc_unary)                  \
  FBX_SC_(X, isinf_float, "aten::isinf.float(float a) -> bool", fbx_k_sc_unary)                  \
  FBX_SC_MATH_LIST_(FBX_SC_MATH_, X)                                                              \
  FBX_SC_(X, log_Scalar_Scalar, "aten::log.Scalar_Scalar(Scalar a, Scalar b) -> float", fbx_k_sc_math) \
  /* ---- comparisons and logic -------------------------------------------------------------- */ \
  FBX_SC_EQ_(X, eq)                                                                               \
  FBX_SC_EQ_(X, ne)                                                                               \
  FBX_SC_CMP_(X, lt)                                                                              \
  FBX_SC_CMP_(X, le)                                                                              \
  FBX_SC_CMP_(X, gt)                                                                              \
  FBX_SC_CMP_(X, ge)                                                                              \
  FBX_SC_(X, not_bool, "aten::__not__(bool self) -> bool", fbx_k_sc_unary)                       \
  FBX_SC_(X, and_bool, "aten::__and__.bool(bool a, bool b) -> bool", fbx_k_sc_bitwise)           \
  FBX_SC_(X, and_int, "aten::__and__.int(int a, int b) -> int", fbx_k_sc_bitwise)                \
  FBX_SC_(X, or_bool, "aten::__or__.bool(bool a, bool b) -> bool", fbx_k_sc_bitwise)             \
  FBX_SC_(X, or_int, "aten::__or__.int(int a, int b) -> int", fbx_k_sc_bitwise)                  \
  FBX_SC_(X, xor_bool, "aten::__xor__.bool(bool a, bool b) -> bool", fbx_k_sc_bitwise)           \
  FBX_SC_(X, xor_int, "aten::__xor__.int(int a, int b) -> int", fbx_k_sc_bitwise)                \
  FBX_SC_(X, lshift_int, "aten::__lshift__.int(int a, int b) -> int", fbx_k_sc_shift)            \
  FBX_SC_(X, rshift_int, "aten::__rshift__.int(int a, int b) -> int", fbx_k_sc_shift)            \
  FBX_SC_(X, is, "aten::__is__(t self, t obj) -> bool", fbx_k_sc_is)                           \
  FBX_SC_(X, isnot, "aten::__isnot__(t self, t obj) -> bool", fbx_k_sc_is)                     \
  /* ---- conversions between tensors and numbers -------------------------------------------- */ \
  FBX_SC_(X, Int_Tensor, "aten::Int.Tensor(Tensor a) -> int", fbx_k_sc_convert)                  \
  FBX_SC_(X, Int_bool, "aten::Int.bool(bool a) -> int", fbx_k_sc_convert)                        \
  FBX_SC_(X, Int_float, "aten::Int.float(float a) -> int", fbx_k_sc_convert)                     \
  FBX_SC_(X, Int_Scalar, "aten::Int.Scalar(Scalar a) -> int", fbx_k_sc_convert)                  \
  FBX_SC_(X, Int_str, "aten::Int.str(str a) -> int", fbx_k_sc_convert)                           \
  FBX_SC_(X, Float_Tensor, "aten::Float.Tensor(Tensor a) -> float", fbx_k_sc_convert)            \
  FBX_SC_(X, Float_Scalar, "aten::Float.Scalar(Scalar a) -> float", fbx_k_sc_convert)            \
  FBX_SC_(X, Float_int, "aten::Float.int(int a) -> float", fbx_k_sc_convert)                     \
  FBX_SC_(X, Float_bool, "aten::Float.bool(bool a) -> float", fbx_k_sc_convert)                  \
  FBX_SC_(X, Float_str, "aten::Float.str(str a) -> float", fbx_k_sc_convert)                     \
  FBX_SC_(X, Bool_Tensor, "aten::Bool.Tensor(Tensor a) -> bool", fbx_k_sc_convert)               \
  FBX_SC_(X, Bool_int, "aten::Bool.int(int a) -> bool", fbx_k_sc_convert)                        \
  FBX_SC_(X, Bool_float, "aten::Bool.float(float a) -> bool", fbx_k_sc_convert)                  \
  FBX_SC_(X, ScalarImplicit, "aten::ScalarImplicit(Tensor a) -> Scalar", fbx_k_sc_convert)       \
  FBX_SC_(X, item, "aten::item(Tensor self) -> Scalar", fbx_k_sc_convert)                        \
  X(NumToTensor_Scalar, "prim::NumToTensor.Scalar(Scalar a) -> Tensor", FBX_OPCAT_SCALAR,         \
    FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_sc_num_to_tensor)                                      \
  X(NumToTensor_bool, "prim::NumToTensor.bool(bool a) -> Tensor", FBX_OPCAT_SCALAR,               \
    FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_sc_num_to_tensor)                                      \
  FBX_SC_(X, prim_device, "prim::device(Tensor a) -> Device", fbx_k_sc_tensor_query)             \
  FBX_SC_(X, prim_type_Device, "prim::type(Device self) -> str", fbx_k_sc_device_type)            \
  FBX_SC_(X, prim_dtype, "prim::dtype(Tensor a) -> int", fbx_k_sc_tensor_query)                  \
  FBX_SC_(X, prim_is_cuda, "prim::is_cuda(Tensor a) -> bool", fbx_k_sc_tensor_query)             \
  FBX_SC_(X, device_str, "aten::device(str a) -> Device", fbx_k_sc_device)                       \
  FBX_SC_(X, unchecked_cast, "prim::unchecked_cast(t x) -> t", fbx_k_sc_identity)                \
  /* ---- lists, tuples, strings --------------------------------------------------------------- */ \
  FBX_SC_(X, getitem_list, "aten::__getitem__.t(t[] list, int idx) -> t(*)", fbx_k_sc_getitem)   \
  FBX_SC_(X, getitem_str, "aten::__getitem__.str(str s, int index) -> str", fbx_k_sc_getitem)    \
  FBX_SC_(X, TupleIndex, "prim::TupleIndex(Any tup, int i) -> Any", fbx_k_sc_getitem)            \
  FBX_SC_(X, len_list, "aten::len.t(t[] a) -> int", fbx_k_sc_len)                                \
  FBX_SC_(X, len_Tensor, "aten::len.Tensor(Tensor t) -> int", fbx_k_sc_len)                      \
  FBX_SC_(X, len_str, "aten::len.str(str s) -> int", fbx_k_sc_len)                               \
  X(append, "aten::append.t(t[] self, t(c -> *) el) -> t[]", FBX_OPCAT_SCALAR, FBX_DT_NONE,       \
    FBX_SH_NONE, FBX_OPF_INPLACE, fbx_k_sc_append)                                                \
  X(set_item_list, "aten::_set_item.t(t[] l, int idx, t(b -> *) el) -> t[]", FBX_OPCAT_SCALAR,    \
    FBX_DT_NONE, FBX_SH_NONE, FBX_OPF_INPLACE, fbx_k_sc_set_item)                                 \
  X(list_copy, "aten::list.t(t[] l) -> t[]", FBX_OPCAT_SCALAR, FBX_DT_NONE, FBX_SH_NONE,          \
    FBX_OPF_MUTABLE_OUT, fbx_k_sc_list_copy)                                                      \
  X(copy_list, "aten::copy.t(t[] self) -> t[]", FBX_OPCAT_SCALAR, FBX_DT_NONE, FBX_SH_NONE,       \
    FBX_OPF_MUTABLE_OUT, fbx_k_sc_list_copy)                                                      \
  X(slice_list, "aten::slice.t(t[] l, int? start=None, int? end=None, int step=1) -> t[]",        \
    FBX_OPCAT_SCALAR, FBX_DT_NONE, FBX_SH_NONE, FBX_OPF_MUTABLE_OUT, fbx_k_sc_slice)              \
  FBX_SC_(X, slice_str, "aten::slice.str(str string, int? start=None, int? end=None, int step=1) -> str", \
          fbx_k_sc_slice)                                                                         \
  FBX_SC_(X, contains_int_list, "aten::__contains__.int_list(int[] l, int item) -> bool",        \
          fbx_k_sc_contains)                                                                      \
  FBX_SC_(X, contains_str_list, "aten::__contains__.str_list(str[] l, str item) -> bool",        \
          fbx_k_sc_contains)                                                                      \
  FBX_SC_(X, contains_float_list, "aten::__contains__.float_list(float[] l, float item) -> bool", \
          fbx_k_sc_contains)                                                                      \
  FBX_SC_(X, sum_int_list, "aten::sum.int(int[] self) -> int", fbx_k_sc_list_reduce)             \
  FBX_SC_(X, sum_float_list, "aten::sum.float(float[] self) -> float", fbx_k_sc_list_reduce)     \
  FBX_SC_(X, range_length, "aten::__range_length(int lo, int hi, int step) -> int",              \
          fbx_k_sc_range)                                                                         \
  FBX_SC_(X, derive_index, "aten::__derive_index(int index, int start, int step) -> int",        \
          fbx_k_sc_range)                                                                         \
  FBX_SC_(X, str, "aten::str(t elem) -> str", fbx_k_sc_str)                                      \
  FBX_SC_(X, format, "aten::format(str self, ...) -> str", fbx_k_sc_format)                      \
  /* ---- side effects --------------------------------------------------------------------------- */ \
  X(warn, "aten::warn(str message, int stacklevel=2) -> ()", FBX_OPCAT_SCALAR, FBX_DT_NONE,       \
    FBX_SH_NONE, FBX_OPF_SIDE_EFFECT, fbx_k_sc_warn)                                                \
  X(Print, "prim::Print(...) -> ()", FBX_OPCAT_SCALAR, FBX_DT_NONE, FBX_SH_NONE,                  \
    FBX_OPF_SIDE_EFFECT, fbx_k_sc_print)

#endif
