/* The legacy fuser's op table: which pointwise ops it fuses, how their
 * dtypes follow PyTorch's rules, and one expression template per dtype
 * class. The templates are C-family expressions shared by every dialect:
 * $0..$9 are the op's arguments already converted to the compute type, $T
 * is the compute type's C name, $f the float function suffix ("f" for
 * float32/float16/bfloat16 computed in float, "" for float64), $v the
 * prefix of codegen.c's vectorizable float math ("lf_v" in float, "" in
 * float64: $vexp$f is lf_vexpf or exp). Integer
 * templates compute in int64_t (wrapping through uint64_t where C would
 * overflow) and the result is narrowed to the value's dtype afterwards.
 *
 * An op is matched on its overload (the op table's schema through
 * host->node_schema), so aten::add.Tensor and aten::add.Scalar, or
 * aten::max.other and the reductions aten::max.dim, are told apart. */
#include <string.h>

#include "lf.h"

/* dtype rules */
enum {
  R_SAME,     /* compute and result: operand 0's dtype */
  R_UFLOAT,   /* operand 0's dtype, integral/bool -> float32 */
  R_PROMOTE,  /* result_type of the operands */
  R_FLOAT,    /* result_type, integral/bool -> float32 */
  R_BOOL,     /* computed in result_type, bool result */
  R_BOOLSELF, /* computed in operand 0's dtype, bool result */
  R_SQUARE,   /* operand 0's dtype, bool -> int64 */
  R_WHERE,    /* operand 0 is a bool selector; result_type of operands 1.. */
  R_MASKED,   /* operand 1 is a bool selector; operand 0's dtype */
  R_TO,       /* the dtype constant */
};

/* NaN-propagating max/min of two expressions (a NaN from either side wins,
 * the first one's if both are): maximum/minimum, and clamp with tensor
 * bounds, which PyTorch computes as min(max(self, min), max). */
#define LF_MAXN(a, b) "(" a " != " a " ? " a " : (" b " != " b " ? " b " : (" a " > " b " ? " a " : " b ")))"
#define LF_MINN(a, b) "(" a " != " a " ? " a " : (" b " != " b " ? " b " : (" a " < " b " ? " a " : " b ")))"

/* name: the overload as the schema names it; ops: node inputs that are
 * operands (promoted); params: node inputs converted to the compute type
 * but not promoted (alpha, slopes, bounds); F/I/B: templates for float,
 * integral and bool compute dtypes (NULL: not fused for that class). */
