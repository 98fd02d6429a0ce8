# The README's two commands:
#   make demo   installs what is missing, builds, and runs the main job on the built-in default
#   make test   installs what is missing, builds, and runs the test suite (CI runs this)
BUILD ?= build
JOBS ?= $(shell nproc)
# One test more than cores: the Slurm test spends its ~100 s mostly waiting for its daemons.
TEST_JOBS ?= $(shell echo $$(( $$(nproc) + 1 )))
CMAKE_ARGS ?=
# CI has no GPU: its build compiles the CUDA kernels for one architecture (sm_90) instead of the
# torch wheel's six. Every kernel still compiles and the emulator tests still run their bodies; the
# other five architectures cost ~2 min of nvcc that no test on a CPU could use. CUDA_ARCHS=… (a
# CMAKE_CUDA_ARCHITECTURES list) chooses elsewhere, and the build dir keeps it; never given, a build
# makes every architecture (CMAKE_ARGS=-DMINRNN_CUDA_ARCHITECTURES= goes back to that).
ifeq ($(CI),true)
CUDA_ARCHS ?= 90
endif
CUDA_ARCH_ARGS = $(if $(CUDA_ARCHS),-DCMAKE_CUDA_ARCHITECTURES="$(CUDA_ARCHS)")

.PHONY: setup configure build install demo test test-all test-cuda test-sanitize test-asan fuzz format clean

setup:
	@bash scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CUDA_ARCH_ARGS) $(CMAKE_ARGS) > $(BUILD).configure.log 2>&1 \
	  || (cat $(BUILD).configure.log; exit 1)
	@ln -sf $(BUILD)/compile_commands.json compile_commands.json

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The package a C++ project of yours finds with find_package(minrnn) (README, "Use a trained policy
# from C++"), the `minrnn` command and the configs, under PREFIX.
PREFIX ?= $(HOME)/.local/minrnn
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

demo: build
	@bash scripts/demo.sh $(BUILD)

# Default suite: everything but the `slow` label (CUDA tests skip themselves without a GPU).
test: build
	@cd $(BUILD) && ctest -LE slow -j $(TEST_JOBS) --output-on-failure --timeout 900

test-all: build
	@cd $(BUILD) && ctest -j $(JOBS) --output-on-failure

test-cuda: build
	@cd $(BUILD) && ctest -L cuda --output-on-failure

# AddressSanitizer + UBSan over our code, in a folder of its own (CUDA off; -O1 with line tables and
# NDEBUG, as LibTorch is built: classes of its headers lay out members under #ifndef NDEBUG — our
# code has no assert() — and RecordFunction's read LibTorch never wrote aborted UBSan, 2026-11-28);
# scripts/sanitizers/ holds the options and the few suppressions, each with its
# reason. `make test-sanitize`: the libraries and their fast suites (io, envs, datasets, the
# compute stack, rl, the fuzz targets), a build a 2-core CI can afford. `make test-asan`: every
# target and every suite (about an hour to build on 2 cores).
SAN_BUILD ?= build-sanitize
SANITIZE_TARGETS ?= test_io test_envs test_datasets test_compute test_rl minrnn_fuzz
SANITIZE_LABELS ?= ^(io|envs|datasets|compute|rl|fuzz)$$
test-sanitize: setup
	@cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
	  -DMINRNN_SANITIZE=ON -DMINRNN_CUDA=OFF $(CMAKE_ARGS) > $(SAN_BUILD).configure.log 2>&1 \
	  || (cat $(SAN_BUILD).configure.log; exit 1)
	@cmake --build $(SAN_BUILD) -j $(JOBS) --target $(SANITIZE_TARGETS)
	@MINRNN_SAN_DIR=$(CURDIR)/scripts/sanitizers . scripts/sanitizers/env.sh && cd $(SAN_BUILD) && ctest -L '$(SANITIZE_LABELS)' -LE slow -j $(JOBS) --output-on-failure --timeout 1800

test-asan:
	@$(MAKE) --no-print-directory test-sanitize SAN_BUILD=build-asan SANITIZE_TARGETS=all SANITIZE_LABELS=.

format:
	@git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' | xargs clang-format -i

clean:
	@rm -rf $(BUILD) $(BUILD).configure.log build-sanitize build-sanitize.configure.log build-asan build-asan.configure.log
