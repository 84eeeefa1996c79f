"""The same answer on every engine: local and a real local Ray instance (not mocked)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow.dataset as ds
import pytest
import ray  # a dev dependency: missing, the module fails to import, never skips

from chunking.cli import main
from chunking.documents.corpus import doc_id
from chunking.documents.io import read_bytes
from tests.conftest import SAMPLE_DOCS, make_zip, sample_paths, write
from tests.test_run import generated_corpus, unreadable_file

# One worker runs this module (--dist loadgroup): one local Ray instance, not two.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]

CONFIG = ("--strategy", "recursive", "--size", "400", "--unit", "tokens")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def corpus_inputs(tmp_path: Path) -> list[str]:
    """The sample documents, generated files, a zip, a binary and an unreadable file."""
    generated = generated_corpus(tmp_path / "generated")
    write(generated / "binary.txt", bytes(range(256)) * 4)
    notes = "# Notes\n\n" + "Zipped text to cut. " * 300
    zipped = write(tmp_path / "pack.zip", make_zip({"zipped/notes.md": notes}))
    return [str(SAMPLE_DOCS), str(generated), str(zipped), unreadable_file(tmp_path)]


def run(out: Path, inputs: list[str], *extra: str) -> int:
    return main(["run", *inputs, "--out", str(out), *CONFIG, *extra])


def row_set(out: Path) -> set[tuple[str, str, int, int, str]]:
    t = ds.dataset(out / "parts", format="parquet").to_table()
    columns = [t.column(c).to_pylist() for c in ("doc_id", "path", "start", "end", "text")]
    rows = list(zip(*columns, strict=True))
    assert len(rows) == len(set(rows))
    return set(rows)


def sources(tmp_path: Path) -> dict[str, bytes]:
    found = {f"sample_docs/{p.name}": p.read_bytes() for p in sample_paths()}
    found["sample_docs/README.md"] = (SAMPLE_DOCS / "README.md").read_bytes()
    generated = tmp_path / "generated"
    for path in (p for p in generated.rglob("*") if p.is_file()):
        found[f"generated/{path.relative_to(generated).as_posix()}"] = path.read_bytes()
    found["pack.zip/zipped/notes.md"] = ("# Notes\n\n" + "Zipped text to cut. " * 300).encode()
    return found


def test_local_and_ray_give_the_same_rows(tmp_path: Path, local_ray: None) -> None:
    inputs = corpus_inputs(tmp_path)
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    assert run(local, inputs, "--workers", "1") == 1  # the binary and unreadable files fail
    assert run(on_ray, inputs, "--engine", "ray", "--workers", "2") == 1
    expected = row_set(local)
    assert row_set(on_ray) == expected
    assert len({r[1] for r in expected}) >= 15
    data = sources(tmp_path)
    for identity, path, start, end, text in expected:
        assert identity == doc_id(data[path])
        assert read_bytes(data[path], path).text[start:end] == text

    def failures(out: Path) -> dict[str, str]:
        lines = (out / "errors.jsonl").read_text(encoding="utf-8").splitlines()
        return {e["path"]: e["reason"] for e in map(json.loads, lines)}

    assert failures(on_ray) == failures(local)
    assert len(failures(local)) == 2
    manifest = json.loads((on_ray / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["engine"] == "ray" and manifest["counts"]["failed"] == 2
    assert manifest["counts"]["chunks"] == len(expected)

    # a second Ray run skips everything already done and adds nothing
    assert run(on_ray, inputs, "--engine", "ray") == 1
    assert row_set(on_ray) == expected
    again = json.loads((on_ray / "manifest.json").read_text(encoding="utf-8"))["counts"]
    assert again["processed"] == 0 and again["skipped"] == len({r[:2] for r in expected})


def test_ray_embeddings_match_local(tmp_path: Path, local_ray: None) -> None:
    corpus = [str(generated_corpus(tmp_path / "generated", count=2))]
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    assert run(local, corpus, "--embed", "--model", "hash") == 0
    assert run(on_ray, corpus, "--embed", "--model", "hash", "--engine", "ray") == 0

    def vectors(out: Path) -> dict[tuple[str, int], np.ndarray]:
        t = ds.dataset(out / "parts", format="parquet").to_table()
        keys = zip(t.column("path").to_pylist(), t.column("start").to_pylist(), strict=True)
        return dict(zip(keys, np.array(t.column("embedding").to_pylist()), strict=True))

    expected, got = vectors(local), vectors(on_ray)
    assert set(got) == set(expected)
    assert all(np.allclose(got[k], expected[k]) for k in expected)
