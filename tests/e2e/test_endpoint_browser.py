"""An embeddings endpoint chosen in headless Chromium (issue 33): the real server process
of tests/embedding_server.py (the bundled model behind the OpenAI protocol) is added in
the Semantic page's model box and in Evaluate's form; both pages show their results
with it, and the server is seen to answer their requests."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

import chunking.splitters.semantic.analysis as sem
from chunking.embedding.models import get_embedder
from tests.e2e.test_browser_semantic import TEXT, _idle, _load, _metric, _nav, _paste, _sidebar
from tests.embedding_server import Server, start
from tests.test_app_semantic import DEFAULTS as PAGE_DEFAULTS

pytestmark = pytest.mark.browser
expect.set_options(timeout=180_000)  # a cold server loads the model

MODEL = "all-MiniLM-L6-v2"
EXPANDER = "Add an embeddings endpoint (OpenAI-compatible)"


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with start() as running:
        yield running


def _fill(page: Page, css_key: str, value: str) -> None:
    """Type ``value`` into the text input of widget key ``css_key`` and commit it."""
    box = page.locator(f".st-key-{css_key} input")
    box.fill(value)
    box.press("Enter")
    _idle(page)


def _open(page: Page) -> None:
    """Open the (visible) endpoint expander below the page's model box."""
    page.get_by_test_id("stMain").locator("summary:visible", has_text=EXPANDER).first.click()


def test_the_semantic_page_embeds_with_an_endpoint(
    page: Page, app_url: str, server: Server
) -> None:
    server.reset()
    _load(page, app_url)
    _paste(page, TEXT)
    expect(_sidebar(page).get_by_text("pasted text · text")).to_be_visible()
    _idle(page)
    _nav(page, "Semantic")
    expect(page.get_by_role("heading", name="Semantic breakpoints")).to_be_visible()
    _idle(page)
    main = page.get_by_test_id("stMain")
    main.locator("summary", has_text="Window and model").first.click()
    _open(page)
    _fill(page, "sem-model_embed_url", server.url)
    _fill(page, "sem-model_embed_model", MODEL)
    page.get_by_role("button", name="Use this endpoint").click()
    _idle(page)
    chosen = page.locator(".st-key-sem-model").get_by_role("combobox")
    expect(chosen).to_have_value(re.compile(r"at 127\.0\.0\.1 \(endpoint"), timeout=60_000)
    # the model box names whose word pieces the endpoint's model reads
    expect(page.get_by_text(f"Reads up to 254 {MODEL} word pieces.").first).to_be_visible()
    analysis = sem.analyze(TEXT, embedder=get_embedder(), buffer_size=1)
    expected = len(analysis.chunk(threshold=95.0, **dict(PAGE_DEFAULTS)).breakpoints)
    expect(_metric(page, "Breakpoints")).to_have_text(str(expected))
    assert server.requests() > 0, "the page did not ask the endpoint"
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_evaluate_runs_with_an_endpoint_beside_another_model(
    page: Page, app_url: str, server: Server
) -> None:
    server.reset()
    page.goto(f"{app_url}/evaluate")
    main = page.get_by_test_id("stMain")
    expect(page.get_by_role("heading", name="Evaluate")).to_be_visible()
    _idle(page)
    models = page.locator(".st-key-eval-models input")
    models.click()
    models.press("Backspace")  # removes the default model's tag
    models.type("hash")
    models.press("Enter")
    models.press("Escape")
    expect(page.locator(".st-key-eval-models")).to_contain_text("hash")
    _open(page)
    for key, value in (("eval-models_embed_url", server.url), ("eval-models_embed_model", MODEL)):
        page.locator(f".st-key-{key} input").fill(value)
    sizes = page.locator(".st-key-eval-sizes input")
    sizes.fill("200")
    _idle(page)  # the models box's change has run: the form is the one submitted
    main.get_by_role("button", name="Run evaluation").click()
    expect(main.get_by_role("heading", name="Advice")).to_be_visible(timeout=600_000)
    _idle(page)
    # two models, so the per-model table: the endpoint's rows beside hash's
    expect(main.get_by_text("Per model", exact=False).first).to_be_visible()
    assert server.requests() > 0, "the evaluation did not ask the endpoint"
    expect(page.get_by_test_id("stException")).to_have_count(0)
    expect(main.get_by_test_id("stAlertContentError")).to_have_count(0)
