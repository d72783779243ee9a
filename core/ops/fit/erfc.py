"""erfc(a) = t exp(Q(t) - a^2), t = 2 / (2 + a), for 0 <= a <= 10.1 (fbx_vm_erfcf).

Q(t) = log(erfc(a) / t) + a^2 with a = 2/t - 2 is smooth on t in
[2/12.1, 1], Q(1) = 0 and Q -> -log(2 sqrt(pi)) as t -> 0; its error is
absolute in the exponent, so relative in erfc. The fit is of
Q(t) / (t - 1), so that Q = u (c1 + u (c2 + ...)) with u = t - 1 (exact
for t >= 1/4) is 0 at a = 0 and small near it.
"""
import mpmath as mp

from fitlib import c_literal, fit


def q(t):
    a = 2 / t - 2
    return mp.log(mp.erfc(a) / t) + a * a


def q_over_u(t):
    if t == 1:
        return mp.diff(q, mp.mpf(1))
    return q(t) / (t - 1)


c, err, err32 = fit(q_over_u, 2 / 12.1, 1.0, 9, center=1.0)
print("/* Q(t) / (t - 1), degree 9 in t - 1: max error %.2e (fit), %.2e (float Horner) */" % (err, err32))
for k in range(len(c)):
    print("c%d = %s" % (k + 1, c_literal(c[k])))
