#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Always-on profiles as an administrator runs them: the real hwpmcd with a
# profiles directory (good, bad and disabled files), rotation under a
# process-churn workload (every rotated file read alone and checked, the
# samples of all files equal to what the session counted), retention by bytes,
# reload by SIGHUP and `hwpmc profiles reload` (changed, removed, refused),
# --check-config, a full disk (pause, then resume), non-administrators refused,
# SIGTERM.  Nothing here depends on the machine's speed: every wait is for a
# state, with a deadline, and samples are judged by what they are.
# Needs root (system-wide perf_event_open, mount): exits 77 (skip) otherwise.
# usage: test-profiles.sh BUILD_DIR SRC_DIR   (HWPMCD_WRAPPER="valgrind ..." wraps the daemon)
set -uo pipefail
build=$1 src=$2
hwpmcd=$build/src/daemon/hwpmcd hwpmc=$build/src/tools/hwpmc
demo=$build/tests/workloads/hwpmc-demo
check=$src/tests/integration/check_log.py
. "$src/tests/integration/harness.sh"
harness_init "system-wide perf_event_open"
chmod 755 "$tmp" # the unprivileged client reaches the socket in it
mnt=
trap '[[ -n "$mnt" ]] && umount "$mnt" 2> /dev/null; kill $(jobs -p) 2> /dev/null; harness_cleanup' EXIT
note() { echo "# $*"; }

