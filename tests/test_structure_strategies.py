"""Behaviour of the structure-aware strategies: markdown, html and code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import chunking
import chunking.splitters.code
import chunking.splitters.html
import chunking.splitters.markdown
from chunking import Chunk
from chunking.splitters import code as code_module
from chunking.splitters import html as html_module
from chunking.splitters.code import detect_language

SAMPLE_DOCS = Path(__file__).resolve().parent.parent / "sample_docs"


def check_invariants(text: str, chunks: list[Chunk], limit: int, unit: str) -> None:
    """Exact offsets, order, sizes, limit (or a flag) and coverage of non-whitespace."""
    sizer = chunking.get_sizer(unit)
    assert chunks, "no chunks"
    covered = bytearray(len(text))
    previous = -1
    for c in chunks:
        assert text[c.start : c.end] == c.text
        assert c.start >= previous
        previous = c.start
        assert c.text.strip()
        assert c.size == sizer.size(c.embedding_text)
        assert c.size <= limit or any(f.startswith("over limit:") for f in c.flags)
        covered[c.start : c.end] = b"\x01" * (c.end - c.start)
    missed = [ch for ch, hit in zip(text, covered, strict=True) if not hit and not ch.isspace()]
    assert not missed, f"characters not in any chunk: {missed[:10]}"


def strictly_inside(position: int, span: tuple[int, int]) -> bool:
    return span[0] < position < span[1]


def boundaries(chunks: list[Chunk]) -> list[int]:
    return [p for c in chunks for p in (c.start, c.end)]


def words(n: int, tag: str) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


# --- markdown ------------------------------------------------------------------------

NESTED = """Preamble before any header.

# Guide

Intro to the guide.

## Install

How to install.

### On Linux

Use the package.

### On macOS

Use the other package.

## Usage

How to use it.

# Appendix

Extra notes.
"""


def test_markdown_header_paths_follow_nesting() -> None:
    chunks = chunking.chunk(NESTED, "markdown", size=1000, unit="chars", levels=3)
    by_start = {c.text.splitlines()[0]: list(c.metadata["header_path"]) for c in chunks}
    assert by_start == {
        "Preamble before any header.": [],
        "# Guide": ["Guide"],
        "## Install": ["Guide", "Install"],
        "### On Linux": ["Guide", "Install", "On Linux"],
        "### On macOS": ["Guide", "Install", "On macOS"],
        "## Usage": ["Guide", "Usage"],
        "# Appendix": ["Appendix"],
    }
    levels = {c.text.splitlines()[0]: c.metadata["level"] for c in chunks}
    assert levels["### On macOS"] == 3 and levels["## Usage"] == 2
    assert levels["Preamble before any header."] == 0
    check_invariants(NESTED, chunks, 1000, "chars")


@pytest.mark.parametrize("levels", [1, 2, 3])
def test_markdown_levels_param_sets_which_headers_start_sections(levels: int) -> None:
    chunks = chunking.chunk(NESTED, "markdown", size=1000, unit="chars", levels=levels)
    starting = [re.match(r"#+", c.text) for c in chunks]
    depths = sorted({len(m.group()) for m in starting if m})
    assert depths == list(range(1, levels + 1))
    assert all(len(c.metadata["header_path"]) <= levels for c in chunks)
    # Deeper headers stay inside their parent's chunk.
    if levels < 3:
        linux = next(c for c in chunks if "### On Linux" in c.text)
        assert not linux.text.startswith("### On Linux")


def test_markdown_setext_headers_start_sections() -> None:
    text = "Title\n=====\n\nBody one.\n\nPart\n----\n\nBody two.\n"
    chunks = chunking.chunk(text, "markdown", size=1000, unit="chars")
    assert [list(c.metadata["header_path"]) for c in chunks] == [["Title"], ["Title", "Part"]]
    assert chunks[1].text.startswith("Part\n----")


@pytest.mark.parametrize("fence", ["```", "~~~"])
def test_markdown_hash_lines_inside_fences_are_not_headers(fence: str) -> None:
    text = (
        "# Real header\n\nSome text.\n\n"
        f"{fence}bash\n# install the tool\nrun --fast\n## also a comment\n{fence}\n\n"
        "More text after the block.\n"
    )
    chunks = chunking.chunk(text, "markdown", size=1000, unit="chars")
    assert len(chunks) == 1
    assert list(chunks[0].metadata["header_path"]) == ["Real header"]
    paths = [h for c in chunks for h in c.metadata["header_path"]]
    assert "install the tool" not in paths and "also a comment" not in paths


FENCE = """```python
# a comment, not a header
def handler(event):
    total = sum(event.values)
    return total * 2
```"""
TABLE = """| Name | Value |
|------|-------|
| alpha | 1 |
| beta | 2 |
| gamma | 3 |"""
BLOCKS = f"""# Section

