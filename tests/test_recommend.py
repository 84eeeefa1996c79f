"""recommend(): document type, strategy, evidence and a valid configuration."""

from __future__ import annotations

import importlib.metadata
import random
import re
import textwrap

import pytest

import chunking
from chunking import Config
from chunking.analysis.recommend import LEGAL_SEPARATORS, SAMPLE_CHARS, Recommendation, recommend
from chunking.analysis.report import make_report
from chunking.config import _REGISTRY
from chunking.documents.io import read_path
from chunking.params import Param, Strategy, size_param
from tests.conftest import SAMPLE_DOCS

#: The strategy each kind asks for, and its size range in tokens (the seeds' table).
PREFERRED = {
    "markdown": ("markdown", 500, 1000),
    "legal": ("recursive", 1000, 2000),
    "code": ("code", 200, 500),
    "conversation": ("conversation", 100, 300),
    "html": ("html", 300, 1000),
    "text": ("recursive", 300, 500),
    "json": ("recursive", 300, 500),
}
#: Rough units per token, to compare sizes that are not counted in tokens.
PER_TOKEN = {"tokens": 1.0, "words": 0.75, "chars": 4.0}

MARKDOWN = textwrap.dedent(
    """\
    # Installing Widgetd

    Widgetd runs on Linux and macOS. This page covers installation and upgrades.

    ## Requirements

    You need Python 3.10 or newer and about 200 MB of disk space.

    ```bash
    pip install widgetd
    ```

    ## Configuration

    The configuration lives in `/etc/widgetd.toml`.

    ```toml
    [server]
    port = 8080
    ```

    ### Logging

    Logs go to the journal by default.
    """
)

LEGAL = textwrap.dedent(
    """\
    CONSULTING AGREEMENT

    WHEREAS the Client wishes to engage the Consultant, hereinafter the "Consultant",
    and the Consultant is willing to provide the Services described herein;

    ARTICLE I - DEFINITIONS

    1. Definitions

    1.1 "Services" means the advisory services set out in Schedule 1 hereto.

    1.2 "Fees" means the amounts payable under Section 3 of this Agreement.

    ARTICLE II - SERVICES

    2. Provision of Services

    2.1 The Consultant shall provide the Services with reasonable skill and care.

    2.2 Notwithstanding clause 2.1, the Consultant is not liable for delays caused by
    the Client.

    Section 3 Fees

    3.1 The Client shall pay the Fees within thirty days of each invoice.

    3.2 The parties hereby agree that late payments carry interest at 4% a year.
    """
)

PYTHON = textwrap.dedent(
    """\
    import math
    from dataclasses import dataclass


    @dataclass
    class Point:
        x: float
        y: float

        def norm(self) -> float:
            return math.hypot(self.x, self.y)


    def centroid(points: list[Point]) -> Point:
        if not points:
            raise ValueError("no points")
        n = len(points)
        return Point(sum(p.x for p in points) / n, sum(p.y for p in points) / n)
    """
)

JAVASCRIPT = textwrap.dedent(
    """\
    const express = require("express");
    const app = express();

    function greet(name) {
      return `Hello, ${name}!`;
    }

    app.get("/hello/:name", (req, res) => {
      res.send(greet(req.params.name));
    });

    app.listen(3000);
    """
)

CHAT = textwrap.dedent(
    """\
    Alice: Morning! Did the nightly build pass?
    Bob: It failed on the integration tests again.
    Alice: The flaky database one?
    Bob: Yes, the connection pool times out after 30 seconds.
    Carol: I bumped the pool size yesterday, let me check the config.
    Alice: Thanks Carol.
    Carol: Found it, the override was in the wrong file. Fixing now.
    Bob: Great, I'll re-run the pipeline when you push.
    """
)

HTML = textwrap.dedent(
    """\
    <!DOCTYPE html>
    <html lang="en">
    <head><title>Teapot 3000</title></head>
    <body>
      <h1>Teapot 3000</h1>
      <p>The only teapot you will ever need.</p>
      <h2>Specifications</h2>
      <ul><li>1.2 litres</li><li>Stainless steel</li></ul>
    </body>
    </html>
    """
)

