"""Source code split at top-level definitions: functions, classes and their kin.

Python is parsed with the standard library's ``ast``; the other languages
(JavaScript, TypeScript, Java, Go, Rust, C, C++) with tree-sitter. Each top-level
definition is one piece, together with its decorators or attributes and the comment
lines directly above it (no blank line in between). What lies between definitions
(module docstring, imports, constants, loose statements) forms pieces of its own.
With ``merge_small`` consecutive pieces are merged while they fit the size limit.

A definition over the limit is split further: a class (or interface, impl block,
namespace...) by its methods, anything else recursively at blank lines, then lines, then
words. Metadata: ``language``, ``kind`` (``function``, ``class``, ``method``, ``module
code``... or ``mixed`` for merged pieces), ``symbols`` (names defined in the chunk,
``Class.method`` for methods) and ``symbol`` when there is exactly one.

Grammars never download at run time: each comes from its own wheel
(``tree-sitter-javascript``, ``tree-sitter-go``, ...), all project dependencies.
(``tree-sitter-language-pack`` is not used: it downloads grammars on first use.) Without
a grammar, the code is cut before lines that start a definition in that language
(``function``, ``class``, ``func``, ``fn``, ``public``...) and the metadata says so.

Code that does not parse (a Python ``SyntaxError``, tree-sitter errors at top level) is
split recursively, with a ``note`` giving the reason; it never raises.

``language="auto"`` guesses from the content: a handful of telltale patterns per
language (``def name(...):``, ``package main``, ``fn name``, ``#include``...) are
counted over the first 20,000 characters and the language with the most hits wins
(TypeScript over JavaScript, and C++ over C, when one of their own patterns is seen).
With no hit at all the text is split recursively with a note.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..engine.sections import (
    BLANK_LINES,
    LINES,
    WORDS,
    PatternCuts,
    SpanSplitter,
    line_starts,
)
from ..engine.spans import strip_span
from ..model import Piece
from ..params import Param, Strategy, overlap_below_size, overlap_param, size_param, unit_param
from ..units import Sizer

LANGUAGES = ("auto", "python", "javascript", "typescript", "java", "go", "rust", "c", "cpp")

# --- language detection ------------------------------------------------------------

_HINTS: dict[str, tuple[str, ...]] = {
    "python": (
        r"^[ \t]*(?:async[ \t]+)?def[ \t]+\w+[ \t]*\(.*\)[^:\n]*:[ \t]*(?:#.*)?$",
        r"^[ \t]*class[ \t]+\w+[ \t]*(?:\([^)\n]*\))?[ \t]*:[ \t]*$",
        r"^(?:from[ \t]+[\w.]+[ \t]+)?import[ \t]+[\w.]+(?:[ \t]+as[ \t]+\w+)?[ \t]*$",
        r"^if __name__ == ['\"]__main__['\"]:",
        r"\bself\.\w+",
    ),
    "javascript": (
        r"^[ \t]*(?:export[ \t]+(?:default[ \t]+)?)?(?:async[ \t]+)?function\b",
        r"\b(?:const|let|var)[ \t]+\w+[ \t]*=",
        r"=>",
        r"\brequire\(['\"]",
        r"\bconsole\.log\(",
        r"\bmodule\.exports\b",
    ),
    "typescript": (
        r":[ \t]*(?:string|number|boolean|any|void|unknown)\b",
        r"^[ \t]*(?:export[ \t]+)?interface[ \t]+\w+",
        r"^[ \t]*(?:export[ \t]+)?type[ \t]+\w+[ \t]*(?:<[^>\n]*>)?[ \t]*=",
        r"\b(?:public|private|readonly)[ \t]+\w+[ \t]*[:(]",
    ),
    "java": (
        r"^[ \t]*(?:public|private|protected)[ \t]+(?:static[ \t]+)?(?:final[ \t]+)?"
        r"(?:class|interface|enum|record|void|[\w<>\[\], ]+[ \t]+\w+[ \t]*\()",
        r"^import[ \t]+java\.",
        r"\bSystem\.out\.",
        r"^package[ \t]+[\w.]+;",
        r"@Override\b",
    ),
    "go": (
        r"^package[ \t]+\w+[ \t]*$",
        r"^func[ \t]",
        r":=",
        r"^import[ \t]+\($",
        r"\bfmt\.\w+\(",
    ),
    "rust": (
        r"^[ \t]*(?:pub(?:\([\w:]+\))?[ \t]+)?(?:async[ \t]+)?fn[ \t]+\w+",
        r"\blet[ \t]+mut\b",
        r"^use[ \t]+\w+(?:::\w+)+",
        r"^[ \t]*impl\b",
        r"^[ \t]*#\[\w+",
        r"\b\w+!\(",
    ),
    "c": (
        r"^#include[ \t]*<(?:stdio|stdlib|string|stdint|unistd)\.h>",
        r"\bprintf\(",
        r"\bmalloc\(",
        r"^(?:static[ \t]+)?(?:int|void|char|double|float|long)[ \t*]+\w+[ \t]*\(",
        r"^#define[ \t]",
    ),
    "cpp": (
        r"^#include[ \t]*<(?:iostream|vector|string|map|memory|algorithm)>",
        r"\bstd::",
        r"^[ \t]*template[ \t]*<",
        r"^[ \t]*namespace[ \t]+\w+",
        r"\b\w+::\w+[ \t]*\(",
    ),
}
_HINT_RES = {lang: [re.compile(p, re.M) for p in pats] for lang, pats in _HINTS.items()}
#: A superset language wins over its base when one of its own hints is seen.
_SUPERSETS = {"typescript": "javascript", "cpp": "c"}


def detect_language(text: str) -> str | None:
    """Guess the language of ``text`` (see the module docstring), or ``None``."""
    sample = text[:20_000]
    hits = {lang: sum(len(r.findall(sample)) for r in res) for lang, res in _HINT_RES.items()}
    scores = dict(hits)
    for superset, base in _SUPERSETS.items():
        if hits[superset]:
            scores[superset] += hits[base]
    best = max(scores, key=lambda lang: scores[lang])  # ties: earliest in _HINTS
    return best if scores[best] else None


# --- units: the pieces a container is made of --------------------------------------


@dataclass
class Unit:
    """A span of a container: a definition, or code between definitions."""

    start: int
    end: int
    meta: dict[str, Any]
    members: Callable[[], list[Unit]] | None = None
    size: int = 0


@dataclass(frozen=True)
class Definition:
    """A definition found by a parser; ``members`` lists the units of its body."""

    start: int
    end: int
    kind: str
    symbol: str | None
    members: Callable[[], list[Unit]] | None = None


def unit_meta(language: str, kind: str, symbol: str | None) -> dict[str, Any]:
    """Metadata of one unit: ``language``, ``kind``, ``symbols`` and maybe ``symbol``."""
    meta: dict[str, Any] = {
        "language": language,
        "kind": kind,
        "symbols": [symbol] if symbol else [],
    }
    if symbol:
        meta["symbol"] = symbol
    return meta


def fill_gaps(
    text: str, lo: int, hi: int, defs: list[Definition], language: str, gap_meta: dict[str, Any]
) -> list[Unit]:
    """Units covering ``[lo, hi)``: the definitions, and the code between them.

    Code between definitions without a single word character (a closing ``}`` or
    ``};``) stays with the definition before it. Overlapping definitions (which a
    consistent parse never gives) are dropped.
    """
    units: list[Unit] = []
    at = lo
    for d in defs:
        if d.start < at or d.end > hi or d.end <= d.start:
            continue
        _add_gap(text, at, d.start, units, gap_meta)
        start, end = strip_span(text, d.start, d.end)
        units.append(Unit(start, end, unit_meta(language, d.kind, d.symbol), d.members))
        at = d.end
    _add_gap(text, at, hi, units, gap_meta)
    return units


_WORD = re.compile(r"\w")


def _add_gap(text: str, start: int, end: int, units: list[Unit], meta: dict[str, Any]) -> None:
    start, end = strip_span(text, start, end)
    if end <= start:
        return
    if units and not _WORD.search(text, start, end):
        units[-1].end = end
    else:
        units.append(Unit(start, end, dict(meta)))


def merged_meta(units: list[Unit]) -> dict[str, Any]:
    """Metadata of a run of units merged into one chunk."""
    symbols: list[str] = []
    kinds: list[str] = []
    for u in units:
        symbols.extend(s for s in u.meta.get("symbols", ()) if s not in symbols)
        if u.meta["kind"] not in kinds:
            kinds.append(u.meta["kind"])
    meta: dict[str, Any] = {
        "language": units[0].meta["language"],
        "kind": kinds[0] if len(kinds) == 1 else "mixed",
        "symbols": symbols,
        "boundary": "definition",
    }
    if len(symbols) == 1:
        meta["symbol"] = symbols[0]
    return meta


class Emitter:
    """Turns units into pieces: merge small ones, split big ones by members or lines."""

    def __init__(self, splitter: SpanSplitter, merge_small: bool) -> None:
        self.splitter = splitter
        self.merge = merge_small

    def pieces(self, units: list[Unit]) -> Iterator[Piece]:
        measure = self.splitter.measure
        for u in units:
            u.size = measure(u.start, u.end)
        spans = [(u.start, u.end, u.size) for u in units]
        if self.merge:
            groups = self.splitter.group(spans)
        else:
            groups = [(k, k, s[2]) for k, s in enumerate(spans)]
        for first, last, total in groups:
            if first != last:
                group = units[first : last + 1]
                yield Piece(group[0].start, group[-1].end, merged_meta(group), total)
                continue
            yield from self._one(units[first])

    def _one(self, u: Unit) -> Iterator[Piece]:
        if u.size <= self.splitter.size:
            yield Piece(u.start, u.end, {**u.meta, "boundary": "definition"}, u.size)
            return
        members = u.members() if u.members is not None else []
        if members and members[-1].end < u.end:  # a closing "}" kept with the unit
            members[-1].end = u.end
        if len(members) > 1:
            yield from self.pieces(members)
        else:
            yield from self.splitter.split(u.start, u.end, u.meta)


# --- Python, with ast ----------------------------------------------------------------

_PY_COMMENT = re.compile(r"[ \t]*#")


class PythonLayout:
    """Line arithmetic and definition units for Python source."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = line_starts(text)

    def line_start(self, lineno: int) -> int:
        """Offset of 1-based line ``lineno``."""
        return self.starts[min(lineno, len(self.starts)) - 1]

    def line_end(self, lineno: int) -> int:
        """Offset just before the line break ending 1-based line ``lineno``."""
        end = self.starts[lineno] if lineno < len(self.starts) else len(self.text)
        while end > self.line_start(lineno) and self.text[end - 1] in "\r\n":
            end -= 1
        return end

    def _with_comments(self, lineno: int, floor: int) -> int:
        """Start of line ``lineno``, moved up over comment lines directly above it."""
        while lineno > 1 and self.line_start(lineno - 1) >= floor:
            if not _PY_COMMENT.match(self.text, self.line_start(lineno - 1)):
                break
            lineno -= 1
        return self.line_start(lineno)

    def units(self, body: list[ast.stmt], lo: int, hi: int, prefix: str, gap: dict) -> list[Unit]:
        """Units of a module or class ``body`` spanning ``[lo, hi)``."""
        defs: list[Definition] = []
        floor = lo
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)])
                start = max(self._with_comments(first, floor), floor)
                end = self.line_end(stmt.end_lineno or stmt.lineno)
                defs.append(self._definition(stmt, start, end, prefix))
            floor = self.line_end(stmt.end_lineno or stmt.lineno)
        return fill_gaps(self.text, lo, hi, defs, "python", gap)

    def _definition(self, stmt: ast.stmt, start: int, end: int, prefix: str) -> Definition:
        name = prefix + stmt.name  # type: ignore[attr-defined]
        if isinstance(stmt, ast.ClassDef):
            gap = unit_meta("python", "class", name)

            def members() -> list[Unit]:
                return self.units(stmt.body, start, end, name + ".", gap)

            return Definition(start, end, "class", name, members)
        kind = "method" if prefix else "function"
        if isinstance(stmt, ast.AsyncFunctionDef):
            kind = "async " + kind
        return Definition(start, end, kind, name)