#define LF_OPS(X)                                                                                           \
  X(ABS, "aten::abs", "0", "", R_SAME, "fabs$f($0)", "($0 < 0 ? (int64_t)(0ULL - (uint64_t)$0) : $0)", NULL) \
  X(NEG, "aten::neg", "0", "", R_SAME, "(-$0)", "((int64_t)(0ULL - (uint64_t)$0))", NULL)                  \
  X(RECIPROCAL, "aten::reciprocal", "0", "", R_UFLOAT, "(($T)1 / $0)", NULL, NULL)                       \
  X(SQRT, "aten::sqrt", "0", "", R_UFLOAT, "sqrt$f($0)", NULL, NULL)                                     \
  X(RSQRT, "aten::rsqrt", "0", "", R_UFLOAT, "(($T)1 / sqrt$f($0))", NULL, NULL)                         \
  X(SQUARE, "aten::square", "0", "", R_SQUARE, "($0 * $0)", "((int64_t)((uint64_t)$0 * (uint64_t)$0))", NULL) \
  X(EXP, "aten::exp", "0", "", R_UFLOAT, "$vexp$f($0)", NULL, NULL)                                        \
  X(EXP2, "aten::exp2", "0", "", R_UFLOAT, "exp2$f($0)", NULL, NULL)                                     \
  X(EXPM1, "aten::expm1", "0", "", R_UFLOAT, "$vexpm1$f($0)", NULL, NULL)                                  \
  X(LOG, "aten::log", "0", "", R_UFLOAT, "$vlog$f($0)", NULL, NULL)                                        \
  X(LOG2, "aten::log2", "0", "", R_UFLOAT, "log2$f($0)", NULL, NULL)                                     \
  X(LOG10, "aten::log10", "0", "", R_UFLOAT, "log10$f($0)", NULL, NULL)                                  \
  X(LOG1P, "aten::log1p", "0", "", R_UFLOAT, "$vlog1p$f($0)", NULL, NULL)                                  \
  X(SIN, "aten::sin", "0", "", R_UFLOAT, "sin$f($0)", NULL, NULL)                                        \
  X(COS, "aten::cos", "0", "", R_UFLOAT, "cos$f($0)", NULL, NULL)                                        \
  X(TAN, "aten::tan", "0", "", R_UFLOAT, "tan$f($0)", NULL, NULL)                                        \
  X(ASIN, "aten::asin", "0", "", R_UFLOAT, "asin$f($0)", NULL, NULL)                                     \
  X(ACOS, "aten::acos", "0", "", R_UFLOAT, "acos$f($0)", NULL, NULL)                                     \
  X(ATAN, "aten::atan", "0", "", R_UFLOAT, "atan$f($0)", NULL, NULL)                                     \
  X(SINH, "aten::sinh", "0", "", R_UFLOAT, "sinh$f($0)", NULL, NULL)                                     \
  X(COSH, "aten::cosh", "0", "", R_UFLOAT, "cosh$f($0)", NULL, NULL)                                     \
  X(TANH, "aten::tanh", "0", "", R_UFLOAT, "$vtanh$f($0)", NULL, NULL)                                     \
  X(ERF, "aten::erf", "0", "", R_UFLOAT, "$verf$f($0)", NULL, NULL)                                        \
  X(ERFC, "aten::erfc", "0", "", R_UFLOAT, "erfc$f($0)", NULL, NULL)                                     \
  X(SIGMOID, "aten::sigmoid", "0", "", R_UFLOAT, "(($T)1 / (($T)1 + $vexp$f(-$0)))", NULL, NULL)           \
  X(RELU, "aten::relu", "0", "", R_SAME, "($0 < 0 ? ($T)0 : $0)", "($0 < 0 ? 0 : $0)", NULL)             \
  X(LEAKY_RELU, "aten::leaky_relu", "0", "1", R_SAME, "($0 > 0 ? $0 : $0 * $1)", NULL, NULL)             \
  X(ELU, "aten::elu", "0", "123", R_SAME, "($0 <= 0 ? $vexpm1$f($0 * $3) * ($1 * $2) : $0 * $2)", NULL, NULL) \
  X(GELU, "aten::gelu", "0", "", R_SAME,                                                                  \
    "($0 * ($T)0.5 * (($T)1 + $verf$f($0 * ($T)0.70710678118654752440)))", NULL, NULL)                      \
  X(GELU_TANH, "aten::gelu", "0", "", R_SAME,                                                             \
    "(($T)0.5 * $0 * (($T)1 + $vtanh$f(($T)0.79788456080286535588 * ($0 + ($T)0.044715 * $0 * $0 * $0))))", \
    NULL, NULL)                                                                                           \
  X(SILU, "aten::silu", "0", "", R_SAME, "($0 / (($T)1 + $vexp$f(-$0)))", NULL, NULL)                      \
  X(MISH, "aten::mish", "0", "", R_SAME, "($0 * $vtanh$f($vlog1p$f($vexp$f($0))))", NULL, NULL)                \
  X(SOFTPLUS, "aten::softplus", "0", "12", R_SAME, "($0 * $1 > $2 ? $0 : $vlog1p$f($vexp$f($0 * $1)) / $1)", NULL, NULL) \
  X(HARDTANH, "aten::hardtanh", "0", "12", R_SAME, "($2 < ($0 < $1 ? $1 : $0) ? $2 : ($0 < $1 ? $1 : $0))", NULL, NULL) \
  X(HARDSIGMOID, "aten::hardsigmoid", "0", "", R_SAME,                                                    \
    "(($0 + 3 < 0 ? ($T)0 : ($0 + 3 > 6 ? ($T)6 : $0 + 3)) / 6)", NULL, NULL)                            \
  X(HARDSWISH, "aten::hardswish", "0", "", R_SAME,                                                        \
    "($0 * ($0 + 3 < 0 ? ($T)0 : ($0 + 3 > 6 ? ($T)6 : $0 + 3)) / 6)", NULL, NULL)                        \
  X(THRESHOLD, "aten::threshold", "0", "12", R_SAME, "($0 <= $1 ? $2 : $0)", "($0 <= $1 ? $2 : $0)", NULL) \
  X(FLOOR, "aten::floor", "0", "", R_SAME, "floor$f($0)", "$0", NULL)                                    \
  X(CEIL, "aten::ceil", "0", "", R_SAME, "ceil$f($0)", "$0", NULL)                                       \
  X(ROUND, "aten::round", "0", "", R_SAME, "nearbyint$f($0)", "$0", NULL)                                \
  X(TRUNC, "aten::trunc", "0", "", R_SAME, "trunc$f($0)", "$0", NULL)                                    \
  X(FRAC, "aten::frac", "0", "", R_SAME, "($0 - trunc$f($0))", NULL, NULL)                               \
  X(SIGN, "aten::sign", "0", "", R_SAME, "(($T)((0 < $0) - ($0 < 0)))", "((0 < $0) - ($0 < 0))", "$0")   \
  X(BITWISE_NOT, "aten::bitwise_not", "0", "", R_SAME, NULL, "(~$0)", "(!$0)")                           \
  X(LOGICAL_NOT, "aten::logical_not", "0", "", R_BOOLSELF, "(!($0 != 0))", "(!($0 != 0))", "(!$0)")      \
  X(ISNAN, "aten::isnan", "0", "", R_BOOLSELF, "($0 != $0)", "0", "0")                                   \
  X(ISINF, "aten::isinf", "0", "", R_BOOLSELF, "(fabs$f($0) == ($T)LF_INF)", "0", "0")                   \
  X(ISFINITE, "aten::isfinite", "0", "", R_BOOLSELF, "($0 - $0 == 0)", "1", "1")                         \
  X(CLAMP, "aten::clamp", "012", "", R_PROMOTE, "($2 < ($0 < $1 ? $1 : $0) ? $2 : ($0 < $1 ? $1 : $0))",  \
    "($2 < ($0 < $1 ? $1 : $0) ? $2 : ($0 < $1 ? $1 : $0))", NULL)                                       \
  X(CLAMP_LO, "aten::clamp", "01", "", R_PROMOTE, "($0 < $1 ? $1 : $0)", "($0 < $1 ? $1 : $0)", NULL)    \
  X(CLAMP_HI, "aten::clamp", "02", "", R_PROMOTE, "($1 < $0 ? $1 : $0)", "($1 < $0 ? $1 : $0)", NULL)    \
  X(CLAMP_MIN, "aten::clamp_min", "01", "", R_PROMOTE, "($0 < $1 ? $1 : $0)", "($0 < $1 ? $1 : $0)", NULL) \
  X(CLAMP_MAX, "aten::clamp_max", "01", "", R_PROMOTE, "($1 < $0 ? $1 : $0)", "($1 < $0 ? $1 : $0)", NULL) \
  X(CLAMP_T, "aten::clamp.Tensor", "012", "", R_PROMOTE, LF_MINN(LF_MAXN("$0", "$1"), "$2"),           \
    "($2 < ($0 < $1 ? $1 : $0) ? $2 : ($0 < $1 ? $1 : $0))", NULL)                                       \
  X(CLAMP_T_LO, "aten::clamp.Tensor", "01", "", R_PROMOTE, LF_MAXN("$0", "$1"), "($0 < $1 ? $1 : $0)", NULL) \
  X(CLAMP_T_HI, "aten::clamp.Tensor", "02", "", R_PROMOTE, LF_MINN("$0", "$1"), "($1 < $0 ? $1 : $0)", NULL) \
  X(CLAMP_MIN_T, "aten::clamp_min.Tensor", "01", "", R_PROMOTE, LF_MAXN("$0", "$1"), "($0 < $1 ? $1 : $0)", NULL) \
  X(CLAMP_MAX_T, "aten::clamp_max.Tensor", "01", "", R_PROMOTE, LF_MINN("$0", "$1"), "($1 < $0 ? $1 : $0)", NULL) \
  X(ADD_T, "aten::add.Tensor", "01", "", R_PROMOTE, "($0 + $1)",                                         \
    "((int64_t)((uint64_t)$0 + (uint64_t)$1))", "($0 | $1)")                                              \
  X(ADD_S, "aten::add.Scalar", "01", "", R_PROMOTE, "($0 + $1)",                                         \
    "((int64_t)((uint64_t)$0 + (uint64_t)$1))", "($0 | $1)")                                              \
  X(ADD_T_ALPHA, "aten::add.Tensor", "01", "2", R_PROMOTE, "($0 + $2 * $1)",                             \
    "((int64_t)((uint64_t)$0 + (uint64_t)$2 * (uint64_t)$1))", NULL)                                      \
  X(ADD_S_ALPHA, "aten::add.Scalar", "01", "2", R_PROMOTE, "($0 + $2 * $1)",                             \
    "((int64_t)((uint64_t)$0 + (uint64_t)$2 * (uint64_t)$1))", NULL)                                      \
  X(SUB_T, "aten::sub.Tensor", "01", "", R_PROMOTE, "($0 - $1)", "((int64_t)((uint64_t)$0 - (uint64_t)$1))", NULL) \
  X(SUB_S, "aten::sub.Scalar", "01", "", R_PROMOTE, "($0 - $1)", "((int64_t)((uint64_t)$0 - (uint64_t)$1))", NULL) \
  X(SUB_T_ALPHA, "aten::sub.Tensor", "01", "2", R_PROMOTE, "($0 - $2 * $1)",                             \
    "((int64_t)((uint64_t)$0 - (uint64_t)$2 * (uint64_t)$1))", NULL)                                      \
  X(SUB_S_ALPHA, "aten::sub.Scalar", "01", "2", R_PROMOTE, "($0 - $2 * $1)",                             \
    "((int64_t)((uint64_t)$0 - (uint64_t)$2 * (uint64_t)$1))", NULL)                                      \
  X(RSUB_T, "aten::rsub.Tensor", "01", "", R_PROMOTE, "($1 - $0)", "((int64_t)((uint64_t)$1 - (uint64_t)$0))", NULL) \
  X(RSUB_S, "aten::rsub.Scalar", "01", "", R_PROMOTE, "($1 - $0)", "((int64_t)((uint64_t)$1 - (uint64_t)$0))", NULL) \
  X(MUL_T, "aten::mul.Tensor", "01", "", R_PROMOTE, "($0 * $1)",                                         \
    "((int64_t)((uint64_t)$0 * (uint64_t)$1))", "($0 & $1)")                                              \
  X(MUL_S, "aten::mul.Scalar", "01", "", R_PROMOTE, "($0 * $1)",                                         \
    "((int64_t)((uint64_t)$0 * (uint64_t)$1))", "($0 & $1)")                                              \
  X(DIV_T, "aten::div.Tensor", "01", "", R_FLOAT, "($0 / $1)", NULL, NULL)                               \
  X(DIV_S, "aten::div.Scalar", "01", "", R_FLOAT, "($0 / $1)", NULL, NULL)                               \
  X(DIV_TRUNC, "aten::div.Tensor_mode", "01", "", R_PROMOTE, "trunc$f($0 / $1)", NULL, NULL)             \
  X(DIV_FLOOR, "aten::div.Tensor_mode", "01", "", R_PROMOTE, "lf_floordiv$f($0, $1)", NULL, NULL)        \
  X(DIV_S_TRUNC, "aten::div.Scalar_mode", "01", "", R_PROMOTE, "trunc$f($0 / $1)", NULL, NULL)           \
  X(DIV_S_FLOOR, "aten::div.Scalar_mode", "01", "", R_PROMOTE, "lf_floordiv$f($0, $1)", NULL, NULL)      \
  X(DIV_TRUE, "aten::div.Tensor_mode", "01", "", R_FLOAT, "($0 / $1)", NULL, NULL)                       \
  X(DIV_S_TRUE, "aten::div.Scalar_mode", "01", "", R_FLOAT, "($0 / $1)", NULL, NULL)                     \
  X(FLOOR_DIVIDE, "aten::floor_divide", "01", "", R_PROMOTE, "lf_floordiv$f($0, $1)", NULL, NULL)        \
  X(FLOOR_DIVIDE_S, "aten::floor_divide.Scalar", "01", "", R_PROMOTE, "lf_floordiv$f($0, $1)", NULL, NULL) \
  X(REMAINDER_T, "aten::remainder.Tensor", "01", "", R_PROMOTE, "lf_rem$f($0, $1)", NULL, NULL)          \
  X(REMAINDER_S, "aten::remainder.Scalar", "01", "", R_PROMOTE, "lf_rem$f($0, $1)", NULL, NULL)          \
  X(FMOD_T, "aten::fmod.Tensor", "01", "", R_PROMOTE, "fmod$f($0, $1)", NULL, NULL)                      \
  X(FMOD_S, "aten::fmod.Scalar", "01", "", R_PROMOTE, "fmod$f($0, $1)", NULL, NULL)                      \
  X(POW_TT, "aten::pow.Tensor_Tensor", "01", "", R_PROMOTE, "pow$f($0, $1)", NULL, NULL)                 \
  X(POW_TS, "aten::pow.Tensor_Scalar", "01", "", R_PROMOTE, "pow$f($0, $1)", NULL, NULL)                 \
  X(POW_2, "aten::pow.Tensor_Scalar", "01", "", R_PROMOTE, "($0 * $0)", NULL, NULL)                      \
  X(POW_3, "aten::pow.Tensor_Scalar", "01", "", R_PROMOTE, "($0 * $0 * $0)", NULL, NULL)                 \
  X(POW_HALF, "aten::pow.Tensor_Scalar", "01", "", R_PROMOTE, "sqrt$f($0)", NULL, NULL)                  \
  X(POW_M1, "aten::pow.Tensor_Scalar", "01", "", R_PROMOTE, "(($T)1 / $0)", NULL, NULL)                  \
  X(POW_M2, "aten::pow.Tensor_Scalar", "01", "", R_PROMOTE, "(($T)1 / ($0 * $0))", NULL, NULL)           \
  X(POW_MHALF, "aten::pow.Tensor_Scalar", "01", "", R_PROMOTE, "(($T)1 / sqrt$f($0))", NULL, NULL)       \
  X(POW_S, "aten::pow.Scalar", "01", "", R_PROMOTE, "pow$f($0, $1)", NULL, NULL)                         \
  X(ATAN2, "aten::atan2", "01", "", R_FLOAT, "atan2$f($0, $1)", NULL, NULL)                              \
  X(HYPOT, "aten::hypot", "01", "", R_PROMOTE, "hypot$f($0, $1)", NULL, NULL)                            \
  X(MAXIMUM, "aten::maximum", "01", "", R_PROMOTE, "($0 != $0 ? $0 : ($1 != $1 ? $1 : ($0 > $1 ? $0 : $1)))", \
    "($0 > $1 ? $0 : $1)", "($0 > $1 ? $0 : $1)")                                                         \
  X(MINIMUM, "aten::minimum", "01", "", R_PROMOTE, "($0 != $0 ? $0 : ($1 != $1 ? $1 : ($0 < $1 ? $0 : $1)))", \
    "($0 < $1 ? $0 : $1)", "($0 < $1 ? $0 : $1)")                                                         \
  X(MAX_OTHER, "aten::max.other", "01", "", R_PROMOTE, "($0 != $0 ? $0 : ($1 != $1 ? $1 : ($0 > $1 ? $0 : $1)))", \
    "($0 > $1 ? $0 : $1)", "($0 > $1 ? $0 : $1)")                                                         \
  X(MIN_OTHER, "aten::min.other", "01", "", R_PROMOTE, "($0 != $0 ? $0 : ($1 != $1 ? $1 : ($0 < $1 ? $0 : $1)))", \
    "($0 < $1 ? $0 : $1)", "($0 < $1 ? $0 : $1)")                                                         \
  X(EQ_T, "aten::eq.Tensor", "01", "", R_BOOL, "($0 == $1)", "($0 == $1)", "($0 == $1)")                 \
  X(EQ_S, "aten::eq.Scalar", "01", "", R_BOOL, "($0 == $1)", "($0 == $1)", "($0 == $1)")                 \
  X(NE_T, "aten::ne.Tensor", "01", "", R_BOOL, "($0 != $1)", "($0 != $1)", "($0 != $1)")                 \
  X(NE_S, "aten::ne.Scalar", "01", "", R_BOOL, "($0 != $1)", "($0 != $1)", "($0 != $1)")                 \
  X(LT_T, "aten::lt.Tensor", "01", "", R_BOOL, "($0 < $1)", "($0 < $1)", "($0 < $1)")                    \
  X(LT_S, "aten::lt.Scalar", "01", "", R_BOOL, "($0 < $1)", "($0 < $1)", "($0 < $1)")                    \
  X(LE_T, "aten::le.Tensor", "01", "", R_BOOL, "($0 <= $1)", "($0 <= $1)", "($0 <= $1)")                 \
  X(LE_S, "aten::le.Scalar", "01", "", R_BOOL, "($0 <= $1)", "($0 <= $1)", "($0 <= $1)")                 \
  X(GT_T, "aten::gt.Tensor", "01", "", R_BOOL, "($0 > $1)", "($0 > $1)", "($0 > $1)")                    \
  X(GT_S, "aten::gt.Scalar", "01", "", R_BOOL, "($0 > $1)", "($0 > $1)", "($0 > $1)")                    \
  X(GE_T, "aten::ge.Tensor", "01", "", R_BOOL, "($0 >= $1)", "($0 >= $1)", "($0 >= $1)")                 \
  X(GE_S, "aten::ge.Scalar", "01", "", R_BOOL, "($0 >= $1)", "($0 >= $1)", "($0 >= $1)")                 \
  X(LOGICAL_AND, "aten::logical_and", "01", "", R_BOOL, "(($0 != 0) && ($1 != 0))", "(($0 != 0) && ($1 != 0))", \
    "($0 && $1)")                                                                                         \
  X(LOGICAL_OR, "aten::logical_or", "01", "", R_BOOL, "(($0 != 0) || ($1 != 0))", "(($0 != 0) || ($1 != 0))", \
    "($0 || $1)")                                                                                         \
  X(LOGICAL_XOR, "aten::logical_xor", "01", "", R_BOOL, "(($0 != 0) != ($1 != 0))", "(($0 != 0) != ($1 != 0))", \
    "($0 != $1)")                                                                                         \
  X(BAND_T, "aten::bitwise_and.Tensor", "01", "", R_PROMOTE, NULL, "($0 & $1)", "($0 & $1)")             \
  X(BAND_S, "aten::bitwise_and.Scalar", "01", "", R_PROMOTE, NULL, "($0 & $1)", "($0 & $1)")             \
  X(BOR_T, "aten::bitwise_or.Tensor", "01", "", R_PROMOTE, NULL, "($0 | $1)", "($0 | $1)")               \
  X(BOR_S, "aten::bitwise_or.Scalar", "01", "", R_PROMOTE, NULL, "($0 | $1)", "($0 | $1)")               \
  X(BXOR_T, "aten::bitwise_xor.Tensor", "01", "", R_PROMOTE, NULL, "($0 ^ $1)", "($0 ^ $1)")             \
  X(BXOR_S, "aten::bitwise_xor.Scalar", "01", "", R_PROMOTE, NULL, "($0 ^ $1)", "($0 ^ $1)")             \
  X(AND_T, "aten::__and__.Tensor", "01", "", R_PROMOTE, NULL, "($0 & $1)", "($0 & $1)")                  \
  X(AND_S, "aten::__and__.Scalar", "01", "", R_PROMOTE, NULL, "($0 & $1)", "($0 & $1)")                  \
  X(OR_T, "aten::__or__.Tensor", "01", "", R_PROMOTE, NULL, "($0 | $1)", "($0 | $1)")                    \
  X(OR_S, "aten::__or__.Scalar", "01", "", R_PROMOTE, NULL, "($0 | $1)", "($0 | $1)")                    \
  X(XOR_T, "aten::__xor__.Tensor", "01", "", R_PROMOTE, NULL, "($0 ^ $1)", "($0 ^ $1)")                  \
  X(XOR_S, "aten::__xor__.Scalar", "01", "", R_PROMOTE, NULL, "($0 ^ $1)", "($0 ^ $1)")                  \
  X(WHERE, "aten::where.self", "012", "", R_WHERE, "($0 ? $1 : $2)", "($0 ? $1 : $2)", "($0 ? $1 : $2)") \
  X(WHERE_SS, "aten::where.ScalarSelf", "012", "", R_WHERE, "($0 ? $1 : $2)", "($0 ? $1 : $2)", "($0 ? $1 : $2)") \
  X(WHERE_SO, "aten::where.ScalarOther", "012", "", R_WHERE, "($0 ? $1 : $2)", "($0 ? $1 : $2)", "($0 ? $1 : $2)") \
  X(WHERE_S, "aten::where.Scalar", "012", "", R_WHERE, "($0 ? $1 : $2)", "($0 ? $1 : $2)", "($0 ? $1 : $2)") \
  X(LERP_T, "aten::lerp.Tensor", "012", "", R_SAME,                                                       \
    "(fabs$f($2) < ($T)0.5 ? $0 + $2 * ($1 - $0) : $1 - ($1 - $0) * (($T)1 - $2))", NULL, NULL)           \
  X(LERP_S, "aten::lerp.Scalar", "01", "2", R_SAME,                                                       \
    "(fabs$f($2) < ($T)0.5 ? $0 + $2 * ($1 - $0) : $1 - ($1 - $0) * (($T)1 - $2))", NULL, NULL)           \
  X(ADDCMUL, "aten::addcmul", "012", "3", R_PROMOTE, "($0 + $3 * $1 * $2)", NULL, NULL)                  \
  X(ADDCDIV, "aten::addcdiv", "012", "3", R_PROMOTE, "($0 + $3 * $1 / $2)", NULL, NULL)                  \
  X(MASKED_FILL_T, "aten::masked_fill.Tensor", "012", "", R_MASKED, "($1 ? $2 : $0)", "($1 ? $2 : $0)", "($1 ? $2 : $0)") \
  X(MASKED_FILL_S, "aten::masked_fill.Scalar", "012", "", R_MASKED, "($1 ? $2 : $0)", "($1 ? $2 : $0)", "($1 ? $2 : $0)") \
  X(TO_DTYPE, "aten::to.dtype", "0", "", R_TO, "$0", "$0", "$0")

