"""The chunk-explorer command line, in-process and as the installed console script."""

from __future__ import annotations

import codecs
import csv
import io
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

import chunking
from chunking import Config
from chunking.analysis.recommend import overlap_for, recommend
from chunking.analysis.report import find_warnings, wordpiece_counts
from chunking.cli import main
from chunking.cli.options import parse_param
from chunking.documents.io import Document, read_path
from chunking.engine.spans import sentence_spans
from chunking.output import export
from pages import cached
from tests.test_io import _pdf_with_pages

CLI = Path(sys.executable).parent / "chunk-explorer"
PREFIX = "chunk-explorer: error:"

PARAGRAPHS = [
    "Chunking decides what a retriever can find. Cut too small and a chunk loses its "
    "context; cut too large and one chunk mixes several topics.",
    "Emoji 🙂🚀 and CJK 漢字かな交じり文 must survive with exact offsets, as must "
    "combining marks: e\u0301 and RTL text: שלום עולם.",
    "Windows line endings\r\nstay as they are,\r\nand\ttabs too.",
    "The last paragraph is short.",
]
DOC = "\n\n".join(f"{i}. {p}" for i in range(12) for p in PARAGRAPHS) + "\n"


def cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    """Run main() in-process; return (exit code, stdout, stderr)."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def run_script(*args: object, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run the installed console script."""
    assert CLI.exists(), f"{CLI} is missing: run .venv/bin/pip install --no-deps -e ."
    return subprocess.run(
        [str(CLI), *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        **kwargs,
    )


@pytest.fixture
def doc_path(tmp_path: Path) -> Path:
    path = tmp_path / "doc.txt"
    path.write_text(DOC, encoding="utf-8", newline="")
    return path


#: One line of text per page of a small PDF (see tests/test_io.py).
PAGES = (
    "Alpha page one has some words",
    "Beta page two has a few more words",
    "Gamma page three",
    "Delta page four ends it",
)


def touched_pages(document: Document, start: int, end: int) -> list[int]:
    """Pages whose text (with the separator after it) shares a character with the span."""
    starts = [s for s, _ in document.pages]
    ends = [*starts[1:], len(document.text) + 1]
    return [
        number
        for number, (page_start, page_end) in enumerate(zip(starts, ends, strict=True), 1)
        if start < page_end and end > page_start
    ]


# ------------------------------------------------------------------------ parsing


def parse(out: str, fmt: str) -> list[dict[str, Any]]:
    """Rows of a split output, with numbers and metadata decoded."""
    if fmt == "jsonl":
        assert out.endswith("\n")
        return [json.loads(line) for line in out.split("\n")[:-1]]
    if fmt == "json":
        return json.loads(out)
    rows = list(csv.DictReader(io.StringIO(out, newline="")))
    for row in rows:
        for key in ("index", "start", "end", "size"):
            row[key] = int(row[key])
        row["metadata"] = json.loads(row["metadata"])
    return rows


def expected_rows(text: str, config: Config) -> list[dict[str, Any]]:
    """What the core computes, as JSON would carry it."""
    return json.loads(json.dumps([c.to_dict() for c in chunking.run(text, config)]))


def check_rows(rows: list[dict[str, Any]], source: str) -> None:
    assert rows, "no chunks"
    for i, row in enumerate(rows):
        assert set(row) == {"index", "start", "end", "size", "text", "metadata"}
        assert row["index"] == i
        assert row["text"] == source[row["start"] : row["end"]]


# -------------------------------------------------------------------------- split


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "json"])
def test_split_formats(capsys: pytest.CaptureFixture[str], doc_path: Path, fmt: str) -> None:
    code, out, err = cli(
        capsys, "split", doc_path, "--strategy", "recursive", "--size", 200, "--overlap", 30,
        "--format", fmt,
    )  # fmt: skip
    assert code == 0, err
    rows = parse(out, fmt)
    check_rows(rows, DOC)
    config = Config.create("recursive", size=200, overlap=30)
    assert rows == expected_rows(DOC, config)
    assert all(row["size"] <= 200 for row in rows)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "json"])
