/* Op table rows: pointwise ops (unary, binary, ternary, conversion).
 * (See ops/optable.h for the columns.) Kernels: ops/k_unary.c, k_binary.c,
 * k_ternary.c, k_convert.c, all on the engine in ops/pointwise.h. Schemas are
 * PyTorch 1.13's; overloads of one name are listed Tensor first. The binary
 * rows never match all-scalar arguments (`Tensor self` needs a tensor), so
 * script arithmetic (aten::add.int, ...) falls through to list_scalar.h. */
#ifndef FBX_OPS_LIST_POINTWISE_H
#define FBX_OPS_LIST_POINTWISE_H

#define FBX_OPS_POINTWISE(X) \
  X(abs, "aten::abs(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_abs) \
  X(neg, "aten::neg(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_neg) \
  X(reciprocal, "aten::reciprocal(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_reciprocal) \
  X(sqrt, "aten::sqrt(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_sqrt) \
  X(rsqrt, "aten::rsqrt(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_rsqrt) \
  X(square, "aten::square(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE, FBX_SH_SAME, 0, fbx_k_pw_square) \
  X(exp, "aten::exp(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_exp) \
  X(exp2, "aten::exp2(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_exp2) \
  X(expm1, "aten::expm1(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_expm1) \
  X(log, "aten::log(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_log) \
  X(log2, "aten::log2(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_log2) \
  X(log10, "aten::log10(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_log10) \
  X(log1p, "aten::log1p(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_log1p) \
  X(sin, "aten::sin(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_sin) \
  X(cos, "aten::cos(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_cos) \
  X(tan, "aten::tan(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_tan) \
  X(asin, "aten::asin(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_asin) \
  X(acos, "aten::acos(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_acos) \
  X(atan, "aten::atan(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_atan) \
  X(sinh, "aten::sinh(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_sinh) \
  X(cosh, "aten::cosh(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_cosh) \
  X(tanh, "aten::tanh(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_tanh) \
  X(erf, "aten::erf(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_erf) \
  X(erfc, "aten::erfc(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_erfc) \
  X(lgamma, "aten::lgamma(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_lgamma) \
  X(sigmoid, "aten::sigmoid(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_sigmoid) \
  X(logit, "aten::logit(Tensor self, float? eps=None) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_logit) \
  X(relu, "aten::relu(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_relu) \
  X(relu6, "aten::relu6(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_relu6) \
  X(leaky_relu, "aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_leaky_relu) \
  X(elu, "aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_elu) \
  X(gelu, "aten::gelu(Tensor self, *, str approximate=\"none\") -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_gelu) \
  X(silu, "aten::silu(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_silu) \
  X(mish, "aten::mish(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_mish) \
  X(softplus, "aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_softplus) \
  X(hardtanh, "aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_hardtanh) \
  X(hardsigmoid, "aten::hardsigmoid(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_hardsigmoid) \
  X(hardswish, "aten::hardswish(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_hardswish) \
  X(threshold, "aten::threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_threshold) \
  X(floor, "aten::floor(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_floor) \
  X(ceil, "aten::ceil(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_ceil) \
  X(round, "aten::round(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_round) \
  X(round_decimals, "aten::round.decimals(Tensor self, *, int decimals) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_round_decimals) \
  X(trunc, "aten::trunc(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_trunc) \
  X(frac, "aten::frac(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_frac) \
  X(sign, "aten::sign(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_sign) \
  X(bitwise_not, "aten::bitwise_not(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_bitwise_not) \
  X(logical_not, "aten::logical_not(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_BOOL, FBX_SH_SAME, 0, fbx_k_pw_logical_not) \
  X(isnan, "aten::isnan(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_BOOL, FBX_SH_SAME, 0, fbx_k_pw_isnan) \
  X(isinf, "aten::isinf(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_BOOL, FBX_SH_SAME, 0, fbx_k_pw_isinf) \
  X(isfinite, "aten::isfinite(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_BOOL, FBX_SH_SAME, 0, fbx_k_pw_isfinite) \
  X(nan_to_num, "aten::nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_nan_to_num) \
  X(clamp, "aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE, FBX_SH_SAME, 0, fbx_k_pw_clamp) \
  X(clamp_Tensor, "aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor", \
    FBX_OPCAT_TERNARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_clamp_Tensor) \
  X(clamp_min_Tensor, "aten::clamp_min.Tensor(Tensor self, Tensor min) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_clamp_min_Tensor) \
  X(clamp_min, "aten::clamp_min(Tensor self, Scalar min) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_SAME, 0, fbx_k_pw_clamp_min) \
  X(clamp_max_Tensor, "aten::clamp_max.Tensor(Tensor self, Tensor max) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_clamp_max_Tensor) \
  X(clamp_max, "aten::clamp_max(Tensor self, Scalar max) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_SAME, 0, fbx_k_pw_clamp_max) \
  X(add_Tensor, "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_add_Tensor) \
  X(add_Scalar, "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_add_Scalar) \
  X(sub_Tensor, "aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_sub_Tensor) \
  X(sub_Scalar, "aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_sub_Scalar) \
  X(rsub_Tensor, "aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_rsub_Tensor) \
  X(rsub_Scalar, "aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_rsub_Scalar) \
  X(mul_Tensor, "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_mul_Tensor) \
  X(mul_Scalar, "aten::mul.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_mul_Scalar) \
  X(div_Tensor, "aten::div.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_BROADCAST, 0, fbx_k_pw_div_Tensor) \
  X(div_Scalar, "aten::div.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_BROADCAST, 0, fbx_k_pw_div_Scalar) \
  X(div_Tensor_mode, "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_CUSTOM, FBX_SH_BROADCAST, 0, fbx_k_pw_div_Tensor_mode) \
  X(div_Scalar_mode, "aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_CUSTOM, FBX_SH_BROADCAST, 0, fbx_k_pw_div_Scalar_mode) \
  X(floor_divide, "aten::floor_divide(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_floor_divide) \
  X(floor_divide_Scalar, "aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_floor_divide_Scalar) \
  X(remainder_Tensor, "aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_remainder_Tensor) \
  X(remainder_Scalar, "aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_remainder_Scalar) \
  X(remainder_Scalar_Tensor, "aten::remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_remainder_Scalar_Tensor) \
  X(fmod_Tensor, "aten::fmod.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_fmod_Tensor) \
  X(fmod_Scalar, "aten::fmod.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_fmod_Scalar) \
  X(pow_Tensor_Tensor, "aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_pow_Tensor_Tensor) \
  X(pow_Tensor_Scalar, "aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_pow_Tensor_Scalar) \
  X(pow_Scalar, "aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_pow_Scalar) \
  X(atan2, "aten::atan2(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_BROADCAST, 0, fbx_k_pw_atan2) \
  X(hypot, "aten::hypot(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_hypot) \
  X(maximum, "aten::maximum(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_maximum) \
  X(minimum, "aten::minimum(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_minimum) \
  X(max_other, "aten::max.other(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_max_other) \
  X(min_other, "aten::min.other(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_min_other) \
  X(eq_Tensor, "aten::eq.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_BOOL, FBX_SH_BROADCAST, 0, fbx_k_pw_eq_Tensor) \
  X(eq_Scalar, "aten::eq.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_BOOL, FBX_SH_BROADCAST, 0, fbx_k_pw_eq_Scalar) \
  X(ne_Tensor, "aten::ne.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_BOOL, FBX_SH_BROADCAST, 0, fbx_k_pw_ne_Tensor) \
  X(ne_Scalar, "aten::ne.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_BOOL, FBX_SH_BROADCAST, 0, fbx_k_pw_ne_Scalar) \
  X(lt_Tensor, "aten::lt.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_BOOL, FBX_SH_BROADCAST, 0, fbx_k_pw_lt_Tensor) \
  X(lt_Scalar, "aten::lt.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_BOOL, FBX_SH_BROADCAST, 0, fbx_k_pw_lt_Scalar) \
  X(le_Tensor, "aten::le.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_BOOL, FBX_SH_BROADCAST, 0, fbx_k_pw_le_Tensor) \
  X(le_Scalar, "aten::le.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_BOOL, FBX_SH_BROADCAST, 0, fbx_k_pw_le_Scalar) \
  X(gt_Tensor, "aten::gt.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_BOOL, FBX_SH_BROADCAST, 0, fbx_k_pw_gt_Tensor) \
  X(gt_Scalar, "aten::gt.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_BOOL, FBX_SH_BROADCAST, 0, fbx_k_pw_gt_Scalar) \
  X(ge_Tensor, "aten::ge.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_BOOL, FBX_SH_BROADCAST, 0, fbx_k_pw_ge_Tensor) \
  X(ge_Scalar, "aten::ge.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_BOOL, FBX_SH_BROADCAST, 0, fbx_k_pw_ge_Scalar) \
  X(logical_and, "aten::logical_and(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_BOOL, FBX_SH_BROADCAST, 0, fbx_k_pw_logical_and) \
  X(logical_or, "aten::logical_or(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_BOOL, FBX_SH_BROADCAST, 0, fbx_k_pw_logical_or) \
  X(logical_xor, "aten::logical_xor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_BOOL, FBX_SH_BROADCAST, 0, fbx_k_pw_logical_xor) \
  X(bitwise_and_Tensor, "aten::bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_bitwise_and_Tensor) \
  X(bitwise_and_Scalar, "aten::bitwise_and.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_bitwise_and_Scalar) \
  X(bitwise_and_Scalar_Tensor, "aten::bitwise_and.Scalar_Tensor(Scalar self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_bitwise_and_Scalar_Tensor) \
  X(bitwise_or_Tensor, "aten::bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_bitwise_or_Tensor) \
  X(bitwise_or_Scalar, "aten::bitwise_or.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_bitwise_or_Scalar) \
  X(bitwise_or_Scalar_Tensor, "aten::bitwise_or.Scalar_Tensor(Scalar self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_bitwise_or_Scalar_Tensor) \
  X(bitwise_xor_Tensor, "aten::bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_bitwise_xor_Tensor) \
  X(bitwise_xor_Scalar, "aten::bitwise_xor.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_bitwise_xor_Scalar) \
  X(bitwise_xor_Scalar_Tensor, "aten::bitwise_xor.Scalar_Tensor(Scalar self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_bitwise_xor_Scalar_Tensor) \
  X(and_Tensor, "aten::__and__.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_and_Tensor) \
  X(and_Scalar, "aten::__and__.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_and_Scalar) \
  X(or_Tensor, "aten::__or__.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_or_Tensor) \
  X(or_Scalar, "aten::__or__.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_or_Scalar) \
  X(xor_Tensor, "aten::__xor__.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_xor_Tensor) \
  X(xor_Scalar, "aten::__xor__.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_xor_Scalar) \
  X(lshift_Tensor, "aten::__lshift__.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_lshift_Tensor) \
  X(lshift_Scalar, "aten::__lshift__.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_lshift_Scalar) \
  X(rshift_Tensor, "aten::__rshift__.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_rshift_Tensor) \
  X(rshift_Scalar, "aten::__rshift__.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_rshift_Scalar) \
  X(where_self, "aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_TERNARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_where_self) \
  X(where_ScalarSelf, "aten::where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor", \
    FBX_OPCAT_TERNARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_where_ScalarSelf) \
  X(where_ScalarOther, "aten::where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_TERNARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_where_ScalarOther) \
  X(where_Scalar, "aten::where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor", \
    FBX_OPCAT_TERNARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_where_Scalar) \
  X(lerp_Tensor, "aten::lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor", \
    FBX_OPCAT_TERNARY, FBX_DT_SAME, FBX_SH_BROADCAST, 0, fbx_k_pw_lerp_Tensor) \
  X(lerp_Scalar, "aten::lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", \
    FBX_OPCAT_TERNARY, FBX_DT_SAME, FBX_SH_BROADCAST, 0, fbx_k_pw_lerp_Scalar) \
  X(addcmul, "aten::addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor", \
    FBX_OPCAT_TERNARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_addcmul) \
  X(addcdiv, "aten::addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor", \
    FBX_OPCAT_TERNARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_addcdiv) \
  X(masked_fill_Tensor, "aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor", \
    FBX_OPCAT_TERNARY, FBX_DT_SAME, FBX_SH_BROADCAST, 0, fbx_k_pw_masked_fill_Tensor) \
  X(masked_fill_Scalar, "aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor", \
    FBX_OPCAT_TERNARY, FBX_DT_SAME, FBX_SH_BROADCAST, 0, fbx_k_pw_masked_fill_Scalar) \
  /* ---- aliases (clip = clamp, true_divide = div, absolute = abs, fix = trunc, special_expit = \
   * sigmoid) and further unary/binary ops; float_power's result is always float64 ---- */ \
  X(clip, "aten::clip(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE, FBX_SH_SAME, 0, fbx_k_pw_clamp) \
  X(clip_Tensor, "aten::clip.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor", \
    FBX_OPCAT_TERNARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_clamp_Tensor) \
  X(true_divide_Tensor, "aten::true_divide.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_BROADCAST, 0, fbx_k_pw_div_Tensor) \
  X(true_divide_Scalar, "aten::true_divide.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_BROADCAST, 0, fbx_k_pw_div_Scalar) \
  X(absolute, "aten::absolute(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_abs) \
  X(fix, "aten::fix(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_pw_trunc) \
  X(special_expit, "aten::special_expit(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_sigmoid) \
  X(asinh, "aten::asinh(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_asinh) \
  X(acosh, "aten::acosh(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_acosh) \
  X(atanh, "aten::atanh(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_atanh) \
  X(deg2rad, "aten::deg2rad(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_deg2rad) \
  X(rad2deg, "aten::rad2deg(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_rad2deg) \
  X(sinc, "aten::sinc(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_sinc) \
  X(erfinv, "aten::erfinv(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_SAME, 0, fbx_k_pw_erfinv) \
  X(signbit, "aten::signbit(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_BOOL, FBX_SH_SAME, 0, fbx_k_pw_signbit) \
  X(isposinf, "aten::isposinf(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_BOOL, FBX_SH_SAME, 0, fbx_k_pw_isposinf) \
  X(isneginf, "aten::isneginf(Tensor self) -> Tensor", \
    FBX_OPCAT_UNARY, FBX_DT_BOOL, FBX_SH_SAME, 0, fbx_k_pw_isneginf) \
  X(copysign_Tensor, "aten::copysign.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_BROADCAST, 0, fbx_k_pw_copysign_Tensor) \
  X(copysign_Scalar, "aten::copysign.Scalar(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_BROADCAST, 0, fbx_k_pw_copysign_Scalar) \
  X(fmax, "aten::fmax(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_fmax) \
  X(fmin, "aten::fmin(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_fmin) \
  X(xlogy_Tensor, "aten::xlogy.Tensor(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_BROADCAST, 0, fbx_k_pw_xlogy_Tensor) \
  X(xlogy_Scalar_Other, "aten::xlogy.Scalar_Other(Tensor self, Scalar other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_BROADCAST, 0, fbx_k_pw_xlogy_Scalar_Other) \
  X(xlogy_Scalar_Self, "aten::xlogy.Scalar_Self(Scalar self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE_FLOAT, FBX_SH_BROADCAST, 0, fbx_k_pw_xlogy_Scalar_Self) \
  X(float_power_Tensor_Tensor, "aten::float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_CUSTOM, FBX_SH_BROADCAST, 0, fbx_k_pw_float_power_Tensor_Tensor) \
  X(float_power_Tensor_Scalar, "aten::float_power.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_CUSTOM, FBX_SH_BROADCAST, 0, fbx_k_pw_float_power_Tensor_Scalar) \
  X(float_power_Scalar, "aten::float_power.Scalar(Scalar self, Tensor exponent) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_CUSTOM, FBX_SH_BROADCAST, 0, fbx_k_pw_float_power_Scalar) \
  X(heaviside, "aten::heaviside(Tensor self, Tensor values) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_heaviside) \
  X(nextafter, "aten::nextafter(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_nextafter) \
  X(gcd, "aten::gcd(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_gcd) \
  X(lcm, "aten::lcm(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_lcm) \
  X(to_dtype, "aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)", \
    FBX_OPCAT_CONVERSION, FBX_DT_ARG, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k_pw_to_dtype) \
  X(to_device, "aten::to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)", \
    FBX_OPCAT_CONVERSION, FBX_DT_ARG, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k_pw_to_device) \
  X(to_other, "aten::to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)", \
    FBX_OPCAT_CONVERSION, FBX_DT_CUSTOM, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k_pw_to_other) \
  X(to_dtype_layout, "aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)", \
    FBX_OPCAT_CONVERSION, FBX_DT_ARG, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k_pw_to_dtype_layout) \
  X(to_prim_Device, "aten::to.prim_Device(Tensor(a) self, Device? device, int? dtype=None, bool non_blocking=False, bool copy=False) -> Tensor(b|a)", \
    FBX_OPCAT_CONVERSION, FBX_DT_ARG, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k_pw_to_prim_Device) \
  X(to_prim_dtype, "aten::to.prim_dtype(Tensor(a) self, int? dtype=None, bool non_blocking=False, bool copy=False) -> Tensor(b|a)", \
    FBX_OPCAT_CONVERSION, FBX_DT_ARG, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k_pw_to_prim_dtype) \
  X(to_prim_other, "aten::to.prim_other(Tensor(a) self, bool non_blocking=False, bool copy=False) -> Tensor(b|a)", \
    FBX_OPCAT_CONVERSION, FBX_DT_SAME, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k_pw_to_prim_other) \
  X(type_as, "aten::type_as(Tensor self, Tensor other) -> Tensor", \
    FBX_OPCAT_CONVERSION, FBX_DT_CUSTOM, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k_pw_type_as) \

#define FBX_OPS_POINTWISE_COUNT 169

#endif