typedef struct lf_opdef {
  const char *name;
  const char *operands, *params;
  int rule;
  const char *tf, *ti, *tb;
} lf_opdef;

enum {
#define ID(id, ...) LF_OP_##id,
  LF_OPS(ID)
#undef ID
  LF_NOPS
};

static const lf_opdef ops[LF_NOPS] = {
#define ROW(id, name, operands, params, rule, tf, ti, tb) {name, operands, params, rule, tf, ti, tb},
    LF_OPS(ROW)
#undef ROW
};

const char *lf_op_name(int op) { return op >= 0 && op < LF_NOPS ? ops[op].name : "?"; }

/* ---- dtypes ----------------------------------------------------------------------- */

int lf_is_float(int dt) { return dt == LF_F16 || dt == LF_F32 || dt == LF_F64 || dt == LF_BF16; }
int lf_is_int(int dt) { return dt >= LF_U8 && dt <= LF_I64; }
int lf_valid_dtype(int dt) { return lf_is_float(dt) || lf_is_int(dt) || dt == LF_BOOL; }

int lf_dtype_size(int dt) {
  switch (dt) {
    case LF_U8: case LF_I8: case LF_BOOL: return 1;
    case LF_I16: case LF_F16: case LF_BF16: return 2;
    case LF_I32: case LF_F32: return 4;
    default: return 8;
  }
}

