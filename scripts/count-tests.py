#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Count the tests that ran in one or more meson build directories.

meson reports one result per test executable; a Check executable holds many
tests and prints "NN%: Checks: C, Failures: F, Errors: E", and the shell
integration tests print "P passed, F failed".  Those inner counts are used when
present, so the total is the number of individual tests run.  A test executable
that failed without printing its counts (a crash, a timeout) counts as 1 failed.
Prints one line per build and a last line "N passed, N failed[, N skipped]".
"""
import json
import os
import re
import sys

CHECK = re.compile(r"^\d+%: Checks: (\d+), Failures: (\d+), Errors: (\d+)", re.M)
PLAIN = re.compile(r"^(\d+) passed, (\d+) failed", re.M)


def count(builddir):
    passed = failed = skipped = 0
    path = os.path.join(builddir, "meson-logs", "testlog.json")
    if not os.path.exists(path):
        return 0, 1, 0, ["%s: no test log (the build or the test run failed)" % builddir]
    notes = []
    for line in open(path):
        t = json.loads(line)
        res, out = t.get("result"), t.get("stdout") or ""
        if res == "SKIP":
            skipped += 1
            continue
        m_check = CHECK.findall(out)
        m_plain = PLAIN.findall(out)
        if m_check:
            c, f, e = (sum(int(x[i]) for x in m_check) for i in range(3))
            passed += c - f - e
            failed += f + e
            if res not in ("OK", "EXPECTEDFAIL") and f + e == 0:
                failed += 1
                notes.append("%s: %s after its checks passed" % (t["name"], res))
        elif m_plain:
            p, f = int(m_plain[-1][0]), int(m_plain[-1][1])
            passed += p
            failed += f
            if res != "OK" and f == 0:
                failed += 1
                notes.append("%s: %s" % (t["name"], res))
        elif res == "OK":
            passed += 1
        else:
            failed += 1
            notes.append("%s: %s" % (t["name"], res))
    return passed, failed, skipped, notes


def main():
    tp = tf = ts = 0
    for b in sys.argv[1:]:
        p, f, s, notes = count(b)
        for n in notes:
            print("  " + n)
        print("%s: %d passed, %d failed, %d skipped" % (b, p, f, s))
        tp, tf, ts = tp + p, tf + f, ts + s
    line = "%d passed, %d failed" % (tp, tf)
    if ts:
        line += ", %d skipped" % ts
    print(line)
    return 1 if tf else 0


if __name__ == "__main__":
    sys.exit(main())