{words(30, "intro")}

{FENCE}

{words(30, "middle")}

{TABLE}

- A list item whose text runs on: {words(30, "item")}

  {FENCE.replace(chr(10), chr(10) + "  ")}

{words(30, "outro")}
"""


@pytest.mark.parametrize("unit,size", [("chars", 220), ("words", 40), ("tokens", 80)])
def test_markdown_never_cuts_inside_a_fence_or_table_that_fits(unit: str, size: int) -> None:
    sizer = chunking.get_sizer(unit)
    assert sizer.size(FENCE) <= size and sizer.size(TABLE) <= size
    assert sizer.size(BLOCKS) > size  # the section must be split
    chunks = chunking.chunk(BLOCKS, "markdown", size=size, unit=unit)
    assert len(chunks) > 1
    spans = []
    for block in (FENCE, TABLE, FENCE.replace("\n", "\n  ")):
        start = BLOCKS.rindex(block)
        spans.append((start, start + len(block)))
    for position in boundaries(chunks):
        assert not any(strictly_inside(position, span) for span in spans)
    assert any(FENCE in c.text for c in chunks) and any(TABLE in c.text for c in chunks)
    check_invariants(BLOCKS, chunks, size, unit)


def test_markdown_pipe_rows_without_delimiter_row_are_kept_together() -> None:
    rows = "\n".join(f"| row {i} | value {i} |" for i in range(6))
    text = f"# T\n\n{words(20, 'w')}\n{rows}\n{words(20, 'v')}\n"
    chunks = chunking.chunk(text, "markdown", size=120, unit="chars")
    start = text.index(rows)
    for position in boundaries(chunks):
        assert not strictly_inside(position, (start, start + len(rows)))
    check_invariants(text, chunks, 120, "chars")


def test_markdown_oversized_section_is_split_within_the_limit() -> None:
    paragraphs = "\n\n".join(
        " ".join(f"Sentence {p}.{s} says something." for s in range(8)) for p in range(6)
    )
    text = f"# Big\n\n{paragraphs}\n\n# Small\n\nTiny.\n"
    for unit, size in (("chars", 150), ("words", 25), ("tokens", 40)):
        chunks = chunking.chunk(text, "markdown", size=size, unit=unit)
        big = [c for c in chunks if c.metadata["header_path"] == ["Big"]]
        assert len(big) > 2
        assert all(c.size <= size for c in chunks)
        check_invariants(text, chunks, size, unit)
        assert chunks[-1].text == "# Small\n\nTiny."


def test_markdown_fence_larger_than_size_is_split_by_lines_with_a_note() -> None:
    body = "\n".join(f"    value_{i} = compute({i})" for i in range(40))
    text = f"# Code\n\n```python\n{body}\n```\n"
    chunks = chunking.chunk(text, "markdown", size=200, unit="chars")
    inside = [c for c in chunks if "value_" in c.text]
    assert len(inside) > 1
    assert all(c.metadata.get("note") == "code block split: larger than size" for c in inside)
    line_starts = {0} | {m.end() for m in re.finditer("\n", text)}
    fence_start = text.index("```python")
    for c in inside:
        if c.start > fence_start:  # cuts inside the block fall between lines
            line_start = text.rfind("\n", 0, c.start) + 1
            assert text[line_start : c.start].strip() == ""
            assert line_start in line_starts
    check_invariants(text, chunks, 200, "chars")


def test_markdown_merge_small_joins_siblings_under_one_parent() -> None:
    text = (
        f"# A\n\n{words(30, 'a')}\n\n## a1\n\n{words(8, 'x')}\n\n## a2\n\n{words(8, 'y')}\n\n"
        f"# B\n\n{words(30, 'b')}\n\n## b1\n\n{words(8, 'z')}\n"
    )
    plain = chunking.chunk(text, "markdown", size=40, unit="words")
    merged = chunking.chunk(text, "markdown", size=40, unit="words", merge_small=True)
    assert len(plain) == 5  # A, a1, a2, B, b1
    assert len(merged) == 4  # A, a1 + a2, B, b1
    pair = next(c for c in merged if "## a1" in c.text)
    assert "## a2" in pair.text and "# B" not in pair.text
    assert list(pair.metadata["header_path"]) == ["A"]
    assert [list(p) for p in pair.metadata["merged_sections"]] == [["A", "a1"], ["A", "a2"]]
    b1 = next(c for c in merged if "## b1" in c.text)
    assert "## a2" not in b1.text
    check_invariants(text, merged, 40, "words")


def test_markdown_crlf_offsets_and_headers() -> None:
    text = NESTED.replace("\n", "\r\n")
    chunks = chunking.chunk(text, "markdown", size=1000, unit="chars")
    assert [c.metadata["header_path"][-1] for c in chunks if c.metadata["header_path"]] == [
        "Guide",
        "Install",
        "On Linux",
        "On macOS",
        "Usage",
        "Appendix",
    ]
    assert chunks[0].text == "Preamble before any header."
    assert all(c.text.startswith("#") and "\r\n" in c.text for c in chunks[1:])
    check_invariants(text, chunks, 1000, "chars")


# --- html ----------------------------------------------------------------------------

PAGE = """<!DOCTYPE html>
<html><head><title>Shop</title>
<style>h1 { color: red; }</style></head>
<body>
<p>Welcome text before any heading.</p>
<h1 class="title">Caf&eacute;
   <b>Menu</b></h1>
