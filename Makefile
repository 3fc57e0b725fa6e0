# externspec developer commands. `make help` lists them.
SHELL := /bin/bash
VENV ?= .venv
# The other supported torch releases (pyproject.toml's `torch` extra), each in an environment of its
# own, `.venv-torch<major.minor>`: the same tools beside that torch (the CUDA builds; they run on the
# CPU, and es.cpp compiles its CUDA path against them). Any target takes one with VENV=
# (`make bench VENV=.venv-torch2.15`); `make setup-torch2.15` creates it.
TORCH_RELEASES := 2.14.1 2.15.0
# The torch of the environment: requirements-dev.txt's pin in .venv, else the release of
# TORCH_RELEASES that a `.venv-torch<major.minor>` is named for (or TORCH=... given).
TORCH ?= $(firstword $(foreach t,$(TORCH_RELEASES),$(if $(filter .venv-torch$(basename $(t)),$(VENV)),$(t))))
PY := $(VENV)/bin/python
STAMP := $(VENV)/.setup-stamp
IDL := schema/externspec.thrift

.DEFAULT_GOAL := help
.PHONY: help setup triton-backend wheel matrix-data matrix-table docs-fresh-env generate check-generated check-schema lint typecheck docs test test-sanitize bench demo fuzz clean gpu-wheels gpu-check gpu-sim

help: ## list the targets
	@grep -E '^[a-z0-9.%-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

setup: $(STAMP) ## create .venv with the pinned tools and install externspec (editable)

# A pattern rule: `make setup-torch2.15` (a release of TORCH_RELEASES by its major.minor).
setup-torch%: ## create .venv-torch% (2.14, 2.15): the same, with that torch (CI runs a subset of the tests there)
	$(MAKE) setup VENV=.venv-torch$*

# Debian packages: CMake (CMakeLists.txt: es.cpp's build and the fuzz harnesses'), the C++ JSON
# backends (header-only nlohmann = default, simdjson = fast), and clang with its sanitizer/libFuzzer
# runtime for the decoder's and executor's fuzz tests; Apache Thrift's compiler and C++ library (with
# the Boost headers its headers include) for tests/thrift/interop/; ccache for the builds below;
# QEMU's user-mode emulator, which runs the stored packages on an emulated CPU without AVX-512
# (tests/torch/test_matrix_isa.py).
CPP_DEB_PACKAGES := cmake nlohmann-json3-dev libsimdjson-dev clang libclang-rt-14-dev \
	thrift-compiler libthrift-dev libboost-dev ccache qemu-user

# Every CMake build these targets run compiles through ccache: es.cpp's source build and the wheel's
# (`make test` builds both, under each torch) compile the same sources with the same flags, so the
# second takes the first's objects (tests/packaging/wheelenv.py builds es.cpp first). ccache keys on
# the compiler's name too, and scikit-build-core hands CMake Python's (g++) where CMake alone picks
# c++: CXX names one compiler for both (make's own default, g++; a CXX of the caller's wins).
export CMAKE_CXX_COMPILER_LAUNCHER ?= ccache
export CXX
export CCACHE_DIR ?= $(or $(EXTERNSPEC_CACHE_DIR),$(CURDIR)/.cache)/ccache

# The editable install maps each package file by its path, so a module added, moved or removed
# redoes it: the list of files is kept beside the stamp and rewritten only when it changes.
PACKAGE_FILES := $(VENV)/.package-files
_ := $(shell mkdir -p $(VENV) && find python/externspec codegen -name '*.py' -not -path '*/__pycache__/*' | sort \
	> $(PACKAGE_FILES).new && { cmp -s $(PACKAGE_FILES).new $(PACKAGE_FILES) && rm $(PACKAGE_FILES).new \
	|| mv $(PACKAGE_FILES).new $(PACKAGE_FILES); })