/* torch.promote_types */
int lf_promote(int a, int b) {
  if (a == b) return a;
  if (a == LF_BOOL) return b;
  if (b == LF_BOOL) return a;
  if (lf_is_float(a) || lf_is_float(b)) {
    if (!lf_is_float(a)) return b;
    if (!lf_is_float(b)) return a;
    if ((a == LF_F16 && b == LF_BF16) || (a == LF_BF16 && b == LF_F16)) return LF_F32;
    if (a == LF_F64 || b == LF_F64) return LF_F64;
    if (a == LF_F32 || b == LF_F32) return LF_F32;
    return a;
  }
  /* integers: uint8 with a signed type needs the next wider signed one */
  if (a == LF_U8 || b == LF_U8) {
    int s = a == LF_U8 ? b : a;
    return s == LF_I8 ? LF_I16 : s;
  }
  return a > b ? a : b;
}

static int category(int dt) { return dt == LF_BOOL ? 0 : lf_is_int(dt) ? 1 : 2; }

/* torch.result_type: tensors with dims outrank 0-d tensors, which outrank
 * wrapped numbers; a lower class only counts when its category is higher,
 * and a wrapped number then contributes its category's default dtype. */
static int result_type(const lf_value *const *v, int n) {
  int cls[3] = {-1, -1, -1};
  for (int i = 0; i < n; i++) {
    int dt = v[i]->dtype;
    if (v[i]->prio == LF_PRIO_SCALAR) dt = dt == LF_F64 ? LF_F32 : dt; /* default dtype */
    int *c = &cls[v[i]->prio];
    *c = *c < 0 ? dt : lf_promote(*c, dt);
  }
  int r = cls[LF_PRIO_TENSOR];
  for (int p = LF_PRIO_ZERODIM; p >= LF_PRIO_SCALAR; p--) {
    if (cls[p] < 0) continue;
    if (r < 0) r = cls[p];
    else if (category(cls[p]) > category(r)) r = lf_promote(r, cls[p]);
  }
  return r;
}