PROSE = textwrap.dedent(
    """\
    The river was low that summer, lower than anyone in the village could remember.
    Children walked across stones that had been hidden for decades, and the old
    mill wheel stood dry, its paddles bleached by the sun.

    By August the farmers had stopped talking about rain. They talked instead about
    the wells, which ones still held water and which had gone to mud, and about the
    price of hay coming up from the valley.
    """
)

JSON_DOC = '{"recipes": [{"title": "Soup", "minutes": 30}, {"title": "Salad", "minutes": 10}]}'

INLINE = [
    pytest.param(MARKDOWN, "guide.md", "markdown", id="markdown"),
    pytest.param(MARKDOWN, None, "markdown", id="markdown-no-name"),
    pytest.param(LEGAL, "agreement.txt", "legal", id="legal"),
    pytest.param(LEGAL, None, "legal", id="legal-no-name"),
    pytest.param(PYTHON, "geometry.py", "code", id="python"),
    pytest.param(PYTHON, None, "code", id="python-no-name"),
    pytest.param(JAVASCRIPT, None, "code", id="javascript-no-name"),
    pytest.param(PROSE, "notes.rs", "code", id="extension-wins"),
    pytest.param(CHAT, "chat.txt", "conversation", id="conversation"),
    pytest.param(HTML, "page.html", "html", id="html"),
    pytest.param(HTML, None, "html", id="html-no-name"),
    pytest.param(PROSE, "story.txt", "text", id="prose"),
    pytest.param(PROSE, "story.md", "text", id="prose-md-without-headers"),
    pytest.param(JSON_DOC, "recipes.json", "json", id="json"),
]

#: Sample documents shipped with the app and the kind each one is.
SAMPLE_KINDS = {
    "technical_guide.md": "markdown",
    "service_agreement.txt": "legal",
    "inventory.py": "code",
    "support_chat.txt": "conversation",
    "product_page.html": "html",
    "german_article.txt": "text",
    "long_essay.txt": "text",
    "recipes.json": "json",
}


def check_recommendation(rec: Recommendation, kind: str, *, capped: bool = True) -> None:
    """The promises every recommendation keeps; ``capped``: made for the bundled
    embedding model's window (the default) rather than for an LLM's context alone."""
    assert isinstance(rec, Recommendation)
    assert rec.kind == kind
    preferred, low, high = PREFERRED[kind]
    registry = chunking.strategies()
    if preferred in registry:
        assert rec.strategy == preferred
        assert "not available" not in rec.reason
    else:
        assert rec.strategy == "recursive"
        assert f'"{preferred}" strategy is not available' in rec.reason
    assert rec.config.strategy == rec.strategy
    # The configuration only uses registered parameters and validates.
    assert Config.create(rec.strategy, **rec.config.params) == rec.config
    assert Config.from_dict(rec.config.to_dict()) == rec.config
    spec = registry[rec.strategy]
    unit_param = spec.param("unit") if "unit" in spec.param_names else None
    limit = rec.config.limit
    assert limit is not None
    if capped and unit_param is not None and "model" in (unit_param.choices or ()):
        # Counted in the embedding model's word pieces, within its 254 pieces of text.
        assert rec.config.unit == "model"
        assert limit == min(254, limit) and limit >= min(low, 254)
        assert "all-MiniLM-L6-v2 reads 256 word pieces" in rec.reason
        if low > 254:  # the budget for an LLM's context was capped: the reason says so
            assert "would suit a language model's context better" in rec.reason
    else:
        if unit_param is not None and "tokens" in (unit_param.choices or ()):
            assert rec.config.unit == "tokens"
        tokens = limit / PER_TOKEN[rec.config.unit]
        assert low <= tokens <= high, f"{limit} {rec.config.unit} is outside {low}-{high} tokens"
    check_overlap(rec, spec, limit)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", rec.reason) if s]
    assert 1 <= len(sentences) <= 3, rec.reason
    assert re.search(r"\d", rec.reason), "the reason should count the evidence"


def check_overlap(rec: Recommendation, spec: Strategy, limit: int) -> None:
    if "overlap" not in spec.param_names:
        assert "overlap" not in rec.config.params
        return
    overlap = rec.config.params["overlap"]
    if chunking.params.overlap_below_size in spec.checks:  # counted in the size unit
        assert 0.10 * limit <= overlap <= 0.20 * limit
    else:  # counted in whole messages/sentences
        assert 1 <= overlap < limit
        assert overlap <= 2


