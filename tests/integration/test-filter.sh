#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The in-kernel sample filter as a user drives it: the real hwpmcd on a temporary
# socket, `hwpmc record -a` with --filter-pid, --unit (a cgroup v2 group this test
# makes, with a sub-group), -G, -u (a process of a second uid), --comm, and two
# filters combined (AND), read back with `hwpmc dump --json`.  Every sample that
# reached the log must be of a process the filter keeps: judged by what the samples
# are, never by how many.  The log says which filter was in effect (USERDATA, 11.10
# of pmclog-format.md); bad filters get clear errors.  Root; 77 without BPF.
# usage: test-filter.sh BUILD_DIR SRC_DIR
set -uo pipefail
build=$1 src=$2
hwpmcd=$build/src/daemon/hwpmcd hwpmc=$build/src/tools/hwpmc
. "$src/tests/integration/harness.sh"
harness_init "system-wide perf_event_open and BPF"

mkdir -p "$tmp/profiles.d"
"$hwpmcd" --config /dev/null --socket "$sock" --state-dir "$tmp/state" --profiles-dir "$tmp/profiles.d" \
	--foreground 2> "$tmp/daemon.log" &
dpid=$!
for _ in $(seq 100); do "$hwpmc" status > /dev/null 2>&1 && break; sleep 0.1; done
kids=()
cg=
cleanup() {
	# (a bare `wait` would wait for the daemon too, which harness_cleanup stops)
	if ((${#kids[@]})); then
		kill "${kids[@]}" 2> /dev/null
		wait "${kids[@]}" 2> /dev/null
	fi
	[[ -n "${ucg:-}" ]] && rmdir "$ucg" 2> /dev/null
	[[ -n "$cg" ]] && { rmdir "$cg/sub" "$cg" 2> /dev/null; rmdir "$(dirname "$cg")" 2> /dev/null; }
	harness_cleanup
}
trap cleanup EXIT

# Where bpf(2) is missing (a kernel without it, or a seccomp policy: no-bpf makes
# the daemon's calls fail), a filtered session is refused with the reason and
# what to do instead, leaves no file, and unfiltered sessions record as before.
nbsock=$tmp/nobpf.sock
for e in ENOSYS EPERM; do
	NO_BPF_ERRNO=$e "$build/tests/no-bpf" "$hwpmcd" --config /dev/null --socket "$nbsock" \
		--state-dir "$tmp/nobpf-state" --foreground 2> "$tmp/nobpf-$e.log" &
	nbpid=$!
	for _ in $(seq 100); do "$hwpmc" status --socket "$nbsock" > /dev/null 2>&1 && break; sleep 0.1; done
	"$hwpmc" record --socket "$nbsock" -a -F 99 --comm sh -d 0.3 -o "$tmp/nobpf.pmclog" 2> "$tmp/nobpf.err"
	rc=$?
	[[ $rc != 0 && ! -e "$tmp/nobpf.pmclog" ]] &&
		grep -qE "no bpf\(2\) \(ENOSYS\)|does not let hwpmcd load BPF programs \(EPERM|built without BPF" "$tmp/nobpf.err" &&
		grep -q "record without a filter\|built without BPF" "$tmp/nobpf.err" &&
		ok "without bpf(2) ($e), a filter is refused with the reason, no file left: $(head -1 "$tmp/nobpf.err")" ||
		bad "without bpf(2) ($e): exit $rc, file $(ls "$tmp/nobpf.pmclog" 2>&1): $(cat "$tmp/nobpf.err")"
	"$hwpmc" record --socket "$nbsock" -a -F 99 -d 0.5 -o "$tmp/nobpf.pmclog" 2> "$tmp/nobpf.err"
	rc=$?
	nb=$("$hwpmc" dump --json "$tmp/nobpf.pmclog" 2> /dev/null | grep -c '"type": *"callchain"')
	[[ $rc == 0 && $nb -gt 0 ]] && ok "without bpf(2) ($e), an unfiltered session records: $nb samples" ||
		bad "without bpf(2) ($e), unfiltered: exit $rc, $nb samples: $(cat "$tmp/nobpf.err")"
	rm -f "$tmp/nobpf.pmclog"*
	kill "$nbpid"; wait "$nbpid" 2> /dev/null
done

# A probe: does this kernel (and this build) load the filter at all?
"$hwpmc" record -q -a -F 99 --filter-pid 1 -d 0.2 -o "$tmp/probe.pmclog" 2> "$tmp/probe.err"
if [[ $? != 0 ]]; then
	if [[ ${HWPMC_BUILT_WITH_BPF:-} == 0 ]]; then
		# A build without BPF (meson -Dbpf=disabled): this refusal is the fallback under test.
		grep -q "built without BPF sample filters" "$tmp/probe.err" &&
			ok "built without BPF, record says so: $(head -1 "$tmp/probe.err")" ||
			bad "built without BPF, the refusal does not say so: $(cat "$tmp/probe.err")"
		echo "$pass passed, $fail failed"
		[[ $fail == 0 ]] && exit 0 || exit 1
	fi
	echo "# skipped: no BPF sample filter here: $(cat "$tmp/probe.err")"
	grep -qE "built without BPF|refused the BPF|BPF" "$tmp/probe.err" &&
		ok "without BPF, record says why: $(head -1 "$tmp/probe.err")" ||
		bad "the refusal does not say why: $(cat "$tmp/probe.err")"
	echo "$pass passed, $fail failed"
	[[ $fail == 0 ]] && exit 77 || exit 1
fi
[[ ${HWPMC_BUILT_WITH_BPF:-} == 0 ]] && { bad "built without BPF, yet a filter was accepted"; exit 1; }

# The systemd unit's capabilities are enough for filters: a daemon with exactly the
# unit's CapabilityBoundingSet= (what root keeps under systemd) loads the filter,
# and the same set without CAP_BPF is refused with EPERM (the control).
caps=$(sed -n 's/^CapabilityBoundingSet=CAP_\(.*\)/+\L\1/p' "$src/systemd/hwpmcd.service.in" | paste -sd,)
for set in "$caps" "$(sed 's/,*+bpf//; s/^,//' <<< "$caps")"; do
	setpriv --bounding-set "-all,$set" --inh-caps=-all "$hwpmcd" --config /dev/null \
		--socket "$nbsock" --state-dir "$tmp/nobpf-state" --foreground 2> "$tmp/caps.log" &
	nbpid=$!
	for _ in $(seq 100); do "$hwpmc" status --socket "$nbsock" > /dev/null 2>&1 && break; sleep 0.1; done
	"$hwpmc" record --socket "$nbsock" -a -F 99 --comm sh -d 0.3 -o "$tmp/caps.pmclog" 2> "$tmp/caps.err"
	rc=$?
	if [[ $set == *+bpf* ]]; then
		[[ $rc == 0 ]] && grep -q "filter comm=sh: the kernel kept" "$tmp/caps.err" &&
			ok "the unit's capabilities ($set) load the filter" ||
			bad "the unit's capabilities ($set): exit $rc: $(cat "$tmp/caps.err")"
	else
		[[ $rc != 0 ]] && grep -q "EPERM" "$tmp/caps.err" &&
			ok "without CAP_BPF ($set), a filter is refused: $(head -c 120 "$tmp/caps.err")" ||
			bad "without CAP_BPF ($set): exit $rc: $(cat "$tmp/caps.err")"
	fi
	rm -f "$tmp/caps.pmclog"*
	kill "$nbpid"; wait "$nbpid" 2> /dev/null
done

# Busy processes that differ in one property each.
# (The command name is this run's own: no other process on the machine has it.)
comm=hwpmcfc-$$
cp /bin/sh "$tmp/$comm"
sh -c 'while :; do :; done' & a=$!
sh -c 'while :; do :; done' & b=$!
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'while :; do :; done' & n=$!
"$tmp/$comm" -c 'while :; do :; done' & c=$!
kids=($a $b $n $c)
sleep 0.3

# pids of the callchains of a log, one per line with their count
pids_of() { "$hwpmc" dump --json "$1" 2> /dev/null | python3 -c '
import collections, json, sys
recs = (json.loads(l) for l in sys.stdin)
c = collections.Counter(r["pid"] for r in recs if r.get("type") == "callchain")
print(" ".join("%s:%d" % (p, n) for p, n in sorted(c.items())))'; }
check_only() { # NAME LOG WANT_PIDS...
	local name=$1 log=$2; shift 2
	local got
	got=$(pids_of "$log")
	python3 -c '
import sys
got = dict(kv.split(":") for kv in sys.argv[1].split()) if sys.argv[1] else {}
want = set(sys.argv[2:])
sys.exit(0 if got and set(got) <= want else 1)' "$got" "$@" &&
		ok "$name: every sample is of a kept process ($got)" ||
		bad "$name: samples of other processes, or none: $got (want only $*)"
}
filter_mark() { # LOG -> the filter text of its USERDATA mark (pmclog-format.md 11.10)
	"$hwpmc" dump --json "$1" 2> /dev/null | PYTHONPATH=$src/tests/integration python3 -c '
import sys, filter_marks
print(filter_marks.load(sys.stdin)[1][0][1])'; }

# 1. A process set, system-wide.
"$hwpmc" record -a -F 499 --filter-pid "$a" -d 1.5 -o "$tmp/pid.pmclog" 2> "$tmp/pid.err"
rc=$?
[[ $rc == 0 ]] && grep -q "filter pid=$a: the kernel kept [1-9][0-9]* samples and dropped [1-9]" "$tmp/pid.err" &&
	ok "--filter-pid: the summary says what the kernel kept and dropped: $(grep 'filter' "$tmp/pid.err")" ||
	bad "--filter-pid: exit $rc: $(cat "$tmp/pid.err")"
check_only "--filter-pid" "$tmp/pid.pmclog" "$a"
[[ $(filter_mark "$tmp/pid.pmclog") == "pid=$a" ]] && ok "the log names its filter: $(filter_mark "$tmp/pid.pmclog")" ||
	bad "the log's filter mark: '$(filter_mark "$tmp/pid.pmclog")'"

# 2. A unit: a cgroup v2 group named like one, B in a sub-group of it.
root=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/self/mounts)
if [[ -n "$root" ]] && mkdir -p "$root/hwpmcd-test.slice/hwpmcd-test-$$.service/sub" 2> "$tmp/cg.err"; then
	cg=$root/hwpmcd-test.slice/hwpmcd-test-$$.service
	echo "$b" > "$cg/sub/cgroup.procs"
	"$hwpmc" record -a -F 499 --unit "hwpmcd-test-$$.service" -d 1.5 -o "$tmp/unit.pmclog" 2> "$tmp/unit.err"
	rc=$?
	[[ $rc == 0 ]] && ok "--unit: exit 0: $(grep 'filter' "$tmp/unit.err")" || bad "--unit: exit $rc: $(cat "$tmp/unit.err")"
	check_only "--unit (a sub-cgroup of the unit's)" "$tmp/unit.pmclog" "$b"
	"$hwpmc" record -a -F 499 -G "hwpmcd-test.slice/hwpmcd-test-$$.service" -d 1 -o "$tmp/cg.pmclog" 2> "$tmp/cgr.err"
	check_only "-G PATH" "$tmp/cg.pmclog" "$b"
	"$hwpmc" record -a -F 499 -G "/hwpmcd-test.slice/hwpmcd-test-$$.service/sub" --filter-pid "$a" -d 1 -o "$tmp/and.pmclog" 2> "$tmp/and.err"
	rc=$?
	[[ $rc == 0 ]] && grep -q "kept 0 samples and dropped [1-9]" "$tmp/and.err" &&
		ok "-G and --filter-pid of a process outside it (AND): nothing kept: $(grep 'filter' "$tmp/and.err")" ||
		bad "AND: exit $rc: $(cat "$tmp/and.err")"
	"$hwpmc" record -a -F 499 -G "hwpmcd-test.slice/hwpmcd-test-$$.service" --filter-pid "$a" --filter-pid "$b" -d 1 -o "$tmp/or.pmclog" 2> "$tmp/or.err"
	check_only "-G with two --filter-pid (OR within a kind)" "$tmp/or.pmclog" "$b"
else
	echo "# skipping the cgroup cases: no cgroup v2 hierarchy to make a group in: $(cat "$tmp/cg.err" 2> /dev/null)"
fi

# 3. A second uid, and a command name.
"$hwpmc" record -a -F 499 -u nobody -d 1.5 -o "$tmp/uid.pmclog" 2> "$tmp/uid.err"
rc=$?
[[ $rc == 0 ]] && ok "-u nobody: exit 0" || bad "-u nobody: exit $rc: $(cat "$tmp/uid.err")"
got=$(pids_of "$tmp/uid.pmclog")
[[ " $got" == *" $n:"* && " $got" != *" $a:"* && " $got" != *" $b:"* && " $got" != *" $c:"* ]] &&
	ok "-u nobody: nobody's process sampled, root's not ($got)" || bad "-u nobody: $got (nobody's: $n)"
"$hwpmc" record -a -F 499 --comm "$comm" -d 1.5 -o "$tmp/comm.pmclog" 2> "$tmp/comm.err"
check_only "--comm" "$tmp/comm.pmclog" "$c"

# 4. The filter replaced while the session runs: from the change on, only B's
# samples; before it, A's; nothing lost; the log marks both filters.  A detached
# session, so that no step races a duration: on a loaded machine the change
# comes when it comes, and each phase waits for its own samples (a minimum
# count, with a minute to reach it).
"$hwpmc" start -a -F 499 --filter-pid "$a" > "$tmp/run.start" 2>&1
sid=$(sed -n 's/^session \([0-9]*\): recording into .*/\1/p' "$tmp/run.start")
runlog=$(sed -n 's/^session [0-9]*: recording into \(.*\)/\1/p' "$tmp/run.start")
kept() { "$hwpmc" status --json "${sid:-0}" 2> /dev/null | python3 -c '
import json, sys
print(json.load(sys.stdin)["sessions"][0]["stats"]["filter"]["kept"])' 2> /dev/null || echo 0; }
wait_kept() { # N: until the session's filter has kept at least N samples (60 s at most)
	local end=$((SECONDS + 60))
	while ((SECONDS < end)); do (($(kept) >= $1)) && return 0; sleep 0.1; done
	return 1
}
wait_kept 20 || bad "session '$sid' kept no 20 samples of A in 60 s: $(cat "$tmp/run.start")"
"$hwpmc" filter "${sid:-0}" --filter-pid "$b" > "$tmp/filter.out" 2>&1
frc=$?
k1=$(kept)
wait_kept $((k1 + 20)) || bad "session '$sid' kept no 20 samples of B in 60 s after the change"
"$hwpmc" stop "${sid:-0}" > "$tmp/run.err" 2>&1
rc=$?
[[ $frc == 0 && $rc == 0 ]] && ok "hwpmc filter on a running session: $(cat "$tmp/filter.out")" ||
	bad "hwpmc filter: exit $frc ($(cat "$tmp/filter.out")), stop exit $rc: $(cat "$tmp/run.err")"
grep -q "samples, 0 lost" "$tmp/run.err" && ok "the change lost no sample: $(grep -o '[0-9]* samples, [0-9]* lost' "$tmp/run.err")" ||
	bad "samples lost around the change: $(cat "$tmp/run.err")"
"$hwpmc" dump --json "$runlog" 2> /dev/null | PYTHONPATH=$src/tests/integration python3 -c '
import sys, filter_marks
a, b = int(sys.argv[1]), int(sys.argv[2])
recs, marks = filter_marks.load(sys.stdin)
assert [m[1] for m in marks] == ["pid=%d" % a, "pid=%d" % b], marks
t = marks[1][0]
cc = [r for r in recs if r.get("type") == "callchain"]
after = {r["pid"] for r in cc if r["tsc"] > t}
before = {r["pid"] for r in cc if r["tsc"] < t}
assert after == {b}, ("after", after)
assert a in before and before <= {a, b}, ("before", before)
print("marks %s; before the change pids %s, after %s" % (marks, sorted(before), sorted(after)))
' "$a" "$b" > "$tmp/run.check" 2>&1 && ok "the log: both filters marked; after the change only B, before it A ($(cat "$tmp/run.check"))" ||
	bad "the log around the change: $(cat "$tmp/run.check")"
"$hwpmc" report -v "$runlog" > "$tmp/run.report" 2>&1
hdr=$(grep "^# filter" "$tmp/run.report")
[[ "$hdr" =~ ^"# filter (in the kernel, 2 values): 'pid=$a' from "[0-9T:.Z-]+", 'pid=$b' from "[0-9T:.Z-]+$ ]] &&
	ok "hwpmc report says which filter held when: $hdr" || bad "the report's filter line: '$hdr': $(head -5 "$tmp/run.report")"
"$hwpmc" filter 999 --filter-pid 1 > /dev/null 2> "$tmp/f.err"
[[ $? != 0 ]] && grep -q "no session 999" "$tmp/f.err" && ok "hwpmc filter of no session: $(head -1 "$tmp/f.err")" ||
	bad "hwpmc filter 999: $(cat "$tmp/f.err")"
# A detached session started without a filter: its id from start's output.
sid=$("$hwpmc" start -a -F 99 --no-kallsyms 2> "$tmp/start.err" | sed -n 's/^session \([0-9]*\): recording.*/\1/p')
"$hwpmc" filter "${sid:-0}" --filter-pid 1 > /dev/null 2> "$tmp/f.err"
[[ $? != 0 ]] && grep -q "started without a filter" "$tmp/f.err" && ok "hwpmc filter of a session without one: $(head -1 "$tmp/f.err")" ||
	bad "filter without one (session '$sid': $(cat "$tmp/start.err")): $(cat "$tmp/f.err")"
[[ -n "$sid" ]] && "$hwpmc" stop "$sid" > /dev/null 2>&1

# 5. Bad filters: clear errors, no file left behind.
bad_case() { # NAME EXPECTED_TEXT ARGS...
	local name=$1 want=$2; shift 2
	"$hwpmc" record -a -d 0.5 -o "$tmp/bad.pmclog" "$@" > /dev/null 2> "$tmp/bad.err"
	local rc=$?
	[[ $rc != 0 ]] && grep -q -- "$want" "$tmp/bad.err" && [[ ! -e "$tmp/bad.pmclog" ]] &&
		ok "$name: refused: $(head -1 "$tmp/bad.err")" || bad "$name: exit $rc: $(cat "$tmp/bad.err")"
	rm -f "$tmp/bad.pmclog"
}
bad_case "a unit that does not run" "has no cgroup" --unit "nosuch-$$.service"
bad_case "a cgroup path with .." "without '.' or '..'" -G "../../etc"
bad_case "a cgroup that does not exist" "No such file" -G "hwpmcd-no-such-group-$$"
bad_case "a command name longer than the kernel keeps, and the name it keeps" "the 15 bytes the kernel keeps of a command name: ask for 'averyveryverylo'" --comm "averyveryverylongname"
bad_case "an unknown user" "neither a user" -u "no-such-user-$$"
bad_case "a unit name that is none" "systemd unit names" --unit "not a unit"
for _ in $(seq 65); do echo -n "--filter-pid 1 "; done > "$tmp/many"
bad_case "65 pids" "at most 64" $(cat "$tmp/many")

# 6. An always-on profile scoped to a unit that starts after it and then restarts
# (its cgroup directory made again: a new id behind the same name).  The filter
# follows the unit: the log marks each change, and between marks every sample is
# of the unit's process of that time (B, then A); none while it does not run.
if [[ -n "$cg" ]]; then
	u=hwpmcd-test-$$-p.service
	ucg=$root/hwpmcd-test.slice/$u
	cat > "$tmp/profiles.d/unit.conf" <<EOF
events = cpu-clock
freq = 499
callgraph = fp
scope = unit:$u
rotate_seconds = 600
retain_bytes = 1G
EOF
	"$hwpmc" profiles reload > "$tmp/reload.out" 2>&1
	psid=
	end=$((SECONDS + 60))
	while ((SECONDS < end)); do
		psid=$("$hwpmc" sessions --json 2> /dev/null | python3 -c '
import json, sys
s = [x for x in json.load(sys.stdin)["sessions"] if x.get("profile") and x.get("state") == "running"]
print(s[0]["session"] if s else "")' 2> /dev/null)
		[[ -n "$psid" ]] && break
		sleep 0.1
	done
	ftext() { "$hwpmc" status --json "${psid:-0}" 2> /dev/null | python3 -c '
import json, sys
print(json.load(sys.stdin)["sessions"][0]["stats"]["filter"]["text"])' 2> /dev/null; }
	wait_text() { # TEXT: until the profile's filter reads TEXT (60 s at most)
		local end=$((SECONDS + 60))
		while ((SECONDS < end)); do [[ "$(ftext)" == "$1" ]] && return 0; sleep 0.1; done
		return 1
	}
	sid=$psid
	wait_text "unit=$u(not running)" &&
		ok "a profile of a unit that does not run yet starts and waits for it: $(ftext)" ||
		bad "profile of a unit not running: session '$psid', filter '$(ftext)': $(cat "$tmp/reload.out")"
	mkdir "$ucg" && echo "$b" > "$ucg/cgroup.procs"
	wait_text "unit=$u(hwpmcd-test.slice/$u)" && k1=$(kept) && wait_kept $((k1 + 20)) &&
		ok "the unit started: the profile found its cgroup and keeps its samples: $(ftext)" ||
		bad "the unit started: filter '$(ftext)', kept $(kept)"
	# The restart: B leaves, the directory goes and comes back, A enters it.
	echo "$b" > "$root/cgroup.procs" && rmdir "$ucg"
	wait_text "unit=$u(not running)" || bad "the unit stopped: filter '$(ftext)'"
	mkdir "$ucg" && echo "$a" > "$ucg/cgroup.procs"
	wait_text "unit=$u(hwpmcd-test.slice/$u)" && k1=$(kept) && wait_kept $((k1 + 20)) &&
		ok "the unit restarted (a new cgroup id): the filter follows it: $(ftext)" ||
		bad "the unit restarted: filter '$(ftext)', kept $(kept)"
	# A restart faster than the lookups (in one process: microseconds between the
	# directory's going and coming): the same text, a new id, B in it now.
	python3 -c '
import os, sys
root, ucg, a, b = sys.argv[1:]
open(root + "/cgroup.procs", "w").write(a)
os.rmdir(ucg)
os.mkdir(ucg)
open(ucg + "/cgroup.procs", "w").write(b)' "$root" "$ucg" "$a" "$b"
	k1=$(kept)
	wait_kept $((k1 + 20)) && ok "a restart between two lookups: the new cgroup id is followed" ||
		bad "a fast restart: kept $(kept) (was $k1), filter '$(ftext)'"
	rm "$tmp/profiles.d/unit.conf"
	"$hwpmc" profiles reload > /dev/null 2>&1
	end=$((SECONDS + 60))
	while ((SECONDS < end)); do "$hwpmc" status "$psid" > /dev/null 2>&1 || break; sleep 0.1; done
	for f in "$tmp"/state/profiles/unit/*.pmclog; do "$hwpmc" dump --json "$f"; done 2> /dev/null |
		PYTHONPATH=$src/tests/integration python3 -c '
import sys, filter_marks
a, b, u = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
recs, marks = filter_marks.load(sys.stdin)
off, on = "unit=%s(not running)" % u, "unit=%s(hwpmcd-test.slice/%s)" % (u, u)
# The fast restart may or may not have been seen as "not running" in between.
texts = [m[1] for m in marks]
assert texts in ([off, on, off, on, on], [off, on, off, on, off, on]), marks
ep = filter_marks.pids_between(recs, marks)
assert not [r for r in recs if r.get("type") == "callchain" and r["tsc"] < marks[0][0]], \
    "samples before the first mark"
assert ep in ([[], [b], [], [a], [b]], [[], [b], [], [a], [], [b]]), ep
print("%d marks; pids between them: %s" % (len(marks), ep))
' "$a" "$b" "$u" > "$tmp/follow.check" 2>&1 &&
		ok "the profile's log: the unit's epochs marked, each with only its process ($(cat "$tmp/follow.check"))" ||
		bad "the profile's log: $(cat "$tmp/follow.check")"
	"$hwpmc" report -v "$tmp"/state/profiles/unit/*.pmclog > "$tmp/unit.report" 2>&1
	hdr=$(grep "^# filter" "$tmp/unit.report")
	[[ "$hdr" == "# filter (in the kernel, 4 values): 'unit=$u(not running)' from "*", 'unit=$u(hwpmcd-test.slice/$u)' from "*", 'unit=$u(not running)' from "*", 'unit=$u(hwpmcd-test.slice/$u)' from "* ||
		"$hdr" == "# filter (in the kernel, 6 values): "* ]] &&
		ok "the profile's report: when the unit ran: $hdr" || bad "the profile's report: '$hdr'"
	echo "$b" > "$root/cgroup.procs"
	rmdir "$ucg" 2> /dev/null
fi

kill -TERM "$dpid"; wait "$dpid"; rc=$?; dpid=
[[ $rc == 0 ]] && ok "daemon exits 0" || bad "daemon exit $rc: $(tail -3 "$tmp/daemon.log")"
grep -E "ERROR|AddressSanitizer|runtime error" "$tmp/daemon.log" && bad "errors in the daemon's log" || ok "no errors in the daemon's log"
echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
