#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Dwarf-mode unwinding of hwpmcd against `perf record --call-graph dwarf`, side by
# side in one run, on the corpus workloads (tests/workloads/corpus: no frame
# pointers).  For each workload, recorded once by each tool at the same rate:
#   - bytes per sample of the output (hwpmcd's pmclog vs perf.data)
#   - CPU seconds to unwind: hwpmcd's daemon CPU for the session (everything:
#     ring reading, merge, unwinding, writing) vs `perf script`'s user+system time
#     (perf unwinds when it reads perf.data; perf record's own CPU not counted)
#   - samples per CPU second unwound (one core each)
#   - agreement: of the samples each tool unwound to the root (main or the thread
#     function), the overlap of the two distributions of symbolized chains,
#     sum over chains of min(share in hwpmcd, share in perf), frame by frame
# then lost samples at 1, 4 and 10 kHz on all CPUs with -g and default settings.
# usage: bench/unwind-bench.sh [BUILD_DIR] [SECONDS] [HZ]      (root; needs perf)
set -euo pipefail
build=${1:-build} secs=${2:-5} hz=${3:-4000}
src=$(cd "$(dirname "$0")/.." && pwd)
hwpmcd=$build/src/daemon/hwpmcd hwpmc=$build/src/tools/hwpmc corpus=$build/tests/workloads/corpus
check=$src/tests/integration/check_chains.py
command -v perf > /dev/null || { echo "bench: perf is not installed (apt-get install linux-perf)"; exit 1; }
[[ $(id -u) == 0 ]] || { echo "bench: needs root"; exit 1; }
[[ -x $corpus/hwpmc-corpus-pie ]] || { echo "bench: build first (ninja -C $build)"; exit 1; }
tmp=$(mktemp -d)
sock=$tmp/control
export HWPMCD_SOCKET=$sock
"$hwpmcd" --socket "$sock" --state-dir "$tmp/state" --foreground 2> "$tmp/daemon.log" &
dpid=$!
trap 'kill $dpid 2>/dev/null; wait $dpid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do "$hwpmc" status > /dev/null 2>&1 && break; sleep 0.1; done

# perf script's chains -> the tokens check_chains.py gives hwpmcd's ("KIND<TAB>TOKENS").
cat > "$tmp/perf_tokens.py" <<'PY'
import importlib.util, re, sys
spec = importlib.util.spec_from_file_location("cc", sys.argv[1]); cc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cc)
w = cc.WORKLOADS[sys.argv[2]]; comm = sys.argv[3][:15]
full = re.compile(r"(?:[~?] )*(?:%s)(?: ~)*" % "|".join(w["full"]))
cur, out = None, []
def flush():
    if cur:
        line = " ".join(cur)
        out.append(("full" if full.fullmatch(line) else "other") + "\t" + line)
for l in sys.stdin:
    if not l.strip():
        flush(); cur = None
    elif not l[0].isspace():
        flush(); cur = [] if l.split()[0] == comm else None
    elif cur is not None:
        f = l.split()
        name = f[1].split("+")[0].split("@")[0].split(".")[0] if len(f) > 1 else "?"
        cur.append(name if name in cc.CORPUS_NAMES else ("?" if name == "[unknown]" else "~"))
flush()
print("\n".join(out))
PY
perf_tokens() { python3 "$tmp/perf_tokens.py" "$check" "$1" "$2"; } # WORKLOAD COMM < perf script

# Overlap of the distributions of root-reaching chains (corpus frames only) in two token files.
agreement() { # HWPMC_TOKENS PERF_TOKENS
	python3 - "$1" "$2" <<'PY'
import collections, sys
def dist(path):
    c = collections.Counter()
    for l in open(path):
        kind, _, toks = l.rstrip("\n").partition("\t")
        if kind == "full":
            c[" ".join(t for t in toks.split() if t not in "~?")] += 1
    return c, sum(c.values())
h, nh = dist(sys.argv[1]); p, np_ = dist(sys.argv[2])
ov = sum(min(h[k] / nh, p[k] / np_) for k in set(h) | set(p)) if nh and np_ else 0
print("%.2f" % (100 * ov))
PY
}

