"""Isolation of sessions, and work left for nobody: real browser sessions on one server.

    .venv/bin/python -m bench.bench_isolation            # from the repository root
    .venv/bin/python -m bench.bench_isolation --sessions 8 --no-closed-tab

Phase 1 (isolation): ``--sessions`` browser sessions (each its own context) open
Explore at the same moment, each with its own configuration in the link (strategies,
sizes and units differ), and upload at the same moment a different document: half of
them share the file name ``notes.txt``, and every document but the last is a prefix of
the next one, so a key by name or by prefix would hand one session another's chunks.
Each session checks, against the core (``chunking.run`` of its own text and
configuration): the Chunks metric, and the chunks of its JSONL download (start, end,
text); then it goes Explore → Compare → Explore and checks both again.

Phase 2 (closed tab): one session uploads the 700 KB novel with the semantic strategy
in the link (its sentence windows are embedded with a progress bar, for minutes), the
tab is closed as soon as the progress bar shows, and the server's CPU is sampled: it
should fall to idle within a batch or two (Streamlit stops the script of a session
whose browser went away at its next Streamlit call), not run on for nobody.

Every mismatch is printed, one line each. A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import chunking
from bench.bench_load import COUNT_JS, ERRORS_JS, IDLE_JS, NOVEL, documents, load, rss_mb
from chunking.documents.io import read_bytes
from tests.e2e.harness import CHROMIUM, CHROMIUM_ARGS, app_server, cpu_seconds, wait_until_idle

TIMEOUT_MS = 300_000
#: Downloads that had to be tried again (not mismatches: the content is still checked).
NOTES: list[str] = []
#: One configuration per session, cycled: (strategy, parameters in the link).
CONFIGS: tuple[tuple[str, dict[str, str]], ...] = (
    ("recursive", {"size": "300"}),
    ("fixed", {"size": "450", "overlap": "40"}),
    ("recursive", {"size": "800", "overlap": "80"}),
    ("sentence", {"size": "120", "unit": "words"}),
    ("fixed", {"size": "250", "overlap": "0"}),
    ("recursive", {"size": "600"}),
    ("sentence", {"size": "700"}),
    ("fixed", {"size": "1000", "overlap": "100"}),
)


@dataclass
class Session:
    """One browser session's document and configuration, and what it found wrong."""

    number: int
    name: str
    text: str
    strategy: str
    params: dict[str, str]

    @property
    def config(self) -> chunking.Config:
        spec = chunking.strategies()[self.strategy]
        given = {
            p.name: p.coerce(self.params[p.name]) for p in spec.params if p.name in self.params
        }
        return chunking.Config.create(self.strategy, **given)

    @property
    def link(self) -> str:
        return "&".join(
            [f"strategy={self.strategy}", *(f"{k}={v}" for k, v in self.params.items())]
        )


def sessions_for(n: int) -> list[Session]:
    """``n`` documents, each a prefix of the next, half of them named ``notes.txt``."""
    longest = documents(1, 60_000 + 4_000 * n)[0]
    out = []
    for k in range(n):
        text = longest[: 60_000 + 4_000 * k]
        name = "notes.txt" if k % 2 == 0 else f"doc_{k}.txt"
        strategy, params = CONFIGS[k % len(CONFIGS)]
        out.append(Session(k, name, text, strategy, params))
    return out


def spans(rows) -> list[tuple[int, int, str]]:
    return [(int(r["start"]), int(r["end"]), str(r["text"])) for r in rows]


async def shown_count(page) -> str:
    await page.wait_for_function(IDLE_JS, polling=200, timeout=TIMEOUT_MS)
    await page.wait_for_function(f"() => ({COUNT_JS})() !== null", timeout=TIMEOUT_MS)
    await page.wait_for_function(IDLE_JS, polling=200, timeout=TIMEOUT_MS)
    return str(await page.evaluate(COUNT_JS))


async def check(page, session: Session, when: str, problems: list[str]) -> None:
    """The count shown and the JSONL download, against the core."""
    expected = chunking.run(session.text, session.config)
    where = f"session {session.number} ({session.name}, {session.config.label()}) {when}"
    shown = await shown_count(page)
    if shown.replace(",", "") != str(len(expected)):
        problems.append(f"{where}: count shown {shown}, core {len(expected)}")
    lines = None
    for attempt in (1, 2):  # a download the browser cancels is tried once more, and said
        try:
            async with page.expect_download(timeout=TIMEOUT_MS) as info:
                button = page.get_by_test_id("stDownloadButton").filter(has_text="JSONL")
                await button.first.click()
            download = await info.value
            lines = Path(await download.path()).read_text(encoding="utf-8").splitlines()
            break
        except Exception as exc:  # Playwright's Error: "canceled", a time-out
            NOTES.append(f"{where}: download attempt {attempt} failed: {exc}")
    if lines is None:
        problems.append(f"{where}: no JSONL download after two attempts")
        return
    rows = [json.loads(line) for line in lines if line.strip()]
    got, want = spans(rows), [(c.start, c.end, c.text) for c in expected]
    if got != want:
        first = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), None)
        problems.append(
            f"{where}: download has {len(got)} chunks, core {len(want)}; first difference at "
            f"chunk {first if first is not None else min(len(got), len(want))}"
        )
    for error in await page.evaluate(ERRORS_JS):
        problems.append(f"{where}: error shown: {error}")


