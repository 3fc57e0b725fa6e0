"""`python -m externspec.triton`: build the Triton backend (once) and print the folder for
tritonserver's `--backend-directory` as the last line (`make triton-backend`)."""

from . import backend_dir

print(backend_dir())