@pytest.mark.parametrize(("text", "filename", "kind"), INLINE)
def test_inline_documents(text: str, filename: str | None, kind: str) -> None:
    check_recommendation(recommend(text, filename), kind)
    check_recommendation(recommend(text, filename, window=None), kind, capped=False)


@pytest.mark.parametrize(
    "name", [n for n in SAMPLE_KINDS if (SAMPLE_DOCS / n).is_file()] or ["(none)"]
)
def test_sample_documents(name: str) -> None:
    path = SAMPLE_DOCS / name
    assert path.is_file(), f"no sample documents in {SAMPLE_DOCS}"
    document = read_path(path)
    check_recommendation(recommend(document.text, document.name), SAMPLE_KINDS[name])
    uncapped = recommend(document.text, document.name, window=None)
    check_recommendation(uncapped, SAMPLE_KINDS[name], capped=False)
    # Content alone is enough evidence for these documents.
    assert recommend(document.text).kind == SAMPLE_KINDS[name]


def test_every_sample_document_has_an_expected_kind() -> None:
    names = {p.name for p in SAMPLE_DOCS.iterdir() if p.is_file() and p.name != "README.md"}
    assert names <= set(SAMPLE_KINDS), f"add the kind of {names - set(SAMPLE_KINDS)}"


# ------------------------------------------------------------------ the evidence


def test_markdown_reason_counts_headers_and_fences() -> None:
    reason = recommend(MARKDOWN, "guide.md").reason
    headers = len(re.findall(r"^#{1,6} ", MARKDOWN, re.M))
    fences = MARKDOWN.count("```") // 2
    assert f"{headers} Markdown headers" in reason
    assert f"{fences} fenced code blocks" in reason


def test_python_comments_in_fences_are_not_headers() -> None:
    text = "# Guide\n\nIntro.\n\n```python\n# not a header\nx = 1\n```\n\n## Next\n\nMore.\n"
    assert "2 Markdown headers" in recommend(text, "g.md").reason


def test_legal_reason_names_sections_and_terms() -> None:
    reason = recommend(LEGAL, "agreement.txt").reason
    assert "ARTICLE/Section heading" in reason
    assert "numbered clause" in reason
    assert "legal term" in reason


def test_conversation_reason_names_the_speakers() -> None:
    reason = recommend(CHAT).reason
    for speaker in ("Alice", "Bob", "Carol"):
        assert speaker in reason
    turns = len(CHAT.strip().splitlines())
    assert f"{turns} speaker turns" in reason


def test_code_reason_names_the_extension() -> None:
    assert ".py" in recommend(PYTHON, "geometry.py").reason


def test_prose_reason_counts_words() -> None:
    words = len(PROSE.split())
    assert f"{words} words" in recommend(PROSE).reason


# --------------------------------------------------------- legal section cutting


def test_legal_separators_cut_before_section_numbers() -> None:
    rec = recommend(LEGAL, "agreement.txt")
    assert rec.config.params["separators"] == list(LEGAL_SEPARATORS)
    assert rec.config.params["is_separator_regex"] is True
    small = Config.create(rec.strategy, **{**rec.config.params, "size": 45, "overlap": 0})
    chunks = chunking.run(LEGAL, small)
    assert len(chunks) > 3
    starts = re.compile(r"(CONSULTING|WHEREAS|ARTICLE|Section \d|\d+\.\d*\s)")
    for chunk in chunks:
        assert starts.match(chunk.text), f"chunk does not start at a section: {chunk.text!r}"


# ---------------------------------------------------------------- fallbacks


def test_missing_strategy_falls_back_to_recursive(monkeypatch: pytest.MonkeyPatch) -> None:
    chunking.strategies()
    monkeypatch.delitem(_REGISTRY, "markdown", raising=False)
    rec = recommend(MARKDOWN, "guide.md")
    assert rec.kind == "markdown"
    assert rec.strategy == "recursive"
    assert '"markdown" strategy is not available' in rec.reason
    assert '"recursive" is used instead' in rec.reason
    assert Config.create("recursive", **rec.config.params) == rec.config


