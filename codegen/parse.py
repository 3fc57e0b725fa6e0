"""The Thrift front end: thriftpy2's grammar, plus what its loaded module loses, into the IR.

thriftpy2 builds Python classes, not an AST, and drops four things a code generator needs:
`optional` versus default requiredness, `/** doc */` comments, the declared type of consts and
the annotations on a const's type. We reuse its PLY grammar rules unchanged except for the actions
that keep requiredness, const types and type annotations, read docs and columns from the source
text, then convert to `ir` at once. Nothing outside this module touches thriftpy2 objects.

A const's annotations are written on its type, `const list<string> (members_of = "U") NAME = ...`:
Apache Thrift's grammar has annotations on types but none after a const's value, which thriftpy2
also accepts (the frozen releases in schema/history/ use that form; both are read).
"""

from __future__ import annotations

import hashlib
import itertools
import re
import threading
import types
from pathlib import Path
from typing import Any

from ply import lex, yacc
from thriftpy2.parser import lexer as _lexer
from thriftpy2.parser import parser as _parser
from thriftpy2.parser.exc import ThriftGrammarError, ThriftLexerError, ThriftParserError
from thriftpy2.thrift import TType

from . import ir
from .errors import SchemaError

_BASE_TTYPES = {
    TType.BOOL: "bool",
    TType.BYTE: "byte",
    TType.I16: "i16",
    TType.I32: "i32",
    TType.I64: "i64",
    TType.DOUBLE: "double",
    TType.STRING: "string",
    TType.BINARY: "binary",
}

_counter = itertools.count()
_lock = threading.Lock()


def _p_field_req(p: Any) -> None:
    """field_req : REQUIRED
    | OPTIONAL
    |"""
    p[0] = p[1] if len(p) == 2 else "default"


def _p_field(p: Any) -> None:
    """field : simple_field type_annotations"""
    requiredness = p[1][1]
    p[1][1] = requiredness == "required"  # what thriftpy2's struct builder expects
    p[0] = [*p[1], [*(p[2] or []), ("thrift.requiredness", requiredness)]]


def _p_base_type(p: Any) -> None:
    """base_type : simple_base_type type_annotations"""
    _parser.p_base_type(p)
    p.parser.type_annotations = p[2]


def _p_container_type(p: Any) -> None:
    """container_type : simple_container_type type_annotations"""
    _parser.p_container_type(p)
    p.parser.type_annotations = p[2]


def _p_ref_type(p: Any) -> None:
    """ref_type : IDENTIFIER"""
    _parser.p_ref_type(p)
    p.parser.type_annotations = None


def _p_const(p: Any) -> None:
    """const : CONST field_type IDENTIFIER '=' const_value type_annotations
    | CONST field_type IDENTIFIER '=' const_value type_annotations sep"""
    _parser.p_const(p)
    # The const's type is the last type reduced (its outermost one; a value holds no types).
    annotations = {**dict(p.parser.type_annotations or ()), **dict(p[6] or ())}
    p.parser.const_decls.append((p[3], p[2], p.lineno(3), annotations))


def _build_parser() -> tuple[Any, Any]:
    yacc_ns = {k: getattr(_parser, k) for k in dir(_parser) if k.startswith("p_")}
    yacc_ns.update(p_field_req=_p_field_req, p_field=_p_field, p_const=_p_const, p_base_type=_p_base_type,
                   p_container_type=_p_container_type, p_ref_type=_p_ref_type)
    yacc_ns.update(tokens=_lexer.tokens, literals=_lexer.literals, __file__=_parser.__file__)
    lexer = lex.lex(module=_lexer)
    parser = yacc.yacc(
        module=types.SimpleNamespace(**yacc_ns),
        start="start",
        debug=False,
        write_tables=False,
        errorlog=yacc.NullLogger(),
    )
    parser.const_decls = []
    parser.type_annotations = None
    return lexer, parser


_DOC_RE = re.compile(r"/\*\*(.*?)\*/", re.S)
_LINE_RE = re.compile(r",? at line (\d+)(?: of the file '[^']*')?")
_TOKEN_RE = re.compile(r"'([^']+)'|\b(?:name|type|constant|field) (\w+)")


