#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""hwpmc diff BASE NEW against the two reports it compares.

usage: check_diff.py HWPMC BASE NEW GONE GREW
  BASE, NEW  two recorded logs of one program whose hot path changed
  GONE       a function hot in BASE that NEW never runs (its delta: minus its share)
  GREW       a function NEW runs that BASE never does (its delta: plus its share)

Checks: every row of `hwpmc diff --json --limit 0` has the self and total counts
`hwpmc report --json --limit 0` gives that function (name and image) in each log
(0 where absent), shares of each log's samples and their difference as deltas;
rows sort by |delta self|; GONE is the most negative row, GREW positive, each by
its whole share; diff of a log with itself changes nothing; --flame colours GREW's
frames red and has no GONE frame (widths are NEW's).
"""
import json
import re
import subprocess
import sys

failed = 0


def check(cond, what):
    global failed
    print(("ok - " if cond else "not ok - ") + what)
    failed += not cond


def run(*args):
    return subprocess.run(list(args), check=True, capture_output=True, text=True).stdout


def main():
    hwpmc, base, new, gone, grew, svg = sys.argv[1:7]
    d = json.loads(run(hwpmc, "diff", "--json", "--limit", "0", base, new))
    rb = json.loads(run(hwpmc, "report", "--json", "--limit", "0", base))["events"][0]
    rn = json.loads(run(hwpmc, "report", "--json", "--limit", "0", new))["events"][0]
    e = d["events"][0]
    tb = {(t["function"], t["image"]): t for t in rb["top"]}
    tn = {(t["function"], t["image"]): t for t in rn["top"]}
    bad = []
    for row in e["rows"]:
        k = tuple(row["key"])
        b, n = tb.get(k, {}), tn.get(k, {})
        want = (b.get("self", 0), n.get("self", 0), b.get("total", 0), n.get("total", 0))
        got = (row["base_self"], row["new_self"], row["base_total"], row["new_total"])
        ds = 100.0 * want[1] / rn["samples"] - 100.0 * want[0] / rb["samples"]
        if got != want or abs(row["delta_self"] - ds) > 1e-9:
            bad.append((k[0], got, want))
    check(not bad and len(e["rows"]) == len(set(tb) | set(tn)) and
          e["base_samples"] == rb["samples"] and e["new_samples"] == rn["samples"],
          f"diff: {len(e['rows'])} rows, each function's counts as the two reports give "
          f"them, deltas of their shares" + (f": {bad[:3]}" if bad else ""))
    mags = [abs(r["delta_self"]) for r in e["rows"]]
    check(mags == sorted(mags, reverse=True), "diff: rows sorted by |delta self|")
    rows = {r["key"][0]: r for r in e["rows"]}
    g, w = rows.get(gone), rows.get(grew)
    check(g is not None and g["new_self"] == 0 and g["delta_self"] < 0 and
          g["delta_self"] == min(r["delta_self"] for r in e["rows"]),
          f"diff: {gone} shrank by its whole share ({g and round(g['delta_self'], 2)} points), "
          f"the largest fall")
    check(w is not None and w["base_self"] == 0 and w["delta_self"] > 0 and
          abs(w["delta_self"] - w["new_self_percent"]) < 1e-9,
          f"diff: {grew} grew by its whole share (+{w and round(w['delta_self'], 2)} points)")
    same = json.loads(run(hwpmc, "diff", "--json", "--limit", "0", new, new))["events"][0]
    check(all(r["delta_self"] == 0 and r["delta_total"] == 0 for r in same["rows"]) and
          len(same["rows"]) == len(tn), "diff of a log with itself: every delta 0")
    subprocess.run([hwpmc, "diff", "--flame", svg, base, new], check=True,
                   capture_output=True)
    text = open(svg, encoding="utf-8").read()
    frames = re.findall(r"<title>([^ <]+)[^<]* \u2014 ([+-][0-9.]+) points[^<]*</title>"
                        r"<rect [^>]*fill=\"rgb\((\d+),(\d+),(\d+)\)\"", text)
    gr = [f for f in frames if f[0] == grew]
    check(gr and all(float(f[1]) > 0 and int(f[2]) == 255 and int(f[4]) < 255 for f in gr) and
          not any(f[0] == gone for f in frames),
          f"diff --flame: {len(gr)} {grew} frames red with a + change, no {gone} frame "
          f"({len(frames)} frames)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
