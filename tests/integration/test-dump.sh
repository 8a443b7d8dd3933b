#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Integration test of `hwpmc dump` as a user runs it: the real binary on real
# files and pipes; checks listings, exit codes and the exact error messages.
# usage: test-dump.sh HWPMC DATA_DIR   (HWPMC_VALGRIND=path runs it under memcheck)
set -uo pipefail
hwpmc_bin=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

hwpmc() {
	if [[ -n "${HWPMC_VALGRIND:-}" ]]; then
		"$HWPMC_VALGRIND" --quiet --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite,indirect "$hwpmc_bin" "$@"
	else
		"$hwpmc_bin" "$@"
	fi
}

ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; }
expect() { # expect NAME WANTED_RC ACTUAL_RC
	if [[ "$2" == "$3" ]]; then ok "$1 (exit $3)"; else bad "$1: exit $3, wanted $2"; fi
}

log=$data/all-types.pmclog
size=$(stat -c %s "$log")

# 1. The listing of the all-types log equals the reviewed golden listing.
hwpmc dump "$log" > "$tmp/out" 2> "$tmp/err"; rc=$?
expect "dump all-types" 0 $rc
if diff -u "$data/all-types.dump" "$tmp/out" > "$tmp/diff"; then ok "listing matches all-types.dump"
else bad "listing differs from all-types.dump:"; cat "$tmp/diff"; fi
if [[ ! -s "$tmp/err" ]]; then ok "no stderr for a complete log"; else bad "stderr: $(cat "$tmp/err")"; fi
types=$(awk '$2 ~ /^[a-z-]+$/ && $3 ~ /^tsc=/ {print $2}' "$tmp/out" | sort -u | wc -l)
if [[ $types == 19 ]]; then ok "all 19 record types listed"; else bad "$types record types listed"; fi

# 2. Standard input, through a pipe, gives the same listing.
cat "$log" | hwpmc dump - > "$tmp/out2" 2>&1; rc=$?
expect "dump - (pipe)" 0 $rc
if cmp -s "$tmp/out" "$tmp/out2"; then ok "pipe listing equals file listing"; else bad "pipe listing differs"; fi

# 3. --json: one valid object per record plus the summary.
hwpmc dump --json "$log" > "$tmp/json" 2> "$tmp/err"; rc=$?
expect "dump --json" 0 $rc
if python3 - "$tmp/json" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
objs = [json.loads(l) for l in lines]
recs, summary = objs[:-1], objs[-1]["summary"]
assert len(recs) == 27 == summary["records"], (len(recs), summary)
assert len({r["type"] for r in recs}) == 19
assert summary["status"] == "complete"
cc = [r for r in recs if r["type"] == "callchain"]
assert cc[0]["pc"] == ["0x555555555149", "0x7ffff7da9d90", "0x555555555075"], cc[0]
assert cc[0]["user"] is True and cc[0]["cpu"] == 3
mi = [r for r in recs if r["type"] == "map-in"]
assert mi[0] == {"offset": mi[0]["offset"], "type": "map-in", "length": 40, "tsc": 1004,
                 "pid": -1, "start": "0x0", "path": "vmlinux"}, mi[0]
assert sum(r["length"] for r in recs) == summary["bytes"]
PY
then ok "json records are valid and complete"; else bad "json check failed"; fi

# 4. --summary prints only the summary line.
out=$(hwpmc dump --summary "$log"); rc=$?
expect "dump --summary" 0 $rc
if [[ "$out" == "summary: 27 records, $size bytes; closelog 1,"*"; complete" ]]; then ok "summary line"
else bad "summary line: $out"; fi

# 5. A torn final record: records before it printed, warning, exit 0.
head -c $((size - 5)) "$log" > "$tmp/torn"
hwpmc dump "$tmp/torn" > "$tmp/out" 2> "$tmp/err"; rc=$?
expect "dump torn log" 0 $rc
n=$(grep -c ' tsc=' "$tmp/out")
if [[ $n == 26 ]]; then ok "26 whole records printed before the torn one"; else bad "$n records printed"; fi
want="hwpmc: warning: $tmp/torn: offset $((size - 16)): torn final record (11 bytes, the log ends inside it); the 26 records before it are whole"
if [[ "$(cat "$tmp/err")" == "$want" ]]; then ok "torn-tail warning"; else bad "torn warning: $(cat "$tmp/err")"; fi

