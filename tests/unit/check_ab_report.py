#!/usr/bin/env python3
"""Checks a `fusebox ab --report DIR` page for tests/unit/test_cli_ab.c.

  check_ab_report.py DIR COLOR [--chromium]

Every <img src> of DIR/index.html must name a file in DIR that parses as XML
with an <svg> root; speedup.svg must be among them and hold a bar (<rect>)
filled with COLOR (#rrggbb, the first non-baseline fuser's). With --chromium,
the page is rendered by headless Chromium (when installed; otherwise "SKIP"
is printed and the check passes) and the screenshot must contain pixels of
COLOR: the charts were drawn. Prints OK on success; exits 1 with a reason
otherwise. Only the standard library (xml, zlib, html.parser).
"""
import html.parser
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

SVG = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


class Imgs(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.srcs = []
        self.scripts = 0
        self.remote = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.srcs.append(a.get("src", ""))
        if tag == "script":
            self.scripts += 1
        for k in ("src", "href"):
            v = a.get(k) or ""
            if "://" in v:
                self.remote.append(v)


def png_pixels(path):
    """(width, height, rows of bytes, bytes per pixel) of an 8-bit RGB/RGBA PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(path + ": not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6) or body[12] != 0:
                fail(path + ": PNG is not 8-bit RGB/RGBA, non-interlaced")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pr) & 255
        rows.append(line)
        prev = line
    return w, h, rows, bpp


def main():
    if len(sys.argv) < 3:
        fail("usage: check_ab_report.py DIR COLOR [--chromium]")
    d, color = sys.argv[1], sys.argv[2].lower()
    page = os.path.join(d, "index.html")
    if not os.path.isfile(page):
        fail(page + " missing")
    p = Imgs()
    p.feed(open(page, encoding="utf-8").read())
    if p.scripts:
        fail("the page has <script>")
    if p.remote:
        fail("the page fetches " + p.remote[0])
    if "speedup.svg" not in p.srcs:
        fail("the page does not show speedup.svg: " + repr(p.srcs))
    for src in p.srcs:
        f = os.path.join(d, src)
        if not os.path.isfile(f):
            fail("the page shows " + src + ", which is not in " + d)
        try:
            root = ET.parse(f).getroot()
        except ET.ParseError as e:
            fail(src + ": not XML: " + str(e))
        if root.tag != SVG + "svg":
            fail(src + ": root is " + root.tag)
    bars = [r for r in ET.parse(os.path.join(d, "speedup.svg")).getroot().iter(SVG + "rect")
            if r.get("fill", "").lower() == color and float(r.get("width", "0")) >= 1 and
            float(r.get("height", "0")) > 0 and r.find(SVG + "title") is not None]
    if not bars:
        fail("speedup.svg has no bar of " + color)
    print("svgs", len(p.srcs), "bars", len(bars))
    if "--chromium" in sys.argv[3:]:
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if not exe:
            print("SKIP: chromium not installed (scripts/install-deps.sh --with-chromium)")
            print("OK")
            return
        with tempfile.TemporaryDirectory() as tmp:
            shot = os.path.join(tmp, "page.png")
            cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                   "--user-data-dir=" + os.path.join(tmp, "profile"), "--window-size=1200,900",
                   "--screenshot=" + shot, "file://" + os.path.abspath(page)]
            try:
                subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=90)
            except subprocess.TimeoutExpired:
                fail("chromium took more than 90 s")
            if not os.path.isfile(shot):
                fail("chromium wrote no screenshot")
            w, h, rows, bpp = png_pixels(shot)
            want = bytes(int(color[i:i + 2], 16) for i in (1, 3, 5))
            n = sum(1 for row in rows for x in range(0, w * bpp, bpp) if bytes(row[x:x + 3]) == want)
            if n < 50:
                fail("the rendered page has %d pixels of %s: the charts were not drawn" % (n, color))
            print("chromium: %d pixels of %s" % (n, color))
    print("OK")


main()
