"""Evaluate's "My document" path: it needs no question file first. Questions can be typed
at once, and the page says (and links) where to generate them: the LLM tools page."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from pages import sidebar

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 120
TEXT = "# Pets\n\nCats purr when content.\n\n## Fish\n\nFish swim in clean water.\n"


def _my_document() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
    at.text_area(key=sidebar.PASTE_KEY).set_value(TEXT).run()
    at.switch_page("pages/evaluate_page.py").run()
    at.radio(key="eval.origin").set_value("My document").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_my_document_offers_typed_questions_and_points_to_generation() -> None:
    at = _my_document()
    assert at.radio(key="eval.own_from").value == "questions typed here"
    assert at.text_area(key="eval.typed").value == ""
    assert not at.main.get("file_uploader"), "no question file is asked for first"
    pointer = [m.value for m in at.main.markdown if "LLM tools" in m.value]
    assert len(pointer) == 1 and "Type questions" in pointer[0]
    links = [link.proto for link in at.get("page_link")]
    assert [(link.label, link.page == "llm") for link in links] == [
        ("Generate questions on the LLM tools page", True)
    ]


def test_typed_questions_evaluate_without_any_file() -> None:
    at = _my_document()
    at.text_area(key="eval.typed").set_value(
        "Where do fish swim? | Fish swim in clean water.\nWhat do cats do?"
    ).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(b.label == "Run evaluation" for b in at.button)
    assert any("What do cats do?" in w.value for w in at.warning)


def test_the_question_file_is_still_one_choice_away() -> None:
    at = _my_document()
    at.radio(key="eval.own_from").set_value("a question file").run()
    assert not at.exception, [e.value for e in at.exception]
    uploaders = [u.proto.label for u in at.main.get("file_uploader")]
    assert uploaders == ["Question file (.csv or .jsonl)"]
    assert any("LLM tools page generates one" in i.value for i in at.info)
