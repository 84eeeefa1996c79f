"""A small, real OpenAI-compatible embeddings server for the tests, in its own process,
serving the bundled all-MiniLM-L6-v2.

``POST /v1/embeddings`` answers in the OpenAI format (``data[].embedding``, ``index``,
``usage``) for the models ``all-MiniLM-L6-v2`` and ``sentence-transformers/all-MiniLM-L6-v2``;
any other model is a 404 ``model_not_found``, as OpenAI and vLLM answer. Started with
``--key KEY``, it wants ``Authorization: Bearer KEY`` and answers a wrong key with a 401
that repeats the key it was given (as OpenAI's message does), so that tests see the
client keep it out of its errors.

Two more routes steer it: ``GET /_stats`` counts the embedding requests (and texts) it
got, and ``POST /_faults`` queues faults for the next requests, one each:
``{"faults": [{"kind": "429", "retry_after": "1"}, {"kind": "500"},
{"kind": "timeout", "seconds": 2}, {"kind": "malformed"}, {"kind": "garbage"},
{"kind": "short"}, {"kind": "dimension"}, {"kind": "401"}, {"kind": "403"}]}``.
``POST /_reset`` clears the counts and the queue.

Run ``python tests/embedding_server.py [--key KEY]``: it prints its base URL
(``http://127.0.0.1:PORT/v1``) on one line once the model is loaded. From a test, use
:func:`start` (a context manager yielding a :class:`Server`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODELS = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
ROOT = Path(__file__).resolve().parent.parent


class _State:
    def __init__(self, key: str | None) -> None:
        self.key = key
        self.lock = threading.Lock()
        self.faults: deque[dict[str, Any]] = deque()
        self.requests = 0
        self.inputs = 0
        self.arrivals: list[float] = []
        self.model: Any = None
        self.model_lock = threading.Lock()

    def encode(self, texts: list[str]) -> list[list[float]]:
        with self.model_lock:
            vectors = self.model.encode(
                texts, batch_size=max(1, len(texts)), normalize_embeddings=True
            )
        return [[float(x) for x in row] for row in vectors]


def _handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # timed out
                self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/_stats":
                with state.lock:
                    self._send(
                        200,
                        {
                            "requests": state.requests,
                            "inputs": state.inputs,
                            "arrivals": state.arrivals,
                            "faults_left": len(state.faults),
                        },
                    )
                return
            self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            raw = self.rfile.read(length)
            if self.path == "/_faults":
                with state.lock:
                    state.faults.extend(json.loads(raw)["faults"])
                self._send(200, {"queued": len(state.faults)})
                return
            if self.path == "/_reset":
                with state.lock:
                    state.faults.clear()
                    state.requests = state.inputs = 0
                    state.arrivals.clear()
                self._send(200, {})
                return
            if self.path.rstrip("/") != "/v1/embeddings":
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            body = json.loads(raw)
            texts = body.get("input")
            texts = [texts] if isinstance(texts, str) else list(texts or [])
            with state.lock:
                state.requests += 1
                state.inputs += len(texts)
                state.arrivals.append(time.monotonic())
                fault = state.faults.popleft() if state.faults else {}
            kind = str(fault.get("kind", ""))
            given = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
            if state.key is not None and given != state.key:
                message = f"Incorrect API key provided: {given or '(none)'}"
                self._send(401, {"error": {"message": message, "type": "invalid_request_error"}})
                return
            if kind in ("401", "403"):
                message = f"Incorrect API key provided: {given or '(none)'}"
                self._send(int(kind), {"error": {"message": message}})
                return
            if kind == "429":
                retry = str(fault.get("retry_after", "1"))
                self._send(429, {"error": {"message": "rate limited"}}, {"Retry-After": retry})
                return
            if kind == "500":
                self._send(500, {"error": {"message": "internal error"}})
                return
            if kind == "timeout":
                time.sleep(float(fault.get("seconds", 2)))
            model = str(body.get("model", ""))
            if model not in MODELS:
                message = f"The model `{model}` does not exist"
                self._send(404, {"error": {"message": message, "code": "model_not_found"}})
                return
            if kind == "malformed":
                self._send(200, {"object": "list", "data": "nothing"})
                return
            if kind == "garbage":
                self._send(200, b"<html>oops</html>")
                return
            vectors = state.encode(texts)
            if kind == "short":
                vectors = vectors[:-1]
            if kind == "dimension":
                vectors = [v[:-1] for v in vectors]
            data = [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ]
            tokens = sum(len(t.split()) for t in texts)
            self._send(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": model,
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                },
            )

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--key")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from chunking.embedding.base import bundled_model_path, load_sentence_transformer

    state = _State(args.key)
    state.model = load_sentence_transformer(MODELS[0], str(bundled_model_path()))
    server = ThreadingHTTPServer(("127.0.0.1", args.port), _handler(state))
    print(f"http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()


# ------------------------------------------------------------------- for the tests


@dataclass
class Server:
    """A running server: its base URL and its steering routes."""

    url: str

    @property
    def root(self) -> str:
        return self.url.removesuffix("/v1")

    def _call(self, path: str, payload: Any = None) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(
            f"{self.root}{path}", data=data, method="POST" if data else "GET"
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    def stats(self) -> dict[str, Any]:
        return self._call("/_stats")

    def requests(self) -> int:
        return int(self.stats()["requests"])

    def faults(self, *faults: dict[str, Any]) -> None:
        self._call("/_faults", {"faults": list(faults)})

    def reset(self) -> None:
        self._call("/_reset", {})


@contextmanager
def start(key: str | None = None) -> Iterator[Server]:
    """Start the server in a process of its own; yield it once the model is loaded."""
    command = [sys.executable, str(Path(__file__).resolve())]
    if key is not None:
        command += ["--key", key]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line.startswith("http://"):
            raise RuntimeError(f"the embedding server did not start (exit {process.poll()})")
        yield Server(line)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


if __name__ == "__main__":
    main()
