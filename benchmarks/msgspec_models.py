"""msgspec Structs for the same IDL, built from the IR: the "practical limit" baseline.

docs/performance.md sets the Python decode target against msgspec's typed decode. These structs enforce
what the generated pydantic models enforce on the benchmark document: types, required fields,
and unions with exactly one member (forbid unknown members, a check in __post_init__).
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

from externspec.codegen import ir, load_schema

IDL = Path(__file__).resolve().parents[1] / "schema/externspec.thrift"

_BASE = {"bool": "bool", "byte": "int", "i16": "int", "i32": "int", "i64": "int", "double": "float",
         "string": "str"}


def _ann(t: ir.TypeRef) -> str:
    if t.kind == "base":
        return _BASE[t.name]
    if t.kind == "named":
        return t.name
    if t.kind in ("list", "set"):
        return f"list[{_ann(t.args[0])}]"
    return f"dict[{_ann(t.args[0])}, {_ann(t.args[1])}]"


def _source(schema: ir.Schema) -> str:
    out = ["from __future__ import annotations", "import enum", "import msgspec", "from typing import Optional", "",
           "def _one(self):",
           "    if sum(getattr(self, f) is not None for f in self.__struct_fields__) != 1:",
           "        raise ValueError(f'{type(self).__name__}: exactly one member')", ""]
    for t in schema.types:
        if isinstance(t, ir.Enum):
            out.append(f"class {t.name}(enum.IntEnum):")
            out += [f"    {v.name} = {v.value}" for v in t.values]
            continue
        if t.kind == "union":
            out.append(f"class {t.name}(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):")
            out += [f"    {f.name}: Optional[{_ann(f.type)}] = None" for f in t.fields]
            out.append("    __post_init__ = _one")
            continue
        out.append(f"class {t.name}(msgspec.Struct):")
        required = [f for f in t.fields if not f.is_optional and not f.has_default]
        rest = [f for f in t.fields if f.is_optional or f.has_default]
        out += [f"    {f.name}: {_ann(f.type)}" for f in required]
        for f in rest:
            if f.is_optional:
                out.append(f"    {f.name}: Optional[{_ann(f.type)}] = None")
            elif f.type.kind in ("list", "map", "set"):
                factory = "dict" if f.type.kind == "map" else "list"
                out.append(f"    {f.name}: {_ann(f.type)} = msgspec.field(default_factory={factory})")
            else:
                value = f.default if not isinstance(f.default, str) else repr(f.default)
                out.append(f"    {f.name}: {_ann(f.type)} = {value}")
        if not t.fields:
            out.append("    pass")
    return "\n".join(out) + "\n"


def build() -> types.ModuleType:
    module = types.ModuleType("externspec_bench_msgspec_models")
    sys.modules[module.__name__] = module
    exec(compile(_source(load_schema(str(IDL))), module.__name__, "exec"), module.__dict__)
    return module
