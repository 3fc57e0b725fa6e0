# externspec developer commands. `make help` lists them.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.setup-stamp
IDL := schema/externspec.thrift

.DEFAULT_GOAL := help
.PHONY: help setup generate check-generated check-schema lint typecheck docs test bench demo fuzz clean gpu-wheels gpu-check

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

setup: $(STAMP) ## create .venv with the pinned tools and install externspec (editable)

# Debian packages: the C++ JSON backends (header-only nlohmann = default, simdjson = fast), and
# clang with its sanitizer/libFuzzer runtime for the decoder's and executor's fuzz tests.
CPP_DEB_PACKAGES := nlohmann-json3-dev libsimdjson-dev clang libclang-rt-14-dev

$(STAMP): requirements-dev.txt pyproject.toml
	@missing=$$(for p in $(CPP_DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then apt-get update && apt-get install -y $$missing; fi
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q -r requirements-dev.txt
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $@

generate: $(STAMP) ## regenerate python/externspec/_generated and the C++ header from the IDL
	$(PY) -m externspec.codegen generate --idl $(IDL)

check-generated: $(STAMP) ## fail if generated code differs from what the IDL generates
	$(PY) -m externspec.codegen check --idl $(IDL)

check-schema: $(STAMP) ## fail if the IDL changed without the version bump it requires (vs schema/history/)
	$(PY) -m externspec.codegen.compat --idl $(IDL) --history schema/history

lint: $(STAMP) ## ruff
	$(VENV)/bin/ruff check python codegen tests benchmarks

typecheck: $(STAMP) ## mypy on python/ and codegen/
	$(VENV)/bin/mypy

docs: $(STAMP) ## build docs/ and the API reference (mkdocs.yml) into site/; --strict: broken links fail
	$(VENV)/bin/mkdocs build --strict --site-dir site

# Two workers (the machine has two cores); compiled C++ and AOTInductor models are cached on disk,
# content-hashed and written atomically, so workers share them.
test: $(STAMP) check-generated check-schema ## run the whole test suite (slow tests included), two workers
	$(PY) -m pytest -n 2 tests

bench: $(STAMP) ## benchmarks: ratio tables against torch and msgspec, measured side by side
	$(PY) benchmarks/run.py

FUZZ_SECONDS ?= 60
fuzz: $(STAMP) ## libFuzzer on the C++ decoder (both backends) and the executor load path, ASan+UBSan, FUZZ_SECONDS each (needs clang)
	$(PY) tests/fuzz/run_fuzz.py --seconds $(FUZZ_SECONDS)

demo: $(STAMP) ## the main job: real torch artifacts through externspec
	$(PY) -m externspec.demo

# The GPU check runs offline on a machine with Python 3.12 and a CUDA torch but no pydantic: its
# wheels (the versions pinned here) are downloaded beforehand into .gpu-wheels/ and carried there.
GPU_WHEELS ?= .gpu-wheels
GPU_PYTHON_VERSION ?= 3.12
gpu-wheels: $(STAMP) ## download the wheels gpu-check installs offline (pydantic and its dependencies, cp312) into .gpu-wheels/
	$(PY) -m pip download -q --no-deps --only-binary=:all: --python-version $(GPU_PYTHON_VERSION) \
		--platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d $(GPU_WHEELS) \
		$$($(PY) -m pip freeze | grep -iE '^(pydantic|pydantic[-_]core|typing[-_]extensions|annotated[-_]types|typing[-_]inspection)==')

gpu-check: ## on a GPU machine, offline: build es.cpp with CUDA, run the CUDA zoo through both runners (tests/gpu/)
	bash tests/gpu/run.sh $(GPU_CHECK_ARGS)

clean: ## remove build caches (keeps .venv)
	rm -rf build site .pytest_cache .mypy_cache .ruff_cache
