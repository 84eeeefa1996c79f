"""The README is the front door and the documentation site builds.

The README stays short (at most 10 KB), keeps the two set-up commands exactly as CI and
users run them, and every relative link or image in it points at a file of the
checkout. The site (``mkdocs.yml``, ``docs/``) builds with ``--strict``, so a broken
link or anchor, a page left out of the nav or a docstring mkdocstrings cannot render
fails here as it fails in CI (``.ci/run``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAX_README_BYTES = 10_240
SETUP_COMMANDS = (
    "bash .ci/setup && .venv/bin/python app.py",
    "bash .ci/setup && .venv/bin/python -m pytest -n 2 --dist loadgroup",
)
#: The pages the site must hold (``mkdocs.yml``'s nav lists them; --strict checks that).
PAGES = (
    "index.md",
    "first-steps.md",
    "explore-compare.md",
    "evaluation.md",
    "tuning.md",
    "models.md",
    "pdfs.md",
    "formats.md",
    "libraries.md",
    "corpora.md",
    "spark.md",
    "vector-databases.md",
    "boundaries.md",
    "api.md",
    "benchmarks.md",
    "contributing.md",
)
#: Inline Markdown links and images: ``[text](target)`` and ``![alt](target)``.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
#: HTML images and links, in case the README uses them.
HTML_LINK = re.compile(r"<(?:img|a)\b[^>]*\b(?:src|href)=\"([^\"]+)\"", re.IGNORECASE)


def readme_text() -> str:
    return README.read_text(encoding="utf-8")


def relative_targets(markdown: str) -> list[str]:
    """The link and image targets of ``markdown`` that point into the repository
    (no scheme, not a bare ``#anchor``), fenced code blocks left out."""
    prose = re.sub(r"^```.*?^```", "", markdown, flags=re.MULTILINE | re.DOTALL)
    targets = LINK.findall(prose) + HTML_LINK.findall(prose)
    return [t for t in targets if not urlsplit(t).scheme and not t.startswith("#")]


def test_the_readme_is_at_most_10_kb() -> None:
    size = len(README.read_bytes())
    assert size <= MAX_README_BYTES, f"README.md is {size:,} bytes (limit {MAX_README_BYTES:,})"


@pytest.mark.parametrize("command", SETUP_COMMANDS)
def test_the_readme_holds_each_setup_command_exactly(command: str) -> None:
    lines = [line.strip() for line in readme_text().splitlines()]
    assert command in lines, f"README.md lost the set-up command {command!r}"


def test_ci_runs_the_readmes_test_command() -> None:
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_command = SETUP_COMMANDS[1].removeprefix("bash .ci/setup && ")
    assert any(line.startswith(test_command) for line in run.splitlines())


def test_the_readme_has_a_screenshot_and_links_into_the_docs() -> None:
    targets = relative_targets(readme_text())
    assert "docs/screenshots/lens-explore.png" in targets
    linked_pages = {Path(urlsplit(t).path).name for t in targets if t.startswith("docs/")}
    assert set(PAGES) <= linked_pages, sorted(set(PAGES) - linked_pages)


def test_every_relative_link_and_image_in_the_readme_exists() -> None:
    targets = relative_targets(readme_text())
    assert targets, "no relative link found: the link pattern is broken"
    missing = [t for t in targets if not (ROOT / unquote(urlsplit(t).path)).exists()]
    assert missing == [], f"README.md links to missing files: {missing}"


def test_the_link_check_sees_a_missing_file() -> None:
    """The checker itself: a link to a file that does not exist is reported, a URL and
    an anchor are not checked, and links inside code blocks are not links."""
    text = (
        "[a](docs/nowhere.md) ![b](docs/screenshots/lens-explore.png)\n"
        "[c](https://example.org/x.md) [d](#layout)\n"
        "```\n[e](inside/code.md)\n```\n"
    )
    targets = relative_targets(text)
    assert targets == ["docs/nowhere.md", "docs/screenshots/lens-explore.png"]
    assert not (ROOT / targets[0]).exists()


def test_every_page_exists() -> None:
    missing = [page for page in PAGES if not (ROOT / "docs" / page).is_file()]
    assert missing == []
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert [page for page in PAGES if page not in nav] == []


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert (site / "index.html").is_file()
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="chunking.core.chunk"' in api  # the reference was generated
    # Offline: the pages link no web font, script or style from elsewhere.
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        remote = re.findall(r"<(?:link|script)\b[^>]*\b(?:href|src)=\"(https?:[^\"]+)\"", html)
        assert remote == [], f"{page.relative_to(site)} loads {remote}"
