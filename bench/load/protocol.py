"""Sessions without a browser: lightweight clients that speak Streamlit's own websocket
protocol, so that a phase measures the server alone (no Chromium drawing on the same
cores).

What a browser tab does, read from Streamlit 1.67 (``web/server/starlette/
starlette_websocket.py``, ``runtime/app_session.py``, ``runtime/forward_msg_cache.py``
and the frontend's bundle), and what :class:`Client` does the same way:

- It opens ``ws://HOST/_stcore/stream`` with the subprotocols ``streamlit`` and an XSRF
  token (``PLACEHOLDER_AUTH_TOKEN`` without a ``_streamlit_xsrf`` cookie; the token only
  unlocks a signed-in user's cookies) and its page's origin; the server makes a session.
- Every frame is a binary protobuf: ``BackMsg`` up, ``ForwardMsg`` down.
- A run is asked for with ``BackMsg.rerun_script``, a ``ClientState``: the first names
  the page by its URL path (``page_name="explore"``), later ones by the hash from the
  last ``navigation`` message (``page_script_hash``), each with the query string from
  the last ``page_info_changed``, the widget values, the hashes of the cached messages
  it holds and the browser's context (time zone, locale, URL).
- The server answers ``new_session``, ``navigation``, one ``delta`` per element (its
  ``metadata.delta_path`` starts with the root container: 0 main, 1 sidebar), then
  ``script_finished`` (``FINISHED_EARLY_FOR_RERUN`` when another run follows at once).
- An element of ``global.minCachedMessageSize`` or more comes ``metadata.cacheable``;
  once a tab lists its hash in ``cached_message_hashes``, only a ``ref_hash`` comes.

One difference: a tab sends the values of all its widgets with every run; a client
sends only the values it changed (the size). The server keeps every other widget's value
from the last run either way (``SessionState``), so the runs are the same.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from dataclasses import dataclass, field

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.RootContainer_pb2 import RootContainer
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect
from websockets.typing import Origin, Subprotocol

from bench.load.common import (
    SIZES,
    TIMEOUT_MS,
    Phase,
    app_default,
    attempt,
    expected_count,
    load,
    measured,
    report_problems,
    rss_mb,
    sample_path,
)
from chunking.documents.io import read_path
from tests.e2e.harness import wait_until_idle

STREAM_PATH = "/_stcore/stream"
#: What the frontend offers when it has no XSRF cookie: the protocol, then the token.
SUBPROTOCOLS = ("streamlit", "PLACEHOLDER_AUTH_TOKEN")
#: A run's last ``script_finished``: not an interrupted run nor a fragment's own run.
FINAL = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR)
TIMEOUT_S = TIMEOUT_MS / 1000


@dataclass
class Run:
    """One script run a client asked for: what it waits for and what came back."""

    expected: str | None  #: the count it must show (None: any count)
    start: float = field(default_factory=time.perf_counter)
    count: str | None = None  #: the last Chunks value the run sent
    counted: float | None = None  #: seconds from the request to the expected count
    finished: float | None = None  #: seconds from the request to its script_finished
    lost: str | None = None  #: why the connection ended before the run did
    errors: list[str] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)


class Client:
    """One session on the app, as a browser tab holds it, without drawing anything."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.path = ""  #: the page's URL path, as the tab's address bar has it
        self.page_hash = ""
        self.query = ""
        self.size: NumberInput | None = None  #: the sidebar's size field, once drawn
        self.run: Run | None = None
        self._widgets: dict[str, WidgetState] = {}  #: values this client changed
        self._cache: dict[str, ForwardMsg] = {}  #: cacheable messages by hash
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        self._ws = await connect(
            "ws" + self.url.removeprefix("http") + STREAM_PATH,
            subprotocols=[Subprotocol(p) for p in SUBPROTOCOLS],
            origin=Origin(self.url),
            max_size=None,
            proxy=None,
            open_timeout=TIMEOUT_S,
            ping_interval=None,  # a tab sends no pings (a busy server could miss one)
        )
        self._reader = asyncio.create_task(self._read())

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            await self._reader

    async def open(self, page: str) -> Run:
        """Ask for the first run of ``page`` (its URL path), as a tab opening it does."""
        self.path = page
        return await self._request(None)

    async def set_size(self, value: int, expected: str) -> Run:
        """Set the sidebar's size field to ``value``: a rerun with its new value."""
        if self.size is None:
            raise LookupError("the session's sidebar has no size field")
        state = WidgetState(id=self.size.id)
        if self.size.data_type == NumberInput.INT:
            state.int_value = value
        else:
            state.double_value = value
        self._widgets[state.id] = state
        return await self._request(expected)

    async def idle(self) -> None:
        """Wait (up to the time-out) until the last run asked for has finished."""
        if self.run is not None:
            await asyncio.wait_for(self.run.done.wait(), TIMEOUT_S)

    async def _request(self, expected: str | None) -> Run:
        assert self._ws is not None, "connect first"
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query
        if self.page_hash:
            state.page_script_hash = self.page_hash
        else:
            state.page_name = self.path
        state.widget_states.widgets.extend(self._widgets.values())
        state.cached_message_hashes.extend(self._cache)
        state.context_info.timezone = "UTC"
        state.context_info.locale = "en-US"
        query = f"?{self.query}" if self.query else ""
        state.context_info.url = f"{self.url}/{self.path}{query}"
        state.context_info.color_scheme = "light"
        payload = msg.SerializeToString()
        self.run = run = Run(expected)
        await self._ws.send(payload)
        return run

    async def _read(self) -> None:
        """Take every message as it comes (a tab does too), until the connection ends."""
        assert self._ws is not None
        why = "the connection closed"
        try:
            async for data in self._ws:
                if isinstance(data, bytes):  # Streamlit sends binary frames only
                    self._receive(ForwardMsg.FromString(data))
        except Exception as exc:  # the connection broke: the run in progress is lost
            why = f"the connection broke: {type(exc).__name__} {exc}"[:200]
        if self.run is not None and not self.run.done.is_set():
            self.run.lost = why
            self.run.done.set()

    def _receive(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "ref_hash":  # an element this client holds: take it from the cache
            cached = self._cache.get(msg.ref_hash)
            if cached is None:
                self._error(f"cached message {msg.ref_hash} missing")
                return
            full = ForwardMsg()
            full.CopyFrom(cached)
            full.metadata.CopyFrom(msg.metadata)
            msg, kind = full, full.WhichOneof("type")
        elif msg.metadata.cacheable:
            self._cache[msg.hash] = msg
        if kind == "new_session" and not self.page_hash:
            self.page_hash = msg.new_session.page_script_hash
        elif kind == "navigation":  # st.navigation's page: what a tab names from now on
            self.page_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "page_not_found":
            self._error(f"page not found: {msg.page_not_found.page_name!r}")
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            self._element(msg)
        elif kind == "script_finished" and msg.script_finished in FINAL:
            run = self.run
            if run is not None and not run.done.is_set():
                run.finished = time.perf_counter() - run.start
                run.done.set()

    def _element(self, msg: ForwardMsg) -> None:
        element = msg.delta.new_element
        kind = element.WhichOneof("type")
        if kind == "metric" and element.metric.label == "Chunks":
            run = self.run
            if run is not None and not run.done.is_set():
                run.count = element.metric.body
                if run.counted is None and run.expected in (None, run.count):
                    run.counted = time.perf_counter() - run.start
        elif kind == "number_input" and element.number_input.label == "size":
            if list(msg.metadata.delta_path[:1]) == [RootContainer.SIDEBAR]:
                self.size = NumberInput()
                self.size.CopyFrom(element.number_input)
        elif kind == "exception":
            self._error(f"{element.exception.type}: {element.exception.message}"[:200])
        elif kind == "alert" and element.alert.format == Alert.ERROR:
            self._error(element.alert.body[:200])

    def _error(self, text: str) -> None:
        if self.run is not None:
            self.run.errors.append(text)


async def settle(run: Run, phase: Phase) -> None:
    """Wait until ``run`` finishes (or the time-out) and record it in ``phase``: the
    seconds to its expected count and to its end; a run that ends showing another count
    is a wrong count, one that ends with none or never ends a time-out (as a browser
    session's, with the app idle)."""
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(run.done.wait(), TIMEOUT_S)
    took = time.perf_counter() - run.start
    ended = run.done.is_set() and run.lost is None
    why = "(run finished)" if ended else run.lost or f"after {took:.0f} s (TimeoutError)"
    expected = "a count" if run.expected is None else run.expected
    if run.counted is not None:
        phase.seconds.append(run.counted)
    elif run.count is None:
        phase.timeouts.append(f"expected {expected}, no count shown {why}")
    else:
        phase.wrong.append(f"expected {expected}, shown {run.count} {why}")
    if run.finished is not None:
        phase.finished.append(run.finished)
    elif run.counted is not None:
        phase.timeouts.append(f"expected {expected} shown, but the run did not end: {why}")
    phase.errors.extend(run.errors)


async def open_clients(url: str, sessions: int, page: str, phase: Phase) -> list[Client]:
    """``sessions`` clients open ``page`` at once and wait for its first count; the ones
    that connected (failures recorded in ``phase``)."""
    clients = [Client(url) for _ in range(sessions)]
    went = await asyncio.gather(*(attempt(phase, f"open /{page}", c.connect()) for c in clients))
    clients = [c for c, ok in zip(clients, went, strict=True) if ok]
    runs = await asyncio.gather(*(c.open(page) for c in clients))
    await asyncio.gather(*(settle(r, phase) for r in runs))
    return clients


async def change_size(clients: list[Client], size: int, expected: str, phase: Phase) -> None:
    """All ``clients`` set the sidebar's size to ``size`` at the same moment (every
    request sent at once, each timed from its own), then wait for ``expected``. Each
    client's previous run must have ended first, as in a tab."""
    await asyncio.gather(
        *(attempt(phase, f"size {size}: the previous run to end", c.idle()) for c in clients)
    )
    runs: list[Run] = []

    async def send(client: Client) -> None:
        runs.append(await client.set_size(size, expected))

    await asyncio.gather(*(attempt(phase, f"size {size}: request", send(c)) for c in clients))
    await asyncio.gather(*(settle(r, phase) for r in runs))


async def explore_phase(url: str, sessions: int, expected: dict[int, str], phase: Phase) -> None:
    """``sessions`` clients open ``/explore`` on the default sample, then change the
    size together, round after round (:data:`SIZES`)."""
    opened = Phase("open")
    clients = await open_clients(url, sessions, "explore", opened)
    try:
        for size in SIZES:
            await change_size(clients, size, expected[size], phase)
    finally:
        phase.absorb(opened)
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)


async def run(args: argparse.Namespace, url: str, pid: int | None) -> None:
    """The explore phases only (``--sessions``, then ``--big-round`` unless 0): the
    other phases need uploads, which these clients do not make."""
    print(f"start: {load()}; default configuration {app_default().label()}", flush=True)
    print("clients: Streamlit protocol over websockets (no browser), in this process")
    text = read_path(sample_path()).text
    expected = {size: expected_count(text, size) for size in SIZES}
    warm = Phase("warm-up")
    for client in await open_clients(url, 1, "explore", warm):
        await client.close()
    if warm.problems():
        print("warm-up: " + "; ".join(warm.problems()))
    if pid is not None:
        print(f"server warm; idle after {wait_until_idle(pid):.1f} s; RSS {rss_mb(pid):.0f} MB")
    phases: list[Phase] = []
    for sessions in (args.sessions, args.big_round):
        if sessions:
            await measured(
                phases,
                phase := Phase(f"explore size change x{sessions} (protocol)"),
                explore_phase(url, sessions, expected, phase),
                pid,
            )
    if pid is not None:
        print(f"server RSS after the phases: {rss_mb(pid):.0f} MB")
    report_problems(phases)
    print(f"end: {load()}")
