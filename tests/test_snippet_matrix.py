"""The snippet matrix: every library target's snippet, for every strategy it maps and every
unit that strategy counts in, run in a fresh interpreter on every sample document and
chroma-eval corpus, counts the chosen unit: about as many chunks as ours, none (beyond a
couple of units of rounding) over the size measured in that unit, and the same chunk
texts where the snippet says it is exact.

A snippet that counted characters for a size in words (or converted words to tokens at
a fixed rate) gives several times our chunks, or chunks far over the size in words on
text without spaces; both fail here."""

from __future__ import annotations

from pathlib import Path

import pytest

import chunking
from chunking import Config
from chunking.output.snippets import MAPPINGS, snippet
from tests.test_snippets import documents, offline_env, ours, run_snippet

__all__ = ["documents", "offline_env"]  # fixtures shared with tests/test_snippets.py

#: A size per unit, about one paragraph or two.
SIZES = {"chars": 1000, "words": 200, "tokens": 160, "model": 128}


def _units(strategy: str) -> tuple[str, ...]:
    spec = chunking.strategies()[strategy]
    unit = next(p for p in spec.params if p.name == "unit")
    return tuple(u for u in unit.choices or () if u in SIZES)


def _config(strategy: str, unit: str, size: int | None = None) -> Config:
    if strategy == "token":  # its size is in tokens, its one unit
        return Config.create(strategy)
    return Config.create(strategy, unit=unit, size=size or SIZES[unit])


MATRIX = [
    (_config(strategy, unit), target)
    for (strategy, target) in MAPPINGS
    for unit in _units(strategy)
]
#: The cases a new user met (CommonMark spec): sections of 300 words to LangChain,
#: recursive 300 words and sentences of 120 words to LlamaIndex.
MATRIX += [
    (_config("markdown", "words", 300), "langchain"),
    (_config("recursive", "words", 300), "llamaindex"),
    (_config("sentence", "words", 120), "llamaindex"),
]


def _id(case: tuple[Config, str]) -> str:
    config, target = case
    return f"{config.strategy}-{target}-{config.params['unit']}-{config.params['size']}"


@pytest.mark.parametrize("case", MATRIX, ids=[_id(c) for c in MATRIX])
def test_every_snippet_counts_the_chosen_unit(case, documents, offline_env, tmp_path) -> None:
    config, target = case
    made = snippet(config, target)
    assert made.fidelity in ("exact", "approximate"), made.note
    if made.fidelity == "approximate":
        assert len(made.note) > 40, "an approximate snippet says why"
    got = run_snippet(made.code, list(documents), offline_env, tmp_path)
    unit, size = config.params["unit"], config.params["size"]
    sizer = chunking.units.get_sizer(unit)
    slack = max(2, size // 50)  # LangChain and LlamaIndex add up their pieces' sizes
    mine = theirs = 0
    for path, text in documents.items():
        chunks = got[path]
        mine += len(ours(text, config))
        theirs += len(chunks)
        biggest = max((sizer.size(c) for c in chunks), default=0)
        assert biggest <= size + slack, (
            f"{Path(path).name}: a chunk of {biggest} {unit} for a size of {size}"
        )
        if made.fidelity == "exact":
            assert chunks == ours(text, config), Path(path).name
    assert 0.7 <= theirs / mine <= 1.3, f"{theirs} chunks where the app makes {mine}"


def test_the_matrix_covers_every_mapped_strategy_in_every_unit() -> None:
    covered = {(c.strategy, t, c.params["unit"]) for c, t in MATRIX}
    for strategy, target in MAPPINGS:
        for unit in _units(strategy):
            assert (strategy, target, unit) in covered
    assert {u for _, _, u in covered} == set(SIZES)