# 6. No CLOSELOG (cut on a record boundary): warning, exit 0.
head -c $((size - 16)) "$log" > "$tmp/open"
hwpmc dump "$tmp/open" > /dev/null 2> "$tmp/err"; rc=$?
expect "dump log without closelog" 0 $rc
if grep -q "ends without a CLOSELOG record" "$tmp/err"; then ok "no-closelog warning"; else bad "no-closelog: $(cat "$tmp/err")"; fi

# 7. Corruption: bad magic in the 4th record (offset 112 + 96 + 40 = 248).
cp "$log" "$tmp/corrupt"
printf '\x00' | dd of="$tmp/corrupt" bs=1 seek=$((248 + 3)) conv=notrunc status=none
hwpmc dump "$tmp/corrupt" > "$tmp/out" 2> "$tmp/err"; rc=$?
expect "dump corrupt log" 1 $rc
want="hwpmc: $tmp/corrupt: offset 248: bad magic 0x00 (expected 0xee): not a pmclog record"
if [[ "$(cat "$tmp/err")" == "$want" ]]; then ok "bad-magic error names the offset"; else bad "error: $(cat "$tmp/err")"; fi
n=$(grep -c ' tsc=' "$tmp/out")
if [[ $n == 3 ]]; then ok "the 3 records before the corrupt one are printed"; else bad "$n records printed"; fi

# 8. Corruption: a CALLCHAIN length that holds half a PC.
off=$(awk '$2 == "callchain" {print $1; exit}' "$data/all-types.dump")
cp "$log" "$tmp/badlen"
printf '\x3c' | dd of="$tmp/badlen" bs=1 seek="$off" conv=notrunc status=none
hwpmc dump "$tmp/badlen" > /dev/null 2> "$tmp/err"; rc=$?
expect "dump log with a bad length" 1 $rc
want="hwpmc: $tmp/badlen: offset $off: CALLCHAIN record of 60 bytes does not hold a whole number of PCs"
if [[ "$(cat "$tmp/err")" == "$want" ]]; then ok "bad-length error"; else bad "error: $(cat "$tmp/err")"; fi

# 9. Unknown type: an error by default, skipped with --lenient.
cp "$log" "$tmp/unknown"
printf '\x63' | dd of="$tmp/unknown" bs=1 seek=$((112 + 2)) conv=notrunc status=none
hwpmc dump "$tmp/unknown" > /dev/null 2> "$tmp/err"; rc=$?
expect "dump log with an unknown type" 1 $rc
if [[ "$(cat "$tmp/err")" == "hwpmc: $tmp/unknown: offset 112: unknown record type 99 (length 96)" ]]; then
	ok "unknown-type error"; else bad "error: $(cat "$tmp/err")"; fi
hwpmc dump --lenient "$tmp/unknown" > /dev/null 2> "$tmp/err"; rc=$?
expect "dump --lenient" 0 $rc
if grep -q "1 records of unknown types were skipped" "$tmp/err"; then ok "lenient skip counted"; else bad "lenient: $(cat "$tmp/err")"; fi

# 10. A V2-era log is recognised.
grep -v '^#' "$data/spec-12.4-v2-callchain.hex" | sed -e 's/^[0-9a-f]*: //' -e 's/  .*//' | xxd -r -p > "$tmp/v2"
hwpmc dump "$tmp/v2" > /dev/null 2> "$tmp/err"; rc=$?
expect "dump V2-era log" 1 $rc
if grep -q "offset 0: this looks like a FreeBSD 11 or older log" "$tmp/err"; then ok "old-format error"; else bad "v2: $(cat "$tmp/err")"; fi

