#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# What an always-on profile that pushes to a Pyroscope-compatible backend costs the
# host, beside what perf would cost for the same job, in one run:
#   - hwpmcd: a profile "fleet" (system-wide cpu-clock at FREQ Hz, fp call chains,
#     rotated every ROTATE s, push_url to a local receiver (the suite's
#     push_receiver.py, which decodes each profile as Pyroscope does), JIT maps on)
#     for SECONDS on a machine running the demo's two threads and, if nodejs is
#     installed, a JavaScript loop under node --perf-basic-prof (a JIT map to read).
#     Measured from /proc: the CPU of the daemon's threads (its sampling worker, the
#     JIT-map thread "hwpmcd-jit", the push thread "hwpmcd-push"), of the
#     `hwpmc report --pprof` children that make each profile (the daemon's cutime +
#     cstime), files pushed and bytes sent.
#   - perf: the same recording (`perf record -a -g -F FREQ --switch-output=ROTATEs`)
#     and what a perf-based pusher must run per interval to make a profile of it
#     (`perf script` of each file; the stackcollapse/pprof conversion after it is not
#     counted): CPU of perf record, and of perf script per file.
#   - per interval: the CPU each spends to make and send one profile, and the ratio.
# usage: bench/push-bench.sh [BUILD_DIR] [SECONDS] [FREQ] [ROTATE]   (root; needs perf)
# exit 77 (skip) without root or perf.
set -euo pipefail
build=${1:-build} secs=${2:-60} freq=${3:-99} rotate=${4:-10}
src=$(cd "$(dirname "$0")/.." && pwd)
hwpmcd=$build/src/daemon/hwpmcd hwpmc=$build/src/tools/hwpmc demo=$build/tests/workloads/hwpmc-demo
[[ $(id -u) == 0 ]] || { echo "bench: skipped: needs root (hwpmcd and perf record -a)"; exit 77; }
command -v perf > /dev/null || { echo "bench: skipped: perf is not installed (apt-get install linux-perf)"; exit 77; }
for x in "$hwpmcd" "$hwpmc" "$demo"; do
	[[ -x $x ]] || { echo "bench: $x is missing: build first (ninja -C $build)"; exit 1; }
done
hwpmc_abs=$(cd "$(dirname "$hwpmc")" && pwd)/$(basename "$hwpmc")
tck=$(getconf CLK_TCK)
tmp=$(mktemp -d /tmp/push-bench.XXXXXX)
sock=$tmp/control
export HWPMCD_SOCKET=$sock
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
	wait 2> /dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# CPU seconds of /proc/PID/stat fields 14+15 (utime+stime), or of 16+17 (children's).
