# Two entry points do all set-up on a fresh machine:
#   make demo   install what is missing, build, compile the examples, show
#               the IR, verify; on a GPU host also run and time them.
#   make test   install what is missing, build, run every CPU test (CTest),
#               then the same unit tests under ASan/UBSan and the fuzzers
#               (scripts/sanitize.sh).
BUILD ?= build
JOBS  ?= $(shell nproc)

.PHONY: all deps configure build test demo gpu bench python clean

all: build

deps:
	@./scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@JOBS=$(JOBS) ./scripts/sanitize.sh $(BUILD)-san

# The CPU part (purlinc on every example: AST, IR, simulation, CUDA emission)
# first, with only purlinc built; then the CUDA build and the GPU part.
demo: configure
	@cmake --build $(BUILD) -j $(JOBS) --target purlinc
	@./scripts/demo.sh $(BUILD) cpu
	@echo "==> building the runtime, the generated collectives and the GPU programs (nvcc)"
	@cmake --build $(BUILD) -j $(JOBS)
	@./scripts/demo.sh $(BUILD) gpu

# On a GPU host: every GPU test and benchmark in one go (logs to $$OUT or ./gpu-logs).
gpu: build
	@./scripts/gpu-all.sh $(BUILD)/gpu-bin

bench: build
	@./scripts/bench.sh $(BUILD)/gpu-bin

# The Python package with the library beside it (docs/python.md): then
# `pip install ./python` installs both.
python: build
	@cp $(BUILD)/lib/libpurlin.so python/purlin/libpurlin.so
	@echo "python/purlin holds libpurlin.so now: pip install ./python"

clean:
	rm -rf $(BUILD)
