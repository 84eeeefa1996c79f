"""One set of defaults: every registered strategy, run with its own defaults on the sample
documents, gives chunks the default embedding model reads whole, or says otherwise.

A chunk is measured as the model reads it (:attr:`~chunking.model.Chunk.embedding_text`)
in the model's own word pieces (``get_sizer("model")``) plus [CLS] and [SEP]. A chunk
over the window must carry a flag (a word longer than the limit, a library's own
finding); the parents of a parent-child strategy are handed to a language model, never
embedded, so only its leaves count.

Library engines whose default is the library's own (the user who picks
``langchain.recursive`` asks for what LangChain does) are listed in
:data:`LIBRARY_DEFAULTS` with the reason; each listed default is checked against the
library's own signature, so the exemption cannot outlive the reason. The report warns
about their long chunks ("N chunks too long for all-MiniLM-L6-v2") as it does for any
configuration. Engines whose library has no default size (semchunk, text-splitter) use
ours, and fit.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

import chunking
from chunking.documents.io import read_path
from chunking.model import Chunk
from chunking.units import DEFAULT_MODEL_WINDOW, SPECIAL_TOKENS, get_sizer
from tests.conftest import sample_paths
from tests.llm_fakes import ECHO


def _langchain() -> int:
    import langchain_text_splitters as lib

    # Its recursive, token and Markdown splitters take chunk_size on to TextSplitter.
    return int(inspect.signature(lib.TextSplitter).parameters["chunk_size"].default)


def _llamaindex(cls_name: str) -> Callable[[], int]:
    def default() -> int:
        from llama_index.core import node_parser

        return int(getattr(node_parser, cls_name).model_fields["chunk_size"].default)

    return default


def _llamaindex_levels() -> str:
    import llama_index.core
    from llama_index.core.node_parser import HierarchicalNodeParser

    # from_defaults takes no tokenizer, so its parsers set LlamaIndex's global one;
    # put it back, or a later test in this worker sees a global our engine never set.
    before = llama_index.core.global_tokenizer
    try:
        parser = HierarchicalNodeParser.from_defaults()
    finally:
        llama_index.core.global_tokenizer = before
    sizes = [parser.node_parser_map[i].chunk_size for i in parser.node_parser_ids]
    return ",".join(str(size) for size in sizes)


def _chonkie(cls_name: str) -> Callable[[], int]:
    def default() -> int:
        import chonkie

        cls = getattr(chonkie, cls_name)
        return int(inspect.signature(cls).parameters["chunk_size"].default)

    return default


#: Library engines left at the library's own default size, which exceeds the window:
#: the size parameter and how to read the library's default for it. None: the library
#: has no size bound (it keeps sections, or cuts at similarity drops, whatever their
#: length).
LIBRARY_DEFAULTS: dict[str, tuple[str, Callable[[], object]] | None] = {
    "langchain.recursive": ("chunk_size", _langchain),
    "langchain.token": ("chunk_size", _langchain),
    "langchain.markdown": ("chunk_size", _langchain),
    "llamaindex.sentence": ("chunk_size", _llamaindex("SentenceSplitter")),
    "llamaindex.token": ("chunk_size", _llamaindex("TokenTextSplitter")),
    # Its parents carry no "children" count (the built-in hierarchy's do), so nothing
    # tells them from the leaves, which are 128 tokens and fit.
    "llamaindex.hierarchical": ("chunk_sizes", _llamaindex_levels),
    "chonkie.recursive": ("chunk_size", _chonkie("RecursiveChunker")),
    "chonkie.token": ("chunk_size", _chonkie("TokenChunker")),
    "chonkie.sentence": ("chunk_size", _chonkie("SentenceChunker")),
    "chonkie.code": ("chunk_size", _chonkie("CodeChunker")),
    "chonkie.semantic": ("chunk_size", _chonkie("SemanticChunker")),
    "llamaindex.markdown": None,
    "langchain.semantic": None,
    "llamaindex.semantic": None,
}
#: Strategies that embed with a real model: minutes of CPU on every sample.
SLOW = frozenset({"semantic", "cluster"})
#: The only non-default: the stand-in language model (echoing each passage's lines), as
#: the default offline SmolLM2 would take minutes; sizes come from the passages anyway.
NON_DEFAULT: dict[str, dict[str, Any]] = {"propositions": {"llm": ECHO, "budget_seconds": 1}}

WINDOW = DEFAULT_MODEL_WINDOW


def _checked() -> list[Any]:
    names = [n for n in chunking.strategies() if n not in LIBRARY_DEFAULTS]
    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in names]


def _embedded(chunks: list[Chunk]) -> list[Chunk]:
    """The chunks a retrieval set-up embeds: all but a parent-child strategy's parents."""
    return [c for c in chunks if not c.metadata.get("children")]


@pytest.fixture(scope="module")
def samples() -> dict[str, str]:
    return {p.name: read_path(p).text for p in sample_paths()}


@pytest.mark.parametrize("name", _checked())
def test_defaults_fit_the_default_models_window(name: str, samples: dict[str, str]) -> None:
    sizer = get_sizer("model")
    params = NON_DEFAULT.get(name, {})
    too_long: list[str] = []
    for doc, text in samples.items():
        chunks = chunking.chunk(text, name, **params)
        assert chunks, f"{name} gave no chunks on {doc}"
        for c in _embedded(chunks):
            pieces = sizer.size(c.embedding_text) + SPECIAL_TOKENS
            if pieces > WINDOW and not c.flags:
                too_long.append(f"{doc} chunk {c.index}: {pieces} word pieces")
    assert not too_long, (
        f"{name}'s defaults give chunks over the {WINDOW} word pieces of the default model, "
        f"unflagged: {too_long[:5]}"
    )


@pytest.mark.parametrize("name", sorted(LIBRARY_DEFAULTS))
def test_library_engines_left_over_the_window_keep_the_librarys_default(name: str) -> None:
    spec = chunking.get_strategy(name)
    exempt = LIBRARY_DEFAULTS[name]
    if exempt is None:
        assert spec.limit_param is None, f"{name} has a size bound: check that it fits"
        return
    size_name, library_default = exempt
    ours = spec.defaults()[size_name]
    assert ours == library_default(), f"{name}: our default is not the library's own"
    # Only a default over the window needs the exemption; one that fits is checked.
    largest = max(int(size) for size in str(ours).split(","))
    assert largest > WINDOW - SPECIAL_TOKENS


def test_the_semantic_defaults_are_the_semantic_pages_window() -> None:
    defaults = chunking.get_strategy("semantic").defaults()
    assert defaults["unit"] == "model"
    assert defaults["max_size"] == DEFAULT_MODEL_WINDOW - SPECIAL_TOKENS
    # And the analysis API cuts the same way when not told otherwise.
    from chunking.splitters.semantic.analysis import SemanticAnalysis

    chunk_defaults = inspect.signature(SemanticAnalysis.chunk).parameters
    assert chunk_defaults["unit"].default == defaults["unit"]
    assert chunk_defaults["max_size"].default == defaults["max_size"]