async def one_session(
    browser, url: str, session: Session, start: asyncio.Event, ready: list[int], problems
):
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    page = await context.new_page()
    await page.goto(f"{url}/explore?{session.link}")
    await shown_count(page)
    await (
        page.get_by_test_id("stSidebar")
        .get_by_test_id("stRadio")
        .get_by_text("Upload", exact=True)
        .click()
    )
    await page.wait_for_function(IDLE_JS, polling=200, timeout=TIMEOUT_MS)
    ready.append(session.number)
    await start.wait()  # every session uploads at the same moment
    await (
        page.get_by_test_id("stSidebar")
        .locator('.st-key-upload [data-testid="stFileUploaderDropzoneInput"]')
        .set_input_files(
            {"name": session.name, "mimeType": "text/plain", "buffer": session.text.encode()}
        )
    )
    await asyncio.sleep(1)
    # the downloads' tab, open from now on (kept across the page changes below)
    await page.get_by_role("tab", name="Download and code", exact=True).click(timeout=TIMEOUT_MS)
    await page.wait_for_function(IDLE_JS, polling=200, timeout=TIMEOUT_MS)
    await check(page, session, "after the upload", problems)
    nav = page.get_by_test_id("stSidebarNav")
    await nav.get_by_role("link", name="Compare").click()
    await page.get_by_role("heading", name="Compare").wait_for(timeout=TIMEOUT_MS)
    await page.wait_for_function(IDLE_JS, polling=200, timeout=TIMEOUT_MS)
    await nav.get_by_role("link", name="Explore").click()
    await page.get_by_role("heading", name="Explore").wait_for(timeout=TIMEOUT_MS)
    await asyncio.sleep(1)
    await check(page, session, "after Explore → Compare → Explore", problems)
    await context.close()


async def isolation_phase(browser, url: str, n: int) -> list[str]:
    sessions = sessions_for(n)
    for s in sessions:  # the core's own reading of the bytes gives the same text
        assert read_bytes(s.text.encode(), s.name).text == s.text
    problems: list[str] = []
    start, ready = asyncio.Event(), []
    tasks = [
        asyncio.create_task(one_session(browser, url, s, start, ready, problems)) for s in sessions
    ]
    while len(ready) + sum(t.done() for t in tasks) < len(tasks):
        await asyncio.sleep(0.2)
    began = time.perf_counter()
    start.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    for session, result in zip(sessions, results, strict=True):
        if isinstance(result, BaseException):
            problems.append(f"session {session.number}: {type(result).__name__}: {result}")
    print(
        f"isolation: {n} sessions, {len({s.name for s in sessions})} file names, documents "
        f"{len(sessions[0].text):,}–{len(sessions[-1].text):,} characters (each a prefix "
        f"of the next), {time.perf_counter() - began:.1f} s; mismatches {len(problems)} "
        f"[{load()}]",
        flush=True,
    )
    return problems


async def closed_tab_phase(browser, url: str, pid: int) -> None:
    idle = wait_until_idle(pid, timeout=300)
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    page = await context.new_page()
    await page.goto(f"{url}/explore?strategy=semantic")
    await page.wait_for_function(IDLE_JS, polling=200, timeout=TIMEOUT_MS)
    await (
        page.get_by_test_id("stSidebar")
        .get_by_test_id("stRadio")
        .get_by_text("Upload", exact=True)
        .click()
    )
    await page.wait_for_function(IDLE_JS, polling=200, timeout=TIMEOUT_MS)
    await (
        page.get_by_test_id("stSidebar")
        .locator('.st-key-upload [data-testid="stFileUploaderDropzoneInput"]')
        .set_input_files(
            {"name": NOVEL.name, "mimeType": "text/plain", "buffer": NOVEL.read_bytes()}
        )
    )
    await page.get_by_test_id("stProgress").first.wait_for(timeout=TIMEOUT_MS)
    label = await page.get_by_test_id("stProgress").first.inner_text()
    before = cpu_seconds(pid)
    time.sleep(5)
    busy = (cpu_seconds(pid) - before) / 5
    await context.close()
    closed = time.monotonic()
    samples = []
    for _ in range(12):
        before = cpu_seconds(pid)
        time.sleep(5)
        samples.append((cpu_seconds(pid) - before) / 5)
    quiet = next((5 * (i + 1) for i, s in enumerate(samples) if s < 0.1), None)
    print(
        f"closed tab: server idle after {idle:.0f} s; while embedding ({label.strip()[:60]!r}) "
        f"{busy:.2f} cores; after the tab closed, cores per 5 s: "
        + ", ".join(f"{s:.2f}" for s in samples)
        + (
            f"; under 0.1 core {quiet} s after the close"
            if quiet is not None
            else f"; still busy {time.monotonic() - closed:.0f} s after the close"
        )
        + f" [{load()}]",
        flush=True,
    )


async def run(args: argparse.Namespace, url: str, pid: int | None) -> None:
    from playwright.async_api import async_playwright

    print(f"start: {load()}", flush=True)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        problems = await isolation_phase(browser, url, args.sessions)
        for problem in problems:
            print(f"  mismatch: {problem}")
        for note in NOTES:
            print(f"  note: {note}")
        if pid is not None:
            print(f"server RSS {rss_mb(pid):.0f} MB, peak {rss_mb(pid, 'VmHWM'):.0f} MB")
        if args.closed_tab and pid is not None:
            await closed_tab_phase(browser, url, pid)
        print(f"end: {load()}")
        await browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an already running app (default: start one)")
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument(
        "--no-closed-tab", dest="closed_tab", action="store_false", help="skip phase 2"
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with app_server(args.url) as server:
        asyncio.run(run(args, server.url, server.pid))


if __name__ == "__main__":
    main()
