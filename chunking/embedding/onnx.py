"""all-MiniLM-L6-v2 through ONNX Runtime with int8 weights: the same model as the torch
reference, several times faster on a CPU, with vectors within 0.98 cosine of it.

The ONNX file is exported from the bundled model directory (torch's TorchScript-based
exporter, offline; no ``optimum``) and quantised with ONNX Runtime's dynamic int8
quantisation, once per machine (:mod:`.derived`). Only the weight matrices of the
linear layers are quantised, per output channel; the feed-forward output projections
stay in float32: quantising them too moved some texts' vectors to 0.977 cosine of the
reference, keeping them gives at least 0.98 on the chroma-eval corpora
(``tests/test_models_quality.py``). Word pieces come from the model's own
``tokenizer.json`` through Hugging Face ``tokenizers``, truncated at the model's
``max_seq_length`` as sentence-transformers does; pooling is the mean over the real
(unpadded) word pieces, and :class:`Embedder` normalises the rows, as the torch model's
Pooling and Normalize modules do.

Speed (bench/bench_semantic.py ``--first``): the session runs the graph without the
exporter's NaN guards after each attention softmax (:func:`lean_graph`, bit-identical
vectors, about a tenth of the run), on as many threads as the process may use, and its
threads sleep rather than spin between operators, so that on a shared server they do
not burn the cores other sessions wait for.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..model import Progress, report_fraction
from .base import TokenizedEmbedder, bundled_model_path, quiet_loading, untruncated
from .derived import build_once, fingerprint, models_dir

#: Changes whenever the export or quantisation changes, so that old builds are not used.
RECIPE = "v1"
MODEL_FILE = "model.onnx"
#: The same model without the exporter's NaN guards (:func:`lean_graph`), the one that
#: runs: written by the build, and derived on first use for a model built before it.
LEAN_FILE = "model.lean.onnx"
#: Files of the source model the ONNX model needs next to it.
KEPT_FILES = ("tokenizer.json", "sentence_bert_config.json", "config.json")
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def onnx_int8_dir(source: Path | None = None) -> Path:
    """Where the int8 model built from ``source`` (default: the bundled model) lives."""
    source = source or bundled_model_path()
    return models_dir() / f"minilm-onnx-int8-{RECIPE}-{fingerprint(source)}"


def build_onnx_int8(progress: Progress | None = None, source: Path | None = None) -> Path:
    """The int8 ONNX model of ``source`` (default: the bundled model), built on first use."""
    source = source or bundled_model_path()

    def report(fraction: float, step: str) -> None:
        report_fraction(progress, fraction, step)

    def make(folder: Path) -> None:
        full = folder / "float32.onnx"
        report(0.0, "exporting all-MiniLM-L6-v2 to ONNX")
        _export(source, full)
        report(0.6, "quantising the weights to int8")
        _quantise(full, folder / MODEL_FILE)
        full.unlink()
        write_lean(folder)
        for name in KEPT_FILES:
            shutil.copy2(source / name, folder / name)
        report(1.0, "done")

    return build_once(onnx_int8_dir(source), make)


def _export(source: Path, target: Path) -> None:
    """The transformer's last hidden state as an ONNX graph with dynamic batch and
    sequence axes."""
    import torch
    from transformers import AutoModel

    class LastHiddenState(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.m = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.m(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    with quiet_loading():
        model = AutoModel.from_pretrained(str(source)).eval()
    example = tuple(torch.ones((2, 16), dtype=torch.long) for _ in INPUTS)
    axes = {name: {0: "batch", 1: "sequence"} for name in (*INPUTS, "last_hidden_state")}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer notes about shape-dependent Python code
        torch.onnx.export(
            LastHiddenState(model),
            example,
            str(target),
            input_names=list(INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,  # the dynamo export ran 2.6x slower once quantised, here
        )


def _quantise(source: Path, target: Path) -> None:
    import onnx
    from onnxruntime.quantization import (  # type: ignore[import-untyped, unused-ignore]
        QuantType,
        quantize_dynamic,
    )

    graph = onnx.load(str(source), load_external_data=False).graph
    keep_float = [
        n.name
        for n in graph.node
        if n.op_type == "MatMul" and "/output/dense/" in n.name and "attention" not in n.name
    ]
    quantize_dynamic(
        str(source),
        str(target),
        op_types_to_quantize=["MatMul"],
        per_channel=True,
        weight_type=QuantType.QInt8,
        nodes_to_exclude=keep_float,
    )


class OnnxEmbedder(TokenizedEmbedder):
    """A sentence-transformers BERT model (mean pooling) run by ONNX Runtime."""

    def __init__(self, folder: Path, name: str, note: str = "") -> None:
        from tokenizers import Tokenizer  # type: ignore[import-untyped, unused-ignore]

        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        super().__init__(untruncated(tokenizer))
        settings = json.loads((folder / "sentence_bert_config.json").read_text("utf-8"))
        config = json.loads((folder / "config.json").read_text("utf-8"))
        self.name = name
        self.note = note
        self.dimension = int(config["hidden_size"])
        self.max_seq_length = int(settings.get("max_seq_length") or 512)
        self.special_tokens = tokenizer.post_processor.num_special_tokens_to_add(False)
        tokenizer.enable_truncation(self.max_seq_length)
        tokenizer.enable_padding(pad_id=int(config.get("pad_token_id") or 0))  # to the longest
        self._tokenizer = tokenizer
        self.session = _session(model_file(folder))
        self._inputs = [i.name for i in self.session.get_inputs()]

    def _encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = self.session.run(None, {k: v for k, v in feed.items() if k in self._inputs})
        weights = mask[..., None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


def _session(path: Path) -> Any:
    import onnxruntime as ort  # type: ignore[import-untyped, unused-ignore]

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = usable_cores()
    # Sleep between operators instead of spinning: on a busy 2-core machine spinning
    # threads cost 20-25% more CPU time and wall time (bench/bench_semantic.py --first).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # errors only
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask; the CPU count elsewhere)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def model_file(folder: Path) -> Path:
    """The model file to run: :data:`LEAN_FILE` (written by the build, or derived once
    from :data:`MODEL_FILE` for a model built before it existed); :data:`MODEL_FILE`
    itself where it cannot be derived (no ``onnx`` package, a read-only folder)."""
    lean = folder / LEAN_FILE
    if lean.is_file():
        return lean
    try:
        write_lean(folder)
    except Exception:  # an optimisation only: any failure runs the model as built
        return folder / MODEL_FILE
    return lean


def write_lean(folder: Path) -> None:
    """Write :data:`LEAN_FILE` from :data:`MODEL_FILE`, whole or not at all (a temporary
    file renamed into place: two processes writing it at once both succeed)."""
    import onnx

    model = onnx.load(str(folder / MODEL_FILE))
    lean_graph(model.graph)
    fd, tmp = tempfile.mkstemp(prefix=f".{LEAN_FILE}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(model.SerializeToString())
        os.replace(tmp, folder / LEAN_FILE)
    finally:
        Path(tmp).unlink(missing_ok=True)


def lean_graph(graph: Any) -> int:
    """Drop the exporter's NaN guards from an ONNX graph, in place; returns how many.

    torch exports scaled dot-product attention as ``Where(IsNaN(p), 0, p)`` after each
    ``p = Softmax(scores)``: a softmax row is NaN only when every key in it is masked,
    and BERT's mask masks keys only by the attention mask, where ``[CLS]`` is always 1.
    So no row is ever NaN, the guard always returns ``p`` and dropping it changes no
    bit of any vector (``tests/test_onnx_speed.py`` compares both graphs), while its two
    elementwise passes over every attention matrix took a tenth of the run.
    """
    producers = {out: node for node in graph.node for out in node.output}
    readers: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
    outputs = {o.name for o in graph.output}
    rename: dict[str, str] = {}
    dropped: set[int] = set()
    for node in graph.node:
        test = producers.get(node.input[0]) if node.op_type == "Where" else None
        if (
            test is not None
            and test.op_type == "IsNaN"
            and test.input[0] == node.input[2]
            and getattr(producers.get(test.input[0]), "op_type", "") == "Softmax"
            and readers[test.output[0]] == 1
            and node.output[0] not in outputs
        ):
            rename[node.output[0]] = node.input[2]
            dropped.update((id(node), id(test)))
    kept = [node for node in graph.node if id(node) not in dropped]
    for node in kept:
        for k, name in enumerate(node.input):
            if name in rename:
                node.input[k] = rename[name]
    del graph.node[:]
    graph.node.extend(kept)
    return len(rename)


def load_onnx_int8(name: str, note: str, progress: Progress | None = None) -> OnnxEmbedder:
    """The int8 model of the bundled all-MiniLM-L6-v2, built first if need be."""
    return OnnxEmbedder(build_onnx_int8(progress), name, note)
