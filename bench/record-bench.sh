#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Recording cost of hwpmcd against `perf record`, side by side in one run, on the
# demo workload (two busy threads, frame-pointer call chains, all CPUs):
#   - bytes per sample of the output (fp mode)
#   - CPU seconds of the recorder per 1000 samples (hwpmcd: the daemon's own
#     accounting, thread CPU time of the session; perf: perf record's utime+stime)
#   - lost samples at 1, 4 and 10 kHz on all CPUs, default settings
# usage: bench/record-bench.sh [BUILD_DIR] [SECONDS]      (root; needs perf)
set -euo pipefail
build=${1:-build} secs=${2:-5}
hwpmcd=$build/src/daemon/hwpmcd hwpmc=$build/src/tools/hwpmc demo=$build/tests/workloads/hwpmc-demo
command -v perf > /dev/null || { echo "bench: perf is not installed (apt-get install linux-perf)"; exit 1; }
[[ $(id -u) == 0 ]] || { echo "bench: needs root"; exit 1; }
tmp=$(mktemp -d)
sock=$tmp/control
export HWPMCD_SOCKET=$sock
"$hwpmcd" --socket "$sock" --foreground 2> "$tmp/daemon.log" &
dpid=$!
trap 'kill $dpid 2>/dev/null; wait $dpid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do "$hwpmc" status > /dev/null 2>&1 && break; sleep 0.1; done


run_hwpmc() { # FREQ [MODE] -> "samples lost bytes cpu_seconds"
	local f=$1 mode=${2:-fp}
	"$demo" $((secs + 1)) --threads > /dev/null &
	local w=$!
	"$hwpmc" record -a -F "$f" --call-graph "$mode" -d "$secs" -o "$tmp/h.pmclog" 2> "$tmp/h.err"
	wait $w
	local s l c
	s=$(sed -n 's/.*s: \([0-9]*\) samples, \([0-9]*\) lost.*/\1/p' "$tmp/h.err")
	l=$(sed -n 's/.*s: \([0-9]*\) samples, \([0-9]*\) lost.*/\2/p' "$tmp/h.err")
	# The daemon's own accounting: CLOCK_THREAD_CPUTIME_ID of the session's setup and thread.
	c=$(sed -n 's/.*daemon CPU \([0-9.]*\) s.*/\1/p' "$tmp/h.err")
	echo "$s $l $(stat -c %s "$tmp/h.pmclog") $c"
}

run_perf() { # FREQ [MODE] -> "samples lost bytes cpu_seconds"
	local f=$1 mode=${2:-fp}
	"$demo" $((secs + 1)) --threads > /dev/null &
	local w=$!
	/usr/bin/time -f "%U %S" -o "$tmp/p.time" perf record -q -a --call-graph "$mode" -F "$f" -o "$tmp/p.data" -- sleep "$secs" 2> /dev/null
	wait $w
	local s l c
	s=$(perf report -i "$tmp/p.data" --stats 2>/dev/null | awk '/^ *SAMPLE events:/ {print $3; exit}')
	l=$(perf report -i "$tmp/p.data" --stats 2>/dev/null | awk '/^ *LOST_SAMPLES events:|^ *LOST events:/ {n += $3} END {print n + 0}')
	c=$(awk '{print $1 + $2}' "$tmp/p.time")
	echo "${s:-0} $l $(stat -c %s "$tmp/p.data") $c"
}

printf "%-11s %-8s %10s %8s %12s %10s %14s\n" freq/mode tool samples lost bytes B/sample "cpu-s/1000smp"
for fm in 1000/fp 4000/fp 10000/fp 4000/dwarf; do
	f=${fm%/*} m=${fm#*/}
	read -r hs hl hb hc < <(run_hwpmc "$f" "$m")
	read -r ps pl pb pc < <(run_perf "$f" "$m")
	printf "%-11s %-8s %10s %8s %12s %10.1f %14.4f\n" "$fm" hwpmcd "$hs" "$hl" "$hb" \
		"$(echo "$hb / $hs" | bc -l)" "$(echo "$hc * 1000 / $hs" | bc -l)"
	printf "%-11s %-8s %10s %8s %12s %10.1f %14.4f\n" "$fm" perf "$ps" "$pl" "$pb" \
		"$(echo "$pb / $ps" | bc -l)" "$(echo "$pc * 1000 / $ps" | bc -l)"
	printf "%-11s %-8s %10s %8s %12s %10.1fx %13.2fx\n" "$fm" ratio "" "" "" \
		"$(echo "($pb / $ps) / ($hb / $hs)" | bc -l)" \
		"$(echo "($pc / $ps) / (($hc + 0.0001) / $hs)" | bc -l)"
done
echo "(dwarf: hwpmcd keeps only the IP for the user part until unwinding lands, issue 4;"
echo " perf keeps the 8 KiB snapshot per sample and unwinds at report time)"
echo "(ratio: perf's figure divided by hwpmcd's; > 1 means hwpmcd is smaller/cheaper)"