def _no_split(text, params, sizer):  # pragma: no cover - never run
    return iter(())


def test_strategy_without_overlap_or_unit_gets_neither(monkeypatch: pytest.MonkeyPatch) -> None:
    chunking.strategies()
    plain = Strategy(
        "conversation",
        "Conversation (test double)",
        "A strategy with only a size parameter, counted in characters.",
        (size_param(1000), Param("mode", str, "a", "A mode.", choices=("a", "b"))),
        _no_split,
    )
    monkeypatch.setitem(_REGISTRY, "conversation", plain)
    rec = recommend(CHAT)
    assert rec.strategy == "conversation"
    assert set(rec.config.params) == {"size", "mode"}
    assert rec.config.params["mode"] == "a"
    # No unit parameter: the size is counted in characters, so the token budget grows.
    assert 100 * PER_TOKEN["chars"] <= rec.config.params["size"] <= 300 * PER_TOKEN["chars"]
    assert rec.config.params["size"] <= 254 / 1.5 * PER_TOKEN["chars"]  # within the window
    assert "overlap" not in rec.reason


def test_huge_documents_are_profiled_from_a_sample() -> None:
    text = ("A plain sentence about nothing in particular. " * 30 + "\n\n") * (
        SAMPLE_CHARS // 1400 + 10
    )
    assert len(text) > SAMPLE_CHARS
    rec = recommend(text, "big.txt")
    assert rec.kind == "text"
    assert f"in the first {SAMPLE_CHARS:,} characters" in rec.reason


@pytest.mark.parametrize("language", ["python", "cobol", None])
def test_known_language_is_passed_to_a_strategy_that_takes_it(language: str | None) -> None:
    rec = recommend(PYTHON, "geometry.py", language=language)
    spec = chunking.strategies()[rec.strategy]
    if "language" not in spec.param_names:
        assert "language" not in rec.config.params
        return
    choices = spec.param("language").choices or ()
    if language in choices:
        assert rec.config.params["language"] == language
    else:
        assert rec.config.params["language"] == spec.param("language").default


# ---------------------------------------------------------- the embedding window


def test_the_size_follows_the_embedding_models_window() -> None:
    wide = recommend(MARKDOWN, "guide.md", window=512)
    assert (wide.config.unit, wide.config.limit) == ("model", 510)
    assert "reads 512 word pieces" in wide.reason
    assert "800 tokens would suit a language model's context better" in wide.reason
    assert "Parent-child" in wide.reason
    for_llm = recommend(MARKDOWN, "guide.md", window=None)
    assert (for_llm.config.unit, for_llm.config.limit) == ("tokens", 800)
    assert "word pieces" not in for_llm.reason
    with pytest.raises(ValueError, match="window"):
        recommend(MARKDOWN, "guide.md", window=2)


def test_a_size_within_the_window_says_it_fits() -> None:
    rec = recommend(CHAT)
    assert (rec.config.unit, rec.config.limit) == ("model", 200)
    assert "fits the embedding model's window" in rec.reason


@pytest.mark.parametrize("name", ["technical_guide.md", "inventory.py", "product_page.html"])
def test_suggested_chunks_fit_the_bundled_model(name: str) -> None:
    document = read_path(SAMPLE_DOCS / name)
    rec = recommend(document.text, document.name)
    chunks = chunking.run(document.text, rec.config)
    report = make_report(document, rec.config, chunks)
    truncated = next((w for w in report.warnings if w.kind == "truncated"), None)
    assert truncated is None or truncated.count * 10 <= len(chunks), truncated


# ------------------------------------------------- foreign documents (issue 16)


def test_comment_lines_in_a_pdfs_examples_are_not_markdown_headers() -> None:
    text = (
        "Shared MIME-info Database\n\n1. Introduction\nThe lines are ordered by weight. "
        "For example:\n# This file was automatically generated by the\n# update-mime-database "
        "command. DO NOT EDIT!\n...\ntext/x-diff:*.patch\n\n# Generated list\n"
        "55:text/x-diff:*.patch\n\n2. Unicode\nThe XML files are in UTF-8. " * 3
    )
    assert recommend(text, "spec.pdf").kind != "markdown"
    # The same comment blocks in a .txt file are not headers either.
    assert recommend(text.replace("# Generated list\n", ""), "spec.txt").kind != "markdown"


