"""The recommendation parses its sample's Markdown once per call (three detectors ask
for the text without its fenced code), with exactly the results of parsing it each
time, and a changed text is parsed anew. Apart from that shared parse, only the
merge-small check cuts the start of the text (at most ``MERGE_CHECK_CHARS``), once."""

from __future__ import annotations

from unittest import mock

import pytest
from markdown_it import MarkdownIt

from chunking.analysis import recommend as rec
from chunking.documents.io import read_path
from tests.conftest import chroma_corpora, sample_paths

#: Fenced code holding markup and headings that the detectors must not count.
FENCED = (
    "# Guide\n\nIntro text.\n\n## Usage\n\n````md\n# not a heading\n```\n<div>x</div>\n"
    "```\n````\n\n## Next\n\nMore text.\n"
)


def _texts() -> dict[str, tuple[str, str]]:
    """Name: (text, file name), from every type of sample and a long corpus."""
    texts = {p.name: (read_path(p).text, p.name) for p in sample_paths()}
    texts["fenced.md"] = (FENCED * 50, "fenced.md")
    for path in chroma_corpora()[:2]:
        texts[path.name] = (path.read_text(encoding="utf-8")[:300_000], path.name)
    return texts


TEXTS = _texts()


def _parses(text: str, filename: str) -> int:
    """How many times markdown-it parses during one recommendation of ``text``, leaving
    out the merge-small check's own cut of the text's start (:func:`_counted_parses`)."""
    return _counted_parses(text, filename)[0]


def _counted_parses(text: str, filename: str) -> tuple[int, list[int]]:
    """Parses outside the merge-small check, and the lengths it parsed inside it."""
    checking: list[bool] = []
    outside: list[int] = []
    inside: list[int] = []
    merging = rec._merging_small_sections
    parse = MarkdownIt.parse

    def check(text: str, config: object) -> object:
        checking.append(True)
        try:
            return merging(text, config)  # type: ignore[arg-type]
        finally:
            checking.pop()

    def counted(self: MarkdownIt, src: str, env: object = None) -> object:
        (inside if checking else outside).append(len(src))
        return parse(self, src, env)  # type: ignore[arg-type]

    with (
        mock.patch.object(rec, "_merging_small_sections", side_effect=check),
        mock.patch.object(MarkdownIt, "parse", autospec=True, side_effect=counted),
    ):
        rec.recommend(text, filename)
    return len(outside), inside


def test_the_merge_small_check_cuts_only_the_start_once() -> None:
    text, filename = TEXTS["fenced.md"]
    _, inside = _counted_parses(text * 40, filename)  # longer than the check reads
    assert len(text * 40) > rec.MERGE_CHECK_CHARS
    assert inside == [rec.MERGE_CHECK_CHARS]


@pytest.mark.parametrize("name", ["fenced.md", "technical_guide.md", "product_page.html"])
def test_a_recommendation_parses_its_sample_once(name: str) -> None:
    text, filename = TEXTS[name]
    rec._without_fenced_code.cache_clear()
    assert _parses(text, filename) == 1
    changed = text + "\n\n```\n# inside a new fence\n```\n"
    assert _parses(changed, filename) == 1  # a changed text is parsed anew


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_the_shared_parse_recommends_what_parsing_each_time_does(name: str) -> None:
    text, filename = TEXTS[name]
    shared = rec.recommend(text, filename)
    uncached = rec._without_fenced_code.__wrapped__
    with mock.patch.object(rec, "_without_fenced_code", side_effect=uncached) as each:
        direct = rec.recommend(text, filename)
    assert shared == direct
    assert rec._without_fenced_code(text) == uncached(text)
    assert each.call_count >= 1  # the detectors did ask for it


def test_the_fenced_text_is_read_without_its_fences() -> None:
    text, filename = TEXTS["fenced.md"]
    prose = rec._without_fenced_code(text)
    assert "not a heading" not in prose and "<div>" not in prose
    assert prose.count("## Usage") == 50
    assert rec.recommend(text, filename).kind == "markdown"
