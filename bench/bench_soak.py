"""A soak: a few browser sessions using the app for a long time, the server's memory
sampled all along.

    .venv/bin/python -m bench.bench_soak                     # 4 sessions, 30 minutes
    .venv/bin/python -m bench.bench_soak --sessions 2 --minutes 3

Each session repeats a script until the time is up: upload a document different from
every other session's and from its own earlier ones (slices of the chroma-eval corpora
and the novel), check the chunk count against the core's for the app's default
configuration at the size the session last set, change the size and check again,
download the configuration, then visit Semantic, the embedding map, Compare, Evaluate
and Tune, waiting on each until the script run ends, and come back to Explore. The
server's resident memory (VmRSS) is read every ``--sample`` seconds (30).

Reported: the memory curve, its growth from the first sample after ``--warm-up``
minutes (5; half the run when the run is shorter) to the largest and to the last
sample, the rounds each session completed, and every wrong count, time-out, exception
and error the app showed, counted and listed; the machine's load at the start and the
end. A benchmark, not a test: it asserts nothing, it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time
from dataclasses import dataclass, field

from bench.bench_load import (
    CORPORA,
    COUNT_JS,
    ERRORS_JS,
    IDLE_JS,
    NOVEL,
    SIZES,
    expected_count,
    load,
    rss_mb,
    uploaded_text,
)
from tests.e2e.harness import CHROMIUM, CHROMIUM_ARGS, app_server, wait_until_idle

VISITS = ("Semantic", "Embedding map", "Compare", "Evaluate", "Tune")
STEP_TIMEOUT_MS = 180_000
DOC_CHARS = 60_000


@dataclass
class Tally:
    """What one session met."""

    rounds: int = 0
    steps: int = 0
    problems: list[str] = field(default_factory=list)


def texts() -> str:
    """The pool documents are cut from: the chroma-eval corpora and the novel."""
    parts = [p.read_text(encoding="utf-8") for p in sorted(CORPORA.glob("*.md"))]
    if NOVEL.is_file():
        parts.append(NOVEL.read_text(encoding="utf-8"))
    return "\n\n".join(parts)


def document(pool: str, session: int, round_: int) -> tuple[str, bytes]:
    """A slice of ``pool`` no other (session, round) gets, with its name."""
    step = 7_919 * (1 + session) + 104_729 * round_
    start = step % max(1, len(pool) - DOC_CHARS)
    text = f"Session {session}, round {round_}.\n\n" + pool[start : start + DOC_CHARS]
    return f"soak_{session}_{round_}.txt", text.encode("utf-8")


class Sampler(threading.Thread):
    """Reads the server's RSS every ``every`` seconds until stopped."""

    def __init__(self, pid: int, every: float) -> None:
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.samples: list[tuple[float, float]] = []  # (seconds since start, MB)
        self.done = threading.Event()
        self.start_time = time.perf_counter()

    def run(self) -> None:
        while not self.done.is_set():
            self.samples.append((time.perf_counter() - self.start_time, rss_mb(self.pid)))
            self.done.wait(self.every)


async def idle(page, tally: Tally, what: str) -> None:
    """Wait for the end of the script run; then note any error the page shows."""
    tally.steps += 1
    try:
        await page.wait_for_timeout(300)  # let the rerun start
        await page.wait_for_function(IDLE_JS, polling=200, timeout=STEP_TIMEOUT_MS)
    except Exception as exc:
        tally.problems.append(f"time-out: {what} still running ({type(exc).__name__})")
    for error in await page.evaluate(ERRORS_JS):
        tally.problems.append(f"error shown on {what}: {error}")


async def count_is(page, expected: str, tally: Tally, what: str) -> None:
    try:
        await page.wait_for_function(
            f"e => ({COUNT_JS})() === e", arg=expected, polling=200, timeout=STEP_TIMEOUT_MS
        )
    except Exception:
        shown = await page.evaluate(COUNT_JS)
        kind = "time-out" if shown is None else "wrong count"
        tally.problems.append(f"{kind}: {what}: expected {expected}, shown {shown}")
    await idle(page, tally, what)


async def nav(page, title: str) -> None:
    link = page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True)
    await link.click()


