"""The one-line previews of chunk text and table rows (chunking.output.preview)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chunking.output.preview import preview, row_range


@given(st.text(), st.integers(min_value=1, max_value=200))
def test_a_preview_is_one_line_within_its_width(text: str, width: int) -> None:
    shown = preview(text, width)
    flat = " ".join(text.split())
    assert len(shown) <= width
    assert not any(c.isspace() and c != " " for c in shown)
    assert "  " not in shown
    if len(flat) <= width:
        assert shown == flat
    else:
        assert shown.endswith("…") and flat.startswith(shown[:-1])
        assert len(shown) == width


def test_a_preview_joins_lines_and_cuts_long_text() -> None:
    assert preview("One\n\n  two\tthree") == "One two three"
    assert preview("abcdef", 4) == "abc…"
    assert preview("abcd", 4) == "abcd"


def test_row_range() -> None:
    assert row_range(None) == ""
    assert row_range(()) == ""
    assert row_range((6, 6)) == "6"
    assert row_range((6, 10)) == "6–10"
