"""The load benchmark's protocol clients (``bench/load/protocol.py``) against the real app:
two sessions speaking Streamlit's websocket protocol open ``/explore`` and change the
sidebar's size at the same moment; each is shown the core's count, before and after.

It starts its own server, so it shares the browser tests' xdist group: one worker runs
the servers one after another while the other runs the rest of the suite.
"""

from __future__ import annotations

import asyncio

import pytest

from bench.load.common import Phase, expected_count, sample_path
from bench.load.protocol import Client, change_size, open_clients
from chunking.documents.io import read_path
from tests.e2e.harness import app_server

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]

SIZE = 800


async def _two_sessions(url: str, expected: str) -> tuple[Phase, Phase, list[str | None]]:
    """Open two sessions, change both sizes to :data:`SIZE`; the counts shown on opening."""
    opened, changed = Phase("open"), Phase(f"size {SIZE}")
    clients: list[Client] = await open_clients(url, 2, "explore", opened)
    try:
        first = [c.run.count if c.run else None for c in clients]
        await change_size(clients, SIZE, expected, changed)
        assert [c.run.count if c.run else None for c in clients] == [expected, expected]
    finally:
        await asyncio.gather(*(c.close() for c in clients))
    return opened, changed, first


def test_two_protocol_clients_are_shown_the_cores_count_after_a_size_change() -> None:
    text = read_path(sample_path()).text
    default, expected = expected_count(text), expected_count(text, SIZE)
    assert default != expected  # else the change would prove nothing

    with app_server() as server:
        opened, changed, first = asyncio.run(_two_sessions(server.url, expected))

    assert opened.problems() == [] and len(opened.seconds) == 2
    assert first == [default, default]
    assert changed.problems() == []
    assert len(changed.seconds) == 2 and len(changed.finished) == 2
    assert all(0 < c <= f for c, f in zip(changed.seconds, changed.finished, strict=True))
