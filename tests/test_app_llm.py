"""AppTest tests of the LLM tools page: settings, cost before a run, errors as messages,
and (slow) a real run through the test endpoint server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import chunking
from pages import config_controls, sidebar
from pages.state import EXPLORE_TAB_KEY
from tests.llm_server import QUOTING, serve

# One worker runs this module (--dist loadgroup): its endpoint loads the model once.
pytestmark = pytest.mark.xdist_group("app_llm")

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 300
PAGE = "pages/llm_page.py"
TEXT = (
    "Lodestar stores data in shards. Each shard has three replicas.\n\n"
    "When a node fails, the cluster copies its shards to the other nodes.\n\n"
    "Backups run every night and are kept for thirty days."
)


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _page(text: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    if text is not None:
        at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
        at.text_area(key=sidebar.PASTE_KEY).set_value(text).run()
        at.selectbox(key=config_controls.STRATEGY_KEY).set_value("paragraph").run()
        at.number_input(key="paragraph.size").set_value(80).run()
    return _ok(at.switch_page(PAGE).run())


def _markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def _endpoint(at: AppTest, url: str, model: str = "smollm2") -> AppTest:
    at.text_input(key="llm.url").set_value(url).run()
    return _ok(at.text_input(key="llm.model").set_value(model).run())


def test_the_page_shows_the_offline_note_and_the_cost_before_running() -> None:
    at = _page()
    assert any("weak" in i.value for i in at.info)
    assert "**Cost:**" in _markdown(at) and "calls to SmolLM2-135M-Instruct" in _markdown(at)
    assert next(b.label for b in at.button if b.key == "llm.enrich.run").startswith("Run ")
    assert at.dataframe, "the enrichment table is shown before any run"


def test_a_bad_endpoint_url_is_an_error_message() -> None:
    at = _endpoint(_page(), "localhost:11434", "m")
    assert any("http://" in e.value for e in at.error)


def test_an_unreachable_endpoint_is_reported_and_nothing_is_lost() -> None:
    at = _endpoint(_page(TEXT), "http://127.0.0.1:9/v1", "m")
    chunks = chunking.chunk(TEXT, "paragraph", size=80)
    assert f"{len(chunks)} calls to m@http://127.0.0.1:9/v1" in _markdown(at)
    _ok(at.button(key="llm.enrich.run").click().run())
    assert any("cannot reach the endpoint" in e.value for e in at.error)
    assert any("0 of" in e.value for e in at.error)
    table = at.dataframe[0].value
    assert list(table["chunk"]) == [c.index for c in chunks]
    assert all(table["keywords"]), "YAKE keywords need no model"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with serve() as url:
        yield url


@pytest.mark.slow
def test_contexts_and_questions_through_the_endpoint(endpoint: str) -> None:
    at = _endpoint(_page(TEXT), endpoint)
    chunks = chunking.chunk(TEXT, "paragraph", size=80)
    _ok(at.button(key="llm.enrich.run").click().run())
    assert any(f"{len(chunks)} of {len(chunks)} answers" in s.value for s in at.success)
    _ok(at.run())
    assert not [b for b in at.button if b.key == "llm.enrich.run"], "all cached: nothing to run"
    table = at.dataframe[0].value
    assert len(table) == len(chunks)
    assert all(isinstance(c, str) for c in table["context"])
    # Questions from a model that quotes well (tests/llm_server.py): what the weak local
    # model quotes is not what this tests, the path to the question file is.
    _endpoint(at, endpoint, QUOTING)
    at.number_input(key="llm.n").set_value(2).run()
    _ok(at.button(key="llm.questions.run").click().run())
    captions = "\n".join(c.value for c in at.caption)
    assert "1 question proposed, 1 kept" in captions  # a short document: one passage
    labels = [b.label for b in at.get("download_button") if b.key == "llm.dl_questions"]
    assert labels == ["Question file (1 questions, CSV)"]


def test_propositions_show_their_cost_and_a_run_button() -> None:
    at = _page(TEXT)
    at.selectbox(key=config_controls.STRATEGY_KEY).set_value("propositions").run()
    at.text_input(key="propositions.llm").set_value("http://127.0.0.1:9/v1#m").run()
    _ok(at)
    # the switch keeps paragraph packing's size and unit: the passages are whole
    # sentences packed up to 80 characters, as sentence packing cuts them
    size = at.number_input(key="propositions.size").value
    unit = at.selectbox(key="propositions.unit").value
    assert (size, unit) == (80, "chars")
    passages = len(chunking.chunk(TEXT, "sentence", size=size, unit=unit))
    assert passages > 1
    assert f"{passages} calls to m@http://127.0.0.1:9/v1" in _markdown(at)
    assert any("over the budget of 0 s" in e.value for e in at.error)  # nothing cached yet
    _ok(at.button(key="llm.propositions.run").click().run())
    assert any("cannot reach the endpoint" in e.value for e in at.error)


def test_explore_shows_the_context_already_written_for_a_chunk() -> None:
    from chunking.llm import make_llm
    from chunking.llm.client import Answer
    from chunking.llm.contextual import context_request

    at = _page(TEXT)
    chunks = chunking.chunk(TEXT, "paragraph", size=80)
    llm = make_llm()  # the offline model, as the page's settings say; never called here
    request = context_request(TEXT, chunks[0])
    llm.cache.put(llm.name, request.system, request.prompt, Answer("About shards.", 9, 3, 0.1))
    at.session_state[EXPLORE_TAB_KEY] = "Chunks"  # the chunk on its own, with its notes
    _ok(at.switch_page("pages/explore_page.py").run())
    shown = [j.value for j in at.json]
    assert any("About shards." in str(value) for value in shown)
    at.number_input(key="explore.chunk").set_value(1).run()
    assert not any("About shards." in str(j.value) for j in _ok(at).json)
