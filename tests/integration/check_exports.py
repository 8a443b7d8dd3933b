#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Read `hwpmc report`'s exports with their real consumers and compare them with
`hwpmc report --json` of the same log and options.

usage: check_exports.py REPORT_JSON [--srcline] [--calltree FILE] [--gprof STDERR]
                        [--json REPORT_JSON] [--pprof PROFILE [--list FUNC:SOURCE:TEXT]
                        [--disasm FUNC]]

For the first event of the JSON report (--json: another one for the checks after it):
  --pprof: the profile has a location per PC with its DWARF lines, inline frames
    too, so the report to compare is one of --inline.  `go tool pprof -top
    -functions` must list the report's functions summed by name (pprof's rows)
    with flat = self and cum = total (where a name is one row of the report),
    and `-traces` must hold stacks whose counts, summed by leaf, are the report's
    self counts and sum to its samples; every trace carries the comm, pid and tid
    labels, and (a one-event report) the cgroup labels sum per cgroup to the
    header's cgroups (none without cgroup marks); `-raw` must show the sample types
    samples/count and, for a clock event, cpu/nanoseconds = samples x period, and a
    program's mapping first.  --list: `-list FUNC` prints SOURCE with TEXT in it;
    --disasm: `-disasm FUNC` puts samples on more than one instruction, not all
    on the first.  The npm package pprof-format (HWPMC_NODE_MODULES, else
    /var/lib/hwpmc-tests/node_modules) decodes it independently: references
    resolve, values sum to the report's samples, every sample has its labels.
    Skipped (a '#' line) without `go` (or node and pprof-format).  With
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


CLOCKS = re.compile(r"^(cpu-clock|task-clock)(:.*)?$")


def check_pprof(ev, profile, cgroups=None):
    if not shutil.which("go"):
        print("# go is not installed (scripts/bootstrap installs golang-go): pprof skipped")
        return
    # A location per PC, its lines from DWARF: pprof's functions are names (and source
    # files), so two images' functions of one name are one row of -top: the report's
    # rows summed by name (cum compared where the name is one row of the report).
    want_flat, want_cum, rows = Counter(), {}, Counter()
    for t in ev["top"]:
        if SRCLINE and LINE.match(t["function"]):
            key = t["function"]  # "NAME FILE:LINE": pprof -lines prints the same
        else:
            key = t["function"]
        want_flat[key] += t["self"]
        want_cum[key] = t["total"]
        rows[key] += 1
    want_flat = +want_flat
    idx = ["-sample_index=samples"]

    rc, out, err = pprof(["-top", "-lines" if SRCLINE else "-functions",
                          "-nodecount=1000000", "-nodefraction=0", "-edgefraction=0"] + idx,
                         profile)
    check(rc == 0, "go tool pprof -top reads the profile (%s)" % err.strip()[-200:])
    got_flat, got_cum = Counter(), {}
    row = re.compile(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.*)$")
    for line in out.splitlines():
        m = row.match(line)
        if m:
            # pprof marks an inlined function's node " (inline)" or " (partial-inline)"
            key = re.sub(r" \((partial-)?inline\)$", "", m.group(3).rstrip())
            lm = LINE.match(key) if SRCLINE else None
            if lm:
                key = "%s %s:%s" % (lm.group(1), os.path.basename(lm.group(2)), lm.group(3))
            got_flat[key] += int(m.group(1))
            got_cum[key] = None if key in got_cum else int(m.group(2))  # one row: compared
    got_flat = +got_flat
    cum_bad = sorted(k for k in want_cum if rows[k] == 1 and got_cum.get(k) is not None and
                     got_cum[k] != want_cum[k])
    missing = sorted(k for k in want_cum if want_cum[k] and k not in got_cum)
    # pprof drops functions without samples anywhere; the report lists only sampled ones.
    check(got_flat == want_flat and not cum_bad and not missing,
          "-top: %d functions, flat and cum as the report's self and total%s"
          % (len(want_cum), "" if got_flat == want_flat and not cum_bad and not missing else
             " (only pprof: %s; only report: %s; cum differs: %s; missing: %s)" % (
                 sorted((got_flat - want_flat).items())[:3],
                 sorted((want_flat - got_flat).items())[:3],
                 [(k, got_cum[k], want_cum[k]) for k in cum_bad[:3]], missing[:3])))

    rc, out, err = pprof(["-traces"] + idx, profile)
    check(rc == 0, "go tool pprof -traces reads the profile")
    by_leaf, total, traces, labelled, by_cgroup = Counter(), 0, 0, 0, Counter()
    label = re.compile(r"^\s*([a-z]+):\s")
    for block in out.split("-----------+-------------------------------------------------------")[1:]:
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines:
            continue
        traces += 1
        labels = [l for l in lines if label.match(l)]
        keys = {label.match(l).group(1) for l in labels}
        idle = any(re.match(r"^\s*comm:\s+\[idle\]$", l) for l in labels)
        # (the idle task, pid 0, has no pid and tid: pprof drops a number label of 0)
        labelled += {"comm", "pid", "tid"} <= keys or ("comm" in keys and idle)
        cg = [l.split(":", 1)[1].strip() for l in labels if re.match(r"^\s*cgroup:\s", l)]
        frames = [l for l in lines if l not in labels]
        m = re.match(r"^\s*(\d+)\s+(.*)$", frames[0]) if frames else None
        if not m:
            continue
        by_leaf[re.sub(r" \((partial-)?inline\)$", "", m.group(2))] += int(m.group(1))
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
    check(by_leaf == self_by, "-traces: summed by leaf, the report's self counts%s" % (
        "" if by_leaf == self_by else " (only pprof: %s; only report: %s)" % (
            sorted((by_leaf - self_by).items())[:3], sorted((self_by - by_leaf).items())[:3])))
    check(traces > 0 and labelled == traces, "-traces: every trace has its comm, pid and tid "
          "labels (%d of %d)" % (labelled, traces))
    if cgroups is not None:
        # The cgroup label: the samples of each cgroup the log said, as the report's
        # header counts them (samples of processes with no cgroup have no label).
        want_cg = Counter({c["path"]: c["samples"] for c in cgroups if c["samples"]})
        check(by_cgroup == want_cg, "-traces: the cgroup labels count the report's samples per "
              "cgroup (%d cgroups)%s" % (len(want_cg), "" if by_cgroup == want_cg else
                                        ": pprof %s, report %s" % (dict(by_cgroup), dict(want_cg))))
    check_raw(ev, profile)
    check_pprof_format(ev, profile)


