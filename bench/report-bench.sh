#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Report cost of `hwpmc report` against `perf report`, side by side in one run, on
# the demo workload (two busy threads, frame-pointer call chains, all CPUs, 4 kHz,
# cpu-clock), recorded once by each tool (one after the other, a fresh workload each):
#   - samples in each file (perf: perf report --stats; hwpmc: dump --summary)
#   - wall seconds and user+sys CPU seconds of each report, best of 5 timed by bash
#     (peak RSS from a sixth run), output to /dev/null: flat profile (perf
#     --no-children --sort sym / hwpmc --top), call graph (perf -g --children /
#     hwpmc --callgraph), and folded stacks (hwpmc
#     --folded; perf's nearest, `perf script`, whose text a stackcollapse script
#     would then fold: that second step is not counted)
#   - the DWARF modes on their own rows: source lines (perf --sort sym,srcline /
#     hwpmc --top --srcline) and inline frames in the call graph (perf -g --children
#     --inline / hwpmc --callgraph --inline); the demo is built -g
#   - pprof: hwpmc --pprof (a location per PC with its DWARF lines, gzip) against
#     `perf script`, the text a converter (perf_data_converter, not in Debian) reads
#   - sort: --top --sort comm,dso against perf --sort comm,dso; children: hwpmc
#     --children (the top-down tree) against perf -g --children; script: hwpmc script
#     against perf script (the same per-sample text layout)
#   - samples per wall second, and the ratio per mode, per sample: perf's
#     seconds/sample over hwpmc's (> 1: hwpmc report is faster)
#   - the start-up floor: hwpmc --version, perf --version and /bin/true (exec,
#     dynamic linking and exit, which every report pays), and each ratio again
#     without it (the reports' own work; the ratios above are the ones that count)
#   - the reading floor: hwpmc dump --summary, which reads and decodes every record
#     and resolves nothing, and perf's time over it per mode (the most any report
#     of this log could reach here)
# then a 1,000,000-sample log made from hwpmcd's by repeating its CALLCHAIN records
# (bench/multiply-log.py), and hwpmc report --top/--callgraph/--folded on it:
# seconds, peak RSS, samples/s, against the target of a few seconds; and
# --top --inline --srcline on it (the DWARF cost on 1M samples).
# usage: bench/report-bench.sh [BUILD_DIR] [SECONDS]      (root; needs perf)
# exit 77 (skip) without root or perf.
set -euo pipefail
build=${1:-build} secs=${2:-10}
hz=4000 runs=5 big=1000000 target=5
src=$(cd "$(dirname "$0")/.." && pwd)
hwpmcd=$build/src/daemon/hwpmcd hwpmc=$build/src/tools/hwpmc demo=$build/tests/workloads/hwpmc-demo
[[ $(id -u) == 0 ]] || { echo "bench: skipped: needs root (hwpmcd and perf record -a)"; exit 77; }
command -v perf > /dev/null || { echo "bench: skipped: perf is not installed (apt-get install linux-perf)"; exit 77; }
command -v python3 > /dev/null || { echo "bench: skipped: python3 is not installed"; exit 77; }
for x in "$hwpmcd" "$hwpmc" "$demo"; do
	[[ -x $x ]] || { echo "bench: $x is missing: build first (ninja -C $build)"; exit 1; }
done
"$hwpmc" report --help > /dev/null 2>&1 || { echo "bench: $hwpmc has no working 'report'"; exit 1; }
if [[ ! -x /usr/bin/time ]]; then
	echo "bench: /usr/bin/time is missing; installing Debian package 'time'"
	apt-get install -y -qq time > /dev/null || { echo "bench: apt-get install time failed"; exit 1; }
fi

