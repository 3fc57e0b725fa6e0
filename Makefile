# externspec developer commands. `make help` lists them.
SHELL := /bin/bash
VENV ?= .venv
# The torch of the environment: requirements-dev.txt's pin unless given (`make setup-torch2.14`).
TORCH ?=
PY := $(VENV)/bin/python
STAMP := $(VENV)/.setup-stamp
IDL := schema/externspec.thrift

.DEFAULT_GOAL := help
.PHONY: help setup setup-torch2.14 generate check-generated check-schema lint typecheck docs test bench demo fuzz clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

setup: $(STAMP) ## create .venv with the pinned tools and install externspec (editable)

# The second supported torch (pyproject.toml's `torch` extra): the same tools beside torch 2.14.1, the
# CUDA build (it runs on the CPU; es.cpp compiles its CUDA path against it). CI runs a subset there.
VENV_TORCH214 := .venv-torch2.14
setup-torch2.14: ## create .venv-torch2.14: the same, with torch 2.14.1
	$(MAKE) setup VENV=$(VENV_TORCH214) TORCH=2.14.1

# Debian packages: the C++ JSON backends (header-only nlohmann = default, simdjson = fast), and
# clang with its sanitizer/libFuzzer runtime for the decoder's and executor's fuzz tests.
CPP_DEB_PACKAGES := nlohmann-json3-dev libsimdjson-dev clang libclang-rt-14-dev

$(STAMP): requirements-dev.txt pyproject.toml
	@missing=$$(for p in $(CPP_DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then apt-get update && apt-get install -y $$missing; fi
	test -x $(PY) || python3 -m venv $(VENV)
	$(if $(TORCH),sed 's/^torch==[^ ]*/torch==$(TORCH)/',cat) requirements-dev.txt > $(VENV)/requirements.txt
	$(PY) -m pip install -q -r $(VENV)/requirements.txt
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

clean: ## remove build caches (keeps .venv)
	rm -rf build site .pytest_cache .mypy_cache .ruff_cache
