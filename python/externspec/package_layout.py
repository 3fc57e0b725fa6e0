"""The layout of an AOTInductor package, read from `include/externspec/torch/package_layout.def`,
the table the C++ loader #includes too (`cpp/csrc/aoti_package/package_layout.cpp`): which members
make a model, where its torchbind objects are, where the schema documents sit. Patterns here are
over full member names (fnmatch, `*` crossing `/`), the top folder being the first `*/`."""

from __future__ import annotations

from ._def_file import TORCH_DEF_DIR, entries

LAYOUT_FILE = TORCH_DEF_DIR / "package_layout.def"


def _read() -> tuple[dict[str, str], dict[str, str], tuple[str, ...], dict[str, str], tuple[tuple[str, str], ...]]:
    folders: dict[str, str] = {}
    files: dict[str, str] = {}
    kernels: list[str] = []
    configs: dict[str, str] = {}
    documents: list[tuple[str, str]] = []
    for where, macro, fields in entries(LAYOUT_FILE):
        if macro == "ES_FOLDER":
            folders[fields[0]] = fields[1]
        elif macro == "ES_MODEL_FILE":
            files[fields[0]] = fields[1]
        elif macro == "ES_MODEL_KERNEL":
            kernels.append(fields[0])
        elif macro == "ES_MODEL_CONFIG":
            configs[fields[0]] = fields[1]
        elif macro == "ES_DOCUMENT":
            documents.append((f"*/{folders[fields[0]]}{fields[1]}", fields[2]))
        else:
            raise ValueError(f"{where}: unknown entry {macro}")
    return folders, files, tuple(kernels), configs, tuple(documents)


# FOLDERS: name -> path inside the top folder; MODEL_FILES: role -> suffix beside the library's stem
# (`library`: `.wrapper.so`); KERNELS: the GPU kernels' suffixes; CONFIGS: role -> name in the
# model's folder; DOCUMENTS: (pattern, schema type name) of the schema documents other than the
# extern-kernel file.
FOLDERS, MODEL_FILES, KERNELS, CONFIGS, DOCUMENTS = _read()


def model_member(role: str) -> str:
    """The pattern of a model's member of `role` (a key of MODEL_FILES), any model, any stem."""
    return f"*/{FOLDERS['models']}*/*{MODEL_FILES[role]}"


def sibling(member: str, role: str, of: str = "spec") -> str:
    """The member of `role` beside `member`, a model's member of role `of`."""
    return member.removesuffix(MODEL_FILES[of]) + MODEL_FILES[role]
