#!/usr/bin/python3
"""Coefficients of fbx_vm_powf (core/ops/vmath.h), in double (fitlib.py
rounds to float32); run with /usr/bin/python3
(numpy, mpmath). Prints each set with its max relative error.

log2 m = s Q(s^2), s = (m - 1) / (m + 1), m in [sqrt(1/2), sqrt(2)):
  Q(z) = 2 atanh(sqrt z) / (sqrt z ln 2), degree 4, fitted by Lawson's
  iteratively reweighted least squares (near-minimax, relative error).
2^f = (E + O) / (E - O) on |f| <= 1/2, E = 1 + c2 f^2, O = f (c1 + c3 f^2):
  the [3/3] Pade form of e^(f ln 2) (c1 = ln2/2, c2 = ln2^2/10,
  c3 = ln2^3/120), then a coordinate search on c1..c3 lowering the max
  relative error."""
import numpy as np
import mpmath as mp

mp.mp.prec = 80


def lawson(xs, target, basis, weight, iters=300):
    a = np.array([[float(b(x)) for b in basis] for x in xs])
    t = np.array([float(v) for v in target])
    w0 = np.array([float(v) for v in weight])
    lw = np.ones(len(xs)) / len(xs)
    for _ in range(iters):
        sw = np.sqrt(lw) * w0
        c, *_ = np.linalg.lstsq(a * sw[:, None], t * sw, rcond=None)
        err = np.abs((a @ c - t) * w0)
        lw = lw * err
        lw /= lw.sum()
    return c


def fit_log(deg=4):
    smax = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)
    zmax = float(smax ** 2)
    k = np.arange(4000)
    zs = [mp.mpf(0)] + [mp.mpf(z) for z in 0.5 * zmax * (1 + np.cos(np.pi * (k + 0.5) / 4000))]

    def q(z):
        if z == 0:
            return 2 / mp.log(2)
        s = mp.sqrt(z)
        return 2 * mp.atanh(s) / (s * mp.log(2))

    tq = [q(z) for z in zs]
    basis = [(lambda j: (lambda z: (z / zmax) ** j))(j) for j in range(deg + 1)]
    c = lawson(zs, tq, basis, [1 / v for v in tq])
    c = [float(cj / zmax ** j) for j, cj in enumerate(c)]
    zt = [mp.mpf(z) for z in np.linspace(0, zmax, 20001)]
    err = max(abs((sum(mp.mpf(cj) * z ** j for j, cj in enumerate(c)) - q(z)) / q(z)) for z in zt)
    return c, err


def fit_exp2():
    ln2 = mp.log(2)

    def r(f, c):
        e = 1 + c[1] * f * f
        o = f * (c[0] + c[2] * f * f)
        return (e + o) / (e - o)

    fs = [mp.mpf(x) for x in np.linspace(-0.5, 0.5, 2001)]

    def maxerr(c, pts):
        return max(abs(r(f, c) / mp.power(2, f) - 1) for f in pts)

    best = [ln2 / 2, ln2 ** 2 / 10, ln2 ** 3 / 120]
    be = maxerr(best, fs[::4])
    for step in [1e-6, 1e-7, 1e-8, 1e-9, 1e-10]:
        improved = True
        while improved:
            improved = False
            for i in range(3):
                for d in (-1, 1):
                    c = list(best)
                    c[i] += d * step
                    e = maxerr(c, fs[::4])
                    if e < be:
                        best, be, improved = c, e, True
    best = [float(x) for x in best]
    return best, maxerr(best, fs)


for name, (c, err) in (("log2: Q(z), z^0 first", fit_log()), ("exp2: c1, c2, c3", fit_exp2())):
    print("%s, max relative error %.3e = 2^%.2f" % (name, float(err), float(mp.log(err, 2))))
    for x in c:
        print("  %.17e" % x)
