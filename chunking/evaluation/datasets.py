"""Evaluation data sets by folder: either layout, told apart by the files it holds.

Two layouts are read:

- **chroma-eval** (``questions_df.csv`` and ``corpora/``): questions with gold excerpts
  of one prose document each (see :mod:`chunking.evaluation.questions`). Retrieval
  among the chunks of the question's own document is the README's definition.
- **anthropic-code-eval** (``evaluation_set.jsonl`` and ``codebase_chunks.json``): the
  data behind the Anthropic cookbook's contextual-retrieval guide, source files of
  open-source projects already cut into chunks, and questions naming their *golden
  chunks* as ``[document uuid, chunk index]``. Its questions are asked against the
  whole code base, so retrieval runs over the chunks of every document.

A golden chunk's gold span is where its text sits in its document. The set gives only
the text, so each document's chunks are located **in order**: chunk ``i`` is searched
from the end of chunk ``i - 1`` on, so a snippet that occurs twice (a licence header
repeated further down, the same boilerplate in two methods) lands on the occurrence the
chunker cut, never on a bare first match. The located chunks are the set's own chunks
(:attr:`Dataset.chunks`), with exact offsets, for evaluating them as they are.

Every problem raises :class:`DatasetError` (a :class:`QuestionFileError`) naming the
file and what is wrong.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from ..model import Chunk, Progress
from .core import Settings, evaluate
from .questions import Question, QuestionFileError, Reference, load_chroma_eval, renumber
from .sweep import SweepResult, results_table
from .techniques import DENSE, Technique

if TYPE_CHECKING:
    from ..embedding.models import Embedder

Layout = Literal["chroma-eval", "anthropic-code-eval"]
CHROMA: Final = "chroma-eval"
CODE: Final = "anthropic-code-eval"
#: The files that tell each layout apart.
LAYOUT_FILES: Mapping[str, tuple[str, str]] = {
    CHROMA: ("questions_df.csv", "corpora"),
    CODE: ("evaluation_set.jsonl", "codebase_chunks.json"),
}
#: Where each set comes from; shown wherever its data or figures are.
ATTRIBUTION: Mapping[str, str] = {
    CHROMA: "Chroma's chunking evaluation (chroma-core/chunking_evaluation)",
    CODE: "Anthropic cookbook, skills/contextual-embeddings (MIT licence); the documents "
    "are source files of public open-source projects",
}


class DatasetError(QuestionFileError):
    """A data set folder that cannot be read; the message says which file and why."""


@dataclass(frozen=True, eq=False)
class Dataset:
    """Documents, questions with gold spans and, for a set that has them, its own chunks."""

    layout: Layout
    folder: Path
    documents: Mapping[str, str]
    questions: tuple[Question, ...]
    #: The set's own chunks per document, located in order (None: the set has none).
    chunks: Mapping[str, tuple[Chunk, ...]] | None = None
    #: Where retrieval looks: the question's own document, or every document.
    scope: Literal["document", "all"] = "document"
    #: Per document, the set's own name for it (a source path, a uuid), for display.
    titles: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.layout

    @property
    def attribution(self) -> str:
        return ATTRIBUTION[self.layout]

    def given_chunks(self) -> Mapping[str, tuple[Chunk, ...]]:
        """The set's own chunks; ``ValueError`` for a set that has none."""
        if self.chunks is None:
            raise DatasetError(
                f"{self.folder}: the {self.layout} set has no chunks of its own; "
                "evaluate it with a chunking configuration instead"
            )
        return self.chunks

    def about(self, corpus_ids: Sequence[str]) -> Dataset:
        """The same set with only the questions about ``corpus_ids`` (every document is
        kept: with scope ``all`` they are all searched)."""
        unknown = [i for i in corpus_ids if i not in self.documents]
        if unknown:
            raise DatasetError(
                f"{self.folder}: no document {unknown[0]!r} in the {self.layout} set"
            )
        kept = renumber([q for q in self.questions if q.corpus_id in set(corpus_ids)])
        if not kept:
            raise DatasetError(f"{self.folder}: no question is about {', '.join(corpus_ids)}")
        return Dataset(
            self.layout,
            self.folder,
            self.documents,
            tuple(kept),
            self.chunks,
            self.scope,
            self.titles,
        )


