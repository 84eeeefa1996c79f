"""Measure the app's responsiveness in a real browser with a 1 MB document.

    .venv/bin/python -m bench.bench_app            # starts its own server on a free port
    .venv/bin/python -m bench.bench_app --url http://127.0.0.1:8501
    .venv/bin/python -m bench.bench_app --document novel --changes controls --no-loads
    .venv/bin/python -m bench.bench_app --document book --changes controls --no-loads
    .venv/bin/python -m bench.bench_app --file ../shared/datasets/books/pride_and_prejudice.txt

Run it from the repository root with ``-m``: that puts the root on the import path, for
the browser harness it shares with the tests (``tests/e2e/harness.py``).

What is measured (wall-clock, from the Python side of Playwright):

- first load: a new browser session (empty browser cache) opens the home page (the
  guided tour, until the sample's chunk count is shown) or ``/explore`` (until the chunk
  count and the histogram are on screen), and the script run has finished. The server
  is warm: one session has been served and the server has gone idle, its UMAP warm-up
  thread done (only known when this script started the server);
- upload: a 1 MB text document is uploaded, until its chunk count is shown;
- re-render: the chunk size (recursive strategy, characters) is changed, until the new
  count is shown ("count") and until the run has finished and the histogram holds the
  new chunks ("settled"). With ``--changes controls``, a new user's tour of the
  sidebar instead (:data:`CONTROL_CHANGES`: size, overlap, unit and strategy changes),
  each timed from the change to the new configuration's chunk count (the caption names
  the new configuration and the count is no longer stale) and to the settled page.

``--document mixed`` (the default) is 1 MB built from the chroma-eval corpora in
../shared when present, otherwise from the sample documents; ``--document novel`` is
about 300 KB of prose, a novel's length (:func:`novel_document`); ``--document book`` is
a real novel, Pride and Prejudice (704 KB, ``../shared/datasets/books/``), and ``--file
PATH`` any text file, read as the app reads an upload. Expected chunk counts come from
the core; each change kind (size, overlap, unit, strategy) gets its p50 and max. The
machine's load average is printed at the start and the end: other work on the machine
slows every figure. ``--no-loads`` skips the first loads;
``--core`` runs no browser and times the core calls the Explore page makes for each
change instead (chunks, report, boundary view, chunk table): where the time goes.
This is a benchmark, not a test: it prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import chunking
from tests.e2e.harness import CHROMIUM, CHROMIUM_ARGS, Server, app_server, wait_until_idle

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "datasets" / "chroma-eval" / "corpora"
DOC_CHARS = 1_000_000
SIZES = (900, 800, 700, 600, 500, 1000, 1200, 400)
FIRST_LOADS = 8
NOVEL_CHARS = 300_000
BOOK = ROOT.parent / "shared" / "datasets" / "books" / "pride_and_prejudice.txt"
#: The configuration the controls tour starts from (given in the address).
START = ("recursive", {"size": 600, "overlap": 0, "unit": "chars"})


class Change(NamedTuple):
    """One sidebar control change: which control, and the configuration after it (the
    strategy's parameters not named keep their defaults)."""

    control: str
    strategy: str
    params: Mapping[str, Any]


#: What a new user tries, in order; every step gives a configuration not seen before.
CONTROL_CHANGES = (
    Change("size", "recursive", {"size": 800}),
    Change("overlap", "recursive", {"size": 800, "overlap": 50}),
    Change("unit", "recursive", {"size": 800, "overlap": 50, "unit": "tokens"}),
    Change("size", "recursive", {"size": 200, "overlap": 50, "unit": "tokens"}),
    Change("unit", "recursive", {"size": 200, "overlap": 50, "unit": "model"}),
    Change("unit", "recursive", {"size": 200, "overlap": 50, "unit": "words"}),
    Change("strategy", "sentence", {}),
    Change("size", "sentence", {"size": 800}),
    Change("unit", "sentence", {"size": 800, "unit": "tokens"}),
    Change("strategy", "paragraph", {}),
    Change("size", "paragraph", {"size": 1200}),
    Change("strategy", "token", {}),
    Change("size", "token", {"size": 300}),
    Change("strategy", "fixed", {}),
    Change("strategy", "markdown", {}),
    Change("strategy", "sliding", {}),
)


def one_megabyte_document() -> str:
    """About 1 MB of real, mostly non-repeating text."""
    sources = sorted(CORPORA.glob("*.md")) or sorted((ROOT / "sample_docs").glob("*.txt"))
    parts = [p.read_text(encoding="utf-8") for p in sources]
    text = "\n\n".join(parts)
    while len(text) < DOC_CHARS:
        text += "\n\n" + text
    return text[:DOC_CHARS]


def novel_document() -> str:
    """About 300 KB of prose, a novel's length: the chroma-eval Wikipedia texts, State of
    the Union addresses, chat logs and PubMed abstracts after the samples' essay,
    agreement and article, cut at a paragraph end (the samples alone, repeated, without
    the corpora)."""
    names = ("wikitexts.md", "state_of_the_union.md", "chatlogs.md", "pubmed.md")
    samples = ROOT / "sample_docs"
    parts = [samples / n for n in ("long_essay.txt", "service_agreement.txt", "german_article.txt")]
    parts += [CORPORA / n for n in names if (CORPORA / n).is_file()]
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in parts)
    while len(text) < NOVEL_CHARS:
        text += "\n\n" + text
    end = text.rfind("\n\n", 0, NOVEL_CHARS)
    return text[: end if end > 0 else NOVEL_CHARS]