cpu_of() { awk -v t="$tck" -v f="$2" '{ sub(/^.*\) /, ""); print (f == "self" ? $12 + $13 : $14 + $15) / t }' "/proc/$1/stat"; }
# CPU seconds of the daemon's threads whose name is $2 (or all others with "other").
thread_cpu() {
	local d=$1 want=$2 sum=0 name t
	for t in /proc/"$d"/task/*; do
		name=$(cat "$t/comm" 2> /dev/null) || continue
		if [[ $want == other ]]; then
			[[ $name == hwpmcd-jit || $name == hwpmcd-push ]] && continue
		else
			[[ $name == "$want" ]] || continue
		fi
		sum=$(awk -v a="$sum" -v t="$tck" '{ sub(/^.*\) /, ""); print a + ($12 + $13) / t }' "$t/stat")
	done
	echo "$sum"
}

echo "== push-bench: $(perf --version), hwpmcd from $build, $(nproc) CPUs, $secs s at $freq Hz, files of $rotate s"

# --- the workload: the demo's threads, and JavaScript if node is there
"$demo" $((2 * secs + 60)) --threads > /dev/null &
pids+=($!)
js=no
if command -v node > /dev/null; then
	# in $tmp: node writes V8's isolate-*.log into its working directory
	(cd "$tmp" && exec node --perf-basic-prof -e 'function hot(n){let s=0;for(let i=0;i<n;i++)s+=Math.sqrt(i);return s}
		const end=Date.now()+'"$(((2 * secs + 60) * 1000))"';while(Date.now()<end)hot(1e5)') &
	pids+=($!)
	js=yes
fi

# --- hwpmcd with a pushing profile
rdir=$tmp/recv
mkdir -p "$rdir" "$tmp/profiles.d"
python3 "$src/tests/integration/push_receiver.py" "$rdir" &
pids+=($!)
for _ in $(seq 100); do [[ -s $rdir/port ]] && break; sleep 0.1; done
[[ -s $rdir/port ]] || { echo "bench: the receiver did not start"; exit 1; }
printf 'hwpmc = %s\n' "$hwpmc_abs" > "$tmp/hwpmcd.conf"
cat > "$tmp/profiles.d/fleet.conf" << EOF
events = cpu-clock
freq = $freq
callgraph = fp
rotate_seconds = $rotate
retain_bytes = 1G
push_url = http://127.0.0.1:$(cat "$rdir/port")
push_labels = host=bench
EOF
"$hwpmcd" --config "$tmp/hwpmcd.conf" --socket "$sock" --state-dir "$tmp/state" \
	--profiles-dir "$tmp/profiles.d" --foreground 2> "$tmp/daemon.log" &
dpid=$!
pids+=("$dpid")
for _ in $(seq 100); do "$hwpmc" sessions > /dev/null 2>&1 && break; sleep 0.1; done
"$hwpmc" sessions > /dev/null 2>&1 || { echo "bench: hwpmcd did not start:"; cat "$tmp/daemon.log"; exit 1; }
echo "== hwpmcd: profile 'fleet' pushing to the local receiver for $secs s (JavaScript: $js)"
w0=$(thread_cpu "$dpid" other) j0=$(thread_cpu "$dpid" hwpmcd-jit) p0=$(thread_cpu "$dpid" hwpmcd-push)
c0=$(cpu_of "$dpid" children)
sleep "$secs"
# push counters: "SENT BYTES QUEUED" (the files whose report child has been reaped)
push_state() {
	"$hwpmc" profiles --json 2> /dev/null | python3 -c 'import json,sys
j = json.load(sys.stdin); p = [x for x in j.get("profiles", []) if x.get("name") == "fleet"]
u = p[0].get("status", {}).get("profile", {}).get("push", {}) if p else {}
print(u.get("sent", 0) + u.get("failed", 0), u.get("bytes", 0), u.get("queued", 0))'
}
# Until the queue is empty: every file rotated so far made (its child reaped) and sent.
for _ in $(seq 300); do
	read -r sent bytes queued < <(push_state)
	((queued == 0)) && break
	sleep 0.1
done
w1=$(thread_cpu "$dpid" other) j1=$(thread_cpu "$dpid" hwpmcd-jit) p1=$(thread_cpu "$dpid" hwpmcd-push)
c1=$(cpu_of "$dpid" children)
kill "$dpid"
wait "$dpid" 2> /dev/null || true
((sent > 0)) || { echo "bench: hwpmcd pushed nothing:"; tail -5 "$tmp/daemon.log"; exit 1; }
hw_worker=$(awk -v a="$w0" -v b="$w1" 'BEGIN {print b - a}')
hw_jit=$(awk -v a="$j0" -v b="$j1" 'BEGIN {print b - a}')
hw_push=$(awk -v a="$p0" -v b="$p1" 'BEGIN {print b - a}')
hw_child=$(awk -v a="$c0" -v b="$c1" 'BEGIN {print b - a}')

# --- perf: the same recording, rotated, and perf script per file
echo "== perf: perf record -a -g -F $freq --switch-output=${rotate}s for $secs s, then perf script per file"
mkdir -p "$tmp/perf"
(cd "$tmp/perf" && exec perf record -q -a -g -e cpu-clock -F "$freq" --switch-output="${rotate}s" \
	-o perf.data > /dev/null 2>&1) &
ppid=$!
sleep 1
pr0=$(cpu_of "$ppid" self)
sleep "$secs"
pr1=$(cpu_of "$ppid" self)
kill -INT "$ppid"
wait "$ppid" 2> /dev/null || true
pf_rec=$(awk -v a="$pr0" -v b="$pr1" 'BEGIN {print b - a}')
nfiles=0 pf_script=0
for f in "$tmp"/perf/perf.data.*; do
	[[ -f $f ]] || continue
	TIMEFORMAT='%3U %3S'
	{ time perf script -i "$f" > /dev/null 2>&1; } 2> "$tmp/t"
	read -r u s < "$tmp/t"
	pf_script=$(awk -v a="$pf_script" -v u="$u" -v s="$s" 'BEGIN {print a + u + s}')
	nfiles=$((nfiles + 1))
done
((nfiles > 0)) || { echo "bench: perf wrote no rotated file"; exit 1; }

echo
printf "%-34s %10s %10s\n" "" hwpmcd perf
printf "%-34s %10.3f %10.3f\n" "recording CPU s (worker / perf)" "$hw_worker" "$pf_rec"
printf "%-34s %10.3f %10s\n" "JIT-map thread CPU s" "$hw_jit" "-"
printf "%-34s %10.3f %10s\n" "push thread CPU s" "$hw_push" "-"
printf "%-34s %10.3f %10.3f\n" "making profiles CPU s (report/script)" "$hw_child" "$pf_script"
printf "%-34s %10s %10s\n" "files pushed / converted" "$sent" "$nfiles"
printf "%-34s %10s %10s\n" "bytes sent" "$bytes" "-"
per_hw=$(awk -v a="$hw_child" -v b="$hw_push" -v n="$sent" 'BEGIN {printf "%.4f", (a + b) / n}')
per_pf=$(awk -v a="$pf_script" -v n="$nfiles" 'BEGIN {printf "%.4f", a / n}')
printf "%-34s %10s %10s\n" "CPU s per interval to make+send" "$per_hw" "$per_pf"
echo
echo "jit-thread-cpu-per-s $(awk -v a="$hw_jit" -v s="$secs" 'BEGIN {printf "%.5f", a / s}')"
echo "push-cpu-per-file $per_hw"
echo "perf-script-cpu-per-file $per_pf"
echo "ratio-make-profile $(awk -v a="$per_pf" -v b="$per_hw" 'BEGIN {printf "%.1fx", (b > 0.0001 ? a / b : a / 0.0001)}')"
echo "overall-cpu hwpmcd $(awk -v a="$hw_worker" -v b="$hw_jit" -v c="$hw_push" -v d="$hw_child" 'BEGIN {printf "%.3f", a + b + c + d}') perf $(awk -v a="$pf_rec" -v b="$pf_script" 'BEGIN {printf "%.3f", a + b}')"
