"""Document-type detection reads the document's own markup, not the markup it shows as
code: a Markdown spec full of HTML examples is Markdown."""

from __future__ import annotations

import pytest

from chunking.analysis.recommend import recommend

FENCE = "`" * 32


def spec_like(examples: int = 60) -> str:
    """A CommonMark-spec-shaped document: headings, prose and many 32-backtick example
    blocks holding HTML (and, inside them, lines of three backticks)."""
    parts = ["# A Markdown specification\n\nVersion 0.1. This text describes the syntax.\n"]
    for i in range(examples):
        if i % 10 == 0:
            parts.append(f"\n## Section {i // 10}\n\nProse explaining the rules of section.\n")
        parts.append(
            f'\nExample {i}:\n\n{FENCE} example\n```\n<div class="x"><p>cell {i}</p>'
            f"<table><tr><td>a</td></tr></table></div>\n```\n.\n<pre><code>&lt;div&gt;"
            f"</code></pre>\n<ul><li>item</li></ul>\n{FENCE}\n"
        )
    return "".join(parts)


@pytest.mark.parametrize("name", ["spec.md", "spec.txt", "spec"])
def test_html_inside_code_fences_does_not_make_a_markdown_document_html(name: str) -> None:
    advice = recommend(spec_like(), name)
    assert advice.kind == "markdown", advice.reason
    assert advice.strategy == "markdown"


def test_a_real_html_page_is_still_html() -> None:
    page = "<!doctype html><html><body>" + "<p>Hello there.</p>" * 40 + "</body></html>"
    assert recommend(page, "page.txt").kind == "html"
    body = "<div><p>One paragraph.</p><p>Another one.</p></div>\n" * 30
    assert recommend(body, "fragment.txt").kind == "html"


def test_a_markdown_file_with_a_little_inline_html_stays_markdown() -> None:
    text = "# Title\n\nSome <span>inline</span> markup and a <br> break.\n\n## More\n\nText.\n"
    assert recommend(text, "notes.md").kind == "markdown"


def test_the_old_fence_toggle_would_have_been_fooled() -> None:
    """A three-backtick line inside a 32-backtick example closes nothing: the HTML after
    it is still inside the example (the naive toggle reopened 'outside' there)."""
    text = spec_like(30)
    advice = recommend(text, "spec")
    assert "HTML tag" not in advice.reason
