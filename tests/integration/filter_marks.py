#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The in-kernel filter marks of a log (docs/pmclog-format.md 11.10), for test-filter.sh.

load(stream) reads `hwpmc dump --json` lines and returns (records, marks), marks
being (tsc, text) in log order; pids_between(records, marks) gives, for each mark,
the sorted pids of the samples from it to the next one.
"""
import json
import struct

FILTER = 0x48575302


def load(stream):
    recs = [json.loads(line) for line in stream]
    ud = [(r["tsc"], r["userdata"]) for r in recs if r.get("type") == "userdata"]
    marks = []
    for i, (t, w) in enumerate(ud):
        if w == FILTER:
            n = ud[i + 1][1]
            words = ud[i + 2:i + 2 + (n + 3) // 4]
            marks.append((t, b"".join(struct.pack("<I", x) for _, x in words)[:n].decode()))
    return recs, marks


def pids_between(recs, marks):
    cc = [r for r in recs if r.get("type") == "callchain"]
    out = []
    for i, (t, _) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else float("inf")
        out.append(sorted({r["pid"] for r in cc if t <= r["tsc"] < end}))
    return out