def test_a_licence_with_numbered_sections_is_legal_text() -> None:
    terms = "\n".join(
        f"{n}. Term {n}.\nThe Licensor grants you the rights below, without any warranty; "
        "the Licensor's liability is limited as set out in this section."
        for n in range(12)
    )
    rec = recommend(terms, "LICENSE.txt")
    assert rec.kind == "legal"
    assert "12 numbered clauses" in rec.reason


def test_prose_with_numbered_sections_says_so() -> None:
    prose = "\n\n".join(
        f"{n}. Section {n}\nA plain paragraph about the weather and the garden today."
        for n in range(1, 9)
    )
    rec = recommend(prose, "notes.txt")
    assert rec.kind == "text"
    assert "8 numbered sections" in rec.reason
    assert "without" not in rec.reason
    assert rec.config.params["separators"] == list(LEGAL_SEPARATORS)


# ------------------------------------- sections that structure the text (issue 27)

_PHRASES = (
    "the old house stood at the end of a lane where the hedges grew tall and the light "
    "came late in the morning she walked slowly past the gate and thought about her "
    "brother who had gone away to the city years before nobody spoke of him now except "
    "the miller whose voice carried across the yard when the wind turned cold"
)
_WORDS = _PHRASES.split()


def _novel(chapters: int = 40, seed: int = 27) -> str:
    """Novel-like prose: numbered chapters (CHAPTER I, II, ...) of paragraphs of
    sentences drawn from a small vocabulary; about 300 KB."""
    rng = random.Random(seed)
    parts = ["THE LONG LANE\n\nA Novel\n"]
    for n in range(1, chapters + 1):
        parts.append(f"\nCHAPTER {_roman(n)}\n")
        for _ in range(rng.randint(18, 24)):
            sentences = []
            for _ in range(rng.randint(3, 6)):
                words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 20))]
                sentences.append(" ".join(words).capitalize() + rng.choice(".!?"))
            parts.append(" ".join(sentences) + "\n")
    return "\n".join(parts)


