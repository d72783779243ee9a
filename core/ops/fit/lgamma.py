#!/usr/bin/python3
"""Fits the polynomials of fbx_vm_lgammaf (core/ops/vmath.h).

    cd core/ops/fit && /usr/bin/python3 lgamma.py

prints the float32 coefficients (lowest order first) and each fit's error.
The targets are evaluated with mpmath at 30 digits; the fits are minimax on
a dense Chebyshev grid by Lawson's iteration (iteratively reweighted least
squares), and the coefficients are rounded to float32 one at a time from
the lowest order up, refitting the higher ones each time so that they
absorb the rounding of the lower ones.

  P(t):  lgamma(t + 2) = (t + 1) t P(t) for t in [-1, 1] (y = t + 2 in [1, 3]),
         relative error (P > 0.4 there). Degree 12.
  Q(z):  log(sin(pi r) / (pi r)) = z Q(z), z = r^2 in [0, 1/4] (the log of
         the normalized sine in the reflection formula), absolute error in
         z Q(z). Degree 5.
  C(u):  lgamma(y) - ((y - 1/2) log y - y + log(2 pi)/2) = w C(u), w = 1/y,
         u = w^2, for y >= 3 (Stirling's remainder), absolute error in w C(u).
         Degree 2.
  R(z):  log(1 + f) = 2 s + s z R(z), s = f / (2 + f), z = s^2, for
         1 + f in [sqrt(1/2), sqrt(2)] (z <= 0.0295), absolute error in
         s z R(z). Degree 2.
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 30
N = 4000


def lawson(xs, f, w, deg, fixed=(), iters=300):
    """minimax of w (p - f) over xs, p = sum c_k x^k, c_0..c_{j-1} = fixed"""
    j = len(fixed)
    A = np.vander(xs, deg + 1, increasing=True)
    r = f - A[:, :j] @ np.array(fixed, dtype=np.float64) if j else f.copy()
    B = A[:, j:]
    u = np.ones(len(xs)) / len(xs)
    for _ in range(iters):
        s = np.sqrt(u) * w
        c, *_ = np.linalg.lstsq(B * s[:, None], s * r, rcond=None)
        e = np.abs(w * (B @ c - r))
        u = u * e
        u /= u.sum()
    return list(fixed) + list(c)


def fit_f32(xs, f, w, deg):
    fixed = []
    for k in range(deg + 1):
        c = lawson(xs, f, w, deg, fixed)
        fixed.append(float(np.float32(c[k])))
    A = np.vander(xs, deg + 1, increasing=True)
    return fixed, float(np.max(np.abs(w * (A @ np.array(fixed) - f))))


def cheb(a, b):
    return a + (b - a) * (np.cos(np.linspace(0.0, np.pi, N)) + 1.0) / 2.0


def show(name, cs, err, what):
    print("%s: %s %.3g" % (name, what, err))
    print("  " + ", ".join("%.9ef" % c for c in cs))


def main():
    ts = cheb(-1.0, 1.0)
    ts = ts[(np.abs(ts) > 1e-9) & (np.abs(ts + 1.0) > 1e-9)]
    P = np.array([float(mp.loggamma(mp.mpf(t) + 2) / ((mp.mpf(t) + 1) * mp.mpf(t))) for t in ts])
    cs, e = fit_f32(ts, P, 1.0 / P, 12)
    show("P", cs, e, "max relative error")

    zs = cheb(0.0, 0.25)
    zs = zs[zs > 1e-12]
    Q = np.array([float(mp.log(mp.sinpi(mp.sqrt(z)) / (mp.pi * mp.sqrt(z))) / z) for z in zs])
    cs, e = fit_f32(zs, Q, zs, 5)
    show("Q", cs, e, "max absolute error of z Q(z)")

    us = cheb(0.0, 1.0 / 9.0)
    us = us[us > 1e-12]

    def rem(u):
        y = 1 / mp.sqrt(mp.mpf(u))
        return (mp.loggamma(y) - ((y - 0.5) * mp.log(y) - y + mp.log(2 * mp.pi) / 2)) * y

    C = np.array([float(rem(u)) for u in us])
    cs, e = fit_f32(us, C, np.sqrt(us), 2)
    show("C", cs, e, "max absolute error of w C(u)")

    smax = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)
    zs = cheb(0.0, float(smax * smax))
    zs = zs[zs > 1e-12]
    R = np.array([float((2 * mp.atanh(mp.sqrt(z)) - 2 * mp.sqrt(z)) / mp.sqrt(z) ** 3) for z in zs])
    cs, e = fit_f32(zs, R, zs ** 1.5, 2)
    show("R", cs, e, "max absolute error of s z R(z)")

    c = mp.log(2 * mp.pi) / 2 - mp.mpf(0.5)
    hi = float(np.float32(float(c)))
    print("log(2 pi)/2 - 1/2 = %.9ef + %.9ef" % (hi, float(np.float32(float(c - hi)))))


if __name__ == "__main__":
    main()
