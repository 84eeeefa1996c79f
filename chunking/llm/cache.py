"""Language-model answers kept on disk, so that no prompt is paid for twice.

An answer is keyed by the SHA-1 of (model name, system text, prompt): the prompt holds
the text it is about, so a changed chunk or document asks again while an unchanged one
is read back. Files are small JSON objects (never pickles) written atomically, under
``~/.cache/chunk-explorer/llm`` (next to the embedding cache) unless told otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def default_llm_cache_dir() -> Path:
    """``~/.cache/chunk-explorer/llm`` (``$XDG_CACHE_HOME`` is honoured)."""
    from ..embedding.cache import default_cache_dir  # not at import: the core stays light

    return default_cache_dir().parent / "llm"


def answer_key(model: str, system: str, prompt: str) -> str:
    """The SHA-1 of the model, system text and prompt."""
    digest = hashlib.sha1(usedforsecurity=False)
    for part in (model, system, prompt):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class Answer:
    """A model's answer with what it cost (tokens as the model counted them)."""

    text: str
    input_tokens: int
    output_tokens: int
    seconds: float
    cached: bool = False


class AnswerCache:
    """Answers on disk under ``directory`` (default :func:`default_llm_cache_dir`)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_llm_cache_dir()

    def _path(self, key: str) -> Path:
        return self.directory / "answers" / key[:2] / f"{key}.json"

    def get(self, model: str, system: str, prompt: str) -> Answer | None:
        try:
            data = json.loads(self._path(answer_key(model, system, prompt)).read_text("utf-8"))
            return Answer(
                str(data["text"]),
                int(data["input_tokens"]),
                int(data["output_tokens"]),
                float(data["seconds"]),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing or damaged: ask the model again

    def put(self, model: str, system: str, prompt: str, answer: Answer) -> None:
        record = {
            "model": model,
            "text": answer.text,
            "input_tokens": answer.input_tokens,
            "output_tokens": answer.output_tokens,
            "seconds": answer.seconds,
        }
        write_json(self._path(answer_key(model, system, prompt)), record)


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON atomically; a cache that cannot be written only costs time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False)
        os.replace(tmp, path)
    except OSError:
        pass
