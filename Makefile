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

# Until the daemon lands (issue 3), the demo lists the bundled sample log that
# holds every record type of the format.
demo: bootstrap build
	@echo "== hwpmc dump tests/data/all-types.pmclog"
	@$(BUILD)/src/tools/hwpmc dump tests/data/all-types.pmclog

clean:
	rm -rf $(BUILD) build-asan build.setup.log build.ninja.log build-asan.setup.log build-asan.ninja.log
