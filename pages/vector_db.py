"""The "Write to a vector database" box (:func:`vector_database_box`): the chunks of
:class:`SinkDocument` s embedded and written, then searched back.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from chunking import Chunk, Config
from chunking.embedding.models import EmbeddingError
from chunking.output.places import DATA_DIR_ENV, data_dir, inside_data_dir
from chunking.output.preview import preview
from pages.model_choice import embed_with_progress, load_embedder, model_select
from pages.state import PERSIST

if TYPE_CHECKING:
    from chunking.sinks import Target


# ----------------------------------------------------------- writing to a vector database


@dataclass(frozen=True)
class SinkDocument:
    """One document to write: its content hash (:func:`chunking.documents.corpus.doc_id`
    of the bytes it was read from, as ``chunk-explorer run`` hashes it), its path, its
    chunks and their PDF pages (:func:`chunking.output.export.chunk_pages`)."""

    doc_id: str
    path: str
    chunks: Sequence[Chunk]
    pages: Sequence[Sequence[int] | None] | None = None

    def records(self) -> list[dict[str, Any]]:
        """The chunks as :func:`chunking.sinks.write_records` takes them."""
        from chunking.output.export import chunk_records

        extra = {"doc_id": self.doc_id, "path": self.path}
        return [{**row, **extra} for row in chunk_records(self.chunks, self.pages)]


#: The folder name the box starts with (below :func:`chunking.output.places.data_dir`).
DEFAULT_FOLDER = "vectors"

#: Session key (after the page's prefix) of the last write: target, collection, counts.
_SINK_WRITTEN = "_sink_written"


@functools.cache  # installed packages do not change while the server runs
def sink_kinds() -> tuple[list[str], list[str]]:
    """The database kinds whose libraries are installed, and those whose are not."""
    from importlib.util import find_spec

    from chunking.sinks.kinds import SINKS

    installed = [k for k, s in SINKS.items() if all(find_spec(m) for m in s.modules)]
    return installed, [k for k in SINKS if k not in installed]


def vector_database_box(
    prefix: str, config: Config, documents: Callable[[], Sequence[SinkDocument]], chunks: int
) -> None:
    """The "Write to a vector database" box: the kind, its folder, the collection, the model and
    the button; then the count written and how to search it back (the command line and
    a search box). ``documents()`` is called on a click only; ``chunks`` is how many it
    will give. Keys are ``prefix`` + ``.sink_*``."""
    from chunking.sinks import INSTALL_HINT, SinkError, Target, collection_name
    from chunking.sinks.kinds import SINKS, check_folder

    installed, missing = sink_kinds()
    if not installed:
        st.info(f"Writing to a vector database needs LanceDB, Chroma or Qdrant: {INSTALL_HINT}")
        return
    left, middle, right = st.columns(3)
    kind = str(
        left.selectbox(
            "Database",
            installed,
            format_func=lambda k: f"{SINKS[k].title} ({k})",
            persist_state=PERSIST,
            key=f"{prefix}.sink_kind",
            help="Each runs in this process on a folder, without a server.",
        )
    )
    root = data_dir()
    st.session_state.setdefault(f"{prefix}.sink_path", DEFAULT_FOLDER)
    folder = middle.text_input(
        f"Folder (below {root})",
        persist_state=PERSIST,
        key=f"{prefix}.sink_path",
        help=f"The name of a new or empty folder, or of one this kind of database wrote, "
        f"below the app's data folder {root} (set by ${DATA_DIR_ENV}): absolute paths and "
        "'..' are refused.",
    ).strip()
    default = collection_name(config.label())
    name = right.text_input(
        "Collection",
        placeholder=default,
        persist_state=PERSIST,
        key=f"{prefix}.sink_collection",
        help="Empty: named after the configuration. Writing the same chunks again replaces "
        "them: every record's id is its document's content hash and the chunk's index.",
    ).strip()
    collection = name or default
    model_key = f"{prefix}.sink_model"
    model = model_select(model_key, "Embedding model")
    st.caption(
        "minilm-static embeds a large corpus in seconds (lower quality); a collection "
        "keeps the model it was written with, and a search embeds its question with it."
        + (f" Not installed: {', '.join(missing)} ({INSTALL_HINT})." if missing else "")
    )
    if not folder:
        st.info(f"Name a folder to write to: it is kept below {root}.")
        return
    try:
        target = Target.parse(f"{kind}:{inside_data_dir(folder, root)}")
    except (SinkError, ValueError) as exc:
        st.error(str(exc))
        return
    notice = st.empty()  # filled after the button: a write just completed clears it
    if st.button(
        f"Write {chunks:,} chunks to {target}",
        key=f"{prefix}.sink_write",
        icon=":material/database:",
        disabled=not chunks,
    ):
        try:
            check_folder(target, must_exist=False)
        except SinkError as exc:
            st.error(str(exc))
            return
        _write_to_sink(prefix, target, collection, config, model, model_key, documents())
    _unfinished_notice(notice, target, collection)
    written = st.session_state.get(prefix + _SINK_WRITTEN)
    if written is not None and written[:2] == (target.key, collection):
        st.success(
            f"Wrote {written[2]:,} chunks into {target}, collection {collection}: it holds "
            f"{written[3]:,} records.",
            icon=":material/check_circle:",
        )
    _search_box(prefix, target, collection)


def _unfinished_notice(notice: Any, target: Target, collection: str) -> None:
    """Say when the collection (or another in the folder) holds a write that did not
    complete: the server restarted mid-write, or the write stopped with an error."""
    from chunking.sinks.journal import unfinished, unfinished_in

    where = f"{target.kind}:{target.path}"
    mine = unfinished(target.path, collection)
    others = [u.collection for u in unfinished_in(target.path) if u.collection != collection]
    lines = [mine.message(where)] if mine is not None else []
    if others:
        lines.append(
            f"{where} also holds incomplete collections: {', '.join(others)} (write them "
            "again with their configuration to complete them)."
        )
    if not lines:
        return
    if mine is not None and mine.running:
        notice.info("\n\n".join(lines), icon=":material/hourglass_top:")
    else:
        notice.warning("\n\n".join(lines), icon=":material/warning:")


def _write_to_sink(
    prefix: str,
    target: Target,
    collection: str,
    config: Config,
    model: str,
    model_key: str,
    documents: Sequence[SinkDocument],
) -> None:
    """Embed every chunk's embedding text and write the records, with progress bars;
    a refusal is one ``st.error`` line."""
    from chunking.sinks import SinkError, write_records

    records = [row for doc in documents for row in doc.records()]
    texts = [chunk.embedding_text for doc in documents for chunk in doc.chunks]
    if not records:
        st.error("There are no chunks to write.")
        return
    st.caption(f"Writing {len(records):,} chunks to {target}: {write_wait(target, model, texts)}.")
    embedder = load_embedder(model, model_key=model_key)
    if embedder is None:
        return
    try:
        vectors = embed_with_progress(embedder, texts, f"Embedding with {model}")
    except EmbeddingError as exc:  # nothing is written: the write starts after embedding
        st.error(f"The chunks could not be embedded with {model}, nothing was written: {exc}")
        return
    holder = st.empty()

    def update(done: int, total: int, what: str) -> None:
        holder.progress(done / max(total, 1), text=f"Writing {done:,} of {total:,} records")

    try:
        count = write_records(
            target,
            records,
            vectors,
            config=config,
            model=model,
            collection=collection,
            progress=update,
        )
    except SinkError as exc:
        st.error(str(exc))
        return
    except OSError as exc:
        st.error(f"{target}: {exc.strerror or exc}")
        return
    finally:
        holder.empty()
    st.session_state[prefix + _SINK_WRITTEN] = (target.key, collection, len(records), count)


def write_wait(target: Target, model: str, texts: Sequence[str]) -> str:
    """The whole wait of a write, as the core estimates it: loading the model, embedding
    the texts not cached yet, and the database's own write."""
    from dataclasses import replace

    from chunking.embedding.models import estimate_wait, estimate_write_seconds
    from chunking.sinks.kinds import SINKS

    wait = estimate_wait(model, texts, f"{len(texts):,} chunks", disk_cache=True)
    seconds = estimate_write_seconds(len(texts), SINKS[target.kind].modules[0])
    return replace(wait, then="writing them", then_seconds=seconds).describe()


