"""The int8 ONNX model's speed-ups change no vector: the graph without the exporter's
NaN guards gives bit-identical outputs, and the session's threads are set as documented.

The comparisons run the real built minilm-onnx-int8 (built on first use, as
``tests/test_models_quality.py`` does) on real text, padded batches, an empty text and
a text over the model's window.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from onnx import TensorProto, helper

import chunking
from chunking.embedding import onnx as onnx_model
from chunking.embedding.models import get_embedder
from chunking.embedding.onnx import (
    LEAN_FILE,
    MODEL_FILE,
    OnnxEmbedder,
    build_onnx_int8,
    lean_graph,
    model_file,
    usable_cores,
)
from tests.conftest import chroma_corpora

pytestmark = pytest.mark.xdist_group("models_quality")


def _guarded_attention() -> onnx.ModelProto:
    """scores -> Softmax -> Where(IsNaN(p), 0, p) -> MatMul with values, as torch exports
    scaled dot-product attention, plus a guard on a non-softmax tensor."""
    nodes = [
        helper.make_node("Softmax", ["scores"], ["p"], axis=-1),
        helper.make_node("IsNaN", ["p"], ["nan"]),
        helper.make_node("Where", ["nan", "zero", "p"], ["guarded"]),
        helper.make_node("MatMul", ["guarded", "values"], ["mixed"]),
        helper.make_node("IsNaN", ["values"], ["values_nan"]),
        helper.make_node("Where", ["values_nan", "zero", "values"], ["clean_values"]),
        helper.make_node("Add", ["mixed", "clean_values"], ["out"]),
    ]
    graph = helper.make_graph(
        nodes,
        "attention",
        [
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, [4, 4]),
            helper.make_tensor_value_info("values", TensorProto.FLOAT, [4, 4]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [4, 4])],
        [helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(model: onnx.ModelProto | bytes | str, feed: dict[str, np.ndarray]) -> np.ndarray:
    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, feed)[0])


def test_only_the_guards_after_a_softmax_are_dropped() -> None:
    model = _guarded_attention()
    assert lean_graph(model.graph) == 1
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("IsNaN") == 1 and ops.count("Where") == 1  # the values' guard stays
    matmul = next(n for n in model.graph.node if n.op_type == "MatMul")
    assert matmul.input[0] == "p"
    onnx.checker.check_model(model)


def test_a_guard_that_is_a_graph_output_stays() -> None:
    model = _guarded_attention()
    model.graph.output.append(helper.make_tensor_value_info("guarded", TensorProto.FLOAT, [4, 4]))
    assert lean_graph(model.graph) == 0
    assert [n.op_type for n in model.graph.node].count("IsNaN") == 2


finite = arrays(np.float32, (4, 4), elements=st.floats(-30, 30, width=32))


@settings(max_examples=40, deadline=None)
@given(scores=finite, values=finite)
def test_the_lean_graph_computes_the_same_bits(scores: np.ndarray, values: np.ndarray) -> None:
    lean = _guarded_attention()
    lean_graph(lean.graph)
    feed = {"scores": scores, "values": values}
    assert np.array_equal(_run(_guarded_attention(), feed), _run(lean, feed))


def test_the_lean_file_is_derived_once_and_whole(tmp_path: Path) -> None:
    onnx.save(_guarded_attention(), tmp_path / MODEL_FILE)
    path = model_file(tmp_path)
    assert path == tmp_path / LEAN_FILE
    assert [n.op_type for n in onnx.load(str(path)).graph.node].count("IsNaN") == 1
    stamp = path.stat().st_mtime_ns
    assert model_file(tmp_path) == path and path.stat().st_mtime_ns == stamp
    assert sorted(p.name for p in tmp_path.iterdir()) == [LEAN_FILE, MODEL_FILE]


def test_a_lean_file_that_cannot_be_written_runs_the_model_as_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    onnx.save(_guarded_attention(), tmp_path / MODEL_FILE)

    def read_only(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError("read-only folder")

    monkeypatch.setattr(onnx_model.tempfile, "mkstemp", read_only)
    assert model_file(tmp_path) == tmp_path / MODEL_FILE
    assert not (tmp_path / LEAN_FILE).exists()


# --- the real model --------------------------------------------------------------------


@pytest.fixture(scope="module")
def folder() -> Path:
    return build_onnx_int8()


@pytest.fixture(scope="module")
def embedder(folder: Path) -> OnnxEmbedder:
    loaded = get_embedder("minilm-onnx-int8")
    assert isinstance(loaded, OnnxEmbedder)
    return loaded


def test_the_real_graph_loses_its_six_guards(folder: Path) -> None:
    model = onnx.load(str(folder / MODEL_FILE), load_external_data=False)
    before = [n.op_type for n in model.graph.node]
    assert lean_graph(model.graph) == 6  # one per layer
    after = [n.op_type for n in model.graph.node]
    assert before.count("IsNaN") == 6 and "IsNaN" not in after
    assert len(before) - len(after) == 12


def _texts() -> list[str]:
    corpora = chroma_corpora()
    assert corpora, "the chroma-eval corpora are missing"
    text = corpora[0].read_text(encoding="utf-8")
    chunks = [c.text for c in chunking.chunk(text, "sentence", size=60, unit="tokens")][:40]
    return [*chunks, "", "word", " ".join([text[:4000]] * 2)]  # empty, tiny, over the window


def test_the_lean_model_gives_the_built_models_vectors_bit_for_bit(
    folder: Path, embedder: OnnxEmbedder
) -> None:
    assert model_file(folder) == folder / LEAN_FILE
    texts = _texts()
    built = ort.InferenceSession(str(folder / MODEL_FILE), providers=["CPUExecutionProvider"])
    tokenizer = embedder._tokenizer
    for lo in range(0, len(texts), 16):  # padded batches of mixed lengths
        encodings = tokenizer.encode_batch(texts[lo : lo + 16])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (reference,) = built.run(None, feed)
        (lean,) = embedder.session.run(None, feed)
        assert not np.isnan(lean).any()
        assert np.array_equal(reference, lean)


def test_the_session_uses_every_usable_core_without_spinning(embedder: OnnxEmbedder) -> None:
    options = embedder.session.get_session_options()
    assert options.intra_op_num_threads == usable_cores() >= 1
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert options.execution_mode == ort.ExecutionMode.ORT_SEQUENTIAL
