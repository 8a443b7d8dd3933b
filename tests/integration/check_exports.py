#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Read `hwpmc report`'s exports with their real consumers and compare them with
`hwpmc report --json` of the same log and options.

usage: check_exports.py REPORT_JSON [--srcline] [--pprof PROFILE] [--calltree FILE]
                        [--gprof STDERR]

For the first event of the JSON report:
  --pprof: `go tool pprof -top` must list exactly the report's functions with
    flat = self and cum = total, and `-traces` must hold stacks whose counts,
    summed by leaf, are the report's self counts and sum to its samples; every
    trace carries the comm label, and (a one-event report) the cgroup labels sum
    per cgroup to the header's cgroups (none without cgroup marks).  Skipped (a
    '#' line) without `go`.  With
    --srcline (before --pprof; the report ran with --srcline), `-top -lines` must
    list the report's "NAME FILE:LINE" rows (pprof's full path cut to its last
    component), and -traces's function names are the report's without lines.
  --calltree: `callgrind_annotate` (Valgrind's reader of the callgrind format that
    KCachegrind reads) must give each function the report's self count
    (exclusive) and total (inclusive, for every function not on a call cycle),
    and the program total must be the samples.  Skipped without callgrind_annotate.
  --gprof: STDERR is what `hwpmc report --gprof DIR` said ("hwpmc: gprof IMAGE
    FILE" per file); for each image with a .symtab, `gprof -b -p --demangle IMAGE
    FILE` must give its functions the report's self counts; PCs the report leaves
    unnamed (IMAGE+0xOFF) may appear under other symbols, at most that many.
Prints one 'ok - ...' or 'not ok - ...' line per check; exits 1 if any failed.
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
SRCLINE = False
LINE = re.compile(r"^(.*) (\S+):(\d+)$")


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


def check_pprof(ev, profile, cgroups=None):
    if not shutil.which("go"):
        print("# go is not installed (scripts/bootstrap installs golang-go): pprof skipped")
        return
    # -filefunctions: a function is its name and its file (the image), as in the
    # report: two images' _start are two functions, not one.
    want = Counter()
    for t in ev["top"]:
        if SRCLINE and LINE.match(t["function"]):
            key = t["function"]  # "NAME FILE:LINE": pprof -lines prints the same
        else:
            key = t["function"] + (" " + t["image"] if t["image"] else "")
        want[(key, t["self"], t["total"])] += 1
    idx = ["-sample_index=0"]

    rc, out, err = pprof(["-top", "-lines" if SRCLINE else "-filefunctions",
                          "-nodecount=1000000", "-nodefraction=0", "-edgefraction=0"] + idx,
                         profile)
    check(rc == 0, "go tool pprof -top reads the profile (%s)" % err.strip()[-200:])
    got = Counter()
    row = re.compile(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.*)$")
    for line in out.splitlines():
        m = row.match(line)
        if m:
            key = m.group(3).rstrip()
            lm = LINE.match(key) if SRCLINE else None
            if lm:
                key = "%s %s:%s" % (lm.group(1), os.path.basename(lm.group(2)), lm.group(3))
            got[(key, int(m.group(1)), int(m.group(2)))] += 1
    # pprof drops functions without samples anywhere; the report lists only sampled ones.
    check(got == want, "-top: %d functions, flat and cum as the report's self and total%s"
          % (sum(want.values()), "" if got == want else
             " (only pprof: %s; only report: %s)" % (sorted(got - want)[:3], sorted(want - got)[:3])))

    rc, out, err = pprof(["-traces"] + idx, profile)
    check(rc == 0, "go tool pprof -traces reads the profile")
    by_leaf, total, traces, labelled, by_cgroup = Counter(), 0, 0, 0, Counter()
    for block in out.split("-----------+-------------------------------------------------------")[1:]:
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines:
            continue
        traces += 1
        labels = [l for l in lines if re.match(r"^\s*(comm|cgroup):\s", l)]
        labelled += any(re.match(r"^\s*comm:\s", l) for l in labels)
        cg = [l.split(":", 1)[1].strip() for l in labels if re.match(r"^\s*cgroup:\s", l)]
        frames = [l for l in lines if l not in labels]
        m = re.match(r"^\s*(\d+)\s+(.*)$", frames[0]) if frames else None
        if not m:
            continue
        by_leaf[m.group(2)] += int(m.group(1))
        total += int(m.group(1))
        if cg:
            by_cgroup[cg[0]] += int(m.group(1))
    self_by = Counter()
    for t in ev["top"]:
        if t["self"]:
            lm = LINE.match(t["function"]) if SRCLINE else None
            self_by[lm.group(1) if lm else t["function"]] += t["self"]
    check(total == ev["samples"], "-traces: %d traces, %d samples in all (the report: %d)"
          % (traces, total, ev["samples"]))
    check(by_leaf == self_by, "-traces: summed by leaf, the report's self counts")
    check(traces > 0 and labelled == traces, "-traces: every trace has its comm label (%d of %d)"
          % (labelled, traces))
    if cgroups is not None:
        # The cgroup label: the samples of each cgroup the log said, as the report's
        # header counts them (samples of processes with no cgroup have no label).
        want_cg = Counter({c["path"]: c["samples"] for c in cgroups if c["samples"]})
        check(by_cgroup == want_cg, "-traces: the cgroup labels count the report's samples per "
              "cgroup (%d cgroups)%s" % (len(want_cg), "" if by_cgroup == want_cg else
                                        ": pprof %s, report %s" % (dict(by_cgroup), dict(want_cg))))


def on_cycles(path):
    """The functions on a cycle of the file's call graph (fn -> cfn edges)."""
    graph, fn = {}, None
    for line in open(path):
        if line.startswith("fn="):
            fn = line[3:].rstrip("\n")
            graph.setdefault(fn, set())
        elif line.startswith("cfn=") and fn is not None:
            graph[fn].add(line[4:].rstrip("\n"))
            graph.setdefault(line[4:].rstrip("\n"), set())
    index, low, stack, on, out, n = {}, {}, [], set(), set(), [0]

    def strong(v):  # Tarjan's strongly connected components
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                out.update(comp)
    sys.setrecursionlimit(100000)
    for v in list(graph):
        if v not in index:
            strong(v)
    return out


def check_calltree(ev, path):
    if not shutil.which("callgrind_annotate"):
        print("# callgrind_annotate is not installed (valgrind): calltree skipped")
        return
    row = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*?):(.*) \[.*\]$")
    per = {}
    for inclusive in ("no", "yes"):
        p = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100",
                            "--inclusive=" + inclusive, path], capture_output=True, text=True,
                           timeout=120)
        check(p.returncode == 0 and "Use of uninitialized" not in p.stderr,
              "callgrind_annotate --inclusive=%s reads it (%s)" % (inclusive, p.stderr.strip()[-200:]))
        got = Counter()
        for line in p.stdout.splitlines():
            m = row.match(line)
            if m and m.group(2) != "[process]":  # process names: the stacks' callers
                got[m.group(3)] += int(m.group(1).replace(",", ""))
        per[inclusive] = got
        tot = re.search(r"^\s*([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", p.stdout, re.M)
        if inclusive == "no":
            check(tot and int(tot.group(1).replace(",", "")) == ev["samples"],
                  "calltree: the program total is the %d samples" % ev["samples"])
    cyc = on_cycles(path)
    want_self, want_total = Counter(), Counter()
    for t in ev["top"]:
        if t["self"]:
            want_self[t["function"]] += t["self"]
        want_total[t["function"]] += t["total"]
    # A function on a call cycle ([unknown] frames, recursion) is counted once per
    # sample by the report but once per edge by callgrind's inclusive cost.
    per["yes"] = Counter({f: c for f, c in per["yes"].items() if f not in cyc})
    want_total = Counter({f: c for f, c in want_total.items() if f not in cyc})
    check(+per["no"] == want_self, "calltree: %d functions' exclusive cost is the report's self%s"
          % (len(want_self), "" if +per["no"] == want_self else " (%s)" % sorted(
              (+per["no"] - want_self) + (want_self - +per["no"]))[:3]))
    check(per["yes"] == want_total, "calltree: %d functions' inclusive cost is the report's "
          "total (%d on call cycles not compared)%s" % (len(want_total), len(cyc), "" if per["yes"] == want_total else " (%s)" % sorted(
              (per["yes"] - want_total) + (want_total - per["yes"]))[:3]))


def gprof_keeps(name):
    """Whether gprof lists a function of this name.  gprof (corefile.c,
    core_sym_class) skips a symbol with a '.' suffix other than digits, ".clone.N"
    or ".constprop.N" (x_thrower.cold, say) and names its PCs by the symbol below
    it: for gprof such a function is as unnamed as IMAGE+0xOFF."""
    sufs = re.findall(r"\[clone (\.[^\]]*)\]", name)
    base = re.sub(r" \[clone [^\]]*\]", "", name)
    if "(" not in base and "." in base[1:]:
        sufs.append(base[base.index(".", 1):])
    for suf in sufs:
        for part in suf.split(".")[1:]:
            if not part.isdigit() and part not in ("clone", "constprop"):
                return False
    return True


def check_gprof(ev, said):
    if not shutil.which("gprof"):
        print("# gprof is not installed (binutils): gprof skipped")
        return
    files = [l.split()[2:4] for l in open(said) if l.startswith("hwpmc: gprof ")]
    check(len(files) > 0, "gprof: %d files written" % len(files))
    row = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+([\d.]+)\s+(?:\d+\s+[\d.]+\s+[\d.]+\s+)?(\S.*)$")
    for image, path in files:
        secs = subprocess.run(["readelf", "-S", "--wide", image], capture_output=True, text=True)
        if " .symtab " not in secs.stdout:
            print("# gprof: %s has no .symtab for gprof: not compared" % image)
            continue
        p = subprocess.run(["gprof", "-b", "-p", "--demangle", image, path],
                           capture_output=True, text=True, timeout=120)
        got = Counter()
        for line in p.stdout.splitlines():
            m = row.match(line)
            if m and float(m.group(1)) > 0:
                got[m.group(2).strip()] += int(float(m.group(1)))
        want = Counter()
        unnamed = 0
        for t in ev["top"]:
            if t["image"] == image and t["self"] and "+0x" not in t["function"] and \
                    gprof_keeps(t["function"]):
                want[t["function"]] += t["self"]
            elif t["image"] == image and t["self"]:
                unnamed += t["self"]
        # gprof names every PC by the symbol below it; the report leaves a PC outside
        # any function unnamed (IMAGE+0xOFF: a PLT stub after _init, say).  Such PCs
        # may appear under a function the report has none of, and only as many.
        extra = got - want
        ok = (p.returncode == 0 and not (want - got) and
              all(k not in want for k in extra) and sum(extra.values()) <= unnamed)
        check(ok, "gprof %s: %d functions' self samples as the report's%s%s" % (
              os.path.basename(image), len(want),
              " (%d PCs the report leaves unnamed: gprof's %s)" % (unnamed, sorted(extra))
              if extra and ok else "",
              "" if ok else " (%s)" % sorted((got - want) + (want - got))[:3] + p.stderr[-200:]))


def main():
    global SRCLINE
    j = json.load(open(sys.argv[1]))
    ev = j["events"][0]
    # the report's samples per cgroup (none: no cgroup label); one event's only
    cgroups = j["header"].get("cgroups", []) if len(j["events"]) == 1 else None
    args = sys.argv[2:]
    while args:
        if args[0] == "--srcline":
            SRCLINE = True
            args = args[1:]
            continue
        if args[0] == "--pprof":
            check_pprof(ev, args[1], cgroups)
        elif args[0] == "--calltree":
            check_calltree(ev, args[1])
        elif args[0] == "--gprof":
            check_gprof(ev, args[1])
        else:
            sys.exit("check_exports.py: unknown argument " + args[0])
        args = args[2:]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
