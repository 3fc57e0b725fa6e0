#!/usr/bin/env bash
# `make gpu-check`: the GPU check, offline, on a machine with torch (CUDA build), a CUDA toolkit,
# CMake and ninja. pydantic and its dependencies come from .gpu-wheels/ (`make gpu-wheels`, run
# where there is network), installed with --no-index into a venv that sees the system's torch.
# Arguments go to tests/gpu/check.py (e.g. --device cpu for the dry mode).
set -euo pipefail
cd "$(dirname "$0")/../.."
WHEELS=${GPU_WHEELS:-.gpu-wheels}
VENV=${GPU_VENV:-.gpu-venv}
PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c "import torch" 2>/dev/null; then
  echo "gpu-check: $PYTHON cannot import torch; set PYTHON to the interpreter that has it" >&2
  exit 2
fi
if "$PYTHON" -c "import pydantic" 2>/dev/null; then
  VENV_PYTHON=$PYTHON  # it has everything already (e.g. the dry mode in .venv)
else
  if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
    # The new venv sees $PYTHON's site-packages (torch) through a .pth: `venv --system-site-packages`
    # would give it the base interpreter's instead when $PYTHON is itself a venv's (the GPU machine's
    # python3). addsitedir also runs the .pth files found there, as $PYTHON's own start-up does.
    "$PYTHON" - "$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" <<'PY'
import site, sys
from pathlib import Path
dirs = [d for d in site.getsitepackages() if Path(d).is_dir()]
Path(sys.argv[1], "gpu-check-torch.pth").write_text(
    "".join(f"import site; site.addsitedir({d!r})\n" for d in dirs))
PY
  fi
  VENV_PYTHON=$VENV/bin/python
fi
if ! "$VENV_PYTHON" -c "import pydantic" 2>/dev/null; then
  if ! ls "$WHEELS"/pydantic-*.whl >/dev/null 2>&1; then
    echo "gpu-check: no pydantic here and no wheels in $WHEELS/: run 'make gpu-wheels' where there is network" >&2
    exit 2
  fi
  "$VENV_PYTHON" -m pip install -q --no-index --find-links "$WHEELS" \
    pydantic pydantic-core typing-extensions annotated-types typing-inspection
fi
# es.cpp's CMake build finds nlohmann_json there when the machine has none (make gpu-wheels copies it).
if [ -d "$WHEELS/nlohmann_json" ]; then
  export CMAKE_PREFIX_PATH="$PWD/$WHEELS/nlohmann_json${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
fi
export PYTHONPATH="$PWD/python:$PWD${PYTHONPATH:+:$PYTHONPATH}"
export EXTERNSPEC_CACHE_DIR=${EXTERNSPEC_CACHE_DIR:-$PWD/.cache}
export MAX_JOBS=${MAX_JOBS:-$(nproc)}
exec "$VENV_PYTHON" -m tests.gpu.check "$@"
