"""Sessions in real browsers: each its own headless Chromium context (Playwright), all
driven concurrently against one app server; every phase the command runs by default."""

from __future__ import annotations

import argparse
import asyncio
import time

from bench.load.common import (
    NOVEL,
    SETTLE_S,
    SIZES,
    TIMEOUT_MS,
    CpuMark,
    Phase,
    app_default,
    attempt,
    documents,
    expected_count,
    load,
    measured,
    report_problems,
    rss_mb,
    sample_path,
    uploaded_text,
)
from chunking.documents.io import read_path
from tests.e2e.harness import CHROMIUM, CHROMIUM_ARGS, IDLE_JS, wait_until_idle

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
ERRORS_JS = """() => [...document.querySelectorAll(
    '[data-testid="stException"], [data-testid="stAlertContentError"]')]
  .map(e => e.innerText.slice(0, 200))"""


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
    phase.absorb(opened)
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
    """Every phase, or only the explore phase of ``--sessions`` (``--explore-only``)."""
    from playwright.async_api import async_playwright

    print(f"start: {load()}; default configuration {app_default().label()}", flush=True)
    print("clients: headless Chromium pages (Playwright), on this machine", flush=True)
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
            before, mark = rss_mb(pid), CpuMark.now(pid)
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
            print(f"  {CpuMark.now(pid).since(mark)}", flush=True)

        await measured(
            phases,
            explore := Phase(f"explore size change x{args.sessions}"),
            explore_phase(browser, url, args.sessions, explore),
            pid,
        )
        if args.explore_only:
            await browser.close()
            print(f"end: {load()}")
            report_problems(phases)
            return
        if args.big_round:
            await measured(
                phases,
                big := Phase(f"explore size change x{args.big_round}"),
                explore_phase(browser, url, args.big_round, big),
                pid,
            )
        if args.novel_sessions:
            await measured(
                phases,
                novel := Phase(f"novel 700 KB x{args.novel_sessions} (upload, size changes)"),
                novel_phase(browser, url, args.novel_sessions, novel),
                pid,
            )
        await measured(
            phases,
            semantic := Phase("semantic first view"),
            semantic_phase(browser, url, semantic),
            pid,
        )
        await measured(
            phases,
            uploads := Phase(f"upload 1 MB x{args.sessions}"),
            upload_phase(browser, url, args.sessions, uploads),
            pid,
        )
        if pid is not None:
            print(f"server RSS after the concurrent phases: {rss_mb(pid):.0f} MB")
        curve: list[float] = []
        await measured(
            phases,
            memory := Phase("sequential uploads"),
            memory_phase(browser, url, pid, args.uploads, memory, curve),
            pid,
        )
        if curve:
            marks = sorted({0, *range(9, len(curve), 10), len(curve) - 1})
            print(
                "server RSS (MB) after upload "
                + ", ".join(f"{k + 1}: {curve[k]:.0f}" for k in marks)
            )
        report_problems(phases)
        print(f"end: {load()}")
        await browser.close()
