"""log1p(e) = e + e^2 R(e) for 0 <= e <= 1 (fbx_vm_softplusf, e = exp(-|x|)).

R(e) = (log1p(e) - e) / e^2 in [-0.5, -0.307]; the correction e^2 R is
smaller than e, so R's relative error reaches the result scaled down.
"""
import mpmath as mp

from fitlib import c_literal, fit


def r(e):
    return (mp.log1p(e) - e) / (e * e) if e != 0 else mp.mpf(-0.5)


c, err, err32 = fit(r, 0.0, 1.0, 9, center=0.0, rel=True)
print("/* R(e), degree 9: max relative error %.2e (fit), %.2e (float Horner) */" % (err, err32))
print(", ".join(c_literal(x) for x in c))