static int to_float(int dt) { return lf_is_float(dt) ? dt : LF_F32; }

int lf_op_dtypes(int op, const lf_value *const *a, int n, int *cd, int *rd) {
  switch (ops[op].rule) {
    case R_SAME: *cd = *rd = a[0]->dtype; break;
    case R_UFLOAT: *cd = *rd = to_float(a[0]->dtype); break;
    case R_PROMOTE: *cd = *rd = result_type(a, n); break;
    case R_FLOAT: *cd = *rd = to_float(result_type(a, n)); break;
    case R_BOOL: *cd = result_type(a, n); *rd = LF_BOOL; break;
    case R_BOOLSELF: *cd = a[0]->dtype; *rd = LF_BOOL; break;
    case R_SQUARE: *cd = *rd = a[0]->dtype == LF_BOOL ? LF_I64 : a[0]->dtype; break;
    case R_WHERE: *cd = *rd = result_type(a + 1, n - 1); break;
    case R_MASKED: *cd = *rd = a[0]->dtype; break;
    default: return -1; /* R_TO: the caller knows the dtype */
  }
  /* scalar-only results have no tensor to take the dtype from */
  return *cd < 0 ? -1 : 0;
}

int lf_op_is_bool_valued(int op) { return ops[op].rule == R_BOOL || ops[op].rule == R_BOOLSELF; }
/* Which argument is a bool selector used as it is (-1: none). */
int lf_op_selector(int op) { return ops[op].rule == R_WHERE ? 0 : ops[op].rule == R_MASKED ? 1 : -1; }