def file_document(path: Path) -> str:
    """The text of ``path`` as the app reads an upload of it (the same reader)."""
    from chunking.documents.io import read_bytes

    return read_bytes(path.read_bytes(), path.name).text


def book_document() -> str:
    """A real novel: Pride and Prejudice, 704 KB (:data:`BOOK`)."""
    return file_document(BOOK)


DOCUMENTS: dict[str, Callable[[], str]] = {
    "mixed": one_megabyte_document,
    "novel": novel_document,
    "book": book_document,
}


def _metric_is(page, value: str) -> None:
    page.wait_for_function(
        """v => [...document.querySelectorAll('[data-testid="stMetric"]')]
              .some(m => m.innerText.startsWith('Chunks') &&
                         m.querySelector('[data-testid="stMetricValue"]').innerText === v)""",
        arg=value,
        polling="raf",
        timeout=120_000,
    )


def _settled(page, count: int) -> None:
    page.wait_for_function(
        """n => { const p = document.querySelector('.js-plotly-plot');
                  return p && p.data && p.data[0].x.length === n &&
                         !document.querySelector('[data-testid="stStatusWidget"]'); }""",
        arg=count,
        polling="raf",
        timeout=120_000,
    )


def first_load(browser, url: str, explore: bool = True) -> float:
    """Seconds until the page is drawn and its run has finished: Explore's chunk count
    and histogram, or (``explore=False``) the home page's summary of the sample."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    start = time.perf_counter()
    page.goto(f"{url}/explore" if explore else url)
    if explore:
        page.wait_for_selector('[data-testid="stMetricValue"]', timeout=120_000)
        page.wait_for_selector(".js-plotly-plot", timeout=120_000)
    else:
        page.get_by_text("cuts it into").wait_for(timeout=120_000)
    page.wait_for_function(
        "!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000
    )
    elapsed = time.perf_counter() - start
    context.close()
    return elapsed


def _shows(page, label: str, value: str) -> None:
    """Wait until the caption names the configuration ``label`` and the chunk count,
    drawn in that run (not stale), is ``value``."""
    page.wait_for_function(
        """([label, v]) => {
              const named = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
                  .some(c => c.innerText.endsWith('\u2014 ' + label));
              return named && [...document.querySelectorAll('[data-testid="stMetric"]')]
                  .some(m => {
                      const box = m.closest('[data-testid="stElementContainer"]');
                      return !(box && box.getAttribute('data-stale') === 'true') &&
                          m.innerText.startsWith('Chunks') &&
                          m.querySelector('[data-testid="stMetricValue"]').innerText === v;
                  }); }""",
        arg=[label, value],
        polling="raf",
        timeout=60_000,
    )


def _choose(page, key: str, option: str) -> float:
    """Pick ``option`` in the sidebar's selectbox of widget ``key``; returns the time of
    the click on it."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    sidebar = page.get_by_test_id("stSidebar")
    box = sidebar.locator(f".st-key-{key.replace('.', '-')}").get_by_role("combobox")
    option_box = page.get_by_role("option", name=option, exact=True)
    for attempt in range(3):  # a click that lands while the sidebar is redrawn is lost
        box.click()
        try:
            option_box.wait_for(timeout=5_000)
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            if attempt == 2:
                raise
    start = time.perf_counter()
    option_box.click()
    return start


