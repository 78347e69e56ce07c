#!/usr/bin/env python3
"""Compares two sets of screenshots pixel by pixel (a layout change must leave every picture as
it was): for each PNG under BEFORE, the pixels that differ in AFTER by more than --tolerance in
any channel and the box around them. The status bar's timings and the Cost tab's measurements
change from run to run: --ignore-bottom N leaves out each picture's bottom N rows.

  scripts/screenshots.sh; cp -r docs /tmp/before      # before the change
  scripts/screenshots.sh; scripts/compare_screenshots.py /tmp/before docs --ignore-bottom 24

Standard library only (PNG: 8-bit RGB or RGBA, not interlaced, as Qt writes it). Exit status 1
when a picture is missing, differs in size or differs outside the ignored rows.
"""
import argparse
import os
import struct
import sys
import zlib


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, width = 8, [], 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or color not in (2, 6) or interlace:
                raise ValueError(f"{path}: only 8-bit RGB/RGBA, not interlaced")
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if kind == 1: line[i] = (line[i] + a) & 255
            elif kind == 2: line[i] = (line[i] + b) & 255
            elif kind == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def compare(before, after, tolerance, ignore_bottom):
    wa, ha, ca, ra = read_png(before)
    wb, hb, cb, rb = read_png(after)
    if (wa, ha) != (wb, hb):
        return f"size {wa}x{ha} -> {wb}x{hb}", False
    count, box = 0, None
    for y in range(max(0, ha - ignore_bottom)):
        if ra[y] == rb[y]:
            continue
        for x in range(wa):
            pa, pb = ra[y][x * ca:x * ca + 3], rb[y][x * cb:x * cb + 3]
            if max(abs(p - q) for p, q in zip(pa, pb)) > tolerance:
                count += 1
                box = (x, y, x, y) if box is None else (min(box[0], x), min(box[1], y), max(box[2], x), max(box[3], y))
    return (f"{count} px differ in {box}" if count else "same"), count == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--tolerance", type=int, default=16, help="largest channel difference taken as equal")
    parser.add_argument("--ignore-bottom", type=int, default=0, help="rows at the bottom left out (the status bar)")
    args = parser.parse_args()
    ok = True
    for folder, _, files in sorted(os.walk(args.before)):
        for name in sorted(f for f in files if f.endswith(".png")):
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, args.before)
            other = os.path.join(args.after, rel)
            if not os.path.exists(other):
                print(f"{rel}: missing")
                ok = False
                continue
            text, same = compare(path, other, args.tolerance, args.ignore_bottom)
            print(f"{rel}: {text}")
            ok = ok and same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
