"""Many sessions at once: real browser sessions against one app server.

    .venv/bin/python -m bench.bench_load                 # from the repository root
    .venv/bin/python -m bench.bench_load --sessions 8 --uploads 50

Phases (each session is its own browser context, all driven concurrently):

1. explore: every session opens ``/explore`` on the default sample; then, round after
   round, all of them change the chunk size at the same moment. Measured per session:
   the time until the new chunk count is shown, checked against the core's count.
2. semantic: two sessions open the Semantic page at once; measured: the time until its
   chunk count is shown (the first one embeds the sample's sentences).
3. upload: every session uploads a different 1 MB document at the same moment;
   measured: the time until its chunk count is shown, checked against the core.
4. memory: one session uploads ``--uploads`` distinct documents one after another; the
   server's resident memory is read after each, to show whether caches level off.

Reported: p50/p95 per phase, wrong counts, errors shown by the app (``stException`` /
``stAlert`` of the error kind), and the server's RSS. A benchmark, not a test: it
asserts nothing, it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import chunking
from chunking.documents.io import read_path
from tests.e2e.harness import CHROMIUM, CHROMIUM_ARGS, app_server, wait_until_idle

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "datasets" / "chroma-eval" / "corpora"
SAMPLE = ROOT / "sample_docs" / "technical_guide.md"  # the app's default sample
SIZES = (600, 800, 400, 1200, 500)
DOC_CHARS = 1_000_000
TIMEOUT_MS = 180_000

COUNT_JS = """() => {
  const m = [...document.querySelectorAll('[data-testid="stMetric"]')]
    .find(m => m.innerText.startsWith('Chunks'));
  return m ? m.querySelector('[data-testid="stMetricValue"]').innerText : null;
}"""
ERRORS_JS = """() => [...document.querySelectorAll(
    '[data-testid="stException"], [data-testid="stAlertContentError"]')]
  .map(e => e.innerText.slice(0, 200))"""


@dataclass
class Phase:
    name: str
    seconds: list[float] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def line(self) -> str:
        if not self.seconds:
            return f"{self.name}: no measurement; errors {self.errors[:3]}"
        ordered = sorted(self.seconds)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        return (
            f"{self.name}: n={len(ordered)} p50 {statistics.median(ordered):.2f} s, "
            f"p95 {p95:.2f} s, max {ordered[-1]:.2f} s; wrong counts {len(self.wrong)}, "
            f"errors {len(self.errors)}"
        )


def documents(n: int) -> list[str]:
    """``n`` different documents of about 1 MB each, from the chroma-eval corpora."""
    sources = sorted(CORPORA.glob("*.md")) or sorted((ROOT / "sample_docs").glob("*.txt"))
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in sources)
    while len(text) < 2 * DOC_CHARS:
        text += "\n\n" + text
    step = max(1, (len(text) - DOC_CHARS) // max(n, 1))
    return [f"Document {k}.\n\n" + text[k * step : k * step + DOC_CHARS] for k in range(n)]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def wait_count(page, expected: str | None, phase: Phase, start: float) -> None:
    """Wait until the Chunks metric shows ``expected`` (any value when None)."""
    try:
        await page.wait_for_function(
            f"e => {{ const v = ({COUNT_JS})(); return v !== null && (e === null || v === e); }}",
            arg=expected,
            polling=100,
            timeout=TIMEOUT_MS,
        )
        phase.seconds.append(time.perf_counter() - start)
    except Exception as exc:  # a timeout: record what the page shows instead
        shown = await page.evaluate(COUNT_JS)
        phase.wrong.append(f"expected {expected}, shown {shown} ({type(exc).__name__})")
    phase.errors.extend(await page.evaluate(ERRORS_JS))


async def size_field(page):
    return page.get_by_test_id("stSidebar").locator('input[type="number"][aria-label="size"]')


async def explore_phase(browser, url: str, sessions: int, phase: Phase) -> None:
    text = read_path(SAMPLE).text
    contexts = [
        await browser.new_context(viewport={"width": 1440, "height": 1000}) for _ in range(sessions)
    ]
    pages = [await c.new_page() for c in contexts]
    await asyncio.gather(*(p.goto(f"{url}/explore") for p in pages))
    opened = Phase("open")
    start = time.perf_counter()
    await asyncio.gather(*(wait_count(p, None, opened, start) for p in pages))
    for size in SIZES:
        expected = f"{len(chunking.chunk(text, 'recursive', size=size)):,}"
        fields = [await size_field(p) for p in pages]
        await asyncio.gather(*(f.fill(str(size)) for f in fields))
        start = time.perf_counter()
        await asyncio.gather(*(f.press("Enter") for f in fields))
        await asyncio.gather(*(wait_count(p, expected, phase, start) for p in pages))
    phase.errors.extend(opened.errors)
    for c in contexts:
        await c.close()


async def semantic_phase(browser, url: str, phase: Phase) -> None:
    contexts = [
        await browser.new_context(viewport={"width": 1440, "height": 1000}) for _ in range(2)
    ]
    pages = [await c.new_page() for c in contexts]
    start = time.perf_counter()
    await asyncio.gather(*(p.goto(f"{url}/semantic") for p in pages))
    await asyncio.gather(*(wait_count(p, None, phase, start) for p in pages))
    for c in contexts:
        await c.close()


async def upload(page, text: str, name: str, phase: Phase) -> None:
    sidebar = page.get_by_test_id("stSidebar")
    expected = f"{len(chunking.chunk(text, 'recursive', size=1000)):,}"
    start = time.perf_counter()
    await sidebar.locator(
        '.st-key-upload [data-testid="stFileUploaderDropzoneInput"]'
    ).set_input_files({"name": name, "mimeType": "text/plain", "buffer": text.encode()})
    await wait_count(page, expected, phase, start)


async def open_upload(browser, url: str):
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    page = await context.new_page()
    await page.goto(f"{url}/explore")
    await page.wait_for_function(f"() => ({COUNT_JS})() !== null", timeout=TIMEOUT_MS)
    await (
        page.get_by_test_id("stSidebar")
        .get_by_test_id("stRadio")
        .get_by_text("Upload", exact=True)
        .click()
    )
    return context, page


async def upload_phase(browser, url: str, sessions: int, phase: Phase) -> None:
    docs = documents(sessions)
    opened = [await open_upload(browser, url) for _ in range(sessions)]
    pages = [page for _, page in opened]
    await asyncio.gather(
        *(
            upload(p, d, f"load_{k}.txt", phase)
            for k, (p, d) in enumerate(zip(pages, docs, strict=True))
        )
    )
    for context, _ in opened:
        await context.close()


async def memory_phase(browser, url: str, pid: int | None, n: int, phase: Phase) -> list[float]:
    curve = []
    context, page = await open_upload(browser, url)
    for k, text in enumerate(documents(n)):
        await upload(page, text, f"memory_{k}.txt", phase)
        if pid is not None:
            curve.append(rss_mb(pid))
    await context.close()
    return curve


async def run(url: str, pid: int | None, sessions: int, uploads: int) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        warm = await browser.new_context()
        page = await warm.new_page()
        await page.goto(f"{url}/explore")
        await page.wait_for_function(f"() => ({COUNT_JS})() !== null", timeout=TIMEOUT_MS)
        await warm.close()
        if pid is not None:
            print(f"server warm; idle after {wait_until_idle(pid):.1f} s; RSS {rss_mb(pid):.0f} MB")
        phases = [Phase("explore size change"), Phase("semantic first view"), Phase("upload 1 MB")]
        await explore_phase(browser, url, sessions, phases[0])
        print(phases[0].line(), flush=True)
        await semantic_phase(browser, url, phases[1])
        print(phases[1].line(), flush=True)
        await upload_phase(browser, url, sessions, phases[2])
        print(phases[2].line(), flush=True)
        if pid is not None:
            print(f"server RSS after the concurrent phases: {rss_mb(pid):.0f} MB")
        memory = Phase("sequential uploads")
        curve = await memory_phase(browser, url, pid, uploads, memory)
        print(memory.line())
        if curve:
            marks = sorted({0, *range(9, len(curve), 10), len(curve) - 1})
            print(
                "server RSS (MB) after upload "
                + ", ".join(f"{k + 1}: {curve[k]:.0f}" for k in marks)
            )
        for phase in (*phases, memory):
            for problem in (phase.wrong + phase.errors)[:5]:
                print(f"  {phase.name}: {problem}")
        await browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an already running app (default: start one)")
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--uploads", type=int, default=50)
    args = parser.parse_args()
    with app_server(args.url) as server:
        asyncio.run(run(server.url, server.pid, args.sessions, args.uploads))


if __name__ == "__main__":
    main()