def _type_number(page, key: str, value: int) -> float:
    """Type ``value`` into the sidebar's number input of widget ``key``; returns the time
    of the Enter that sends it."""
    field = page.get_by_test_id("stSidebar").locator(f".st-key-{key.replace('.', '-')} input")
    field.fill(str(value))
    start = time.perf_counter()
    field.press("Enter")
    return start


def _switched(before: chunking.Config, strategy: str) -> chunking.Config:
    """The configuration after the strategy box switches from ``before`` to
    ``strategy``: its defaults, with the unit, size and overlap the app carries over
    (``pages/config_controls.py``, :func:`chunking.analysis.recommend.carried_over`)."""
    from chunking.analysis.recommend import carried_over
    from pages.param_widgets import param_start

    registry = chunking.strategies()
    old, new = registry[before.strategy], registry[strategy]
    current = dict(chunking.Config.create(strategy).params)
    started = {p.name: param_start(p) for p in old.params}
    kept = carried_over(old, dict(before.params), new, current, started)
    return chunking.Config.create(strategy, **{**current, **kept})


def _configs(changes: tuple[Change, ...]) -> list[chunking.Config]:
    """The configuration after each change, from :data:`START`: a strategy change gives
    what the app gives (:func:`_switched`), any other change sets its parameters."""
    config = chunking.Config.create(START[0], **START[1])
    configs = []
    for change in changes:
        if change.control == "strategy":
            config = _switched(config, change.strategy)
        else:
            config = chunking.Config.create(change.strategy, **{**config.params, **change.params})
        configs.append(config)
    return configs


def _shown(page) -> str:
    """What the page shows now: the caption naming the configuration and the count."""
    return str(
        page.evaluate(
            """() => {
              const c = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
                  .map(c => c.innerText).find(t => t.includes('\u2014 '));
              const m = [...document.querySelectorAll('[data-testid="stMetric"]')]
                  .find(m => m.innerText.startsWith('Chunks'));
              return `caption ${c}; count ${m ? m.innerText.replace('\n', ' ') : null}`;
            }"""
        )
    )


