#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""hwpmc annotate FUNC LOG on a tight loop, against the report and the code itself.

usage: check_annotate.py HWPMC LOG FUNC
  FUNC  a function of LOG that is one tight loop (the corpus's c_leaf: spin() inlined)

Checks: the function's samples are its self samples in `hwpmc report --json`; every
one of them is on one of its instructions (their sum); the loop (from the backward
conditional branch to its target, found in the disassembly) holds >= 90% of them;
the hottest source line is a line of the loop's instructions, in corpus.c, and the
text output marks it '>>' with its source text.
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


def main():
    hwpmc, log, func = sys.argv[1:4]
    run = lambda *a: subprocess.run([hwpmc, *a], check=True, capture_output=True,
                                    text=True).stdout
    j = json.loads(run("annotate", "--json", func, log))
    rep = json.loads(run("report", "--json", "--limit", "0", log))["events"][0]
    self_ = sum(t["self"] for t in rep["top"] if t["function"] == func)
    f = j["functions"][0]
    ins = f["instructions"]
    check(f["samples"] == self_ and sum(i["samples"] for i in ins) == f["samples"] and
          len(ins) > 3, f"annotate {func}: {f['samples']} samples (the report's self: {self_}), "
          f"all on its {len(ins)} instructions")
    loop = None
    for i in ins:
        m = re.fullmatch(r"j\w+ 0x([0-9a-f]+)", i["text"])
        if m and i["text"][:3] != "jmp" and f["start"] <= int(m.group(1), 16) < i["address"]:
            loop = (int(m.group(1), 16), i["address"])
    inloop = [i for i in ins if loop and loop[0] <= i["address"] <= loop[1]]
    n = sum(i["samples"] for i in inloop)
    check(loop is not None and n * 10 >= f["samples"] * 9,
          f"annotate {func}: the loop {loop and '%#x..%#x' % loop} ({len(inloop)} instructions) "
          f"holds {n} of {f['samples']} samples (>= 90%)")
    hot = [l for l in f["lines"] if l["hottest"]]
    lines = {(i["file"], i["line"]) for i in inloop}
    check(len(hot) == 1 and (hot[0]["file"], hot[0]["line"]) in lines and
          hot[0]["file"].endswith("corpus.c"),
          f"annotate {func}: the hottest line is a line of the loop "
          f"({hot and '%s:%d' % (hot[0]['file'].rsplit('/', 1)[-1], hot[0]['line'])})")
    text = run("annotate", func, log)
    marked = [l for l in text.splitlines() if l.startswith(">>") and "corpus.c:" in l]
    check(hot and any(("corpus.c:%d " % hot[0]["line"]) in l and
                      re.search(r"for \(|\^=", l) for l in marked),
          f"annotate {func} text: the hottest line marked '>>' with its source text "
          f"({marked[:1]})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
