# SPDX-License-Identifier: BSD-2-Clause
# Thin wrapper around meson; see README.md.
BUILD := build

.PHONY: all build check demo fuzz clean bootstrap

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

# Builds the libFuzzer harnesses in $(BUILD) and runs each for FUZZ_SECONDS in
# $(BUILD)/fuzz/NAME, seeded from tests/fuzz/corpus/NAME (or the test data; elf and
# debuglink: the seeds tests/fuzz/NAME-seeds.sh builds); the corpus grows there, not in the
# repository.  Fails if any harness crashed (its input is kept as
# $(BUILD)/fuzz/NAME/crash-*).
FUZZ_SECONDS ?= 600
FUZZ_HARNESSES ?= reader report ctl config event profile elf debuglink jitmap
fuzz: build
	@failed=0; for h in $(FUZZ_HARNESSES); do \
		case $$h in reader|report) seed="tests/data -"; dict= ;; \
			elf|debuglink) ninja -C $(BUILD) tests/fuzz/$$h-seeds.stamp > /dev/null; \
				seed="- $(BUILD)/tests/fuzz/$$h-seeds"; dict=tests/fuzz/$$h.dict ;; \
			*) seed="- tests/fuzz/corpus/$$h"; dict=tests/fuzz/$$h.dict ;; esac; \
		[ -f "$$dict" ] || dict=; \
		set -- $$seed; \
		FUZZ_WORK=$(BUILD)/fuzz/$$h tests/fuzz/smoke.sh $(BUILD)/tests/fuzz/fuzz-$$h \
			$$1 $(FUZZ_SECONDS) $$2 $$dict || failed=$$((failed + 1)); \
	done; \
	echo "fuzz: $$failed of $(words $(FUZZ_HARNESSES)) harnesses failed"; [ $$failed = 0 ]

clean:
	rm -rf $(BUILD) build-asan demo.pmclog demo.pmclog.kallsyms demo.pmclog.vdso demo.svg build.setup.log build.ninja.log build-asan.setup.log build-asan.ninja.log