def test_split_to_output_file(
    capsys: pytest.CaptureFixture[str], doc_path: Path, tmp_path: Path, fmt: str
) -> None:
    target = tmp_path / f"chunks.{fmt}"
    code, out, _ = cli(
        capsys, "split", doc_path, "-s", "fixed", "--size", 120, "--format", fmt, "-o", target
    )
    assert code == 0
    assert out == ""
    written = target.read_bytes().decode("utf-8")  # no newline translation
    _, to_stdout, _ = cli(capsys, "split", doc_path, "-s", "fixed", "--size", 120, "--format", fmt)
    assert written == to_stdout
    check_rows(parse(written, fmt), DOC)


def test_split_words_and_tokens_units(capsys: pytest.CaptureFixture[str], doc_path: Path) -> None:
    for unit, size in (("words", 40), ("tokens", 60)):
        code, out, _ = cli(
            capsys, "split", doc_path, "-s", "recursive", "--unit", unit, "--size", size
        )
        assert code == 0
        rows = parse(out, "jsonl")
        assert rows == expected_rows(DOC, Config.create("recursive", unit=unit, size=size))


def test_split_with_console_script(doc_path: Path) -> None:
    result = run_script("split", doc_path, "--strategy", "sliding", "--param", "window=150",
                        "--param", "stride=100")  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = parse(result.stdout, "jsonl")
    check_rows(rows, DOC)
    assert rows == expected_rows(DOC, Config.create("sliding", window=150, stride=100))


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "json"])
def test_a_pdf_is_exported_like_the_app_exports_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str
) -> None:
    path = _write(tmp_path, "four.pdf", _pdf_with_pages(*PAGES))
    flags = ("-s", "fixed", "--size", 45, "--overlap", 10)
    code, out, err = cli(capsys, "split", path, *flags, "--format", fmt)
    assert code == 0, err
    rows = parse(out, fmt)

    # The app's Explore page: its cached analysis, then the records it downloads.
    document = read_path(path)
    source = cached.Source.of(document, "upload")
    config = Config.create("fixed", size=45, overlap=10)
    chunks = cached.chunks(source, config)
    downloaded = export.chunk_records(chunks, cached.analysis(source, config).pages)

    assert rows == json.loads(json.dumps(downloaded))
    pages = [row["metadata"]["pages"] for row in rows]
    assert pages == [touched_pages(document, c.start, c.end) for c in chunks]
    assert any(len(p) > 1 for p in pages), "a chunk should span two pages"


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_split_keeps_every_line_break_inside_a_chunk(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str
) -> None:
    # A lone carriage return used to be written unquoted in CSV: readers took it for
    # the end of the row.
    text = 'Old Mac text\rends lines like this,\rwith "quotes", commas\r\nand more.\n' * 3
    path = _write(tmp_path, "mac.txt", text.encode())
    code, out, err = cli(
        capsys, "split", path, "-s", "fixed", "--size", 13, "--overlap", 0, "--format", fmt
    )
    assert code == 0, err
    rows = parse(out, fmt)
    assert any(row["text"].endswith("\r") for row in rows)
    assert rows == expected_rows(text, Config.create("fixed", size=13, overlap=0))


def test_split_parquet_to_a_file(
    capsys: pytest.CaptureFixture[str], doc_path: Path, tmp_path: Path
) -> None:
    target = tmp_path / "chunks.parquet"
    args = ("split", doc_path, "-s", "recursive", "--size", 150)
    code, out, err = cli(capsys, *args, "--format", "parquet", "-o", target)
    assert (code, out) == (0, ""), err
    rows = pq.read_table(target).to_pylist()
    for row in rows:
        row["metadata"] = json.loads(row["metadata"])
    assert rows == expected_rows(DOC, Config.create("recursive", size=150))
    _, jsonl, _ = cli(capsys, *args)
    assert rows == parse(jsonl, "jsonl")


def test_parquet_needs_an_output_file(capsys: pytest.CaptureFixture[str], doc_path: Path) -> None:
    code, out, err = cli(capsys, "split", doc_path, "-s", "fixed", "--format", "parquet")
    assert (code, out) == (2, "")
    assert err.startswith(PREFIX) and err.count("\n") == 1
    assert "--format parquet" in err and "--output PATH" in err
    target = doc_path.parent / "missing" / "out.parquet"
    code, out, err = cli(
        capsys, "split", doc_path, "-s", "fixed", "--format", "parquet", "-o", target
    )
    assert (code, out) == (2, "")
    assert err.startswith(f"{PREFIX} cannot write {target}")


