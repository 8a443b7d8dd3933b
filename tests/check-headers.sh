#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Every public header compiles alone, in strict C11 with -pedantic -Werror.
set -uo pipefail
root=$1 cc=$2
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for h in "$root"/include/hwpmcd/*.h; do
	name=$(basename "$h")
	printf '#include "hwpmcd/%s"\n#include "hwpmcd/%s"\nint main(void) { return 0; }\n' "$name" "$name" > "$tmp/t.c"
	if ! "$cc" -std=c11 -pedantic -Wall -Wextra -Werror -I"$root/include" -c "$tmp/t.c" -o "$tmp/t.o" 2> "$tmp/err"; then
		echo "check-headers: $name does not compile alone (included twice):"
		cat "$tmp/err"
		fail=1
	fi
done
[[ $fail == 0 ]] && echo "check-headers: $(ls "$root"/include/hwpmcd/*.h | wc -l) headers compile alone under -std=c11 -pedantic -Werror"
exit $fail
