#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A libFuzzer run of a harness, seeded from the test data and/or a corpus
# directory; fails on any crash, sanitizer report or broken invariant, and
# prints the executions and coverage.
# usage: smoke.sh FUZZER DATA_DIR|- SECONDS [CORPUS_DIR|- [DICT]]
#   DATA_DIR    seeds: its *.pmclog files, and its *.hex golden files as bytes
#   CORPUS_DIR  seeds: every file in it (tests/fuzz/corpus/NAME)
#   DICT        a libFuzzer dictionary (-dict=)
# The work directory is a temporary one, removed at the end, unless $FUZZ_WORK
# names one: then it is kept (make fuzz), its corpus/ grows across runs, and a
# crashing input stays in it as crash-*.
set -euo pipefail
fuzzer=$(realpath "$1") secs=$3
data=${2:--} seeds=${4:--} dict=${5:-}
if [ -n "${FUZZ_WORK:-}" ]; then
	mkdir -p "$FUZZ_WORK"
	work=$(realpath "$FUZZ_WORK")
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/corpus"
if [ "$data" != - ]; then
	data=$(realpath "$data")
	for f in "$data"/*.pmclog; do
		[ -e "$f" ] && cp "$f" "$work/corpus/"
	done
	# The hex golden files, as bytes.
	for f in "$data"/*.hex; do
		[ -e "$f" ] || continue
		grep -v '^#' "$f" | sed -e 's/^[0-9a-f]*: //' -e 's/  .*//' | xxd -r -p > "$work/corpus/$(basename "$f" .hex)"
	done
fi
if [ "$seeds" != - ]; then
	find "$seeds" -maxdepth 1 -type f -exec cp {} "$work/corpus/" \;
fi
args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
[ -n "$dict" ] && args+=(-dict="$(realpath "$dict")")
cd "$work"
if ! "$fuzzer" "${args[@]}" corpus > fuzz.log 2>&1; then
	tail -60 fuzz.log
	echo "fuzz: $(basename "$fuzzer"): FAILED (crash or sanitizer report above)"
	[ -n "${FUZZ_WORK:-}" ] && echo "fuzz: the input: $(ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* 2>/dev/null | tr '\n' ' ')"
	exit 1
fi
runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 \2/p' fuzz.log)
cov=$(grep -o 'cov: [0-9]*' fuzz.log | tail -1)
ft=$(grep -o 'ft: [0-9]*' fuzz.log | tail -1)
echo "fuzz: $(basename "$fuzzer"): ${runs% *} executions in ${runs#* } s, $cov, $ft, corpus $(ls corpus | wc -l) inputs, no crash"