def check_raw(ev, profile):
    """The sample types and values as `go tool pprof -raw` prints them: samples/count,
    and cpu/nanoseconds for a clock event (samples times the period, each sample
    rounded), and the main binary's mapping first (not the kernel's, not ld.so's)."""
    rc, out, err = pprof(["-raw"], profile)
    check(rc == 0, "go tool pprof -raw reads the profile")
    lines = out.splitlines()
    period = re.search(r"^Period: (\d+)$", out, re.M)
    at = lines.index("Samples:") if "Samples:" in lines else -1
    types = lines[at + 1].split() if at >= 0 else []
    clock = bool(CLOCKS.match(ev["event"]))
    # cpu time is the default type (pprof -raw marks it "[dflt]")
    want_types = ["samples/count", "cpu/nanoseconds[dflt]"] if clock else ["samples/count"]
    # a log that does not say its period has no cpu type
    ok = types == want_types or (clock and types == ["samples/count"] and
                                 re.search(r"^PeriodType: samples count$", out, re.M))
    check(ok, "-raw: sample types %s (event %s)" % (types, ev["event"]))
    if types == want_types and clock and period:
        per = int(period.group(1))
        n = cpu = nsamp = 0
        for l in lines[at + 2:]:
            m = re.match(r"^\s*(\d+)\s+(\d+):", l)
            if not m:
                if l and not l.startswith(" "):
                    break
                continue
            n += 1
            nsamp += int(m.group(1))
            cpu += int(m.group(2))
        # each sample's two values are rounded apart: within a period per sample
        check(nsamp == ev["samples"] and abs(cpu - nsamp * per) <= n * per,
              "-raw: %d samples, cpu %d ns against %d samples x %d ns (%d pprof samples)"
              % (nsamp, cpu, ev["samples"], per, n))
    maps = lines[lines.index("Mappings") + 1:] if "Mappings" in lines else []
    first = maps[0].split()[2] if maps and len(maps[0].split()) > 2 else ""
    base = os.path.basename(first)
    check(not first.startswith("[") and not re.search(r"\.so($|[._][0-9])", base),
          "-raw: the first mapping is a program's: %s" % first)