async def session(browser, url: str, number: int, until: float, pool: str, tally: Tally) -> None:
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    page = await context.new_page()
    page.on("pageerror", lambda exc: tally.problems.append(f"page exception: {exc}"))
    await page.goto(f"{url}/explore")
    await page.wait_for_function(f"() => ({COUNT_JS})() !== null", timeout=STEP_TIMEOUT_MS)
    sidebar = page.get_by_test_id("stSidebar")
    await sidebar.get_by_test_id("stRadio").get_by_text("Upload", exact=True).click()
    await idle(page, tally, "choosing Upload")
    size: int | None = None  # the default until this session sets one; a new upload keeps it
    while time.perf_counter() < until:
        name, data = document(pool, number, tally.rounds)
        text = uploaded_text(data, name)
        await sidebar.locator(
            '.st-key-upload [data-testid="stFileUploaderDropzoneInput"]'
        ).set_input_files({"name": name, "mimeType": "text/plain", "buffer": data})
        await count_is(page, expected_count(text, size), tally, f"upload {name} (size {size})")
        size = SIZES[tally.rounds % len(SIZES)]
        field_ = sidebar.locator('input[type="number"][aria-label="size"]')
        await field_.fill(str(size))
        await field_.press("Enter")
        await count_is(page, expected_count(text, size), tally, f"size {size} on {name}")
        try:
            async with page.expect_download(timeout=30_000):
                await sidebar.get_by_role("button", name="Download config (JSON)").click()
        except Exception as exc:
            tally.problems.append(f"download of the configuration failed ({type(exc).__name__})")
        for title in VISITS:
            if time.perf_counter() >= until:
                break
            await nav(page, title)
            await idle(page, tally, title)
        await nav(page, "Explore")
        await idle(page, tally, "Explore")
        tally.rounds += 1
    await context.close()


def growth(samples: list[tuple[float, float]], warm_up: float) -> str:
    after = [mb for t, mb in samples if t >= warm_up]
    if len(after) < 2:
        return f"growth after {warm_up / 60:.1f} min: too few samples ({len(after)})"
    base = after[0]
    return (
        f"growth after {warm_up / 60:.1f} min: from {base:.0f} MB to at most "
        f"{max(after):.0f} MB ({100 * (max(after) - base) / base:+.1f} %), last "
        f"{after[-1]:.0f} MB ({100 * (after[-1] - base) / base:+.1f} %)"
    )


async def run(args: argparse.Namespace, url: str, pid: int | None) -> None:
    from playwright.async_api import async_playwright

    print(f"start: {load()}; {args.sessions} sessions x {args.minutes:g} min", flush=True)
    pool = texts()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        if pid is not None:
            print(f"server idle after {wait_until_idle(pid):.1f} s; RSS {rss_mb(pid):.0f} MB")
        sampler = Sampler(pid, args.sample) if pid is not None else None
        if sampler:
            sampler.start()
        started = time.perf_counter()
        until = started + 60 * args.minutes
        tallies = [Tally() for _ in range(args.sessions)]
        outcomes = await asyncio.gather(
            *(session(browser, url, k, until, pool, t) for k, t in enumerate(tallies)),
            return_exceptions=True,
        )
        took = time.perf_counter() - started
        if sampler:
            sampler.done.set()
            sampler.join()
        await browser.close()
    for k, outcome in enumerate(outcomes):
        if isinstance(outcome, BaseException):
            tallies[k].problems.append(f"the script stopped: {type(outcome).__name__}: {outcome}")
    print(
        f"ran {took / 60:.1f} min; rounds per session {[t.rounds for t in tallies]}, "
        f"steps {sum(t.steps for t in tallies)}"
    )
    if sampler and sampler.samples:
        curve = sampler.samples
        print(
            "server RSS (MB) every "
            + f"{args.sample:g} s: "
            + ", ".join(f"{mb:.0f}" for _, mb in curve)
        )
        warm_up = min(60 * args.warm_up, took / 2)
        print(growth(curve, warm_up))
        print(f"RSS median {statistics.median(mb for _, mb in curve):.0f} MB")
    problems = [p for t in tallies for p in t.problems]
    kinds = {
        kind: sum(p.startswith(kind) for p in problems)
        for kind in ("wrong count", "time-out", "error shown", "page exception", "download")
    }
    print(f"problems: {len(problems)} " + ", ".join(f"{k}: {n}" for k, n in kinds.items()))
    for k, tally in enumerate(tallies):
        for problem in tally.problems:
            print(f"  session {k}: {problem[:300]}")
    print(f"end: {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an already running app (default: start one)")
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--sample", type=float, default=30, help="seconds between samples")
    parser.add_argument("--warm-up", type=float, default=5, help="minutes before growth counts")
    args = parser.parse_args()
    with app_server(args.url) as server:
        asyncio.run(run(args, server.url, server.pid))


if __name__ == "__main__":
    main()