def _thriftpy2_error(src: _Source, message: str) -> tuple[ir.SourceLoc, str]:
    """Turn thriftpy2's "... at line N" message into a location and a clean message."""
    m = _LINE_RE.search(message)
    line = int(m.group(1)) if m else 1
    text = _LINE_RE.sub("", message).strip()
    token = _TOKEN_RE.search(text)
    return src.loc(line, (token.group(1) or token.group(2)) if token else None), text


def _docs_by_end_line(text: str) -> dict[int, str]:
    """Map the line on which each `/** */` comment ends to its cleaned text."""
    docs = {}
    for m in _DOC_RE.finditer(text):
        end_line = text.count("\n", 0, m.end()) + 1
        lines = [re.sub(r"^\s*\*? ?", "", ln).rstrip() for ln in m.group(1).strip("*").splitlines()]
        while lines and not lines[0]:
            lines.pop(0)
        while lines and not lines[-1]:
            lines.pop()
        docs[end_line] = "\n".join(lines)
    return docs


class _Source:
    """The IDL text, for what thriftpy2 does not record: docs, columns, duplicate names."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.lines = text.splitlines()
        self.docs = _docs_by_end_line(text)

    def doc_before(self, line: int) -> str:
        return self.docs.get(line - 1, "")

    def loc(self, line: int, token: str | None = None) -> ir.SourceLoc:
        col = 1
        if token is not None and 0 < line <= len(self.lines):
            m = re.search(rf"(?<![\w]){re.escape(token)}(?![\w])", self.lines[line - 1])
            if m:
                col = m.start() + 1
        return ir.SourceLoc(self.path, line, col)


def parse_file(path: str | Path, display_path: str | None = None) -> ir.Schema:
    """Parse an IDL file into the IR. Raises `SchemaError` with `file:line:col` locations."""
    text = Path(path).read_text(encoding="utf-8")
    return parse_text(text, display_path or str(path))


def parse_text(text: str, path: str = "<idl>") -> ir.Schema:
    """Parse IDL text into the IR (no include support: the schema is one file by design)."""
    src = _Source(path, text)
    module_name = f"externspec_idl_{next(_counter)}_thrift"
    with _lock:
        lexer, parser = _build_parser()
        try:
            module = _parser.parse_fp(_StringSource(text), module_name, lexer=lexer, parser=parser, enable_cache=False)
        except (ThriftParserError, ThriftGrammarError, ThriftLexerError) as e:
            raise SchemaError([_thriftpy2_error(src, str(e))]) from None
    const_decls = list(parser.const_decls)
    if not hasattr(module, "__thrift_meta__"):  # thriftpy2 builds no metadata for a file without declarations
        raise SchemaError([(src.loc(1), "the IDL declares nothing (an empty file?)")])
    if module.__thrift_meta__.get("includes"):
        raise SchemaError([(src.loc(1), "include is not supported: the schema is a single file")])
    return _to_ir(module, const_decls, src, text)


class _StringSource:
    def __init__(self, text: str):
        self._text = text

    def read(self) -> str:
        return self._text


# The deepest container type an IDL may write (`list<list<...>>`): the schema nests 2 deep; every
# reader of the IR (compat, the emitters) recurses per level, and 1,000 levels overflowed Python's stack.
MAX_TYPE_NESTING = 32


def _type_ref(ttype: Any, loc: ir.SourceLoc, depth: int = 0) -> ir.TypeRef:
    """Convert a thriftpy2 type spec (int, or (ttype, cls_or_spec)) to a TypeRef; `loc` names the
    declaration in a SchemaError for a type nested deeper than MAX_TYPE_NESTING."""
    if depth > MAX_TYPE_NESTING:
        raise SchemaError([(loc, f"the type nests containers more than {MAX_TYPE_NESTING} deep")])
    if isinstance(ttype, int):
        return ir.TypeRef.base(_BASE_TTYPES[ttype])
    kind, arg = ttype
    if kind in (TType.STRUCT, TType.I32) and isinstance(arg, type):
        return ir.TypeRef.named(arg.__name__)
    if kind == TType.LIST:
        return ir.TypeRef.list_of(_type_ref(arg, loc, depth + 1))
    if kind == TType.SET:
        return ir.TypeRef("set", "", (_type_ref(arg, loc, depth + 1),))
    if kind == TType.MAP:
        return ir.TypeRef.map_of(_type_ref(arg[0], loc, depth + 1), _type_ref(arg[1], loc, depth + 1))
    raise TypeError(f"unsupported thrift type spec {ttype!r}")


def _const_value(value: Any) -> ir.ConstValue:
    """Convert a default or const value (thriftpy2 objects included) to a hashable IR value."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple, set)):
        return tuple(_const_value(v) for v in value)
    if isinstance(value, dict):
        return ir.ConstMap(tuple((_const_value(k), _const_value(v)) for k, v in value.items()))
    if hasattr(value, "thrift_spec"):  # a struct literal
        return ir.ConstMap(tuple((name, _const_value(getattr(value, name))) for _, name in
                                 ((s[0], s[1]) for s in value.thrift_spec.values())))
    raise TypeError(f"unsupported constant {value!r}")


