/* Keys' cubic convolution (A = -0.75 in PyTorch's bicubic upsampling and
 * grid sampling): the weight of a tap at distance x, |x| <= 1 (CUBIC1) and
 * 1 < |x| < 2 (CUBIC2), as polynomials in x; and the four weights of the
 * taps floor(r) - 1 .. floor(r) + 2 at t = r - floor(r), with their
 * derivatives in t (the grid sampler's gradient with respect to the grid). */
#ifndef FBX_OPS_CUBIC_H
#define FBX_OPS_CUBIC_H

#define FBX_CUBIC1(A, x) ((((A) + 2) * (x) - ((A) + 3)) * (x) * (x) + 1)
#define FBX_CUBIC2(A, x) (((((A) * (x)) - 5 * (A)) * (x) + 8 * (A)) * (x) - 4 * (A))

static inline void fbx_cubic_weights(double t, double w[4]) {
  const double A = -0.75;
  w[0] = FBX_CUBIC2(A, t + 1), w[1] = FBX_CUBIC1(A, t), w[2] = FBX_CUBIC1(A, 1 - t), w[3] = FBX_CUBIC2(A, 2 - t);
}

/* d w[k] / d t: CUBIC2'(u) = 3A u^2 - 10A u + 8A, CUBIC1'(u) = 3(A + 2) u^2
 * - 2(A + 3) u, by the chain rule through u = t + 1, t, 1 - t, 2 - t. */
static inline void fbx_cubic_weights_dt(double t, double d[4]) {
  const double A = -0.75;
#define D2_(u) ((3 * A * (u) - 10 * A) * (u) + 8 * A)
#define D1_(u) ((3 * (A + 2) * (u) - 2 * (A + 3)) * (u))
  d[0] = D2_(t + 1), d[1] = D1_(t), d[2] = -D1_(1 - t), d[3] = -D2_(2 - t);
#undef D1_
#undef D2_
}

#endif
