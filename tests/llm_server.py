"""A small, real OpenAI-compatible HTTP server for the tests, serving the local model.

``POST /v1/chat/completions`` answers with SmolLM2 (``chunking.llm.client.LocalLLM``) in
the OpenAI response format, so the real ``openai`` client talks to it as to Ollama or
vLLM. Two model names misbehave on purpose, to test the error paths: ``slow`` answers
after :data:`SLOW_SECONDS` (a timeout), ``malformed`` answers without choices; and
``quoting`` answers every prompt well, without the model: a question and, copied word
for word, the first sentence of the prompt's passage (so that a test of the path from
the endpoint to a question file does not depend on what the weak local model quotes).

Start it with :func:`serve` (a context manager yielding the base URL, ``.../v1``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from chunking.llm.client import LocalLLM, Request, load_local_model

SLOW = "slow"
MALFORMED = "malformed"
QUOTING = "quoting"
SLOW_SECONDS = 3.0


def _request(body: dict[str, Any]) -> Request:
    messages = body.get("messages") or []
    system = "\n".join(m["content"] for m in messages if m.get("role") == "system")
    prompt = "\n".join(m["content"] for m in messages if m.get("role") == "user")
    stop = body.get("stop") or ()
    stop = (stop,) if isinstance(stop, str) else tuple(stop)
    return Request(prompt, system, max_tokens=int(body.get("max_tokens") or 64), stop=stop)


def _completion(model: str, text: str, read: int, written: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": read,
            "completion_tokens": written,
            "total_tokens": read + written,
        },
    }


def _quoting(prompt: str) -> str:
    """A question and the first sentence of the prompt's ``<passage>`` (or its first
    line), verbatim."""
    _, tagged, rest = prompt.rpartition("<passage>\n")
    passage = rest.partition("\n</passage>")[0] if tagged else prompt
    lines = [line for line in passage.splitlines() if len(line.split()) >= 3]
    sentence = (lines or [passage])[0].split(". ")[0].strip()
    return f"Question: What does the passage say about this?\nExcerpt: {sentence}"


class _Handler(BaseHTTPRequestHandler):
    local = LocalLLM()

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        model = str(body.get("model", ""))
        if model == MALFORMED:
            self._send(200, {"id": "x", "object": "chat.completion", "choices": []})
            return
        if model == QUOTING:
            text = _quoting(_request(body).prompt)
            self._send(200, _completion(model, text, len(text.split()), len(text.split())))
            return
        if model == SLOW:
            time.sleep(SLOW_SECONDS)
        answer = self.local.complete(_request(body))
        self._send(200, _completion(model, answer.text, answer.input_tokens, answer.output_tokens))


@contextmanager
def serve() -> Iterator[str]:
    """Run the server on a free local port in a thread; yields its ``/v1`` base URL.
    The model is loaded first, so that no request waits for it (and times out)."""
    load_local_model()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
