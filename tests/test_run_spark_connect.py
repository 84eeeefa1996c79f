"""``--engine spark`` over Spark Connect: a real Connect server (pyspark's bundled jar)
started on a free local port, the run sent to it through ``SPARK_REMOTE``, and the rows,
vectors and ``errors.jsonl`` compared with the local engine's."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chunking.pipeline import spark_engine
from tests.test_run_ray import corpus_inputs
from tests.test_run_spark import closed_port, failures, manifest, row_set, run, vectors

# The suite's Spark tests share one xdist worker (--dist loadgroup): one JVM at a time.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark")]
pyspark = pytest.importorskip("pyspark")
pytest.importorskip("grpc")  # pyspark[connect]

SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"
#: Seconds the server may take to listen on this busy machine.
START_TIMEOUT = 240


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Spark Connect server on ``local[1]``, its Python workers this interpreter."""
    home = Path(pyspark.__file__).parent
    port = closed_port()
    log = tmp_path_factory.mktemp("connect") / "server.log"
    env = os.environ | {
        "SPARK_HOME": str(home),
        "PYSPARK_PYTHON": sys.executable,  # the workers need pyarrow and chunking
        "PYTHONWARNINGS": spark_engine.QUIET_WARNINGS,
    }
    env.pop("SPARK_REMOTE", None)
    command = [str(home / "bin" / "spark-submit"), "--class", SERVER, "--master", "local[1]"]
    for setting in (
        f"spark.connect.grpc.binding.port={port}",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "spark.ui.enabled=false",
    ):
        command += ["--conf", setting]
    with log.open("wb") as sink:
        server = subprocess.Popen(
            command, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not listening(port):
            shown = log.read_text(errors="replace")[-2000:]
            assert server.poll() is None, f"the Connect server exited:\n{shown}"
            assert time.monotonic() < deadline, f"the Connect server did not listen:\n{shown}"
            time.sleep(1)
        yield f"sc://127.0.0.1:{port}"
    finally:
        server.terminate()  # the JVM's shutdown hook stops its Python workers
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)  # anything of the group still there


def test_spark_connect_gives_the_local_rows(
    tmp_path: Path, connect_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyspark.sql import SparkSession

    # no session in this process, so the engine takes SPARK_REMOTE (not a local one)
    assert SparkSession.getActiveSession() is None
    sessions: list[Any] = []
    original = spark_engine.connect

    def recording(settings: Any) -> tuple[Any, bool]:
        session, started = original(settings)
        sessions.append(session)
        return session, started

    monkeypatch.setattr(spark_engine, "connect", recording)
    inputs = corpus_inputs(tmp_path)  # samples, generated files, a zip, binary, unreadable
    static = ("--embed", "--model", "minilm-static")
    local, remote = tmp_path / "local", tmp_path / "remote"
    assert run(local, inputs, *static) == 1  # the binary and the unreadable files fail
    monkeypatch.setenv("SPARK_REMOTE", connect_server)
    assert run(remote, inputs, *static, "--engine", "spark") == 1
    assert [type(s).__module__ for s in sessions] == ["pyspark.sql.connect.session"]
    expected = row_set(local)
    assert row_set(remote) == expected and len({r[1] for r in expected}) >= 16
    want, got = vectors(local), vectors(remote)
    assert set(got) == set(want)
    assert all(np.allclose(got[k], want[k], atol=1e-5) for k in want)
    assert failures(remote) == failures(local) and len(failures(local)) == 2
    found = manifest(remote)
    assert found["engine"] == "spark" and found["counts"]["chunks"] == len(expected)
    # pyspark's Connect flag is cleared, so a later local session here stays classic
    assert spark_engine.CONNECT_MODE not in os.environ

    # the re-run over Connect skips everything committed and adds nothing
    assert run(remote, inputs, *static, "--engine", "spark") == 1
    assert row_set(remote) == expected
    again = manifest(remote)["counts"]
    assert again["processed"] == 0 and again["skipped"] == len({r[:2] for r in expected})
