#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check_png.py: check that a screenshot (PNG) is not blank, with only zlib and struct.

usage: check_png.py PNG [--min-colours N] [--min-changed FRACTION]
                        [--colour R,G,B [--min-pixels K] [--max-pixels M] [--tolerance T]]

--min-colours   at least N distinct RGB colours (default 16)
--min-changed   at least FRACTION of the pixels differ from the most common colour
                (the background; default 0.05)
--colour        at least K pixels (default 100) within T (default 8) of R,G,B in every
                channel, e.g. the search highlight; with --max-pixels, at most M (0: the
                colour must be absent)
Prints one line saying what it found; exits 0 if every check passed, 1 if one failed,
2 if the file is not a PNG it can decode (8-bit grey, grey+alpha, RGB, RGBA or palette,
not interlaced).
"""
import argparse
import struct
import sys
import zlib


class PngError(Exception):
    pass


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode(path):
    """Return (width, height, rows) with rows a list of lists of (r, g, b) tuples."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise PngError('not a PNG signature')
    pos, ihdr, idat, palette = 8, None, [], None
    while pos + 8 <= len(data):
        length, ctype = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if len(body) != length:
            raise PngError('truncated chunk %r' % ctype)
        if ctype == b'IHDR':
            ihdr = struct.unpack('>IIBBBBB', body)
        elif ctype == b'PLTE':
            palette = [tuple(body[i:i + 3]) for i in range(0, len(body) - 2, 3)]
        elif ctype == b'IDAT':
            idat.append(body)
        elif ctype == b'IEND':
            break
        pos += 12 + length
    if ihdr is None or not idat:
        raise PngError('no IHDR or IDAT')
    width, height, depth, colour, _, _, interlace = ihdr
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(colour)
    if depth != 8 or channels is None or interlace != 0:
        raise PngError('unsupported PNG: depth %d colour type %d interlace %d'
                       % (depth, colour, interlace))
    if colour == 3 and not palette:
        raise PngError('palette image without PLTE')
    raw = zlib.decompress(b''.join(idat))
    stride = width * channels
    if len(raw) < height * (stride + 1):
        raise PngError('image data too short')
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        bpp = channels
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xff
        elif ftype == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 0xff
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xff
        elif ftype == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                upleft = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + paeth(left, prev[i], upleft)) & 0xff
        elif ftype != 0:
            raise PngError('bad filter type %d in row %d' % (ftype, y))
        if colour == 0 or colour == 4:
            px = [(v, v, v) for v in line[::channels]]
        elif colour == 3:
            px = [palette[v] if v < len(palette) else (0, 0, 0) for v in line]
        else:
            px = [tuple(line[i:i + 3]) for i in range(0, stride, channels)]
        rows.append(px)
        prev = line
    return width, height, rows


def main():
    ap = argparse.ArgumentParser(description='check that a PNG screenshot is not blank')
    ap.add_argument('png')
    ap.add_argument('--min-colours', type=int, default=16)
    ap.add_argument('--min-changed', type=float, default=0.05)
    ap.add_argument('--colour')
    ap.add_argument('--min-pixels', type=int, default=100)
    ap.add_argument('--max-pixels', type=int)
    ap.add_argument('--tolerance', type=int, default=8)
    args = ap.parse_args()
    try:
        width, height, rows = decode(args.png)
    except (OSError, PngError, zlib.error) as e:
        print('%s: %s' % (args.png, e))
        return 2
    counts = {}
    for row in rows:
        for p in row:
            counts[p] = counts.get(p, 0) + 1
    total = width * height
    bg, bgn = max(counts.items(), key=lambda kv: kv[1])
    changed = (total - bgn) / total if total else 0.0
    msg = ['%dx%d' % (width, height), '%d colours' % len(counts),
           '%.1f%% not background rgb%s' % (100 * changed, bg)]
    ok = len(counts) >= args.min_colours and changed >= args.min_changed
    if args.colour:
        want = tuple(int(v) for v in args.colour.split(','))
        hits = sum(n for p, n in counts.items()
                   if all(abs(p[i] - want[i]) <= args.tolerance for i in range(3)))
        msg.append('%d pixels of rgb%s' % (hits, want))
        if args.max_pixels is not None:
            ok = ok and hits <= args.max_pixels
        else:
            ok = ok and hits >= args.min_pixels
    print(', '.join(msg))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
