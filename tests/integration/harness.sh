# SPDX-License-Identifier: BSD-2-Clause
# Sourced by the integration tests that need the real daemon and perf events:
#   harness_init REASON   skip (exit 77) unless root with perf_event support; make $tmp
#                         (removed at exit, with the daemon $dpid killed), $sock,
#                         HWPMCD_SOCKET, and the pass/fail counters
#   ok TEXT, bad TEXT     count and print one TAP-style line
#   fold NAME < LINES     count a checker's "ok - "/"not ok - " lines as ours, echo the rest
#   wait_for SECONDS 'SHELL CONDITION'   evaluate it every 0.2 s until it holds; 1 if it
#                         never did (a wait for a state, with a deadline, never a sleep)
harness_init() {
	if [[ $(id -u) != 0 ]]; then echo "skip: needs root for $1"; exit 77; fi
	if [[ ! -r /proc/sys/kernel/perf_event_paranoid ]]; then echo "skip: no perf_event support"; exit 77; fi
	tmp=$(mktemp -d)
	sock=$tmp/control
	export HWPMCD_SOCKET=$sock
	pass=0 fail=0 dpid=
	trap harness_cleanup EXIT
}
harness_cleanup() { [[ -n "$dpid" ]] && kill -9 "$dpid" 2>/dev/null; rm -rf "$tmp"; }
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; }
fold() {
	local line
	while IFS= read -r line; do
		case "$line" in
		"ok - "*) ok "$1: ${line#ok - }" ;;
		"not ok - "*) bad "$1: ${line#not ok - }" ;;
		"#"*) echo "$line" ;;
		*) echo "# $line" ;;
		esac
	done
}
wait_for() {
	local deadline=$((SECONDS + $1)); shift
	until eval "$1"; do
		((SECONDS >= deadline)) && return 1
		sleep 0.2
	done
}
