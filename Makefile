# SPDX-License-Identifier: BSD-2-Clause
# Thin wrapper around meson; see README.md.
BUILD := build

.PHONY: all build check demo clean bootstrap

all: build

bootstrap:
	@scripts/bootstrap

$(BUILD)/build.ninja:
	@scripts/bootstrap
	meson setup $(BUILD)

build: $(BUILD)/build.ninja
	ninja -C $(BUILD)

# Installs what is missing, builds with -Werror, runs every suite, then again
# with ASan+UBSan; the last line is "N passed, N failed".
check: bootstrap
	@scripts/check

# Starts hwpmcd on a private socket, records the demo workload system-wide for
# 5 s into demo.pmclog, and reports it (top list, call graph, demo.svg).
demo: bootstrap build
	@BUILD=$(BUILD) scripts/demo

clean:
	rm -rf $(BUILD) build-asan demo.pmclog demo.pmclog.kallsyms demo.svg build.setup.log build.ninja.log build-asan.setup.log build-asan.ninja.log
