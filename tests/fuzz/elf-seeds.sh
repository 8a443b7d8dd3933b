#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds the fuzz-elf seeds into OUT_DIR: tests/fuzz/elf-seed.c compiled with
# several compilers, linkers and unwind-table flags (PIE and not, -O0 with frame
# pointers, .debug_frame only, no .eh_frame_hdr, static (no .eh_frame_hdr unless
# asked for) and static-pie without
# libc, a shared object, LLD's packed layout, stripped copies), each followed by
# the sample it took of itself (see elf-seed.c), plus the hand-made regression
# inputs of tests/fuzz/corpus/elf.  A variant the machine cannot build is skipped
# with a note; the seed is the bare binary if it cannot run.  Touches STAMP last.
# usage: elf-seeds.sh OUT_DIR [STAMP [CC]]
set -euo pipefail
here=$(dirname "$(realpath "$0")")
out=$1 stamp=${2:-} cc=${3:-cc}
src=$here/elf-seed.c
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Quiet flags for every variant: no stack protector (the -nostdlib ones have no
# __stack_chk_fail), no builtins turned into libc calls.
common=(-fno-stack-protector -fno-builtin -w)

# seed NAME OBJECT RUNNER: OBJECT followed by what RUNNER writes; a stripped copy too.
seed() {
	local name=$1 obj=$2 run=$3
	if ! "$run" > "$tmp/$name.cap" 2>/dev/null || [ ! -s "$tmp/$name.cap" ]; then
		echo "elf-seeds: $name: did not run, bare binary" >&2
		: > "$tmp/$name.cap"
	fi
	cat "$obj" "$tmp/$name.cap" > "$out/$name"
	if strip -o "$tmp/$name.stripped" "$obj" 2>/dev/null; then
		cat "$tmp/$name.stripped" "$tmp/$name.cap" > "$out/$name-stripped"
	fi
}

# build NAME COMPILER FLAGS...: a program built from elf-seed.c, seeded as itself.
build() {
	local name=$1 compiler=$2
	shift 2
	if ! "$compiler" "${common[@]}" "$@" "$src" -o "$tmp/$name" 2> "$tmp/$name.log"; then
		echo "elf-seeds: $name: cannot build here, skipped ($(head -1 "$tmp/$name.log"))" >&2
		return 0
	fi
	seed "$name" "$tmp/$name" "$tmp/$name"
}

build gcc-O2 "$cc" -O2
build gcc-O0-fp "$cc" -O0 -fno-omit-frame-pointer
build gcc-debug-frame "$cc" -O1 -g -fno-omit-frame-pointer -fno-asynchronous-unwind-tables \
	-fno-unwind-tables
build gcc-no-eh-frame-hdr "$cc" -O2 -Wl,--no-eh-frame-hdr
build gcc-no-pie "$cc" -O2 -fno-pie -no-pie
build gcc-static "$cc" -O2 -fno-pie -static -nostdlib -DSEED_NOSTDLIB
build gcc-static-pie "$cc" -O2 -fPIE -static-pie -nostdlib -DSEED_NOSTDLIB
build gcc-static-eh-frame-hdr "$cc" -O2 -fno-pie -static -nostdlib -DSEED_NOSTDLIB \
	-Wl,--eh-frame-hdr
if command -v clang > /dev/null && command -v ld.lld > /dev/null; then
	build clang-lld-O2 clang -O2 -fuse-ld=lld
	build clang-lld-no-pie clang -O2 -fno-pie -no-pie -fuse-ld=lld
else
	echo "elf-seeds: clang or ld.lld missing, no LLD layouts" >&2
fi

# A shared object, sampled through a main that calls into it.
if "$cc" "${common[@]}" -O2 -fPIC -shared -DSEED_NO_MAIN "$src" -o "$tmp/libseed.so" \
	2> "$tmp/so.log" &&
	printf 'int seed_run(void);\nint main(void) { return seed_run(); }\n' > "$tmp/main.c" &&
	"$cc" -w "$tmp/main.c" "$tmp/libseed.so" -Wl,-rpath,"$tmp" -o "$tmp/seedmain" 2>> "$tmp/so.log"; then
	seed gcc-shared "$tmp/libseed.so" "$tmp/seedmain"
else
	echo "elf-seeds: gcc-shared: cannot build here, skipped ($(head -1 "$tmp/so.log"))" >&2
fi

# Regression inputs kept in the tree.
if [ -d "$here/corpus/elf" ]; then
	find "$here/corpus/elf" -maxdepth 1 -type f -exec cp {} "$out/" \;
fi
n=$(find "$out" -maxdepth 1 -type f | wc -l)
[ "$n" -gt 0 ] || { echo "elf-seeds: no seed built" >&2; exit 1; }
[ -n "$stamp" ] && echo "$n seeds" > "$stamp"
exit 0
