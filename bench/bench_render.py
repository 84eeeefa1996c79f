"""What a size change costs the browser: Explore against a minimal Streamlit page.

    .venv/bin/python -m bench.bench_render                  # from the repository root
    .venv/bin/python -m bench.bench_render --changes 8 --sessions 8

Two servers in this run: the app (``python app.py``) and its peer,
``bench/load/minimal_page.py``, which does Explore's server work for a size change (the
default sample chunked at the new size) but draws only the Chunks metric. For each,
``--sessions`` headless Chromium pages change the sidebar's size together,
``--changes`` times; per size change and session:

- the time until the new count is shown;
- the renderer's main thread (Chrome DevTools ``Performance.getMetrics``: task,
  script, layout and style seconds), over the change and ``SETTLE_S`` after it;
- every Chromium process's CPU seconds (``/proc``; run it with no other Chromium on
  the machine) and the server's, over the same stretch, divided by the sessions.

Printed: the medians, p95 of the time shown, and the ratios Explore / minimal. With
many sessions on one machine the browsers' CPU is what the sessions wait for: 8
renderers each needing ``c`` CPU seconds per change share this machine's cores. A
benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import async_playwright

from bench.load.browser import COUNT_JS, IDLE_JS, size_field
from bench.load.common import SIZES, expected_count, load, percentile, sample_path
from chunking.documents.io import read_path
from tests.e2e.harness import (
    CHROMIUM,
    CHROMIUM_ARGS,
    app_server,
    cpu_seconds,
    start_server,
    stop_server,
)

MINIMAL = Path(__file__).parent / "load" / "minimal_page.py"
METRICS = {
    "task": "TaskDuration",
    "script": "ScriptDuration",
    "layout": "LayoutDuration",
    "style": "RecalcStyleDuration",
}
SETTLE_S = 2.5
TICK = os.sysconf("SC_CLK_TCK")


def chromium_cpu_seconds() -> float:
    """User plus system CPU seconds of every process named ``chromium``."""
    total = 0.0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            words = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            program = words.split(b" ", 1)[0]  # a child rewrites its command line
            if os.path.basename(program) != b"chromium":  # Debian's wrapper starts lib/
                continue
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        total += (int(fields[11]) + int(fields[12])) / TICK
    return total


@dataclass
class Figures:
    shown: list[float] = field(default_factory=list)
    main: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in METRICS})
    chromium: list[float] = field(default_factory=list)
    server: list[float] = field(default_factory=list)

    def line(self, name: str) -> str:
        med = statistics.median
        main = ", ".join(f"{k} {med(v):.3f}" for k, v in self.main.items())
        return (
            f"{name}: shown p50 {med(self.shown):.2f} s, p95 {percentile(self.shown, 95):.2f} s; "
            f"per session and change: Chromium CPU {med(self.chromium):.2f} s, server CPU "
            f"{med(self.server):.3f} s, renderer main thread {main} s"
        )


async def renderer_seconds(cdp) -> dict[str, float]:
    values = {m["name"]: m["value"] for m in (await cdp.send("Performance.getMetrics"))["metrics"]}
    return {k: values[name] for k, name in METRICS.items()}


SHOWS_JS = f"(expected) => ({COUNT_JS})() === expected"


async def count_shown(page, expected: str, start: float) -> float:
    """Seconds from ``start`` until the Chunks metric shows ``expected``."""
    await page.wait_for_function(SHOWS_JS, arg=expected, polling=50, timeout=180_000)
    return time.perf_counter() - start


async def measure(browser, url: str, sessions: int, changes: int, pid: int) -> Figures:
    figures = Figures()
    contexts = [
        await browser.new_context(viewport={"width": 1440, "height": 1000}) for _ in range(sessions)
    ]
    pages = [await c.new_page() for c in contexts]
    cdps = [await c.new_cdp_session(p) for c, p in zip(contexts, pages, strict=True)]
    for cdp in cdps:
        await cdp.send("Performance.enable")
    await asyncio.gather(*(p.goto(url) for p in pages))
    for p in pages:
        await p.wait_for_function(COUNT_JS, polling=200, timeout=180_000)
        await p.wait_for_function(IDLE_JS, polling=200, timeout=180_000)
    await asyncio.sleep(SETTLE_S)
    text = read_path(sample_path()).text
    for n in range(changes):
        size = SIZES[n % len(SIZES)]
        expected = expected_count(text, size)
        fields = [await size_field(p) for p in pages]
        await asyncio.gather(*(f.fill(str(size)) for f in fields))
        before = [await renderer_seconds(c) for c in cdps]
        chromium, server = chromium_cpu_seconds(), cpu_seconds(pid)
        start = time.perf_counter()
        await asyncio.gather(*(f.press("Enter") for f in fields))

        figures.shown += await asyncio.gather(*(count_shown(p, expected, start) for p in pages))
        await asyncio.gather(
            *(p.wait_for_function(IDLE_JS, polling=100, timeout=180_000) for p in pages)
        )
        await asyncio.sleep(SETTLE_S)
        figures.chromium.append((chromium_cpu_seconds() - chromium) / sessions)
        figures.server.append((cpu_seconds(pid) - server) / sessions)
        for cdp, old in zip(cdps, before, strict=True):
            new = await renderer_seconds(cdp)
            for k in METRICS:
                figures.main[k].append(new[k] - old[k])
    for c in contexts:
        await c.close()
    return figures


async def run(args: argparse.Namespace) -> None:
    print(f"start: {load()}; {args.sessions} session(s), {args.changes} size changes each")
    results = {}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        with app_server() as app:
            results["explore"] = await measure(
                browser, f"{app.url}/explore", args.sessions, args.changes, app.pid
            )
        process, url = start_server(script=MINIMAL)
        try:
            results["minimal"] = await measure(
                browser, url, args.sessions, args.changes, process.pid
            )
        finally:
            stop_server(process)
        await browser.close()
    for name, figures in results.items():
        print(figures.line(name))
    med = statistics.median
    explore, minimal = results["explore"], results["minimal"]
    print(
        f"explore / minimal: Chromium CPU {med(explore.chromium) / med(minimal.chromium):.1f}x, "
        f"main-thread task {med(explore.main['task']) / med(minimal.main['task']):.1f}x, "
        f"shown p95 {percentile(explore.shown, 95) / percentile(minimal.shown, 95):.1f}x"
    )
    print(f"end: {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1)
    parser.add_argument("--changes", type=int, default=6)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
