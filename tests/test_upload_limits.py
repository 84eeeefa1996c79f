"""Every uploader of the app states the app's own limit, not Streamlit's 200 MB."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pages import upload_limits

PAGES = Path(__file__).resolve().parent.parent / "pages"


def _uploader_calls() -> list[tuple[str, ast.Call]]:
    calls = []
    for path in sorted(PAGES.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "file_uploader"
            ):
                calls.append((path.name, node))
    return calls


def test_every_uploader_is_given_a_limit() -> None:
    calls = _uploader_calls()
    assert len(calls) >= 6  # the sidebar, Corpus, questions, the map's, gold, tokenizer
    missing = [
        f"{name}:{call.lineno}"
        for name, call in calls
        if "max_upload_size" not in {k.arg for k in call.keywords}
    ]
    assert missing == []


@pytest.mark.parametrize(("megabytes", "expected"), [("", 50), ("2", 2), ("0.5", 1)])
def test_the_small_uploaders_say_the_apps_limit(
    monkeypatch: pytest.MonkeyPatch, megabytes: str, expected: int
) -> None:
    if megabytes:
        monkeypatch.setenv(upload_limits.MAX_MB_ENV, megabytes)
    else:
        monkeypatch.delenv(upload_limits.MAX_MB_ENV, raising=False)
    assert upload_limits.app_uploader_mb() == expected