const char *lf_op_template(int op, int cd) {
  if (lf_is_float(cd)) return ops[op].tf;
  if (cd == LF_BOOL) return ops[op].tb;
  return ops[op].ti;
}

/* ---- matching nodes -------------------------------------------------------------------- */

static int find(const char *qual, int from) {
  for (int i = from; i < LF_NOPS; i++)
    if (!strcmp(ops[i].name, qual)) return i;
  return -1;
}

static int is_const_num(const fbxp_value *v, double *out) {
  int64_t i;
  if (lf_host->value_const_float(v, out)) return 1;
  if (lf_host->value_const_int(v, &i)) {
    *out = (double)i;
    return 1;
  }
  return 0;
}

/* Is argument `idx` of the schema text "ns::name.overload(T a, U b, *, V c)
 * -> R" declared `Scalar`? (The IR passes keyword-only arguments
 * positionally, so the `*` marker is skipped.) */
static int schema_arg_is_scalar(const char *schema, int idx) {
  const char *p = strchr(schema, '(');
  if (!p) return 0;
  p++;
  for (int k = 0;;) {
    while (*p == ' ') p++;
    if (*p == ')' || !*p) return 0;
    if (*p == '*') {
      p++;
    } else if (k++ == idx) {
      return !strncmp(p, "Scalar", 6) && (p[6] == ' ' || p[6] == '?');
    }
    /* to the next top-level comma (defaults may hold lists and strings) */
    for (int depth = 0, quote = 0; *p; p++) {
      if (quote) quote = *p != '"';
      else if (*p == '"') quote = 1;
      else if (*p == '[' || *p == '(') depth++;
      else if ((*p == ']' || *p == ')') && depth) depth--;
      else if ((*p == ',' || *p == ')') && !depth) break;
    }
    if (*p != ',') return 0;
    p++;
  }
}