def python_units(text: str) -> list[Unit]:
    """Top-level units of Python source; raises ``SyntaxError`` or ``ValueError``."""
    tree = ast.parse(text)
    layout = PythonLayout(text)
    return layout.units(tree.body, 0, len(text), "", unit_meta("python", "module code", None))


# --- other languages, with tree-sitter -----------------------------------------------

_GRAMMAR_MODULES = {
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "java": ("tree_sitter_java", "language"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
}


@lru_cache(maxsize=16)
def grammar(language: str) -> Any | None:
    """The tree-sitter ``Language`` for ``language``, or ``None``; never downloads."""
    try:
        from tree_sitter import Language
    except ImportError:
        return None
    module_name, function = _GRAMMAR_MODULES[language]
    try:
        return Language(getattr(importlib.import_module(module_name), function)())
    except Exception:  # not installed, or built for another tree-sitter ABI
        return None


_TS_KINDS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "function_definition": "function",
    "function_item": "function",
    "method_declaration": "method",
    "method_definition": "method",
    "constructor_declaration": "constructor",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "class_specifier": "class",
    "interface_declaration": "interface",
    "annotation_type_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "record",
    "type_alias_declaration": "type",
    "type_declaration": "type",
    "type_definition": "type",
    "struct_item": "struct",
    "struct_specifier": "struct",
    "union_specifier": "union",
    "enum_item": "enum",
    "enum_specifier": "enum",
    "trait_item": "trait",
    "impl_item": "impl",
    "mod_item": "module",
    "macro_definition": "macro",
    "namespace_definition": "namespace",
    "internal_module": "namespace",
}
#: Definitions whose body holds members worth splitting on.
_CONTAINERS = {"class", "interface", "enum", "record", "struct", "trait", "impl", "module"}
_CONTAINERS |= {"namespace"}
#: Nodes that may wrap a definition (``export``, ``template <...>``, ``declare``...).
_WRAPPERS = {
    "export_statement",
    "template_declaration",
    "ambient_declaration",
    "expression_statement",
    "decorated_definition",
}
_FUNCTION_VALUES = {
    "arrow_function",
    "function_expression",
    "function",
    "generator_function",
    "class",
}
_LEADING = {"comment", "line_comment", "block_comment", "attribute_item", "decorator"}
_NAME_TYPES = {
    "identifier",
    "field_identifier",
    "type_identifier",
    "qualified_identifier",
    "destructor_name",
    "operator_name",
}