def test_parquet_without_pyarrow_says_what_to_install(
    capsys: pytest.CaptureFixture[str],
    doc_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # makes `import pyarrow` fail
    target = tmp_path / "chunks.parquet"
    code, out, err = cli(
        capsys, "split", doc_path, "-s", "fixed", "--format", "parquet", "-o", target
    )
    assert (code, out) == (2, "")
    assert err.startswith(PREFIX) and "pip install pyarrow" in err
    assert not target.exists()


# ---------------------------------------------------------------------- encodings

LATIN = (
    "Café crème brûlée, naïve façade, señor Müller aß Rösti à la carte. "
    "Garçon, l'addition s'il vous plaît ! Smørrebrød « très » bon.\n\n"
) * 20


def test_latin1_file_is_read_correctly(tmp_path: Path) -> None:
    path = tmp_path / "latin.txt"
    path.write_bytes(LATIN.encode("latin-1"))
    result = run_script("split", path, "-s", "recursive", "--size", 100)
    assert result.returncode == 0, result.stderr
    rows = parse(result.stdout, "jsonl")
    check_rows(rows, LATIN)
    assert any("brûlée" in row["text"] for row in rows)


def test_utf16_bom_file_is_read_correctly(tmp_path: Path) -> None:
    path = tmp_path / "utf16.txt"
    path.write_bytes(codecs.BOM_UTF16_LE + DOC.encode("utf-16-le"))
    result = run_script("split", path, "-s", "recursive", "--size", 150)
    assert result.returncode == 0, result.stderr
    rows = parse(result.stdout, "jsonl")
    check_rows(rows, DOC)  # offsets refer to the text without the BOM
    assert rows == expected_rows(DOC, Config.create("recursive", size=150))


# ---------------------------------------------------------------------- strategies


def test_strategies_json_matches_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "strategies", "--format", "json")
    assert code == 0
    listed = json.loads(out)
    registry = chunking.strategies()
    assert [s["name"] for s in listed] == list(registry)
    for entry in listed:
        spec = registry[entry["name"]]
        assert entry == json.loads(json.dumps(spec.to_dict()))
        assert [p["name"] for p in entry["params"]] == list(spec.param_names)