printf "%-9s %-7s %8s %10s %9s %9s %12s %8s %9s\n" workload tool samples bytes B/sample cpu-s samples/cpu-s root% agree%
for spec in chain:pie:chain shlib:pie:shlib threads:pie:threads cxx:cxx:; do
	IFS=: read -r wl bin mode <<< "$spec"
	exe=$corpus/hwpmc-corpus-$bin
	[[ -x $exe ]] || continue
	comm=hwpmc-corpus-$bin
	# hwpmcd
	"$hwpmc" record -g -F "$hz" -o "$tmp/h.pmclog" -- "$exe" $mode "$secs" > /dev/null 2> "$tmp/h.err"
	hs=$(sed -n 's/.*s: \([0-9]*\) samples, .*/\1/p' "$tmp/h.err")
	hc=$(sed -n 's/.*daemon CPU \([0-9.]*\) s.*/\1/p' "$tmp/h.err")
	hb=$(stat -c %s "$tmp/h.pmclog")
	"$hwpmc" dump --json "$tmp/h.pmclog" > "$tmp/h.json"
	python3 "$check" "$tmp/h.json" "$wl" "$comm" --emit "$tmp/h.tok" > /dev/null || true
	# perf
	perf record -q --call-graph dwarf -F "$hz" -o "$tmp/p.data" -- "$exe" $mode "$secs" > /dev/null 2>&1
	ps=$(perf report -i "$tmp/p.data" --stats 2>/dev/null | awk '/^ *SAMPLE events:/ {print $3; exit}')
	pb=$(stat -c %s "$tmp/p.data")
	/usr/bin/time -f "%U %S" -o "$tmp/p.time" perf script -i "$tmp/p.data" -F comm,tid,ip,sym --no-inline \
		> "$tmp/p.script" 2> /dev/null
	pc=$(awk '{print $1 + $2}' "$tmp/p.time")
	perf_tokens "$wl" "$comm" < "$tmp/p.script" > "$tmp/p.tok"
	hroot=$(awk -F'\t' '{n++} $1 == "full" {f++} END {printf "%.2f", n ? 100 * f / n : 0}' "$tmp/h.tok")
	proot=$(awk -F'\t' '{n++} $1 == "full" {f++} END {printf "%.2f", n ? 100 * f / n : 0}' "$tmp/p.tok")
	agree=$(agreement "$tmp/h.tok" "$tmp/p.tok")
	printf "%-9s %-7s %8s %10s %9.1f %9.3f %12.0f %8s %9s\n" "$wl" hwpmcd "$hs" "$hb" \
		"$(echo "$hb / $hs" | bc -l)" "$hc" "$(echo "$hs / ($hc + 0.0001)" | bc -l)" "$hroot" "$agree"
	printf "%-9s %-7s %8s %10s %9.1f %9.3f %12.0f %8s\n" "$wl" perf "$ps" "$pb" \
		"$(echo "$pb / $ps" | bc -l)" "$pc" "$(echo "$ps / ($pc + 0.0001)" | bc -l)" "$proot"
	printf "%-9s %-7s %8s %10s %8.1fx %9s %11.1fx\n" "$wl" ratio "" "" \
		"$(echo "($pb / $ps) / ($hb / $hs)" | bc -l)" "" \
		"$(echo "($hs / ($hc + 0.0001)) / ($ps / ($pc + 0.0001))" | bc -l)"
done
echo "(ratio: perf's bytes per sample over hwpmcd's; hwpmcd's samples per CPU second over perf's)"
echo "(root%: share of the workload's samples unwound to main or the thread function;"
echo " agree%: overlap of the two tools' distributions of those chains, frame by frame)"
echo

printf "%-6s %-7s %9s %7s\n" freq tool samples lost
for f in 1000 4000 10000; do
	"$corpus/hwpmc-corpus-pie" threads $((secs + 1)) &
	w=$!
	"$hwpmc" record -a -g -F "$f" -d "$secs" -o "$tmp/l.pmclog" > /dev/null 2> "$tmp/l.err"
	wait $w
	hs=$(sed -n 's/.*s: \([0-9]*\) samples, \([0-9]*\) lost.*/\1/p' "$tmp/l.err")
	hl=$(sed -n 's/.*s: \([0-9]*\) samples, \([0-9]*\) lost.*/\2/p' "$tmp/l.err")
	"$corpus/hwpmc-corpus-pie" threads $((secs + 1)) &
	w=$!
	perf record -q -a --call-graph dwarf -F "$f" -o "$tmp/l.data" -- sleep "$secs" > /dev/null 2>&1
	wait $w
	ps=$(perf report -i "$tmp/l.data" --stats 2>/dev/null | awk '/^ *SAMPLE events:/ {print $3; exit}')
	pl=$(perf report -i "$tmp/l.data" --stats 2>/dev/null |
		awk '/^ *LOST_SAMPLES events:|^ *LOST events:/ {n += $3} END {print n + 0}')
	printf "%-6s %-7s %9s %7s\n" "$f" hwpmcd "$hs" "$hl"
	printf "%-6s %-7s %9s %7s\n" "$f" perf "${ps:-0}" "$pl"
done
echo "(all CPUs, -g / --call-graph dwarf with 8 KiB snapshots, default ring sizes; two busy threads)"
