#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# What an always-on profile with a CPU budget costs a CPU-bound program, beside
# perf record at the same rate, on a machine kept busy on every CPU:
#   - a profile "bench" (system-wide, dwarf, freq FREQ, cpu_budget_percent
#     BUDGET) settles its rate over WARM seconds; its rate, the measured cost of a
#     sample and the share of the machine it used are read from the daemon
#   - the program (bzip2 -9 of 16 MB) runs ROUNDS times each way, interleaved (the
#     order turning each round): with
#     no profiler, under the profile, and under `perf record -a --call-graph dwarf
#     -F <the rate the profile settled at>`; its own CPU time (user + sys, where the
#     sampling interrupts are charged) is the measure; medians and ratios printed
#   - the recorders' own CPU in those runs
# A spinner per other CPU keeps the machine busy throughout.
# usage: bench/budget-bench.sh [BUILD_DIR] [BUDGET] [FREQ] [ROUNDS] [WARM]  (root; needs perf, bzip2)
set -euo pipefail
build=${1:-build} budget=${2:-1} freq=${3:-1000} rounds=${4:-9} warm=${5:-10}
hwpmcd=$build/src/daemon/hwpmcd hwpmc=$build/src/tools/hwpmc
command -v perf > /dev/null || { echo "bench: perf is not installed (apt-get install linux-perf)"; exit 1; }
command -v bzip2 > /dev/null || { echo "bench: bzip2 is not installed"; exit 1; }
[[ $(id -u) == 0 ]] || { echo "bench: needs root"; exit 1; }
tmp=$(mktemp -d)
sock=$tmp/control
export HWPMCD_SOCKET=$sock
pids=()
dpid=
cleanup() { kill "${pids[@]}" 2> /dev/null; [[ -n "$dpid" ]] && kill "$dpid" 2> /dev/null; wait 2> /dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
# 16 MB that bzip2 works at: text with some repetition.
python3 -c '
import random, sys
r = random.Random(1)
words = [("".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(2, 9)))) for _ in range(5000)]
out = sys.stdout
n = 0
while n < 16 << 20:
    line = " ".join(r.choice(words) for _ in range(12)) + "\n"
    out.write(line); n += len(line)' > "$tmp/input"
ncpu=$(nproc)
for _ in $(seq $((ncpu - 1))); do (while :; do :; done) & pids+=($!); done

prog_cpu() { # -> the program's user+sys seconds
	/usr/bin/time -f "%U %S" -o "$tmp/t" bzip2 -9 -c "$tmp/input" > /dev/null
	awk '{print $1 + $2}' "$tmp/t"
}
cpu_of() { awk '{print ($14 + $15) / 100}' /proc/$1/stat; }

mkdir -p "$tmp/profiles.d"
cat > "$tmp/profiles.d/bench.conf" <<EOF
freq = $freq
callgraph = dwarf
cpu_budget_percent = $budget
rotate_seconds = 60
retain_bytes = 256M
EOF
start_daemon() {
	"$hwpmcd" --config /dev/null --socket "$sock" --state-dir "$tmp/state" \
		--profiles-dir "$1" --foreground 2>> "$tmp/daemon.log" &
	dpid=$!
	for _ in $(seq 100); do "$hwpmc" status > /dev/null 2>&1 && break; sleep 0.1; done
}
budget_json() { "$hwpmc" profiles --json | python3 -c 'import json,sys; b=json.load(sys.stdin)["profiles"][0]["status"]["profile"]["budget"]; print(b["rate_hz"], b["sample_cost_ns"], b["used_percent"])'; }

# The profile settles its rate first.
mkdir -p "$tmp/none.d"
start_daemon "$tmp/profiles.d"
sleep "$warm"
read -r rate cost used <<< "$(budget_json)"
echo "# profile: budget $budget%, freq $freq: settled at $rate Hz; a sample costs $cost ns; last window $used% of the machine"
kill $dpid; wait $dpid 2> /dev/null || true; dpid=

declare -a t_none t_hw t_perf c_hw c_perf
run_none() { t_none+=("$(prog_cpu)"); }
run_hw() {
	start_daemon "$tmp/profiles.d"
	sleep 2
	local c0 r_now u_now
	c0=$(cpu_of $dpid)
	t_hw+=("$(prog_cpu)")
	c_hw+=("$(awk -v a="$(cpu_of $dpid)" -v b="$c0" 'BEGIN {print a - b}')")
	read -r r_now _ u_now <<< "$(budget_json)"
	echo "# round $i: hwpmcd at $r_now Hz, last window $u_now% of the machine"
	kill $dpid; wait $dpid 2> /dev/null || true; dpid=
}
run_perf() {
	perf record -q -a -F "$rate" --call-graph dwarf -o "$tmp/perf.data" > /dev/null 2>&1 &
	local ppid=$! c0
	sleep 2
	c0=$(cpu_of $ppid)
	t_perf+=("$(prog_cpu)")
	c_perf+=("$(awk -v a="$(cpu_of $ppid)" -v b="$c0" 'BEGIN {print a - b}')")
	kill -INT $ppid; wait $ppid 2> /dev/null || true
	rm -f "$tmp/perf.data"
}
# The order turns each round, so that no condition always comes first (caches,
# clocks and the other programs of the machine change between runs).
orders=("run_none run_hw run_perf" "run_hw run_perf run_none" "run_perf run_none run_hw")
for i in $(seq "$rounds"); do
	for step in ${orders[$(((i - 1) % 3))]}; do $step; done
done
median() { printf "%s\n" "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
mn=$(median "${t_none[@]}") mh=$(median "${t_hw[@]}") mp=$(median "${t_perf[@]}")
ch=$(median "${c_hw[@]}") cp=$(median "${c_perf[@]}")
echo
echo "# bzip2 -9 of 16 MB, its own CPU seconds (median of $rounds), every CPU busy; recorders at $rate Hz, dwarf"
printf "%-28s %10s %10s %14s\n" condition "prog CPU s" slowdown "recorder CPU s"
printf "%-28s %10.3f %10s %14s\n" "no profiler" "$mn" "1.000" "-"
printf "%-28s %10.3f %10.3f %14.3f\n" "hwpmcd profile ($budget% budget)" "$mh" "$(awk -v a="$mh" -v b="$mn" 'BEGIN {print a / b}')" "$ch"
printf "%-28s %10.3f %10.3f %14.3f\n" "perf record -F $rate" "$mp" "$(awk -v a="$mp" -v b="$mn" 'BEGIN {print a / b}')" "$cp"
echo "all runs: none ${t_none[*]}; hwpmcd ${t_hw[*]}; perf ${t_perf[*]}"
