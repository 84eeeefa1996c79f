"""Cached calls into the core, shared by the pages: chunks, their report, the boundary
view's pages and the recommendation of the sidebar's document.

Each function is a thin ``st.cache_*`` wrapper of one core call, keyed by the document's
text hash (:attr:`Source.key`) and the configuration's JSON; nothing here draws but the
caches' own spinners. Documents, chunks and reports are immutable, so one shared copy
(``st.cache_resource``) is safe and saves copying megabytes of text on every rerun
(chunk metadata is a read-only mapping, which ``st.cache_data`` could not pickle
anyway). A cache that one page alone needs stays in that page.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import streamlit as st

from chunking import Chunk, Config, run
from chunking.analysis.recommend import Recommendation, recommend
from chunking.analysis.report import Report, make_report, model_max_tokens
from chunking.documents.io import Document
from chunking.viz.render import Page, paginate


def text_key(text: str) -> str:
    """sha1 of the text: the cache key of everything computed from it."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()


@dataclass(frozen=True)
class Source:
    """A document the pages work on, with the hash that keys every cache."""

    document: Document
    key: str
    origin: str  # "sample", "paste", "upload", or where a page found it ("corpus")

    @classmethod
    def of(cls, document: Document, origin: str) -> Source:
        return cls(document, text_key(document.text), origin)

    @classmethod
    def from_text(cls, text: str, name: str, origin: str) -> Source:
        """A plain-text document (pasted, or one of a page's own documents)."""
        return cls.of(Document(text=text, name=name, kind="text", encoding=None), origin)


# ------------------------------------------------------------------------- chunks


@st.cache_resource(show_spinner="Chunking…", max_entries=64)
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
@st.cache_data(show_spinner="Measuring chunks…", max_entries=32)
def _analysis(key: str, config_json: str, _source: Source) -> Report:
    config = Config.from_json(config_json)
    return make_report(_source.document, config, chunks(_source, config))


def analysis(source: Source, config: Config) -> Report:
    """The core's report (sizes in every unit, warnings, boundaries, pages) for
    ``config``; ``chunk-explorer stats`` shows the same."""
    return _analysis(source.key, config.to_json(), source)


@st.cache_resource(show_spinner=False, max_entries=32)
def _pages(key: str, config_json: str, _chunks: tuple[Chunk, ...]) -> list[Page]:
    return paginate(_chunks)


def boundary_pages(source: Source, config: Config) -> list[Page]:
    """The boundary view's pages of the chunks for ``config``."""
    return _pages(source.key, config.to_json(), chunks(source, config))


@st.cache_resource(show_spinner=False, max_entries=32)
def _recommendation(key: str, name: str, window: int, _text: str) -> Recommendation:
    return recommend(_text, name, window=window)


def recommendation(source: Source) -> Recommendation:
    """The recommended configuration for the document, sized for the bundled embedding
    model's window in its own word pieces."""
    window = model_max_tokens()
    return _recommendation(source.key, source.document.name, window, source.document.text)