def detect_layout(folder: str | Path) -> Layout:
    """Which layout ``folder`` holds, by its files; ``DatasetError`` naming both otherwise."""
    path = Path(folder)
    if not path.is_dir():
        raise DatasetError(f"{path}: not a folder; --dataset takes a data set's folder")
    if (path / "questions_df.csv").is_file() and (path / "corpora").is_dir():
        return CHROMA
    if (path / "evaluation_set.jsonl").is_file() and (path / "codebase_chunks.json").is_file():
        return CODE
    expected = "; or ".join(" + ".join(files) for files in LAYOUT_FILES.values())
    raise DatasetError(f"{path}: not a known data set layout; expected {expected}")


#: Environment variables naming each set's folder.
DATASET_ENV: Mapping[str, str] = {
    CHROMA: "CHUNK_EXPLORER_CHROMA_EVAL",
    CODE: "CHUNK_EXPLORER_CODE_EVAL",
}


def find_dataset(layout: Layout) -> Path:
    """The folder of a bundled set: ``$CHUNK_EXPLORER_CHROMA_EVAL`` or
    ``$CHUNK_EXPLORER_CODE_EVAL`` when set, else ``../shared/datasets/<layout>`` or
    ``./shared/datasets/<layout>`` from the working directory (for the Evaluate page).
    ``DatasetError`` naming every place tried."""
    configured = os.environ.get(DATASET_ENV[layout], "").strip()
    places = (
        [Path(configured).expanduser()]
        if configured
        else [
            Path.cwd().parent / "shared" / "datasets" / layout,
            Path.cwd() / "shared" / "datasets" / layout,
        ]
    )
    for place in places:
        try:
            if detect_layout(place) == layout:
                return place
        except DatasetError:
            continue
    tried = ", ".join(str(p) for p in places)
    raise DatasetError(
        f"the {layout} data set was not found (tried {tried}); set {DATASET_ENV[layout]} "
        "to its folder"
    )


def load_dataset(folder: str | Path) -> Dataset:
    """The data set in ``folder``, whichever layout it holds."""
    path = Path(folder)
    if detect_layout(path) == CODE:
        return read_code_eval(path)
    documents, questions = load_chroma_eval(root=path)
    return Dataset(CHROMA, path, documents, tuple(questions))


# ------------------------------------------------------------------- the code set


def locate_in_order(document: str, pieces: Sequence[str], *, name: str = "document") -> list[int]:
    """Where each of ``pieces`` starts in ``document``, each searched from the end of the
    one before (the pieces follow each other, as a chunker cut them).

    ``DatasetError`` when a piece does not occur after the previous one.
    """
    starts: list[int] = []
    cursor = 0
    for number, piece in enumerate(pieces):
        if not piece:
            raise DatasetError(f"{name}: chunk {number} is empty")
        found = document.find(piece, cursor)
        if found < 0:
            where = "in the document" if document.find(piece) < 0 else "after the chunk before it"
            raise DatasetError(f"{name}: chunk {number} does not occur {where}")
        starts.append(found)
        cursor = found + len(piece)
    return starts


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise DatasetError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None


def _record(item: Any, keys: Sequence[str], where: str) -> Mapping[str, Any]:
    if not isinstance(item, Mapping) or any(k not in item for k in keys):
        raise DatasetError(f"{where}: expected an object with the keys {', '.join(keys)}")
    return item


@dataclass(frozen=True)
class _Codebase:
    documents: dict[str, str]
    chunks: dict[str, tuple[Chunk, ...]]
    #: document uuid -> document id
    ids: dict[str, str]


def _read_codebase(path: Path) -> _Codebase:
    data = _read_json(path)
    if not isinstance(data, list) or not data:
        raise DatasetError(f"{path}: expected a non-empty list of documents")
    documents: dict[str, str] = {}
    chunks: dict[str, tuple[Chunk, ...]] = {}
    ids: dict[str, str] = {}
    for number, item in enumerate(data, start=1):
        where = f"{path}, document {number}"
        doc = _record(item, ("doc_id", "original_uuid", "content", "chunks"), where)
        doc_id, text = str(doc["doc_id"]), doc["content"]
        if not isinstance(text, str) or not isinstance(doc["chunks"], list):
            raise DatasetError(f"{where}: content must be text and chunks a list")
        if doc_id in documents:
            raise DatasetError(f"{where}: document id {doc_id!r} appears twice")
        records = [_record(c, ("original_index", "content"), where) for c in doc["chunks"]]
        records.sort(key=lambda c: int(c["original_index"]))
        if [int(c["original_index"]) for c in records] != list(range(len(records))):
            raise DatasetError(f"{where}: chunk indices are not 0, 1, 2, ...")
        pieces = [str(c["content"]) for c in records]
        starts = locate_in_order(text, pieces, name=f"{path}, {doc_id}")
        chunks[doc_id] = tuple(
            Chunk(i, s, s + len(p), p, len(p), {"chunk_id": str(c.get("chunk_id", i))})
            for i, (s, p, c) in enumerate(zip(starts, pieces, records, strict=True))
        )
        documents[doc_id] = text
        ids[str(doc["original_uuid"])] = doc_id
    return _Codebase(documents, chunks, ids)


