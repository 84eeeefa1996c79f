"""Property tests: every registered strategy, every unit, on awkward unicode text."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import chunking
from chunking import Config, Param
from tests.invariants import check_invariants

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

texts = (
    st.lists(
        st.one_of(st.sampled_from(FRAGMENTS), st.text(st.characters(exclude_categories=("Cs",)))),
        min_size=1,
        max_size=40,
    )
    .map("".join)
    .filter(lambda t: t and not t.isspace())
)

SIZES = {"chars": (1, 80), "words": (1, 12), "tokens": (1, 25)}


def _value(draw: st.DrawFn, param: Param, unit: str) -> Any:
    """A valid value for a parameter, drawn from its declared range."""
    if param.name == "model":
        return "hash"  # the deterministic test embedder: this test is about offsets
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


@pytest.mark.parametrize("name", list(chunking.strategies()))
@given(data=st.data(), text=texts)
def test_every_strategy_keeps_its_promises(name: str, data: st.DataObject, text: str) -> None:
    config = data.draw(configs(name))
    chunks = chunking.run(text, config)
    check_invariants(text, chunks, config)


@pytest.mark.parametrize("name", list(chunking.strategies()))
def test_every_strategy_handles_a_single_character(name: str) -> None:
    config = Config.create(
        name, **({"model": "hash"} if "model" in chunking.get_strategy(name).param_names else {})
    )
    chunks = chunking.run("x", config)
    assert [c.text for c in chunks] == ["x"]


@pytest.mark.parametrize("bad", ["", "   \n\t  "])
def test_empty_and_whitespace_documents_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match=r"empty|whitespace"):
        chunking.chunk(bad)
