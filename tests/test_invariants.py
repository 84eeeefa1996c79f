"""Property tests: every registered strategy, every unit, on awkward unicode text."""

from __future__ import annotations

import csv
import html
import io
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import chunking
from chunking import Config, Param
from chunking.libraries import LIBRARIES
from chunking.splitters import BUILT_IN
from tests.invariants import check_each_chunk, check_invariants
from tests.llm_fakes import ECHO

#: Parameters that choose a model, set to deterministic stand-ins: these tests are about
#: offsets (the "echo" language model repeats its passage's lines, see tests/llm_fakes.py).
TEST_MODELS = {"model": "hash", "llm": ECHO}
#: Strategies that do not promise to cover every non-whitespace character, and why.
PARTIAL_COVERAGE = {
    "propositions": "a model's statements may overlap and need not cover every word; "
    "exact offsets, order and sizes still hold",
}

FRAGMENTS = [
    "word",
    "Hello",
    "world.",
    "Dr. Smith",
    "e.g.",
    "?",
    "!",
    ", ",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\r\n",
    "\r\n\r\n",
    "\t",
    "# Heading\n",
    "## Sub\n",
    "```\ncode # x\n```\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "<h2>Title</h2>",
    "<p>para</p>",
    "def f(x):\n    return x\n",
    "class A:\n    pass\n",
    "Alice: hi there\n",
    "[10:14] Bob: hello\n",
    "👩‍👩‍👧‍👦",
    "🇩🇪",
    "😀",
    "日本語の文です。",
    "中文没有空格",
    "e\u0301",
    "a\u0308\u0323",
    "שלום עולם",
    "مرحبا بالعالم",
    "Ünïcödé",
    "ß",
    "\u00a0",
    "\u2028",
]

#: Short sentences in accented and other scripts, repeated: the text on which a
#: whitespace-only chunk and a mis-detected encoding were once found.
REPEATED = [
    "Élève à l'école.",
    "Ça coûte déjà cher !",
    "Größere Äpfel über die Straße.",
    "¿Qué año? ¡Señor!",
    "Příliš žluťoučký kůň.",
    "Привет, мир.",
    "日本語。",
]
SEPARATORS = [" ", "  ", "\n", "\r\n", "\n\n", "\t", "\u00a0", "\r\n\r\n", "\u2028"]

#: Table cells: empty, pipes plain and escaped, quotes, delimiters, line breaks (CSV
#: quotes them), wide ones, other scripts.
CELLS = st.one_of(
    st.sampled_from(
        ["", " ", "x", "a \\| b", "a|b", "\\|", '"q"', "1,5", "a;b\tc", "x\ny", "日本語", "é"]
    ),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=6),
    st.builds(lambda w, n: " ".join([w] * n), st.sampled_from(["wide", "列"]), st.integers(5, 40)),
)
NEWLINES = st.sampled_from(["\n", "\r\n"])


def _one_line(cell: str) -> str:
    return " ".join(cell.split())


@st.composite
def markdown_tables(draw: st.DrawFn) -> str:
    """A pipe table: one or two header rows, a delimiter line, rows of any width (a row
    may have fewer or more cells), maybe a caption and text around it."""
    width = draw(st.integers(1, 8))
    newline = draw(NEWLINES)

    def row() -> str:
        cells = draw(st.lists(CELLS, min_size=1, max_size=width + 1))
        return "| " + " | ".join(_one_line(c).replace("|", "\\|") for c in cells) + " |"

    header = [row() for _ in range(draw(st.integers(1, 2)))]
    lines = [*header, "|" + "---|" * width, *(row() for _ in range(draw(st.integers(0, 15))))]
    caption = draw(st.sampled_from(["", "Table 1: figures", "**Table 2.** More", "Results:"]))
    around = draw(st.sampled_from(["", "# Data", "Some text."]))
    parts = [around, caption, newline.join(lines), around]
    return (newline * draw(st.integers(1, 2))).join(p for p in parts if p)