def controls_tour(page, text: str) -> list[dict[str, object]]:
    """Make each of :data:`CONTROL_CHANGES` in the sidebar; the seconds from each to its
    new chunk count and to the settled page (printed as they come). A change whose count
    does not come is reported with what the page shows, and the tour stops there."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    registry = chunking.strategies()
    configs = _configs(CONTROL_CHANGES)
    before = chunking.Config.create(START[0], **START[1])
    rows = []
    for change, config in zip(CONTROL_CHANGES, configs, strict=True):
        count = len(chunking.run(text, config))
        _settled(page, len(chunking.run(text, before)))
        if change.control == "strategy":
            start = _choose(page, "strategy", registry[config.strategy].label)
        elif change.control == "unit":
            start = _choose(page, f"{config.strategy}.unit", config.unit)
        else:
            value = int(config.params[change.control])
            start = _type_number(page, f"{config.strategy}.{change.control}", value)
        try:
            _shows(page, config.label(title=True), f"{count:,}")
        except PlaywrightTimeout:
            print(
                f"  time-out: {change.control} -> {config.label()} ({count:,} chunks "
                f"expected); the page shows {_shown(page)}",
                flush=True,
            )
            break
        count_s = time.perf_counter() - start
        _settled(page, count)
        rows.append(
            {
                "control": change.control,
                "config": config.label(),
                "chunks": count,
                "count_s": count_s,
                "settled_s": time.perf_counter() - start,
            }
        )
        print(f"  {change.control:>8} -> {config.label():<40} count {count_s:.2f} s", flush=True)
        before = config
    return rows


def run(server: Server, text: str, changes: str, loads: bool) -> dict[str, object]:
    from playwright.sync_api import sync_playwright

    start_config = chunking.Config.create(START[0], **START[1])
    first = len(chunking.run(text, start_config))
    results: dict[str, object] = {"document_chars": len(text), "load_start": os.getloadavg()}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        url = server.url
        first_load(browser, url, explore=False)  # imports, caches, UMAP warm-up started
        if server.pid is not None:
            results["idle_after_s"] = wait_until_idle(server.pid)
        if loads:
            results["home_load_s"] = [first_load(browser, url, False) for _ in range(FIRST_LOADS)]
            results["first_load_s"] = [first_load(browser, url) for _ in range(FIRST_LOADS)]

        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        page = context.new_page()
        query = "&".join(f"{k}={v}" for k, v in {"strategy": START[0], **START[1]}.items())
        page.goto(f"{url}/explore?{query}")
        page.wait_for_selector(".js-plotly-plot", timeout=120_000)
        sidebar = page.get_by_test_id("stSidebar")
        sidebar.get_by_test_id("stRadio").get_by_text("Upload", exact=True).click()
        start = time.perf_counter()
        sidebar.locator(
            '.st-key-upload [data-testid="stFileUploaderDropzoneInput"]'
        ).set_input_files(
            {"name": "document.txt", "mimeType": "text/plain", "buffer": text.encode()}
        )
        _metric_is(page, f"{first:,}")
        results["upload_count_s"] = time.perf_counter() - start
        _settled(page, first)
        results["upload_settled_s"] = time.perf_counter() - start
        if changes == "controls":
            results["rerender"] = controls_tour(page, text)
        else:
            results["rerender"] = size_changes(page, text)
        results["load_end"] = os.getloadavg()
        context.close()
        browser.close()
    return results


def size_changes(page, text: str) -> list[dict[str, object]]:
    """Change the recursive strategy's size through :data:`SIZES`; the seconds from each
    change to the new chunk count and to the settled page."""
    rows = []
    for size in SIZES:
        config = chunking.Config.create(START[0], **{**START[1], "size": size})
        count = len(chunking.run(text, config))
        start = _type_number(page, "recursive.size", size)
        _shows(page, config.label(title=True), f"{count:,}")
        count_s = time.perf_counter() - start
        _settled(page, count)
        rows.append(
            {
                "control": "size",
                "config": config.label(),
                "chunks": count,
                "count_s": count_s,
                "settled_s": time.perf_counter() - start,
            }
        )
    return rows


def _size_configs() -> list[chunking.Config]:
    return [chunking.Config.create(START[0], **{**START[1], "size": n}) for n in SIZES]


def core_times(text: str, changes: str) -> list[dict[str, Any]]:
    """Without a browser: the seconds of each core call the Explore page makes for the
    start configuration (the document's first view) and after each change, in one
    process as in the server: chunks, report, boundary view (its pages and the first
    page's HTML) and the chunk table."""
    from chunking.analysis.report import make_report
    from chunking.documents.io import Document
    from chunking.viz.render import paginate, render_page
    from pages.chunk_tables import chunk_table

    document = Document(text=text, name="document.txt", kind="text", encoding=None)
    start = chunking.Config.create(START[0], **START[1])
    later = _configs(CONTROL_CHANGES) if changes == "controls" else _size_configs()
    rows = []
    for config in (start, *later):
        times = [time.perf_counter()]
        chunks = chunking.run(text, config)
        times.append(time.perf_counter())
        analysis = make_report(document, config, chunks)
        times.append(time.perf_counter())
        render_page(text, chunks, paginate(chunks)[0], unit=config.unit)
        times.append(time.perf_counter())
        chunk_table(chunks, analysis)
        times.append(time.perf_counter())
        parts = [b - a for a, b in itertools.pairwise(times)]
        rows.append({"config": config.label(), "chunks": len(chunks), "parts": parts})
    return rows


def report_core(rows: list[dict[str, Any]]) -> None:
    print(f"load average (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("core calls of the Explore page, seconds: chunks, report, boundary view, table")
    for i, row in enumerate(rows):
        chunks, analysis, view, table = row["parts"]
        what = "first view" if i == 0 else "change"
        print(
            f"  {what:>10} {row['config']:<40} {row['chunks']:>6} chunks: {chunks:.3f} "
            f"{analysis:.3f} {view:.3f} {table:.3f}, total {sum(row['parts']):.3f}"
        )
    totals = [sum(r["parts"]) for r in rows[1:]]
    print(f"median change {statistics.median(totals):.3f} s, worst {max(totals):.3f} s")


def report(results: dict[str, Any]) -> None:
    print(f"document: {results['document_chars']:,} characters")
    print(
        "load average (1, 5, 15 min) at the start: {:.2f} {:.2f} {:.2f}".format(
            *results["load_start"]
        )
    )
    if "idle_after_s" in results:
        print(f"server idle (warm-up done) {results['idle_after_s']:.1f} s after the first load")
    else:
        print("server given by --url: not waited for its background warm-up")
    if "first_load_s" in results:
        for label, values in (
            ("home page (tour)", results["home_load_s"]),
            ("/explore", results["first_load_s"]),
        ):
            print(
                f"first load of {label}, warm server: "
                + ", ".join(f"{s:.2f}" for s in values)
                + f" s; median {statistics.median(values):.2f} s, worst {max(values):.2f} s"
            )
    print(
        f"upload: count shown after {results['upload_count_s']:.2f} s, "
        f"settled after {results['upload_settled_s']:.2f} s"
    )
    rows = results["rerender"]
    print("re-render after each sidebar change (seconds to the new count, to settled):")
    for row in rows:
        print(
            f"  {row['control']:>8} -> {row['config']:<40} {row['chunks']:>6} chunks, "
            f"count {row['count_s']:.2f} s, settled {row['settled_s']:.2f} s"
        )
    for control in sorted({r["control"] for r in rows}):
        counts = [r["count_s"] for r in rows if r["control"] == control]
        print(
            f"  {control} changes (n={len(counts)}): to the new count p50 "
            f"{statistics.median(counts):.2f} s, max {max(counts):.2f} s"
        )
    counts = [r["count_s"] for r in rows]
    settled = [r["settled_s"] for r in rows]
    print(
        f"median re-render: count {statistics.median(counts):.2f} s (worst "
        f"{max(counts):.2f} s), settled {statistics.median(settled):.2f} s; worst settled "
        f"{max(settled):.2f} s"
    )
    print("load average at the end: {:.2f} {:.2f} {:.2f}".format(*results["load_end"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an already running app (default: start one)")
    parser.add_argument(
        "--document",
        choices=sorted(DOCUMENTS),
        default="mixed",
        help="mixed: 1 MB of the chroma-eval corpora; novel: about 300 KB of prose; "
        "book: Pride and Prejudice (704 KB)",
    )
    parser.add_argument("--file", type=Path, help="a text file instead of --document")
    parser.add_argument(
        "--changes",
        choices=("size", "controls"),
        default="size",
        help="size: the recursive size through several values; controls: size, overlap, "
        "unit and strategy changes as a new user makes them",
    )
    for flag, purpose in (
        ("--no-loads", "skip the first loads of the home page and /explore"),
        ("--core", "no browser: time the core calls the Explore page makes for each change"),
    ):
        parser.add_argument(flag, action="store_true", help=purpose)
    args = parser.parse_args()
    text = file_document(args.file) if args.file else DOCUMENTS[args.document]()
    if args.core:
        report_core(core_times(text, args.changes))
        return
    with app_server(args.url) as server:
        report(run(server, text, args.changes, loads=not args.no_loads))


if __name__ == "__main__":
    main()