def _annotations(d: dict[str, Any] | None, drop: tuple[str, ...] = ()) -> tuple[tuple[str, str], ...]:
    return tuple((k, "" if v is None else str(v)) for k, v in (d or {}).items() if k not in drop)


def _to_ir(module: Any, const_decls: list[tuple[str, Any, int, dict[str, Any]]], src: _Source, text: str) -> ir.Schema:
    meta = module.__thrift_meta__
    types_: list[tuple[int, ir.TypeDef]] = []
    for cls in meta.get("enums", []):
        line = cls.__thrift_lineno__
        values = tuple(
            ir.EnumValue(name, value, src.doc_before(cls.__thrift_item_linenos__[name]),
                         src.loc(cls.__thrift_item_linenos__[name], name))
            for name, value in cls._NAMES_TO_VALUES.items()
        )
        enum = ir.Enum(cls.__name__, values, src.doc_before(line), src.loc(line, cls.__name__),
                       _annotations(cls.__thrift_annotations__))
        types_.append((line, enum))
    for kind in ("structs", "unions"):
        for cls in meta.get(kind, []):
            line = cls.__thrift_lineno__
            fields = []
            for fid, spec in cls.thrift_spec.items():
                name = spec[1]
                fline = cls.__thrift_field_linenos__[name]
                floc = src.loc(fline, f"{fid}:" if fid > 0 else name)
                anns = cls.__thrift_field_annotations__.get(name, {})
                default = dict(cls.default_spec)[name]
                fields.append(ir.Field(
                    id=fid,
                    name=name,
                    type=_type_ref(spec[0] if len(spec) == 3 else (spec[0], spec[2]), floc),
                    requiredness=anns.get("thrift.requiredness", "default"),
                    default=_const_value(default),
                    has_default=default is not None,
                    doc=src.doc_before(fline),
                    loc=floc,
                    annotations=_annotations(anns, drop=("thrift.requiredness",)),
                ))
            struct = ir.Struct(cls.__name__, "struct" if kind == "structs" else "union", tuple(fields),
                               src.doc_before(line), src.loc(line, cls.__name__),
                               _annotations(cls.__thrift_annotations__))
            types_.append((line, struct))
    types_.sort(key=lambda t: t[0])
    consts = tuple(
        ir.Const(name, _type_ref(ttype, src.loc(line, name)), _const_value(getattr(module, name)), src.doc_before(line),
                 src.loc(line, name), _annotations(annotations))
        for name, ttype, line, annotations in const_decls
    )
    file_doc = src.docs.get(min(src.docs), "") if src.docs and min(src.docs) < min(
        (t[0] for t in types_), default=10**9) and not any(src.docs.get(t[0] - 1) == src.docs[min(src.docs)]
                                                            for t in types_) else ""
    return ir.Schema(
        path=src.path,
        checksum=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        namespaces=tuple(sorted(module.__thrift_namespaces__.items())),
        types=tuple(t for _, t in types_),
        consts=consts,
        doc=file_doc,
    )