/* A scalar argument: a constant or a value of scalar type (a kernel input),
 * or a value typed `Scalar` where the overload takes a Scalar (a backward
 * graph's unchecked_cast of a saved number): the host passes it as an int
 * or a float at run time, and compile sees which. */
static int scalar_ok(const fbxp_value *v, const char *schema, int idx) {
  fbxp_type_kind k = lf_host->value_kind(v);
  if (k == FBXP_TYPE_OTHER) return schema_arg_is_scalar(schema, idx);
  return k == FBXP_TYPE_INT || k == FBXP_TYPE_FLOAT || k == FBXP_TYPE_BOOL;
}

static void fill(lf_opmatch *m, int op) {
  m->op = op;
  m->noperands = (int)strlen(ops[op].operands);
  for (int i = 0; i < m->noperands; i++) m->operand_input[i] = ops[op].operands[i] - '0';
  m->nparams = (int)strlen(ops[op].params);
  for (int i = 0; i < m->nparams; i++) m->param_input[i] = ops[op].params[i] - '0';
}

int lf_op_match(const fbxp_node *n, lf_opmatch *m) {
  const char *schema = lf_host->node_schema(n);
  if (!schema) return -1;
  char qual[96];
  size_t len = strcspn(schema, "(");
  if (len >= sizeof qual) return -1;
  memcpy(qual, schema, len);
  qual[len] = 0;
  int op = find(qual, 0);
  if (op < 0) return -1;
  int nin = lf_host->node_num_inputs(n);
  double x;
  const char *s;
  /* variants picked by constant arguments */
  switch (op) {
    case LF_OP_GELU:
      if (nin > 1) {
        if (!lf_host->value_const_str(lf_host->node_input(n, 1), &s)) return -1;
        if (!strcmp(s, "tanh")) op = LF_OP_GELU_TANH;
        else if (strcmp(s, "none")) return -1;
      }
      break;
    case LF_OP_CLAMP: {
      int lo_none = nin < 2 || lf_host->value_is_none(lf_host->node_input(n, 1));
      int hi_none = nin < 3 || lf_host->value_is_none(lf_host->node_input(n, 2));
      if (lo_none && hi_none) return -1;
      op = lo_none ? LF_OP_CLAMP_HI : hi_none ? LF_OP_CLAMP_LO : LF_OP_CLAMP;
      break;
    }
    case LF_OP_CLAMP_T: {
      int lo_none = nin < 2 || lf_host->value_is_none(lf_host->node_input(n, 1));
      int hi_none = nin < 3 || lf_host->value_is_none(lf_host->node_input(n, 2));
      if (lo_none && hi_none) return -1;
      op = lo_none ? LF_OP_CLAMP_T_HI : hi_none ? LF_OP_CLAMP_T_LO : LF_OP_CLAMP_T;
      break;
    }
    case LF_OP_ADD_T: case LF_OP_ADD_S: case LF_OP_SUB_T: case LF_OP_SUB_S: case LF_OP_RSUB_T: case LF_OP_RSUB_S:
      if (nin < 3 || !is_const_num(lf_host->node_input(n, 2), &x) || x != 1) {
        if (op == LF_OP_RSUB_T || op == LF_OP_RSUB_S) return -1;
        op = op == LF_OP_ADD_T ? LF_OP_ADD_T_ALPHA : op == LF_OP_ADD_S ? LF_OP_ADD_S_ALPHA
           : op == LF_OP_SUB_T ? LF_OP_SUB_T_ALPHA : LF_OP_SUB_S_ALPHA;
      }
      break;
    case LF_OP_DIV_TRUNC: case LF_OP_DIV_S_TRUNC: {
      int scal = op == LF_OP_DIV_S_TRUNC;
      const fbxp_value *mode = nin > 2 ? lf_host->node_input(n, 2) : NULL;
      if (!mode || lf_host->value_is_none(mode)) op = scal ? LF_OP_DIV_S_TRUE : LF_OP_DIV_TRUE;
      else if (!lf_host->value_const_str(mode, &s)) return -1;
      else if (!strcmp(s, "floor")) op = scal ? LF_OP_DIV_S_FLOOR : LF_OP_DIV_FLOOR;
      else if (strcmp(s, "trunc")) return -1;
      break;
    }
    case LF_OP_POW_TS:
      if (nin > 1 && is_const_num(lf_host->node_input(n, 1), &x)) {
        if (x == 2) op = LF_OP_POW_2;
        else if (x == 3) op = LF_OP_POW_3;
        else if (x == 0.5) op = LF_OP_POW_HALF;
        else if (x == -1) op = LF_OP_POW_M1;
        else if (x == -2) op = LF_OP_POW_M2;
        else if (x == -0.5) op = LF_OP_POW_MHALF;
      }
      break;
    case LF_OP_TO_DTYPE: {
      int64_t dt;
      if (nin < 2 || !lf_host->value_const_int(lf_host->node_input(n, 1), &dt) || !lf_valid_dtype((int)dt)) return -1;
      /* non_blocking/copy do not change the values; a memory format would */
      if (nin > 4 && !lf_host->value_is_none(lf_host->node_input(n, 4))) return -1;
      break;
    }
    default: break;
  }
  fill(m, op);
  /* every operand a tensor or a scalar; every parameter a scalar */
  for (int i = 0; i < m->noperands; i++) {
    if (m->operand_input[i] >= nin) return -1;
    const fbxp_value *v = lf_host->node_input(n, m->operand_input[i]);
    if (lf_host->value_kind(v) != FBXP_TYPE_TENSOR && !scalar_ok(v, schema, m->operand_input[i])) return -1;
  }
  for (int i = 0; i < m->nparams; i++) {
    if (m->param_input[i] >= nin || !scalar_ok(lf_host->node_input(n, m->param_input[i]), schema, m->param_input[i]))
      return -1;
  }
  if (lf_host->node_num_outputs(n) != 1 || lf_host->value_kind(lf_host->node_output(n, 0)) != FBXP_TYPE_TENSOR)
    return -1;
  return m->op;
}

