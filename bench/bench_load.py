"""Many sessions at once: real browser sessions against one app server.

    .venv/bin/python -m bench.bench_load                 # from the repository root
    .venv/bin/python -m bench.bench_load --sessions 8 --uploads 50 --big-round 16
    .venv/bin/python -m bench.bench_load --sessions 8 --big-upload-mb 0 --explore-only

Every expected count is the core's count for the configuration a new session starts
with (:func:`app_default`: the registry's first strategy with its defaults, as the
sidebar's controls start), never a fixed one. Phases (each session is its own browser
context, all driven concurrently):

0. big upload: first, one session uploads a ``--big-upload-mb`` (4.6) MB document; the
   server's peak memory (``VmHWM``) is read once its script run has ended.
1. explore: every session opens ``/explore`` on the default sample; then, round after
   round, all of them change the chunk size at the same moment. Measured per session:
   the time until the new chunk count is shown, checked against the core's count.
2. big round: the same with ``--big-round`` sessions (16 by default; 0 skips it).
3. novel: ``--novel-sessions`` sessions upload the 700 KB novel
   (``../shared/datasets/books/pride_and_prejudice.txt``), then change the size together.
4. semantic: two sessions open the Semantic page at once; measured: the time until its
   chunk count is shown (the first one embeds the sample's sentences).
5. upload: every session uploads a different 1 MB document at the same moment;
   measured: the time until its chunk count is shown, checked against the core.
6. memory: one session uploads ``--uploads`` distinct documents one after another; the
   server's resident memory is read after each, to show whether caches level off.

A Playwright time-out or error inside a phase (a fill, an Enter, an upload, a page
that does not open) is recorded as a time-out of that phase with what was tried, and
the benchmark goes on to the next step and phase (:func:`attempt`).

Reported: p50/p95 per phase, and every wrong count (a count shown and left standing
for ``SETTLE_S`` seconds with the app idle, or shown at a time-out) and every time-out
(no count at all), with what the page showed; errors shown by the app
(``stException`` / ``stAlert`` of the error kind); the server's RSS; the machine's load
(``os.getloadavg``) at the start and the end. A benchmark, not a test: it asserts
nothing, it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import chunking
from chunking.documents.io import read_bytes, read_path
from tests.e2e.harness import CHROMIUM, CHROMIUM_ARGS, app_server, wait_until_idle

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "datasets" / "chroma-eval" / "corpora"
NOVEL = ROOT.parent / "shared" / "datasets" / "books" / "pride_and_prejudice.txt"
SIZES = (600, 800, 400, 1200, 500)
DOC_CHARS = 1_000_000
TIMEOUT_MS = 180_000
#: A count other than the expected one, shown this long with the app idle, is wrong.
SETTLE_S = 10


def app_default() -> chunking.Config:
    """The configuration a new session starts with: the sidebar's strategy box starts at
    the registry's first strategy and every parameter at its default
    (``pages/config_controls.py``, ``param_widgets.param_start``)."""
    return chunking.Config.create(next(iter(chunking.strategies())))


def sample_path() -> Path:
    """The sample a new session opens (the app's ``DEFAULT_SAMPLE`` in its folder)."""
    from pages.sidebar import DEFAULT_SAMPLE, sample_dir

    return sample_dir() / DEFAULT_SAMPLE


def expected_count(text: str, size: int | None = None) -> str:
    """The core's chunk count for the app's default configuration (at ``size``), as the
    Chunks metric shows it."""
    config = app_default()
    if size is not None:
        config = chunking.Config.create(config.strategy, **{**config.params, "size": size})
    return f"{len(chunking.run(text, config)):,}"


def uploaded_text(data: bytes, name: str) -> str:
    """The text the app reads from an upload (the same reader)."""
    return read_bytes(data, name).text


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} (nproc {os.cpu_count()})"


COUNT_JS = """() => {
  const m = [...document.querySelectorAll('[data-testid="stMetric"]')]
    .find(m => m.innerText.startsWith('Chunks'));
  return m ? m.querySelector('[data-testid="stMetricValue"]').innerText : null;
}"""
#: Settles on "ok", "wrong:<shown>" (another count standing with the app idle) or nothing.
SETTLED_JS = """([e, settle]) => {
  const v = (COUNT)();
  if (v !== null && (e === null || v === e)) return "ok";
  const running = document.querySelector('[data-testid="stStatusWidget"]');
  if (v === null || running) { window.__ceSince = 0; return false; }
  window.__ceSince = window.__ceSince || Date.now();
  return Date.now() - window.__ceSince > settle * 1000 ? "wrong:" + v : false;
}""".replace("COUNT", COUNT_JS)
#: True once the app's script run has finished (the attribute Streamlit sets for tests).
IDLE_JS = (
    "() => { const app = document.querySelector('[data-testid=\"stApp\"]'); "
    "return !!app && app.dataset.testScriptState === 'notRunning'; }"
)
ERRORS_JS = """() => [...document.querySelectorAll(
    '[data-testid="stException"], [data-testid="stAlertContentError"]')]
  .map(e => e.innerText.slice(0, 200))"""