def _search_box(prefix: str, target: Target, collection: str) -> None:
    """The command line that searches the collection, and a search box doing the same."""
    import shlex

    from chunking.sinks import SinkError, search

    where = f"{target.kind}:{target.path.resolve()}"
    left, right = st.columns([5, 1])
    question = left.text_input(
        "Search it back",
        placeholder="A question about the documents",
        persist_state=PERSIST,
        key=f"{prefix}.sink_question",
    ).strip()
    k = int(right.number_input("Chunks", 1, 50, 5, persist_state=PERSIST, key=f"{prefix}.sink_k"))
    words = ["chunk-explorer", "search", where, question or "question", "-k", str(k)]
    st.code(shlex.join([*words, "--collection", collection]), language="bash")
    if not st.button("Search", key=f"{prefix}.sink_search", disabled=not question):
        return
    try:
        found = search(target, question, k=k, collection=collection)
    except (SinkError, OSError) as exc:
        st.error(str(exc))
        return
    except EmbeddingError as exc:
        st.error(f"The collection's embedding model could not be loaded: {exc}")
        return
    rows = [
        {
            "score": round(hit.score, 3),
            "path": hit.path,
            "chunk": hit.index,
            "start": hit.start,
            "end": hit.end,
            "text": preview(hit.text, 200),
        }
        for hit in found.hits
    ]
    st.caption(f"{len(rows):,} nearest chunks, the question embedded with {found.model}.")
    st.dataframe(pd.DataFrame(rows), hide_index=True, key=f"{prefix}.sink_hits")
