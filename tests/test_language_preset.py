"""The recursive strategy's ``language`` preset: LangChain's per-language separators, as
``RecursiveCharacterTextSplitter.from_language(...)`` uses them, giving LangChain's chunk
texts, exported as ``from_language``."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

import chunking
from chunking import Config
from chunking.cli import main
from chunking.output.snippets import snippet
from chunking.splitters.recursive import LANGUAGES, NO_LANGUAGE
from tests.conftest import SAMPLE_DOCS
from tests.test_snippets import documents, offline_env, ours, run_snippet

__all__ = ["documents", "offline_env"]  # fixtures shared with tests/test_snippets.py

ROOT = Path(__file__).resolve().parents[1]
TEXTS = {
    name: (SAMPLE_DOCS / name).read_text(encoding="utf-8")
    for name in ("inventory.py", "technical_guide.md", "product_page.html")
}
TEXTS["docs/libraries.md"] = (ROOT / "docs" / "libraries.md").read_text(encoding="utf-8")


def _has_separators(language: Language) -> bool:
    try:
        RecursiveCharacterTextSplitter.get_separators_for_language(language)
    except ValueError:  # in the enum, "not implemented yet"
        return False
    return True


def test_the_preset_offers_every_language_of_the_installed_langchain() -> None:
    offered = sorted(language.value for language in Language if _has_separators(language))
    assert sorted(LANGUAGES) == offered
    param = chunking.get_strategy("recursive").param("language")
    assert param.default == NO_LANGUAGE and set(param.choices or ()) == {NO_LANGUAGE, *LANGUAGES}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("keep", ["start", "end"])
def test_every_language_cuts_as_from_language(language: str, keep: str) -> None:
    kept = {"start": True, "end": "end"}[keep]
    theirs = RecursiveCharacterTextSplitter.from_language(
        Language(language), chunk_size=300, chunk_overlap=40, keep_separator=kept
    )
    config = Config.create(
        "recursive", language=language, size=300, overlap=40, keep_separator=keep
    )
    for name, text in TEXTS.items():
        chunks = chunking.run(text, config)
        assert [c.text for c in chunks] == theirs.split_text(text), f"{language} on {name}"
        assert all(text[c.start : c.end] == c.text for c in chunks)


def test_the_preset_replaces_the_separators_and_changes_the_cut() -> None:
    text = TEXTS["inventory.py"]
    plain = chunking.chunk(text, "recursive", size=300)
    python = chunking.chunk(text, "recursive", size=300, language="python")
    assert [c.end for c in plain] != [c.end for c in python]
    starts = [text[c.start :].lstrip() for c in python[1:]]
    assert any(s.startswith(("def ", "class ")) for s in starts)


def test_an_unknown_language_is_refused_in_one_line(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(ValueError, match="language"):
        Config.create("recursive", language="klingon")
    doc = SAMPLE_DOCS / "inventory.py"
    assert main(["split", str(doc), "--strategy", "recursive", "--param", "language=klingon"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("chunk-explorer: error:") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("language", ["python", "markdown", "html", "js"])
def test_the_langchain_export_is_from_language_and_exact(
    language, documents, offline_env, tmp_path
) -> None:
    config = Config.create("recursive", language=language, size=400, keep_separator="start")
    made = snippet(config, "langchain")
    assert made.fidelity == "exact"
    assert f"RecursiveCharacterTextSplitter.from_language(\n    Language.{language.upper()}," in (
        made.code
    )
    got = run_snippet(made.code, list(documents), offline_env, tmp_path)
    for path, text in documents.items():
        assert got[path] == ours(text, config), f"{language} on {Path(path).name}"


def test_the_compatibility_notes_name_the_one_refusal() -> None:
    notes = (ROOT / "docs" / "libraries.md").read_text(encoding="utf-8")
    section = notes.split("## LangChain compatibility", 1)[1].split("\n## ", 1)[0]
    assert "keep_separator=False" in section and "from_language" in section
    with pytest.raises(ValueError, match="drop"):
        Config.create("recursive", separators=["\n\n", ". ", ""], keep_separator="none")
