#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Read a `hwpmc report --pprof` profile with the real consumer, `go tool pprof`,
and compare it with `hwpmc report --json` of the same log and options.

usage: check_pprof.py REPORT_JSON PROFILE [EVENT_INDEX]

For the event at EVENT_INDEX (default 0) of the JSON report, pprof's -top must list
exactly the report's functions with flat = self and cum = total, and pprof's
-traces must hold stacks whose counts, summed by leaf, are the report's self
counts and sum to its samples; every trace carries the comm label.  Prints one
'ok - ...' or 'not ok - ...' line per check; exit 77 without `go`.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

results = []


def check(ok, what):
    results.append(ok)
    print(("ok - " if ok else "not ok - ") + what)


def pprof(args, profile):
    home = tempfile.mkdtemp()
    try:
        env = dict(os.environ, HOME=home, PPROF_TMPDIR=home, GOCACHE=home, GOFLAGS="")
        p = subprocess.run(["go", "tool", "pprof", "-symbolize=none"] + args + [profile],
                           capture_output=True, text=True, env=env, timeout=120)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return p.returncode, p.stdout, p.stderr


def main():
    if not shutil.which("go"):
        print("# go is not installed (scripts/bootstrap installs golang-go): skipped")
        sys.exit(77)
    rep, profile = json.load(open(sys.argv[1])), sys.argv[2]
    ev_index = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    ev = rep["events"][ev_index]
    want = Counter()
    for t in ev["top"]:
        want[(t["function"], t["self"], t["total"])] += 1
    idx = ["-sample_index=%d" % ev_index]

    rc, out, err = pprof(["-top", "-nodecount=1000000", "-nodefraction=0", "-edgefraction=0"]
                         + idx, profile)
    check(rc == 0, "go tool pprof -top reads the profile (%s)" % err.strip()[-200:])
    got = Counter()
    row = re.compile(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.*)$")
    for line in out.splitlines():
        m = row.match(line)
        if m:
            got[(m.group(3), int(m.group(1)), int(m.group(2)))] += 1
    # pprof drops functions without samples anywhere; the report lists only sampled ones.
    check(got == want, "-top: %d functions, flat and cum as the report's self and total%s"
          % (sum(want.values()), "" if got == want else
             " (only pprof: %s; only report: %s)" % (sorted(got - want)[:3], sorted(want - got)[:3])))

    rc, out, err = pprof(["-traces"] + idx, profile)
    check(rc == 0, "go tool pprof -traces reads the profile")
    by_leaf, total, traces, labelled = Counter(), 0, 0, 0
    for block in out.split("-----------+-------------------------------------------------------")[1:]:
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines:
            continue
        traces += 1
        labels = [l for l in lines if re.match(r"^\s*comm:\s", l)]
        labelled += bool(labels)
        frames = [l for l in lines if l not in labels]
        m = re.match(r"^\s*(\d+)\s+(.*)$", frames[0]) if frames else None
        if not m:
            continue
        by_leaf[m.group(2)] += int(m.group(1))
        total += int(m.group(1))
    self_by = Counter()
    for t in ev["top"]:
        if t["self"]:
            self_by[t["function"]] += t["self"]
    check(total == ev["samples"], "-traces: %d traces, %d samples in all (the report: %d)"
          % (traces, total, ev["samples"]))
    check(by_leaf == self_by, "-traces: summed by leaf, the report's self counts")
    check(traces > 0 and labelled == traces, "-traces: every trace has its comm label (%d of %d)"
          % (labelled, traces))
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