class TreeLayout:
    """Definition units of a tree-sitter parse, with character offsets."""

    def __init__(self, text: str, data: bytes, language: str) -> None:
        self.text = text
        self.data = data
        self.language = language
        if len(data) == len(text):
            self._chars: list[int] | None = None
        else:  # byte offset -> character offset, for non-ASCII sources
            chars, k = [0] * (len(data) + 1), 0
            for i, byte in enumerate(data):
                if byte & 0xC0 != 0x80:
                    k += 1
                chars[i + 1] = k
            self._chars = chars

    def char(self, byte: int) -> int:
        return byte if self._chars is None else self._chars[byte]

    def node_text(self, node: Any) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def name(self, node: Any) -> str | None:
        """The name a definition node declares, when it has one."""
        if node.type == "impl_item":
            typ, trait = node.child_by_field_name("type"), node.child_by_field_name("trait")
            if typ is None:
                return None
            return (
                f"{self.node_text(trait)} for {self.node_text(typ)}"
                if trait
                else self.node_text(typ)
            )
        found = node.child_by_field_name("name")
        receiver = node.child_by_field_name("receiver")  # Go methods: (s *Stack) Push
        if found is not None and receiver is not None:
            owner = _first_of_type(receiver, "type_identifier")
            if owner is not None:
                return f"{self.node_text(owner)}.{self.node_text(found)}"
        if found is not None:
            return self.node_text(found)
        declarator, depth = node.child_by_field_name("declarator"), 0
        while declarator is not None and depth < 10:
            if declarator.type in _NAME_TYPES:
                return self.node_text(declarator)
            inner = declarator.child_by_field_name("declarator")
            if inner is None:
                inner = next(
                    (
                        c
                        for c in declarator.named_children
                        if "declarator" in c.type or c.type in _NAME_TYPES
                    ),
                    None,
                )
            declarator, depth = inner, depth + 1
        for child in node.named_children:  # Go: type_declaration -> type_spec
            if child.type.endswith("_spec"):
                return self.name(child)
        return None

    def definition(self, node: Any) -> tuple[str, str | None, Any] | None:
        """``(kind, name, definition node)`` when ``node`` is or wraps a definition."""
        kind = _TS_KINDS.get(node.type)
        if kind is not None:
            return kind, self.name(node), node
        if node.type in ("lexical_declaration", "variable_declaration"):
            for declarator in node.named_children:
                value = declarator.child_by_field_name("value")
                if value is not None and value.type in _FUNCTION_VALUES:
                    kind = "class" if value.type == "class" else "function"
                    return kind, self.name(declarator), value
            return None
        if node.type in _WRAPPERS:
            for child in node.named_children:
                found = self.definition(child)
                if found is not None:
                    return found
        return None

    def units(
        self, children: list[Any], lo: int, hi: int, prefix: str, gap: dict, in_type: bool = False
    ) -> list[Unit]:
        """Units of the nodes ``children`` of a container spanning ``[lo, hi)``.

        ``in_type``: the container is a type (class, struct, impl...), whose functions
        are methods.
        """
        defs: list[Definition] = []
        leading: list[Any] = []  # comments and attributes directly above the next node
        for k, node in enumerate(children):
            if node.type in _LEADING:
                if leading and node.start_point[0] > leading[-1].end_point[0] + 1:
                    leading = []
                leading.append(node)
                continue
            found = self.definition(node) if node.is_named else None
            if found is not None:
                first = node
                if leading and node.start_point[0] <= leading[-1].end_point[0] + 1:
                    first = leading[0]
                end = node.end_byte
                if k + 1 < len(children) and children[k + 1].type == ";":
                    end = children[k + 1].end_byte
                defs.append(
                    self._definition(
                        found, self.char(first.start_byte), self.char(end), prefix, in_type
                    )
                )
            leading = []
        return fill_gaps(self.text, lo, hi, defs, self.language, gap)

    def _definition(
        self,
        found: tuple[str, str | None, Any],
        start: int,
        end: int,
        prefix: str,
        in_type: bool,
    ) -> Definition:
        kind, name, node = found
        symbol = prefix + name if name else None
        if in_type and kind == "function":
            kind = "method"
        body = node.child_by_field_name("body")
        if kind not in _CONTAINERS or body is None:
            return Definition(start, end, kind, symbol)
        gap = unit_meta(self.language, kind, symbol)
        owner = node.child_by_field_name("type") if node.type == "impl_item" else None
        owner_name = self.node_text(owner) if owner is not None else symbol
        inner_prefix = (owner_name + ".") if owner_name else prefix
        in_a_type = kind not in ("module", "namespace")

        def members() -> list[Unit]:
            return self.units(body.children, start, end, inner_prefix, gap, in_a_type)

        return Definition(start, end, kind, symbol, members)