def _roman(n: int) -> str:
    out = ""
    for value, letters in ((40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out, n = out + letters, n - value
    return out


#: A licence appended to an e-book, in the style of the archives that distribute them
#: (written for this test): numbered sections full of legal vocabulary.
APPENDIX = "\n\n".join(
    [
        "*** END OF THIS ELECTRONIC BOOK ***",
        "THE FULL LICENCE",
        "Please read this before you distribute or use this work.",
        *(
            f"Section {n}. {title}\n\n"
            + " ".join(
                f"{n}.{letter}. The Licensor hereby grants you the rights set out herein, "
                "without any warranty of any kind; the Licensor's liability for damages is "
                "limited as stated in this section, notwithstanding any other term hereof."
                for letter in "ABCDEF"
            )
            for n, title in enumerate(
                [
                    "General terms of use and redistribution",
                    "About the volunteers who keep these works free",
                    "About the foundation behind the archive",
                    "About donations to the foundation",
                    "General information about electronic works",
                ],
                start=1,
            )
        ),
    ]
)


def test_a_licence_appendix_does_not_make_a_novel_legal_text() -> None:
    book = _novel() + "\n\n" + APPENDIX
    assert len(book) > 250_000 and book.index("Section 1.") > 0.95 * len(book)
    rec = recommend(book, "the_long_lane.txt")
    assert rec.kind == "text"
    # Cut at paragraphs and sentences (the default separators), not before legal headings.
    default = chunking.get_strategy(rec.strategy).defaults()
    assert rec.config.params["separators"] == default["separators"]
    assert "5 numbered sections all come after 9" in rec.reason
    assert "an appendix rather than its structure" in rec.reason
    # The appendix alone is the legal text it looks like.
    assert recommend(APPENDIX, "LICENCE.txt").kind == "legal"


def _apache_licence() -> str:
    """The Apache License 2.0 as a package in this environment ships it."""
    for dist in importlib.metadata.distributions():
        for file in dist.files or ():
            if file.name.upper().startswith("LICEN"):
                try:
                    text = file.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                if "Apache License" in text and "TERMS AND CONDITIONS FOR USE" in text:
                    return text
    pytest.fail("no package in this environment ships the Apache License 2.0 text")


def test_a_real_licence_is_legal_text_cut_at_its_sections() -> None:
    licence = _apache_licence()
    rec = recommend(licence, "LICENSE")
    assert rec.kind == "legal"
    assert rec.config.params["separators"] == list(LEGAL_SEPARATORS)
    # Its nine numbered sections, from "1. Definitions." to "9. Accepting Warranty".
    clauses = len(re.findall(r"^[ \t]*\d\.[ \t]+[A-Z]", licence, re.M))
    assert f"{clauses} numbered clauses" in rec.reason


def _contract(clauses: int = 24) -> str:
    """A service contract: a title and recitals, then articles of numbered clauses."""
    parts = [
        "MASTER SERVICES AGREEMENT",
        "This Agreement is made between Northwind Ltd (the Supplier) and Tailspin plc "
        "(the Customer). WHEREAS the Customer wishes to obtain the Services described "
        "herein, the parties hereby agree as follows.",
    ]
    for n in range(1, clauses + 1):
        if n % 4 == 1:
            parts.append(f"ARTICLE {_roman(n // 4 + 1)} - OBLIGATIONS {n // 4 + 1}")
        parts.append(
            f"{n}. Clause {n}\n{n}.1 The Supplier shall perform its obligations hereunder "
            "with reasonable skill and care. Notwithstanding the foregoing, neither party's "
            f"liability under clause {n} shall exceed the fees paid in the preceding year.\n"
            f"{n}.2 Each party shall indemnify the other against claims arising hereof."
        )
    return "\n\n".join(parts)


def test_a_contract_is_legal_text_cut_before_its_clauses() -> None:
    contract = _contract()
    rec = recommend(contract, "msa.txt")
    assert rec.kind == "legal"
    assert rec.config.params["separators"] == list(LEGAL_SEPARATORS)
    assert "6 ARTICLE/Section headings" in rec.reason
    chunks = chunking.run(contract, rec.config)
    assert all(re.match(r"(MASTER|This|ARTICLE|\d+\.)", c.text) for c in chunks), [
        c.text[:30] for c in chunks if not re.match(r"(MASTER|This|ARTICLE|\d+\.)", c.text)
    ]


def test_numbered_items_in_one_stretch_of_prose_are_a_list_not_sections() -> None:
    prose = "\n\n".join([PROSE] * 12)
    middle = len(prose) // 2
    steps = "\n".join(f"{n}. Step {n} of the walk." for n in range(1, 6))
    text = prose[:middle] + "\n\n" + steps + "\n\n" + prose[middle:]
    rec = recommend(text, "notes.txt")
    assert rec.kind == "text" and rec.config.params["separators"] != list(LEGAL_SEPARATORS)
    assert "a list rather than its structure" in rec.reason


def test_a_suggestion_is_one_line_with_the_reason_apart() -> None:
    rec = recommend(_contract(), "msa.txt")
    assert rec.summary == rec.config.label(title=True)
    assert "\n" not in rec.summary and len(rec.summary) < 60
    assert str(rec.config.limit) in rec.summary and rec.config.spec.label in rec.summary
    assert rec.summary not in rec.reason and len(rec.reason) > 3 * len(rec.summary)


def test_a_stray_numbered_line_in_a_book_does_not_make_its_appendix_run_through_it() -> None:
    """A book whose prose has one line starting with a number ("255. If you try…", as
    in the Rust book) and whose licence appendix holds the other numbered sections: the
    stray line a quarter in does not stretch the sections over the book."""
    novel = _novel()
    quarter = novel.index("\n\n", len(novel) // 4)
    stray = "\n\n255. If you try to change the value outside that range, it will not compile."
    appendix = APPENDIX + "".join(
        f"\n\n  {n}. Further terms.\n\n  The Licensor grants this herein." for n in range(6, 20)
    )
    book = novel[:quarter] + stray + novel[quarter:] + "\n\n" + appendix
    rec = recommend(book, "the_long_lane.txt")
    assert rec.kind == "text"
    default = chunking.get_strategy(rec.strategy).defaults()
    assert rec.config.params["separators"] == default["separators"]
    assert "nearly all come after 9" in rec.reason