<p>Our coffee &amp; tea.</p>
<script>var s = "<h2>not a heading</h2>"; if (a < b) { run(); }</script>
<h2>Hot &amp; cold drinks</h2>
<ul><li>Espresso</li><li>Latte</li></ul>
<h3>Seasonal</h3>
<p>Pumpkin spice.</p>
<h2>Food</h2>
<p>Croissants.</p>
</body></html>
"""


def test_html_header_paths_from_heading_texts() -> None:
    chunks = chunking.chunk(PAGE, "html", size=2000, unit="chars")
    paths = [list(c.metadata["header_path"]) for c in chunks]
    assert paths == [
        [],
        ["Café Menu"],
        ["Café Menu", "Hot & cold drinks"],
        ["Café Menu", "Hot & cold drinks", "Seasonal"],
        ["Café Menu", "Food"],
    ]
    assert [c.metadata["level"] for c in chunks] == [0, 1, 2, 3, 2]
    assert chunks[0].text.startswith("<!DOCTYPE html>")
    assert "Welcome text" in chunks[0].text
    assert chunks[1].text.startswith('<h1 class="title">')
    assert "not a heading" in chunks[1].text  # text inside <script> is not a heading
    check_invariants(PAGE, chunks, 2000, "chars")


def test_html_levels_param() -> None:
    chunks = chunking.chunk(PAGE, "html", size=2000, unit="chars", levels=1)
    assert [list(c.metadata["header_path"]) for c in chunks] == [[], ["Café Menu"]]
    assert "<h3>Seasonal</h3>" in chunks[1].text


def test_html_offsets_are_into_the_raw_source_with_crlf() -> None:
    text = PAGE.replace("\n", "\r\n").replace("<h2>Food", '<h2\r\n  id="food">Food')
    chunks = chunking.chunk(text, "html", size=2000, unit="chars")
    food = next(c for c in chunks if c.metadata["header_path"][-1:] == ["Food"])
    assert food.start == text.index("<h2\r\n  id=")
    assert text[food.start : food.end] == food.text
    check_invariants(text, chunks, 2000, "chars")


TAG = re.compile(r"<[^<>]*>")


@pytest.mark.parametrize(
    "unit,size", [("chars", 50), ("chars", 60), ("words", 9), ("words", 11), ("tokens", 24)]
)
def test_html_chunks_do_not_start_or_end_inside_tags(unit: str, size: int) -> None:
    items = "".join(
        f'<li><a class="x y z" href="/p/{i}" title="{"a " * (i % 4)}c">link {i}</a> and words'
        f" after it to make the item long</li>\n"
        for i in range(12)
    )
    text = f"<h1>List</h1>\n<ul>\n{items}</ul>\n<p>{words(30, 'tail')}</p>\n"
    sizer = chunking.get_sizer(unit)
    tags = [m.span() for m in TAG.finditer(text)]
    assert all(sizer.size(text[a:b]) <= size for a, b in tags)
    chunks = chunking.chunk(text, "html", size=size, unit=unit)
    assert len(chunks) > 12
    for position in boundaries(chunks):
        assert not any(strictly_inside(position, span) for span in tags)
    check_invariants(text, chunks, size, unit)


def test_html_script_that_fits_is_kept_whole() -> None:
    script = '<script>\nfunction go() {\n  return "<p>x</p>";\n}\n</script>'
    text = f"<h1>T</h1>\n<p>{words(20, 'a')}</p>\n{script}\n<p>{words(20, 'b')}</p>\n"
    chunks = chunking.chunk(text, "html", size=80, unit="chars")
    assert any(script in c.text for c in chunks)
    check_invariants(text, chunks, 80, "chars")


@pytest.mark.parametrize(
    "text",
    [
        "Just plain text, no tags at all. Another sentence here.",
        "<h1>Unclosed heading <p>paragraph <div class='x' <b>bold</h2> text",
        "<<<>>> < > <h2 <h3>broken</h3> </h1> &amp &#xZZ; <!-- open comment",
        "<script>never closed { var x = 1;",
        "</h1></h2>stray end tags<h4></h4>",
        "<h1></h1>",
    ],
)
@pytest.mark.parametrize("size", [5, 40])
def test_html_malformed_input_does_not_crash(text: str, size: int) -> None:
    chunks = chunking.chunk(text, "html", size=size, unit="chars")
    check_invariants(text, chunks, size, "chars")


def test_visible_text_is_what_a_reader_sees() -> None:
    markup = (
        '<div class="card"><p>Caf&eacute; <b>menu</b>&nbsp;for\n  today</p>'
        "<script>var x = '<p>no</p>';</script><style>p { color: red }</style>"
        "<!-- a comment --><ul><li>one</li><li>two<br>three</li></ul>"
        '<a href="/x">link</a> text</div>'
    )
    assert html_module.visible_text(markup) == "Café menu for today\none\ntwo\nthree\nlink text"
    assert html_module.visible_text("<div><span></span></div>") == ""


def test_html_sizes_count_the_visible_text_and_offsets_the_markup() -> None:
    attrs = " ".join(f'data-x{i}="{"v" * 20}"' for i in range(10))
    text = f"<h1>Title</h1>\n<p {attrs}>{words(20, 'w')}</p>\n<h1>Next</h1>\n<p>End.</p>\n"
    chunks = chunking.chunk(text, "html", size=200, unit="chars")
    first = chunks[0]
    assert len(first.text) > 200  # the markup alone is over the limit ...
    assert first.metadata["visible_text"] == "Title\n" + words(20, "w")
    assert first.size == len(first.metadata["visible_text"]) <= 200  # ... its text is not
    assert first.text == text[first.start : first.end]
    check_invariants(text, chunks, 200, "chars")
    raw = chunking.chunk(text, "html", size=200, unit="chars", visible_text=False)
    assert len(raw) > len(chunks)
    assert all("visible_text" not in c.metadata and c.size == len(c.text) for c in raw)


def test_embedding_text_is_the_visible_text_when_there_is_one() -> None:
    html_chunk = chunking.chunk("<h1>A</h1><p>b &amp; c</p>", "html", size=50)[0]
    assert html_chunk.embedding_text == "A\nb & c"
    plain = chunking.chunk("Plain text.", "recursive", size=50)[0]
    assert plain.embedding_text == "Plain text."


def test_permalink_marks_are_not_part_of_header_paths() -> None:
    text = (
        '<h1>Guide<a class="headerlink" href="#guide">\u00b6</a></h1><p>Intro.</p>'
        '<h2>Install <a class="headerlink" href="#install">&para;</a></h2><p>Run it.</p>'
    )
    chunks = chunking.chunk(text, "html", size=100, unit="chars")
    assert [c.metadata["header_path"] for c in chunks] == [["Guide"], ["Guide", "Install"]]


# --- code ----------------------------------------------------------------------------

PYTHON = '''"""Module docstring."""

import os

LIMIT = 10


# Loose comment separated by a blank line.

# Helper that is decorated.
# It has two comment lines.
@functools.lru_cache(maxsize=None)
@staticmethod
def helper(x):
    return x + LIMIT


class Store:
    """A store."""

    kind = "store"

    # Adds things.
    def add(self, item):
        self.items.append(item)
        return len(self.items)

    @property
    def size(self):
        total = 0
        for item in self.items:
            total += item.weight
        return total

    def clear(self):
        self.items = []
'''


def test_python_decorators_and_leading_comments_stay_with_the_function() -> None:
    chunks = chunking.chunk(PYTHON, "code", size=400, unit="tokens", merge_small=False)
    helper = next(c for c in chunks if c.metadata.get("symbol") == "helper")
    assert helper.text.startswith("# Helper that is decorated.\n# It has two comment lines.\n@")
    assert "@staticmethod\ndef helper(x):" in helper.text
    assert helper.text.endswith("return x + LIMIT")
    assert helper.metadata["kind"] == "function"
    assert "Loose comment" not in helper.text
    module = [c for c in chunks if c.metadata["kind"] == "module code"]
    assert any('"""Module docstring."""' in c.text and "import os" in c.text for c in module)
    assert any("Loose comment" in c.text for c in module)
    check_invariants(PYTHON, chunks, 400, "tokens")


def test_python_class_over_the_limit_is_split_by_methods() -> None:
    chunks = chunking.chunk(PYTHON, "code", size=40, unit="tokens", merge_small=False)
    symbols = [c.metadata.get("symbol") for c in chunks]
    assert {"Store", "Store.add", "Store.size", "Store.clear"} <= set(symbols)
    add = chunks[symbols.index("Store.add")]
    assert add.text.startswith("# Adds things.\n    def add(self, item):")
    assert add.metadata["kind"] == "method"
    size = chunks[symbols.index("Store.size")]
    assert size.text.startswith("@property\n    def size(self):")
    assert size.text.endswith("return total")
    check_invariants(PYTHON, chunks, 40, "tokens")


def test_python_merge_small_packs_consecutive_pieces() -> None:
    merged = chunking.chunk(PYTHON, "code", size=400, unit="tokens")
    separate = chunking.chunk(PYTHON, "code", size=400, unit="tokens", merge_small=False)
    assert len(merged) < len(separate)
    assert len(merged) == 1 and merged[0].metadata["kind"] == "mixed"
    assert set(merged[0].metadata["symbols"]) == {"helper", "Store"}
    check_invariants(PYTHON, merged, 400, "tokens")


def test_python_function_over_the_limit_is_split_by_lines() -> None:
    body = "\n".join(f"    x{i} = compute({i}, {i + 1})" for i in range(60))
    text = f"def long_one():\n{body}\n    return x0\n"
    chunks = chunking.chunk(text, "code", size=50, unit="tokens", language="python")
    assert len(chunks) > 3
    assert all(c.metadata.get("symbol") == "long_one" for c in chunks)
    for c in chunks:  # cuts fall at line starts
        assert text[text.rfind("\n", 0, c.start) + 1 : c.start].strip() == ""
    check_invariants(text, chunks, 50, "tokens")


def test_python_syntax_error_falls_back_with_a_note() -> None:
    text = "def broken(:\n    pass\n\ndef fine():\n    return 1\n"
    chunks = chunking.chunk(text, "code", size=8, unit="tokens", language="python")
    notes = {c.metadata.get("note") for c in chunks}
    assert len(notes) == 1
    note = notes.pop()
    assert note.startswith("could not parse as python: ")
    assert note.endswith("; split recursively")
    check_invariants(text, chunks, 8, "tokens")


JAVASCRIPT = """import { api } from "./api.js";

