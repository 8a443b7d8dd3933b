#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""hwpmc report --sort KEYS and --children against independent counts.

usage: check_sort.py HWPMC LOG DUMP_JSONL
  HWPMC       the hwpmc binary
  LOG         a recorded log (its samples all kept: no filter, every sample framed)
  DUMP_JSONL  `hwpmc dump --json LOG`: the oracle for the sample keys

Prints TAP-like lines ("ok - ..." / "not ok - ...") and exits 1 if any failed.
Checks:
  - --sort pid / tid / cpu: each row's self equals the log's callchains of that key
    (counted from the dump), and total equals self (keys of the sample);
  - --sort comm,dso and comm,pid,tid,dso,sym,cpu: the rows' self sums to the samples;
  - --sort dso,sym: each (image, function) row has the default top list's self and
    total (a function is a symbol of one image);
  - --sort sym: the default top list itself;
  - --children: the roots' totals sum to the samples, so do the nodes' selves, and a
    function's total (its outermost nodes' totals summed) is the top list's total.
"""
import collections
import json
import subprocess
import sys

failed = 0


def check(cond, what):
    global failed
    print(("ok - " if cond else "not ok - ") + what)
    if not cond:
        failed += 1


def report(hwpmc, log, *args):
    out = subprocess.run([hwpmc, "report", "--json", "--limit", "0", *args, log],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    hwpmc, log, dump = sys.argv[1:4]
    chains = [json.loads(l) for l in open(dump)]
    chains = [r for r in chains if r.get("type") == "callchain"]
    ev = None

    for key in ("pid", "tid", "cpu"):
        j = report(hwpmc, log, "--sort", key)
        e = j["events"][0]
        want = collections.Counter(r[key] for r in chains)
        got = {row[key]: row["self"] for row in e["top"]}
        same = all(row["self"] == row["total"] for row in e["top"])
        check(got == dict(want) and same and e["sort"] == [key],
              f"--sort {key}: {len(got)} rows, each as many samples as the log has "
              f"({sum(got.values())} of {len(chains)})"
              + ("" if got == dict(want) else f": got {sorted(got.items())[:6]}, "
                 f"log {sorted(want.items())[:6]}"))

    for keys in ("comm,dso", "comm,pid,tid,dso,sym,cpu", "dso,srcline"):
        j = report(hwpmc, log, "--sort", keys)
        e = j["events"][0]
        s = sum(row["self"] for row in e["top"])
        check(s == e["samples"] == j["header"]["reported"] and
              all(row["total"] >= row["self"] for row in e["top"]),
              f"--sort {keys}: rows' self sums to the {e['samples']} samples ({s})")

    top = report(hwpmc, log)["events"][0]
    by_func = {(t["image"], t["function"]): (t["self"], t["total"]) for t in top["top"]}
    j = report(hwpmc, log, "--sort", "dso,sym")["events"][0]
    got = {(t["dso"], t["function"]): (t["self"], t["total"]) for t in j["top"]}
    check(got == by_func,
          f"--sort dso,sym: {len(got)} rows, each the top list's self and total of that "
          f"function")
    j = report(hwpmc, log, "--sort", "sym")["events"][0]
    check(j["top"] == top["top"] and "sort" not in j, "--sort sym is the default top list")

    c = report(hwpmc, log, "--children", "--depth", "0", "--min-percent", "0")["events"][0]
    roots = sum(n["samples"] for n in c["children"])
    selves = 0
    outer = collections.Counter()

    def walk(nodes, above):
        nonlocal selves
        for n in nodes:
            k = (n["image"], n["function"])
            selves += n["self"]
            if k not in above:
                outer[k] += n["samples"]
            walk(n["children"], above | {k})

    walk(c["children"], frozenset())
    check(roots == c["samples"] == selves,
          f"--children: roots' totals {roots} and nodes' selves {selves} are the "
          f"{c['samples']} samples")
    tot = {k: v[1] for k, v in by_func.items()}
    bad = [(k, outer.get(k), tot[k]) for k in tot if outer.get(k) != tot[k]]
    check(not bad and len(outer) == len(tot),
          f"--children: each of {len(tot)} functions' total is the top list's"
          + ("" if not bad else f": {bad[:4]}"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
