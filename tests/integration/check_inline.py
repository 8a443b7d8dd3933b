#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""hwpmc report --inline --srcline against llvm-symbolizer, PC by PC.

usage: check_inline.py HWPMC BINARY WORKDIR [--any]
       (--any: BINARY need not have inline frames; $HWPMC_WRAPPER: a command
       to run hwpmc under, e.g. valgrind)

Writes a log (mkpmclog.py's records) with one process per instruction of
BINARY's .text, each sampled once at that instruction (its comm is the address
in hex), reports it with --inline --srcline --folded, and compares each
process's frames with `llvm-symbolizer --inlines` (in addr2line's output
style): the same functions inner to outer, each with the same file name and
line.  (binutils' addr2line names some inlined functions by their caller, e.g.
glibc's atof inlined into main, so it is not the reference.)  Instructions
without a line (C runtime start-up, padding) must print one frame without a
line.  Prints 'ok'/'BAD' lines and exits 1 on any difference.
"""
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mkpmclog as mk  # noqa: E402


def text_pcs(binary):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-j", ".text", binary],
                         capture_output=True, text=True, check=True).stdout
    return [int(m.group(1), 16) for m in re.finditer(r"^\s+([0-9a-f]+):\t", out, re.M)]


def sized_functions(binary):
    """[start, end) of every function symbol with a size (nm -S)."""
    out = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True,
                         text=True, check=True).stdout
    return [(int(f[0], 16), int(f[0], 16) + int(f[1], 16)) for f in
            (line.split() for line in out.splitlines()) if len(f) == 4 and f[2] in "tTiW"]


# GCC's clones and split parts: the ELF symbol of a part of function F.
CLONE = re.compile(r"\.(cold|part|isra|constprop|lto_priv|localalias)(\.\d+)*")


SYMBOLIZER = "/usr/lib/llvm-14/bin/llvm-symbolizer"


def symbolize(binary, pcs):
    """Per address: [(function, file base name or None, line or 0)], innermost first."""
    out = subprocess.run([SYMBOLIZER, "--obj=" + binary, "--inlines", "-f", "-C", "-a",
                          "--output-style=GNU"],
                         input="".join("0x%x\n" % pc for pc in pcs), capture_output=True,
                         text=True, check=True).stdout.splitlines()
    res, cur = {}, None
    i = 0
    while i < len(out):
        if out[i].startswith("0x"):
            cur = int(out[i], 16)
            res[cur] = []
            i += 1
            continue
        func, loc = out[i], out[i + 1]
        i += 2
        loc = re.sub(r" \(discriminator \d+\)$", "", loc)
        fname, _, line = loc.rpartition(":")
        if fname == "??" or not line.isdigit() or line == "0":
            res[cur].append((func, None, 0))
        else:
            res[cur].append((func, os.path.basename(fname), int(line)))
    return res


def main():
    hwpmc, binary, work = sys.argv[1:4]
    vaddr, dyn = mk.elf_exec_vaddr(binary)
    bias = 0x555500000000 if dyn else 0
    start = bias + (vaddr & ~0xFFF)
    pcs = text_pcs(binary)
    b = [mk.initialize(0x400), mk.userdata(mk.HWPMCD_RULE_FREEBSD),
         mk.allocdyn(mk.PMCID, b"cpu-clock")]
    for i, pc in enumerate(pcs):
        pid = 1000 + i
        b += [mk.proc_create(pid, b"p%x" % pc), mk.map_in(pid, start, binary.encode()),
              mk.callchain(pid, pid, [bias + pc], tsc=1000 + i)]
    b.append(mk.closelog())
    log = os.path.join(work, "inline-pcs.pmclog")
    open(log, "wb").write(b"".join(b))
    wrap = shlex.split(os.environ.get("HWPMC_WRAPPER", ""))
    rep = subprocess.run(wrap + [hwpmc, "report", "--inline", "--srcline", "--folded", log],
                         capture_output=True, text=True)
    if rep.returncode != 0:
        print("BAD report failed: %s" % rep.stderr.strip()[-300:])
        return 1
    ours = {}
    for line in rep.stdout.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        ours[int(frames[0][1:], 16)] = frames[1:][::-1]  # innermost first
    want = symbolize(binary, pcs)
    sized = sized_functions(binary)
    nosym = os.path.basename(binary) + "+0x%x"
    bad = inlined = lined = 0
    for pc in pcs:
        got = ours.get(pc)
        exp = want.get(pc, [])
        if got is None:
            print("BAD 0x%x: not in the report" % pc)
            bad += 1
            continue
        if got == [nosym % pc] and not any(lo <= pc < hi for lo, hi in sized):
            continue  # padding after a sized function: no function holds it (report.h)
        # The outermost frame is the ELF symbol, which may be a clone or split part of
        # the function the symbolizer names from DWARF ("x_mid.cold" for "x_mid"),
        # and the other way round: compare without the suffix.
        got = got[:-1] + [CLONE.sub("", got[-1])] if got else got
        exp = exp[:-1] + [(CLONE.sub("", exp[-1][0]),) + exp[-1][1:]] if exp else exp
        if not exp or exp[0][2] == 0:
            # No line here (start-up code, padding between functions): addr2line names
            # the nearest symbol below, the report the sized function that holds the
            # PC or image+offset; either way one frame without a line.
            if len(got) != 1 or re.search(r" [^ ]+:\d+$", got[0]):
                print("BAD 0x%x: no DWARF line, but the report gives %s" % (pc, got))
                bad += 1
            continue
        exp_s = [f if not ln else "%s %s:%d" % (f, fn, ln) for f, fn, ln in exp]
        if got != exp_s:
            if bad < 10:
                print("BAD 0x%x: report %s, llvm-symbolizer %s" % (pc, got, exp_s))
            bad += 1
            continue
        inlined += len(exp) > 1
        lined += exp[0][2] > 0
    print("%s %s: %d instructions agree with llvm-symbolizer --inlines (%d with inline "
          "frames, %d with lines)" % ("ok" if bad == 0 else "BAD", os.path.basename(binary),
                                      len(pcs) - bad, inlined, lined))
    if inlined == 0 and "--any" not in sys.argv:
        print("BAD no instruction has inline frames: the workload was not inlined")
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