// Adds two numbers.
function add(a, b) {
  return a + b;
}

/** Shapes have areas. */
export class Shape {
  constructor(name) {
    this.name = name;
  }

  area() {
    return 0;
  }
}

const twice = (x) => {
  return add(x, x);
};
"""

GO = """package main

import "fmt"

// Stack holds ints.
type Stack struct {
\titems []int
}

// Push adds an item.
func (s *Stack) Push(v int) {
\ts.items = append(s.items, v)
}

func main() {
\tfmt.Println("héllo, wörld ✓")
}
"""


def test_tree_sitter_grammars_load_offline() -> None:
    for language in ("javascript", "go"):
        assert code_module.grammar(language) is not None, (
            f"install tree-sitter-{language}: tree-sitter-language-pack cannot download "
            "grammars offline"
        )


def test_javascript_is_split_at_function_and_class_boundaries() -> None:
    chunks = chunking.chunk(
        JAVASCRIPT, "code", size=400, unit="tokens", language="javascript", merge_small=False
    )
    by_symbol = {c.metadata.get("symbol"): c for c in chunks}
    assert by_symbol["add"].text.startswith("// Adds two numbers.\nfunction add(a, b) {")
    assert by_symbol["add"].text.endswith("return a + b;\n}")
    assert by_symbol["Shape"].text.startswith("/** Shapes have areas. */\nexport class Shape {")
    assert by_symbol["Shape"].text.endswith("}")
    assert by_symbol["twice"].text.startswith("const twice = (x) => {")
    assert by_symbol["twice"].metadata["kind"] == "function"
    assert chunks[0].text == 'import { api } from "./api.js";'
    check_invariants(JAVASCRIPT, chunks, 400, "tokens")


def test_javascript_class_over_the_limit_is_split_by_methods() -> None:
    chunks = chunking.chunk(
        JAVASCRIPT, "code", size=12, unit="tokens", language="javascript", merge_small=False
    )
    symbols = [c.metadata.get("symbol") for c in chunks]
    assert "Shape.constructor" in symbols and "Shape.area" in symbols
    area = chunks[symbols.index("Shape.area")]
    assert area.text.startswith("area() {")
    check_invariants(JAVASCRIPT, chunks, 12, "tokens")


def test_go_is_split_at_declarations_with_exact_unicode_offsets() -> None:
    text = "// Paquete de ejemplo — ünïcödé 😀\n" + GO
    chunks = chunking.chunk(text, "code", size=400, unit="tokens", merge_small=False)
    by_symbol = {c.metadata.get("symbol"): c for c in chunks}
    assert by_symbol["Stack.Push"].text.startswith("// Push adds an item.\nfunc (s *Stack) Push")
    assert by_symbol["Stack.Push"].metadata["kind"] == "method"
    assert by_symbol["main"].text.startswith("func main() {")
    assert by_symbol["main"].text.endswith("}")
    assert by_symbol["Stack"].text.startswith("// Stack holds ints.\ntype Stack struct {")
    assert all(c.metadata["language"] == "go" for c in chunks)
    check_invariants(text, chunks, 400, "tokens")


def test_tree_sitter_syntax_error_falls_back_with_a_note() -> None:
    text = "function ok() { return 1; }\n\n))) function ( {{ broken\n"
    chunks = chunking.chunk(text, "code", size=400, unit="tokens", language="javascript")
    assert all(
        c.metadata["note"].startswith("could not parse as javascript: syntax error at line")
        for c in chunks
    )
    check_invariants(text, chunks, 400, "tokens")


def test_without_a_grammar_code_is_cut_before_definition_lines(monkeypatch) -> None:
    monkeypatch.setattr(code_module, "grammar", lambda language: None)
    chunks = chunking.chunk(
        JAVASCRIPT, "code", size=30, unit="tokens", language="javascript", merge_small=False
    )
    assert all("no tree-sitter grammar for javascript" in c.metadata["note"] for c in chunks)
    assert any(c.text.startswith("function add(a, b) {") for c in chunks)
    assert any(c.text.startswith("export class Shape {") for c in chunks)
    check_invariants(JAVASCRIPT, chunks, 30, "tokens")


@pytest.mark.parametrize(
    "text,expected",
    [
        (PYTHON, "python"),
        (JAVASCRIPT, "javascript"),
        (GO, "go"),
        ("interface User { name: string }\nexport type Id = number;\nconst a = 1;\n", "typescript"),
        ("fn main() {\n    let mut x = 1;\n}\nimpl Foo {}\n", "rust"),
        ('#include <stdio.h>\nint main(void) {\n    printf("hi");\n}\n', "c"),
        ("#include <vector>\nstd::vector<int> v;\ntemplate <typename T> T id(T x);\n", "cpp"),
        ("Just an ordinary sentence about the weather.", None),
    ],
)
def test_auto_detection(text: str, expected: str | None) -> None:
    assert detect_language(text) == expected


def test_code_on_prose_splits_recursively_with_a_note() -> None:
    text = "An ordinary paragraph of prose. " * 20
    chunks = chunking.chunk(text, "code", size=30, unit="words")
    assert all("could not detect the language" in c.metadata["note"] for c in chunks)
    check_invariants(text, chunks, 30, "words")


# --- sample documents ----------------------------------------------------------------


def sample(name: str) -> str:
    path = SAMPLE_DOCS / name
    if not path.exists():
        pytest.fail(f"sample document {path} is missing")
    return path.read_text(encoding="utf-8")


def fenced_spans(text: str) -> list[tuple[int, int]]:
    """Spans of ``` fences, found line by line (the sample has no nested fences)."""
    spans, start, offset = [], None, 0
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            if start is None:
                start = offset
            else:
                spans.append((start, offset + len(line.rstrip("\r\n"))))
                start = None
        offset += len(line)
    return spans


@pytest.mark.parametrize("size", [800, 120])
def test_sample_technical_guide(size: int) -> None:
    text = sample("technical_guide.md")
    chunks = chunking.chunk(text, "markdown", size=size)
    check_invariants(text, chunks, size, "tokens")
    assert all(c.metadata["header_path"] for c in chunks)  # the guide opens with a header
    sizer = chunking.get_sizer("tokens")
    fits = [s for s in fenced_spans(text) if sizer.size(text[s[0] : s[1]]) <= size]
    assert fits
    for position in boundaries(chunks):
        assert not any(strictly_inside(position, span) for span in fits)


def test_sample_product_page() -> None:
    text = sample("product_page.html")
    chunks = chunking.chunk(text, "html", size=300)
    check_invariants(text, chunks, 300, "tokens")
    headings = re.findall(r"<h[1-3][^>]*>(.*?)</h[1-3]>", text, re.S)
    titles = {c.metadata["header_path"][-1] for c in chunks if c.metadata["header_path"]}
    assert {" ".join(re.sub("<[^>]+>", "", h).split()) for h in headings if "&" not in h} <= titles
    tags = [m.span() for m in TAG.finditer(text)]
    for position in boundaries(chunks):
        assert not any(strictly_inside(position, span) for span in tags)


@pytest.mark.parametrize("size", [400, 100])
def test_sample_inventory(size: int) -> None:
    text = sample("inventory.py")
    chunks = chunking.chunk(text, "code", size=size)
    check_invariants(text, chunks, size, "tokens")
    assert {c.metadata["language"] for c in chunks} == {"python"}
    top_level = {
        node.name
        for node in ast.parse(text).body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    found = {s for c in chunks for s in c.metadata["symbols"]}
    assert top_level <= found
