"""What every library engine shares: lazy imports with a one-line message, library errors
as ``ValueError``, units, and the parameters that mean the same thing everywhere."""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from types import ModuleType
from typing import Any

from ..params import Check, Param, Splitter, Strategy
from ..params import model_param as shared_model_param
from ..units import DEFAULT_MODEL

#: What to install for every engine at once.
EXTRA = "pip install 'chunk-explorer[engines]'"


def require(module: str, package: str, strategy: str) -> ModuleType:
    """Import ``module`` (a library) or raise a one-line ``ValueError`` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ValueError(
            f"strategy {strategy!r} needs the {package} package, which is not installed; "
            f"install the engines extra: {EXTRA}"
        ) from None


_PRINTS_LOCK = threading.Lock()
_printing_libraries = 0
_stdout: Any = None


@contextlib.contextmanager
def prints_to_stderr() -> Iterator[None]:
    """While any library runs, ``print`` goes to stderr, so that a library's chatter
    never mixes with a command's output on stdout (LlamaIndex prints a warning for
    small chunk sizes). Counted across threads: stdout comes back when the last
    library call ends, whatever order calls end in."""
    global _printing_libraries, _stdout
    with _PRINTS_LOCK:
        if _printing_libraries == 0:
            _stdout = sys.stdout
            sys.stdout = sys.stderr
        _printing_libraries += 1
    try:
        yield
    finally:
        with _PRINTS_LOCK:
            _printing_libraries -= 1
            if _printing_libraries == 0:
                sys.stdout = _stdout
                _stdout = None


@contextlib.contextmanager
def library_errors(strategy: str, library: str) -> Iterator[None]:
    """Turn whatever a library raises into a one-line ``ValueError`` naming it; what
    it prints goes to stderr (:func:`prints_to_stderr`)."""
    try:
        with prints_to_stderr():
            yield
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"{strategy}: {library} failed on this document: {first}") from exc


def count_tokens() -> Callable[[str], int]:
    """cl100k_base token counts (offline), special-token text counted as ordinary text."""
    from ..units import get_encoding

    encode = get_encoding().encode_ordinary
    return lambda text: len(encode(text))


def encoding_name() -> str:
    """The name tiktoken knows our offline cl100k_base by (for libraries that take a
    name and call ``tiktoken.get_encoding`` themselves)."""
    from ..units import get_encoding

    return str(get_encoding().name)


def unit_choice(choices: tuple[str, ...], default: str, counted: str) -> Param:
    """A ``unit`` parameter: what the library's size parameters count here."""
    names = {"chars": "characters", "words": "words", "tokens": "cl100k_base tokens"}
    listed = ", ".join(f"{c} ({names[c]})" for c in choices)
    return Param(
        "unit",
        str,
        default,
        f"What {counted} counts: {listed}."
        if len(choices) > 1
        else f"{counted} counts {names[default]} here (the only unit this engine offers).",
        choices=choices,
    )


def model_param() -> Param:
    return shared_model_param(
        f"Our embedding model, handed to the library: {DEFAULT_MODEL} (bundled, offline), "
        "a named model, a local path to a sentence-transformers model, or 'hash' (a fast "
        "fake for tests)."
    )


def size_param(name: str, default: int, help: str, minimum: int = 1) -> Param:
    return Param(name, int, default, help, minimum=minimum, maximum=1_000_000)


def overlap_param(name: str, default: int, help: str) -> Param:
    return Param(name, int, default, help, minimum=0, maximum=1_000_000)


def chunk_size_param(default: int, unit_help: str, minimum: int = 1) -> Param:
    """``chunk_size``, the name most libraries give their size limit."""
    return size_param("chunk_size", default, unit_help, minimum)


def chunk_overlap_param(default: int, help: str = "Tokens shared by consecutive chunks.") -> Param:
    """``chunk_overlap``, the name most libraries give what consecutive chunks share."""
    return overlap_param("chunk_overlap", default, help)


def declare(
    library: str,
    name: str,
    runs: str,
    description: str,
    params: tuple[Param, ...],
    *,
    split: Splitter,
    checks: tuple[Check, ...] = (),
    limit_param: str | None = "chunk_size",
) -> Strategy:
    """A library's strategy, labelled ``"<library>: <what it runs>"``; its chunks are
    bounded by ``chunk_size`` unless ``limit_param`` says otherwise."""
    return Strategy(
        name,
        label=f"{library}: {runs}",
        description=description,
        params=params,
        split=split,
        checks=checks,
        limit_param=limit_param,
    )


def overlap_not_above(
    size: str, overlap: str, strict: bool = False
) -> Callable[[Mapping[str, Any]], None]:
    """The library's own rule on overlap, checked when the configuration is made."""

    def check(p: Mapping[str, Any]) -> None:
        if p[overlap] > p[size] or (strict and p[overlap] == p[size]):
            word = "smaller than" if strict else "at most"
            raise ValueError(
                f"{overlap} ({p[overlap]}) must be {word} {size} ({p[size]}); "
                f"lower {overlap} or raise {size}"
            )

    return check


def embedder(p: Mapping[str, Any]) -> Any:
    """Our embedder for the configured model (loads it once per process)."""
    from ..embedding.models import get_embedder

    return get_embedder(p["model"])


class ListVectors:
    """Our embedder for the configured model, with vectors as lists of floats: what
    LangChain's ``Embeddings`` and LlamaIndex's ``BaseEmbedding`` hand back."""

    def __init__(self, p: Mapping[str, Any]) -> None:
        self.model = embedder(p)

    def many(self, texts: list[str]) -> list[list[float]]:
        return self.model.embed(texts).tolist()

    def one(self, text: str) -> list[float]:
        return self.model.embed([text])[0].tolist()
