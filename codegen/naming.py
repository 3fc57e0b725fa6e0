"""Pre-pass shared by the emitters and codegen.lint: the order types are defined in, which
fields are boxed, and the identifier tables.

Emitters must not decide ordering or naming while rendering; they ask here, and everything that
could make a schema impossible to emit is a codegen.lint finding with its file:line:col first.
"""

from __future__ import annotations

from . import ir

GENERATOR = "externspec.codegen"

# C++20's keywords: no schema name may be one (codegen.lint), so `ident` is the identity on a
# lint-clean schema and only guards emitters called on an unchecked one.
CPP_KEYWORDS = frozenset([
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
    "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr",
    "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast",
    "struct", "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef",
    "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t",
    "while", "xor", "xor_eq"
])

# Methods every generated C++ union has; a member of the same name would shadow one.
CPP_UNION_METHODS = frozenset({"tag", "type", "variant", "Tag", "Variant", "member_names"})


def ident(name: str) -> str:
    """A C++ identifier for a schema name (keywords get a trailing underscore)."""
    return f"{name}_" if name in CPP_KEYWORDS else name


# ---------------------------------------------------------------------------------------------
# Which fields are boxed, and the order of definitions
# ---------------------------------------------------------------------------------------------


def _sccs(schema: ir.Schema) -> dict[str, int]:
    """Strongly connected component id of each type over all references (containers included)."""
    names = [t.name for t in schema.types]
    edges = {t.name: [n for f in getattr(t, "fields", ()) for n in f.type.named_types()] for t in schema.types}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    comp: dict[str, int] = {}
    counter = [0, 0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp[w] = counter[1]
                if w == v:
                    break
            counter[1] += 1

    for n in names:
        if n not in index:
            strong(n)
    return comp


def _recursive(schema: ir.Schema, comp: dict[str, int], a: str, b: str) -> bool:
    """Whether types a and b are in one recursive group (a cycle of references)."""
    if a == b:
        t = schema.type(a)
        return any(a in f.type.named_types() for f in getattr(t, "fields", ()))
    return comp[a] == comp[b]


def boxed_fields(schema: ir.Schema) -> frozenset[tuple[str, str]]:
    """(struct, field) pairs held in a `Box`: struct-typed fields of a struct in its own cycle."""
    comp = _sccs(schema)
    out = set()
    for s in schema.structs:
        if s.kind != "struct":
            continue
        for f in s.fields:
            if f.type.kind == "named":
                target = schema.type(f.type.name)
                if isinstance(target, ir.Struct) and target.kind == "struct" and _recursive(
                        schema, comp, s.name, target.name):
                    out.add((s.name, f.name))
    return frozenset(out)


def value_cycle(schema: ir.Schema) -> tuple[str, ...] | None:
    """A chain of types that hold each other by value (no boxed struct field breaks it), or None.
    C++ cannot define such types; codegen.lint reports it."""
    try:
        definition_order(schema)
    except _ValueCycle as e:
        return e.chain
    return None


class _ValueCycle(Exception):
    def __init__(self, chain: tuple[str, ...]):
        self.chain = chain


def definition_order(schema: ir.Schema) -> tuple[ir.TypeDef, ...]:
    """Types ordered so that every type held by value is defined first; ties keep declaration order.
    Both emitters write their types in this order (C++ needs it; Python reads the same)."""
    boxed = boxed_fields(schema)
    by_name = {t.name: t for t in schema.types}
    order: list[ir.TypeDef] = []
    state: dict[str, int] = {}

    def visit(name: str, chain: tuple[str, ...]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            raise _ValueCycle((*chain, name))
        state[name] = 1
        t = by_name[name]
        if isinstance(t, ir.Struct):
            for f in t.fields:
                if f.type.kind == "named" and (t.name, f.name) not in boxed:
                    visit(f.type.name, (*chain, name))
        state[name] = 2
        order.append(t)

    for t in schema.types:
        visit(t.name, ())
    return tuple(order)


# ---------------------------------------------------------------------------------------------
# Types and literals
# ---------------------------------------------------------------------------------------------


def banner(schema: ir.Schema, comment: str) -> list[str]:
    """The header every generated file carries: @generated, the IDL checksum and version."""
    version = schema.schema_version()
    version_text = f"{version[0]}.{version[1]}" if version else "unversioned"
    source = schema.path.rsplit("/", 1)[-1]
    return [
        f"{comment} @generated by {GENERATOR} from {source}. DO NOT EDIT: run `make generate`.",
        f"{comment} checksum<<{schema.checksum}>> schema_version {version_text}",
    ]