NODE_MODULES = os.environ.get("HWPMC_NODE_MODULES", "/var/lib/hwpmc-tests/node_modules")


def check_pprof_format(ev, profile):
    """The npm package pprof-format (an independent decoder) reads the profile, every
    reference resolves, the samples sum to the report's and carry the labels."""
    if not shutil.which("node") or not os.path.isdir(os.path.join(NODE_MODULES, "pprof-format")):
        print("# node or the npm package pprof-format (%s; scripts/bootstrap fetches it) is "
              "missing: the independent decoder skipped" % NODE_MODULES)
        return
    here = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.run(["node", os.path.join(here, "check_pprof_format.js"), profile],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, NODE_PATH=NODE_MODULES))
    try:
        got = json.loads(p.stdout)
    except ValueError:
        check(False, "pprof-format decodes the profile: %s" % p.stderr.strip()[-300:])
        return
    n = got["samples"]
    check(got["nerrors"] == 0, "pprof-format decodes it, every reference resolves (%d locations, "
          "%d with inline frames)%s" % (got["locations"], got["inlined"],
                                        "" if not got["nerrors"] else ": %s" % got["errors"]))
    idle = got["idle"]
    check(got["sums"][:1] == [ev["samples"]] and
          got["labelled"] == {"comm": n, "pid": n - idle, "tid": n - idle},
          "pprof-format: %s sum to %s (the report: %d samples), labels %s on %d samples (%d "
          "of the idle task: no pid, tid)" % (got["types"], got["sums"], ev["samples"],
                                              got["labelled"], n, idle))


def check_list(profile, func, source, text):
    """`go tool pprof -list FUNC`: the source file's lines, holding TEXT, not the binary."""
    rc, out, err = pprof(["-list", "^%s$" % func], profile)
    check(rc == 0 and ("ROUTINE ======================== %s in " % func) in out and
          source in out and text in out and "\x7fELF" not in out,
          "-list %s: its source %s with '%s'%s" % (func, os.path.basename(source), text,
                                                   "" if rc == 0 else ": " + err.strip()[-200:]))


def check_disasm(profile, func):
    """`go tool pprof -disasm FUNC`: the samples on the function's instructions, more
    than one of them, not all on its first."""
    rc, out, err = pprof(["-disasm", func, "-sample_index=samples"], profile)
    rows, mine = [], False
    for l in out.splitlines():
        if l.startswith("ROUTINE "):
            mine = l.split()[-1] == func
        m = re.match(r"^\s*(\d+|\.)\s+(\d+|\.)\s+([0-9a-f]+):\s", l)
        if m and mine:
            rows.append((0 if m.group(1) == "." else int(m.group(1)), int(m.group(3), 16)))
    hot = [a for flat, a in rows if flat > 0]
    check(rc == 0 and len(hot) >= 2 and rows and sum(f for f, a in rows if a == rows[0][1]) <
          sum(f for f, a in rows),
          "-disasm %s: samples on %d of its %d instructions%s" % (
              func, len(hot), len(rows), "" if rc == 0 else ": " + err.strip()[-200:]))


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
    profile = None
    while args:
        if args[0] == "--srcline":
            SRCLINE = True
            args = args[1:]
            continue
        if args[0] == "--json":  # the report for the next checks
            j = json.load(open(args[1]))
            ev = j["events"][0]
            cgroups = j["header"].get("cgroups", []) if len(j["events"]) == 1 else None
        elif args[0] == "--pprof":
            check_pprof(ev, args[1], cgroups)
            profile = args[1]
        elif args[0] == "--list":  # --list FUNC:SOURCE:TEXT, of the last --pprof
            func, source, text = args[1].split(":", 2)
            check_list(profile, func, source, text)
        elif args[0] == "--disasm":  # --disasm FUNC, of the last --pprof
            check_disasm(profile, args[1])
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
