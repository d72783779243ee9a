#!/usr/bin/python3
"""Generate the .npy fixtures used by tests/unit/test_npy.c and test_tensor.c.

Run from anywhere: /usr/bin/python3 tests/data/npy/gen.py
Needs numpy; the bfloat16 reference additionally needs torch (PyTorch's own
rounding is the reference). The values written for each dtype are repeated
by hand in test_npy.c (DTYPE_CASES) — change both together.
"""
import os
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def save(name, arr):
    np.save(path(name), arr, allow_pickle=False)


def save_version(name, arr, version):
    with open(path(name), "wb") as f:
        np.lib.format.write_array(f, arr, version=version, allow_pickle=False)


def patch_descr(src, dst, old, new):
    """Copy a file, replacing the descr string (same length keeps the padding)."""
    assert len(old) == len(new)
    data = open(path(src), "rb").read()
    assert data.count(old) == 1
    open(path(dst), "wb").write(data.replace(old, new))


# One 2x3 array per dtype, C order.
DTYPES = {
    "b1": np.array([True, False, True, True, False, False], dtype="|b1"),
    "u1": np.array([0, 1, 2, 127, 128, 255], dtype="|u1"),
    "i1": np.array([0, -1, 2, 127, -128, 5], dtype="|i1"),
    "i2": np.array([0, -1, 300, 32767, -32768, 5], dtype="<i2"),
    "i4": np.array([0, -1, 70000, 2**31 - 1, -2**31, 5], dtype="<i4"),
    "i8": np.array([0, -1, 5000000000, 2**63 - 1, -2**63, 5], dtype="<i8"),
    "f2": np.array([0, -1.5, 0.0999755859375, 65504, np.inf, -2.0**-24], dtype="<f2"),
    "f4": np.array([0, -1.5, 0.1, 3.4028235e38, np.nan, 1e-45], dtype="<f4"),
    "f8": np.array([0, -1.5, 0.1, 1e308, -np.inf, 5e-324], dtype="<f8"),
}
for k, v in DTYPES.items():
    save(f"dt_{k}.npy", v.reshape(2, 3))

# Big-endian copies of the same values (read back byte-swapped).
for k in ("i2", "i4", "i8", "f2", "f4", "f8"):
    save(f"be_{k}.npy", DTYPES[k].astype(">" + k).reshape(2, 3))

# Byte-order spellings numpy never writes itself but accepts.
patch_descr("dt_f4.npy", "native_f4.npy", b"'<f4'", b"'=f4'")
patch_descr("dt_u1.npy", "lt_u1.npy", b"'|u1'", b"'<u1'")
patch_descr("dt_i8.npy", "pipe_i8.npy", b"'<i8'", b"'|i8'")

# Fortran order: logical element i (row-major) has value i.
save("fortran_f4.npy", np.asfortranarray(np.arange(24, dtype="<f4").reshape(2, 3, 4)))
save("fortran_i8.npy", np.asfortranarray(np.arange(6, dtype="<i8").reshape(2, 3)))

# 0-d and empty arrays.
save("scalar_f8.npy", np.array(3.25, dtype="<f8"))
save("scalar_b1.npy", np.array(True))
save("empty_f4.npy", np.zeros((0, 3), dtype="<f4"))
save("empty_i4.npy", np.zeros((2, 0, 4), dtype="<i4"))
save("empty_1d_f8.npy", np.zeros((0,), dtype="<f8"))

# Header versions 2.0 and 3.0.
save_version("v2_i2.npy", np.arange(-3, 3, dtype="<i2").reshape(3, 2), (2, 0))
save_version("v3_f4.npy", np.arange(4, dtype="<f4") / 4, (3, 0))

# float16 conversion reference: float32 inputs and numpy's float16 results
# (round to nearest even). Edge cases first, then random bit patterns over
# the float16 range and around its subnormals.
rng = np.random.default_rng(1234)
edges = np.array(
    [0.0, -0.0, 1.0, -1.0, 65504.0, 65519.99, 65520.0, 65536.0, 1e10, -1e10,
     np.inf, -np.inf, 2.0**-24, 2.0**-25, 2.0**-25 * 1.0001, 2.0**-26, 2.0**-14,
     2.0**-14 - 2.0**-24, 3 * 2.0**-25, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11,
     1e-45, 0.1, 1.0 / 3.0],
    dtype="<f4",
)
bits = np.concatenate([
    rng.integers(0x33000000, 0x47800000, 3000, dtype=np.uint32),  # normal and subnormal range
    rng.integers(0x00000000, 0x33800000, 200, dtype=np.uint32),   # tiny -> 0 or min subnormal
    rng.integers(0x477f0000, 0x7f800000, 200, dtype=np.uint32),   # overflow region
])
bits |= rng.integers(0, 2, bits.size, dtype=np.uint32) << np.uint32(31)
# exact ties: float16 mantissa plus half an ulp
ties = (rng.integers(0x38800000 >> 13, 0x477fe000 >> 13, 300, dtype=np.uint32) << np.uint32(13)) | np.uint32(0x1000)
half_in = np.concatenate([edges, bits.view("<f4"), ties.view("<f4")]).astype("<f4")
with np.errstate(over="ignore"):
    half_out = half_in.astype("<f2")
save("half_in_f4.npy", half_in)
save("half_out_f2.npy", half_out)
# float16 -> float32 over a spread of half bit patterns (NaNs excluded: numpy
# keeps payloads that fusebox may canonicalize).
hb = np.concatenate([np.arange(0, 0x7c01, 7, dtype=np.uint16), np.arange(0x8000, 0xfc01, 13, dtype=np.uint16)])
save("half_bits_f2.npy", hb.view("<f2"))
save("half_bits_as_f4.npy", hb.view("<f2").astype("<f4"))

# bfloat16 reference from PyTorch (numpy has no bfloat16): bit patterns as int16.
try:
    import torch
    bf_in = np.concatenate([half_in, np.array([3.0e38, 3.4028235e38, -3.4028235e38, 1.0 + 2.0**-8,
                                               1.0 + 3 * 2.0**-8, 1e-40, -1e-42], dtype="<f4")]).astype("<f4")
    bf = torch.from_numpy(bf_in.copy()).to(torch.bfloat16).view(torch.int16).numpy().astype("<i2")
    save("bf16_in_f4.npy", bf_in)
    save("bf16_out_i2.npy", bf)
except ImportError:
    print("torch not found: bf16 reference files not regenerated")

print("wrote fixtures to", HERE)