# start_daemon STATE_DIR PROFILES_DIR LOG: the daemon, waited for with a ping.
start_daemon() {
	${HWPMCD_WRAPPER:-} "$hwpmcd" --config "$tmp/hwpmcd.conf" --socket "$sock" --state-dir "$1" \
		--profiles-dir "$2" --foreground 2> "$3" &
	dpid=$!
	wait_for 30 '"$hwpmc" sessions > /dev/null 2>&1'
}
profiles_json() { "$hwpmc" profiles --json 2> /dev/null; }
# pjq NAME PYTHON-EXPR: evaluate EXPR on profile NAME's object (p) of `hwpmc profiles --json`.
pjq() {
	profiles_json | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = next((x for x in d["profiles"] if x["name"] == sys.argv[1]), None)
st = (p or {}).get("status", {}); pf = st.get("profile", {})
print(eval(sys.argv[2]))' "$1" "$2" 2> /dev/null
}
pnum() { local v; v=$(pjq "$1" "$2"); echo "${v:-0}"; }
state_is() { [[ "$(pjq "$1" 'p["state"]')" == "$2" ]]; }
files_of() { ls "$1"/*.pmclog 2> /dev/null | sort; }
nfiles() { files_of "$1" | wc -l; }
callchains() { "$hwpmc" dump --summary "$1" 2> /dev/null | grep -o 'callchain [0-9]*' | awk '{print $2}'; }

cat > "$tmp/hwpmcd.conf" <<EOF
socket_mode = 0666
EOF
pdir=$tmp/profiles.d state=$tmp/state
mkdir -p "$pdir"
cat > "$pdir/churn.conf" <<'EOF'
# the demo and a fork storm, rotated every second
events = cpu-clock
freq = 199
callgraph = fp
rotate_seconds = 1
retain_seconds = 1h
retain_bytes = 1G
EOF
cat > "$pdir/small.conf" <<'EOF'
events = task-clock
freq = 99
callgraph = none
rotate_bytes = 64K
retain_bytes = 320K
EOF
cat > "$pdir/budget.conf" <<'EOF'
# 10 kHz of dwarf snapshots on every CPU can never fit in 1% of the machine
freq = 10000
callgraph = dwarf
cpu_budget_percent = 1
rotate_seconds = 3
retain_bytes = 1G
EOF
cat > "$pdir/off.conf" <<'EOF'
enabled = no
EOF
cat > "$pdir/bad.conf" <<'EOF'
events = cpu-clock
freq = 99
callgraph = dwarf,12345
EOF
echo "# not a profile: ignored" > "$pdir/README"

# ---- --check-config names the bad file's line, and passes without it ----------
"$hwpmcd" --config "$tmp/hwpmcd.conf" --profiles-dir "$pdir" --check-config > "$tmp/cc.out" 2>&1
rc=$?
if [[ $rc == 1 ]] && grep -q "bad.conf:3: callgraph: " "$tmp/cc.out" &&
	grep -q "churn.conf: ok" "$tmp/cc.out" && grep -q "off.conf: ok (enabled = no)" "$tmp/cc.out"; then
	ok "--check-config: exit 1, bad.conf:3 named, the good files ok"
else
	bad "--check-config: exit $rc: $(cat "$tmp/cc.out")"
fi

# ---- start-up: good profiles run, the bad one is refused with its line --------
"$demo" 600 > /dev/null &
demopid=$!
( while :; do /bin/true; done ) &
churnpid=$!
start_daemon "$state" "$pdir" "$tmp/daemon.log" && ok "daemon up" || { bad "daemon did not answer"; cat "$tmp/daemon.log"; exit 1; }
# Each profile starts in its own time (budget's 10 kHz dwarf session takes longest to
# open on a busy machine): wait for all three, then judge their states.
if wait_for 30 'state_is churn running && state_is small running && state_is budget running'; then
	ok "profiles churn, small and budget run"
else
	bad "profiles not running: $(profiles_json)"
fi
[[ "$(pjq off 'p["state"]')" == disabled ]] && ok "off.conf listed as disabled" || bad "off: $(pjq off 'p')"
grep -q "bad.conf:3: callgraph: " "$tmp/daemon.log" && ok "bad.conf refused in the journal with its line" ||
	bad "no bad.conf:3 line in the daemon's log"
profiles_json | grep 'bad.conf:3: callgraph' > /dev/null && ok "'hwpmc profiles' reports the refused file" ||
	bad "profiles reply lacks bad.conf"
"$hwpmc" profiles > "$tmp/prof.txt" 2> /dev/null
grep -q "^churn .*running" "$tmp/prof.txt" && ok "hwpmc profiles table" || bad "table: $(cat "$tmp/prof.txt")"

# ---- rotation: at least 4 files, each read alone ------------------------------
cdir=$state/profiles/churn
if wait_for 120 'test "$(nfiles "$cdir")" -ge 5'; then ok "churn rotated ($(nfiles "$cdir") files)"; else bad "churn: $(nfiles "$cdir") files"; fi
sid=$(pjq churn 'st["session"]')
"$hwpmc" stop "$sid" > "$tmp/stop.out" 2>&1 || bad "stop of the churn session failed: $(cat "$tmp/stop.out")"
kill $churnpid 2> /dev/null
samples=$(sed -n 's/.*: \([0-9]*\) samples, \([0-9]*\) lost.*/\1/p' "$tmp/stop.out")
sum=0 nf=0 fails=0
for f in $(files_of "$cdir"); do
	nf=$((nf + 1))
	n=$(callchains "$f"); sum=$((sum + ${n:-0}))
	"$hwpmc" dump --json "$f" > "$tmp/f.json" 2> "$tmp/f.err"
	[[ -s "$tmp/f.err" ]] && { fails=$((fails + 1)); note "$f: $(cat "$tmp/f.err")"; continue; }
	# Each file alone: the stream rules, the demo's PROC_CREATE and MAP_IN before its samples, its PCs resolved.
	out=$(python3 "$check" "$tmp/f.json" --min-share 0.5 2>&1) || { fails=$((fails + 1)); note "$f:"; echo "$out" | grep "not ok" | sed 's/^/#   /'; }
	[[ -s "$f.kallsyms" ]] || { fails=$((fails + 1)); note "$f: no kallsyms"; }
	[[ -s "$f.vdso" ]] || { fails=$((fails + 1)); note "$f: no vdso"; }
done
[[ $fails == 0 ]] && ok "each of the $nf rotated files reads alone: INITIALIZE..CLOSELOG, the demo's process and mappings, its PCs resolved, kallsyms and vdso beside" ||
	bad "$fails of $nf rotated files failed"
[[ -n "$samples" && "$sum" == "$samples" ]] && ok "no sample lost at rotation: $sum callchains in $nf files = the $samples the session counted" ||
	bad "files hold $sum callchains, the session counted '$samples'"
python3 - $(files_of "$cdir") <<PY && ok "each file's head time is at or after the previous file's CLOSELOG" || bad "rotated files overlap in time"
import json, subprocess, sys
spans = []
for f in sys.argv[1:]:
    out = subprocess.run(["$hwpmc", "dump", "--json", f], capture_output=True, text=True).stdout
    recs = [json.loads(l) for l in out.splitlines()][:-1]
    first, last = recs[0], recs[-1]
    assert first["type"] == "initlog" and last["type"] == "closelog", (f, first["type"], last["type"])
    spans.append((first["tsc"], last["tsc"], f))
spans.sort()
for (s0, e0, f0), (s1, e1, f1) in zip(spans, spans[1:]):
    assert s1 >= e0, (f0, f1, e0, s1)
PY

# ---- the CPU budget ----------------------------------------------------------
# Three windows of the loop, then: the rate is below the configured 10 kHz and
# at least 1 Hz, every change the journal reports is in the log as a USERDATA
# rate pair, each file begins with its rate, and the report shows them.
sleep 7 # three windows of 2 s: a wait for the loop to have run, not a bound on anything
rate=$(pnum budget 'pf["budget"]["rate_hz"]')
((rate >= 1 && rate < 10000)) && ok "budget: the rate is $rate Hz, below the 10 kHz asked for (a sample costs $(pnum budget 'pf["budget"]["sample_cost_ns"]') ns; last window $(pjq budget 'pf["budget"]["used_percent"]')% of the machine; $(pnum budget 'pf["budget"]["rate_changes"]') changes)" ||
	bad "budget: rate '$rate': $(pjq budget 'pf')"
bsid=$(pjq budget 'st["session"]')
"$hwpmc" stop "$bsid" > /dev/null 2>&1 || bad "stop of the budget session"
python3 - "$tmp/daemon.log" $(files_of "$state/profiles/budget") <<PY && ok "budget: the log's USERDATA rates are the journal's changes, each file begins with its rate" || bad "budget: rates in the log"
import json, re, subprocess, sys
log = open(sys.argv[1]).read()
said = [int(m.group(2)) for m in re.finditer(r"profile budget: rate (\d+) -> (\d+) Hz", log)]
start = re.search(r"profile budget: .*starting at (\d+) Hz", log)
assert start, "no starting rate in the journal"
logged = []
for f in sys.argv[2:]:
    out = subprocess.run(["$hwpmc", "dump", "--json", f], capture_output=True, text=True).stdout
    recs = [json.loads(l) for l in out.splitlines()][:-1]
    ud = [r["userdata"] for r in recs if r["type"] == "userdata"]
    # head: the rule mark, then the rate mark and the rate the file begins with
    assert len(ud) >= 3 and ud[1] == 0x48575301, (f, ud[:3])
    logged.append(("head", ud[2]))
    # then the event's sampling mark (11.13: by frequency, following the rate marks,
    # at the file's rate), then rate pairs, between the build id runs of MAP_INs and
    # the cgroup runs of processes (mark, length, words) and the lost marks that follow
    # a DROPNOTIFY on a busy machine (11.14: mark, count)
    assert ud[3] == 0x48575305 and ud[5:8] == [0x102, ud[2], 0], (f, ud[3:8])
    i = 8
    while i < len(ud):
        if ud[i] in (0x48575303, 0x48575304):
            i += 2 + (ud[i + 1] + 3) // 4
            continue
        if ud[i] == 0x48575306:
            i += 2
            continue
        assert ud[i] == 0x48575301, (f, i, hex(ud[i]))
        logged.append(("change", ud[i + 1]))
        i += 2
changes = [v for k, v in logged if k == "change"]
assert changes == said, (changes, said)
assert logged[0] == ("head", int(start.group(1))), (logged[0], start.group(1))
assert all(1 <= v <= 10000 for k, v in logged), logged
PY
"$hwpmc" report --top --limit 1 "$state/profiles/budget" 2> /dev/null | grep "^# rate (set by the profile's CPU budget" > /dev/null &&
	ok "budget: the report prints the rate over time" || bad "budget: no rate line in the report"
# Each file's report counts a sample by its period (pmclog-format.md 11.13): in samples
# at the rate the file began with, each weighing that rate / the rate of its time, as
# summed here from the file's own records; and a file whose rate did not change counts.
python3 - $(files_of "$state/profiles/budget") > "$tmp/budget-w.out" <<PY
import json, subprocess, sys
moved = 0
for f in sys.argv[1:]:
    out = subprocess.run(["$hwpmc", "dump", "--json", f], capture_output=True, text=True).stdout
    recs = [json.loads(l) for l in out.splitlines()][:-1]
    head = rate = None
    exact, n, nxt = 0.0, 0, False
    for r in recs:
        if r["type"] == "userdata":
            if nxt:
                rate = r["userdata"]
                head = head or rate
            nxt = r["userdata"] == 0x48575301
            continue
        nxt = False
        if r["type"] == "callchain":
            exact += head / rate
            n += 1
    if not n:
        continue
    rep = json.loads(subprocess.run(["$hwpmc", "report", "--json", "--limit", "1", f],
                                    capture_output=True, text=True).stdout)
    ev = rep["events"][0]
    moved += abs(exact - n) > 1
    if ev["sampled"] != n or abs(ev["samples"] - exact) > 1:
        print("not ok %s: %d samples weigh %.2f, the report says %d of %d" %
              (f, n, exact, ev["samples"], ev["sampled"]))
print("files %d moved %d" % (len(sys.argv) - 1, moved))
PY
grep -q "^not ok" "$tmp/budget-w.out" && bad "budget: weights: $(grep -m3 '^not ok' "$tmp/budget-w.out")" ||
	ok "budget: each file's report weights its samples by their rate ($(tail -1 "$tmp/budget-w.out") by the budget)"

# ---- retention by bytes -------------------------------------------------------
sdir=$state/profiles/small
if wait_for 120 '(($(pnum small "pf.get(\"deleted_files\", 0)") >= 2))'; then
	ok "small: retention deleted $(pjq small 'pf["deleted_files"]') files"
else
	bad "small: retention deleted nothing: $(pjq small 'pf')"
fi
# What is kept, but the file being written, fits in retain_bytes.  Retention runs
# on the worker as it rotates, so a file may go while we look (it counts 0), and
# the newest file is left out too in case a rotation came between the two looks.
cur=$(pjq small 'pf["file"]')
newest=$(ls -t "$sdir"/*.pmclog | head -1) # by mtime: NAME-...Z-1.pmclog sorts before NAME-...Z.pmclog
kept=0
for f in $(files_of "$sdir"); do
	[[ "$f" == "$cur" || "$f" == "$newest" ]] && continue
	for g in "$f" "$f.kallsyms" "$f.vdso"; do
		kept=$((kept + $(stat -c %s "$g" 2> /dev/null || echo 0)))
	done
done
((kept <= 320 * 1024)) && ok "small keeps $kept bytes of closed files (retain_bytes 320K)" || bad "small keeps $kept bytes"
# Every closed file retention kept is whole (one it deletes while we look is skipped).
whole=0 torn=0 tornf=()
for f in $(files_of "$sdir"); do
	[[ "$f" == "$cur" || "$f" == "$newest" ]] && continue
	out=$("$hwpmc" dump --summary "$f" 2>&1)
	[[ -e "$f" ]] || continue
	if grep -q "; complete" <<< "$out"; then whole=$((whole + 1)); else tornf+=("$f"); fi
done
# A rotation between our looks makes a newer file the one being written: only a
# file that is still not the current one (nor the newest) afterwards counts as torn.
cur2=$(pjq small 'pf["file"]') newest2=$(ls -t "$sdir"/*.pmclog | head -1)
for f in "${tornf[@]}"; do
	[[ "$f" == "$cur2" || "$f" == "$newest2" ]] && continue
	torn=$((torn + 1)); note "$f: not whole"
done
((whole >= 1 && torn == 0)) && ok "small: the $whole closed files retention kept are whole" || bad "small: $whole whole, $torn not"

# ---- reload: changed, removed, refused ----------------------------------------
old_small=$(pjq small 'st["session"]')
sed -i 's/^freq = 99/freq = 49/' "$pdir/small.conf"
rm "$pdir/churn.conf"
kill -HUP $dpid
if wait_for 30 '[[ "$(pjq small "st.get(\"session\")")" != "$old_small" ]] && state_is small running'; then
	ok "SIGHUP: the changed profile restarted as session $(pjq small 'st["session"]')"
else
	bad "SIGHUP: small is $(pjq small 'p')"
fi
[[ "$(pjq churn 'p')" == None ]] && ok "SIGHUP: the removed profile is gone" || bad "churn still listed: $(pjq churn 'p')"
[[ "$(pjq small 'p["freq"]')" == 49 ]] && ok "reloaded profile samples at its new freq" || bad "freq: $(pjq small 'p["freq"]')"
cur_small=$(pjq small 'st["session"]')
echo "retain_seconds = lots" >> "$pdir/small.conf"
"$hwpmc" profiles reload > "$tmp/reload.out" 2> "$tmp/reload.err"
rc=$?
if [[ $rc == 1 ]] && grep -q "small.conf:6: retain_seconds = 'lots' is not a duration" "$tmp/reload.err" &&
	[[ "$(pjq small 'st["session"]')" == "$cur_small" && "$(pjq small 'p["state"]')" == running ]]; then
	ok "reload of a bad file: exit 1, its line named, the running definition runs on"
else
	bad "reload of a bad file: rc $rc, $(cat "$tmp/reload.err"), small $(pjq small 'p')"
fi

# ---- administrators only ------------------------------------------------------
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$hwpmc" profiles 2>&1)
grep -q "EPERM" <<< "$out" && ok "a non-administrator's 'hwpmc profiles' is refused (EPERM)" || bad "nobody: $out"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$hwpmc" stop "$cur_small" 2>&1)
[[ "$(pjq small 'p["state"]')" == running ]] && ok "a non-administrator cannot stop a profile's session" || bad "nobody stopped small: $out"

# ---- SIGTERM: the last file gets its CLOSELOG ---------------------------------
kill -TERM $dpid
wait $dpid
rc=$?
dpid=
[[ $rc == 0 ]] && ok "SIGTERM: exit 0" || bad "SIGTERM: exit $rc"
last=$(files_of "$sdir" | tail -1)
"$hwpmc" dump --summary "$last" 2>&1 | grep "; complete" > /dev/null && ok "SIGTERM: the last file ends with CLOSELOG" || bad "last file: $("$hwpmc" dump --summary "$last" 2>&1 | tail -1)"

# ---- a full disk: the profile pauses, then resumes ----------------------------
mkdir -p "$tmp/small-fs"
if mount -t tmpfs -o size=4m,mode=0750 hwpmcd-profiles "$tmp/small-fs"; then
	mnt=$tmp/small-fs
	rm -f "$pdir"/*.conf
	cat > "$pdir/full.conf" <<'EOF'
events = cpu-clock
freq = 499
callgraph = fp
rotate_bytes = 256K
retain_bytes = 2M
EOF
	start_daemon "$mnt" "$pdir" "$tmp/daemon2.log" || bad "second daemon did not answer"
	wait_for 30 'state_is full running' || bad "full: $(pjq full 'p')"
	# Leave less than a file's head free: the next write fails with ENOSPC.
	avail=$(df -B1 --output=avail "$mnt" | tail -1)
	fallocate -l $((avail - 48 * 1024)) "$mnt/junk" 2> /dev/null || dd if=/dev/zero of="$mnt/junk" bs=4k count=$(((avail - 48 * 1024) / 4096)) 2> /dev/null
	if wait_for 120 'state_is full paused'; then
		ok "full disk: the profile is paused ($(pjq full 'pf.get("note", "")'))"
	else
		bad "full disk: not paused: $(pjq full 'p')"
	fi
	grep -q "profile full: No space left on device .*paused" "$tmp/daemon2.log" && ok "full disk: said in the journal" || bad "no pause line in the log"
	wait_for 30 '(($(pnum full "pf.get(\"paused_samples\", 0)") > 0))' && ok "paused: samples counted, not written ($(pjq full 'pf["paused_samples"]'))" || bad "no paused samples"
	# what a pause did not write is lost, as status and 'hwpmc profiles' say (read at once:
	# the lost count includes the paused samples of that moment or later)
	pl=$(pjq full 'str(pf["paused_samples"]) + " " + str(st["stats"]["lost"])')
	[[ $pl =~ ^[0-9]+\ [0-9]+$ ]] && (( ${pl% *} > 0 && ${pl#* } >= ${pl% *} )) && ok "paused: its samples count as lost (paused, lost: $pl)" ||
		bad "paused samples not counted as lost: paused, lost: '$pl'"
	bad_files=0
	for f in $(files_of "$mnt/profiles/full"); do
		"$hwpmc" dump --summary "$f" > "$tmp/s.out" 2>&1
		grep -q "malformed\|error" "$tmp/s.out" && { bad_files=$((bad_files + 1)); note "$f: $(tail -1 "$tmp/s.out")"; }
	done
	[[ $bad_files == 0 ]] && ok "full disk: every file on it reads up to its last whole record" || bad "$bad_files files unreadable"
	rm -f "$mnt/junk"
	if wait_for 60 'state_is full running'; then
		ok "space is back: the profile resumed into $(basename "$(pjq full 'pf["file"]')")"
	else
		bad "not resumed: $(pjq full 'p')"
	fi
	grep -q "profile full: resumed" "$tmp/daemon2.log" && ok "resume said in the journal" || bad "no resume line"
	kill -TERM $dpid; wait $dpid; dpid=
	last=$(files_of "$mnt/profiles/full" | tail -1)
	"$hwpmc" dump --summary "$last" 2>&1 | grep "; complete" > /dev/null && ok "the file after the resume is whole" || bad "after resume: $("$hwpmc" dump --summary "$last" 2>&1 | tail -1)"
else
	note "skip: cannot mount a tmpfs here; the full-disk checks did not run"
fi
kill $demopid 2> /dev/null

echo "# $pass passed, $fail failed"
[[ $fail == 0 ]]
