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
# then, on real programs with large stack frames (bzip2, sqlite3, cc1, python3; those
# installed), recorded by hwpmcd with its defaults (a 64 KiB snapshot), by perf with
# its default (8 KiB) and by perf with 64 KiB (--call-graph dwarf,65528):
#   - complete%: share of the program's samples whose chain reaches libc's process
#     or thread start (__libc_start_main, start_thread), from hwpmc report --folded
#     and perf script alike
#   - the program's own wall time (median of 3 runs; the sampled program's
#     slowdown) against a run without profiling, and the recorder's bytes per sample
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
import importlib.util, os, re, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))  # check_chains.py imports elfrule beside it
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
for spec in chain:pie:chain shlib:pie:shlib threads:pie:threads cxx:cxx: bigframe:pie:bigframe; do
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

# Real programs with large frames.  complete%: samples of COMM whose chain reaches
# the first frames of libc's process or thread start (Debian's programs are
# stripped: their own _start has no name for either tool).
roots='^(__libc_start_main(@@GLIBC_[0-9.]*)?|__libc_start_call_main|start_thread|__clone3|clone3)$'
folded_root() { # COMM < hwpmc report --folded: "complete total"
	awk -F';' -v c="$1" -v re="$roots" '$1 == c {n = $NF; sub(/.* /, "", n); sub(/ [0-9]+$/, "", $NF)
		t += n; for (i = 2; i <= NF; i++) if ($i ~ re) {k += n; break}} END {print k + 0, t + 0}'
}
script_root() { # COMM < perf script -F comm,ip,sym: "complete total"
	awk -v c="$1" -v re="$roots" '
		/^[^ \t]/ {if (in_s) {t++; k += hit}; in_s = ($1 == c); hit = 0; next}
		/^[ \t]+[0-9a-f]+ / {f = $2; sub(/\+0x.*/, "", f); if (f ~ re) hit = 1}
		END {if (in_s) {t++; k += hit}; print k + 0, t + 0}'
}
# The program's own wall time (measured inside whatever runs it, so a recorder's
# start and end are not counted): ptime CMD... writes seconds to $tmp/ptime.
cat > "$tmp/ptime.sh" <<'SH'
t0=$(date +%s%N); "$@" > /dev/null 2>&1; t1=$(date +%s%N)
echo "$(( (t1 - t0) / 1000000 ))" > "$PTIME_OUT"
SH
export PTIME_OUT=$tmp/ptime.ms
ptime=(sh "$tmp/ptime.sh")
secs_of() { echo "scale=3; $(cat "$PTIME_OUT") / 1000" | bc; }
# median3 CMD...: run CMD three times (it runs the program through ptime); the median
# of the program's wall times.  One run on this VM varies by up to 40%.
median3() {
	local a=()
	for _ in 1 2 3; do "$@"; a+=("$(cat "$PTIME_OUT")"); done
	printf "%s\n" "${a[@]}" | sort -n | sed -n 2p | awk '{printf "%.3f", $1 / 1000}'
}
head -c 12000000 /dev/urandom | base64 > "$tmp/bz.in"
cat > "$tmp/q.sql" <<'SQL'
CREATE TABLE t(a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 300000)
  INSERT INTO t SELECT x, hex(randomblob(16)) FROM c;
INSERT INTO t SELECT a + 300000, hex(randomblob(16)) FROM t;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(length(b)) FROM (SELECT b FROM t ORDER BY b DESC);
SQL
cat > "$tmp/p.py" <<'PY'
import json
d = [{"a": i, "b": str(i) * 3} for i in range(500000)]
s = json.dumps(d); json.loads(s); sorted(d, key=lambda x: x["b"])
PY
echo
printf "%-8s %-12s %8s %10s %9s %8s %9s\n" program tool samples complete% B/sample wall-s slowdown
for prog in bzip2 sqlite3 cc1 python3; do
	case $prog in
	bzip2) cmd=(bzip2 -9 -c "$tmp/bz.in") ;;
	sqlite3) cmd=(sh -c "sqlite3 :memory: < '$tmp/q.sql'") ;;
	cc1) cmd=(gcc -O2 -I"$src/include" -c "$src/src/report/report-model.c" -o /dev/null) ;;
	python3) cmd=(/usr/bin/python3 "$tmp/p.py") ;;
	esac
	command -v "${cmd[0]}" > /dev/null && { [[ $prog != sqlite3 ]] || command -v sqlite3 > /dev/null; } || continue
	base=$(median3 "${ptime[@]}" "${cmd[@]}")
	t=$(median3 "$hwpmc" record -g -F "$hz" -o "$tmp/r.pmclog" -q -- "${ptime[@]}" "${cmd[@]}")
	read -r k n < <("$hwpmc" report --folded "$tmp/r.pmclog" 2> /dev/null | folded_root "$prog")
	printf "%-8s %-12s %8s %10.2f %9.1f %8.2f %8.2fx\n" "$prog" "hwpmcd" "$n" "$(echo "100 * $k / ($n + 0.0001)" | bc -l)" \
		"$(echo "$(stat -c %s "$tmp/r.pmclog") / ($n + 0.0001)" | bc -l)" "$t" "$(echo "$t / $base" | bc -l)"
	for size in 8192 65528; do
		t=$(median3 perf record -q --call-graph "dwarf,$size" -F "$hz" -o "$tmp/r.data" -- \
			"${ptime[@]}" "${cmd[@]}" 2> /dev/null)
		read -r k n < <(perf script -i "$tmp/r.data" -F comm,ip,sym --no-inline 2> /dev/null | script_root "$prog")
		printf "%-8s %-12s %8s %10.2f %9.1f %8.2f %8.2fx\n" "$prog" "perf-$((size / 1024))k" "$n" \
			"$(echo "100 * $k / ($n + 0.0001)" | bc -l)" \
			"$(echo "$(stat -c %s "$tmp/r.data") / ($n + 0.0001)" | bc -l)" "$t" "$(echo "$t / $base" | bc -l)"
	done
	printf "%-8s %-12s %8s %10s %9s %8.2f\n" "$prog" "(none)" "" "" "" "$base"
done
echo "(complete%: samples of the program whose chain reaches libc's process or thread start;"
echo " perf-8k is perf's default snapshot, hwpmcd's default is 64 KiB; wall-s: the program's"
echo " own wall time under each recorder (its start and end not counted; the median of 3"
echo " runs; complete% and samples are the last run's), slowdown against the run without"
echo " profiling)"
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
echo "(all CPUs, -g / --call-graph dwarf with default settings: hwpmcd 64 KiB snapshots and"
echo " 8 MiB rings per CPU, perf 8 KiB snapshots and its default ring; two busy threads)"
