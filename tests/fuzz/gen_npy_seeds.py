#!/usr/bin/python3
"""Write the seed corpus of fuzz_npy (tests/fuzz/seeds/npy/), without numpy.

Run from anywhere: python3 tests/fuzz/gen_npy_seeds.py
Valid files of every dtype the reader knows (both byte orders where it
matters), fortran order, 0-d, empty, format 2.0 and 3.0, and a set of broken
ones (bad magic, version, header length, dict keys, descr, shape, data size).
The files are small on purpose: libFuzzer mutates faster on short inputs.
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds", "npy")


def header(descr, fortran, shape, version=1, pad_to=64):
    shp = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", shp)
    pre = 10 if version == 1 else 12
    total = pre + len(d) + 1
    total = (total + pad_to - 1) // pad_to * pad_to
    d = d + " " * (total - pre - len(d) - 1) + "\n"
    b = d.encode("latin1")
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(b)) + b
    return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(b)) + b


def data(fmt, order, values):
    return b"".join(struct.pack(order + fmt, v) for v in values)


def write(name, blob):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(blob)


# (descr kind+size, struct format, values)
DTYPES = [
    ("b1", "?", [True, False, True, True, False, False]),
    ("u1", "B", [0, 1, 127, 128, 200, 255]),
    ("i1", "b", [-128, -1, 0, 1, 2, 127]),
    ("i2", "h", [-32768, -2, 0, 3, 1000, 32767]),
    ("i4", "i", [-2**31, -5, 0, 7, 65536, 2**31 - 1]),
    ("i8", "q", [-2**63, -9, 0, 11, 2**40, 2**63 - 1]),
    ("f2", "e", [0.0, -0.0, 1.5, -65504.0, float("inf"), float("nan")]),
    ("f4", "f", [0.0, 1.0, -2.5, 3.4e38, float("-inf"), float("nan")]),
    ("f8", "d", [0.0, 1e-300, -2.5, 1e308, float("inf"), float("nan")]),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    for code, fmt, vals in DTYPES:
        one_byte = struct.calcsize(fmt) == 1
        orders = [("|", "<")] if one_byte else [("<", "<"), (">", ">")]
        for mark, order in orders:
            tag = {"<": "le", ">": "be", "|": "na"}[mark]
            write("%s_%s_2x3.npy" % (code, tag), header(mark + code, False, (2, 3)) + data(fmt, order, vals))
            write("%s_%s_fortran.npy" % (code, tag), header(mark + code, True, (3, 2)) + data(fmt, order, vals))
        o = orders[0]
        write("%s_0d.npy" % code, header(o[0] + code, False, ()) + data(fmt, o[1], vals[:1]))
        write("%s_empty.npy" % code, header(o[0] + code, False, (0, 3)) + b"")
        write("%s_1d.npy" % code, header(o[0] + code, False, (6,)) + data(fmt, o[1], vals))
    f4 = data("f", "<", [1.0, 2.0, 3.0, 4.0])
    write("f4_eq_order.npy", header("=f4", False, (4,)) + f4)
    write("f4_no_order.npy", header("f4", False, (4,)) + f4)
    write("f4_v2.npy", header("<f4", False, (2, 2), version=2) + f4)
    write("f4_v3.npy", header("<f4", False, (2, 2), version=3) + f4)
    write("f4_4d.npy", header("<f4", False, (1, 2, 1, 2)) + f4)
    write("f4_4d_fortran.npy", header("<f4", True, (2, 1, 2, 1)) + f4)
    write("f4_empty_0.npy", header("<f4", False, (0,)))
    write("f4_short_pad.npy", header("<f4", False, (4,), pad_to=1) + f4)
    write("i8_long_suffix.npy", header("<i8", False, (1,)).replace(b"(1,)", b"(1L,") + data("q", "<", [5]))
    # Broken files: each one fails somewhere else in the reader.
    good = header("<f4", False, (4,)) + f4
    write("bad_magic.npy", b"\x93NUMPX" + good[6:])
    write("bad_version.npy", good[:6] + b"\x04\x00" + good[8:])
    write("bad_minor.npy", good[:6] + b"\x01\x01" + good[8:])
    write("bad_hlen_big.npy", good[:8] + b"\xff\xff" + good[10:])
    write("bad_hlen_v2_huge.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\x7f" + good[10:])
    write("bad_truncated_preamble.npy", good[:9])
    write("bad_truncated_header.npy", good[:40])
    write("bad_short_data.npy", good[:-3])
    write("bad_long_data.npy", good + b"\x00\x00\x00\x00")
    write("bad_descr_c8.npy", header("<c8", False, (2,)) + f4)
    write("bad_descr_u2.npy", header("<u2", False, (4,)) + f4[:8])
    write("bad_descr_obj.npy", header("|O", False, (2,)) + f4[:16])
    write("bad_descr_U.npy", header("<U1", False, (4,)) + f4)
    write("bad_descr_digits.npy", header("<f99999999999999999999", False, (4,)) + f4)
    write("bad_neg_shape.npy", header("<f4", False, (-1,)) + f4)
    write("bad_huge_shape.npy", header("<f4", False, (2**62, 2**62)) + f4)
    write("bad_overflow_shape.npy", header("<f4", False, (99999999999999999999,)) + f4)
    write("bad_17_dims.npy", header("<f4", False, (1,) * 17) + f4[:4])
    write("bad_fortran_word.npy", header("<f4", False, (4,)).replace(b"False", b"Fals ") + f4)
    d = b"{'descr': '<f4', 'shape': (4,), }"
    d = d + b" " * (54 - len(d)) + b"\n"
    write("bad_missing_key.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d + f4)
    d = b"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}"
    d = d + b" " * (118 - len(d)) + b"\n"
    write("bad_extra_key.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d + f4)
    d = b"{'descr': '<f4', 'descr': '<f4', 'shape': (4,)}"
    d = d + b" " * (54 - len(d)) + b"\n"
    write("bad_dup_key.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d + f4)
    d = b"{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": [4]}"
    d = d + b" " * (118 - len(d)) + b"\n"
    write("bad_list_shape.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d + f4)
    d = b"{'descr': '<f4', 'fortran_order': False, 'shape': (4,)"
    write("bad_no_newline.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d + f4)
    d = b"{'descr': '<f4\\'', 'fortran_order': False, 'shape': (4,)}\n"
    write("bad_escape.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d + f4)
    write("bad_empty.npy", b"")


if __name__ == "__main__":
    main()
