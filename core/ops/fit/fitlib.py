"""Polynomial fits for core/ops/vmath.h (run with /usr/bin/python3: numpy, mpmath).

fit(f, lo, hi, deg, center) returns float32 coefficients c[0..deg] of
sum c[k] (x - center)^k approximating f on [lo, hi] in the minimax sense:
weighted least squares on Chebyshev points with Lawson reweighting. The
coefficients are rounded to float one at a time from the highest, the
lower ones refitted after each, so the rounding of one is absorbed by the
others. Also returned: the largest error of the exact polynomial and of
its float32 Horner evaluation (as the C code runs it) on those points,
absolute, or relative with rel=True. f is evaluated in mpmath at 30
digits, so the error is the polynomial's, not the reference's. With
exact0=True the constant term stays unrounded and comes back as two
floats (hi, lo) ahead of c[1..deg], for code that adds it exactly.
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 30


def _lawson(V, ys, scale, rounds):
    w = 1.0 / scale
    for _ in range(rounds):
        coef, *_ = np.linalg.lstsq(V * w[:, None], ys * w, rcond=None)
        err = np.abs(V @ coef - ys) / scale
        w = w * np.sqrt(err / err.max() + 1e-3)
        w = w / w.max()
    return coef


def fit(f, lo, hi, deg, center=0.0, points=3000, rounds=40, rel=False, exact0=False):
    xs = np.cos(np.linspace(0.0, np.pi, points)) * (hi - lo) / 2 + (hi + lo) / 2
    ys = np.array([float(f(mp.mpf(float(x)))) for x in xs])
    V = np.vander(xs - center, deg + 1, increasing=True)
    scale = np.abs(ys) if rel else np.ones_like(ys)
    fixed = np.zeros(deg + 1)
    for k in range(deg, -1, -1):
        rest = ys - V[:, k + 1:] @ fixed[k + 1:]
        coef = _lawson(V[:, :k + 1], rest, scale, rounds)
        fixed[k] = coef[k] if exact0 and k == 0 else np.float32(coef[k])
    err = np.abs(V @ fixed - ys) / scale
    t = (xs - center).astype(np.float32)
    c32 = fixed.astype(np.float32)
    acc = np.full_like(t, c32[-1])
    for c in c32[-2:0 if exact0 else None:-1]:
        acc = (acc * t).astype(np.float32) + c
    if exact0:  # c0 + t P(t) with c0 kept to double precision (hi + lo)
        acc = (acc * t).astype(np.float64) + fixed[0]
    err32 = np.abs(acc.astype(np.float64) - ys) / scale
    if exact0:
        hi = np.float32(fixed[0])
        return [hi, np.float32(fixed[0] - np.float64(hi))] + list(c32[1:]), float(err.max()), float(err32.max())
    return c32, float(err.max()), float(err32.max())


def c_literal(c):
    return "%.9e" % float(c) + "f"
