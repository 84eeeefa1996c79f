"""Many sessions at once against one app server: real browsers, or protocol clients.

    .venv/bin/python -m bench.bench_load                 # from the repository root
    .venv/bin/python -m bench.bench_load --sessions 8 --uploads 50 --big-round 16
    .venv/bin/python -m bench.bench_load --sessions 8 --big-upload-mb 0 --explore-only
    .venv/bin/python -m bench.bench_load --clients protocol --sessions 8 --big-round 16

Two kinds of client (``--clients``):

- ``browser`` (the default, :mod:`bench.load.browser`): each session is its own headless
  Chromium context (Playwright), all driven concurrently. The browsers share this
  machine's cores with the server: redrawing the page after a size change costs each
  renderer about 0.8-1 s of CPU, and with 8 sessions the server used only about 12 % of
  the CPU (the CPU lines show the split), so these figures are the server's and the
  browsers' together.
- ``protocol`` (:mod:`bench.load.protocol`): each session is a lightweight client in this
  process speaking Streamlit's own websocket protocol (``/_stcore/stream``, protobuf
  ``BackMsg``/``ForwardMsg``): it opens ``/explore`` and changes the sidebar's size
  field as a tab does, and draws nothing. These figures are the server's alone, as in a
  deployment where each user's browser runs on their own machine. Only the explore
  phases exist here (1 and 2 below; ``--explore-only`` changes nothing); each size
  change is timed to the expected Chunks metric and to the run's ``script_finished``.

Every expected count is the core's count for the configuration a new session starts
with (:func:`app_default`: the registry's first strategy with its defaults, as the
sidebar's controls start), never a fixed one. Phases:

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

A time-out or error inside a phase (a fill, an Enter, an upload, a page that does not
open, a connection that breaks) is recorded as a time-out of that phase with what was
tried, and the benchmark goes on to the next step and phase (``attempt``).

Reported: p50/p95 per phase, and every wrong count (a count shown and left standing
for ``SETTLE_S`` seconds with the app idle, or at the end of the run for a protocol
client, or shown at a time-out) and every time-out (no count at all), with what was
shown; errors shown by the app (``stException`` / ``stAlert`` of the error kind; for a
protocol client, exception and error-alert elements in the deltas); the server's RSS;
per phase, where the CPU went: the server's CPU seconds (``/proc/PID/stat``, when the
bench started the server), this process's, and the whole machine's (``/proc/stat``,
the browsers and any other work included), against the cores times the wall time; the
machine's load (``os.getloadavg``) at the start and the end. A benchmark, not a test:
it asserts nothing, it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio

from bench.load.browser import COUNT_JS, ERRORS_JS, IDLE_JS
from bench.load.common import (
    CORPORA,
    NOVEL,
    SIZES,
    Phase,
    app_default,
    documents,
    expected_count,
    load,
    rss_mb,
    sample_path,
    uploaded_text,
)
from tests.e2e.harness import app_server

#: What other benchmarks (bench_soak, bench_isolation) and tests take from here.
__all__ = [
    "CORPORA",
    "COUNT_JS",
    "ERRORS_JS",
    "IDLE_JS",
    "NOVEL",
    "SIZES",
    "Phase",
    "app_default",
    "documents",
    "expected_count",
    "load",
    "main",
    "rss_mb",
    "sample_path",
    "uploaded_text",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an already running app (default: start one)")
    parser.add_argument(
        "--clients",
        choices=("browser", "protocol"),
        default="browser",
        help="headless Chromium pages, or Streamlit protocol clients without a browser "
        "(the server alone; explore phases only)",
    )
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
        help="only the explore phase (the size changes of --sessions sessions); protocol "
        "clients have only the explore phases and run the big round as well",
    )
    args = parser.parse_args()
    if args.clients == "protocol":
        from bench.load.protocol import run
    else:
        from bench.load.browser import run
    with app_server(args.url) as server:
        asyncio.run(run(args, server.url, server.pid))


if __name__ == "__main__":
    main()