def _first_of_type(node: Any, node_type: str) -> Any | None:
    """The first descendant of ``node`` of type ``node_type`` (depth first)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == node_type:
            return current
        stack.extend(reversed(current.named_children))
    return None


def first_error(root: Any) -> Any | None:
    """The first top-level node that is a syntax error, if any."""
    if root.type == "ERROR":
        return root
    for node in root.children:
        if node.type == "ERROR" or node.is_missing:
            return node
    return None


# --- fallbacks ---------------------------------------------------------------------

#: Lines that start a definition, for languages without a grammar.
_DEFINITION_LINES = {
    "python": r"(?:async[ \t]+)?def[ \t]|class[ \t]|@",
    "javascript": r"(?:export[ \t]+(?:default[ \t]+)?)?(?:async[ \t]+)?(?:function|class)\b",
    "typescript": r"(?:export[ \t]+(?:default[ \t]+)?)?(?:declare[ \t]+)?(?:abstract[ \t]+)?"
    r"(?:async[ \t]+)?(?:function|class|interface|type|enum|namespace)\b",
    "java": r"[ \t]*(?:public|private|protected|static|final|abstract|class|interface|enum|@)",
    "go": r"func[ \t]|type[ \t]",
    "rust": r"(?:pub(?:\([\w:]+\))?[ \t]+)?(?:fn|struct|enum|impl|trait|mod)\b|#\[",
    "c": r"[A-Za-z_][\w \t*]*\([^;]*$",
    "cpp": r"(?:template|class|struct|namespace)\b|[A-Za-z_][\w \t*:<>]*\([^;]*$",
}


def fallback_pieces(
    text: str, splitter: SpanSplitter, language: str | None, note: str
) -> Iterator[Piece]:
    """Split recursively; with a known language, prefer lines that start a definition."""
    meta = {
        "language": language or "unknown",
        "kind": "code",
        "symbols": [],
        "note": note,
        "boundary": "end",
    }
    if language in _DEFINITION_LINES:
        pattern = re.compile(rf"(?m)^(?=(?:{_DEFINITION_LINES[language]}))")
        definition = PatternCuts("definition", pattern)
        levels = (definition, *splitter.levels[:-1])
        splitter = SpanSplitter(text, splitter.sizer, splitter.size, splitter.overlap, levels)
    return splitter.split(0, len(text), meta)


# --- the strategy --------------------------------------------------------------------


def code_pieces(
    text: str, sizer: Sizer, size: int, overlap: int, language: str, merge_small: bool
) -> Iterator[Piece]:
    """The ``code`` strategy's pieces (see the module docstring)."""
    splitter = SpanSplitter(text, sizer, size, overlap, levels=(BLANK_LINES, LINES, WORDS))
    emitter = Emitter(splitter, merge_small)
    if language == "auto":
        detected = detect_language(text)
        if detected is None:
            note = "could not detect the language (set language); split recursively"
            return fallback_pieces(text, splitter, None, note)
        language = detected
    if language == "python":
        try:
            units = python_units(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            note = f"could not parse as python: {_reason(exc)}; split recursively"
            return fallback_pieces(text, splitter, "python", note)
        return emitter.pieces(units)
    return _tree_sitter_pieces(text, splitter, emitter, language)


def _tree_sitter_pieces(
    text: str, splitter: SpanSplitter, emitter: Emitter, language: str
) -> Iterator[Piece]:
    lang = grammar(language)
    if lang is None:
        note = (
            f"no tree-sitter grammar for {language} is installed; split before lines "
            f"that start a definition (install tree-sitter-{language})"
        )
        return fallback_pieces(text, splitter, language, note)
    from tree_sitter import Parser

    data = text.encode("utf-8", "surrogatepass")
    tree = Parser(lang).parse(data)
    error = first_error(tree.root_node)
    if error is not None:
        line = error.start_point[0] + 1
        note = f"could not parse as {language}: syntax error at line {line}; split recursively"
        return fallback_pieces(text, splitter, language, note)
    layout = TreeLayout(text, data, language)
    gap = unit_meta(language, "module code", None)
    return emitter.pieces(layout.units(tree.root_node.children, 0, len(text), "", gap))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"{exc.msg} (line {exc.lineno})"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc) or type(exc).__name__


def _code(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterator[Piece]:
    return code_pieces(text, sizer, p["size"], p["overlap"], p["language"], p["merge_small"])


CODE = Strategy(
    "code",
    label="Code (functions/classes)",
    description="One chunk per top-level function or class (with its decorators and the "
    "comments just above it); imports and constants between them form their own chunks. "
    "Python via ast, JavaScript/TypeScript/Java/Go/Rust/C/C++ via tree-sitter. Big "
    "classes are split by methods, big functions by lines. Code that does not parse is "
    "split recursively, with a note.",
    params=(
        size_param(160),
        overlap_param(0),
        unit_param("tokens"),
        Param(
            "language",
            str,
            "auto",
            "Programming language; 'auto' guesses from telltale patterns in the code.",
            choices=LANGUAGES,
        ),
        Param(
            "merge_small",
            bool,
            True,
            "Merge consecutive small definitions and code between them while they fit the size.",
        ),
    ),
    checks=(overlap_below_size,),
    split=_code,
)