def test_strategies_text_lists_every_strategy_and_param(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = cli(capsys, "strategies")
    assert code == 0
    blocks = {block.split(" ", 1)[0]: block for block in out.strip().split("\n\n")}
    registry = chunking.strategies()
    assert list(blocks) == list(registry)
    for name, spec in registry.items():
        block = blocks[name]
        assert spec.label in block
        assert spec.description.split()[0] in block
        for param in spec.params:
            line = next(x for x in block.splitlines() if x.strip().startswith(f"{param.name}:"))
            assert f"default {json.dumps(param.default, ensure_ascii=False)}" in line
            if param.choices:
                assert all(str(choice) in line for choice in param.choices)
            assert param.help.split()[0] in block


# --------------------------------------------------------------------------- stats

STATS_CASES = [
    ("recursive", ["--size", "200", "--overlap", "20"], {"size": 200, "overlap": 20}),
    (
        "fixed",
        ["--size", "50", "--overlap", "5", "--unit", "words"],
        {"size": 50, "overlap": 5, "unit": "words"},
    ),
    ("sliding", ["--param", "window=120", "--param", "stride=90"], {"window": 120, "stride": 90}),
    ("token", ["--size", "64", "--overlap", "8"], {"size": 64, "overlap": 8}),
    # One token per chunk: an emoji worth several tokens is a flagged exception.
    ("recursive", ["--size", "1", "--unit", "tokens"], {"size": 1, "unit": "tokens"}),
]


@pytest.mark.parametrize(("strategy", "flags", "params"), STATS_CASES)
def test_stats_json_matches_the_core(
    capsys: pytest.CaptureFixture[str], doc_path: Path, strategy: str, flags: list, params: dict
) -> None:
    code, out, _ = cli(capsys, "stats", doc_path, "-s", strategy, *flags, "--format", "json")
    assert code == 0
    stats = json.loads(out)
    chunks = chunking.chunk(DOC, strategy, **params)
    sizes = np.array([c.size for c in chunks])
    assert stats["strategy"] == strategy
    assert stats["unit"] == Config.create(strategy, **params).unit
    assert stats["count"] == len(chunks)
    assert stats["mean"] == pytest.approx(sizes.mean())
    assert stats["std"] == pytest.approx(sizes.std())
    assert stats["min"] == sizes.min()
    assert stats["max"] == sizes.max()
    over = [c for c in chunks if any(f.startswith("over limit:") for f in c.flags)]
    assert stats["over_limit"] == len(over)
    if params.get("size") == 1:
        assert over, "the emoji should not fit in one token"


def test_stats_text(capsys: pytest.CaptureFixture[str], doc_path: Path) -> None:
    code, out, _ = cli(capsys, "stats", doc_path, "-s", "recursive", "--size", 300)
    assert code == 0
    sizes = np.array([c.size for c in chunking.chunk(DOC, "recursive", size=300)])
    fields = dict(line.split(None, 1) for line in out.strip().splitlines() if line[:1].isalpha())
    assert fields["strategy"] == "recursive"
    assert fields["unit"] == "chars"
    assert int(fields["chunks"]) == len(sizes)
    assert fields["mean"] == f"{sizes.mean():.1f} chars"
    assert fields["std"] == f"{sizes.std():.1f} chars"
    assert fields["min"] == f"{sizes.min()} chars"
    assert fields["max"] == f"{sizes.max()} chars"


def _expected_warnings(text: str, config: Config) -> list[dict[str, Any]]:
    """The warnings computed here from their parts: sentences and a full word-piece count."""
    chunks = chunking.run(text, config)
    counts = wordpiece_counts([c.text for c in chunks])
    warnings = find_warnings(
        text,
        chunks,
        limit=config.limit,
        unit=config.unit,
        sentences=sentence_spans(text),
        truncated=[c.index for c, n in zip(chunks, counts, strict=True) if n > 256],
        max_tokens=256,
    )
    return [w.to_dict() for w in warnings]


def test_stats_shows_the_warnings_the_app_shows(
    capsys: pytest.CaptureFixture[str], doc_path: Path
) -> None:
    config = Config.create("fixed", size=1500, overlap=0)
    flags = ("stats", doc_path, "-s", "fixed", "--size", 1500, "--overlap", 0)
    code, out, err = cli(capsys, *flags, "--format", "json")
    assert code == 0, err
    warnings = json.loads(out)["warnings"]
    assert warnings == _expected_warnings(DOC, config)
    assert {"mid_word", "mid_sentence", "truncated"} <= {w["kind"] for w in warnings}

    document = read_path(doc_path)
    source = cached.Source.of(document, "upload")
    assert warnings == [w.to_dict() for w in cached.analysis(source, config).warnings]

    code, text, _ = cli(capsys, *flags)
    assert code == 0
    lines = text.splitlines()
    assert f"warnings   {sum(len(w['chunks']) for w in warnings)}" in lines
    for warning in warnings:
        assert f"  - {warning['title']}." in lines
        assert " ".join(warning["message"].split()[:6]) in text


def test_stats_without_warnings_says_none(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(tmp_path, "short.txt", b"One short sentence here. And a second one.\n")
    code, out, _ = cli(capsys, "stats", path, "-s", "recursive", "--size", 200)
    assert code == 0
    assert "warnings   none" in out.splitlines()
    code, out, _ = cli(capsys, "stats", path, "-s", "recursive", "--size", 200, "--format", "json")
    assert json.loads(out)["warnings"] == []


# ------------------------------------------------------------------------- --param


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ('separators=["\\n\\n", " "]', ("separators", ["\n\n", " "])),
        ("keep_separator=start", ("keep_separator", "start")),
        ("strip_whitespace=false", ("strip_whitespace", False)),
        ("size=150", ("size", 150)),
        ("note=a=b", ("note", "a=b")),
        ("name=", ("name", "")),
        (" size = 7", ("size", 7)),
    ],
)
def test_parse_param(item: str, expected: tuple[str, Any]) -> None:
    assert parse_param(item) == expected


