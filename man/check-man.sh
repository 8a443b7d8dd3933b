#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Every man page renders with man -l and groff warns about nothing.
set -uo pipefail
command -v man > /dev/null || { echo "man is not installed: skipping"; exit 77; }
fail=0
for page in "$@"; do
	err=$(MANWIDTH=80 man --warnings=all -l "$page" 2>&1 > /dev/null)
	out=$(MANWIDTH=80 man -l "$page" 2> /dev/null | wc -l)
	if [[ -n "$err" || $out -lt 10 ]]; then
		echo "check-man: $page: $out lines; warnings: $err"
		fail=1
	fi
done
[[ $fail == 0 ]] && echo "check-man: $# pages render without warnings"
exit $fail
