"""The embeddings endpoint in the app (AppTest), against the real server process of
tests/embedding_server.py: added once in the model box, it embeds the Semantic page's
document and runs an Evaluate sweep; a host other than this machine gets nothing until
the user confirms it; the key is never on the page."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pages import sidebar
from tests.embedding_server import Server, start

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("endpoint")]

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
TIMEOUT = 300
KEY = "sk-app-test-key-77d1e0c4"
MODEL = "all-MiniLM-L6-v2"
TEXT = (
    "Bread dough needs flour, water, salt and yeast. Knead the dough for ten minutes. "
    "Let the dough rise in a warm kitchen. Bake the loaf until the crust turns brown. "
    "Jupiter is the largest planet in our solar system. Its Great Red Spot is a storm. "
    "Astronomers count more than ninety moons around it. Europa hides an ocean. "
)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with start(key=KEY) as running:
        yield running


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: Server) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.reset()


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _page(name: str) -> str:
    return os.path.relpath(ROOT / "pages" / name, APP.parent)


def _semantic(text: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
    at.text_area(key=sidebar.PASTE_KEY).set_value(text).run()
    return _ok(at.switch_page(_page("semantic_page.py")).run())


def _add_endpoint(at: AppTest, key: str, url: str, model: str = MODEL) -> AppTest:
    at.text_input(key=f"{key}_embed_url").set_value(url)
    at.text_input(key=f"{key}_embed_model").set_value(model)
    next(b for b in at.button if b.label == "Use this endpoint").click()
    return _ok(at.run())


def _everything(at: AppTest) -> str:
    parts = [
        str(e.value)
        for kind in ("markdown", "caption", "error", "warning", "info")
        for e in at.get(kind)
    ]
    parts += [str(e.proto) for e in at.get("selectbox")]
    return "\n".join(parts)


def test_the_semantic_page_embeds_with_an_endpoint_chosen_in_the_model_box(
    server: Server,
) -> None:
    at = _semantic(TEXT)
    at = _add_endpoint(at, "sem.model", server.url)
    assert at.session_state["sem.model"] == f"{server.url}#{MODEL}"
    assert server.requests() > 0  # the sentence windows went to the server
    assert not at.error
    shown = _everything(at)
    # the UI names the endpoint's model, and whose word pieces the sizes count
    assert "all-MiniLM-L6-v2 at 127.0.0.1 (endpoint; counts all-MiniLM-L6-v2 word pieces)" in shown
    assert "reads the first 254" in shown
    assert KEY not in shown


def test_a_remote_host_gets_nothing_until_it_is_confirmed(server: Server) -> None:
    at = _semantic(TEXT)
    at = _add_endpoint(at, "sem.model", "http://embeddings.invalid/v1", "text-embedding-3-small")
    warning = "\n".join(w.value for w in at.warning)
    assert "embeddings.invalid is not this machine" in warning
    confirm = next(b for b in at.button if b.label == "Send documents to embeddings.invalid")
    assert not at.error
    confirm.click()
    at = _ok(at.run())  # confirmed: sent, and the unreachable host is one clear error
    assert not any("is not this machine" in w.value for w in at.warning)
    assert any("cannot reach the embeddings endpoint" in e.value for e in at.error)
    assert server.requests() == 0


def test_evaluate_runs_a_sweep_with_an_endpoint_beside_another_model(server: Server) -> None:
    page = str(ROOT / "pages" / "evaluate_page.py")
    at = _ok(AppTest.from_file(page, default_timeout=TIMEOUT).run())
    at.multiselect(key="eval.models").set_value(["hash"])
    at.text_input(key="eval.models_embed_url").set_value(server.url)
    at.text_input(key="eval.models_embed_model").set_value(MODEL)
    at.multiselect(key="eval.corpora").set_value(["chatlogs"])
    at.multiselect(key="eval.strategies").set_value(["recursive"])
    at.text_input(key="eval.sizes").set_value("200")
    next(b for b in at.button if b.label == "Run evaluation").click()
    at = _ok(at.run())
    assert server.requests() > 0 and not at.error
    rows = [" ".join(map(str, row)) for row in at.dataframe[0].value.to_numpy()]
    remote = [r for r in rows if "127.0.0.1" in r]
    assert remote and len(remote) == len([r for r in rows if "hash" in r]) == len(rows) / 2
    assert KEY not in _everything(at)
