# The README's two commands:
#   make demo   installs what is missing, builds, and runs the main job on the built-in default
#   make test   installs what is missing, builds, and runs the test suite (CI runs this)
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: setup configure build demo test test-all test-cuda format clean

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

format:
	@git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' | xargs clang-format -i

clean:
	@rm -rf $(BUILD) $(BUILD).configure.log
