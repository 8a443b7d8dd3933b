#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Make a big pmclog out of a small one, for report benchmarks.

usage: bench/multiply-log.py INPUT OUTPUT N_SAMPLES

Walks INPUT record by record (16-byte header: u32 0xEE<<24 | type<<16 | length,
u32 spare, u64 tsc; docs/pmclog-format.md section 3.1) and writes OUTPUT as:
every record that is neither CALLCHAIN (16) nor CLOSELOG (1), once, in order;
then INPUT's CALLCHAIN records, repeated in order (the last copy cut short)
until there are N_SAMPLES of them; then one CLOSELOG.  Records are copied
byte for byte (time stamps included).  Only the standard library is used.
"""
import struct
import sys

MAGIC = 0xEE
T_CLOSELOG = 1
T_CALLCHAIN = 16
HDR = 16


def die(msg):
    sys.stderr.write("multiply-log: %s\n" % msg)
    sys.exit(1)


def main():
    if len(sys.argv) != 4:
        die("usage: multiply-log.py INPUT OUTPUT N_SAMPLES")
    src, dst = sys.argv[1], sys.argv[2]
    try:
        want = int(sys.argv[3])
    except ValueError:
        die("N_SAMPLES: '%s' is not a number" % sys.argv[3])
    if want < 0:
        die("N_SAMPLES: must be >= 0")
    with open(src, "rb") as f:
        data = f.read()
    view = memoryview(data)

    other, chains, closelog = [], [], None
    off, n = 0, len(data)
    while off < n:
        if n - off < HDR:
            die("%s: offset %d: %d trailing bytes, less than a record header" % (src, off, n - off))
        (hdr,) = struct.unpack_from("<I", data, off)
        magic, typ, length = hdr >> 24, (hdr >> 16) & 0xFF, hdr & 0xFFFF
        if magic != MAGIC:
            die("%s: offset %d: bad magic 0x%02x (header 0x%08x)" % (src, off, magic, hdr))
        if length < HDR or length % 4:
            die("%s: offset %d: bad record length %d" % (src, off, length))
        if off + length > n:
            die("%s: offset %d: record of %d bytes runs past the end (%d)" % (src, off, length, n))
        rec = view[off:off + length]
        if typ == T_CALLCHAIN:
            chains.append(rec)
        elif typ == T_CLOSELOG:
            closelog = bytes(rec)  # keep the last one; written once at the end
        else:
            other.append(rec)
        off += length
    if want and not chains:
        die("%s: no CALLCHAIN records to repeat" % src)
    if closelog is None:
        closelog = struct.pack("<IIQ", MAGIC << 24 | T_CLOSELOG << 16 | HDR, 0, 0)

    block = b"".join(chains)
    full, rest = divmod(want, len(chains)) if chains else (0, 0)
    with open(dst, "wb") as out:
        for rec in other:
            out.write(rec)
        for _ in range(full):
            out.write(block)
        for rec in chains[:rest]:
            out.write(rec)
        out.write(closelog)
    sys.stderr.write("multiply-log: %s: %d CALLCHAIN, %d other records -> %s: %d CALLCHAIN (%d x %d + %d)\n"
                     % (src, len(chains), len(other), dst, want, full, len(chains), rest))


if __name__ == "__main__":
    main()
