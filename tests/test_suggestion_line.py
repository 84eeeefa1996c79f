"""The suggestion reads as one line (strategy, size, unit) with the reasoning behind a
"Why": in the app's sidebar and in the command line's ``--strategy auto``."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from chunking.analysis.recommend import recommend
from chunking.cli import main
from chunking.documents.io import read_path
from pages import config_controls

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 120


def _explore(sample: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(sample=sample)
    at.run()
    at.switch_page("pages/explore_page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("sample", ["technical_guide.md", "support_chat.txt"])
def test_the_sidebar_suggestion_is_one_line_with_the_reason_behind_why(sample: str) -> None:
    document = read_path(ROOT / "sample_docs" / sample)
    rec = recommend(document.text, document.name)
    at = _explore(sample)
    lines = [m.value for m in at.sidebar.markdown if "Suggested for this" in m.value]
    assert lines == [f"**Suggested for this {rec.kind}: {rec.summary}**"]
    assert "\n" not in rec.summary and rec.reason not in lines[0]
    why = [e for e in at.sidebar.expander if e.label == "Why"]
    assert len(why) == 1
    assert [c.value for c in why[0].caption] == [rec.reason]
    # the reason is nowhere else in the sidebar
    outside = [c.value for c in at.sidebar.caption if c.value == rec.reason]
    assert len(outside) == 1


def test_after_using_it_the_line_stays_and_why_stays_behind_the_expander() -> None:
    document = read_path(ROOT / "sample_docs" / "support_chat.txt")
    rec = recommend(document.text, document.name)
    at = _explore("support_chat.txt")
    at.button(key="use_recommendation").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key=config_controls.STRATEGY_KEY).value == rec.strategy
    used = [s.value for s in at.sidebar.success if "Using the suggested" in s.value]
    assert used == [f"Using the suggested configuration for this {rec.kind}: **{rec.summary}**."]
    assert all(b.key != "use_recommendation" for b in at.sidebar.button)
    why = [e for e in at.sidebar.expander if e.label == "Why"]
    assert [c.value for c in why[0].caption] == [rec.reason]


def test_cli_auto_prints_the_suggestion_on_one_line_then_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = ROOT / "sample_docs" / "technical_guide.md"
    rec = recommend(read_path(path).text, path.name)
    code = main(["split", str(path), "--format", "jsonl"])
    _, err = capsys.readouterr()
    assert code == 0
    lines = err.splitlines()
    assert lines[0] == (
        f"chunk-explorer: strategy auto: using {rec.strategy!r}: {rec.summary} "
        f"(suggested for this {rec.kind} document)"
    )
    assert lines[1] == f"chunk-explorer: why: {rec.reason}"
    assert len(lines) == 2


def test_cli_auto_line_shows_the_size_actually_used(capsys: pytest.CaptureFixture[str]) -> None:
    path = ROOT / "sample_docs" / "technical_guide.md"
    rec = recommend(read_path(path).text, path.name)
    code = main(["split", str(path), "--size", "120"])
    _, err = capsys.readouterr()
    assert code == 0
    first = err.splitlines()[0]
    assert f"using {rec.strategy!r}: " in first and f"120 {rec.config.unit}" in first
    assert rec.summary not in first


def test_the_suggestion_parses_the_markdown_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from markdown_it import MarkdownIt

    parsed: list[int] = []
    real = MarkdownIt.parse

    def counted(self: MarkdownIt, src: str, env: object = None) -> object:
        parsed.append(len(src))
        return real(self, src, env)

    monkeypatch.setattr(MarkdownIt, "parse", counted)
    text = "# A guide\n\nIntro.\n\n```\n# not a header\n```\n\n## Use\n\nRun it.\n" * 3
    text += f"\n{uuid.uuid4()}\n"  # a sample no earlier call has parsed
    rec = recommend(text, "guide.md")
    assert rec.kind == "markdown" and "6 Markdown headers" in rec.reason
    # detection parses it once; the check for tiny sections cuts it once (merge small)
    assert parsed == [len(text), len(text)]
    assert rec.config.params["merge_small"] and "Merge small is on" in rec.reason