def test_param_values_reach_the_config(capsys: pytest.CaptureFixture[str], doc_path: Path) -> None:
    code, out, _ = cli(
        capsys, "stats", doc_path, "-s", "recursive", "--format", "json",
        "--param", 'separators=["\\n\\n", " "]', "--param", "keep_separator=start",
        "--param", "strip_whitespace=false", "--param", "size=150",
    )  # fmt: skip
    assert code == 0
    params = json.loads(out)["config"]["params"]
    assert params["separators"] == ["\n\n", " "]
    assert params["keep_separator"] == "start"
    assert params["strip_whitespace"] is False
    assert params["size"] == 150


def test_flags_override_param(capsys: pytest.CaptureFixture[str], doc_path: Path) -> None:
    code, out, _ = cli(
        capsys, "stats", doc_path, "-s", "fixed", "--format", "json",
        "--param", "size=999", "--size", "111",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out)["config"]["params"]["size"] == 111


# -------------------------------------------------------------------------- --config


def test_config_round_trip(
    capsys: pytest.CaptureFixture[str], doc_path: Path, tmp_path: Path
) -> None:
    config = Config.create("recursive", size=180, overlap=25, unit="chars", separators=["\n", " "])
    path = tmp_path / "config.json"
    path.write_text(config.to_json(), encoding="utf-8")
    code, out, _ = cli(capsys, "split", doc_path, "--config", path)
    assert code == 0
    assert parse(out, "jsonl") == expected_rows(DOC, config)
    code, out, _ = cli(capsys, "stats", doc_path, "--config", path, "--format", "json")
    assert Config.from_dict(json.loads(out)["config"]) == config


def test_flags_override_config(
    capsys: pytest.CaptureFixture[str], doc_path: Path, tmp_path: Path
) -> None:
    path = tmp_path / "config.json"
    path.write_text(Config.create("recursive", size=180, overlap=25).to_json(), encoding="utf-8")
    code, out, _ = cli(
        capsys, "stats", doc_path, "--config", path, "--size", 300, "--format", "json"
    )
    assert code == 0
    params = json.loads(out)["config"]["params"]
    assert (params["size"], params["overlap"]) == (300, 25)


# ---------------------------------------------------------------------------- auto


def test_auto_uses_the_recommendation(capsys: pytest.CaptureFixture[str], doc_path: Path) -> None:
    code, out, err = cli(capsys, "split", doc_path)
    assert code == 0
    advice = recommend(DOC, doc_path.name)
    assert f"using '{advice.strategy}'" in err
    assert advice.reason in err
    assert parse(out, "jsonl") == expected_rows(DOC, advice.config)


def test_auto_with_a_new_size_rescales_the_overlap(
    capsys: pytest.CaptureFixture[str], doc_path: Path
) -> None:
    code, out, _ = cli(capsys, "stats", doc_path, "--size", 40, "--format", "json")
    assert code == 0
    config = Config.from_dict(json.loads(out)["config"])
    assert config.strategy == recommend(DOC, doc_path.name).strategy
    assert config.limit == 40
    if "overlap" in config.params:
        assert config.params["overlap"] == overlap_for(config.spec, 40)


# ---------------------------------------------------------------------- bad input


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


