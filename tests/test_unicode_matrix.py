"""The Unicode and repetition matrix (chunking.libraries.matrix): every library engine and
every export snippet declared exact, on every class of text that breaks chunkers.

What each cell must show: every chunk the exact source slice, every difference from
what the library said flagged; the text flagged as left out is exactly the text no
chunk covers, and on these texts that is never visible text (placed in order, every
engine's chunks cover it; only invisible characters a library drops may be left out);
U+FFFD in a library's output is flagged as altered text; a snippet declared exact gives
our chunks on every row it does not name, and differs on every row it names."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chunking
from chunking import Config
from chunking.libraries import matrix
from chunking.libraries.text_classes import ONE_MB_LINE, ROW_NAMES, TEXT_CLASSES, TextClass
from chunking.output.snippets import snippet
from tests.invariants import check_library_invariants, uncovered
from tests.test_libraries import quiet_llamaindex_token_warning  # noqa: F401 (autouse)

#: Engines that cannot run offline (they say so in one line).
OFFLINE_IMPOSSIBLE = {"chonkie.code"}
ENGINES = [n for n in matrix.engines() if n not in OFFLINE_IMPOSSIBLE]
ROWS = [row for row in TEXT_CLASSES if row.name != ONE_MB_LINE]
BIG = next(row for row in TEXT_CLASSES if row.name == ONE_MB_LINE)
#: What the libraries refuse on some texts (their own message, passed on in one line).
KNOWN_REFUSALS = {"semchunk": "maximum recursion depth exceeded"}


def check_cell(name: str, text: str) -> matrix.Cell:
    """Run ``name`` with the matrix's configuration on ``text`` and check the cell."""
    config = Config.create(name, **matrix.engine_params(name))
    chunks = chunking.run(text, config)
    check_library_invariants(text, chunks, config)
    cell = matrix.summarise(text, chunks)
    assert cell.chunks == len(chunks) > 0
    # Flagged as left out: exactly the text no chunk covers ...
    assert cell.left_out == cell.left_out_flagged == len(uncovered(text, chunks))
    # ... and no visible character: placed in order, the chunks cover all of it.
    lost = {text[i] for i in uncovered(text, chunks)}
    assert all(not ch.isprintable() for ch in lost), f"{name} blamed for {sorted(lost)[:10]}"
    for c in chunks:
        if matrix.replaced(c):
            assert any(f.startswith("text altered") for f in c.flags), c.flags
    return cell


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
@pytest.mark.parametrize("name", ENGINES)
def test_every_engine_on_every_row(name: str, row: TextClass) -> None:
    cell = check_cell(name, row.text)
    words = cell.row()
    assert tuple(words) == matrix.COLUMNS
    assert words[matrix.COLUMNS[0]].startswith("exact") == (cell.flagged_chunks == 0)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
@settings(max_examples=12)
@given(data=st.data())
def test_every_engine_on_random_repetitions_and_mixtures(row: TextClass, data: Any) -> None:
    name = data.draw(st.sampled_from(ENGINES))
    count = data.draw(st.integers(1, 2 * row.repeats))
    picks = data.draw(
        st.one_of(
            st.just(list(range(count))),  # the units in order, repeated a random number
            st.lists(st.integers(0, len(row.units) - 1), min_size=1, max_size=count),
        )
    )
    text = row.build(picks)
    try:
        check_cell(name, text)
    except ValueError as exc:
        refusal = KNOWN_REFUSALS.get(name)
        assert refusal and refusal in str(exc), f"{name} failed: {exc}"


def test_the_placement_is_what_the_old_first_match_got_wrong() -> None:
    # The first case, as a row: LlamaIndex reports every chunk at the first
    # place its text occurs; placed in order, nothing is left out.
    row = TEXT_CLASSES[0]
    cell = check_cell("llamaindex.sentence", row.text)
    assert cell.left_out == 0
    assert cell.flagged["library offset wrong"] > 0


