"""Cached calls into the core, shared by the pages: chunks, their report, the boundary
view's pages and the recommendation of the sidebar's document.

Each function is a thin cached wrapper (:func:`bounded`) of one core call, keyed by the document's
text hash (:attr:`Source.key`) and the configuration's JSON; nothing here draws but the
caches' own spinners. Every cache is bounded in entries and bytes (:func:`bounded`,
the table :data:`chunking.runtime.limits.CACHE_BOUNDS`). Documents and chunks are
immutable, so one shared copy is safe and saves copying megabytes of text on every rerun
(chunk metadata is a read-only mapping, which ``st.cache_data`` could not pickle
anyway). A cache that one page alone needs stays in that page.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

import streamlit as st

from chunking import Chunk, Config, run
from chunking.analysis.recommend import Recommendation, recommend
from chunking.analysis.report import Report, make_report, model_max_tokens
from chunking.documents.io import Document
from chunking.model import Progress
from chunking.runtime.lru import shared_cache
from chunking.viz.render import Page, paginate

P = ParamSpec("P")
R = TypeVar("R")


def bounded(
    name: str, spinner: str | None = None, *, copy: bool = False
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Like ``st.cache_resource`` (or, with ``copy``, ``st.cache_data``), but kept in the
    core's store ``name``, bounded in entries and bytes as
    :data:`chunking.runtime.limits.CACHE_BOUNDS` says, least recently used first.

    Arguments whose name starts with ``_`` are not part of the key, as with Streamlit.
    With ``copy`` the value is kept pickled and every call gets its own copy. A value is
    computed once however many sessions ask for it at the same moment; an exception is
    not kept. Nothing may be drawn inside the function but ``spinner`` and a progress
    bar the caller passes as an ``_``-argument (:func:`progress_bar`): a value found
    in the store draws neither.
    """

    def wrap(function: Callable[P, R]) -> Callable[P, R]:
        signature = inspect.signature(function)
        store = shared_cache(name)
        where = f"{function.__module__}.{function.__qualname__}"

        @functools.wraps(function)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            given = signature.bind(*args, **kwargs).arguments
            key = (where, *((k, v) for k, v in given.items() if not k.startswith("_")))

            def compute() -> Any:
                if spinner:
                    with st.spinner(spinner):
                        value = function(*args, **kwargs)
                else:
                    value = function(*args, **kwargs)
                return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL) if copy else value

            found = store.get_or_compute(key, compute)
            return pickle.loads(found) if copy else found  # noqa: S301 (our own bytes)

        return call

    return wrap