BAD_INPUTS = [
    # (id, file name, file bytes or None for a missing file, extra args, fragments)
    ("empty", "empty.txt", b"", [], ["empty.txt", "empty"]),
    ("whitespace", "blank.txt", b" \n\t\r\n  ", [], ["blank.txt", "only whitespace"]),
    ("binary", "blob.txt", bytes(range(256)) * 8, [], ["blob.txt", "binary"]),
    ("missing", "nowhere.txt", None, [], ["nowhere.txt", "not found"]),
    ("extension", "data.xyz", b"some text", [], ["data.xyz", "unsupported extension .xyz"]),
    ("oversized", "big.txt", b"word " * 1000, ["--max-mb", "0.001"], ["big.txt", "limit"]),
    ("max-mb", "ok.txt", b"text", ["--max-mb", "0"], ["--max-mb must be a positive"]),
    ("size-0", "ok.txt", b"text", ["-s", "recursive", "--size", "0"], ["size must be at least 1"]),
    ("size-neg", "ok.txt", b"text", ["-s", "fixed", "--size", "-3"], ["size must be at least 1"]),
    ("size-type", "ok.txt", b"text", ["-s", "fixed", "--size", "abc"], ["size must be an integer"]),
    (
        "overlap",
        "ok.txt",
        b"text",
        ["-s", "recursive", "--size", "50", "--overlap", "50"],
        ["overlap (50) must be smaller than size (50)"],
    ),
    ("strategy", "ok.txt", b"text", ["-s", "nope"], ["unknown strategy 'nope'", "recursive"]),
    (
        "param",
        "ok.txt",
        b"text",
        ["-s", "recursive", "--param", "bogus=1"],
        ["no parameter 'bogus'", "separators"],
    ),
    ("param-syntax", "ok.txt", b"text", ["--param", "size"], ["--param expects KEY=VALUE"]),
    (
        "flag-for-missing-param",
        "ok.txt",
        b"text",
        ["-s", "sliding", "--size", "10"],
        ["'sliding' has no parameter 'size'", "--size", "window, stride"],
    ),
    ("model", "ok.txt", b"text", ["-s", "recursive", "--model", "m"], ["no parameter 'model'"]),
    ("unit", "ok.txt", b"text", ["-s", "recursive", "--unit", "bytes"], ["unit must be one of"]),
]


@pytest.mark.parametrize(
    ("name", "data", "args", "fragments"),
    [pytest.param(*case[1:], id=case[0]) for case in BAD_INPUTS],
)
@pytest.mark.parametrize("command", ["split", "stats"])
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
    name: str,
    data: bytes | None,
    args: list[str],
    fragments: list[str],
) -> None:
    path = tmp_path / name if data is None else _write(tmp_path, name, data)
    code, out, err = cli(capsys, command, path, *args)
    assert code == 2
    assert out == ""
    assert err.startswith(PREFIX)
    assert err.count("\n") == 1, err
    for fragment in fragments:
        assert fragment in err


def test_config_problems(capsys: pytest.CaptureFixture[str], doc_path: Path, tmp_path: Path):
    bad_json = _write(tmp_path, "bad.json", b'{"strategy": "recursive",')
    bad_value = _write(tmp_path, "value.json", b'{"strategy": "fixed", "params": {"size": -1}}')
    good = _write(tmp_path, "good.json", Config.create("fixed").to_json().encode())
    cases = [
        (["--config", tmp_path / "none.json"], "none.json was not found"),
        (["--config", bad_json], "bad.json is not valid JSON"),
        (["--config", bad_value], "value.json: size must be at least 1"),
        (["--config", good, "-s", "recursive"], "is for strategy 'fixed' but --strategy"),
    ]
    for args, fragment in cases:
        code, _, err = cli(capsys, "split", doc_path, *args)
        assert code == 2
        assert err.startswith(PREFIX)
        assert fragment in err


def test_unwritable_output(capsys: pytest.CaptureFixture[str], doc_path: Path, tmp_path: Path):
    target = tmp_path / "no" / "such" / "dir" / "out.jsonl"
    code, _, err = cli(capsys, "split", doc_path, "-s", "fixed", "-o", target)
    assert code == 2
    assert err.startswith(f"{PREFIX} cannot write {target}")


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], doc_path: Path) -> None:
    assert cli(capsys, "split")[0] == 2
    assert cli(capsys, "split", doc_path, "--format", "xml")[0] == 2
    assert cli(capsys, "frobnicate")[0] == 2
    code, out, _ = cli(capsys, "--help")
    assert code == 0
    assert "split" in out and "strategies" in out