@st.composite
def html_tables(draw: st.DrawFn) -> str:
    """A ``<table>``: maybe a caption, header rows in a ``<thead>`` or as leading ``<th>``
    rows (with rowspan and colspan), then ``<td>`` rows."""
    width = draw(st.integers(1, 6))

    def row(tag: str) -> str:
        cells = draw(st.lists(CELLS, min_size=1, max_size=width))
        span = draw(st.sampled_from(["", " rowspan=2", ' colspan="2"']))
        first, *rest = [html.escape(c) for c in cells]
        return (
            f"<tr><{tag}{span}>{first}</{tag}>"
            + "".join(f"<{tag}>{c}</{tag}>" for c in rest)
            + "</tr>"
        )

    head = "".join(row("th") for _ in range(draw(st.integers(0, 2))))
    if head and draw(st.booleans()):
        head = f"<thead>{head}</thead>"
    body = draw(NEWLINES).join(row("td") for _ in range(draw(st.integers(0, 15))))
    caption = draw(st.sampled_from(["", "<caption>Table 1</caption>"]))
    table = f"<table>{caption}{head}<tbody>{body}</tbody></table>"
    return f"<h2>Data</h2><p>Before.</p>{table}<p>After.</p>" if draw(st.booleans()) else table


@st.composite
def delimited_tables(draw: st.DrawFn) -> str:
    """CSV or TSV written by the csv module: quoted cells with delimiters, quotes and
    line breaks, empty cells, CRLF or LF."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(
        buffer, delimiter=draw(st.sampled_from([",", "\t", ";"])), lineterminator=draw(NEWLINES)
    )
    width = draw(st.integers(1, 6))
    for _ in range(draw(st.integers(1, 20))):
        writer.writerow(draw(st.lists(CELLS, min_size=width, max_size=width)))
    return buffer.getvalue()


#: Chinese, Japanese and Korean text without spaces, with full-width sentence ends.
CJK = st.lists(
    st.one_of(
        st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=1, max_size=12),
        st.text(alphabet="ぁあいうかきゃアイウカキーｶﾞ가나다한글", min_size=1, max_size=8),
        st.sampled_from(
            ["。", "！", "？", "．", "｡", "、", "「", "」", "！？", "３．１４", " ", "\n"]
        ),
        st.sampled_from(["abc", "Hello world.", "\n\n", "\u3000"]),
    ),
    min_size=1,
    max_size=40,
).map("".join)

texts = st.one_of(
    st.lists(
        st.one_of(st.sampled_from(FRAGMENTS), st.text(st.characters(exclude_categories=("Cs",)))),
        min_size=1,
        max_size=40,
    ).map("".join),
    st.builds(
        lambda parts, n, sep: sep.join(parts * n),
        st.lists(st.sampled_from(REPEATED), min_size=1, max_size=3),
        st.integers(2, 30),
        st.sampled_from(SEPARATORS),
    ),
    markdown_tables(),
    html_tables(),
    delimited_tables(),
    CJK,
).filter(lambda t: t and not t.isspace())

SIZES = {"chars": (1, 80), "words": (1, 12), "tokens": (1, 25), "model": (1, 25)}


def _value(draw: st.DrawFn, param: Param, unit: str) -> Any:
    """A valid value for a parameter, drawn from its declared range."""
    if param.name in TEST_MODELS:
        return TEST_MODELS[param.name]
    if param.choices is not None:
        return draw(st.sampled_from(param.choices))
    if param.kind is bool:
        return draw(st.booleans())
    if param.kind is int and param.name in ("size", "window", "max_size"):
        return draw(st.integers(*SIZES[unit]))
    return param.default


@st.composite
def configs(draw: st.DrawFn, name: str) -> Config:
    spec = chunking.get_strategy(name)
    unit_param = next((p for p in spec.params if p.name == "unit"), None)
    unit = draw(st.sampled_from(unit_param.choices)) if unit_param else "chars"
    values = {p.name: _value(draw, p, unit) for p in spec.params}
    if unit_param:
        values["unit"] = unit
    if "overlap" in values and "size" in values:
        size = values["size"]
        # Mostly small overlaps (some strategies bound them by a child size), some large.
        values["overlap"] = draw(
            st.one_of(st.integers(0, max(0, size // 4 - 1)), st.integers(0, max(0, size - 1)))
        )
    if "stride" in values:
        values["stride"] = draw(st.integers(1, values["window"]))
    try:
        return Config.create(name, **values)
    except ValueError:
        assume(False)
        raise


#: The strategies tested here: every built-in one. The other libraries' engines
#: (chunking.libraries) make different promises and are tested in test_libraries.py.
BUILT_IN_NAMES = [s.name for s in BUILT_IN]


def test_every_registered_strategy_is_tested_here_or_in_test_libraries() -> None:
    assert set(chunking.strategies()) == {*BUILT_IN_NAMES, *(s.name for s in LIBRARIES)}


@pytest.mark.parametrize("name", BUILT_IN_NAMES)
@given(data=st.data(), text=texts)
def test_every_strategy_keeps_its_promises(name: str, data: st.DataObject, text: str) -> None:
    config = data.draw(configs(name))
    chunks = chunking.run(text, config)
    check = check_each_chunk if name in PARTIAL_COVERAGE else check_invariants
    check(text, chunks, config)


@pytest.mark.parametrize("name", BUILT_IN_NAMES)
def test_every_strategy_handles_a_single_character(name: str) -> None:
    names = chunking.get_strategy(name).param_names
    config = Config.create(name, **{k: v for k, v in TEST_MODELS.items() if k in names})
    chunks = chunking.run("x", config)
    assert [c.text for c in chunks] == ["x"]


@pytest.mark.parametrize("bad", ["", "   \n\t  "])
def test_empty_and_whitespace_documents_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match=r"empty|whitespace"):
        chunking.chunk(bad)


def test_recursive_starts_never_go_back_after_a_chunk_cut_again() -> None:
    # Regression (found by Hypothesis): the span 40-78 measured over 12 tokens once
    # joined and was cut again into 40-68 and 69-78; the next chunk's overlap reached
    # back to 64, before 69.
    text = (
        "<table><tr><th></th></tr><tbody><tr><td rowspan=2></td><td>wide wide wide wide "
        "wide</td></tr>\n<tr><td></td></tr></tbody></table>"
    )
    config = Config.create("recursive", size=12, overlap=3, unit="tokens", keep_separator="start")
    chunks = chunking.run(text, config)
    assert any(c.metadata.get("boundary") == "size" for c in chunks)  # the case it covers
    check_invariants(text, chunks, config)


WHITESPACE_CASES = [
    ("recursive", {"size": 1, "unit": "chars"}),
    ("fixed", {"size": 3, "overlap": 0, "unit": "tokens"}),
    ("token", {"size": 3}),
    ("sentence", {"size": 1, "unit": "chars"}),
    ("conversation", {"size": 1, "unit": "tokens"}),
    ("hierarchy", {"size": 3, "child_sizes": "[1]", "unit": "tokens"}),
]


@pytest.mark.parametrize(("name", "params"), WHITESPACE_CASES, ids=[c[0] for c in WHITESPACE_CASES])
def test_no_chunk_is_only_whitespace_on_repetitive_accented_text(name: str, params: dict) -> None:
    # Regression: each of these once returned chunks such as "\n", "\r", "\x85" or
    # "\x0c\r\n\u3000  \n\n  \r\n" on text like this.
    import random

    pieces = ["Élève à l'école.", " ", "\n", "\r\n", "\t", "\u3000", "\u00a0", "é", "Ça"]
    pieces += ["  \n\n  ", ". ", "\u2028", "\x0b", "\x0c", "\x85", "日本語。", "Привет."]
    rng = random.Random(1)
    config = Config.create(name, **params)
    for _ in range(300):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        if text.isspace():
            continue
        check_invariants(text, chunking.run(text, config), config)