# 11. Random bytes never crash it: exit 0 or 1, never a signal.
for i in 1 2 3 4 5 6 7 8; do
	head -c $((i * 997)) /dev/urandom > "$tmp/rand"
	hwpmc dump "$tmp/rand" > /dev/null 2>&1; rc=$?
	if [[ $rc != 0 && $rc != 1 ]]; then bad "random input $i: exit $rc"; continue 2; fi
done
ok "random inputs give exit 0 or 1"

# 12. Usage and I/O errors.
hwpmc dump > /dev/null 2> "$tmp/err"; rc=$?
expect "dump without FILE" 2 $rc
hwpmc dump "$tmp/does-not-exist" > /dev/null 2> "$tmp/err"; rc=$?
expect "dump of a missing file" 1 $rc
if [[ "$(cat "$tmp/err")" == "hwpmc: $tmp/does-not-exist: No such file or directory" ]]; then ok "missing-file error"
else bad "missing: $(cat "$tmp/err")"; fi
hwpmc dump --bogus "$log" > /dev/null 2>&1; rc=$?
expect "dump --bogus" 2 $rc
hwpmc dump "$log" > /dev/full 2> "$tmp/err"; rc=$?
expect "dump to a full stdout" 1 $rc
if grep -q "standard output: write error" "$tmp/err"; then ok "stdout write error reported"; else bad "full: $(cat "$tmp/err")"; fi
hwpmc dump "$tmp" > /dev/null 2> "$tmp/err"; rc=$?
expect "dump of a directory" 1 $rc
hwpmc dump --help | grep "Exit status" > /dev/null && ok "dump --help explains exit status" || bad "dump --help"
hwpmc nosuchcmd > /dev/null 2>&1; rc=$?
expect "unknown command" 2 $rc
# hwpmc(1) EXIT STATUS, statement by statement: 1 a failure, 2 bad usage.
hwpmc report --no-such-option "$log" > /dev/null 2>&1; rc=$?
expect "report with an unknown option" 2 $rc
(cd "$tmp" && mkdir -p nolog && cd nolog && hwpmc report > /dev/null 2>&1); rc=$?
expect "report without a path and no hwpmc.pmclog here" 2 $rc
head -c 300 "$log" > "$tmp/torn.pmclog"
hwpmc report --top "$tmp/torn.pmclog" > /dev/null 2> "$tmp/err"; rc=$?
expect "report of a torn log" 0 $rc
grep -q "warning" "$tmp/err" && ok "report of a torn log warns" || bad "torn: $(cat "$tmp/err")"
printf 'not a log at all, longer than a header\n' > "$tmp/text.pmclog"
hwpmc report --top "$tmp/text.pmclog" > /dev/null 2>&1; rc=$?
expect "report of a file that is not a pmclog" 1 $rc
hwpmc status --socket "$tmp/no-daemon.sock" > /dev/null 2>&1; rc=$?
expect "status without a daemon on the socket" 1 $rc
: > "$tmp/empty"
hwpmc dump "$tmp/empty" > /dev/null 2> "$tmp/err"; rc=$?
expect "dump of an empty file" 0 $rc
grep -q "empty log" "$tmp/err" && ok "empty-log warning" || bad "empty: $(cat "$tmp/err")"

# hwpmcd's marks are named at their tag word.
hwpmc dump "$data/cgroup-marks.pmclog" > "$tmp/marks" 2>&1
grep -q "userdata=0x48575201 (hwpmcd MAP_IN rule mark (11.8))" "$tmp/marks" &&
	[[ $(grep -c "userdata=0x48575304 (hwpmcd cgroup mark (11.12))" "$tmp/marks") == 6 ]] &&
	ok "dump names hwpmcd's marks at their tag words" || bad "marks: $(grep -m5 userdata "$tmp/marks")"
hwpmc dump "$data/buildid-marks.pmclog" > "$tmp/bmarks" 2>&1
grep -q "(hwpmcd build id mark (11.11))" "$tmp/bmarks" &&
	ok "dump names the build id mark" || bad "no build id mark named"

echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