@pytest.mark.parametrize(
    ("name", "data", "fragment"),
    [
        ("blob.txt", bytes(range(256)) * 8, "binary"),
        ("missing.txt", None, "not found"),
        ("empty.md", b"", "empty"),
        ("image.png", b"\x89PNG\r\n", "unsupported extension"),
    ],
)
def test_bad_input_in_a_real_process(
    tmp_path: Path, name: str, data: bytes | None, fragment: str
) -> None:
    path = tmp_path / name if data is None else _write(tmp_path, name, data)
    result = run_script("split", path, "-s", "recursive")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(PREFIX)
    assert fragment in result.stderr
    assert result.stdout == ""


# --------------------------------------------------------- interrupts and pipes


def test_ctrl_c_exits_130(
    capsys: pytest.CaptureFixture[str], doc_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("chunking.cli.chunks.run", interrupted)
    code, _, err = cli(capsys, "split", doc_path, "-s", "recursive")
    assert code == 130
    assert err.strip() == "chunk-explorer: interrupted"


def test_sigint_in_a_real_process(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_text(DOC * 1000, encoding="utf-8")
    # Auto mode prints its choice to stderr just before chunking starts (a line, then
    # why on a second): they say main() is running, so the interrupt lands in the (long)
    # token counting.
    process = subprocess.Popen(
        [str(CLI), "split", path, "--unit", "tokens", "--max-mb", "100"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    first = process.stderr.readline()
    assert "strategy auto" in first
    assert process.stderr.readline().startswith("chunk-explorer: why: ")
    process.send_signal(signal.SIGINT)
    rest = process.stderr.read()
    process.wait(timeout=60)
    assert process.returncode == 130, rest
    assert "Traceback" not in rest
    assert rest.strip() == "chunk-explorer: interrupted"


def test_broken_pipe_is_quiet(tmp_path: Path) -> None:
    path = tmp_path / "many.txt"
    path.write_text(DOC * 40, encoding="utf-8")
    process = subprocess.Popen(
        [str(CLI), "split", path, "-s", "fixed", "--size", "10", "--overlap", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()  # like `| head -1`
    err = process.stderr.read().decode()
    process.wait(timeout=120)
    assert json.loads(first)["index"] == 0
    assert process.returncode == 141
    assert err == ""


# ---------------------------------------------------------------- encodings and export


def test_an_unsure_encoding_is_reported_and_can_be_chosen(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "danish.txt"
    path.write_bytes("Smørrebrød og rødgrød. Det er godt.".encode("cp1252"))
    assert main(["stats", str(path), "-s", "recursive", "--format", "json"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)["document"]
    assert document["encoding"] == "cp1252"
    assert document["encoding_confidence"] <= 0.5
    assert "cp1250" in document["encoding_warning"]
    assert "--encoding NAME to choose" in captured.err
    assert len(captured.err.strip().splitlines()) == 1

    assert main(["split", str(path), "-s", "recursive", "--encoding", "cp1250"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out.splitlines()[0])["text"].startswith("Smřrrebrřd")
    assert captured.err == ""


def test_an_encoding_that_does_not_exist_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], doc_path: Path
) -> None:
    assert main(["split", str(doc_path), "--encoding", "klingon"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chunk-explorer: error: unknown encoding 'klingon'")
    assert len(err.splitlines()) == 1


def test_export_writes_a_runnable_snippet(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, doc_path: Path
) -> None:
    config = tmp_path / "config.json"
    config.write_text(Config.create("recursive", size=300, overlap=30).to_json(), "utf-8")
    out = tmp_path / "splitter.py"
    assert main(["export", "--config", str(config), "--to", "langchain", "-o", str(out)]) == 0
    assert "langchain snippet, exact" in capsys.readouterr().err
    namespace: dict[str, Any] = {}
    code = compile(out.read_text("utf-8"), str(out), "exec")
    exec(code, namespace)  # noqa: S102 - code this project generated from a validated config
    text = read_path(doc_path).text
    expected = [c.text for c in chunking.chunk(text, "recursive", size=300, overlap=30)]
    assert namespace["split"](text) == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["export", "-s", "fixed", "--to", "chonkie"], "no chonkie equivalent of 'fixed'"),
        (["export", "--to", "python"], "export needs --config CONFIG.json or --strategy NAME"),
        (["export", "-s", "recursive", "-p", "sizes=3", "--to", "python"], "no parameter 'sizes'"),
    ],
)
def test_export_refusals_are_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