$(STAMP): requirements-dev.txt requirements-triton.txt requirements-triton-stub.txt requirements-perf-analyzer.txt pyproject.toml $(PACKAGE_FILES)
	@missing=$$(for p in $(CPP_DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then apt-get update && apt-get install -y $$missing; fi
	test -x $(PY) || python3 -m venv $(VENV)
	$(if $(TORCH),sed 's/^torch==[^ ]*/torch==$(TORCH)/',cat) requirements-dev.txt > $(VENV)/requirements.txt
	$(if $(TORCH),PIP_CONSTRAINT=/dev/null )$(PY) -m pip install -q -r $(VENV)/requirements.txt
	$(PY) -m pip install -q --no-deps -r requirements-triton.txt
	$(PY) -m pip install -q --no-deps --upgrade --target $(VENV)/triton-stub -r requirements-triton-stub.txt
	$(PY) -m pip install -q --no-deps --upgrade --target $(VENV)/perf-analyzer -r requirements-perf-analyzer.txt
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $@

# Build isolation off: the wheel is built against the torch of $(VENV), and requires it (torch==X.Y.*).
wheel: $(STAMP) ## a wheel of es.cpp for the torch installed in $(VENV) into dist/ (VENV=.venv-torch2.15 for 2.15)
	CMAKE_BUILD_PARALLEL_LEVEL=2 $(PY) -m pip wheel --no-deps --no-build-isolation -w dist .

generate: $(STAMP) ## regenerate python/externspec/_generated and the C++ header from the IDL
	$(PY) -m externspec.codegen generate --idl $(IDL)

check-generated: $(STAMP) ## fail if generated code differs from what the IDL generates
	$(PY) -m externspec.codegen check --idl $(IDL)

check-schema: $(STAMP) ## fail if the IDL changed without the version bump it requires (vs schema/history/)
	$(PY) -m externspec.codegen.compat --idl $(IDL) --history schema/history

lint: $(STAMP) ## ruff
	$(VENV)/bin/ruff check python codegen tests benchmarks examples

typecheck: $(STAMP) ## mypy on python/, codegen/ and examples/
	$(VENV)/bin/mypy

docs: $(STAMP) ## build docs/ and the API reference (mkdocs.yml) into site/; --strict: broken links fail
	$(VENV)/bin/mkdocs build --strict --site-dir site

# Two workers (the machine has two cores); compiled C++ and AOTInductor models are cached on disk,
# content-hashed and written atomically, so workers share them.
test: $(STAMP) check-generated check-schema ## run the whole test suite (slow tests included), two workers
	$(PY) -m pytest -n 2 tests

# es.cpp (binding, executor, runner) built with ASan+UBSan, no recovery, in a cache folder of its own,
# and the hostile, fuzz-regression, executor-corpus and runner tests run against it with the runtime
# preloaded; a sanitizer report in any process fails it (tests/sanitize/run_sanitize.py; SANITIZE_TESTS=
# runs other tests so). After `make test` in CI: the packages those tests run are cached by then.
SANITIZE_TESTS ?=
test-sanitize: $(STAMP) ## es.cpp under ASan+UBSan: hostile, fuzz-regression, executor-corpus and runner tests, zero reports
	$(PY) tests/sanitize/run_sanitize.py $(SANITIZE_TESTS)

# Under each other supported torch (.venv-torch2.14, .venv-torch2.15): the decoder and executor
# conformance corpora through both executors, packages that torch compiles (the lite-mode zoo, custom
# ops in default mode, weights in a blob, aliased outputs) through es.cpp built with its CUDA path, the
# cross-version matrix and its call layouts, issue 34's table, the runner's extern-output checks, the
# packages of older releases rewritten by `upgrade --name-defaults`, the wheel and the CMake example.
# The packaging tests come first: one worker builds the wheel (CMake) while the other builds es.cpp
# and runs the rest (last, the wheel build kept a worker busy alone for ten minutes). The wheel's tests
# run under 2.13 (`make test`: the CPU build) and 2.15 (the newest, a CUDA build), not under 2.14, a
# CUDA build as 2.15 is: what differs by torch in a wheel is es.cpp compiled against that torch's
# headers, which 2.14's source build is; its wheel and CMake example made its CI step 10:15, not 6:49.
TESTS_TORCH_LEFT_2.14 := tests/packaging
TESTS_TORCH := tests/packaging tests/decoder_cpp/test_conformance.py tests/abi/test_executor_conformance.py \
	tests/abi/test_call_layout.py tests/torch/test_torch_compat.py tests/torch/test_torch_releases.py \
	tests/torch/test_torch_matrix.py tests/torch/test_runtimes.py tests/aoti/test_lite_zoo.py tests/aoti/test_aoti_crosscheck.py \
	tests/aoti/test_runner_*.py tests/aoti/test_cuda.py tests/abi/test_device_rule.py \
	tests/aoti/test_extern_outputs.py tests/torch/test_name_defaults.py tests/torch/test_issue34_table.py
test-torch%: ## the tests of torch %'s packages (2.14, 2.15), es.cpp's CUDA path and (2.15) its wheel (in .venv-torch%)
	$(MAKE) setup-torch$*
	.venv-torch$*/bin/python -m pytest -n 2 $(filter-out $(TESTS_TORCH_LEFT_$*),$(TESTS_TORCH))

# The cross-version matrix's packages (tests/data/matrix/<release>/; docs/torch-compat.md, "The
# cross-version matrix"): each interpreter of MATRIX_PYTHONS, one per supported torch, compiles them into
# its release's folder with the eager inputs and outputs (it needs torch alone, run from this folder; a
# 2.11 or 2.12 one also pydantic, for the tests' own models kept for those releases, matrix.KEPT).
matrix-data: ## compile the cross-version matrix's packages with the torch of each of MATRIX_PYTHONS into tests/data/matrix/
	@[ -n "$(MATRIX_PYTHONS)" ] || { echo "matrix-data: set MATRIX_PYTHONS to one Python per supported torch" >&2; exit 2; }
	for py in $(MATRIX_PYTHONS); do PYTHONPATH=python $$py -m tests.support.matrix compile || exit 1; done

# The documented commands in a fresh environment (tests/support/docs_blocks.py): a new venv with the
# torch of $(VENV) and the wheel `pip wheel --no-build-isolation .` builds (cached under the cache dir by
# the packaging tests, so after `make test` nothing compiles), then every block marked `docs-test`.
docs-fresh-env: $(STAMP) ## run README.md's and docs/'s marked commands and snippets in a fresh venv with the wheel installed
	CMAKE_BUILD_PARALLEL_LEVEL=2 $(PY) -m tests.support.docs_blocks

# docs/torch-compat.md's cross-version table: externspec.runtimes (check-spec --runtimes) over the
# matrix's packages; tests/torch/test_runtimes.py fails when the document differs.
matrix-table: $(STAMP) ## regenerate docs/torch-compat.md's cross-version table from the matrix's packages
	$(PY) -m tests.support.matrix_table --write

# Triton's backend for .pt2 packages (python/externspec/triton/backend/), built once per source change
# against the runtime library es.cpp runs; the last line is the folder for `--backend-directory`.
triton-backend: $(STAMP) ## build libtriton_externspec.so; prints the folder holding externspec/libtriton_externspec.so
	@$(PY) -m externspec.triton

bench: $(STAMP) ## benchmarks: ratio tables against torch and msgspec, measured side by side
	$(PY) benchmarks/run.py

FUZZ_SECONDS ?= 60
fuzz: $(STAMP) ## libFuzzer on the C++ decoder (both backends) and the executor load path, ASan+UBSan, FUZZ_SECONDS each (needs clang, cmake)
	$(PY) tests/fuzz/run_fuzz.py --seconds $(FUZZ_SECONDS)

demo: $(STAMP) ## the main job: real torch artifacts through externspec
	$(PY) examples/demo.py

# The GPU check runs offline on a machine with Python 3.12 and a CUDA torch but no pydantic: its
# wheels (the versions pinned here) are downloaded beforehand into .gpu-wheels/ and carried there.
GPU_WHEELS ?= .gpu-wheels
GPU_PYTHON_VERSION ?= 3.12
# nlohmann_json (headers and CMake package, which es.cpp's CMake build needs) is not on that machine
# either: this machine's Debian copy (relocatable) goes along, under .gpu-wheels/nlohmann_json/.
gpu-wheels: $(STAMP) ## download the wheels gpu-check installs offline (pydantic and its dependencies, cp312), and copy nlohmann_json, into .gpu-wheels/
	mkdir -p $(GPU_WHEELS)/nlohmann_json/include $(GPU_WHEELS)/nlohmann_json/share/cmake
	cp -r /usr/include/nlohmann $(GPU_WHEELS)/nlohmann_json/include/
	cp -r /usr/share/cmake/nlohmann_json $(GPU_WHEELS)/nlohmann_json/share/cmake/
	$(PY) -m pip download -q --no-deps --only-binary=:all: --python-version $(GPU_PYTHON_VERSION) \
		--platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d $(GPU_WHEELS) \
		$$($(PY) -m pip freeze | grep -iE '^(pydantic|pydantic[-_]core|typing[-_]extensions|annotated[-_]types|typing[-_]inspection)==')

gpu-check: ## on a GPU machine, offline: build es.cpp with CUDA, run the CUDA zoo through both runners (tests/gpu/)
	bash tests/gpu/run.sh $(GPU_CHECK_ARGS)

# The GPU machine reproduced on this one (docs/cuda.md, "The GPU machine on the CPU"): its Python
# (3.12) with only torch 2.11.0's CUDA build in a venv of its own (.venv-gpusim; the machine's
# `python3` is such a venv's), pydantic and nlohmann_json only from .gpu-wheels/, then the GPU check
# through run.sh as on that machine, in its dry mode (--device cpu), offline once prepared.
GPU_SIM_VENV ?= .venv-gpusim
GPU_SIM_TORCH ?= 2.11.0
GPU_SIM_BASE_PYTHON ?= $(firstword $(wildcard $(shell pyenv root 2>/dev/null)/versions/$(GPU_PYTHON_VERSION).*/bin/python $(HOME)/.pyenv/versions/$(GPU_PYTHON_VERSION).*/bin/python) $(shell command -v python$(GPU_PYTHON_VERSION)))
GPU_SIM_ARGS ?= --jobs 1 --repeat 5
gpu-sim: gpu-wheels ## the GPU machine on the CPU: Python 3.12 + torch 2.11.0 (CUDA build) alone, then gpu-check's dry mode
	@[ -n "$(GPU_SIM_BASE_PYTHON)" ] || { echo "gpu-sim: no Python $(GPU_PYTHON_VERSION) (pyenv's or on PATH); set GPU_SIM_BASE_PYTHON" >&2; exit 2; }
	[ -f $(GPU_SIM_VENV)/.torch-stamp ] || { rm -rf $(GPU_SIM_VENV) && $(GPU_SIM_BASE_PYTHON) -m venv $(GPU_SIM_VENV) \
		&& $(GPU_SIM_VENV)/bin/python -m pip install -q --no-cache-dir torch==$(GPU_SIM_TORCH) \
		&& touch $(GPU_SIM_VENV)/.torch-stamp; }
	PYTHON=$(CURDIR)/$(GPU_SIM_VENV)/bin/python GPU_VENV=$(GPU_SIM_VENV)-check PIP_NO_INDEX=1 \
		bash tests/gpu/run.sh --device cpu $(GPU_SIM_ARGS)

clean: ## remove build caches (keeps .venv)
	rm -rf build dist site .pytest_cache .mypy_cache .ruff_cache
