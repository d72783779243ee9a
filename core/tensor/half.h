/* float16 and bfloat16 <-> float32, inline for hot kernels.
 *
 *   uint16_t h = fbx_float_to_half(x);   // IEEE binary16, round to nearest even
 *   float y = fbx_half_to_float(h);      // exact
 *   uint16_t b = fbx_float_to_bf16(x);   // round to nearest even, NaN stays NaN
 *   float z = fbx_bf16_to_float(b);      // exact
 *
 * Both 16-bit types are stored as uint16_t bit patterns. Conversions to 16
 * bits handle overflow to infinity, subnormals and NaN (made quiet, sign
 * kept). They rely on the default floating-point environment (round to
 * nearest, no flush-to-zero), which fusebox never changes.
 */
#ifndef FBX_TENSOR_HALF_H
#define FBX_TENSOR_HALF_H
#include <stdint.h>
#include <string.h>

static inline uint32_t fbx_f32_bits_(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float fbx_f32_from_bits_(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline float fbx_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    /* zero or subnormal: mant * 2^-24, exact in float */
    float f = (float)mant * 5.9604644775390625e-8f;
    return sign ? -f : f;
  }
  if (exp == 31) return fbx_f32_from_bits_(sign | 0x7f800000u | (mant << 13));
  return fbx_f32_from_bits_(sign | ((exp + 112u) << 23) | (mant << 13));
}

/* After Fabian Giesen's float_to_half_fast3_rtne (public domain). */
static inline uint16_t fbx_float_to_half(float f) {
  uint32_t u = fbx_f32_bits_(f);
  uint32_t sign = u & 0x80000000u;
  uint32_t out;
  u ^= sign;
  if (u >= (127u + 16u) << 23) {
    /* |f| >= 65536, inf or NaN; NaN keeps its top payload bits, made quiet */
    out = u > 0x7f800000u ? 0x7e00u | ((u >> 13) & 0x3ffu) : 0x7c00u;
  } else if (u < 113u << 23) {
    /* result is subnormal or zero: let the FPU round the aligned mantissa */
    const uint32_t magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    float g = fbx_f32_from_bits_(u) + fbx_f32_from_bits_(magic);
    out = fbx_f32_bits_(g) - magic;
  } else {
    uint32_t mant_odd = (u >> 13) & 1u;
    u += ((uint32_t)(15 - 127) << 23) + 0xfffu + mant_odd; /* rebias + round */
    out = u >> 13; /* a carry out of 65504 lands on 0x7c00, infinity */
  }
  return (uint16_t)(out | (sign >> 16));
}

static inline float fbx_bf16_to_float(uint16_t b) {
  return fbx_f32_from_bits_((uint32_t)b << 16);
}

static inline uint16_t fbx_float_to_bf16(float f) {
  uint32_t u = fbx_f32_bits_(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

#endif