int lf_op_is_to(int op) { return op == LF_OP_TO_DTYPE; }

/* ---- fusability at partition time ---------------------------------------------------------- */

/* The dtype a value had when profiled: -1 unknown (also a `Scalar`, which
 * lf_op_match accepted: int or float is known at compile), -2 not a
 * tensor/number. */
static int profiled(const fbxp_value *v, int *prio, int *cpu) {
  fbxp_type_kind k = lf_host->value_kind(v);
  *prio = LF_PRIO_SCALAR;
  if (k == FBXP_TYPE_FLOAT) return LF_F64;
  if (k == FBXP_TYPE_INT) return LF_I64;
  if (k == FBXP_TYPE_BOOL) return LF_BOOL;
  if (k == FBXP_TYPE_OTHER) return -1;
  if (k != FBXP_TYPE_TENSOR) return -2;
  fbxp_tensor_type t;
  memset(&t, 0, sizeof t);
  t.struct_size = FBXP_TENSOR_TYPE_SIZE_V1_0;
  if (lf_host->value_tensor_type(v, &t)) return -2;
  *prio = t.ndim == 0 ? LF_PRIO_ZERODIM : LF_PRIO_TENSOR;
  if (t.device_type != 0 && t.device_type != kDLCPU) *cpu = 0;
  return t.dtype;
}

int lf_node_fusable(const fbxp_node *n) {
  lf_opmatch m;
  if (lf_op_match(n, &m) < 0) return 0;
  lf_value vals[4];
  const lf_value *ops_[4];
  int cpu = 1, unknown = 0;
  memset(vals, 0, sizeof vals);
  for (int i = 0; i < m.noperands; i++) {
    int dt = profiled(lf_host->node_input(n, m.operand_input[i]), &vals[i].prio, &cpu);
    if (dt == -2) return 0;
    if (dt < 0) unknown = 1;
    vals[i].dtype = dt;
    ops_[i] = &vals[i];
  }
  int prio;
  profiled(lf_host->node_output(n, 0), &prio, &cpu);
  if (!cpu) return 0;
  if (m.op == LF_OP_TO_DTYPE) {
    /* a conversion to the same dtype returns its input (an alias): fusing
     * it would turn the alias into a copy */
    int64_t dt = -1;
    lf_host->value_const_int(lf_host->node_input(n, 1), &dt);
    return !unknown && vals[0].dtype != dt;
  }
  if (unknown) return 1; /* compile decides once the dtypes are known */
  int cd, rd;
  if (lf_op_dtypes(m.op, ops_, m.noperands, &cd, &rd)) return 0;
  return lf_op_template(m.op, cd) != NULL;
}
