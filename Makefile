# The README's two commands:
#   make demo   installs what is missing, builds, and runs the main job on the built-in default
#   make test   installs what is missing, builds, and runs the test suite (CI runs this)
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: setup configure build demo test test-all test-cuda test-asan fuzz format clean

setup:
	@bash scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) > $(BUILD).configure.log 2>&1 \
	  || (cat $(BUILD).configure.log; exit 1)
	@ln -sf $(BUILD)/compile_commands.json compile_commands.json

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@bash scripts/demo.sh $(BUILD)

# Default suite: everything but the `slow` label (CUDA tests skip themselves without a GPU).
test: build
	@cd $(BUILD) && ctest -LE slow -j $(JOBS) --output-on-failure --timeout 900

test-all: build
	@cd $(BUILD) && ctest -j $(JOBS) --output-on-failure

test-cuda: build
	@cd $(BUILD) && ctest -L cuda --output-on-failure

# The suite built with AddressSanitizer + UBSan in its own folder (CUDA off; -O1 with line tables and
# assertions on). scripts/sanitizers/ holds the options and the few suppressions, each with its reason.
ASAN_BUILD ?= build-asan
test-asan: setup
	@cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
	  -DMINRNN_SANITIZE=ON -DMINRNN_CUDA=OFF $(CMAKE_ARGS) > $(ASAN_BUILD).configure.log 2>&1 \
	  || (cat $(ASAN_BUILD).configure.log; exit 1)
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@MINRNN_SAN_DIR=$(CURDIR)/scripts/sanitizers . scripts/sanitizers/env.sh && cd $(ASAN_BUILD) && ctest -LE slow -j $(JOBS) --output-on-failure --timeout 1800

format:
	@git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' | xargs clang-format -i

clean:
	@rm -rf $(BUILD) $(BUILD).configure.log $(ASAN_BUILD) $(ASAN_BUILD).configure.log