def test_a_engine_that_cannot_run_here_is_a_cell_that_says_so() -> None:
    cell = matrix.measure("chonkie.code", ROWS[0].text)
    assert cell.error is not None and "\n" not in cell.error
    assert cell.row()[matrix.COLUMNS[0]] == "not run"


@pytest.mark.slow
@pytest.mark.parametrize("name", ENGINES)
def test_every_engine_on_a_1_mb_single_line(name: str) -> None:
    assert len(BIG.text) >= 1_000_000 and "\n" not in BIG.text
    check_cell(name, BIG.text)


# --- export snippets declared exact, on every row ---------------------------------------


def exact_snippets(*targets: str) -> list[tuple[Config, str]]:
    return [(c, t) for c, t in matrix.exact_snippets() if t in targets]


def label(case: tuple[Config, str]) -> str:
    return matrix.snippet_label(*case)


def check_snippet(config: Config, target: str, rows: list[TextClass], tmp_path: Path) -> None:
    """The snippet gives our chunks on every row it does not name, and differs on every
    row it names."""
    declared = snippet(config, target).not_exact_on
    assert set(declared) <= set(ROW_NAMES)
    got = matrix.run_snippet(config, target, [row.text for row in rows], tmp_path)
    for row, theirs in zip(rows, got, strict=True):
        cell = matrix.compare(matrix.ours(config, target, row.text), theirs)
        if row.name in declared:
            assert not cell.exact, f"{label((config, target))} declares {row.name!r} but is exact"
        else:
            assert cell.exact, f"{label((config, target))} on {row.name!r}: {cell.text()}"


def test_every_exact_target_is_in_the_matrix() -> None:
    targets = {t for _, t in matrix.exact_snippets()}
    assert targets == {"langchain", "python", "cli"}


@pytest.mark.parametrize(
    "case", exact_snippets("langchain", "python"), ids=lambda c: label(c).replace(" ", "")
)
def test_exact_snippets_on_every_row(case: tuple[Config, str], tmp_path: Path) -> None:
    check_snippet(*case, ROWS, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("case", exact_snippets("cli"), ids=lambda c: label(c).replace(" ", ""))
def test_exact_cli_snippets_on_every_row(case: tuple[Config, str], tmp_path: Path) -> None:
    check_snippet(*case, ROWS, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(
    "case", exact_snippets("langchain", "python"), ids=lambda c: label(c).replace(" ", "")
)
def test_exact_snippets_on_a_1_mb_single_line(case: tuple[Config, str], tmp_path: Path) -> None:
    check_snippet(*case, [BIG], tmp_path)


@pytest.mark.parametrize(
    "case", exact_snippets("langchain"), ids=lambda c: label(c).replace(" ", "")
)
def test_exact_snippets_on_random_mixtures_of_the_rows_they_do_not_name(
    case: tuple[Config, str], tmp_path: Path
) -> None:
    # Other repetition counts and mixtures of each row (seeded: one interpreter runs
    # them all), where the declaration promises our chunks.
    config, target = case
    declared = snippet(config, target).not_exact_on
    rng = random.Random(22)
    texts = []
    for row in ROWS:
        if row.name in declared:
            continue
        for _ in range(4):
            count = rng.randint(1, 2 * row.repeats)
            texts.append(row.build([rng.randrange(len(row.units)) for _ in range(count)]))
    got = matrix.run_snippet(config, target, texts, tmp_path)
    for text, theirs in zip(texts, got, strict=True):
        assert matrix.ours(config, target, text) == theirs


# --- the published table --------------------------------------------------------------


def test_the_published_matrix_has_every_engine_row_and_snippet() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "unicode_matrix.md").read_text(
        encoding="utf-8"
    )
    assert "python bench/unicode_matrix.py" in doc
    for name in matrix.engines():
        assert f"`{name}`" in doc
    for row in ROW_NAMES:
        assert f"| {row} |" in doc
    for column in matrix.COLUMNS:
        assert column in doc
    for case in matrix.exact_snippets():
        assert label(case) in doc