def _code_question(
    number: int, row: Mapping[str, Any], index: int, base: _Codebase, name: str
) -> Question:
    where = f"{name}, line {number}"
    row = _record(row, ("query", "golden_chunk_uuids"), where)
    query, golden = row["query"], row["golden_chunk_uuids"]
    if not isinstance(query, str) or not query.strip():
        raise DatasetError(f"{where}: the query is empty")
    if not isinstance(golden, list) or not golden:
        raise DatasetError(f"{where}: golden_chunk_uuids must be a non-empty list")
    pairs: list[tuple[str, int]] = []
    for pair in golden:
        if not (isinstance(pair, list) and len(pair) == 2 and str(pair[0]) in base.ids):
            raise DatasetError(f"{where}: golden chunk {pair!r} names no document of the set")
        pairs.append((base.ids[str(pair[0])], int(pair[1])))
    owners = list(dict.fromkeys(doc for doc, _ in pairs))
    if len(owners) > 1:
        raise DatasetError(
            f"{where}: golden chunks in {len(owners)} documents; a question's gold spans "
            "must lie in one document"
        )
    chunks = base.chunks[owners[0]]
    references = []
    for doc, chunk_index in dict.fromkeys(pairs):
        if not 0 <= chunk_index < len(chunks):
            raise DatasetError(f"{where}: {doc} has no chunk {chunk_index}")
        c = chunks[chunk_index]
        references.append(Reference(c.start, c.end, c.text))
    return Question(index, query, owners[0], tuple(sorted(references, key=lambda r: r.start)))


def _path(row: Mapping[str, Any], base: _Codebase) -> tuple[str, str] | None:
    """``(document id, repository/path)`` when the question's ``meta`` names its file."""
    meta, uuids = row.get("meta"), row.get("golden_doc_uuids")
    if not (isinstance(meta, Mapping) and isinstance(uuids, list) and len(uuids) == 1):
        return None
    doc = base.ids.get(str(uuids[0]))
    if doc is None or not meta.get("relative_path"):
        return None
    return doc, f"{meta.get('repo_name', '')}{meta['relative_path']}"


def read_code_eval(folder: str | Path) -> Dataset:
    """The anthropic-code-eval set: 90 source files, their 737 chunks and 248 questions.

    Document ids are the set's ``doc_id`` (``doc_1``, ...), titled with the file's
    repository and path where the questions name it; a question's references are its
    golden chunks' spans in their document, located in order (:func:`locate_in_order`).
    Retrieval scope is ``all``: every document's chunks.
    """
    path = Path(folder)
    base = _read_codebase(path / "codebase_chunks.json")
    questions_path = path / "evaluation_set.jsonl"
    try:
        lines = questions_path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise DatasetError(f"{questions_path}: not UTF-8 text") from None
    questions: list[Question] = []
    titles = {doc_id: uuid for uuid, doc_id in base.ids.items()}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"{questions_path}, line {number}: not valid JSON ({exc.msg})"
            ) from None
        questions.append(_code_question(number, row, len(questions), base, str(questions_path)))
        titled = _path(row, base)
        if titled is not None:
            titles[titled[0]] = titled[1]
    if not questions:
        raise DatasetError(f"{questions_path}: no questions found")
    return Dataset(CODE, path, base.documents, tuple(questions), base.chunks, "all", titles)


# ----------------------------------------------------------------- the given chunks


def evaluate_given(
    dataset: Dataset,
    embedder: Embedder | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
    technique: Technique = DENSE,
    llm: Any = None,
) -> SweepResult:
    """The set's own chunks evaluated as they are (one row, strategy ``given chunks``),
    with the set's scope unless ``settings`` says otherwise."""
    settings = settings or Settings(scope=dataset.scope)
    evaluation = evaluate(
        dataset.documents,
        dataset.questions,
        None,
        embedder,
        settings,
        progress,
        technique,
        llm,
        chunks=dataset.given_chunks(),
    )
    return SweepResult(
        table=results_table([evaluation]),
        evaluations=(evaluation,),
        skipped=(),
        texts_requested=evaluation.texts_requested,
        texts_embedded=evaluation.texts_embedded,
    )