def text_key(text: str) -> str:
    """sha1 of the text: the cache key of everything computed from it."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()


def bytes_key(data: bytes) -> str:
    """sha1 of a file's bytes (an upload's content address)."""
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


def document_key(document: Document, data_key: str | None = None) -> str:
    """The content address of everything computed from ``document``: the sha1 of its
    whole text; for a document with pages (a PDF), also of its pages, its layout (reading
    order, furniture, every character's box) and, when known, its file's bytes
    (``data_key``), since reports, downloads and page images read those too. Never a
    name, never a prefix: two documents share a key only when all of that is equal."""
    text = text_key(document.text)
    if not document.pages and document.pdf is None:
        return text
    digest = hashlib.sha1(text.encode(), usedforsecurity=False)
    digest.update(repr(document.pages).encode())
    if document.pdf is not None:
        pdf = document.pdf
        digest.update(f"|{pdf.order}|{pdf.keep_furniture}|".encode())
        digest.update(memoryview(pdf.char_boxes).cast("B"))
    if data_key is not None:
        digest.update(f"|{data_key}".encode())
    return "doc:" + digest.hexdigest()


@dataclass(frozen=True)
class Source:
    """A document the pages work on, with the content hash that keys every cache
    (:func:`document_key`)."""

    document: Document
    key: str
    origin: str  # "sample", "paste", "upload", or where a page found it ("corpus")

    @classmethod
    def of(cls, document: Document, origin: str, data_key: str | None = None) -> Source:
        """``document`` keyed by its content (:func:`document_key`; ``data_key`` the
        :func:`bytes_key` of the file it was read from, when there is one)."""
        return cls(document, document_key(document, data_key), origin)

    @classmethod
    def from_text(cls, text: str, name: str, origin: str) -> Source:
        """A plain-text document (pasted, or one of a page's own documents)."""
        return cls.of(Document(text=text, name=name, kind="text", encoding=None), origin)


#: A document from this many characters on is measured with a progress bar (what is
#: being done, how far), not under a spinner alone; smaller ones take a second or two.
PROGRESS_MIN_CHARS = 2_000_000


@contextlib.contextmanager
def progress_bar(label: str) -> Iterator[Progress]:
    """A progress callback ``(done, total, what)`` drawing ``label: what`` and the share
    done as an ``st.progress`` bar, created at its first call (a cached value, computed
    by nobody, draws nothing) and removed when the block ends."""
    holder: list[Any] = []

    def show(done: int, total: int, what: str) -> None:
        if not holder:
            holder.append(st.empty())
        share = min(done / total, 1.0) if total else 1.0
        holder[0].progress(share, text=f"{label}: {what}" if what else label)

    try:
        yield show
    finally:
        if holder:
            holder[0].empty()


# ------------------------------------------------------------------------- chunks


@bounded("chunks", "Chunking…")
def _chunks(key: str, config_json: str, _text: str) -> tuple[Chunk, ...]:
    return tuple(run(_text, Config.from_json(config_json)))


def chunks(source: Source, config: Config) -> tuple[Chunk, ...]:
    """The chunks of the document for ``config``. Raises what the strategy raises."""
    return _chunks(source.key, config.to_json(), source.document.text)


def safe_chunks(source: Source, config: Config) -> tuple[Chunk, ...] | str:
    """Like :func:`chunks`, but a failure becomes a message to show."""
    try:
        return chunks(source, config)
    except ValueError as exc:
        return f"{config.spec.label} cannot cut this document: {exc}"
    except Exception as exc:  # a strategy bug must not show a traceback to the user
        return (
            f"{config.spec.label} failed on this document ({type(exc).__name__}: {exc}). "
            "Try another strategy or other parameters."
        )


# ---------------------------------------------------------------- what is measured


# The document's sentences are segmented once per process and shared with the sentence
# strategy (chunking.engine.spans.document_sentences); word pieces are counted for the
# chunks alone, not for the whole document (make_report).
@bounded("reports", "Measuring chunks…", copy=True)
def _analysis(
    key: str,
    config_json: str,
    reader: tuple[str, int] | None,
    _source: Source,
    _progress: Progress | None = None,
) -> Report:
    config = Config.from_json(config_json)
    cut = chunks(_source, config)
    return make_report(_source.document, config, cut, reader=reader, progress=_progress)


#: Session key: the model each set of strategy controls resolved its unit ``model`` for
#: (key prefix -> the configuration's JSON, the model's name, its window in that unit),
#: set by :func:`pages.config_controls.follow_chosen_model`.
READERS_KEY = "_ce_readers"


def analysis(source: Source, config: Config) -> Report:
    """The core's report (sizes in every unit, warnings, boundaries, pages) for
    ``config``; ``chunk-explorer stats`` shows the same. Chunks too long for the model
    are counted for the model its unit ``model`` was resolved for (:data:`READERS_KEY`).
    A document of :data:`PROGRESS_MIN_CHARS` or more is measured with a progress bar."""
    as_json = config.to_json()
    readers = st.session_state.get(READERS_KEY, {}).values()
    reader = next(((name, window) for j, name, window in readers if j == as_json), None)
    if len(source.document.text) < PROGRESS_MIN_CHARS:
        return _analysis(source.key, as_json, reader, source)
    with progress_bar("Measuring chunks") as show:
        return _analysis(source.key, as_json, reader, source, show)


@bounded("boundary_pages")
def _pages(key: str, config_json: str, _chunks: tuple[Chunk, ...]) -> list[Page]:
    return paginate(_chunks)


def boundary_pages(source: Source, config: Config) -> list[Page]:
    """The boundary view's pages of the chunks for ``config``."""
    return _pages(source.key, config.to_json(), chunks(source, config))


@bounded("recommendations")
def _recommendation(key: str, name: str, window: int, _text: str) -> Recommendation:
    return recommend(_text, name, window=window)


def recommendation(source: Source) -> Recommendation:
    """The recommended configuration for the document, sized for the bundled embedding
    model's window in its own word pieces."""
    window = model_max_tokens()
    return _recommendation(source.key, source.document.name, window, source.document.text)