@dataclass
class Phase:
    name: str
    seconds: list[float] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    timeouts: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def line(self) -> str:
        problems = (
            f"wrong counts {len(self.wrong)}, time-outs {len(self.timeouts)}, "
            f"errors {len(self.errors)}"
        )
        if not self.seconds:
            return f"{self.name}: no measurement; {problems}"
        ordered = sorted(self.seconds)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        return (
            f"{self.name}: n={len(ordered)} p50 {statistics.median(ordered):.2f} s, "
            f"p95 {p95:.2f} s, max {ordered[-1]:.2f} s; {problems}"
        )

    def problems(self) -> list[str]:
        """Every wrong count, time-out and error, one line each."""
        return (
            [f"wrong count: {w}" for w in self.wrong]
            + [f"time-out: {t}" for t in self.timeouts]
            + [f"error shown: {e}" for e in self.errors]
        )


def documents(n: int, chars: int = DOC_CHARS) -> list[str]:
    """``n`` different documents of ``chars`` characters (1 MB) each, from the chroma-eval
    corpora."""
    sources = sorted(CORPORA.glob("*.md")) or sorted((ROOT / "sample_docs").glob("*.txt"))
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in sources)
    while len(text) < 2 * chars:
        text += "\n\n" + text
    step = max(1, (len(text) - chars) // max(n, 1))
    return [f"Document {k}.\n\n" + text[k * step : k * step + chars] for k in range(n)]


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """The server's resident memory in MB (``VmHWM``: its peak so far)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def attempt(phase: Phase, what: str, action) -> bool:
    """Await ``action`` (a step of a phase: a fill, a click, an upload); a Playwright
    time-out or error is recorded in ``phase`` as a time-out with ``what`` was tried,
    never raised, so that the phase and the benchmark go on. True when it succeeded."""
    try:
        await action
    except Exception as exc:  # TimeoutError, or the page or context gone
        first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
        phase.timeouts.append(f"{what}: {type(exc).__name__} {first}".rstrip())
        return False
    return True


async def shown_count(page) -> str | None:
    """The Chunks metric's value now (None when not shown or the page cannot answer)."""
    try:
        return await page.evaluate(COUNT_JS)
    except Exception:  # the page is gone or busy past Playwright's patience
        return None


async def change_size(pages, size: int, expected: str, phase: Phase) -> None:
    """All ``pages`` set the sidebar's size to ``size`` at the same moment (every field
    filled, then every Enter pressed), then wait for ``expected``. A session whose
    fill or Enter fails is recorded (:func:`attempt`) and not waited for. Each page is
    first let finish its script run (a page still drawing the last change can leave its
    field busy past Playwright's patience)."""
    await asyncio.gather(
        *(
            attempt(
                phase,
                f"size {size}: the previous run to end",
                p.wait_for_function(IDLE_JS, polling=200, timeout=TIMEOUT_MS),
            )
            for p in pages
        )
    )
    fields = [await size_field(p) for p in pages]
    filled = await asyncio.gather(
        *(attempt(phase, f"size {size}: fill", f.fill(str(size))) for f in fields)
    )
    ready = [(p, f) for p, f, ok in zip(pages, fields, filled, strict=True) if ok]
    start = time.perf_counter()
    pressed = await asyncio.gather(
        *(attempt(phase, f"size {size}: Enter", f.press("Enter")) for _, f in ready)
    )
    await asyncio.gather(
        *(
            wait_count(p, expected, phase, start)
            for (p, _), ok in zip(ready, pressed, strict=True)
            if ok
        )
    )


async def wait_count(page, expected: str | None, phase: Phase, start: float) -> None:
    """Wait until the Chunks metric shows ``expected`` (any value when None); a count
    that stays another with the app idle is a wrong count, no count a time-out."""
    try:
        await page.evaluate("() => { window.__ceSince = 0; }")
        handle = await page.wait_for_function(
            SETTLED_JS, arg=[expected, SETTLE_S], polling=100, timeout=TIMEOUT_MS
        )
        outcome = await handle.json_value()
        if outcome == "ok":
            phase.seconds.append(time.perf_counter() - start)
        else:
            shown = str(outcome).removeprefix("wrong:")
            phase.wrong.append(f"expected {expected}, shown {shown} (app idle {SETTLE_S} s)")
    except Exception as exc:  # a time-out: record what the page shows instead
        shown = await shown_count(page)
        took = f"after {time.perf_counter() - start:.0f} s ({type(exc).__name__})"
        if shown is None:
            phase.timeouts.append(f"expected {expected}, no count shown {took}")
        else:
            phase.wrong.append(f"expected {expected}, shown {shown} {took}")
    try:
        phase.errors.extend(await page.evaluate(ERRORS_JS))
    except Exception as exc:  # the page cannot be read: say so rather than stop
        phase.timeouts.append(f"reading the errors shown: {type(exc).__name__}")


async def size_field(page):
    return page.get_by_test_id("stSidebar").locator('input[type="number"][aria-label="size"]')


async def explore_phase(browser, url: str, sessions: int, phase: Phase) -> None:
    text = read_path(sample_path()).text
    contexts = [
        await browser.new_context(viewport={"width": 1440, "height": 1000}) for _ in range(sessions)
    ]
    pages = [await c.new_page() for c in contexts]
    opened = Phase("open")
    start = time.perf_counter()
    went = await asyncio.gather(
        *(attempt(opened, "open /explore", p.goto(f"{url}/explore")) for p in pages)
    )
    pages = [p for p, ok in zip(pages, went, strict=True) if ok]
    await asyncio.gather(*(wait_count(p, None, opened, start) for p in pages))
    for size in SIZES:
        await change_size(pages, size, expected_count(text, size), phase)
    phase.errors.extend(opened.errors)
    phase.wrong.extend(opened.wrong)
    phase.timeouts.extend(opened.timeouts)
    for c in contexts:
        await c.close()


async def novel_phase(browser, url: str, sessions: int, phase: Phase) -> None:
    """``sessions`` sessions upload the novel at once, then change the size together."""
    data = NOVEL.read_bytes()
    text = uploaded_text(data, NOVEL.name)
    opened = [await open_upload(browser, url, phase) for _ in range(sessions)]
    pages = [page for _, page in opened if page is not None]
    await asyncio.gather(*(upload(p, data, NOVEL.name, phase) for p in pages))
    for size in SIZES[1:4]:
        await change_size(pages, size, expected_count(text, size), phase)
    for context, _ in opened:
        await context.close()


async def semantic_phase(browser, url: str, phase: Phase) -> None:
    contexts = [
        await browser.new_context(viewport={"width": 1440, "height": 1000}) for _ in range(2)
    ]
    pages = [await c.new_page() for c in contexts]
    start = time.perf_counter()
    went = await asyncio.gather(
        *(attempt(phase, "open /semantic", p.goto(f"{url}/semantic")) for p in pages)
    )
    pages = [p for p, ok in zip(pages, went, strict=True) if ok]
    await asyncio.gather(*(wait_count(p, None, phase, start) for p in pages))
    for c in contexts:
        await c.close()


async def upload(page, data: str | bytes, name: str, phase: Phase) -> None:
    """Upload ``data`` as ``name`` and wait for the default configuration's count."""
    raw = data.encode() if isinstance(data, str) else data
    expected = expected_count(uploaded_text(raw, name))
    sidebar = page.get_by_test_id("stSidebar")
    start = time.perf_counter()
    given = sidebar.locator(
        '.st-key-upload [data-testid="stFileUploaderDropzoneInput"]'
    ).set_input_files({"name": name, "mimeType": "text/plain", "buffer": raw})
    if await attempt(phase, f"upload {name}", given):
        await wait_count(page, expected, phase, start)


async def open_upload(browser, url: str, phase: Phase):
    """A new session on ``/explore`` with the sidebar's Upload chosen: its context and
    page, or its context and None when that failed (recorded in ``phase``)."""
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    page = await context.new_page()

    async def steps() -> None:
        await page.goto(f"{url}/explore")
        await page.wait_for_function(f"() => ({COUNT_JS})() !== null", timeout=TIMEOUT_MS)
        await (
            page.get_by_test_id("stSidebar")
            .get_by_test_id("stRadio")
            .get_by_text("Upload", exact=True)
            .click()
        )

    return context, page if await attempt(phase, "open /explore for an upload", steps()) else None


async def upload_phase(browser, url: str, sessions: int, phase: Phase) -> None:
    docs = documents(sessions)
    opened = [await open_upload(browser, url, phase) for _ in range(sessions)]
    await asyncio.gather(
        *(
            upload(p, d, f"load_{k}.txt", phase)
            for k, ((_, p), d) in enumerate(zip(opened, docs, strict=True))
            if p is not None
        )
    )
    for context, _ in opened:
        await context.close()


async def memory_phase(
    browser, url: str, pid: int | None, n: int, phase: Phase, curve: list[float]
) -> None:
    """One session uploads ``n`` documents one after another; the server's RSS after
    each goes into ``curve`` (kept however far the phase gets)."""
    context, page = await open_upload(browser, url, phase)
    for k, text in enumerate(documents(n) if page is not None else []):
        await upload(page, text, f"memory_{k}.txt", phase)
        if pid is not None:
            curve.append(rss_mb(pid))
    await context.close()


async def run(args: argparse.Namespace, url: str, pid: int | None) -> None:
    from playwright.async_api import async_playwright

    print(f"start: {load()}; default configuration {app_default().label()}", flush=True)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        warm = await browser.new_context()
        page = await warm.new_page()
        await page.goto(f"{url}/explore")
        await page.wait_for_function(f"() => ({COUNT_JS})() !== null", timeout=TIMEOUT_MS)
        await warm.close()
        if pid is not None:
            print(f"server warm; idle after {wait_until_idle(pid):.1f} s; RSS {rss_mb(pid):.0f} MB")
        phases: list[Phase] = []
        if args.big_upload_mb and pid is not None:
            big_upload = Phase(f"one upload of {args.big_upload_mb:g} MB")
            phases.append(big_upload)
            before = rss_mb(pid)
            context, page = await open_upload(browser, url, big_upload)
            if page is not None:
                text = documents(1, int(args.big_upload_mb * 1024 * 1024))[0]
                await upload(page, text, "big.txt", big_upload)
                idle = page.wait_for_function(IDLE_JS, polling=200, timeout=TIMEOUT_MS)
                await attempt(big_upload, "the big upload's run to end", idle)
            await context.close()
            print(
                f"{big_upload.line()}; server RSS {before:.0f} MB before, peak (VmHWM) "
                f"{rss_mb(pid, 'VmHWM'):.0f} MB, {rss_mb(pid):.0f} MB after [{load()}]",
                flush=True,
            )

        async def measured(phase: Phase, work) -> None:
            phases.append(phase)
            await attempt(phase, "the phase", work)  # whatever is left unguarded
            print(phase.line(), f"[{load()}]", flush=True)

        await measured(
            explore := Phase(f"explore size change x{args.sessions}"),
            explore_phase(browser, url, args.sessions, explore),
        )
        if args.explore_only:
            await browser.close()
            print(f"end: {load()}")
            for phase in phases:
                for problem in phase.problems():
                    print(f"  {phase.name}: {problem}")
            return
        if args.big_round:
            await measured(
                big := Phase(f"explore size change x{args.big_round}"),
                explore_phase(browser, url, args.big_round, big),
            )
        if args.novel_sessions:
            await measured(
                novel := Phase(f"novel 700 KB x{args.novel_sessions} (upload, size changes)"),
                novel_phase(browser, url, args.novel_sessions, novel),
            )
        await measured(
            semantic := Phase("semantic first view"), semantic_phase(browser, url, semantic)
        )
        await measured(
            uploads := Phase(f"upload 1 MB x{args.sessions}"),
            upload_phase(browser, url, args.sessions, uploads),
        )
        if pid is not None:
            print(f"server RSS after the concurrent phases: {rss_mb(pid):.0f} MB")
        memory = Phase("sequential uploads")
        phases.append(memory)
        curve: list[float] = []
        work = memory_phase(browser, url, pid, args.uploads, memory, curve)
        await attempt(memory, "the phase", work)
        print(memory.line(), f"[{load()}]")
        if curve:
            marks = sorted({0, *range(9, len(curve), 10), len(curve) - 1})
            print(
                "server RSS (MB) after upload "
                + ", ".join(f"{k + 1}: {curve[k]:.0f}" for k in marks)
            )
        for phase in phases:
            for problem in phase.problems():
                print(f"  {phase.name}: {problem}")
        print(f"end: {load()}")
        await browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an already running app (default: start one)")
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--uploads", type=int, default=50)
    parser.add_argument(
        "--big-round", type=int, default=16, help="sessions of the big round (0: none)"
    )
    parser.add_argument(
        "--big-upload-mb", type=float, default=4.6, help="first, one upload this big (0: none)"
    )
    parser.add_argument(
        "--novel-sessions", type=int, default=4, help="sessions on the novel (0: none)"
    )
    parser.add_argument(
        "--explore-only",
        action="store_true",
        help="only the explore phase (the size changes of --sessions sessions)",
    )
    args = parser.parse_args()
    with app_server(args.url) as server:
        asyncio.run(run(args, server.url, server.pid))


if __name__ == "__main__":
    main()