tmp=$(mktemp -d /tmp/report-bench.XXXXXX)
sock=$tmp/control
export HWPMCD_SOCKET=$sock
dpid='' wpid=''
cleanup() {
	[[ -n $wpid ]] && kill "$wpid" 2> /dev/null && wait "$wpid" 2> /dev/null
	[[ -n $dpid ]] && kill "$dpid" 2> /dev/null && wait "$dpid" 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
"$hwpmcd" --socket "$sock" --state-dir "$tmp/state" --foreground 2> "$tmp/daemon.log" &
dpid=$!
for _ in $(seq 100); do "$hwpmc" status > /dev/null 2>&1 && break; sleep 0.1; done
"$hwpmc" status > /dev/null 2>&1 || { echo "bench: hwpmcd did not start:"; cat "$tmp/daemon.log"; exit 1; }

echo "== report-bench: $(perf --version), hwpmc from $build, $(nproc) CPUs, $secs s at $hz Hz, best of $runs"

# --- recording: hwpmcd, then perf, each with a fresh workload
echo "== recording $secs s with hwpmcd (hwpmc record -a -F $hz, fp call chains)"
"$demo" $((secs + 1)) --threads > /dev/null &
wpid=$!
"$hwpmc" record -a -F "$hz" -d "$secs" -o "$tmp/x.pmclog" > /dev/null 2> "$tmp/h.err" ||
	{ echo "bench: hwpmc record failed:"; cat "$tmp/h.err"; exit 1; }
wait "$wpid"; wpid=
sed -n 's/^hwpmc: \(recorded.*\)/   \1/p' "$tmp/h.err" | head -1
echo "== recording $secs s with perf (perf record -g -a -F $hz -e cpu-clock)"
"$demo" $((secs + 1)) --threads > /dev/null &
wpid=$!
perf record -q -g -a -e cpu-clock -F "$hz" -o "$tmp/perf.data" -- sleep "$secs" > /dev/null 2> "$tmp/p.err" ||
	{ echo "bench: perf record failed:"; cat "$tmp/p.err"; exit 1; }
wait "$wpid"; wpid=

hs=$("$hwpmc" dump --summary "$tmp/x.pmclog" | sed -n 's/.*[ ;,]callchain \([0-9]*\).*/\1/ip' | head -1)
ps=$(perf report -i "$tmp/perf.data" --stats 2> /dev/null | awk '/^ *SAMPLE events:/ {print $3; exit}')
[[ ${hs:-0} -gt 0 ]] || { echo "bench: no CALLCHAIN records in hwpmcd's log:"; "$hwpmc" dump --summary "$tmp/x.pmclog"; exit 1; }
[[ ${ps:-0} -gt 0 ]] || { echo "bench: no samples in perf.data"; exit 1; }
echo "   hwpmcd: $hs samples, $(stat -c %s "$tmp/x.pmclog") bytes; perf: $ps samples, $(stat -c %s "$tmp/perf.data") bytes"

# best_of CMD... -> "wall cpu rss_kb": min wall, min user+sys over $runs runs timed by
# bash alone (ms resolution, the command's CPU), then its peak RSS in one more run
# under /usr/bin/time -f %M (whose own start-up, ~2 ms here, would otherwise be
# counted as the command's: a tenth of a fast report's time).
best_of() {
	local i w u s bw='' bc='' TIMEFORMAT='%3R %3U %3S'
	for ((i = 0; i < runs; i++)); do
		{ time "$@" > /dev/null 2> "$tmp/cmd.err"; } 2> "$tmp/t" ||
			{ echo "bench: failed: $*" >&2; cat "$tmp/cmd.err" >&2; return 1; }
		read -r w u s < "$tmp/t"
		bw=$(awk -v a="$w" -v b="${bw:-1e99}" 'BEGIN {print (a < b) ? a : b}')
		bc=$(awk -v a="$u" -v c="$s" -v b="${bc:-1e99}" 'BEGIN {x = a + c; print (x < b) ? x : b}')
	done
	/usr/bin/time -f %M -o "$tmp/rss" "$@" > /dev/null 2> "$tmp/cmd.err" ||
		{ echo "bench: failed: $*" >&2; cat "$tmp/cmd.err" >&2; return 1; }
	echo "$bw $bc $(tail -1 "$tmp/rss")"
}
calc() { awk "BEGIN {printf \"$1\", $2}"; }

# --- reports on the recorded files
echo
printf "%-10s %-7s %-48s %8s %8s %8s %9s %12s\n" mode tool command samples wall-s cpu-s rss-MB samples/s
declare -A ratio walls
row() { # MODE TOOL SAMPLES WALL CPU RSS LABEL
	printf "%-10s %-7s %-48s %8s %8.3f %8.3f %9.1f %12.0f\n" "$1" "$2" "$7" "$3" "$4" "$5" \
		"$(calc %.1f "$6 / 1024")" "$(calc %.0f "$3 / ($4 > 0.0005 ? $4 : 0.0005)")"
}
pr=(perf report -i "$tmp/perf.data" --stdio)
# One untimed run of each first, then a pause: the first mode timed must not pay for
# what recording left behind (files read into the page cache by one tool and not the
# other, the daemon finishing its session, the kernel compacting freed memory).
"$hwpmc" report --top "$tmp/x.pmclog" > /dev/null 2>&1 || true
"${pr[@]}" --no-children --sort sym > /dev/null 2>&1 || true
sleep 1
modes="top callgraph folded srcline inline pprof sort children script"
for spec in "top|--top|--no-children --sort sym" "callgraph|--callgraph|-g --children" "folded|--folded|" \
	"srcline|--top --srcline|--no-children --sort sym,srcline" \
	"inline|--callgraph --inline|-g --children --inline" "pprof|--pprof /dev/null|" \
	"sort|--top --sort comm,dso|--no-children --sort comm,dso" "children|--children|-g --children" \
	"script||"; do
	IFS='|' read -r mode hopt popt <<< "$spec"
	# shellcheck disable=SC2206
	if [[ $mode == script ]]; then
		hcmd=("$hwpmc" script) hlabel="hwpmc script"
	else
		hcmd=("$hwpmc" report $hopt) hlabel="hwpmc report $hopt"
	fi
	if [[ $mode == folded || $mode == pprof || $mode == script ]]; then
		pcmd=(perf script -i "$tmp/perf.data") plabel="perf script"
	else
		# shellcheck disable=SC2206
		pcmd=("${pr[@]}" $popt) plabel="perf report --stdio $popt"
	fi
	read -r hw hc hrss < <(best_of "${hcmd[@]}" "$tmp/x.pmclog")
	if ! best_of "${pcmd[@]}" > "$tmp/perf.best" 2> "$tmp/perf.fail"; then
		# perf 6.1's srcline runs addr2line on every mapped file, and gives up on some
		# (a memfd of another process): said, not hidden, and no ratio for the mode.
		echo "$mode  perf    $plabel: FAILED: $(grep -v '^bench: failed' "$tmp/perf.fail" | head -1)"
		row "$mode" hwpmc "$hs" "$hw" "$hc" "$hrss" "$hlabel"
		ratio[$mode]="n/a (perf failed)"
		continue
	fi
	read -r pw pc prss < "$tmp/perf.best"
	row "$mode" perf "$ps" "$pw" "$pc" "$prss" "$plabel"
	row "$mode" hwpmc "$hs" "$hw" "$hc" "$hrss" "$hlabel"
	# per sample: (perf s / perf samples) / (hwpmc s / hwpmc samples)
	rw=$(calc %.1f "($pw / $ps) / (($hw > 0.0005 ? $hw : 0.0005) / $hs)")
	rc=$(calc %.1f "($pc / $ps) / (($hc > 0.0005 ? $hc : 0.0005) / $hs)")
	ratio[$mode]=$rw
	walls[$mode]="$pw $hw"
	printf "%-10s %-7s %-48s %8s %7sx %7sx\n" "$mode" ratio "(perf s/sample over hwpmc s/sample)" "" "$rw" "$rc"
done
echo "(best of $runs, output to /dev/null; folded: perf has no folded output, 'perf script' is"
echo " the text a stackcollapse script would fold, the folding itself not counted)"
# What a run costs before and after its work: exec, dynamic linking and exit of each
# program, and of a program that does nothing (/bin/true): a floor no report beats.
read -r vw _ _ < <(best_of "$hwpmc" --version)
read -r pvw _ _ < <(best_of perf --version)
read -r tw _ _ < <(best_of /bin/true)
echo "start-up  hwpmc --version $(calc %.3f "$vw") s, perf --version $(calc %.3f "$pvw") s," \
	"/bin/true $(calc %.3f "$tw") s (best of $runs)"
# Reading and decoding every record and nothing more (no image, no symbol) is the
# least any report of this log does: `hwpmc dump --summary`.  perf's time over it is
# the most any report could reach, said per mode, so that a target above it is seen
# for what it is.
read -r dw _ _ < <(best_of "$hwpmc" dump --summary "$tmp/x.pmclog")
fl=""
for mode in $modes; do
	[[ -n ${walls[$mode]:-} ]] || continue
	read -r pw _ <<< "${walls[$mode]}"
	fl+=" $mode $(calc %.1f "($pw / $ps) / (($dw > 0.0005 ? $dw : 0.0005) / $hs)")x,"
done
echo "floor     hwpmc dump --summary (reads and decodes every record, no symbols) $(calc %.3f "$dw") s:" \
	"the most a report could reach against perf:${fl%,}"
# The same ratios without each program's start-up: what the reports' own work costs.
for mode in $modes; do
	[[ -n ${walls[$mode]:-} ]] || continue
	read -r pw hw <<< "${walls[$mode]}"
	echo "$mode beyond start-up: perf $(calc %.3f "$pw - $pvw") s, hwpmc $(calc %.3f "$hw - $vw") s," \
		"$(calc %.1f "(($pw - $pvw) / $ps) / ((($hw - $vw) > 0.0005 ? ($hw - $vw) : 0.0005) / $hs)")x per sample"
done

# --- the 1M-sample log
echo
echo "== $big-sample log from hwpmcd's: non-CALLCHAIN records once, then its $hs CALLCHAIN records repeated"
python3 "$src/bench/multiply-log.py" "$tmp/x.pmclog" "$tmp/big.pmclog" "$big" 2> "$tmp/mul.err" ||
	{ cat "$tmp/mul.err"; exit 1; }
[[ -f $tmp/x.pmclog.kallsyms ]] && cp "$tmp/x.pmclog.kallsyms" "$tmp/big.pmclog.kallsyms"
bs=$("$hwpmc" dump --summary "$tmp/big.pmclog" | sed -n 's/.*[ ;,]callchain \([0-9]*\).*/\1/ip' | head -1)
echo "   $(stat -c %s "$tmp/big.pmclog") bytes, $bs samples ($("$hwpmc" dump --summary "$tmp/big.pmclog" | sed 's/.*; //'))"
printf "%-10s %-7s %-48s %8s %8s %8s %9s %12s\n" mode tool command samples wall-s cpu-s rss-MB samples/s
declare -A bigs
for mode in top callgraph folded top-dwarf; do
	opts="--$mode"
	[[ $mode == top-dwarf ]] && opts="--top --inline --srcline"
	# shellcheck disable=SC2086
	read -r bw bc brss < <(best_of "$hwpmc" report $opts "$tmp/big.pmclog")
	row "$mode" hwpmc "$bs" "$bw" "$bc" "$brss" "hwpmc report $opts (1M)"
	bigs[$mode]="$bw $brss"
done
echo "(target: a few seconds, <= $target s, per report of $big samples)"

echo
for mode in $modes; do echo "ratio-$mode ${ratio[$mode]}$([[ ${ratio[$mode]} == n/a* ]] || echo x)"; done
for mode in top callgraph folded top-dwarf; do
	read -r bw brss <<< "${bigs[$mode]}"
	ok=$(calc %s "($bw <= $target) ? \"ok\" : \"OVER TARGET\"")
	echo "1M-$mode $(calc %.2f "$bw") s ($(calc %.0f "$brss / 1024") MB peak RSS, $(calc %.0f "$bs / ($bw > 0.0005 ? $bw : 0.0005)") samples/s; target <= $target s: $ok)"
done
