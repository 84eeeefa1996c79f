"""Question sets with gold reference spans: reading, checking, and the bundled set.

The format is chroma-eval's (see its README): one row per question with the columns
``question``, ``references`` and ``corpus_id``. ``references`` is a JSON list of
``{"content", "start_index", "end_index"}`` objects: Python character offsets into the
document named by ``corpus_id``, end exclusive, with ``document[start:end] == content``.

Files are CSV (``references`` holds the JSON text) or JSON Lines (one object per line;
``references`` may be the list itself or its JSON text). Every problem raises
:class:`QuestionFileError` naming the file and the row.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .spans import SpanArray, as_spans

REQUIRED_COLUMNS = ("question", "references", "corpus_id")
REFERENCE_KEYS = ("content", "start_index", "end_index")
CORPUS_SUFFIXES = (".md", ".txt")
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
#: Environment variable that points at a chroma-eval folder.
CHROMA_EVAL_ENV = "CHUNK_EXPLORER_CHROMA_EVAL"
#: Where the chroma-eval set is looked for, relative to the working directory, when
#: neither the caller nor the environment says (a checkout next to ``shared/``, or its
#: parent). Never relative to the installed package: site-packages has no data set.
CHROMA_EVAL_PLACES = (
    Path("..") / "shared" / "datasets" / "chroma-eval",
    Path("shared") / "datasets" / "chroma-eval",
)


class QuestionFileError(ValueError):
    """A question file (or its documents) cannot be used; the message says where and why."""

    def __init__(self, message: str, *, row: int | None = None) -> None:
        super().__init__(message)
        self.row = row


@dataclass(frozen=True)
class Reference:
    """One gold span: ``document[start:end] == content``."""

    start: int
    end: int
    content: str


@dataclass(frozen=True)
class Question:
    """A question, the document it is about and its gold reference spans."""

    index: int
    text: str
    corpus_id: str
    references: tuple[Reference, ...]

    @property
    def spans(self) -> SpanArray:
        return as_spans([(r.start, r.end) for r in self.references])


# --------------------------------------------------------------------- reading rows


def _csv_rows(text: str, name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text))
    columns = reader.fieldnames or []
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        found = ", ".join(columns) or "none"
        raise QuestionFileError(
            f"{name}: missing column(s) {', '.join(missing)}; a question file needs the "
            f"columns {', '.join(REQUIRED_COLUMNS)} (found: {found})"
        )
    yield from enumerate(reader, start=1)


def _jsonl_rows(text: str, name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise QuestionFileError(
                f"{name}, line {number}: not valid JSON ({exc.msg}); write one JSON "
                "object per line",
                row=number,
            ) from None
        if not isinstance(row, dict):
            raise QuestionFileError(
                f"{name}, line {number}: expected a JSON object with the keys "
                f"{', '.join(REQUIRED_COLUMNS)}",
                row=number,
            )
        yield number, row


def _is_jsonl(name: str, text: str) -> bool:
    if name.lower().endswith(JSONL_SUFFIXES):
        return True
    if name.lower().endswith(".csv"):
        return False
    return text.lstrip().startswith("{")


# ------------------------------------------------------------------------ checking


class _RowChecker:
    """Turns raw rows into :class:`Question` objects, with one error per problem."""

    def __init__(
        self, name: str, documents: Mapping[str, str], document_id: str | None, unit: str
    ) -> None:
        self.name = name
        self.documents = documents
        self.document_id = document_id
        self.unit = unit  # "row" (CSV) or "line" (JSONL)

    def fail(self, number: int, message: str) -> QuestionFileError:
        return QuestionFileError(f"{self.name}, {self.unit} {number}: {message}", row=number)

    def question(self, number: int, index: int, row: Mapping[str, Any]) -> Question:
        missing = [c for c in REQUIRED_COLUMNS if c not in row]
        if self.document_id is not None and "corpus_id" in missing:
            missing.remove("corpus_id")
        if missing:
            raise self.fail(number, f"missing {', '.join(missing)}")
        text = row["question"]
        if not isinstance(text, str) or not text.strip():
            raise self.fail(number, "the question is empty")
        corpus_id = self._corpus_id(number, row.get("corpus_id"))
        refs = self._references(number, row["references"], corpus_id)
        return Question(index, text, corpus_id, refs)

    def _corpus_id(self, number: int, value: Any) -> str:
        if self.document_id is not None:
            return self.document_id
        corpus_id = str(value).strip() if value is not None else ""
        if corpus_id not in self.documents:
            known = ", ".join(sorted(self.documents)) or "none"
            raise self.fail(
                number,
                f"unknown document id {corpus_id!r}; the documents are: {known} "
                "(a corpus folder holds <id>.md or <id>.txt files)",
            )
        return corpus_id

    def _references(self, number: int, value: Any, corpus_id: str) -> tuple[Reference, ...]:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise self.fail(number, f"references is not valid JSON ({exc.msg})") from None
        if not isinstance(value, list) or not value:
            raise self.fail(
                number,
                'references must be a non-empty JSON list of {"content", "start_index", '
                '"end_index"} objects',
            )
        document = self.documents[corpus_id]
        return tuple(
            self._reference(number, i, item, corpus_id, document)
            for i, item in enumerate(value, start=1)
        )

    def _reference(
        self, number: int, i: int, item: Any, corpus_id: str, document: str
    ) -> Reference:
        where = f"reference {i}"
        if not isinstance(item, dict) or any(k not in item for k in REFERENCE_KEYS):
            raise self.fail(number, f"{where} needs the keys {', '.join(REFERENCE_KEYS)}")
        start, end, content = item["start_index"], item["end_index"], item["content"]
        if not all(_is_int(v) for v in (start, end)) or not isinstance(content, str):
            raise self.fail(
                number, f"{where}: start_index and end_index must be integers, content a string"
            )
        start, end = int(start), int(end)
        if not 0 <= start < end <= len(document):
            raise self.fail(
                number,
                f"{where} [{start}, {end}) is outside document {corpus_id!r} "
                f"({len(document):,} characters); offsets must satisfy "
                "0 <= start_index < end_index <= length",
            )
        if document[start:end] != content:
            raise self.fail(number, _mismatch(where, start, end, content, document))
        return Reference(start, end, content)


def _is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _clip(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= width else flat[: width - 1] + "…")


def _mismatch(where: str, start: int, end: int, content: str, document: str) -> str:
    message = (
        f"{where}: the document's text at [{start}, {end}) is {_clip(document[start:end])}, "
        f"not the quoted content {_clip(content)}"
    )
    found = document.find(content)
    if found >= 0:
        message += f"; the content occurs at [{found}, {found + len(content)}): fix the offsets"
    else:
        message += "; the content does not occur in the document (is it the right document?)"
    return message


# --------------------------------------------------------------------------- loading


def parse_questions(
    text: str,
    documents: Mapping[str, str],
    *,
    name: str = "questions",
    document_id: str | None = None,
) -> list[Question]:
    """Read a question file's text (CSV or JSONL, told apart by ``name``'s suffix).

    ``documents`` maps document ids to their text. With ``document_id`` every question
    is about that one document and any ``corpus_id`` column is ignored.
    """
    if document_id is not None and document_id not in documents:
        raise QuestionFileError(f"document {document_id!r} is not loaded")
    jsonl = _is_jsonl(name, text)
    rows = _jsonl_rows(text, name) if jsonl else _csv_rows(text, name)
    checker = _RowChecker(name, documents, document_id, "line" if jsonl else "row")
    questions = [checker.question(number, i, row) for i, (number, row) in enumerate(rows)]
    if not questions:
        raise QuestionFileError(f"{name}: no questions found")
    return questions


def read_questions(
    path: str | Path, documents: Mapping[str, str], *, document_id: str | None = None
) -> list[Question]:
    """Read and check a question file (``.csv``, ``.jsonl``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise QuestionFileError(f"{path}: not UTF-8 text; save the file as UTF-8") from None
    return parse_questions(text, documents, name=str(path), document_id=document_id)


def questions_from_bytes(
    data: bytes, name: str, documents: Mapping[str, str], *, document_id: str | None = None
) -> list[Question]:
    """Like :func:`read_questions`, for an uploaded file's bytes."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise QuestionFileError(f"{name}: not UTF-8 text; save the file as UTF-8") from None
    return parse_questions(text, documents, name=name, document_id=document_id)


def read_corpus(directory: str | Path, ids: Sequence[str] | None = None) -> dict[str, str]:
    """Documents of a corpus folder: ``<id>.md`` or ``<id>.txt`` files, read as UTF-8.

    With ``ids`` only those documents are read (an id without a file is an error).
    """
    folder = Path(directory)
    if not folder.is_dir():
        raise QuestionFileError(f"{folder}: not a folder; --corpus needs a folder of .md/.txt")
    found = {p.stem: p for p in sorted(folder.iterdir()) if p.suffix.lower() in CORPUS_SUFFIXES}
    if not found:
        raise QuestionFileError(f"{folder}: no .md or .txt documents in this folder")
    wanted = list(found) if ids is None else list(ids)
    unknown = [i for i in wanted if i not in found]
    if unknown:
        raise QuestionFileError(f"{folder}: no document {unknown[0]!r}; found: {', '.join(found)}")
    return {i: found[i].read_text(encoding="utf-8") for i in wanted}


def chroma_eval_dir(root: str | Path | None = None) -> Path:
    """The chroma-eval folder (the one holding ``questions_df.csv`` and ``corpora/``).

    Looked for, in order: ``root`` when given, else ``$CHUNK_EXPLORER_CHROMA_EVAL`` when
    set (either one alone: an explicit place is never second-guessed), else
    :data:`CHROMA_EVAL_PLACES` under the working directory. Raises
    :class:`QuestionFileError` naming every place tried.
    """
    configured = os.environ.get(CHROMA_EVAL_ENV, "").strip()
    if root is not None:
        tried = [Path(root)]
    elif configured:
        tried = [Path(configured).expanduser()]
    else:
        tried = [Path(os.path.normpath(Path.cwd() / place)) for place in CHROMA_EVAL_PLACES]
    for folder in tried:
        if (folder / "questions_df.csv").is_file():
            return folder
    places = ", ".join(str(folder) for folder in tried)
    raise QuestionFileError(
        f"the chroma-eval data set was not found (no questions_df.csv in {places}); "
        f"set {CHROMA_EVAL_ENV} to its folder"
    )


def load_chroma_eval(
    corpora: Sequence[str] | None = None, root: str | Path | None = None
) -> tuple[dict[str, str], list[Question]]:
    """The chroma-eval documents and questions, optionally only some corpora.

    ``root`` is the data set's folder; without it, :func:`chroma_eval_dir` finds it.
    """
    folder = chroma_eval_dir(root)
    documents = read_corpus(folder / "corpora", corpora)
    wanted = set(documents)
    all_docs = documents if corpora is None else read_corpus(folder / "corpora")
    questions = read_questions(folder / "questions_df.csv", all_docs)
    kept = [q for q in questions if q.corpus_id in wanted]
    return documents, renumber(kept)


def renumber(questions: Sequence[Question]) -> list[Question]:
    """The questions with ``index`` 0, 1, 2, ... in order."""
    return [
        q if q.index == i else Question(i, q.text, q.corpus_id, q.references)
        for i, q in enumerate(questions)
    ]


def question_counts(questions: Sequence[Question]) -> dict[str, int]:
    """How many questions each document has."""
    ids, counts = np.unique([q.corpus_id for q in questions], return_counts=True)
    return {str(i): int(n) for i, n in zip(ids, counts, strict=True)}
